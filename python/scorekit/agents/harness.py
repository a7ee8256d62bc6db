"""The agent task-suite harness: k trials per task, graded, costed, and a gate that survives noise.

This module owns :func:`run_suite` (run an agent over a suite ``k`` times per task, grade every
episode with an injected checker, and report reliability, cost and the extra metrics), the agent
baselines (:func:`save_agent_baseline`, :func:`load_agent_baseline`, kept in the ``baselines``
store of :mod:`scorekit.stores`) and :func:`agent_regression_gate`, which fails only when the
*difference* between the current run and its baseline is confidently negative (a Newcombe interval
on the success rate, a combined-SE bound on pass^k, a bootstrap bound on cost per success), and
refuses to compare runs made under different conditions (user simulator, suite version, scaffold).

>>> from scorekit.agents.base import Cost, Episode, TaskSpec
>>> tasks = [TaskSpec("t1", input="2+2", gold="4"), TaskSpec("t2", input="3+3", gold="6")]
>>> def agent(task):
...     answers = {"2+2": "4", "3+3": "7"}      # gets t2 wrong, every time
...     return Episode(output=answers[task.input], cost=Cost(input_tokens=10))
>>> report = run_suite(agent, tasks, k=1)
>>> report.success_rate, report.pass_hat_k
(0.5, 0.5)
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import numbers
import operator
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Union

import numpy as np

from scorekit.agents.base import Episode, RunProvenance, TaskSpec, copy_episode, suite_grammar
from scorekit.agents.cost import ModelPrice, RecordedEpisodes, cost_report, episode_dollars_array
from scorekit.agents.metrics import resolve_checker
from scorekit.agents.reliability import (
    DEFAULT_Z, MAX_TRIALS, ReliabilityReport, _se_from_ci, bootstrap_ci, difference_upper_bound, mean_standard_error,
    newcombe_difference, reliability,
)
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError, describe
from scorekit.harness import check_tolerance, fresh_run_ids, load_baseline, resolve_baseline
from scorekit.progress import progress_printer
from scorekit.stores import json_key, json_store

__all__ = ["run_suite", "score_episodes", "run_document", "save_agent_baseline", "load_agent_baseline", "agent_regression_gate",
           "AgentGateResult", "MAX_EPISODES"]

#: Default bound on the episodes of one :func:`run_suite` (tasks x k): every episode is kept in
#: memory for the report, so a mistyped ``k`` must fail at once, not when the machine runs out.
MAX_EPISODES = 1_000_000

_PROVENANCE_FIELDS = ("model", "simulator", "suite_version", "scaffold", "temperature")
_COMPARABILITY_FIELDS = ("simulator", "suite_version", "scaffold")
# Agent calls handed to the thread pool at once, per worker (bounds memory on huge suites).
_IN_FLIGHT_PER_WORKER = 4


def _task_list(tasks: Any) -> list[TaskSpec]:
    if isinstance(tasks, Mapping):
        out = []
        for key, spec in tasks.items():
            if isinstance(spec, TaskSpec):
                out.append(spec)
            elif isinstance(spec, Mapping):
                try:
                    out.append(TaskSpec(task_id=key, **spec))
                except TypeError as exc:
                    raise TypeError(f"run_suite: task {key!r}: {exc}") from None
            else:
                out.append(TaskSpec(task_id=key, input=spec))
        return out
    if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Iterable):
        raise TypeError(f"run_suite: tasks must be TaskSpecs or a {{task_id: spec}} mapping; got {type(tasks).__name__}")
    out = list(tasks)
    for i, task in enumerate(out):
        if not isinstance(task, TaskSpec):
            raise TypeError(f"run_suite: task {i} is a {type(task).__name__}, not a TaskSpec")
    return out


def _distinct_ids(tasks: list[TaskSpec], persist: bool, caller: str = "run_suite") -> list[TaskSpec]:
    """``tasks``, refused when two share a ``task_id`` — as Python compares them (``1 == True``:
    their episodes would pool as one task's trials) or as JSON writes them (``1`` and ``"1"``: one
    key of the persisted per-task results) — or, with ``persist``, when an id cannot be a JSON key."""
    seen: dict = {}
    texts: dict = {}
    for i, task in enumerate(tasks):
        try:
            text = json_key(task.task_id)
        except (InvalidValueError, TypeError) as exc:
            if persist:  # refused now, not after every episode has run
                raise InvalidValueError(f"run_suite(persist=True): task {i} has the id {task.task_id!r}, which cannot "
                                        f"be saved as a key of the results ({exc})") from None
            text = None
        first = seen.get(task.task_id, texts.get(text))
        if first is not None:
            raise InvalidValueError(
                f"{caller}: task {i} (id {task.task_id!r}) repeats the task id of task {first} "
                f"({tasks[first].task_id!r}); every task of a suite needs its own id (episodes are grouped by it, "
                "so two tasks would count as extra trials of one, or one would be lost when the results are saved)")
        seen.setdefault(task.task_id, i)
        if text is not None:
            texts[text] = i
    return tasks


def _accepts_seed(agent: Callable) -> bool:
    try:
        return "seed" in inspect.signature(agent).parameters
    except (TypeError, ValueError):
        return False


class _TimedOut:
    """The result of an agent call that did not return within the run's ``timeout``."""

    def __init__(self, seconds: float) -> None:
        self.reason = f"the agent did not return within the timeout of {seconds:g} s"


