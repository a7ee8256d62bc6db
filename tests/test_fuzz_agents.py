"""Fuzzing the agent harness and bridges for the pooling pattern: two tasks must never count as
trials of one, and no count is truncated or misreported. Each call gives a valid result that keeps
every task apart, or a named error (``fuzz_harness.outcome``).

- ``run_suite`` with agents whose episodes name any task (another one, an empty id, ids equal to
  Python or as JSON), suites that repeat ids, hostile ``k`` and ``timeout``;
- ``episodes_from_inspect_log`` and ``run_inspect`` over logs whose sample ids and task names
  repeat and meet;
- ``tools.pass_k`` and ``tools.cost_per_success`` with hostile counts and dollars.
"""

from __future__ import annotations

import itertools
import math
import warnings
from types import SimpleNamespace as NS

from hypothesis import given
from hypothesis import strategies as st

from scorekit import tools
from scorekit.agents import Episode, TaskSpec, episodes_from_inspect_log, run_inspect, run_suite

from fuzz_harness import floats, ints, outcome, wrong_values

#: Task ids that are distinct, equal to Python (1, True, 1.0) or one key as JSON (1, "1"; None, "null").
task_ids = st.sampled_from(["t0", "t1", "t2", "", 1, "1", True, 1.0, None, "null", "a/b", "a"])


@given(ids=st.lists(task_ids, max_size=4),
       returned=st.lists(st.one_of(st.none(), task_ids), min_size=1, max_size=6),
       k=st.one_of(st.integers(1, 3), ints, wrong_values),
       timeout=st.one_of(st.none(), st.floats(0.5, 5), floats, wrong_values))
def test_run_suite_scores_every_task_it_ran_or_refuses(ids, returned, k, timeout):
    tasks = [TaskSpec(task_id, input=n, gold="x") for n, task_id in enumerate(ids)]
    answers = itertools.cycle(returned)

    def agent(task):
        task_id = next(answers)
        return "x" if task_id is None else Episode(task_id=task_id, output="x")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = outcome(lambda: run_suite(agent, tasks, k=k, timeout=timeout, max_episodes=40, progress="never"))
    if result[0] == "ok":
        report = result[1]
        assert (report.n_tasks, report.n_trials) == (len(tasks), len(tasks) * k)
        assert [row["n"] for row in report.per_task.values()] == [k] * len(tasks)


def inspect_log(task, samples):
    return NS(status="success", eval=NS(model="m", task_version=0, task=task),
              samples=[NS(id=sample_id, epoch=epoch, messages=[], output=None, scores={"s": NS(value="C")})
                       for sample_id, epoch in samples])


sample_ids = st.sampled_from([1, "1", 2, "b/c", "c", "", None, 0])
log_samples = st.lists(st.tuples(sample_ids, st.sampled_from([1, 2, None])), max_size=4)
task_names = st.sampled_from(["t", "t", "a", "a/b", "", "t#0"])


@given(logs=st.lists(st.tuples(task_names, log_samples), min_size=1, max_size=4))
def test_pooled_inspect_logs_never_merge_two_trials(logs):
    built = [inspect_log(task, samples) for task, samples in logs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = outcome(lambda: run_inspect("x", eval_fn=lambda tasks, **kwargs: built))
    if result[0] == "ok":
        episodes = result[1]
        assert len(episodes) == sum(len(samples) for _, samples in logs)
        trials = [(e.task_id, repr(e.meta["epoch"])) for e in episodes]
        assert len(set(trials)) == len(trials)
        owners = {}   # every task id comes from one log only
        for log_index, episode in zip((i for i, (_, s) in enumerate(logs) for _ in s), episodes):
            assert owners.setdefault(episode.task_id, log_index) == log_index
    for log in built:
        single = outcome(lambda: list(episodes_from_inspect_log(log)))
        if single[0] == "ok":
            trials = [(e.task_id, repr(e.meta["epoch"])) for e in single[1]]
            assert len(set(trials)) == len(trials)


counts = st.one_of(st.integers(-3, 12), st.floats(-3, 12), ints, floats,
                   st.sampled_from(["3", "3.5", "-1", "", "x", "1e3"]), wrong_values)


@given(n=counts, c=counts, k=st.one_of(st.just(1), counts))
def test_pass_k_never_truncates_a_count(n, c, k):
    result = outcome(lambda: tools.pass_k(n, c, k))
    if result[0] == "ok":
        out = result[1]
        for name, given_value in (("n", n), ("c", c), ("k", k)):
            assert out[name] == given_value or out[name] == int(given_value) == float(given_value)
        assert 0 <= out["pass_hat_k"] <= out["pass_at_k"] <= 1


@given(total=st.one_of(st.floats(0, 100), floats, st.sampled_from(["12.5", "-1", "inf", "nan"]), wrong_values),
       successes=counts, attempts=st.one_of(st.none(), counts))
def test_cost_per_success_reports_only_consistent_counts(total, successes, attempts):
    result = outcome(lambda: tools.cost_per_success(total, successes, attempts=attempts))
    if result[0] == "ok":
        out = result[1]
        assert math.isfinite(out["total_dollars"]) and out["total_dollars"] >= 0 and out["successes"] >= 0
        assert out["cost_per_success"] == (math.inf if out["successes"] == 0
                                           else out["total_dollars"] / out["successes"])
        if attempts is not None:
            assert 0 <= out["success_rate"] <= 1
