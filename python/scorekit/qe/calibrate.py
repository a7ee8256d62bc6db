"""Calibration (``ek.qe.calibrate``): make a raw score *mean* a probability (docs/qe-calibration.md).

A confidence of 0.9 should mean "correct 90% of the time"; raw model scores are overconfident, so a
gate never reads one directly (Hard Rule 1). A calibrator is fitted on a labelled holdout of
``(raw score, correct?)`` pairs and maps later raw scores to probabilities. This module owns the
calibrators (:class:`PlattCalibrator`, :class:`IsotonicCalibrator`,
:class:`TemperatureCalibrator`, the Mondrian :class:`GroupCalibrator`, the per-signal
:class:`SignalFamilyCalibrator` and its combiners), the calibration measures
(:func:`expected_calibration_error`, :func:`reliability_curve`), the library-backed
:func:`sklearn_calibrator` / :func:`netcal_ece` (``calibration`` extra), persistence in the
``"calibrators"`` JSON store, and the registration of the ``"calibrators"`` (``platt``,
``isotonic``, ``temperature``, ``group``, ``signal_family``) and ``"combiners"`` (``mean``,
``min``) namespaces.

>>> # An overconfident raw signal, calibrated against ground truth.
>>> raw =     [0.95, 0.93, 0.92, 0.90, 0.55, 0.52, 0.51, 0.50]
>>> correct = [True, True, False, False, True, False, False, False]
>>> cal = PlattCalibrator().fit(raw, correct)
>>> cal(0.95) < 0.95            # overconfidence pulled down
True
>>> round(cal(0.95), 4), round(cal(0.5), 4)
(0.5089, 0.2746)

The fits give the reference's results without Python loops over the rows: Platt runs the
reference's Newton iteration (same start, step and stopping rule) on centred scores, in the compiled
``platt`` kernel below ``_KERNEL_ROWS`` rows (:mod:`scorekit._kernels.platt`, compensated sums) and
with NumPy's vectorised ``exp`` from there, starting large sets from a fit on a sample; isotonic runs in the compiled
``isotonic`` kernel (one radix sort, one stack pass of pool-adjacent-violators with exact integer
comparisons; :mod:`scorekit._kernels.isotonic`) and keeps its knots in NumPy (:class:`Knots`); temperature runs
the reference's golden-section search, evaluating each point
once.

Decisions where the reference is silent or accidental:

* inputs are checked: ``scores`` are real numbers (a ``str`` such as ``"0.5"`` is refused; NaN and
  ±inf rows are dropped, as in the reference), ``correct`` holds bools or 0/1 (the reference takes
  any truthy value, so ``"no"`` counted as correct), and ``scores``, ``correct`` (and ``groups``)
  must have the same length (the reference silently truncates to the shorter);
* a fit on too small a set still fits as the reference does (an empty set gives Platt 0.5, one
  class gives its smoothed base rate) but warns with :class:`SmallCalibrationWarning`: when either
  outcome has fewer than :data:`MIN_ROWS_PER_CLASS` finite rows, and, for isotonic, when there are
  fewer than :data:`MIN_ROWS_PER_BIN` rows per bin of a :data:`DEFAULT_N_BINS`-bin reliability
  curve; :class:`GroupCalibrator` and :class:`SignalFamilyCalibrator` say once which of their
  groups or families are too small;
* Platt's Newton steps are taken in centred coordinates with the reference's Hessian ridge carried
  over exactly, so the iterates are the reference's in exact arithmetic, without its cancellation
  on scores far from 0 (``1000 ± 0.001``); a fit whose parameters overflow (scores beyond about
  1e150) raises instead of returning NaN parameters;
* ``IsotonicCalibrator()(nan)`` raises ``ValueError`` ("NaN") like the others (the reference raises
  ``IndexError``); the combiners take probabilities in ``[0, 1]`` and refuse NaN;
* a calibrator's parameters are checked when it is built (finite ``a``/``b``, ``T > 0``,
  ``0 < t_min < t_max``, isotonic knots strictly increasing), so a bad saved record fails at load;
* after a save and load, group keys are strings (JSON object keys); a ``GroupCalibrator`` looks a
  non-string group up as ``str(group)`` when it has no key equal to it, so ``group=7`` still finds
  the group saved as ``"7"`` (the reference falls back to the pooled calibrator);
* ``save_calibrator`` refuses to overwrite a corrupted file (it names the path); the
  ``"calibrators"`` registry is the ``kind`` table of :func:`load_calibrator`, so a plugin kind with
  a ``from_dict`` loads too.
"""

from __future__ import annotations

import bisect
import functools
import inspect
import math
import operator
import os
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from scorekit import _kernels
from scorekit._kernels import available_cores
from scorekit._kernels.isotonic import isotonic_fit
from scorekit._kernels.platt import platt_fit, platt_fit_listed
from scorekit._packing import bools_of, floats_of
from scorekit._sums import NUMPY_SEQUENTIAL_BELOW
from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError, describe
from scorekit.qe.decide import SmallCalibrationWarning
from scorekit.registry import get, names, register, requires_extra
from scorekit.stores import CorruptStoreFileError, json_store

__all__ = [
    "DEFAULT_N_BINS",
    "MIN_ROWS_PER_CLASS",
    "MIN_ROWS_PER_BIN",
    "SmallCalibrationWarning",
    "CalibratorNotFoundError",
    "Knots",
    "PlattCalibrator",
    "IsotonicCalibrator",
    "TemperatureCalibrator",
    "GroupCalibrator",
    "SignalFamilyCalibrator",
    "mean_probability",
    "min_probability",
    "expected_calibration_error",
    "reliability_curve",
    "netcal_ece",
    "sklearn_calibrator",
    "save_calibrator",
    "load_calibrator",
]

#: Default number of bins for :func:`expected_calibration_error` / reliability curves.
DEFAULT_N_BINS = 10
#: A fit warns when either outcome (correct / not) has fewer finite rows than this.
MIN_ROWS_PER_CLASS = 10
#: An isotonic fit also warns below this many rows per bin of a ``DEFAULT_N_BINS``-bin curve.
MIN_ROWS_PER_BIN = 10

# The reference's Newton constants: Hessian ridge, weight floor, singular-Hessian and step tolerances.
_RIDGE = 1e-10
_WEIGHT_FLOOR = 1e-12
_SINGULAR = 1e-18
_STEP_TOL = 1e-9
#: Probabilities are clamped to [_P_CLAMP, 1 - _P_CLAMP] inside the temperature NLL.
_P_CLAMP = 1e-12
#: Rows per block of the Platt and temperature sums (the block's temporaries stay in cache).
_BLOCK = 65536
#: A Platt pass over more rows than this sums the two halves of the rows side by side (NumPy
#: releases the GIL in its loops). The halves are the same on one core, so the sums are too.
_HALVES_ABOVE = 262_144
#: A Platt fit on more rows than this first converges on every _SAMPLE_EVERY-th row.
_SAMPLE_ABOVE = 131_072
_SAMPLE_EVERY = 16
#: Below this many rows, lists of floats and bools are binned in Python: NumPy's fixed cost per
#: call is larger than the work.
_SMALL_ROWS = 64
#: Platt fits on fewer rows run in the compiled kernel (``scorekit._kernels.platt``); from there
#: NumPy's vectorised ``exp`` makes the NumPy passes the faster.
_KERNEL_ROWS = 4096
#: The most Newton steps a Platt fit takes (the kernel's count is an unsigned 64-bit integer).
_MOST_STEPS = 2**63
#: Temperature fits on fewer listed rows run in Python, their sums added as NumPy adds so few:
#: left to right.
_NUMPY_SEQUENTIAL_BELOW = NUMPY_SEQUENTIAL_BELOW
_FLOAT, _BOOL = frozenset({float}), frozenset({bool})
_NAN_MESSAGE = "calibrated probability is NaN (was the raw score non-finite?)"


class CalibratorNotFoundError(ScorekitError, KeyError):
    """No calibrator is saved under that name (a ``KeyError``, as the reference raises)."""

    def __str__(self) -> str:  # the plain message, not KeyError's quoted repr
        return str(self.args[0]) if self.args else ""


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _sequence(values: Any, what: str) -> Any:
    """``values`` as something ``len()`` and NumPy can read (iterators are listed once)."""
    if type(values) is list:  # the common case, before the ABC checks
        return values
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise InvalidTypeError(f"must be a sequence, got {describe(values)}", field=what)
    return values if isinstance(values, (np.ndarray, Sequence)) else list(values)


