"""``scorekit cases --compare``: the paired bootstrap interval and the exact sign test per pipeline
pair (scorekit.stats), against a straightforward resampling with the same seed and SciPy's
binomial test; cases in one run only are listed; the JSON, the console and the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from scorekit.cases.compare import compare_summaries
from scorekit.cases.results import BenchmarkSummary, CaseResult, PipelineBenchmarkResult, StepScore, aggregate_pipeline
from scorekit.cli import main
from scorekit.demo_report import CASES_SAMPLE
from test_stats import _plain_bootstrap

# a case's state in one run: a score, "error" (scores 0), "unscored" (no scored step) or absent (None)
STATES = st.one_of(st.none(), st.just("error"), st.just("unscored"),
                   st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(0, 1))


def case(name: str, state) -> CaseResult:
    if state == "error":
        return CaseResult(name, "p", "error", error_message="boom")
    if state == "unscored":
        return CaseResult(name, "p", "success", [StepScore("s", 0.0, "ignored")], None)
    return CaseResult(name, "p", "success", [StepScore("s", state)], state)


def summary(states: dict) -> BenchmarkSummary:
    cases = [case(name, state) for name, state in states.items() if state is not None]
    return BenchmarkSummary([aggregate_pipeline(PipelineBenchmarkResult("p", cases), 1.0)], [c.case_name for c in cases])


def paired_value(state):
    return 0.0 if state == "error" else state


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(STATES, STATES), min_size=1, max_size=25), st.integers(1, 400), st.integers(0, 2**32),
       st.sampled_from([0.05, 0.1]))
def test_significance_against_plain_resampling_and_scipy(rows, resamples, seed, alpha):
    previous = summary({f"c{k}": old for k, (old, _) in enumerate(rows)})
    current = summary({f"c{k}": new for k, (_, new) in enumerate(rows)})
    (test,) = compare_summaries(previous, current, resamples=resamples, alpha=alpha, seed=seed).significance
    both = [(paired_value(new), paired_value(old)) for old, new in rows
            if old is not None and new is not None and "unscored" not in (old, new)]
    assert test.only_in_current == [f"c{k}" for k, (old, new) in enumerate(rows) if old is None and new is not None]
    assert test.only_in_previous == [f"c{k}" for k, (old, new) in enumerate(rows) if new is None and old is not None]
    assert test.without_score == [f"c{k}" for k, (old, new) in enumerate(rows) if None not in (old, new)
                                  and "unscored" in (old, new)]
    d = test.to_dict()
    if not both:
        assert test.difference is None and d["p_value"] is None and d["cases"] is None
        return
    diffs = [a - b for a, b in both]
    better, worse = sum(a > b for a, b in both), sum(a < b for a, b in both)
    assert (d["ci_low"], d["ci_high"]) == _plain_bootstrap(diffs, resamples, alpha, seed)
    assert d["mean_diff"] == sum(diffs) / len(diffs)
    assert (d["cases"], d["n_better"], d["n_worse"], d["n_equal"]) == (len(both), better, worse,
                                                                         len(both) - better - worse)
    want_p = 1.0 if better + worse == 0 else binomtest(better, better + worse, 0.5).pvalue
    assert d["p_value"] == pytest.approx(want_p, rel=1e-12)
    assert (d["seed"], d["resamples"], d["confidence"]) == (seed, resamples, 1 - alpha)


def test_hand_case():
    """Five cases: c0 0.5 -> 1.0, c1 error -> 1.0 (0 -> 1), c2 1.0 -> 0.5, c3 same, c4 only previously;
    c5 only now. Differences +0.5, +1, -0.5, 0: mean 0.25; 2 better, 1 worse: p = 2 * 3/8 -> 1.0."""
    previous = summary({"c0": 0.5, "c1": "error", "c2": 1.0, "c3": 0.75, "c4": 1.0})
    current = summary({"c0": 1.0, "c1": 1.0, "c2": 0.5, "c3": 0.75, "c5": 0.0})
    (test,) = compare_summaries(previous, current, resamples=100).significance
    d = test.to_dict()
    assert d["mean_previous"] == (0.5 + 0 + 1 + 0.75) / 4 and d["mean_current"] == (1 + 1 + 0.5 + 0.75) / 4
    assert (d["mean_diff"], d["n_better"], d["n_worse"], d["n_equal"], d["p_value"]) == (0.25, 2, 1, 1, 1.0)
    assert (d["only_in_current"], d["only_in_previous"], d["without_score"]) == (["c5"], ["c4"], [])
    assert test.text().startswith("p: mean case score +25.0 points (95% CI ")
    assert test.text().endswith(", 2 better, 1 worse, 1 same of 4 cases, sign test p = 1; not in the test: "
                                "1 only in this run, 1 only in the previous run")


def test_nothing_to_pair_is_said_not_guessed():
    from scorekit.cases.compare import comparison_section
    from scorekit.report import render_page

    comparison = compare_summaries(summary({"a": 1.0, "u": "unscored"}), summary({"b": 1.0, "u": 0.5}))
    (test,) = comparison.significance
    assert test.difference is None and test.to_dict()["ci_low"] is None and test.to_dict()["without_score"] == ["u"]
    assert test.text() == ("p: no case has a score in both runs, nothing to test; not in the test: 1 only in this "
                           "run, 1 only in the previous run, 1 without a score in one run")
    html = render_page("T", [comparison_section(comparison)])
    assert "More than noise?" in html and "p: 1 case without a score in one run, not in the test: u." in html


def run(capsys, *argv):
    code = main(["cases", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_compare_on_the_bundled_sample(tmp_path: Path, monkeypatch, capsys):
    """v1's saved outputs as the previous run, v2's as this one, under one pipeline name."""
    monkeypatch.chdir(tmp_path)
    for run_name, version in (("prev", "outputs_v1"), ("now", "outputs_v2")):
        shutil.copytree(CASES_SAMPLE / version, tmp_path / run_name / "outputs")
    code, out, err = run(capsys, CASES_SAMPLE / "benchmark", "-p", "saved:prev/outputs", "--json", "prev.json",
                         "--report", "prev.html")
    assert code == 0, err
    code, out, err = run(capsys, CASES_SAMPLE / "benchmark", "-p", "saved:now/outputs", "--json", "now.json",
                         "--report", "now.html", "--compare", "prev.json")
    assert code == 0, err
    prev, now = (json.loads(Path(f"{n}.json").read_text(encoding="utf-8")) for n in ("prev", "now"))
    old = {c["case_name"]: c["overall_score"] for c in prev["pipelines"][0]["cases"]}
    new = {c["case_name"]: c["overall_score"] for c in now["pipelines"][0]["cases"]}
    # by hand: acme, globex and paper got better, the receipt worse
    assert [n for n in new if new[n] > old[n]] == ["invoice-acme", "invoice-globex", "paper-crispr"]
    assert [n for n in new if new[n] < old[n]] == ["receipt-cafe"]
    (test,) = now["comparison"]["significance"]
    diffs = [new[n] - old[n] for n in new]
    assert test["pipeline"] == "outputs" and test["cases"] == 4
    assert (test["n_better"], test["n_worse"], test["n_equal"]) == (3, 1, 0)
    assert test["p_value"] == binomtest(3, 4, 0.5).pvalue == 0.625
    assert (test["ci_low"], test["ci_high"]) == _plain_bootstrap(diffs, 2000, 0.05, 0)
    assert test["mean_diff"] == sum(diffs) / 4
    assert out.splitlines()[-3].startswith("  outputs: mean case score +0.3 points (95% CI ")
    assert out.splitlines()[-3].endswith("3 better, 1 worse, 0 same of 4 cases, sign test p = 0.625")
    html = Path("now.html").read_text(encoding="utf-8")
    assert "More than noise?" in html and "0.625" in html
    # the comparison survives a round trip of the summary, but not a rule that changes the case scores
    assert BenchmarkSummary.from_json("now.json").comparison == now["comparison"]
    assert run(capsys, "--from-summary", "now.json", "--json", "again.json", "--report", "again.html")[0] == 0
    assert json.loads(Path("again.json").read_text(encoding="utf-8"))["comparison"] == now["comparison"]
    assert run(capsys, "--from-summary", "now.json", "--missing-steps", "fail", "--json", "fail.json",
               "--report", "fail.html")[0] == 0
    assert "comparison" not in json.loads(Path("fail.json").read_text(encoding="utf-8"))


def write_case(root: Path, name: str, expected: dict) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "input.json").write_text("{}", encoding="utf-8")
    (root / name / "expected.json").write_text(json.dumps(expected), encoding="utf-8")


def test_cli_compare_lists_the_cases_of_one_run_only(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("a", "b", "gone"):
        write_case(tmp_path / "before", name, {"s": {"x": 1, "y": 2}})
    for name in ("a", "b", "new"):
        write_case(tmp_path / "after", name, {"s": {"x": 1, "y": 2}})
    outputs = tmp_path / "out"
    outputs.mkdir()
    for name, output in (("a", {"s": {"x": 1, "y": 0}}), ("b", {"s": {"x": 1, "y": 2}}), ("gone", {"s": {}}),
                         ("new", {"s": {"x": 1, "y": 2}})):
        (outputs / f"{name}.json").write_text(json.dumps(output), encoding="utf-8")
    assert run(capsys, "before", "-p", "saved:out", "--json", "before.json", "--report", "b.html")[0] == 0
    (outputs / "a.json").write_text(json.dumps({"s": {"x": 1, "y": 2}}), encoding="utf-8")
    code, out, err = run(capsys, "after", "-p", "saved:out", "--json", "after.json", "--report", "a.html",
                         "--compare", "before.json")
    assert code == 0, err
    (test,) = json.loads(Path("after.json").read_text(encoding="utf-8"))["comparison"]["significance"]
    assert (test["only_in_current"], test["only_in_previous"], test["without_score"]) == (["new"], ["gone"], [])
    assert (test["cases"], test["mean_previous"], test["mean_current"], test["n_better"], test["p_value"]) == \
        (2, 0.75, 1.0, 1, 1.0)
    assert (test["ci_low"], test["ci_high"]) == _plain_bootstrap([0.5, 0.0], 2000, 0.05, 0)
    html = Path("a.html").read_text(encoding="utf-8")
    assert "out: 1 case only in this run, not in the test: new." in html
    assert "out: 1 case only in the previous run, not in the test: gone." in html
