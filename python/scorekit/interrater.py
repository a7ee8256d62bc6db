"""Inter-annotator agreement: how far annotators agree, the ceiling of a gold standard.

:func:`percent_agreement` and :func:`cohen_kappa` compare two raters; :func:`krippendorff_alpha`
any number, with missing ratings, at the nominal, ordinal, interval or ratio level. The offline
harness (:mod:`scorekit.harness`, as in the reference kit) and the judge validation of
:mod:`scorekit.agents.judge` use them.

Krippendorff's alpha is computed without building the coincidence matrix: the observed and expected
disagreements are sums over pairs of values, and for the nominal, ordinal and interval levels those
sums have closed forms (value counts, sums of squares), evaluated with NumPy in time linear in the
number of ratings. The ratio level has no closed form; its sums run over pairs of distinct values in
bounded-memory NumPy blocks (quadratic work, see :func:`krippendorff_alpha`); interval alpha on
small tables is computed in exact integer arithmetic. Results agree with the reference kit ``ek``
to a relative 1e-9; they can differ in the last bits because the sums are added in another order
(Cohen's kappa and small interval alpha are correctly rounded; ``ek``'s floats may be a bit off).

>>> krippendorff_alpha([[1, 1, 1, 1], [1, 1, 1, 1]])     # two raters, perfect agreement
1.0
>>> krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 5]], level="interval")
0.9369369369369369
>>> cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"])
0.5
>>> percent_agreement(["a", "a", "b", "b"], ["a", "b", "b", "b"])
0.75
"""

from __future__ import annotations

import math
import numbers
import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from decimal import Decimal
from itertools import chain
from typing import Any, Optional, Union

import numpy as np

from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError, describe

