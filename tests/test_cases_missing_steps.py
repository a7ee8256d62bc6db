"""A step the pipeline never produced is counted, never silent (issue 30, item 8): per case and in
the headline of the console, the JSON summary and the report, under both ``--missing-steps``
rules (``exclude``, the seed's rule and the default: left out of the case score; ``fail``: scored
0), for a run and for a saved summary rendered again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cases_report_data import Page
from scorekit.cases import BenchmarkRunner, CasesConfigError
from scorekit.cli import main

#: The command pipeline never outputs "extract".
SCRIPT = "import json, sys\njson.load(sys.stdin)\njson.dump({'classify': 'bio'}, sys.stdout)\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name, expected in (("c1", {"extract": {"t": "T"}, "classify": "bio"}), ("c2", {"classify": "chem"})):
        (tmp_path / "bench" / name).mkdir(parents=True)
        (tmp_path / "bench" / name / "input.json").write_text("{}", encoding="utf-8")
        (tmp_path / "bench" / name / "expected.json").write_text(json.dumps(expected), encoding="utf-8")
    (tmp_path / "pipe.py").write_text(SCRIPT, encoding="utf-8")
    return tmp_path


def _run(capsys, *argv: str) -> tuple[list[str], dict, Page]:
    code = main(["cases", *argv, "--json", "s.json", "--report", "r.html"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return (out.splitlines(), json.loads(Path("s.json").read_text(encoding="utf-8")),
            Page(Path("r.html").read_text(encoding="utf-8")))


PIPE = f"cmd:{sys.executable} pipe.py"


def test_exclude_counts_the_missing_step_of_a_passing_case(project: Path, capsys) -> None:
    lines, data, page = _run(capsys, "bench", "-p", PIPE)
    assert lines[0] == "Benchmark complete \u2014 2 cases, 1 pipeline \u2014 1 case passed with missing steps"
    assert "  Pass rate: 50.0% (1/2 cases)  errors: 0/2" in lines
    assert ("  Missing steps: 1 step in 1 case (left out of the case scores), 1 case passed with missing steps"
            in lines)
    assert data["missing_steps"] == "exclude" and data["passed_with_missing_steps"] == 1
    pipeline = data["pipelines"][0]
    assert (pipeline["missing_step_count"], pipeline["cases_with_missing_steps"],
            pipeline["passed_with_missing_steps"]) == (1, 1, 1)
    assert [(c["case_name"], c["overall_score"], c["missing_steps"]) for c in pipeline["cases"]] == [
        ("c1", 1.0, 1), ("c2", 0.0, 0)]
    assert any(note.startswith("1 case passed with missing steps: a step the pipeline gave no output for is left "
                               "out of the case score") for note in page.notes)
    assert page.table("Overall summary")[-1] == ["missing steps", "left out of the case score"]
    assert ("PASS \u00b7 c1 \u00b7 100.0% \u00b7 1 step missing", False) in page.details


def test_fail_scores_each_missing_step_0(project: Path, capsys) -> None:
    lines, data, page = _run(capsys, "bench", "-p", PIPE, "--missing-steps", "fail")
    assert lines[0] == "Benchmark complete \u2014 2 cases, 1 pipeline"  # nothing passed with a missing step
    assert "  Overall accuracy: 25.0%" in lines and "  Pass rate: 0.0% (0/2 cases)  errors: 0/2" in lines
    assert ("  Missing steps: 1 step in 1 case (scored 0 in the case scores), 0 cases passed with missing steps"
            in lines)
    assert data["missing_steps"] == "fail" and data["passed_with_missing_steps"] == 0
    assert [(c["overall_score"], c["missing_steps"]) for c in data["pipelines"][0]["cases"]] == [(0.5, 1), (0.0, 0)]
    assert page.table("Overall summary")[-1] == ["missing steps", "scored 0"]
    assert ("FAIL \u00b7 c1 \u00b7 50.0% \u00b7 1 step missing", True) in page.details


def test_a_saved_summary_is_rendered_under_either_rule(project: Path, capsys) -> None:
    _run(capsys, "bench", "-p", PIPE)
    Path("saved.json").write_text(Path("s.json").read_text(encoding="utf-8"), encoding="utf-8")
    lines, data, page = _run(capsys, "--from-summary", "saved.json", "--missing-steps", "fail")
    assert [c["overall_score"] for c in data["pipelines"][0]["cases"]] == [0.5, 0.0]
    assert data["missing_steps"] == "fail" and lines[0] == "Benchmark complete \u2014 2 cases, 1 pipeline"
    lines, data, page = _run(capsys, "--from-summary", "saved.json")
    assert data["missing_steps"] == "exclude" and data["passed_with_missing_steps"] == 1


def test_the_rule_is_checked(project: Path) -> None:
    with pytest.raises(CasesConfigError, match="missing_steps must be 'exclude' or 'fail', got 'drop'"):
        BenchmarkRunner(project / "bench", [PIPE], missing_steps="drop")
    assert main(["cases", "bench", "-p", PIPE, "--missing-steps", "drop"]) == 2


def test_a_summary_saved_without_the_counts_is_counted_from_its_cases(project: Path, capsys) -> None:
    _run(capsys, "bench", "-p", PIPE)
    data = json.loads(Path("s.json").read_text(encoding="utf-8"))
    for key in ("missing_steps", "passed_with_missing_steps"):
        del data[key]
    for key in ("missing_step_count", "cases_with_missing_steps", "passed_with_missing_steps"):
        del data["pipelines"][0][key]
    Path("older.json").write_text(json.dumps(data), encoding="utf-8")
    lines, data, page = _run(capsys, "--from-summary", "older.json")
    assert lines[0] == "Benchmark complete \u2014 2 cases, 1 pipeline \u2014 1 case passed with missing steps"
    assert data["pipelines"][0]["passed_with_missing_steps"] == 1 and data["missing_steps"] == "exclude"
