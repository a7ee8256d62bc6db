"""Fuzzing the command line in-process: hostile arguments and file contents give either a result
(strict JSON where JSON is printed) or exit status 2 with exactly one ``scorekit: error: …`` line,
never a traceback; an output path that spells an input in any way is refused before any work."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import tempfile

from hypothesis import example, given, settings
from hypothesis import strategies as st

from scorekit.cli import main
from scorekit.demo_report import demo_inputs

from fuzz_harness import NORMALIZER_NAMES, SPECIAL_CHARS, any_text, joined


def reject(name):
    raise AssertionError(f"{name} in JSON output")


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def last_line(err: str) -> str:
    return err.rstrip("\n").split("\n")[-1]


def check(code, out, err, usage=False):
    """Exit 0 with nothing on stderr, or 2 with one error line (after argparse's usage line when
    ``usage``)."""
    assert code in (0, 2), (code, err)
    if code == 0:
        assert err == ""
        return
    assert out == "" and err.endswith("\n") and last_line(err).startswith("scorekit: error: "), err
    if not usage:
        assert err.count("\n") == 1, err


normalize_args = st.lists(st.sampled_from(NORMALIZER_NAMES + ("nope", "lower,strip", ",", "")), max_size=2).map(
    lambda names: [a for n in names for a in ("--normalize", n)])


@given(st.sampled_from(["cer", "wer"]), any_text, any_text, normalize_args)
def test_string_commands(mode, pred, gold, normalize):
    code, out, err = run([mode, *normalize, "--", pred, gold])
    check(code, out, err)
    if code == 0:
        value = float(out)
        assert math.isfinite(value) and value >= 0


@given(st.lists(any_text, max_size=5), st.booleans())
def test_rover_command(hypotheses, no_confidence):
    code, out, err = run(["rover", "--json", *(["--no-confidence"] if no_confidence else []), "--", *hypotheses])
    check(code, out, err, usage=not hypotheses)  # argparse wants at least one hypothesis
    if code == 0:
        report = json.loads(out, parse_constant=reject)
        assert report["n_engines"] == len(hypotheses)


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False),
                         any_text)
records = st.one_of(
    st.fixed_dictionaries({"text": st.one_of(any_text, st.none())}, optional={"slice": json_scalars}),
    st.dictionaries(st.sampled_from(["text", "slice", "x"]), json_scalars, max_size=3),
    json_scalars,
)
#: A JSONL line: a serialised record, or raw hostile text (broken JSON, NaN, deep nesting, BOM …).
jsonl_lines = st.one_of(
    records.map(lambda r: json.dumps(r, ensure_ascii=False)),
    records.map(json.dumps),
    joined(st.sampled_from(SPECIAL_CHARS + ("{", "}", "[", '"', ":", "NaN", "1e999", '{"text": ')), max_size=12),
    st.integers(1, 3000).map(lambda n: '{"text": ' + "[" * n),
)
text_lines = any_text


def encode(lines, bom, newline, invalid):
    data = newline.join(lines).encode("utf-8", "surrogatepass")
    if invalid:
        data += b"\xff\xfe"
    return (b"\xef\xbb\xbf" if bom else b"") + data


files = st.tuples(st.booleans(), st.sampled_from(["\n", "\r\n"]), st.booleans())


@given(st.sampled_from([".txt", ".jsonl"]), st.data(), files, files,
       st.sampled_from(["cer", "wer"]), normalize_args, st.booleans())
def test_eval_text(suffix, data, pred_file, gold_file, metric, normalize, as_json):
    line_strategy = jsonl_lines if suffix == ".jsonl" else text_lines
    pred_lines = data.draw(st.lists(line_strategy, max_size=5))
    gold_lines = data.draw(st.one_of(st.just(pred_lines), st.lists(line_strategy, max_size=5)))
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, lines, (bom, newline, invalid) in (("pred", pred_lines, pred_file), ("gold", gold_lines, gold_file)):
            path = os.path.join(tmp, name + suffix)
            with open(path, "wb") as f:
                f.write(encode(lines, bom, newline, invalid))
            paths.append(path)
        before = [open(p, "rb").read() for p in paths]
        code, out, err = run(["eval-text", *paths, "--metric", metric, *normalize] + (["--json"] if as_json else []))
        assert [open(p, "rb").read() for p in paths] == before  # inputs never modified
    check(code, out, err)
    if code == 0 and as_json:
        report = json.loads(out, parse_constant=reject)
        assert report["metric"] == metric
        assert report["aggregate"] is None or report["aggregate"] >= 0
        assert sum(s["n"] for s in report["per_slice"]) <= report["n"]


@given(st.lists(st.one_of(any_text, st.sampled_from(["--json", "--repeat", "-1", "0", "99999999999999999999", "-",
                                                        "--threads", "--metric", "--format", "jsonl"])),
                max_size=5),
       st.sampled_from(["cer", "wer", "eval-text", "rover", "flows", "demo", "version", "nope", ""]))
def test_any_arguments(args, command):
    if command == "demo":  # every --repeat value drawn is out of range: only the demo's errors run
        args = ["--repeat", "0", *args]
    check(*run([command, *args] if command else args), usage=True)


#: Ways of spelling an output path that lands on ``path``: itself, relative to the working
#: folder, through ``..``, a symbolic link, a symbolic link to its folder, a hard link.
SPELLINGS = ("same", "relative", "dotdot", "symlink", "symlinked_folder", "hardlink")


def spell(path, how, tmp):
    if how == "same":
        return str(path)
    if how == "relative":
        return os.path.relpath(path)
    if how == "dotdot":
        return os.path.join(path.parent, "..", path.parent.name, path.name)
    if how == "symlinked_folder":
        alias = os.path.join(tmp, "alias")
        os.symlink(path.parent, alias)
        return os.path.join(alias, path.name)
    target = os.path.join(tmp, "out.html")
    (os.symlink if how == "symlink" else os.link)(path, target)
    return target


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(demo_inputs()[1:]), st.sampled_from(SPELLINGS), st.sampled_from(["1", "2"]))
def test_demo_html_never_replaces_an_input(path, how, repeat):
    """Outputs against inputs: ``demo --html`` naming any file the demo reads, however spelled,
    exits 2 with one line before anything is scored, and the file is unchanged."""
    before = path.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        code, out, err = run(["demo", "--repeat", repeat, "--html", spell(path, how, tmp)])
    check(code, out, err)
    assert code == 2 and out == "" and "never overwrite inputs" in err
    assert path.read_bytes() == before


slice_values = st.one_of(st.none(), st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.0, 1.5]),
                         st.floats(allow_nan=True, allow_infinity=True))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "ab", ""]), st.sampled_from(["a", "b", "ba", ""]), slice_values),
                min_size=1, max_size=12),
       st.integers(1, 4), st.booleans())
def test_eval_table_float_slices(rows, row_group_size, as_json):
    """A float slice column with NaN, ±inf, ±0 and nulls, in row groups of any size: strict JSON,
    every row counted once (in one slice or in none), all NaN rows in one slice."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.parquet")
        table = pa.table({"p": [r[0] for r in rows], "g": [r[1] for r in rows], "s": pa.array([r[2] for r in rows],
                                                                                           pa.float64())})
        pq.write_table(table, path, row_group_size=row_group_size)
        code, out, err = run(["eval-table", path, "--pred", "p", "--gold", "g", "--slice", "s", "--progress", "never"]
                             + (["--json"] if as_json else []))
    check(code, out, err)
    assert code == 0
    labels = [r[2] for r in rows if r[2] is not None]
    distinct = len({("nan" if v != v else v) for v in labels})
    if not as_json:
        assert out.count("  NaN  ") <= 1
        return
    report = json.loads(out, parse_constant=reject)
    assert report["n"] == len(rows) and report["unsliced"] == len(rows) - len(labels)
    assert sum(s["n"] for s in report["per_slice"]) == len(labels) and len(report["per_slice"]) == distinct


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**20) | st.floats(allow_nan=False, allow_infinity=False) | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3), max_leaves=8)
record_values = st.fixed_dictionaries({}, optional={
    "task_id": st.sampled_from(["a", "b", "", "z"]) | json_values,
    "messages": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["assistant", "tool", "user"]) | json_values},
                                               optional={"content": json_values, "tool_calls": json_values}),
                         max_size=3) | json_values,
    "trajectory": st.lists(json_values, max_size=3),
    "output": st.sampled_from(["yes", "no"]) | json_values,
    "usage": st.fixed_dictionaries({}, optional={"input_tokens": json_values, "prompt_tokens": json_values}) | json_values,
    "latency_s": json_values, "success": json_values, "model": json_values, "run": json_values, "trial": json_values,
    "version": json_values, "meta": json_values, "extra": json_values})


