"""Predicted rows and their match to the ground-truth boxes.

Owns building rows from the evaluation CSV (word or line unit level), watermark removal, the row
classifier (``exactly_one_box``, ``multiple_boxes``, ``no_box``) with its word assignment, and the
detection and reassembly of lines the model split into several rows (``split_line``).

Box indices in the results are positions in the ``boxes`` sequence passed in (the loaders give
boxes whose ``index`` equals that position). Every row/box measure comes from one
:class:`~scorekit.ocr_pages.box_grouping.geometry.BoxIndex` per page, so classification grows with
words + boxes + touching pairs, never words x boxes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence

from rapidfuzz.distance import Levenshtein

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.config import DEFAULT_CONFIG, PageKitConfig, WatermarkRules, _wkey, resolve_config
from scorekit.ocr_pages.box_grouping.geometry import (
    GEOMETRY_EPS,
    WORD_TOUCH_MIN_AREA_FRACTION,
    BoxIndex,
    point_in_polygon,
    rect_polygon_intersection_area,
    to_local,
)
from scorekit.ocr_pages.box_grouping.ocr_files import check_words_have_lines
from scorekit.ocr_pages.box_grouping.reading_order import group_into_lines
from scorekit.ocr_pages.box_grouping.loading import (
    PredictedRow,
    PredictedWord,
    RowMatch,
    load_prediction_words,
)

__all__ = [
    "UNIT_LEVELS",
    "DEFAULT_UNIT_LEVEL",
    "DEFAULT_COVERAGE_THRESHOLD",
    "MULTI_BOX_SINGLE_COLUMN_LOCATION_THRESHOLD",
    "MULTI_BOX_SINGLE_COLUMN_OVERLAP_THRESHOLD",
    "GEOMETRY_EPS",
    "WORD_TOUCH_MIN_AREA_FRACTION",
    "WATERMARK_PHRASES",
    "WATERMARK_MAX_EDIT_DISTANCE",
    "WATERMARK_MAX_WINDOW",
    "ROW_STATUSES",
    "is_watermark_text",
    "remove_watermark_words",
    "build_rows",
    "load_predicted_rows",
    "classify_row",
    "classify_rows",
    "detect_split_lines",
]

UNIT_LEVELS = ("word", "line")
DEFAULT_UNIT_LEVEL = "word"
DEFAULT_COVERAGE_THRESHOLD = 1.0
MULTI_BOX_SINGLE_COLUMN_LOCATION_THRESHOLD = 0.8
MULTI_BOX_SINGLE_COLUMN_OVERLAP_THRESHOLD = 0.8
#: The seed's watermark rules (``DEFAULT_CONFIG.watermark``; a config file may replace them).
WATERMARK_PHRASES = DEFAULT_CONFIG.watermark.phrases
WATERMARK_MAX_EDIT_DISTANCE = DEFAULT_CONFIG.watermark.max_edit_distance
WATERMARK_MAX_WINDOW = DEFAULT_CONFIG.watermark.max_window
ROW_STATUSES = ("exactly_one_box", "multiple_boxes", "no_box", "split_line")

_THRESHOLD_SLACK = 1e-9
"""Every threshold comparison is ``value >= threshold - _THRESHOLD_SLACK``."""



# ---------------------------------------------------------------------------------------------
# Watermarks


def _edits(key: str, phrase: str, rules: WatermarkRules) -> Optional[int]:
    """The edit distance of ``key`` to ``phrase`` when within ``rules.max_edit_distance``, else None."""
    limit = rules.max_edit_distance
    if not key or abs(len(key) - len(phrase)) > limit:
        return None
    d = Levenshtein.distance(key, phrase, score_cutoff=limit)
    return d if d <= limit else None


def _key_is_watermark(key: str, rules: WatermarkRules) -> bool:
    return any(_edits(key, phrase, rules) is not None for phrase in rules.keys)


def is_watermark_text(s: str, config: Optional[PageKitConfig] = None) -> bool:
    """Whether ``s`` is the scanner's watermark: after NFC, casefolding and collapsing whitespace,
    within ``max_edit_distance`` edits of one of the ``phrases`` of ``config.watermark`` (default:
    ``WATERMARK_MAX_EDIT_DISTANCE`` and ``WATERMARK_PHRASES``).

    >>> is_watermark_text("national library of  armenia OCR by PortMlnd")
    True
    >>> is_watermark_text("National Library of Armenia")
    False
    """
    if not isinstance(s, str):
        raise InvalidTypeError(f"must be a str, got {type(s).__name__}", field="s")
    return _key_is_watermark(_wkey(s), resolve_config(config).watermark)


def _windows(keys: Sequence[str], rules: WatermarkRules) -> list[tuple[int, int, int, int]]:
    """Every window ``[i, j)`` of at most ``rules.max_window`` consecutive keys whose non-empty
    keys, space-joined, are within reach of a phrase: ``(phrase rank, edits, i, j)``, rank 0 the
    longest phrase. (The key of a space-joined text is the space-joined keys of its non-empty
    parts: a space never composes with its neighbours under NFC.)"""
    found: list[tuple[int, int, int, int]] = []
    if not rules.keys:
        return found
    max_key = max(rules.key_lengths)
    for i in range(len(keys)):
        parts: list[str] = []
        size = -1
        for j in range(i, min(len(keys), i + rules.max_window)):
            if keys[j]:
                size += len(keys[j]) + 1
                if size > max_key:
                    break
                parts.append(keys[j])
            if size not in rules.key_lengths:
                continue
            joined = " ".join(parts)
            for rank, phrase in enumerate(rules.keys):
                d = _edits(joined, phrase, rules)
                if d is not None:
                    found.append((rank, d, i, j + 1))
    return found


def _whole_groups(groups: Sequence[str]) -> Callable[[int, int], bool]:
    """A test of a window ``[i, j)``: it holds records of at most one non-empty group, or every
    record of each non-empty group it holds."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for k, g in enumerate(groups):
        if g:
            first.setdefault(g, k)
            last[g] = k

    def allowed(i: int, j: int) -> bool:
        held = {g for g in groups[i:j] if g}
        return len(held) <= 1 or all(first[g] >= i and last[g] < j for g in held)

    return allowed