def _real(value: Any, what: str) -> float:
    """One real number as a float (NaN and ±inf kept); a ``str``, ``None`` or complex is refused."""
    if type(value) is float:  # the common case, before the checks
        return value
    if isinstance(value, (str, bytes, bytearray, complex)):
        raise InvalidTypeError(f"must be a number, got {describe(value)}", field=what)
    try:
        return float(value)
    except OverflowError:
        raise InvalidValueError(f"is too large for a float: {describe(value)}", field=what) from None
    except (TypeError, ValueError):
        raise InvalidTypeError(f"must be a number, got {describe(value)}", field=what) from None


def _floats(values: Any, what: str) -> np.ndarray:
    """A one-dimensional float64 array of real numbers (NaN and ±inf kept)."""
    values = _sequence(values, what)
    read = floats_of(values)  # plain lists of numbers, in one compiled pass
    if read is not None:
        return read
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):  # ragged nesting: named element by element below
        array = np.empty(0, dtype=object)
    if array.ndim > 1:
        raise InvalidValueError(f"must be one-dimensional, got shape {array.shape}", field=what)
    if array.dtype.kind in "biuf" and array.size == len(values):
        return array.astype(np.float64, copy=False)
    return np.array([_real(v, f"{what}[{i}]") for i, v in enumerate(values)], dtype=np.float64)


def _labels(values: Any, what: str = "correct") -> np.ndarray:
    """Outcome labels as a bool array: bools, or numbers equal to 0 or 1."""
    values = _sequence(values, what)
    read = bools_of(values)  # plain lists of bools, in one compiled pass
    if read is not None:
        return read
    array = np.asarray(values) if len(values) else np.zeros(0, dtype=bool)
    if array.ndim == 1 and array.dtype == np.bool_:
        return array
    if array.ndim == 1 and array.dtype.kind in "iuf":
        wrong = (array != 0) & (array != 1)
        if wrong.any():
            i = int(np.argmax(wrong))
            raise InvalidValueError(f"must be a bool (or 0/1), got {array[i].item()!r}", field=f"{what}[{i}]")
        return array.astype(bool)
    labels = np.empty(len(values), dtype=bool)
    for i, v in enumerate(values):
        if isinstance(v, (str, bytes)) or not isinstance(v, (bool, np.bool_, int, float, np.number)) or v not in (0, 1):
            raise InvalidValueError(f"must be a bool (or 0/1), got {describe(v)}", field=f"{what}[{i}]")
        labels[i] = bool(v)
    return labels


def _same_length(owner: str, n_scores: int, n_labels: int, noun: str = "scores") -> None:
    if n_scores != n_labels:
        raise InvalidValueError(f"{owner}: {n_scores} {noun} but {n_labels} labels; each row needs "
                                "its score and its label (correct or not)")


def _rows(scores: Any, correct: Any, owner: str, *, noun: str = "scores") -> tuple[np.ndarray, np.ndarray]:
    """Checked ``(scores, correct)`` of equal length, without the rows whose score is not finite."""
    x, c = _floats(scores, noun), _labels(correct)
    _same_length(owner, x.size, c.size, noun)
    return _finite_rows(x, c)


