"""scorekit.agents.cost: spec vectors, hand-computed values, errors, and parity with ``ek``."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pickle
import random
import subprocess
import sys

import numpy as np
import pytest
from ek.agents import base as ekb
from ek.agents import cost as ekc

from doc_examples import run_python_blocks
from scorekit.agents import (
    Cost, Episode, ModelPrice, RunProvenance, UnknownModelPrice, cost_of_pass, cost_report, dollars,
    episode_dollars, load_prices, per_million, price_of,
)
from scorekit.agents import cost as C
from scorekit.agents.cost import episode_dollars_array
from scorekit.errors import InvalidTypeError, InvalidValueError


# --- constants, ModelPrice, per_million ---------------------------------------------------------

def test_constants_and_exception():
    assert C.DEFAULT_CACHE_DISCOUNT == 0.1 and C.DEFAULT_BATCH_DISCOUNT == 0.5
    assert issubclass(UnknownModelPrice, KeyError)


def test_model_price_rates():
    p = ModelPrice(input=2e-6, output=8e-6)
    assert p.cached_rate == 0.1 * 2e-6 and p.reasoning_rate == 8e-6
    q = ModelPrice(input=2e-6, output=8e-6, cached_input=0.0, reasoning=4e-6)
    assert q.cached_rate == 0.0 and q.reasoning_rate == 4e-6  # an explicit 0 is kept, not defaulted


def test_per_million_vectors():
    p = per_million(3.0, 15.0)
    assert (round(p.input, 9), round(p.output, 9)) == (3e-06, 1.5e-05)
    assert p.input == 3.0 * 1e-6 and p.cached_input is None and p.reasoning is None
    q = per_million(2, 8, reasoning=4, cached_input=0.5)
    assert q.reasoning == 4 * 1e-6 and q.cached_input == 0.5 * 1e-6


@pytest.mark.parametrize("kw, exc, pat", [
    (dict(input=float("nan")), ValueError, "finite"),
    (dict(output=-1e-6), ValueError, ">= 0"),
    (dict(cached_input=float("inf")), ValueError, "cached_input"),
    (dict(reasoning="1"), TypeError, "reasoning"),
    (dict(input=True), TypeError, "input"),
])
def test_model_price_rejects_bad_rates(kw, exc, pat):
    with pytest.raises(exc, match=pat):
        ModelPrice(**kw)


def test_per_million_rejects_non_numbers():
    with pytest.raises(TypeError, match="per_million: input"):
        per_million("1", 2)


# --- dollars / price_of -------------------------------------------------------------------------

def test_dollars_spec_vectors():
    price = ModelPrice(input=1e-6, output=5e-6)
    assert round(dollars(Cost(input_tokens=1_000_000, output_tokens=200_000), price), 4) == 2.0
    p = per_million(1.0, 10.0)
    assert dollars(Cost(input_tokens=1_000_000), p) == pytest.approx(1.0)
    assert dollars(Cost(output_tokens=1_000_000), p) == pytest.approx(10.0)
    assert dollars(Cost(cached_input_tokens=1_000_000), p) == pytest.approx(0.1)
    assert dollars(Cost(input_tokens=1_000_000), per_million(1, 1), batch=True) == pytest.approx(0.5)
    all4 = Cost(input_tokens=10**6, output_tokens=10**6, cached_input_tokens=10**6, reasoning_tokens=10**6)
    assert dollars(all4, per_million(2.0, 8.0)) == pytest.approx(18.2, abs=1e-12)
    q = per_million(2, 8, reasoning=4, cached_input=0.5)
    assert dollars(Cost(reasoning_tokens=10**6), q) == pytest.approx(4.0)
    assert dollars(Cost(cached_input_tokens=10**6), q) == pytest.approx(0.5)
    assert dollars(Cost(input_tokens=1000), "m", prices={"m": per_million(1, 1)}) == 0.001


def test_dollars_hand_computed():
    # 100*2e-6 + 50*1e-5 + 10*(0.1*2e-6) + 5*1e-5 = 2e-4 + 5e-4 + 2e-6 + 5e-5 = 7.52e-4
    c = Cost(input_tokens=100, output_tokens=50, cached_input_tokens=10, reasoning_tokens=5,
             retries=7, latency_s=3.0)
    assert dollars(c, ModelPrice(2e-6, 1e-5)) == pytest.approx(7.52e-4, rel=1e-14)
    assert dollars(c, ModelPrice(2e-6, 1e-5), batch=True) == pytest.approx(3.76e-4, rel=1e-14)
    assert dollars(Cost(retries=5, latency_s=9.0), ModelPrice(1.0, 1.0)) == 0.0  # not priced


def test_unknown_model_message():
    for prices in (None, {}, {"other": per_million(1, 1)}):
        with pytest.raises(UnknownModelPrice, match="load_prices|prices=") as ei:
            dollars(Cost(input_tokens=1), "gpt-nonexistent", prices=prices)
        assert "'gpt-nonexistent'" in str(ei.value) and "no built-in price table" in str(ei.value)
    assert price_of("m", prices={"m": ModelPrice(1e-6)}) == ModelPrice(1e-6)


@pytest.mark.parametrize("cost, price, exc, pat", [
    (Cost(input_tokens=-5), ModelPrice(1e-6), ValueError, ">= 0"),
    (Cost(output_tokens=float("nan")), ModelPrice(1e-6), ValueError, ">= 0"),
    (Cost(reasoning_tokens="3"), ModelPrice(1e-6), TypeError, "numbers"),
    (Cost(input_tokens=float("-inf")), ModelPrice(1e-6), ValueError, ">= 0"),
    (None, ModelPrice(1e-6), TypeError, "cost must be a Cost"),
    (Cost(), 3, TypeError, "price must be a ModelPrice"),
    (Cost(), None, TypeError, "price must be a ModelPrice"),
])
def test_dollars_bad_input(cost, price, exc, pat):
    with pytest.raises(exc, match=pat):
        dollars(cost, price)


# --- load_prices --------------------------------------------------------------------------------

SPEC_TABLE = {
    "m1": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
           "cache_read_input_token_cost": 1e-7, "output_cost_per_reasoning_token": 3e-6},
    "embed": {"input_cost_per_token": None, "output_cost_per_token": None},
    "only_in": {"input_cost_per_token": 1e-6},
    "sample_spec": "str",
}


def test_load_prices_spec_vector(tmp_path):
    want = {"m1": ModelPrice(1e-06, 2e-06, 1e-07, 3e-06), "only_in": ModelPrice(1e-06, 0.0, None, None)}
    assert load_prices(SPEC_TABLE) == want
    assert load_prices(SPEC_TABLE)["m1"].cached_rate == 1e-7
    f = tmp_path / "model_prices_and_context_window.json"
    f.write_text(json.dumps(SPEC_TABLE), encoding="utf-8")
    assert load_prices(f) == want and load_prices(str(f)) == want
    assert load_prices({"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}})["m"].output == 2e-06
    assert load_prices({"m": {"input_cost_per_token": "1e-6"}})["m"].input == 1e-6  # as float() does


def test_load_prices_without_a_source_is_a_named_error():
    with pytest.raises(InvalidTypeError, match="load_prices needs a source: a path to a local copy of LiteLLM's "
                                               "model_prices_and_context_window.json"):
        load_prices()
    with pytest.raises(InvalidTypeError, match="load_prices needs a source"):
        load_prices(None)
    assert len(ekc.load_prices()) > 100   # the kit reads its bundled snapshot


def test_load_prices_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_prices(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_prices(bad)
    arr = tmp_path / "list.json"
    arr.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="JSON object"):
        load_prices(arr)
    with pytest.raises(TypeError, match="path or a mapping"):
        load_prices(3)
    with pytest.raises(ValueError, match="'m'.*non-numeric input_cost_per_token"):
        load_prices({"m": {"input_cost_per_token": "abc"}})
    with pytest.raises(ValueError, match="'m'.*non-numeric"):
        load_prices({"m": {"output_cost_per_token": [1]}})
    with pytest.raises(ValueError, match="'m'.*>= 0"):
        load_prices({"m": {"input_cost_per_token": -1e-6}})


# --- cost_of_pass / episode_dollars -------------------------------------------------------------

def test_cost_of_pass():
    assert cost_of_pass(10.0, 4) == 2.5
    assert cost_of_pass(10.0, 0) == math.inf
    # a negative count or an infinite spend is an error, not the kit's inf
    assert ekc.cost_of_pass(10.0, -1) == ekc.cost_of_pass(math.inf, 2) == math.inf
    with pytest.raises(InvalidValueError, match="n_success must be >= 0, got -1"):
        cost_of_pass(10.0, -1)
    for total in (math.inf, -math.inf):
        with pytest.raises(InvalidValueError, match="total_cost must be finite and >= 0"):
            cost_of_pass(total, 2)
    with pytest.raises(InvalidTypeError, match="n_success must be an integer count, got True"):
        cost_of_pass(10.0, True)
    with pytest.raises(InvalidValueError, match=r"n_success is beyond the float range \(an integer of 1329 bits\)"):
        cost_of_pass(0.0, 10**400)
    assert cost_of_pass(0, 3) == 0.0
    with pytest.raises(ValueError, match="total_cost"):
        cost_of_pass(float("nan"), 2)
    with pytest.raises(ValueError, match="total_cost"):
        cost_of_pass(-1.0, 2)
    with pytest.raises(TypeError, match="n_success"):
        cost_of_pass(10.0, 2.5)
    with pytest.raises(TypeError, match="total_cost"):
        cost_of_pass("a", 2)


def test_episode_dollars():
    ep = Episode(cost=Cost(input_tokens=10**6), run=RunProvenance(model="m"))
    assert episode_dollars(ep, prices={"m": per_million(3, 15)}) == 3.0
    assert episode_dollars(ep, price=per_million(1, 1), prices={"m": per_million(3, 15)}) == 1.0
    assert episode_dollars(ep, prices={"m": per_million(3, 15)}, batch=True) == 1.5
    assert episode_dollars(Episode()) == 0.0  # no cost: nothing to price, not even a lookup
    with pytest.raises(UnknownModelPrice, match="''"):
        episode_dollars(Episode(cost=Cost(input_tokens=1)), prices={"m": per_million(1, 1)})


# --- cost_report --------------------------------------------------------------------------------

def test_cost_report_spec_vectors():
    p = per_million(1.0, 1.0)
    eps = [Episode(task_id="a", cost=Cost(input_tokens=1_000_000), success=True),
           Episode(task_id="b", cost=Cost(input_tokens=1_000_000), success=False)]
    r = cost_report(eps, price=p)
    assert r == {"n": 2, "n_success": 1, "success_rate": 0.5, "total_dollars": 2.0,
                 "cost_per_success": 2.0, "mean_latency_s": None, "total_tokens": 2000000, "priced": True}
    assert list(r) == ["n", "n_success", "success_rate", "total_dollars", "cost_per_success",
                       "mean_latency_s", "total_tokens", "priced"]
    unpriced = cost_report(eps)
    assert unpriced["cost_per_success"] is None and unpriced["total_dollars"] is None
    assert unpriced["total_tokens"] == 2000000 and unpriced["priced"] is False
    assert cost_report([]) == {"n": 0, "n_success": 0, "success_rate": 0.0, "total_dollars": None,
                               "cost_per_success": None, "mean_latency_s": None, "total_tokens": 0,
                               "priced": False}
    small = [Episode(task_id="a", cost=Cost(input_tokens=100), success=True),
             Episode(task_id="b", cost=Cost(input_tokens=100), success=False)]
    assert cost_report(small, price=p)["cost_per_success"] == pytest.approx(2e-4, rel=1e-15)
    two = [Episode(task_id=t, cost=Cost(input_tokens=10), success=True) for t in "ab"]
    assert cost_report(two, price=ModelPrice(1e-6))["total_dollars"] == 1.9999999999999998e-05


def test_cost_report_hand_computed():
    eps = [Episode(task_id="a", cost=Cost(input_tokens=10, latency_s=1.0), success=True),
           Episode(task_id="b", cost=None, success=False),
           Episode(task_id="c", cost=Cost(output_tokens=4, latency_s=2.0), success=False),
           Episode(task_id="d", cost=Cost(reasoning_tokens=2), success=True)]
    r = cost_report(eps, price=ModelPrice(1.0, 2.0))
    assert r["total_dollars"] == 10 + 8 + 4 and r["cost_per_success"] == 11.0
    assert r["mean_latency_s"] == 1.5 and r["total_tokens"] == 16 and r["success_rate"] == 0.5
    no_cost = [Episode(task_id="b", cost=None, success=True)]
    assert cost_report(no_cost, prices={})["priced"] is True  # an empty catalog still means "priced"
    assert cost_report(no_cost, prices={})["total_dollars"] == 0.0
    # ek sums from int 0, so an empty priced report has total_dollars == 0 (an int); ours is 0.0
    assert type(cost_report([], price=ModelPrice(1.0))["total_dollars"]) is float
    r0 = cost_report([Episode(task_id="x", cost=Cost(), success=False)], price=ModelPrice(1.0))
    assert r0["total_dollars"] == 0.0 and r0["cost_per_success"] == math.inf


def test_cost_report_errors():
    eps = [Episode(task_id=t, success=None) for t in "acde"] + [Episode(task_id="b", success=True)]
    with pytest.raises(ValueError, match=r"cost_report: 4 episode\(s\) are ungraded .*\['a', 'c', 'd'\]"):
        cost_report(eps)
    with pytest.raises(TypeError, match="expected Episodes"):
        cost_report([1, 2])
    with pytest.raises(UnknownModelPrice, match="load_prices|prices="):
        cost_report([Episode(task_id="a", cost=Cost(1), success=True)], prices={})
    cost_report(iter([Episode(task_id="a", cost=Cost(5), success=True)]), price=ModelPrice(1.0))


# --- differential against ek ---------------------------------------------------------------------

MODELS = ["m0", "m1", "m2", "m3"]


def rand_rate(rng):
    return rng.choice([0.0, rng.uniform(0, 1e-4), rng.random() * 10 ** rng.randint(-9, -3)])


def rand_entry(rng):
    e = {}
    for key in ("input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
                "output_cost_per_reasoning_token"):
        if rng.random() < 0.7:
            e[key] = rng.choice([None, rand_rate(rng)])
    if rng.random() < 0.2:
        e["max_tokens"] = rng.randint(1, 10**6)
    return e


def rand_cost(rng, mod):
    return mod.Cost(input_tokens=rng.randint(0, 10**7), output_tokens=rng.randint(0, 10**6),
                    cached_input_tokens=rng.choice([0, rng.randint(0, 10**6)]),
                    reasoning_tokens=rng.choice([0, rng.randint(0, 10**6)]),
                    retries=rng.randint(0, 3),
                    latency_s=rng.choice([None, rng.uniform(0, 60)]))


def mirror_price(p):
    return ekc.ModelPrice(p.input, p.output, p.cached_input, p.reasoning)


def test_differential_prices_and_dollars():
    rng = random.Random(15)
    for _ in range(3000):
        raw = {m: rand_entry(rng) for m in MODELS}
        raw["sample_spec"] = "doc"
        ours, theirs = load_prices(raw), ekc.load_prices(raw)
        assert set(ours) == set(theirs)
        for m in ours:
            assert (ours[m].input, ours[m].output, ours[m].cached_input, ours[m].reasoning) == \
                (theirs[m].input, theirs[m].output, theirs[m].cached_input, theirs[m].reasoning)
            assert ours[m].cached_rate == theirs[m].cached_rate
        st = rng.getstate()
        c = rand_cost(rng, C)
        rng.setstate(st)
        ce = rand_cost(rng, ekb)
        batch = rng.random() < 0.3
        args = [rng.uniform(0, 100) for _ in range(2)]
        opt = [rng.choice([None, rng.uniform(0, 50)]) for _ in range(2)]
        pm, pme = per_million(*args, cached_input=opt[0], reasoning=opt[1]), \
            ekc.per_million(*args, cached_input=opt[0], reasoning=opt[1])
        assert (pm.input, pm.output, pm.cached_input, pm.reasoning) == \
            (pme.input, pme.output, pme.cached_input, pme.reasoning)
        assert dollars(c, pm, batch=batch) == ekc.dollars(ce, pme, batch=batch)
        for m in ours:
            assert dollars(c, m, prices=ours, batch=batch) == ekc.dollars(ce, m, prices=theirs, batch=batch)
        total, n_success = rng.uniform(0, 1e3), rng.randint(0, 50)
        assert cost_of_pass(total, n_success) == ekc.cost_of_pass(total, n_success)


def make_episodes(rng, n, priced_models):
    ours, theirs = [], []
    for i in range(n):
        st = rng.getstate()
        has_cost = rng.random() < 0.9
        c = rand_cost(rng, C) if has_cost else None
        rng.setstate(st)
        rng.random()
        ce = rand_cost(rng, ekb) if has_cost else None
        model = rng.choice(priced_models)
        success = rng.random() < 0.4
        ours.append(Episode(task_id=f"t{i}", cost=c, success=success, run=RunProvenance(model=model)))
        theirs.append(ekb.Episode(task_id=f"t{i}", cost=ce, success=success,
                                  run=ekb.RunProvenance(model=model)))
    return ours, theirs


def test_differential_cost_report():
    rng = random.Random(1515)
    for _ in range(300):
        raw = {m: {"input_cost_per_token": rand_rate(rng), "output_cost_per_token": rand_rate(rng),
                   "cache_read_input_token_cost": rng.choice([None, rand_rate(rng)])} for m in MODELS}
        ours_t, theirs_t = load_prices(raw), ekc.load_prices(raw)
        eps, eeps = make_episodes(rng, rng.randint(0, 60), MODELS)
        for ours_kw, theirs_kw in (({}, {}), ({"prices": ours_t}, {"prices": theirs_t}),
                                   ({"price": ours_t["m1"]}, {"price": theirs_t["m1"]})):
            a, b = cost_report(eps, **ours_kw), ekc.cost_report(eeps, **theirs_kw)
            assert list(a) == list(b)
            for k in a:
                if not (k == "total_dollars" and b[k] == 0 and type(b[k]) is int):  # ek's int 0
                    assert type(a[k]) is type(b[k]), k
                assert a[k] == b[k], k   # exact: same products, same order of additions
        for e, ee in zip(eps, eeps):
            assert episode_dollars(e, prices=ours_t, batch=True) == \
                ekc.episode_dollars(ee, prices=theirs_t, batch=True)
        assert episode_dollars_array(eps, prices=ours_t).tolist() == \
            [ekc.episode_dollars(ee, prices=theirs_t) for ee in eeps]


def test_cost_report_speed_50k():
    import time

    rng = random.Random(7)
    eps, eeps = make_episodes(rng, 50_000, MODELS)
    raw = {m: {"input_cost_per_token": 1e-6 * (i + 1), "output_cost_per_token": 5e-6} for i, m in enumerate(MODELS)}
    ours_t, theirs_t = load_prices(raw), ekc.load_prices(raw)
    t0 = time.perf_counter()
    a = cost_report(eps, prices=ours_t)
    t1 = time.perf_counter()
    b = ekc.cost_report(eeps, prices=theirs_t)
    t2 = time.perf_counter()
    print(f"\ncost_report 50k: scorekit {t1 - t0:.3f}s, ek {t2 - t1:.3f}s")
    assert a == b


def test_module_doctests_and_docs_section():
    import doctest

    assert doctest.testmod(C).failed == 0
    assert run_python_blocks("agents.md", section="Cost: prices", optionflags=0) > 0


# --- the column path against the one-episode-at-a-time path ---------------------------------------

def one_by_one(monkeypatch):
    """Force the reference path: no columns, no small-report loop."""
    monkeypatch.setattr(C, "_columns", lambda *args, **kw: None)
    monkeypatch.setattr(C, "_cost_report_small", lambda *args, **kw: None)


def both_paths(monkeypatch, eps, **kw):
    fast = cost_report(eps, **kw)
    arr = episode_dollars_array(eps, **kw) if kw else None
    with monkeypatch.context() as m:
        one_by_one(m)
        slow = cost_report(eps, **kw)
        slow_arr = episode_dollars_array(eps, **kw) if kw else None
    return fast, slow, arr, slow_arr


def assert_paths_agree(monkeypatch, eps, **kw):
    fast, slow, arr, slow_arr = both_paths(monkeypatch, eps, **kw)
    assert fast == slow
    assert arr is None or arr.tolist() == slow_arr.tolist()


@pytest.mark.parametrize("small_report", [None, 0, 10**9])
def test_columns_and_small_reports_match_one_by_one(monkeypatch, small_report):
    # lists up to 80 episodes by the default threshold (None), all through the columns (0), or all
    # through the small-report loop (10**9)
    if small_report is not None:
        monkeypatch.setattr(C, "SMALL_REPORT", small_report)
    rng = random.Random(77)
    table = {m: per_million(rng.uniform(0, 30), rng.uniform(0, 90), cached_input=rng.choice([None, 0.3]))
             for m in MODELS}
    for _ in range(100):
        eps, _ = make_episodes(rng, rng.randint(0, 80), MODELS)
        for e in eps:
            if rng.random() < 0.1:
                e.run = None
        for kw in ({}, {"price": table["m2"]}, {"prices": {**table, "": table["m0"]}}):
            assert_paths_agree(monkeypatch, eps, **kw)


@pytest.mark.parametrize("odd", [
    Episode(task_id="a", success=1, cost=Cost(1)),                       # a non-bool outcome
    Episode(task_id="a", success=True, cost=Cost(1.5)),                  # a float count
    Episode(task_id="a", success=True, cost=Cost(True)),                 # a bool count
    Episode(task_id="a", success=True, cost=Cost(1, latency_s=2)),       # an int latency
    Episode(task_id="a", success=True, cost=ekb.Cost(1)),                # another kit's Cost
    Episode(task_id="a", success=True, cost=Cost(1), run=RunProvenance(model="unknown")),
    Episode(task_id="a", success=True, cost=Cost(-1)),                   # a negative count
    Episode(task_id="a", success=None, cost=Cost(1)),                    # ungraded
    type("NoCost", (), {"task_id": "a", "success": True})(),             # no `cost` attribute
])
def test_the_small_report_hands_unusual_episodes_to_the_reference_path(odd):
    assert C._cost_report_small([Episode(task_id="z", success=True), odd], {"": ModelPrice(1.0, 1.0)}, None) is None


def test_columns_hand_totals_that_match_hand_computation():
    eps = [Episode(task_id="a", success=True, cost=Cost(1, 2, 3, 4, latency_s=0.5), run=RunProvenance(model="x")),
           Episode(task_id="b", success=False),
           Episode(task_id="d", success=False, cost=Cost(output_tokens=7, latency_s=0.25), run=None)]
    prices = {"x": ModelPrice(1.0, 10.0, 100.0, 1000.0), "": ModelPrice(0.5, 2.0)}
    cols = C._columns(eps, prices, None)
    assert cols.outcomes.tolist() == [1, 0, 0] and cols.counts.tolist() == [[1, 2, 3, 4], [0, 7, 0, 0]]
    assert cols.latencies == [0.5, 0.25] and cols.dollars.tolist() == [4321.0, 0.0, 14.0]
    assert cost_report(eps, prices=prices) == {
        "n": 3, "n_success": 1, "success_rate": 1 / 3, "total_dollars": 4335.0, "cost_per_success": 4335.0,
        "mean_latency_s": 0.375, "total_tokens": 17, "priced": True}
    assert C._columns(eps, None, None).dollars is None


@pytest.mark.parametrize("episode", [
    Episode(task_id="a", success=True, cost=Cost(1.5)),                  # a float count
    Episode(task_id="a", success=True, cost=Cost(2 ** 70)),              # beyond int64
    Episode(task_id="a", success=True, cost=Cost(True)),                 # a bool count
    Episode(task_id="a", success=True, cost=ekb.Cost(1)),                # another kit's Cost
    Episode(task_id="a", success=True, cost=Cost(1), run=RunProvenance(model="unknown")),
    Episode(task_id="a", success=True, cost=Cost(-1)),                   # a negative count
    type("NoCost", (), {"task_id": "a", "success": True})(),             # no `cost` attribute
])
def test_columns_hand_unusual_episodes_to_the_reference_path(episode):
    eps = [Episode(task_id="z", success=True), episode]
    assert C._columns(eps, {"": ModelPrice(1.0, 1.0)}, None) is None


def test_columns_need_float_rates_and_known_models():
    eps = [Episode(task_id="a", success=True, cost=Cost(7, 1), run=RunProvenance(model="m"))]
    assert C._columns(eps, None, ModelPrice(1, 2)) is None             # int rates: Python multiplies exactly
    assert C._columns(eps, {"m": ModelPrice(1, 2)}, None) is None
    assert C._columns(eps, {"other": ModelPrice(1.0, 2.0)}, None) is None
    assert C._columns(eps, {"m": ModelPrice(1.0, 2.0)}, None).dollars.tolist() == [9.0]


def test_long_lists_add_up_in_order(monkeypatch):
    rng = random.Random(2024)
    table = {m: per_million(rng.uniform(0, 30), rng.uniform(0, 90), cached_input=rng.choice([None, 0.3]))
             for m in MODELS}
    runs = [RunProvenance(model=m) for m in MODELS]
    eps = [Episode(task_id=f"t{i}", cost=rand_cost(rng, C) if rng.random() < 0.95 else None,
                   success=rng.random() < 0.4, run=rng.choice(runs)) for i in range(70_000)]
    for kw in ({}, {"price": table["m2"]}, {"prices": table}):
        assert_paths_agree(monkeypatch, eps, **kw)
    # models read from JSON are distinct string objects: found by value
    for e in eps[:1000]:
        e.run = RunProvenance(model="".join(list(e.run.model)))
    assert_paths_agree(monkeypatch, eps, prices=table)
    eps[39_000] = Episode(task_id="u", cost=Cost(1), run=RunProvenance(model="m0"))
    with pytest.raises(ValueError, match=r"1 episode\(s\) are ungraded .*\['u'\]"):
        cost_report(eps, prices=table)
    eps[39_000] = Episode(task_id="neg", cost=Cost(-1), success=True, run=RunProvenance(model="m0"))
    with pytest.raises(ValueError, match=">= 0"):
        cost_report(eps, prices=table)
    assert cost_report(eps)["total_tokens"] == sum(e.cost.total_tokens for e in eps if e.cost)


def test_token_total_is_exact_beyond_int64():
    counts = np.array([[2 ** 62, 2 ** 62, 0, 0], [2 ** 62, 1, 0, 0]], dtype=np.int64)
    assert C._token_total(counts) == 3 * 2 ** 62 + 1
    assert C._token_total(np.zeros((0, 4), dtype=np.int64)) == 0
    big = [Episode(task_id=str(i), success=True, cost=Cost(2 ** 62, 2 ** 62)) for i in range(3)]
    assert cost_report(big)["total_tokens"] == 6 * 2 ** 62


# --- Episode and Cost are plain dataclasses, as in the reference kit -------------------------------

def test_cost_and_episode_have_the_kits_semantics():
    for ours, theirs in ((Cost, ekb.Cost), (Episode, ekb.Episode), (RunProvenance, ekb.RunProvenance)):
        assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(theirs)]
        assert ours.__dataclass_params__.frozen == theirs.__dataclass_params__.frozen
        assert hasattr(ours(), "__dict__") == hasattr(theirs(), "__dict__")
    c = Cost(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.input_tokens = 3
    e = Episode("t", cost=c, success=True)
    assert pickle.loads(pickle.dumps(e)) == e == copy.copy(e) == copy.deepcopy(e)


def test_frozen_dataclass_idioms_work_and_are_counted():
    # the standard frozen-dataclass __post_init__ idiom in a subclass
    @dataclasses.dataclass(frozen=True)
    class Normalised(Cost):
        def __post_init__(self):
            object.__setattr__(self, "input_tokens", int(self.input_tokens))

    e = Episode("t", cost=Normalised("5"), success=True)
    assert e.cost.input_tokens == 5
    # a cost changed after it was built is read as it is now, never from a stale copy
    c = Cost(1)
    e = Episode("t", cost=c, success=True)
    object.__setattr__(c, "input_tokens", 1_000_000)
    assert cost_report([e])["total_tokens"] == 1_000_000
    assert cost_report([e], price=ModelPrice(1e-6))["total_dollars"] == 1.0


def test_an_episode_subclass_may_define_getattr():
    class Lenient(Episode):
        def __getattr__(self, name):
            return None

    e = Lenient("t", cost=Cost(3, latency_s=1.0), success=False)
    assert e.anything is None
    assert cost_report([e])["total_tokens"] == 3


def test_cost_reports_without_the_compiled_core():
    code = """
