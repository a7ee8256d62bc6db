"""The OCR-page command line end to end on a synthetic dataset built in tmp_path: converter,
measure, variants, overall, ``scorekit ocr-pages …``, ``python -m``, exit codes, error lines,
untouched inputs and the HTML report."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scorekit import cli as scorekit_cli
from scorekit.ocr_pages import aggregate_reports, evaluate_rows, load_annotation_boxes, load_predicted_rows, report_to_json
from scorekit.ocr_pages import convert_predictions_to_evaluation_csv as convert
from scorekit.ocr_pages.evaluation import generate_accuracy_report_variants as variants
from scorekit.ocr_pages.evaluation import measure_accuracy as measure
from scorekit.ocr_pages.evaluation import measure_overall_accuracy as overall

PYTHON_DIR = str(Path(convert.__file__).resolve().parents[2])


def ls_task(boxes):
    """A Label Studio task on a 1000×1000 image from ``(id, label, (x1, y1, x2, y2), text)``."""
    result = []
    for id_, label, (x1, y1, x2, y2), text in boxes:
        geo = {"x": x1 / 10, "y": y1 / 10, "width": (x2 - x1) / 10, "height": (y2 - y1) / 10}
        common = {"id": id_, "original_width": 1000, "original_height": 1000}
        result.append(dict(common, type="rectanglelabels", value=dict(geo, rectanglelabels=[label])))
        if text is not None:
            result.append(dict(common, type="textarea", value=dict(geo, text=[text])))
    return {"annotations": [{"result": result}]}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def dataset(tmp_path):
    """p1: two words of one line with distinct group_rows (a split line), a headline (header
    filter), a Latin paragraph (non-armenian filter) and a watermark; p2: a perfect page; p3:
    annotations only; p4: predictions only."""
    ann, pred = tmp_path / "ann", tmp_path / "pred"
    write(ann / "p1.json", ls_task([("b1", "Paragraph", (0, 0, 500, 100), "բարև աշխարհ"),
                                    ("b2", "Headline", (0, 200, 500, 300), "Լուր"),
                                    ("b3", "Paragraph", (0, 400, 500, 500), "Hello world")]))
    write(ann / "p2.json", ls_task([("c1", "Paragraph", (100, 100, 600, 200), "մեկ երկու")]))
    write(ann / "p3.json", ls_task([("d1", "Paragraph", (0, 0, 100, 100), "ոչինչ")]))
    write(pred / "p1.json", [{"box": [10, 10, 200, 40], "text": "բարեվ"}, {"box": [220, 10, 400, 40], "text": "աշխարհ"},
                             {"box": [10, 210, 100, 240], "text": "Լոր"}, {"box": [10, 410, 150, 440], "text": "Hallo"},
                             {"box": [160, 410, 300, 440], "text": "world"},
                             {"box": [600, 600, 900, 650], "text": "OCR by PortMind"}])
    write(pred / "p2.json", {"predictions": [{"bbox": [110, 110, 300, 150], "text": "մեկ"},
                                             {"box": [310, 110, 500, 150], "text": "երկու"}]})
    write(pred / "p4.json", [{"box": [0, 0, 1, 1], "text": "x"}])
    return tmp_path


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def expected_pages(root: Path, stems, filters=(), unit_level="word"):
    reports = []
    for stem in stems:
        rows, dropped = load_predicted_rows(root / "csv" / f"{stem}.csv", unit_level)
        reports.append(evaluate_rows(load_annotation_boxes(root / "ann" / f"{stem}.json"), rows, page_id=stem,
                                     unit_level=unit_level, filters=filters, dropped_words=dropped))
    return reports


def converted(root: Path, capsys) -> Path:
    assert convert.main(["--predictions-dir", str(root / "pred"), "--output-dir", str(root / "csv")]) == 0
    assert capsys.readouterr().out == f"converted 3 files (9 items, 0 skipped) -> {root / 'csv'}\n"
    return root / "csv"


# ------------------------------------------------------------------------------------ convert
def test_convert_c1_bytes_and_line(tmp_path, capsys, monkeypatch):
    # the ocr-pages test vectors, converter case C1
    write(tmp_path / "in" / "page1.json",
          [{"box": [10, 20, 110.5, 40], "text": "Բարև, աշխարհ"}, {"box": [10, 50, 60, 70], "text": ""},
           {"box": [5, 5, 6, 6]}, {"text": "no box"}, {"bbox": [[1, 2], [9, 2], [9, 8], [1, 8]], "text": 'say "hi"'}])
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path / "in")
    assert convert.main(["--predictions-dir", "in", "--output-dir", "out", "--unit-level", "line"]) == 0
    assert capsys.readouterr().out == "converted 1 files (4 items, 1 skipped) -> out\n"
    assert (tmp_path / "out" / "page1.csv").read_bytes() == (
        'x1,y1,x2,y2,group_row,text\n10,20,110.5,40,0,"Բարև, աշխարհ"\n10,50,60,70,1,\n5,5,6,6,2,\n'
        '1,2,9,8,3,"say ""hi"""\n').encode("utf-8")
    assert snapshot(tmp_path / "in") == before
    assert sorted(os.listdir(tmp_path / "out")) == ["page1.csv"]


