"""Page geometry: rotated ground-truth boxes, predicted word rectangles, and the measures between them.

A box's ``bbox`` is its unrotated rectangle; ``rotation`` turns it by that many degrees clockwise on
screen (y axis down) about its top-left corner ``(x1, y1)``. Predicted words are axis-aligned.

Scalar helpers (:func:`box_polygon`, :func:`point_in_polygon`, :func:`to_local`) are plain Python.
:class:`BoxIndex` answers many words at once: an ``STRtree`` over the box polygons finds each word's
candidate boxes, centre tests and axis-aligned overlaps are vectorised with NumPy, and rotated
overlaps go through shapely's vectorised intersection, so the work grows with words + boxes +
candidate pairs, never words x boxes. NumPy and shapely (>= 2) are imported on first use only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

__all__ = [
    "GEOMETRY_EPS",
    "WORD_TOUCH_MIN_AREA_FRACTION",
    "box_polygon",
    "polygon_envelope",
    "to_local",
    "point_in_polygon",
    "rect_polygon_intersection_area",
    "BoxIndex",
    "WordBoxPairs",
    "RowBoxMeasures",
]

GEOMETRY_EPS = 1e-9
"""Tolerance of the point-in-polygon test, scaled by the edge length (at least 1)."""

WORD_TOUCH_MIN_AREA_FRACTION = 0.25
"""A word whose centre is outside a box still touches it when this share of its area is inside."""

Point = tuple[float, float]
Rect = tuple[float, float, float, float]


def _check_rotation(rotation: float) -> float:
    from scorekit.errors import InvalidValueError

    rotation = float(rotation)
    if not math.isfinite(rotation):
        raise InvalidValueError(f"must be finite, got {rotation!r}", field="rotation")
    return rotation


def box_polygon(bbox: Sequence[float], rotation: float = 0.0) -> tuple[Point, ...]:
    """The corners of ``bbox`` turned ``rotation`` degrees clockwise about ``(x1, y1)``.

    Corner order: top-left, top-right, bottom-right, bottom-left of the unrotated box. A rotation
    that is a multiple of 360 returns the exact axis-aligned corners.

    >>> box_polygon((100, 100, 300, 140), 0)
    ((100.0, 100.0), (300.0, 100.0), (300.0, 140.0), (100.0, 140.0))
    """
    x1, y1, x2, y2 = (float(v) for v in bbox)
    turn = _check_rotation(rotation) % 360
    if turn == 0:
        return ((x1, y1), (x2, y1), (x2, y2), (x1, y2))
    theta = math.radians(turn)
    c, s = math.cos(theta), math.sin(theta)
    w, h = x2 - x1, y2 - y1

    def at(dx: float, dy: float) -> Point:
        return (x1 + dx * c - dy * s, y1 + dx * s + dy * c)

    return (at(0.0, 0.0), at(w, 0.0), at(w, h), at(0.0, h))


def polygon_envelope(poly: Sequence[Point]) -> Rect:
    """The axis-aligned bounding rectangle ``(x1, y1, x2, y2)`` of a polygon."""
    xs = [p[0] for p in poly]
    ys = [p[1] for p in poly]
    return (min(xs), min(ys), max(xs), max(ys))


def to_local(point: Sequence[float], bbox: Sequence[float], rotation: float = 0.0) -> Point:
    """Map a page point into the box's unrotated frame (the inverse of :func:`box_polygon`).

    The local x axis runs along the box's text direction; the pivot ``(x1, y1)`` stays fixed.
    """
    x1, y1 = float(bbox[0]), float(bbox[1])
    turn = _check_rotation(rotation) % 360
    px, py = float(point[0]), float(point[1])
    if turn == 0:
        return (px, py)
    theta = math.radians(turn)
    c, s = math.cos(theta), math.sin(theta)
    dx, dy = px - x1, py - y1
    return (x1 + dx * c + dy * s, y1 - dx * s + dy * c)


def _axis_aligned(poly: Sequence[Point]) -> bool:
    """True when the 4 corners form an exact axis-aligned rectangle in either winding."""
    if len(poly) != 4:
        return False
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = poly
    return (ay == by and bx == cx and cy == dy and dx == ax) or (ax == bx and by == cy and cx == dx and dy == ay)


def _orientation(poly: Sequence[Point]) -> float:
    """+1.0 when the shoelace sum is >= 0, else -1.0."""
    total = 0.0
    n = len(poly)
    for i in range(n):
        ax, ay = poly[i]
        bx, by = poly[(i + 1) % n]
        total += ax * by - bx * ay
    return 1.0 if total >= 0 else -1.0


def point_in_polygon(pt: Sequence[float], poly: Sequence[Point]) -> bool:
    """Whether ``pt`` lies in the convex polygon ``poly``, boundary included.

    Axis-aligned rectangles use the exact test ``x1 <= x <= x2 and y1 <= y <= y2``. Otherwise the
    point is inside when, for every edge a->b, the cross product (b-a) x (pt-a), signed by the
    polygon's winding, is at least ``-GEOMETRY_EPS * max(|b-a|, 1)``.
    """
    x, y = float(pt[0]), float(pt[1])
    if _axis_aligned(poly):
        x1, y1, x2, y2 = polygon_envelope(poly)
        return x1 <= x <= x2 and y1 <= y <= y2
    sign = _orientation(poly)
    n = len(poly)
    for i in range(n):
        ax, ay = poly[i]
        bx, by = poly[(i + 1) % n]
        ex, ey = bx - ax, by - ay
        cross = (ex * (y - ay) - ey * (x - ax)) * sign
        if cross < -GEOMETRY_EPS * max(math.sqrt(ex * ex + ey * ey), 1.0):
            return False
    return True


def _shapely() -> Any:
    try:
        import shapely
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("the OCR page geometry needs shapely >= 2 (pip install 'shapely>=2')") from exc
    if int(shapely.__version__.split(".")[0]) < 2:  # pragma: no cover - depends on the installation
        raise ImportError(f"the OCR page geometry needs shapely >= 2, found {shapely.__version__}")
    return shapely


def rect_polygon_intersection_area(rect: Sequence[float], poly: Sequence[Point]) -> float:
    """The area of an axis-aligned rectangle ``(x1, y1, x2, y2)`` inside the convex polygon ``poly``.

    A zero-area rectangle gives 0. Two axis-aligned rectangles use the exact product of the
    overlapping spans; other polygons are intersected with shapely.
    """
    rx1, ry1, rx2, ry2 = (float(v) for v in rect)
    if (rx2 - rx1) * (ry2 - ry1) == 0:
        return 0.0
    if _axis_aligned(poly):
        px1, py1, px2, py2 = polygon_envelope(poly)
        return max(0.0, min(rx2, px2) - max(rx1, px1)) * max(0.0, min(ry2, py2) - max(ry1, py1))
    shapely = _shapely()
    return float(shapely.area(shapely.intersection(shapely.box(rx1, ry1, rx2, ry2), shapely.Polygon(poly))))


def _check_rects(rects: Any) -> Any:
    """Reject non-finite or unnormalised word rectangles, naming the first bad one."""
    import numpy as np

    from scorekit.errors import InvalidValueError

    bad = ~np.isfinite(rects).all(axis=1) | (rects[:, 0] > rects[:, 2]) | (rects[:, 1] > rects[:, 3])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InvalidValueError(
            f"must be finite with x1<=x2 and y1<=y2, got {rects[k].tolist()}", field="word rectangle", item=k
        )
    return rects


@dataclass(frozen=True)
class WordBoxPairs:
    """(word, box) pairs with their measures (see :meth:`BoxIndex.word_pairs`).

    Parallel NumPy arrays, sorted by word then box: ``word`` and ``box`` indices, ``inside``
    (the word centre lies in the box polygon), ``overlap`` (area of the word rectangle inside the
    box), ``word_area`` and ``touches`` (``inside``, or the word has area and at least
    ``WORD_TOUCH_MIN_AREA_FRACTION`` of it lies inside).
    """

    word: Any
    box: Any
    inside: Any
    overlap: Any
    word_area: Any
    touches: Any

    def select(self, mask: Any) -> "WordBoxPairs":
        """The pairs where ``mask`` is true."""
        return WordBoxPairs(*(a[mask] for a in (self.word, self.box, self.inside, self.overlap, self.word_area, self.touches)))


@dataclass(frozen=True)
class RowBoxMeasures:
    """Every (row, box) pair where the row touches the box (see :meth:`BoxIndex.row_measures`).

    Parallel NumPy arrays sorted by row then box: ``row``, ``box``, ``coverage`` (share of the
    row's words whose centre is in the box) and ``overlap_coverage`` (area-weighted share of the
    row's word rectangles inside the box; ``coverage`` when the row has no area). ``words`` holds,
    for those pairs, every word of the row whose rectangle meets the box (touching or not), so a
    word's overlap with each box its row touches can be read from it; a word of the row missing
    there has no centre inside and zero overlap.
    """

    row: Any
    box: Any
    coverage: Any
    overlap_coverage: Any
    words: WordBoxPairs


class BoxIndex:
    """An ``STRtree`` over one page's box polygons, answering many word rectangles at once.

    ``boxes`` are objects with ``bbox`` and ``rotation`` (such as ``AnnotationBox``); box ``i`` of
    the results is ``boxes[i]``.
    """

    def __init__(self, boxes: Sequence[Any]) -> None:
        import numpy as np

        shapely = _shapely()
        n = len(boxes)
        self._n = n
        corners = np.empty((n, 4, 2), dtype=np.float64)
        aligned = np.empty(n, dtype=bool)
        for i, b in enumerate(boxes):
            poly = box_polygon(b.bbox, b.rotation)
            corners[i] = poly
            aligned[i] = _axis_aligned(poly)
        self._corners = corners
        self._aligned = aligned
        self._envelopes = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
        if n:
            edges = np.roll(corners, -1, axis=1) - corners
            lengths = np.sqrt(edges[..., 0] * edges[..., 0] + edges[..., 1] * edges[..., 1])
            shoelace = (corners[..., 0] * np.roll(corners[..., 1], -1, axis=1)
                        - np.roll(corners[..., 0], -1, axis=1) * corners[..., 1]).sum(axis=1)
            self._edges = edges
            self._tolerance = GEOMETRY_EPS * np.maximum(lengths, 1.0)
            self._sign = np.where(shoelace >= 0, 1.0, -1.0)
            # A centre may sit up to the tolerance outside a rotated polygon and still count as
            # inside, so candidate queries are padded by more than the largest such distance.
            shortest = float(lengths.min())
            self._pad = 4 * GEOMETRY_EPS * max(1.0, 1.0 / shortest) if shortest > 0 else 1.0
            self._polygons = shapely.polygons(np.concatenate([corners, corners[:, :1]], axis=1))
        else:
            self._pad = 0.0
            self._polygons = np.empty(0, dtype=object)
        self._tree = shapely.STRtree(self._polygons)

    def __len__(self) -> int:
        return self._n

    def word_pairs(self, rects: Any) -> WordBoxPairs:
        """For word rectangles ``rects`` (shape ``(m, 4)``: x1, y1, x2, y2 with x1<=x2, y1<=y2),
        every pair where the word touches the box: its centre is inside, or the word has area and
        at least ``WORD_TOUCH_MIN_AREA_FRACTION`` of it lies inside."""
        pairs = self._candidates(rects)
        return pairs.select(pairs.touches)

    def _candidates(self, rects: Any) -> WordBoxPairs:
        """Every (word, box) pair whose envelopes meet (padded by the centre-test tolerance), with
        exact measures; pairs outside this set have no centre inside and zero overlap."""
        import numpy as np

        shapely = _shapely()
        rects = _check_rects(np.asarray(rects, dtype=np.float64).reshape(-1, 4))
        empty_i = np.empty(0, dtype=np.intp)
        empty_f = np.empty(0, dtype=np.float64)
        if self._n == 0 or len(rects) == 0:
            no = np.empty(0, dtype=bool)
            return WordBoxPairs(empty_i, empty_i, no, empty_f, empty_f, no)
        p = self._pad
        queries = shapely.box(rects[:, 0] - p, rects[:, 1] - p, rects[:, 2] + p, rects[:, 3] + p)
        word, box = self._tree.query(queries)
        order = np.lexsort((box, word))
        word, box = word[order], box[order]
        r = rects[word]
        area = (r[:, 2] - r[:, 0]) * (r[:, 3] - r[:, 1])
        inside = self._centres_inside((r[:, 0] + r[:, 2]) / 2, (r[:, 1] + r[:, 3]) / 2, box)
        overlap = np.zeros(len(word), dtype=np.float64)
        aligned = self._aligned[box] & (area != 0)
        if aligned.any():
            e = self._envelopes[box[aligned]]
            ra = r[aligned]
            wx = np.maximum(0.0, np.minimum(ra[:, 2], e[:, 2]) - np.maximum(ra[:, 0], e[:, 0]))
            wy = np.maximum(0.0, np.minimum(ra[:, 3], e[:, 3]) - np.maximum(ra[:, 1], e[:, 1]))
            overlap[aligned] = wx * wy
        rotated = ~self._aligned[box] & (area != 0)
        if rotated.any():
            rr = r[rotated]
            clipped = shapely.intersection(
                shapely.box(rr[:, 0], rr[:, 1], rr[:, 2], rr[:, 3]), self._polygons[box[rotated]]
            )
            overlap[rotated] = shapely.area(clipped)
        touches = inside | ((area > 0) & (overlap >= WORD_TOUCH_MIN_AREA_FRACTION * area))
        return WordBoxPairs(word, box, inside, overlap, area, touches)

    def _centres_inside(self, x: Any, y: Any, box: Any) -> Any:
        """:func:`point_in_polygon` for points ``(x[k], y[k])`` against box ``box[k]``."""
        import numpy as np

        result = np.ones(len(box), dtype=bool)
        aligned = self._aligned[box]
        e = self._envelopes[box[aligned]]
        xa, ya = x[aligned], y[aligned]
        result[aligned] = (e[:, 0] <= xa) & (xa <= e[:, 2]) & (e[:, 1] <= ya) & (ya <= e[:, 3])
        rot = ~aligned
        cr = self._corners[box[rot]]
        er = self._edges[box[rot]]
        tol = self._tolerance[box[rot]]
        sign = self._sign[box[rot]]
        xr, yr = x[rot][:, None], y[rot][:, None]
        cross = (er[..., 0] * (yr - cr[..., 1]) - er[..., 1] * (xr - cr[..., 0])) * sign[:, None]
        result[rot] = (cross >= -tol).all(axis=1)
        return result

    def row_measures(self, rects: Any, row_of_word: Any, n_rows: int) -> RowBoxMeasures:
        """Coverage and overlap coverage of every (row, touched box) pair.

        ``rects`` are all words' rectangles and ``row_of_word[k]`` the row of word ``k``
        (``0 <= row < n_rows``; the words of one row need not be contiguous). A row touches a box
        when any of its words does.
        """
        import numpy as np

        from scorekit.errors import InvalidValueError

        rects = np.asarray(rects, dtype=np.float64).reshape(-1, 4)
        rows = np.asarray(row_of_word, dtype=np.intp).reshape(-1)
        if len(rows) != len(rects):
            raise InvalidValueError(f"has {len(rows)} entries for {len(rects)} words", field="row_of_word")
        if len(rows) and (rows.min() < 0 or rows.max() >= n_rows):
            raise InvalidValueError(f"must lie in [0, {n_rows})", field="row_of_word")
        pairs = self._candidates(rects)
        words_per_row = np.bincount(rows, minlength=n_rows)
        area = (rects[:, 2] - rects[:, 0]) * (rects[:, 3] - rects[:, 1])
        area_per_row = np.zeros(n_rows, dtype=np.float64)
        np.add.at(area_per_row, rows, area)  # unbuffered: summed in word order, as defined
        pair_row = rows[pairs.word]
        order = np.lexsort((pairs.word, pairs.box, pair_row))
        key_row, key_box = pair_row[order], pairs.box[order]
        if len(order) == 0:
            return RowBoxMeasures(key_row, key_box, np.empty(0), np.empty(0), pairs)
        # group the pairs by (row, box); sums run over all candidate words, in word order
        starts = np.flatnonzero(np.r_[True, (key_row[1:] != key_row[:-1]) | (key_box[1:] != key_box[:-1])])
        is_start = np.zeros(len(order), dtype=np.intp)
        is_start[starts] = 1
        group = np.cumsum(is_start) - 1
        n_inside = np.bincount(group, weights=pairs.inside[order].astype(np.float64), minlength=len(starts))
        overlap_sum = np.zeros(len(starts), dtype=np.float64)
        np.add.at(overlap_sum, group, pairs.overlap[order])
        touched = np.bincount(group, weights=pairs.touches[order].astype(np.float64), minlength=len(starts)) > 0
        out_row, out_box = key_row[starts][touched], key_box[starts][touched]
        coverage = n_inside[touched] / words_per_row[out_row]
        row_area = area_per_row[out_row]
        safe_area = np.where(row_area == 0, 1.0, row_area)
        overlap_coverage = np.where(row_area == 0, coverage, overlap_sum[touched] / safe_area)
        keep = np.zeros(len(order), dtype=bool)
        keep[order] = touched[group]
        return RowBoxMeasures(out_row, out_box, coverage, overlap_coverage, pairs.select(keep))