def _closest_matches(keys: Sequence[str], allowed: Callable[[int, int], bool], rules: WatermarkRules) -> list[int]:
    """Positions of ``keys`` that the watermark matches take, closest match first.

    Windows are taken greedily, best first: the longer phrase, then fewer edits, then fewer
    records, then the earlier start; a window must pass ``allowed`` and overlap no window taken.
    A taken window gives back its edge records when a window of the same phrase inside it (even
    one ``allowed`` refuses: giving records back never crosses a group) matches with no more
    edits; of those, the one with fewest edits, then fewest records, is kept."""
    def closeness(w: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        return (w[0], w[1], w[3] - w[2], w[2])

    found = sorted(_windows(keys, rules), key=closeness)
    by_start: dict[int, list[tuple[int, int, int, int]]] = {}
    for w in found:
        by_start.setdefault(w[2], []).append(w)
    taken = [False] * len(keys)
    for rank, _, i, j in found:
        if any(taken[i:j]) or not allowed(i, j):
            continue
        inside = (w for a in range(i, j) for w in by_start.get(a, ()) if w[0] == rank and w[3] <= j)
        _, _, a, b = min(inside, key=closeness)
        taken[a:b] = [True] * (b - a)
    return [k for k, t in enumerate(taken) if t]


def remove_watermark_words(words: Sequence[PredictedWord], config: Optional[PageKitConfig] = None
                           ) -> tuple[list[PredictedWord], list[PredictedWord]]:
    """Split CSV records into ``(kept, dropped)``, both in input order.

    A watermark match is a window of at most ``max_window`` (``config.watermark``; default
    ``WATERMARK_MAX_WINDOW``) consecutive records whose space-joined text is a watermark (see
    :func:`is_watermark_text`); a config without phrases removes nothing. Matches are taken closest
    first (see ``_closest_matches``): the long phrase before the short one it ends with, then
    the fewest edits, then the fewest records, so a real word next to the watermark is kept
    whenever the watermark matches without it. A window holding records of several non-empty
    ``group_row`` values must hold each of those groups whole (a watermark the OCR split over
    lines), so a match never reaches into a neighbouring line. Then the same matching runs over
    each non-empty ``group_row``'s remaining records, in order (a line the CSV interleaves with
    other records).
    """
    rules = resolve_config(config).watermark
    words = list(words)
    keys = [_wkey(w.text) for w in words]
    drop = set(_closest_matches(keys, _whole_groups([w.group_row for w in words]), rules))
    groups: dict[str, list[int]] = {}
    for k, w in enumerate(words):
        if k not in drop and w.group_row:
            groups.setdefault(w.group_row, []).append(k)
    for members in groups.values():
        drop.update(members[p] for p in _closest_matches([keys[k] for k in members], lambda i, j: True, rules))
    kept = [w for k, w in enumerate(words) if k not in drop]
    dropped = [w for k, w in enumerate(words) if k in drop]
    return kept, dropped


# ---------------------------------------------------------------------------------------------
# Rows


def _check_unit_level(unit_level: Any) -> str:
    if unit_level not in UNIT_LEVELS:
        raise InvalidValueError(f"must be one of {UNIT_LEVELS}, got {unit_level!r}", field="unit_level")
    return unit_level


def build_rows(words: Iterable[PredictedWord], unit_level: str = DEFAULT_UNIT_LEVEL) -> list[PredictedRow]:
    """Group words into rows: one row ``r<csv_index>`` per word at the ``word`` level; at the
    ``line`` level one row ``g<group_row>`` per non-empty ``group_row`` (words in input order,
    rows ordered by their first word) and a row ``r<csv_index>`` for each word without a group."""
    unit_level = _check_unit_level(unit_level)
    words = list(words)
    if unit_level == "word":
        return [PredictedRow(f"r{w.csv_index}", (w,)) for w in words]
    slots: list[list[PredictedWord]] = []
    ids: list[str] = []
    by_group: dict[str, int] = {}
    for w in words:
        if not w.group_row:
            ids.append(f"r{w.csv_index}")
            slots.append([w])
        elif w.group_row in by_group:
            slots[by_group[w.group_row]].append(w)
        else:
            by_group[w.group_row] = len(slots)
            ids.append(f"g{w.group_row}")
            slots.append([w])
    return [PredictedRow(row_id, tuple(members)) for row_id, members in zip(ids, slots)]


def load_predicted_rows(
    csv_path: Any, unit_level: str = DEFAULT_UNIT_LEVEL, *, drop_watermarks: bool = True,
    config: Optional[PageKitConfig] = None,
) -> tuple[list[PredictedRow], list[PredictedWord]]:
    """Read one page's evaluation CSV into rows: ``(rows, dropped_words)``.

    Watermark records (of ``config``) are removed before grouping (whatever the unit level)
    unless ``drop_watermarks`` is false; ``dropped_words`` lists them in CSV order. At the line
    level, an OCR file's words must each lie in one of its lines (``check_words_have_lines``).
    """
    unit_level = _check_unit_level(unit_level)
    words = load_prediction_words(csv_path)
    if unit_level == "line":
        check_words_have_lines(csv_path, words)
    dropped: list[PredictedWord] = []
    if drop_watermarks:
        words, dropped = remove_watermark_words(words, config)
    return build_rows(words, unit_level), dropped


# ---------------------------------------------------------------------------------------------
# Classification


def _check_threshold(value: Any) -> float:
    try:
        threshold = float(value)
    except (TypeError, ValueError):
        raise InvalidTypeError(f"must be a number, got {value!r}", field="coverage_threshold") from None
    if not (0.0 < threshold <= 1.0):
        raise InvalidValueError(f"must lie in (0, 1], got {value!r}", field="coverage_threshold")
    return threshold


def _check_rows(rows: Any) -> list[PredictedRow]:
    rows = list(rows)
    seen: set[int] = set()
    for i, row in enumerate(rows):
        if not isinstance(row, PredictedRow):
            raise InvalidTypeError(f"must be a PredictedRow, got {type(row).__name__}", field="rows", item=i)
        if not row.words:
            raise InvalidValueError(f"row {row.row_id!r} has no words", field="rows", item=i)
        for w in row.words:
            if w.csv_index in seen:
                raise InvalidValueError(
                    f"csv_index {w.csv_index} appears in more than one word", field="rows", item=i
                )
            seen.add(w.csv_index)
    return rows


def _at_least(value: float, threshold: float) -> bool:
    return value >= threshold - _THRESHOLD_SLACK


def _classify_all(rows: list[PredictedRow], boxes: Sequence[Any], threshold: float) -> list[RowMatch]:
    import numpy as np

    index = BoxIndex(boxes)
    areas = [float(b.area) for b in boxes]
    words = [w for row in rows for w in row.words]
    rects = np.array([w.rect for w in words], dtype=np.float64).reshape(-1, 4)
    row_of_word = np.repeat(np.arange(len(rows)), [len(r.words) for r in rows])
    m = index.row_measures(rects, row_of_word, len(rows))

    touched: list[dict[int, tuple[float, float]]] = [{} for _ in rows]
    for r, b, cov, ovl in zip(m.row.tolist(), m.box.tolist(), m.coverage.tolist(), m.overlap_coverage.tolist()):
        touched[r][b] = (cov, ovl)
    # per word: box -> (centre inside, overlap), only for boxes its row touches
    word_boxes: list[dict[int, tuple[bool, float]]] = [{} for _ in words]
    for k, b, ins, ovl in zip(m.words.word.tolist(), m.words.box.tolist(), m.words.inside.tolist(),
                              m.words.overlap.tolist()):
        word_boxes[k][b] = (ins, ovl)

    def primary(k: int, centre_only: bool) -> Optional[int]:
        here = word_boxes[k]
        inside = [b for b, (ins, _) in here.items() if ins]
        if inside:
            return max(inside, key=lambda b: (here[b][1], -areas[b], -b))
        if centre_only:
            return None
        overlapping = [b for b, (_, ovl) in here.items() if ovl > 0]
        if overlapping:
            return max(overlapping, key=lambda b: (here[b][1], -areas[b], -b))
        return None

    matches = []
    first_word = 0
    for r, row in enumerate(rows):
        measures = touched[r]
        boxes_t = sorted(measures)
        ks = range(first_word, first_word + len(row.words))
        first_word += len(row.words)
        dominant: Optional[int] = None
        if len(boxes_t) == 1:
            if _at_least(measures[boxes_t[0]][0], threshold):
                dominant = boxes_t[0]
        elif len(boxes_t) >= 2:
            loc = [b for b in boxes_t if _at_least(measures[b][0], MULTI_BOX_SINGLE_COLUMN_LOCATION_THRESHOLD)]
            ovl = [b for b in boxes_t if _at_least(measures[b][1], MULTI_BOX_SINGLE_COLUMN_OVERLAP_THRESHOLD)]
            if loc:
                dominant = max(loc, key=lambda b: (measures[b][0], measures[b][1], -areas[b], -b))
            elif ovl:
                dominant = max(ovl, key=lambda b: (measures[b][1], measures[b][0], -areas[b], -b))
        if dominant is not None:
            status = "exactly_one_box"
            assignment = {words[k].csv_index: dominant for k in ks}
        elif len(boxes_t) >= 2:
            status = "multiple_boxes"
            assignment = {words[k].csv_index: primary(k, centre_only=False) for k in ks}
        else:
            status = "no_box"
            assignment = {words[k].csv_index: primary(k, centre_only=True) for k in ks}
        matches.append(
            RowMatch(
                row=row,
                status=status,
                box_index=dominant,
                touched=tuple(boxes_t),
                coverage={b: measures[b][0] for b in boxes_t},
                overlap_coverage={b: measures[b][1] for b in boxes_t},
                assignment=assignment,
            )
        )
    return matches


def classify_row(row: PredictedRow, boxes: Sequence[Any], coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD) -> RowMatch:
    """Classify one row against a page's boxes (see :func:`classify_rows`; no split-line pass)."""
    return _classify_all(_check_rows([row]), boxes, _check_threshold(coverage_threshold))[0]


def classify_rows(
    rows: Iterable[PredictedRow], boxes: Sequence[Any], coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD
) -> list[RowMatch]:
    """Match every row to the boxes, merge split lines, and order the results by each row's
    smallest ``csv_index``.

    A row touches a box when one of its words does (centre inside, or at least
    ``WORD_TOUCH_MIN_AREA_FRACTION`` of the word's area inside). A row touching one box is
    ``exactly_one_box`` when its coverage (share of word centres inside) reaches
    ``coverage_threshold``, else ``no_box``. A row touching several boxes is ``exactly_one_box``
    when some box holds at least 0.8 of its word centres (else at least 0.8 of its word area),
    else ``multiple_boxes``. A row touching nothing is ``no_box``. Ties go to the higher coverage,
    then overlap, then the smaller box, then the lower index.

    Words are assigned to the dominant box (``exactly_one_box``), to the touched box holding their
    centre with the largest overlap, else the largest positive overlap (``multiple_boxes``), or,
    for ``no_box``, to a touched box holding their centre, else to no box (``None``).

    A page without boxes makes every row ``no_box`` with nothing assigned. A row without words,
    a word shared by two rows, or a threshold outside (0, 1] raises ``InvalidValueError``.
    """
    checked = _check_rows(rows)
    return detect_split_lines(_classify_all(checked, boxes, _check_threshold(coverage_threshold)), boxes)


# ---------------------------------------------------------------------------------------------
# Split lines


def _local_bbox(row: PredictedRow, box: Any) -> tuple[float, float, float, float]:
    """The row's envelope in the box's unrotated frame (its own bbox when the box is not rotated)."""
    if float(box.rotation) % 360 == 0:
        return row.bbox
    pts = [
        to_local(p, box.bbox, box.rotation)
        for w in row.words
        for p in ((w.x1, w.y1), (w.x2, w.y1), (w.x2, w.y2), (w.x1, w.y2))
    ]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def _merge(members: list[RowMatch], b: int, box: Any) -> RowMatch:
    words = tuple(w for m in members for w in m.row.words)
    inside = sum(1 for w in words if point_in_polygon(w.center, box.polygon))
    coverage = inside / len(words)
    area = 0.0
    overlap = 0.0
    for w in words:
        area += w.area
        overlap += rect_polygon_intersection_area(w.rect, box.polygon)
    ids = tuple(m.row.row_id for m in members)
    return RowMatch(
        row=PredictedRow("+".join(ids), words),
        status="split_line",
        box_index=b,
        touched=(b,),
        coverage={b: coverage},
        overlap_coverage={b: coverage if area == 0 else overlap / area},
        assignment={w.csv_index: b for w in words},
        fragments=ids,
    )


def detect_split_lines(matches: Sequence[RowMatch], boxes: Sequence[Any]) -> list[RowMatch]:
    """Merge ``exactly_one_box`` rows that share a visual line of their box (in the box's own frame)
    and carry at least two distinct ``group_row`` values into one ``split_line`` match, whose row
    id joins the members' ids left to right with ``+``. Other matches pass through unchanged.
    The result is ordered by each row's smallest ``csv_index``.
    """
    by_box: dict[int, list[int]] = {}
    for pos, m in enumerate(matches):
        if m.status == "exactly_one_box":
            by_box.setdefault(m.box_index, []).append(pos)
    merged_away: set[int] = set()
    out: list[RowMatch] = []
    for b in sorted(by_box):
        positions = by_box[b]
        if len(positions) < 2:
            continue
        box = boxes[b]
        local = [_local_bbox(matches[p].row, box) for p in positions]
        for line in group_into_lines(range(len(local)), local.__getitem__):
            if len(line) < 2:
                continue
            members = [matches[positions[k]] for k in line]
            if len(frozenset().union(*(m.row.groups for m in members))) < 2:
                continue
            out.append(_merge(members, b, box))
            merged_away.update(positions[k] for k in line)
    out.extend(m for pos, m in enumerate(matches) if pos not in merged_away)
    out.sort(key=lambda m: min(w.csv_index for w in m.row.words))
    return out
