"""Statistics shared by every comparison scorekit reports: the percentile bootstrap, the exact sign
test and the paired comparison of two systems scored on the same items.

One module for the agents' A/B comparison (:func:`scorekit.agents.compare_agents`), the cases
benchmark's ``--compare`` and the OCR engine comparison of ``scorekit ocr-eval``. The bootstrap's
resampling stream is CPython's ``random.Random(seed).randrange`` (so stored intervals are
reproducible); the mean and ratio-of-sums statistics run in the compiled bootstrap kernel
(``scorekit._kernels.bootstrap``), any other callable gets the same resamples one by one.

>>> d = paired_difference([0.9, 0.8, 0.7, 1.0], [0.5, 0.8, 0.6, 0.9], resamples=200)
>>> round(d.mean_diff, 4), (d.n_higher, d.n_lower, d.n_equal), d.p_value
(0.15, (3, 0, 1), 0.25)
>>> d.ci_low <= d.mean_diff <= d.ci_high
True
"""

from __future__ import annotations

import math
import numbers
import operator
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Union

import numpy as np

from scorekit._kernels import bootstrap
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError, describe

__all__ = ["DEFAULT_BOOTSTRAP_RESAMPLES", "bootstrap_ci", "sign_test", "MAX_SIGNS", "PairedDifference",
           "paired_difference"]

DEFAULT_BOOTSTRAP_RESAMPLES = 2000

# Resampled values held at once by the vectorised bootstrap (bounds its memory to a few tens of MB).
_CHUNK_CELLS = 1 << 21


