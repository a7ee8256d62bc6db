"""Row building, watermark removal, row classification and split lines (ocr_pages.box_grouping.group).

The watermark and page-scenario values come from the ocr-pages test vectors (watermarks W1-W13,
pages A, B, C, E, F and R). A hypothesis property compares ``classify_rows`` with a slow classifier
written here from the plain per-pair geometry functions.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.box_grouping import group
from scorekit.ocr_pages.box_grouping.geometry import (
    point_in_polygon,
    rect_polygon_intersection_area,
    to_local,
)
from scorekit.ocr_pages.box_grouping.group import (
    build_rows,
    classify_row,
    classify_rows,
    detect_split_lines,
    is_watermark_text,
    load_predicted_rows,
    remove_watermark_words,
)
from scorekit.ocr_pages.box_grouping.loading import AnnotationBox, PredictedRow, PredictedWord
from scorekit.ocr_pages.box_grouping.reading_order import group_into_lines
from scorekit.ocr_pages.evaluation.text_metrics import edit_distance
from test_fuzz_ocr_pages import LAYOUTS, line_groups


def make_boxes(specs):
    """specs: (id, (x1, y1, x2, y2)[, rotation]) in page order."""
    out = []
    for i, spec in enumerate(specs):
        rotation = float(spec[2]) if len(spec) > 2 else 0.0
        out.append(AnnotationBox(spec[0], "Paragraph", "", None, None, tuple(float(v) for v in spec[1]),
                                 rotation, True, i))
    return out


def make_words(records):
    """records: (x1, y1, x2, y2, group_row, text) in CSV order."""
    return [PredictedWord(*(float(v) for v in r[:4]), str(r[4]), r[5], i) for i, r in enumerate(records)]


def by_id(matches):
    return {m.row.row_id: m for m in matches}


def named(match, boxes):
    """A match's per-box values keyed by box id, rounded as the vectors print them."""
    return ({boxes[b].id: round(v, 4) for b, v in match.coverage.items()},
            {boxes[b].id: round(v, 4) for b, v in match.overlap_coverage.items()})


def assigned(match, boxes):
    return {k: (None if b is None else boxes[b].id) for k, b in match.assignment.items()}


def status_counts(matches):
    counts = dict.fromkeys(group.ROW_STATUSES, 0)
    for m in matches:
        counts[m.status] += 1
    return counts


# ---------------------------------------------------------------------------------------------
# Watermarks


def wkey(s):
    return " ".join(unicodedata.normalize("NFC", s).casefold().split())


WATERMARK_VECTORS = [
    ("National Library of Armenia OCR by PortMind", True, 0),
    ("national library of armenia ocr by portmind", True, 0),
    ("National Library of Armenia OCR by PortMlnd", True, 1),
    ("Natonal Library of Armenia OCR by PortMind.", True, 2),
    ("National Library of Armenia OCR by Port", False, 4),
    ("OCR by PortMind", True, 0),
    ("OCR by PortMind 1", True, 2),
    ("National Library of Armenia", False, 16),
    ("", False, None),
    ("National  Library of\nArmenia OCR by PortMind", True, 0),
]


@pytest.mark.parametrize("text,expected,min_distance", WATERMARK_VECTORS)
def test_watermark_vectors(text, expected, min_distance):
    assert is_watermark_text(text) is expected
    if min_distance is not None:
        assert min(edit_distance(wkey(text), wkey(p)) for p in group.WATERMARK_PHRASES) == min_distance


def test_watermark_constants():
    assert group.WATERMARK_MAX_EDIT_DISTANCE == 2 and group.WATERMARK_MAX_WINDOW == 12
    assert group.UNIT_LEVELS == ("word", "line") and group.DEFAULT_UNIT_LEVEL == "word"
    assert group.DEFAULT_COVERAGE_THRESHOLD == 1.0
    assert group.MULTI_BOX_SINGLE_COLUMN_LOCATION_THRESHOLD == 0.8
    assert group.MULTI_BOX_SINGLE_COLUMN_OVERLAP_THRESHOLD == 0.8
    with pytest.raises(InvalidTypeError, match="s"):
        is_watermark_text(None)


def test_window_pass_drops_split_watermark():  # W11
    words = make_words([(0, 0, 1, 1, 7, t) for t in ("National", "Library", "of", "Armenia")]
                       + [(0, 0, 1, 1, 8, t) for t in ("OCR", "by", "PortMind")] + [(0, 0, 1, 1, 9, "Բարև")])
    kept, dropped = remove_watermark_words(words)
    assert [w.text for w in kept] == ["Բարև"]
    assert [w.csv_index for w in dropped] == list(range(7))