def _finite_rows(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(x, c)`` without the rows whose score ``x`` is not finite."""
    finite = np.isfinite(x)
    return (x, c) if np.count_nonzero(finite) == x.size else (x[finite], c[finite])  # cheaper than all()


def _whole(value: Any, what: str, *, minimum: int) -> int:
    if type(value) is int:  # the common case, before the checks
        if value < minimum:
            raise InvalidValueError(f"must be >= {minimum}, got {value}", field=what)
        return value
    if isinstance(value, bool):
        raise InvalidTypeError(f"must be an integer, got {describe(value)}", field=what)
    try:
        n = operator.index(value)
    except TypeError:
        raise InvalidTypeError(f"must be an integer, got {describe(value)}", field=what) from None
    if n < minimum:
        raise InvalidValueError(f"must be >= {minimum}, got {n}", field=what)
    return n


def _finite(value: Any, what: str) -> float:
    x = _real(value, what)
    if not math.isfinite(x):
        raise InvalidValueError(f"must be finite, got {x!r}", field=what)
    return x


def _clip01_checked(p: float) -> float:
    if p != p:  # NaN
        raise InvalidValueError(_NAN_MESSAGE)
    return 0.0 if p < 0.0 else 1.0 if p > 1.0 else p  # min(max(p, 0.0), 1.0) without the calls


def _clip01_array(p: np.ndarray) -> np.ndarray:
    nan = np.isnan(p)
    if nan.any():
        raise InvalidValueError(f"{_NAN_MESSAGE} at index {int(np.argmax(nan))}")
    return np.clip(p, 0.0, 1.0)


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _sigmoid_array(z: np.ndarray) -> np.ndarray:
    """:func:`_sigmoid` element-wise, with the same two branches."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


# --------------------------------------------------------------------------------------------
# Warnings on small calibration sets
# --------------------------------------------------------------------------------------------


def _outcomes(c: Any) -> tuple[int, int]:
    """The rows of labels ``c`` (an array, or a list of bools), in all and correct."""
    return len(c), c.count(True) if type(c) is list else int(np.count_nonzero(c))


def _smallness(c: Any, *, min_rows: int = 0) -> Optional[str]:
    """Why a calibration set with labels ``c`` is too small for a reliable fit, or None."""
    return _small_reason(*_outcomes(c), min_rows)


@functools.lru_cache(maxsize=256)
def _small_reason(n: int, n_correct: int, min_rows: int = 0) -> Optional[str]:
    """Why a calibration set of ``n`` rows, ``n_correct`` of them correct, is too small for a
    reliable fit, or None (cached: a small set's reason is formatted once)."""
    fewest = min(n_correct, n - n_correct)
    if n == 0:
        return "no rows with a finite score"
    if fewest == 0:
        return f"all {n} rows are {'correct' if n_correct else 'incorrect'} (one outcome only)"
    if fewest < MIN_ROWS_PER_CLASS:
        outcome = "incorrect" if n_correct > n - n_correct else "correct"
        return f"only {fewest} {outcome} row(s) of {n}, fewer than {MIN_ROWS_PER_CLASS} of each outcome"
    if n < min_rows:
        return (f"{n} rows, fewer than {MIN_ROWS_PER_BIN} per bin over {DEFAULT_N_BINS} bins "
                f"({min_rows}); an isotonic fit overfits small sets")
    return None


@functools.lru_cache(maxsize=256)
def _small_set_message(owner: str, n: int, n_correct: int, min_rows: int = 0) -> Optional[str]:
    """The :class:`SmallCalibrationWarning` of ``owner``'s fit on such a set, or None (cached)."""
    reason = _small_reason(n, n_correct, min_rows)
    return None if reason is None else f"{owner}: the calibration set is too small for a reliable fit: {reason}"


def _warn_if_small(owner: str, c: Any, *, min_rows: int = 0) -> None:
    message = _small_set_message(owner, *_outcomes(c), min_rows)
    if message is not None:
        warnings.warn(message, SmallCalibrationWarning, stacklevel=3)


def _fit_quietly(factory: Callable[[], Any], scores: np.ndarray, correct: np.ndarray) -> tuple[Any, bool]:
    """``factory().fit(scores, correct)`` and whether it warned of a small set; other warnings are
    passed on. Built-in calibrators get the arrays, any other calibrator Python lists."""
    cal = factory()
    if not isinstance(cal, _BUILT_IN):
        scores, correct = scores.tolist(), correct.tolist()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = cal.fit(scores, correct)
    small = False
    for w in caught:
        if issubclass(w.category, SmallCalibrationWarning):
            small = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return fitted, small


def _warn_small_parts(owner: str, what: str, parts: list) -> None:
    if parts:
        warnings.warn(f"{owner}: the calibration sets of {what} {parts!r} are too small for a reliable fit "
                      f"(fewer than {MIN_ROWS_PER_CLASS} rows of an outcome, or, for an isotonic fit, fewer than "
                      f"{MIN_ROWS_PER_BIN * DEFAULT_N_BINS} rows)", SmallCalibrationWarning, stacklevel=3)


# --------------------------------------------------------------------------------------------
# Platt scaling
# --------------------------------------------------------------------------------------------


_helper: Optional[tuple[int, ThreadPoolExecutor]] = None  # (the pid it was started in, the pool)


def _on_helper_thread(fn: Callable[..., Any], *args: Any) -> "Future[Any]":
    """Run ``fn(*args)`` on one helper thread kept for the process (started again after a fork,
    whose child has no threads)."""
    global _helper
    if _helper is None or _helper[0] != os.getpid():
        _helper = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorekit-platt"))
    return _helper[1].submit(fn, *args)


def _platt_sums(x: np.ndarray, mu: float, a: float, bc: float) -> tuple[float, ...]:
    """:func:`_platt_half_sums` of the rows; above ``_HALVES_ABOVE`` rows, of their two halves
    (side by side when there are two cores), added."""
    if x.size <= _HALVES_ABOVE:
        return _platt_half_sums(x, mu, a, bc)
    first, second = x[:x.size // 2], x[x.size // 2:]
    if available_cores() < 2:
        return tuple(u + v for u, v in zip(_platt_half_sums(first, mu, a, bc), _platt_half_sums(second, mu, a, bc)))
    later = _on_helper_thread(_platt_half_sums, second, mu, a, bc)
    sums = _platt_half_sums(first, mu, a, bc)
    return tuple(u + v for u, v in zip(sums, later.result()))


def _platt_half_sums(x: np.ndarray, mu: float, a: float, bc: float) -> tuple[float, ...]:
    """With ``xc = x - mu``, ``p = sigmoid(a * xc + bc)`` and ``w = max(p (1 - p), 1e-12)``: the sums
    ``(p xc, p, w xc², w xc, w)``, block by block, the five terms in the rows of one block-sized
    buffer added by one reduction (each row as ``row.sum()`` adds it). Products are summed with
    NumPy's own loops, not BLAS ``dot``, whose threads stall on a busy machine."""
    sums = [0.0] * 5
    size = min(_BLOCK, x.size)
    xc_buf, terms_buf = np.empty(size), np.empty((5, size))
    for lo in range(0, x.size, _BLOCK):
        block = x[lo:lo + _BLOCK]
        xc, terms = xc_buf[:block.size], terms_buf[:, :block.size]
        pxc, p, wx2, wx, w = terms
        np.subtract(block, mu, out=xc)
        np.multiply(xc, -a, out=p)
        p -= bc
        np.exp(p, out=p)
        p += 1.0
        np.reciprocal(p, out=p)  # sigmoid(a * xc + bc); exp overflow gives 0, its limit
        np.multiply(p, p, out=w)
        np.subtract(p, w, out=w)
        np.maximum(w, _WEIGHT_FLOOR, out=w)
        np.multiply(p, xc, out=pxc)
        np.multiply(w, xc, out=wx)
        np.multiply(wx, xc, out=wx2)
        sums = [s + t for s, t in zip(sums, np.add.reduce(terms, axis=1).tolist())]
    return tuple(sums)


def _short_rows(scores: Any, correct: Any) -> Optional[tuple[list, list]]:
    """The finite rows of lists of fewer than ``_NUMPY_SEQUENTIAL_BELOW`` floats and as many bools,
    as two lists, for the fits' small-input paths; ``None`` for any other input."""
    if not (type(scores) is list and len(scores) < _NUMPY_SEQUENTIAL_BELOW and _plain_short(scores, correct)):
        return None
    if all(map(math.isfinite, scores)):
        return scores, correct
    keep = list(map(math.isfinite, scores))
    return [v for v, k in zip(scores, keep) if k], [c for c, k in zip(correct, keep) if k]


def _newton(x: np.ndarray, c: np.ndarray, targets: tuple[float, float], mu: float, a: float, bc: float,
            max_iter: int) -> tuple[float, float, bool]:
    """Up to ``max_iter`` of the reference's Newton steps from ``(a, bc)``, for scores ``x`` centred
    at ``mu`` (``bc = b + a * mu``), labels ``c`` and the smoothed ``targets`` (correct, incorrect);
    the flag says whether the iteration stopped by its own rule (steps below ``1e-9``, or a singular
    Hessian) rather than by running out of steps."""
    t_pos, t_neg = targets
    n_pos = int(np.count_nonzero(c))
    correct_sum = total = 0.0  # the sums of xc over the correct rows and over all rows
    xc, xc_correct = np.empty(min(_BLOCK, x.size)), np.empty(min(_BLOCK, x.size))
    for lo in range(0, x.size, _BLOCK):
        rows = x[lo:lo + _BLOCK]
        centred = np.subtract(rows, mu, out=xc[:rows.size])
        total += float(centred.sum())
        correct_sum += float(np.multiply(centred, c[lo:lo + _BLOCK], out=xc_correct[:rows.size]).sum())
    tx = t_pos * correct_sum + t_neg * (total - correct_sum)  # sum of t xc
    ts = t_pos * n_pos + t_neg * (x.size - n_pos)  # sum of t
    return _newton_steps(lambda a, bc: _platt_sums(x, mu, a, bc), tx, ts, mu, a, bc, max_iter)


def _newton_steps(sums: Callable[[float, float], tuple[float, ...]], tx: float, ts: float, mu: float,
                  a: float, bc: float, max_iter: int) -> tuple[float, float, bool]:
    """The Newton steps of :func:`_newton` given ``sums(a, bc)`` (:func:`_platt_half_sums` of the
    rows), the sum of the targets times the centred scores ``tx`` and of the targets ``ts``."""
    r00, r01, r11 = _RIDGE * (1.0 + mu * mu), -_RIDGE * mu, _RIDGE  # J^T (ridge I) J
    for _ in range(max_iter):
        px, ps, h00, h01, h11 = sums(a, bc)
        g0, g1 = px - tx, ps - ts
        h00, h01, h11 = h00 + r00, h01 + r01, h11 + r11
        det = h00 * h11 - h01 * h01
        if abs(det) < _SINGULAR:
            return a, bc, True
        da = (h11 * g0 - h01 * g1) / det
        dbc = (h00 * g1 - h01 * g0) / det
        a -= da
        bc -= dbc
        if abs(da) < _STEP_TOL and abs(dbc - mu * da) < _STEP_TOL:  # the steps of a and b
            return a, bc, True
    return a, bc, False


def _platt_fit(x: np.ndarray, c: np.ndarray, max_iter: int) -> tuple[float, float]:
    """The reference's Platt fit: Newton/IRLS on Platt's smoothed targets from ``a = 0``, ``b`` =
    the smoothed log-odds, with a ``1e-10`` ridge on the Hessian, stopping when both steps are
    below ``1e-9``, when the Hessian is singular, or after ``max_iter`` steps.

    The steps are computed for ``(a, b + a * mu)`` on scores centred at their mean ``mu``, with the
    ridge mapped to those coordinates, which gives the same iterates in exact arithmetic and keeps
    the Hessian's determinant accurate for scores far from 0. On more than ``_SAMPLE_ABOVE`` rows
    the iteration first converges on every ``_SAMPLE_EVERY``-th row, then goes on from there on all
    rows: the same fixed point in three or four passes over the rows instead of about seven. When
    either stage runs out of steps, the reference's path is followed from its start instead.
    """
    n = x.size
    n_pos = int(np.count_nonzero(c))
    n_neg = n - n_pos
    a, b = 0.0, (math.log((n_pos + 1) / (n_neg + 1)) if n_neg > 0 else 0.0)
    if n == 0 or max_iter == 0:
        return a, b
    mu = float(np.mean(x))
    if not math.isfinite(mu):
        mu = float(x.min()) / 2 + float(x.max()) / 2
    targets = ((n_pos + 1) / (n_pos + 2), 1.0 / (n_neg + 2))
    converged = False
    with np.errstate(over="ignore", invalid="ignore"):
        if n > _SAMPLE_ABOVE:
            sa, sbc, ok = _newton(x[::_SAMPLE_EVERY].copy(), c[::_SAMPLE_EVERY].copy(), targets, mu, a, b + a * mu,
                                  max_iter)
            if ok and math.isfinite(sa) and math.isfinite(sbc):
                fa, fbc, converged = _newton(x, c, targets, mu, sa, sbc, max_iter)
        if not converged or not (math.isfinite(fa) and math.isfinite(fbc)):
            fa, fbc, _ = _newton(x, c, targets, mu, a, b + a * mu, max_iter)
    return _platt_result(fa, fbc - fa * mu, lambda: float(np.max(np.abs(x))))


def _platt_result(a: float, b: float, span: Callable[[], float]) -> tuple[float, float]:
    """``(a, b)``, or the error naming the largest score magnitude ``span()`` when either overflowed."""
    if not (math.isfinite(a) and math.isfinite(b)):
        raise InvalidValueError(f"PlattCalibrator.fit: the Newton iteration overflowed (scores reach {span():.3g} "
                                "in magnitude); rescale the scores")
    return a, b


@dataclass
class PlattCalibrator:
    """Platt scaling: ``sigmoid(a * score + b)``, fit by Newton/IRLS on labels.

    The default calibrator: works on any scalar (aggregated confidence/logprob), no logits
    required. Platt's target smoothing (``(n+ + 1)/(n+ + 2)`` and ``1/(n- + 2)`` instead of 1 and 0)
    keeps small sets from overfitting. ``max_iter`` bounds the Newton steps (a handful suffice).

    >>> cal = PlattCalibrator().fit([0.5] * 10 + [0.9] * 10, [i < 3 for i in range(10)] + [i < 7 for i in range(10)])
    >>> round(cal.a, 4), round(cal.b, 4), round(cal(0.9), 3)   # 7 of 10 correct, smoothed
    (3.4657, -2.426, 0.667)
    >>> cal.predict([0.5, 0.9]).round(3).tolist()      # many scores at once
    [0.333, 0.667]
    """

    a: float = 1.0
    b: float = 0.0
    max_iter: int = 100
    kind: str = "platt"

    def __post_init__(self) -> None:
        a, b, steps = self.a, self.b, self.max_iter
        if type(a) is float and type(b) is float and a - a == 0.0 and b - b == 0.0 and type(steps) is int and steps >= 0:
            return  # finite floats and a count, the common case, before the checks
        self.a = _finite(a, "PlattCalibrator a")
        self.b = _finite(b, "PlattCalibrator b")
        self.max_iter = _whole(steps, "PlattCalibrator max_iter", minimum=0)

    def fit(self, scores: Sequence[float], correct: Sequence[bool]) -> "PlattCalibrator":
        """Fit ``a, b`` to maximise the likelihood of ``correct`` given ``scores``."""
        steps = self.max_iter if self.max_iter < _MOST_STEPS else _MOST_STEPS
        fit = platt_fit_listed(scores, correct, steps) if type(scores) is list and len(scores) < _KERNEL_ROWS else None
        x: Any = scores  # the scores as read, for the overflow error
        if fit is None:
            x, c = _floats(scores, "scores"), _labels(correct)
            _same_length("PlattCalibrator.fit", x.size, c.size)
            if x.size >= _KERNEL_ROWS:
                x, c = _finite_rows(x, c)
                a, b = _platt_fit(x, c, steps)
                fit = a, b, *_outcomes(c)
            else:  # the compiled fit, which leaves out the rows whose score is not finite
                fit = platt_fit(x, c, steps)
        a, b, n, n_correct = fit
        if not (a - a == 0.0 and b - b == 0.0):  # either is infinite or NaN
            x = np.asarray(x, dtype=np.float64)
            _platt_result(a, b, lambda: float(np.max(np.abs(x[np.isfinite(x)]))))
        self.a, self.b = a, b
        message = _small_set_message("PlattCalibrator.fit", n, n_correct)
        if message is not None:
            warnings.warn(message, SmallCalibrationWarning, stacklevel=2)
        return self

    def __call__(self, raw_score: float) -> float:
        x = raw_score if type(raw_score) is float else _real(raw_score, "raw_score")
        return _clip01_checked(_sigmoid(self.a * x + self.b))

    def predict(self, scores: Sequence[float]) -> np.ndarray:
        """The calibrated probability of every score, as calling the calibrator on each would give
        (to the last bit or so: NumPy's ``exp`` may differ from ``math.exp`` by one ulp)."""
        with np.errstate(invalid="ignore"):
            return _clip01_array(_sigmoid_array(self.a * _floats(scores, "scores") + self.b))

    def to_dict(self) -> dict:
        return {"kind": self.kind, "a": self.a, "b": self.b}

    @classmethod
    def from_dict(cls, d: Mapping) -> "PlattCalibrator":
        return cls(a=d["a"], b=d["b"])


# --------------------------------------------------------------------------------------------
# Isotonic regression
# --------------------------------------------------------------------------------------------


class Knots(Sequence):
    """The knots (``x`` or ``y``) of an :class:`IsotonicCalibrator`: a read-only sequence of floats
    kept in a NumPy array, so a fit with a million distinct scores holds no Python floats. It
    compares equal to a list, tuple or array of the same numbers, indexes and iterates like a list
    (slices are lists), and ``tolist()`` or ``np.asarray`` copies it out.

    >>> Knots([0.5, 0.75]) == [0.5, 0.75], Knots([0.5, 0.75])[-1], Knots([0.5, 0.75])
    (True, 0.75, [0.5, 0.75])
    """

    __slots__ = ("_values", "array")

    def __init__(self, values: Any = ()) -> None:
        array = np.array(values, dtype=np.float64)
        if array.ndim != 1:
            raise InvalidValueError(f"knots must be one-dimensional, got shape {array.shape}")
        array.flags.writeable = False
        self.array = array
        self._values: Optional[list] = None

    @classmethod
    def adopt(cls, array: np.ndarray) -> "Knots":
        """Knots over ``array`` itself, without a copy: for a fresh one-dimensional ``float64``
        array nobody else holds (a kernel's output); it is made read-only."""
        knots = cls.__new__(cls)
        array.flags.writeable = False
        knots.array = array
        knots._values = None
        return knots

    @property
    def values(self) -> list:
        """The knots as a list of floats, made on first use and kept (the array is read-only):
        one call of the calibrator reads a few of them, cheaper from a list than from NumPy."""
        if self._values is None:
            self._values = self.array.tolist()
        return self._values

    def __len__(self) -> int:
        return self.array.size

    def __getitem__(self, index: Any) -> Any:
        return self.array[index].tolist()

    def __iter__(self) -> Any:
        return iter(self.array.tolist())

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, Knots):
            other = other.array
        elif not isinstance(other, (list, tuple, np.ndarray)):
            return NotImplemented
        try:
            other = np.asarray(other, dtype=np.float64)
        except (TypeError, ValueError):
            return False
        return other.shape == self.array.shape and bool(np.array_equal(self.array, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.array.tolist())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.array.astype(dtype or np.float64, copy=bool(copy))

    def __reduce__(self) -> tuple:
        return Knots, (self.array,)

    def tolist(self) -> list:
        return self.array.tolist()


_NO_KNOTS = np.zeros(0)  # an unfitted calibrator's knots, shared read-only (made so by Knots.adopt)


@dataclass
class IsotonicCalibrator:
    """Isotonic (monotonic non-decreasing) calibration via pool-adjacent-violators.

    More flexible than Platt; needs more calibration data and can overfit small sets. Every
    distinct score of the fit is a knot ``(x, y)`` (kept as :class:`Knots`, which compare equal to
    lists); predictions interpolate linearly between knots and are clipped at the ends. Unfitted
    (no knots), it passes scores through.

    >>> cal = IsotonicCalibrator().fit([1, 1, 1, 2, 2, 2, 3, 3, 3], [1, 0, 0, 1, 1, 0, 1, 1, 1])
    >>> cal.x, [round(v, 4) for v in cal.y]
    ([1.0, 2.0, 3.0], [0.3333, 0.6667, 1.0])
    >>> cal(1.5), cal(0.0), cal(9.0)
    (0.5, 0.3333333333333333, 1.0)
    """

    x: Knots = field(default_factory=lambda: Knots.adopt(_NO_KNOTS))
    y: Knots = field(default_factory=lambda: Knots.adopt(_NO_KNOTS))
    kind: str = "isotonic"

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("x", "y") and not isinstance(value, Knots):
            value = Knots(_floats(value, f"IsotonicCalibrator {name}"))
        object.__setattr__(self, name, value)

    def __post_init__(self) -> None:
        x, y = self.x.array, self.y.array
        if x.size == y.size == 0:  # unfitted: nothing to check
            return
        if x.size != y.size:
            raise InvalidValueError(f"IsotonicCalibrator: {x.size} knots in x but {y.size} in y")
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            raise InvalidValueError("IsotonicCalibrator: knots must be finite numbers")
        if (np.diff(x) <= 0).any():
            raise InvalidValueError("IsotonicCalibrator: x must be strictly increasing")

    def fit(self, scores: Sequence[float], correct: Sequence[bool]) -> "IsotonicCalibrator":
        """Fit the monotonic step function to ``(score, correct)`` pairs."""
        x, c = _rows(scores, correct, "IsotonicCalibrator.fit")
        values, levels = isotonic_fit(x, c)
        self.x, self.y = Knots.adopt(values), Knots.adopt(levels)
        _warn_if_small("IsotonicCalibrator.fit", c, min_rows=MIN_ROWS_PER_BIN * DEFAULT_N_BINS)
        return self

    def __call__(self, raw_score: float) -> float:
        s = raw_score if type(raw_score) is float else _real(raw_score, "raw_score")
        x, y = self.x._values, self.y._values  # the knots' lists once made, without the property's call
        if x is None or y is None:
            x, y = self.x.values, self.y.values
        if not x or s != s:  # no knots, or NaN
            return _clip01_checked(s)
        if s <= x[0]:
            return _clip01_checked(y[0])
        if s >= x[-1]:
            return _clip01_checked(y[-1])
        i = bisect.bisect_right(x, s)  # as np.searchsorted(..., side="right") on sorted knots
        x0, x1, y0, y1 = x[i - 1], x[i], y[i - 1], y[i]
        frac = (s - x0) / (x1 - x0) if x1 > x0 else 0.0
        return _clip01_checked(y0 + frac * (y1 - y0))

    def predict(self, scores: Sequence[float]) -> np.ndarray:
        """The calibrated probability of every score, equal to calling the calibrator on each."""
        s = _floats(scores, "scores")
        x, y = self.x.array, self.y.array
        if not x.size:
            return _clip01_array(s)
        if x.size == 1:
            out = np.full_like(s, y[0])
        else:
            i = np.clip(np.searchsorted(x, s, side="right"), 1, x.size - 1)
            x0, x1, y0, y1 = x[i - 1], x[i], y[i - 1], y[i]
            with np.errstate(invalid="ignore"):
                out = y0 + (s - x0) / (x1 - x0) * (y1 - y0)
            out = np.where(s <= x[0], y[0], np.where(s >= x[-1], y[-1], out))
        return _clip01_array(np.where(np.isnan(s), np.nan, out))

    def to_dict(self) -> dict:
        return {"kind": self.kind, "x": self.x.tolist(), "y": self.y.tolist()}

    @classmethod
    def from_dict(cls, d: Mapping) -> "IsotonicCalibrator":
        return cls(x=d["x"], y=d["y"])


# --------------------------------------------------------------------------------------------
# Temperature scaling
# --------------------------------------------------------------------------------------------


def _negative_log_likelihood(z: np.ndarray, c: np.ndarray, temperature: float) -> float:
    """``-sum(log p_observed)`` with ``p = clamp(sigmoid(z / T), 1e-12, 1 - 1e-12)``, block by block."""
    total = 0.0
    size = min(_BLOCK, z.size)
    p_buf = np.empty(size)
    for lo in range(0, z.size, _BLOCK):
        zz, cc = z[lo:lo + _BLOCK], c[lo:lo + _BLOCK]
        p = p_buf[:zz.size]
        np.divide(zz, -temperature, out=p)
        np.exp(p, out=p)
        p += 1.0
        np.reciprocal(p, out=p)
        np.clip(p, _P_CLAMP, 1.0 - _P_CLAMP, out=p)
        total -= float(np.log(np.where(cc, p, 1.0 - p)).sum())
    return total


def _small_negative_log_likelihood(z: list, c: list, temperature: float) -> float:
    """:func:`_negative_log_likelihood` of fewer than ``_NUMPY_SEQUENTIAL_BELOW`` rows, in Python
    with the same operations in the same order (NumPy adds so few left to right); ``exp`` and
    ``log`` are NumPy's (on a scalar, the same loop as on an array; ``math``'s may differ by an ulp)."""
    exp, log, lo, hi = np.exp, np.log, _P_CLAMP, 1.0 - _P_CLAMP
    total = 0.0
    for v, ok in zip(z, c):
        p = 1.0 / (float(exp(v / -temperature)) + 1.0)
        p = min(max(p, lo), hi)  # as np.clip (no NaN here: finite logits, a positive temperature)
        total += float(log(p if ok else 1.0 - p))
    return 0.0 - total


def _golden_section(f: Callable[[float], float], lo: float, hi: float, iterations: int) -> float:
    """The reference's golden-section search for a minimum of ``f`` on ``[lo, hi]``: the midpoint
    of the final bracket. Each point is evaluated once (the reference evaluates both every step)."""
    ratio = (math.sqrt(5) - 1) / 2
    c, d = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fc = fd = None
    for _ in range(iterations):
        fc = f(c) if fc is None else fc
        fd = f(d) if fd is None else fd
        if fc < fd:
            hi, d, fd = d, c, fc
            c, fc = hi - ratio * (hi - lo), None
        else:
            lo, c, fc = c, d, fd
            d, fd = lo + ratio * (hi - lo), None
    return (lo + hi) / 2


@dataclass
class TemperatureCalibrator:
    """Temperature scaling: ``sigmoid(logit / T)`` with one ``T`` fit on a holdout.

    Use **only when you have logits**: ``__call__`` expects a *logit*, not a probability. ``T > 1``
    softens overconfidence; the argmax is unchanged. ``T`` minimises the negative log-likelihood by
    a golden-section search on ``[t_min, t_max]`` with ``max_iter`` steps.

    >>> cal = TemperatureCalibrator().fit([3, 2.5, 2, -1, 4, -3, 1.5, 0.5], [1, 1, 0, 0, 1, 0, 1, 0])
    >>> round(cal.T, 6), round(cal(2.0), 6)
    (1.395725, 0.80736)
    """

    T: float = 1.0
    kind: str = "temperature"
    t_min: float = 0.05
    t_max: float = 10.0
    max_iter: int = 60

    def __post_init__(self) -> None:
        for name in ("T", "t_min", "t_max"):
            value = _finite(getattr(self, name), f"TemperatureCalibrator {name}")
            if value <= 0:
                raise InvalidValueError(f"must be > 0, got {value!r}", field=f"TemperatureCalibrator {name}")
            setattr(self, name, value)
        if self.t_min >= self.t_max:
            raise InvalidValueError(f"TemperatureCalibrator: t_min ({self.t_min!r}) must be below t_max ({self.t_max!r})")
        self.max_iter = _whole(self.max_iter, "TemperatureCalibrator max_iter", minimum=0)

    def fit(self, logits: Sequence[float], correct: Sequence[bool]) -> "TemperatureCalibrator":
        """Fit ``T`` by minimising NLL with a bounded 1-D search."""
        short = _short_rows(logits, correct)
        if short is not None:  # in Python, the same bits
            z, c = short
            nll = _small_negative_log_likelihood
        else:
            z, c = _rows(logits, correct, "TemperatureCalibrator.fit", noun="logits")
            nll = _negative_log_likelihood
        with np.errstate(over="ignore"):
            self.T = _golden_section(lambda t: nll(z, c, t), self.t_min, self.t_max, self.max_iter)
        _warn_if_small("TemperatureCalibrator.fit", c)
        return self

    def __call__(self, logit: float) -> float:
        z = logit if type(logit) is float else _real(logit, "logit")
        return _clip01_checked(_sigmoid(z / self.T))

    def predict(self, logits: Sequence[float]) -> np.ndarray:
        """The calibrated probability of every logit (see :meth:`PlattCalibrator.predict`)."""
        with np.errstate(invalid="ignore"):
            return _clip01_array(_sigmoid_array(_floats(logits, "logits") / self.T))

    def to_dict(self) -> dict:
        return {"kind": self.kind, "T": self.T}

    @classmethod
    def from_dict(cls, d: Mapping) -> "TemperatureCalibrator":
        return cls(T=d["T"])


_BUILT_IN = (PlattCalibrator, IsotonicCalibrator, TemperatureCalibrator)


# --------------------------------------------------------------------------------------------
# Mondrian (per-group) calibration
# --------------------------------------------------------------------------------------------


def accepts_group(cal: Any) -> bool:
    """Whether ``cal`` (a calibrator, or any callable such as a gate) takes a ``group=`` keyword
    (a parameter of that name in its signature): the Mondrian capability check."""
    if isinstance(cal, (GroupCalibrator, SignalFamilyCalibrator)):
        return True
    if isinstance(cal, _BUILT_IN):
        return False
    try:
        return "group" in inspect.signature(cal).parameters
    except (TypeError, ValueError):
        return False


def _record(cal: Any, owner: str, what: str) -> dict:
    to_dict = getattr(cal, "to_dict", None)
    if not callable(to_dict):
        raise InvalidTypeError(f"{owner}: the calibrator of {what} ({describe(cal)}) has no to_dict(), "
                               "so it cannot be saved")
    return to_dict()


_MISSING = object()


@dataclass
class GroupCalibrator:
    """Per-group (Mondrian) calibration: one calibrator per ``NodeType``/``FieldSpec``.

    Distribution-free *conditional* (per-field-type) coverage is impossible in general (Barber
    et al. 2019); calibrating separately per group restores it approximately. ``fit`` takes a
    parallel ``groups`` sequence and fits ``factory()`` per group plus a pooled one on every row;
    ``__call__`` routes by ``group=``, falling back to the pooled calibrator for unseen groups.

    >>> gc = GroupCalibrator().fit([0.9] * 20 + [0.2] * 20,
    ...                            [i < 10 for i in range(20)] + [i < 16 for i in range(20)],
    ...                            groups=["a"] * 20 + ["b"] * 20)
    >>> round(gc(0.9, group="a"), 4), round(gc(0.2, group="b"), 4), round(gc(0.5), 4)  # gc(0.5): pooled
    (0.5, 0.7889, 0.6812)
    """

    factory: Callable[[], Any] = PlattCalibrator
    by_group: dict = field(default_factory=dict)
    pooled: Any = None
    kind: str = "group"

    def fit(self, scores: Sequence[float], correct: Sequence[bool], *, groups: Sequence[Any]) -> "GroupCalibrator":
        """Fit one calibrator per distinct group key (first-appearance order), plus a pooled fallback."""
        owner = "GroupCalibrator.fit"
        x, c, groups = _floats(scores, "scores"), _labels(correct), _sequence(groups, "groups")
        _same_length(owner, x.size, c.size)
        if len(groups) != x.size:
            raise InvalidValueError(f"{owner}: {x.size} scores but {len(groups)} groups; each row needs its group")
        index: dict = {}
        ids = np.empty(x.size, dtype=np.intp)
        for i, g in enumerate(groups):
            try:
                ids[i] = index.setdefault(g, len(index))
            except TypeError:
                raise InvalidTypeError(f"is {describe(g)}, which cannot be a group key (unhashable)",
                                       field=f"groups[{i}]") from None
        order = np.argsort(ids, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(ids, minlength=len(index)))))
        by_group, small = {}, []
        for k, key in enumerate(index):
            rows = order[bounds[k]:bounds[k + 1]]
            by_group[key], flagged = _fit_quietly(self.factory, x[rows], c[rows])
            if flagged:
                small.append(key)
        pooled, flagged = _fit_quietly(self.factory, x, c)
        self.by_group, self.pooled = by_group, pooled
        _warn_small_parts(owner, "groups", small + (["(pooled)"] if flagged else []))
        return self

    def __call__(self, raw_score: float, *, group: Any = None) -> float:
        try:
            cal = self.by_group.get(group, _MISSING)
            if cal is _MISSING and group is not None and not isinstance(group, str):
                cal = self.by_group.get(str(group), _MISSING)  # keys are strings after a save and load
        except TypeError:
            raise InvalidTypeError(f"is {describe(group)}, which cannot be a group key (unhashable)",
                                   field="group") from None
        if cal is _MISSING:
            cal = self.pooled
        if cal is None:
            return _clip01_checked(_real(raw_score, "raw_score"))
        return cal(raw_score)

    def to_dict(self) -> dict:
        """Serialize each per-group calibrator (keyed by stringified group) plus the pooled
        fallback. Group keys become strings; two keys with the same string are refused."""
        owner = "GroupCalibrator.to_dict"
        by_group: dict = {}
        first: dict = {}
        for key, cal in self.by_group.items():
            name = str(key)
            if name in by_group:
                raise InvalidValueError(f"{owner}: groups {first[name]!r} and {key!r} would both be saved as {name!r}")
            first[name] = key
            by_group[name] = _record(cal, owner, f"group {key!r}")
        pooled = None if self.pooled is None else _record(self.pooled, owner, "the pooled rows")
        return {"kind": self.kind, "by_group": by_group, "pooled": pooled}

    @classmethod
    def from_dict(cls, d: Mapping) -> "GroupCalibrator":
        return cls(by_group=_from_records(d, "by_group"), pooled=_from_optional_record(d.get("pooled")))


