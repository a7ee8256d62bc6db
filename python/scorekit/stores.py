"""Local JSON persistence: one dict-like store per kind of artifact (gold, results, baselines …).

This module owns where scorekit keeps its files and how it writes them. ``json_store(kind)`` is a
``MutableMapping`` whose key ``"name"`` is the file ``<root>/<kind>/name.json``; a ``/`` in a key
makes subfolders (``"run-1/item-a"``). The root is ``rootdir=`` if given, else
``$SCOREKIT_DATA_HOME``, else ``$EK_DATA_HOME`` (the reference kit's variable), else the user's data
folder (``$XDG_DATA_HOME/scorekit``, by default ``~/.local/share/scorekit``).

Writes are atomic: the JSON goes to a temporary file in the same folder, is flushed to disk and
then renamed over the target, so a crash leaves either the old file or the new one, never half a
file. Values are strict JSON (NaN and infinities are refused, not written as invalid JSON). Keys
cannot leave the store's folder: empty parts, ``.``, ``..``, absolute paths, backslashes and NUL
are refused. A file that does not parse is reported with its path and never replaced silently.

>>> import tempfile
>>> root = tempfile.mkdtemp()
>>> s = json_store("baselines", rootdir=root)
>>> s["v1"] = {"n": 10, "aggregate": 0.25}
>>> s["v1"], "v1" in s, list(s)
({'n': 10, 'aggregate': 0.25}, True, ['v1'])
>>> s["../escape"] = {}
Traceback (most recent call last):
...
scorekit.stores.StoreKeyError: store key '../escape' has a '..' part; keys are names under the store's folder
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any, Union

from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError

__all__ = ["KINDS", "StoreKeyError", "CorruptStoreFileError", "app_folder", "data_dir", "json_store",
           "JsonStore"]

KINDS = ("gold", "results", "calibrators", "corrections", "runs", "baselines")
_SUFFIX = ".json"


class StoreKeyError(InvalidValueError):
    """A store key that is not a plain relative name (it could escape the store's folder)."""


class CorruptStoreFileError(ScorekitError, ValueError):
    """A store file exists but is not valid JSON; it is left as it is."""


def app_folder() -> Path:
    """The folder scorekit keeps its data in when no ``rootdir`` or environment variable says
    otherwise: ``$XDG_DATA_HOME/scorekit`` or ``~/.local/share/scorekit``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "scorekit"


def data_dir(kind: str, *, rootdir: Union[str, os.PathLike, None] = None) -> Path:
    """The folder backing ``kind``: ``<rootdir>/<kind>``, else under ``$SCOREKIT_DATA_HOME``,
    ``$EK_DATA_HOME`` or :func:`app_folder`."""
    if not isinstance(kind, str) or not kind:
        raise InvalidTypeError(f"store kind must be a non-empty string, got {kind!r}")
    _check_key(kind)
    if rootdir is None:
        rootdir = os.environ.get("SCOREKIT_DATA_HOME") or os.environ.get("EK_DATA_HOME") or app_folder()
    return Path(os.fspath(rootdir)) / kind


def _check_key(key: Any) -> list[str]:
    if not isinstance(key, str):
        raise InvalidTypeError(f"store keys are strings, got {type(key).__name__} {key!r}")
    if "\x00" in key:
        raise StoreKeyError(f"store key {key!r} contains a NUL character")
    if "\\" in key:
        raise StoreKeyError(f"store key {key!r} contains a backslash; use '/' to make subfolders")
    if key.startswith("/"):
        raise StoreKeyError(f"store key {key!r} is an absolute path; keys are names under the store's folder")
    parts = key.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            what = "an empty part" if not part else f"a {part!r} part"
            raise StoreKeyError(f"store key {key!r} has {what}; keys are names under the store's folder")
    return parts


class JsonStore(MutableMapping):
    """JSON files under one folder as a mapping (see the module docstring for the rules)."""

    def __init__(self, folder: Union[str, os.PathLike]) -> None:
        self.folder = Path(os.fspath(folder))

    def __repr__(self) -> str:
        return f"JsonStore({str(self.folder)!r})"

    def path(self, key: str) -> Path:
        """The file that holds ``key``."""
        parts = _check_key(key)
        return self.folder.joinpath(*parts[:-1], parts[-1] + _SUFFIX)

    def __getitem__(self, key: str) -> Any:
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise KeyError(key) from None
        except UnicodeDecodeError as exc:
            raise CorruptStoreFileError(f"{path}: not UTF-8 text ({exc.reason}); the file was left as it is") from None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise CorruptStoreFileError(
                f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                "the file was left as it is") from None

    def __setitem__(self, key: str, value: Any) -> None:
        path = self.path(key)
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
        except ValueError as exc:
            raise InvalidValueError(
                f"store value for {key!r} is not strict JSON ({exc}); replace NaN/inf with None") from None
        except TypeError as exc:
            raise InvalidTypeError(f"store value for {key!r} is not JSON-serialisable: {exc}") from None
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def __delitem__(self, key: str) -> None:
        try:
            self.path(key).unlink()
        except (FileNotFoundError, NotADirectoryError):
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        try:
            return self.path(key).is_file()
        except StoreKeyError:
            return False

    def __iter__(self) -> Iterator[str]:
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.rglob("*" + _SUFFIX)):
            if path.name.startswith(".") or not path.is_file():
                continue
            rel = path.relative_to(self.folder).as_posix()
            yield rel[: -len(_SUFFIX)]

    def __len__(self) -> int:
        return sum(1 for _ in self)


def json_store(kind: str, *, rootdir: Union[str, os.PathLike, None] = None) -> JsonStore:
    """The JSON store of ``kind`` (any name; the usual ones are :data:`KINDS`); its folder is
    created on the first write."""
    return JsonStore(data_dir(kind, rootdir=rootdir))
