"""Decision policies (``ek.qe.decide``): turn a calibrated probability into accept / flag / block.

This module owns the selective-prediction gates of the quality-estimation pipeline (signal →
calibrate → validate → **decide**), the split-conformal quantile, the risk-coverage curve, their
input checks and their registration under the ``"policies"`` namespace (``cost_sensitive``,
``conformal``, ``risk_control``, ``group_conformal``). Every gate reads calibrated probabilities
only; a raw score must go through a calibrator first.

* :class:`CostSensitiveGate` (the default): accept when ``p >= rho / (1 + rho)``, the Bayes-optimal
  threshold for the cost ratio ``rho = c_FN / c_FP``; no labelled data needed.
* :class:`ConformalGate`: split conformal; among truly-correct items exchangeable with the
  calibration set, at most ``alpha`` are flagged (a marginal guarantee).
  :class:`GroupConformalGate` gives that guarantee per group (Mondrian), and
  :func:`crepes_mondrian_gate` does the same with the ``crepes`` library (``calibration`` extra).
* :class:`RiskControlGate`: conformal risk control; the expected loss of accepted items
  (by default the rate of accepted-yet-wrong items) stays at or below ``target``.
* :func:`risk_coverage_curve`: coverage and selective risk at every threshold.

>>> from scorekit.base import Decision
>>> gate = CostSensitiveGate(rho=9.0)          # a false-negative costs 9x a review
>>> gate(0.95) is Decision.ACCEPT              # tau = rho/(1+rho) = 9/10 = 0.9
True
>>> gate(0.5) is Decision.FLAG
True

Results are those of the reference kit; the fits run on sorted arrays (sort once, binary search,
prefix counts) in O(n log n) where the reference rescans the calibration set for every candidate
threshold, and the conformal threshold is found by selection in O(n) (the compiled ``conformal``
kernel), the calibration scores being sorted only when a p-value first needs them. Decisions where the reference is
silent or accidental (docs/qe-decide.md):

* a confidence given to a gate (or ``p_value``) must be a finite number in ``[0, 1]``: NaN and
  ±inf raise ``InvalidValueError`` "confidence must be finite, got nan", values outside ``[0, 1]``
  raise too (the reference accepts 1.5 and gates it);
* calibration ``probs`` must be in ``[0, 1]``; non-finite ones are dropped with their rows, by every
  fit and by :func:`risk_coverage_curve` (the reference drops them in ``ConformalGate`` only, and
  lets a NaN become ``RiskControlGate``'s threshold); ``probs``, ``correct`` (and ``groups``) must
  have the same length (the reference silently truncates); ``correct`` holds bools (or 0/1) unless a
  custom ``loss`` reads it;
* ``alpha`` must be in ``[0, 1]``; ``target`` and ``loss_bound`` must be finite and ``>= 0``; a
  custom ``loss`` must return numbers in ``[0, loss_bound]`` (the bound the guarantee assumes) and
  a custom ``nonconformity`` must not return NaN;
* ``CostSensitiveGate(rho=inf)`` has ``tau = 1.0`` (the reference's is NaN, which flags
  everything); a NaN ``rho``, ``accept_threshold`` or ``block_threshold`` raises;
* a calibration set too small for the requested guarantee (a conformal threshold of ``+inf``, which
  accepts everything, or a risk bound that no threshold can meet) emits a
  :class:`SmallCalibrationWarning` saying how many items are needed;
* ``RiskControlGate`` fitted on an empty calibration set accepts nothing, like any fit whose bound
  no threshold meets (the reference sets ``lam = 1.0`` and accepts ``p = 1.0`` on no evidence).
"""

from __future__ import annotations

import bisect
import functools
import math
import numbers
import warnings
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np

from scorekit import _kernels
from scorekit._kernels.conformal import conformal_fit, kth_smallest
from scorekit._packing import bools_of, floats_of
from scorekit.base import Decision
from scorekit.errors import InvalidTypeError, InvalidValueError, describe
from scorekit.registry import register, requires_extra

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_RISK_TARGET",
    "SmallCalibrationWarning",
    "CostSensitiveGate",
    "split_conformal_quantile",
    "ConformalGate",
    "CalibrationScores",
    "GroupConformalGate",
    "RiskControlGate",
    "risk_coverage_curve",
    "CrepesMondrianGate",
    "crepes_mondrian_gate",
]

#: Default target miscoverage for conformal gates (flag at most ~alpha of correct items).
DEFAULT_ALPHA = 0.1
#: Default risk bound for :class:`RiskControlGate` (accepted-error rate ceiling).
DEFAULT_RISK_TARGET = 0.05

#: ``RiskControlGate.lam`` when no threshold meets the target: above every probability.
_ACCEPT_NOTHING = 1.0 + 1e-9
#: Below this many scores, a list of floats is sorted in Python instead of handed to the compiled
#: selection (whose fixed cost is larger than the sort).
_SMALL_SET = 64


class SmallCalibrationWarning(UserWarning):
    """The calibration set is too small for the requested guarantee, so the fitted gate accepts
    everything (a conformal ``q = inf``) or nothing (a risk-control ``lam`` above 1)."""


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _number(value: Any, what: str) -> float:
    """``value`` as a float, or ``InvalidTypeError`` for anything that is not a real number."""
    if type(value) is float:  # the common cases, without the abstract-class checks
        return value
    if type(value) is np.float64:
        return float(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, (numbers.Real, np.bool_)):
        raise InvalidTypeError(f"must be a number, got {describe(value)}", field=what)
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _confidence(value: Any) -> float:
    """A gate's input: a finite probability."""
    p = _number(value, "confidence")
    if not math.isfinite(p):
        raise InvalidValueError(f"must be finite, got {p!r}", field="confidence")
    if not 0.0 <= p <= 1.0:
        raise InvalidValueError(f"must be a probability in [0, 1], got {p!r}", field="confidence")
    return p