__all__ = ["LEVELS", "RATIO_MAX_DISTINCT", "percent_agreement", "cohen_kappa", "krippendorff_alpha", "as_labels",
           "is_missing"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")
"""The measurement levels of :func:`krippendorff_alpha`."""

RATIO_MAX_DISTINCT = 250_000
"""Most distinct values :func:`krippendorff_alpha` accepts at the ratio level, whose expected
disagreement has one term per pair of them (about a minute at this limit on one core)."""

#: Elements of one temporary array in the ratio-level pair sums (2 MiB of float64).
_BLOCK = 1 << 18
#: Cell types that NumPy converts to float64 exactly as ``float()`` does (``None`` becomes NaN).
_PLAIN_NUMBERS = frozenset({float, int, bool, type(None)})
# Small inputs are counted in Python, where NumPy's fixed cost per call would outweigh the work:
# Cohen's kappa below this many items, nominal alpha below this many cells of these types.
_SMALL_ITEMS = 512
#: Cohen's kappa counts each label shared by both raters with ``list.count`` up to this many.
_SMALL_SHARED = 8
_PLAIN_LABELS = _PLAIN_NUMBERS | {str}
_INTEGER_TYPES = frozenset({int, bool})
# Interval alpha below this many cells and raters is computed in Python, in exact integer
# arithmetic; from there NumPy's path is the faster.
_SMALL_INTERVAL_CELLS = 128
_SMALL_INTERVAL_RATERS = 8
_NUMERIC_KINDS = "biuf"
_LIST = {list}
#: Integers up to this magnitude are their own float64 values.
_EXACT_INTS = 2**53
_EQ = operator.eq


def as_labels(values: Any, name: str) -> Sequence[Any]:
    """``values`` as a sequence of labels (a list or tuple as it is, an array or any iterable as a
    list); anything else is an error naming the argument ``name``."""
    if isinstance(values, (list, tuple)):
        return values
    if isinstance(values, np.ndarray) and values.ndim:
        return values.tolist()
    try:
        return list(values)
    except TypeError:
        raise InvalidTypeError(f"must be a sequence of labels, got {describe(values)}", field=name) from None


def _two_raters(rater_a: Any, rater_b: Any) -> tuple[Sequence[Any], Sequence[Any]]:
    # Two lists, the common case, skip the calls to as_labels (which would return them as they are).
    a = rater_a if type(rater_a) is list else as_labels(rater_a, "rater_a")
    b = rater_b if type(rater_b) is list else as_labels(rater_b, "rater_b")
    if len(a) != len(b):
        raise InvalidValueError("raters must label the same number of items")
    return a, b


def _agreements(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many items the two raters labelled equal (``==``, so NaN never agrees with NaN)."""
    return len(list(filter(None, map(_EQ, a, b))))


def percent_agreement(rater_a: Sequence[Any], rater_b: Sequence[Any]) -> float:
    """Raw fraction of items two raters labelled identically (``1.0`` when there are none).

    >>> percent_agreement([1, 2, 3, 4], [1, 2, 3, 5])
    0.75
    """
    a, b = _two_raters(rater_a, rater_b)
    if not a:
        return 1.0
    return _agreements(a, b) / len(a)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _not_hashable(values: Iterable[Any]) -> InvalidTypeError:
    bad = next(v for v in values if not _hashable(v))
    return InvalidTypeError(f"must be hashable, got {describe(bad)}", field="labels")


def _integer_counts(a: Sequence[Any], b: Sequence[Any]) -> Optional[tuple[np.ndarray, np.ndarray, int]]:
    """:func:`_shared_counts` for integer labels, with NumPy; ``None`` for other labels."""
    # a[0] (there is one) settles the common case of other labels without a scan of both raters.
    if type(a[0]) not in _INTEGER_TYPES or not {*map(type, a), *map(type, b)} <= _INTEGER_TYPES:
        return None
    try:
        x, y = np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)
    except OverflowError:
        return None
    both = np.concatenate([x, y])
    lo, hi = int(both.min()), int(both.max())
    ids = both - lo if hi - lo <= 4 * both.size else np.unique(both, return_inverse=True)[1].reshape(-1)
    size = int(ids.max()) + 1
    return (np.bincount(ids[: x.size], minlength=size), np.bincount(ids[x.size:], minlength=size),
            int(np.count_nonzero(x == y)))


def _shared_counts(a: Sequence[Any], b: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """How often each rater gave each label (two aligned arrays; labels only one rater used may be
    left out), and the number of agreements."""
    counted = _integer_counts(a, b)
    if counted is not None:
        return counted
    try:
        count_a, count_b = Counter(a), Counter(b)
    except TypeError:
        raise _not_hashable(chain(a, b)) from None
    shared = count_a.keys() & count_b.keys()
    return (np.array([count_a[k] for k in shared], dtype=np.int64),
            np.array([count_b[k] for k in shared], dtype=np.int64), _agreements(a, b))


def _tally(values: Sequence[Any]) -> dict[Any, int]:
    """How often each label occurs, in order of first occurrence (a ``Counter`` without its cost
    per call)."""
    counts: dict[Any, int] = {}
    try:
        for v in values:
            counts[v] = counts.get(v, 0) + 1
    except TypeError:
        raise _not_hashable(values) from None
    return counts


def _small_counts(a: Sequence[Any], b: Sequence[Any]) -> Optional[tuple[int, int]]:
    """``(chance, agreements)`` of :func:`cohen_kappa` counted in Python: ``chance`` is the sum over
    the labels both raters used of the product of their counts (an integer, exact), counted by
    ``list.count`` for at most ``_SMALL_SHARED`` shared labels; ``None`` when more are shared
    (the counting would be quadratic). Counts by ``==`` as ``Counter`` does (equal labels are one
    label, a NaN object only equals itself); an unhashable label is the named error."""
    if len(a) == 1 and type(a[0]) in _PLAIN_LABELS and type(b[0]) in _PLAIN_LABELS:
        x, y = a[0], b[0]  # one label shared (1 * 1) or none, as a set tells them
        return (1 if x is y or x == y else 0), int(x == y)
    try:
        shared = set(a).intersection(b)
    except TypeError:
        raise _not_hashable(chain(a, b)) from None
    if len(shared) > _SMALL_SHARED:
        return None
    return sum(map(operator.mul, map(a.count, shared), map(b.count, shared))), _agreements(a, b)


def cohen_kappa(rater_a: Sequence[Any], rater_b: Sequence[Any]) -> float:
    """Cohen's kappa for two raters on nominal labels (chance-corrected agreement).

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the fraction of equal labels and ``p_e`` the sum over
    labels of the product of the two raters' label frequencies (computed in integers and divided
    once: correctly rounded); ``1.0`` for no items or when
    ``p_e`` is 1 (both raters always give the same single label). Use it only for exactly two
    raters, nominal (hashable) labels and complete data; :func:`krippendorff_alpha` covers the rest.

    >>> cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1])
    -1.0
    >>> cohen_kappa([1, 1, 0, 0, 1], [1, 1, 0, 1, 1])
    0.5454545454545454
    """
    a, b = _two_raters(rater_a, rater_b)
    n = len(a)
    if n == 0:
        return 1.0
    counted = _small_counts(a, b) if n < _SMALL_ITEMS else None
    if counted is None:
        count_a, count_b, agreements = _shared_counts(a, b)
        chance = int(count_a @ count_b)  # at most n**2: exact in int64
    else:
        chance, agreements = counted
    # p_o = agreements / n and p_e = chance / n**2; (p_o - p_e) / (1 - p_e) in integers, divided
    # once: correctly rounded.
    if chance == n * n:
        return 1.0
    return (agreements * n - chance) / (n * n - chance)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha: reading the table
# --------------------------------------------------------------------------------------------


def _numeric_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in _NUMERIC_KINDS


def _table(reliability_data: Any) -> Union[np.ndarray, tuple[list[Any], int, int]]:
    """A numeric 2-D array (one row per rater), or ``(cells, raters, items)`` with ``cells`` the
    flat row-major list of every cell."""
    if type(reliability_data) is list and reliability_data and {*map(type, reliability_data)} == _LIST:
        widths = {*map(len, reliability_data)}
        if len(widths) == 1:  # a list of lists of one length, the common case, before the checks
            return list(chain.from_iterable(reliability_data)), len(reliability_data), widths.pop()
    if _numeric_array(reliability_data):
        if reliability_data.ndim != 2:
            raise InvalidValueError(f"must be 2-dimensional (raters x items), got shape "
                                    f"{reliability_data.shape}", field="reliability_data")
        return reliability_data
    try:
        rows = list(reliability_data)
    except TypeError:
        raise InvalidTypeError(f"must be a sequence of rows (one per rater), got "
                               f"{describe(reliability_data)}", field="reliability_data") from None
    for r, row in enumerate(rows):
        if _numeric_array(row):
            if row.ndim != 1:
                raise InvalidValueError(f"must be 1-dimensional, got shape {row.shape}",
                                        field=f"reliability_data[{r}]")
            continue
        try:
            rows[r] = list(row)
        except TypeError:
            raise InvalidTypeError(f"must be a sequence of labels (one per item), got {describe(row)}",
                                   field=f"reliability_data[{r}]") from None
    for r, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise InvalidValueError(
                f"rows must all have the same length (one column per item): row 0 has {len(rows[0])} "
                f"items, row {r} has {len(row)}", field="reliability_data")
    if rows and all(isinstance(row, np.ndarray) for row in rows):
        return np.vstack(rows)
    cells = list(chain.from_iterable(row.tolist() if isinstance(row, np.ndarray) else row for row in rows))
    return cells, len(rows), len(rows[0]) if rows else 0


def is_missing(value: Any) -> bool:
    """``None`` or a NaN (a value not equal to itself)."""
    return value is None or value != value


def _where(cells_index: int, items: int) -> str:
    rater, item = divmod(cells_index, items)
    return f"reliability_data[{rater}][{item}]"


def _numbers(table: Union[np.ndarray, tuple[list[Any], int, int]], level: str) -> np.ndarray:
    """The table as float64, NaN where a cell is missing; every other cell must be a finite number
    (booleans count as 0 and 1)."""
    if isinstance(table, np.ndarray):
        values = table.astype(np.float64)
    else:
        cells, raters, items = table
        if not set(map(type, cells)) <= _PLAIN_NUMBERS:
            cells = [None if is_missing(v) else v for v in cells]
            for k, v in enumerate(cells):
                if v is not None and not isinstance(v, (numbers.Real, Decimal)):
                    raise InvalidTypeError(f"must be a number at the {level} level, got {describe(v)}",
                                           field=_where(k, items))
        try:
            values = np.array(cells, dtype=np.float64).reshape(raters, items)
        except OverflowError:
            raise InvalidValueError(f"holds a number too large for a float at the {level} level",
                                    field="reliability_data") from None
    infinite = np.isinf(values)
    if infinite.any():
        rater, item = np.argwhere(infinite)[0]
        raise InvalidValueError(f"must be finite at the {level} level, got {values[rater, item]}",
                                field=f"reliability_data[{rater}][{item}]")
    return values


def _exact_floats(cells: list[Any], raters: int, items: int) -> Union[np.ndarray, tuple[list[Any], int, int]]:
    """Plain-number labels as a float64 table (None becomes NaN) when the conversion keeps every
    label's equality and order (integers up to 2**53), else the cells unchanged."""
    if set(map(type, cells)) <= _PLAIN_NUMBERS:
        try:
            values = np.array(cells, dtype=np.float64)
        except OverflowError:
            return cells, raters, items
        if not (np.abs(values) > 2.0 ** 53).any():
            return values.reshape(raters, items)
    return cells, raters, items