def _within(call: Callable[[Any], Any], timeout: float) -> Callable[[Any], Any]:
    """``call`` run on a daemon thread that is waited for at most ``timeout`` seconds; past that
    it gives a :class:`_TimedOut`. A Python thread cannot be killed: the abandoned call runs on
    in the background (a daemon, so it never holds up the interpreter's exit) and its late result
    is discarded."""

    def bounded(job: Any) -> Any:
        box: list = []

        def target() -> None:
            try:
                box.append((True, call(job)))
            except BaseException as exc:  # handed to the harness's thread, raised there
                box.append((False, exc))

        worker = threading.Thread(target=target, name="scorekit-agent-timeout", daemon=True)
        worker.start()
        worker.join(timeout)
        if not box:
            return _TimedOut(timeout)
        ok, value = box[0]
        if not ok:
            raise value
        return value

    return bounded


def _call_agents(agent: Callable, jobs: Iterator[tuple[TaskSpec, Optional[int]]], total: int, pass_seed: bool,
                 concurrency: int, timeout: Optional[float],
                 progress: Optional[Callable[[int, int], None]]) -> list[Any]:
    """The agent's result for each of the ``total`` ``(task, seed)`` jobs, in job order (a
    :class:`_TimedOut` for a call past ``timeout``); with ``concurrency > 1`` the calls run on a
    bounded thread pool (the results are the same as a sequential run's for any agent whose
    answer depends only on its task and seed). ``jobs`` is consumed lazily."""

    def call(job: tuple[TaskSpec, Optional[int]]) -> Any:
        task, seed = job
        try:
            return agent(task, seed=seed) if pass_seed and seed is not None else agent(task)
        except Exception as exc:
            exc.add_note(f"(raised by the agent on task {task.task_id!r}, seed {seed!r})")
            raise

    run_one = call if timeout is None else _within(call, timeout)
    results: list[Any] = []
    step = max(1, total // 200)
    if concurrency <= 1:
        for job in jobs:
            results.append(run_one(job))
            if progress is not None and (len(results) % step == 0 or len(results) == total):
                progress(len(results), total)
        return results
    window = concurrency * _IN_FLIGHT_PER_WORKER
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="scorekit-agent") as pool:
        while batch := list(itertools.islice(jobs, window)):
            results.extend(pool.map(run_one, batch))
            if progress is not None:
                progress(len(results), total)
    return results


def _as_episode(result: Any, task: TaskSpec, trial_run: RunProvenance) -> Episode:
    """The agent's result as a fresh Episode of ``task`` (never the agent's own object). An
    episode that names another task is refused: the task the harness ran is the task scored."""
    if isinstance(result, _TimedOut):
        return Episode(task_id=task.task_id, run=trial_run, success=False,
                       meta={"timed_out": True, "error": result.reason})
    if isinstance(result, Episode) and result.task_id and result.task_id != task.task_id:
        raise InvalidValueError(
            f"run_suite: the agent ran task {task.task_id!r} but returned an episode of task "
            f"{result.task_id!r}; the task the harness ran is the task scored (leave Episode.task_id "
            "empty or set it to the task's id)")
    if isinstance(result, Episode):
        episode = copy_episode(result)
        episode.task_id = task.task_id
        episode.run = result.run or trial_run
        return episode
    if hasattr(result, "trajectory") and hasattr(result, "task_id"):
        raise TypeError(
            f"run_suite: the agent returned a {type(result).__name__} for task {task.task_id!r}, which looks "
            "like an episode but is not a scorekit.agents.Episode; return an Episode (or a bare answer)")
    return Episode(task_id=task.task_id, output=result, run=trial_run)


def _value_weighted_success(tasks: list[TaskSpec], outcomes: list[list[bool]]) -> float:
    num = den = 0.0
    for task, wins in zip(tasks, outcomes):
        if wins:
            num += task.value * sum(wins)
            den += task.value * len(wins)
    return num / den if den else 0.0


def _cost_ci(episodes: list[Episode], recorded: RecordedEpisodes, price: Optional[ModelPrice],
             prices: Optional[Mapping[str, ModelPrice]]) -> tuple:
    """The bootstrap interval of the cost per success; ``recorded``: the same episodes, recorded."""
    if price is None and prices is None:
        return (None, None)
    if not episodes:
        return (math.nan, math.nan)
    spend = episode_dollars_array(recorded, prices=prices, price=price)
    wins = np.fromiter((1.0 if e.success else 0.0 for e in episodes), np.float64, len(episodes))
    return bootstrap_ci(np.column_stack((spend, wins)), "ratio")


