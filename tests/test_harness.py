"""scorekit.harness: evaluate_store, the baselines and the regression gate — the spec's vectors,
differential tests against the reference kit ``ek`` on random gold stores, reports and baselines,
properties, bad and hostile input, corrupt store files, and the docs page. (The IAA statistics
are tested in tests/test_agents_judge.py.)"""

from __future__ import annotations

import json
import math
import os
import random
from datetime import datetime, timezone

import ek.base as ek_base
import ek.harness as ek_harness
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scorekit.harness as harness
from scorekit.agents.base import TaskSpec
from scorekit.agents.harness import agent_regression_gate, run_suite, save_agent_baseline
from scorekit.base import Report, Score
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.harness import (AGGREGATE, GateResult, evaluate_store, load_baseline, regression_gate,
                              save_baseline)
from scorekit.stores import CorruptStoreFileError, StoreKeyError, json_store

GOLD = {"d1": {"input": "cat", "reference": "cat", "slice": "easy"},
        "d2": {"input": "dog", "reference": "dog", "slice": "easy"},
        "d3": {"input": "xxxx", "reference": "bird", "slice": "hard"}}


def echo(x):
    return x


def nan_to_none(value):
    """A loaded JSON document with ek's NaN (dol writes bare NaN) as the null scorekit writes."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [nan_to_none(v) for v in value]
    return value


def same_number(a, b):
    return a == b or (a is not None and b is not None and math.isnan(a) and math.isnan(b))


def files_under(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


# --------------------------------------------------------------------------------------------
# The spec's vectors (ek-core §9.2, harness)
# --------------------------------------------------------------------------------------------


def test_spec_evaluate_store(tmp_path):
    r = evaluate_store(echo, GOLD, metric="cer")
    assert r.n == 3 and r.metric == "cer"
    assert set(r.per_slice) == {"easy", "hard"}
    assert r.per_slice["easy"] == 0.0 and r.per_slice["hard"] == 1.0
    assert r.aggregate == 4 / 10
    assert r.detail["per_item"]["d1"] == {"prediction": "cat", "reference": "cat", "slice": "easy", "score": 0.0}
    assert r.detail["per_item"]["d3"]["score"] == 1.0
    persisted = evaluate_store(echo, GOLD, metric="cer", persist=True, run_id="r1", rootdir=tmp_path)
    assert "r1" in json_store("runs", rootdir=tmp_path) and persisted.detail["run_id"] == "r1"
    assert json_store("runs", rootdir=tmp_path)["r1"] == {"metric": "cer", "aggregate": 0.4, "n": 3,
                                                         "per_slice": {"easy": 0.0, "hard": 1.0}}
    stored = json_store("results", rootdir=tmp_path)["r1"]
    assert stored["per_item"] == r.detail["per_item"] and stored["n"] == 3


def test_spec_gate_vectors(tmp_path):
    report = evaluate_store(echo, GOLD, metric="cer")
    assert regression_gate(report, "never-saved", rootdir=tmp_path).passed is True
    base = report
    save_baseline(base, "v1", rootdir=tmp_path)

    def worse(x):
        return "" if x in ("cat", "dog") else x

    gate = regression_gate(evaluate_store(worse, GOLD, metric="cer"), "v1", rootdir=tmp_path)
    assert not gate and gate.passed is False and gate.higher_is_better is False
    assert "easy" in gate.regressions and "hard" not in gate.regressions
    assert gate.regressions["easy"] == {"current": 1.0, "baseline": 0.0}
    assert gate.regressions[AGGREGATE] == {"current": 1.0, "baseline": 0.4}
    assert load_baseline("v1", rootdir=tmp_path)["aggregate"] == base.aggregate
    assert load_baseline("nope", rootdir=tmp_path) is None


def test_spec_fields_direction(tmp_path):
    gold = {"a": {"input": {"x": "1"}, "reference": {"x": "1"}}, "b": {"input": {"x": "1"}, "reference": {"x": "1"}}}
    base = evaluate_store(echo, gold)
    assert base.metric == "fields" and base.aggregate == 1.0
    save_baseline(base, "fields", rootdir=tmp_path)
    gate = regression_gate(evaluate_store(lambda x: {"x": "WRONG"}, gold), "fields", rootdir=tmp_path)
    assert gate.higher_is_better is True and not gate.passed


def test_spec_tolerance(tmp_path):
    gold = {"c": {"input": "cat", "reference": "cat", "slice": "s"}}
    save_baseline(evaluate_store(echo, gold, metric="cer"), "t", rootdir=tmp_path)
    dropped = evaluate_store(lambda x: x[:-1], gold, metric="cer")
    assert regression_gate(dropped, "t", tolerance=1.0, rootdir=tmp_path)
    gate = regression_gate(dropped, "t", tolerance=0.0, rootdir=tmp_path)
    assert not gate and set(gate.regressions) == {AGGREGATE, "s"}
    assert regression_gate(dropped, "t", tolerance=1 / 3, rootdir=tmp_path)     # strictly more than the tolerance


def test_spec_metric_mismatch(tmp_path):
    save_baseline(evaluate_store(echo, GOLD, metric="cer"), "cer", rootdir=tmp_path)
    with pytest.raises(ValueError, match="metric"):
        regression_gate(evaluate_store(echo, GOLD, metric="wer"), "cer", rootdir=tmp_path)


def test_gate_result_truthiness_and_defaults():
    assert bool(GateResult(True, "cer", False, 0.0)) is True
    failed = GateResult(False, "cer", False, 0.0, regressions={"s": {}})
    assert bool(failed) is False and failed.aggregate_current is None and failed.aggregate_baseline is None
    assert GateResult(True, "", True, 0.0).regressions == {} and GateResult(True, "", True, 0.0).regressions is not \
        GateResult(True, "", True, 0.0).regressions


def test_direction_inference():
    scores_lower = [Score(value=0.1, detail={"higher_is_better": False})]
    scores_higher = [0.5, Score(value=0.5, detail={}), Score(value=0.5, detail={"higher_is_better": True})]

    def base(metric):
        return {"metric": metric, "aggregate": 0.5}

    assert regression_gate(Report(metric="f1", aggregate=0.6, n=1, scores=scores_lower),
                           base("f1")).higher_is_better is False
    assert regression_gate(Report(metric="cer", aggregate=0.6, n=1, scores=scores_higher),
                           base("cer")).higher_is_better is True
    for name, expected in (("cer", False), ("wer", False), ("graph", False), ("typed_graph", False),
                           ("fields", True), ("anls", True), ("", True)):
        assert regression_gate(Report(metric=name, aggregate=0.5, n=1), base(name)).higher_is_better is expected
    cer = Report(metric="cer", aggregate=0.4, n=1)
    assert regression_gate(cer, base("cer"), higher_is_better=True).higher_is_better is True
    # the explicit direction decides what a regression is
    assert not regression_gate(cer, base("cer"), higher_is_better=True)
    assert regression_gate(cer, base("cer"))


def test_the_gate_fails_closed_on_missing_and_non_finite_scores():
    """Issue 30 item 3: a NaN/None/infinite score, or a baseline slice the run lacks, fails with a reason
    (ek: "None never regresses", so all of these passed); a slice only the run has is new."""
    report = Report(metric="cer", aggregate=math.nan, n=3,
                    per_slice={"a": 0.9, "new": 1.0, "n": math.nan, "x": None, "i": math.inf})
    base = {"metric": "cer", "aggregate": 0.1, "per_slice": {"a": 0.1, "gone": 0.0, "n": 0.0, "x": 0.0, "i": 0.0}}
    gate = regression_gate(report, base)
    assert not gate and list(gate.regressions) == ["a"]
    assert math.isnan(gate.aggregate_current) and gate.aggregate_baseline == 0.1
    assert gate.reasons == [
        "the aggregate could not be compared: current nan, baseline 0.1 (need finite scores)",
        "slice 'a' regressed: 0.9 vs baseline 0.1 (lower is better, tolerance 0.0)",
        "slice 'n' could not be compared: current nan, baseline 0.0 (need finite scores)",
        "slice 'x' could not be compared: current None, baseline 0.0 (need finite scores)",
        "slice 'i' could not be compared: current inf, baseline 0.0 (need finite scores)",
        "slice 'gone' could not be compared: the baseline has it, this report does not"]
    for before in (None, math.nan, math.inf, -math.inf):
        gate = regression_gate(Report(metric="cer", aggregate=0.5, n=1), {"metric": "cer", "aggregate": before})
        assert not gate and gate.reasons == [f"the aggregate could not be compared: current 0.5, baseline {before!r} "
                                             "(need finite scores)"]
    # the baseline's slices must all be there (a slice of the run only is new, and not compared)
    gate = regression_gate(Report(metric="cer", aggregate=0.1, n=1, per_slice={"new": 0.9}),
                           {"metric": "cer", "aggregate": 0.1, "per_slice": {"s": 0.1}})
    assert not gate and gate.reasons == ["slice 's' could not be compared: the baseline has it, this report does not"]
    assert regression_gate(Report(metric="cer", aggregate=0.1, n=1, per_slice={"new": 0.9}),
                           {"metric": "cer", "aggregate": 0.1})


def test_the_gate_fails_an_empty_run_and_an_empty_baseline():
    """Issue 30 item 3: a run of zero items (n=0, aggregate None) passed every gate."""
    base = {"metric": "cer", "aggregate": 0.1, "n": 5}
    empty = evaluate_store(echo, {}, metric="cer")
    for baseline in (base, None):
        gate = regression_gate(empty, baseline)
        assert not gate and gate.reasons[0] == ("the report scored zero items (n=0): an empty run cannot pass a "
                                                "regression gate")
    gate = regression_gate(Report(metric="cer", aggregate=0.1, n=0), base)
    assert not gate and len(gate.reasons) == 1
    # a first run (no baseline) passes only with a finite aggregate
    assert regression_gate(Report(metric="cer", aggregate=0.1, n=2), None)
    gate = regression_gate(Report(metric="cer", aggregate=math.nan, n=2), None)
    assert not gate and gate.reasons == ["the aggregate is nan: a run without a finite score cannot pass a gate"]
    gate = regression_gate(Report(metric="cer", aggregate=0.1, n=2), {**base, "n": 0})
    assert not gate and gate.reasons == ["the baseline scored zero items (n=0): nothing can be compared with it"]


def test_the_gate_refuses_a_baseline_without_a_metric_and_bad_tolerances():
    """Issue 30 item 3: a baseline without `metric` was compared without a metric check; a NaN or
    negative tolerance is refused (a NaN one passed anything in the agent gate)."""
    report = Report(metric="cer", aggregate=0.9, n=1)
    for base in ({"aggregate": 0.1}, {"metric": None, "aggregate": 0.1}):
        with pytest.raises(InvalidValueError, match="names no metric"):
            regression_gate(report, base)
    with pytest.raises(InvalidValueError, match="baseline metric '' != report metric 'cer'"):
        regression_gate(report, {"metric": "", "aggregate": 0.1})
    for tolerance in (math.nan, -math.inf, -0.01):
        with pytest.raises(InvalidValueError, match="tolerance must be a finite number >= 0"):
            regression_gate(report, {"metric": "cer", "aggregate": 0.1}, tolerance=tolerance)


def test_a_report_as_baseline():
    then = Report(metric="cer", aggregate=0.1, n=2, per_slice={1: 0.1})
    now = Report(metric="cer", aggregate=0.2, n=2, per_slice={1: 0.3})
    gate = regression_gate(now, then)
    assert gate.aggregate_baseline == 0.1 and set(gate.regressions) == {AGGREGATE, 1}


def test_int_slice_labels_survive_the_round_trip(tmp_path):
    gold = {"a": {"input": "x", "reference": "x", "slice": 1}, "b": {"input": "y", "reference": "y", "slice": 2}}
    save_baseline(evaluate_store(echo, gold, metric="cer"), "ints", rootdir=tmp_path)
    assert load_baseline("ints", rootdir=tmp_path)["per_slice"] == {"1": 0.0, "2": 0.0}
    gate = regression_gate(evaluate_store(lambda x: x + "!", gold, metric="cer"), "ints", rootdir=tmp_path)
    # ek compares the label 1 with the stored "1", never matches, and checks no slice at all
    assert set(gate.regressions) == {AGGREGATE, 1, 2}
    assert gate.regressions[1] == {"current": 1.0, "baseline": 0.0}


# --------------------------------------------------------------------------------------------
# evaluate_store: details
# --------------------------------------------------------------------------------------------


def test_pairs_gold_and_gold_store(tmp_path):
    pairs = [("a", {"input": "hello wrld", "reference": "hello world"}), ["b", {"input": "x", "reference": "x"}]]
    r = evaluate_store(echo, pairs, metric="wer")
    assert r.n == 2 and r.aggregate == 1 / 3 and list(r.detail["per_item"]) == ["a", "b"]
    store = json_store("gold", rootdir=tmp_path)
    for key, record in pairs:
        store[key] = record
    from_store = evaluate_store(echo, store, metric="wer")
    assert from_store.aggregate == r.aggregate and from_store.detail["per_item"] == r.detail["per_item"]


def test_custom_keys_normalize_and_custom_metric():
    gold = {"a": {"q": "HELLO", "gold": "hello", "bucket": "loud"}, "b": {"q": "bye", "gold": "bye"}}
    r = evaluate_store(echo, gold, metric="cer", normalize="lower", input_key="q", reference_key="gold",
                       slice_key="bucket")
    assert r.aggregate == 0.0 and r.per_slice == {"loud": 0.0}

    def exact(pred, ref, *, grammar=None):       # returns a bool: ek would fail on `.value`
        return pred == ref

    r = evaluate_store(str.lower, gold, metric=exact, input_key="q", reference_key="gold")
    assert r.metric == "exact" and r.aggregate == 1.0
    assert [item["score"] for item in r.detail["per_item"].values()] == [1.0, 1.0]


def test_predict_is_called_in_order_once_per_item():
    seen = []

    def predict(x):
        seen.append(x)
        return x

    gold = {f"k{i}": {"input": f"t{i}", "reference": f"t{i}"} for i in range(20_000)}
    r = evaluate_store(predict, gold, metric="cer")
    assert seen == [f"t{i}" for i in range(20_000)] and r.n == 20_000 and r.aggregate == 0.0
    assert list(r.detail["per_item"]) == list(gold)


def test_empty_gold(tmp_path):
    r = evaluate_store(echo, {}, metric="cer", persist=True, run_id="empty", rootdir=tmp_path)
    assert (r.metric, r.aggregate, r.n, r.detail["per_item"]) == ("cer", None, 0, {})
    assert json_store("results", rootdir=tmp_path)["empty"] == {"metric": "cer", "aggregate": None, "n": 0,
                                                               "per_slice": {}, "per_item": {}}
    with pytest.raises(InvalidValueError, match="zero items"):
        save_baseline(r, "empty", rootdir=tmp_path)


def test_nan_aggregates_are_stored_as_null(tmp_path):
    gold = {"a": {"input": "x", "reference": "", "slice": "s"}}
    r = evaluate_store(echo, gold, metric="cer", persist=True, run_id="nan", rootdir=tmp_path)
    assert math.isnan(r.aggregate) and math.isnan(r.per_slice["s"]) and r.detail["per_item"]["a"]["score"] == 1.0
    assert json_store("runs", rootdir=tmp_path)["nan"] == {"metric": "cer", "aggregate": None, "n": 1,
                                                          "per_slice": {"s": None}}
    # a baseline nothing could ever be compared with is refused (ek saves it, and then passes every run)
    with pytest.raises(InvalidValueError, match="no finite score for '__aggregate__', 's'"):
        save_baseline(r, "nan", rootdir=tmp_path)
    with pytest.raises(InvalidValueError, match=r"no finite score for 's'"):
        save_baseline(Report(metric="cer", aggregate=0.5, n=1, per_slice={"s": math.inf}), "inf", rootdir=tmp_path)
    assert load_baseline("nan", rootdir=tmp_path) is None and load_baseline("inf", rootdir=tmp_path) is None
    gate = regression_gate(r, {"metric": "cer", "aggregate": None, "per_slice": {"s": None}, "n": 1})
    assert not gate and math.isnan(gate.aggregate_current) and gate.aggregate_baseline is None and len(gate.reasons) == 2

    def nan_metric(pred, ref, *, grammar=None):
        return math.nan

    r = evaluate_store(echo, gold, metric=nan_metric, persist=True, run_id="nan-item", rootdir=tmp_path)
    assert math.isnan(r.detail["per_item"]["a"]["score"])
    assert json_store("results", rootdir=tmp_path)["nan-item"]["per_item"]["a"]["score"] is None


def test_default_run_ids_never_overwrite(tmp_path, monkeypatch):
    class FrozenClock(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

    monkeypatch.setattr(harness, "datetime", FrozenClock)
    ids = [evaluate_store(lambda x, i=i: x * (i + 1), GOLD, metric="cer", persist=True,
                          rootdir=tmp_path).detail["run_id"] for i in range(3)]
    assert ids == ["run-20300102T030405", "run-20300102T030405-2", "run-20300102T030405-3"]
    results = json_store("results", rootdir=tmp_path)
    assert results[ids[0]]["per_item"]["d1"]["prediction"] == "cat"
    assert results[ids[2]]["per_item"]["d1"]["prediction"] == "catcatcat"
    # an id taken in only one of the two stores (another writer, a crash between the writes) is skipped
    json_store("runs", rootdir=tmp_path)["run-20300102T030405-4"] = {"other": True}
    results["run-20300102T030405-5"] = {"other": True}
    rid = evaluate_store(echo, GOLD, metric="cer", persist=True, rootdir=tmp_path).detail["run_id"]
    assert rid == "run-20300102T030405-6"
    assert results["run-20300102T030405-5"] == {"other": True}
    assert json_store("runs", rootdir=tmp_path)["run-20300102T030405-4"] == {"other": True}
    # on a file system without hard links the check-then-rename path still skips taken ids
    monkeypatch.setattr(os, "link", lambda *a, **k: (_ for _ in ()).throw(PermissionError("no links")))
    rid = evaluate_store(echo, GOLD, metric="cer", persist=True, rootdir=tmp_path).detail["run_id"]
    assert rid == "run-20300102T030405-7"
    assert not [f for f in files_under(tmp_path) if f.endswith(".tmp")]


def test_explicit_run_id_replaces_and_nested_ids(tmp_path):
    evaluate_store(echo, GOLD, metric="cer", persist=True, run_id="team/r", rootdir=tmp_path)
    evaluate_store(lambda x: "", GOLD, metric="cer", persist=True, run_id="team/r", rootdir=tmp_path)
    assert (tmp_path / "results" / "team" / "r.json").is_file()
    assert json_store("runs", rootdir=tmp_path)["team/r"]["aggregate"] == 1.0


def test_persisted_results_stream_one_item_per_line(tmp_path):
    gold = {f"k{i}": {"input": "abc", "reference": "abd", "slice": i % 3} for i in range(1000)}
    evaluate_store(echo, gold, metric="cer", persist=True, run_id="big", rootdir=tmp_path)
    lines = (tmp_path / "results" / "big.json").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1000 + 8
    assert lines[6] == '    "k0": {"prediction": "abc", "reference": "abd", "slice": 0, "score": 0.3333333333333333},'
    stored = json_store("results", rootdir=tmp_path)["big"]
    assert stored["per_slice"] == {"0": 1 / 3, "1": 1 / 3, "2": 1 / 3} and len(stored["per_item"]) == 1000


# --------------------------------------------------------------------------------------------
# Bad and hostile input
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gold", [42, "abc", b"abc", None, 3.5])
def test_gold_that_is_neither_a_mapping_nor_pairs(gold):
    with pytest.raises(TypeError, match="gold must be a mapping"):
        evaluate_store(echo, gold)


def test_malformed_pairs_and_records():
    with pytest.raises(InvalidTypeError, match=r"gold\[1\] must be a \(key, record\) pair"):
        evaluate_store(echo, [("a", {"input": "x", "reference": "x"}), ("b",)])
    with pytest.raises(InvalidTypeError, match=r"gold\['a'\] must be a mapping record, got \['x'\]"):
        evaluate_store(echo, {"a": ["x"]})
    with pytest.raises(InvalidValueError, match="gold key 'a' appears twice"):
        evaluate_store(echo, [("a", {"input": "x", "reference": "x"}), ("a", {"input": "y", "reference": "y"})])
    with pytest.raises(InvalidTypeError, match="gold keys must be hashable"):
        evaluate_store(echo, [(["a"], {"input": "x", "reference": "x"})])


def test_missing_input_or_reference():
    calls = []

    def predict(x):
        calls.append(x)
        return x

    with pytest.raises(KeyError, match=r"gold\['b'\] has no 'input' field"):
        evaluate_store(predict, {"a": {"input": "x", "reference": "x"}, "b": {"inp": "y", "reference": "y"}})
    with pytest.raises(KeyError, match=r"gold\['a'\] has no 'reference' field"):
        evaluate_store(predict, {"a": {"input": "x"}})
    assert calls == ["x"]                    # never called on a record it cannot score
    with pytest.raises(KeyError):            # ek raises KeyError too
        ek_harness.evaluate_store(echo, {"a": {"input": "x"}})


def test_bad_arguments():
    with pytest.raises(InvalidTypeError, match="predict must be callable"):
        evaluate_store("not callable", GOLD)
    with pytest.raises(InvalidTypeError, match="input_key must be a str"):
        evaluate_store(echo, GOLD, input_key=1)
    with pytest.raises(InvalidTypeError, match="run_id must be a str"):
        evaluate_store(echo, GOLD, persist=True, run_id=7)
    calls = []
    with pytest.raises(TypeError, match="PathLike"):
        evaluate_store(lambda x: calls.append(x) or x, GOLD, persist=True, rootdir=3)
    assert calls == []

    def boom(x):
        raise RuntimeError("engine down")

    with pytest.raises(RuntimeError, match="engine down"):
        evaluate_store(boom, GOLD)

    def dict_metric(pred, ref, *, grammar=None):
        return {"value": 1}

    dict_metric.aggregate = lambda scores: 1.0
    with pytest.raises(InvalidTypeError, match=r"gold\['d1'\] the metric returned"):
        evaluate_store(echo, GOLD, metric=dict_metric)


@pytest.mark.parametrize("run_id", ["../x", "/abs", "a\\b", "a/../../b", "", "x\x00"])
def test_hostile_run_ids_fail_before_predicting(tmp_path, run_id):
    calls = []
    with pytest.raises(StoreKeyError):
        evaluate_store(lambda x: calls.append(x) or x, GOLD, metric="cer", persist=True, run_id=run_id,
                       rootdir=tmp_path / "root")
    assert calls == [] and not (tmp_path / "root").exists() and files_under(tmp_path) == []


def test_hostile_gold_keys_stay_inside_the_document(tmp_path):
    keys = ["../../escape", "/etc/passwd", "a\\b", "nul\x00", "é/ü", "", "."]
    gold = {k: {"input": "x", "reference": "x"} for k in keys}
    r = evaluate_store(echo, gold, metric="cer", persist=True, run_id="hostile", rootdir=tmp_path)
    assert files_under(tmp_path) == [os.path.join("results", "hostile.json"), os.path.join("runs", "hostile.json")]
    assert list(json_store("results", rootdir=tmp_path)["hostile"]["per_item"]) == keys == list(r.detail["per_item"])


@pytest.mark.parametrize("name", ["../x", "/abs", "a\\b", "", "a//b"])
def test_hostile_baseline_names(tmp_path, name):
    report = evaluate_store(echo, GOLD, metric="cer")
    with pytest.raises(StoreKeyError):
        save_baseline(report, name, rootdir=tmp_path)
    with pytest.raises(StoreKeyError):
        load_baseline(name, rootdir=tmp_path)
    with pytest.raises(StoreKeyError):
        regression_gate(report, name, rootdir=tmp_path)
    assert files_under(tmp_path) == []


def test_unstorable_items_leave_no_files(tmp_path):
    gold = {"a": {"input": "x", "reference": "x"}, "b": {"input": "y", "reference": "y"}}
    with pytest.raises(InvalidTypeError, match=r"'per_item'\]\['b'\] is not JSON-serialisable"):
        evaluate_store(lambda x: x if x == "x" else object(), gold, metric=lambda p, g, grammar=None: 1.0,
                       persist=True, run_id="bad", rootdir=tmp_path)
    with pytest.raises(InvalidTypeError, match="cannot be a JSON object key"):
        evaluate_store(echo, [(("t", 1), {"input": "x", "reference": "x"})], metric="cer", persist=True,
                       run_id="bad", rootdir=tmp_path)
    with pytest.raises(InvalidValueError, match="the same JSON key"):
        evaluate_store(echo, {1: {"input": "x", "reference": "x"}, "1": {"input": "y", "reference": "y"}},
                       metric="cer", persist=True, run_id="bad", rootdir=tmp_path)
    assert files_under(tmp_path) == []


def test_gate_bad_input(tmp_path):
    report = Report(metric="cer", aggregate=0.2, n=1, per_slice={"s": 0.2})
    base = {"metric": "cer", "aggregate": 0.1}
    for tolerance in (math.nan, math.inf, "0.1", True, None, -0.5):
        with pytest.raises(InvalidValueError, match="tolerance must be a finite number >= 0"):
            regression_gate(report, base, tolerance=tolerance)
    with pytest.raises(InvalidTypeError, match="higher_is_better must be True, False or None"):
        regression_gate(report, base, higher_is_better="yes")
    with pytest.raises(InvalidTypeError, match="baseline must be a baseline name"):
        regression_gate(report, 42)
    with pytest.raises(InvalidValueError, match="neither 'aggregate' nor 'per_slice'"):
        regression_gate(report, {})
    with pytest.raises(InvalidTypeError, match=r"baseline\['per_slice'\] must be a mapping"):
        regression_gate(report, {"metric": "cer", "aggregate": 0.1, "per_slice": [0.1]})
    with pytest.raises(InvalidTypeError, match=r"baseline\['aggregate'\] must be a number"):
        regression_gate(report, {"metric": "cer", "aggregate": "0.1"})
    with pytest.raises(InvalidTypeError, match=r"baseline\['per_slice'\]\['s'\] must be a number"):
        regression_gate(report, {"metric": "cer", "aggregate": 0.1, "per_slice": {"s": [1]}})
    with pytest.raises(InvalidTypeError, match="report must be a Report"):
        regression_gate({"metric": "cer"}, base)
    with pytest.raises(InvalidTypeError, match="report.aggregate must be a number"):
        regression_gate(Report(metric="cer", aggregate="high"), base)
    for n in (-1, 1.5, math.nan, True, None):
        with pytest.raises(InvalidTypeError, match="report.n must be a whole number"):
            regression_gate(Report(metric="cer", aggregate=0.2, n=n), base)
    with pytest.raises(InvalidTypeError, match=r"baseline\['n'\] must be a whole number"):
        regression_gate(report, {**base, "n": math.nan})
    with pytest.raises(InvalidValueError, match="names the aggregate"):
        regression_gate(Report(metric="cer", aggregate=0.2, per_slice={AGGREGATE: 0.3}),
                        {"metric": "cer", "aggregate": 0.1, "per_slice": {AGGREGATE: 0.1}})
    with pytest.raises(InvalidTypeError, match="report must be a Report"):
        save_baseline("report", "x", rootdir=tmp_path)
    with pytest.raises(InvalidTypeError, match=r"report.per_slice\['s'\] must be a number"):
        save_baseline(Report(metric="cer", aggregate=0.1, n=1, per_slice={"s": "low"}), "x", rootdir=tmp_path)


def test_corrupt_baseline_files_are_reported_and_kept(tmp_path):
    folder = tmp_path / "baselines"
    folder.mkdir()
    bad = folder / "v1.json"
    bad.write_text('{"metric": "cer", "aggregate": ')
    report = evaluate_store(echo, GOLD, metric="cer")
    for call in (lambda: load_baseline("v1", rootdir=tmp_path),
                 lambda: regression_gate(report, "v1", rootdir=tmp_path)):
        with pytest.raises(CorruptStoreFileError, match=str(bad)):
            call()
    assert bad.read_text() == '{"metric": "cer", "aggregate": '
    listed = folder / "list.json"
    listed.write_text("[0.1]")
    with pytest.raises(InvalidValueError, match=f"{listed}: a baseline is a JSON object"):
        load_baseline("list", rootdir=tmp_path)
    assert listed.read_text() == "[0.1]"


def test_corrupt_gold_store_file(tmp_path):
    store = json_store("gold", rootdir=tmp_path)
    store["a"] = {"input": "x", "reference": "x"}
    bad = tmp_path / "gold" / "b.json"
    bad.write_bytes(b"\xff{")
    with pytest.raises(CorruptStoreFileError, match=str(bad)):
        evaluate_store(echo, store, metric="cer")
    assert bad.read_bytes() == b"\xff{"


def test_shared_baselines_store_with_the_agents(tmp_path):
    tasks = [TaskSpec("t1", input="hi", gold="HI"), TaskSpec("t2", input="yo", gold="YO")]
    agent_report = run_suite(lambda task: task.input.upper(), tasks)
    save_agent_baseline(agent_report, "agent-v1", rootdir=tmp_path)
    report = evaluate_store(echo, GOLD, metric="cer")
    save_baseline(report, "text-v1", rootdir=tmp_path)
    with pytest.raises(InvalidValueError, match="agent baseline"):
        regression_gate(report, "agent-v1", rootdir=tmp_path)
    refused = r"is a metric baseline \(save_baseline\); gate it with scorekit\.harness\.regression_gate"
    with pytest.raises(ValueError, match=refused):
        agent_regression_gate(agent_report, "text-v1", rootdir=tmp_path)
    assert agent_regression_gate(agent_report, "agent-v1", rootdir=tmp_path)
    assert regression_gate(report, "text-v1", rootdir=tmp_path)
    assert sorted(json_store("baselines", rootdir=tmp_path)) == ["agent-v1", "text-v1"]


# --------------------------------------------------------------------------------------------
# Differential tests against ek
# --------------------------------------------------------------------------------------------

WORDS = ["the", "cat", "sat", "on", "a", "mat", "Dog", "bird", "x", "", "naïve", "ünïcode", "日本"]
LABELS = ["easy", "hard", "scan", None]


def random_text(rnd):
    # no edge whitespace: jiwer (ek's CER) strips it, scorekit counts it (docs/decisions.md#cer-code-points)
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randrange(0, 6))).strip()


def corrupt(text, rnd):
    chars = list(text)
    for _ in range(rnd.randrange(0, 3)):
        op = rnd.randrange(3)
        if op == 0 and chars:
            del chars[rnd.randrange(len(chars))]
        elif op == 1:
            chars.insert(rnd.randrange(len(chars) + 1), rnd.choice("abé "))
        elif chars:
            chars[rnd.randrange(len(chars))] = rnd.choice("xyz")
    return "".join(chars).strip()


def random_gold(rnd, kind):
    gold, predictions = {}, {}
    for i in range(rnd.randrange(1, 25)):
        key = f"doc-{i}-{rnd.randrange(1000)}"
        if kind == "fields":
            reference = {f: rnd.choice(["1", "2", "Acme", "acme"]) for f in rnd.sample("abcd", rnd.randrange(0, 4))}
            prediction = {f: (v if rnd.random() < 0.7 else "2") for f, v in reference.items() if rnd.random() < 0.9}
            if rnd.random() < 0.2:
                prediction["extra"] = "1"
            source = {"id": key}
        else:
            reference = random_text(rnd)
            prediction = corrupt(reference, rnd) if rnd.random() < 0.8 else reference
            source = f"input {key}"
        record = {"input": source, "reference": reference}
        label = rnd.choice(LABELS + ["missing"])
        if label != "missing":
            record["slice"] = label
        gold[key] = record
        predictions[key] = prediction
    return gold, predictions


def predictor(predictions, kind):
    if kind == "fields":
        return lambda source: dict(predictions[source["id"]])
    return lambda source: predictions[source.split(" ", 1)[1]]


def test_evaluate_store_matches_ek_on_random_gold(tmp_path):
    rnd = random.Random(20240616)
    for trial in range(300):
        kind = rnd.choice(["cer", "wer", "fields", None])
        gold, predictions = random_gold(rnd, "fields" if kind == "fields" else "text")
        normalize = rnd.choice([None, None, "lower", ["lower", "collapse_whitespace"]])
        persist = trial % 6 == 0
        kwargs = dict(metric=kind, normalize=normalize, persist=persist, run_id=f"run-{trial}")
        ours = evaluate_store(predictor(predictions, kind), gold, rootdir=tmp_path / "sk", **kwargs)
        theirs = ek_harness.evaluate_store(predictor(predictions, kind), gold, rootdir=str(tmp_path / "ek"), **kwargs)
        assert (ours.metric, ours.n) == (theirs.metric, theirs.n), trial
        assert same_number(ours.aggregate, theirs.aggregate), (trial, ours.aggregate, theirs.aggregate)
        assert list(ours.per_slice) == list(theirs.per_slice), trial
        assert all(same_number(ours.per_slice[k], theirs.per_slice[k]) for k in ours.per_slice), trial
        assert ours.detail["per_item"] == theirs.detail["per_item"], trial
        if persist:
            for kind_ in ("results", "runs"):
                mine = json.loads((tmp_path / "sk" / kind_ / f"run-{trial}.json").read_text(encoding="utf-8"))
                ref = json.loads((tmp_path / "ek" / kind_ / f"run-{trial}.json").read_text(encoding="utf-8"))
                assert mine == nan_to_none(ref), (trial, kind_)


def test_evaluate_store_pairs_match_ek():
    rnd = random.Random(7)
    for _ in range(50):
        gold, predictions = random_gold(rnd, "text")
        pairs = list(gold.items())
        ours = evaluate_store(predictor(predictions, "cer"), pairs, metric="cer")
        theirs = ek_harness.evaluate_store(predictor(predictions, "cer"), pairs, metric="cer")
        assert ours.detail["per_item"] == theirs.detail["per_item"]
        assert same_number(ours.aggregate, theirs.aggregate)


def random_value(rnd):
    return rnd.choice([None, math.nan, 0.0, 1.0, rnd.random(), rnd.random(), round(rnd.random(), 1)])


def random_slices(rnd):
    labels = rnd.sample(["a", "b", "c", "d", "e"], rnd.randrange(0, 5))
    return {label: random_value(rnd) for label in labels}


def random_scores(rnd, cls_score):
    choice = rnd.randrange(4)
    if choice == 0:
        return []
    if choice == 1:
        return [rnd.random() for _ in range(3)]
    hib = rnd.choice([True, False, None])
    detail = {} if hib is None else {"higher_is_better": hib}
    scores = [cls_score(value=rnd.random(), detail=dict(detail))]
    if choice == 3:
        scores.insert(0, cls_score(value=0.5, detail={}))
    return scores


def finite(value):
    return value is not None and math.isfinite(value)


def expected_uncompared(aggregate, per_slice, baseline):
    """The reasons scorekit's gate gives for the scores it cannot compare (ek passes them)."""
    if baseline is None:
        return [] if finite(aggregate) else [f"the aggregate is {aggregate!r}: a run without a finite score cannot "
                                             "pass a gate"]
    pairs = [("the aggregate", aggregate, baseline["aggregate"])]
    before = baseline.get("per_slice") or {}
    pairs += [(f"slice {label!r}", value, before[label]) for label, value in per_slice.items() if label in before]
    reasons = [f"{what} could not be compared: current {now!r}, baseline {then!r} (need finite scores)"
               for what, now, then in pairs if not (finite(now) and finite(then))]
    return reasons + [f"slice {label!r} could not be compared: the baseline has it, this report does not"
                      for label in before if label not in per_slice]


