"""How the case benchmark writes scores for people: percentages and percentage-point differences,
one definition for the console, the report and the run comparison."""

from __future__ import annotations

import math
from typing import Optional

__all__ = ["format_delta", "format_score"]


def format_score(score: Optional[float]) -> str:
    """A score as a percentage with one decimal, rounded down (``0.9999`` is ``99.9%``, only
    ``1.0`` is ``100.0%``); ``None`` is ``—``.

    >>> [format_score(x) for x in (1.0, 0.9999, 0.625, 0.0, None)]
    ['100.0%', '99.9%', '62.5%', '0.0%', '—']
    """
    if score is None:
        return "\u2014"
    tenths = math.floor(score * 1000 + 1e-9)
    if score < 1.0:
        tenths = min(tenths, 999)
    return f"{tenths / 10:.1f}%"


def format_delta(delta: Optional[float]) -> str:
    """A difference of two scores in percentage points, signed, one decimal, cut toward zero.

    >>> [format_delta(x) for x in (0.5, -0.5, 0.0, -0.00001, None)]
    ['+50.0', '-50.0', '+0.0', '-0.0', '—']
    """
    if delta is None:
        return "\u2014"
    tenths = math.floor(abs(delta) * 1000 + 1e-9)
    return f"{'-' if delta < 0 else '+'}{tenths / 10:.1f}"
