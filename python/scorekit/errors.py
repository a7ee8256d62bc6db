"""The exceptions scorekit raises on bad input, in one place.

Every error a caller can provoke with bad data is one of these. Each is also the built-in exception
a Python user would expect (a bad value is a ``ValueError``, a wrong type a ``TypeError``, a guard
that refuses an input too large to score a ``ValueError``), so ``except ValueError`` keeps working,
and all share :class:`ScorekitError`, so ``except scorekit.errors.ScorekitError`` catches every one.

The message names the argument (``field``) and, in a batch, the position of the offending item
(``item``); both are also kept as attributes for programs that handle errors.

>>> from scorekit.errors import InvalidValueError
>>> e = InvalidValueError("must be finite and >= 0, got -1.0", field="weights['x']", item=3)
>>> str(e)
"item 3: weights['x'] must be finite and >= 0, got -1.0"
>>> isinstance(e, ValueError), (e.item, e.field)
(True, (3, "weights['x']"))
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = [
    "ScorekitError",
    "InvalidValueError",
    "InvalidTypeError",
    "InputTooLargeError",
    "describe",
]


class ScorekitError(Exception):
    """Base of every error scorekit raises on bad input or an unmet limit."""

    def __init__(self, message: str, *, field: Optional[str] = None, item: Any = None) -> None:
        self.field = field
        self.item = item
        self.message = message
        parts = []
        if item is not None:
            parts.append(f"item {item}: ")
        if field:
            parts.append(f"{field} ")
        parts.append(message)
        super().__init__("".join(parts))


class InvalidValueError(ScorekitError, ValueError):
    """A value of the right type that scorekit cannot score (NaN cost, negative span, lone surrogate …)."""


class InvalidTypeError(ScorekitError, TypeError):
    """A value of a type the argument does not accept."""


class InputTooLargeError(ScorekitError, ValueError):
    """An input beyond a documented guard (too deep, too many cells, too many distinct labels …).

    Guards exist so that a hostile or mistaken input gets this error instead of exhausting memory
    or time; each guard's limit is documented where it is enforced.
    """


def describe(value: Any, limit: int = 60) -> str:
    """A short, safe rendering of ``value`` for error messages (type name and a clipped repr)."""
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not hide the real error
        text = f"<{type(value).__name__} object>"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{text} ({type(value).__name__})"
