"""Where scorekit reads and writes files: the one output guard, the one atomic writer and the one
strict JSON reader.

Every command that writes calls :func:`check_outputs` with all its output paths and everything it
reads, *before any work*, so that a mistyped path can never replace an input (or another output
of the same run) after an hour of scoring. A path is refused when it

* is, or resolves through symbolic links to, a file the run reads;
* is a hard link of such a file, or of a file inside a folder the run reads (same device and
  inode);
* lies inside a folder the run reads and already exists there (the run may read it);
* resolves to the same place as another output of the run;
* is an existing folder, or its folder does not exist.

:func:`write_atomically` then writes each output through a temporary file in the same folder,
flushed to disk and renamed over the target, so a reader sees the old file or the whole new one.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> gold = folder / "gold.txt"; _ = gold.write_text("abc")
>>> check_outputs({"--json": folder / "out.json"}, inputs=[gold])["--json"].name
'out.json'
>>> check_outputs({"--json": gold}, inputs=[gold])
Traceback (most recent call last):
...
scorekit.files.OutputPathError: --json ... is an input of this run ...; outputs never overwrite inputs
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from scorekit.errors import InvalidValueError

__all__ = ["OutputPathError", "check_outputs", "strict_json_loads", "write_atomically"]

PathLike = Union[str, "os.PathLike[str]"]
#: Bytes buffered per write of :func:`write_atomically`.
_WRITE_BUFFER = 1 << 20


class OutputPathError(InvalidValueError):
    """An output path that would replace an input or another output, or cannot be written."""


def _identity(path: Path) -> Optional[tuple[int, int]]:
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _is_within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def _hard_link_in(path: Path, folders: list[tuple[Path, Path]]) -> Optional[Path]:
    """The file under one of ``folders`` that ``path`` is a hard link of, if any (walked only for
    an output that has several links)."""
    ident = _identity(path)
    for folder, _given in folders:
        for root, _dirs, names in os.walk(folder):
            for name in names:
                candidate = Path(root) / name
                if _identity(candidate) == ident:
                    return candidate
    return None


def check_outputs(outputs: Union[Mapping[str, Optional[PathLike]], Iterable[Optional[PathLike]]],
                  inputs: Iterable[Optional[PathLike]] = ()) -> dict[str, Path]:
    """Check every output path against the run's inputs and each other; return ``{name: Path}``.

    ``outputs`` maps a name the user knows (an option such as ``"--report"``) to a path, or is a
    plain iterable of paths (named by the path itself); ``None`` entries are skipped, so optional
    outputs can be passed as they are. ``inputs`` are files or folders the run reads (``None``
    skipped). Raises :class:`OutputPathError` naming the output and the input it would replace."""
    if isinstance(outputs, Mapping):
        named = [(str(name), path) for name, path in outputs.items() if path is not None]
    else:
        named = [(str(path), path) for path in outputs if path is not None]
    read_files: dict[Path, Path] = {}
    read_folders: list[tuple[Path, Path]] = []
    read_ids: dict[tuple[int, int], Path] = {}
    for source in inputs:
        if source is None:
            continue
        given = Path(source)
        resolved = given.resolve()
        if resolved.is_dir():
            read_folders.append((resolved, given))
            continue
        read_files[resolved] = given
        ident = _identity(resolved)
        if ident is not None:
            read_ids[ident] = given
    checked: dict[str, Path] = {}
    claimed: dict[Path, str] = {}
    for name, path in named:
        target = Path(path)
        where = f"{name} {str(path)!r}" if name != str(path) else repr(str(path))
        resolved = target.resolve()
        if resolved.is_dir():
            raise OutputPathError(f"{where} is a folder; give a file path")
        if not resolved.parent.is_dir():
            raise OutputPathError(f"{where}: folder {str(target.parent)!r} does not exist")
        source = read_files.get(resolved)
        if source is None:
            ident = _identity(resolved)
            source = read_ids.get(ident) if ident is not None else None
        if source is None and resolved.exists():
            source = next((given for folder, given in read_folders if _is_within(resolved, folder)), None)
            if source is None and read_folders and resolved.stat().st_nlink > 1:
                source = _hard_link_in(resolved, read_folders)
        if source is not None:
            raise OutputPathError(f"{where} is an input of this run ({str(source)!r}); "
                                  "outputs never overwrite inputs")
        if resolved in claimed:
            raise OutputPathError(f"{where} is also the output {claimed[resolved]}; "
                                  "each output needs its own path")
        claimed[resolved] = where
        checked[name] = target
    return checked


def write_atomically(path: PathLike, data: Union[bytes, str, Iterable[str]], *, mode: int = 0o644) -> Path:
    """Write ``data`` (``str`` as UTF-8, or an iterable of ``str`` pieces written one by one as it
    yields them, so a large document is never one string) to ``path`` through a temporary file in
    its folder, flushed to disk and renamed over it, with permission bits ``mode`` whatever the
    umask; the temporary file is removed on any error (one from ``data`` included). Returns the path."""
    import tempfile  # here: its imports (random, shutil) cost every command's start-up ~4 ms

    target = Path(path)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb", buffering=_WRITE_BUFFER) as handle:
            if isinstance(data, str):
                handle.write(data.encode("utf-8"))
            elif isinstance(data, (bytes, bytearray, memoryview)):
                handle.write(data)
            else:
                for piece in data:
                    handle.write(piece.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]}{'…' if len(text) > 20 else ''} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > 4300:  # Python's own bound on decimal integer conversion
        raise ValueError(f"integer of {len(text):,} digits is out of range")
    return int(text)


def strict_json_loads(text: str) -> Any:
    """The JSON value of ``text``, strictly (the stores and the command line read JSON with it):
    ``NaN``, ``Infinity``, numbers beyond the range of a float (``1e999``) and integers of more
    than 4,300 digits raise ``ValueError`` (Python's :func:`json.loads` reads the first three as
    NaN and infinities).

    >>> strict_json_loads('{"aggregate": 0.25}')
    {'aggregate': 0.25}
    >>> strict_json_loads('{"aggregate": NaN}')
    Traceback (most recent call last):
    ...
    ValueError: NaN is not valid JSON
    """
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int)
