"""The HTML page of an OCR-page run: one self-contained file built with ``scorekit.report``.

Sections: the corpus summary; the pages, sortable by CER; for each of the ``MAX_DIFF_PAGES``
pages with the highest CER (ties by page id), a side-by-side diff of ground truth and prediction
for each scored region with errors (at most ``MAX_DIFF_REGIONS_PER_PAGE``, most edits first);
and the ``MAX_CONFUSIONS`` most frequent character substitutions over all scored regions.
Texts are the normalised region texts of the report. The diffs and confusions come from the
plain Levenshtein edit script (``scorekit.batch.editops``), while the CER columns use the
report's schwa-forgiving distance, so a diff may show an edit the CER forgave.
``run_report_sections`` gives the sections alone, so another page (the demo's) can show them.
With the page image, ``page_overlay`` draws a page's ground-truth boxes over it, each filled with
the colour of its region's CER (grey and dashed: excluded or not scored); the run report shows it
after the summary (``page_overlays``: the ``MAX_OVERLAY_PAGES`` worst pages with a scan).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from scorekit import report as rp
from scorekit.batch import editops
from scorekit.errors import InvalidValueError
from scorekit.report.overlay import OverlayShape, image_overlay
from scorekit.report.sections import format_number

MAX_DIFF_PAGES = 50
MAX_DIFF_REGIONS_PER_PAGE = 20
MAX_CONFUSIONS = 25
MAX_OVERLAY_PAGES = 20

_SUMMARY_KEYS = ("variant", "unit_level", "cer_unit", "filters", "coverage_threshold", "page_count",
                 "pages_without_predictions", "gt_box_count", "included_box_count", "predicted_word_count",
                 "watermark_words_removed", "predicted_row_count", "scored_region_count", "ocr_region_cer",
                 "ocr_region_cer_strict", "ocr_region_cer_lowercase", "ocr_region_char_edit_distance",
                 "ocr_region_gt_char_count", "page_mean_cer", "missing_text_box_rate")


def _summary_value(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return value


def page_overlay(report: Mapping[str, Any], page_id: str, boxes: Sequence[Any], image: bytes,
                 prefix: str = "") -> rp.Section:
    """Page ``page_id``'s ground-truth ``boxes`` (the ``AnnotationBox`` list it was scored with)
    drawn over its ``image`` (PNG, JPEG or GIF bytes, the boxes' pixel coordinates): each included
    box filled with the colour of its region's CER, an excluded box or an unscored region's grey
    and dashed; hovering names the region, box, label and CER."""
    by_id = {b.id: b for b in boxes}
    shapes = []
    for region in report["regions"]:
        if region["page_id"] != page_id:
            continue
        cer = region["cer"] if region["scored"] else None
        for ids, excluded in ((region["box_ids"], False), (region["excluded_box_ids"], True)):
            for box_id in ids:
                if box_id not in by_id:
                    raise InvalidValueError(f"region {region['region_id']} names box {box_id!r}, which the boxes "
                                            "given do not hold (were they the ones scored?)", field="boxes")
                box = by_id[box_id]
                state = "excluded" if excluded else ("scored" if region["scored"] else "not scored")
                label = f"region {region['region_id']} \u00b7 box {box_id} ({box.label}) \u00b7 {state}"
                shapes.append(OverlayShape(box.polygon, None if excluded else cer, label))
    return image_overlay(f"{prefix}page {page_id}: boxes coloured by region CER", image, shapes,
                         value_name="region CER")


def page_overlays(report: Mapping[str, Any], images: Mapping[str, Path],
                  boxes_of: Callable[[str], Sequence[Any]]) -> list[rp.Section]:
    """:func:`page_overlay` of the report's pages that have a scan in ``images`` (page id ->
    file), the highest CER first (ties by page id, unscored pages last), at most
    ``MAX_OVERLAY_PAGES``; ``boxes_of(page_id)`` gives the boxes a page was scored with."""
    pages = sorted((p for p in report["pages"] if p["page_id"] in images),
                   key=lambda p: (p["ocr_region_cer"] is None, -(p["ocr_region_cer"] or 0.0), p["page_id"]))
    return [page_overlay(report, p["page_id"], boxes_of(p["page_id"]), Path(images[p["page_id"]]).read_bytes())
            for p in pages[:MAX_OVERLAY_PAGES]]


def run_report_sections(report: Mapping[str, Any], prefix: str = "",
                        overlays: Sequence[rp.Section] = ()) -> list[rp.Section]:
    """The sections of a page or aggregate report's page, each title led by ``prefix`` (so that
    another page, such as the demo's, can show them among its own); ``overlays`` (from
    :func:`page_overlay`) follow the summary."""
    summary = report["summary"]
    items = [(k, _summary_value(summary[k])) for k in _SUMMARY_KEYS if k in summary]
    items += [(f"rows {k}", v) for k, v in summary["row_status_counts"].items()]
    sections = [rp.summary_table(f"{prefix}Corpus summary", items), *overlays]
    pages = list(report["pages"])
    sections.append(rp.data_table(
        f"{prefix}Pages (click a header to sort)",
        ("page", "CER", "edits", "GT chars", "scored regions", "predictions", "missing text boxes"),
        [(p["page_id"], p["ocr_region_cer"], p["ocr_region_char_edit_distance"], p["ocr_region_gt_char_count"],
          p["scored_region_count"], "yes" if p["has_predictions"] else "no", p["missing_text_boxes"]) for p in pages],
        sort_by="CER", descending=True))
    by_page: dict[str, list[Mapping[str, Any]]] = {}
    confusions: Counter[tuple[str, str]] = Counter()
    for region in report["regions"]:
        if not region["scored"]:
            continue
        ops = editops(region["gt_text"], region["predicted_text"])
        for op, i, j in ops:
            if op == "replace":
                confusions[(region["gt_text"][i], region["predicted_text"][j])] += 1
        if region["char_edit_distance"] > 0 or ops:
            by_page.setdefault(region["page_id"], []).append(region)
    worst = sorted((p for p in pages if p["page_id"] in by_page),
                   key=lambda p: (-(p["ocr_region_cer"] or 0.0), p["page_id"]))[:MAX_DIFF_PAGES]
    for page in worst:
        regions = sorted(by_page[page["page_id"]], key=lambda r: (-r["char_edit_distance"], r["region_index"]))
        for region in regions[:MAX_DIFF_REGIONS_PER_PAGE]:
            gt, pred = region["gt_text"], region["predicted_text"]
            cer = "n/a" if region["cer"] is None else format_number(region["cer"])
            sections.append(rp.diff_view(f"{prefix}page {page['page_id']} · region {region['region_id']} · CER {cer}",
                                         gt, pred, editops(gt, pred)))
    top = confusions.most_common(MAX_CONFUSIONS)
    if top:
        sections.append(rp.bar_chart(f"{prefix}Most frequent character confusions (ground truth → prediction)",
                                     [f"{a} → {b}" for (a, b), _ in top],
                                     [n for _, n in top]))
    return sections


def render_run_report(report: Mapping[str, Any], title: str, overlays: Sequence[rp.Section] = ()) -> str:
    """The HTML page of a page or aggregate report (with ``overlays`` after the summary)."""
    return rp.render_page(title, run_report_sections(report, overlays=overlays))


def write_run_report(path: str | Path, report: Mapping[str, Any], title: str, inputs: Iterable[Any],
                     overlays: Sequence[rp.Section] = ()) -> Path:
    """Render and write the page atomically to ``path`` (never over one of ``inputs``)."""
    return rp.write_report(path, render_run_report(report, title, overlays), inputs=list(inputs))