# --------------------------------------------------------------------------------------------
# Combiners and per-signal-family calibration
# --------------------------------------------------------------------------------------------


def _probabilities_of(probs: Any, owner: str) -> list:
    if not isinstance(probs, Mapping):
        raise InvalidTypeError(f"{owner} takes a mapping of signal name to calibrated probability, "
                               f"got {describe(probs)}")
    if not probs:
        raise InvalidValueError(f"{owner}: no calibrated probabilities to combine")
    values = []
    for name, p in probs.items():
        v = p if type(p) is float else _real(p, f"{owner} {name!r}")  # the label only when needed
        if not 0.0 <= v <= 1.0:
            raise InvalidValueError(f"{owner}: {name!r} is {p!r}, not a probability in [0, 1] (calibrate it first)")
        values.append(v)
    return values


def mean_probability(probs: Mapping[str, float]) -> float:
    """Fuse calibrated per-family probabilities by their mean (the default combiner).

    Each family's calibrated value estimates the *same* event ("this field is correct"), so the
    mean is a defensible, assumption-light pooling rule.

    >>> mean_probability({"judge": 0.9, "logprob": 0.7})
    0.8
    """
    core = _kernels.compiled()
    if core is not None:  # a dict of floats in [0, 1], read and added in one compiled pass
        mean = core.fuse_probabilities(probs, False)
        if mean is not None:
            return mean
    values = _probabilities_of(probs, "mean_probability")
    return sum(values) / len(values)


