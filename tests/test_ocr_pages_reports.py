"""Regions, page reports and aggregation of the OCR page kit, checked against the ocr-pages test
vectors (page scenarios and aggregation), plus the report's JSON form and bad input."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.box_grouping.group import classify_rows, build_rows
from scorekit.ocr_pages.box_grouping.loading import PredictedWord, annotation_boxes_from_records
from scorekit.ocr_pages.evaluation.prediction import build_ocr_region_reports, evaluate_rows
from scorekit.ocr_pages.evaluation.reports import FILTERS, REPORT_VARIANTS, aggregate_reports

TOL = 1e-9


def boxes_of(*specs):
    """specs: (id, label, [x1,y1,x2,y2], transcription[, rotation])"""
    records = []
    for s in specs:
        rec = {"id": s[0], "label": s[1], "bbox": list(s[2]), "transcription": s[3]}
        if len(s) > 4:
            rec["rotation"] = s[4]
        records.append(rec)
    return annotation_boxes_from_records(records)


def words_of(*specs):
    return [PredictedWord(float(x1), float(y1), float(x2), float(y2), str(g), t, k)
            for k, (x1, y1, x2, y2, g, t) in enumerate(specs)]


def page(boxes, words, unit_level, page_id="p", **kw):
    return evaluate_rows(boxes, words, page_id=page_id, unit_level=unit_level, **kw)


def regions_brief(rep):
    return [(r["box_ids"], r["gt_char_count"], r["char_edit_distance"], r["normal_single_box_region"])
            for r in rep["regions"]]


# ---------------------------------------------------------------- page A
PAGE_A = boxes_of(
    ("h1", "Headline", [0, 0, 490, 40], "Մեծ լուր"), ("h2", "Headline", [510, 0, 1000, 40], "այսօր"),
    ("c1", "Paragraph", [0, 50, 490, 300], "Առաջին սյունակի տեքստը շա-\nրունակվում է"),
    ("c2", "Paragraph", [510, 50, 1000, 300], "Երկրորդ սյունակ"),
)
CSV_A = words_of(
    (20, 5, 120, 35, 0, "Մեծ"), (130, 5, 230, 35, 0, "լուր"), (530, 5, 650, 35, 0, "այսօր"),
    (10, 60, 120, 90, 1, "Առաջին"), (130, 60, 260, 90, 1, "սյունակի"), (270, 60, 400, 90, 1, "տեքստը"),
    (410, 60, 480, 90, 1, "շա-"), (10, 100, 200, 130, 2, "րունակվում"), (210, 100, 240, 130, 2, "է"),
    (520, 60, 700, 90, 3, "Երկրորդ"), (710, 60, 900, 90, 3, "սյունակ"),
)
VLM_TAIL = [(10, 60, 480, 90, 1, "Առաջին սյունակի տեքստը շա-"), (10, 100, 240, 130, 2, "րունակվում է"),
            (520, 60, 900, 90, 3, "Երկրորդ սյունակ")]


def test_p1_headline_over_two_boxes_is_one_region():
    rep = page(PAGE_A, CSV_A, "line")
    assert regions_brief(rep) == [(["h1", "h2"], 14, 0, False), (["c1"], 37, 0, True), (["c2"], 15, 0, True)]
    r0 = rep["regions"][0]
    assert r0["gt_text"] == r0["predicted_text"] == "Մեծ լուր այսօր"
    assert r0["merged"] and r0["region_id"] == "r0"
    assert rep["regions"][1]["gt_join_count"] == rep["regions"][1]["pred_join_count"] == 1
    s = rep["summary"]
    assert s["ocr_region_cer"] == 0.0 and s["ocr_region_gt_char_count"] == 66
    assert s["normal_single_box_region_count"] == 2 and s["multi_box_region_count"] == 1
    g0 = rep["rows"][0]
    assert g0["status"] == "multiple_boxes" and g0["touched_box_ids"] == ["h1", "h2"]
    assert abs(g0["overlap_coverage"]["h1"] - 0.625) < TOL


def test_p2_word_mode_four_regions():
    rep = page(PAGE_A, CSV_A, "word")
    assert rep["summary"]["row_status_counts"] == {"exactly_one_box": 11, "multiple_boxes": 0, "no_box": 0,
                                                   "split_line": 0}
    assert regions_brief(rep) == [(["h1"], 8, 0, True), (["c1"], 37, 0, True), (["h2"], 5, 0, True),
                                  (["c2"], 15, 0, True)]
    assert rep["summary"]["ocr_region_gt_char_count"] == 65 and rep["summary"]["ocr_region_cer"] == 0.0


def test_p3_narrow_vlm_headline():
    rep = page(PAGE_A, words_of((20, 5, 650, 35, 0, "Մեծ լուր այսօր"), *VLM_TAIL), "word")
    r = rep["regions"]
    assert [(x["box_ids"], x["char_edit_distance"], x["gt_char_count"]) for x in r] == [
        (["h1"], 6, 8), (["c1"], 0, 37), (["h2"], 5, 5), (["c2"], 0, 15)]
    assert r[0]["predicted_text"] == "Մեծ լուր այսօր" and r[0]["cer"] == 0.75
    assert r[2]["predicted_text"] == "" and r[2]["cer"] == 1.0 and not r[2]["normal_single_box_region"]
    s = rep["summary"]
    assert abs(s["ocr_region_cer"] - 0.16923076923076924) < TOL
    assert abs(s["ocr_region_mean_cer"] - 0.4375) < TOL
    assert abs(s["normal_single_box_region_cer"] - 0.1) < TOL
    assert s["normal_single_box_region_char_edit_distance"] == 6 and s["normal_single_box_region_gt_char_count"] == 60


def test_p4_wide_vlm_headline_merges():
    rep = page(PAGE_A, words_of((20, 5, 980, 35, 0, "Մեծ լուր այսօր"), *VLM_TAIL), "word")
    assert rep["rows"][0]["status"] == "multiple_boxes"
    assert len(rep["regions"]) == 3
    assert rep["regions"][0]["gt_text"] == rep["regions"][0]["predicted_text"] == "Մեծ լուր այսօր"
    assert rep["summary"]["ocr_region_cer"] == 0.0 and rep["summary"]["ocr_region_gt_char_count"] == 66


# ---------------------------------------------------------------- page B
PAGE_B = boxes_of(("p1", "Paragraph", [0, 0, 480, 200], "մեկ երկու երեք չորս\nհինգ վեց"),
                  ("p2", "Paragraph", [520, 0, 1000, 200], "յոթ ութ"))
CSV_B = words_of(
    (10, 10, 60, 30, 0, "մեկ"), (70, 10, 140, 30, 0, "երկու"), (150, 10, 220, 30, 0, "երեք"),
    (230, 10, 300, 30, 0, "չորս"), (530, 10, 580, 30, 0, "յոթ"), (10, 40, 80, 60, 1, "հինգ"),
    (90, 40, 150, 60, 2, "վեց"), (600, 10, 650, 30, 3, "ութ"),
    (0, 380, 600, 400, 4, "National Library of Armenia OCR by PortMind"), (900, 380, 950, 400, 5, "էջ 3"),
)


def test_p5_stray_word_split_line_watermark_margin():
    rep = page(PAGE_B, CSV_B, "line")
    s = rep["summary"]
    assert s["watermark_words_removed"] == 1 and s["predicted_word_count"] == 10
    assert s["predicted_row_count"] == 4 and s["split_line_fragments"] == 2
    assert s["row_status_counts"] == {"exactly_one_box": 2, "multiple_boxes": 0, "no_box": 1, "split_line": 1}
    assert s["unassigned_word_count"] == 1 and s["unassigned_char_count"] == 4
    r0, r1 = rep["regions"]
    assert r0["gt_text"] == "մեկ երկու երեք չորս հինգ վեց"
    assert r0["predicted_text"] == "մեկ երկու երեք չորս յոթ հինգ վեց"
    assert (r0["gt_char_count"], r0["pred_char_count"], r0["char_edit_distance"]) == (28, 32, 4)
    assert abs(r0["cer"] - 0.14285714285714285) < TOL and not r0["normal_single_box_region"]
    assert r1["predicted_text"] == "ութ" and (r1["char_edit_distance"], r1["gt_char_count"]) == (4, 7)
    assert r1["normal_single_box_region"]
    assert abs(s["ocr_region_cer"] - 0.22857142857142856) < TOL
    assert abs(s["ocr_region_mean_cer"] - 0.3571428571428571) < TOL
    assert abs(s["normal_single_box_region_cer"] - 0.5714285714285714) < TOL
    assert (s["missing_text_boxes"], s["predicted_boxes_in_text_gt"]) == (0, 8)
    assert [e["region_id"] for e in rep["failure_examples"]] == ["r1", "r0"]
    assert [e["row_id"] for e in rep["row_failure_examples"]] == ["g5"]


def test_p6_word_mode_split_lines():
    rep = page(PAGE_B, CSV_B, "word")
    ids = {r["row_id"]: r["status"] for r in rep["rows"]}
    assert ids["r4+r7"] == "split_line" and ids["r5+r6"] == "split_line" and ids["r9"] == "no_box"
    assert all(ids[f"r{k}"] == "exactly_one_box" for k in range(4))
    assert [(r["char_edit_distance"], r["gt_char_count"]) for r in rep["regions"]] == [(0, 28), (0, 7)]
    assert rep["summary"]["ocr_region_cer"] == 0.0 and rep["summary"]["normal_single_box_region_count"] == 0


# ---------------------------------------------------------------- page C
PAGE_C = boxes_of(("p1", "Paragraph", [0, 0, 480, 200], "ա բ գ"), ("p2", "Paragraph", [520, 0, 1000, 200], "դ"))
CSV_C = words_of((10, 10, 40, 30, 0, "ա"), (50, 10, 80, 30, 0, "բ"), (490, 10, 515, 30, 0, "գ"),
                 (600, 10, 650, 30, 1, "դ"))


def test_p7_threshold_one_leaves_no_box_row_partially_assigned():
    rep = page(PAGE_C, CSV_C, "line")
    r0, r1 = rep["regions"]
    assert r0["predicted_text"] == "ա բ" and (r0["char_edit_distance"], r0["gt_char_count"]) == (2, 5)
    assert abs(r0["cer"] - 0.4) < TOL and not r0["normal_single_box_region"]
    assert (r1["char_edit_distance"], r1["gt_char_count"], r1["normal_single_box_region"]) == (0, 1, True)
    assert abs(rep["summary"]["ocr_region_cer"] - 0.3333333333333333) < TOL
    assert abs(rep["summary"]["ocr_region_mean_cer"] - 0.2) < TOL


def test_p8_lower_threshold():
    rep = page(PAGE_C, CSV_C, "line", coverage_threshold=0.6)
    assert rep["regions"][0]["predicted_text"] == "ա բ գ"
    assert rep["summary"]["ocr_region_cer"] == 0.0 and rep["summary"]["normal_single_box_region_count"] == 2
    assert rep["summary"]["coverage_threshold"] == 0.6


def test_p9_overlap_rule_and_cer_above_one():
    rep = page(PAGE_C, words_of((10, 10, 400, 30, 0, "երկարբառ"), (500, 10, 560, 30, 0, "ա")), "line")
    r0, r1 = rep["regions"]
    assert r0["predicted_text"] == "երկարբառ ա" and r0["char_edit_distance"] == 7 and abs(r0["cer"] - 1.4) < TOL
    assert r1["predicted_text"] == "" and r1["char_edit_distance"] == 1
    assert abs(rep["summary"]["ocr_region_cer"] - 1.3333333333333333) < TOL


# ---------------------------------------------------------------- page E (filters)
PAGE_E = boxes_of(
    ("hd", "Headline", [0, 0, 1000, 50], "ԼՈՒՐԵՐ"), ("p", "Paragraph", [0, 60, 1000, 200], "Այսօր եղանակը տաք է"),
    ("en", "Paragraph", [0, 210, 1000, 260], "The weather is warm today"),
    ("ph", "Photo", [0, 270, 400, 500], "Լուսանկար"), ("gr", "Graphics", [500, 270, 1000, 500], ""),
    ("rl", "Rule", [0, 505, 1000, 507], ""),
)
CSV_E = words_of(
    (10, 10, 300, 40, 0, "ԼՈՒՐԵՐ"), (10, 70, 600, 100, 1, "Այսօր եղանակը տաք ե"),
    (10, 220, 600, 250, 2, "The weather is warm todey"), (10, 300, 300, 330, 3, "Լուսանկաը"),
    (600, 300, 900, 330, 4, "ԳՐԱՖԻԿԱ"), (620, 120, 700, 150, 5, ""),
)


@pytest.mark.parametrize("variant, scored, d, n, cer, mean, missing, denom", [
    ("no_filter", ["hd", "p", "en", "ph"], 3, 59, 0.05084745762711865, 0.05093567251461988, 1, 5),
    ("non_armenian", ["hd", "p", "ph"], 2, 34, 0.058823529411764705, 0.05458089668615984, 1, 4),
    ("graphics_headers_images_photos", ["p", "en"], 2, 44, 0.045454545454545456, 0.04631578947368421, 1, 3),
    ("all_filters", ["p"], 1, 19, 0.05263157894736842, 0.05263157894736842, 1, 2),
])
def test_p10_filter_variants(variant, scored, d, n, cer, mean, missing, denom):
    rep = page(PAGE_E, CSV_E, "word", filters=REPORT_VARIANTS[variant])
    s = rep["summary"]
    assert s["variant"] == variant
    assert s["gt_box_count"] == 5 and s["gt_boxes_dropped"]["rule"] == 1 and s["untranscribed_box_count"] == 1
    assert [r["box_ids"] for r in rep["regions"] if r["scored"]] == [[b] for b in scored]
    assert [r["excluded_box_ids"] for r in rep["regions"]][-1] == ["gr"]
    assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"]) == (d, n)
    assert abs(s["ocr_region_cer"] - cer) < TOL and abs(s["ocr_region_mean_cer"] - mean) < TOL
    assert (s["missing_text_boxes"], s["predicted_boxes_in_text_gt"]) == (missing, denom)
    assert abs(s["missing_text_box_rate"] - missing / denom) < TOL
    assert s["excluded_region_count"] == 5 - len(scored)
    assert s["included_box_count"] == len(scored) and s["filtered_box_count"] == 4 - len(scored)
    assert all("ԳՐԱՖԻԿԱ" not in r["predicted_text"] for r in rep["regions"])


def test_filters_are_canonical_and_unknown_filter_is_named():
    rep = page(PAGE_E, CSV_E, "word", filters="header,photo,graphics,image,graphics")
    assert rep["summary"]["filters"] == ["graphics", "photo", "image", "header"]
    assert rep["summary"]["variant"] == "graphics_headers_images_photos"
    assert rep["summary"]["excluded_labels"] == sorted(
        ["Photo", "Graphics", "SealFigure", "FrontPicture", "Headline", "Kicker", "Banner", "Deck", "Subhead",
         "Nameplate", "Masthead", "FrontStory"])
    assert page(PAGE_E, CSV_E, "word", filters=["photo"])["summary"]["variant"] is None
    with pytest.raises(InvalidValueError, match="nope"):
        page(PAGE_E, CSV_E, "word", filters="photo,nope")
    assert set(FILTERS) >= {f for fs in REPORT_VARIANTS.values() for f in fs}


# ---------------------------------------------------------------- page F and R
PAGE_F = boxes_of(("hd", "Headline", [0, 0, 1000, 50], "ԼՈՒՐԵՐ"),
                  ("c1", "Paragraph", [0, 60, 490, 300], "Հայաստանը փոքր\nերկիր է"),
                  ("c2", "Paragraph", [510, 60, 1000, 300], "բայց ունի\nհին պատմություն"))
CSV_F = words_of(
    (300, 10, 700, 40, 0, "ԼՈՒՐԵՐ"), (10, 70, 200, 90, 1, "Հայաստանը"), (210, 70, 300, 90, 1, "փոքր"),
    (520, 70, 600, 90, 1, "բայց"), (610, 70, 680, 90, 1, "ունի"), (10, 100, 120, 120, 2, "երկիր"),
    (130, 100, 150, 120, 2, "է"), (520, 100, 560, 120, 2, "հին"), (570, 100, 760, 120, 2, "պատմություն"),
)


def test_p11a_cross_column_lines_merge_columns():
    rep = page(PAGE_F, CSV_F, "line")
    hd, cols = rep["regions"]
    assert hd["box_ids"] == ["hd"] and hd["normal_single_box_region"] and hd["gt_char_count"] == 6
    assert cols["box_ids"] == ["c1", "c2"]
    assert cols["gt_text"] == cols["predicted_text"] == "Հայաստանը փոքր երկիր է բայց ունի հին պատմություն"
    assert cols["gt_char_count"] == 48 and rep["summary"]["ocr_region_cer"] == 0.0


def test_p11b_word_mode():
    rep = page(PAGE_F, CSV_F, "word")
    assert regions_brief(rep) == [(["hd"], 6, 0, True), (["c1"], 22, 0, True), (["c2"], 25, 0, True)]


def test_p11c_vlm_lines_over_both_columns():
    rep = page(PAGE_F, words_of((300, 10, 700, 40, 0, "ԼՈՒՐԵՐ"), (10, 70, 990, 90, 1, "Հայաստանը փոքր բայց ունի"),
                                (10, 100, 990, 120, 2, "երկիր է հին պատմություն")), "word")
    cols = rep["regions"][1]
    assert cols["predicted_text"] == "Հայաստանը փոքր բայց ունի երկիր է հին պատմություն"
    assert cols["char_edit_distance"] == 16 and abs(cols["cer"] - 0.3333333333333333) < TOL
    s = rep["summary"]
    assert abs(s["ocr_region_cer"] - 0.2962962962962963) < TOL
    assert abs(s["ocr_region_mean_cer"] - 0.16666666666666666) < TOL
    assert s["predicted_boxes_in_text_gt"] == 1


def test_p12_rotated_box_local_order():
    boxes = boxes_of(("r1", "Paragraph", [100, 100, 300, 140], "վերև\nներքև", 90))
    rep = page(boxes, words_of((62, 110, 78, 190, 0, "ներքև"), (82, 110, 98, 190, 1, "վերև"),
                               (150, 110, 250, 130, 2, "դուրս")), "line")
    (r,) = rep["regions"]
    assert r["gt_text"] == r["predicted_text"] == "վերև ներքև"
    assert r["gt_char_count"] == 10 and r["char_edit_distance"] == 0 and r["normal_single_box_region"]
    assert [x["status"] for x in rep["rows"]] == ["exactly_one_box", "exactly_one_box", "no_box"]


def test_build_ocr_region_reports_matches_evaluate_rows():
    matches = classify_rows(build_rows(CSV_A, "line"), PAGE_A)
    assert build_ocr_region_reports(PAGE_A, matches, page_id="p") == page(PAGE_A, CSV_A, "line")["regions"]


# ---------------------------------------------------------------- aggregation
def _ag1_inputs():
    return [page(PAGE_A, CSV_A, "line", page_id="A"), page(PAGE_B, CSV_B, "line", page_id="B"),
            page(PAGE_C, CSV_C, "line", page_id="C")]


def test_ag1_aggregation_recomputes_from_regions():
    agg = aggregate_reports(_ag1_inputs())
    s = agg["summary"]
    assert agg["kind"] == "aggregate" and "rows" not in agg
    assert s["page_count"] == 3 and s["scored_region_count"] == 7
    assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"]) == (10, 107)
    assert abs(s["ocr_region_cer"] - 0.09345794392523364) < TOL
    assert abs(s["ocr_region_mean_cer"] - 0.15918367346938775) < TOL
    assert abs(s["page_mean_cer"] - 0.1873015873015873) < TOL
    assert s["normal_single_box_region_count"] == 4
    assert (s["normal_single_box_region_char_edit_distance"], s["normal_single_box_region_gt_char_count"]) == (4, 60)
    assert abs(s["normal_single_box_region_cer"] - 0.06666666666666667) < TOL
    assert abs(s["normal_single_box_region_mean_cer"] - 0.14285714285714285) < TOL
    assert s["row_status_counts"] == {"exactly_one_box": 6, "multiple_boxes": 1, "no_box": 2, "split_line": 1}
    assert s["variant"] == "no_filter"
    assert [p["page_id"] for p in agg["pages"]] == ["A", "B", "C"]


def test_aggregation_is_associative():
    a, b, c = _ag1_inputs()
    flat = aggregate_reports([c, a, b])
    nested = aggregate_reports([aggregate_reports([a, b]), c])
    assert json.dumps(flat, ensure_ascii=False) == json.dumps(nested, ensure_ascii=False)


def test_ag2_unit_levels_differ():
    with pytest.raises(InvalidValueError, match="unit_level"):
        aggregate_reports([page(PAGE_A, CSV_A, "line", page_id="A"), page(PAGE_A, CSV_A, "word", page_id="B")])


def test_duplicated_page_ids_are_named():
    with pytest.raises(InvalidValueError, match="'A'"):
        aggregate_reports([page(PAGE_A, CSV_A, "line", page_id="A"), page(PAGE_C, CSV_C, "line", page_id="A")])


def _cut_regions(rep):
    return {k: v for k, v in rep.items() if k != "regions"}


def _edited_region(rep, **change):
    return dict(rep, regions=[dict(rep["regions"][0], **change)] + rep["regions"][1:])


def _without_region_key(rep, key):
    return dict(rep, regions=[{k: v for k, v in r.items() if k != key} for r in rep["regions"]])


@pytest.mark.parametrize("spoil, pattern", [
    (_cut_regions, r"item 1: .*has no 'pages' and 'regions' lists"),
    (lambda r: dict(r, regions=[]), r"item 1: .*give region_count 0, its summary says"),
    (lambda r: dict(r, pages=[]), r"item 1: .*lists 0 pages, its summary counts 1"),
    (lambda r: _edited_region(r, char_edit_distance=0), r"item 1: .*give ocr_region_cer 0.114.*, its summary says 0.228"),
    (lambda r: _without_region_key(r, "cer"), r"item 1: .*malformed page or region entry \(KeyError: 'cer'\)"),
    (lambda r: _edited_region(r, gt_char_count="2"), r"item 1: .*malformed page or region entry \(TypeError"),
])
def test_a_report_whose_regions_do_not_give_its_summary_is_refused(spoil, pattern):
    """A page report cut or edited by hand used to merge: its page counted, its regions missing,
    and the corpus CER came out wrong without a word (or a raw KeyError)."""
    a, b, _ = _ag1_inputs()
    assert b["summary"]["ocr_region_char_edit_distance"] > 0
    before = aggregate_reports([a, b])["summary"]
    with pytest.raises(InvalidValueError, match=pattern):
        aggregate_reports([a, spoil(b)])
    assert aggregate_reports([a, b])["summary"] == before  # the inputs were not changed


def test_empty_aggregate_has_null_cers():
    s = aggregate_reports([], variant="all_filters")["summary"]
    assert s["page_count"] == 0 and s["ocr_region_cer"] is None and s["page_mean_cer"] is None
    assert s["filters"] == list(REPORT_VARIANTS["all_filters"]) and s["variant"] == "all_filters"
    assert s["row_status_counts"] == {"exactly_one_box": 0, "multiple_boxes": 0, "no_box": 0, "split_line": 0}
    # an empty aggregate is neutral, whatever settings it carries
    c = page(PAGE_C, CSV_C, "line", page_id="C")
    assert aggregate_reports([aggregate_reports([]), c]) == aggregate_reports([c])


# ---------------------------------------------------------------- JSON form and bad input
SUMMARY_KEYS = [
    "unit_level", "cer_unit", "variant", "filters", "excluded_labels", "coverage_threshold", "page_count",
    "pages_without_predictions", "gt_box_count", "gt_boxes_dropped", "untranscribed_box_count",
    "filtered_box_count", "included_box_count", "predicted_word_count", "watermark_words_removed",
    "predicted_row_count", "row_status_counts", "split_line_fragments", "unassigned_word_count",
    "unassigned_char_count", "region_count", "scored_region_count", "excluded_region_count",
    "multi_box_region_count", "normal_single_box_region_count", "ocr_region_cer", "ocr_region_mean_cer",
    "ocr_region_char_edit_distance", "ocr_region_gt_char_count", "ocr_region_pred_char_count",
    "ocr_region_cer_strict", "ocr_region_mean_cer_strict", "ocr_region_char_edit_distance_strict",
    "schwa_forgiven_edits", "ocr_region_cer_lowercase", "ocr_region_mean_cer_lowercase",
    "ocr_region_char_edit_distance_lowercase", "ocr_region_gt_char_count_lowercase",
    "normal_single_box_region_cer", "normal_single_box_region_mean_cer",
    "normal_single_box_region_char_edit_distance", "normal_single_box_region_gt_char_count",
    "normal_single_box_region_cer_lowercase", "missing_text_boxes", "predicted_boxes_in_text_gt",
    "missing_text_box_rate", "page_mean_cer",
]


def test_reports_are_strict_json_in_schema_order():
    reps = _ag1_inputs() + [page([], CSV_C, "line", page_id="empty")]
    for rep in reps + [aggregate_reports(reps)]:
        text = json.dumps(rep, ensure_ascii=False, allow_nan=False)
        back = json.loads(text)
        assert list(back["summary"]) == SUMMARY_KEYS
        assert list(back)[:3] == ["schema_version", "kind", "summary"]


def test_page_without_boxes():
    rep = page([], CSV_C, "line")
    s = rep["summary"]
    assert rep["regions"] == [] and s["page_count"] == 1 and s["gt_box_count"] == 0
    assert s["ocr_region_cer"] is None and s["ocr_region_mean_cer"] is None and s["page_mean_cer"] is None
    assert s["row_status_counts"]["no_box"] == 2 and s["unassigned_word_count"] == 4
    agg = aggregate_reports([rep, page(PAGE_C, CSV_C, "line", page_id="C")])
    assert abs(agg["summary"]["page_mean_cer"] - 0.3333333333333333) < TOL


def test_page_without_predictions():
    rep = page(PAGE_C, [], "line", has_predictions=False)
    assert rep["summary"]["pages_without_predictions"] == 1 and rep["pages"][0]["has_predictions"] is False
    assert rep["summary"]["ocr_region_cer"] == 1.0 and rep["summary"]["predicted_row_count"] == 0


def test_empty_ground_truth_follows_the_empty_reference_rule():
    boxes = boxes_of(("b", "Paragraph", [0, 0, 100, 100], " "), ("c", "Paragraph", [200, 0, 300, 100], " "))
    rep = page(boxes, words_of((10, 10, 50, 30, 0, "աբ")), "word")
    hit, empty = rep["regions"]
    assert (hit["gt_char_count"], hit["char_edit_distance"], hit["cer"], hit["scored"]) == (0, 2, 1.0, True)
    assert empty["scored"] is False and empty["cer"] == 0.0
    s = rep["summary"]
    assert s["scored_region_count"] == 1 and s["ocr_region_cer"] == 1.0 and s["ocr_region_gt_char_count"] == 0


def test_bad_arguments_are_named():
    with pytest.raises(InvalidTypeError, match="boxes"):
        evaluate_rows(["not a box"], CSV_C, page_id="p")
    with pytest.raises(InvalidValueError, match="coverage_threshold"):
        page(PAGE_C, CSV_C, "line", coverage_threshold=0)
    with pytest.raises(InvalidValueError, match="unit_level"):
        page(PAGE_C, CSV_C, "para")
    with pytest.raises(InvalidValueError, match="variant"):
        aggregate_reports([], variant="nope")
    with pytest.raises(InvalidValueError, match="filters"):
        aggregate_reports([page(PAGE_C, CSV_C, "line", page_id="a"),
                           page(PAGE_C, CSV_C, "line", page_id="b", filters="photo")])


def test_duplicate_box_ids_and_bad_page_id():
    a, b = boxes_of(("x", "Paragraph", [0, 0, 10, 10], "ա"), ("y", "Paragraph", [20, 0, 30, 10], "բ"))
    import dataclasses
    with pytest.raises(InvalidValueError, match="'x' occurs twice"):
        evaluate_rows([a, dataclasses.replace(b, id="x")], [], page_id="p")
    with pytest.raises(InvalidTypeError, match="page_id"):
        evaluate_rows([a], [], page_id=None)


@pytest.mark.parametrize("module", ["prediction", "reports"])
def test_doctests(module):
    import doctest
    import importlib
    mod = importlib.import_module(f"scorekit.ocr_pages.evaluation.{module}")
    result = doctest.testmod(mod)
    assert result.attempted > 0 and result.failed == 0


def test_one_classification_serves_every_variant():
    from scorekit.ocr_pages.evaluation.prediction import evaluate_matches
    matches = classify_rows(build_rows(CSV_E, "word"), PAGE_E)
    for _name, filters in REPORT_VARIANTS.items():
        direct = page(PAGE_E, CSV_E, "word", filters=filters)
        assert evaluate_matches(PAGE_E, matches, page_id="p", unit_level="word", filters=filters) == direct
    # a plain iterable of boxes works; it carries no drop counts, so those are zeros
    rep = evaluate_rows((b for b in PAGE_E), CSV_E, page_id="p", unit_level="word")
    assert rep["summary"]["gt_boxes_dropped"] == {"rule": 0, "degenerate": 0, "duplicate": 0, "container": 0}
    assert rep["regions"] == page(PAGE_E, CSV_E, "word")["regions"]


def test_failure_examples_are_cut_and_capped():
    from scorekit.ocr_pages.evaluation.reports import MAX_EXAMPLE_TEXT_CHARS, report_to_json
    long_gt = " ".join(["բառ"] * 700)  # 2799 characters
    boxes = boxes_of(*[(f"b{k}", "Paragraph", [k * 100, 0, k * 100 + 90, 90], long_gt if k == 0 else "ա")
                       for k in range(4)])
    words = words_of((5, 5, 50, 50, 0, "x"), *[(k * 100 + 5, 5, k * 100 + 50, 50, k, "բ") for k in range(1, 4)])
    rep = page(boxes, words, "word", max_examples=2)
    ex = rep["failure_examples"]
    assert [e["region_id"] for e in ex] == ["r0", "r1"]  # largest distance first, then page order
    assert ex[0]["truncated"] is True and len(ex[0]["gt_text"]) == MAX_EXAMPLE_TEXT_CHARS
    assert "truncated" not in ex[1]
    assert rep["regions"][0]["gt_char_count"] == len(long_gt)
    text = report_to_json(rep)
    assert text.endswith("}\n") and json.loads(text) == json.loads(json.dumps(rep))
    with pytest.raises(ValueError):
        report_to_json({"summary": {"ocr_region_cer": float("nan")}})


def test_aggregate_rejects_malformed_reports():
    good = page(PAGE_C, CSV_C, "line", page_id="C")
    with pytest.raises(InvalidTypeError, match="reports"):
        aggregate_reports(good)
    with pytest.raises(InvalidTypeError, match="item 1"):
        aggregate_reports([good, {"pages": []}])
    bad = {**good, "summary": {k: v for k, v in good["summary"].items() if k != "page_count"}}
    with pytest.raises(InvalidValueError, match="page_count"):
        aggregate_reports([bad])


def _scenario_reports():
    vlm3 = words_of((20, 5, 650, 35, 0, "Մեծ լուր այսօր"), *VLM_TAIL)
    return [page(PAGE_A, CSV_A, "line", page_id="A1"), page(PAGE_A, vlm3, "line", page_id="A3"),
            page(PAGE_B, CSV_B, "line", page_id="B"), page(PAGE_C, CSV_C, "line", page_id="C"),
            page(PAGE_E, CSV_E, "line", page_id="E"), page(PAGE_F, CSV_F, "line", page_id="F"),
            page([], CSV_C, "line", page_id="Z")]


SCENARIOS = _scenario_reports()


@given(st.permutations(range(len(SCENARIOS))), st.integers(0, len(SCENARIOS)))
@settings(max_examples=30, deadline=None)
def test_aggregation_is_order_free_and_region_weighted(order, cut):
    reps = [SCENARIOS[k] for k in order]
    flat = aggregate_reports(reps)
    assert flat == aggregate_reports([aggregate_reports(reps[:cut]), aggregate_reports(reps[cut:])])
    scored = [r for rep in reps for r in rep["regions"] if r["scored"]]
    d = sum(r["char_edit_distance"] for r in scored)
    n = sum(r["gt_char_count"] for r in scored)
    s = flat["summary"]
    assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"]) == (d, n)
    assert abs(s["ocr_region_cer"] - d / n) < TOL
    assert abs(s["ocr_region_mean_cer"] - sum(r["cer"] for r in scored) / len(scored)) < TOL
    page_cers = [rep["summary"]["ocr_region_cer"] for rep in reps if rep["summary"]["scored_region_count"]]
    assert abs(s["page_mean_cer"] - sum(page_cers) / len(page_cers)) < TOL
    assert s["page_count"] == len(reps)


def test_matches_for_other_boxes_are_rejected():
    matches = classify_rows(build_rows(CSV_A, "line"), PAGE_A)
    with pytest.raises(InvalidValueError, match="refers to box"):
        build_ocr_region_reports(PAGE_C, matches, page_id="p")
    with pytest.raises(InvalidTypeError, match="matches"):
        build_ocr_region_reports(PAGE_A, ["row"], page_id="p")


# -- CER in grapheme clusters -----------------------------------------------------------------------

DEVANAGARI_BOXES = boxes_of(("d", "Paragraph", [0, 0, 200, 40], "नमस्ते"))
DEVANAGARI_WORDS = words_of((5, 5, 100, 30, 0, "नमस्त"), (300, 300, 310, 310, 1, "कि"))


def test_grapheme_unit_counts_clusters_through_the_report():
    """नमस्ते is 6 code points but 3 clusters (न, म, स्ते); the OCR lost the vowel sign: one edit
    either way, so the region CER is 1/6 in code points and 1/3 in clusters. The stray word कि
    outside the box is 2 code points, 1 cluster."""
    char = page(DEVANAGARI_BOXES, DEVANAGARI_WORDS, "word")
    grapheme = page(DEVANAGARI_BOXES, DEVANAGARI_WORDS, "word", unit="grapheme")
    for rep, unit, n, unassigned in ((char, "char", 6, 2), (grapheme, "grapheme", 3, 1)):
        s = rep["summary"]
        assert s["cer_unit"] == unit
        assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"]) == (1, n)
        assert s["ocr_region_cer"] == 1 / n
        assert s["unassigned_char_count"] == unassigned
        assert rep["regions"][0]["gt_char_count"] == n
    assert aggregate_reports([grapheme])["summary"]["cer_unit"] == "grapheme"
    with pytest.raises(InvalidValueError, match="cer_unit 'grapheme' differs from 'char'"):
        aggregate_reports([char, page(DEVANAGARI_BOXES, DEVANAGARI_WORDS, "word", page_id="q", unit="grapheme")])
    with pytest.raises(InvalidValueError, match="unit"):
        page(DEVANAGARI_BOXES, DEVANAGARI_WORDS, "word", unit="glyph")


def test_reports_without_cer_unit_aggregate_as_code_points():
    """Reports written before ``cer_unit`` existed count code points and still aggregate."""
    old = page(DEVANAGARI_BOXES, DEVANAGARI_WORDS, "word")
    del old["summary"]["cer_unit"]
    merged = aggregate_reports([old, page(DEVANAGARI_BOXES, DEVANAGARI_WORDS, "word", page_id="q")])
    assert merged["summary"]["cer_unit"] == "char" and merged["summary"]["ocr_region_gt_char_count"] == 12


@pytest.mark.parametrize("statement, module, name", [
    ("from scorekit.ocr_pages.evaluation.reports import build_ocr_region_reports",
     "scorekit.ocr_pages.evaluation.prediction", "build_ocr_region_reports"),
    ("from scorekit.ocr_pages.box_grouping.loading import load_predicted_rows",
     "scorekit.ocr_pages.box_grouping.group", "load_predicted_rows"),
])
def test_seed_module_paths_import_the_one_implementation(statement, module, name):
    """Seed 002 documents these paths; each names the function defined in ``module``, whatever was
    imported first (a fresh interpreter)."""
    import subprocess
    import sys
    from pathlib import Path

    import scorekit

    check = f"{statement}\nimport {module} as m\nassert {name} is m.{name}, {name}\nprint({name}.__module__)"
    env = {"PYTHONPATH": str(Path(scorekit.__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout == f"{module}\n", done.stderr