def _extra_metrics(metrics: Mapping[str, Any], tasks: list[TaskSpec], per_task: list[list[Episode]],
                   grammar: Any) -> dict:
    gold_less = [t.task_id for t in tasks if t.gold is None]
    if gold_less:
        warnings.warn(
            f"run_suite(metrics=...): {len(gold_less)} task(s) have no `gold` and were excluded from the "
            f"extra metrics (e.g. {gold_less[:3]}). Set TaskSpec.gold to score them.", UserWarning, stacklevel=4)
    out = {}
    for name, metric in metrics.items():
        scores = [metric(ep, task.gold, grammar=grammar)
                  for task, eps in zip(tasks, per_task) if task.gold is not None for ep in eps]
        if not scores:
            continue
        aggregate = metric.aggregate(scores) if callable(getattr(metric, "aggregate", None)) else \
            sum(float(s) for s in scores) / len(scores)
        out[name] = {"aggregate": aggregate, "n": len(scores), "n_excluded": len(gold_less)}
    return out


def _positive_int(value: Any, name: str, caller: str = "run_suite") -> int:
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{caller}: {name} must be an integer, got {value!r}") from None
    if value < 1:
        raise ValueError(f"{caller}: {name} must be >= 1, got {value}")
    return value


def _timeout(value: Any) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= threading.TIMEOUT_MAX:
        raise InvalidValueError(f"must be None or a number of seconds > 0 and <= {threading.TIMEOUT_MAX:g} (the "
                                f"longest wait a thread allows), got {describe(value)}", field="run_suite: timeout")
    return float(value)


def run_suite(agent: Callable[..., Any], tasks: Any, *, k: int = 1, check: Any = None,
              metrics: Optional[Mapping[str, Any]] = None, price: Optional[ModelPrice] = None,
              prices: Optional[Mapping[str, ModelPrice]] = None, run: Optional[RunProvenance] = None,
              seed: Optional[int] = None, persist: bool = False, run_id: Optional[str] = None,
              rootdir: Any = None, concurrency: int = 1, progress: str = "auto", timeout: Optional[float] = None,
              max_episodes: int = MAX_EPISODES) -> ReliabilityReport:
    """Run ``agent`` over ``tasks`` ``k`` times per task; report reliability, cost and metrics.

    ``agent`` gets the whole :class:`TaskSpec` (and ``seed=`` when it accepts that keyword and
    ``seed`` is given: trial ``i`` uses ``seed + i``) and returns an :class:`Episode` or a bare
    answer. Every episode is graded by ``check`` (a checker name or an ``(episode, gold) -> bool``
    callable, default ``"output"``) and stamped with ``run`` (agent-supplied provenance wins).
    ``metrics={name: metric}`` are scored on every episode of the tasks with gold, with the suite's
    tool grammar; ``price``/``prices`` cost the episodes (``report.cost``, with a bootstrap
    ``cost_ci``). ``persist=True`` writes the run to the ``runs`` and ``results`` stores.

    ``concurrency`` > 1 calls the agent on that many threads (for agents that wait on I/O); the
    report is the same as a sequential run's as long as the agent's answer depends only on the task
    and the seed. ``progress`` draws a bar on stderr: ``"auto"`` (on a terminal), ``"always"``,
    ``"never"``.

    Every task needs its own ``task_id``, and an agent's episode that names another task than
    the one it was given raises :class:`~scorekit.errors.InvalidValueError` (an empty id is
    filled in). ``timeout`` (seconds) bounds each agent call: the call runs on a worker thread
    the harness stops waiting for, and the episode is recorded as failed with
    ``meta["timed_out"]`` and ``meta["error"]`` (their count is ``report.detail["timed_out"]``).
    A Python thread cannot be killed, so the abandoned call runs on in the background and its
    result is discarded. ``len(tasks) * k`` above ``max_episodes`` (default
    :data:`MAX_EPISODES`), or ``k`` above :data:`~scorekit.agents.reliability.MAX_TRIALS`, raises
    :class:`~scorekit.errors.InputTooLargeError` before any call.

    >>> tasks = [TaskSpec("t1", input="hi", gold="HI"), TaskSpec("t2", input="yo", gold="YO")]
    >>> run_suite(lambda task: task.input.upper(), tasks).success_rate     # a bare answer is wrapped
    1.0
    """
    task_list = _distinct_ids(_task_list(tasks), persist)
    k = _positive_int(k, "k")
    concurrency = _positive_int(concurrency, "concurrency")
    timeout = _timeout(timeout)
    max_episodes = _positive_int(max_episodes, "max_episodes")
    total = len(task_list) * k
    if max(total, k) > max_episodes:  # k alone too: the per-trial provenance is built before any task
        raise InputTooLargeError(
            f"run_suite: {len(task_list)} tasks x k={k} is {total:,} episodes, above max_episodes={max_episodes:,} (every "
            "episode is kept in memory for the report; raise max_episodes to run it anyway)")
    if k > MAX_TRIALS:  # refused now, not by pass@k after every episode has run
        raise InputTooLargeError(f"run_suite: k={k:,} is above MAX_TRIALS={MAX_TRIALS:,}, the most trials per task "
                                 "pass@k and pass^k take")
    if seed is not None:
        seed = operator.index(seed)
    checker = resolve_checker(check)
    base_run = run if run is not None else RunProvenance()
    if not isinstance(base_run, RunProvenance):
        raise TypeError(f"run_suite: run must be a RunProvenance, got {type(base_run).__name__}")
    grammar = suite_grammar(task_list)
    trial_runs = [dataclasses.replace(base_run, seed=None if seed is None else seed + trial) for trial in range(k)]
    jobs = ((task, trial_runs[trial].seed) for task in task_list for trial in range(k))
    results = _call_agents(agent, jobs, total, _accepts_seed(agent), concurrency, timeout,
                           progress_printer(progress, "episodes"))

    per_task: list[list[Episode]] = []
    for t, task in enumerate(task_list):
        mine = []
        for trial in range(k):
            result = results[t * k + trial]
            episode = _as_episode(result, task, trial_runs[trial])
            if not isinstance(result, _TimedOut):
                episode.success = bool(checker(episode, task.gold))
            mine.append(episode)
        per_task.append(mine)

    report = _suite_report(task_list, per_task, k, {f: getattr(base_run, f) for f in _PROVENANCE_FIELDS},
                           price=price, prices=prices, metrics=metrics, grammar=grammar)
    if timeout is not None:
        report.detail["timed_out"] = sum(isinstance(result, _TimedOut) for result in results)
    if persist:
        _persist(report, run_id, rootdir)
    return report


