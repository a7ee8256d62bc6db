"""Interning of arbitrary Python values into ``uint32`` ids, and the equality rule behind it.

Kernels compare ids, so two values must get the same id exactly when they are *equal*, and that
relation must be transitive: otherwise which of three values an interner meets first decides
which pairs share an id, and a score changes with the rest of a batch. Python's ``==`` is not
transitive across number types (``np.int64(2**53 + 1) == 2.0**53 == 2**53`` but the ends differ;
``np.float32(0.1) == 0.1 == Decimal(0.1)`` but the ends differ; ``Decimal(1) == np.int64(1)``
raises). So values are compared through :func:`exact_key`, which is Python's ``==`` wherever that
is transitive:

* numbers compare by exact mathematical value: ``bool``, ``int``, ``float``, ``complex``,
  ``Fraction`` and ``Decimal`` as Python compares them (``True == 1 == 1.0 == Fraction(1) ==
  Decimal(1)``, ``0.0 == -0.0``, huge ints exactly), and NumPy scalars by the exact value they
  hold (``np.float32(0.1)`` is ``0.100000001490116…``, not ``0.1``; ``np.int64(2**53 + 1)`` is not
  ``2.0**53``); a complex number equals a real one when its imaginary part is zero, as in Python
  (but ``1j`` compared with ``10**400`` is unequal here, where Python raises ``OverflowError``);
* a value unequal to itself — a float, complex or NumPy NaN, ``Decimal('NaN')``, a signalling
  ``Decimal('sNaN')`` — is equal to nothing (it gets a fresh id at every occurrence); inside a
  container a float or ``Decimal`` NaN matches only the very same object, as Python's container
  comparison does (the other NaNs inside a container match nothing);
* tuples, lists, dicts, sets/frozensets and NumPy arrays compare element by element under this
  rule; a list never equals a tuple, a set equals the frozenset of the same elements (both as in
  Python); an array equals an array of the same shape and element values (whatever the dtype),
  and nothing else (Python's ``==`` on arrays has no truth value);
* strings, bytes, ``None`` and every other object compare with their own ``==`` (assumed
  transitive); a value that contains itself, or is nested deeper than :data:`MAX_DEPTH`, raises
  :class:`~scorekit.errors.InvalidValueError`.

This module owns that rule and the value → id mapping; nothing else.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from scorekit.errors import InvalidValueError, describe

__all__ = ["MAX_DEPTH", "SELF_KEYED", "ValueInterner", "exact_key"]

#: Deepest nesting of containers accepted in a value.
MAX_DEPTH = 100

#: Types whose value is its own key (NaN floats included: the interner tests ``key == key``).
SELF_KEYED = frozenset({str, int, float, bool, type(None), bytes, Fraction})
_EXACT_NUMPY_FLOATS = (np.float16, np.float32, np.float64)


class _Tagged:
    """The key of a list, dict or array: equal only to the key of the same kind with equal items."""

    __slots__ = ("kind", "items")

    def __init__(self, kind: type, items: Any) -> None:
        self.kind, self.items = kind, items

    def __eq__(self, other: Any) -> bool:
        return type(other) is _Tagged and other.kind is self.kind and self.items == other.items

    def __hash__(self) -> int:
        items = frozenset(self.items.items()) if self.kind is dict else self.items
        return hash((self.kind.__name__, items))  # TypeError if an item is unhashable

    def __repr__(self) -> str:
        return f"_Tagged({self.kind.__name__}, {self.items!r})"


def exact_key(value: Any) -> Any:
    """The key of ``value`` under the module's equality rule: two values are equal exactly when
    their keys are ``==`` (keys of NaN-like values are unequal to themselves)."""
    if type(value) in SELF_KEYED:
        return value
    return _key(value, 0, set())


def _key(value: Any, depth: int, open_ids: set) -> Any:
    t = type(value)
    if t in SELF_KEYED:
        return value
    if t is Decimal:
        return float("nan") if value.is_snan() else value
    if t is complex:
        return _complex_key(value.real, value.imag)
    if isinstance(value, np.generic):
        return _numpy_scalar_key(value)
    kind = _CONTAINERS.get(t)
    if kind is None:
        if isinstance(value, np.ndarray):
            kind = np.ndarray
        else:
            base = next((b for b in _BUILTIN_BASES if isinstance(value, b)), None)
            if base is None or t.__eq__ is not base.__eq__ or t.__hash__ is not base.__hash__:
                return value  # compared with its own ==
            if base in _SCALAR_COPY:  # e.g. an IntEnum member or a str subclass: its plain value
                return _SCALAR_COPY[base](value)
            kind = base
    if depth >= MAX_DEPTH:
        raise InvalidValueError(f"is nested deeper than {MAX_DEPTH} levels")
    if id(value) in open_ids:
        raise InvalidValueError(f"contains itself (a recursive value): {describe(value)}")
    open_ids.add(id(value))
    depth += 1
    try:
        if kind is tuple:
            return tuple([_key(e, depth, open_ids) for e in value])
        if kind is list:
            return _Tagged(list, tuple([_key(e, depth, open_ids) for e in value]))
        if kind is dict:
            return _Tagged(dict, {_key(k, depth, open_ids): _key(v, depth, open_ids) for k, v in value.items()})
        if kind is np.ndarray:
            flat = value.ravel()
            items = list(flat) if flat.dtype == object else flat.tolist()
            return _Tagged(np.ndarray, (value.shape, tuple([_key(e, depth, open_ids) for e in items])))
        return frozenset([_key(e, depth, open_ids) for e in value])
    finally:
        open_ids.discard(id(value))


_CONTAINERS = {tuple: tuple, list: list, dict: dict, set: frozenset, frozenset: frozenset, np.ndarray: np.ndarray}
#: Built-in bases whose subclasses keep their ``==`` unless they redefine it (bool cannot be subclassed).
_BUILTIN_BASES = (int, float, complex, str, bytes, tuple, list, dict, set, frozenset)
#: The plain value of a scalar subclass instance (read without calling anything it overrides).
_SCALAR_COPY = {int: int.__int__, float: float.__float__, str: str.__str__,
                bytes: lambda b: bytes.__add__(b"", b),
                complex: lambda z: _complex_key(complex.real.__get__(z), complex.imag.__get__(z))}


def _numpy_scalar_key(value: np.generic) -> Any:
    """The exact Python number a NumPy scalar holds (other NumPy scalars are their own key)."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        if value != value:
            return float("nan")  # equal to nothing (a NumPy NaN would overflow against huge ints)
        if isinstance(value, _EXACT_NUMPY_FLOATS) or not np.isfinite(value):
            return float(value)
        return Fraction(*value.as_integer_ratio())
    if isinstance(value, np.complexfloating):
        return _complex_key(_numpy_scalar_key(value.real), _numpy_scalar_key(value.imag))
    return value