def _alpha(value: Any) -> float:
    alpha = _number(value, "alpha")
    if not 0.0 <= alpha <= 1.0:  # also rejects NaN
        raise InvalidValueError(f"must be in [0, 1], got {value!r}", field="alpha")
    return alpha


def _non_negative(value: Any, what: str) -> float:
    x = _number(value, what)
    if not (math.isfinite(x) and x >= 0.0):
        raise InvalidValueError(f"must be finite and >= 0, got {value!r}", field=what)
    return x


def _materialise(values: Any, what: str) -> Any:
    if type(values) is list:  # the common case, before the ABC checks
        return values
    if isinstance(values, (str, bytes)):
        raise InvalidTypeError(f"must be a sequence, got {describe(values)}", field=what)
    if isinstance(values, (np.ndarray, Sequence)):
        return values
    if not isinstance(values, Iterable):
        raise InvalidTypeError(f"must be a sequence, got {describe(values)}", field=what)
    return list(values)


def _floats(values: Any, what: str) -> np.ndarray:
    """A one-dimensional float64 array of ``values`` (NaN and ±inf kept), element errors named;
    a float64 array is returned as it is (callers only read it)."""
    values = _materialise(values, what)
    read = floats_of(values)  # plain lists of numbers, in one compiled pass
    if read is not None:
        return read
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):
        array = np.empty(0, dtype=object)  # ragged: checked element by element below
    if array.ndim == 1 and array.dtype.kind in "biuf":
        return array.astype(np.float64, copy=False)
    if array.ndim > 1:
        raise InvalidValueError(f"must be one-dimensional, got shape {array.shape}", field=what)
    return np.array([_number(v, f"{what}[{i}]") for i, v in enumerate(values)], dtype=np.float64)


def _probabilities(values: Any, what: str = "probs") -> np.ndarray:
    """Calibration probabilities: finite ones must lie in ``[0, 1]``; NaN and ±inf are kept."""
    p = _floats(values, what)
    outside = np.isfinite(p) & ((p < 0.0) | (p > 1.0))
    if outside.any():
        i = int(np.argmax(outside))
        raise _not_a_probability(i, float(p[i]), what)
    return p


def _not_a_probability(row: int, value: float, what: str = "probs") -> InvalidValueError:
    return InvalidValueError(f"must be a probability in [0, 1], got {value!r}", field=f"{what}[{row}]")


def _labels(values: Any, what: str = "correct") -> np.ndarray:
    """Correctness labels as a bool array: bools, or numbers equal to 0 or 1."""
    values = _materialise(values, what)
    read = bools_of(values)  # plain lists of bools, in one compiled pass
    if read is not None:
        return read
    try:
        array = np.asarray(values) if len(values) else np.zeros(0, dtype=bool)
    except (TypeError, ValueError):
        array = np.empty(0, dtype=object)  # ragged: checked element by element below
    if array.dtype == np.bool_ and array.ndim == 1:
        return array
    if array.ndim == 1 and array.dtype.kind in "iuf":
        bad = (array != 0) & (array != 1)
        if not bad.any():
            return array.astype(bool)
        i = int(np.argmax(bad))
        raise InvalidValueError(f"must be a bool (or 0/1), got {array[i].item()!r}", field=f"{what}[{i}]")
    labels = np.empty(len(values), dtype=bool)
    for i, v in enumerate(values):
        if not isinstance(v, (bool, np.bool_, numbers.Real)) or isinstance(v, (str, bytes)) or v not in (0, 1):
            raise InvalidValueError(f"must be a bool (or 0/1), got {describe(v)}", field=f"{what}[{i}]")
        labels[i] = bool(v)
    return labels


def _same_length(n: int, other: int, what: str) -> None:
    if n != other:
        raise InvalidValueError(f"probs and {what} must have the same length, got {n} and {other}")


def _calibration_rows(probs: Any, correct: Any) -> tuple[np.ndarray, np.ndarray]:
    """Checked ``(probs, correct)`` with the non-finite rows dropped."""
    p, c = _probabilities(probs), _labels(correct)
    _same_length(len(p), len(c), "correct")
    finite = np.isfinite(p)
    return p[finite], c[finite]


@dataclass
class _SortedRows:
    """Calibration rows sorted by probability, with prefix sums of a per-row weight, so that the
    weight of the rows with ``p >= tau`` is ``total - prefix[start(tau)]`` (O(log n) per tau)."""

    probs: np.ndarray  # ascending
    prefix: np.ndarray  # prefix[j] = weight of the j lowest rows; prefix[-1] the total

    @classmethod
    def of(cls, p: np.ndarray, weight: np.ndarray) -> "_SortedRows":
        order = np.argsort(p)
        prefix = np.zeros(len(p) + 1, dtype=weight.dtype)
        np.cumsum(weight[order], out=prefix[1:])
        return cls(p[order], prefix)

    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct probabilities (ascending) and the index where each one's rows start."""
        ps = self.probs
        starts = np.flatnonzero(np.concatenate(([True], ps[1:] != ps[:-1]))) if len(ps) else np.zeros(0, np.intp)
        return ps[starts], starts

    def weight_from(self, starts: np.ndarray) -> np.ndarray:
        return self.prefix[-1] - self.prefix[starts]


