"""The progress line scorekit draws on stderr during long work (suite runs, case benchmarks, page
evaluations, corpus scoring, row groups): one implementation behind every command and harness."""

from __future__ import annotations

import sys
import time
from typing import Callable, Iterable, Iterator, Optional, TypeVar

__all__ = ["MODES", "progress_printer", "progress_iter", "wanted"]

T = TypeVar("T")

#: The ``--progress``/``progress=`` choices: always, never, or only when stderr is a terminal.
MODES = ("auto", "always", "never")


def wanted(mode: str) -> bool:
    """Whether ``mode`` asks for a progress line here (``"auto"``: stderr is a terminal)."""
    if mode not in MODES:
        raise ValueError(f"progress must be 'auto', 'always' or 'never', got {mode!r}")
    return mode == "always" or (mode == "auto" and sys.stderr.isatty())


def progress_printer(mode: str, label: str, *, rate: bool = False,
                     every: float = 0.1) -> Optional[Callable[[int, Optional[int]], None]]:
    """A ``progress(done, total)`` callback drawing ``[####   ]  40.0% 4/10 <label>`` on stderr
    (``total=None``, when the input can be read only once: ``4,096 <label>``), with the items per
    second when ``rate``; at most once per ``every`` seconds and always at the end (``done >=
    total``, which ends the line). ``None`` when ``mode`` asks for none.
    """
    if not wanted(mode):
        return None
    start = time.monotonic()
    last = [-every]

    def show(done: int, total: Optional[int]) -> None:
        now = time.monotonic()
        finished = total is not None and done >= total
        if not finished and now - last[0] < every:
            return
        last[0] = now
        speed = f" {done / max(now - start, 1e-9):,.0f}/s" if rate else ""
        if total is None:
            line = f"\r{done:,} {label}{speed}"
        else:
            frac = min(done / total, 1.0) if total else 1.0
            line = f"\r[{'#' * int(30 * frac):<30}] {frac:6.1%} {done:,}/{total:,} {label}{speed}"
        print(line, end="\n" if finished else "", file=sys.stderr, flush=True)
    return show


def progress_iter(items: Iterable[T], mode: str, label: str, total: Optional[int] = None) -> Iterator[T]:
    """Yield ``items``, drawing the progress line of :func:`progress_printer` as they go; ``total``
    defaults to ``len(items)`` (give it for an iterator)."""
    show = progress_printer(mode, label)
    if total is None:
        total = len(items)  # type: ignore[arg-type]
    done = 0
    for item in items:
        yield item
        done += 1
        if show is not None:
            show(done, total)