def _complex_key(real: Any, imag: Any) -> Any:
    """A complex number with a zero imaginary part is its real part; any other is equal only to
    a complex of the same parts (never compared with ``complex.__eq__``, which converts an ``int``
    operand to float and overflows on huge ones). A NaN part makes it equal to nothing."""
    if real != real or imag != imag:
        return float("nan")
    if imag == 0:
        return real
    return _Tagged(complex, (real, imag))


class ValueInterner:
    """Assigns ids ``0, 1, 2, …`` in first-seen order, equal values (by :func:`exact_key`) sharing
    one; :attr:`values` maps ids back to the first value seen of each.

    ``lookup(v)`` is a read-only fast path for a value that is its own key — a ``str``, ``int``,
    ``float``, ``bool`` or ``None`` (its id if an equal value was seen, else ``None``): hot loops
    try it before :meth:`id`.
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
        return self.id_shared(value)[0]

    def id_shared(self, value: Any) -> tuple[int, bool]:
        """``(id, shared)``: the id of ``value``, and whether another occurrence can ever get it
        (``False`` for a value equal to nothing, such as a NaN)."""
        key = exact_key(value)
        try:
            found = self._ids.get(key)
        except TypeError:  # unhashable: linear scan with ==
            for seen, k in self._unhashable:
                if _equal(seen, key, value):
                    return k, True
            k = self._new(value)
            self._unhashable.append((key, k))
            return k, True
        if found is not None:
            return found, True
        k = self._new(value)
        if not _equal(key, key, value):  # a value unequal to itself (NaN) is never found again
            return k, False
        self._ids[key] = k
        return k, True


def _equal(a: Any, b: Any, value: Any) -> bool:
    """``a == b`` as a bool, or a named error when ``value``'s ``==`` has no truth value."""
    try:
        return bool(a == b)
    except Exception as exc:
        raise InvalidValueError(f"cannot be compared with == ({type(exc).__name__}: {exc}): "
                                f"{describe(value)}") from exc
