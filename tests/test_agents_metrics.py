"""scorekit.agents.metrics: the checkers, TaskSuccessMetric and CostPerSuccessMetric — spec vectors,
registry entries, the facade, and a differential test against the reference kit ``ek``."""

from __future__ import annotations

import doctest
import math
import random

import pytest

import ek
import ek.agents as eka
import scorekit
from scorekit import registry
from scorekit.agents import (
    Checker, Cost, CostPerSuccessMetric, Episode, RunProvenance, TaskSuccessMetric, UnknownModelPrice,
    final_state_match, output_match, per_million, recorded_success,
)
from scorekit.agents import metrics as metrics_module


def test_doctests():
    result = doctest.testmod(metrics_module)
    assert result.failed == 0 and result.attempted >= 8


def test_registry_entries():
    assert registry.get("checkers", "output") is output_match
    assert registry.get("checkers", "final_state") is final_state_match
    assert registry.get("checkers", "recorded") is recorded_success
    assert isinstance(registry.get("metrics", "task_success"), TaskSuccessMetric)
    assert isinstance(registry.get("metrics", "cost_per_success"), CostPerSuccessMetric)
    with pytest.raises(KeyError, match="No 'checkers' strategy named 'nope'"):
        TaskSuccessMetric(check="nope")
    assert isinstance(output_match, Checker) and isinstance(lambda e, g: True, Checker)


def test_output_match():
    assert output_match(Episode(output="  The   ANSWER\n"), "the answer")
    assert output_match(Episode(output="Straße"), "STRASSE")          # full case folding
    assert output_match(Episode(output="e\u0301"), "\u00e9")             # NFC
    assert not output_match(Episode(output="42"), "43")
    assert output_match(Episode(output=42), {"output": 42.0})           # Python equality off strings
    assert not output_match(Episode(output="42"), 42)                   # a string is not a number
    assert output_match("bare", "BARE")                                 # no .output: the object itself


def test_final_state_match():
    ep = Episode(task_id="t", output="42", final_state={"db": 1})
    assert final_state_match(ep, {"db": 1})
    assert final_state_match(ep, {"final_state": {"db": 1}})
    assert not final_state_match(ep, {"db": 2})
    assert final_state_match(Episode(), None)                           # no state vs no goal


def test_recorded_success():
    assert recorded_success(Episode(success=True), None) is True
    assert recorded_success(Episode(success=0), None) is False
    with pytest.raises(ValueError, match="carries no success verdict"):
        recorded_success(Episode(), "x")


def test_task_success_vectors():
    ep = Episode(task_id="t", output="42", final_state={"db": 1})
    m = TaskSuccessMetric()
    assert m(ep, "42").value == 1.0 and m.name == "task_success"
    fs = TaskSuccessMetric(check="final_state")
    assert fs(ep, {"db": 1}).value == 1.0 and fs(ep, {"db": 2}).value == 0.0
    assert TaskSuccessMetric(check=lambda e, g: True)(ep, "nope").value == 1.0
    scores = [m(Episode(output="a"), "a"), m(Episode(output="b"), "c")]
    assert m.aggregate(scores) == 0.5 and m.aggregate([]) == 0.0
    s = m(Episode(output="x", cost=Cost(input_tokens=7, output_tokens=3, latency_s=1.5)), "x")
    assert s.detail == {"success": True, "higher_is_better": True, "total_tokens": 10, "latency_s": 1.5}
    assert m(Episode(output="x"), "y").detail == {"success": False, "higher_is_better": True}


def test_task_success_through_the_facade():
    cases = [(Episode(output="a"), "a"), (Episode(output="b"), "c"), (Episode(output="d"), "d")]
    report = scorekit.evaluate(cases, metric="task_success")
    assert report.aggregate == 2 / 3 and report.n == 3
    assert scorekit.score(Episode(output="42"), "42", metric="task_success").value == 1.0


def test_cost_per_success_vectors():
    ep = Episode(task_id="t1", output="42", cost=Cost(input_tokens=1_000_000))
    m = CostPerSuccessMetric(price=per_million(2.0, 6.0))
    s = m(ep, "42")
    assert s.value == 2.0 and s.detail == {"dollars": 2.0, "success": True, "higher_is_better": False}
    m1 = CostPerSuccessMetric(price=per_million(1, 1))
    a = Episode(output="x", cost=Cost(input_tokens=1_000_000))
    b = Episode(output="y", cost=Cost(input_tokens=1_000_000))
    assert m1.aggregate([m1(a, "x"), m1(b, "x")]) == 2.0               # $2 / 1 success, not the $1 mean
    assert m1.aggregate([m1(b, "x")]) == math.inf
    by_model = CostPerSuccessMetric(prices={"m": per_million(3, 15)})
    ep_m = Episode(output="x", cost=Cost(input_tokens=1_000_000), run=RunProvenance(model="m"))
    assert by_model(ep_m, "x").value == 3.0
    assert m1(Episode(output="x"), "x").value == 0.0                    # no Cost: free
    with pytest.raises(UnknownModelPrice):
        by_model(Episode(output="x", cost=Cost(input_tokens=1)), "x")   # no run.model


