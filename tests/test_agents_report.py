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