def test_window_pass_unique_groups():  # W12
    texts = ("National", "Library", "of", "Armenia", "OCR", "by", "PortMind")
    kept, dropped = remove_watermark_words(make_words([(0, 0, 1, 1, i, t) for i, t in enumerate(texts)]))
    assert kept == [] and [w.text for w in dropped] == list(texts)


def test_group_pass_drops_non_contiguous_group():  # W13
    words = make_words([(0, 0, 1, 1, 1, "OCR"), (0, 0, 1, 1, 2, "Բարև"), (0, 0, 1, 1, 1, "by PortMind")])
    kept, dropped = remove_watermark_words(words)
    assert [w.text for w in kept] == ["Բարև"]
    assert [w.text for w in dropped] == ["OCR", "by PortMind"]


def test_issue_reproduction_short_word_before_watermark_line(tmp_path):
    """Issue 30 item 1: `է` ends line 0, the watermark is line 1; only the watermark goes."""
    from scorekit.ocr_pages.box_grouping.loading import annotation_boxes_from_records
    from scorekit.ocr_pages.evaluation.prediction import evaluate_rows

    boxes = annotation_boxes_from_records([{"id": "b", "label": "Paragraph", "transcription": "Սա է",
                                            "bbox": [0, 0, 200, 50]}])
    path = tmp_path / "p.csv"
    write_csv(path, [(10, 10, 50, 30, 0, "Սա"), (60, 10, 80, 30, 0, "է"), (0, 400, 300, 420, 1, "OCR by PortMind")])
    for level in ("word", "line"):
        rows, dropped = load_predicted_rows(path, level)
        assert [w.text for w in dropped] == ["OCR by PortMind"]
        summary = evaluate_rows(boxes, rows, page_id="p", unit_level=level, dropped_words=dropped)["summary"]
        assert summary["ocr_region_cer"] == 0.0 and summary["watermark_words_removed"] == 1


SHORT_WORDS = ("է", "և", "ը", "3")
LONG_SPLIT = ("National", "Library", "of", "Armenia", "OCR", "by", "PortMind")


@pytest.mark.parametrize("word", SHORT_WORDS)
@pytest.mark.parametrize("side", ("before", "after", "both"))
@pytest.mark.parametrize("watermark", (("OCR by PortMind",), ("OCR", "by", "PortMind"), LONG_SPLIT,
                                       ("National Library of Armenia OCR by PortMind",),
                                       ("National Library of Armenia", "OCR by PortMind")))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_short_word_next_to_watermark_is_kept(word, side, watermark, layout):
    before = [word] if side in ("before", "both") else []
    after = [word] if side in ("after", "both") else []
    texts = before + list(watermark) + after
    wm = range(len(before), len(before) + len(watermark))
    groups = line_groups(len(texts), wm, layout)
    kept, dropped = remove_watermark_words(make_words([(0, 0, 1, 1, g, t) for g, t in zip(groups, texts)]))
    assert [w.csv_index for w in dropped] == list(wm)
    assert [w.text for w in kept] == before + after


def test_page_number_on_the_second_watermark_line_is_kept():
    """The long watermark over two lines, a page number ending the second: only the watermark goes."""
    words = make_words([(0, 0, 1, 1, 7, t) for t in LONG_SPLIT[:4]] + [(0, 0, 1, 1, 8, t) for t in LONG_SPLIT[4:]]
                       + [(0, 0, 1, 1, 8, "3")])
    kept, dropped = remove_watermark_words(words)
    assert [w.text for w in kept] == ["3"] and len(dropped) == 7


def test_closest_match_prefers_fewest_edits():
    """`OCR by PortMin` (1 edit) then `d`: `OCR by PortMin d` is 1 edit too, the fewer records win;
    a typo'd watermark before `է` keeps `է`."""
    kept, _ = remove_watermark_words(make_words([(0, 0, 1, 1, 1, "OCR by PortMin"), (0, 0, 1, 1, 1, "d")]))
    assert [w.text for w in kept] == ["d"]
    kept, _ = remove_watermark_words(make_words([(0, 0, 1, 1, 1, "OCR by PortMlnd"), (0, 0, 1, 1, 1, "է")]))
    assert [w.text for w in kept] == ["է"]


def test_match_never_takes_part_of_another_line():
    """`OCR by PortMi` (2 edits) ends line 0, `nd է` is line 1: joined with `nd` it would be 1 edit,
    but that window takes part of line 1, so only line 0's watermark goes."""
    words = make_words([(0, 0, 1, 1, 0, "Սա"), (0, 0, 1, 1, 0, "OCR by PortMi"), (0, 0, 1, 1, 1, "nd"),
                        (0, 0, 1, 1, 1, "է")])
    kept, dropped = remove_watermark_words(words)
    assert [w.text for w in kept] == ["Սա", "nd", "է"] and [w.text for w in dropped] == ["OCR by PortMi"]


