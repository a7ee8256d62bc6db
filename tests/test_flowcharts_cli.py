"""``scorekit flowcharts classify|binary|multiclass|rotation``: printed metrics, strict JSON,
the HTML report (also in headless Chromium: the script runs, nothing is logged, no request leaves
the page), exit status 2 with one error line naming the file, inputs never written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scorekit.cli import main
from scorekit.flowcharts import cli as flowcharts_cli

HOSTILE = "<script>alert(1)</script> \"' </style> \u202e\u05d0 \x00 http://example.com/x.png"


def write(path: Path, value) -> Path:
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def label_files(tmp_path: Path, trues, preds, names=None) -> tuple[str, str]:
    names = names or [f"img_{k}.png" for k in range(len(trues))]
    t = write(tmp_path / "true.json", [{"img_path": f"gt/{n}", "label": v} for n, v in zip(names, trues)])
    p = write(tmp_path / "pred.json", [{"img_path": f"out/{n}", "label": v} for n, v in zip(names, preds)])
    return str(t), str(p)


def run(capsys, *argv):
    code = main(["flowcharts", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_commands_table_is_extensible():
    assert list(flowcharts_cli.COMMANDS) == ["classify", "binary", "multiclass", "rotation", "parse"]
    assert all(isinstance(c, flowcharts_cli.Command) for c in flowcharts_cli.COMMANDS.values())


def test_binary_text_and_json(tmp_path, capsys):
    t, p = label_files(tmp_path, [1, 1, 0, 0, 1], [1, 0, 1, 0, 1])
    code, out, err = run(capsys, "binary", t, p)
    assert code == 0 and err == ""
    assert out.startswith("binary: 5 images, 3 correct, accuracy 0.6000\n")
    assert "precision 0.6667  recall 0.6667  f1 0.6667" in out and "tp 2  fp 1  fn 1  tn 1" in out
    code, out, _ = run(capsys, "binary", t, p, "--json")
    s = json.loads(out)
    assert code == 0
    assert (s["benchmark"], s["n"], s["correct"], s["tp"], s["fp"], s["fn"], s["tn"]) == ("binary", 5, 3, 2, 1, 1, 1)
    assert s["accuracy"] == 0.6 and s["fpr"] == 0.5 and s["labels"] == [0, 1]
    assert s["confusion_matrix"] == [[1, 1], [1, 2]]
    assert [r["img_path"] for r in s["incorrect_predictions"]] == ["gt/img_1.png", "gt/img_2.png"]


def test_multiclass_labels_option(tmp_path, capsys):
    t, p = label_files(tmp_path, ["flowchart", "flowchart", "table", "other"], ["flowchart", "table", "table", "flowchart"])
    code, out, _ = run(capsys, "multiclass", t, p, "--labels", "flowchart,table,other,photo", "--json")
    s = json.loads(out)
    assert code == 0 and s["labels"] == ["flowchart", "table", "other", "photo"]
    assert s["confusion_matrix"] == [[1, 1, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]
    assert [c["accuracy"] for c in s["per_class"]] == [0.5, 1.0, 0.0, 0.0]
    code, out, _ = run(capsys, "multiclass", t, p)  # default: the labels found, ground truth first
    assert code == 0 and "accuracy 0.5000" in out and "photo" not in out
    t, p = label_files(tmp_path, [1, "1", True], [1, "1", 1])
    code, out, _ = run(capsys, "multiclass", t, p, "--labels", '["1", 1]', "--json")
    s = json.loads(out)
    assert code == 0 and s["labels"] == ["1", 1] and s["confusion_matrix"] == [[1, 0], [0, 2]]
    code, out, _ = run(capsys, "multiclass", t, p, "--labels", '["1", 1]')
    assert '"1"' in out  # mixed types are shown as JSON text
    code, _, err = run(capsys, "multiclass", t, p, "--labels", "[1,")
    assert code == 2 and err.startswith("scorekit: error: --labels")
    code, _, err = run(capsys, "multiclass", t, p, "--labels", "a,a")
    assert code == 2 and "labels must be unique" in err
    code, _, err = run(capsys, "multiclass", t, p, "--labels", "")
    assert code == 2 and "--labels names no label" in err
    code, _, err = run(capsys, "multiclass", t, p, "--labels", "[1.5]")
    assert code == 2 and "array of strings, integers or booleans" in err


def test_inputs_read_once_from_pipes(tmp_path):
    """Each input is read once, start to end: named pipes work, with and without --labels."""
    t, p = label_files(tmp_path, ["a", "b"], ["a", "a"])
    for extra in ([], ["--labels", "a,b"]):
        fifos = [tmp_path / "t.fifo", tmp_path / "p.fifo"]
        for f in fifos:
            f.unlink(missing_ok=True)
            os.mkfifo(f)
        cmd = f'cat {t} > {fifos[0]} & cat {p} > {fifos[1]} & {sys.executable} -m scorekit flowcharts multiclass ' \
              f'{fifos[0]} {fifos[1]} --json {" ".join(extra)}; wait'
        done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["accuracy"] == 0.5


def test_rotation_and_classify(tmp_path, capsys):
    t, p = label_files(tmp_path, [0, 90, 270, 90], [0, 180, 270, 90])
    code, out, _ = run(capsys, "rotation", t, p)
    assert code == 0 and out.startswith("rotation: 4 images, 3 correct, accuracy 0.7500")
    assert "confusion matrix (rows: truth, columns: prediction)" in out
    s = json.loads(run(capsys, "rotation", t, p, "--json")[1])
    assert s["labels"] == [0, 90, 180, 270] and s["confusion_matrix"][1] == [0, 1, 1, 0]
    t, p = label_files(tmp_path, ["yes", 1, True], ["yes", True, 1])
    s = json.loads(run(capsys, "classify", t, p, "--json")[1])
    assert s["accuracy"] == 1.0 and s["labels"] == ["yes", 1] and s["num_incorrect"] == 0


@pytest.mark.parametrize("command", ["classify", "binary", "multiclass", "rotation"])
def test_bad_data_exit_2_with_one_line_naming_the_file(tmp_path, capsys, command):
    good = write(tmp_path / "good.json", [{"img_path": "a/x.png", "label": 0}])
    cases = {
        "broken.json": ('[{"img_path": "x.png", "label": 0', "broken.json is not valid JSON"),
        "object.json": ({"img_path": "x.png"}, "should be a list"),
        "extra.json": ([{"img_path": "x.png", "label": 0, "score": 1}], "Found wrong keys in"),
        "missing.json": ([{"img_path": "x.png", "label": 0}, {"img_path": "y.png", "label": 0}], "same length"),
        "renamed.json": ([{"img_path": "b/y.png", "label": 0}], "Image paths should match"),
        "float.json": ([{"img_path": "b/x.png", "label": 0.5}], "Predicted label should be"),
    }
    for name, (content, message) in cases.items():
        bad = write(tmp_path / name, content)
        code, out, err = run(capsys, command, good, bad)
        assert code == 2 and out == "", (name, err)
        assert err.count("\n") == 1 and err.startswith("scorekit: error: ") and message in err, (name, err)
        assert name in err, err
    code, _, err = run(capsys, command, good, tmp_path / "absent.json")
    assert code == 2 and "absent.json" in err and err.count("\n") == 1


def test_label_errors_name_file_and_entry(tmp_path, capsys):
    t, p = label_files(tmp_path, [0, 1, 2], [0, 1, 1])
    code, _, err = run(capsys, "binary", t, p)
    assert code == 2 and "only 0 and 1" in err and "entry 2 of" in err and "true.json" in err and "img_2.png" in err
    t, p = label_files(tmp_path, [0, 90, 90], [0, False, 90])
    code, _, err = run(capsys, "rotation", t, p)
    assert code == 2 and "booleans" in err and "pred.json" in err and "img_1.png" in err


def test_usage_errors(capsys):
    assert run(capsys, "binary")[0] == 2
    assert run(capsys, "nosuch", "a", "b")[0] == 2
    code, _, err = run(capsys)
    assert code == 2 and "scorekit: error:" in err


def test_html_report(tmp_path, capsys):
    names = [f"{HOSTILE} {k}.png" for k in range(6)]
    t, p = label_files(tmp_path, ["flowchart", HOSTILE, "table", "table", "other", "flowchart"],
                       ["flowchart", "table", "table", HOSTILE, "other", "other"], names)
    before = {f: Path(f).read_bytes() for f in (t, p)}
    html = tmp_path / "report.html"
    code, out, _ = run(capsys, "multiclass", t, p, "--html", html)
    assert code == 0 and f"report: {html}" in out
    page = html.read_text(encoding="utf-8")
    assert "Confusion matrix" in page and "Accuracy per ground-truth class" in page and "<svg" in page
    links = re.sub(r' href="#s[0-9]+(?:-[0-9]+)*"', "", page)   # the contents' links to the page's own sections
    assert "<script>alert" not in page and " src=" not in page and " href=" not in links
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert {f: Path(f).read_bytes() for f in (t, p)} == before
    assert sorted(os.listdir(tmp_path)) == ["pred.json", "report.html", "true.json"]
    # the report never overwrites an input, and a missing folder is an error
    code, _, err = run(capsys, "binary", *label_files(tmp_path, [0], [1]), "--html", tmp_path / "true.json")
    assert code == 2 and "never overwrite inputs" in err
    assert json.loads((tmp_path / "true.json").read_text())[0]["label"] == 0
    code, _, err = run(capsys, "rotation", *label_files(tmp_path, [0], [0]), "--html", tmp_path / "no" / "r.html")
    assert code == 2 and "does not exist" in err
    code, out, err = run(capsys, "rotation", *label_files(tmp_path, [0], [0]), "--json", "--html", tmp_path / "r.html")
    assert code == 0 and json.loads(out)["n"] == 1 and "report:" in err


def test_html_report_in_headless_browser(tmp_path, capsys):
    from test_report_browser import Dom, _problems, _run

    browser = shutil.which("chromium")
    if browser is None:
        if os.environ.get("SCOREKIT_SKIP_BROWSER") == "1":
            pytest.skip("chromium not on PATH and SCOREKIT_SKIP_BROWSER=1")
        pytest.fail("the flowcharts report browser check needs Debian's chromium on PATH (apt-get install -y chromium)")
    names = [f"{HOSTILE} {k}.png" for k in range(5)]
    t, p = label_files(tmp_path, [0, 90, 270, 90, 180], [0, 180, 270, 90, 0], names)
    html = tmp_path / "rotation.html"
    assert run(capsys, "rotation", t, p, "--html", html)[0] == 0
    dom_html, stderr, requests = _run(browser, html, tmp_path / "dom", "--dump-dom")
    assert Dom(dom_html).body.get("data-script-ran") == "1"
    assert _problems(stderr) == []
    assert [url for url in requests if url != html.as_uri()] == [], requests
    assert "Confusion matrix" in dom_html and "270" in dom_html


def test_module_entry_point(tmp_path):
    t, p = label_files(tmp_path, [0, 90], [0, 90])
    done = subprocess.run([sys.executable, "-m", "scorekit", "flowcharts", "rotation", t, p, "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and json.loads(done.stdout)["accuracy"] == 1.0


def test_many_classes_keep_memory_bounded(tmp_path, capsys):
    n = 3000  # every image its own label: no 3000 x 3000 matrix is built
    t, p = label_files(tmp_path, [f"c{k}" for k in range(n)], [f"c{(k + 1) % n}" if k % 2 else f"c{k}" for k in range(n)])
    code, out, _ = run(capsys, "classify", t, p, "--json", "--html", tmp_path / "r.html")
    s = json.loads(out)
    assert code == 0 and s["confusion_matrix"] is None and len(s["per_class"]) == n
    assert s["correct"] == n // 2 and sum(c["num_true"] for c in s["per_class"]) == n
    assert "Confusion matrix" not in (tmp_path / "r.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["classify", "binary", "multiclass", "rotation"])
@pytest.mark.parametrize("kind", ["equal", "symlink", "hardlink"])
@pytest.mark.parametrize("which", ["true", "pred"])
def test_report_never_replaces_an_input_and_is_checked_first(tmp_path, capsys, monkeypatch, command, kind, which):
    """--html equal to, a symbolic link to or a hard link of TRUE or PRED: exit 2 before the files
    are scored (the benchmark is never built), the input unchanged."""
    from scorekit.flowcharts.classification import classification_benchmark
    from scorekit.flowcharts.rotation import rotation_benchmark

    t, p = label_files(tmp_path, [0, 1], [0, 0])
    target = Path(t if which == "true" else p)
    before = target.read_bytes()
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "report.html"
    if kind == "symlink":
        out.symlink_to(target)
    elif kind == "hardlink":
        os.link(target, out)
    else:
        out = target
    for module in (classification_benchmark, rotation_benchmark):
        monkeypatch.setattr(module, "load_classification_benchmark_results",
                            lambda *a, **k: pytest.fail("the files were scored"), raising=False)
    code, stdout, err = run(capsys, command, t, p, "--html", out)
    assert code == 2 and stdout == ""
    assert err.startswith("scorekit: error: --html") and "is an input of this run" in err and err.count("\n") == 1
    assert target.read_bytes() == before


@pytest.mark.parametrize("command", ["classify", "binary", "multiclass", "rotation"])
def test_a_missing_input_is_named_before_any_work(tmp_path, capsys, command):
    t, p = label_files(tmp_path, [0], [0])
    code, _, err = run(capsys, command, tmp_path / "nope.json", p, "--html", tmp_path / "r.html")
    assert code == 2 and f"TRUE '{tmp_path / 'nope.json'}' does not exist" in err and err.count("\n") == 1
    code, _, err = run(capsys, command, t, tmp_path, "--json")
    assert code == 2 and "PRED" in err and "is a folder" in err
    assert not (tmp_path / "r.html").exists()


def test_help_texts_speak_to_the_user(capsys):
    """Every flowcharts command's --help: no RST markup, no Python names (issue #30)."""
    for command in ["", *flowcharts_cli.COMMANDS]:
        assert main(["flowcharts", *([command] if command else []), "--help"]) == 0
        text = capsys.readouterr().out
        assert text.startswith("usage: scorekit flowcharts")
        for internal in ("``", ":func:", ":class:", "args.", "_dir", "Namespace", "ParsingBenchmark", "time_limit"):
            assert internal not in text, (command, internal)
