"""OCR pages: the data model, the input readers and the box geometry.

The geometry (G*) and HF adapter (H*) cases are the ocr-pages test vectors. The vectorised
``BoxIndex`` is checked against a slow reference written here: plain-Python Sutherland-Hodgman
clipping per (word, box) pair and the row measures computed straight from their definitions.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.box_grouping.geometry import (
    BoxIndex,
    box_polygon,
    point_in_polygon,
    rect_polygon_intersection_area,
    to_local,
)
from scorekit.ocr_pages.box_grouping.loading import (
    AnnotationBox,
    PredictedRow,
    PredictedWord,
    annotation_boxes_from_records,
    load_annotation_boxes,
    load_prediction_items,
    load_prediction_words,
)

BOX = (100, 100, 300, 140)


def close_points(got, want, tol=1e-4):
    assert len(got) == len(want)
    for (gx, gy), (wx, wy) in zip(got, want):
        assert gx == pytest.approx(wx, abs=tol) and gy == pytest.approx(wy, abs=tol)


# ---------------------------------------------------------------------------------------------
# Geometry vectors


@pytest.mark.parametrize(
    "rotation, corners",
    [
        (0, [(100, 100), (300, 100), (300, 140), (100, 140)]),
        (90, [(100, 100), (100, 300), (60, 300), (60, 100)]),
        (30, [(100, 100), (273.2051, 200), (253.2051, 234.641), (80, 134.641)]),
        (-30, [(100, 100), (273.2051, 0), (293.2051, 34.641), (120, 134.641)]),
        (180, [(100, 100), (-100, 100), (-100, 60), (100, 60)]),
    ],
)
def test_g1_box_polygon(rotation, corners):
    close_points(box_polygon(BOX, rotation), corners)


def test_g1_exact_axis_aligned_and_envelope():
    assert box_polygon(BOX, 0) == ((100, 100), (300, 100), (300, 140), (100, 140))
    assert box_polygon(BOX, 720) == box_polygon(BOX, 0)
    box = AnnotationBox("b", "Paragraph", "", None, None, (100.0, 100.0, 300.0, 140.0), 90.0, False, 0)
    assert box.envelope == pytest.approx((60, 100, 100, 300), abs=1e-9)
    assert box.area == 8000 and box.pivot == (100.0, 100.0)
    close_points(box.polygon, box_polygon(BOX, 90), tol=0)
    close_points(box_polygon(BOX, 390), box_polygon(BOX, 30), tol=1e-9)


@pytest.mark.parametrize(
    "pt, expected",
    [((80, 200), True), ((200, 120), False), ((100, 100), True), ((60, 300), True), ((59.99, 300), False)],
)
def test_g2_rotated_90_contains(pt, expected):
    assert point_in_polygon(pt, box_polygon(BOX, 90)) is expected


@pytest.mark.parametrize(
    "pt, expected", [((180, 170), True), ((250, 110), False), ((120, 130), True), ((280, 130), False)]
)
def test_g3_rotated_30_contains(pt, expected):
    assert point_in_polygon(pt, box_polygon(BOX, 30)) is expected


def test_g3_local_frame():
    assert to_local((180, 170), BOX, 30) == pytest.approx((204.282, 120.6218), abs=1e-4)
    for p in box_polygon(BOX, 30):
        assert to_local(p, BOX, 30) in [pytest.approx(q, abs=1e-9) for q in box_polygon(BOX, 0)]


def test_g4_intersection_areas():
    assert rect_polygon_intersection_area((150, 120, 250, 200), box_polygon(BOX, 30)) == pytest.approx(
        3687.6335, abs=1e-4
    )
    assert rect_polygon_intersection_area((450, 10, 530, 30), box_polygon((0, 0, 480, 200))) == 600.0
    assert rect_polygon_intersection_area((150, 120, 150, 200), box_polygon(BOX, 30)) == 0.0


def test_point_in_polygon_boundary_rules():
    # a centre on the shared border of two abutting boxes is inside both
    assert point_in_polygon((490, 20), box_polygon((0, 0, 490, 40)))
    assert point_in_polygon((490, 20), box_polygon((490, 0, 1000, 40)))
    # rotated boxes: within GEOMETRY_EPS of an edge counts, clearly beyond does not
    poly = box_polygon(BOX, 30)
    (ax, ay), (bx, by) = poly[0], poly[1]
    mx, my = (ax + bx) / 2, (ay + by) / 2
    length = math.hypot(bx - ax, by - ay)
    nx, ny = (by - ay) / length, -(bx - ax) / length  # outward normal of the top edge (y down)
    assert point_in_polygon((mx + nx * 1e-11, my + ny * 1e-11), poly)
    assert not point_in_polygon((mx + nx * 1e-6, my + ny * 1e-6), poly)
    # the winding of the polygon does not matter
    assert point_in_polygon((180, 170), tuple(reversed(poly)))


def test_nan_rotation_rejected():
    with pytest.raises(InvalidValueError, match="rotation"):
        box_polygon(BOX, float("nan"))
    with pytest.raises(InvalidValueError, match="rotation"):
        AnnotationBox("b", "", "", None, None, (0.0, 0.0, 1.0, 1.0), float("nan"), False, 0)
    with pytest.raises(InvalidValueError, match="bbox"):
        AnnotationBox("b", "", "", None, None, (0.0, float("nan"), 1.0, 1.0), 0.0, False, 0)


# ---------------------------------------------------------------------------------------------
# HF adapter and Label Studio vectors

H1_RECORDS = [
    {"id": "fs", "label": "FrontStory", "bbox": [0, 0, 1000, 600], "transcription": "", "parent_id": None, "reading_order": None},
    {"id": "hl", "label": "Headline", "bbox": [0, 0, 1000, 50], "transcription": "ԼՈՒՐ", "parent_id": "fs", "reading_order": 2},
    {"id": "pa", "label": "Paragraph", "bbox": [0, 60, 1000, 600], "transcription": "Տեքստ", "parent_id": "fs", "reading_order": 1},  # noqa: E501
    {"id": "ru", "label": "Rule", "bbox": [0, 601, 1000, 603], "transcription": None},
    {"id": "ph", "label": "Photo", "bbox": [0, 610, 500, 900], "transcription": None, "rotation": None},
]


def summary(boxes):
    return [(b.index, b.id, b.has_transcription, b.rotation) for b in boxes]


def test_h1_hf_adapter():
    boxes = annotation_boxes_from_records(H1_RECORDS)
    assert summary(boxes) == [(0, "pa", True, 0.0), (1, "hl", True, 0.0), (2, "ph", False, 0.0)]
    assert boxes.dropped == {"rule": 1, "degenerate": 0, "duplicate": 0, "container": 1}
    assert boxes[0].transcription == "Տեքստ" and boxes[2].transcription == ""


def test_h1_columnar_and_json_string_forms():
    keys = ("id", "label", "bbox", "transcription", "parent_id", "reading_order", "rotation")
    columns = {k: [r.get(k) for r in H1_RECORDS] for k in keys}
    want = summary(annotation_boxes_from_records(H1_RECORDS))
    assert summary(annotation_boxes_from_records(columns)) == want
    assert summary(annotation_boxes_from_records(json.dumps(H1_RECORDS))) == want
    assert annotation_boxes_from_records(None) == [] and annotation_boxes_from_records([]).dropped["rule"] == 0


def test_h2_label_studio_rectangle_and_textarea(tmp_path):
    task = {
        "annotations": [
            {
                "result": [
                    {"id": "r1", "type": "rectanglelabels", "original_width": 2000, "original_height": 3000,
                     "value": {"x": 10, "y": 20, "width": 25, "height": 5, "rotation": 0, "rectanglelabels": ["Paragraph"]}},
                    {"id": "r1", "type": "textarea", "original_width": 2000, "original_height": 3000,
                     "value": {"x": 10, "y": 20, "width": 25, "height": 5, "text": ["ա", "բ"]}},
                ]
            }
        ]
    }
    path = tmp_path / "page.json"
    path.write_text(json.dumps(task), encoding="utf-8")
    (box,) = load_annotation_boxes(path)
    assert box.bbox == (200.0, 600.0, 700.0, 750.0)
    assert box.transcription == "ա\nբ" and box.has_transcription is True
    assert box.label == "Paragraph" and box.id == "r1" and box.rotation == 0.0
    # a list whose first element is the task reads the same
    path.write_text(json.dumps([task]), encoding="utf-8")
    assert load_annotation_boxes(path) == [box]


def test_adapter_drops_and_ids():
    records = [
        {"label": " Paragraph ", "bbox": [10, 10, 0, 0], "transcription": "a\r\nb\rc"},  # reversed bbox
        {"label": "Paragraph", "bbox": [0.2, 0, 10.1, 10], "transcription": "a\nb\nc"},  # duplicate (0.5 px)
        {"id": "x", "label": "Paragraph", "bbox": [0, 20, 10, 20], "transcription": "flat"},  # zero height
        {"id": "x", "label": "RULE", "bbox": [0, 30, 10, 31]},
        {"id": "x", "label": "Caption", "bbox": [0, 40, 10, 50], "transcription": " "},
        {"id": "x", "label": "Caption", "bbox": [0, 60, 10, 70], "transcription": "", "rotation": 370.5},
        {"id": "p", "label": "Article", "bbox": [0, 100, 100, 200], "transcription": "all"},
        {"id": "k1", "label": "Graphics", "bbox": [0, 100, 50, 150], "parent_id": "p"},
        {"id": "k2", "label": "Graphics", "bbox": [50, 100, 100, 150], "parent_id": "p", "transcription": ""},
    ]
    boxes = annotation_boxes_from_records(records)
    assert boxes.dropped == {"rule": 1, "degenerate": 1, "duplicate": 1, "container": 2}
    assert [b.id for b in boxes] == ["box0", "x#2", "x#3", "p"]
    first = boxes[0]
    assert first.bbox == (0.0, 0.0, 10.0, 10.0) and first.label == "Paragraph"
    assert first.transcription == "a\nb\nc"
    assert boxes[1].has_transcription is True  # " " counts as a transcription
    assert boxes[2].has_transcription is False and boxes[2].rotation == 370.5
    assert [b.index for b in boxes] == [0, 1, 2, 3]


def test_adapter_stable_reading_order_sort():
    records = [
        {"id": "a", "label": "P", "bbox": [0, 0, 1, 1], "reading_order": None},
        {"id": "b", "label": "P", "bbox": [0, 2, 1, 3], "reading_order": 3},
        {"id": "c", "label": "P", "bbox": [0, 4, 1, 5], "reading_order": 0},
        {"id": "d", "label": "P", "bbox": [0, 6, 1, 7], "reading_order": 3.0},
    ]
    assert [b.id for b in annotation_boxes_from_records(records)] == ["c", "b", "d", "a"]


@pytest.mark.parametrize(
    "entry, error, pattern",
    [
        ({"bbox": [0, 0, float("nan"), 1]}, InvalidValueError, r"item 1: annotations bbox must be finite"),
        ({"bbox": [0, 0, 1]}, InvalidValueError, r"item 1: annotations bbox must be 4 numbers"),
        ({"bbox": [0, 0, "x", 1]}, InvalidValueError, r"item 1: annotations bbox must be a number"),
        ({"bbox": [0, 0, 1, 1], "rotation": float("nan")}, InvalidValueError, r"item 1: annotations rotation"),
        ({"bbox": [0, 0, 1, 1], "reading_order": 1.5}, InvalidValueError, r"item 1: annotations reading_order"),
        ("not a box", InvalidTypeError, r"item 1: annotations box must be an object"),
    ],
)
def test_adapter_bad_entries(entry, error, pattern):
    with pytest.raises(error, match=pattern):
        annotation_boxes_from_records([{"bbox": [0, 0, 1, 1]}, entry])


def test_adapter_bad_containers():
    with pytest.raises(InvalidValueError, match="different lengths"):
        annotation_boxes_from_records({"bbox": [[0, 0, 1, 1]], "id": []})
    with pytest.raises(InvalidValueError, match="malformed JSON"):
        annotation_boxes_from_records("[{")
    with pytest.raises(InvalidTypeError):
        annotation_boxes_from_records(42)


def ls_item(id_, value, kind="rectanglelabels", **extra):
    item = {"id": id_, "type": kind, "value": value, "original_width": 1000, "original_height": 2000}
    item.update(extra)
    return item


def write_json(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_label_studio_task_details(tmp_path):
    rect = {"x": 0, "y": 0, "width": 50, "height": 10}
    task = {
        "annotations": [
            {"was_cancelled": True, "result": [ls_item("zz", rect)]},
            {"result": []},
            {
                "result": [
                    ls_item("a", dict(rect, rotation=15, labels=["Headline"])),
                    ls_item("a", {"number": 2}, kind="number"),
                    ls_item("a", {"text": ["one"]}, kind="textarea"),
                    ls_item("a", {"text": ["two", "three"]}, kind="textarea"),
                    ls_item("b", dict(rect, y=50), parentID="a"),
                    ls_item("b", {"number": 1}, kind="number"),
                    ls_item("c", {"text": ["orphan text"]}, kind="textarea"),
                ]
            },
        ]
    }
    boxes = load_annotation_boxes(write_json(tmp_path, "t.json", task))
    # b has no transcription, so its parent keeps the text and b (the child) is dropped;
    # c has no rectangle and counts as degenerate
    assert [(b.id, b.label, b.reading_order, b.rotation) for b in boxes] == [("a", "Headline", 2, 15.0)]
    assert boxes[0].transcription == "one\ntwo\nthree" and boxes[0].bbox == (0.0, 0.0, 500.0, 200.0)
    assert boxes.dropped == {"rule": 0, "degenerate": 1, "duplicate": 0, "container": 1}


def test_label_studio_flat_forms(tmp_path):
    flat = [{"id": "q", "label": "Paragraph", "bbox": [1, 2, 3, 4], "transcription": "t"}]
    a = load_annotation_boxes(write_json(tmp_path, "a.json", flat))
    b = load_annotation_boxes(write_json(tmp_path, "b.json", {"annotations": flat}))
    assert a == b and [(x.id, x.bbox) for x in a] == [("q", (1.0, 2.0, 3.0, 4.0))]
    assert load_annotation_boxes(write_json(tmp_path, "c.json", [])) == []
    assert load_annotation_boxes(write_json(tmp_path, "d.json", {"annotations": []})) == []


def export_task(task_id, image, box_text):
    rect = {"x": 0, "y": 0, "width": 50, "height": 10}
    return {"id": task_id, "data": {"image": image}, "file_upload": image.rsplit("/", 1)[-1],
            "annotations": [{"result": [ls_item("a", rect), ls_item("a", {"text": [box_text]}, kind="textarea")]}]}


def test_label_studio_export_of_several_tasks_reads_the_page_task(tmp_path):
    """Issue 30 item 2: a default export holds every task; the page's task is read, not the first."""
    export = [export_task(11, "/data/upload/1/3f2a1b9c-p1.png", "first page"),
              export_task(12, "/data/local-files/?d=scans/p2.jpg", "second page"),
              export_task(13, "s3://bucket/p3.tif", "third page")]
    path = write_json(tmp_path, "export.json", export)
    assert [b.transcription for b in load_annotation_boxes(path, "p2")] == ["second page"]
    assert [b.transcription for b in load_annotation_boxes(path, "p1")] == ["first page"]
    assert [b.transcription for b in load_annotation_boxes(path, "3f2a1b9c-p1")] == ["first page"]
    assert [b.transcription for b in load_annotation_boxes(path, "13")] == ["third page"]
    # one task: read whatever the page id
    single = write_json(tmp_path, "single.json", export[1:2])
    assert [b.transcription for b in load_annotation_boxes(single, "other")] == ["second page"]