# --------------------------------------------------------------------------------------------
# Cost-sensitive gate
# --------------------------------------------------------------------------------------------


@dataclass
class CostSensitiveGate:
    """Accept / flag / block from the cost ratio ``rho = c_FN / c_FP`` on calibrated ``p``.

    Accepting risks an undetected error, expected cost ``(1 - p) * c_FN``; flagging a value that
    was correct wastes a review, expected cost ``p * c_FP``. Accepting is cheaper iff
    ``p >= rho / (1 + rho)`` (:attr:`tau`): ``rho = 1`` gives 0.5, ``rho = 9`` gives 0.9 and
    ``tau -> 1`` as ``rho -> inf``; ``rho <= 0`` accepts everything. ``accept_threshold``
    overrides the derived threshold (clipped to ``[0, 1]``). ``block_threshold > 0`` blocks any
    ``p <= block_threshold``, checked first; the default ``0`` never blocks on probability alone.

    >>> CostSensitiveGate(rho=1.0).tau, CostSensitiveGate(rho=9.0).tau
    (0.5, 0.9)
    >>> gate = CostSensitiveGate(rho=9.0, block_threshold=0.1)
    >>> [gate(p).value for p in (0.95, 0.5, 0.05)]
    ['accept', 'flag', 'block']
    """

    rho: float = 1.0
    block_threshold: float = 0.0
    accept_threshold: Optional[float] = None

    @property
    def tau(self) -> float:
        """The accept threshold on calibrated probability (derived from ``rho``)."""
        if self.accept_threshold is not None:
            threshold = _number(self.accept_threshold, "accept_threshold")
            if math.isnan(threshold):
                raise InvalidValueError("must not be NaN", field="accept_threshold")
            return min(max(threshold, 0.0), 1.0)
        rho = _number(self.rho, "rho")
        if math.isnan(rho):
            raise InvalidValueError("must be a cost ratio >= 0, got nan", field="rho")
        if rho == math.inf:
            return 1.0
        return min(max(rho / (1 + rho), 0.0), 1.0) if rho > 0 else 0.0

    def __call__(self, confidence: float) -> Decision:
        p = _confidence(confidence)
        block = _number(self.block_threshold, "block_threshold")
        if math.isnan(block):
            raise InvalidValueError("must not be NaN", field="block_threshold")
        if block > 0 and p <= block:
            return Decision.BLOCK
        return Decision.ACCEPT if p >= self.tau else Decision.FLAG


# --------------------------------------------------------------------------------------------
# Split conformal
# --------------------------------------------------------------------------------------------


def _one_minus(p: Any) -> Any:
    """The default nonconformity ``1 - p``: low confidence is nonconforming."""
    return 1.0 - p


def _rank(n: int, alpha: float) -> int:
    """The 1-based rank of the conformal quantile: ``ceil((n + 1)(1 - alpha))``."""
    return math.ceil((n + 1) * (1 - alpha))


def _conformal_quantile(scores: Union[np.ndarray, list[float]], alpha: float) -> float:
    """The ``_rank(n, alpha)``-th smallest of ``scores`` (no NaN), by selection; ``inf`` above
    ``n``, ``-inf`` below 1. A short list of floats is sorted in Python instead (the same value:
    the selection's zero is ``0.0``, and ``-0.0 + 0.0`` is too), without the compiled call's fixed
    cost."""
    n = len(scores)
    k = _rank(n, alpha)
    if n == 0 or k > n:
        return math.inf
    if k <= 0:
        return -math.inf
    if isinstance(scores, list):
        return sorted(scores)[k - 1] + 0.0
    return kth_smallest(scores, k - 1)


@functools.lru_cache(maxsize=256)  # asked on every fit that warns, with the same few alphas
def _smallest_calibration_set(alpha: float) -> Optional[int]:
    """The smallest ``n`` whose conformal quantile is finite at ``alpha`` (None when astronomically
    large)."""
    guess = (1 - alpha) / alpha
    if not guess < 2**53:
        return None
    n = max(1, int(guess) - 2)
    while _rank(n, alpha) > n:
        n += 1
    return n


def split_conformal_quantile(scores: Sequence[float], alpha: float) -> float:
    """The split-conformal threshold: the ``ceil((n+1)(1-alpha))``-th smallest of ``scores``.

    ``scores`` are nonconformity scores of an exchangeable calibration set (NaN is rejected; ±inf
    is a score like any other). Returns ``+inf`` when ``n`` is too small to guarantee
    ``1 - alpha`` (flag nothing: with ``alpha = 0.1`` at least 9 scores are needed) and ``-inf``
    at ``alpha = 1`` (flag everything). O(n) by selection.

    >>> scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    >>> split_conformal_quantile(scores, 0.2), split_conformal_quantile(scores, 0.1)
    (0.9, 1.0)
    >>> split_conformal_quantile([0.5], 0.1)
    inf
    """
    core = _kernels.compiled()
    if core is not None and type(alpha) is float:  # a list of floats other than NaN, alpha in [0, 1]
        q = core.listed_conformal_quantile(scores, alpha)
        if q is not None:
            return q
    alpha = _alpha(alpha)
    if type(scores) is list and len(scores) < _SMALL_SET and {*map(type, scores)} <= {float} and not any(map(math.isnan, scores)):
        return _conformal_quantile(scores, alpha)
    s = _floats(scores, "scores")
    if np.isnan(s).any():
        raise InvalidValueError("must not be NaN", field=f"scores[{int(np.argmax(np.isnan(s)))}]")
    return _conformal_quantile(s, alpha)