def min_probability(probs: Mapping[str, float]) -> float:
    """Fuse calibrated per-family probabilities by their minimum (conservative).

    Use when any one family flagging a problem should be enough to lower the gate.

    >>> min_probability({"judge": 0.9, "logprob": 0.7})
    0.7
    """
    core = _kernels.compiled()
    if core is not None:  # as in mean_probability
        least = core.fuse_probabilities(probs, True)
        if least is not None:
            return least
    return min(_probabilities_of(probs, "min_probability"))


def _combiner_name(combine: Any) -> Optional[str]:
    return next((name for name in names("combiners") if get("combiners", name) is combine), None)


def _combiner(name: Any) -> Callable[[Mapping[str, float]], float]:
    known = sorted(names("combiners"))
    if not isinstance(name, str) or name not in known:
        raise InvalidValueError(f"unknown combiner {name!r}; known: {known}")
    return get("combiners", name)


def _calibrate_each(calibrators: Mapping, raw_signals: Any, group: Any) -> dict:
    if not isinstance(raw_signals, Mapping):
        raise InvalidTypeError(f"raw signals must be a mapping of signal name to raw score, got {describe(raw_signals)}")
    out = {}
    for name, raw in raw_signals.items():
        cal = calibrators.get(name)
        if cal is None:
            cal = calibrators.get("*")
        if cal is None:
            raise InvalidValueError(
                f"SignalFamilyCalibrator: no calibrator for signal {name!r} (have {sorted(calibrators, key=str)}). "
                "Add one for it, or a '*' fallback -- an uncalibrated signal must not be fused (Hard Rule 1).")
        out[name] = cal(raw, group=group) if group is not None and accepts_group(cal) else cal(raw)
    return out