@pytest.mark.parametrize("page_id, pattern", [
    (None, r"3 Label Studio tasks and no page id to choose one \(task 0: '11', '3f2a1b9c-p1', 'p1'; task 1"),
    ("p9", r"3 Label Studio tasks and none matches page 'p9' by id or image file stem .*task 2: '13', 'p1'"),
    ("p1", r"3 Label Studio tasks and tasks 0, 2 all match page 'p1'"),
])
def test_label_studio_export_without_a_single_page_task_is_refused(tmp_path, page_id, pattern):
    export = [export_task(11, "/data/upload/1/3f2a1b9c-p1.png", "a"), export_task(12, "/x/p2.png", "b"),
              export_task(13, "/y/p1.png", "c")]
    path = write_json(tmp_path, "export.json", export)
    with pytest.raises(InvalidValueError, match=pattern) as info:
        load_annotation_boxes(path, page_id)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    "result, pattern",
    [
        ([{"id": "a", "type": "rectanglelabels", "value": {"x": 0, "y": 0, "width": 5, "height": 5}}],
         r"result item 0: missing original_width"),
        ([ls_item("a", {"x": 0, "y": 0, "width": 5, "height": 5}), ls_item("b", {"x": 0, "y": 0, "width": -5, "height": 5})],
         r"result item 1: negative size"),
        ([ls_item("a", {"x": 0, "y": 0, "width": float("nan"), "height": 5})], r"width must be finite"),
        ([ls_item("a", {"x": 0, "y": 0, "width": 5, "height": 5}), "junk"], r"result item 1: must be an object"),
    ],
)
def test_label_studio_bad_results(tmp_path, result, pattern):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"annotations": [{"result": result}]}), encoding="utf-8")
    with pytest.raises(InvalidValueError, match=pattern) as info:
        load_annotation_boxes(path)
    assert str(path) in str(info.value)


