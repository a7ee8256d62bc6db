"""Local JSON persistence: one dict-like store per kind of artifact (gold, results, baselines …),
and the caches built on them.

This module owns where scorekit keeps its files and how it writes them. ``json_store(kind)`` is a
``MutableMapping`` whose key ``"name"`` is the file ``<root>/<kind>/name.json``; a ``/`` in a key
makes subfolders (``"run-1/item-a"``). The root is ``rootdir=`` if given, else
``$SCOREKIT_DATA_HOME``, else ``$EK_DATA_HOME`` (the reference kit's variable), else the user's data
folder (``$XDG_DATA_HOME/scorekit``, by default ``~/.local/share/scorekit``; while that does not exist
and the reference kit's ``…/ek`` does, the kit's). :func:`mall` groups
the stores of every kind in :data:`KINDS` in one read-only mapping.

Writes are atomic (:func:`scorekit.files.write_atomically`): the JSON goes to a temporary file in
the same folder, is flushed to disk and then renamed over the target, so a crash leaves either the
old file or the new one, never half a file; files are readable by their owner only (mode 0600),
whatever the umask, and temporary files a killed writer left behind are removed by the next write
in their folder once they are :data:`STALE_TEMP_SECONDS` old. Values are strict JSON both ways:
NaN and infinities are refused when written, and a file holding them (or a number too large for a
float) is refused when read, as :class:`CorruptStoreFileError`. Keys cannot leave the store's
folder: empty parts, ``.``, ``..``, parts starting with ``.`` (the temporary files' names),
absolute paths, backslashes, NUL, lone surrogates, folder parts ending in ``.json`` (they would
hide the key of that name) and parts longer than :data:`MAX_KEY_PART_BYTES` are refused
(:class:`StoreKeyError`), and so is a key that reaches a symbolic link or another non-folder
inside the store's folder: the store never follows a link out of its root (links inside it are
not listed either). A file that does not parse is reported with its path and never replaced
silently.
:meth:`JsonStore.write` streams a document with one very large member (millions of per-item
results) to disk entry by entry, and :meth:`JsonStore.write_new` publishes a value under a key
only if no other writer has taken it.

Two caches sit on top: :func:`persistent_cache` memoises a plain function in a store across
sessions, and :func:`cache_this` caches a property or a method of a class in any mapping (the
instance's ``__dict__`` by default, an attribute of the instance, a store …).

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
>>> m = mall(rootdir=root)
>>> m["baselines", "v1"]["aggregate"], len(m)
(0.25, 6)
"""

from __future__ import annotations

import errno
import functools
import inspect
import json
import math
import os
import secrets
import stat
import threading
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any, Optional, Union

from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError, describe
from scorekit.files import strict_json_loads, write_atomically

__all__ = ["KINDS", "StoreKeyError", "CorruptStoreFileError", "app_folder", "scorekit_folder", "kit_folder",
           "data_root", "data_dir", "json_store",
           "JsonStore", "Mall", "mall", "persistent_cache", "cache_this", "CachedProperty", "CachedMethod",
           "json_key", "strict_json_loads", "MAX_KEY_PART_BYTES", "MAX_KEY_BYTES", "STALE_TEMP_SECONDS"]

KINDS = ("gold", "results", "calibrators", "corrections", "runs", "baselines")
"""The kinds of artifact scorekit keeps; each is a subfolder of the data root and a store."""

_SUFFIX = ".json"
#: Temporary files (a writer's, or a killed writer's) start with this and end with ``.tmp``.
_TEMP_PREFIX, _TEMP_SUFFIX = ".", ".tmp"

MAX_KEY_PART_BYTES = 200
"""Longest part of a store key, in UTF-8 bytes: with ``.json`` and the temporary file's
decoration it stays within the 255-byte file names of common file systems."""

MAX_KEY_BYTES = 1000
"""Longest store key, in UTF-8 bytes (paths beyond about 4 KiB cannot be opened)."""

STALE_TEMP_SECONDS = 600
"""A temporary file not written to for this long belongs to a writer that died; the next write in
its folder removes it (a live writer touches its file at every buffered write)."""


class StoreKeyError(InvalidValueError):
    """A store key that is not a plain relative name (it could escape the store's folder)."""


class CorruptStoreFileError(ScorekitError, ValueError):
    """A store file exists but is not valid JSON; it is left as it is."""