def _score(nonconformity: Callable[[float], Any], p: float) -> float:
    if nonconformity is _one_minus:  # p is a checked probability: 1 - p is a number, never NaN
        return 1.0 - p
    raw = nonconformity(p)
    s = _number(raw, f"nonconformity({p!r})")
    if math.isnan(s):
        raise InvalidValueError("returned NaN", field=f"nonconformity({p!r})")
    return s


def _scores(nonconformity: Callable[[float], Any], p: np.ndarray) -> np.ndarray:
    """Nonconformity of every probability: vectorised for the default, one call each otherwise."""
    if nonconformity is _one_minus:
        return 1.0 - p
    return np.array([_score(nonconformity, x) for x in p.tolist()], dtype=np.float64)


_NO_SCORES = np.zeros(0)
_NO_SCORES.flags.writeable = False  # shared by every unfitted gate: never written


class CalibrationScores(Sequence[float]):
    """A fitted conformal gate's calibration scores, ascending: a read-only sequence of floats,
    equal to the list of the same floats.

    A fit needs one order statistic of its scores, which selection finds in O(n); the scores are
    sorted only when something reads them (a p-value, an iteration, an index), once.
    """

    __slots__ = ("_rows", "_n", "_ascending")

    def __init__(self, rows: Union[np.ndarray, list[float]], n: int) -> None:
        """``rows``: the scores in any order (an array, or a list of floats for a short fit), NaN
        in the places of rows that do not calibrate; ``n``: how many are not NaN."""
        self._rows: Union[np.ndarray, list[float], None] = rows
        self._n = n
        self._ascending: Optional[np.ndarray] = None

    @classmethod
    def of(cls, scores: Iterable[float]) -> "CalibrationScores":
        """The scores of a sequence of numbers (NaN is not a score)."""
        if type(scores) is list and not scores:  # nothing to read
            return _UNFITTED
        rows = _floats(scores, "_cal")
        if np.isnan(rows).any():
            raise InvalidValueError("must not be NaN", field=f"_cal[{int(np.argmax(np.isnan(rows)))}]")
        return cls(rows, len(rows))

    def ascending(self) -> np.ndarray:
        """The scores as a sorted float64 array (sorted on the first call)."""
        if self._ascending is None:
            self._ascending = np.sort(self._rows)[: self._n]  # NaN sorts last
            self._rows = None
        return self._ascending

    def count_at_least(self, score: float) -> int:
        """How many scores are ``>= score``. O(log n) once sorted."""
        ascending = self._ascending if self._ascending is not None else self.ascending()
        return self._n - int(ascending.searchsorted(score))

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):  # type: ignore[override]
        return self.ascending()[index].tolist()

    def __iter__(self):
        return iter(self.ascending().tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CalibrationScores):
            return bool(np.array_equal(self.ascending(), other.ascending()))
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == self._n and self.ascending().tolist() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        values = self.ascending()
        if self._n <= 6:
            return repr(values.tolist())
        head, tail = ", ".join(map(repr, values[:3].tolist())), ", ".join(map(repr, values[-3:].tolist()))
        return f"[{head}, ..., {tail}] ({self._n} scores)"

    def __reduce__(self):
        return (type(self), (self.ascending(), self._n))


_UNFITTED = CalibrationScores(_NO_SCORES, 0)  # shared by every unfitted gate (its sort is idempotent)


def _unfitted() -> CalibrationScores:
    return _UNFITTED