def _suite_report(task_list: list[TaskSpec], per_task: list[list[Episode]], k: int, provenance: dict, *,
                  price: Optional[ModelPrice], prices: Optional[Mapping[str, ModelPrice]],
                  metrics: Optional[Mapping[str, Any]], grammar: Any) -> ReliabilityReport:
    """The report of graded episodes, ``per_task[i]`` being the trials of ``task_list[i]``:
    reliability, cost (with its bootstrap interval), slices, provenance, the extra metrics and the
    episodes, recorded (their cost columns read once, for the cost figures here and any later)."""
    episodes = [episode for trials in per_task for episode in trials]
    recorded = RecordedEpisodes(episodes)
    slices = {t.task_id: t.slice for t in task_list if t.slice is not None}
    costs = cost_report(recorded, prices=prices, price=price)
    costs["cost_ci"] = _cost_ci(episodes, recorded, price, prices)
    report = reliability(episodes, k=k, slices=slices or None, cost=costs)
    report.episodes = recorded
    report.detail["episodes"] = len(episodes)
    report.detail["provenance"] = provenance
    report.detail["value_weighted_success"] = _value_weighted_success(
        task_list, [[bool(e.success) for e in eps] for eps in per_task])
    if metrics:
        report.detail["metrics"] = _extra_metrics(metrics, task_list, per_task, grammar)
    return report


def _recorded_provenance(episodes: list[Episode]) -> dict:
    """The provenance of a run from its recorded episodes' ``run``: each field's one value; the
    models (and temperatures) used, when several; recorded episodes of one run made under several
    user simulators, suite versions or scaffolds are refused (not one experiment)."""
    provenance: dict = {}
    for name in _PROVENANCE_FIELDS:
        values = list(dict.fromkeys(getattr(e.run or RunProvenance(), name) for e in episodes))
        if len(values) > 1 and name in _COMPARABILITY_FIELDS:
            raise InvalidValueError(f"the episodes were recorded under {len(values)} {name} values ({values!r:.200}); "
                                    "one run is one set of conditions (score each apart)", field="episodes")
        provenance[name] = values[0] if len(values) == 1 else (
            ", ".join(str(v) if v else "unknown" for v in values) if name == "model" else None)
    return provenance