def _user_data_folder() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share"))


def scorekit_folder() -> Path:
    """scorekit's own data folder: ``$XDG_DATA_HOME/scorekit`` or ``~/.local/share/scorekit``."""
    return _user_data_folder() / "scorekit"


def kit_folder() -> Path:
    """The reference kit's data folder: ``$XDG_DATA_HOME/ek`` or ``~/.local/share/ek``."""
    return _user_data_folder() / "ek"


def app_folder() -> Path:
    """The folder scorekit keeps its data in when no ``rootdir`` or environment variable says
    otherwise: :func:`scorekit_folder`, except that while it does not exist and the reference
    kit's folder (:func:`kit_folder`) does, the kit's folder is read and written, so gold sets,
    runs and baselines saved with the kit stay in use."""
    own, kit = scorekit_folder(), kit_folder()
    return kit if not own.exists() and kit.is_dir() else own


def data_dir(kind: str, *, rootdir: Union[str, os.PathLike, None] = None) -> Path:
    """The folder backing ``kind``: ``<rootdir>/<kind>``, else under ``$SCOREKIT_DATA_HOME``,
    ``$EK_DATA_HOME`` or :func:`app_folder`."""
    if not isinstance(kind, str) or not kind:
        raise InvalidTypeError(f"store kind must be a non-empty string, got {kind!r}")
    _check_key(kind)
    return (data_root() if rootdir is None else Path(os.fspath(rootdir))) / kind


def data_root() -> Path:
    """The data root the stores use when no ``rootdir`` is given: ``$SCOREKIT_DATA_HOME``, else
    ``$EK_DATA_HOME``, else :func:`app_folder` (what ``scorekit where`` prints)."""
    return Path(os.environ.get("SCOREKIT_DATA_HOME") or os.environ.get("EK_DATA_HOME") or app_folder())


def _check_key(key: Any) -> list[str]:
    """The parts of ``key``, or :class:`StoreKeyError` when it is not a plain relative name."""
    if not isinstance(key, str):
        raise InvalidTypeError(f"store keys are strings, got {type(key).__name__} {key!r}")
    if "\x00" in key:
        raise StoreKeyError(f"store key {key!r} contains a NUL character")
    if "\\" in key:
        raise StoreKeyError(f"store key {key!r} contains a backslash; use '/' to make subfolders")
    if key.startswith("/"):
        raise StoreKeyError(f"store key {key!r} is an absolute path; keys are names under the store's folder")
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError:
        raise StoreKeyError(f"store key {key!r} holds a lone surrogate; keys are UTF-8 file names") from None
    if size > MAX_KEY_BYTES:
        raise StoreKeyError(f"store key {describe(key)} is {size} bytes long; the limit is {MAX_KEY_BYTES}")
    parts = key.split("/")
    for i, part in enumerate(parts):
        if part in ("", ".", ".."):
            what = "an empty part" if not part else f"a {part!r} part"
            raise StoreKeyError(f"store key {key!r} has {what}; keys are names under the store's folder")
        if part.startswith(_TEMP_PREFIX):
            raise StoreKeyError(f"store key {key!r} has a part starting with '.'; such names are the store's "
                                "temporary files")
        if len(part.encode("utf-8")) > MAX_KEY_PART_BYTES:
            raise StoreKeyError(f"store key {describe(key)} has a part longer than {MAX_KEY_PART_BYTES} bytes")
        if i < len(parts) - 1 and part.endswith(_SUFFIX):
            raise StoreKeyError(f"store key {key!r} has the folder part {part!r}, which would take the place of "
                                f"the key {part[:-len(_SUFFIX)]!r}'s file")
    return parts


def _is_key(key: str) -> bool:
    try:
        _check_key(key)
    except StoreKeyError:
        return False
    return True


def json_key(key: Any) -> str:
    """The text ``key`` becomes as a key of a JSON object, as :func:`json.dumps` writes it: a
    string as it is, ``True``/``False``/``None`` as ``true``/``false``/``null``, a number as
    its ``repr``. Other keys (tuples …) cannot be JSON keys.

    >>> json_key("a"), json_key(3), json_key(2.5), json_key(True), json_key(None)
    ('a', '3', '2.5', 'true', 'null')
    """
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        if not math.isfinite(key):
            raise InvalidValueError(f"{key!r} cannot be a key of strict JSON")
        return float.__repr__(key)
    raise InvalidTypeError(f"cannot be a JSON object key (str, int, float, bool or None), got {describe(key)}")


