"""Reliability of agents over k trials: pass@k / pass^k, Wilson and Newcombe intervals, bootstrap.

Pure functions, none of them a Metric. :func:`pass_at_k` is capability (succeeds on *any* of k
trials), :func:`pass_hat_k` is reliability (succeeds on *all* k); both are computed with exact
integer binomials and one correctly rounded division. :func:`bootstrap_ci` (the percentile
bootstrap of :mod:`scorekit.stats`, re-exported here where the reference kit has it).
:func:`reliability` groups graded episodes (or a ``{task_id: [bool, ...]}`` mapping) into a
:class:`ReliabilityReport`, computing each distinct ``(n, c)`` estimator once.

>>> pass_at_k(n=5, c=2, k=1)
0.4
>>> round(pass_at_k(n=5, c=2, k=3), 4), pass_hat_k(n=5, c=2, k=3)
(0.9, 0.0)
"""

from __future__ import annotations

import math
import operator
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress
from typing import Any, Optional, Union

import numpy as np

from scorekit.errors import InputTooLargeError
from scorekit.stats import DEFAULT_BOOTSTRAP_RESAMPLES, bootstrap_ci

__all__ = [
    "DEFAULT_Z", "DEFAULT_BOOTSTRAP_RESAMPLES", "pass_at_k", "pass_hat_k", "wilson_interval",
    "newcombe_difference", "difference_upper_bound", "mean_standard_error", "bootstrap_ci", "ReliabilityReport",
    "reliability", "outcomes_by_task", "MAX_TRIALS",
]

DEFAULT_Z = 1.96
#: Most trials ``n`` of one task that :func:`pass_at_k` / :func:`pass_hat_k` take: their exact
#: binomials take a fraction of a second at this size and minutes (or forever) far above it.
MAX_TRIALS = 100_000
_comb, _sqrt = math.comb, math.sqrt


