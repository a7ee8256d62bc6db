"""The ``scorekit`` command line: documented outputs, files, slices, JSON, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scorekit.cli import load_sample_corpus, main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_documented_examples(capsys):
    assert run(capsys, "cer", "hello wrld", "hello world") == (0, "0.09090909090909091\n", "")
    assert run(capsys, "wer", "hello wrld", "hello world") == (0, "0.5\n", "")
    assert run(capsys, "cer", "Hello", "hello", "--normalize", "lower") == (0, "0.0\n", "")
    assert run(capsys, "cer", "Hello  X", "hello x", "--normalize", "lower,collapse_whitespace")[1] == "0.0\n"


def test_version(capsys):
    import scorekit

    assert run(capsys, "version") == (0, scorekit.__version__ + "\n", "")


def test_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "scorekit", "wer", "a b", "a c"], capture_output=True, text=True)
    assert (out.returncode, out.stdout) == (0, "0.5\n")


def test_eval_text_files(tmp_path, capsys):
    pred, gold = tmp_path / "pred.txt", tmp_path / "gold.txt"
    pred.write_text("ct\ndg\n", encoding="utf-8")
    gold.write_text("cat\ndog\n", encoding="utf-8")
    before = (pred.read_bytes(), gold.read_bytes())
    code, out, _ = run(capsys, "eval-text", str(pred), str(gold), "--json")
    report = json.loads(out)
    assert code == 0
    assert (report["metric"], report["n"], round(report["aggregate"], 4)) == ("cer", 2, 0.3333)
    assert report["totals"]["deletions"] == 2
    assert (pred.read_bytes(), gold.read_bytes()) == before   # inputs untouched


def test_eval_text_jsonl_slices(tmp_path, capsys):
    pred, gold = tmp_path / "pred.jsonl", tmp_path / "gold.jsonl"
    pred.write_text("\n".join(json.dumps({"text": t}) for t in ["cat", "xxx", None]) + "\n", encoding="utf-8")
    gold.write_text("\n".join(json.dumps({"text": t, "slice": s}) for t, s in
                              [("cat", "easy"), ("dog", "hard"), ("ab", "easy")]) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "eval-text", str(pred), str(gold), "--json")
    report = json.loads(out)
    assert report["per_slice"] == [{"slice": "easy", "aggregate": 0.4, "n": 2},
                                   {"slice": "hard", "aggregate": 1.0, "n": 1}]
    code, out, _ = run(capsys, "eval-text", str(pred), str(gold), "--metric", "wer")
    assert code == 0 and "WER over 3 pairs" in out and "easy" in out


@pytest.mark.parametrize(
    "pred_text, gold_text, suffix, message",
    [
        ("a\nb\n", "a\n", ".txt", "line counts differ: PRED has more lines than GOLD"),
        ("a\n", "a\nb\n", ".txt", "line counts differ: GOLD has more lines than PRED"),
        ('{"text": "a"\n', '{"text": "a"}\n', ".jsonl", "PRED .*pred.jsonl:1: invalid JSON"),
        ('{"txt": "a"}\n', '{"text": "a"}\n', ".jsonl", "expected an object with a 'text' field"),
        ('{"text": 5}\n', '{"text": "a"}\n', ".jsonl", "'text' must be a string or null"),
    ],
)
def test_eval_text_errors(tmp_path, capsys, pred_text, gold_text, suffix, message):
    pred, gold = tmp_path / f"pred{suffix}", tmp_path / f"gold{suffix}"
    pred.write_text(pred_text, encoding="utf-8")
    gold.write_text(gold_text, encoding="utf-8")
    code, out, err = run(capsys, "eval-text", str(pred), str(gold))
    assert code == 2
    assert err.startswith("scorekit: error: ")
    assert __import__("re").search(message, err), err


def test_unreadable_and_invalid_files(tmp_path, capsys):
    gold = tmp_path / "gold.txt"
    gold.write_text("a\n", encoding="utf-8")
    code, _, err = run(capsys, "eval-text", str(tmp_path / "missing.txt"), str(gold))
    assert code == 2 and "PRED file not found" in err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\n")
    code, _, err = run(capsys, "eval-text", str(bad), str(gold))
    assert code == 2 and "invalid UTF-8" in err


def test_unknown_normalizer(capsys):
    code, _, err = run(capsys, "cer", "a", "b", "--normalize", "nope")
    assert code == 2 and "nope" in err


def test_demo(capsys):
    code, out, _ = run(capsys, "demo", "--repeat", "2")
    corpus = load_sample_corpus()
    assert code == 0
    assert f"{len(corpus):,} OCR-like line pairs x 2" in out
    assert "CER over" in out and "WER over" in out and "armenian" in out and "pairs/s" in out


def test_progress_line(tmp_path, capsys):
    pred, gold = tmp_path / "p.txt", tmp_path / "g.txt"
    lines = "".join(f"line {k}\n" for k in range(70_000))
    pred.write_text(lines, encoding="utf-8")
    gold.write_text(lines, encoding="utf-8")
    code, out, err = run(capsys, "eval-text", str(pred), str(gold), "--progress", "always")
    assert code == 0 and "65,536/70,000 pairs" in err
    assert "CER over 70,000 pairs: 0.0000" in out


def test_console_script_installed():
    bindir = os.path.dirname(sys.executable)
    out = subprocess.run([os.path.join(bindir, "scorekit"), "cer", "ab", "abc"], capture_output=True, text=True)
    assert out.stdout.strip() == str(1 / 3)


def test_flows_command_is_wired(tmp_path, capsys):
    flow = {"trigger": {"type": "webhook"}, "components": [{"type": "http"}]}
    for folder in ("pred", "ref"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.json").write_text(json.dumps(flow), encoding="utf-8")
    code, out, _ = run(capsys, "flows", str(tmp_path / "pred"), str(tmp_path / "ref"), "--json")
    report = json.loads(out)
    assert code == 0 and report["n"] == 1 and report["items"][0]["flowsim"] == 1.0
    code, _, err = run(capsys, "flows", str(tmp_path / "missing"), str(tmp_path / "ref"))
    assert code == 2 and err


def test_rover_command(capsys):
    code, out, _ = run(capsys, "rover", "the cat sat", "the cat sit", "the bat sat")
    assert code == 0
    assert out == ("{'consensus': 'the cat sat', 'mean_agreement': 0.7778, 'agreement': [1.0, 0.6667, 0.6667], "
                   "'n_engines': 3}\n")
    code, out, _ = run(capsys, "rover", "--json", "the cat sat", "the cat sit", "the bat sat")
    assert code == 0
    assert json.loads(out) == {"consensus": "the cat sat", "mean_agreement": 0.7778,
                               "agreement": [1.0, 0.6667, 0.6667], "n_engines": 3}


def test_demo_html_report(tmp_path) -> None:
    """``demo --html`` writes one self-contained page with the corpus figures the text output prints."""
    import html
    import re

    from scorekit.facade import evaluate

    out = tmp_path / "demo.html"
    assert main(["demo", "--repeat", "1", "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and not re.search(r"(src|href)=\"(https?:)?//", page)
    corpus = load_sample_corpus()
    cer, wer = evaluate(corpus, metric="cer").aggregate, evaluate(corpus, metric="wer").aggregate
    text = html.unescape(page)
    assert f"{cer:.4f}" in text and f"{wer:.4f}" in text
    assert text.count("Pair ") >= 8  # the aligned diffs of the worst pairs
    # the OCR pages sample, in the sections of the OCR pages run report
    assert "OCR pages sample · Corpus summary" in text and "OCR pages sample · Pages (click a header to sort)" in text
    assert "OCR pages sample · page gazette-2 · region r1 · CER 0.0469" in text  # 3 edits / 64
    assert f"{8 / 314:.4f}" in text


def test_demo_ocr_pages_sample(capsys):
    """The packaged OCR pages sample, by hand: gazette-1 և→եվ (2 edits) and ր→բ (1) over 167 GT
    characters, with a watermark line removed and a headline the OCR split in two rows;
    gazette-2 և→եվ (2), a dropped ':' (1) and, in the Latin box, o→0 (1) over 104; gazette-3 ը→ր
    (1) over 43, one line read across both columns."""
    from scorekit.demo_report import score_ocr_pages_sample

    reports = score_ocr_pages_sample()
    s = reports["no_filter"]["summary"]
    assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"], s["ocr_region_cer"]) == (8, 314, 8 / 314)
    assert s["watermark_words_removed"] == 1 and s["gt_boxes_dropped"]["rule"] == 1
    assert s["row_status_counts"] == {"exactly_one_box": 12, "multiple_boxes": 1, "no_box": 1, "split_line": 1}
    assert [(p["page_id"], p["ocr_region_char_edit_distance"], p["ocr_region_gt_char_count"])
            for p in reports["no_filter"]["pages"]] == [("gazette-1", 3, 167), ("gazette-2", 4, 104), ("gazette-3", 1, 43)]
    # non-armenian drops the Latin box (1 / 33); the label filters the nameplate and the two headlines (0 / 31)
    assert reports["non_armenian"]["summary"]["ocr_region_cer"] == 7 / 281
    assert reports["graphics_headers_images_photos"]["summary"]["ocr_region_cer"] == 8 / 283
    assert reports["all_filters"]["summary"]["ocr_region_cer"] == 7 / 250
    code, out, _ = run(capsys, "demo", "--repeat", "1")
    assert code == 0
    assert ("OCR pages sample: 3 pages, 15 line rows (1 watermark record removed, 1 split line reassembled), "
            "region CER per report variant:\n"
            f"  no_filter: cer={8 / 314:.4f}\n  non_armenian: cer={7 / 281:.4f}\n"
            f"  graphics_headers_images_photos: cer={8 / 283:.4f}\n  all_filters: cer={7 / 250:.4f}\n") in out


def test_demo_flowcharts_sample(capsys, tmp_path):
    """The packaged rotation sample, by hand: 12 scans; the model read two of the three 90° scans
    as 270° and one of the two 180° scans as 0°, and every 0° and 270° scan right: 9 / 12."""
    import html

    from scorekit.demo_report import score_flowcharts_sample

    s = score_flowcharts_sample()
    assert (s["n"], s["correct"], s["accuracy"], s["num_incorrect"]) == (12, 9, 0.75, 3)
    assert [row["accuracy"] for row in s["per_class"]] == [1.0, 1 / 3, 0.5, 1.0]
    assert s["confusion_matrix"] == [[4, 0, 0, 0], [0, 1, 0, 2], [1, 0, 1, 0], [0, 0, 0, 3]]
    out = tmp_path / "demo.html"
    code, printed, _ = run(capsys, "demo", "--repeat", "1", "--html", str(out))
    assert code == 0 and "Flowchart rotation sample: 12 images, accuracy 0.7500 (3 wrong)" in printed
    text = html.unescape(out.read_text(encoding="utf-8"))
    assert "Flowchart rotation sample · Confusion matrix (rows: ground truth, columns: prediction)" in text


def test_importing_the_module_entry_point_runs_nothing():
    """``import scorekit.__main__`` (pydoc, a test collector, a packager) neither parses the
    command line nor exits."""
    out = subprocess.run([sys.executable, "-c", "import scorekit.__main__; print('imported')"],
                         capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (0, "imported\n", "")


def test_demo_report_and_console_count_the_same_pairs(capsys, tmp_path):
    """The console scores the corpus ``--repeat`` times; the page says how many distinct pairs its
    figures are over and how many pairs were scored, the number the console prints."""
    import html
    import re

    out = tmp_path / "demo.html"
    code, printed, _ = run(capsys, "demo", "--repeat", "3", "--html", str(out))
    corpus = len(load_sample_corpus())
    assert code == 0 and corpus == 3000
    assert "3,000 OCR-like line pairs x 3 = 9,000 pairs" in printed and "CER over 9,000 pairs" in printed
    cells = re.findall(r"<th[^>]*>([^<]*)</th>\s*<td[^>]*>([^<]*)</td>", html.unescape(out.read_text(encoding="utf-8")))
    summary = dict(cells)
    assert summary["pairs in the sample corpus"] == "3000"
    assert summary["pairs scored (the corpus repeated, for the throughput)"] == "9000"


@pytest.mark.parametrize("spelling", ["same", "symlink", "hardlink", "folder", "missing_folder"])
def test_demo_never_writes_over_its_inputs(capsys, tmp_path, spelling):
    """``demo --html`` is checked against every file the demo reads before anything is scored:
    the output as an input's own path, a symbolic link to it or a hard link of it, a folder, or
    a path whose folder does not exist is exit status 2, one line, nothing scored, input unchanged."""
    import scorekit

    corpus = Path(scorekit.__file__).parent / "data" / "sample_corpus.jsonl"
    before = (corpus.read_bytes(), corpus.stat().st_mtime_ns)
    target = {"same": corpus, "symlink": tmp_path / "link.html", "hardlink": tmp_path / "hard.html",
              "folder": tmp_path, "missing_folder": tmp_path / "nowhere" / "demo.html"}[spelling]
    if spelling == "symlink":
        target.symlink_to(corpus)
    elif spelling == "hardlink":
        os.link(corpus, target)
    code, out, err = run(capsys, "demo", "--repeat", "1", "--html", str(target))
    assert (code, out) == (2, "") and err.startswith("scorekit: error: --html ") and err.count("\n") == 1
    assert ("never overwrite inputs" in err) == (spelling in ("same", "symlink", "hardlink"))
    assert (corpus.read_bytes(), corpus.stat().st_mtime_ns) == before


def test_demo_inputs_are_every_packaged_sample_file():
    from scorekit.demo_report import SAMPLE_DATA, demo_inputs

    inputs = demo_inputs()
    assert inputs[0] == SAMPLE_DATA and SAMPLE_DATA / "sample_corpus.jsonl" in inputs
    assert SAMPLE_DATA / "cases_sample" / "outputs_v1" / "paper-crispr.json" in inputs
    assert SAMPLE_DATA / "ocr_pages" / "pages.jsonl" in inputs and all(p.is_file() for p in inputs[1:])


TOP_LEVEL_COMMANDS = ("cer", "wer", "eval-text", "rover", "pass-k", "cost-per-success", "where", "check", "engines",
                      "version", "flows", "demo", "eval-table")


@pytest.mark.parametrize("command", TOP_LEVEL_COMMANDS)
def test_help_shows_no_markup_or_internal_names(capsys, command):
    """What ``--help`` shows the user: no RST double backticks, no Python argument names."""
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and out.startswith(f"usage: scorekit {command}")
    assert "``" not in out and not {"prediction", "pred_dir", "ref_dir", "file"} & set(out.split("\n")[0].split())
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "``" not in out


def test_string_commands_refuse_an_empty_normalizer_name(capsys):
    """``-n ""`` was silently no normalisation; the Python API refuses the name ''."""
    for value in ("", "lower,", ",lower"):
        code, out, err = run(capsys, "cer", "A", "a", "-n", value)
        assert (code, out) == (2, "") and err == f"scorekit: error: --normalize {value!r} holds an empty normalizer name\n"
    assert run(capsys, "cer", "A", "a", "-n", "lower,strip") == (0, "0.0\n", "")