#: Strict JSON on one line, and indented by two spaces (one encoder each, made once).
_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_INDENTED = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=2)


def _location(where: str, path: tuple) -> str:
    return where + "".join(f"[{part!r}]" for part in path)


def _dumps(value: Any, where: str, *path: Any, indent: bool = False) -> str:
    """Strict JSON text of ``value``; errors name where it was going (``where[path]...``)."""
    try:
        return (_INDENTED if indent else _COMPACT).encode(value)
    except ValueError as exc:
        raise InvalidValueError(f"store value for {_location(where, path)} is not strict JSON ({exc}); "
                                "replace NaN/inf with None") from None
    except TypeError as exc:
        raise InvalidTypeError(f"store value for {_location(where, path)} is not JSON-serialisable: {exc}") from None
    except RecursionError:
        raise InvalidValueError(f"store value for {_location(where, path)} is nested too deeply to write as JSON") \
            from None


def _member_key(mapping: Mapping, name: Any, where: str, *path: Any) -> str:
    """The JSON text of the key ``name`` of ``mapping``, quoted; refuses a key that collides with
    a string key of ``mapping`` (``1`` and ``"1"``)."""
    text = json_key(name)
    if text is not name and text in mapping:
        raise InvalidValueError(f"store value for {_location(where, path)} has the keys {name!r} and {text!r}, "
                                "which are the same JSON key")
    return _COMPACT.encode(text)


def _streamed_json(value: Any, stream: str, where: str) -> Iterator[str]:
    """JSON text of the mapping ``value`` in pieces: one line per member, and the member
    ``stream`` (itself a mapping) one line per entry, each encoded as it is reached."""
    if not isinstance(value, Mapping) or not isinstance(value.get(stream), Mapping):
        raise InvalidTypeError(f"store value for {where} must be a mapping whose {stream!r} member is a mapping "
                               "to stream it")
    yield "{"
    for m, (name, member) in enumerate(value.items()):
        yield f'{"," if m else ""}\n  {_member_key(value, name, where)}: '
        if name != stream:
            yield _dumps(member, where, name)
            continue
        yield "{"
        for e, (entry, item) in enumerate(member.items()):
            yield (f'{"," if e else ""}\n    {_member_key(member, entry, where, name, entry)}: '
                   f'{_dumps(item, where, name, entry)}')
        yield "\n  }" if member else "}"
    yield "\n}\n"


def _remove(path: Union[str, Path]) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _is_temp(name: str) -> bool:
    return name.startswith(_TEMP_PREFIX) and name.endswith(_TEMP_SUFFIX)


