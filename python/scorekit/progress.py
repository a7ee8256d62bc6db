"""The progress bar scorekit draws on stderr during long work (suite runs, case benchmarks)."""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional

__all__ = ["progress_printer"]


def progress_printer(mode: str, label: str) -> Optional[Callable[[int, int], None]]:
    """A ``progress(done, total)`` callback drawing ``[####   ]  40.0% 4/10 <label>`` on stderr
    (at most 10 times a second, and at the end), or ``None`` when ``mode`` asks for none.

    ``mode`` is ``"always"``, ``"never"`` or ``"auto"`` (only when stderr is a terminal).
    """
    if mode not in ("auto", "always", "never"):
        raise ValueError(f"progress must be 'auto', 'always' or 'never', got {mode!r}")
    if not (mode == "always" or (mode == "auto" and sys.stderr.isatty())):
        return None
    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < 0.1:
            return
        last[0] = now
        frac = done / total if total else 1.0
        print(f"\r[{'#' * int(30 * frac):<30}] {frac:6.1%} {done:,}/{total:,} {label}",
              end="\n" if done >= total else "", file=sys.stderr, flush=True)
    return show