@settings(max_examples=150, deadline=None)
@example([{"task_id": "a", "output": "yes"}, {"task_id": "b", "output": "no", "success": True}], [], [])
@example([{"task_id": "a", "output": "yes"}, {"task_id": "b", "output": "no", "success": True}], [],
         ["--check", "recorded"])
@given(st.lists(record_values | json_values, min_size=1, max_size=5), st.lists(any_text, max_size=2),
       st.sampled_from([[], ["--k", "1"], ["--check", "recorded"], ["--check", "final_state"], ["--agent-version", "v"]]))
def test_agents_score_hostile_episodes(records, raw_lines, options):
    """Episode records with any keys and values, and lines that are not JSON: a run (exit 0,
    warnings only on stderr) or exit 2 with one error line, never a traceback."""
    with tempfile.TemporaryDirectory() as tmp:
        tasks = os.path.join(tmp, "tasks.json")
        with open(tasks, "w", encoding="utf-8") as f:
            json.dump([{"task_id": "a", "answer": "yes", "final_state": 1}, {"task_id": "b", "answer": "yes"}], f)
        episodes = os.path.join(tmp, "episodes.jsonl")
        with open(episodes, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)
            f.writelines(line.replace("\n", " ") + "\n" for line in raw_lines)
        code, out, err = run(["agents", "score", episodes, "--tasks", tasks, *options])
    assert code in (0, 2), err
    if code == 0:
        assert all(line.startswith("scorekit agents: warning: ") for line in err.splitlines()), err
        assert "success rate" in out
    else:
        assert out == "" and err.count("\n") == 1 and err.startswith("scorekit: error: "), err