def test_regression_gate_matches_ek_on_random_reports(tmp_path):
    rnd = random.Random(1616)
    compared = closed = 0
    for trial in range(3000):
        metric = rnd.choice(["cer", "wer", "fields", "graph", "anls", ""])
        aggregate, per_slice = random_value(rnd), random_slices(rnd)
        seed = rnd.random()
        ours_report = Report(metric=metric, aggregate=aggregate, n=3, per_slice=dict(per_slice),
                             scores=random_scores(random.Random(seed), Score))
        ek_report = ek_base.Report(metric=metric, aggregate=aggregate, n=3, per_slice=dict(per_slice),
                                   scores=random_scores(random.Random(seed), ek_base.Score))
        baseline = {"metric": rnd.choice([metric, metric, metric, "", None]), "aggregate": random_value(rnd),
                    "per_slice": {**{k: random_value(rnd) for k in per_slice if rnd.random() < 0.7},
                                  **random_slices(rnd)}}
        if rnd.random() < 0.05:
            baseline["metric"] = "other"
        if rnd.random() < 0.1:
            del baseline["per_slice"]
        if rnd.random() < 0.05:
            baseline = None
        tolerance = rnd.choice([0.0, 0.0, 0.01, 0.1, 0.5, rnd.random(), -0.05])
        hib = rnd.choice([None, None, True, False])
        if tolerance < 0:  # scorekit refuses it (docs/decisions.md#gates-fail-closed)
            with pytest.raises(InvalidValueError, match="tolerance"):
                regression_gate(ours_report, baseline, tolerance=tolerance, higher_is_better=hib)
            continue
        try:
            theirs = ek_harness.regression_gate(ek_report, baseline, tolerance=tolerance, higher_is_better=hib)
        except ValueError as exc:
            with pytest.raises(ValueError, match="metric"):
                regression_gate(ours_report, baseline, tolerance=tolerance, higher_is_better=hib)
            assert "metric" in str(exc)
            continue
        if baseline is not None and baseline["metric"] != metric:  # none, or "" for another (decisions.md)
            with pytest.raises(InvalidValueError, match="metric"):
                regression_gate(ours_report, baseline, tolerance=tolerance, higher_is_better=hib)
            continue
        ours = regression_gate(ours_report, baseline, tolerance=tolerance, higher_is_better=hib)
        assert (ours.metric, ours.higher_is_better, ours.tolerance) == \
            (theirs.metric, theirs.higher_is_better, theirs.tolerance), trial
        assert same_number(ours.aggregate_current, theirs.aggregate_current), trial
        assert same_number(ours.aggregate_baseline, theirs.aggregate_baseline), trial
        # ek passes what it cannot compare; scorekit fails, with one reason per such score, and
        # agrees with ek on every score both can compare
        uncompared = expected_uncompared(aggregate, per_slice, baseline)
        assert [r for r in ours.reasons if "could not be compared" in r or "finite score" in r] == uncompared, trial
        assert ours.regressions == theirs.regressions, trial
        assert ours.passed == (theirs.passed and not uncompared), trial
        compared += not uncompared
        closed += bool(uncompared)
    assert compared > 200 and closed > 1000, (compared, closed)


