"""Record-list kernels of the case benchmark (``scorekit.cases``): dispatch to the Rust core or
the Numba twin.

Owns the contract of ``rust/kernels/src/records.rs`` and ``rust/bindings/src/records.rs``:
:func:`record_score_matrix` reads two lists of records into value-id rows (one column per leaf
path of the expected records) and returns the item score matrix — entry ``[j, i]`` is the
fraction of expected record ``j``'s scored leaves that actual record ``i`` matches — or ``None``
when a record has a shape the reader leaves to the general scorer. :func:`greedy_pairs` pairs
rows with columns greedily (rows in order; the best free column, the lowest among ties, if its
score is above 0).

On the Numba backend the reader is :func:`read_records` below (the Python twin of the compiled
reader), the arithmetic ``cases_numba``. Shapes read (both readers): expected records are plain
``dict`` objects with ``str`` keys whose leaves are ``None``, ``bool``, 64-bit ``int``,
``float``, ``str`` or ``"$ignore"``, nested plain dicts allowed (no lists, no ``$ordered``);
walking an actual record meets only plain dicts, those scalars and containers (a container equals
no scalar); a missing key reads as ``None``.

:func:`step_score` is the whole step at once (``rust/bindings/src/case_steps.rs``): the compiled
walker builds a step's ``StepScore`` with its ``FieldScore`` objects, or answers ``None`` for a value it does
not read. It has no Numba twin of its own: on the Numba backend it answers ``None`` and
``scorekit.cases.scoring`` walks the step in Python, which gives the same result (the tests
compare the two).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from scorekit import _kernels

#: Nesting below which expected records are read by the kernels (the Rust reader's MAX_DEPTH).
MAX_DEPTH = 64
#: The id of an actual value equal to nothing; an unscored expected path.
NEVER, UNSCORED = -2, -1
_I64 = (-(2**63), 2**63)
_CONTAINERS = (dict, list, tuple, set, frozenset)
_NONE, _FALSE, _TRUE = 0, 1, 2


class _Unsupported(Exception):
    """A record of a shape the reader leaves to the general scorer."""


def _scalar_key(value: Any) -> Any:
    """The interning key of a plain scalar (``None`` is handled by the caller); raises
    :class:`_Unsupported` for anything else, ``NotImplemented`` for a container."""
    kind = type(value)
    if kind is str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates
            raise _Unsupported from None
        return value
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is int:
        if not _I64[0] <= value < _I64[1]:
            raise _Unsupported
        return ("n", value)
    if kind is float:
        if value != value:
            return None  # NaN
        if value.is_integer() and _I64[0] <= value < _I64[1]:
            return ("n", int(value))
        return ("f", value)
    if isinstance(value, _CONTAINERS):
        return NotImplemented
    raise _Unsupported


def read_records(expected: list, actual: list) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """Value ids ``(int64[nE, P], int64[nA, P])`` of two record lists, or ``None`` (module docs).
    The Python twin of the compiled reader (``cases_record_ids``). Both lists are copied before
    anything is read, so a hostile ``__eq__`` (a dict lookup calls it) that changes a list cannot
    change the lengths the arrays are shaped with."""
    try:
        return _read(list(expected), list(actual))
    except _Unsupported:
        return None


def _read(expected: list, actual: list) -> tuple[np.ndarray, np.ndarray]:
    ids: dict[Any, int] = {}
    counter = [3]  # ids 0, 1, 2 are None, False, True

    def intern(value: Any) -> int:
        if value is None:
            return _NONE
        key = _scalar_key(value)
        if key is NotImplemented:
            raise _Unsupported  # a list (or other container) leaf: the general scorer's case
        if type(value) is bool:
            return key
        if key is None:  # NaN: a value of its own
            counter[0] += 1
            return counter[0] - 1
        if key not in ids:
            ids[key] = counter[0]
            counter[0] += 1
        return ids[key]

    nodes: list[tuple[int, str]] = []
    index: dict[tuple[int, str], int] = {}
    leaves: list[tuple[int, int, int]] = []

    def read(record: int, parent: int, d: dict, depth: int) -> None:
        if depth > MAX_DEPTH or (len(d) == 1 and isinstance(d.get("$ordered"), list)):
            raise _Unsupported
        for key, value in d.items():
            if type(key) is not str:
                raise _Unsupported
            _scalar_key(key)  # lone surrogates in a key
            node = index.get((parent, key))
            if node is None:
                node = index[(parent, key)] = len(nodes)
                nodes.append((parent, key))
            if type(value) is dict:
                read(record, node, value, depth + 1)
            elif type(value) is str and value == "$ignore":
                continue
            else:
                leaves.append((record, node, intern(value)))

    for r, item in enumerate(expected):
        if type(item) is not dict:
            raise _Unsupported
        read(r, -1, item, 0)
    p = len(nodes)
    e = np.full((len(expected), p), UNSCORED, dtype=np.int64)
    is_leaf = [False] * p
    for r, node, value_id in leaves:
        e[r, node] = value_id
        is_leaf[node] = True
    a = np.full((len(actual), p), NEVER, dtype=np.int64)
    for i, item in enumerate(actual):
        values: list[Any] = []
        for parent, key in nodes:
            source = item if parent < 0 else values[parent]
            if source is _ABSENT:
                values.append(_ABSENT)
            elif type(source) is dict:
                values.append(source.get(key, _ABSENT))
            elif isinstance(source, dict):
                raise _Unsupported  # a dict subclass: its own get() may differ
            else:
                if source is not None:
                    _scalar_key(source)  # raises for what the reader does not know
                values.append(_ABSENT)
        for node, value in enumerate(values):
            if not is_leaf[node]:
                continue
            if value is _ABSENT or value is None:
                a[i, node] = _NONE
                continue
            key = _scalar_key(value)
            if key is NotImplemented or key is None:
                a[i, node] = NEVER
            elif type(value) is bool:
                a[i, node] = key
            else:
                a[i, node] = ids.get(key, NEVER)
    return e, a


_ABSENT = object()


def record_score_matrix(expected: list, actual: list) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """The item score matrix ``float64[len(expected), len(actual)]`` of two record lists and the
    number of scored leaves of every expected record (``int64[len(expected)]``), or ``None`` when
    a record is not of the shape the kernels read (module docs)."""
    if _kernels.current_backend() == "rust":
        return _kernels.implementation("cases").cases_record_matrix(expected, actual)
    ids = read_records(expected, actual)
    if ids is None:
        return None
    return _kernels.implementation("cases").cases_match_matrix(*ids), (ids[0] >= 0).sum(axis=1, dtype=np.int64)


def step_score(actual: Any, expected: Any, step_name: str, classes: tuple[type, type, type]) -> Any:
    """The ``StepScore`` of a step scored without comparators and with greedy matching, made with
    ``classes`` (``StepScore``, ``FieldScore``, ``ListMatch``); ``None`` when the compiled walker
    does not read the step, or on the Numba backend (module docs)."""
    core = _kernels.compiled()
    return None if core is None else core.cases_step_score(actual, expected, step_name, classes)


def match_matrix(expected_ids: np.ndarray, actual_ids: np.ndarray) -> np.ndarray:
    """Item scores from value ids (``int64[nE, P]``, ``int64[nA, P]``): ``float64[nE, nA]``."""
    return _kernels.implementation("cases").cases_match_matrix(expected_ids, actual_ids)


def greedy_pairs(matrix: np.ndarray) -> np.ndarray:
    """The column paired with every row of ``matrix`` (``float64[rows, cols]``, values in
    [0, 1]), or -1: ``int64[rows]``."""
    return _kernels.implementation("cases").cases_greedy_pairs(np.ascontiguousarray(matrix, dtype=np.float64))
