"""``scorekit cases`` never writes over a file it reads (issue 30, item 12): every output path
(``--report``, ``--json``, ``--pdf``) is checked with :func:`scorekit.files.check_outputs`
against every file the run reads and against the other outputs, before any case runs.

The matrix: each kind of input (a case file, a file in a case sub-folder, a ``$file`` target in a
sub-folder or outside the benchmark, a saved output, a pipeline script, a pipeline YAML, the
module of a Python pipeline, a ``--compare`` or ``--from-summary`` summary) × each output option
× each spelling of the path (as given, through ``..``, a symbolic link, a hard link). Every
refusal exits 2 with one line, leaves every input byte for byte as it was, writes nothing and
runs no case (the command pipeline, which would create a marker file, never ran).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from scorekit.cases.results import BenchmarkSummary
from scorekit.cli import main
from test_cases_runner import pyconveyor_pipeline  # noqa: F401  (a fixture)

#: Inputs of the run, relative to the test's folder.
TARGETS = {
    "case input file": "bench/c1/input.json",
    "case expected file": "bench/c1/expected.json",
    "$file target in a sub-folder": "bench/c1/sub/doc.md",
    "unread file in a case sub-folder": "bench/c1/notes/unread.txt",
    "external $file target": "outside/ext.txt",
    "saved output": "saved/c1.json",
    "pipeline script": "script.py",
    "pipeline YAML": "pc/pipe.yaml",
    "Python pipeline module": "{module}.py",
    "--compare summary": "old.json",
    "--from-summary summary": "old.json",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pyconveyor_pipeline: Path) -> Path:  # noqa: F811
    """A benchmark of one case reading two ``$file`` targets, four pipelines (a command that
    would create ``ran.marker``, saved outputs, a pyconveyor YAML, a Python callable) and a
    saved summary."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "ext.txt").write_text("external text", encoding="utf-8")
    case = tmp_path / "bench" / "c1"
    for folder in ("sub", "notes"):
        (case / folder).mkdir(parents=True)
    (case / "input.json").write_text(json.dumps({"text": "a cell", "doc": {"$file": "sub/doc.md"},
                                                 "ext": {"$file": str(tmp_path / "outside" / "ext.txt")}}))
    (case / "expected.json").write_text(json.dumps({"extract": {"title": "A Cell"}}), encoding="utf-8")
    (case / "sub" / "doc.md").write_text("# doc", encoding="utf-8")
    (case / "notes" / "unread.txt").write_text("notes", encoding="utf-8")
    (tmp_path / "saved").mkdir()
    (tmp_path / "saved" / "c1.json").write_text('{"extract": {"title": "A Cell"}}', encoding="utf-8")
    (tmp_path / "script.py").write_text(textwrap.dedent("""
        import json, pathlib, sys
        pathlib.Path(sys.argv[1]).write_text("ran")
        json.dump({"extract": {"title": "A Cell"}}, sys.stdout)
    """), encoding="utf-8")
    module = "cases_outputs_pipe_" + hashlib.sha1(str(tmp_path).encode()).hexdigest()[:8]
    (tmp_path / f"{module}.py").write_text("def run(case_input):\n    return {'extract': {'title': 'A Cell'}}\n",
                                           encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CASES_OUTPUTS_MODULE", module)
    (tmp_path / "old.json").write_text(BenchmarkSummary([], ["c1"], 1.0).to_json() + "\n", encoding="utf-8")
    yield tmp_path
    sys.modules.pop(module, None)


def _pipelines(root: Path) -> list[str]:
    return ["-p", f"cmd:{sys.executable} script.py {root / 'ran.marker'}", "-p", "saved:saved",
            "-p", "pyconveyor:pc/pipe.yaml", "-p", os.environ["CASES_OUTPUTS_MODULE"] + ":run"]


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _spell(root: Path, target: Path, spelling: str, suffix: str) -> Path:
    """A path to write that leads to ``target``: as given, through ``..``, a symbolic link or a
    hard link (the links are named ``out<suffix>``)."""
    if spelling == "as given":
        return target
    if spelling == "dot-dot":
        return target.parent / ".." / target.parent.name / target.name
    link = root / f"out{suffix}"
    if spelling == "symlink":
        link.symlink_to(target)
    else:
        os.link(target, link)
    return link


def _argv(root: Path, kind: str, option: str, path: Path) -> list[str]:
    if option == "--report":
        outputs = ["--report", str(path)]
    elif option == "--json":
        outputs = ["--json", str(path), "--report", "new.html"]
    else:
        outputs = ["--report", str(path.with_suffix(".html")), "--pdf"]
    if kind == "--from-summary summary":
        return ["--from-summary", "old.json", *outputs]
    extra = ["--compare", "old.json"] if kind == "--compare summary" else []
    return ["bench", *_pipelines(root), "--allow-external-files", *extra, *outputs]


CASES = [(kind, option, spelling) for kind in TARGETS for option in ("--report", "--json", "--pdf")
         for spelling in ("as given", "dot-dot", "symlink", "hard link")
         if option != "--pdf" or spelling in ("symlink", "hard link")]


@pytest.mark.parametrize("kind, option, spelling", CASES)
def test_an_output_over_an_input_is_refused_before_any_case_runs(project: Path, capsys, kind: str, option: str,
                                                                 spelling: str) -> None:
    target = project / TARGETS[kind].format(module=os.environ["CASES_OUTPUTS_MODULE"])
    suffix = ".pdf" if option == "--pdf" else target.suffix
    path = _spell(project, target, spelling, suffix)
    before = _digest(project)
    code = main(["cases", *_argv(project, kind, option, path)])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.startswith(f"scorekit: error: {option} ") and "is an input of this run" in err
    assert len(err.splitlines()) == 1 and out == ""
    assert not (project / "ran.marker").exists()  # no case ran
    assert _digest(project) == before  # no input changed, nothing written


def test_the_fixture_run_itself_is_allowed_and_runs_every_pipeline(project: Path, capsys) -> None:
    code = main(["cases", "bench", *_pipelines(project), "--allow-external-files", "--compare", "old.json",
                 "--report", "new.html", "--json", "new.json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert (project / "ran.marker").read_text() == "ran"
    summary = BenchmarkSummary.from_json(project / "new.json")
    assert [p.overall_mean_accuracy for p in summary.pipelines] == [1.0, 1.0, 1.0, 1.0]
    assert (project / "new.html").is_file()


@pytest.mark.parametrize("outputs, clash", [
    (["--json", "same.out", "--report", "same.out"], "--json 'same.out' is also the output --report 'same.out'"),
    (["--json", "link.out", "--report", "same.out"], "--json 'link.out' is also the output --report 'same.out'"),
    (["--report", "r.pdf", "--pdf"], "--pdf 'r.pdf' is also the output --report 'r.pdf'"),
])
@pytest.mark.parametrize("mode", ["run", "from summary"])
def test_two_outputs_on_one_path_are_refused(project: Path, capsys, outputs: list[str], clash: str, mode: str) -> None:
    (project / "link.out").symlink_to(project / "same.out")
    before = _digest(project)
    source = ["--from-summary", "old.json"] if mode == "from summary" else ["bench", *_pipelines(project),
                                                                            "--allow-external-files"]
    code = main(["cases", *source, *outputs])
    out, err = capsys.readouterr()
    assert code == 2 and err.strip() == f"scorekit: error: {clash}; each output needs its own path"
    assert not (project / "ran.marker").exists() and _digest(project) == before
    assert not (project / "same.out").exists() and not (project / "r.pdf").exists()