def slow_closest(keys, allowed):
    """The closest-match selection with no length pre-filter: every window, every phrase."""
    phrases = sorted((wkey(p) for p in group.WATERMARK_PHRASES), key=len, reverse=True)
    found = []
    for i in range(len(keys)):
        for j in range(i + 1, min(len(keys), i + group.WATERMARK_MAX_WINDOW) + 1):
            joined = " ".join(k for k in keys[i:j] if k)
            for rank, phrase in enumerate(phrases):
                d = edit_distance(joined, phrase)
                if joined and d <= group.WATERMARK_MAX_EDIT_DISTANCE:
                    found.append((rank, d, j - i, i, j))
    found.sort()
    taken = [False] * len(keys)
    for rank, _, _, i, j in found:
        if any(taken[i:j]) or not allowed(i, j):
            continue
        _, _, _, a, b = min(w for w in found if w[0] == rank and i <= w[3] and w[4] <= j)
        taken[a:b] = [True] * (b - a)
    return [k for k, t in enumerate(taken) if t]


def slow_remove_watermarks(words):
    """The window and group passes with no length pre-filter."""
    keys = [wkey(w.text) for w in words]
    groups = [w.group_row for w in words]

    def whole(i, j):
        held = {g for g in groups[i:j] if g}
        return len(held) <= 1 or all(set(k for k, g in enumerate(groups) if g == h) <= set(range(i, j))
                                     for h in held)

    drop = set(slow_closest(keys, whole))
    members = {}
    for k, w in enumerate(words):
        if k not in drop and w.group_row:
            members.setdefault(w.group_row, []).append(k)
    for ks in members.values():
        drop.update(ks[p] for p in slow_closest([keys[k] for k in ks], lambda i, j: True))
    return [w for k, w in enumerate(words) if k not in drop], [w for k, w in enumerate(words) if k in drop]


TOKENS = ["National", "Library", "of", "Armenia", "OCR", "by", "PortMind", "PortMlnd", "", " ", "Բարև",
          "OCR by", "by PortMind", "e\u0301", "\u0301", "ß", "x", "է", "3", "d"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(["", "1", "2"])), max_size=24))
def test_watermark_removal_matches_unfiltered_scan(records):
    words = make_words([(0, 0, 1, 1, g, t) for t, g in records])
    assert remove_watermark_words(words) == slow_remove_watermarks(words)


# ---------------------------------------------------------------------------------------------
# Rows


PAGE_B_CSV = [
    (10, 10, 60, 30, 0, "մեկ"), (70, 10, 140, 30, 0, "երկու"), (150, 10, 220, 30, 0, "երեք"),
    (230, 10, 300, 30, 0, "չորս"), (530, 10, 580, 30, 0, "յոթ"),
    (10, 40, 80, 60, 1, "հինգ"), (90, 40, 150, 60, 2, "վեց"), (600, 10, 650, 30, 3, "ութ"),
    (0, 380, 600, 400, 4, "National Library of Armenia OCR by PortMind"), (900, 380, 950, 400, 5, "էջ 3"),
]
PAGE_B_BOXES = [("p1", (0, 0, 480, 200)), ("p2", (520, 0, 1000, 200))]


