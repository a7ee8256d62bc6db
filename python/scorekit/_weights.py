"""Validation of cost weights: every weight and edit cost scorekit is given must be a finite,
non-negative number.

A negative weight makes a distance negative, NaN or infinity makes it meaningless (a NaN weight
scored 1.0, an infinite one 0.0), and ``10**400`` cannot become a float; each is rejected here with
:class:`~scorekit.errors.InvalidValueError` (or :class:`~scorekit.errors.InvalidTypeError` for a
value that is not a number, such as a ``str``) naming the weight. This module owns only that check.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError, describe

__all__ = ["checked_weight", "grammar_weight"]


def checked_weight(raw: Any, what: str, *, at_most: float | None = None) -> float:
    """``raw`` as a finite, non-negative float (and ``<= at_most`` when given: a probability is
    ``at_most=1.0``), or a named error (``what`` names the weight)."""
    if isinstance(raw, (str, bytes)):
        raise InvalidTypeError(f"must be a number, got {describe(raw)}", field=what)
    try:
        w = float(raw)
    except OverflowError:
        w = math.inf
    except (TypeError, ValueError):
        raise InvalidTypeError(f"must be a number, got {describe(raw)}", field=what) from None
    if not (math.isfinite(w) and w >= 0 and (at_most is None or w <= at_most)):
        rule = "non-negative" if at_most is None else f"within [0, {at_most:g}]"
        raise InvalidValueError(f"must be finite and {rule}, got {raw!r:.60}", field=what)
    return w


def grammar_weight(cost: Callable[..., Any], args: tuple, what: str) -> float:
    """``cost(*args)`` (a grammar's ``node_cost``/``field_cost``) checked by :func:`checked_weight`;
    the grammar's own conversion failing (an importance too large for a float, or not a number)
    is reported as that error too."""
    try:
        raw = cost(*args)
    except OverflowError:
        raise InvalidValueError("must be finite and non-negative, got a number too large for a float",
                                field=what) from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ScorekitError):
            raise
        raise InvalidTypeError(f"must be a number ({exc})", field=what) from None
    return checked_weight(raw, what)
