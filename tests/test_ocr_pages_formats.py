"""PAGE-XML, ALTO and hOCR predictions in the OCR page kit, wherever it takes an evaluation CSV.

Each test page's words are written four times: as the evaluation CSV built by hand (group_row =
the line's index in reading order) and as a PAGE-XML 2019, an ALTO v4 and an hOCR file holding
the same words, boxes and lines. The page reports (regions, rows, summary) of the four files are
identical, at the word and at the line level, through the Python API and the three commands;
the region CER is the hand-computed one. Words without boxes, files without words and two
prediction files for one page are refused naming the file.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import pytest

from scorekit.errors import InvalidValueError
from scorekit.ocr_pages.box_grouping.group import load_predicted_rows
from scorekit.ocr_pages.box_grouping.loading import annotation_boxes_from_records, load_prediction_words
from scorekit.ocr_pages.box_grouping.ocr_files import page_config
from scorekit.ocr_pages.config import DEFAULT_CONFIG
from scorekit.ocr_pages.evaluation import generate_accuracy_report_variants as variants_cmd
from scorekit.ocr_pages.evaluation import measure_accuracy
from scorekit.ocr_pages.evaluation.prediction import evaluate_rows

#: Ground truth: a paragraph whose second line is hyphenated (the schwa at the join is forgiven),
#: a headline, an English caption with a curly apostrophe.
BOXES = [
    {"id": "A", "label": "Paragraph", "bbox": [0, 0, 400, 100], "transcription": "Երևան քաղաք\nմը-\nտնել"},
    {"id": "B", "label": "Headline", "bbox": [0, 200, 400, 260], "transcription": "Լուրեր"},
    {"id": "C", "label": "Caption", "bbox": [0, 300, 400, 340], "transcription": "it\u2019s fine"},
]
#: Predicted lines in reading order, each a list of (x0, y0, x1, y1, text): box A's two lines and
#: the scanner's watermark inside it, the headline with one wrong letter, the caption (curly
#: apostrophe too) and a page number outside every box.
LINES = [
    [(10, 10, 100, 30, "Երևան"), (110, 10, 200, 30, "քաղաք")],
    [(10, 40, 100, 60, "մտնել")],
    [(10, 70, 50, 90, "OCR"), (55, 70, 70, 90, "by"), (75, 70, 160, 90, "PortMind")],
    [(10, 210, 100, 240, "Լուրեռ")],
    [(10, 305, 60, 335, "it\u2019s"), (70, 305, 130, 335, "fine")],
    [(500, 500, 520, 520, "12")],
]
#: Box A: "Երևան քաղաք մըտնել" against "Երևան քաղաք մտնել", 0 edits (the schwa at the join is
#: free) over 18; box B: 1 substitution over 6; box C: 0 over 9 (both apostrophes are curly).
REGION_EDITS, REGION_CHARS = [0, 1, 0], [18, 6, 9]


def _line_box(line):
    return (min(w[0] for w in line) - 2, min(w[1] for w in line) - 2, max(w[2] for w in line) + 2,
            max(w[3] for w in line) + 2)


def write_csv(path: Path) -> Path:
    rows = ["x1,y1,x2,y2,group_row,text"]
    rows += [f"{x0},{y0},{x1},{y1},{k},{text}" for k, line in enumerate(LINES) for x0, y0, x1, y1, text in line]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _points(x0, y0, x1, y1):
    return f"{x0},{y0} {x1},{y0} {x1},{y1} {x0},{y1}"


def write_page(path: Path) -> Path:
    lines = []
    for k, line in enumerate(LINES):
        words = "".join(f'<Word id="w{k}_{j}"><Coords points="{_points(*w[:4])}"/><TextEquiv><Unicode>{escape(w[4])}'
                        f"</Unicode></TextEquiv></Word>" for j, w in enumerate(line))
        text = escape(" ".join(w[4] for w in line))
        lines.append(f'<TextLine id="l{k}"><Coords points="{_points(*_line_box(line))}"/>{words}'
                     f"<TextEquiv><Unicode>{text}</Unicode></TextEquiv></TextLine>")
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"><Page imageFilename="p.png" '
        'imageWidth="600" imageHeight="600"><TextRegion id="r0"><Coords points="0,0 600,0 600,600 0,600"/>'
        + "".join(lines) + "</TextRegion></Page></PcGts>\n", encoding="utf-8")
    return path


def write_alto(path: Path) -> Path:
    lines = []
    for k, line in enumerate(LINES):
        x0, y0, x1, y1 = _line_box(line)
        words = '<SP/>'.join(f'<String ID="s{k}_{j}" HPOS="{a}" VPOS="{b}" WIDTH="{c - a}" HEIGHT="{d - b}" '
                             f'CONTENT="{escape(t)}"/>' for j, (a, b, c, d, t) in enumerate(line))
        lines.append(f'<TextLine ID="l{k}" HPOS="{x0}" VPOS="{y0}" WIDTH="{x1 - x0}" HEIGHT="{y1 - y0}">{words}</TextLine>')
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout>'
        '<Page ID="p" WIDTH="600" HEIGHT="600"><PrintSpace><TextBlock ID="b0">' + "".join(lines)
        + "</TextBlock></PrintSpace></Page></Layout></alto>\n", encoding="utf-8")
    return path


def write_hocr(path: Path) -> Path:
    lines = []
    for k, line in enumerate(LINES):
        words = " ".join(f"<span class='ocrx_word' id='w{k}_{j}' title='bbox {a} {b} {c} {d}; x_wconf 90'>"
                         f"{escape(t)}</span>" for j, (a, b, c, d, t) in enumerate(line))
        lines.append(f"<span class='ocr_line' id='l{k}' title='bbox {' '.join(map(str, _line_box(line)))}'>{words}</span>")
    path.write_text(
        "<!DOCTYPE html>\n<html xmlns='http://www.w3.org/1999/xhtml'><head><title>p</title>"
        "<meta http-equiv='Content-Type' content='text/html; charset=utf-8'/></head><body>"
        "<div class='ocr_page' id='page_1' title='bbox 0 0 600 600'><div class='ocr_carea' id='c1'><p class='ocr_par'>"
        + "".join(lines) + "</p></div></div></body></html>\n", encoding="utf-8")
    return path


WRITERS = {"page": (write_page, "xml"), "alto": (write_alto, "xml"), "hocr": (write_hocr, "hocr")}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {"csv": write_csv(tmp_path / "p.csv")}
    for name, (writer, suffix) in WRITERS.items():
        folder = tmp_path / name
        folder.mkdir()
        out[name] = writer(folder / f"p.{suffix}")
    return out


def _report(path: Path, unit_level: str = "word", filters=()):
    rows, dropped = load_predicted_rows(path, unit_level, config=page_config(path, DEFAULT_CONFIG))
    return evaluate_rows(annotation_boxes_from_records(BOXES), rows, page_id="p", unit_level=unit_level,
                         dropped_words=dropped, filters=filters, config=page_config(path, DEFAULT_CONFIG))


def test_the_words_of_each_format_are_the_csv_words(files):
    want = load_prediction_words(files["csv"])
    assert [w.text for w in want][:3] == ["Երևան", "քաղաք", "մտնել"] and want[2].group_row == "1"
    for name in WRITERS:
        got = load_prediction_words(files[name])
        # the readers write out the curly apostrophe as dinglehopper does: the only difference
        assert [w.text.replace("'", "\u2019") for w in got] == [w.text for w in want], name
        assert [(w.rect, w.group_row, w.csv_index) for w in got] == [(w.rect, w.group_row, w.csv_index) for w in want]


@pytest.mark.parametrize("unit_level", ["word", "line"])
@pytest.mark.parametrize("name", list(WRITERS))
def test_region_cer_of_each_format_equals_the_csvs(files, name, unit_level):
    want = _report(files["csv"], unit_level)
    got = _report(files[name], unit_level)
    assert [r["char_edit_distance"] for r in want["regions"]] == REGION_EDITS
    assert [r["gt_char_count"] for r in want["regions"]] == REGION_CHARS
    assert want["summary"]["ocr_region_cer"] == 1 / 33 and want["summary"]["watermark_words_removed"] == 3
    assert want["summary"]["unassigned_word_count"] == 1
    for key in ("ocr_region_cer", "ocr_region_cer_strict", "ocr_region_cer_lowercase", "ocr_region_char_edit_distance",
                "ocr_region_gt_char_count", "watermark_words_removed", "row_status_counts", "unassigned_char_count"):
        assert got["summary"][key] == want["summary"][key], key
    strip = lambda r: {k: v for k, v in r.items() if k not in ("gt_text", "predicted_text")}  # noqa: E731
    assert [strip(r) for r in got["regions"]] == [strip(r) for r in want["regions"]]
    # the texts differ only where the readers wrote the apostrophe out, on both sides alike
    assert [r["predicted_text"] for r in got["regions"]][2] == [r["gt_text"] for r in got["regions"]][2] == "it's fine"
    assert [r["gt_text"] for r in want["regions"]][2] == "it\u2019s fine"


def test_the_ground_truth_gets_the_readers_normalisation_only_for_ocr_files(files):
    """Without it an OCR file's apostrophe (written out by the reader) would be a false substitution."""
    rows, dropped = load_predicted_rows(files["page"], "word")
    unfair = evaluate_rows(annotation_boxes_from_records(BOXES), rows, page_id="p", dropped_words=dropped)
    assert [r["char_edit_distance"] for r in unfair["regions"]] == [0, 1, 1]
    assert page_config(files["csv"], DEFAULT_CONFIG) is DEFAULT_CONFIG
    assert page_config(files["page"], DEFAULT_CONFIG).fingerprint == DEFAULT_CONFIG.fingerprint


