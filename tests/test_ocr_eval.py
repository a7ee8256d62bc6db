"""``scorekit ocr-eval`` end to end: dinglehopper 0.11 parity of the shared JSON keys on PAGE-XML,
ALTO and text files written here, folder pairing (unpaired pages listed), folder totals (total edits
over total length, against an independent count), the engine comparison (against a hand count and
SciPy's binomial test), the progress line, bounded memory over many pages, and the error lines."""

from __future__ import annotations

import json
import math
import tracemalloc
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein
from scipy.stats import binomtest
from uniseg.graphemecluster import grapheme_clusters

from scorekit import cli
from scorekit.ocr import evaluate as ocr_evaluate
from tests.ocr_eval_files import alto_xml, dinglehopper_json, page_xml, write

GT_LINES = ["Die Geſchichte der Stadt Leipzig.", "Zweite Zeile: 1848, 12 Männer — ſo!", "Ägypten & Co. (1900)"]
OCR_LINES = ["Die Gefchichte der Stadt Leipzig", "Zweite Zeile 1848, l2 Manner - so!", "Agypten & Co. (19OO)"]


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def graphemes(text: str) -> list[str]:
    return list(grapheme_clusters(unicodedata.normalize("NFC", text)))


def char_edits(gt: str, ocr: str) -> tuple[int, int]:
    """The oracle's edit count and ground-truth length: Levenshtein over grapheme clusters."""
    g, o = graphemes(gt), graphemes(ocr)
    return Levenshtein.distance(g, o), len(g)


@pytest.fixture
def pair_files(tmp_path):
    """The same page as PAGE-XML, ALTO and text, ground truth and OCR."""
    files = {}
    files["page"] = (write(tmp_path / "gt.page.xml", page_xml([("r1", GT_LINES[:2]), ("r2", GT_LINES[2:])])),
                     write(tmp_path / "ocr.page.xml", page_xml([("r1", OCR_LINES[:2]), ("r2", OCR_LINES[2:])])))
    files["alto"] = (write(tmp_path / "gt.alto.xml", alto_xml(GT_LINES)),
                     write(tmp_path / "ocr.alto.xml", alto_xml(OCR_LINES)))
    files["text"] = (write(tmp_path / "gt.txt", "\n".join(GT_LINES) + "\n"),
                     write(tmp_path / "ocr.txt", "\n".join(OCR_LINES) + "\n"))
    files["page-vs-alto"] = (files["page"][0], files["alto"][1])
    return files


@pytest.mark.parametrize("kind", ["page", "alto", "text", "page-vs-alto"])
def test_shared_keys_identical_to_dinglehopper(capsys, tmp_path, pair_files, kind):
    gt, ocr = pair_files[kind]
    out = tmp_path / "scorekit.json"
    assert run(capsys, "ocr-eval", gt, ocr, "--json", out)[0] == 0
    ours = json.loads(out.read_text(encoding="utf-8"))
    theirs = dinglehopper_json(gt, ocr, tmp_path / "dh")
    assert theirs["cer"] > 0 and theirs["wer"] > 0
    for key in ("cer", "wer", "n_characters", "n_words"):
        assert ours[key] == theirs[key], key
    assert ours["gt"] == str(gt) and ours["ocr"] == str(ocr) and "pages" not in ours


@pytest.mark.parametrize("level", ["region", "line"])
def test_textequiv_level_parity(capsys, tmp_path, level):
    # The region TextEquiv says something else than its lines: the level decides what is read.
    def doc(lines, region_text):
        return page_xml([("r1", lines)]).replace(f"<Unicode>{chr(10).join(lines)}</Unicode></TextEquiv></TextRegion>",
                                                 f"<Unicode>{region_text}</Unicode></TextEquiv></TextRegion>")
    gt = write(tmp_path / "gt.xml", doc(["eins zwei", "drei"], "eins zwei drei vier"))
    ocr = write(tmp_path / "ocr.xml", doc(["eins zwel", "drei"], "eins zwei"))
    assert run(capsys, "ocr-eval", gt, ocr, "--textequiv-level", level, "--json", tmp_path / "o.json")[0] == 0
    ours = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    theirs = dinglehopper_json(gt, ocr, tmp_path / "dh", level=level)
    assert {k: ours[k] for k in ("cer", "wer", "n_characters", "n_words")} == \
           {k: theirs[k] for k in ("cer", "wer", "n_characters", "n_words")}
    assert ours["n_words"] == (4 if level == "region" else 3)


