"""Scoring one page: regions of ground-truth boxes, the predicted and ground-truth text of each,
filters, and the page report (``evaluate_rows``).

Regions are the connected components of the boxes under the edges drawn by ``multiple_boxes``
rows (a row spread over several boxes joins them); an isolated box is its own region. Regions are
numbered in the page reading order of their first member. Each region is scored once: the
included boxes' texts, in reading order, are concatenated on both sides and compared with the
schwa-forgiving CER (one batch kernel call per page).

Excluded boxes are those matched by an active filter and those without a transcription (their
ground truth is unknown). They keep their geometry and adjacency; their ground truth leaves the
region text, and a predicted word leaves it when its centre lies in an excluded box and in no
included one. Words assigned to no box are reported as unassigned and never penalised.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from scorekit._graphemes import check_unit, unit_lengths
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.box_grouping.geometry import BoxIndex
from scorekit.ocr_pages.box_grouping.group import (
    DEFAULT_COVERAGE_THRESHOLD, DEFAULT_UNIT_LEVEL, ROW_STATUSES, _check_threshold, _check_unit_level, _local_bbox,
    build_rows, classify_rows, remove_watermark_words,
)
from scorekit.ocr_pages.box_grouping.loading import AnnotationBox, AnnotationBoxes, PredictedRow, PredictedWord, RowMatch
from scorekit.ocr_pages.box_grouping.reading_order import group_into_lines, group_items_left_to_right_top_to_bottom
from scorekit.ocr_pages.config import PageKitConfig, resolve_config
from scorekit.ocr_pages.evaluation.reports import (
    MAX_FAILURE_EXAMPLES, SCHEMA_VERSION, _check_max_examples, build_summary, canonical_filters, failure_examples,
    filter_excludes, variant_of_filters,
)
from scorekit.ocr_pages.evaluation.text_metrics import (
    JoinedText, compute_text_metrics_batch, concat_joined, join_box_lines_with_hyphenation, normalize_text,
)

__all__ = ["build_ocr_region_reports", "evaluate_rows", "evaluate_matches", "excluded_box_indices"]


def _check_boxes(boxes: Any) -> AnnotationBoxes:
    """``boxes`` as an ``AnnotationBoxes`` (keeping the loader's drop counts, zeros if none)."""
    boxes = AnnotationBoxes(boxes, getattr(boxes, "dropped", None))
    ids: set[str] = set()
    for i, b in enumerate(boxes):
        if not isinstance(b, AnnotationBox):
            raise InvalidTypeError(f"must be an AnnotationBox, got {type(b).__name__}", field="boxes", item=i)
        if b.id in ids:
            raise InvalidValueError(f"box id {b.id!r} occurs twice", field="boxes", item=i)
        ids.add(b.id)
    return boxes


def _check_matches(matches: Any, n_boxes: int) -> list[RowMatch]:
    """``matches`` as a list, each a ``RowMatch`` whose box indices lie in ``range(n_boxes)`` and
    whose ``multiple_boxes`` rows touch at least two boxes."""
    matches = list(matches)
    for k, m in enumerate(matches):
        if not isinstance(m, RowMatch):
            raise InvalidTypeError(f"must be a RowMatch, got {type(m).__name__}", field="matches", item=k)
        used = [*m.touched, *(b for b in m.assignment.values() if b is not None)]
        if m.box_index is not None:
            used.append(m.box_index)
        bad = [b for b in used if not (isinstance(b, int) and 0 <= b < n_boxes)]
        if bad:
            raise InvalidValueError(f"refers to box {bad[0]!r}, but the page has {n_boxes} boxes",
                                    field="matches", item=k)
        if m.status == "multiple_boxes" and len(m.touched) < 2:
            raise InvalidValueError("is multiple_boxes but touches fewer than two boxes", field="matches", item=k)
    return matches


def _check_page_id(page_id: Any) -> str:
    if not isinstance(page_id, str) or not page_id:
        raise InvalidTypeError(f"must be a non-empty str, got {page_id!r}", field="page_id")
    return page_id


def excluded_box_indices(boxes: Sequence[AnnotationBox], filters: Sequence[str],
                         config: Optional[PageKitConfig] = None) -> tuple[set[int], set[int]]:
    """``(untranscribed, filtered)``: the indices of boxes without a transcription, and of the
    transcribed boxes that an active filter (of ``config``) excludes."""
    config = resolve_config(config)
    active = [config.filter_map[f] for f in canonical_filters(filters, config)]
    untranscribed = {i for i, b in enumerate(boxes) if not b.has_transcription}
    filtered = {
        i for i, b in enumerate(boxes)
        if i not in untranscribed and any(filter_excludes(f, b.label, b.transcription) for f in active)
    }
    return untranscribed, filtered


def _components(n: int, matches: Sequence[RowMatch]) -> list[list[int]]:
    """Union-find over the boxes, joined by the touched sets of ``multiple_boxes`` rows."""
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for m in matches:
        if m.status == "multiple_boxes":
            root = find(m.touched[0])
            for b in m.touched[1:]:
                other = find(b)
                if other != root:
                    parent[other] = root
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _box_predicted_text(fragments: list[tuple[tuple[float, float, float, float], str]]) -> JoinedText:
    """The lines of one box's fragments (local bbox, text), hyphen-joined."""
    lines = group_into_lines(range(len(fragments)), lambda k: fragments[k][0])
    texts = [" ".join(fragments[k][1] for k in line if fragments[k][1]) for line in lines]
    return join_box_lines_with_hyphenation("\n".join(t for t in texts if t))


def _words_text(words: Iterable[PredictedWord]) -> str:
    return " ".join(w.text.strip() for w in words if w.text.strip())


def _centre_boxes(matches: Sequence[RowMatch], boxes: Sequence[AnnotationBox]) -> dict[int, set[int]]:
    """csv_index -> the boxes whose polygon holds the word's centre (words in no box are absent)."""
    import numpy as np

    words = [w for m in matches for w in m.row.words]
    if not words or not boxes:
        return {}
    rects = np.array([w.rect for w in words], dtype=np.float64)
    pairs = BoxIndex(boxes).word_pairs(rects)
    out: dict[int, set[int]] = {}
    for k, b, inside in zip(pairs.word.tolist(), pairs.box.tolist(), pairs.inside.tolist()):
        if inside:
            out.setdefault(words[k].csv_index, set()).add(b)
    return out


def build_ocr_region_reports(boxes: Sequence[AnnotationBox], matches: Sequence[RowMatch], *, page_id: str,
                             filters: Any = (), threads: Optional[int] = 1, unit: str = "char",
                             config: Optional[PageKitConfig] = None) -> list[dict[str, Any]]:
    """The region entries of one page, in page order, scored or not.

    ``boxes`` are the page's boxes (after the loader's drops) and ``matches`` the output of
    ``classify_rows`` for them; ``filters`` are filter names (see ``FILTERS``). Each entry holds
    the region's identity and layout, its rows, its normalised texts and its text metrics (counted
    in code points, or in grapheme clusters with ``unit="grapheme"``); a region is ``scored`` when
    it has an included box and either side has text. ``config`` gives the filters and text rules.
    """
    config = resolve_config(config)
    boxes = _check_boxes(boxes)
    filters = canonical_filters(filters, config)
    untranscribed, filtered = excluded_box_indices(boxes, filters, config)
    matches = _check_matches(matches, len(boxes))
    return _regions(boxes, matches, _check_page_id(page_id), untranscribed | filtered,
                    _centre_boxes(matches, boxes), threads, check_unit(unit), config)


def _regions(boxes: list[AnnotationBox], matches: list[RowMatch], page_id: str, excluded: set[int],
             centres: Mapping[int, set[int]], threads: Optional[int], unit: str,
             config: PageKitConfig) -> list[dict[str, Any]]:
    n = len(boxes)
    page_order = group_items_left_to_right_top_to_bottom(range(n), lambda i: boxes[i].envelope)
    position = {b: k for k, b in enumerate(page_order)}
    components = sorted(_components(n, matches), key=lambda c: min(position[b] for b in c))

    def removed(w: PredictedWord) -> bool:
        holders = centres.get(w.csv_index, ())
        return bool(holders) and all(b in excluded for b in holders)

    # fragments per box, in match order; rows per box
    fragments: dict[int, list[tuple[tuple[float, float, float, float], str]]] = {}
    rows_of_box: dict[int, list[int]] = {}
    for pos, m in enumerate(matches):
        per_box: dict[int, list[PredictedWord]] = {}
        for w in m.row.words:
            b = m.assignment.get(w.csv_index)
            if b is not None:
                per_box.setdefault(b, []).append(w)
        for b, words in per_box.items():
            rows_of_box.setdefault(b, []).append(pos)
            kept = [w for w in words if not removed(w)]
            if kept:
                local = _local_bbox(PredictedRow("", tuple(kept)), boxes[b])
                fragments.setdefault(b, []).append((local, _words_text(kept)))

    layouts = []
    gts, preds = [], []
    for index, members in enumerate(components):
        members_in_order = sorted(members, key=position.__getitem__)
        included = group_items_left_to_right_top_to_bottom(
            [b for b in members_in_order if b not in excluded], lambda b: boxes[b].envelope)
        gts.append(concat_joined([join_box_lines_with_hyphenation(boxes[b].transcription) for b in included], "\n"))
        preds.append(concat_joined([_box_predicted_text(fragments.get(b, [])) for b in included], "\n"))
        row_positions = sorted({p for b in members for p in rows_of_box.get(b, ())},
                               key=lambda p: min(w.csv_index for w in matches[p].row.words))
        statuses = [matches[p].status for p in row_positions]
        envs = [boxes[b].envelope for b in members]
        layouts.append({
            "page_id": page_id,
            "region_id": f"r{index}",
            "region_index": index,
            "box_ids": [boxes[b].id for b in included],
            "labels": [boxes[b].label for b in included],
            "excluded_box_ids": [boxes[b].id for b in members_in_order if b in excluded],
            "box_count": len(included),
            "merged": len(members) >= 2,
            "bbox": [min(e[0] for e in envs), min(e[1] for e in envs), max(e[2] for e in envs), max(e[3] for e in envs)],
            "scored": False,
            "normal_single_box_region": (
                len(members) == 1 and len(included) == 1 and bool(statuses)
                and all(s == "exactly_one_box" for s in statuses)
            ),
            "row_ids": [matches[p].row.row_id for p in row_positions],
            "row_status_counts": {s: statuses.count(s) for s in ROW_STATUSES},
        })
    metrics = compute_text_metrics_batch(gts, preds, threads=threads, unit=unit, config=config) if components else []
    out = []
    for layout, gt, pred, m in zip(layouts, gts, preds, metrics):
        layout["scored"] = layout["box_count"] >= 1 and (m.gt_char_count > 0 or m.pred_char_count > 0)
        layout.update({
            "gt_text": m.gt_text, "predicted_text": m.predicted_text,
            "gt_join_count": len(gt.joins), "pred_join_count": len(pred.joins),
            "gt_char_count": m.gt_char_count, "pred_char_count": m.pred_char_count,
            "char_edit_distance": m.char_edit_distance, "cer": m.cer,
            "char_edit_distance_strict": m.char_edit_distance_strict, "cer_strict": m.cer_strict,
            "char_edit_distance_lowercase": m.char_edit_distance_lowercase, "cer_lowercase": m.cer_lowercase,
            "gt_char_count_lowercase": m.gt_char_count_lowercase,
        })
        out.append(layout)
    return out


def _row_entry(m: RowMatch, boxes: Sequence[AnnotationBox]) -> dict[str, Any]:
    return {
        "row_id": m.row.row_id,
        "status": m.status,
        "box_id": None if m.box_index is None else boxes[m.box_index].id,
        "touched_box_ids": [boxes[b].id for b in m.touched],
        "coverage": {boxes[b].id: float(v) for b, v in sorted(m.coverage.items())},
        "overlap_coverage": {boxes[b].id: float(v) for b, v in sorted(m.overlap_coverage.items())},
        "word_count": len(m.row.words),
        "text": m.row.text,
        "bbox": list(m.row.bbox),
        "group_rows": sorted(m.row.groups),
        "fragments": list(m.fragments),
    }


def _dropped_count(dropped_words: Any) -> int:
    if isinstance(dropped_words, bool):
        raise InvalidTypeError("must be an int or a sequence of words, got bool", field="dropped_words")
    if isinstance(dropped_words, int):
        if dropped_words < 0:
            raise InvalidValueError(f"must be >= 0, got {dropped_words}", field="dropped_words")
        return dropped_words
    try:
        return len(dropped_words)
    except TypeError:
        raise InvalidTypeError(f"must be an int or a sequence of words, got {type(dropped_words).__name__}",
                               field="dropped_words") from None


def evaluate_rows(boxes: Sequence[AnnotationBox], rows: Iterable[Union[PredictedRow, PredictedWord]], *,
                  page_id: str, unit_level: str = DEFAULT_UNIT_LEVEL, filters: Any = (),
                  coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD, dropped_words: Any = 0,
                  has_predictions: bool = True, max_examples: int = MAX_FAILURE_EXAMPLES,
                  threads: Optional[int] = 1, unit: str = "char",
                  config: Optional[PageKitConfig] = None) -> dict[str, Any]:
    """Score one page and return its page report (a JSON-ready dict).

    ``rows`` are ``PredictedRow``s (watermarks already removed; ``dropped_words`` is the count or
    list of removed records) or ``PredictedWord``s, in which case watermarks are removed and rows
    built at ``unit_level`` here. ``filters`` is a comma-separated string or an iterable of filter
    names; the summary's ``variant`` is the report variant with those filters, else ``None``.
    ``has_predictions=False`` marks a page that had no prediction file. A page without boxes
    gives no regions and null CERs. ``unit="grapheme"`` counts every character figure of the
    report (CERs, lengths) in extended grapheme clusters instead of code points; the summary's
    ``cer_unit`` says which. ``config`` (a :class:`~scorekit.ocr_pages.config.PageKitConfig`,
    default the seed's rules) gives the watermark phrases, the filters and variants and the text
    rules.

    >>> from scorekit.ocr_pages.box_grouping.loading import annotation_boxes_from_records
    >>> boxes = annotation_boxes_from_records([{"id": "a", "label": "Paragraph", "bbox": [0, 0, 100, 40],
    ...                                         "transcription": "բարև"}])
    >>> words = [PredictedWord(5, 5, 60, 30, "0", "բարեվ", 0)]
    >>> rep = evaluate_rows(boxes, words, page_id="p1")
    >>> rep["summary"]["ocr_region_cer"], rep["regions"][0]["predicted_text"]
    (0.5, 'բարեվ')
    """
    config = resolve_config(config)
    boxes_list = _check_boxes(boxes)
    unit_level = _check_unit_level(unit_level)
    filters = canonical_filters(filters, config)
    threshold = _check_threshold(coverage_threshold)
    max_examples = _check_max_examples(max_examples)
    page_id = _check_page_id(page_id)
    items = list(rows)
    dropped = _dropped_count(dropped_words)
    if items and all(isinstance(x, PredictedWord) for x in items):
        items, removed = remove_watermark_words(items, config)
        dropped += len(removed)
        items = build_rows(items, unit_level)
    matches = classify_rows(items, boxes_list, threshold)
    return evaluate_matches(boxes_list, matches, page_id=page_id, unit_level=unit_level, filters=filters,
                            coverage_threshold=threshold, dropped_words=dropped, has_predictions=has_predictions,
                            max_examples=max_examples, threads=threads, unit=unit, config=config)


def evaluate_matches(boxes: Sequence[AnnotationBox], matches: Sequence[RowMatch], *, page_id: str,
                     unit_level: str = DEFAULT_UNIT_LEVEL, filters: Any = (),
                     coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD, dropped_words: Any = 0,
                     has_predictions: bool = True, max_examples: int = MAX_FAILURE_EXAMPLES,
                     threads: Optional[int] = 1, unit: str = "char",
                     config: Optional[PageKitConfig] = None) -> dict[str, Any]:
    """The page report of :func:`evaluate_rows` from rows already classified (``matches``, the
    output of ``classify_rows`` for these boxes at ``coverage_threshold``), so that one
    classification serves every filter variant; the arguments mean the same."""
    config = resolve_config(config)
    boxes_list = _check_boxes(boxes)
    unit_level = _check_unit_level(unit_level)
    filters = canonical_filters(filters, config)
    threshold = _check_threshold(coverage_threshold)
    max_examples = _check_max_examples(max_examples)
    page_id = _check_page_id(page_id)
    dropped = _dropped_count(dropped_words)
    matches = _check_matches(matches, len(boxes_list))
    unit = check_unit(unit)

    untranscribed, filtered = excluded_box_indices(boxes_list, filters, config)
    excluded = untranscribed | filtered
    centres = _centre_boxes(matches, boxes_list)
    regions = _regions(boxes_list, matches, page_id, excluded, centres, threads, unit, config)

    words = [w for m in matches for w in m.row.words]
    unassigned = [w for m in matches for w in m.row.words if m.assignment.get(w.csv_index) is None]
    text_boxes = {i for i, b in enumerate(boxes_list) if i not in excluded and b.transcription.strip()}
    in_text = [w for w in words if centres.get(w.csv_index, set()) & text_boxes]
    statuses = [m.status for m in matches]
    counters = {
        "page_count": 1,
        "pages_without_predictions": 0 if has_predictions else 1,
        "gt_box_count": len(boxes_list),
        "gt_boxes_dropped": dict(boxes_list.dropped),
        "untranscribed_box_count": len(untranscribed),
        "filtered_box_count": len(filtered),
        "included_box_count": len(boxes_list) - len(excluded),
        "predicted_word_count": len(words) + dropped,
        "watermark_words_removed": dropped,
        "predicted_row_count": len(matches),
        "row_status_counts": {s: statuses.count(s) for s in ROW_STATUSES},
        "split_line_fragments": sum(len(m.fragments) for m in matches if m.status == "split_line"),
        "unassigned_word_count": len(unassigned),
        "unassigned_char_count": sum(unit_lengths([normalize_text(w.text, config) for w in unassigned], unit)),
        "missing_text_boxes": sum(1 for w in in_text if not w.text.strip()),
        "predicted_boxes_in_text_gt": len(in_text),
    }
    scored = [r for r in regions if r["scored"]]
    page_summary = build_summary(unit_level=unit_level, cer_unit=unit, variant=variant_of_filters(filters, config),
                                 filters=filters, coverage_threshold=threshold, counters=counters, regions=regions,
                                 pages=[], config=config)
    page_entry = {
        "page_id": page_id,
        "has_predictions": bool(has_predictions),
        "gt_box_count": counters["gt_box_count"],
        "included_box_count": counters["included_box_count"],
        "predicted_word_count": counters["predicted_word_count"],
        "watermark_words_removed": dropped,
        "row_status_counts": counters["row_status_counts"],
        "region_count": len(regions),
        "scored_region_count": len(scored),
        "ocr_region_cer": page_summary["ocr_region_cer"],
        "ocr_region_char_edit_distance": page_summary["ocr_region_char_edit_distance"],
        "ocr_region_gt_char_count": page_summary["ocr_region_gt_char_count"],
        "missing_text_boxes": counters["missing_text_boxes"],
    }
    page_summary["page_mean_cer"] = page_entry["ocr_region_cer"] if scored else None
    failing_rows = [m for m in matches if m.status in ("no_box", "multiple_boxes")]
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "page",
        "summary": page_summary,
        "pages": [page_entry],
        "regions": regions,
        "rows": [_row_entry(m, boxes_list) for m in matches],
        "failure_examples": failure_examples(regions, max_examples),
        "row_failure_examples": [
            {"page_id": page_id, "row_id": m.row.row_id, "status": m.status, "text": m.row.text,
             "bbox": list(m.row.bbox), "touched_box_ids": [boxes_list[b].id for b in m.touched]}
            for m in failing_rows[:max_examples]
        ],
    }