def score_episodes(episodes: Iterable[Episode], tasks: Any, *, k: Optional[int] = None, check: Any = None,
                   metrics: Optional[Mapping[str, Any]] = None, price: Optional[ModelPrice] = None,
                   prices: Optional[Mapping[str, ModelPrice]] = None,
                   run: Optional[RunProvenance] = None) -> ReliabilityReport:
    """Grade recorded ``episodes`` of the suite ``tasks`` and report them as :func:`run_suite`
    reports a run (what ``scorekit agents score`` prints).

    Each episode is a trial of the task its ``task_id`` names, in the order given; it is graded
    by ``check`` (a checker name or callable as in :func:`run_suite`, or a ``{task_id: checker}``
    mapping covering every task), on a copy. ``k`` defaults to the trials every task has (then all
    must have the same number); a task with more trials than ``k`` gives the unbiased pass@k and
    pass^k estimates of its ``n`` trials. The provenance is ``run``'s, else the episodes' own
    (:func:`_recorded_provenance`). Fails closed with
    :class:`~scorekit.errors.InvalidValueError`: an episode of no task of the suite, a task without
    ``k`` episodes, trial counts that differ without a ``k``.

    >>> tasks = [TaskSpec("t1", gold="4"), TaskSpec("t2", gold="6")]
    >>> eps = [Episode("t1", output="4"), Episode("t2", output="6"), Episode("t1", output="5"),
    ...        Episode("t2", output="6")]
    >>> r = score_episodes(eps, tasks)
    >>> r.k, r.success_rate, r.pass_at_k, r.pass_hat_k
    (2, 0.75, 1.0, 0.5)
    """
    task_list = _distinct_ids(_task_list(tasks), persist=False, caller="score_episodes")
    by_task: dict[Any, list[Episode]] = {task.task_id: [] for task in task_list}
    recorded = list(episodes)
    for i, episode in enumerate(recorded):
        if not isinstance(episode, Episode):
            raise InvalidTypeError(f"must be Episodes, got {describe(episode)} at position {i}", field="episodes")
        if episode.task_id not in by_task:
            raise InvalidValueError(f"episode {i} is of task {episode.task_id!r}, which is not a task of the suite "
                                    f"({len(task_list)} tasks)", field="episodes")
        by_task[episode.task_id].append(episode)
    counts = {task_id: len(trials) for task_id, trials in by_task.items()}
    if k is None:
        if len(set(counts.values())) > 1:
            fewest, most = min(counts, key=counts.__getitem__), max(counts, key=counts.__getitem__)
            raise InvalidValueError(f"the tasks have different numbers of trials ({counts[fewest]} for {fewest!r}, "
                                    f"{counts[most]} for {most!r}); say which k to estimate pass@k and pass^k at",
                                    field="k")
        k = next(iter(counts.values()), 0)
    k = _positive_int(k, "k", "score_episodes")
    short = [task_id for task_id, n in counts.items() if n < k]
    if short:
        raise InvalidValueError(f"{len(short)} task(s) have fewer than k={k} episodes (e.g. {short[0]!r} has "
                                f"{counts[short[0]]}); every task of the suite needs at least k trials", field="episodes")
    checkers = {task.task_id: resolve_checker(check.get(task.task_id) if isinstance(check, Mapping) else check)
                for task in task_list}
    per_task = [[e.graded(bool(checkers[task.task_id](e, task.gold))) for e in by_task[task.task_id]]
                for task in task_list]
    provenance = {f: getattr(run, f) for f in _PROVENANCE_FIELDS} if run is not None else \
        _recorded_provenance(recorded)
    return _suite_report(task_list, per_task, k, provenance, price=price, prices=prices, metrics=metrics,
                         grammar=suite_grammar(task_list))


def _finite_or_none(x: Any) -> Any:
    if isinstance(x, numbers.Real) and not isinstance(x, bool) and not math.isfinite(x):
        return None
    return x


def _pair(ci: Any) -> list:
    lo, hi = ci if ci else (None, None)
    return [_finite_or_none(lo), _finite_or_none(hi)]


def summary(report: ReliabilityReport) -> dict:
    """The persisted record of a run (also a baseline): raw counts, intervals, per-slice cuts,
    cost and provenance, as strict JSON (``inf``/``nan`` become ``None``: not measurable)."""
    cost = report.cost or {}
    return {
        "kind": "agent",
        "k": report.k,
        "n_tasks": report.n_tasks,
        "n_trials": report.n_trials,
        "n_success": report.n_success,
        "success_rate": report.success_rate,
        "success_ci": list(report.success_ci),
        "pass_at_k": _finite_or_none(report.pass_at_k),
        "pass_hat_k": _finite_or_none(report.pass_hat_k),
        "pass_hat_k_ci": _pair(report.pass_hat_k_ci),
        "pass_hat_k_sd": _finite_or_none(report.pass_hat_k_sd),
        "stochastic": report.stochastic,
        "per_slice": report.per_slice,
        "cost_per_success": _finite_or_none(cost.get("cost_per_success")),
        "cost_ci": _pair(cost.get("cost_ci")),
        "total_dollars": _finite_or_none(cost.get("total_dollars")),
        "provenance": dict(report.detail.get("provenance") or {}),
    }


def run_document(report: ReliabilityReport) -> dict:
    """The whole record of a run: :func:`summary` and the per-task counts and estimates (the
    ``results`` store's document, ``scorekit agents score --json``)."""
    return {**summary(report), "per_task": report.per_task}