def make_folders(tmp_path, pages):
    """GT and OCR folders of text pages ``{gt name: (gt text, ocr name or None, ocr text)}``."""
    gt_dir, ocr_dir = tmp_path / "gt", tmp_path / "ocr"
    gt_dir.mkdir(parents=True); ocr_dir.mkdir(parents=True)
    for gt_name, (gt_text, ocr_name, ocr_text) in pages.items():
        if gt_name is not None:
            write(gt_dir / gt_name, gt_text)
        if ocr_name is not None:
            write(ocr_dir / ocr_name, ocr_text)
    return gt_dir, ocr_dir


def test_folder_pairing_totals_and_unpaired_pages(capsys, tmp_path):
    pages = {
        "0001.gt.txt": ("erste Seite mit Text", "0001.tesseract.txt", "erste Seito mit Txt"),
        "0002.txt": ("zweite Seite", "0002.txt", "zweite Seite"),               # same name
        "0003.gt.txt": ("dritte Seite, länger als die anderen", "0003.xml.txt",
                        "dritte Seite, langer als die andern"),
        "0004.gt.txt": ("ohne OCR", None, ""),                                   # no partner: listed
    }
    gt_dir, ocr_dir = make_folders(tmp_path, pages)
    write(ocr_dir / "0099.tesseract.txt", "ohne Grundwahrheit")                 # no partner: listed
    write(gt_dir / ".hidden.txt", "not a page")
    (gt_dir / "sub").mkdir()
    code, out, err = run(capsys, "ocr-eval", gt_dir, ocr_dir, "--json", tmp_path / "o.json", "--progress", "always")
    assert code == 0
    data = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert [p["name"] for p in data["pages"]] == ["0001.gt.txt", "0002.txt", "0003.gt.txt"]
    assert [Path(p["ocr"]).name for p in data["pages"]] == ["0001.tesseract.txt", "0002.txt", "0003.xml.txt"]
    assert data["unpaired"] == {"gt_only": [{"name": "0004.gt.txt", "missing_in": [str(ocr_dir)]}],
                                "ocr_only": {str(ocr_dir): ["0099.tesseract.txt"]}}
    assert "GT page 0004.gt.txt has no partner" in out and "OCR page 0099.tesseract.txt" in out
    counted = [char_edits(g, o) for name, (g, _, o) in pages.items() if name != "0004.gt.txt"]
    edits, length = sum(e for e, _ in counted), sum(n for _, n in counted)
    assert (data["char_edits"], data["n_characters"]) == (edits, length)
    assert data["cer"] == edits / length
    for page, (e, n) in zip(data["pages"], counted):
        assert (page["char_edits"], page["n_characters"]) == (e, n)
        assert page["cer"] == (e / n if e else 0)
    assert data["wer"] == sum(p["word_edits"] for p in data["pages"]) / sum(p["n_words"] for p in data["pages"])
    assert "3/3 pages" in err   # the progress line


def test_ambiguous_stems_fail_naming_both_files(capsys, tmp_path):
    gt_dir, ocr_dir = make_folders(tmp_path, {"0001.gt.txt": ("a", "0001.a.txt", "a")})
    write(ocr_dir / "0001.b.txt", "b")
    code, out, err = run(capsys, "ocr-eval", gt_dir, ocr_dir)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "0001.a.txt" in err and "0001.b.txt" in err and "stem '0001'" in err


def test_no_pair_at_all_is_an_error(capsys, tmp_path):
    gt_dir, ocr_dir = make_folders(tmp_path, {"a.txt": ("a", "b.txt", "b")})
    code, _, err = run(capsys, "ocr-eval", gt_dir, ocr_dir)
    assert code == 2 and "no page of GT" in err


