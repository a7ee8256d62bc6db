"""The command line under hostile input: strict JSON, distinct slices, BOM, stdin, FIFOs, line
counts, Ctrl-C, closed pipes, and one error format with status 2 for every kind of bad input."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import scorekit
from scorekit.cli import MAX_DEMO_REPEAT, main
from scorekit.facade import evaluate

PYTHON_PATH = os.path.dirname(os.path.dirname(scorekit.__file__))
ENV = {**os.environ, "PYTHONPATH": PYTHON_PATH}


def reject(name):
    raise AssertionError(f"{name} in JSON output")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    return json.loads(out, parse_constant=reject)


def child(*argv, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "scorekit", *map(str, argv)], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def fifo_writer(path, data: bytes):
    """Write ``data`` into the FIFO ``path`` from a thread (opening blocks until a reader comes)."""
    def feed():
        with open(path, "wb") as f:
            f.write(data)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


# ---------------------------------------------------------------------------------- strict JSON
def test_all_references_empty_gives_null_aggregate(tmp_path, capsys):
    pred = write(tmp_path / "p.txt", b"a\nbc\n")
    gold = write(tmp_path / "g.txt", b"\n\n")
    report = run_json(capsys, "eval-text", pred, gold)
    assert report["aggregate"] is None
    assert report["totals"] == {"edits": 3, "ref_len": 0, "substitutions": 0, "deletions": 0,
                                "insertions": 3, "hits": 0}
    code, out, _ = run(capsys, "eval-text", pred, gold)
    assert code == 0 and out.startswith("CER over 2 pairs: n/a  (edits 3 / reference 0;")


def test_empty_slice_aggregate_is_null(tmp_path, capsys):
    pred = write(tmp_path / "p.jsonl", b'{"text": "x"}\n{"text": "a"}\n')
    gold = write(tmp_path / "g.jsonl", b'{"text": "", "slice": "e"}\n{"text": "a", "slice": "f"}\n')
    report = run_json(capsys, "eval-text", pred, gold)
    assert report["per_slice"] == [{"slice": "e", "aggregate": None, "n": 1},
                                   {"slice": "f", "aggregate": 0.0, "n": 1}]
    assert report["aggregate"] == 1.0


def test_rover_and_flows_json_are_strict(tmp_path, capsys):
    code, out, _ = run(capsys, "rover", "--json", "", "")
    assert code == 0
    json.loads(out, parse_constant=reject)
    (tmp_path / "p").mkdir()
    (tmp_path / "r").mkdir()
    code, out, _ = run(capsys, "flows", tmp_path / "p", tmp_path / "r", "--json")
    assert code == 0 and json.loads(out, parse_constant=reject)["n"] == 0


# ------------------------------------------------------------------------------------- slices
def test_slices_one_and_string_one_stay_apart(tmp_path, capsys):
    lines = [("a", 1), ("b", "1"), ("x", 1.0), ("c", True), ("d", "1")]
    gold = write(tmp_path / "g.jsonl",
                 "".join(json.dumps({"text": t, "slice": s}) + "\n" for t, s in lines).encode())
    pred = write(tmp_path / "p.jsonl", b'{"text": "a"}\n{"text": "b"}\n{"text": "y"}\n{"text": "c"}\n{"text": "d"}\n')
    report = run_json(capsys, "eval-text", pred, gold)
    assert report["per_slice"] == [
        {"slice": 1, "aggregate": 0.0, "n": 1},
        {"slice": "1", "aggregate": 0.0, "n": 2},
        {"slice": 1.0, "aggregate": 1.0, "n": 1},
        {"slice": True, "aggregate": 0.0, "n": 1},
    ]
    code, out, _ = run(capsys, "eval-text", pred, gold)
    assert out.splitlines()[1:5] == ['  1     0.0000  (n=1)', '  "1"   0.0000  (n=2)',
                                     '  1.0   1.0000  (n=1)', '  true  0.0000  (n=1)']


def test_evaluate_per_slice_keeps_python_identity():
    cases = [("a", "a", 1), ("b", "x", "1"), ("c", "c", 1)]
    for metric in ("cer", "wer"):
        assert evaluate(cases, metric=metric).per_slice == {1: 0.0, "1": 1.0}
    assert list(evaluate(cases, metric="cer").per_slice) == [1, "1"]


class HashRaises:
    def __init__(self, exc):
        self.exc = exc

    def __hash__(self):
        raise self.exc


@pytest.mark.parametrize("exc", [StopIteration(), RuntimeError("boom"), TypeError("no")])
@pytest.mark.parametrize("metric", ["cer", "fields"])
def test_slice_label_whose_hash_raises(exc, metric):
    pair = ("a", "a") if metric == "cer" else ({"k": "a"}, {"k": "a"})
    cases = [(*pair, "ok"), (*pair, "ok"), (*pair, HashRaises(exc))]
    with pytest.raises(scorekit.errors.InvalidTypeError,
                       match=rf"^item 2: slice labels must be hashable, got HashRaises: .*hash\(\) raised "
                             rf"{type(exc).__name__}") as info:
        evaluate(cases, metric=metric)
    assert (info.value.item, info.value.field) == (2, "slice labels")


def test_slice_label_error_numbers_the_case_across_chunks():
    from scorekit.facade import CHUNK_SIZE

    cases = [("a", "a", "s")] * (CHUNK_SIZE + 3) + [("a", "a", HashRaises(StopIteration()))]
    with pytest.raises(scorekit.errors.InvalidTypeError, match=rf"^item {CHUNK_SIZE + 3}: slice labels"):
        evaluate(cases, metric="cer")


# -------------------------------------------------------------------------------- file content
def test_bom_is_not_scored(tmp_path, capsys):
    gold = write(tmp_path / "g.txt", b"abc\n")
    pred = write(tmp_path / "p.txt", b"\xef\xbb\xbfabc\n")
    assert run_json(capsys, "eval-text", pred, gold)["aggregate"] == 0.0
    gold = write(tmp_path / "g.jsonl", b'\xef\xbb\xbf{"text": "abc", "slice": "s"}\n')
    pred = write(tmp_path / "p.jsonl", b'{"text": "abd"}\n')
    report = run_json(capsys, "eval-text", pred, gold)
    assert (report["aggregate"], report["per_slice"][0]["slice"]) == (pytest.approx(1 / 3), "s")
    # only the first character of the file: a U+FEFF inside the text is scored
    pred = write(tmp_path / "p2.txt", b"abc\n\xef\xbb\xbfabc\n")
    gold = write(tmp_path / "g2.txt", b"abc\nabc\n")
    assert run_json(capsys, "eval-text", pred, gold)["totals"]["insertions"] == 1


def test_blank_lines_skipped_in_jsonl_kept_in_text(tmp_path, capsys):
    pred = write(tmp_path / "p.jsonl", b'\n{"text": "a"}\n   \n\r\n{"text": "b"}\n\n')
    gold = write(tmp_path / "g.jsonl", b'{"text": "a"}\n{"text": "c"}\n')
    report = run_json(capsys, "eval-text", pred, gold)
    assert (report["n"], report["totals"]["substitutions"]) == (2, 1)
    pred = write(tmp_path / "p.txt", b"a\n\nb\n")
    gold = write(tmp_path / "g.txt", b"a\nx\nb\n")
    report = run_json(capsys, "eval-text", pred, gold)
    assert (report["n"], report["totals"]["deletions"]) == (3, 1)


def test_format_option_reads_jsonl_from_any_name(tmp_path, capsys):
    pred = write(tmp_path / "p.data", b'{"text": "ab"}\n')
    gold = write(tmp_path / "g.data", b'{"text": "ab"}\n')
    assert run_json(capsys, "eval-text", pred, gold, "--format", "jsonl")["totals"]["ref_len"] == 2
    assert run_json(capsys, "eval-text", pred, gold)["totals"]["ref_len"] == len('{"text": "ab"}')


# ------------------------------------------------------------------------------ stdin and FIFOs
def test_stdin_as_pred_or_gold(tmp_path):
    gold = write(tmp_path / "g.txt", b"cat\ndog\n")
    for argv, ref_len in ((["-", gold], 6), ([gold, "-"], 5)):
        proc = child("eval-text", *argv, "--json", stdin=subprocess.PIPE)
        out, err = proc.communicate(b"ct\ndog\n", timeout=60)
        assert (proc.returncode, err) == (0, b"")
        report = json.loads(out, parse_constant=reject)
        assert (report["n"], report["totals"]["edits"], report["totals"]["ref_len"]) == (2, 1, ref_len)


def test_stdin_jsonl_with_format(tmp_path):
    gold = write(tmp_path / "g.jsonl", b'{"text": "abc", "slice": 2}\n')
    proc = child("eval-text", "-", gold, "--format", "jsonl", "--json", stdin=subprocess.PIPE)
    out, err = proc.communicate(b'\xef\xbb\xbf{"text": "abc"}\n', timeout=60)
    assert (proc.returncode, err) == (0, b"")
    assert json.loads(out)["per_slice"] == [{"slice": 2, "aggregate": 0.0, "n": 1}]


def test_both_stdin_is_an_error(capsys):
    assert run(capsys, "eval-text", "-", "-") == (
        2, "", "scorekit: error: only one of PRED and GOLD can be '-' (standard input)\n")


@pytest.mark.parametrize("progress", ["always", "auto", "never"])
def test_named_pipes_are_read_once(tmp_path, capsys, progress):
    pred, gold = tmp_path / "pred.fifo", tmp_path / "gold.fifo"
    os.mkfifo(pred)
    os.mkfifo(gold)
    writers = [fifo_writer(pred, b"ct\ndg\n"), fifo_writer(gold, b"cat\ndog\n")]
    code, out, err = run(capsys, "eval-text", pred, gold, "--json", "--progress", progress)
    for w in writers:
        w.join(10)
    assert code == 0, err
    report = json.loads(out, parse_constant=reject)
    assert (report["n"], report["totals"]["deletions"], report["totals"]["ref_len"]) == (2, 2, 6)
    if progress == "always":  # a pipe's length is unknown until it is read: the line ends on the count read
        assert re.fullmatch(r"\r\[#{30}\] 100\.0% 2/2 pairs [\d,]+/s\n", err), err
    else:
        assert err == ""



# --------------------------------------------------------------------------- mismatched lengths
@pytest.mark.parametrize("pred_lines, gold_lines, message", [
    (5, 2, "PRED has more lines than GOLD (PRED 5, GOLD 2)"),
    (1, 4, "GOLD has more lines than PRED (PRED 1, GOLD 4)"),
    (0, 3, "GOLD has more lines than PRED (PRED 0, GOLD 3)"),
])
def test_line_count_mismatch_names_both_counts(tmp_path, capsys, pred_lines, gold_lines, message):
    pred = write(tmp_path / "p.txt", b"x\n" * pred_lines)
    gold = write(tmp_path / "g.txt", b"x\n" * gold_lines)
    assert run(capsys, "eval-text", pred, gold) == (2, "", f"scorekit: error: line counts differ: {message}\n")


# ------------------------------------------------------------------------- signals and pipes
def test_ctrl_c_ends_quietly_with_130(tmp_path):
    pred, gold = tmp_path / "p.fifo", write(tmp_path / "g.txt", b"a\n")
    os.mkfifo(pred)
    proc = child("eval-text", pred, gold)
    with open(pred, "wb") as f:  # the child has opened the FIFO; it never sees end of file
        f.write(b"a\n")
        f.flush()
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (130, b"", b"")


def test_closed_stdout_ends_quietly_with_141(tmp_path):
    pred, gold = tmp_path / "p.fifo", write(tmp_path / "g.txt", b"a\n" * 1000)
    os.mkfifo(pred)
    proc = subprocess.Popen([sys.executable, "-m", "scorekit", "eval-text", str(pred), str(gold)], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the child writes anything
    with open(pred, "wb") as f:
        f.write(b"a\n" * 1000)
    err = proc.stderr.read()
    assert (proc.wait(timeout=60), err) == (141, b"")


def test_head_closes_the_pipe_quietly():
    script = f"{sys.executable} -m scorekit demo --repeat 1 | head -c 10; echo; echo ${{PIPESTATUS[0]}}"
    out = subprocess.run(["bash", "-c", script], env=ENV, capture_output=True, text=True, timeout=120)
    assert out.stderr == ""
    assert out.stdout.startswith("scorekit d\n")
    assert out.stdout.splitlines()[-1] in ("0", "141")   # 0 if head read everything before it exited


# -------------------------------------------------------------------------------- clean errors
def err_of(capsys, *argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("scorekit: error: "), err
    return err[len("scorekit: error: "):-1]


def test_directory_named_like_a_file(tmp_path, capsys):
    d = tmp_path / "x.json"
    d.mkdir()
    gold = write(tmp_path / "g.txt", b"a\n")
    assert err_of(capsys, "eval-text", d, gold) == f"PRED {str(d)!r} is a directory, not a file"
    d2 = tmp_path / "y.jsonl"
    d2.mkdir()
    assert err_of(capsys, "eval-text", gold, d2) == f"GOLD {str(d2)!r} is a directory, not a file"
    pred_dir, ref_dir = tmp_path / "p", tmp_path / "r"
    (pred_dir / "a.json").mkdir(parents=True)
    ref_dir.mkdir()
    (ref_dir / "a.json").write_text("{}", encoding="utf-8")
    assert "a.json" in err_of(capsys, "flows", pred_dir, ref_dir)


@pytest.mark.parametrize("line, message", [
    (b'{"text": ' + b"[" * 100_000, "invalid JSON (nested too deeply)"),
    (b'{"text": "a", "slice": 1' + b"0" * 5000 + b"}", "invalid JSON (integer of 5,001 digits is out of range)"),
    (b'{"text": "a", "slice": 1e999}', "invalid JSON (number 1e999 is out of range)"),
    (b'{"text": "a", "slice": NaN}', "invalid JSON (NaN is not valid JSON)"),
    (b'{"text": "a", "slice": -Infinity}', "invalid JSON (-Infinity is not valid JSON)"),
    (b'{"text": "a", "slice": [1]}', "'slice' must be a string, number, boolean or null, got list"),
    (b'{"text": "\\ud800"}', None),
    (b'\xff{"text": "a"}', "invalid UTF-8 (invalid start byte at byte 0)"),
    (b'[1, 2]', "expected an object with a 'text' field"),
])
def test_bad_jsonl_lines(tmp_path, capsys, line, message):
    pred = write(tmp_path / "p.jsonl", b'{"text": "a"}\n' + line + b"\n")
    gold = write(tmp_path / "g.jsonl", b'{"text": "a"}\n{"text": "a"}\n')
    err = err_of(capsys, "eval-text", pred, gold)
    if message is None:  # a lone surrogate: the library's named error
        assert "surrogate" in err and "cases[1]" in err
    else:
        assert err == f"PRED {pred}:2: {message}"


def test_demo_repeat_bounds(capsys):
    assert err_of(capsys, "demo", "--repeat", 10**12) == (
        f"--repeat must be between 1 and {MAX_DEMO_REPEAT:,}, got 1,000,000,000,000")
    assert err_of(capsys, "demo", "--repeat", 0) == f"--repeat must be between 1 and {MAX_DEMO_REPEAT:,}, got 0"
    code, out, err = run(capsys, "demo", "--repeat", "10**12")
    assert (code, out) == (2, "")
    assert err.splitlines() == ["usage: scorekit demo [-h] [--repeat REPEAT] [--html REPORT] [--open]",
                                "scorekit: error: argument --repeat: invalid int value: '10**12'"]


def test_usage_errors_share_the_prefix(capsys):
    code, out, err = run(capsys, "eval-text", "a", "b", "--metric", "xx")
    assert code == 2 and out == ""
    assert err.startswith("usage: scorekit eval-text")
    assert err.splitlines()[-1] == "scorekit: error: argument --metric: invalid choice: 'xx' (choose from cer, wer)" \
        or err.splitlines()[-1] == "scorekit: error: argument --metric: invalid choice: 'xx' (choose from 'cer', 'wer')"
    code, _, err = run(capsys)
    assert code == 2 and err.splitlines()[-1].startswith("scorekit: error: the following arguments are required")
    assert run(capsys, "--help")[0] == 0


@pytest.mark.parametrize("argv, message", [
    (["cer", "a", "b", "--normalize", "nope"], "nope"),
    (["cer", "a\ud800", "b"], "surrogate"),
    (["wer", "a", "\udcff"], "surrogate"),
    (["eval-text", "missing.txt", "missing.txt"], "PRED file not found: 'missing.txt'"),
    (["rover", "\ud800"], "surrogate"),
    (["flows", "missing-dir", "missing-dir"], "missing-dir"),
])
def test_library_errors_are_one_line(capsys, argv, message):
    assert message in err_of(capsys, *argv)


def test_threads_argument_errors(tmp_path, capsys):
    f = write(tmp_path / "a.txt", b"a\n")
    assert "threads must be >= 0" in err_of(capsys, "eval-text", f, f, "--threads", "-1")


def test_invalid_utf8_argument_through_the_shell():
    proc = subprocess.run([sys.executable, "-m", "scorekit", "cer", b"\xff", "a"], env=ENV,
                          capture_output=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.startswith(b"scorekit: error: ") and proc.stderr.count(b"\n") == 1