def write_csv(path, records):
    lines = ["x1,y1,x2,y2,group_row,text"] + [",".join(str(v) for v in r[:5]) + ',"' + r[5] + '"' for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_load_predicted_rows_line_and_word(tmp_path):
    path = tmp_path / "page.csv"
    write_csv(path, PAGE_B_CSV)
    before = path.read_bytes()
    rows, dropped = load_predicted_rows(path, "line")
    assert [w.text for w in dropped] == ["National Library of Armenia OCR by PortMind"]
    assert [r.row_id for r in rows] == ["g0", "g1", "g2", "g3", "g5"]
    assert rows[0].text == "մեկ երկու երեք չորս յոթ"
    rows, dropped = load_predicted_rows(path)  # word level by default
    assert [r.row_id for r in rows] == ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r9"]
    assert len(dropped) == 1
    rows, dropped = load_predicted_rows(path, "word", drop_watermarks=False)
    assert len(rows) == 10 and dropped == []
    assert path.read_bytes() == before
    with pytest.raises(InvalidValueError, match="unit_level"):
        load_predicted_rows(path, "page")


def test_line_rows_keep_group_strings_and_ungrouped_singletons():
    words = make_words([(0, 0, 1, 1, "7", "a"), (0, 0, 1, 1, "", "b"), (0, 0, 1, 1, "07", "c"),
                        (0, 0, 1, 1, "7", "d"), (0, 0, 1, 1, "", "e")])
    rows = build_rows(words, "line")
    assert [(r.row_id, [w.text for w in r.words]) for r in rows] == [
        ("g7", ["a", "d"]), ("r1", ["b"]), ("g07", ["c"]), ("r4", ["e"])]


# ---------------------------------------------------------------------------------------------
# Page scenarios

PAGE_A_BOXES = [("h1", (0, 0, 490, 40)), ("h2", (510, 0, 1000, 40)),
                ("c1", (0, 50, 490, 300)), ("c2", (510, 50, 1000, 300))]
PAGE_A_CSV = [
    (20, 5, 120, 35, 0, "Մեծ"), (130, 5, 230, 35, 0, "լուր"), (530, 5, 650, 35, 0, "այսօր"),
    (10, 60, 120, 90, 1, "Առաջին"), (130, 60, 260, 90, 1, "սյունակի"), (270, 60, 400, 90, 1, "տեքստը"),
    (410, 60, 480, 90, 1, "շա-"), (10, 100, 200, 130, 2, "րունակվում"), (210, 100, 240, 130, 2, "է"),
    (520, 60, 700, 90, 3, "Երկրորդ"), (710, 60, 900, 90, 3, "սյունակ"),
]


def page_a_box_order(boxes, matches):
    return {m.row.row_id: boxes[m.box_index].id for m in matches if m.status == "exactly_one_box"}


def test_page_a_line_level():  # P1
    boxes = make_boxes(PAGE_A_BOXES)
    matches = classify_rows(build_rows(make_words(PAGE_A_CSV), "line"), boxes)
    ms = by_id(matches)
    assert [m.row.row_id for m in matches] == ["g0", "g1", "g2", "g3"]
    assert ms["g0"].status == "multiple_boxes" and ms["g0"].box_index is None
    assert named(ms["g0"], boxes) == ({"h1": 0.6667, "h2": 0.3333}, {"h1": 0.625, "h2": 0.375})
    assert assigned(ms["g0"], boxes) == {0: "h1", 1: "h1", 2: "h2"}
    assert page_a_box_order(boxes, matches) == {"g1": "c1", "g2": "c1", "g3": "c2"}


def test_page_a_word_level():  # P2
    boxes = make_boxes(PAGE_A_BOXES)
    matches = classify_rows(build_rows(make_words(PAGE_A_CSV), "word"), boxes)
    assert len(matches) == 11 and all(m.status == "exactly_one_box" for m in matches)
    assert [boxes[m.box_index].id for m in matches] == ["h1", "h1", "h2"] + ["c1"] * 6 + ["c2"] * 2


def vlm_rows(headline):
    return build_rows(make_words([headline + (0, "Մեծ լուր այսօր"),
                                  (10, 60, 480, 90, 1, "Առաջին սյունակի տեքստը շա-"),
                                  (10, 100, 240, 130, 2, "րունակվում է"),
                                  (520, 60, 900, 90, 3, "Երկրորդ սյունակ")]), "word")


def test_page_a_vlm_narrow_headline():  # P3
    boxes = make_boxes(PAGE_A_BOXES)
    matches = classify_rows(vlm_rows((20, 5, 650, 35)), boxes)
    r0 = matches[0]
    assert (r0.status, boxes[r0.box_index].id, r0.touched) == ("exactly_one_box", "h1", (0,))
    assert rect_polygon_intersection_area((20, 5, 650, 35), boxes[1].polygon) / (630 * 30) == pytest.approx(140 / 630)
    assert [(m.status, boxes[m.box_index].id) for m in matches[1:]] == [
        ("exactly_one_box", "c1"), ("exactly_one_box", "c1"), ("exactly_one_box", "c2")]
    # in line mode every group is a singleton, so the numbers are identical (C3)
    line = classify_rows(build_rows([w for r in vlm_rows((20, 5, 650, 35)) for w in r.words], "line"), boxes)
    assert [(m.status, m.box_index, m.coverage, m.overlap_coverage) for m in line] == [
        (m.status, m.box_index, m.coverage, m.overlap_coverage) for m in matches]


def test_page_a_vlm_wide_headline():  # P4
    boxes = make_boxes(PAGE_A_BOXES)
    r0 = classify_rows(vlm_rows((20, 5, 980, 35)), boxes)[0]
    assert r0.status == "multiple_boxes" and r0.touched == (0, 1)
    assert r0.coverage == {0: 0.0, 1: 0.0}
    assert r0.overlap_coverage[0] == r0.overlap_coverage[1] == pytest.approx(0.4896, abs=1e-4)
    assert assigned(r0, boxes) == {0: "h1"}  # equal overlap and area -> the lower index


def test_page_b_line_level(tmp_path):  # P5
    boxes = make_boxes(PAGE_B_BOXES)
    path = tmp_path / "b.csv"
    write_csv(path, PAGE_B_CSV)
    rows, dropped = load_predicted_rows(path, "line")
    assert len(dropped) == 1
    matches = classify_rows(rows, boxes)
    ms = by_id(matches)
    assert [m.row.row_id for m in matches] == ["g0", "g1+g2", "g3", "g5"]
    g0 = ms["g0"]
    assert (g0.status, g0.box_index) == ("exactly_one_box", 0)
    assert named(g0, boxes) == ({"p1": 0.8, "p2": 0.2}, {"p1": 0.8387, "p2": 0.1613})
    assert assigned(g0, boxes) == {0: "p1", 1: "p1", 2: "p1", 3: "p1", 4: "p1"}  # the stray յոթ too
    split = ms["g1+g2"]
    assert (split.status, split.box_index, split.fragments, split.touched) == ("split_line", 0, ("g1", "g2"), (0,))
    assert split.row.text == "հինգ վեց" and split.coverage == {0: 1.0} and split.overlap_coverage == {0: 1.0}
    assert split.assignment == {5: 0, 6: 0}
    assert (ms["g3"].status, ms["g3"].box_index) == ("exactly_one_box", 1)
    g5 = ms["g5"]
    assert (g5.status, g5.touched, g5.assignment) == ("no_box", (), {9: None})
    assert status_counts(matches) == {"exactly_one_box": 2, "multiple_boxes": 0, "no_box": 1, "split_line": 1}


def test_page_b_word_level():  # P6
    boxes = make_boxes(PAGE_B_BOXES)
    kept, _ = remove_watermark_words(make_words(PAGE_B_CSV))
    matches = classify_rows(build_rows(kept, "word"), boxes)
    assert [(m.row.row_id, m.status, m.box_index) for m in matches] == [
        ("r0", "exactly_one_box", 0), ("r1", "exactly_one_box", 0), ("r2", "exactly_one_box", 0),
        ("r3", "exactly_one_box", 0), ("r4+r7", "split_line", 1), ("r5+r6", "split_line", 0),
        ("r9", "no_box", None)]
    assert by_id(matches)["r4+r7"].row.text == "յոթ ութ"


PAGE_C_BOXES = [("p1", (0, 0, 480, 200)), ("p2", (520, 0, 1000, 200))]
PAGE_C_CSV = [(10, 10, 40, 30, 0, "ա"), (50, 10, 80, 30, 0, "բ"), (490, 10, 515, 30, 0, "գ"),
              (600, 10, 650, 30, 1, "դ")]


def test_page_c_threshold_one():  # P7
    boxes = make_boxes(PAGE_C_BOXES)
    g0, g1 = classify_rows(build_rows(make_words(PAGE_C_CSV), "line"), boxes, 1.0)
    assert (g0.status, g0.touched, g0.box_index) == ("no_box", (0,), None)
    assert g0.coverage[0] == pytest.approx(2 / 3)
    assert assigned(g0, boxes) == {0: "p1", 1: "p1", 2: None}
    assert (g1.status, g1.box_index) == ("exactly_one_box", 1)


def test_page_c_threshold_point_six():  # P8
    boxes = make_boxes(PAGE_C_BOXES)
    g0 = classify_rows(build_rows(make_words(PAGE_C_CSV), "line"), boxes, 0.6)[0]
    assert (g0.status, g0.box_index, assigned(g0, boxes)) == ("exactly_one_box", 0, {0: "p1", 1: "p1", 2: "p1"})
    assert classify_row(build_rows(make_words(PAGE_C_CSV), "line")[0], boxes, 0.6).status == "exactly_one_box"


def test_page_c_overlap_rule():  # P9
    boxes = make_boxes(PAGE_C_BOXES)
    row = build_rows(make_words([(10, 10, 400, 30, 0, "երկարբառ"), (500, 10, 560, 30, 0, "ա")]), "line")[0]
    m = classify_row(row, boxes)
    assert m.touched == (0, 1) and m.coverage == {0: 0.5, 1: 0.5}
    assert named(m, boxes)[1] == {"p1": 0.8667, "p2": 0.0889}
    assert (m.status, m.box_index, assigned(m, boxes)) == ("exactly_one_box", 0, {0: "p1", 1: "p1"})


def test_page_e_every_row_in_one_box():  # P10
    boxes = make_boxes([("hd", (0, 0, 1000, 50)), ("p", (0, 60, 1000, 200)), ("en", (0, 210, 1000, 260)),
                        ("ph", (0, 270, 400, 500)), ("gr", (500, 270, 1000, 500))])
    words = make_words([(10, 10, 300, 40, 0, "ԼՈՒՐԵՐ"), (10, 70, 600, 100, 1, "Այսօր եղանակը տաք ե"),
                        (10, 220, 600, 250, 2, "The weather is warm todey"), (10, 300, 300, 330, 3, "Լուսանկաը"),
                        (600, 300, 900, 330, 4, "ԳՐԱՖԻԿԱ"), (620, 120, 700, 150, 5, "")])
    matches = classify_rows(build_rows(words, "word"), boxes)
    assert [(m.status, boxes[m.box_index].id) for m in matches] == [
        ("exactly_one_box", b) for b in ("hd", "p", "en", "ph", "gr", "p")]


PAGE_F_BOXES = [("hd", (0, 0, 1000, 50)), ("c1", (0, 60, 490, 300)), ("c2", (510, 60, 1000, 300))]
PAGE_F_CSV = [
    (300, 10, 700, 40, 0, "ԼՈՒՐԵՐ"),
    (10, 70, 200, 90, 1, "Հայաստանը"), (210, 70, 300, 90, 1, "փոքր"), (520, 70, 600, 90, 1, "բայց"),
    (610, 70, 680, 90, 1, "ունի"),
    (10, 100, 120, 120, 2, "երկիր"), (130, 100, 150, 120, 2, "է"), (520, 100, 560, 120, 2, "հին"),
    (570, 100, 760, 120, 2, "պատմություն"),
]


def test_page_f_line_level():  # P11a
    boxes = make_boxes(PAGE_F_BOXES)
    hd, g1, g2 = classify_rows(build_rows(make_words(PAGE_F_CSV), "line"), boxes)
    assert (hd.status, hd.box_index) == ("exactly_one_box", 0)
    assert g1.status == g2.status == "multiple_boxes"
    assert named(g1, boxes) == ({"c1": 0.5, "c2": 0.5}, {"c1": 0.6512, "c2": 0.3488})
    assert named(g2, boxes) == ({"c1": 0.5, "c2": 0.5}, {"c1": 0.3611, "c2": 0.6389})
    assert assigned(g1, boxes) == {1: "c1", 2: "c1", 3: "c2", 4: "c2"}
    assert assigned(g2, boxes) == {5: "c1", 6: "c1", 7: "c2", 8: "c2"}


def test_page_f_word_level():  # P11b
    boxes = make_boxes(PAGE_F_BOXES)
    matches = classify_rows(build_rows(make_words(PAGE_F_CSV), "word"), boxes)
    assert all(m.status == "exactly_one_box" for m in matches) and len(matches) == 9
    assert [boxes[m.box_index].id for m in matches] == ["hd", "c1", "c1", "c2", "c2", "c1", "c1", "c2", "c2"]


def test_page_f_vlm_lines_across_columns():  # P11c
    boxes = make_boxes(PAGE_F_BOXES)
    words = make_words([(300, 10, 700, 40, 0, "ԼՈՒՐԵՐ"), (10, 70, 990, 90, 1, "Հայաստանը փոքր բայց ունի"),
                        (10, 100, 990, 120, 2, "երկիր է հին պատմություն")])
    hd, r1, r2 = classify_rows(build_rows(words, "word"), boxes)
    assert hd.status == "exactly_one_box"
    for m in (r1, r2):
        assert m.status == "multiple_boxes" and m.touched == (1, 2) and m.coverage == {1: 0.0, 2: 0.0}
        assert m.overlap_coverage[1] == m.overlap_coverage[2] == pytest.approx(0.4898, abs=1e-4)
        assert set(assigned(m, boxes).values()) == {"c1"}


def test_page_r_rotated_box():  # P12
    boxes = make_boxes([("r1", (100, 100, 300, 140), 90)])
    words = make_words([(62, 110, 78, 190, 0, "ներքև"), (82, 110, 98, 190, 1, "վերև"),
                        (150, 110, 250, 130, 2, "դուրս")])
    rows = build_rows(words, "line")
    local = [group._local_bbox(r, boxes[0]) for r in rows[:2]]
    assert [tuple(round(v, 6) for v in b) for b in local] == [(110, 122, 190, 138), (110, 102, 190, 118)]
    matches = classify_rows(rows, boxes)
    assert [(m.row.row_id, m.status, m.box_index) for m in matches] == [
        ("g0", "exactly_one_box", 0), ("g1", "exactly_one_box", 0), ("g2", "no_box", None)]
    assert matches[2].touched == () and matches[2].assignment == {2: None}


def test_visual_lines_vector():  # L1 of the reading-order vectors
    a, b, d, c = (10, 10, 100, 30), (120, 12, 200, 32), (110, 28, 150, 48), (10, 45, 100, 65)
    assert group_into_lines(range(4), [a, b, d, c].__getitem__) == [[0, 1], [2], [3]]


def test_same_group_rows_on_one_line_are_not_split():
    boxes = make_boxes([("p", (0, 0, 500, 100))])
    words = make_words([(10, 10, 50, 30, 4, "ա"), (60, 10, 90, 30, 4, "բ"), (100, 10, 130, 30, 4, "գ")])
    matches = classify_rows(build_rows(words, "word"), boxes)
    assert [m.status for m in matches] == ["exactly_one_box"] * 3


def test_split_members_ordered_left_to_right():
    boxes = make_boxes([("p", (0, 0, 500, 100))])
    words = make_words([(300, 10, 400, 30, 0, "երկու"), (10, 10, 100, 30, 1, "մեկ")])
    (m,) = classify_rows(build_rows(words, "line"), boxes)
    assert (m.row.row_id, m.fragments, m.row.text) == ("g1+g0", ("g1", "g0"), "մեկ երկու")


# ---------------------------------------------------------------------------------------------
# Bad input


def test_row_without_words_is_rejected():
    boxes = make_boxes([("p", (0, 0, 10, 10))])
    good = PredictedRow("r0", tuple(make_words([(1, 1, 2, 2, 0, "ա")])))
    with pytest.raises(InvalidValueError, match=r"rows.*1|no words"):
        classify_rows([good, PredictedRow("empty", ())], boxes)
    with pytest.raises(InvalidValueError, match="no words"):
        classify_row(PredictedRow("empty", ()), boxes)


def test_word_in_two_rows_is_rejected():
    (w,) = make_words([(1, 1, 2, 2, 0, "ա")])
    with pytest.raises(InvalidValueError, match="csv_index 0"):
        classify_rows([PredictedRow("a", (w,)), PredictedRow("b", (w,))], [])


def test_page_without_boxes_makes_every_row_no_box():
    rows = build_rows(make_words(PAGE_A_CSV), "line")
    matches = classify_rows(rows, [])
    assert [m.status for m in matches] == ["no_box"] * 4
    assert all(m.touched == () and set(m.assignment.values()) == {None} for m in matches)
    assert classify_rows([], make_boxes(PAGE_A_BOXES)) == []


@pytest.mark.parametrize("threshold", [0, -0.5, 1.0000001, float("nan"), float("inf")])
def test_bad_threshold(threshold):
    with pytest.raises(InvalidValueError, match="coverage_threshold"):
        classify_rows([], [], threshold)


def test_non_row_is_rejected():
    with pytest.raises(InvalidTypeError, match="rows"):
        classify_rows(["r0"], [])
    with pytest.raises(InvalidTypeError, match="coverage_threshold"):
        classify_rows([], [], "high")


# ---------------------------------------------------------------------------------------------
# Brute force against the indexed classifier


def slow_classify(rows, boxes, threshold):
    """Per-pair geometry with the plain functions, every (word, box) pair visited."""
    matches = []
    for row in rows:
        inside = {}
        overlap = {}
        for w in row.words:
            for b, box in enumerate(boxes):
                inside[w.csv_index, b] = point_in_polygon(w.center, box.polygon)
                overlap[w.csv_index, b] = rect_polygon_intersection_area(w.rect, box.polygon)

        def touches(w, b):
            return inside[w.csv_index, b] or (w.area > 0 and overlap[w.csv_index, b] >= 0.25 * w.area)

        T = [b for b in range(len(boxes)) if any(touches(w, b) for w in row.words)]
        area = 0.0
        for w in row.words:
            area += w.area
        cov, ovl = {}, {}
        for b in T:
            cov[b] = sum(1 for w in row.words if inside[w.csv_index, b]) / len(row.words)
            total = 0.0
            for w in row.words:
                total += overlap[w.csv_index, b]
            ovl[b] = cov[b] if area == 0 else total / area

        def size(b):
            return boxes[b].area

        dominant = None
        if len(T) == 1 and cov[T[0]] >= threshold - 1e-9:
            dominant = T[0]
        elif len(T) >= 2:
            loc = [b for b in T if cov[b] >= 0.8 - 1e-9]
            ov = [b for b in T if ovl[b] >= 0.8 - 1e-9]
            if loc:
                dominant = max(loc, key=lambda b: (cov[b], ovl[b], -size(b), -b))
            elif ov:
                dominant = max(ov, key=lambda b: (ovl[b], cov[b], -size(b), -b))

        def primary(w, centre_only):
            held = [b for b in T if inside[w.csv_index, b]]
            if not held and not centre_only:
                held = [b for b in T if overlap[w.csv_index, b] > 0]
            return max(held, key=lambda b: (overlap[w.csv_index, b], -size(b), -b)) if held else None

        if dominant is not None:
            status, assignment = "exactly_one_box", {w.csv_index: dominant for w in row.words}
        elif len(T) >= 2:
            status, assignment = "multiple_boxes", {w.csv_index: primary(w, False) for w in row.words}
        else:
            status, assignment = "no_box", {w.csv_index: primary(w, True) for w in row.words}
        matches.append((row, status, dominant, tuple(T), cov, ovl, assignment))
    return slow_split(matches, boxes)


def slow_split(matches, boxes):
    def local_bbox(row, box):
        pts = [to_local(p, box.bbox, box.rotation) for w in row.words
               for p in ((w.x1, w.y1), (w.x2, w.y1), (w.x2, w.y2), (w.x1, w.y2))]
        return (min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts))

    out = []
    merged = set()
    for b, box in enumerate(boxes):
        cands = [i for i, m in enumerate(matches) if m[1] == "exactly_one_box" and m[2] == b]
        items = [(local_bbox(matches[i][0], box), pos) for pos, i in enumerate(cands)]
        items.sort(key=lambda it: ((it[0][1] + it[0][3]) / 2, (it[0][0] + it[0][2]) / 2, it[1]))
        lines = []
        for bb, pos in items:
            h = max(bb[3] - bb[1], 1)
            if lines:
                last = lines[-1]
                ly1 = min(x[0][1] for x in last)
                ly2 = max(x[0][3] for x in last)
                lh = sum(max(x[0][3] - x[0][1], 1) for x in last) / len(last)
                if min(bb[3], ly2) - max(bb[1], ly1) >= 0.5 * min(h, lh):
                    last.append((bb, pos))
                    continue
            lines.append([(bb, pos)])
        for line in lines:
            line.sort(key=lambda x: (x[0][0], (x[0][0] + x[0][2]) / 2, x[1]))
            members = [matches[cands[pos]] for _, pos in line]
            if len(members) < 2 or len(set().union(*(m[0].groups for m in members))) < 2:
                continue
            words = tuple(w for m in members for w in m[0].words)
            ids = tuple(m[0].row_id for m in members)
            cov = sum(1 for w in words if point_in_polygon(w.center, box.polygon)) / len(words)
            area = total = 0.0
            for w in words:
                area += w.area
                total += rect_polygon_intersection_area(w.rect, box.polygon)
            row = PredictedRow("+".join(ids), words)
            out.append((row, "split_line", b, (b,), {b: cov}, {b: cov if area == 0 else total / area},
                        {w.csv_index: b for w in words}, ids))
            merged.update(cands[pos] for _, pos in line)
    out.extend(m + ((),) for i, m in enumerate(matches) if i not in merged)
    out.sort(key=lambda m: min(w.csv_index for w in m[0].words))
    return out