def test_json_file_errors(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(InvalidValueError, match="cannot read file") as info:
        load_annotation_boxes(missing)
    assert str(missing) in str(info.value)
    bad = tmp_path / "bad.json"
    bad.write_text('{"annotations":\n  [1, }', encoding="utf-8")
    with pytest.raises(InvalidValueError, match=r"bad.json: line 2 column 7: malformed JSON"):
        load_annotation_boxes(bad)
    with pytest.raises(InvalidValueError, match=r"bad.json: line 2 column 7: malformed JSON"):
        load_prediction_items(bad)
    scalar = write_json(tmp_path, "scalar.json", 3)
    with pytest.raises(InvalidValueError, match="expected a Label Studio task"):
        load_annotation_boxes(scalar)


# ---------------------------------------------------------------------------------------------
# Evaluation CSV


def write_bytes(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_csv_canonical_with_bom_quotes_and_blank_lines(tmp_path):
    text = (
        "\ufeff X1,y1,X2,y2,Group_Row,TEXT \r\n"
        "10,20,30,40,7,Բարև\r\n"
        "\r\n"
        '30,45,5,25, 07 ,"a, ""b""\nc"\n'
        "1.5,2.5,3.5,4.5,,\n"
        "0,0,1,1,9,line\u2028sep\x0cff\x85\n"
    )
    path = write_bytes(tmp_path, "p.csv", text)
    before = path.read_bytes()
    words = load_prediction_words(path)
    assert path.read_bytes() == before
    assert words == [
        PredictedWord(10.0, 20.0, 30.0, 40.0, "7", "Բարև", 0),
        PredictedWord(5.0, 25.0, 30.0, 45.0, "07", 'a, "b"\nc', 1),
        PredictedWord(1.5, 2.5, 3.5, 4.5, "", "", 2),
        PredictedWord(0.0, 0.0, 1.0, 1.0, "9", "line\u2028sep\x0cff\x85", 3),
    ]
    assert words[0].center == (20.0, 30.0) and words[0].area == 400.0


def test_csv_headerless_extra_and_short_rows(tmp_path):
    path = write_bytes(tmp_path, "p.csv", "0,0,10,10,1,hello, world\n0,0,1,1,2\n-1e2,0,0,5,3,  x  \n")
    words = load_prediction_words(path)
    assert [(w.text, w.group_row, w.csv_index) for w in words] == [("hello, world", "1", 0), ("", "2", 1), ("  x  ", "3", 2)]
    assert words[2].rect == (-100.0, 0.0, 0.0, 5.0)
    assert load_prediction_words(write_bytes(tmp_path, "h.csv", "x1,y1,x2,y2,group_row,text\n")) == []
    assert load_prediction_words(write_bytes(tmp_path, "e.csv", "")) == []


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("a,b,c,d,e,f\n1,2,3,4,5,x\n", r"p.csv: bad header"),
        ("x1,y1,x2,y2,group_row,text\n1,2,3,4,5,x\n1,2,3,4\n", r"p.csv: line 3: expected 6 cells, got 4"),
        ('x1,y1,x2,y2,group_row,text\n1,2,3,4,5,"two\nlines"\n1,2,3\n', r"p.csv: line 4: expected 6 cells"),
        ("x1,y1,x2,y2,group_row,text\n\n1,2,3,nan,5,x\n", r"p.csv: line 3: y2 must be a finite number, got 'nan'"),
        ("x1,y1,x2,y2,group_row,text\n1,inf,3,4,5,x\n", r"line 2: y1 must be a finite number"),
        ("x1,y1,x2,y2,group_row,text\nten,2,3,4,5,x\n", r"line 2: x1 must be a finite number, got 'ten'"),
        (b"x1,y1,x2,y2,group_row,text\n1,2,3,4,5,\xff\n", r"line 2: not valid UTF-8"),
        ("x1,y1,x2,y2,group_row,text\n" + "1,2,3,4,5,\"" + "z" * 200_000 + "\"\n", r"line 2: malformed CSV"),
    ],
)
def test_csv_errors(tmp_path, text, pattern):
    path = write_bytes(tmp_path, "p.csv", text)
    with pytest.raises(InvalidValueError, match=pattern):
        load_prediction_words(path)


