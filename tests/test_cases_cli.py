"""``scorekit cases``: console lines (decision 37), the report and JSON files, ``--from-summary``,
``--compare``, ``--sections`` (decision 24), exit codes (decisions 8, 23, 34, 40), inputs never
written."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from doc_examples import blocks, run_python_blocks
from scorekit.cases.cli import format_percent
from cases_worked_example import WORKED
from scorekit.cases.results import BenchmarkSummary
from scorekit.cli import main


WORKED_LINES = [
    "  Step 'extract'  accuracy: 87.5%  pass rate: 75.0% (threshold: 100%)",
    "  Step 'classify'  accuracy: 100.0%  pass rate: 100.0% (threshold: 100%)",
    "  Step 'nosuchstep'  accuracy: 0.0%  pass rate: 0.0% (threshold: 100%)",
    "  Overall accuracy: 75.0%",  # decision 13: the error case counts 0
    "  Pass rate: 60.0% (3/5 cases)  errors: 1/6, 1 with no scored steps",  # decision 12
    # c3_missing passes only because its missing step is left out of its score: said, never silent
    "  Missing steps: 1 step in 1 case (left out of the case scores), 1 case passed with missing steps",
]


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A benchmark folder (the §2.7 worked example) and a pipeline module in the current folder."""
    bench = tmp_path / "bench"
    for name, (expected, _) in WORKED.items():
        (bench / name).mkdir(parents=True)
        (bench / name / "input.json").write_text(json.dumps({"case": name}), encoding="utf-8")
        (bench / name / "expected.json").write_text(json.dumps(expected), encoding="utf-8")
    mod = "cases_cli_pipe_" + hashlib.sha1(str(tmp_path).encode()).hexdigest()[:8]
    (tmp_path / f"{mod}.py").write_text(textwrap.dedent(f"""
        OUTPUTS = {WORKED!r}

        def worked(case_input):
            outputs = OUTPUTS[case_input["case"]][1]
            if outputs is None:
                raise ValueError("classify step raised")
            return outputs
    """), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CASES_CLI_MODULE", mod)
    return tmp_path


def pipe() -> str:
    return os.environ["CASES_CLI_MODULE"] + ":worked"


def run(capsys, *argv):
    code = main(["cases", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_worked_example_console_report_and_json(project: Path, capsys) -> None:
    before = tree_digest(project / "bench")
    code, out, err = run(capsys, "bench", "-p", pipe(), "--report", "r.html",
                         "--json", "s.json", "--title", "Sprint <3>")
    assert code == 0, err
    assert out.splitlines() == ["Benchmark complete \u2014 6 cases, 1 pipeline \u2014 1 case passed with missing steps",
                                "", f"Pipeline: {pipe()}",
                                *WORKED_LINES, "", "Report written to: r.html"]
    html = (project / "r.html").read_text(encoding="utf-8")
    assert "Sprint &lt;3&gt;" in html and "<3>" not in html
    assert "Per-step accuracy" in html and "classify step raised" in html
    saved = BenchmarkSummary.from_json(project / "s.json")
    assert saved.pipelines[0].overall_mean_accuracy == 0.75 and saved.case_names == list(WORKED)
    assert tree_digest(project / "bench") == before


def test_json_to_stdout_moves_the_console_text_to_stderr(project: Path, capsys) -> None:
    code, out, err = run(capsys, "bench", "-p", pipe(), "--json", "-", "--pass-threshold", "0.5")
    assert code == 0
    data = json.loads(out)
    assert data["pass_threshold"] == 0.5 and data["pipelines"][0]["overall_pass_rate"] == 0.8
    assert "  Step 'extract'  accuracy: 87.5%  pass rate: 100.0% (threshold: 50%)" in err.splitlines()
    assert "Report written to: benchmark_report.html" in err
    assert (project / "benchmark_report.html").is_file()


def test_two_pipelines_and_jobs(project: Path, capsys) -> None:
    code, out, err = run(capsys, "bench", "-p", pipe(), "-p", f"py:{pipe()}", "--jobs", "2", "--timeout", "20",
                         "--report", "two.html")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Benchmark complete \u2014 6 cases, 2 pipelines \u2014 2 cases passed with missing steps"
    assert lines.count("  Overall accuracy: 75.0%") == 2
    assert f"Pipeline: {pipe()} (2)" in lines  # the second pipeline has the same name


@pytest.mark.parametrize("sections", [["overall_summary", "plots"], ["overall_summary,plots"],
                                      ["overall_summary,", "plots"]])
def test_sections_space_or_comma_separated(project: Path, capsys, sections: list[str]) -> None:
    code, out, err = run(capsys, "bench", "-p", pipe(), "--sections", *sections, "--report", "s.html")
    assert code == 0, err
    html = (project / "s.html").read_text(encoding="utf-8")
    assert "Per-step accuracy" not in html


def test_unknown_section_is_a_usage_error(project: Path, capsys) -> None:
    code, out, err = run(capsys, "bench", "-p", pipe(), "--sections", "plots", "nonsense")
    assert code == 2
    assert "scorekit: error: unknown report section 'nonsense'" in err
    assert not (project / "benchmark_report.html").exists()


@pytest.mark.parametrize("argv, message", [
    (["--pass-threshold", "1.5"], "must be between 0 and 1, got 1.5"),  # decision 23
    (["--pass-threshold", "nan"], "must be between 0 and 1"),
    (["--jobs", "0"], "must be at least 1"),
    (["--timeout", "0"], "must be a positive number of seconds"),
    (["--matching", "best"], "invalid choice: 'best'"),
])
def test_bad_option_values_exit_2(project: Path, capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, "bench", "-p", pipe(), *argv)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    ([], "give the benchmark folder DIR"),
    (["bench"], "give at least one pipeline with -p PIPELINE"),
    (["bench", "-p", "x:y", "--from-summary", "s.json"], "--from-summary renders a saved summary"),
    (["--from-summary", "s.json", "--jobs", "2"], "--jobs applies to a run"),
    (["bench", "-p", "x:y", "--report", "no/such/folder/r.html"], "folder 'no/such/folder' does not exist"),
])
def test_usage_errors_exit_2(project: Path, capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err


def test_config_errors_exit_1_listing_every_problem(project: Path, capsys) -> None:
    code, out, err = run(capsys, "missing_dir", "-p", "no_such_module_q:fn", "-p", "neither-this")
    assert code == 1 and out == ""
    assert err.startswith("scorekit cases: 3 configuration problems:\n")
    assert "cannot import module 'no_such_module_q'" in err and "'neither-this'" in err and "missing_dir" in err
    assert "Traceback" not in err


def test_no_cases_found_exits_1(project: Path, capsys) -> None:
    (project / "empty").mkdir()
    code, out, err = run(capsys, "empty", "-p", pipe())
    assert code == 1  # decision 8 (REF: 0 and "All passing")
    assert err.startswith("scorekit cases: no cases found in 'empty'")
    assert not (project / "benchmark_report.html").exists()


def test_a_run_that_fails_every_case_exits_0(project: Path, capsys) -> None:
    code, out, err = run(capsys, "bench", "-p", "cmd:false")
    assert code == 0  # decision 40
    assert "  Overall accuracy: 0.0%" in out.splitlines()
    assert "  Pass rate: 0.0% (0/6 cases)  errors: 6/6" in out.splitlines()


def test_missing_pdf_support_exits_1_before_the_run(project: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import scorekit.cases.report as report

    def no_pdf():
        raise report.PdfSupportError("PDF export needs WeasyPrint: install it with pip install 'scorekit[pdf]'")

    monkeypatch.setattr(report, "require_pdf_support", no_pdf)
    marker = project / "ran"
    code, out, err = run(capsys, "bench", "-p", f"sh:touch {marker}; echo '{{}}'", "--pdf")
    assert code == 1 and "PDF export needs WeasyPrint" in err and "Traceback" not in err  # decision 34
    assert not marker.exists() and not (project / "benchmark_report.html").exists()


def test_from_summary_rerenders_and_rethresholds(project: Path, capsys) -> None:
    assert run(capsys, "bench", "-p", pipe(), "--json", "s.json", "--report", "first.html")[0] == 0
    before = (project / "s.json").read_bytes()
    code, out, err = run(capsys, "--from-summary", "s.json", "--report", "again.html", "--pass-threshold", "0.5")
    assert code == 0, err
    assert "  Pass rate: 80.0% (4/5 cases)  errors: 1/6, 1 with no scored steps" in out.splitlines()
    assert out.splitlines()[-1] == "Report written to: again.html"
    assert (project / "again.html").is_file()
    assert (project / "s.json").read_bytes() == before
    code, out, err = run(capsys, "--from-summary", "s.json", "--report", "s.json")
    assert code == 2 and (project / "s.json").read_bytes() == before  # an input is never overwritten


def test_from_summary_bad_file_exits_1(project: Path, capsys) -> None:
    (project / "bad.json").write_text('{"format": "other"}', encoding="utf-8")
    code, out, err = run(capsys, "--from-summary", "bad.json")
    assert code == 1 and "not a saved scorekit cases summary" in err
    code, out, err = run(capsys, "--from-summary", "absent.json")
    assert code == 1 and "absent.json" in err


def test_compare_with_a_previous_run(project: Path, capsys) -> None:
    assert run(capsys, "bench", "-p", pipe(), "--json", "old.json", "--report", "old.html")[0] == 0
    fixed = project / "bench" / "c6_partial" / "expected.json"
    fixed.write_text(json.dumps({"extract": {"t": "T", "u": "wrong"}, "classify": "bio"}), encoding="utf-8")
    code, out, err = run(capsys, "bench", "-p", pipe(), "--compare", "old.json", "--report", "new.html")
    assert code == 0, err
    assert "Since old.json: 1 better" in out.splitlines()
    assert "Changes since the previous run" in (project / "new.html").read_text(encoding="utf-8")


def test_compare_pairs_by_name_and_names_the_unpaired(project: Path, capsys) -> None:
    assert run(capsys, "bench", "-p", pipe(), "--json", "old.json", "--report", "old.html")[0] == 0
    saved = json.loads((project / "old.json").read_text(encoding="utf-8"))
    saved["pipelines"][0]["name"] = "v1.py"
    (project / "old.json").write_text(json.dumps(saved), encoding="utf-8")
    code, out, err = run(capsys, "bench", "-p", pipe(), "--compare", "old.json", "--report", "new.html")
    assert code == 0, err
    # never paired by position: the renamed pipeline is not compared with the other one
    assert (f"Since old.json: no pipeline in common, nothing compared; only in this run: {pipe()}; "
            "only in the previous run: v1.py") in out.splitlines()
    assert "No pipeline name is in both runs: nothing compared." in (project / "new.html").read_text(encoding="utf-8")


def test_compare_bad_file_exits_1_before_the_run(project: Path, capsys) -> None:
    code, out, err = run(capsys, "bench", "-p", pipe(), "--compare", "nope.json")
    assert code == 1 and "--compare 'nope.json'" in err and out == ""


def test_format_percent_rounds_down() -> None:
    assert [format_percent(x) for x in (1.0, 0.875, 0.9999, 0.58, 0.0, None)] == [
        "100.0%", "87.5%", "99.9%", "58.0%", "0.0%", "—"]


def test_command_line_end_to_end(project: Path) -> None:
    """`python -m scorekit cases` in a fresh process: a module:function pipeline found in the
    current folder, a command pipeline, exit status 0; a configuration error exits 1 without a
    traceback."""
    script = project / "pipe.py"
    script.write_text("import json, sys\ncase = json.load(sys.stdin)['case']\n"
                      "json.dump({'extract': {'t': 'T'}, 'classify': 'bio'}, sys.stdout)\n", encoding="utf-8")
    import scorekit

    env = {**os.environ, "PYTHONPATH": str(Path(scorekit.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-m", "scorekit", "cases", "bench", "-p", pipe(), "-p",
                           f"cmd:{sys.executable} pipe.py", "--report", "e2e.html"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2] == f"Pipeline: {pipe()}" and "Pipeline: pipe.py" in lines
    assert lines[-1] == "Report written to: e2e.html"
    bad = subprocess.run([sys.executable, "-m", "scorekit", "cases", "bench", "-p", "no_module_z:f"], cwd=project,
                         env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and "no_module_z" in bad.stderr




def _doc_blocks(language: str) -> list[tuple[int, str]]:
    return blocks("cases-pipelines.md", language)


def test_docs_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/cases-pipelines.md: every python block runs as pasted (one session, in a fresh
    folder); the sh block's commands exit 0 and the first prints the page's text block."""
    import shlex

    import scorekit

    monkeypatch.chdir(tmp_path)
    run_python_blocks("cases-pipelines.md", min_blocks=4)
    shell = tmp_path / "sh"
    shell.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(scorekit.__file__).parents[1])}
    (sh_block,) = _doc_blocks("sh")
    (expected_text,) = _doc_blocks("text")
    outputs = []
    for line in sh_block[1].splitlines():
        if line.startswith("scorekit "):
            done = subprocess.run([sys.executable, "-m", "scorekit", *shlex.split(line)[1:]], cwd=shell, env=env,
                                  capture_output=True, text=True, timeout=120)
            outputs.append(done.stdout)
        else:
            done = subprocess.run(["bash", "-c", line], cwd=shell, capture_output=True, text=True)
        assert done.returncode == 0, (line, done.stderr)
    assert outputs[0] == expected_text[1]
    assert (shell / "report.html").is_file() and (shell / "again.html").is_file()


def test_progress_always_draws_a_bar_on_stderr(project: Path, capsys) -> None:
    code, out, err = run(capsys, "bench", "-p", pipe(), "--progress", "always")
    assert code == 0
    assert err.endswith("\r[" + "#" * 30 + "] 100.0% 6/6 cases\n")
    code, out, err = run(capsys, "bench", "-p", pipe(), "--progress", "never")
    assert err == ""


def test_pdf_is_written_beside_the_report(project: Path, capsys) -> None:
    code, out, err = run(capsys, "bench", "-p", pipe(), "--report", "r.html", "--pdf", "--sections", "overall_summary")
    assert code == 0, err
    assert out.splitlines()[-2:] == ["Report written to: r.html", "PDF written to:    r.pdf"]
    assert (project / "r.pdf").read_bytes().startswith(b"%PDF")


def test_attempt_logs_of_a_command_reach_the_report(project: Path, capsys) -> None:
    (project / "noisy.py").write_text("import json, sys\nsys.stdin.read()\nprint('note from the pipeline', "
                                      "file=sys.stderr)\nprint('{}')\n", encoding="utf-8")
    code, out, err = run(capsys, "bench", "-p", f"cmd:{sys.executable} noisy.py", "--sections", "attempt_logs",
                         "--report", "logs.html")
    assert code == 0, err
    html = (project / "logs.html").read_text(encoding="utf-8")
    assert "note from the pipeline" in html and "No attempt logs recorded." not in html


def test_skipped_directories_are_listed_once_and_capped(project: Path, capsys) -> None:
    from scorekit.cases.cli import MAX_SKIPPED_SHOWN

    for k in range(MAX_SKIPPED_SHOWN + 5):
        (project / "bench" / f"zz-empty-{k:02d}").mkdir()
    code, out, err = run(capsys, "bench", "-p", pipe(), "--report", "r.html")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if "skipped" in line]
    assert len(warnings) == MAX_SKIPPED_SHOWN + 1
    assert warnings[-1] == "scorekit cases: warning: … and 5 more skipped directories"
    assert warnings[0].startswith("scorekit cases: warning: skipped 'zz-empty-00': no input or expected file")