def _persist(report: ReliabilityReport, run_id: Optional[str], rootdir: Any) -> None:
    runs, results = json_store("runs", rootdir=rootdir), json_store("results", rootdir=rootdir)
    record = summary(report)
    document = run_document(report)
    if run_id is None:  # never overwrite an earlier run of the same second
        run_id = results.write_new(document, fresh_run_ids(runs, "agent-run"))
    else:
        results[run_id] = document
    runs[run_id] = record
    report.detail["run_id"] = run_id


def save_agent_baseline(report: ReliabilityReport, name: str, *, rootdir: Any = None) -> dict:
    """Freeze ``report`` as the baseline ``name`` (with its provenance); returns the record.

    A run with zero trials is refused: such a baseline would pass every later run.
    """
    if not isinstance(report, ReliabilityReport):
        raise TypeError(f"save_agent_baseline: report must be a ReliabilityReport, got {type(report).__name__}")
    if report.n_trials == 0:
        raise ValueError(
            f"save_agent_baseline({name!r}): refusing to freeze a run that evaluated ZERO trials. Such a "
            "baseline can never be regressed against -- it would pass every future run, including a "
            "totally broken one.")
    record = summary(report)
    json_store("baselines", rootdir=rootdir)[name] = record
    return record


def load_agent_baseline(name: str, *, rootdir: Any = None) -> Optional[dict]:
    """The baseline ``name``, or ``None`` when there is none (read by
    :func:`scorekit.harness.load_baseline`). A name the store refuses (``..``, a symbolic link …)
    raises :class:`~scorekit.stores.StoreKeyError`, a corrupt file
    :class:`~scorekit.stores.CorruptStoreFileError`: neither is a first run."""
    return load_baseline(name, rootdir=rootdir)


@dataclasses.dataclass
class AgentGateResult:
    """Outcome of :func:`agent_regression_gate`; ``bool(result)`` is ``passed``."""

    passed: bool = True
    reasons: list = dataclasses.field(default_factory=list)
    pass_hat_k: Optional[float] = None
    pass_hat_k_baseline: Optional[float] = None
    success_rate: Optional[float] = None
    success_rate_baseline: Optional[float] = None
    cost_per_success: Optional[float] = None
    cost_per_success_baseline: Optional[float] = None
    underpowered: bool = False

    def __bool__(self) -> bool:
        return self.passed