def test_engines_compared_page_by_page(capsys, tmp_path):
    gt_texts = ["alpha beta gamma", "delta epsilon", "zeta eta theta", "iota kappa", "", "lambda my"]
    a_texts = ["alpha beta gamma", "delta epsilon", "zeta eta thota", "iota kappa", "x", "lambda my"]
    b_texts = ["alpha beda gamma", "delta epsilom", "zeta eta thota", "iota kapa", "", "lambda mu"]
    gt_dir, a_dir, b_dir = (tmp_path / n for n in ("gt", "a", "b"))
    for k, texts in enumerate((gt_texts, a_texts, b_texts)):
        for j, text in enumerate(texts):
            write((gt_dir, a_dir, b_dir)[k] / f"p{j}.txt", text)
    code, out, _ = run(capsys, "ocr-eval", gt_dir, a_dir, b_dir, "--json", tmp_path / "o.json")
    assert code == 0
    data = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert [e["ocr"] for e in data["engines"]] == [str(a_dir), str(b_dir)]
    assert data["excluded_from_comparison"] == ["p4.txt"]            # empty ground truth: no finite CER
    assert data["engines"][0]["pages"][4]["cer"] is None             # inf in strict JSON
    (comparison,) = data["comparisons"]
    d = comparison["cer_difference"]
    cer = {name: [char_edits(g, o)[0] / char_edits(g, o)[1] for g, o in zip(gt_texts, texts) if g]
           for name, texts in (("a", a_texts), ("b", b_texts))}
    diffs = [x - y for x, y in zip(cer["a"], cer["b"])]
    assert d["n"] == 5 and math.isclose(d["mean_diff"], sum(diffs) / 5, rel_tol=1e-12)
    a_better, b_better = sum(x < 0 for x in diffs), sum(x > 0 for x in diffs)
    assert (d["n_lower"], d["n_higher"], d["n_equal"]) == (a_better, b_better, 5 - a_better - b_better) == (4, 0, 1)
    assert d["p_value"] == binomtest(a_better, a_better + b_better).pvalue == 0.125
    assert d["ci_low"] <= d["mean_diff"] <= d["ci_high"] < 0
    assert "better on 4" in out and "sign test p = 0.125" in out


def test_one_file_against_two_engines(capsys, tmp_path, pair_files):
    gt, ocr = pair_files["text"]
    other = write(tmp_path / "other.txt", "\n".join(GT_LINES))
    code, out, _ = run(capsys, "ocr-eval", gt, ocr, other, "--json", tmp_path / "o.json")
    assert code == 0
    data = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert [e["cer"] for e in data["engines"]][1] == 0
    assert data["comparisons"][0]["cer_difference"]["n"] == 1


def test_memory_stays_bounded_over_many_pages(tmp_path):
    """Peak traced memory of 100 pages is not ten times that of 10: pages are not held."""
    line = "Eine ganz gewöhnliche Zeile Text mit einigen Wörtern darin. " * 2
    for n in (10, 100):
        gt_dir, ocr_dir = tmp_path / f"gt{n}", tmp_path / f"ocr{n}"
        for k in range(n):
            write(gt_dir / f"{k:04d}.txt", line + str(k))
            write(ocr_dir / f"{k:04d}.txt", line.replace("e", "c") + str(k))
    peaks = {}
    for n in (10, 100):
        tracemalloc.start()
        result = ocr_evaluate.evaluate(str(tmp_path / f"gt{n}"), [str(tmp_path / f"ocr{n}")], metrics=("cer", "wer"))
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(result.engines[0].pages) == n
    assert peaks[100] < 2 * peaks[10] + 200_000