@dataclass
class ConformalGate:
    """Split-conformal accept/flag with a finite-sample **marginal** guarantee.

    :meth:`fit` on ``(calibrated_prob, correct)``: the nonconformity scores of the *correct*
    calibration items set a threshold ``q`` such that, among truly-correct test items exchangeable
    with them, at most ``alpha`` are flagged. The guarantee is marginal, not per field type; use
    :class:`GroupConformalGate` for that. Never blocks. Unfit (``q = inf``) it accepts everything.

    Args:
        alpha: Target false-flag rate on correct items (e.g. ``0.1``), in ``[0, 1]``.
        nonconformity: Maps calibrated confidence to nonconformity (default ``1 - confidence``).

    ``_cal`` holds the calibration scores, ascending (a :class:`CalibrationScores`, equal to the
    list of the same floats; a list given here is taken as the scores). The fit finds ``q`` by
    selection in O(n); the scores are sorted when a p-value first needs them.

    >>> probs = [.55, .6, .65, .7, .75, .8, .85, .9, .95, .99, .3, .4]
    >>> correct = [True] * 10 + [False] * 2
    >>> gate = ConformalGate(alpha=0.2).fit(probs, correct)
    >>> round(gate.q, 10), gate(0.6).value, gate(0.59).value
    (0.4, 'accept', 'flag')
    >>> round(gate.p_value(0.6), 4)                  # 3 of 10 correct items are as atypical
    0.2727
    """

    alpha: float = DEFAULT_ALPHA
    nonconformity: Callable[[float], float] = _one_minus
    q: float = math.inf
    _cal: Sequence[float] = field(default_factory=_unfitted)

    def __post_init__(self) -> None:
        if self._cal is not _UNFITTED and not isinstance(self._cal, CalibrationScores):
            self._cal = CalibrationScores.of(self._cal)

    def fit(self, probs: Sequence[float], correct: Sequence[bool]) -> "ConformalGate":
        """Fit ``q`` from the nonconformity scores of the *correct* calibration items.

        Non-finite confidences are dropped (a NaN would otherwise corrupt the quantile).
        Warns (:class:`SmallCalibrationWarning`) when too few correct items leave ``q = inf``.
        """
        alpha = self.alpha
        if type(alpha) is not float or not 0.0 <= alpha <= 1.0:  # checked as _alpha checks it
            alpha = _alpha(alpha)
        core = _kernels.compiled()
        fitted = None
        if (self.nonconformity is _one_minus and core is not None and type(probs) is list
                and len(probs) < _SMALL_SET):  # short lists of floats and bools: no arrays
            fitted = core.listed_conformal_fit(probs, correct, alpha)
        if fitted is not None:
            self.q, rows, n = fitted
            self._cal = CalibrationScores(rows, n) if n else _UNFITTED  # no score: as unfitted
        elif self.nonconformity is _one_minus:
            p, c = _floats(probs, "probs"), _labels(correct)
            _same_length(len(p), len(c), "correct")
            try:
                self.q, rows, n = conformal_fit(p, c, alpha)
            except ValueError as exc:  # (row, value) of a probability outside [0, 1]
                raise _not_a_probability(*exc.args) from None
            self._cal = CalibrationScores(rows, n)
        else:
            p, c = _calibration_rows(probs, correct)
            self._calibrate(p[c], alpha)
        if alpha > 0 and self.q == math.inf:  # _too_small
            warnings.warn(_conformal_fit_warning(self._cal._n, alpha), SmallCalibrationWarning, stacklevel=2)
        return self

    def _calibrate(self, correct_probs: np.ndarray, alpha: float) -> None:
        scores = _scores(self.nonconformity, correct_probs)
        self.q = _conformal_quantile(scores, alpha)
        self._cal = CalibrationScores(scores, len(scores))

    def _too_small(self, alpha: float) -> bool:
        return alpha > 0 and self.q == math.inf

    def __call__(self, confidence: float) -> Decision:
        s = _score(self.nonconformity, _confidence(confidence))
        return Decision.ACCEPT if s <= self.q else Decision.FLAG

    def p_value(self, confidence: float) -> float:
        """Per-instance conformal p-value, ``(1 + #{calibration scores >= s}) / (n + 1)``
        (small = atypical of correct items); 1.0 when unfit. O(log n)."""
        s = _score(self.nonconformity, _confidence(confidence))
        n = len(self._cal)
        if n == 0:
            return 1.0
        return (1 + self._cal.count_at_least(s)) / (n + 1)


@functools.lru_cache(maxsize=256)  # formatted once per (n, alpha > 0): a short fit warns every time
def _conformal_fit_warning(n: int, alpha: float) -> str:
    return f"ConformalGate.fit: {_too_small_message(n, alpha)}"


def _too_small_message(n: int, alpha: float, *, who: str = "") -> str:
    need = _smallest_calibration_set(alpha)
    needed = f"at least {need}" if need is not None else "astronomically many"
    return (f"{who}{n} correct calibration item(s); alpha={alpha:g} needs {needed} for a finite "
            "threshold, so q = inf and every item is accepted (the flagging guarantee is vacuous)")


@dataclass
class GroupConformalGate:
    """Mondrian (class-conditional) conformal: one :class:`ConformalGate` per group.

    Restores approximate per-field-type validity by calibrating separately per group key (a node
    type, a field name …): within every group, at most ``alpha`` of the correct items are flagged.
    Unseen groups (and ``group=None`` unless ``None`` was a calibration group) use the ``pooled``
    gate fitted on all rows; an unfit gate flags everything.

    >>> probs = [.9, .8, .7, .6, .5] * 4 + [.5, .52, .54, .56, .58, .6, .62, .64, .66, .68]
    >>> groups = ["a"] * 20 + ["b"] * 10
    >>> gate = GroupConformalGate(alpha=0.2).fit(probs, [True] * 30, groups=groups)
    >>> round(gate.by_group["a"].q, 10), round(gate.by_group["b"].q, 10)
    (0.5, 0.48)
    >>> gate(0.51, group="a").value, gate(0.51, group="b").value
    ('accept', 'flag')
    """

    alpha: float = DEFAULT_ALPHA
    nonconformity: Callable[[float], float] = _one_minus
    by_group: dict = field(default_factory=dict)
    pooled: Optional[ConformalGate] = None

    def fit(self, probs: Sequence[float], correct: Sequence[bool], *, groups: Sequence[Hashable]
            ) -> "GroupConformalGate":
        """One :class:`ConformalGate` per distinct group (in order of first appearance) plus the
        pooled one; warns once, naming the groups whose calibration set is too small."""
        alpha = _alpha(self.alpha)
        p, c = _probabilities(probs), _labels(correct)
        _same_length(len(p), len(c), "correct")
        keys = list(_materialise(groups, "groups"))
        _same_length(len(p), len(keys), "groups")
        rows: dict[Any, list[int]] = {}
        for i, key in enumerate(keys):
            try:
                rows.setdefault(key, []).append(i)
            except TypeError:
                raise InvalidTypeError(f"must be hashable, got {describe(key)}", field=f"groups[{i}]") from None
        usable = np.isfinite(p) & c
        self.by_group, too_small = {}, []
        for key, indices in rows.items():
            index = np.asarray(indices, dtype=np.intp)
            gate = ConformalGate(self.alpha, self.nonconformity)
            gate._calibrate(p[index[usable[index]]], alpha)
            self.by_group[key] = gate
            if gate._too_small(alpha):
                too_small.append(f"{key!r} ({len(gate._cal)})")
        self.pooled = ConformalGate(self.alpha, self.nonconformity)
        self.pooled._calibrate(p[usable], alpha)
        if self.pooled._too_small(alpha):
            too_small.append(f"the pooled fallback ({len(self.pooled._cal)})")
        if too_small:
            need = _smallest_calibration_set(alpha)
            shown = ", ".join(too_small[:10]) + (f" and {len(too_small) - 10} more" if len(too_small) > 10 else "")
            warnings.warn(
                f"GroupConformalGate.fit: too few correct calibration items (count in brackets) for "
                f"alpha={alpha:g}, which needs at least {need} per group: {shown}; their q = inf, so "
                "every item routed to them is accepted", SmallCalibrationWarning, stacklevel=2)
        return self

    def __call__(self, confidence: float, *, group: Any = None) -> Decision:
        p = _confidence(confidence)
        gate = self.by_group.get(group, self.pooled)
        return Decision.FLAG if gate is None else gate(p)