@dataclass
class SignalFamilyCalibrator:
    """One calibrator per signal family, fused by a documented combination rule.

    Averaging heterogeneous raw signals (an LLM-judge score, a token logprob, a ROVER agreement)
    and calibrating the mean discards what a calibrator needs: each family has its own scale,
    reliability and direction of miscalibration. This calibrates every signal *by name* with its
    own calibrator (``calibrators``; ``"*"`` is the fallback, and a signal with neither is refused),
    fuses the calibrated probabilities with ``combine`` (:func:`mean_probability` or
    :func:`min_probability`, or any callable of that shape), then applies ``fusion``, a
    second-stage calibrator learned by :meth:`fit` on the fused values: a mean or min of calibrated
    probabilities is not itself calibrated. A value from a single family is returned as is.
    ``factory`` makes the calibrators :meth:`fit` trains.

    >>> rows = [{"judge": j, "logprob": l} for j, l in
    ...         [(0.9, -0.1), (0.8, -0.2), (0.85, -2.0), (0.3, -0.1), (0.2, -2.5), (0.7, -1.8)]]
    >>> correct = [True, True, False, True, False, False]
    >>> cal = SignalFamilyCalibrator().fit(rows, correct)
    >>> sorted(cal.calibrators)
    ['judge', 'logprob']
    >>> round(cal({"judge": 0.9, "logprob": -0.1}), 4), round(cal({"judge": 0.9}), 4)
    (0.8204, 0.546)
    """

    calibrators: dict = field(default_factory=dict)
    combine: Callable[[Mapping[str, float]], float] = mean_probability
    factory: Callable[[], Any] = PlattCalibrator
    fusion: Any = None
    kind: str = "signal_family"

    def calibrate_signals(self, raw_signals: Mapping[str, float], *, group: Any = None) -> dict:
        """``{name: calibrated probability}`` for each raw signal (before fusion); a group-aware
        family calibrator receives ``group=`` when one is given."""
        return _calibrate_each(self.calibrators, raw_signals, group)

    def fuse(self, calibrated: Mapping[str, float]) -> float:
        """Fuse per-family calibrated probabilities: ``combine``, then ``fusion``. A single family's
        value is returned as is: it is already calibrated, and ``fusion`` was learned on fused values."""
        if isinstance(calibrated, Mapping) and len(calibrated) == 1:
            return next(iter(calibrated.values()))
        fused = self.combine(calibrated)
        return self.fusion(fused) if self.fusion is not None else fused

    def __call__(self, raw_signals: Mapping[str, float], *, group: Any = None) -> float:
        """Calibrate each signal family, then :meth:`fuse` them."""
        return self.fuse(self.calibrate_signals(raw_signals, group=group))

    def fit(self, signals: Sequence[Mapping[str, float]], correct: Sequence[bool]) -> "SignalFamilyCalibrator":
        """Fit one calibrator per signal name, then the ``fusion`` calibrator.

        Each family is fit over the rows where it appears with a finite value. A family with fewer
        than two such rows, or only one label class, cannot be calibrated and is refused
        (``ValueError``) rather than turned into a constant that would dilute the fusion. The
        fusion calibrator learns from the rows with two or more finite families.
        """
        owner = "SignalFamilyCalibrator.fit"
        rows, labels = _sequence(signals, "signals"), _labels(correct)
        _same_length(owner, len(rows), labels.size, "signal rows")
        if not rows:
            raise InvalidValueError(f"{owner}: no labelled rows to fit on")
        families: dict = {}  # name -> (row indices, raw values), in first-appearance order
        finite_rows = []
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise InvalidTypeError(f"is {describe(row)}, not a mapping of signal name to raw score",
                                       field=f"signals[{i}]")
            finite = {}
            for name, raw in row.items():
                value = _real(raw, f"signals[{i}][{name!r}]")
                family = families.setdefault(name, ([], []))
                family[0].append(i)
                family[1].append(value)
                if math.isfinite(value):
                    finite[name] = value
            finite_rows.append(finite)
        data = {name: (np.array(values), labels[np.array(index, dtype=np.intp)])
                for name, (index, values) in families.items()}
        unfit = [name for name, (x, c) in data.items() if _cannot_calibrate(x, c)]
        if unfit:
            raise InvalidValueError(
                f"{owner}: cannot calibrate signal(s) {sorted(unfit, key=str)}: each needs at least two finite "
                "scores covering both outcomes (correct and not). Drop them or label more rows.")
        calibrators, small = {}, []
        for name, (x, c) in data.items():
            calibrators[name], flagged = _fit_quietly(self.factory, x, c)
            if flagged:
                small.append(name)
        fused, fused_labels = [], []
        for i, (finite, label) in enumerate(zip(finite_rows, labels.tolist())):
            if len(finite) >= 2:
                fused.append(_real(self.combine(_calibrate_each(calibrators, finite, None)),
                                   f"the combined value of signals[{i}]"))
                fused_labels.append(label)
        fusion = None
        if len(fused) >= 2 and 0 < sum(fused_labels) < len(fused_labels):
            fusion, flagged = _fit_quietly(self.factory, np.array(fused, dtype=np.float64), np.array(fused_labels))
            if flagged:
                small.append("(fusion)")
        self.calibrators, self.fusion = calibrators, fusion
        _warn_small_parts(owner, "signal families", small)
        return self

    def to_dict(self) -> dict:
        """Serialize every family's calibrator, the (registered) combiner's name and the fusion."""
        owner = "SignalFamilyCalibrator.to_dict"
        combine = _combiner_name(self.combine)
        if combine is None:
            raise InvalidValueError(f"{owner}: only a registered combiner ({names('combiners')}) can be persisted; "
                                    f"got {self.combine!r}")
        return {"kind": self.kind,
                "calibrators": {name: _record(cal, owner, f"signal {name!r}") for name, cal in self.calibrators.items()},
                "combine": combine,
                "fusion": None if self.fusion is None else _record(self.fusion, owner, "the fusion")}

    @classmethod
    def from_dict(cls, d: Mapping) -> "SignalFamilyCalibrator":
        return cls(calibrators=_from_records(d, "calibrators"), combine=_combiner(d.get("combine", "mean")),
                   fusion=_from_optional_record(d.get("fusion")))