def test_errors_are_one_line_and_exit_2(capsys, tmp_path, pair_files):
    gt, ocr = pair_files["page"]
    bad = write(tmp_path / "broken.xml", "<PcGts><Page>")
    cases = [
        (("ocr-eval", tmp_path / "missing.xml", ocr), "missing.xml"),
        (("ocr-eval", gt, bad), "broken.xml"),
        (("ocr-eval", gt, tmp_path), "must be a file"),
        (("ocr-eval", gt, ocr, "--metrics", "cer,xyz"), "--metrics"),
        (("ocr-eval", gt, ocr, ocr), "twice"),
        (("ocr-eval", gt, ocr, "--open"), "--open needs --html"),
    ]
    for argv, needle in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "", argv
        assert err.count("\n") == 1 and err.startswith("scorekit: error:") and needle in err, err


@pytest.mark.parametrize("option", ["--json", "--html"])
def test_outputs_never_overwrite_inputs(capsys, tmp_path, pair_files, option):
    gt, ocr = pair_files["page"]
    before = ocr.read_bytes()
    code, _, err = run(capsys, "ocr-eval", gt, ocr, option, ocr)
    assert code == 2 and "is an input of this run" in err
    assert ocr.read_bytes() == before
    gt_dir, ocr_dir = make_folders(tmp_path / "f", {"a.txt": ("a", "a.txt", "b")})
    code, _, err = run(capsys, "ocr-eval", gt_dir, ocr_dir, option, ocr_dir / "a.txt")
    assert code == 2 and "is an input of this run" in err and (ocr_dir / "a.txt").read_text() == "b"


def test_open_shows_the_written_report(capsys, tmp_path, pair_files, monkeypatch):
    from scorekit import report

    opened = []
    monkeypatch.setattr(report, "open_in_browser", opened.append, raising=False)
    gt, ocr = pair_files["text"]
    assert run(capsys, "ocr-eval", gt, ocr, "--html", tmp_path / "r.html", "--open")[0] == 0
    assert opened == [str(tmp_path / "r.html")] and (tmp_path / "r.html").is_file()


def test_reading_order_robust_metrics_on_request(capsys, tmp_path):
    """Lines shuffled: CER and WER count the move, bow_wer is 0 and fca 1.0; the folder's fca is
    the pages' weighted by their ground-truth characters; without --metrics fca there is none."""
    shuffled = [GT_LINES[2], GT_LINES[0], GT_LINES[1]]
    gt_dir, ocr_dir = make_folders(tmp_path, {"a.txt": ("\n".join(GT_LINES), "a.txt", "\n".join(shuffled)),
                                              "b.txt": ("\n".join(GT_LINES[:2]), "b.txt", "\n".join(OCR_LINES[:2]))})
    assert run(capsys, "ocr-eval", gt_dir, ocr_dir, "--metrics", "cer,wer,bow,fca", "--json", tmp_path / "o.json")[0] == 0
    data = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    a, b = data["pages"]
    assert a["cer"] > 0.3 and a["wer"] > 0.3 and a["bow_wer"] == 0 and a["fca"] == 1.0
    assert 0 < b["fca"] < 1
    assert data["fca"] == (a["fca"] * a["n_characters"] + b["fca"] * b["n_characters"]) / (a["n_characters"] + b["n_characters"])
    assert data["bow_wer"] == round(b["bow_wer"] * b["n_words"]) / data["n_words"]
    assert run(capsys, "ocr-eval", gt_dir, ocr_dir, "--json", tmp_path / "p.json")[0] == 0
    data = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert "fca" not in data and "fca" not in data["pages"][0] and data["metrics"] == ["cer", "wer", "bow"]


def test_documented_examples():
    from tests.doc_examples import run_python_blocks

    assert run_python_blocks("ocr-eval.md", min_blocks=3) >= 15