def test_cost_per_success_errors():
    with pytest.raises(TypeError, match="scores an Episode"):
        CostPerSuccessMetric(price=per_million(1, 1))("42", "42")
    with pytest.raises(UnknownModelPrice, match="cannot be used by name alone"):
        scorekit.score(Episode(output="42"), "x", metric="cost_per_success")
    with pytest.raises(TypeError, match="checker name or"):
        TaskSuccessMetric(check=3)


def test_cost_per_success_gate_direction():
    """A cost metric is lower-is-better: the score stamps it, so a gate reading it sees a cost
    increase as a regression."""
    m = CostPerSuccessMetric(price=per_million(1, 1))
    cheap = scorekit.evaluate([(Episode(output="x", cost=Cost(input_tokens=1000)), "x")] * 4, metric=m)
    costly = scorekit.evaluate([(Episode(output="x", cost=Cost(input_tokens=9000)), "x")] * 4, metric=m)
    assert cheap.aggregate == pytest.approx(1e-3) and costly.aggregate == pytest.approx(9e-3)
    assert all(s.detail["higher_is_better"] is False for s in costly.scores)


def _random_episode(rng, cls_ep, cls_cost, cls_run):
    words = ["a", "A ", "b", " b", "Straße", "strasse", 1, 1.0, True, None, {"k": 1}]
    cost = cls_cost(input_tokens=rng.randrange(0, 5000), output_tokens=rng.randrange(0, 500),
                    latency_s=rng.choice([None, rng.random()])) if rng.random() < 0.8 else None
    return cls_ep(task_id=f"t{rng.randrange(5)}", output=rng.choice(words),
                  final_state=rng.choice([None, {"db": 1}, {"db": 2}]), cost=cost,
                  success=rng.choice([None, True, False]),
                  run=cls_run(model=rng.choice(["m1", "m2"])))


@pytest.mark.parametrize("check", ["output", "final_state"])
def test_metrics_differential_against_ek(check):
    rng = random.Random(15)
    golds = ["a", "B", "strasse", 1, None, {"db": 1}, {"output": "b"}, {"final_state": {"db": 2}}]
    prices = {"m1": per_million(1.0, 4.0), "m2": per_million(0.5, 2.0, cached_input=0.1)}
    ek_prices = {"m1": eka.per_million(1.0, 4.0), "m2": eka.per_million(0.5, 2.0, cached_input=0.1)}
    ours_ts, theirs_ts = TaskSuccessMetric(check), eka.TaskSuccessMetric(check)
    ours_c, theirs_c = CostPerSuccessMetric(check, prices=prices), eka.CostPerSuccessMetric(check, prices=ek_prices)
    for _ in range(60):
        seed = rng.randrange(1 << 30)
        ours_eps = [_random_episode(random.Random(seed + i), Episode, Cost, RunProvenance) for i in range(30)]
        ek_eps = [_random_episode(random.Random(seed + i), eka.Episode, eka.Cost, eka.RunProvenance)
                  for i in range(30)]
        gold = [rng.choice(golds) for _ in ours_eps]
        a = [ours_ts(e, g) for e, g in zip(ours_eps, gold)]
        b = [theirs_ts(e, g) for e, g in zip(ek_eps, gold)]
        assert [(s.value, s.detail) for s in a] == [(s.value, s.detail) for s in b]
        assert ours_ts.aggregate(a) == theirs_ts.aggregate(b)
        a = [ours_c(e, g) for e, g in zip(ours_eps, gold)]
        b = [theirs_c(e, g) for e, g in zip(ek_eps, gold)]
        assert [(s.value, s.detail) for s in a] == [(s.value, s.detail) for s in b]
        assert ours_c.aggregate(a) == theirs_c.aggregate(b)


def test_recorded_checker_differential():
    for success in (True, False, 1, 0):
        assert recorded_success(Episode(success=success), None) == eka.recorded_success(
            eka.Episode(success=success), None)
    assert ek.agents.metrics.output_match("x", "X") == output_match("x", "X")