import sys, warnings
sys.modules["scorekit._core"] = None
warnings.simplefilter("ignore")
from scorekit.agents import Cost, Episode, cost_report, per_million
e = Episode("t", cost=Cost(1, 2, latency_s=0.5), success=True)
r = cost_report([e], price=per_million(1.0, 2.0))
print(r["total_tokens"], r["total_dollars"], r["mean_latency_s"])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["3", repr(1 * 1e-6 + 2 * 2e-6), "0.5"]


def test_unusual_inputs_match_ek(monkeypatch):
    # each of these leaves the column path; the answers (or errors) are the reference's
    price = ModelPrice(2e-6, 1e-5)
    cases = [
        ([Episode(task_id="a", success=1, cost=Cost(10, latency_s=2)), Episode(task_id="b", success=0)], {}),
        ([Episode(task_id="a", success=True, cost=Cost(2 ** 70, 3))], {"price": price}),
        ([Episode(task_id="a", success=True, cost=Cost(10.5, 3))], {"price": price}),
        ([Episode(task_id="a", success=True, cost=Cost(-4))], {}),                  # unpriced: counted as is
        ([Episode(task_id="a", success=True, cost=Cost(7, 1))], {"price": ModelPrice(1, 2)}),   # int rates
        ([Episode(task_id="a", success=True, cost=Cost(7, 1, latency_s=1)),
          Episode(task_id="b", success=True, cost=Cost(1, latency_s=2.5))], {"price": price}),
    ]
    for eps, kw in cases:
        mirror = [ekb.Episode(task_id=e.task_id, success=e.success, run=e.run and ekb.RunProvenance(model=e.run.model),
                              cost=e.cost and ekb.Cost(*(getattr(e.cost, f) for f in (
                                  "input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens",
                                  "retries", "latency_s")))) for e in eps]
        ek_kw = {k: ekc.ModelPrice(v.input, v.output, v.cached_input, v.reasoning) for k, v in kw.items()}
        assert cost_report(eps, **kw) == ekc.cost_report(mirror, **ek_kw)
    bad = [Episode(task_id="a", success=True, cost=Cost(5), run=RunProvenance(model="m")),
           Episode(task_id="b", success=True, cost=Cost(-1), run=RunProvenance(model="m")),
           Episode(task_id="c", success=True, cost=Cost(5), run=RunProvenance(model="nope"))]
    with pytest.raises(ValueError, match=">= 0"):              # episode b comes before episode c
        cost_report(bad, prices={"m": price})
    with pytest.raises(ValueError, match=">= 0"):
        episode_dollars_array(bad, prices={"m": price})
    with pytest.raises(UnknownModelPrice, match="'nope'"):
        cost_report(bad[:1] + bad[2:], prices={"m": price})
    with pytest.raises(UnknownModelPrice, match="'m'"):       # a model name as `price` is not looked up
        episode_dollars_array(bad[:1], price="m", prices={"m": price})
    with pytest.raises(TypeError, match="cost must be a Cost"):
        cost_report([Episode(task_id="a", success=True, cost=ekb.Cost(1))], price=price)
    with pytest.raises(TypeError, match="expected Episodes"):
        cost_report([Episode(task_id="a", success=True), object()])
    with pytest.raises(ValueError, match=r"1 episode\(s\) are ungraded .*\['u'\]"):
        cost_report([Episode(task_id="u", cost=Cost(1)), Episode(task_id="v", success=False)], price=price)
    # nothing priced: a bad price is never looked at, as in the reference
    assert cost_report([Episode(task_id="a", success=True)], price="anything")["total_dollars"] == 0.0