def _index_chunks(n: int, resamples: int, seed: Any) -> Iterable[np.ndarray]:
    """``randrange(n)`` draws of ``random.Random(seed)``, as ``(rows, n)`` blocks of resamples.

    CPython's ``randrange(n)`` keeps the top ``n.bit_length()`` bits of each 32-bit MT19937 word
    and rejects values ``>= n``; rejection only skips words, so the accepted words in order are
    exactly the reference's index stream. NumPy's MT19937 is started from ``Random(seed)``'s state.
    """
    state = random.Random(seed).getstate()[1]
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937",
                  "state": {"key": np.array(state[:624], dtype=np.uint32), "pos": state[624]}}
    shift = np.uint64(32 - n.bit_length())
    accept = n / 2.0 ** n.bit_length()
    rows = max(1, _CHUNK_CELLS // n)
    pending = np.empty(0, dtype=np.uint64)
    done = 0
    while done < resamples:
        take = min(rows, resamples - done)
        need = take * n
        parts = [pending]
        have = pending.size
        while have < need:
            draws = bits.random_raw(int((need - have) / accept * 1.02) + 64) >> shift
            draws = draws[draws < n]
            parts.append(draws)
            have += draws.size
        stream = np.concatenate(parts) if len(parts) > 1 else pending
        yield stream[:need].astype(np.intp).reshape(take, n)
        pending = stream[need:]
        done += take


def bootstrap_ci(values: Iterable[Any], statistic: Union[str, Callable[[list], float]], *,
                 resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES, alpha: float = 0.05,
                 seed: Any = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` over ``values``, deterministic by ``seed``.

    ``statistic`` is a callable taking the resampled list, or one of the vectorised names:
    ``"mean"`` (``sum(v) / len(v)``) and ``"ratio"`` (``values`` are ``(cost, successes)`` pairs;
    ``sum(cost) / sum(successes)``, ``inf`` for a resample without a success). All three draw
    the same resamples as ``random.Random(seed)``; ``seed=None`` uses OS entropy. Empty ``values``
    give ``(nan, nan)``.

    >>> lo, hi = bootstrap_ci([1.0] * 20, lambda v: sum(v) / len(v), resamples=50)
    >>> lo == hi == 1.0
    True
    >>> bootstrap_ci([0, 1, 1, 0, 1], "mean", resamples=10)
    (0.2, 1.0)
    """
    resamples = operator.index(resamples)
    if resamples < 1:
        raise ValueError(f"bootstrap_ci: resamples must be >= 1, got {resamples}")
    if not 0 <= alpha <= 1:
        raise ValueError(f"bootstrap_ci: alpha must be in [0, 1], got {alpha}")
    if not isinstance(values, np.ndarray):
        values = list(values)
    if len(values) == 0:
        return (math.nan, math.nan)
    if statistic == "mean" and _sums_like_python(values):
        data = _float_column(values, "mean", 1)
        return _percentiles(bootstrap.resample_means(data, seed, resamples), alpha)
    if statistic == "ratio" and _sums_like_python(values, columns=2):
        data = _float_column(values, "ratio", 2)
        return _percentiles(bootstrap.resample_ratios(data[:, 0], data[:, 1], seed, resamples), alpha)
    stat = _PYTHON_STATISTICS.get(statistic, statistic) if isinstance(statistic, str) else statistic
    if not callable(stat):
        raise TypeError(
            f"bootstrap_ci: statistic must be a callable, 'mean' or 'ratio'; got {statistic!r}")
    values = list(values)
    n = len(values)
    stats = [stat([values[i] for i in row])
             for idx in _index_chunks(n, resamples, seed) for row in idx.tolist()]
    if any(s != s for s in stats):
        raise ValueError("bootstrap_ci: the statistic returned NaN; the percentiles would be meaningless")
    stats.sort()
    lo, hi = _percentile_indices(resamples, alpha)
    return (stats[lo], stats[hi])


def _python_ratio(sample: list) -> float:
    wins = sum(w for _, w in sample)
    return math.inf if wins <= 0 else sum(c for c, _ in sample) / wins


# The statistics the kernel computes, as Python computes them (for the inputs it cannot take).
_PYTHON_STATISTICS = {"mean": lambda sample: sum(sample) / len(sample), "ratio": _python_ratio}


def _sums_like_python(values: Any, columns: int = 1) -> bool:
    """Whether the kernel's float sums of ``values`` (of each column of ``(cost, wins)`` pairs
    when ``columns == 2``) are bit-identical to ``sum``'s. ``sum`` adds ints exactly and, from
    Python 3.12 on, compensates runs of exact floats only; the kernel adds float64 values, plainly
    or compensated as this Python does. So: floats (exact ``float`` from 3.12 on) or ints whose
    magnitudes add up below 2**53, and not both from 3.12 on."""
    if isinstance(values, np.ndarray):
        return True
    try:
        cols = [values] if columns == 1 else [list(map(operator.itemgetter(i), values))
                                              for i in range(columns)]
    except (TypeError, IndexError):
        return True  # not pairs: the kernel's input check names the problem
    for col in cols:
        kinds = set(map(type, col))
        if not all(issubclass(kind, numbers.Real) for kind in kinds):
            return True  # not numbers: the kernel's input check names the problem
        ints = kinds & {int, bool}
        floats = kinds - ints
        if bootstrap.COMPENSATED and (floats - {float} or (floats and ints)):
            return False
        if not all(issubclass(kind, float) for kind in floats):
            return False
        if ints and sum(map(abs, col if not floats else (x for x in col if type(x) in ints))) >= 2 ** 53:
            return False
    return True


def _float_column(values: Any, statistic: str, width: int) -> np.ndarray:
    try:
        data = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"bootstrap_ci(statistic={statistic!r}) takes numbers") from None
    if width == 1 and data.ndim != 1:
        raise TypeError("bootstrap_ci(statistic='mean') takes a flat sequence of numbers")
    if width == 2 and (data.ndim != 2 or data.shape[1] != 2):
        raise TypeError("bootstrap_ci(statistic='ratio') takes (cost, successes) pairs")
    if np.isnan(data).any():
        raise ValueError("bootstrap_ci: values contain NaN; the percentiles would be meaningless")
    return data


def _percentile_indices(resamples: int, alpha: float) -> tuple[int, int]:
    return int((alpha / 2) * resamples), min(resamples - 1, int((1 - alpha / 2) * resamples))


def _percentiles(stats: np.ndarray, alpha: float) -> tuple[float, float]:
    """The percentile pair of the sorted statistics (the kernels never give NaN for NaN-free
    values, except ``inf - inf``)."""
    if np.isnan(stats).any():
        raise ValueError("bootstrap_ci: the statistic returned NaN (inf - inf); the percentiles "
                         "would be meaningless")
    stats.sort()
    lo, hi = _percentile_indices(len(stats), alpha)
    return (float(stats[lo]), float(stats[hi]))


#: Most signs (``n_plus + n_minus``) :func:`sign_test` takes: its exact tail takes about a second
#: at this size and grows with the square of it (``sign_test(2**62, 2**62)`` would never finish).
MAX_SIGNS = 100_000


def sign_test(n_plus: int, n_minus: int) -> float:
    """Exact two-sided sign test: the probability, under a fair coin, of a split of
    ``n_plus + n_minus`` signs at least as uneven as the one seen (ties are left out beforehand).

    ``min(1, 2 * P(X <= min(n_plus, n_minus)))`` for ``X ~ Binomial(n_plus + n_minus, 1/2)``, from
    exact integer binomials and one correctly rounded division; ``1.0`` when there are no signs.
    More than :data:`MAX_SIGNS` signs raise :class:`~scorekit.errors.InputTooLargeError`.

    >>> sign_test(3, 1)                 # 2 * (1 + 4) / 16
    0.625
    >>> sign_test(10, 0), sign_test(0, 0)
    (0.001953125, 1.0)
    """
    n_plus, n_minus = _count(n_plus, "n_plus"), _count(n_minus, "n_minus")
    n = n_plus + n_minus
    if n > MAX_SIGNS:
        raise InputTooLargeError(f"n_plus + n_minus is above MAX_SIGNS={MAX_SIGNS:,} signs: the exact tail would "
                                 "take minutes or never finish")
    tail, term = 0, 1                   # term = C(n, i)
    for i in range(min(n_plus, n_minus) + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    return float(min(Fraction(2 * tail, 2 ** n), Fraction(1)))


def _count(x: Any, name: str) -> int:
    try:
        x = operator.index(x)
    except TypeError:
        raise InvalidTypeError(f"must be an integer, got {describe(x)}", field=name) from None
    if x < 0:
        raise InvalidValueError(f"must be >= 0, got {x}", field=name)
    return x


@dataclass(frozen=True)
class PairedDifference:
    """Two systems scored on the same ``n`` items, compared item by item (``a - b``).

    ``mean_diff`` is the mean of the per-item differences and ``(ci_low, ci_high)`` its paired
    percentile bootstrap interval at ``confidence`` (items resampled together, so both systems see
    the same resample). ``n_higher`` / ``n_lower`` / ``n_equal`` count the items where ``a``'s
    score is above / below / equal to ``b``'s; ``p_value`` is the exact two-sided sign test over
    the items that differ. Whether higher is better (accuracy) or worse (an error rate) is the
    caller's to say.
    """

    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    ci_low: float
    ci_high: float
    n_higher: int
    n_lower: int
    n_equal: int
    p_value: float
    confidence: float
    resamples: int

    def as_dict(self) -> dict:
        """The fields as a JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def paired_difference(a: Sequence[float], b: Sequence[float], *, resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
                      alpha: float = 0.05, seed: Any = 0) -> PairedDifference:
    """Compare per-item scores ``a[i]`` and ``b[i]`` of two systems on the same items.

    The interval resamples the differences ``a[i] - b[i]`` with :func:`bootstrap_ci` (deterministic
    by ``seed``); the sign test counts the items whose scores differ. Fails closed: sequences of
    different lengths, no item, or a NaN or infinite score raise
    :class:`~scorekit.errors.InvalidValueError` naming the first bad item.

    >>> d = paired_difference([1.0, 1.0, 0.0], [0.0, 1.0, 0.0], resamples=100)
    >>> d.mean_diff, d.n_higher, d.n_equal, d.p_value
    (0.3333333333333333, 1, 2, 1.0)
    """
    xs, ys = _finite_scores(a, "a"), _finite_scores(b, "b")
    if len(xs) != len(ys):
        raise InvalidValueError(f"the two systems must be scored on the same items: a has {len(xs)} score(s), "
                                f"b has {len(ys)}")
    if not xs:
        raise InvalidValueError("no item to compare: a and b are empty")
    diffs = [x - y for x, y in zip(xs, ys)]
    n = len(diffs)
    higher = sum(1 for x, y in zip(xs, ys) if x > y)
    lower = sum(1 for x, y in zip(xs, ys) if x < y)
    lo, hi = bootstrap_ci(diffs, "mean", resamples=resamples, alpha=alpha, seed=seed)
    return PairedDifference(n=n, mean_a=sum(xs) / n, mean_b=sum(ys) / n, mean_diff=sum(diffs) / n,
                            ci_low=lo, ci_high=hi, n_higher=higher, n_lower=lower, n_equal=n - higher - lower,
                            p_value=sign_test(higher, lower), confidence=1 - alpha, resamples=resamples)


def _finite_scores(values: Iterable[Any], name: str) -> list[float]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidTypeError(f"must be a sequence of numbers, got {describe(values)}", field=name)
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InvalidTypeError(f"must be numbers; item {i} is {describe(v)}", field=name)
        v = float(v)
        if not math.isfinite(v):
            raise InvalidValueError(f"item {i} is {v}: a non-finite score cannot be compared", field=name)
        out.append(v)
    return out