@pytest.mark.parametrize("name", list(WRITERS))
def test_the_commands_take_ocr_files(tmp_path, files, name, capsys):
    ann = tmp_path / "ann"
    ann.mkdir(exist_ok=True)
    (ann / "p.json").write_text(json.dumps(BOXES), encoding="utf-8")
    out = tmp_path / f"{name}.json"
    assert measure_accuracy.main(["--annotations-json", str(ann / "p.json"), "--predictions-csv", str(files[name]),
                                  "--output", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["ocr_region_cer"] == 1 / 33
    res = tmp_path / f"res-{name}"
    assert variants_cmd.main(["--predictions-dir", str(files[name].parent), "--annotations-dir", str(ann),
                              "--output-dir", str(res), "--variant", "no_filter",
                              "--variant", "graphics_headers_images_photos"]) == 0
    assert json.loads((res / "accuracy_report_no_filter.json").read_text(encoding="utf-8"))["summary"]["ocr_region_cer"] == 1 / 33
    # the header filter drops the headline: 0 edits over 18 + 9
    s = json.loads((res / "accuracy_report_graphics_headers_images_photos.json").read_text(encoding="utf-8"))["summary"]
    assert s["ocr_region_cer"] == 0.0 and s["ocr_region_gt_char_count"] == 27


def test_two_prediction_files_for_one_page_are_refused(tmp_path, files, capsys):
    ann = tmp_path / "ann"
    ann.mkdir()
    (ann / "p.json").write_text(json.dumps(BOXES), encoding="utf-8")
    write_csv(files["page"].parent / "p.csv")
    assert variants_cmd.main(["--predictions-dir", str(files["page"].parent), "--annotations-dir", str(ann),
                              "--output-dir", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "page 'p' has two files in the predictions folder, 'p.csv' and 'p.xml'" in err and not (tmp_path / "o").exists()


SQUARE = '<Coords points="0,0 9,0 9,9 0,9"/>'


def small_page(path: Path, body: str) -> Path:
    """A 9 x 9 PAGE-XML 2019 document whose page holds ``body``."""
    path.write_text('<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"><Page '
                    f'imageFilename="p.png" imageWidth="9" imageHeight="9">{body}</Page></PcGts>', encoding="utf-8")
    return path


def region(rid: str, line_text: str = "", word: str = "x") -> str:
    """A region of one line (its own text, when given) holding one word (``""``: none)."""
    words = f'<Word id="w{rid}">{SQUARE}<TextEquiv><Unicode>{word}</Unicode></TextEquiv></Word>' if word else ""
    text = f"<TextEquiv><Unicode>{line_text}</Unicode></TextEquiv>" if line_text else ""
    return f'<TextRegion id="{rid}">{SQUARE}<TextLine id="l{rid}">{SQUARE}{words}{text}</TextLine></TextRegion>'


def test_ocr_files_that_cannot_be_placed_are_refused(tmp_path):
    no_box = tmp_path / "nobox.hocr"
    no_box.write_text("<html><body><div class='ocr_page' title='bbox 0 0 9 9'><span class='ocr_line' "
                      "title='bbox 0 0 9 9'><span class='ocrx_word' id='w1'>word</span></span></div></body></html>",
                      encoding="utf-8")
    with pytest.raises(InvalidValueError, match=r"nobox.hocr.*word 'w1' has no box"):
        load_prediction_words(no_box)
    with pytest.raises(InvalidValueError, match=r"lines.xml.*no word segments"):
        load_prediction_words(small_page(tmp_path / "lines.xml", region("r0", line_text="text", word="")))
    order = ('<ReadingOrder><OrderedGroup id="g"><RegionRefIndexed index="0" regionRef="r1"/></OrderedGroup>'
             "</ReadingOrder>")
    with pytest.raises(InvalidValueError, match=r"order.xml.*text regions 'r2' are not in the reading order"):
        load_prediction_words(small_page(tmp_path / "order.xml", order + region("r1") + region("r2")))
    no_line_text = small_page(tmp_path / "nolinetext.xml", region("r1", word="ab"))
    assert [(w.text, w.group_row) for w in load_prediction_words(no_line_text)] == [("ab", "")]
    assert [r.row_id for r in load_predicted_rows(no_line_text, "word")[0]] == ["r0"]
    with pytest.raises(InvalidValueError, match=r"nolinetext.xml.*1 words \('ab'\) lie in no text line"):
        load_predicted_rows(no_line_text, "line")
    broken = tmp_path / "broken.xml"
    broken.write_text("<alto><Layout>", encoding="utf-8")
    with pytest.raises(InvalidValueError, match="broken.xml"):
        load_prediction_words(broken)