def _counts(n: Any, c: Any, k: Any) -> tuple[int, int, int]:
    try:
        n, c, k = operator.index(n), operator.index(c), operator.index(k)
    except TypeError:
        raise TypeError(
            f"n, c and k must be integers; got n={n!r}, c={c!r}, k={k!r}") from None
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if n > MAX_TRIALS:
        shown = f"{n:,}" if n.bit_length() < 100 else f"an integer of {n.bit_length()} bits"
        raise InputTooLargeError(f"n={shown} trials is above MAX_TRIALS={MAX_TRIALS:,}: the exact binomials of pass@k "
                                 "and pass^k would take minutes or never finish")
    if n < k:
        raise ValueError(f"need n >= k trials to estimate at k={k}, got n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"successes c must be in [0, n]; got c={c}, n={n}")
    return n, c, k


def pass_at_k(*, n: int, c: int, k: int) -> float:
    """Unbiased P(at least one of k trials succeeds) from ``c`` successes in ``n`` trials.

    ``1 - C(n-c, k) / C(n, k)`` (HumanEval), exact big-integer binomials.

    >>> round(pass_at_k(n=10, c=1, k=1), 3)
    0.1
    >>> pass_at_k(n=10, c=10, k=5)
    1.0
    """
    # plain ints within _counts' bounds, tested in as few comparisons as each branch needs
    if type(n) is int and type(c) is int and type(k) is int and 0 <= c and n <= MAX_TRIALS:
        d = n - c
        if k <= d:
            if k > 0:
                return 1.0 - _comb(d, k) / _comb(n, k)
        elif d >= 0 and k <= n:  # fewer failures than k (0 <= d < k): a success is certain
            return 1.0
    n, c, k = _counts(n, c, k)  # anything else: the full checks and their errors, then the path above
    return pass_at_k(n=n, c=c, k=k)


def pass_hat_k(*, n: int, c: int, k: int) -> float:
    """Unbiased P(all k trials succeed) ("pass^k", tau-bench): ``C(c, k) / C(n, k)``.

    >>> pass_hat_k(n=8, c=8, k=8)
    1.0
    >>> pass_hat_k(n=8, c=4, k=2)
    0.21428571428571427
    """
    if type(n) is int and type(c) is int and type(k) is int and n <= MAX_TRIALS:  # as in pass_at_k
        if k <= c:
            if k > 0 and c <= n:
                return _comb(c, k) / _comb(n, k)
        elif c >= 0 and k <= n:  # fewer successes than k (0 <= c < k)
            return 0.0
    n, c, k = _counts(n, c, k)
    return pass_hat_k(n=n, c=c, k=k)


def wilson_interval(successes: float, n: float, *, z: float = DEFAULT_Z) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; ``(0.0, 1.0)`` when ``n <= 0``.

    >>> lo, hi = wilson_interval(0, 10)
    >>> lo == 0.0, round(hi, 3)
    (True, 0.278)
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: successes must be in [0, n]; got successes={successes}, n={n}")
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    margin = (z / denom) * _sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    lower, upper = center - margin, center + margin
    # max(0.0, lower) and min(1.0, upper) (a NaN or -0.0 bound gives the constant, as there) without the calls
    return (lower if lower > 0.0 else 0.0, upper if upper < 1.0 else 1.0)


def newcombe_difference(successes_a: float, n_a: float, successes_b: float, n_b: float, *,
                        z: float = DEFAULT_Z) -> tuple[float, float]:
    """Interval for ``p_a - p_b`` (Newcombe 1998, method 10, from two Wilson intervals).

    ``(-1.0, 1.0)`` when either sample is empty. With a = current and b = baseline, an upper bound
    below zero is a confident regression.

    >>> lo, hi = newcombe_difference(50, 100, 90, 100)   # 50% now vs 90% before
    >>> hi < 0
    True
    """
    if n_a <= 0 or n_b <= 0:
        return (-1.0, 1.0)
    l_a, u_a = wilson_interval(successes_a, n_a, z=z)
    l_b, u_b = wilson_interval(successes_b, n_b, z=z)
    p_a, p_b = successes_a / n_a, successes_b / n_b
    delta = p_a - p_b
    lower = delta - _sqrt((p_a - l_a) ** 2 + (u_b - p_b) ** 2)
    upper = delta + _sqrt((u_a - p_a) ** 2 + (p_b - l_b) ** 2)
    return (lower if lower > -1.0 else -1.0, upper if upper < 1.0 else 1.0)  # as in wilson_interval


def _se_from_ci(ci: Any, z: float) -> Optional[float]:
    if not ci:
        return None
    lo, hi = ci
    if lo is None or hi is None:
        return None
    width = hi - lo
    if not math.isfinite(width) or width < 0:
        return None
    return width / (2 * z)


def difference_upper_bound(value_a: float, ci_a: Any, value_b: float, ci_b: Any, *,
                           z: float = DEFAULT_Z) -> Optional[float]:
    """Upper bound of ``a - b`` for two statistics known only through their CIs.

    Each CI gives a standard error ``(hi - lo) / (2z)``; ``None`` when either CI is missing, has a
    ``None`` bound, or has a negative or non-finite width.

    >>> round(difference_upper_bound(0.5, (0.4, 0.6), 0.7, (0.6, 0.8)), 6)
    -0.058579
    """
    se_a, se_b = _se_from_ci(ci_a, z), _se_from_ci(ci_b, z)
    if se_a is None or se_b is None:
        return None
    return (value_a - value_b) + z * math.sqrt(se_a * se_a + se_b * se_b)


@dataclass
class ReliabilityReport:
    """What :func:`reliability` (and the suite runner) report about k-trial runs.

    ``success_rate`` is micro over all counted trials; ``pass_at_k`` / ``pass_hat_k`` are means
    over tasks of the per-task estimators, ``None`` when no task had k trials. ``float(report)``
    is the headline reliability ``pass_hat_k`` (``nan`` when not measurable). ``episodes``: the
    graded episodes of a :func:`~scorekit.agents.run_suite` or
    :func:`~scorekit.agents.harness.score_episodes` report, as a
    :class:`~scorekit.agents.cost.RecordedEpisodes` (empty otherwise).
    """

    k: int = 1
    n_tasks: int = 0
    n_trials: int = 0
    n_success: int = 0
    success_rate: float = 0.0
    success_ci: tuple = (0.0, 1.0)
    pass_at_k: Optional[float] = None
    pass_hat_k: Optional[float] = None
    pass_hat_k_ci: tuple = (0.0, 1.0)
    pass_hat_k_sd: Optional[float] = None
    stochastic: bool = True
    per_task: dict = field(default_factory=dict)
    per_slice: dict = field(default_factory=dict)
    cost: dict = field(default_factory=dict)
    detail: dict = field(default_factory=dict)
    episodes: Sequence = field(default=(), repr=False, compare=False)

    def __float__(self) -> float:
        return math.nan if self.pass_hat_k is None else float(self.pass_hat_k)

    def pass_hat_k_se(self, *, z: float = DEFAULT_Z) -> Optional[float]:
        """Standard error of ``pass_hat_k`` from the per-task spread (:func:`mean_standard_error`);
        ``None`` when pass^k could not be measured."""
        return mean_standard_error(self.pass_hat_k, self.pass_hat_k_sd, self.n_tasks, z=z)


def _sample_sd(values: Sequence[float]) -> Optional[float]:
    """Sample standard deviation (``n - 1``) of ``values``; ``None`` for fewer than two."""
    if len(values) < 2:
        return None
    m = sum(values) / len(values)
    return math.sqrt(sum((x - m) ** 2 for x in values) / (len(values) - 1))


def mean_standard_error(mean: Optional[float], sd: Optional[float], n: int, *, z: float = DEFAULT_Z,
                        bounds: tuple = (0.0, 1.0)) -> Optional[float]:
    """Standard error of a mean of ``n`` per-unit values in ``bounds``, never collapsing to zero.

    ``sd / sqrt(n)`` is the standard error of a mean of independent per-task estimators, but it is
    zero when every task scored the same (a perfect baseline), which would claim certainty. The
    floor adds ``z**2 / 2`` pseudo-units at each bound (Agresti–Coull's idea for bounded values)
    and takes the standard error of that augmented mean; the result is the larger of the two.
    ``None`` when ``n <= 0`` or ``mean`` is ``None``; a missing ``sd`` (one unit) gives the floor.

    >>> round(mean_standard_error(0.5, 0.3, 100), 4)
    0.0304
    >>> round(mean_standard_error(1.0, 0.0, 60), 4)          # a perfect run is not certain
    0.0215
    """
    if mean is None or n <= 0:
        return None
    lo, hi = bounds
    pseudo = z * z / 2
    total = n + 2 * pseudo
    centre = (n * mean + pseudo * lo + pseudo * hi) / total
    spread = ((0.0 if sd is None else (n - 1) * sd * sd) + n * (mean - centre) ** 2
              + pseudo * (lo - centre) ** 2 + pseudo * (hi - centre) ** 2)
    floor = math.sqrt(spread / (total - 1) / total)
    plain = 0.0 if sd is None else sd / math.sqrt(n)
    return max(plain, floor)


def _tally(source: Any) -> tuple[list, list[int], list[int]]:
    """Task ids in first-seen order, with each task's trials and successes (truthy outcomes)."""
    if isinstance(source, Mapping):
        task_ids = list(source)
        rows = [o if type(o) is list else list(o) for o in source.values()]
        trials = list(map(len, rows))
        if not rows:
            return [], [], []
        truth = np.fromiter(map(bool, chain.from_iterable(rows)), dtype=bool, count=sum(trials))
        ends = np.cumsum(trials, dtype=np.int64)
        hits = np.concatenate(([0], np.cumsum(truth, dtype=np.int64)))
        return task_ids, trials, (hits[ends] - hits[ends - trials]).tolist()
    episodes = source if type(source) is list else list(source)
    try:
        task_ids = [ep.task_id for ep in episodes]
        outcomes = [ep.success for ep in episodes]
    except AttributeError:
        return _tally_one_by_one(episodes)
    if None in outcomes:
        return _tally_one_by_one(episodes)
    trials = Counter(task_ids)
    wins = Counter(compress(task_ids, outcomes))
    return list(trials), list(trials.values()), [wins[t] for t in trials]


def outcomes_by_task(source: Any) -> dict[Any, list[bool]]:
    """``{task_id: [bool(outcome), ...]}`` in first-seen order from Episodes or such a mapping, one
    episode at a time (raising for the first one that is not a graded episode).

    >>> outcomes_by_task({"t1": [1, 0], "t2": [True]})
    {'t1': [True, False], 't2': [True]}
    """
    if isinstance(source, Mapping):
        return {tid: [bool(x) for x in outcomes] for tid, outcomes in source.items()}
    grouped: dict[Any, list[bool]] = {}
    for ep in source:
        if not hasattr(ep, "task_id"):
            raise TypeError(
                f"reliability() takes Episodes or a {{task_id: [bool, ...]}} mapping; got {type(ep)}")
        success = getattr(ep, "success", None)
        if success is None:
            raise ValueError(
                f"episode for task {ep.task_id!r} is ungraded (success is None); run it through a "
                "checker (see scorekit.agents.TaskSuccessMetric) first.")
        grouped.setdefault(ep.task_id, []).append(bool(success))
    return grouped


def _tally_one_by_one(episodes: list) -> tuple[list, list[int], list[int]]:
    grouped = outcomes_by_task(episodes)
    return list(grouped), list(map(len, grouped.values())), list(map(sum, grouped.values()))


def _estimates(trials: list[int], wins: list[int], k: int) -> tuple[list[float], list[float]]:
    """Each task's pass@k and pass^k, computed once per distinct ``(n, c)`` (tasks in the order
    given, which is also the order the estimators are first called in)."""
    n = np.array(trials, dtype=np.int64)
    c = np.array(wins, dtype=np.int64)
    codes = n * (int(c.max()) + 1) + c
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    at = np.empty(len(first))
    hat = np.empty(len(first))
    for j in np.argsort(first, kind="stable"):
        nj, cj = trials[first[j]], wins[first[j]]
        at[j], hat[j] = pass_at_k(n=nj, c=cj, k=k), pass_hat_k(n=nj, c=cj, k=k)
    return at[inverse].tolist(), hat[inverse].tolist()


def _mean(xs: Sequence[float]) -> Optional[float]:
    return sum(xs) / len(xs) if xs else None


def reliability(source: Union[Iterable[Any], Mapping[Any, Iterable[Any]]], *, k: int = 1,
                slices: Optional[Mapping[Any, Optional[str]]] = None,
                cost: Optional[Mapping[str, Any]] = None,
                warn_deterministic: bool = True) -> ReliabilityReport:
    """pass@k, pass^k (with a bootstrap CI over tasks) and the Wilson success interval.

    ``source`` is graded episodes (grouped by ``task_id``) or ``{task_id: [bool, ...]}``. Tasks
    with fewer than ``k`` trials are excluded (with a warning); ``slices`` maps task ids to labels
    for per-slice figures; ``cost`` (a cost report) is copied into the report as given.

    >>> r = reliability({"t1": [True, True, False], "t2": [True, True, True]}, k=2)
    >>> r.n_tasks, r.k, round(r.pass_hat_k, 3)
    (2, 2, 0.667)
    """
    task_ids, trials, wins = _tally(source)
    skipped = [t for t, n in zip(task_ids, trials) if n < k]
    if skipped:
        keep = [not n < k for n in trials]
        task_ids, trials, wins = (list(compress(x, keep)) for x in (task_ids, trials, wins))
    at, hats = _estimates(trials, wins, k) if task_ids else ([], [])
    per_task = {t: {"n": n, "c": c, "pass_at_k": a, "pass_hat_k": h}
                for t, n, c, a, h in zip(task_ids, trials, wins, at, hats)}
    any_mixed = any(0 < c < n for n, c in zip(trials, wins))
    n_trials, n_success = sum(trials), sum(wins)
    n_tasks = len(per_task)
    if skipped:
        warnings.warn(
            f"reliability: {len(skipped)} of {len(skipped) + n_tasks} task(s) have fewer than k={k} "
            f"trials and were EXCLUDED from pass@k/pass^k (e.g. {skipped[:3]}). Run at least k "
            f"trials per task, or lower k -- the reported figures cover only the remaining "
            f"{n_tasks} task(s).",
            UserWarning, stacklevel=2)
    per_slice: dict[Any, dict] = {}
    if slices:
        buckets: dict[Any, list[dict]] = {}
        for tid, row in per_task.items():
            label = slices.get(tid)
            if label is not None:
                buckets.setdefault(label, []).append(row)
        for label, rows in buckets.items():
            per_slice[label] = {
                "n_tasks": len(rows),
                "pass_at_k": _mean([r["pass_at_k"] for r in rows]),
                "pass_hat_k": _mean([r["pass_hat_k"] for r in rows]),
                "success_rate": sum(r["c"] for r in rows) / sum(r["n"] for r in rows),
            }
    if warn_deterministic and k > 1 and not any_mixed and n_tasks:
        warnings.warn(
            "reliability: no task showed mixed outcomes across trials -- the agent looks "
            f"deterministic, so pass^{k} degenerates to pass^1 and measures nothing new. Ensure "
            "real run-to-run stochasticity (temperature, seeds, a simulated user) or report pass^1 "
            "instead.", UserWarning, stacklevel=2)
    return ReliabilityReport(
        k=k, n_tasks=n_tasks, n_trials=n_trials, n_success=n_success,
        success_rate=n_success / n_trials if n_trials else 0.0,
        success_ci=wilson_interval(n_success, n_trials),
        pass_at_k=_mean(at),
        pass_hat_k=_mean(hats),
        pass_hat_k_ci=bootstrap_ci(np.array(hats), "mean") if hats else (0.0, 1.0),
        pass_hat_k_sd=_sample_sd(hats),
        stochastic=any_mixed or k == 1,
        per_task=per_task, per_slice=per_slice,
        cost=dict(cost) if cost else {},
        detail={"skipped": skipped} if skipped else {},
    )