def _cannot_calibrate(x: np.ndarray, c: np.ndarray) -> bool:
    c = c[np.isfinite(x)]
    return c.size < 2 or c.all() or not c.any()


# --------------------------------------------------------------------------------------------
# Measuring calibration
# --------------------------------------------------------------------------------------------


def _plain_short(probs: Any, correct: Any) -> bool:
    """Whether ``probs`` and ``correct`` are lists of fewer than ``_SMALL_ROWS`` floats and as many
    bools: inputs the small-input paths read in Python."""
    return (type(probs) is list and type(correct) is list and len(probs) == len(correct) < _SMALL_ROWS
            and {*map(type, probs)} <= _FLOAT and {*map(type, correct)} <= _BOOL)


def _small_binned(probs: list, correct: list, n_bins: int) -> tuple[list, list, list, int]:
    """:func:`_binned` in Python, as lists: each row's bin as NumPy computes it, and each bin's sums
    added in row order as ``np.bincount`` adds them, so the same bits."""
    counts: dict[int, int] = {}
    sums: dict[int, float] = {}
    hits: dict[int, float] = {}
    isfinite, last = math.isfinite, n_bins - 1
    for x, ok in zip(probs, correct):
        if not isfinite(x):
            continue
        if x < 0.0:  # min(max(x, 0.0), 1.0), as np.clip
            x = 0.0
        elif x > 1.0:
            x = 1.0
        b = int(x * n_bins)
        if b > last:
            b = last
        if b in counts:
            counts[b] += 1
            sums[b] += x
            hits[b] += ok
        else:
            counts[b], sums[b], hits[b] = 1, 0.0 + x, 0.0 + ok
    used = sorted(counts)
    return [counts[b] for b in used], [sums[b] for b in used], [hits[b] for b in used], sum(counts.values())


def _binned(probs: Any, correct: Any, n_bins: Any, owner: str, *, what: str = "n_bins"):
    """Per non-empty bin (ascending): row count, sum of probabilities, number correct; and the
    number of rows. Non-finite probabilities are skipped, the others clamped into ``[0, 1]``."""
    n_bins = _whole(n_bins, what, minimum=1)
    if n_bins > 2**53:
        raise InvalidValueError(f"must be at most 2**53, got {n_bins}", field=what)
    core = _kernels.compiled()
    if core is not None:  # lists of floats and bools, binned in one compiled pass
        binned = core.listed_bins(probs, correct, n_bins)
        if binned is not None:
            return binned
    elif _plain_short(probs, correct):
        return _small_binned(probs, correct, n_bins)
    p, c = _rows(probs, correct, owner, noun="probs")
    p = np.clip(p, 0.0, 1.0)
    index = np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    if n_bins > max(4 * p.size, 4096):  # few rows in many bins: count only the bins in use
        _, index = np.unique(index, return_inverse=True)
    counts = np.bincount(index)
    used = counts > 0
    sums = np.bincount(index, weights=p)[used]
    hits = np.bincount(index, weights=c)[used]
    return counts[used], sums, hits, p.size


def expected_calibration_error(probs: Sequence[float], correct: Sequence[bool], *, n_bins: int = DEFAULT_N_BINS) -> float:
    """Expected Calibration Error: weighted mean gap between confidence and accuracy.

    Bins predictions by confidence into ``n_bins`` equal-width bins (``p = 1`` in the last) and
    averages ``|mean_confidence - accuracy|`` weighted by bin population. ``0`` is perfect.
    Non-finite probs are skipped; out-of-range probs are clamped into ``[0, 1]``.

    >>> expected_calibration_error([0.75, 0.75, 0.25, 0.25], [True, False, False, False])
    0.25
    """
    counts, sums, hits, n = _binned(probs, correct, n_bins, "expected_calibration_error")
    if n == 0:
        return 0.0
    if isinstance(counts, list):  # the small path's bins: the same operations, left to right
        total = 0.0
        for k, s, h in zip(counts, sums, hits):
            total += (k / n) * abs(s / k - h / k)
        return total
    terms = (counts / n) * np.abs(sums / counts - hits / counts)
    return float(np.add.accumulate(terms)[-1])  # the reference's left-to-right sum