def _remove_stale_temps(folder: Path) -> None:
    """Remove the temporary files in ``folder`` that no writer has touched for
    :data:`STALE_TEMP_SECONDS` (left by a writer that was killed)."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    with os.scandir(folder) as entries:
        for entry in entries:
            if _is_temp(entry.name) and entry.is_file(follow_symlinks=False) \
                    and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                _remove(entry.path)


def _link_new(staged: Path, path: Path) -> bool:
    """Give ``staged`` the name ``path`` if no file has it: a hard link, which fails atomically
    when the name is taken; on a file system without hard links, a check then a rename."""
    try:
        os.link(staged, path)
    except FileExistsError:
        return False
    except OSError:
        if os.path.lexists(path):
            return False
        os.replace(staged, path)
    return True


class JsonStore(MutableMapping):
    """JSON files under one folder as a mapping (see the module docstring for the rules)."""

    def __init__(self, folder: Union[str, os.PathLike]) -> None:
        self.folder = Path(os.fspath(folder))
        self._swept: set[Path] = set()  # folders whose stale temporary files this store removed

    def __repr__(self) -> str:
        return f"JsonStore({str(self.folder)!r})"

    def path(self, key: str) -> Path:
        """The file that holds ``key``: inside the store's folder, reached through folders only
        (no symbolic link), and not itself a folder or a link; else :class:`StoreKeyError`."""
        return Path(self._checked(key)[0])

    def _checked(self, key: str) -> tuple[str, bool]:
        """:meth:`path` as a string, and whether that file exists."""
        parts = _check_key(key)
        names = [*parts[:-1], parts[-1] + _SUFFIX]
        here = os.fspath(self.folder)
        full = os.path.join(here, *names)
        for i, name in enumerate(names, 1):
            here = os.path.join(here, name)
            try:
                mode = os.lstat(here).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return full, False
            if stat.S_ISLNK(mode):
                raise StoreKeyError(f"store key {key!r} reaches the symbolic link {here!r}; the store does not "
                                    "follow links out of its folder")
            if i < len(names) and not stat.S_ISDIR(mode):
                raise StoreKeyError(f"store key {key!r} needs {here!r} to be a folder, and it is a file")
            if i == len(names) and not stat.S_ISREG(mode):
                raise StoreKeyError(f"store key {key!r}: {here!r} is not a regular file")
        return full, True

    def __getitem__(self, key: str) -> Any:
        path, exists = self._checked(key)
        if not exists:
            raise KeyError(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except (FileNotFoundError, NotADirectoryError):
            raise KeyError(key) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # made a link since path() looked
                raise StoreKeyError(f"store key {key!r} reaches a symbolic link; the store does not follow links "
                                    "out of its folder") from None
            raise
        with os.fdopen(fd, "rb") as f:
            data = f.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptStoreFileError(f"{path}: not UTF-8 text ({exc.reason}); the file was left as it is") from None
        try:
            return strict_json_loads(text)
        except json.JSONDecodeError as exc:
            raise CorruptStoreFileError(
                f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                "the file was left as it is") from None
        except ValueError as exc:
            raise CorruptStoreFileError(f"{path}: not strict JSON ({exc}); the file was left as it is") from None
        except RecursionError:
            raise CorruptStoreFileError(f"{path}: nested too deeply to read; the file was left as it is") from None

    def _chunks(self, key: str, value: Any, stream: Optional[str]) -> Iterable[str]:
        if stream is None:
            return [_dumps(value, repr(key), indent=True)]
        return _streamed_json(value, stream, repr(key))

    def _folder_for(self, key: str) -> Path:
        """The checked path of ``key``, its folders made (refusing a link made meanwhile) and swept
        of stale temporary files once per store."""
        path = self.path(key)
        here = self.folder
        self.folder.mkdir(parents=True, exist_ok=True)
        for part in path.relative_to(self.folder).parts[:-1]:
            here = here / part
            try:
                here.mkdir()
            except FileExistsError:
                pass
        self.path(key)
        if path.parent not in self._swept:
            _remove_stale_temps(path.parent)
            self._swept.add(path.parent)
        return path

    def write(self, key: str, value: Any, *, stream: Optional[str] = None) -> None:
        """``store[key] = value``; with ``stream="name"``, ``value`` is a mapping whose member
        ``name`` is a mapping too, written one entry per line as it is encoded, so a document with
        millions of entries is never held in memory as one string. Either way the file is
        replaced atomically and reads back equal to ``value``.

        >>> import tempfile
        >>> s = json_store("results", rootdir=tempfile.mkdtemp())
        >>> s.write("run-1", {"n": 2, "per_item": {"a": 0.5, "b": 1.0}}, stream="per_item")
        >>> print(s.path("run-1").read_text(), end="")
        {
          "n": 2,
          "per_item": {
            "a": 0.5,
            "b": 1.0
          }
        }
        """
        self.path(key)
        chunks = self._chunks(key, value, stream)  # a value that cannot be encoded makes no folder
        write_atomically(self._folder_for(key), chunks, mode=0o600)

    def write_new(self, value: Any, keys: Iterable[str], *, stream: Optional[str] = None) -> str:
        """Write ``value`` (as :meth:`write` does) under the first of ``keys`` that no file has
        yet, and return that key. The value is encoded once; a name another writer takes in the
        meantime is skipped, never replaced (on file systems with hard links; elsewhere the check
        and the rename are two steps). Raises ``FileExistsError`` when ``keys`` runs out.

        >>> import tempfile
        >>> s = json_store("runs", rootdir=tempfile.mkdtemp())
        >>> s["run"] = {"first": True}
        >>> s.write_new({"first": False}, ["run", "run-2", "run-3"])
        'run-2'
        >>> s["run"]
        {'first': True}
        """
        keys = iter(keys)
        first = next(keys, None)
        if first is None:
            raise InvalidValueError("must name at least one key", field="keys")
        self.path(first)
        chunks = self._chunks(first, value, stream)
        path = self._folder_for(first)
        staged = path.with_name(f"{_TEMP_PREFIX}{path.name}.{secrets.token_hex(8)}{_TEMP_SUFFIX}")
        write_atomically(staged, chunks, mode=0o600)
        try:
            key: Optional[str] = first
            while key is not None:
                if _link_new(staged, self._folder_for(key)):
                    return key
                key = next(keys, None)
            raise FileExistsError(errno.EEXIST, f"every key offered is taken (the last: {self.path(first).name} …)",
                                  str(self.folder))
        finally:
            _remove(staged)

    def __setitem__(self, key: str, value: Any) -> None:
        self.write(key, value)

    def __delitem__(self, key: str) -> None:
        try:
            self.path(key).unlink()
        except (FileNotFoundError, NotADirectoryError):
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        try:
            return self._checked(key)[1]
        except StoreKeyError:
            return False

    def __iter__(self) -> Iterator[str]:
        """The keys, sorted part by part: every regular ``*.json`` file under the folder whose
        name is a valid key (links, temporary files and dot-folders are not keys)."""
        keys = []
        for folder, subfolders, files in os.walk(self.folder):  # links to folders are not entered
            subfolders[:] = [name for name in subfolders if not name.startswith(_TEMP_PREFIX)]
            prefix = Path(folder).relative_to(self.folder).as_posix()
            prefix = "" if prefix == "." else prefix + "/"
            for name in files:
                key = prefix + name[: -len(_SUFFIX)]
                if name.endswith(_SUFFIX) and _is_key(key) and not os.path.islink(os.path.join(folder, name)):
                    keys.append(key)
        keys.sort(key=lambda k: k.split("/"))
        return iter(keys)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def json_store(kind: str, *, rootdir: Union[str, os.PathLike, None] = None) -> JsonStore:
    """The JSON store of ``kind`` (any name; the usual ones are :data:`KINDS`); its folder is
    created on the first write."""
    return JsonStore(data_dir(kind, rootdir=rootdir))


# --------------------------------------------------------------------------------------------
# The mall: every kind's store in one mapping
# --------------------------------------------------------------------------------------------


class Mall(Mapping):
    """A read-only mapping ``kind -> json_store(kind)`` over ``kinds`` (default :data:`KINDS`).

    ``mall["gold"]`` is the gold store (made on first use, then reused) and ``mall["gold", key]``
    is ``mall["gold"][key]``. Iterating gives the kinds. Each store's folder is resolved when the
    store is first used (``rootdir``, else the environment variables, see :func:`data_dir`).

    >>> import tempfile
    >>> m = Mall(kinds=("gold", "runs"), rootdir=tempfile.mkdtemp())
    >>> m["gold"]["doc-1"] = {"reference": "hello"}
    >>> m["gold", "doc-1"], list(m)
    ({'reference': 'hello'}, ['gold', 'runs'])
    """

    def __init__(self, *, kinds: Iterable[str] = KINDS, rootdir: Union[str, os.PathLike, None] = None) -> None:
        if isinstance(kinds, str):
            raise InvalidTypeError(f"must be an iterable of kind names, not one string {kinds!r}", field="kinds")
        self.kinds = tuple(kinds)
        for kind in self.kinds:
            if not isinstance(kind, str) or not kind:
                raise InvalidTypeError(f"must hold non-empty strings, got {describe(kind)}", field="kinds")
            _check_key(kind)
        self.rootdir = rootdir
        self._stores: dict[str, JsonStore] = {}

    def __repr__(self) -> str:
        return f"Mall(kinds={self.kinds!r}, rootdir={self.rootdir!r})"

    def _store(self, kind: Any) -> JsonStore:
        store = self._stores.get(kind) if isinstance(kind, str) else None
        if store is None:
            if not isinstance(kind, str) or kind not in self.kinds:
                raise KeyError(f"Unknown store kind {kind!r}; known: {self.kinds}")
            store = self._stores[kind] = json_store(kind, rootdir=self.rootdir)
        return store

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, tuple):
            if len(key) != 2:
                raise KeyError(f"a mall is read as mall[kind] or mall[kind, key], got {len(key)} parts: {key!r}")
            return self._store(key[0])[key[1]]
        return self._store(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.kinds)

    def __len__(self) -> int:
        return len(self.kinds)


def mall(*, rootdir: Union[str, os.PathLike, None] = None) -> Mall:
    """Every kind of :data:`KINDS` as one :class:`Mall`."""
    return Mall(rootdir=rootdir)


# --------------------------------------------------------------------------------------------
# persistent_cache: a plain function's result, kept in a store across sessions
# --------------------------------------------------------------------------------------------


def persistent_cache(func: Optional[Callable] = None, *, kind: str = "runs", key: Any = None,
                     rootdir: Union[str, os.PathLike, None] = None) -> Callable:
    """Memoise a function's result in the ``kind`` store, across sessions.

    Use it bare (``@persistent_cache``) or with arguments. The store is chosen when the function
    is decorated (``wrapper.store``; delete a key there to invalidate it). The cache key is
    ``key(*args, **kwargs)`` when ``key`` is callable, else ``key`` itself, else the function's
    qualified name, so a function that takes arguments needs a ``key``. A stored key is returned
    without calling the function; otherwise the result is stored and returned. Results must be
    JSON-serialisable, and every call, the first included, returns the stored JSON form (a
    tuple comes back as a list). A corrupt cache file raises
    :class:`CorruptStoreFileError` and is left as it is.

    >>> import tempfile; root = tempfile.mkdtemp()
    >>> calls = []
    >>> @persistent_cache(key=lambda n: f"square-{n}", rootdir=root)
    ... def square(n):
    ...     calls.append(n)
    ...     return n * n
    >>> square(3), square(3), square(4), calls
    (9, 9, 16, [3, 4])
    >>> sorted(square.store)
    ['square-3', 'square-4']
    """
    if func is None:
        return functools.partial(persistent_cache, kind=kind, key=key, rootdir=rootdir)
    if not callable(func):
        raise InvalidTypeError(f"must be callable, got {describe(func)}", field="persistent_cache")
    store = json_store(kind, rootdir=rootdir)
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if callable(key):
            k = key(*args, **kwargs)
        else:
            k = name if key is None else key
        try:
            return store[k]
        except KeyError:
            pass
        store[k] = func(*args, **kwargs)
        return store[k]

    wrapper.store = store
    return wrapper


# --------------------------------------------------------------------------------------------
# cache_this: a cached property or method, in any mapping
# --------------------------------------------------------------------------------------------

#: Locks per cached attribute: misses of one key are computed one at a time, other keys in parallel.
_STRIPES = 8
#: Where an instance keeps the in-memory pre-caches made by ``pre_cache=True``.
_PRE_CACHES = "__cache_this_pre_caches__"
#: What a cache lookup returns for a key the cache does not have.
_MISSING = object()


def _is_mapping_like(obj: Any) -> bool:
    return all(hasattr(obj, attr) for attr in ("__getitem__", "__setitem__", "__contains__"))


class _Cached:
    """What :class:`CachedProperty` and :class:`CachedMethod` share: finding the cache of an
    instance, reading it through the pre-cache, and computing a missing value once."""

    def __init__(self, func: Callable, *, cache: Any, key: Any, pre_cache: Any,
                 serialize: Optional[Callable], deserialize: Optional[Callable]) -> None:
        if not (cache is None or cache is False or isinstance(cache, str) or _is_mapping_like(cache)
                or callable(cache)):
            raise InvalidTypeError("must be None (the instance __dict__), False (no cache), an attribute name, a "
                                   f"mapping or a callable(instance) -> mapping; got {describe(cache)}", field="cache")
        if not (pre_cache is None or isinstance(pre_cache, bool) or _is_mapping_like(pre_cache)):
            raise InvalidTypeError(f"must be a bool or a mapping, got {describe(pre_cache)}", field="pre_cache")
        for name, hook in (("serialize", serialize), ("deserialize", deserialize)):
            if hook is not None and not callable(hook):
                raise InvalidTypeError(f"must be callable, got {describe(hook)}", field=name)
        self.func = func
        self.cache = cache
        self.key = key
        self.pre_cache = pre_cache
        self.serialize = serialize
        self.deserialize = deserialize
        self.name = func.__name__
        self._locks = [threading.RLock() for _ in range(_STRIPES)]
        functools.update_wrapper(self, func)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def _cache_of(self, instance: Any) -> Any:
        cache = self.cache
        if cache is False:
            return None
        if cache is None:
            try:
                return vars(instance)
            except TypeError:
                raise InvalidTypeError(f"cache_this keeps {self.name!r} in the instance __dict__, and "
                                       f"{type(instance).__name__} objects have none; pass cache=") from None
        if isinstance(cache, str):
            try:
                return getattr(instance, cache)
            except AttributeError:
                raise AttributeError(f"cache_this: {type(instance).__name__} object has no attribute {cache!r} "
                                     f"to cache {self.name!r} in") from None
        if _is_mapping_like(cache):
            return cache
        made = cache(instance)
        if not _is_mapping_like(made):
            raise InvalidTypeError(f"cache_this: the cache factory of {self.name!r} returned {describe(made)}, "
                                   "not a mapping")
        return made

    def _pre_cache_of(self, instance: Any) -> Any:
        if self.pre_cache is True:
            try:
                caches = vars(instance).setdefault(_PRE_CACHES, {})
            except TypeError:
                raise InvalidTypeError(f"cache_this(pre_cache=True) keeps {self.name!r} in the instance __dict__, "
                                       f"and {type(instance).__name__} objects have none; pass a mapping") from None
            return caches.setdefault(self.name, {})
        return None if self.pre_cache is False or self.pre_cache is None else self.pre_cache

    def _read(self, cache: Any, key: Any, pre: Any) -> Any:
        """The cached value, or :data:`_MISSING`; a value read back from ``cache`` is also kept in
        the pre-cache. Only the lookup's ``KeyError`` means a miss (not one from ``deserialize``)."""
        try:
            value = cache[key]
        except KeyError:
            return _MISSING
        if self.deserialize is not None:
            value = self.deserialize(value)
        if pre is not None:
            pre[key] = value
        return value

    def _lock(self, cache: Any, key: Any) -> threading.RLock:
        try:
            stripe = hash((id(cache), key))
        except TypeError:
            stripe = id(cache)
        return self._locks[stripe % _STRIPES]

    def _get(self, instance: Any, key: Any, compute: Callable[[], Any]) -> Any:
        pre = self._pre_cache_of(instance)
        if pre is not None and key in pre:
            return pre[key]
        cache = self._cache_of(instance)
        if cache is None:
            return compute()
        value = self._read(cache, key, pre)
        if value is not _MISSING:
            return value
        with self._lock(cache, key):
            value = self._read(cache, key, pre)  # another thread may have stored it while this one waited
            if value is not _MISSING:
                return value
            value = compute()
            cache[key] = value if self.serialize is None else self.serialize(value)
        return value