def test_demo_scores_the_bundled_page_alto_pair(capsys, tmp_path):
    from scorekit.demo_report import OCR_EVAL_SAMPLE, demo_inputs

    gt, ocr = OCR_EVAL_SAMPLE / "page0001.gt.xml", OCR_EVAL_SAMPLE / "page0001.alto.xml"
    assert {gt, ocr} <= set(demo_inputs())
    theirs = dinglehopper_json(gt, ocr, tmp_path / "dh")
    code, out, _ = run(capsys, "demo", "--repeat", "1", "--html", tmp_path / "demo.html")
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("OCR files sample"))
    assert f"CER {theirs['cer']:.4f}, WER {theirs['wer']:.4f}," in line and "FCA" in line
    page = (tmp_path / "demo.html").read_text(encoding="utf-8")
    assert "OCR files sample · Totals" in page and "OCR files sample · page0001.gt.xml: CER" in page
    assert 'title="r2"' in page   # the diff shows the PAGE region ids on hover
    assert '<button type="button">FCA</button>' in page


def test_ocr_eval_loads_only_its_own_parser(pair_files):
    """A one-page run does not import the other subcommands' modules (they bring NumPy and the
    page kit: a third of a second per process)."""
    import subprocess
    import sys

    gt, ocr = pair_files["text"]
    code = ("import sys; from scorekit.cli import main; main(['ocr-eval', sys.argv[1], sys.argv[2]]); "
            "print(sorted(m for m in ('scorekit.ocr_pages.cli', 'scorekit.cases.cli', 'scorekit.flowcharts.cli') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(gt), str(ocr)], capture_output=True, text=True, check=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(Path(cli.__file__).parents[1])})
    assert done.stdout.splitlines()[-1] == "[]"
    assert cli.main(["ocr-eval", "--help"]) == 0 and cli.main(["cer", "a", "b"]) == 0   # the others still parse


def test_ocr_eval_json_of_a_page_imports_only_what_it_uses(pair_files, tmp_path):
    """``python -m scorekit ocr-eval GT OCR --json`` on a PAGE pair (a whole process) loads neither
    rapidfuzz (the word accuracy's LCS is a kernel of its own), nor the package's data model and
    canonicalisation (``scorekit/__init__`` imports them on first access), nor ``importlib.resources``
    (only the demo reads package data), nor the other subcommands; and it still scores the page."""
    import subprocess
    import sys

    gt, ocr = pair_files["page"]
    out = tmp_path / "out.json"
    unwanted = ("rapidfuzz", "scorekit.base", "scorekit.canonicalize", "importlib.resources", "scorekit.ocr_pages.cli",
                "scorekit.cases.cli", "scorekit.flowcharts.cli", "scorekit.facade")
    code = ("import runpy, sys\n"
            "sys.argv = ['scorekit', 'ocr-eval', sys.argv[1], sys.argv[2], '--json', sys.argv[3]]\n"
            "try:\n    runpy.run_module('scorekit', run_name='__main__', alter_sys=True)\n"
            "except SystemExit as e:\n    assert e.code == 0, e.code\n"
            f"print(sorted(m for m in {unwanted!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(gt), str(ocr), str(out)], capture_output=True, text=True,
                          check=True, env={**__import__("os").environ, "PYTHONPATH": str(Path(cli.__file__).parents[1])})
    assert done.stdout.splitlines()[-1] == "[]"
    assert json.loads(out.read_text(encoding="utf-8"))["n_characters"] > 0


@pytest.mark.parametrize("keep_diffs", [0, 1])
def test_alignment_runs_only_for_kept_diffs(pair_files, monkeypatch, keep_diffs):
    """Without a report the diff's runs are not built (confusions and classes come from the same
    edit script); with one they are."""
    from scorekit.ocr import metrics

    asked = []
    compare = metrics.compare_texts

    def spy(gt, ocr, metrics):
        asked.append(metrics)
        return compare(gt, ocr, metrics=metrics)

    monkeypatch.setattr(metrics, "compare_texts", spy)
    gt, ocr = pair_files["page"]
    evaluation = ocr_evaluate.evaluate(str(gt), [str(ocr)], keep_diffs=keep_diffs)
    assert len(asked) == 1
    assert ("alignment" in asked[0], "confusions" in asked[0]) == ((True, False) if keep_diffs else (False, True))
    totals = evaluation.engines[0]
    assert totals.confusions and totals.char_classes["letters"][0] > 0
    assert [alignment is not None for _, _, _, alignment, _, _ in totals.worst] == [True] * keep_diffs


@pytest.mark.parametrize("preset", [None, "3"])
def test_ocr_eval_starts_no_blas_thread_pool(pair_files, preset):
    """NumPy's OpenBLAS pool (CPU time on every start, no use to ocr-eval) is held to one thread
    when NumPy is first loaded by the run, and a count the user set is left as it is."""
    import os
    import subprocess
    import sys

    gt, ocr = pair_files["text"]
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    code = ("import os, sys; from scorekit.cli import main; main(['ocr-eval', sys.argv[1], sys.argv[2]]); "
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))")
    done = subprocess.run([sys.executable, "-c", code, str(gt), str(ocr)], capture_output=True, text=True, check=True,
                          env={**env, "PYTHONPATH": str(Path(cli.__file__).parents[1])})
    assert done.stdout.splitlines()[-1] == (preset or "1")


