"""``ocr-pages-evaluate-hf`` and ``load_hf_pages`` on small parquet datasets written here: source
resolution, splits and the split-column filter, missing and unmatched CSVs, ``--workers``, exit
codes and error lines, untouched inputs, the pyarrow reading when ``datasets`` is missing, and the
``datasets`` calls (through a stand-in module, and the real package when it is installed)."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from scorekit import cli as scorekit_cli  # noqa: E402
from scorekit.ocr_pages import (HfPage, aggregate_reports, annotation_boxes_from_records, evaluate_rows,  # noqa: E402
                                load_hf_pages, load_predicted_rows, report_to_json)
from scorekit.ocr_pages import evaluate_from_hf as hf  # noqa: E402
from scorekit.ocr_pages.evaluation.reports import REPORT_VARIANTS  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64  # the image column's bytes: never read


def box(id_, label, bbox, text, **kw):
    return {"id": id_, "label": label, "transcription": text, "reading_order": kw.get("reading_order"),
            "parent_id": kw.get("parent_id"), "bbox": [float(v) for v in bbox], "rotation": float(kw.get("rotation", 0.0))}


#: p1: a split line (two words, two group_rows), a headline, a Latin paragraph and a watermark;
#: p2: a perfect page; p3: no CSV; the CSV p4 matches no page. Hand-computed: p1 4 edits / 26 GT
#: characters (բարև→բարեվ 2, Լուր→Լոր 1, Hello→Hallo 1); p2 0 / 9; p3 5 / 5 (all deleted).
PAGES = {
    "p1": [box("b1", "Paragraph", (0, 0, 500, 100), "բարև աշխարհ"), box("b2", "Headline", (0, 200, 500, 300), "Լուր"),
           box("b3", "Paragraph", (0, 400, 500, 500), "Hello world"), box("r", "Rule", (0, 350, 500, 352), None)],
    "p2": [box("c1", "Paragraph", (100, 100, 600, 200), "մեկ երկու")],
    "p3": [box("d1", "Paragraph", (0, 0, 100, 100), "ոչինչ")],
    "t1": [box("e1", "Paragraph", (0, 0, 100, 100), "մեկ")],
}
CSVS = {
    "p1": [(10, 10, 200, 40, "բարեվ"), (220, 10, 400, 40, "աշխարհ"), (10, 210, 100, 240, "Լոր"),
           (10, 410, 150, 440, "Hallo"), (160, 410, 300, 440, "world"), (600, 600, 900, 650, "OCR by PortMind")],
    "p2": [(110, 110, 300, 150, "մեկ"), (310, 110, 500, 150, "երկու")],
    "p4": [(0, 0, 1, 1, "x")],
}


def row(page_id, split, annotations=None):
    return {"page_id": page_id, "source": f"newspaper {page_id}", "split": split,
            "image": {"bytes": PNG, "path": None}, "image_width": 1000, "image_height": 1000,
            "annotations": PAGES[page_id] if annotations is None else annotations}


def write_parquet(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_csv(path: Path, words) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["x1", "y1", "x2", "y2", "group_row", "text"])
        for k, (x1, y1, x2, y2, text) in enumerate(words):
            w.writerow([x1, y1, x2, y2, k, text])
    return path


@pytest.fixture
def shards(tmp_path):
    """A folder of parquet shards: split test in two files (p1, p2 | p3), split train (t1); the
    ``split`` column holds the manifest split (p1, p2 pilot; p3, t1 main). CSVs p1, p2, p4."""
    data = tmp_path / "data"
    write_parquet(data / "test-00000-of-00002.parquet", [row("p1", "pilot"), row("p2", "pilot")])
    write_parquet(data / "sub" / "test-00001-of-00002.parquet", [row("p3", "main")])
    write_parquet(data / "train-00000-of-00001.parquet", [row("t1", "main")])
    for stem, words in CSVS.items():
        write_csv(tmp_path / "csv" / f"{stem}.csv", words)
    return tmp_path


@pytest.fixture
def no_datasets(monkeypatch):
    """Whatever is installed, read parquet through pyarrow (as without ``datasets``)."""
    monkeypatch.setattr(hf, "_has_datasets", lambda: False)


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def expected(root: Path, page_ids, variant, unit_level="word", skip_missing=False):
    reports = []
    for pid in page_ids:
        path = root / "csv" / f"{pid}.csv"
        if not path.exists() and skip_missing:
            continue
        rows, dropped = load_predicted_rows(path, unit_level) if path.exists() else ([], 0)
        reports.append(evaluate_rows(annotation_boxes_from_records(PAGES[pid]), rows, page_id=pid,
                                     unit_level=unit_level, filters=REPORT_VARIANTS[variant], dropped_words=dropped,
                                     has_predictions=path.exists()))
    return json.loads(report_to_json(aggregate_reports(reports, variant=variant)))


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def argv(root: Path, *extra, dataset=None, out="res"):
    return ["--dataset", str(dataset or root / "data"), "--predictions-dir", str(root / "csv"),
            "--output-dir", str(root / out), *extra]


# ------------------------------------------------------------------------------ the parquet reading
def test_shards_default_split_hand_values(shards, capsys, no_datasets, monkeypatch):
    read_columns = []
    real_read_table = pq.read_table

    def spy(path, columns=None, **kw):
        read_columns.append(list(columns))
        return real_read_table(path, columns=columns, **kw)

    monkeypatch.setattr(pq, "read_table", spy)
    before = snapshot(shards)
    assert hf.main(argv(shards, "--progress", "always")) == 0
    out, err = capsys.readouterr()
    assert read_columns and all("image" not in c and "annotations" in c for c in read_columns)
    res = shards / "res"
    assert out.splitlines() == [f"{v}: cer={read(res / f'accuracy_report_{v}.json')['summary']['ocr_region_cer']:.4f} "
                                f"(3 pages) -> {res / f'accuracy_report_{v}.json'}" for v in REPORT_VARIANTS]
    assert "3/3 pages" in err
    assert "1 pages have no predictions CSV (scored as empty predictions): p3" in err
    assert "1 predictions CSVs match no page: p4" in err
    for v in REPORT_VARIANTS:
        report = read(res / f"accuracy_report_{v}.json")
        info = report.pop("run_info")
        assert report == expected(shards, ["p1", "p2", "p3"], v)
        assert info == {"dataset": str(shards / "data"), "hub_split": "test", "split_filter": None,
                        "predictions_dir": str(shards / "csv"), "annotations_dir": None,
                        "package_version": info["package_version"], "missing_prediction_pages": ["p3"],
                        "unmatched_prediction_files": ["p4"]}
    s = read(res / "accuracy_report_no_filter.json")["summary"]
    assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"]) == (9, 40)
    assert s["ocr_region_cer"] == 9 / 40 and s["pages_without_predictions"] == 1
    assert s["gt_boxes_dropped"]["rule"] == 1 and s["watermark_words_removed"] == 1
    # the header and non-armenian filters drop Լուր and Hello world: (2 + 0 + 5) / (11 + 9 + 5)
    assert read(res / "accuracy_report_all_filters.json")["summary"]["ocr_region_cer"] == 7 / 25
    pages = read(res / "accuracy_report_no_filter.json")["pages"]
    assert [(p["page_id"], p["has_predictions"], p["ocr_region_cer"]) for p in pages] == [
        ("p1", True, 4 / 26), ("p2", True, 0.0), ("p3", False, 1.0)]
    after = snapshot(shards)
    assert {k: v for k, v in after.items() if not k.startswith("res")} == before  # inputs unchanged, nothing beside them
    assert sorted(os.listdir(res)) == sorted(f"accuracy_report_{v}.json" for v in REPORT_VARIANTS)


def test_skip_missing_and_split_filter(shards, capsys, no_datasets):
    assert hf.main(argv(shards, "--skip-missing", "--variant", "no_filter", "--variant", "all_filters",
                        "--variant", "no_filter")) == 0
    out, err = capsys.readouterr()
    res = shards / "res"
    assert out == (f"no_filter: cer={4 / 35:.4f} (2 pages) -> {res / 'accuracy_report_no_filter.json'}\n"
                   f"all_filters: cer={2 / 20:.4f} (2 pages) -> {res / 'accuracy_report_all_filters.json'}\n")
    assert "(skipped): p3" in err
    report = read(res / "accuracy_report_no_filter.json")
    assert report["summary"]["ocr_region_cer"] == 4 / 35 and report["summary"]["pages_without_predictions"] == 0
    assert report["run_info"]["missing_prediction_pages"] == ["p3"]
    report.pop("run_info")
    assert report == expected(shards, ["p1", "p2", "p3"], "no_filter", skip_missing=True)
    assert sorted(os.listdir(res)) == ["accuracy_report_all_filters.json", "accuracy_report_no_filter.json"]
    # keep the manifest split "pilot" only: p1 and p2, nothing missing
    assert hf.main(argv(shards, "--dataset-split-column", "pilot", "--variant", "no_filter", out="pilot")) == 0
    out, err = capsys.readouterr()
    assert out == f"no_filter: cer={4 / 35:.4f} (2 pages) -> {shards / 'pilot' / 'accuracy_report_no_filter.json'}\n"
    assert "no predictions CSV" not in err and "1 predictions CSVs match no page: p4" in err
    info = read(shards / "pilot" / "accuracy_report_no_filter.json")["run_info"]
    assert info["split_filter"] == "pilot" and info["missing_prediction_pages"] == []
    # "main" in split test is p3 alone, which has no CSV: nothing evaluated, nothing written
    assert hf.main(argv(shards, "--dataset-split-column", "main", "--skip-missing", out="none")) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "no page evaluated" in err and not (shards / "none").exists()
    assert hf.main(argv(shards, "--dataset-split-column", "nosuch", out="none")) == 1
    assert "no page in" in capsys.readouterr().err
    # a split column under another name
    assert hf.main(argv(shards, "--dataset-split-column", "pilot", "--split-column-name", "source", out="none")) == 1
    assert "== 'pilot'" in capsys.readouterr().err
    assert hf.main(argv(shards, "--dataset-split-column", "pilot", "--split-column-name", "nope", out="none")) == 1
    err = capsys.readouterr().err
    assert "no column 'nope'" in err and "'page_id'" in err and "'image'" not in err


def test_hub_split_choice(shards, capsys, no_datasets):
    assert hf.main(argv(shards, "--hub-split", "train", "--variant", "no_filter")) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("no_filter: cer=1.0000 (1 pages)")  # t1 has no CSV: մեկ, 3 deletions
    assert read(shards / "res" / "accuracy_report_no_filter.json")["run_info"]["hub_split"] == "train"
    assert hf.main(argv(shards, "--hub-split", "validation")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no split 'validation' (splits: 'test', 'train')" in err
    # one split only: used whatever --hub-split says; shards without a split prefix go to --hub-split
    one = shards / "one"
    write_parquet(one / "part.parquet", [row("p1", "pilot")])
    assert hf.main(argv(shards, "--hub-split", "validation", "--variant", "no_filter", dataset=one)) == 0
    assert capsys.readouterr().out.startswith(f"no_filter: cer={4 / 26:.4f} (1 pages)")
    assert load_hf_pages(str(one)).hub_split == "test"


def test_single_parquet_file_and_load_hf_pages(shards, capsys, no_datasets):
    path = shards / "data" / "test-00000-of-00002.parquet"
    pages = load_hf_pages(str(path), hub_split="any")
    assert pages == [HfPage("p1", "newspaper p1", "pilot", 1000, 1000, PAGES["p1"]),
                     HfPage("p2", "newspaper p2", "pilot", 1000, 1000, PAGES["p2"])]
    assert pages.hub_split == "any"
    assert [p.page_id for p in load_hf_pages(str(path), split_value="main")] == []
    assert hf.main(argv(shards, "--variant", "no_filter", "--unit-level", "line", dataset=path)) == 0
    out = capsys.readouterr().out
    assert out == f"no_filter: cer={4 / 35:.4f} (2 pages) -> {shards / 'res' / 'accuracy_report_no_filter.json'}\n"
    report = read(shards / "res" / "accuracy_report_no_filter.json")
    report.pop("run_info")
    assert report == expected(shards, ["p1", "p2"], "no_filter", unit_level="line")


def test_c2_pages_a_b_c_line_mode(tmp_path, capsys, no_datasets, monkeypatch):
    """The ocr-pages test vector C2: pages A, B and C with line-mode CSVs."""
    from test_ocr_pages_reports import CSV_A, CSV_B, CSV_C, PAGE_A, PAGE_B, PAGE_C

    rows = []
    for pid, boxes, words in (("A", PAGE_A, CSV_A), ("B", PAGE_B, CSV_B), ("C", PAGE_C, CSV_C)):
        records = [{"id": b.id, "label": b.label, "transcription": b.transcription, "reading_order": b.reading_order,
                    "parent_id": b.parent_id, "bbox": list(b.bbox), "rotation": b.rotation} for b in boxes]
        rows.append({"page_id": pid, "source": "", "split": "pilot", "image": {"bytes": PNG, "path": None},
                     "image_width": 1000, "image_height": 1000, "annotations": records})
        with open(tmp_path / f"{pid}.csv", "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["x1", "y1", "x2", "y2", "group_row", "text"])
            w.writerows([wd.x1, wd.y1, wd.x2, wd.y2, wd.group_row, wd.text] for wd in words)
    write_parquet(tmp_path / "acopper.parquet", rows)
    monkeypatch.chdir(tmp_path)
    assert hf.main(["--dataset", "acopper.parquet", "--predictions-dir", ".", "--output-dir", "results",
                    "--unit-level", "line", "--variant", "no_filter"]) == 0
    assert capsys.readouterr().out == "no_filter: cer=0.0935 (3 pages) -> results/accuracy_report_no_filter.json\n"
    s = read(tmp_path / "results" / "accuracy_report_no_filter.json")["summary"]
    assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"]) == (10, 107)
    assert abs(s["page_mean_cer"] - 0.1873015873015873) < 1e-9


def test_workers_give_identical_bytes(shards, capsys, no_datasets):
    assert hf.main(argv(shards, "--max-failure-examples", "1", out="w1")) == 0
    assert hf.main(argv(shards, "--max-failure-examples", "1", "--workers", "3", "--progress", "always", out="w3")) == 0
    out, err = capsys.readouterr()
    assert "3/3 pages" in err
    for v in REPORT_VARIANTS:
        one = (shards / "w1" / f"accuracy_report_{v}.json").read_bytes()
        assert one == (shards / "w3" / f"accuracy_report_{v}.json").read_bytes()
    report = read(shards / "w1" / "accuracy_report_no_filter.json")
    assert [e["page_id"] for e in report["failure_examples"]] == ["p3"]  # 5 edits, the most of any region
    report.pop("run_info")
    want = expected(shards, ["p1", "p2", "p3"], "no_filter")
    assert report["summary"] == want["summary"] and report["failure_examples"] == want["failure_examples"][:1]


# ----------------------------------------------------------------------------------------- errors
def one_error(capsys, code, args, named):
    assert hf.main(args) == code, args
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if "error:" in line]
    assert out == "" and len(lines) == 1 and named in lines[0], err
    return lines[0]


def test_bad_inputs_are_named(shards, capsys, no_datasets):
    bad = shards / "bad"
    (bad / "garbage").mkdir(parents=True)
    (bad / "garbage" / "test-00000-of-00001.parquet").write_bytes(b"PAR1 not really parquet")
    (bad / "empty").mkdir()
    (bad / "notes.json").write_text("[]", encoding="utf-8")
    write_parquet(bad / "noid.parquet", [{"annotations": PAGES["p1"], "split": "pilot"}])
    write_parquet(bad / "twice.parquet", [row("p1", "a"), row("p2", "a"), row("p1", "b")])
    write_parquet(bad / "escape.parquet", [dict(row("p1", "a"), page_id="../csv/p1")])
    write_parquet(bad / "annjson.parquet", [dict(row("p1", "a"), annotations='[{"bbox": ')])
    write_parquet(bad / "width.parquet", [dict(row("p1", "a"), image_width=1.5)])
    write_csv(shards / "badcsv" / "p1.csv", [])
    (shards / "badcsv" / "p1.csv").write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    (shards / "afile").write_text("", encoding="utf-8")
    before = snapshot(shards)
    one_error(capsys, 2, argv(shards, out="afile"), "output folder")  # an output path: a usage error
    cases = [
        (argv(shards, dataset=bad / "gone.parquet"), "gone.parquet"),
        (argv(shards, dataset=bad / "gone" / "dir"), "not a parquet file, a dataset folder or a Hub dataset id"),
        (argv(shards, dataset=bad / "garbage"), "test-00000-of-00001.parquet"),
        (argv(shards, dataset=bad / "empty"), "holds no dataset_dict.json"),
        (argv(shards, dataset=bad / "notes.json"), "not a .parquet file"),
        (argv(shards, dataset=bad / "noid.parquet"), "no column 'page_id'"),
        (argv(shards, dataset=bad / "twice.parquet"), "row 2: page_id 'p1' repeats row 0"),
        (argv(shards, dataset=bad / "escape.parquet"), "'../csv/p1' cannot name"),
        (argv(shards, dataset=bad / "annjson.parquet"), "page 'p1' annotations malformed JSON"),
        (argv(shards, dataset=bad / "width.parquet"), "row 0: image_width must be an integer"),
        (["--dataset", str(shards / "data"), "--predictions-dir", str(shards / "badcsv"),
          "--output-dir", str(shards / "res")], "p1.csv"),
        (["--dataset", str(shards / "data"), "--predictions-dir", str(shards / "nope"),
          "--output-dir", str(shards / "res")], "predictions folder"),
    ]
    for args, named in cases:
        one_error(capsys, 1, args, named)
        assert not (shards / "res").exists()  # a failed run writes nothing
    for extra, named in ((["--coverage-threshold", "0"], "(0, 1]"), (["--workers", "0"], "at least 1"),
                         (["--variant", "nope"], "nope"), (["--max-failure-examples", "-1"], "at least 0"),
                         (["--unit-level", "char"], "char")):
        one_error(capsys, 2, argv(shards, *extra), named)
    assert hf.main(["--dataset", str(shards / "data")]) == 2
    capsys.readouterr()
    # an output over an input is refused
    one_error(capsys, 2, argv(shards, "--html", str(shards / "csv" / "p1.csv")), "input")
    assert {k: v for k, v in snapshot(shards).items() if not k.startswith("res")} == before


def test_mistyped_local_dataset_path_is_an_error_not_a_hub_request(shards, capsys, fake_datasets, monkeypatch):
    """Issue 30 item 14: `data/typo` beside a `data` folder is a missing path; the Hub is never asked."""
    calls.clear()
    monkeypatch.chdir(shards)
    (shards / "notes").write_text("", encoding="utf-8")
    for typo in ("data/typo", "csv/p9", "notes/x"):
        line = one_error(capsys, 1, ["--dataset", typo, "--predictions-dir", "csv", "--output-dir", "res"], typo)
        assert "no such file or folder" in line and "not a Hub dataset id" in line
    assert calls == [] and not (shards / "res").exists()
    # an owner that is no local folder is still a Hub id
    fake_datasets["value"] = {"test": FakeDataset([columnar("p1", "pilot")])}
    assert [p.page_id for p in load_hf_pages("RLALT/ACoPPer")] == ["p1"]
    assert calls[0] == ("load_dataset", ("RLALT/ACoPPer",), {})


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink"])
def test_output_on_an_input_is_refused_before_any_work(shards, capsys, no_datasets, monkeypatch, kind):
    """Issue 30 item 12: --html or a report of --output-dir on the dataset or a CSV, directly, through a
    symbolic link or as a hard link: exit 2 before any page is read, inputs unchanged."""
    monkeypatch.setattr(hf, "load_hf_pages", lambda *a, **k: pytest.fail("pages read before the output check"))
    data = shards / "data" / "test-00000-of-00002.parquet"
    csv = shards / "csv" / "p1.csv"
    links = shards / "links"
    links.mkdir()

    def planted(source, at):
        if kind == "same":
            return source
        (at.symlink_to if kind == "symlink" else at.hardlink_to)(source)
        return at

    before = snapshot(shards)
    html = planted(csv, links / "r.html")
    line = one_error(capsys, 2, argv(shards, "--html", str(html)), "outputs never overwrite inputs")
    assert repr(str(csv)) in line and not (shards / "res").exists()
    html = planted(data, links / "d.html")
    line = one_error(capsys, 2, argv(shards, "--html", str(html)), "outputs never overwrite inputs")
    assert repr(str(shards / "data")) in line or repr(str(data)) in line
    if kind != "same":
        (shards / "res").mkdir()
        planted(csv, shards / "res" / "accuracy_report_all_filters.json")
        one_error(capsys, 2, argv(shards), "accuracy_report_all_filters.json")
        assert os.listdir(shards / "res") == ["accuracy_report_all_filters.json"]
    assert {k: v for k, v in snapshot(shards).items() if not k.startswith(("links", "res"))} == before


def test_without_datasets_other_sources_need_the_extra(tmp_path, capsys, no_datasets, monkeypatch):
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "dataset_dict.json").write_text('{"splits": ["test"]}', encoding="utf-8")
    for args, named in ((["--dataset", str(saved)], "saved dataset folder"), (["--dataset", "RLALT/ACoPPer"], "Hub")):
        line = one_error(capsys, 1, args + ["--predictions-dir", str(tmp_path), "--output-dir", str(tmp_path / "o")],
                         named)
        assert "needs the datasets package" in line and "pip install scorekit[hf]" in line
    # neither datasets nor pyarrow: parquet reading names the extra too
    write_parquet(tmp_path / "p.parquet", [row("p1", "a")])
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    line = one_error(capsys, 1, ["--dataset", str(tmp_path / "p.parquet"), "--predictions-dir", str(tmp_path),
                                 "--output-dir", str(tmp_path / "o")], "p.parquet")
    assert "datasets or pyarrow" in line and "pip install scorekit[hf]" in line
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------------------ the datasets calls
#: What the stand-in datasets module was asked, in order.
calls: list = []


class FakeDataset:
    """What the loader uses of ``datasets.Dataset``; iterating with the image column still there fails."""

    def __init__(self, rows, columns=None):
        self.rows, self.column_names = rows, list(columns or rows[0])

    def remove_columns(self, names):
        calls.append(("remove_columns", list(names)))
        return FakeDataset([{k: v for k, v in r.items() if k not in names} for r in self.rows],
                           [c for c in self.column_names if c not in names])

    def __iter__(self):
        assert "image" not in self.column_names, "the image column would be decoded"
        return iter([dict(r) for r in self.rows])


@pytest.fixture
def fake_datasets(monkeypatch):
    """A stand-in ``datasets`` module: ``load_dataset``/``load_from_disk`` record their arguments and
    return what ``answer`` holds (annotations in the columnar ``Sequence`` form, as datasets gives them)."""
    calls.clear()
    answer: dict = {}
    module = types.ModuleType("datasets")

    def load_dataset(*args, **kwargs):
        calls.append(("load_dataset", args, kwargs))
        return answer["value"]

    def load_from_disk(path):
        calls.append(("load_from_disk", path))
        if isinstance(answer["value"], Exception):
            raise answer["value"]
        return answer["value"]

    module.load_dataset, module.load_from_disk = load_dataset, load_from_disk
    monkeypatch.setitem(sys.modules, "datasets", module)
    return answer


def columnar(page_id, split):
    r = row(page_id, split)
    r["annotations"] = {k: [b[k] for b in r["annotations"]] for k in r["annotations"][0]}
    return r


def test_datasets_dispatch(shards, capsys, fake_datasets):
    test = FakeDataset([columnar("p1", "pilot"), columnar("p2", "pilot"), columnar("p3", "main")])
    train = FakeDataset([columnar("t1", "main")])
    data = shards / "data"
    fake_datasets["value"] = {"test": test, "train": train}
    # 4. a folder of shards: the files grouped by split prefix, in shard (file name) order
    assert hf.main(argv(shards, "--variant", "no_filter")) == 0
    assert calls == [("load_dataset", ("parquet",), {"data_files": {
        "test": [str(data / "test-00000-of-00002.parquet"), str(data / "sub" / "test-00001-of-00002.parquet")],
        "train": [str(data / "train-00000-of-00001.parquet")]}}), ("remove_columns", ["image"])]
    report = read(shards / "res" / "accuracy_report_no_filter.json")
    assert report["summary"]["ocr_region_cer"] == 9 / 40  # the columnar annotations score as the rows do
    assert report.pop("run_info")["hub_split"] == "test"
    assert report == expected(shards, ["p1", "p2", "p3"], "no_filter")
    capsys.readouterr()
    # 1. one parquet file, under --hub-split
    calls.clear()
    fake_datasets["value"] = {"train": train}
    assert [p.page_id for p in load_hf_pages(str(data / "train-00000-of-00001.parquet"), hub_split="train")] == ["t1"]
    assert calls[0] == ("load_dataset", ("parquet",), {"data_files": {"train": [str(data / "train-00000-of-00001.parquet")]}})
    # 2. a saved DatasetDict, and 3. a saved Dataset (state.json)
    saved = shards / "saved"
    saved.mkdir()
    (saved / "dataset_dict.json").write_text("{}", encoding="utf-8")
    calls.clear()
    fake_datasets["value"] = {"test": test, "train": train}
    pages = load_hf_pages(str(saved), hub_split="train")
    assert calls[0] == ("load_from_disk", str(saved)) and [p.page_id for p in pages] == ["t1"] and pages.hub_split == "train"
    single = shards / "single"
    single.mkdir()
    (single / "state.json").write_text("{}", encoding="utf-8")
    calls.clear()
    fake_datasets["value"] = test
    pages = load_hf_pages(str(single), split_value="pilot")
    assert calls[0] == ("load_from_disk", str(single)) and [p.page_id for p in pages] == ["p1", "p2"]
    assert pages.hub_split is None and pages[0].annotations == columnar("p1", "pilot")["annotations"]
    # 5. a Hub id; a dataset dict of one split is used whatever --hub-split says
    calls.clear()
    fake_datasets["value"] = {"validation": train}
    pages = load_hf_pages("RLALT/ACoPPer")
    assert calls == [("load_dataset", ("RLALT/ACoPPer",), {}), ("remove_columns", ["image"])]
    assert pages.hub_split == "validation" and [p.page_id for p in pages] == ["t1"]
    # a loader failure is one clean error line
    fake_datasets["value"] = FileNotFoundError("no dataset_info.json in saved/train")
    one_error(capsys, 1, argv(shards, dataset=saved), "cannot load the dataset (FileNotFoundError: no dataset_info")


def test_real_datasets(shards, capsys, tmp_path, monkeypatch):
    """With the datasets package installed: a saved DatasetDict and the shards folder give the
    reports of the pyarrow reading, and the inputs stay as they were."""
    import datasets
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    saved = tmp_path / "saved"
    datasets.DatasetDict({"test": datasets.Dataset.from_list([row("p1", "pilot"), row("p2", "pilot"),
                                                               row("p3", "main")])}).save_to_disk(str(saved))
    before = snapshot(saved), {k: v for k, v in snapshot(shards).items() if not k.startswith("saved")}
    want = expected(shards, ["p1", "p2", "p3"], "no_filter")
    for dataset in (saved, shards / "data"):
        assert hf.main(argv(shards, "--variant", "no_filter", dataset=dataset)) == 0
        report = read(shards / "res" / "accuracy_report_no_filter.json")
        assert report.pop("run_info")["hub_split"] == "test" and report == want
    after = snapshot(saved), {k: v for k, v in snapshot(shards).items() if not k.startswith(("res", "cache", "saved"))}
    assert after == before  # datasets writes its cache only under HF_DATASETS_CACHE


# ------------------------------------------------------------------------- commands and the report
def test_scorekit_subcommand_console_script_and_html(shards, capsys, no_datasets):
    html_path = shards / "report.html"
    assert scorekit_cli.main(["ocr-pages", "evaluate-hf", *argv(shards, "--variant", "all_filters", "--html",
                                                                str(html_path))]) == 0
    assert capsys.readouterr().out.startswith(f"all_filters: cer={7 / 25:.4f} (3 pages)")
    page = html_path.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "page p3 · region" in page and "page p2 · region" not in page
    assert scorekit_cli.main(["ocr-pages", "evaluate-hf", "--dataset", "x"]) == 2
    capsys.readouterr()
    script = Path(sys.executable).with_name("ocr-pages-evaluate-hf")
    done = subprocess.run([str(script), *argv(shards, "--variant", "no_filter", "--skip-missing", out="cs")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"no_filter: cer={4 / 35:.4f} (2 pages) -> {shards / 'cs' / 'accuracy_report_no_filter.json'}\n"
    done = subprocess.run([sys.executable, "-m", "scorekit.ocr_pages.evaluate_from_hf", "--dataset", "x"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "required" in done.stderr


def test_demo_sample_through_the_command(tmp_path, capsys, no_datasets):
    """The demo's OCR pages sample is a dataset as the command reads it: its rows as parquet and
    its CSVs give the demo's figures (8 edits over 314 GT characters, no_filter)."""
    from importlib import resources

    folder = resources.files("scorekit") / "data" / "ocr_pages"
    rows = [json.loads(line) for line in (folder / "pages.jsonl").read_text(encoding="utf-8").splitlines()]
    write_parquet(tmp_path / "sample.parquet", rows)
    with resources.as_file(folder / "csv") as csv_dir:
        assert hf.main(["--dataset", str(tmp_path / "sample.parquet"), "--predictions-dir", str(csv_dir),
                        "--output-dir", str(tmp_path / "res"), "--unit-level", "line", "--variant", "no_filter"]) == 0
    assert capsys.readouterr().out.startswith(f"no_filter: cer={8 / 314:.4f} (3 pages)")
    from scorekit.demo_report import score_ocr_pages_sample

    report = read(tmp_path / "res" / "accuracy_report_no_filter.json")
    report.pop("run_info")
    assert report == json.loads(report_to_json(score_ocr_pages_sample()["no_filter"]))