class CachedProperty(_Cached):
    """The descriptor :func:`cache_this` makes of a method that takes only ``self``: a property
    whose value is kept in a cache under ``key`` (default: the attribute's name)."""

    def __get__(self, instance: Any, owner: Optional[type] = None) -> Any:
        if instance is None:
            return self
        key = self.key(self.name) if callable(self.key) else (self.name if self.key is None else self.key)
        return self._get(instance, key, lambda: self.func(instance))


class CachedMethod(_Cached):
    """The descriptor :func:`cache_this` makes of a method with arguments: each distinct call
    (minus the ``ignore``\\ d parameters) is computed once and kept in the cache."""

    def __init__(self, func: Callable, *, ignore: Any = None, **options: Any) -> None:
        super().__init__(func, **options)
        self.signature = inspect.signature(func)
        names = list(self.signature.parameters)
        if not names:
            raise InvalidValueError(f"{func.__qualname__} takes no 'self' parameter; cache_this caches methods")
        ignored = {ignore} if isinstance(ignore, str) else set(ignore or ())
        unknown = ignored - set(names[1:])
        if unknown:
            raise InvalidValueError(f"names no parameter of {func.__qualname__}: {sorted(unknown)}", field="ignore")
        self.ignore = frozenset(ignored)

        def call(instance: Any, *args: Any, **kwargs: Any) -> Any:
            key = self.key_of(instance, args, kwargs)
            return self._get(instance, key, lambda: func(instance, *args, **kwargs))

        self._call = functools.update_wrapper(call, func)

    def key_of(self, instance: Any, args: tuple, kwargs: dict) -> Any:
        """The cache key of one call: ``key(instance, *args, **kwargs)`` when a ``key`` callable
        was given, else ``"name(p=value; ...)"`` over the bound arguments (defaults filled in,
        ``ignore``\\ d ones and empty ``*args``/``**kwargs`` left out, values by ``repr``)."""
        if callable(self.key):
            return self.key(instance, *args, **kwargs)
        if self.key is not None:
            return self.key
        bound = self.signature.bind(instance, *args, **kwargs)
        bound.apply_defaults()
        parts = []
        for name, value in list(bound.arguments.items())[1:]:
            if name in self.ignore:
                continue
            kind = self.signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL and not value:
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                if not value:
                    continue
                value = dict(sorted(value.items()))
            parts.append(f"{name}={value!r}")
        return f"{self.name}({'; '.join(parts)})"

    def __get__(self, instance: Any, owner: Optional[type] = None) -> Any:
        if instance is None:
            return self
        return types.MethodType(self._call, instance)