PAGE_TEXT = st.text(alphabet="abc ÄÖ.,1\n\u0301", max_size=40)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(PAGE_TEXT, PAGE_TEXT), min_size=1, max_size=5))
def test_folder_totals_are_the_pages_counts_summed(pages):
    """Property: a folder run's pages are the single-file runs of its pairs, its totals their counts
    summed (edits over length), and each page's counts those of the grapheme oracle on the read text."""
    import tempfile

    from scorekit.ocr import read

    with tempfile.TemporaryDirectory() as tmp:
        gt_dir, ocr_dir = Path(tmp, "gt"), Path(tmp, "ocr")
        for k, (g, o) in enumerate(pages):
            write(gt_dir / f"{k}.gt.txt", g)
            write(ocr_dir / f"{k}.ocr.txt", o)
        folder = ocr_evaluate.evaluate(str(gt_dir), [str(ocr_dir)]).engines[0]
        singles = [ocr_evaluate.evaluate(str(gt_dir / f"{k}.gt.txt"), [str(ocr_dir / f"{k}.ocr.txt")]).engines[0]
                   for k in range(len(pages))]
        for k, (page, single) in enumerate(zip(folder.pages, singles)):
            fields = ("n_characters", "char_edits", "n_words", "word_edits", "bow_wer", "word_accuracy")
            assert [getattr(page, f) for f in fields] == [getattr(single.pages[0], f) for f in fields]
            edits, length = char_edits(read(gt_dir / f"{k}.gt.txt").text, read(ocr_dir / f"{k}.ocr.txt").text)
            assert (page.char_edits, page.n_characters) == (edits, length)
        for field in ("n_characters", "char_edits", "n_words", "word_edits", "bow_edits", "word_hits"):
            assert getattr(folder, field) == sum(getattr(s, field) for s in singles), field
        summary = folder.summary()
        n = folder.n_characters
        assert summary["cer"] == (folder.char_edits / n if n and folder.char_edits else
                                  (math.inf if folder.char_edits else 0))


def test_fca_on_a_page_above_the_size_guard_stops_with_one_line(capsys, tmp_path):
    """A page with more line pairs than fca's MAX_LINE_PAIRS (501 × 500): exit 2 naming the page and
    the limit, no output written, no fca left out of the totals; without fca the pages score."""
    gt_dir, ocr_dir = make_folders(tmp_path, {"a.txt": ("abc\ndef", "a.txt", "abc\ndef"),
                                              "b.txt": ("x y\n" * 501, "b.txt", "x z\n" * 500)})
    code, out, err = run(capsys, "ocr-eval", gt_dir, ocr_dir, "--metrics", "cer,fca", "--json", tmp_path / "o.json")
    assert code == 2 and out == "" and not (tmp_path / "o.json").exists()
    assert err.count("\n") == 1 and "page b.txt" in err and "501 ground-truth lines × 500 OCR lines" in err
    assert "MAX_LINE_PAIRS=250,000" in err and "leave fca out of --metrics" in err
    code, out, err = run(capsys, "ocr-eval", gt_dir, ocr_dir, "--metrics", "cer", "--json", tmp_path / "o.json")
    assert code == 0 and err == ""
