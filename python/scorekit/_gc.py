"""Pausing Python's cyclic garbage collector around batch code that builds many small acyclic
objects (trees of answers, result objects): each allocation burst would otherwise trigger full
collections over and over. Reference counting still frees everything; results never depend on it."""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def cyclic_gc_paused(pause: bool = True) -> Iterator[None]:
    """Within the block, the cyclic collector is off (when ``pause``); afterwards it is as it was.

    >>> with cyclic_gc_paused():
    ...     gc.isenabled()
    False
    """
    paused = pause and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
