"""scorekit.cases pipelines and BenchmarkRunner: every adapter (callables, commands in Python and
in sh, saved outputs, pyconveyor YAML), crash/hang/bad-output isolation, determinism across
``jobs``, the spec's §2.7 worked example with the decided values, and configuration errors."""

from __future__ import annotations

import faulthandler
import hashlib
import json
import os
import signal
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from scorekit.cases import BenchmarkRunner, CasesConfigError, DagNode
from scorekit.cases.pipelines import (CallablePipeline, CommandPipeline, PipelineError, PipelineRun,
                                      PyconveyorPipeline, SavedOutputsPipeline, resolve_pipeline)
from cases_worked_example import WORKED
from scorekit.cases.results import BenchmarkSummary

PY = sys.executable


def write_case(root: Path, name: str, inp: dict, expected: dict) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "input.json").write_text(json.dumps(inp), encoding="utf-8")
    (d / "expected.json").write_text(json.dumps(expected), encoding="utf-8")
    return d


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------- §2.7 worked example
def worked_pipeline(case_input: dict) -> dict:
    outputs = WORKED[case_input["case"]][1]
    if outputs is None:
        raise ValueError("classify step raised")
    return outputs


@pytest.fixture
def worked_dir(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    for name, (expected, _) in WORKED.items():
        write_case(root, name, {"case": name}, expected)
    return root


def test_worked_example_with_the_decided_values(worked_dir: Path) -> None:
    before = tree_digest(worked_dir)
    summary = BenchmarkRunner(worked_dir, [worked_pipeline]).run()
    assert summary.case_names == list(WORKED)
    (p,) = summary.pipelines
    by = {c.case_name: c for c in p.cases}
    assert [c.case_name for c in p.cases] == list(WORKED)
    assert by["c1_ok"].status == "success" and by["c1_ok"].overall_score == 1.0
    # decision 35: status "success"/"error", error is the exception, error_message its text
    assert by["c2_err"].status == "error" and isinstance(by["c2_err"].error, ValueError)
    assert by["c2_err"].error_message == "ValueError: classify step raised"
    assert by["c2_err"].step_scores == []
    assert by["c3_missing"].overall_score == 1.0
    assert [s.status for s in by["c3_missing"].step_scores] == ["scored", "missing"]
    # decision 12: a case with no scored steps has overall None (REF: 0.0 and a failure)
    assert by["c4_allign"].overall_score is None
    assert [s.status for s in by["c4_allign"].step_scores] == ["ignored", "ignored"]
    # decision 10: a step-level $ignore is "ignored" even when the pipeline lacks the step (REF: missing)
    assert [s.status for s in by["c5_ignmissing"].step_scores] == ["scored", "ignored"]
    assert by["c6_partial"].overall_score == 0.75
    assert by["c6_partial"].actuals == {"extract": {"t": "T", "u": "wrong"}, "classify": "bio"}
    # decision 13: the error case counts 0 in the mean; c4 (no scored steps) counts nowhere:
    # (1 + 0 + 1 + 1 + 0.75) / 5; REF gave (1+1+0+1+0.75)/5 = 0.75 with c4 as 0 and c2 left out
    assert p.overall_mean_accuracy == 0.75
    assert p.ok_mean_accuracy == 0.9375
    assert p.overall_pass_rate == 3 / 5  # REF: 3/6 (decision 12 drops c4 from the denominator)
    assert p.error_count == 1 and p.unscored_count == 1
    assert p.step_mean_accuracy == {"extract": 0.875, "classify": 1.0, "nosuchstep": 0.0}  # no "ghost" (decision 10)
    assert p.step_pass_rate == {"extract": 0.75, "classify": 1.0, "nosuchstep": 0.0}
    assert p.step_missing_count == {"extract": 0, "classify": 0, "nosuchstep": 1}
    assert tree_digest(worked_dir) == before  # no input file modified


def test_worked_example_threshold_half(worked_dir: Path) -> None:
    (p,) = BenchmarkRunner(worked_dir, [worked_pipeline], pass_threshold=0.5).run().pipelines
    assert p.overall_pass_rate == 4 / 5


def test_runs_pipelines_in_order_and_cases_sorted(tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []

    def make(tag: str):
        def run(inp: dict) -> dict:
            calls.append((tag, inp["n"]))
            return {"s": inp["n"]}
        return run

    for name in ("b", "a10", "B", "a2"):
        write_case(tmp_path / "bench", name, {"n": name}, {"s": name})
    summary = BenchmarkRunner(tmp_path / "bench", [CallablePipeline(make("x"), name="x"),
                                                   CallablePipeline(make("y"), name="y")]).run()
    order = ["B", "a10", "a2", "b"]  # code-point order
    assert calls == [("x", n) for n in order] + [("y", n) for n in order]
    assert [p.name for p in summary.pipelines] == ["x", "y"]


def test_pipeline_input_is_a_copy_without_output_format(tmp_path: Path) -> None:
    seen: list[dict] = []

    def mutating(inp: dict) -> dict:
        seen.append(json.loads(json.dumps(inp)))
        inp["nested"]["k"] = "changed"
        return {"s": 1}

    write_case(tmp_path / "bench", "c", {"nested": {"k": "v"}}, {"s": 1})
    BenchmarkRunner(tmp_path / "bench", [mutating, mutating]).run()
    # decision 36: no _output_format key; the second pipeline sees the original input
    assert seen == [{"nested": {"k": "v"}}, {"nested": {"k": "v"}}]


def test_pipeline_run_with_step_statuses(tmp_path: Path) -> None:
    def with_status(inp: dict) -> PipelineRun:
        return PipelineRun({"a": None, "b": 1}, {"a": "skipped"}, [{"step": "b", "attempt": 1, "status": "success"}])

    write_case(tmp_path / "bench", "c", {}, {"a": None, "b": 1})
    (case,) = BenchmarkRunner(tmp_path / "bench", [with_status]).run().pipelines[0].cases
    # decision 39: a skipped step is scored as None and keeps the runner's status
    assert [(s.step_name, s.score, s.runner_status) for s in case.step_scores] == [("a", 1.0, "skipped"),
                                                                                  ("b", 1.0, None)]
    assert case.attempt_logs == [{"step": "b", "attempt": 1, "status": "success"}]


def test_callable_bad_return_is_case_error(tmp_path: Path) -> None:
    write_case(tmp_path / "bench", "c", {}, {"s": 1})
    (case,) = BenchmarkRunner(tmp_path / "bench", [lambda inp: ["not", "a", "dict"]]).run().pipelines[0].cases
    assert case.status == "error" and "gave list, not an object" in case.error_message


def test_comparator_error_is_that_case_error(tmp_path: Path) -> None:
    def picky(actual, expected):
        if actual == "boom":
            raise ZeroDivisionError("no")
        return 1.0

    write_case(tmp_path / "bench", "a", {"v": "ok"}, {"s": {"v": "x"}})
    write_case(tmp_path / "bench", "b", {"v": "boom"}, {"s": {"v": "x"}})
    cases = BenchmarkRunner(tmp_path / "bench", [lambda inp: {"s": {"v": inp["v"]}}],
                            comparators={"s.v": picky}).run().pipelines[0].cases
    assert cases[0].status == "success" and cases[0].overall_score == 1.0
    assert cases[1].status == "error" and "s.v" in cases[1].error_message


# --------------------------------------------------------------------------- python modules
@pytest.fixture
def helper_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = "cases_runner_helpers_" + hashlib.sha1(str(tmp_path).encode()).hexdigest()[:8]
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        def extract(case_input):
            return {"extract": {"t": case_input["text"].upper()}}

        class Holder:
            @staticmethod
            def run(case_input):
                return {"extract": {"t": "T"}}

        NOT_CALLABLE = 3
    """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_python_reference_resolves(tmp_path: Path, helper_module: str) -> None:
    write_case(tmp_path / "bench", "c", {"text": "t"}, {"extract": {"t": "T"}})
    for spec in (f"{helper_module}:extract", f"py:{helper_module}:extract", f"{helper_module}:Holder.run"):
        summary = BenchmarkRunner(tmp_path / "bench", [spec]).run()
        assert summary.pipelines[0].cases[0].overall_score == 1.0
        assert summary.pipelines[0].pipeline_path == spec.removeprefix("py:")


def test_python_reference_problems(helper_module: str) -> None:
    with pytest.raises(CasesConfigError) as info:
        resolve_pipeline("no_such_module_xyz:fn")
    assert "cannot import module 'no_such_module_xyz'" in info.value.problems[0]
    with pytest.raises(CasesConfigError, match="has no attribute 'nope'"):
        resolve_pipeline(f"{helper_module}:nope")
    with pytest.raises(CasesConfigError, match="is not callable"):
        resolve_pipeline(f"{helper_module}:NOT_CALLABLE")


# ----------------------------------------------------------------------------------- commands
def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_command_pipeline_python_script(tmp_path: Path) -> None:
    s = script(tmp_path, "upper.py", """
        import json, sys
        data = json.load(sys.stdin)
        print("working on", data["text"], file=sys.stderr)
        json.dump({"extract": {"t": data["text"].upper()}}, sys.stdout)
    """)
    write_case(tmp_path / "bench", "c1", {"text": "t"}, {"extract": {"t": "T"}})
    write_case(tmp_path / "bench", "c2", {"text": "ü"}, {"extract": {"t": "Ü"}})
    summary = BenchmarkRunner(tmp_path / "bench", [f"cmd:{PY} {s}"]).run()
    p = summary.pipelines[0]
    assert p.name == "upper.py" and p.pipeline_path == f"{PY} {s}"
    assert [c.overall_score for c in p.cases] == [1.0, 1.0]
    (log,) = p.cases[1].attempt_logs
    assert log["status"] == "success" and log["exit_code"] == 0 and log["stderr"] == "working on ü\n"


def test_command_pipeline_in_sh(tmp_path: Path) -> None:
    write_case(tmp_path / "bench", "c", {"text": "t"}, {"extract": {"t": "T"}, "n": 2})
    sh_file = script(tmp_path, "fixed.sh", """\
        #!/bin/sh
        cat >/dev/null
        printf '{"extract": {"t": "T"}, "n": 2}'
    """)
    specs = ["sh:cat >/dev/null; printf '{\"extract\": {\"t\": \"T\"}, \"n\": 1}'", str(sh_file)]
    summary = BenchmarkRunner(tmp_path / "bench", specs).run()
    assert [p.cases[0].overall_score for p in summary.pipelines] == [0.5, 1.0]
    assert summary.pipelines[1].name == "fixed.sh"


def test_command_needs_no_shell(tmp_path: Path) -> None:
    """cmd: splits like a shell but runs none: `;` and `$HOME` reach the program as text."""
    s = script(tmp_path, "argv.py", """
        import json, sys
        sys.stdin.read()
        json.dump({"argv": sys.argv[1:]}, sys.stdout)
    """)
    write_case(tmp_path / "bench", "c", {}, {"argv": ["a b", ";", "$HOME"]})
    (case,) = BenchmarkRunner(tmp_path / "bench", [f"cmd:{PY} {s} 'a b' ';' '$HOME'"]).run().pipelines[0].cases
    assert case.overall_score == 1.0


BAD_COMMANDS = {
    "exit3": ("import sys; print('bad thing', file=sys.stderr); sys.exit(3)",
              "command exited with status 3; stderr: bad thing"),
    "notjson": ("print('hello')", "command output is not JSON (Expecting value at line 1 column 1)"),
    "empty": ("pass", "command output is empty"),
    "array": ("print('[1, 2]')", "command output is a JSON array, not an object of step outputs"),
    "latin1": ("import sys; sys.stdout.buffer.write(b'{\"s\": \"\\xff\"}')", "command output is not UTF-8"),
    "segv": ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "command killed by signal SIGSEGV"),
}


def test_command_failures_mark_only_their_case(tmp_path: Path) -> None:
    s = script(tmp_path, "dispatch.py", f"""
        import json, sys
        data = json.load(sys.stdin)
        code = {json.dumps({k: v[0] for k, v in BAD_COMMANDS.items()})}.get(data["case"])
        if code is None:
            json.dump({{"s": 1}}, sys.stdout)
        else:
            exec(code)
    """)
    for name in [*BAD_COMMANDS, "ok"]:
        write_case(tmp_path / "bench", name, {"case": name}, {"s": 1})
    cases = {c.case_name: c for c in BenchmarkRunner(tmp_path / "bench", [f"cmd:{PY} {s}"]).run().pipelines[0].cases}
    assert cases["ok"].status == "success" and cases["ok"].overall_score == 1.0
    for name, (_, message) in BAD_COMMANDS.items():
        assert cases[name].status == "error", name
        assert cases[name].error_message.startswith(message), (name, cases[name].error_message)
    assert cases["exit3"].attempt_logs[0]["stderr"] == "bad thing\n"
    assert cases["exit3"].attempt_logs[0]["status"] == "error"


def test_command_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    s = script(tmp_path, "hang.py", f"""
        import json, subprocess, sys
        data = json.load(sys.stdin)
        if data["case"] == "hang":
            child = subprocess.Popen(["sleep", "60"])
            open({str(pid_file)!r}, "w").write(str(child.pid))
            child.wait()
        json.dump({{"s": 1}}, sys.stdout)
    """)
    write_case(tmp_path / "bench", "hang", {"case": "hang"}, {"s": 1})
    write_case(tmp_path / "bench", "ok", {"case": "ok"}, {"s": 1})
    start = time.monotonic()
    cases = BenchmarkRunner(tmp_path / "bench", [f"cmd:{PY} {s}"], timeout=1.0).run().pipelines[0].cases
    assert time.monotonic() - start < 15
    assert cases[0].status == "error"
    assert cases[0].error_message == "command timed out after 1 s (its process group was killed)"
    assert cases[0].attempt_logs[0]["status"] == "timeout"
    assert cases[1].overall_score == 1.0
    grandchild = int(pid_file.read_text())
    for _ in range(50):  # the grandchild `sleep` is gone (killed with its group, reaped by init)
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the command's child process survived the timeout")


def test_command_stderr_is_truncated(tmp_path: Path) -> None:
    s = script(tmp_path, "noisy.py", """
        import json, sys
        sys.stdin.read()
        sys.stderr.write("A" * 100000 + "END")
        json.dump({"s": 1}, sys.stdout)
    """)
    write_case(tmp_path / "bench", "c", {}, {"s": 1})
    (case,) = BenchmarkRunner(tmp_path / "bench", [f"cmd:{PY} {s}"]).run().pipelines[0].cases
    stderr = case.attempt_logs[0]["stderr"]
    assert len(stderr) < 17_000 and stderr.startswith("AAAA") and stderr.endswith("END")
    assert "characters cut" in stderr


def test_command_that_cannot_start(tmp_path: Path) -> None:
    write_case(tmp_path / "bench", "c", {}, {"s": 1})
    (case,) = BenchmarkRunner(tmp_path / "bench", ["cmd:/no/such/program --x"]).run().pipelines[0].cases
    assert case.status == "error" and case.error_message.startswith("cannot start command '/no/such/program'")


# ------------------------------------------------------------------------------- saved outputs
def test_saved_outputs(tmp_path: Path) -> None:
    before_saved = None
    for name in ("c1", "c2", "c3", "c4"):
        write_case(tmp_path / "bench", name, {}, {"s": {"v": 1}})
    saved = tmp_path / "predictions"
    saved.mkdir()
    (saved / "c1.json").write_text('{"s": {"v": 1}}', encoding="utf-8")
    (saved / "c2.json").write_text('{"s": {"v": 1}', encoding="utf-8")
    (saved / "c4.json").write_text('{"s": 1, "s": 2}', encoding="utf-8")
    before_saved = tree_digest(saved)
    summary = BenchmarkRunner(tmp_path / "bench", [str(saved)]).run()
    p = summary.pipelines[0]
    assert p.name == "predictions"
    c1, c2, c3, c4 = p.cases
    assert c1.overall_score == 1.0
    assert c2.status == "error" and c2.error_message.startswith("saved output c2.json is not valid JSON")
    assert c3.status == "error" and c3.error_message == f"no saved output: {saved}/c3.json not found"
    assert c4.status == "error" and c4.error_message == "saved output c4.json: duplicate key 's'"
    assert tree_digest(saved) == before_saved


def test_saved_outputs_stay_in_their_folder(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    (tmp_path / "outside.json").write_text('{"s": 1}', encoding="utf-8")
    (saved / "linked.json").symlink_to(tmp_path / "outside.json")
    pipeline = SavedOutputsPipeline(saved)
    for name in ("../outside", "a/b", "..", "x\0y", "a\\b"):
        with pytest.raises(PipelineError, match="not a plain file name"):
            pipeline.file_for(name)
    with pytest.raises(PipelineError, match="resolves outside"):
        pipeline.file_for("linked")
    with pytest.raises(CasesConfigError, match="saved outputs folder not found"):
        resolve_pipeline(f"saved:{tmp_path / 'nope'}")


# ---------------------------------------------------------------------------------- pyconveyor
PYCONVEYOR_YAML = """
steps:
  - name: extract
    type: transform
    fn: "{mod}:extract"
    inputs:
      text: "{{{{ ctx.text }}}}"
  - name: both
    type: parallel
    steps:
      - name: classify
        type: transform
        fn: "{mod}:classify"
        inputs:
          text: "{{{{ ctx.text }}}}"
      - name: length
        type: transform
        fn: "{mod}:length"
        inputs:
          text: "{{{{ ctx.text }}}}"
  - name: maybe
    type: transform
    fn: "{mod}:length"
    condition: "ctx.flag"
    inputs:
      text: "{{{{ ctx.text }}}}"
  - name: fragile
    type: transform
    fn: "{mod}:fragile"
    on_error: continue
    inputs:
      text: "{{{{ ctx.text }}}}"
"""


@pytest.fixture
def pyconveyor_pipeline(tmp_path: Path) -> Path:
    mod = "cases_pc_steps_" + hashlib.sha1(str(tmp_path).encode()).hexdigest()[:8]
    folder = tmp_path / "pc"
    folder.mkdir()
    (folder / f"{mod}.py").write_text(textwrap.dedent("""
        def extract(text):
            if text == "abort":
                raise RuntimeError("cannot extract")
            return {"title": text.title()}

        def classify(text):
            return "bio" if "cell" in text else "other"

        def length(text):
            return len(text)

        def fragile(text):
            raise ValueError("always fails")
    """), encoding="utf-8")
    path = folder / "pipe.yaml"
    path.write_text(PYCONVEYOR_YAML.format(mod=mod), encoding="utf-8")
    yield path
    sys.modules.pop(mod, None)
    while str(folder) in sys.path:  # pyconveyor puts the pipeline folder on sys.path
        sys.path.remove(str(folder))


def test_pyconveyor_pipeline(tmp_path: Path, pyconveyor_pipeline: Path) -> None:
    bench = tmp_path / "bench"
    write_case(bench, "a_cells", {"text": "t cells", "flag": True},
               {"extract": {"title": "T Cells"}, "classify": "bio", "length": 7, "maybe": 7, "fragile": None})
    write_case(bench, "b_skip", {"text": "x", "flag": False}, {"maybe": None, "both": {"classify": "other", "length": 1}})
    write_case(bench, "c_abort", {"text": "abort", "flag": True}, {"extract": {"title": "Abort"}})
    summary = BenchmarkRunner(bench, [str(pyconveyor_pipeline)]).run()
    p = summary.pipelines[0]
    assert p.name == "pipe.yaml" and p.pipeline_path == str(pyconveyor_pipeline)
    a, b, c = p.cases
    assert a.overall_score == 1.0
    # decision 39: the failed-but-continued step is None with the runner's status
    assert a.step_score("fragile").runner_status == "failed"
    assert b.overall_score == 1.0 and b.step_score("maybe").runner_status == "skipped"
    assert c.status == "error"
    assert c.error_message == "step 'extract' failed: RuntimeError: cannot extract"
    assert [(n.name, n.kind, n.details, [ch.name for ch in n.children]) for n in p.dag] == [
        ("extract", "transform", {"fn": "extract"}, []),
        ("both", "parallel", {}, ["classify", "length"]),
        ("maybe", "transform", {"fn": "length", "if": "ctx.flag"}, []),
        ("fragile", "transform", {"fn": "fragile"}, []),
    ]


def test_pyconveyor_agrees_with_the_reference_where_no_decision_applies(tmp_path: Path,
                                                                         pyconveyor_pipeline: Path) -> None:
    """pyconveyor's own BenchmarkRunner as an oracle: same cases, same step scores (no decision
    applies to these plain fields and scalars)."""
    import pyconveyor

    bench = tmp_path / "bench"
    write_case(bench, "a", {"text": "t cells", "flag": True}, {"extract": {"title": "T Cells"}, "classify": "bio"})
    write_case(bench, "b", {"text": "dna", "flag": False}, {"extract": {"title": "Rna"}, "length": 3, "maybe": None})
    ours = BenchmarkRunner(bench, [str(pyconveyor_pipeline)]).run().pipelines[0]
    ref = pyconveyor.BenchmarkRunner(bench, [str(pyconveyor_pipeline)]).run().pipelines[0]
    for mine, theirs in zip(ours.cases, ref.cases):
        assert mine.overall_score == theirs.overall_score
        assert {s.step_name: s.score for s in mine.step_scores} == {k: s.score for k, s in theirs.step_scores.items()}
    assert ours.step_mean_accuracy == ref.step_mean_accuracy


def test_pyconveyor_load_error_is_a_config_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps:\n  - name: x\n    type: transform\n    fn: 'no_such_mod_q:f'\n", encoding="utf-8")
    with pytest.raises(CasesConfigError) as info:
        resolve_pipeline(str(bad))
    assert info.value.problems[0].startswith(f"pipeline {str(bad)!r} does not load: CallableImportError")
    with pytest.raises(CasesConfigError, match="pipeline file not found"):
        resolve_pipeline(f"pyconveyor:{tmp_path / 'missing.yaml'}")


# ------------------------------------------------------------------------- workers and crashes
def crashing_pipeline(case_input: dict) -> dict:
    kind = case_input["kind"]
    if kind == "exit":
        os._exit(7)
    if kind == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if kind == "hang":
        time.sleep(120)
    if kind == "raise":
        raise KeyError("k")
    if kind == "sysexit":
        sys.exit(4)
    return {"s": {"v": case_input["v"]}}


CRASH_CASES = {"a_ok": "ok", "b_exit": "exit", "c_ok": "ok", "d_segv": "segv", "e_hang": "hang", "f_raise": "raise",
               "g_sysexit": "sysexit", "h_ok": "ok"}


@pytest.fixture
def quiet_segfaults():
    """pytest's faulthandler, inherited by forked workers, would print the segfault's traceback."""
    enabled = faulthandler.is_enabled()
    faulthandler.disable()
    yield
    if enabled:
        faulthandler.enable()


def test_crashes_and_hangs_mark_only_their_case(tmp_path: Path, quiet_segfaults: None) -> None:
    for name, kind in CRASH_CASES.items():
        write_case(tmp_path / "bench", name, {"kind": kind, "v": name}, {"s": {"v": name}})
    seen: list[tuple[int, int]] = []
    start = time.monotonic()
    summary = BenchmarkRunner(tmp_path / "bench", [crashing_pipeline], jobs=2, timeout=1.5,
                              progress=lambda done, total: seen.append((done, total))).run()
    assert time.monotonic() - start < 30
    cases = {c.case_name: c for c in summary.pipelines[0].cases}
    assert [c for c in cases if cases[c].status == "success"] == ["a_ok", "c_ok", "h_ok"]
    assert all(cases[n].overall_score == 1.0 for n in ("a_ok", "c_ok", "h_ok"))
    assert cases["b_exit"].error_message == "pipeline process exited unexpectedly (status 7)"
    assert cases["d_segv"].error_message == "pipeline process died (signal SIGSEGV)"
    assert cases["e_hang"].error_message == ("pipeline run timed out after 1.5 s "
                                             "(its worker process was killed)")
    assert cases["f_raise"].error_message == "KeyError: 'k'"
    assert cases["g_sysexit"].error_message == "SystemExit: 4"
    assert seen == [(k, 8) for k in range(1, 9)]


def test_jobs_do_not_change_the_summary(worked_dir: Path, tmp_path: Path) -> None:
    def strip_timings(value):
        if isinstance(value, dict):
            return {k: strip_timings(v) for k, v in value.items() if k not in ("elapsed_seconds", "elapsed", "created")}
        if isinstance(value, list):
            return [strip_timings(v) for v in value]
        return value

    def slow_worked(case_input: dict) -> dict:  # later cases finish first with 2 workers
        time.sleep({"c1_ok": 0.4, "c2_err": 0.2}.get(case_input["case"], 0.0))
        return worked_pipeline(case_input)

    texts = []
    for jobs in (1, 2, 3):
        summary = BenchmarkRunner(worked_dir, [slow_worked, worked_pipeline], jobs=jobs).run()
        texts.append(json.dumps(strip_timings(json.loads(summary.to_json())), indent=1))
    assert texts[0] == texts[1] == texts[2]
    assert '"status": "error"' in texts[0]


def test_in_process_sysexit_is_only_that_case(tmp_path: Path) -> None:
    write_case(tmp_path / "bench", "a", {"kind": "sysexit", "v": 1}, {"s": {"v": 1}})
    write_case(tmp_path / "bench", "b", {"kind": "ok", "v": 1}, {"s": {"v": 1}})
    a, b = BenchmarkRunner(tmp_path / "bench", [crashing_pipeline]).run().pipelines[0].cases
    assert a.status == "error" and b.status == "success"


def test_summary_round_trips_and_keeps_the_dag(tmp_path: Path, pyconveyor_pipeline: Path) -> None:
    write_case(tmp_path / "bench", "a", {"text": "x", "flag": True}, {"extract": {"title": "X"}})
    summary = BenchmarkRunner(tmp_path / "bench", [str(pyconveyor_pipeline)]).run()
    again = BenchmarkSummary.from_json(Path(tmp_path / "s.json")) if summary.to_json(tmp_path / "s.json") else None
    assert again is not None and again.to_json() == summary.to_json()
    assert isinstance(again.pipelines[0].dag[1], DagNode) and again.pipelines[0].dag[1].kind == "parallel"


# -------------------------------------------------------------------------------- configuration
def test_every_config_problem_is_collected(tmp_path: Path) -> None:
    with pytest.raises(CasesConfigError) as info:
        BenchmarkRunner(tmp_path / "missing", ["nonsense-pipeline", f"saved:{tmp_path / 'nope'}"],
                        comparators={"s.v": "not callable"}, pass_threshold=1.5, matching="best", jobs=0, timeout=-1)
    problems = info.value.problems
    assert "pass_threshold must be between 0 and 1, got 1.5" in problems  # decision 23
    assert "matching must be 'greedy' or 'optimal', got 'best'" in problems
    assert "jobs must be a whole number of at least 1, got 0" in problems
    assert "timeout must be a positive number of seconds, got -1" in problems
    assert any("'s.v'" in p for p in problems)
    assert any(p.startswith("pipeline 'nonsense-pipeline': cannot tell what kind of pipeline") for p in problems)
    assert any(p.startswith("saved outputs folder not found") for p in problems)
    assert any("missing" in p for p in problems)  # the benchmark folder
    assert len(problems) == 8
    assert isinstance(info.value, ValueError)


def test_threshold_must_be_a_number(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    for bad in (True, "1", float("nan")):
        with pytest.raises(CasesConfigError, match="pass_threshold"):
            BenchmarkRunner(tmp_path / "b", [worked_pipeline], pass_threshold=bad)
    for good in (0, 0.0, 1):
        assert BenchmarkRunner(tmp_path / "b", [worked_pipeline], pass_threshold=good).pass_threshold == good


def test_schemas_without_a_pyconveyor_pipeline(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    with pytest.raises(CasesConfigError, match="schemas are given but no pyconveyor pipeline"):
        BenchmarkRunner(tmp_path / "b", [worked_pipeline], schemas={"x": dict})


def test_no_pipeline(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    with pytest.raises(CasesConfigError, match="no pipeline given"):
        BenchmarkRunner(tmp_path / "b", [])


def test_resolver_detection(tmp_path: Path, helper_module: str) -> None:
    folder = tmp_path / "outputs"
    folder.mkdir()
    exe = script(tmp_path, "run.sh", "#!/bin/sh\necho '{}'\n")
    assert isinstance(resolve_pipeline(str(folder)), SavedOutputsPipeline)
    assert isinstance(resolve_pipeline(folder), SavedOutputsPipeline)
    assert isinstance(resolve_pipeline(str(exe)), CommandPipeline)
    assert isinstance(resolve_pipeline(f"{helper_module}:extract"), CallablePipeline)
    assert isinstance(resolve_pipeline(crashing_pipeline), CallablePipeline)
    command = resolve_pipeline(f"cmd:{PY} -c 'print(1)'", timeout=3)
    assert command.argv == [PY, "-c", "print(1)"] and command.timeout == 3
    assert resolve_pipeline("sh:echo '{}' | cat").argv == ["/bin/sh", "-c", "echo '{}' | cat"]
    given = CommandPipeline(["true"])
    assert resolve_pipeline(given) is given
    with pytest.raises(CasesConfigError, match="nothing after the prefix"):
        resolve_pipeline("cmd:")
    with pytest.raises(CasesConfigError, match="No closing quotation"):
        resolve_pipeline("cmd:echo 'x")
    with pytest.raises(CasesConfigError, match="a YAML pipeline|pipeline file not found"):
        resolve_pipeline(str(tmp_path / "nope.yml"))


def test_pyconveyor_adapter_without_pyconveyor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyconveyor", None)
    (tmp_path / "p.yaml").write_text("steps: []\n", encoding="utf-8")
    with pytest.raises(CasesConfigError, match=r"needs pyconveyor \(pip install pyconveyor\)"):
        PyconveyorPipeline(tmp_path / "p.yaml")


def test_interrupted_run_kills_the_commands_it_started(tmp_path: Path) -> None:
    """Ctrl-C (here: KeyboardInterrupt from the progress callback) ends the run; a worker busy with
    a command is stopped with SIGTERM, and the command's process group dies with it."""
    pid_file = tmp_path / "sleep.pid"
    s = script(tmp_path, "slow.py", f"""
        import json, os, subprocess, sys, time
        data = json.load(sys.stdin)
        if data["case"] == "slow":
            child = subprocess.Popen(["sleep", "60"])
            open({str(pid_file)!r}, "w").write(str(child.pid))
            child.wait()
        for _ in range(200):
            if os.path.exists({str(pid_file)!r}):
                break
            time.sleep(0.05)
        json.dump({{"s": 1}}, sys.stdout)
    """)
    write_case(tmp_path / "bench", "a_fast", {"case": "fast"}, {"s": 1})
    write_case(tmp_path / "bench", "b_slow", {"case": "slow"}, {"s": 1})

    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    runner = BenchmarkRunner(tmp_path / "bench", [f"cmd:{PY} {s}"], jobs=2, progress=interrupt)
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    sleeper = int(pid_file.read_text())
    for _ in range(50):
        try:
            os.kill(sleeper, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the command's child outlived the interrupted run")


def test_matching_reaches_the_scorer(tmp_path: Path) -> None:
    """Vector 55: greedy pairing (the documented order, decision 15) gives 0.25, optimal 0.75."""
    expected = {"au": [{"x": 1, "y": 0}, {"x": 1, "y": 1}]}
    write_case(tmp_path / "bench", "c", {}, {"s": expected})
    actual = {"au": [{"x": 1, "y": 1}, {"x": 2, "y": 0}]}
    scores = {m: BenchmarkRunner(tmp_path / "bench", [lambda inp: {"s": actual}], matching=m).run()
              .pipelines[0].cases[0].overall_score for m in ("greedy", "optimal")}
    assert scores == {"greedy": 0.25, "optimal": 0.75}
    summary = BenchmarkRunner(tmp_path / "bench", [lambda inp: {"s": actual}], matching="optimal", jobs=2).run()
    assert summary.matching == "optimal" and summary.pipelines[0].cases[0].overall_score == 0.75


def test_pyconveyor_schemas_are_checked(tmp_path: Path, pyconveyor_pipeline: Path) -> None:
    (tmp_path / "bench").mkdir()
    with pytest.raises(CasesConfigError, match="schemas kwarg references unknown step 'nosuch'"):
        BenchmarkRunner(tmp_path / "bench", [str(pyconveyor_pipeline)], schemas={"nosuch": dict})


def test_the_seed_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The seed's "Or from Python" example, as written there, over two transform-only pyconveyor
    pipelines (v1 right up to the comparators' tolerance, v2 wrong on the amount)."""
    mod = "cases_seed_steps_" + hashlib.sha1(str(tmp_path).encode()).hexdigest()[:8]
    (tmp_path / f"{mod}.py").write_text(textwrap.dedent("""
        def v1(text):
            vendor, amount = text.split(";")
            return {"vendor": vendor.lower(), "amount": float(amount) * 1.005}

        def v2(text):
            vendor, amount = text.split(";")
            return {"vendor": vendor, "amount": float(amount) * 2}
    """), encoding="utf-8")
    for version in ("v1", "v2"):
        (tmp_path / f"pipeline_{version}.yaml").write_text(
            f"steps:\n  - name: extract\n    type: transform\n    fn: \"{mod}:{version}\"\n"
            "    inputs:\n      text: \"{{ ctx.invoice }}\"\n", encoding="utf-8")
    for name, vendor, amount in (("case_001", "ACME", 100.0), ("case_002", "Globex", 0.0)):
        write_case(tmp_path / "benchmarks", name, {"invoice": f"{vendor};{amount}"},
                   {"extract": {"vendor": vendor, "amount": amount}})
    monkeypatch.chdir(tmp_path)
    try:
        from scorekit.cases import BenchmarkRunner, generate_report

        def fuzzy_amount(actual, expected):
            """Accept if within 1% of expected."""
            if expected == 0:
                return 1.0 if actual == 0 else 0.0
            return 1.0 if abs(actual - expected) / abs(expected) <= 0.01 else 0.0

        runner = BenchmarkRunner(
            benchmark_dir="benchmarks/",
            pipelines=["pipeline_v1.yaml", "pipeline_v2.yaml"],
            comparators={"extract.amount": fuzzy_amount},
            pass_threshold=0.75,
        )

        summary = runner.run()

        for pipeline_result in summary.pipelines:
            print(f"\n{pipeline_result.pipeline_path}")
            for step, score in pipeline_result.step_mean_accuracy.items():
                print(f"  {step}: {score:.1%}")
            print(f"  Overall: {pipeline_result.overall_mean_accuracy:.1%}")

        generate_report(
            summary,
            "comparison.html",
            title="Paper extraction: v1 vs v2",
            sections=["overall_summary", "per_step_accuracy", "pipeline_comparison", "plots"],
        )
    finally:
        sys.modules.pop(mod, None)
        while str(tmp_path) in sys.path:
            sys.path.remove(str(tmp_path))
    assert capsys.readouterr().out == ("\npipeline_v1.yaml\n  extract: 50.0%\n  Overall: 50.0%\n"
                                       "\npipeline_v2.yaml\n  extract: 75.0%\n  Overall: 75.0%\n")
    assert "Paper extraction: v1 vs v2" in (tmp_path / "comparison.html").read_text(encoding="utf-8")