def test_convert_bad_file_is_skipped_with_exit_1(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.json").write_text("[{", encoding="utf-8")
    write(tmp_path / "in" / "b.json", [{"box": [0, 0, 2, 2], "text": "t"}])
    write(tmp_path / "in" / "c.json", {"not": "a list"})
    code = convert.main(["--predictions-dir", str(tmp_path / "in"), "--output-dir", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 2 and all(line.startswith("ocr-pages-convert: error: ") for line in lines)
    assert "a.json" in lines[0] and "malformed JSON" in lines[0] and "c.json" in lines[1]
    assert out.startswith("converted 1 files (1 items, 0 skipped)")
    assert sorted(os.listdir(tmp_path / "out")) == ["b.csv"]


def test_convert_nothing_to_do(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert convert.main(["--predictions-dir", str(tmp_path / "empty"), "--output-dir", str(tmp_path / "o")]) == 1
    assert capsys.readouterr().err.count("error:") == 1
    assert convert.main(["--output-dir", str(tmp_path / "o")]) == 2  # usage: a required flag is missing


# ------------------------------------------------------------------------------------ measure
def test_measure_equals_evaluate_rows_and_hand_cer(dataset, capsys):
    csv_dir = converted(dataset, capsys)
    args = ["--annotations-json", str(dataset / "ann" / "p1.json"), "--predictions-csv", str(csv_dir / "p1.csv")]
    assert measure.main(args) == 0
    printed = capsys.readouterr().out
    assert printed == report_to_json(expected_pages(dataset, ["p1"])[0])
    page = json.loads(printed)
    s = page["summary"]
    # hand-computed: բարև→բարեվ 2 edits (11 chars), Լուր→Լոր 1 (4), Hello→Hallo 1 (11)
    assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"]) == (4, 26)
    assert s["ocr_region_cer"] == 4 / 26
    assert s["watermark_words_removed"] == 1 and s["row_status_counts"]["split_line"] == 2
    assert s["split_line_fragments"] == 4 and s["variant"] == "no_filter"
    # an ad-hoc filter set is "custom"; the header filter drops the headline: (2 + 1) / (11 + 11)
    out = dataset / "res" / "p1.json"
    out.parent.mkdir()
    assert measure.main(args + ["--filter", "header", "--output", str(out), "--page-id", "P"]) == 0
    assert capsys.readouterr().out == f"custom: cer={3 / 22:.4f} (1 pages) -> {out}\n"
    rep = json.loads(out.read_text(encoding="utf-8"))
    assert rep["summary"]["ocr_region_cer"] == 3 / 22 and rep["pages"][0]["page_id"] == "P"
    assert rep == json.loads(report_to_json(expected_pages(dataset, ["p1"], "header")[0]).replace('"p1"', '"P"'))


def test_measure_errors(dataset, capsys):
    csv_dir = converted(dataset, capsys)
    ann = str(dataset / "ann" / "p1.json")
    bad_json = dataset / "bad.json"
    bad_json.write_text('{"annotations": [', encoding="utf-8")
    bad_csv = dataset / "bad.csv"
    bad_csv.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    cases = [
        (["--annotations-json", str(dataset / "nope.json"), "--predictions-csv", str(csv_dir / "p1.csv")], 1, "nope.json"),
        (["--annotations-json", str(bad_json), "--predictions-csv", str(csv_dir / "p1.csv")], 1, "bad.json"),
        (["--annotations-json", ann, "--predictions-csv", str(bad_csv)], 1, "bad.csv"),
        (["--annotations-json", ann, "--predictions-csv", str(csv_dir / "p1.csv"), "--filter", "bogus"], 2, "bogus"),
        (["--annotations-json", ann, "--predictions-csv", str(csv_dir / "p1.csv"), "--coverage-threshold", "0"], 2, "(0, 1]"),
        (["--annotations-json", ann, "--predictions-csv", str(csv_dir / "p1.csv"), "--output", ann], 2, "input"),
    ]
    before = snapshot(dataset)
    for argv, code, named in cases:
        assert measure.main(argv) == code, argv
        out, err = capsys.readouterr()
        error_lines = [line for line in err.splitlines() if "error:" in line]
        assert len(error_lines) == 1 and named in error_lines[0], err
        assert out == ""
    assert snapshot(dataset) == before


def test_measure_reads_the_page_task_of_a_label_studio_export(dataset, capsys):
    """Issue 30 item 2: an export of every task is scored against the CSV's task, not the first."""
    csv_dir = converted(dataset, capsys)
    tasks = [dict(json.loads((dataset / "ann" / f"{stem}.json").read_text(encoding="utf-8")), id=k,
                  data={"image": f"/data/upload/3/0a1b2c3d-{stem}.png"}) for k, stem in enumerate(["p1", "p2"], 1)]
    export = write(dataset / "export" / "project.json", tasks)
    expected = report_to_json(expected_pages(dataset, ["p2"])[0])
    assert measure.main(["--annotations-json", str(export), "--predictions-csv", str(csv_dir / "p2.csv")]) == 0
    assert capsys.readouterr().out == expected
    assert json.loads(expected)["summary"]["ocr_region_cer"] == 0.0
    # --page-id names the task (and the page in the report) whatever the CSV is called
    renamed = csv_dir / "scan.csv"
    renamed.write_bytes((csv_dir / "p2.csv").read_bytes())
    assert measure.main(["--annotations-json", str(export), "--predictions-csv", str(renamed), "--page-id", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["ocr_region_cer"] == 0.0
    # no task for the page: one error line listing the tasks, nothing scored
    assert measure.main(["--annotations-json", str(export), "--predictions-csv", str(renamed)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "2 Label Studio tasks and none matches page 'scan'" in err and "task 1: '2', '0a1b2c3d-p2', 'p2'" in err
    # variants reads each page's task from the same export copied beside it
    (dataset / "ann" / "p1.json").write_bytes(export.read_bytes())
    (dataset / "ann" / "p2.json").write_bytes(export.read_bytes())
    renamed.unlink()
    out_dir = dataset / "results"
    assert variants.main(["--predictions-dir", str(csv_dir), "--annotations-dir", str(dataset / "ann"),
                          "--output-dir", str(out_dir), "--variant", "no_filter"]) == 0
    s = json.loads((out_dir / "accuracy_report_no_filter.json").read_text(encoding="utf-8"))["summary"]
    assert s["ocr_region_cer"] == 4 / 35


# ----------------------------------------------------------------------------------- variants
def test_variants_equal_library_and_keep_inputs(dataset, capsys):
    csv_dir = converted(dataset, capsys)
    before = snapshot(dataset)
    out = dataset / "results"
    argv = ["--predictions-dir", str(csv_dir), "--annotations-dir", str(dataset / "ann"), "--output-dir", str(out),
            "--progress", "always"]
    assert variants.main(argv) == 0
    stdout, stderr = capsys.readouterr()
    assert "2/2 pages" in stderr and "1 annotation files have no predictions CSV" in stderr
    assert "1 predictions CSVs match no annotation file" in stderr
    lines = stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == list(variants.REPORT_VARIANTS)
    for name, filters in variants.REPORT_VARIANTS.items():
        path = out / f"accuracy_report_{name}.json"
        report = json.loads(path.read_text(encoding="utf-8"))
        info = report.pop("run_info")
        assert list(json.loads(path.read_text(encoding="utf-8")))[:3] == ["schema_version", "kind", "run_info"]
        want = aggregate_reports(expected_pages(dataset, ["p1", "p2"], filters), variant=name)
        assert report == json.loads(report_to_json(want))
        assert info["missing_prediction_pages"] == ["p3"] and info["unmatched_prediction_files"] == ["p4"]
        assert info["predictions_dir"] == str(csv_dir) and info["annotations_dir"] == str(dataset / "ann")
        assert f"{name}: cer={report['summary']['ocr_region_cer']:.4f} (2 pages) -> {path}" in lines
    # hand-computed corpus CER: p2 is perfect (մեկ երկու, 9 characters) and adds to the denominator
    s = json.loads((out / "accuracy_report_no_filter.json").read_text(encoding="utf-8"))["summary"]
    assert s["ocr_region_cer"] == 4 / 35
    s = json.loads((out / "accuracy_report_all_filters.json").read_text(encoding="utf-8"))["summary"]
    assert s["ocr_region_cer"] == 2 / 20
    assert snapshot(dataset) == dict(before, **{k: v for k, v in snapshot(dataset).items() if k.startswith("results")})
    assert sorted(os.listdir(out)) == sorted(f"accuracy_report_{v}.json" for v in variants.REPORT_VARIANTS)


def test_variants_nothing_matched(dataset, capsys):
    assert variants.main(["--predictions-dir", str(dataset / "pred"), "--annotations-dir", str(dataset / "nope"),
                          "--output-dir", str(dataset / "o")]) == 1
    assert capsys.readouterr().err.count("error:") == 1
    empty = dataset / "emptycsv"
    empty.mkdir()
    assert variants.main(["--predictions-dir", str(empty), "--annotations-dir", str(dataset / "ann"),
                          "--output-dir", str(dataset / "o"), "--progress", "never"]) == 1
    assert not (dataset / "o").exists()
    assert variants.main(["--predictions-dir", str(empty), "--annotations-dir", str(dataset / "ann"),
                          "--output-dir", str(dataset / "o"), "--variant", "nope"]) == 2


# ------------------------------------------------------------------------------------ overall
def test_overall_equals_aggregate(dataset, capsys):
    csv_dir = converted(dataset, capsys)
    paths = []
    for stem in ("p1", "p2"):
        path = dataset / f"page_{stem}.json"
        assert measure.main(["--annotations-json", str(dataset / "ann" / f"{stem}.json"),
                             "--predictions-csv", str(csv_dir / f"{stem}.csv"), "--output", str(path)]) == 0
        paths.append(str(path))
    capsys.readouterr()
    out = dataset / "all.json"
    assert overall.main(["--reports", *paths, "--output", str(out)]) == 0
    assert capsys.readouterr().out == f"no_filter: cer={4 / 35:.4f} (2 pages) -> {out}\n"
    report = json.loads(out.read_text(encoding="utf-8"))
    report.pop("run_info")
    assert report == json.loads(report_to_json(aggregate_reports(expected_pages(dataset, ["p1", "p2"]))))
    # a duplicated page, a malformed report and a missing one: exit 1, one error line naming the files
    bad = dataset / "bad.json"
    bad.write_text("{", encoding="utf-8")
    # a page report whose regions were cut: its page used to count with none of its errors
    cut = write(dataset / "cut.json", {k: v for k, v in json.loads(Path(paths[0]).read_text(encoding="utf-8")).items()
                                       if k != "regions"})
    # a region without its CER: a raw KeyError traceback before
    keyless = json.loads(Path(paths[0]).read_text(encoding="utf-8"))
    keyless["regions"] = [{k: v for k, v in r.items() if k != "cer"} for r in keyless["regions"]]
    keyless = write(dataset / "keyless.json", keyless)
    for argv, named in ((["--reports", paths[0], paths[0]], paths[0]), (["--reports", str(bad)], "bad.json"),
                        (["--reports", str(dataset / "gone.json")], "gone.json"),
                        (["--reports", paths[1], str(cut)], "no 'pages' and 'regions' lists"),
                        (["--reports", str(keyless)], "KeyError: 'cer'")):
        assert overall.main(argv + ["--output", str(dataset / "x.json")]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "ocr-pages-overall: error:" in err and named in err
    assert not (dataset / "x.json").exists()


# ----------------------------------------------------------------------------------------- HTML
def test_html_report(dataset, capsys):
    csv_dir = converted(dataset, capsys)
    html_path = dataset / "report.html"
    assert variants.main(["--predictions-dir", str(csv_dir), "--annotations-dir", str(dataset / "ann"),
                          "--output-dir", str(dataset / "res"), "--html", str(html_path)]) == 0
    page = html_path.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "default-src" in page and "unsafe-inline" not in page
    assert "p1" in page and "p2" in page and "Most frequent character confusions" in page
    assert "http://" not in page and "https://" not in page
    assert "page p1 · region" in page and "page p2 · region" not in page  # only pages with errors get a diff
    # single page, through measure
    one = dataset / "one.html"
    assert measure.main(["--annotations-json", str(dataset / "ann" / "p1.json"), "--predictions-csv",
                         str(csv_dir / "p1.csv"), "--html", str(one)]) == 0
    assert "Content-Security-Policy" in one.read_text(encoding="utf-8")
    # an HTML path over an input is refused
    assert measure.main(["--annotations-json", str(dataset / "ann" / "p1.json"), "--predictions-csv",
                         str(csv_dir / "p1.csv"), "--html", str(csv_dir / "p1.csv")]) == 2
    assert (csv_dir / "p1.csv").read_text(encoding="utf-8").startswith("x1,y1")


# ----------------------------------------------------------------------- outputs never over inputs
def plant(kind: str, source: Path, at: Path) -> Path:
    """``at`` made the input ``source`` itself, a symbolic link to it or a hard link of it."""
    if kind == "same":
        return source
    at.parent.mkdir(parents=True, exist_ok=True)
    (at.symlink_to if kind == "symlink" else at.hardlink_to)(source)
    return at


def writing_commands(root: Path, csv_dir: Path, kind: str):
    """``(name, main, argv, input)`` of every writing ocr-pages command with one output planted on one
    of its inputs (a file output: the input, a link to it or a hard link of it; a file an output
    folder will hold: a link or a hard link)."""
    ann, csv, page = root / "ann" / "p1.json", csv_dir / "p1.csv", root / "page_p1.json"
    links = root / "links"
    measure_in = ["--annotations-json", str(ann), "--predictions-csv", str(csv)]
    pair_in = ["--predictions-dir", str(csv_dir), "--annotations-dir", str(root / "ann")]
    cases = [
        ("measure --output", measure.main, measure_in + ["--output", str(plant(kind, ann, links / "o.json"))], ann),
        ("measure --html", measure.main, measure_in + ["--html", str(plant(kind, csv, links / "o.html"))], csv),
        ("variants --html", variants.main,
         pair_in + ["--output-dir", str(root / "res1"), "--html", str(plant(kind, ann, links / "v.html"))], ann),
        ("overall --output", overall.main, ["--reports", str(page), "--output", str(plant(kind, page, links / "a.json"))],
         page),
        ("overall --html", overall.main, ["--reports", str(page), "--output", str(root / "all.json"),
                                          "--html", str(plant(kind, page, links / "a.html"))], page),
    ]
    if kind != "same":  # the files an output folder will hold
        cases += [
            ("convert --output-dir", convert.main, ["--predictions-dir", str(root / "pred"), "--output-dir",
                                                     str(plant(kind, root / "pred" / "p1.json", root / "c" / "p1.csv").parent)],
             root / "pred" / "p1.json"),
            ("variants --output-dir", variants.main, pair_in + ["--output-dir", str(
                plant(kind, csv, root / "res2" / "accuracy_report_all_filters.json").parent)], csv),
        ]
    return cases


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink"])
def test_output_on_an_input_is_refused_before_any_work(dataset, capsys, kind):
    """Issue 30 item 12: each writing command, an output that is an input, a link to it or a hard link
    of it: exit 2, one error line, every input unchanged, nothing written."""
    csv_dir = converted(dataset, capsys)
    assert measure.main(["--annotations-json", str(dataset / "ann" / "p1.json"), "--predictions-csv",
                         str(csv_dir / "p1.csv"), "--output", str(dataset / "page_p1.json")]) == 0
    capsys.readouterr()
    cases = writing_commands(dataset, csv_dir, kind)
    before = snapshot(dataset)
    for name, main, argv, source in cases:
        assert main(argv) == 2, name
        out, err = capsys.readouterr()
        errors = [line for line in err.splitlines() if "error:" in line]
        assert out == "" and len(errors) == 1 and "outputs never overwrite inputs" in errors[0], (name, err)
        assert repr(str(source)) in errors[0], (name, err)
    assert snapshot(dataset) == before
    assert not (dataset / "res1").exists() and not (dataset / "all.json").exists()
    if kind != "same":
        assert sorted(os.listdir(dataset / "c")) == ["p1.csv"] and (dataset / "c" / "p1.csv").samefile(
            dataset / "pred" / "p1.json")


def test_outputs_of_one_run_never_share_a_path(dataset, capsys):
    csv_dir = converted(dataset, capsys)
    same = dataset / "r.json"
    args = ["--annotations-json", str(dataset / "ann" / "p1.json"), "--predictions-csv", str(csv_dir / "p1.csv")]
    assert measure.main(args + ["--output", str(same), "--html", str(same)]) == 2
    assert "each output needs its own path" in capsys.readouterr().err and not same.exists()
    out = dataset / "res"
    assert variants.main(["--predictions-dir", str(csv_dir), "--annotations-dir", str(dataset / "ann"),
                          "--output-dir", str(out), "--html", str(out / "accuracy_report_no_filter.json")]) == 2
    assert "each output needs its own path" in capsys.readouterr().err
    assert not out.exists()  # the folder the refused run created is removed again


# ------------------------------------------------------------------------ scorekit / python -m
def run_module(*argv, cwd):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_python_m_and_scorekit_subcommand(dataset, capsys):
    done = run_module("scorekit.ocr_pages.convert_predictions_to_evaluation_csv", "--predictions-dir", "pred",
                      "--output-dir", "csv", cwd=dataset)
    assert done.returncode == 0 and done.stdout == "converted 3 files (9 items, 0 skipped) -> csv\n"
    done = run_module("scorekit.ocr_pages.evaluation.generate_accuracy_report_variants", "--predictions-dir", "csv",
                      "--annotations-dir", "ann", "--output-dir", "res", "--variant", "no_filter", cwd=dataset)
    assert done.returncode == 0
    assert done.stdout == f"no_filter: cer={4 / 35:.4f} (2 pages) -> res/accuracy_report_no_filter.json\n"
    assert "2/2 pages" not in done.stderr  # stderr is not a terminal
    done = run_module("scorekit.ocr_pages.evaluation.measure_accuracy", "--annotations-json", "ann/p1.json",
                      "--predictions-csv", "csv/p1.csv", "--output", "p1.json", cwd=dataset)
    assert done.returncode == 0, done.stderr
    done = run_module("scorekit.ocr_pages.evaluation.measure_overall_accuracy", "--reports", "p1.json",
                      "--output", "all.json", cwd=dataset)
    assert done.returncode == 0 and done.stdout == f"no_filter: cer={4 / 26:.4f} (1 pages) -> all.json\n"
    done = run_module("scorekit", "ocr-pages", "measure", "--annotations-json", "ann/p1.json",
                      "--predictions-csv", "missing.csv", cwd=dataset)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("scorekit ocr-pages measure: error:")
    assert "missing.csv" in done.stderr
    # in-process through the scorekit dispatcher
    assert scorekit_cli.main(["ocr-pages", "measure", "--annotations-json", str(dataset / "ann" / "p2.json"),
                              "--predictions-csv", str(dataset / "csv" / "p2.csv")]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["ocr_region_cer"] == 0.0
    assert scorekit_cli.main(["ocr-pages", "variants", "--predictions-dir", "x"]) == 2


def test_messages_name_the_program_the_user_typed(dataset, capsys):
    """Under ``scorekit ocr-pages …`` warnings and per-file errors name that command, not the module's
    own console script."""
    (dataset / "pred" / "bad.json").write_text("[{", encoding="utf-8")
    assert scorekit_cli.main(["ocr-pages", "convert", "--predictions-dir", str(dataset / "pred"),
                              "--output-dir", str(dataset / "csv")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("scorekit ocr-pages convert: error: ") and "bad.json" in err
    assert scorekit_cli.main(["ocr-pages", "variants", "--predictions-dir", str(dataset / "csv"), "--annotations-dir",
                              str(dataset / "ann"), "--output-dir", str(dataset / "res")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["scorekit ocr-pages variants: warning: 1 annotation files have no predictions CSV",
                   "scorekit ocr-pages variants: warning: 1 predictions CSVs match no annotation file"]
    assert variants.main(["--predictions-dir", str(dataset / "csv"), "--annotations-dir", str(dataset / "ann"),
                          "--output-dir", str(dataset / "res2")]) == 0
    assert capsys.readouterr().err.startswith("ocr-pages-variants: warning: 1 annotation")


#: Names of the code that a command line user has no use for.
INTERNAL_NAMES = ("evaluate_rows", "aggregate_reports", "REPORT_VARIANTS", "load_hf_pages", "HfPage",
                  "score_variants", "write_variant_reports", "canonical_filters")


@pytest.mark.parametrize("command", ["convert", "measure", "variants", "overall", "evaluate-hf"])
def test_help_is_plain_text(command, capsys):
    from scorekit.ocr_pages import cli as ocr_cli

    module = importlib.import_module(ocr_cli.COMMANDS[command])
    for run in (lambda: scorekit_cli.main(["ocr-pages", command, "--help"]), lambda: module.main(["--help"])):
        assert run() == 0
        text = capsys.readouterr().out
        assert "usage:" in text and "--help" in text
        assert "``" not in text and ":func:" not in text and not [n for n in INTERNAL_NAMES if n in text], text
    assert scorekit_cli.main(["ocr-pages", "--help"]) == 0
    listing = capsys.readouterr().out
    assert "``" not in listing and command in listing


def test_html_report_in_headless_browser(dataset, capsys, tmp_path):
    """The run report loads in chromium under its CSP: the script runs, no console message, no
    request leaves the page, and a screenshot shows drawn content (the browser helpers of the
    report tests)."""
    import shutil
    import struct

    from test_report_browser import _png_rows, _problems, _run

    browser = shutil.which("chromium")
    if browser is None:
        pytest.fail("the OCR report browser check needs Debian's chromium on PATH")
    csv_dir = converted(dataset, capsys)
    html_path = dataset / "report.html"
    assert variants.main(["--predictions-dir", str(csv_dir), "--annotations-dir", str(dataset / "ann"),
                          "--output-dir", str(dataset / "res"), "--html", str(html_path)]) == 0
    dom, stderr, requests = _run(browser, html_path, tmp_path / "dom", "--dump-dom")
    assert 'data-script-ran="1"' in dom and "p1" in dom
    assert _problems(stderr) == []
    assert [url for url in requests if url != html_path.as_uri()] == [], requests
    _, stderr, requests = _run(browser, html_path, tmp_path / "shot", "--screenshot=" + str(tmp_path / "shot.png"),
                               "--window-size=1200,900")
    assert _problems(stderr) == [] and [url for url in requests if url != html_path.as_uri()] == []
    png = (tmp_path / "shot.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1200, 900)
    assert len(set(_png_rows(png))) > 50   # drawn content, not a blank page


def test_cer_unit_grapheme_on_measure_and_variants(tmp_path, capsys):
    """``--cer-unit grapheme``: नमस्ते (6 code points, 3 clusters) read as नमस्त, one edit either
    way, so the page CER is 1/6 by default and 1/3 in clusters; the reports say which."""
    write(tmp_path / "ann" / "d.json", ls_task([("b", "Paragraph", (0, 0, 500, 100), "नमस्ते")]))
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    (csv_dir / "d.csv").write_text("x1,y1,x2,y2,group_row,text\n10,10,200,40,0,नमस्त\n", encoding="utf-8")
    args = ["--annotations-json", str(tmp_path / "ann" / "d.json"), "--predictions-csv", str(csv_dir / "d.csv")]
    for extra, unit, cer in (([], "char", 1 / 6), (["--cer-unit", "grapheme"], "grapheme", 1 / 3)):
        assert measure.main(args + extra) == 0
        s = json.loads(capsys.readouterr().out)["summary"]
        assert (s["cer_unit"], s["ocr_region_cer"], s["ocr_region_gt_char_count"]) == (unit, cer, round(1 / cer))
    out = tmp_path / "res"
    assert variants.main(["--predictions-dir", str(csv_dir), "--annotations-dir", str(tmp_path / "ann"),
                          "--output-dir", str(out), "--variant", "no_filter", "--cer-unit", "grapheme"]) == 0
    assert capsys.readouterr().out == f"no_filter: cer={1 / 3:.4f} (1 pages) -> {out / 'accuracy_report_no_filter.json'}\n"
    s = json.loads((out / "accuracy_report_no_filter.json").read_text(encoding="utf-8"))["summary"]
    assert (s["cer_unit"], s["ocr_region_cer"]) == ("grapheme", 1 / 3)
    assert measure.main(args + ["--cer-unit", "glyph"]) == 2
    assert "invalid choice: 'glyph'" in capsys.readouterr().err