def test_csv_missing_file(tmp_path):
    with pytest.raises(InvalidValueError, match=r"missing.csv: cannot read file"):
        load_prediction_words(tmp_path / "missing.csv")
    with pytest.raises(InvalidValueError, match="cannot read file"):
        load_prediction_words(tmp_path)  # a directory


def test_predicted_row_properties():
    words = (
        PredictedWord(0.0, 0.0, 10.0, 5.0, "1", " ab ", 3),
        PredictedWord(12.0, -1.0, 20.0, 4.0, "2", "  ", 4),
        PredictedWord(22.0, 1.0, 30.0, 6.0, "1", "cd", 5),
    )
    row = PredictedRow("g1", words)
    assert row.text == "ab cd" and row.groups == {"1", "2"} and row.bbox == (0.0, -1.0, 30.0, 6.0)


# ---------------------------------------------------------------------------------------------
# Per-page prediction JSON


def test_prediction_json_variants(tmp_path):
    items = [
        {"box": [10, 20, 30, 40], "text": "a"},
        {"bbox": [30, 40, 10, 20], "text": None},
        {"box": [0, 0, 10, 0, 10, 5, 0, 5]},
        {"box": [[4, 1], [9, 2], [8, 7], [3, 6]], "text": 12},
        {"box": [1, 2, 3]},
        {"box": [1, 2, 3, float("nan")]},
        {"box": [1, 2, 3, True]},
        {"text": "no box"},
        "not an item",
    ]
    for name, wrap in (("plain.json", items), ("wrapped.json", {"predictions": items})):
        path = write_json(tmp_path, name, wrap)
        before = path.read_bytes()
        got, skipped = load_prediction_items(path)
        assert skipped == 5
        assert [(i.x1, i.y1, i.x2, i.y2, i.text) for i in got] == [
            (10.0, 20.0, 30.0, 40.0, "a"),
            (10.0, 20.0, 30.0, 40.0, ""),
            (0.0, 0.0, 10.0, 5.0, ""),
            (3.0, 1.0, 9.0, 7.0, "12"),
        ]
        assert path.read_bytes() == before


