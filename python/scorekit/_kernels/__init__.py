"""Kernel dispatch: every kernel family has a compiled (Rust, ``scorekit._core``) and a Numba backend.

This package owns backend selection only. ``SCOREKIT_BACKEND=rust|numba`` forces one backend; by
default the compiled core is used and Numba is the fallback (with one warning) when ``_core`` cannot
be imported. Tests switch backends in-process with :func:`use_backend`.

Each family lives in ``<family>.py`` (the dispatching functions users' code calls) beside
``<family>_numba.py`` (the Numba twin). Both take and return the same NumPy arrays. Numba is an
optional extra (``scorekit[numba]``): a twin, and with it Numba, is imported only when a kernel of
its family first runs on the Numba backend (:func:`implementation`), so scoring through the
compiled core never loads Numba. Without the core and without Numba, selecting the Numba backend
or running a kernel raises :class:`~scorekit.registry.MissingExtraError` saying what to install.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import warnings
from types import ModuleType
from typing import Iterator

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.registry import MissingExtraError

BACKENDS = ("rust", "numba")

try:  # the compiled core is optional at import time
    from scorekit import _core  # type: ignore[attr-defined]
except ImportError as _exc:  # pragma: no cover - exercised only without a build
    _core = None
    _core_error: ImportError | None = _exc
else:
    _core_error = None


#: How to get the compiled core.
_CORE_HINT = "install a scorekit wheel built for this platform, or build the core (`make build` in a source checkout)"
#: What to do when neither backend can run.
_INSTALL_HINT = f"install the Numba backend with:  pip install scorekit[numba]  -- or {_CORE_HINT}"


def _core_missing(context: str) -> MissingExtraError:
    return MissingExtraError(f"{context}: scorekit._core failed to import ({_core_error}); {_CORE_HINT}")


def _numba_missing(context: str, exc: BaseException) -> MissingExtraError:
    reason = f"the compiled core is not available ({_core_error}) and " if _core is None else ""
    return MissingExtraError(f"{context}: {reason}Numba cannot be imported ({exc}); {_INSTALL_HINT}")


def _require_numba(context: str) -> None:
    """Import Numba (the user asked for its backend), or raise :class:`MissingExtraError`."""
    try:
        importlib.import_module("numba")
    except ImportError as exc:
        raise _numba_missing(context, exc) from exc


def _numba_installed() -> bool:
    """Whether Numba looks installed, found without importing it."""
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):  # a broken or blocked installation
        return False


def _initial_backend() -> str:
    forced = os.environ.get("SCOREKIT_BACKEND", "").strip().lower()
    if forced:
        if forced not in BACKENDS:
            raise ValueError(f"SCOREKIT_BACKEND must be one of {BACKENDS}, got {forced!r}")
        if forced == "rust" and _core is None:
            raise _core_missing("SCOREKIT_BACKEND=rust")
        if forced == "numba":
            _require_numba("SCOREKIT_BACKEND=numba")
        return forced
    if _core is None:
        if _numba_installed():
            warnings.warn(
                f"scorekit._core is not available ({_core_error}); using the Numba backend.",
                RuntimeWarning,
                stacklevel=2,
            )
        return "numba"  # without Numba either, the first kernel call raises MissingExtraError
    return "rust"


_current = _initial_backend()


def current_backend() -> str:
    """Name of the backend kernels dispatch to right now (``"rust"`` or ``"numba"``)."""
    return _current


def set_backend(name: str) -> None:
    """Switch every kernel family to backend ``name`` for this process."""
    global _current
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    if name == "rust" and _core is None:
        raise _core_missing("the rust backend")
    if name == "numba":
        _require_numba("the numba backend")
    _current = name


def implementation(family: str) -> ModuleType:
    """The module running kernel family ``family`` (``"ged"``, ``"tree"`` …) on the current backend:
    ``scorekit._core``, or the family's Numba twin, imported here on first use."""
    if _current == "rust":
        return _core
    _require_numba(f"the {family} kernels")
    return importlib.import_module(f"scorekit._kernels.{family}_numba")


def compiled() -> ModuleType | None:
    """``scorekit._core`` when the current backend is the compiled one, else ``None``: for the
    readers that have a compiled form and a plain Python one (no Numba twin), so that under the
    Numba backend, as without the core, nothing calls ``_core``."""
    return _core if _current == "rust" else None


@contextlib.contextmanager
def use_backend(name: str) -> Iterator[str]:
    """Context manager: run the enclosed kernel calls on backend ``name``."""
    previous = _current
    set_backend(name)
    try:
        yield name
    finally:
        set_backend(previous)


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS reports it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return os.cpu_count() or 1


def resolve_threads(threads: int | None) -> int:
    """Worker threads for a ``threads`` argument: ``None``/``0`` → 0, which the kernels read as 'all
    cores'; a positive int → that many, capped at :func:`available_cores` (a larger value also means
    all cores). Anything else is an error naming ``threads``."""
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise InvalidTypeError(f"must be an int or None, got {type(threads).__name__}", field="threads")
    if threads < 0:
        raise InvalidValueError(f"must be >= 0 (0 = all cores), got {threads}", field="threads")
    return min(threads, available_cores())