box_st = st.tuples(st.integers(0, 80), st.integers(0, 80), st.integers(1, 90), st.integers(1, 70),
                   st.sampled_from([0.0, 0.0, 0.0, 90.0, 30.0, -30.0, 180.0, 400.0]))
# words snap to a few baselines so that rows often share a visual line
word_st = st.tuples(st.integers(0, 120), st.integers(0, 12).map(lambda k: 10 * k), st.integers(0, 25),
                    st.integers(0, 12), st.sampled_from(["", "1", "2", "3"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(box_st, max_size=6), st.lists(word_st, min_size=1, max_size=14),
       st.sampled_from(["word", "line"]), st.sampled_from([1.0, 0.6, 0.3]))
def test_classify_rows_matches_brute_force(box_specs, word_specs, unit_level, threshold):
    boxes = make_boxes([(f"b{i}", (x, y, x + w, y + h), rot) for i, (x, y, w, h, rot) in enumerate(box_specs)])
    words = make_words([(x, y, x + w, y + h, g, f"t{i}") for i, (x, y, w, h, g) in enumerate(word_specs)])
    rows = build_rows(words, unit_level)
    got = [(m.row, m.status, m.box_index, m.touched, m.coverage, m.overlap_coverage, m.assignment, m.fragments)
           for m in classify_rows(rows, boxes, threshold)]
    assert got == slow_classify(rows, boxes, threshold)


def test_detect_split_lines_on_single_row_matches():
    boxes = make_boxes(PAGE_B_BOXES)
    kept, _ = remove_watermark_words(make_words(PAGE_B_CSV))
    rows = build_rows(kept, "word")
    singles = [classify_row(r, boxes) for r in rows]
    assert [m.status for m in singles].count("split_line") == 0
    assert detect_split_lines(singles, boxes) == classify_rows(rows, boxes)


def test_header_only_csv_gives_no_rows(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("x1,y1,x2,y2,group_row,text\n", encoding="utf-8")
    assert load_predicted_rows(path, "line") == ([], [])