def test_prediction_json_bad_top_level(tmp_path):
    with pytest.raises(InvalidValueError, match=r"p.json: expected a list of predictions"):
        load_prediction_items(write_json(tmp_path, "p.json", {"items": []}))
    with pytest.raises(InvalidValueError, match="cannot read file"):
        load_prediction_items(tmp_path / "absent.json")


# ---------------------------------------------------------------------------------------------
# BoxIndex against a slow reference


def clip_area(rect, poly):
    """Reference: Sutherland-Hodgman clip of ``rect`` by the convex ``poly``, then shoelace; two
    axis-aligned rectangles use the product of the overlapping spans, as the definition says."""
    x1, y1, x2, y2 = rect
    if (x2 - x1) * (y2 - y1) == 0:
        return 0.0
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = poly
    if ay == by and bx == cx and cy == dy and dx == ax or ax == bx and by == cy and cx == dx and dy == ay:
        px1, py1, px2, py2 = min(ax, cx), min(ay, cy), max(ax, cx), max(ay, cy)
        return max(0.0, min(x2, px2) - max(x1, px1)) * max(0.0, min(y2, py2) - max(y1, py1))
    sign = 1.0 if sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(poly, poly[1:] + poly[:1])) >= 0 else -1.0
    out = [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]
    for a, b in zip(poly, poly[1:] + poly[:1]):
        if not out:
            break

        def side(p):
            return ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])) * sign

        clipped = []
        for p, q in zip(out, out[1:] + out[:1]):
            sp, sq = side(p), side(q)
            if sp >= 0:
                clipped.append(p)
            if (sp >= 0) != (sq >= 0):
                t = sp / (sp - sq)
                clipped.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
        out = clipped
    if len(out) < 3:
        return 0.0
    return abs(sum(p[0] * q[1] - q[0] * p[1] for p, q in zip(out, out[1:] + out[:1]))) / 2


