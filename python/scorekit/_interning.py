"""Interning of arbitrary Python values into ``uint32`` ids whose equality is Python ``==``.

Kernels compare ids, so two values must get the same id exactly when Python's ``==`` says they are
equal: ``1``, ``1.0`` and ``True`` share an id; a value unequal to itself (a NaN) gets a fresh id at
every occurrence; unhashable values (dicts, tuples holding lists) are compared with ``==`` against
the unhashable values seen so far. This module owns only that mapping.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ValueInterner"]


class ValueInterner:
    """Assigns ids ``0, 1, 2, …`` in first-seen order; :attr:`values` maps ids back to values.

    ``lookup(value)`` is a read-only fast path (the id of a hashable value seen before, else
    ``None``; raises ``TypeError`` for unhashable values): hot loops try it before :meth:`id`.
    """

    __slots__ = ("_ids", "_unhashable", "values", "lookup")

    def __init__(self) -> None:
        self._ids: dict[Any, int] = {}
        self.lookup = self._ids.get
        self._unhashable: list[tuple[Any, int]] = []
        self.values: list[Any] = []

    def __len__(self) -> int:
        return len(self.values)

    def _new(self, value: Any) -> int:
        self.values.append(value)
        return len(self.values) - 1

    def id(self, value: Any) -> int:
        """The id of ``value`` (a new one if no equal value was seen)."""
        try:
            found = self._ids.get(value)
        except TypeError:  # unhashable: linear scan with ==
            for seen, k in self._unhashable:
                if seen == value:
                    return k
            k = self._new(value)
            self._unhashable.append((value, k))
            return k
        if found is not None:
            return found
        k = self._new(value)
        if value == value:  # a value unequal to itself (NaN) is never found again
            self._ids[value] = k
        return k
