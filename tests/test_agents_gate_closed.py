"""agent_regression_gate fails closed (issue 30 item 3): an estimate it cannot compare — NaN, infinite
or missing in either run, pass^k of another k, cost priced in one run only — fails with a reason; a
NaN or negative tolerance and malformed counts are refused. Each case passed before the fix."""

from __future__ import annotations

import math
import warnings

import ek.agents as eka
import ek.agents.harness as ek_harness
import pytest

from scorekit.agents import Cost, Episode, TaskSpec, agent_regression_gate, per_million, run_suite
from scorekit.agents.harness import save_agent_baseline, summary
from scorekit.errors import InvalidValueError
from scorekit.stores import CorruptStoreFileError, StoreKeyError, json_store


def tasks_of(n):
    return [TaskSpec(f"t{i}", input=f"q{i}", gold=f"a{i}") for i in range(n)]


def perfect(task):
    return Episode(output=task.gold, cost=Cost(input_tokens=1000))


def hopeless(task):
    return Episode(output="WRONG", cost=Cost(input_tokens=1000))


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    monkeypatch.setenv("SCOREKIT_DATA_HOME", str(tmp_path / "data"))


@pytest.fixture(scope="module")
def runs():
    tasks = tasks_of(20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"base": run_suite(perfect, tasks, k=3, price=per_million(1, 1)),
                "same": run_suite(perfect, tasks, k=3, price=per_million(1, 1)),
                "broken": run_suite(hopeless, tasks, k=3, price=per_million(1, 1)),
                "unpriced": run_suite(perfect, tasks, k=3),
                "k2": run_suite(perfect, tasks, k=2, price=per_million(1, 1))}


def gate(report, baseline, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return agent_regression_gate(report, baseline, **kw)


def test_an_identical_run_passes(runs):
    assert gate(runs["same"], summary(runs["base"])).reasons == []


@pytest.mark.parametrize("value", [math.nan, math.inf, None])
def test_a_non_finite_pass_hat_k_fails(runs, value):
    base = {**summary(runs["base"]), "pass_hat_k": value}
    result = gate(runs["same"], base)
    assert not result and result.reasons == [
        f"pass^3 could not be compared: non-finite estimate (current 1.0, baseline {value!r})"]


def test_a_nan_pass_hat_k_sd_fails(runs):
    result = gate(runs["same"], {**summary(runs["base"]), "pass_hat_k_sd": math.nan})
    assert not result and result.reasons[0].startswith("pass^3 could not be compared: no finite bound for the change")


def test_pass_hat_k_of_another_k_is_not_compared(runs):
    result = gate(runs["same"], summary(runs["k2"]))
    assert not result and result.reasons == ["pass^3 could not be compared: the baseline ran k=2 trials per task, "
                                             "this run 3"]


@pytest.mark.parametrize("field, value", [("cost_per_success", math.nan), ("cost_ci", [math.nan, math.nan]),
                                          ("cost_ci", [0.0, math.inf]), ("cost_ci", [None, None])])
def test_a_non_finite_cost_fails(runs, field, value):
    base = {**summary(runs["base"]), field: value}
    if field == "cost_ci" and value == [None, None]:
        base["cost_per_success"] = None
    result = gate(runs["same"], base)
    assert not result and len(result.reasons) == 1
    assert result.reasons[0].startswith("cost per success could not be compared: non-finite estimate")


def test_cost_priced_in_one_run_only_fails(runs):
    result = gate(runs["unpriced"], summary(runs["base"]))
    assert not result and result.reasons == ["cost per success could not be compared: the baseline has dollar "
                                             "figures and this run none (price both runs alike)"]
    result = gate(runs["base"], summary(runs["unpriced"]))
    assert not result and result.reasons == ["cost per success could not be compared: this run has dollar figures "
                                             "and the baseline none (price both runs alike)"]
    assert gate(runs["unpriced"], summary(runs["unpriced"]))        # neither priced: nothing to compare


@pytest.mark.parametrize("tolerance", [math.nan, math.inf, -0.1, "0", True])
def test_a_bad_tolerance_is_refused(runs, tolerance):
    for name in ("tolerance", "cost_tolerance"):
        with pytest.raises(InvalidValueError, match=f"{name} must be a finite number >= 0"):
            gate(runs["broken"], summary(runs["base"]), **{name: tolerance})


def test_a_nan_baseline_success_rate_fails_a_run_that_fails_every_task(runs):
    legacy = {"n_trials": 60, "success_rate": math.nan, "provenance": {}}
    result = gate(runs["broken"], legacy)
    assert not result and result.reasons[0] == ("success rate could not be compared: the baseline's success_rate is "
                                                "nan, not a rate in [0, 1]")
    result = gate(runs["same"], {**summary(runs["base"]), "success_rate": math.nan})
    assert not result and "success rate could not be compared" in result.reasons[0]
    result = gate(runs["same"], {**legacy, "success_rate": 1.5})
    assert not result and "1.5, not a rate in [0, 1]" in result.reasons[0]


@pytest.mark.parametrize("field, value", [("n_trials", math.nan), ("n_trials", 60.0), ("n_trials", True),
                                          ("n_success", math.nan), ("n_success", 59.5), ("n_tasks", math.nan),
                                          ("n_tasks", -1)])
def test_malformed_counts_are_refused(runs, field, value):
    with pytest.raises(ValueError, match=f"malformed baseline -- {field}="):
        gate(runs["broken"], {**summary(runs["base"]), field: value})


def test_a_nan_baseline_file_is_refused(runs, tmp_path):
    save_agent_baseline(runs["base"], "v1")
    store = json_store("baselines")
    path = store.path("v1")
    path.write_text(path.read_text().replace('"pass_hat_k": 1.0', '"pass_hat_k": NaN'))
    with pytest.raises(CorruptStoreFileError, match="NaN is not valid JSON"):
        gate(runs["same"], "v1")


def test_ek_fails_a_nan_pass_hat_k_too():
    """The reference kit: "pass^k could not be compared: non-finite estimate" (scorekit passed it)."""
    tasks = [eka.TaskSpec(f"t{i}", input=i, gold="ok") for i in range(10)]
    report = eka.run_suite(lambda t: "ok", tasks, k=3)
    base = {**ek_harness._summary(report), "pass_hat_k": math.nan}
    result = eka.agent_regression_gate(report, base)
    assert not result.passed and result.reasons[0].startswith("pass^3 could not be compared: non-finite estimate")


def test_a_baseline_without_a_success_bounds_no_cost(runs):
    """Its cost per success is infinite (stored as null): the cost arm has nothing to fail on, and the
    success arm decides."""
    base = summary(runs["broken"])
    assert (base["n_success"], base["cost_per_success"], base["cost_ci"]) == (0, None, [None, None])
    assert gate(runs["same"], base).reasons == []
    result = gate(runs["broken"], summary(runs["base"]))
    assert not result and result.reasons[-1].startswith("cost per success regressed: CI low inf exceeds")


def test_a_baseline_name_the_store_refuses_is_not_a_first_run(runs, tmp_path):
    """`name in store` is False for a refused key, so the gate passed it as a first run (no baseline)."""
    with pytest.raises(StoreKeyError, match="'..' part"):
        gate(runs["broken"], "../v1")
    save_agent_baseline(runs["base"], "v1")
    path = json_store("baselines").path("v1")
    target = tmp_path / "moved.json"
    path.rename(target)
    path.symlink_to(target)
    with pytest.raises(StoreKeyError, match="symbolic link"):
        gate(runs["broken"], "v1")
    assert gate(runs["broken"], "never-saved")          # a name never saved is a first run