def test_baselines_match_ek_and_are_readable_by_both(tmp_path):
    rnd = random.Random(99)
    for trial in range(200):
        report_args = dict(metric=rnd.choice(["cer", "fields", "x"]), aggregate=random_value(rnd),
                           n=rnd.randrange(1, 100), per_slice=random_slices(rnd))
        if not all(map(finite, [report_args["aggregate"], *report_args["per_slice"].values()])):
            with pytest.raises(InvalidValueError, match="no finite score for"):
                save_baseline(Report(**report_args), f"b{trial}", rootdir=tmp_path / "sk")
            assert load_baseline(f"b{trial}", rootdir=tmp_path / "sk") is None
            continue
        ours = save_baseline(Report(**report_args), f"b{trial}", rootdir=tmp_path / "sk")
        theirs = ek_harness.save_baseline(ek_base.Report(**report_args), f"b{trial}", rootdir=str(tmp_path / "ek"))
        assert ours == nan_to_none(theirs), trial
        mine_file = tmp_path / "sk" / "baselines" / f"b{trial}.json"
        ek_file = tmp_path / "ek" / "baselines" / f"b{trial}.json"
        assert json.loads(mine_file.read_text()) == nan_to_none(json.loads(ek_file.read_text()))
        # each kit reads the other's baseline and gates the same way
        assert nan_to_none(load_baseline(f"b{trial}", rootdir=tmp_path / "ek")) == ours
        assert ek_harness.load_baseline(f"b{trial}", rootdir=str(tmp_path / "sk")) == ours
        current = dict(report_args, aggregate=random_value(rnd), per_slice=random_slices(rnd))
        a = regression_gate(Report(**current), f"b{trial}", rootdir=tmp_path / "sk")
        b = ek_harness.regression_gate(ek_base.Report(**current), f"b{trial}", rootdir=str(tmp_path / "sk"))
        uncompared = expected_uncompared(current["aggregate"], current["per_slice"], ours)
        assert a.regressions == b.regressions and a.passed == (b.passed and not uncompared), trial


