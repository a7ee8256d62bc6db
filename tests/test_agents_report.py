"""scorekit.agents.report: the suite report's sections and values, hostile task names escaped, bad
input refused, and the page loaded in headless Chromium (no console error, no request)."""

from __future__ import annotations

import doctest
import warnings

import pytest

from scorekit import report
from scorekit.agents import AgentGateResult, agent_regression_gate, reliability
from scorekit.agents import report as agents_report
from scorekit.errors import InvalidTypeError, InvalidValueError
from test_report_browser import HOSTILE, Dom, _problems, _run, chromium  # noqa: F401  (a fixture)


def runs():
    slices = {"t1": "easy", "t2": "hard", HOSTILE: "hard"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v1 = reliability({"t1": [True] * 4, "t2": [True, True, True, False], HOSTILE: [True] * 4}, k=4,
                         slices=slices, cost={"total_dollars": 0.12, "cost_per_success": 0.011, "cost_ci": (0.01, 0.02),
                                              "mean_latency_s": 1.5, "total_tokens": 12000})
        v2 = reliability({"t1": [True] * 4, "t2": [False] * 4, HOSTILE: [True, False, True, False]}, k=4,
                         slices=slices)
    return {"v1": v1, "v2": v2}


def test_doctests():
    assert doctest.testmod(agents_report).failed == 0


def test_sections_and_values():
    r = runs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gate = agent_regression_gate(r["v2"], r["v1"])
    sections = agents_report.report_sections(r, gate=gate, gate_runs=("v2", "v1"))
    titles = [s.title for s in sections]
    assert titles == ["Runs", "pass^4 per slice", "Per slice", "pass^4 per task", "Per task",
                      "Regression gate: v2 against v1", "Why the gate failed"]
    overview = sections[0]
    assert [c.text for c in overview.rows[0]][:4] == ["v1", "3", "4", "12"]
    assert overview.rows[0][9].text == "0.1200" and overview.rows[1][9].text == ""
    verdict = dict((k, v.text) for k, v in sections[5].rows)
    assert verdict["verdict"] == "FAILED" and verdict["success rate (current / baseline)"] == "0.5000 / 0.9167"
    assert any("regressed" in row[0].text for row in sections[6].rows)


def test_passing_gate_says_so():
    r = runs()
    sections = agents_report.report_sections({"v1": r["v1"]}, gate=AgentGateResult(), gate_runs=("v1", "v0"))
    assert sections[-1].kind == "note" and "No confident regression" in sections[-1].text


def test_bad_input():
    with pytest.raises(InvalidValueError, match="non-empty"):
        agents_report.report_sections({})
    with pytest.raises(InvalidTypeError, match="not a ReliabilityReport"):
        agents_report.report_sections({"v1": {"k": 1}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k2 = reliability({"t": [True, False]}, k=2)
    with pytest.raises(InvalidValueError, match="same k"):
        agents_report.report_sections({"a": reliability({"t": [True]}), "b": k2})


def test_empty_run_is_a_note():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        empty = reliability({"t": [True]}, k=2)
    sections = agents_report.report_sections({"v": empty})
    assert any(s.kind == "note" and "No task had k trials" in s.text for s in sections)


def test_page_in_headless_chromium(chromium, tmp_path):  # noqa: F811
    r = runs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gate = agent_regression_gate(r["v2"], r["v1"])
    page = report.write_report(tmp_path / "agents.html",
                               agents_report.suite_report(r, title=HOSTILE, gate=gate, gate_runs=("v2", "v1")))
    html = page.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    dom_html, stderr, requests = _run(chromium, page, tmp_path / "dom", "--dump-dom")
    assert _problems(stderr) == [] and requests == []
    assert Dom(dom_html).body.get("data-script-ran") == "1"


def test_demo_agents_sample_against_an_independent_count(capsys):
    """The demo's agent sample, checked against counting the recorded transcripts directly: a trial
    succeeds when its last assistant message is the gold answer."""
    import json

    from scorekit.cli import main
    from scorekit.demo_report import AGENTS_SAMPLE, score_agents_sample

    answers = {t["task_id"]: t["answer"] for t in json.loads((AGENTS_SAMPLE / "tasks.json").read_text())}
    wins: dict = {}
    for line in (AGENTS_SAMPLE / "episodes.jsonl").read_text().splitlines():
        row = json.loads(line)
        ok = row["messages"][-1]["content"] == answers[row["task_id"]]
        wins.setdefault(row["version"], {}).setdefault(row["task_id"], []).append(ok)
    sample = score_agents_sample()
    for version, run in sample["runs"].items():
        per_task = wins[version]
        assert run.n_success == sum(sum(v) for v in per_task.values()) and run.n_trials == 40
        assert run.pass_hat_k == sum(all(v) for v in per_task.values()) / len(per_task)
        assert run.detail["provenance"]["suite_version"] == "demo-1"
    assert not sample["gate"] and sample["gate"].reasons[0].startswith("success rate regressed: 0.800 vs baseline 0.950")
    assert main(["demo", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "Agent suite sample: 10 tasks x 4 trials, two agent versions:" in out
    assert "v2: success rate 80.0%, pass^4 0.700" in out and "regression gate v2 against v1: FAILED" in out


def test_comparison_section():
    from scorekit.agents import compare_agents

    r = runs()
    c = compare_agents(r["v2"], r["v1"], names=("v2", "v1"))
    section = agents_report.report_sections(r, comparison=c)[-1]
    rows = {k: v.text for k, v in section.rows}
    assert section.title == "Paired comparison: v2 against v1"
    assert rows["paired tasks"] == "3" and rows["improved / regressed / tied tasks"] == "0 / 2 / 1"
    assert rows["success rate (v2 / v1)"] == "0.5000 / 0.9167"
    # v1 solved t1 and the hostile task every time, but v2 solved each of them at least once
    assert rows["solved every time by v1, never by v2"] == "none" == rows["solved every time by v2, never by v1"]