def _whole(value: Any) -> bool:
    """A count: an integer, not a bool (nor a float, NaN included)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_baseline(base: dict) -> None:
    if "n_trials" not in base:
        raise ValueError(
            "agent_regression_gate: malformed baseline -- no 'n_trials' key. It was not produced by "
            "save_agent_baseline; re-baseline from a real run.")
    n_trials = base["n_trials"]
    if n_trials is not None and not _whole(n_trials):
        raise InvalidValueError(f"agent_regression_gate: malformed baseline -- n_trials={n_trials!r} is not a whole "
                                "number of trials; re-baseline from a real run.")
    if (n_trials or 0) <= 0:
        raise ValueError(
            "agent_regression_gate: the baseline recorded ZERO trials, so it cannot be regressed against -- "
            "every bound in it is the maximally-uncertain default, and any run at all would 'pass'. "
            "Re-baseline from a real run.")
    n_success = base.get("n_success")
    if n_success is not None and not (_whole(n_success) and 0 <= n_success <= n_trials):
        raise ValueError(
            f"agent_regression_gate: malformed baseline -- n_success={n_success!r} is not a whole number in "
            f"[0, n_trials={n_trials}].")
    n_tasks = base.get("n_tasks")
    if n_tasks is not None and not (_whole(n_tasks) and n_tasks >= 0):
        raise InvalidValueError(f"agent_regression_gate: malformed baseline -- n_tasks={n_tasks!r} is not a whole "
                                "number of tasks.")
    if n_success is None and base.get("success_rate") is None:
        raise ValueError(
            "agent_regression_gate: malformed baseline -- it carries neither 'n_success' nor 'success_rate', "
            "so the success check would be silently skipped. Re-baseline.")


def _comparability_key(provenance: Any) -> tuple:
    provenance = provenance or {}
    return tuple(provenance.get(f, "") for f in _COMPARABILITY_FIELDS)


def _finite(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _task_set_reasons(report: ReliabilityReport, base: dict) -> list[str]:
    """When the baseline lists its tasks (``per_task``, as :func:`run_document` writes): why the
    two runs are not over the same tasks, empty when they are (ids compared as JSON keys)."""
    if "per_task" not in base:
        return []
    if not isinstance(base["per_task"], Mapping):
        raise InvalidValueError(f"malformed baseline -- per_task is {describe(base['per_task'])}, not a mapping of "
                                "task ids", field="agent_regression_gate")
    baseline_tasks, current = set(base["per_task"]), {json_key(t) for t in report.per_task}
    if baseline_tasks == current:
        return []
    gone, new = sorted(baseline_tasks - current), sorted(current - baseline_tasks)
    return [f"the tasks could not be compared: {len(gone)} task(s) of the baseline are not in this run"
            f"{f' (e.g. {gone[0]!r})' if gone else ''} and {len(new)} of this run not in the baseline"
            f"{f' (e.g. {new[0]!r})' if new else ''} -- not the same suite (re-baseline)."]


def _success_reasons(report: ReliabilityReport, base: dict, tolerance: float) -> tuple[list[str], Any]:
    """The success-rate arm: why it fails (empty when it passes) and the baseline rate shown."""
    base_n, base_c, base_rate = base["n_trials"], base.get("n_success"), base.get("success_rate")
    if base_rate is not None and not (_finite(base_rate) and 0.0 <= base_rate <= 1.0):
        return [f"success rate could not be compared: the baseline's success_rate is {base_rate!r}, not a rate in "
                "[0, 1]"], base_rate
    if base_rate is None:
        base_rate = base_c / base_n
    if base_c is not None:
        _, hi = newcombe_difference(report.n_success, report.n_trials, base_c, base_n)
        if hi < -tolerance:
            return [f"success rate regressed: {report.success_rate:.3f} vs baseline {base_rate:.3f}; the 95% interval "
                    f"for the change tops out at {hi:+.3f} (tolerance {tolerance})"], base_rate
    elif report.success_ci[1] < base_rate - tolerance:
        lo, hi = report.success_ci
        return [f"success rate regressed: CI [{lo:.3f}, {hi:.3f}] lies below baseline {base_rate:.3f} "
                f"(tolerance {tolerance})"], base_rate
    return [], base_rate


def _pass_hat_k_reasons(report: ReliabilityReport, base: dict, tolerance: float) -> list[str]:
    """The pass^k arm (k > 1; pass^1 is the success rate): why it fails, empty when it passes."""
    k, cur_hat, base_hat = report.k, report.pass_hat_k, base.get("pass_hat_k")
    if k <= 1:
        return []
    if base.get("k") != k:
        return [f"pass^{k} could not be compared: the baseline ran k={base.get('k')!r} trials per task, this run {k}"]
    if not (_finite(cur_hat) and _finite(base_hat)):
        return [f"pass^{k} could not be compared: non-finite estimate (current {cur_hat!r}, baseline {base_hat!r})"]
    if "pass_hat_k_sd" in base and base.get("n_tasks"):
        se_cur = report.pass_hat_k_se()
        se_base = mean_standard_error(base_hat, base["pass_hat_k_sd"], base["n_tasks"])
        hi = (cur_hat - base_hat) + DEFAULT_Z * math.sqrt(se_cur * se_cur + se_base * se_base)
    else:
        cur_ci = report.pass_hat_k_ci
        base_ci = base.get("pass_hat_k_ci") or (base_hat, base_hat)
        if _se_from_ci(base_ci, DEFAULT_Z) in (None, 0.0) and _se_from_ci(cur_ci, DEFAULT_Z):
            base_ci = cur_ci  # a zero-width baseline must not collapse into interval-vs-point
        hi = difference_upper_bound(cur_hat, cur_ci, base_hat, base_ci)
    if not _finite(hi):
        return [f"pass^{k} could not be compared: no finite bound for the change (current {cur_hat!r}, baseline "
                f"{base_hat!r}, baseline spread {base.get('pass_hat_k_sd', base.get('pass_hat_k_ci'))!r})"]
    if hi < -tolerance:
        return [f"pass^{k} regressed: {cur_hat:.3f} vs baseline {base_hat:.3f}; the interval for the change tops out "
                f"at {hi:+.3f} (tolerance {tolerance})"]
    return []


def _cost_reasons(report: ReliabilityReport, base: dict, cost_tolerance: float) -> list[str]:
    """The cost arm: compared when both runs were priced; why it fails, empty when it passes."""
    cost = report.cost or {}
    base_ci = base.get("cost_ci") or (None, None)
    base_priced = any(x is not None for x in (base.get("total_dollars"), base.get("cost_per_success"), *base_ci))
    if not base_priced and cost.get("total_dollars") is None:
        return []
    if not base_priced or cost.get("total_dollars") is None:
        which = "the baseline has dollar figures and this run none" if base_priced else \
            "this run has dollar figures and the baseline none"
        return [f"cost per success could not be compared: {which} (price both runs alike)"]
    figures = {"cost_per_success": base.get("cost_per_success"), "cost_ci": base_ci,
               "total_dollars": base.get("total_dollars")}
    broken = [f"{name}={value!r}" for name, value in figures.items()
              if any(x is not None and not _finite(x) for x in (value if name == "cost_ci" else [value]))]
    if broken:
        return [f"cost per success could not be compared: non-finite estimate in the baseline ({', '.join(broken)})"]
    if base.get("n_success") == 0:  # the baseline's cost per success is infinite: nothing costs more
        return []
    ceiling = base_ci[1] if base_ci[1] is not None else base.get("cost_per_success")
    low = (cost.get("cost_ci") or (None, None))[0]
    if not (_finite(ceiling) and (_finite(low) or low == math.inf)):  # inf: this run had no success
        return [f"cost per success could not be compared: non-finite estimate (current CI low {low!r}, baseline CI "
                f"high {ceiling!r})"]
    if low > ceiling * (1 + cost_tolerance):
        return [f"cost per success regressed: CI low {low:.4g} exceeds the baseline CI high {ceiling:.4g} "
                f"(+{cost_tolerance:.0%})"]
    return []


def agent_regression_gate(report: ReliabilityReport, baseline: Union[str, dict, ReliabilityReport, None], *,
                          tolerance: float = 0.0, cost_tolerance: float = 0.0,
                          rootdir: Any = None) -> AgentGateResult:
    """Fail only when the evidence says the agent really got worse than ``baseline``, not on noise,
    and whenever it cannot tell.

    ``baseline`` is a baseline name, a record from :func:`save_agent_baseline`, a report, or
    ``None`` (a first run passes). The success rate fails when the upper end of the Newcombe
    interval for ``current - baseline`` is below ``-tolerance``; pass^k (k > 1) when the
    combined-SE upper bound of the difference is; cost when the current cost-per-success interval
    starts above the baseline's upper end times ``1 + cost_tolerance``. A run that shrank the
    suite fails, and so does a run over other tasks than a baseline that lists its tasks
    (``per_task``). An empty run fails. The gate fails closed: an estimate it cannot compare (NaN,
    infinite or missing in either run, pass^k of another ``k``, cost priced in only one run) fails
    with a reason saying so. ``tolerance`` and ``cost_tolerance`` must be finite and ``>= 0``. An
    empty or malformed baseline, or one made under another user simulator, suite version or
    scaffold, raises ``ValueError``. A drop in pass^k that is not significant passes with
    ``underpowered=True`` and a warning.
    """
    if not isinstance(report, ReliabilityReport):
        raise TypeError(f"agent_regression_gate: report must be a ReliabilityReport, got {type(report).__name__}")
    tolerance = check_tolerance(tolerance, "tolerance")
    cost_tolerance = check_tolerance(cost_tolerance, "cost_tolerance")
    found = resolve_baseline(baseline, rootdir=rootdir, agent=True, report_type=ReliabilityReport, record_of=summary)
    base = None if found is None else found[0]
    cost_now = report.cost.get("cost_per_success") if report.cost else None
    if report.n_trials == 0:
        return AgentGateResult(passed=False, reasons=[
            "the run evaluated ZERO trials -- an empty suite cannot pass a regression gate (check the task "
            "loader/filter)."])
    if base is None:
        return AgentGateResult(passed=True, pass_hat_k=report.pass_hat_k, success_rate=report.success_rate,
                               cost_per_success=cost_now)
    _check_baseline(base)
    current = summary(report)
    base_key = _comparability_key(base.get("provenance"))
    current_key = _comparability_key(current["provenance"])
    if base_key != current_key:
        raise ValueError(
            "agent_regression_gate: refusing to compare runs with different evaluation conditions -- baseline "
            f"(simulator, suite_version, scaffold)={base_key!r} vs current={current_key!r}. A changed "
            "user-simulator or suite version moves the score on its own; re-baseline instead of comparing "
            "across them.")

    reasons: list[str] = []
    base_tasks = base.get("n_tasks")
    if base_tasks is not None and report.n_tasks < base_tasks:
        reasons.append(f"the suite shrank: {report.n_tasks} tasks vs {base_tasks} in the baseline -- not the same "
                       "experiment (re-baseline, or restore the missing tasks).")
    reasons += _task_set_reasons(report, base)
    success, base_rate = _success_reasons(report, base, tolerance)
    reasons += success
    reasons += _pass_hat_k_reasons(report, base, tolerance)
    reasons += _cost_reasons(report, base, cost_tolerance)

    cur_hat, base_hat = report.pass_hat_k, base.get("pass_hat_k")
    underpowered = not reasons and cur_hat is not None and base_hat is not None and cur_hat < base_hat
    if underpowered:
        warnings.warn(
            f"agent_regression_gate: pass^{report.k} fell from {base_hat:.3f} to {cur_hat:.3f}, but the drop is not "
            "statistically significant -- the run is underpowered, not clean. Add trials or tasks before trusting "
            "this pass.", UserWarning, stacklevel=2)
    return AgentGateResult(
        passed=not reasons, reasons=reasons, pass_hat_k=cur_hat, pass_hat_k_baseline=base_hat,
        success_rate=report.success_rate, success_rate_baseline=base_rate, cost_per_success=cost_now,
        cost_per_success_baseline=base.get("cost_per_success"), underpowered=underpowered)
