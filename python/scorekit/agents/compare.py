"""Paired comparison of two agents run on the same tasks (docs/agents-beyond.md).

This module owns :func:`compare_agents` and its result :class:`AgentComparison`; the bootstrap
and the exact :func:`sign_test` are :mod:`scorekit.stats`'s (re-exported here). Each task both
agents ran is one pair: the per-task success rates (and pass^k) of agent ``a`` minus those of
``b``, their mean with a paired bootstrap interval (tasks resampled with
:func:`~scorekit.stats.bootstrap_ci`, deterministic by seed), an exact two-sided sign test over
the tasks whose rates differ, and the tasks that improved, regressed or flipped.

>>> a = {"t1": [True, True], "t2": [True, False], "t3": [True, True]}
>>> b = {"t1": [True, True], "t2": [False, False], "t3": [False, False], "t4": [True]}
>>> cmp = compare_agents(a, b)
>>> cmp.n_tasks, cmp.improved, cmp.only_a_solves, cmp.only_in_b
(3, ('t2', 't3'), ('t3',), ('t4',))
>>> round(cmp.mean_diff, 4), cmp.sign_test_p        # (0 + 1/2 + 1) / 3; 2 of 2 improved
(0.5, 0.5)
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from scorekit.agents.reliability import ReliabilityReport, outcomes_by_task, pass_hat_k
from scorekit.errors import InvalidTypeError, InvalidValueError, describe
from scorekit.stats import DEFAULT_BOOTSTRAP_RESAMPLES, MAX_SIGNS, bootstrap_ci, sign_test

__all__ = ["AgentComparison", "compare_agents", "sign_test", "MAX_SIGNS"]

#: ``(trials, successes)`` per task id, in first-seen order.
Counts = dict[Any, tuple[int, int]]


@dataclass(frozen=True)
class AgentComparison:
    """What :func:`compare_agents` found; every difference is ``a - b``.

    ``per_task[task_id]``: ``n_a, c_a, n_b, c_b`` (trials, successes), ``rate_a, rate_b, diff`` and,
    when ``k`` is set, ``pass_hat_k_a, pass_hat_k_b, pass_hat_k_diff``. ``mean_*`` are means over
    the paired tasks (each task counts once, whatever its number of trials); ``diff_ci`` and
    ``pass_hat_k_diff_ci`` are paired bootstrap intervals over tasks. ``improved`` / ``regressed``
    / ``tied``: tasks whose success rate is higher / lower / equal for ``a``; ``only_a_solves``:
    tasks ``a`` solved in every trial and ``b`` in none (``only_b_solves`` the reverse).
    ``sign_test_p``: exact two-sided sign test over improved vs regressed tasks. ``only_in_a`` /
    ``only_in_b``: tasks only one side ran; ``skipped``: tasks with fewer than ``k`` trials (at
    least one) on a side. Task ids keep ``a``'s order.
    """

    names: tuple[str, str]
    k: Optional[int]
    per_task: dict
    mean_a: float
    mean_b: float
    mean_diff: float
    diff_ci: tuple[float, float]
    pass_hat_k_a: Optional[float]
    pass_hat_k_b: Optional[float]
    pass_hat_k_diff: Optional[float]
    pass_hat_k_diff_ci: Optional[tuple[float, float]]
    improved: tuple
    regressed: tuple
    tied: tuple
    only_a_solves: tuple
    only_b_solves: tuple
    sign_test_p: float
    only_in_a: tuple
    only_in_b: tuple
    skipped: tuple
    confidence: float

    @property
    def n_tasks(self) -> int:
        """The number of paired tasks."""
        return len(self.per_task)

    def summary(self) -> str:
        """A few lines of plain text for a log or a pull request."""
        a, b = self.names
        level = f"{100 * self.confidence:g}% CI"
        lines = [f"{a} vs {b} on {self.n_tasks} paired task(s)"
                 + (f" (k={self.k})" if self.k is not None else "") + ":",
                 f"  success rate: {a} {self.mean_a:.3f}, {b} {self.mean_b:.3f}, "
                 f"difference {self.mean_diff:+.3f} ({level} {self.diff_ci[0]:+.3f} to {self.diff_ci[1]:+.3f})"]
        if self.k is not None:
            lo, hi = self.pass_hat_k_diff_ci
            lines.append(f"  pass^{self.k}: {a} {self.pass_hat_k_a:.3f}, {b} {self.pass_hat_k_b:.3f}, "
                         f"difference {self.pass_hat_k_diff:+.3f} ({level} {lo:+.3f} to {hi:+.3f})")
        lines.append(f"  {len(self.improved)} improved, {len(self.regressed)} regressed, {len(self.tied)} tied; "
                     f"sign test p = {self.sign_test_p:.4g} (exact, two-sided, ties dropped)")
        lines.append(f"  solved in every trial by {a} and in none by {b}: {_ids(self.only_a_solves)}; "
                     f"the reverse: {_ids(self.only_b_solves)}")
        if self.only_in_a or self.only_in_b or self.skipped:
            lines.append(f"  not paired: only in {a}: {_ids(self.only_in_a)}; only in {b}: {_ids(self.only_in_b)}; "
                         f"fewer than k trials: {_ids(self.skipped)}")
        return "\n".join(lines)


def _ids(tasks: tuple, shown: int = 5) -> str:
    if not tasks:
        return "none"
    text = ", ".join(map(str, tasks[:shown]))
    return text + (f" and {len(tasks) - shown} more" if len(tasks) > shown else "")


def _counts(source: Any, side: str) -> tuple[Counts, Optional[int]]:
    """``({task_id: (n, c)}, the report's k or None)`` of one side."""
    if isinstance(source, ReliabilityReport):
        return {tid: (row["n"], row["c"]) for tid, row in source.per_task.items()}, source.k
    if isinstance(source, Mapping):
        for tid, outcomes in source.items():
            if isinstance(outcomes, (str, bytes)) or not isinstance(outcomes, Iterable):
                raise InvalidTypeError(f"must be a sequence of bools, got {describe(outcomes)}",
                                       field=f"{side}[{tid!r}]")
    elif isinstance(source, (str, bytes)) or not isinstance(source, Iterable):
        raise InvalidTypeError(
            f"must be Episodes, a {{task_id: [bool, ...]}} mapping or a ReliabilityReport; got "
            f"{type(source).__name__}", field=side)
    else:
        source = list(source)
        for ep in source:
            if not hasattr(ep, "task_id"):
                raise InvalidTypeError(
                    f"must be Episodes, a {{task_id: [bool, ...]}} mapping or a ReliabilityReport; "
                    f"got an item of type {type(ep).__name__}", field=side)
    return {tid: (len(v), sum(v)) for tid, v in outcomes_by_task(source).items()}, None


def _check_k(k: Any, report_ks: dict[str, int]) -> Optional[int]:
    """``k`` checked, or the reports' ``k`` when it is ``None``; every report must be at that ``k``."""
    asked = ""
    if k is not None:
        try:
            k = operator.index(k)
        except TypeError:
            raise InvalidTypeError(f"must be an integer or None, got {describe(k)}", field="k") from None
        if k < 1:
            raise InvalidValueError(f"must be >= 1, got {k}", field="k")
        asked = f"k={k} was asked for"
    for side, report_k in report_ks.items():
        if k is None:
            k, asked = report_k, f"the other side is a ReliabilityReport at k={report_k}"
        elif report_k != k:
            raise InvalidValueError(
                f"mismatched k: {side} is a ReliabilityReport at k={report_k}, but {asked}; compare runs "
                "at one k (a report keeps only the tasks with at least its k trials)")
    return k


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def compare_agents(a: Any, b: Any, *, k: Optional[int] = None, names: tuple[str, str] = ("a", "b"),
                   resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES, alpha: float = 0.05,
                   seed: Any = 0) -> AgentComparison:
    """Paired comparison of agent ``a`` with agent ``b`` over the tasks both ran (``a - b``).

    Each of ``a`` and ``b`` is graded Episodes (grouped by ``task_id``), a ``{task_id: [bool, ...]}``
    mapping or a :class:`~scorekit.agents.reliability.ReliabilityReport` (its per-task ``n`` and
    ``c``). ``k``: also compare per-task pass^k (default: the reports' ``k`` if a side is a report;
    reports at another ``k`` are an error). Tasks with fewer than ``k`` trials (or none) on either
    side are skipped with a ``UserWarning``. ``resamples``, ``alpha`` and ``seed`` set the paired
    bootstrap (tasks are resampled in ``a``'s order, so a seed gives one interval). No common task
    raises ``ValueError``.

    >>> cmp = compare_agents({"t1": [True, True], "t2": [False, True]},
    ...                      {"t1": [False, False], "t2": [False, False]}, k=2, names=("new", "old"))
    >>> cmp.per_task["t2"]["diff"], cmp.pass_hat_k_diff, cmp.only_a_solves
    (0.5, 0.5, ('t1',))
    """
    if not (isinstance(names, tuple) and len(names) == 2 and all(isinstance(x, str) for x in names)):
        raise InvalidTypeError(f"must be a pair of strings, got {describe(names)}", field="names")
    counts_a, k_a = _counts(a, "a")
    counts_b, k_b = _counts(b, "b")
    k = _check_k(k, {side: rk for side, rk in (("a", k_a), ("b", k_b)) if rk is not None})
    need = 1 if k is None else k
    only_in_a = tuple(t for t in counts_a if t not in counts_b)
    only_in_b = tuple(t for t in counts_b if t not in counts_a)
    common = [t for t in counts_a if t in counts_b]
    skipped = tuple(t for t in common if min(counts_a[t][0], counts_b[t][0]) < need)
    paired = [t for t in common if min(counts_a[t][0], counts_b[t][0]) >= need]
    if not paired:
        raise InvalidValueError(
            f"compare_agents: a and b have no task in common to compare (a has {len(counts_a)} task(s), "
            f"b has {len(counts_b)}, {len(common)} shared, {len(skipped)} of them with fewer than "
            f"{need} trial(s) on a side); pass the two agents' results on the same task ids")
    if skipped:
        warnings.warn(
            f"compare_agents: {len(skipped)} shared task(s) have fewer than {need} trial(s) on a side and were "
            f"left out (e.g. {list(skipped[:3])}); the comparison covers the other {len(paired)} task(s).",
            UserWarning, stacklevel=2)
    per_task: dict[Any, dict] = {}
    improved, regressed, tied, only_a_solves, only_b_solves = [], [], [], [], []
    for t in paired:
        (n_a, c_a), (n_b, c_b) = counts_a[t], counts_b[t]
        row = {"n_a": n_a, "c_a": c_a, "n_b": n_b, "c_b": c_b, "rate_a": c_a / n_a, "rate_b": c_b / n_b}
        row["diff"] = row["rate_a"] - row["rate_b"]
        if k is not None:
            row["pass_hat_k_a"] = pass_hat_k(n=n_a, c=c_a, k=k)
            row["pass_hat_k_b"] = pass_hat_k(n=n_b, c=c_b, k=k)
            row["pass_hat_k_diff"] = row["pass_hat_k_a"] - row["pass_hat_k_b"]
        per_task[t] = row
        # the sign is decided on the exact rates, c_a / n_a against c_b / n_b
        sign = c_a * n_b - c_b * n_a
        (improved if sign > 0 else regressed if sign < 0 else tied).append(t)
        if c_a == n_a and c_b == 0:
            only_a_solves.append(t)
        elif c_b == n_b and c_a == 0:
            only_b_solves.append(t)
    rows = list(per_task.values())
    diffs = [r["diff"] for r in rows]
    hat = {}
    if k is not None:
        hat_diffs = [r["pass_hat_k_diff"] for r in rows]
        hat = {"pass_hat_k_a": _mean([r["pass_hat_k_a"] for r in rows]),
               "pass_hat_k_b": _mean([r["pass_hat_k_b"] for r in rows]),
               "pass_hat_k_diff": _mean(hat_diffs),
               "pass_hat_k_diff_ci": bootstrap_ci(hat_diffs, "mean", resamples=resamples, alpha=alpha, seed=seed)}
    return AgentComparison(
        names=names, k=k, per_task=per_task,
        mean_a=_mean([r["rate_a"] for r in rows]), mean_b=_mean([r["rate_b"] for r in rows]),
        mean_diff=_mean(diffs),
        diff_ci=bootstrap_ci(diffs, "mean", resamples=resamples, alpha=alpha, seed=seed),
        pass_hat_k_a=hat.get("pass_hat_k_a"), pass_hat_k_b=hat.get("pass_hat_k_b"),
        pass_hat_k_diff=hat.get("pass_hat_k_diff"), pass_hat_k_diff_ci=hat.get("pass_hat_k_diff_ci"),
        improved=tuple(improved), regressed=tuple(regressed), tied=tuple(tied),
        only_a_solves=tuple(only_a_solves), only_b_solves=tuple(only_b_solves),
        sign_test_p=sign_test(len(improved), len(regressed)),
        only_in_a=only_in_a, only_in_b=only_in_b, skipped=skipped, confidence=1 - alpha,
    )