def test_ek_nan_baseline_files_are_refused_as_corrupt(tmp_path):
    """dol writes NaN as a bare ``NaN``, which Python's parser reads; a gate against it passed every run
    (issue 30 item 3). The stores read strict JSON: the file is named, and left as it is."""
    ek_harness.save_baseline(ek_base.Report(metric="cer", aggregate=math.nan, n=1), "nan", rootdir=str(tmp_path))
    path = tmp_path / "baselines" / "nan.json"
    text = path.read_text()
    assert "NaN" in text
    for call in (lambda: load_baseline("nan", rootdir=tmp_path),
                 lambda: regression_gate(Report(metric="cer", aggregate=0.9, n=1), "nan", rootdir=tmp_path)):
        with pytest.raises(CorruptStoreFileError, match=f"{path}: not strict JSON \\(NaN is not valid JSON\\)"):
            call()
    path.write_text('{"metric": "cer", "aggregate": 1e999, "per_slice": {}, "n": 1}')
    with pytest.raises(CorruptStoreFileError, match="number 1e999 is out of range"):
        regression_gate(Report(metric="cer", aggregate=0.9, n=1), "nan", rootdir=tmp_path)
    assert path.read_text().startswith('{"metric": "cer", "aggregate": 1e999')


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

scores = st.one_of(st.none(), st.floats(min_value=0.0, max_value=10.0), st.just(math.nan))
slice_maps = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), scores, max_size=4)


