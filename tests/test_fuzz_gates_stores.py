"""Fuzz cases of issue 30: non-finite and empty gate inputs (the offline and agent regression gates
never pass when something could not be compared), and store keys that would resolve outside the
store's root (always a StoreKeyError, or a file confined to the root). See docs/fuzzing.md."""

from __future__ import annotations

import dataclasses
import math
import os
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorekit.agents import Cost, Episode, TaskSpec, agent_regression_gate, per_million, run_suite
from scorekit.agents.harness import summary
from scorekit.base import Report
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.harness import regression_gate
from scorekit.stores import StoreKeyError, json_store

from fuzz_harness import ALLOWED

SLOW_OK = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                         HealthCheck.function_scoped_fixture])

NOT_FINITE = [math.nan, math.inf, -math.inf]
#: A score: mostly finite, sometimes missing or not finite.
scores = st.one_of(st.floats(0.0, 1.0), st.sampled_from([None, *NOT_FINITE]))
slices = st.dictionaries(st.sampled_from(["a", "b", "c", 1]), scores, max_size=3)


def finite(value):
    return value is not None and math.isfinite(value)


# --------------------------------------------------------------------------------------------
# regression_gate
# --------------------------------------------------------------------------------------------


@SLOW_OK
@given(aggregate=scores, per_slice=slices, n=st.integers(0, 3), base_aggregate=scores, base_slices=slices,
       baseline_kind=st.sampled_from(["dict", "report", "none"]),
       tolerance=st.one_of(st.floats(0.0, 1.0), st.sampled_from([-0.1, *NOT_FINITE])),
       hib=st.sampled_from([None, True, False]))
def test_regression_gate_never_passes_what_it_could_not_compare(aggregate, per_slice, n, base_aggregate, base_slices,
                                                                baseline_kind, tolerance, hib):
    report = Report(metric="cer", aggregate=aggregate, n=n, per_slice=per_slice)
    baseline = {"dict": {"metric": "cer", "aggregate": base_aggregate, "per_slice": base_slices},
                "report": Report(metric="cer", aggregate=base_aggregate, n=2, per_slice=base_slices),
                "none": None}[baseline_kind]
    try:
        gate = regression_gate(report, baseline, tolerance=tolerance, higher_is_better=hib)
    except InvalidValueError as exc:
        assert not finite(tolerance) or tolerance < 0, exc
        return
    assert finite(tolerance) and tolerance >= 0
    assert gate.passed == (not gate.reasons) and bool(gate) == gate.passed
    uncomparable = n == 0 or not finite(aggregate)
    if baseline is not None:
        base_labels = {str(label) for label in base_slices}
        matched = [(value, base_slices[label] if label in base_slices else base_slices[str(label)])
                   for label, value in per_slice.items() if str(label) in base_labels]
        uncomparable |= not finite(base_aggregate)
        uncomparable |= any(not (finite(a) and finite(b)) for a, b in matched)
        uncomparable |= not base_labels <= {str(label) for label in per_slice}
    if uncomparable:
        assert not gate and any("could not be compared" in r or "zero items" in r or "finite score" in r
                                for r in gate.reasons)


# --------------------------------------------------------------------------------------------
# agent_regression_gate
# --------------------------------------------------------------------------------------------

_TASKS = [TaskSpec(f"t{i}", input=i, gold="ok") for i in range(12)]


def _runs():
    def agent(task):
        return Episode(output="ok" if task.input % 5 else "bad", cost=Cost(input_tokens=100 + task.input))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_suite(agent, _TASKS, k=3, price=per_million(1, 2)), run_suite(agent, _TASKS, k=3,
                                                                                price=per_million(1, 2))


_BASE_RUN, _CURRENT_RUN = _runs()
BASELINE_FIELDS = ["pass_hat_k", "pass_hat_k_sd", "success_rate", "cost_per_success", "total_dollars",
                   "cost_ci_low", "cost_ci_high"]
CURRENT_FIELDS = ["pass_hat_k", "pass_hat_k_sd", "cost_ci_low"]


