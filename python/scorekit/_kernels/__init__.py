"""Kernel dispatch: every kernel family has a compiled (Rust, ``scorekit._core``) and a Numba backend.

This package owns backend selection only. ``SCOREKIT_BACKEND=rust|numba`` forces one backend; by
default the compiled core is used and Numba is the fallback (with one warning) when ``_core`` cannot
be imported. Tests switch backends in-process with :func:`use_backend`.

Each family lives in ``<family>.py`` (the dispatching functions users' code calls) beside
``<family>_numba.py`` (the Numba twin). Both take and return the same NumPy arrays.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Iterator

from scorekit.errors import InvalidTypeError, InvalidValueError

BACKENDS = ("rust", "numba")

try:  # the compiled core is optional at import time
    from scorekit import _core  # type: ignore[attr-defined]
except ImportError as _exc:  # pragma: no cover - exercised only without a build
    _core = None
    _core_error: ImportError | None = _exc
else:
    _core_error = None


def _initial_backend() -> str:
    forced = os.environ.get("SCOREKIT_BACKEND", "").strip().lower()
    if forced:
        if forced not in BACKENDS:
            raise ValueError(f"SCOREKIT_BACKEND must be one of {BACKENDS}, got {forced!r}")
        if forced == "rust" and _core is None:
            raise ImportError(f"SCOREKIT_BACKEND=rust but scorekit._core failed to import: {_core_error}")
        return forced
    if _core is None:
        warnings.warn(
            f"scorekit._core is not available ({_core_error}); using the Numba backend.",
            RuntimeWarning,
            stacklevel=2,
        )
        return "numba"
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
        raise ImportError(f"the rust backend needs scorekit._core, which failed to import: {_core_error}")
    _current = name


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