class Box:
    def __init__(self, bbox, rotation):
        self.bbox, self.rotation = bbox, rotation


def reference_pairs(boxes, rects):
    """Every touching (word, box) pair: {(w, b): (inside, overlap)}, by the definitions."""
    pairs = {}
    for w, rect in enumerate(rects):
        area = (rect[2] - rect[0]) * (rect[3] - rect[1])
        centre = ((rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2)
        for b, box in enumerate(boxes):
            poly = list(box_polygon(box.bbox, box.rotation))
            inside = point_in_polygon(centre, poly)
            overlap = clip_area(rect, poly)
            if inside or (area > 0 and overlap >= 0.25 * area):
                pairs[(w, b)] = (inside, overlap)
    return pairs


coord = st.integers(0, 400).map(float) | st.floats(0, 400, allow_nan=False, allow_infinity=False)
size = st.integers(1, 150).map(float) | st.floats(0.5, 150)
rotation = st.sampled_from([0.0, 90.0, 180.0, 270.0, 360.0, -30.0, 30.0, 45.0, -720.0]) | st.floats(-400, 400)
boxes_st = st.lists(st.builds(lambda x, y, w, h, r: Box((x, y, x + w, y + h), r), coord, coord, size, size, rotation),
                    max_size=12)
# words are empty (zero width or height) or at least 1 px: the overlap share of a sliver a few
# ulps wide is ill-conditioned, and no clipping order reproduces it to 1e-9
word_size = st.integers(0, 60).map(float) | st.floats(1, 60)
rects_st = st.lists(st.builds(lambda x, y, w, h: (x, y, x + w, y + h), coord, coord, word_size, word_size), max_size=25)


@settings(max_examples=60, deadline=None)
@given(boxes_st, rects_st)
def test_word_pairs_match_reference(boxes, rects):
    got = BoxIndex(boxes).word_pairs(np.array(rects, dtype=float).reshape(-1, 4))
    want = reference_pairs(boxes, rects)
    keys = list(zip(got.word.tolist(), got.box.tolist()))
    assert keys == sorted(want) and got.touches.all()
    for k, inside, overlap, area in zip(keys, got.inside, got.overlap, got.word_area):
        assert bool(inside) == want[k][0]
        assert overlap == pytest.approx(want[k][1], rel=1e-9, abs=1e-9)
        rect = rects[k[0]]
        assert area == (rect[2] - rect[0]) * (rect[3] - rect[1])


@settings(max_examples=60, deadline=None)
@given(boxes_st, rects_st, st.data())
def test_row_measures_match_reference(boxes, rects, data):
    n_rows = data.draw(st.integers(1, 6))
    row_of = data.draw(st.lists(st.integers(0, n_rows - 1), min_size=len(rects), max_size=len(rects)))
    got = BoxIndex(boxes).row_measures(np.array(rects, dtype=float).reshape(-1, 4), row_of, n_rows)
    pairs = reference_pairs(boxes, rects)
    want, want_words = {}, {}
    for r in range(n_rows):
        members = [w for w in range(len(rects)) if row_of[w] == r]
        total = sum((rects[w][2] - rects[w][0]) * (rects[w][3] - rects[w][1]) for w in members)
        for b, box in enumerate(boxes):
            if not any((w, b) in pairs for w in members):
                continue
            poly = list(box_polygon(box.bbox, box.rotation))
            inside = [point_in_polygon(((rects[w][0] + rects[w][2]) / 2, (rects[w][1] + rects[w][3]) / 2), poly) for w in members]
            coverage = sum(inside) / len(members)
            overlaps = [clip_area(rects[w], poly) for w in members]
            want[(r, b)] = (coverage, coverage if total == 0 else sum(overlaps) / total)
            for w, ins, ovl in zip(members, inside, overlaps):
                if ins or ovl > 0:
                    want_words[(w, b)] = (ins, ovl, (w, b) in pairs)
    keys = list(zip(got.row.tolist(), got.box.tolist()))
    assert keys == sorted(want)
    for k, cov, ovl in zip(keys, got.coverage, got.overlap_coverage):
        assert cov == pytest.approx(want[k][0], abs=1e-12)
        assert ovl == pytest.approx(want[k][1], abs=1e-9)
    # the word-level pairs hold every word of a touched (row, box) that has its centre or area in it
    words = got.words
    listed = dict(zip(zip(words.word.tolist(), words.box.tolist()), zip(words.inside, words.overlap, words.touches)))
    assert set(want_words) <= set(listed)
    for k, (inside, overlap, touches) in listed.items():
        assert (row_of[k[0]], k[1]) in want
        ref = want_words.get(k, (False, 0.0, False))
        assert (bool(inside), bool(touches)) == (ref[0], ref[2])
        assert overlap == pytest.approx(ref[1], rel=1e-9, abs=1e-9)


def test_row_overlap_counts_words_that_do_not_touch():
    # the row touches the box through a zero-area word at its corner; the tall word's centre is
    # outside and only 1/5 of it is inside (below the touch fraction), yet it counts in the sum
    boxes = [Box((0.0, 0.0, 1.0, 1.0), 0.0)]
    rects = np.array([[0, 0, 0, 0], [0, 0, 1, 5]], dtype=float)
    m = BoxIndex(boxes).row_measures(rects, [0, 0], 1)
    assert m.coverage.tolist() == [0.5] and m.overlap_coverage.tolist() == [0.2]
    assert m.words.word.tolist() == [0, 1] and m.words.touches.tolist() == [True, False]


def test_box_index_abutting_and_degenerate_words():
    boxes = [Box((0.0, 0.0, 490.0, 40.0), 0.0), Box((490.0, 0.0, 1000.0, 40.0), 0.0), Box((100.0, 100.0, 300.0, 140.0), 90.0)]
    rects = np.array([[480, 10, 500, 30], [80, 200, 80, 200], [59.99, 300, 59.99, 300], [0, 500, 10, 510]], dtype=float)
    pairs = BoxIndex(boxes).word_pairs(rects)
    assert list(zip(pairs.word.tolist(), pairs.box.tolist(), pairs.inside.tolist())) == [
        (0, 0, True), (0, 1, True), (1, 2, True)
    ]
    assert pairs.overlap.tolist() == [200.0, 200.0, 0.0]
    m = BoxIndex(boxes).row_measures(rects, [0, 0, 1, 2], 3)
    assert m.row.tolist() == [0, 0, 0] and m.box.tolist() == [0, 1, 2]
    assert m.coverage.tolist() == [0.5, 0.5, 0.5] and m.overlap_coverage.tolist() == [0.5, 0.5, 0.0]


def test_box_index_empty_and_bad_rows():
    empty = BoxIndex([])
    assert len(empty) == 0 and empty.word_pairs(np.zeros((3, 4))).word.size == 0
    assert empty.row_measures(np.zeros((2, 4)), [0, 1], 2).row.size == 0
    index = BoxIndex([Box((0.0, 0.0, 1.0, 1.0), 0.0)])
    with pytest.raises(InvalidValueError, match="row_of_word"):
        index.row_measures(np.zeros((2, 4)), [0], 1)
    with pytest.raises(InvalidValueError, match="row_of_word"):
        index.row_measures(np.zeros((1, 4)), [3], 1)
    with pytest.raises(InvalidValueError, match=r"item 1: word rectangle must be finite"):
        index.word_pairs(np.array([[0, 0, 1, 1], [0, 0, np.nan, 1]]))
    with pytest.raises(InvalidValueError, match=r"item 0: word rectangle"):
        index.word_pairs(np.array([[2, 0, 1, 1]]))


def test_box_index_is_not_all_pairs():
    # 40 x 40 grid of boxes and one word per box: each word's candidates are its own neighbourhood
    boxes = [Box((i * 10.0, j * 10.0, i * 10.0 + 9.0, j * 10.0 + 9.0), 0.0) for i in range(40) for j in range(40)]
    rects = np.array([[b.bbox[0] + 2, b.bbox[1] + 2, b.bbox[0] + 6, b.bbox[1] + 6] for b in boxes])
    pairs = BoxIndex(boxes).word_pairs(rects)
    assert pairs.word.tolist() == list(range(len(boxes))) and pairs.box.tolist() == list(range(len(boxes)))


def test_import_scorekit_does_not_import_shapely():
    code = (
        "import sys, scorekit\n"
        "import scorekit.ocr_pages.box_grouping.loading, scorekit.ocr_pages.box_grouping.geometry\n"
        "assert 'shapely' not in sys.modules, 'shapely imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_geometry_docstring_examples():
    import doctest

    from scorekit.ocr_pages.box_grouping import geometry

    result = doctest.testmod(geometry)
    assert result.failed == 0 and result.attempted > 0


def test_loaded_boxes_pickle_round_trip():
    import pickle

    boxes = annotation_boxes_from_records(H1_RECORDS)
    boxes[0].polygon  # noqa: B018 - fill the cached property before pickling
    again = pickle.loads(pickle.dumps(boxes))
    assert again == boxes and again.dropped == boxes.dropped and again[0].polygon == boxes[0].polygon


def test_label_studio_empty_textarea_still_counts_as_transcribed(tmp_path):
    rect = {"x": 10, "y": 10, "width": 10, "height": 10}
    result = [
        ls_item("a", rect),
        ls_item("a", {"text": []}, kind="textarea"),
        ls_item("a", {"number": 4}, kind="number"),
        ls_item("a", {"number": 9}, kind="number"),
        ls_item("b", dict(rect, y=50)),
    ]
    boxes = load_annotation_boxes(write_json(tmp_path, "t.json", {"annotations": [{"result": result}]}))
    assert [(b.id, b.transcription, b.has_transcription, b.reading_order) for b in boxes] == [
        ("a", "", True, 4),
        ("b", "", False, None),
    ]
    # the HF adapter derives has_transcription from the text alone
    (box,) = annotation_boxes_from_records([{"bbox": [0, 0, 1, 1], "transcription": "", "has_transcription": True}])
    assert box.has_transcription is False


def test_box_index_finds_centres_inside_by_tolerance_only():
    # a centre just above the top corner of a rotated box lies outside the box's envelope, yet
    # within GEOMETRY_EPS of both edges, so it is inside; the candidate search must not miss it
    box = Box((100.0, 100.0, 300.0, 140.0), 30.0)
    centre = (100.0, 100.0 - 5e-10)
    assert point_in_polygon(centre, box_polygon(box.bbox, box.rotation))
    pairs = BoxIndex([box]).word_pairs(np.array([[centre[0], centre[1], centre[0], centre[1]]]))
    assert pairs.word.tolist() == [0] and pairs.inside.tolist() == [True]


@pytest.mark.parametrize("bbox, pattern", [
    ([0, 0, 1e308, 1e308], "bbox too large to measure"),
    ([0, 0, 1e308, 1], "bbox too large to measure"),
    ([0, 0, 10 ** 400, 5], "bbox must be finite, got an integer too large for a float"),
])
def test_boxes_too_large_to_measure_are_named(bbox, pattern):
    """They raised a raw OverflowError (a traceback from the commands)."""
    with pytest.raises(InvalidValueError, match=pattern):
        annotation_boxes_from_records([{"id": "a", "label": "Paragraph", "transcription": "t", "bbox": bbox}])


def test_label_studio_label_given_as_text_is_kept(tmp_path):
    """A label written as a string used to be ignored: the box lost its label, and the label filters
    (header, photo …) silently kept it in the score."""
    rect = {"x": 0, "y": 0, "width": 50, "height": 10, "rectanglelabels": "Headline"}
    boxes = load_annotation_boxes(write_json(tmp_path, "t.json", {"annotations": [{"result": [ls_item("a", rect)]}]}))
    assert [b.label for b in boxes] == ["Headline"]