@SLOW_OK
@given(base_edits=st.dictionaries(st.sampled_from(BASELINE_FIELDS), st.sampled_from(NOT_FINITE + [None]), max_size=3),
       current_edits=st.dictionaries(st.sampled_from(CURRENT_FIELDS), st.sampled_from(NOT_FINITE), max_size=2),
       tolerance=st.one_of(st.just(0.0), st.floats(0.0, 0.5), st.sampled_from([-0.1, *NOT_FINITE])))
def test_agent_gate_never_passes_what_it_could_not_compare(base_edits, current_edits, tolerance):
    base = summary(_BASE_RUN)
    for name, value in base_edits.items():
        if name.startswith("cost_ci"):
            base["cost_ci"] = list(base["cost_ci"])
            base["cost_ci"][name == "cost_ci_high"] = value
        else:
            base[name] = value
    current = _CURRENT_RUN
    for name, value in current_edits.items():
        if name == "cost_ci_low":
            current = dataclasses.replace(current, cost={**current.cost, "cost_ci": (value, current.cost["cost_ci"][1])})
        else:
            current = dataclasses.replace(current, **{name: value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            gate = agent_regression_gate(current, base, tolerance=tolerance)
        except ALLOWED as exc:
            assert isinstance(exc, InvalidValueError) and (not finite(tolerance) or tolerance < 0), exc
            return
    assert finite(tolerance) and tolerance >= 0
    assert gate.passed == (not gate.reasons)
    broken = {name for name, value in base_edits.items() if value is not None}
    broken |= {name for name, value in current_edits.items() if not (name == "cost_ci_low" and value == math.inf)}
    broken |= {"pass_hat_k"} & set(base_edits)                    # a missing pass^k (k = 3) too
    unpriced = {"cost_per_success", "total_dollars", "cost_ci_low", "cost_ci_high"}
    if unpriced <= {name for name, value in base_edits.items() if value is None}:
        broken.add("priced in one run")
    if broken:
        assert not gate, (broken, gate)


# --------------------------------------------------------------------------------------------
# Store keys that would leave the root
# --------------------------------------------------------------------------------------------

#: Key parts: plain names, the dangerous ones, a symlinked folder and file, hostile characters.
parts = st.one_of(
    st.sampled_from(["a", "b", "doc", "..", ".", "", ".hidden", "link", "flink", "q.json", "x" * 250, "é" * 120,
                     "a\x00b", "a\\b", "\ud800", "~", " ", "con"]),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8))
keys = st.one_of(st.lists(parts, min_size=1, max_size=4).map("/".join),
                 st.lists(parts, min_size=1, max_size=3).map(lambda p: "/" + "/".join(p)))


@SLOW_OK
@given(ops=st.lists(st.tuples(st.sampled_from(["set", "get", "in", "del", "new"]), keys), min_size=1, max_size=8))
def test_store_keys_never_resolve_outside_the_root(tmp_path_factory, ops):
    top = tmp_path_factory.mktemp("confined")
    outside = top / "outside"
    outside.mkdir()
    (outside / "x.json").write_text("1")
    s = json_store("runs", rootdir=top / "root")
    folder = top / "root" / "runs"
    folder.mkdir(parents=True)
    (folder / "link").symlink_to(outside, target_is_directory=True)
    (folder / "flink.json").symlink_to(outside / "x.json")
    written = {}
    for op, key in ops:
        try:
            if op == "set":
                s[key] = {"k": key}
                written[key] = {"k": key}
            elif op == "get":
                assert s[key] == written[key]
            elif op == "in":
                assert (key in s) == (key in written)
            elif op == "del":
                del s[key]
                written.pop(key)
            else:
                taken = s.write_new({"k": key}, [key])
                written[taken] = {"k": key}
        except StoreKeyError:
            assert key not in written and key not in s
        except KeyError:
            assert op in ("get", "del") and key not in written
        except FileExistsError:
            assert op == "new" and key in written
        except InvalidTypeError as exc:
            raise AssertionError("keys here are strings") from exc
    assert sorted(os.listdir(outside)) == ["x.json"] and (outside / "x.json").read_text() == "1"
    real = os.path.realpath(folder)
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                assert os.path.realpath(path).startswith(real + os.sep)
    assert dict(s) == written