# --------------------------------------------------------------------------------------------
# Conformal risk control
# --------------------------------------------------------------------------------------------


def _zero_one_loss(correct: Any) -> float:
    """The default loss: ``0.0`` for a correct item, ``1.0`` for a wrong one."""
    return 0.0 if correct else 1.0


def _losses(loss: Callable[[Any], Any], correct: Any, bound: float) -> np.ndarray:
    """``loss(c)`` of every label, checked to lie in ``[0, bound]``."""
    if loss is _zero_one_loss:
        values = np.where(_labels(correct), 0.0, 1.0)
        if bound < 1.0 and not (values == 0).all():
            raise InvalidValueError(f"must be >= 1 for the default 0/1 loss, got {bound!r}", field="loss_bound")
        return values
    labels = _materialise(correct, "correct")
    values = np.empty(len(labels), dtype=np.float64)
    for i, c in enumerate(labels):
        value = _number(loss(c), f"loss(correct[{i}])")
        if not 0.0 <= value <= bound:
            raise InvalidValueError(f"must be in [0, loss_bound={bound:g}], got {value!r}",
                                    field=f"loss(correct[{i}])")
        values[i] = value
    return values


def _integer_valued(losses: np.ndarray) -> bool:
    """Whether every partial sum of ``losses`` is an exact float (integers, total below 2**53), so
    that they add to the same value in any order."""
    return bool(np.array_equal(losses, np.floor(losses))) and float(losses.sum()) < 2.0**53


@dataclass
class RiskControlGate:
    """Conformal Risk Control: accept ``p >= lam``, bounding the accepted-error rate.

    :meth:`fit` picks the *smallest* threshold ``lam`` (the most coverage) whose finite-sample
    bound ``(n * risk(lam) + loss_bound) / (n + 1)`` is at or below ``target``, where ``risk(lam)``
    is the mean over the ``n`` calibration items of ``loss(item) * 1(p >= lam)``. With the default
    0/1 loss that is the population rate of accepted-yet-wrong items (not the error rate among the
    accepted). When no threshold qualifies, ``lam = 1 + 1e-9`` accepts nothing; so does a fit on
    an empty calibration set (unless ``loss_bound <= target``, which any threshold meets).

    Args:
        target: Upper bound on the expected loss of accepted items (e.g. ``0.05``).
        loss: ``correct -> loss`` in ``[0, loss_bound]`` (default ``0`` if correct else ``1``).
        loss_bound: The loss's upper bound ``B``; the finite-sample slack is ``B / (n + 1)``.

    >>> gate = RiskControlGate(target=0.3).fit([.2, .4, .6, .8, .9], [False, False, True, True, True])
    >>> gate.lam, gate(0.7).value, gate(0.5).value
    (0.6, 'accept', 'flag')
    """

    target: float = DEFAULT_RISK_TARGET
    loss: Callable[[bool], float] = _zero_one_loss
    loss_bound: float = 1.0
    lam: float = 1.0

    def fit(self, probs: Sequence[float], correct: Sequence[bool]) -> "RiskControlGate":
        """Find the smallest accept threshold whose risk bound is ``<= target``; O(n log n).

        Warns (:class:`SmallCalibrationWarning`) when ``n`` is too small for any threshold to
        qualify (``loss_bound / (n + 1) > target``)."""
        target, bound = self.target, self.loss_bound
        if type(target) is not float or not 0.0 <= target < math.inf:  # checked as _non_negative checks
            target = _non_negative(target, "target")
        if type(bound) is not float or not 0.0 <= bound < math.inf:
            bound = _non_negative(bound, "loss_bound")
        small = _small_risk_fit(probs, correct, bound, target) if self.loss is _zero_one_loss and bound >= 1.0 else None
        if small is None:
            p = _probabilities(probs)
            losses = _losses(self.loss, correct, bound)
            _same_length(len(p), len(losses), "correct")
            finite = np.isfinite(p)
            p, losses = p[finite], losses[finite]
        n = len(p) if small is None else small[0]
        if (0.0 + bound) / (n + 1) > target:
            message = (_risk_too_small_message if target else _risk_too_small_message.__wrapped__)(n, bound, target)
            warnings.warn(message, SmallCalibrationWarning, stacklevel=2)
        if small is not None:
            self.lam = small[1]
            return self
        if n == 0:
            self.lam = _empty_fit_threshold(bound, target)
            return self
        rows = _SortedRows.of(p, losses)
        distinct, starts = rows.distinct()
        candidates = np.concatenate(([0.0], distinct))  # lam = 0.0 accepts every row
        starts = np.concatenate(([0], starts))
        if _integer_valued(losses):  # the reference's sums, exactly, for every candidate at once
            risk = rows.weight_from(starts) / n
            within = (n * risk + bound) / (n + 1) <= target
            first = int(np.argmax(within)) if within.any() else len(candidates)
        else:  # other losses: the reference's row-order sum, at O(log n) candidates
            def within_target(lam: float) -> bool:
                risk = sum(losses[p >= lam].tolist()) / n
                return (n * risk + bound) / (n + 1) <= target

            # The bound never grows with lam (fewer rows, non-negative losses): binary search.
            first = bisect.bisect_left(candidates, True, key=within_target)
        self.lam = float(candidates[first]) if first < len(candidates) else _ACCEPT_NOTHING
        return self

    def __call__(self, confidence: float) -> Decision:
        return Decision.ACCEPT if _confidence(confidence) >= self.lam else Decision.FLAG