def _parameters(func: Callable) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):  # a callable without a signature: treat it as a method
        return []


def _takes_only_self(func: Callable) -> bool:
    parameters = _parameters(func)
    return len(parameters) == 1 and parameters[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                           inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _needs_arguments(func: Callable) -> bool:
    """Whether calling ``func(instance)`` would miss a required argument."""
    return any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               for p in _parameters(func)[1:])


def cache_this(func: Optional[Callable] = None, *, cache: Any = None, key: Any = None, pre_cache: Any = False,
               as_property: Optional[bool] = None, ignore: Any = None, serialize: Optional[Callable] = None,
               deserialize: Optional[Callable] = None) -> Any:
    """Cache a property or a method of a class in a mapping (a dict, a store, …).

    A method that takes only ``self`` becomes a cached property (:class:`CachedProperty`); one
    with more parameters a cached method (:class:`CachedMethod`); ``as_property`` forces either.
    Bare, ``@cache_this`` works like :func:`functools.cached_property`: the value is kept in the
    instance ``__dict__`` under the attribute's name.

    - ``cache``: ``None`` (the instance ``__dict__``), ``False`` (compute on every access), the
      name of an instance attribute holding a mapping, a mapping shared by every instance, or a
      callable ``instance -> mapping`` (called on every access), e.g.
      ``cache=lambda self: json_store("runs")``.
    - ``key``: for a property, a constant or a callable applied to the attribute's name (default:
      the name); for a method, a constant or a callable ``(self, *args, **kwargs) -> key``
      (default: see :meth:`CachedMethod.key_of`; give a ``key`` when arguments have no faithful
      ``repr`` or the cache is a store whose keys are file names).
    - ``ignore``: parameter name(s) left out of the default method key (``verbose`` …).
    - ``pre_cache``: ``True`` (an in-memory dict per instance) or a mapping consulted before
      ``cache``. Values read back from ``cache`` are kept there, so later reads skip ``cache``.
    - ``serialize``/``deserialize``: applied to values written to / read from ``cache``.

    A missing value is computed once even when several threads ask for it together; a value read
    from the cache or the pre-cache is returned without calling the method.

    >>> class Corpus:
    ...     def __init__(self, texts):
    ...         self.texts, self.memo = texts, {}
    ...     @cache_this
    ...     def total(self):
    ...         print("summing")
    ...         return sum(map(len, self.texts))
    ...     @cache_this(cache="memo", ignore="verbose")
    ...     def count(self, word, verbose=False):
    ...         return sum(t.split().count(word) for t in self.texts)
    >>> c = Corpus(["a b a", "b"])
    >>> c.total
    summing
    6
    >>> c.total, c.__dict__["total"]
    (6, 6)
    >>> c.count("a"), c.count("a", verbose=True), c.memo
    (2, 2, {"count(word='a')": 2})
    """
    options = dict(cache=cache, key=key, pre_cache=pre_cache, serialize=serialize, deserialize=deserialize)
    if func is None:
        return functools.partial(cache_this, as_property=as_property, ignore=ignore, **options)
    if not callable(func):
        raise InvalidTypeError(f"must decorate a function, got {describe(func)}", field="cache_this")
    if as_property is None:
        as_property = _takes_only_self(func)
    if as_property:
        if ignore:
            raise InvalidValueError("has nothing to ignore in a property (it takes only self)", field="ignore")
        if _needs_arguments(func):
            raise InvalidValueError(f"{func.__qualname__} needs arguments, so it cannot be a property",
                                    field="as_property")
        return CachedProperty(func, **options)
    return CachedMethod(func, ignore=ignore, **options)