def test_episode_dollars_array():
    eps = [Episode(cost=Cost(input_tokens=10**6), run=RunProvenance(model="m")), Episode(),
           Episode(cost=Cost(10, 20, 30, 40), run=None)]
    prices = {"m": per_million(3, 15), "": per_million(1, 2, reasoning=4)}
    got = episode_dollars_array(iter(eps), prices=prices)
    assert got.dtype == np.float64 and got.tolist() == [episode_dollars(e, prices=prices) for e in eps]
    assert got.tolist() == [3.0, 0.0, 10e-6 + 40e-6 + 30 * 0.1e-6 + 40 * 4e-6]
    assert episode_dollars_array([], prices=prices).tolist() == []
    assert episode_dollars_array([Episode()], price=ModelPrice(1.0)).tolist() == [0.0]


def test_total_dollars_adds_like_this_pythons_sum(monkeypatch):
    # 1e16-ish and tiny amounts: the order and kind of summation shows in the last bits
    eps = [Episode(task_id=str(i), success=True, cost=Cost(input_tokens=t))
           for i, t in enumerate([10**15, 1, 10**15, 3, 7, 10**12] * 50)]
    price = ModelPrice(1.1)
    total = cost_report(eps, price=price)["total_dollars"]
    assert total == sum(episode_dollars(e, price=price) for e in eps)