@settings(max_examples=200, deadline=None)
@given(aggregate=scores, per_slice=slice_maps, tolerance=st.floats(0.0, 5.0), hib=st.sampled_from([None, True, False]))
def test_a_report_never_regresses_against_itself(aggregate, per_slice, tolerance, hib):
    report = Report(metric="cer", aggregate=aggregate, n=1, per_slice=per_slice)
    scored = all(map(finite, [aggregate, *per_slice.values()]))
    for baseline in (report, {"metric": "cer", "aggregate": aggregate, "per_slice": per_slice}):
        gate = regression_gate(report, baseline, tolerance=tolerance, higher_is_better=hib)
        assert gate.regressions == {} and gate.passed == scored


@settings(max_examples=200, deadline=None)
@given(now=slice_maps, then=slice_maps, t1=st.floats(0.0, 5.0), t2=st.floats(0.0, 5.0), hib=st.booleans())
def test_more_tolerance_means_fewer_regressions(now, then, t1, t2, hib):
    low, high = sorted((t1, t2))
    report = Report(metric="m", aggregate=None, n=1, per_slice=now)
    strict = regression_gate(report, {"metric": "m", "per_slice": then}, tolerance=low, higher_is_better=hib)
    lenient = regression_gate(report, {"metric": "m", "per_slice": then}, tolerance=high, higher_is_better=hib)
    assert set(lenient.regressions) <= set(strict.regressions) and not strict and not lenient


@settings(max_examples=200, deadline=None)
@given(current=st.floats(0.0, 10.0), before=st.floats(0.0, 10.0))
def test_a_change_regresses_in_exactly_one_direction(current, before):
    report = Report(metric="m", aggregate=current, n=1)
    up = regression_gate(report, {"metric": "m", "aggregate": before}, higher_is_better=True)
    down = regression_gate(report, {"metric": "m", "aggregate": before}, higher_is_better=False)
    assert (not up) + (not down) == (current != before)


# --------------------------------------------------------------------------------------------
# ek's docstring examples, and the docs page
# --------------------------------------------------------------------------------------------


def test_module_doctests():
    import doctest

    assert doctest.testmod(harness).failed == 0


def test_docs_page():
    from doc_examples import run_python_blocks

    assert run_python_blocks("harness.md", min_blocks=5) >= 30