def reliability_curve(probs: Sequence[float], correct: Sequence[bool], *, n_bins: int = DEFAULT_N_BINS) -> list:
    """Per-bin ``{confidence, accuracy, count}`` for a reliability diagram (non-empty bins, ascending).

    >>> reliability_curve([1.5, -0.2, 0.35], [True, False, True], n_bins=4)  # doctest: +NORMALIZE_WHITESPACE
    [{'confidence': 0.0, 'accuracy': 0.0, 'count': 1}, {'confidence': 0.35, 'accuracy': 1.0, 'count': 1},
     {'confidence': 1.0, 'accuracy': 1.0, 'count': 1}]
    """
    counts, sums, hits, _ = _binned(probs, correct, n_bins, "reliability_curve")
    if not isinstance(counts, list):
        counts, sums, hits = counts.tolist(), sums.tolist(), hits.tolist()
    return [{"confidence": s / k, "accuracy": h / k, "count": k} for k, s, h in zip(counts, sums, hits)]


# --------------------------------------------------------------------------------------------
# Library-backed (the ``calibration`` extra)
# --------------------------------------------------------------------------------------------


@requires_extra("calibration", packages=["netcal"])
def netcal_ece(probs: Sequence[float], correct: Sequence[bool], *, bins: int = DEFAULT_N_BINS) -> float:
    """ECE via ``netcal`` (behind the ``calibration`` extra); D-ECE for localized outputs lives there too.

    The rows are read as :func:`expected_calibration_error` reads them; netcal bins the
    predicted-class confidence, so the two need not agree.
    """
    from netcal.metrics import ECE

    bins = _whole(bins, "bins", minimum=1)
    p, c = _rows(probs, correct, "netcal_ece", noun="probs")
    return float(ECE(bins).measure(np.clip(p, 0.0, 1.0), c.astype(np.int64)))


class _SklearnCalibrator:
    """A calibrator backed by scikit-learn: ``LogisticRegression()`` (Platt, ``"sigmoid"``) or
    ``IsotonicRegression(out_of_bounds="clip")`` (``"isotonic"``), fit on the same checked rows
    as the built-in calibrators. Not persistable (no ``to_dict``)."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.model: Any = None

    def __repr__(self) -> str:
        return f"sklearn_calibrator(method={self.method!r}){'' if self.model is not None else ' (not fitted)'}"

    def fit(self, scores: Sequence[float], correct: Sequence[bool]) -> "_SklearnCalibrator":
        owner = f"sklearn_calibrator({self.method!r}).fit"
        x, c = _rows(scores, correct, owner)
        reason = _smallness(c)
        if x.size == 0 or (self.method == "sigmoid" and (c.all() or not c.any())):
            raise InvalidValueError(f"{owner}: scikit-learn cannot fit this set: {reason}")
        if self.method == "isotonic":
            from sklearn.isotonic import IsotonicRegression

            self.model = IsotonicRegression(out_of_bounds="clip").fit(x, c.astype(np.float64))
        else:
            from sklearn.linear_model import LogisticRegression

            self.model = LogisticRegression().fit(x.reshape(-1, 1), c.astype(np.int64))
        _warn_if_small(owner, c)
        return self

    def __call__(self, raw_score: float) -> float:
        s = _real(raw_score, "raw_score")
        if math.isnan(s):
            return _clip01_checked(s)
        if self.model is None:
            raise InvalidValueError(f"{self!r} is not fitted: call fit() first")
        if not math.isfinite(s):
            raise InvalidValueError(f"must be finite for scikit-learn, got {s!r}", field="raw_score")
        if self.method == "isotonic":
            return _clip01_checked(float(self.model.predict([s])[0]))
        return _clip01_checked(float(self.model.predict_proba([[s]])[0, 1]))


@requires_extra("calibration", packages=["sklearn"])
def sklearn_calibrator(method: str = "sigmoid") -> _SklearnCalibrator:
    """A calibrator backed by scikit-learn (``method='sigmoid'`` Platt or ``'isotonic'``).

    Behind the ``calibration`` extra. Returns an object satisfying the
    :class:`~scorekit.base.Calibrator` protocol that wraps sklearn's calibration. The dependency-free
    :class:`PlattCalibrator`/:class:`IsotonicCalibrator` are the defaults; use this for parity
    with an sklearn-centric stack.
    """
    if method not in ("sigmoid", "isotonic"):
        raise InvalidValueError(f"must be 'sigmoid' or 'isotonic', got {method!r}", field="method")
    return _SklearnCalibrator(method)


# --------------------------------------------------------------------------------------------
# Persistence (the "calibrators" store)
# --------------------------------------------------------------------------------------------


def _kind_class(kind: Any, where: str = "") -> Any:
    known = sorted(names("calibrators"))
    if not isinstance(kind, str) or kind not in known:
        raise InvalidValueError(f"unknown calibrator kind {kind!r}{where}; known: {known}")
    return get("calibrators", kind)


def _from_record(record: Any) -> Any:
    """A calibrator rebuilt from its ``to_dict`` record, dispatched on ``kind``."""
    if not isinstance(record, Mapping) or "kind" not in record:
        raise InvalidValueError(f"calibrator record is malformed (no 'kind'): {describe(record, 200)}")
    return _kind_class(record["kind"]).from_dict(record)


def _from_optional_record(record: Any) -> Any:
    return _from_record(record) if record else None


def _from_records(d: Mapping, key: str) -> dict:
    """The calibrators of the mapping ``d[key]`` (name -> record), rebuilt; missing means none."""
    records = d.get(key) or {}
    if not isinstance(records, Mapping):
        raise InvalidValueError(f"{key!r} must map names to calibrator records, got {describe(records)}")
    return {name: _from_record(record) for name, record in records.items()}


def save_calibrator(calibrator: Any, name: str, *, rootdir: Optional[str] = None) -> dict:
    """Persist a fitted calibrator's parameters (its ``to_dict()``) to the ``calibrators`` store, as
    ``<root>/calibrators/<name>.json``; returns the record. A corrupted file already there is
    left as it is and reported."""
    to_dict = getattr(calibrator, "to_dict", None)
    if not callable(to_dict):
        raise InvalidTypeError(f"save_calibrator: {describe(calibrator)} has no to_dict(), so it cannot be saved")
    record = to_dict()
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        raise InvalidValueError(f"save_calibrator: to_dict() must return a dict with a 'kind', got {describe(record, 200)}")
    store = json_store("calibrators", rootdir=rootdir)
    if store.path(name).exists():
        try:
            store[name]
        except CorruptStoreFileError as exc:
            raise CorruptStoreFileError(f"{exc}; save_calibrator does not replace it: move or delete the file, "
                                        "then save again") from None
    store[name] = record
    return record


def load_calibrator(name: str, *, rootdir: Optional[str] = None) -> Any:
    """Reconstruct a persisted calibrator by name (dispatched on its ``kind``).

    Validates the stored record so a malformed or unknown ``kind`` fails with an actionable error
    rather than a raw ``KeyError`` or a load-then-crash-later; a missing name raises
    :class:`CalibratorNotFoundError` (a ``KeyError``), a file that is not JSON
    :class:`~scorekit.stores.CorruptStoreFileError` naming its path.
    """
    store = json_store("calibrators", rootdir=rootdir)
    try:
        record = store[name]
    except KeyError:
        raise CalibratorNotFoundError(f"no calibrator saved as {name!r} in {store.folder}") from None
    if not isinstance(record, dict) or "kind" not in record:
        raise InvalidValueError(f"calibrator record {name!r} is malformed (no 'kind'): {describe(record, 200)}")
    cls = _kind_class(record["kind"], f" in {name!r}")
    try:
        return cls.from_dict(record)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidValueError(f"calibrator record {name!r} is missing/invalid fields: {exc}") from None


for _kind, _cls in (("platt", PlattCalibrator), ("isotonic", IsotonicCalibrator), ("temperature", TemperatureCalibrator),
                    ("group", GroupCalibrator), ("signal_family", SignalFamilyCalibrator)):
    register("calibrators", _kind, _cls)
register("combiners", "mean", mean_probability)
register("combiners", "min", min_probability)