def _empty_fit_threshold(bound: float, target: float) -> float:
    """A risk-control fit without rows: no evidence, the bound is ``loss_bound`` itself (the
    reference keeps ``lam = 1.0``, accepting ``p = 1``)."""
    return 0.0 if bound <= target else _ACCEPT_NOTHING


def _small_risk_fit(probs: Any, correct: Any, bound: float, target: float) -> Optional[tuple[int, float]]:
    """``(n, lam)`` of :meth:`RiskControlGate.fit` with the 0/1 loss on the rows
    :func:`_small_sorted_rows` reads (by :func:`_small_risk_threshold`, or the compiled core's
    one call that counts as it does); ``None`` for the other inputs."""
    core = _kernels.compiled()
    if core is not None:
        return core.listed_risk_fit(probs, correct, _SMALL_SET, bound, target)
    small = _small_sorted_rows(probs, correct)
    if small is None:
        return None
    rows, wrong = small
    return len(rows), _small_risk_threshold(rows, wrong, bound, target) if rows else _empty_fit_threshold(bound, target)


def _small_risk_threshold(rows: list[tuple[float, bool]], wrong: int, bound: float, target: float) -> float:
    """:meth:`RiskControlGate.fit`'s threshold for the 0/1 loss over the rows of
    :func:`_small_sorted_rows` (not empty; ``wrong`` of them incorrect): the same integer counts
    and float operations, in Python. ``lam = 0.0`` first, then each distinct probability,
    ascending."""
    n = len(rows)  # wrong: the incorrect rows at or above the candidate
    if (n * (wrong / n) + bound) / (n + 1) <= target:
        return 0.0
    last = None
    for lam, w in rows:
        if lam != last:  # the first row at this probability: a candidate
            if (n * (wrong / n) + bound) / (n + 1) <= target:
                return lam
            last = lam
        wrong -= w
    return _ACCEPT_NOTHING


@functools.lru_cache(maxsize=256)  # formatted once per key: a short fit warns every time
def _risk_too_small_message(n: int, bound: float, target: float) -> str:
    """The warning of a fit too small for ``target``. Equal floats are one key, so a ``target``
    of ``-0.0`` or ``0.0`` (whose texts differ) is formatted through ``__wrapped__``; ``bound`` is
    positive here."""
    guess = bound / target if target > 0 else math.inf
    if target == 0.0:
        needed = "a target of 0 can never be met (the bound is at least loss_bound/(n+1) > 0)"
    elif not guess < 2**53:
        needed = "no realistic calibration set can meet it"
    else:
        need = max(0, math.ceil(guess) - 2)
        while bound / (need + 1) > target:
            need += 1
        needed = f"at least {need} items are needed"
    return (f"RiskControlGate.fit: {n} calibration item(s): the finite-sample bound is at least "
            f"loss_bound/(n+1) = "
            f"{bound / (n + 1):.4g} > target={target:g}, so no threshold qualifies and nothing is "
            f"accepted; {needed}")


def _small_sorted_rows(probs: Any, correct: Any) -> Optional[tuple[list[tuple[float, bool]], int]]:
    """The finite rows of short lists of floats and bools as ``(p, wrong)``, ascending, and how
    many are wrong, for the small-input paths (the same integer counts and divisions as NumPy's,
    so the same values). ``None`` when the full path must read the input (other types, longer
    lists, a finite value outside ``[0, 1]``, a ``-0.0``, whose place among equal zeros NumPy's
    sort decides). The compiled core reads them in one pass (lists or tuples)."""
    core = _kernels.compiled()
    if core is not None:
        return core.listed_sorted_rows(probs, correct, _SMALL_SET)
    if not (type(probs) is list and type(correct) is list and len(probs) == len(correct) < _SMALL_SET
            and {*map(type, probs)} <= {float} and {*map(type, correct)} <= {bool}):
        return None
    if 0.0 in probs and any(x == 0.0 and math.copysign(1.0, x) < 0 for x in probs):
        return None
    rows = sorted((x, not ok) for x, ok in zip(probs, correct) if -math.inf < x < math.inf)
    if rows and (rows[0][0] < 0.0 or rows[-1][0] > 1.0):
        return None
    return rows, sum(w for _, w in rows)


def _small_risk_coverage(probs: Any, correct: Any) -> Optional[list[dict]]:
    """:func:`risk_coverage_curve` at every distinct probability, in Python, for the inputs
    :func:`_small_sorted_rows` reads; ``None`` for the others."""
    small = _small_sorted_rows(probs, correct)
    if small is None:
        return None
    rows, wrong = small  # wrong: incorrect rows at or above the threshold
    n = len(rows)
    curve, i = [], 0
    while i < n:
        tau, accepted = rows[i][0], n - i
        curve.append({"threshold": tau, "coverage": accepted / n, "selective_risk": wrong / accepted})
        while i < n and rows[i][0] == tau:
            wrong -= rows[i][1]
            i += 1
    return curve


