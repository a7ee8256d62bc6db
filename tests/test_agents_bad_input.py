"""The bad input the agents issue lists, end to end: episodes without grades, k larger than the
trials, zero trials, unknown model prices, malformed transcripts, NaN costs — each a clear error
(with the wording the reference kit's tests match) or a documented outcome, never a crash."""

from __future__ import annotations

import math
import warnings

import pytest

import scorekit as ek
from scorekit.agents import (
    Cost, CostPerSuccessMetric, Episode, RunProvenance, TaskSpec, TrajectoryMetric, UnknownModelPrice,
    agent_regression_gate, cost_report, episode_from_messages, pass_at_k, pass_hat_k, per_million, reliability,
    run_suite, save_agent_baseline, trajectory_from_messages,
)


def test_episodes_without_grades():
    with pytest.raises(ValueError, match="ungraded"):
        reliability([Episode(task_id="t1")])
    with pytest.raises(ValueError, match="ungraded"):
        cost_report([Episode(task_id="t1", success=True), Episode(task_id="t2")])
    with pytest.raises(ValueError, match="no success verdict"):
        run_suite(lambda t: Episode(output="x"), [TaskSpec("t1", "a", "x")], check="recorded")


def test_k_larger_than_the_trials():
    with pytest.raises(ValueError, match="need n >= k trials"):
        pass_at_k(n=2, c=1, k=3)
    with pytest.warns(UserWarning, match="fewer than k"):
        r = reliability({"t1": [True] * 4, "t2": [True] * 4}, k=8)
    assert r.n_tasks == 0 and r.pass_hat_k is None and math.isnan(float(r))
    with pytest.warns(UserWarning) as caught:
        r = reliability({"t1": [True] * 8, "t2": [True] * 4}, k=8)
    assert ["fewer than k" in str(w.message) for w in caught] == [True, False]   # then "deterministic"
    assert r.n_tasks == 1 and r.detail["skipped"] == ["t2"]


def test_zero_trials():
    with pytest.raises(ValueError, match="k must be >= 1"):
        pass_hat_k(n=0, c=0, k=0)
    empty = run_suite(lambda t: t.gold, [])
    assert empty.n_trials == 0 and empty.pass_hat_k is None
    with pytest.raises(ValueError, match="ZERO trials"):
        save_agent_baseline(empty, "b")
    gate = agent_regression_gate(empty, {"n_trials": 10, "n_success": 10, "provenance": {}})
    assert not gate and "ZERO trials" in gate.reasons[0]


def test_unknown_model_prices():
    ep = Episode(task_id="t", output="x", cost=Cost(input_tokens=10), run=RunProvenance(model="gpt-nope"),
                 success=True)
    with pytest.raises(UnknownModelPrice, match="load_prices|prices="):
        cost_report([ep], prices={"other": per_million(1, 1)})
    with pytest.raises(UnknownModelPrice, match="cannot be used by name alone"):
        ek.score(ep, "x", metric="cost_per_success")
    with pytest.raises(UnknownModelPrice, match="gpt-nope"):
        run_suite(lambda t: ep, [TaskSpec("t", "a", "x")], prices={"other": per_million(1, 1)})
    with pytest.raises(TypeError, match="Episode"):
        CostPerSuccessMetric(price=per_million(1, 1))({"output": "x"}, "x")


def test_malformed_transcripts():
    calls = [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{not json"}}]},
             {"role": "tool", "content": "r1"},
             {"role": "tool", "content": "a result with no call"}]
    traj = trajectory_from_messages(calls)
    assert traj.tools == ("f",) and traj.steps[0].args == {"_malformed": "{not json"}
    assert traj.steps[0].observation == "r1"
    with pytest.raises(TypeError):
        trajectory_from_messages("not a list of messages")
    with pytest.raises(TypeError):
        trajectory_from_messages([{"role": "user", "content": "hi"}, 42])
    with pytest.raises(ValueError):
        episode_from_messages([], usage={"prompt_tokens": -5})


@pytest.mark.parametrize("bad", [dict(input_tokens=float("nan")), dict(output_tokens=-1),
                                 dict(cached_input_tokens=float("inf"))])
def test_nan_and_negative_costs(bad):
    ep = Episode(task_id="t", output="x", cost=Cost(**bad), success=True)
    with pytest.raises(ValueError):
        cost_report([ep], price=per_million(1, 1))
    with pytest.raises(ValueError):
        run_suite(lambda t: Episode(output="x", cost=Cost(**bad)), [TaskSpec("t", "a", "x")], price=per_million(1, 1))


def test_bad_scheme_and_unknown_checker():
    with pytest.raises(ValueError, match="scheme"):
        TrajectoryMetric(scheme="sideways")
    with pytest.raises(KeyError, match="No 'checkers' strategy"):
        run_suite(lambda t: "x", [TaskSpec("t", "a", "x")], check="telepathy")


def test_no_gold_for_extra_metrics_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_suite(lambda t: "x", [TaskSpec("t", "a")], check=lambda e, g: True,
                  metrics={"trajectory": TrajectoryMetric()})
    assert any("no `gold`" in str(w.message) for w in caught)