def _intern(cells: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Label ids of ``cells`` (equal labels share an id, as in a ``dict``) and the distinct labels."""
    try:
        index = dict.fromkeys(cells)
    except TypeError:
        raise _not_hashable(cells) from None
    labels = list(index)
    index = dict(zip(labels, range(len(labels))))
    return np.fromiter(map(index.__getitem__, cells), dtype=np.int64, count=len(cells)), labels


def _label_codes(table: Union[np.ndarray, tuple[list[Any], int, int]], ordered: bool) -> np.ndarray:
    """Label ids, ``-1`` where a cell is missing; with ``ordered``, ids follow the labels' order."""
    if not isinstance(table, np.ndarray):
        table = _exact_floats(*table)
    if isinstance(table, np.ndarray):
        present = ~np.isnan(table) if table.dtype.kind == "f" else np.ones(table.shape, dtype=bool)
        codes = np.full(table.shape, -1, dtype=np.int64)
        codes[present] = np.unique(table[present], return_inverse=True)[1].reshape(-1)
        return codes
    cells, raters, items = table
    codes, labels = _intern(cells)
    kept = [k for k, label in enumerate(labels) if not is_missing(label)]
    if ordered:
        try:
            kept.sort(key=labels.__getitem__)
        except TypeError as exc:
            raise InvalidTypeError(f"must be mutually comparable at the ordinal level ({exc})",
                                   field="labels") from None
    renumber = np.full(len(labels), -1, dtype=np.int64)
    renumber[kept] = np.arange(len(kept))
    return renumber[codes].reshape(raters, items)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha: the disagreement sums
# --------------------------------------------------------------------------------------------
#
# With o[c,k] the coincidence matrix, a unit (column) holding m values contributes
# cnt_c * cnt_k / (m - 1) to o[c,k] (cnt_c * (cnt_c - 1) / (m - 1) on the diagonal), so
#   n_c = sum_k o[c,k] = number of pairable values equal to c,   n = sum_c n_c,
#   D_o = sum_{c!=k} o[c,k] delta2(c,k) = sum_units pairs(unit) / (m - 1),
#   D_e = sum_{c!=k} n_c n_k delta2(c,k) = pairs(all pairable values),
# where pairs(values) = sum over ordered pairs (i, j) of delta2(v_i, v_j) (delta2(c,c) = 0, so the
# diagonal terms drop out). For delta2 = (c - k)**2, pairs(v) = 2 m sum(d**2) - 2 sum(d)**2 for
# d = v - s and any shift s; nominal is pairs(v) = m**2 - sum_c cnt_c**2.


def _disagreement(pair_sums: np.ndarray, sizes: np.ndarray) -> float:
    """``D_o``: the sum of each unit's pair sum over ``m - 1``, units of one size added first."""
    totals = np.bincount(sizes, weights=pair_sums)
    return float(sum(totals[m] / (m - 1) for m in np.flatnonzero(totals)))


def _alpha(n: int, observed: float, expected: float) -> float:
    return 1.0 - (n - 1) * observed / expected


def _nominal(codes: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> float:
    counts = np.bincount(codes[present])
    if np.count_nonzero(counts) < 2:
        return 1.0
    n = int(sizes.sum())
    expected = n * n - int(np.dot(counts, counts))
    # sum_c cnt_c**2 per unit: sort each column; the k-th copy of a value (k = 0, 1, ...) adds
    # 2k + 1, and 1 + 3 + ... + (2L - 1) = L**2 for a run of L equal values.
    ordered = np.sort(codes, axis=0)
    row = np.arange(ordered.shape[0])[:, None]
    new_run = np.ones(ordered.shape, dtype=bool)
    new_run[1:] = ordered[1:] != ordered[:-1]
    copy = row - np.maximum.accumulate(np.where(new_run, row, 0), axis=0)
    same = ((2 * copy + 1) * (ordered >= 0)).sum(axis=0)
    return _alpha(n, _disagreement(sizes * sizes - same, sizes), expected)


def _small_nominal(cells: list[Any], raters: int, items: int) -> float:
    """:func:`_nominal` counted in Python for a small table of plain labels: the same integer
    counts, and ``D_o`` added over unit sizes in ascending order as :func:`_disagreement` adds
    them, so the same bits."""
    units = []
    for item in range(items):
        labels = [v for v in cells[item::items] if not is_missing(v)]
        if len(labels) >= 2:
            units.append(labels)
    counts = _tally(list(chain.from_iterable(units)))
    if len(counts) < 2:
        return 1.0
    n = sum(map(len, units))
    expected = n * n - sum(k * k for k in counts.values())
    totals: dict[int, int] = {}
    for labels in units:
        # sum of squared label counts = sum over the labels of how often each occurs
        m = len(labels)
        totals[m] = totals.get(m, 0) + m * m - sum(map(labels.count, labels))
    observed = 0.0
    for m in sorted(totals):
        if totals[m]:
            observed += totals[m] / (m - 1)
    return _alpha(n, observed, expected)


def _small_interval_cells(cells: list[Any], raters: int) -> Optional[list[Any]]:
    """The float64 values of the cells of a small table of plain numbers (the values the NumPy path
    reads) as integers on one scale (a float is an integer over a power of two: every cell is
    ``k / 2**e`` for one ``e``, exactly; ``None`` where a cell is missing), for
    :func:`_small_interval`; ``None`` when the NumPy path must read the table:
    too many cells or raters, other types, an infinite value or an int past the float range (the
    NumPy path names them)."""
    types = set(map(type, cells))
    if raters >= _SMALL_INTERVAL_RATERS or len(cells) >= _SMALL_INTERVAL_CELLS or not types <= _PLAIN_NUMBERS:
        return None
    present = [v for v in cells if v is not None and v == v]  # NaN is missing
    try:
        if present and (math.isinf(float(max(present))) or math.isinf(float(min(present)))):
            return None
    except OverflowError:
        return None
    if types <= _INTEGER_TYPES and -_EXACT_INTS <= min(present) and max(present) <= _EXACT_INTS:
        return cells  # ints and bools that are their float64 values: integers already
    ratios = [None if v is None or v != v else float(v).as_integer_ratio() for v in cells]
    scale = max((q for _, q in filter(None, ratios)), default=1)  # the largest power of two
    return [None if r is None else r[0] * (scale // r[1]) for r in ratios]


def _squares(values: list[int]) -> int:
    return sum(map(operator.mul, values, values))


def _pairs(values: list[int]) -> int:
    """The sum of ``(v_i - v_j)**2`` over ordered pairs of ``values``: ``2 (m sum(v**2) - sum(v)**2)``."""
    total = sum(values)
    return 2 * (len(values) * _squares(values) - total * total)


def _small_interval(cells: list[Any], raters: int, items: int) -> float:
    """Interval alpha in exact integer arithmetic on :func:`_small_interval_cells`, divided once:
    correctly rounded. ``D_o``: on a complete table every unit holds every rater, so the units'
    ordered pairs add up to twice the sum over pairs of raters ``(i, j)`` of
    ``sum((row_i - row_j)**2)``, over ``raters - 1``; with missing cells each unit's pairs are over
    its ``m - 1``, and the sizes' totals are brought to one denominator. ``D_e``: the pooled
    values' pairs. ``1 - (n - 1) D_o / D_e`` is one fraction of integers."""
    if None not in cells:
        if raters < 2 or min(cells) == max(cells):
            return 1.0
        pooled = cells
        rows = [cells[r * items:(r + 1) * items] for r in range(raters)]
        totals = {raters: 2 * sum(_squares(list(map(operator.sub, rows[i], rows[j])))
                                  for i in range(raters) for j in range(i + 1, raters))}
    else:
        units = [[v for v in cells[item::items] if v is not None] for item in range(items)]
        units = [unit for unit in units if len(unit) >= 2]
        pooled = list(chain.from_iterable(units))
        if not pooled or min(pooled) == max(pooled):
            return 1.0
        totals = {}
        for unit in units:
            totals[len(unit)] = totals.get(len(unit), 0) + _pairs(unit)
    # D_o = sum(totals[m] / (m - 1)) = observed / common, with common the lcm of the (m - 1)s.
    common = math.lcm(*(m - 1 for m in totals))
    observed = sum(total * (common // (m - 1)) for m, total in totals.items())
    expected = _pairs(pooled) * common
    return (expected - (len(pooled) - 1) * observed) / expected


def _nearest_to_mean(values: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per column, the present value closest to the column's mean (a stable shift: an all-equal
    column gets deviations of exactly 0)."""
    mean = np.where(present, values, 0.0).sum(axis=0) / sizes
    nearest = np.where(present, np.abs(values - mean), np.inf).argmin(axis=0)
    return values[nearest, np.arange(values.shape[1])]


def _squared_pairs(values: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per column, the sum of ``(v_i - v_j)**2`` over ordered pairs of its present values."""
    d = np.where(present, values - _nearest_to_mean(values, present, sizes), 0.0)
    return np.maximum(2.0 * sizes * (d * d).sum(axis=0) - 2.0 * d.sum(axis=0) ** 2, 0.0)


def _interval(values: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> float:
    pooled = values[present]
    low, high = pooled.min(), pooled.max()
    if low == high:
        return 1.0
    # alpha is the same for values scaled by any factor; a power of two scales every difference,
    # square and sum exactly, so bringing the largest magnitude to [0.5, 1) changes no bit where
    # nothing underflowed or overflowed, and keeps tiny (1e-160) or huge values from doing so
    exponent = math.frexp(max(-float(low), float(high)))[1]
    values, pooled = np.ldexp(values, -exponent), np.ldexp(pooled, -exponent)
    n = pooled.size
    expected = float(_squared_pairs(pooled[:, None], np.ones((n, 1), dtype=bool), np.array([n]))[0])
    return _alpha(n, _disagreement(_squared_pairs(values, present, sizes), sizes), expected)


def _ordinal(codes: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> float:
    # delta2(c, k) = (sum_{g in [c, k]} n_g - (n_c + n_k) / 2)**2 = (M_k - M_c)**2 with the
    # mid-rank M_v = sum_{g < v} n_g + n_v / 2, so the ordinal level is the interval one on M.
    counts = np.bincount(codes[present])
    midrank = np.cumsum(counts) - counts / 2.0
    return _interval(np.where(present, midrank[np.maximum(codes, 0)], 0.0), present, sizes)


def _ratio_delta2(c: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``((c - k) / (c + k))**2`` for every pair of ``c`` and ``k`` (broadcast), and ``0`` where
    ``c + k == 0``."""
    total = c + k
    undefined = total == 0
    quotient = np.subtract(c, k)
    np.divide(quotient, total, out=quotient, where=~undefined)
    quotient[undefined] = 0.0
    return np.multiply(quotient, quotient, out=quotient)


def _ratio_expected(distinct: np.ndarray, counts: np.ndarray) -> float:
    """``D_e`` at the ratio level: sum of ``n_c n_k delta2(c, k)`` over ordered pairs of distinct
    values, a block of rows at a time against the columns from the block's first row on. Pairs
    inside the block's square come in both orders; the others (columns past the block) once, so
    they count twice."""
    if distinct.size > RATIO_MAX_DISTINCT:
        raise InputTooLargeError(
            f"has {distinct.size} distinct values at the ratio level, more than RATIO_MAX_DISTINCT="
            f"{RATIO_MAX_DISTINCT} (its expected disagreement costs one term per pair of distinct "
            "values); round the values, or use level='interval'", field="reliability_data")
    expected, width = 0.0, max(1, _BLOCK // distinct.size)
    for lo in range(0, distinct.size, width):
        hi = min(lo + width, distinct.size)
        delta2 = _ratio_delta2(distinct[lo:hi, None], distinct[None, lo:])
        weighted_rows = delta2 @ counts[lo:]
        weighted_square = delta2[:, : hi - lo] @ counts[lo:hi]
        expected += float(counts[lo:hi] @ (2.0 * weighted_rows - weighted_square))
    return expected


def _ratio(values: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> float:
    distinct, counts = np.unique(values[present], return_counts=True)
    expected = _ratio_expected(distinct, counts.astype(np.float64))
    if expected == 0.0:
        return 1.0
    # D_o: every ordered pair of raters within each unit, a block of units (and, with very many
    # raters, of rows) at a time.
    raters, units = values.shape
    width = max(1, _BLOCK // (raters * raters))
    height = max(1, _BLOCK // (raters * width))
    pair_sums = np.zeros(units)
    for lo in range(0, units, width):
        v, p = values[:, lo:lo + width], present[:, lo:lo + width]
        for top in range(0, raters, height):
            delta2 = _ratio_delta2(v[top:top + height, None, :], v[None, :, :])
            delta2[~(p[top:top + height, None, :] & p[None, :, :])] = 0.0
            pair_sums[lo:lo + width] += delta2.sum(axis=(0, 1))
    return _alpha(int(sizes.sum()), _disagreement(pair_sums, sizes), expected)


def krippendorff_alpha(reliability_data: Any, *, level: str = "nominal") -> float:
    """Krippendorff's alpha, the general inter-annotator agreement coefficient.

    ``reliability_data`` has one row per rater and one column per item (a sequence of equally long
    sequences, or a 2-D NumPy array); ``None`` or a NaN marks an unlabelled cell. Any number of
    raters; ``level`` is ``"nominal"`` (any hashable labels), ``"ordinal"`` (labels that can be
    sorted), ``"interval"`` or ``"ratio"`` (finite real numbers; booleans count as 0 and 1).
    Alpha is ``1 - (n - 1) * D_o / D_e`` from the coincidence matrix (Krippendorff 2011): ``1.0``
    for perfect agreement, ``0.0`` at chance, negative for systematic disagreement. Only items
    with at least two labels count; with none, or when every pairable label is the same (``D_e``
    is 0), alpha is ``1.0``.

    Cost: linear in the number of cells for the nominal, ordinal and interval levels (closed forms
    of the pair sums); for ``"ratio"``, ``D_e`` runs over all pairs of distinct values (work
    quadratic in their number, memory bounded by blocks; more than :data:`RATIO_MAX_DISTINCT`
    raise :class:`~scorekit.errors.InputTooLargeError`) and ``D_o`` over all pairs of raters of
    each item. The reference kit ``ek`` adds the same terms in another order, so results agree
    with it to a relative 1e-9, not always to the last bit.

    Differences from ``ek`` (it accepts these): rows of different lengths, an unknown ``level``
    even when no item is pairable, a non-number at the interval/ratio level, an infinite value
    there and labels that cannot be sorted at the ordinal level raise an error wherever they are,
    even in an item that has no other label.

    >>> krippendorff_alpha([[1, 1, 1, 1], [1, 1, 1, 1]])
    1.0
    >>> krippendorff_alpha([[1, 0, 1, 0], [0, 1, 0, 1]])
    -0.75
    >>> ratings = [[1, 2, 3, 3, None],      # three raters, five items on a 1-5 scale
    ...            [1, 2, 4, 3, 5],
    ...            [2, 2, 4, 3, 5]]
    >>> krippendorff_alpha(ratings), krippendorff_alpha(ratings, level="ordinal")
    (0.6578947368421053, 0.9226190476190477)
    """
    if not isinstance(level, str) or level not in LEVELS:
        raise InvalidValueError(f"unknown level {level!r}; use nominal/ordinal/interval/ratio")
    table = _table(reliability_data)
    shape = table.shape if isinstance(table, np.ndarray) else table[1:]
    if 0 in shape:
        return 1.0
    if (level == "nominal" and not isinstance(table, np.ndarray) and len(table[0]) < _SMALL_ITEMS
            and set(map(type, table[0])) <= _PLAIN_LABELS):
        return _small_nominal(*table)
    if level == "interval" and not isinstance(table, np.ndarray):
        exact = _small_interval_cells(table[0], table[1])
        if exact is not None:
            return _small_interval(exact, table[1], table[2])
    with np.errstate(all="ignore"):
        if level in ("interval", "ratio"):
            values = _numbers(table, level)
            small = level == "interval" and values.size < _SMALL_INTERVAL_CELLS
            exact = _small_interval_cells(values.ravel().tolist(), values.shape[0]) if small else None
            if exact is not None:  # an array, or cells of other types, read as float64: as a list of them
                return _small_interval(exact, *values.shape)
            present = ~np.isnan(values)
        else:
            codes = _label_codes(table, ordered=level == "ordinal")
            present = codes >= 0
        sizes = present.sum(axis=0)
        units = sizes >= 2
        if not units.any():
            return 1.0
        present, sizes = present[:, units], sizes[units]
        if level == "nominal":
            return _nominal(codes[:, units], present, sizes)
        if level == "ordinal":
            return _ordinal(codes[:, units], present, sizes)
        values = np.where(present, values[:, units], 0.0)
        return (_interval if level == "interval" else _ratio)(values, present, sizes)