def risk_coverage_curve(probs: Sequence[float], correct: Sequence[bool], *,
                        thresholds: Optional[Sequence[float]] = None) -> list[dict]:
    """The risk-coverage trade-off: ``{threshold, coverage, selective_risk}`` per threshold.

    At each threshold ``tau`` (ascending: the given ``thresholds``, deduplicated, or else every
    distinct probability), the accepted items are those with ``p >= tau``; coverage is their
    fraction and selective risk the error rate among them (0.0 when none is accepted). Rows with
    non-finite ``p`` are dropped; an empty input gives ``[]``. O((n + T) log n).

    >>> for row in risk_coverage_curve([.2, .4, .6, .8, .9], [False, False, True, True, True])[:3]:
    ...     print(row)
    {'threshold': 0.2, 'coverage': 1.0, 'selective_risk': 0.4}
    {'threshold': 0.4, 'coverage': 0.8, 'selective_risk': 0.25}
    {'threshold': 0.6, 'coverage': 0.6, 'selective_risk': 0.0}
    """
    if thresholds is None:
        curve = _small_risk_coverage(probs, correct)
        if curve is not None:
            return curve
    p, c = _calibration_rows(probs, correct)
    n = len(p)
    if n == 0:
        return []
    rows = _SortedRows.of(p, (~c).astype(np.int64))
    if thresholds is None:
        taus, starts = rows.distinct()
        shown: list = taus.tolist()
    else:
        given = _materialise(thresholds, "thresholds")
        if any(math.isnan(_number(t, f"thresholds[{i}]")) for i, t in enumerate(given)):
            raise InvalidValueError("must not contain NaN", field="thresholds")
        shown = sorted(set(given))
        starts = np.searchsorted(rows.probs, np.array([float(t) for t in shown], dtype=np.float64), side="left")
    accepted = n - starts
    coverage = accepted / n
    risk = np.divide(rows.weight_from(starts), accepted, out=np.zeros(len(starts)), where=accepted > 0)
    return [{"threshold": t, "coverage": cov, "selective_risk": r}
            for t, cov, r in zip(shown, coverage.tolist(), risk.tolist())]


# --------------------------------------------------------------------------------------------
# crepes-backed Mondrian gate (the `calibration` extra)
# --------------------------------------------------------------------------------------------


@dataclass
class CrepesMondrianGate:
    """A Mondrian conformal gate whose p-values come from ``crepes``' ``ConformalClassifier``.

    Built by :func:`crepes_mondrian_gate`. ``classifier`` is calibrated with one Mondrian category
    per group, ``pooled`` on every correct item (used for groups without correct calibration items
    and for ``group=None``); ``groups`` maps each calibrated group to its category id. Accepts iff
    the (non-smoothed) p-value exceeds ``alpha``, the same decision :class:`GroupConformalGate`
    takes.
    """

    alpha: float
    nonconformity: Callable[[float], float]
    classifier: Any
    pooled: Any
    groups: dict

    def p_value(self, confidence: float, *, group: Any = None) -> float:
        """The conformal p-value of ``confidence`` among the correct items of ``group``."""
        s = np.array([_score(self.nonconformity, _confidence(confidence))])
        category = self.groups.get(group)
        if category is None:
            return float(self.pooled.predict_p(s, smoothing=False)[0])
        return float(self.classifier.predict_p(s, bins=np.array([category]), smoothing=False)[0])

    def __call__(self, confidence: float, *, group: Any = None) -> Decision:
        return Decision.ACCEPT if self.p_value(confidence, group=group) > self.alpha else Decision.FLAG


@requires_extra("calibration", packages=["crepes"])
def crepes_mondrian_gate(probs: Sequence[float], correct: Sequence[bool], *, groups: Sequence[Hashable],
                         alpha: float = DEFAULT_ALPHA,
                         nonconformity: Callable[[float], float] = _one_minus) -> CrepesMondrianGate:
    """A Mondrian (class-conditional) conformal gate backed by ``crepes`` (``calibration`` extra).

    Takes the inputs of ``GroupConformalGate(alpha, nonconformity).fit(probs, correct,
    groups=groups)`` and, for every group with correct calibration items, takes its decisions, with
    the p-values computed by ``crepes.ConformalClassifier`` (Mondrian categories = groups), for
    parity with a crepes/scikit-learn conformal stack. Groups without correct items use the pooled
    calibration (``GroupConformalGate`` gives them ``q = inf``). Without
    ``crepes`` it raises :class:`~scorekit.registry.MissingExtraError` with the install command.
    """
    from crepes import ConformalClassifier

    alpha = _alpha(alpha)
    p, c = _probabilities(probs), _labels(correct)
    _same_length(len(p), len(c), "correct")
    keys = list(_materialise(groups, "groups"))
    _same_length(len(p), len(keys), "groups")
    usable = np.flatnonzero(np.isfinite(p) & c)
    if len(usable) == 0:
        raise InvalidValueError("crepes_mondrian_gate needs at least one correct item with a finite probability")
    ids: dict = {}
    categories = np.array([ids.setdefault(keys[i], len(ids)) for i in usable.tolist()], dtype=np.int64)
    scores = _scores(nonconformity, p[usable])
    return CrepesMondrianGate(alpha, nonconformity, ConformalClassifier().fit(scores, bins=categories),
                              ConformalClassifier().fit(scores), ids)


register("policies", "cost_sensitive", CostSensitiveGate)
register("policies", "conformal", ConformalGate)
register("policies", "risk_control", RiskControlGate)
register("policies", "group_conformal", GroupConformalGate)
