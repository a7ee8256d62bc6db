"""Reading order on a page: the column-major XY-cut and the grouping of items into visual lines.

Both functions take any items plus ``bbox_fn(item) -> (x1, y1, x2, y2)``, an axis-aligned
envelope in image pixels (y down; for a rotated box, its polygon's envelope), and return the items
themselves.

* :func:`group_items_left_to_right_top_to_bottom` orders boxes by an XY-cut that tries vertical
  cuts (columns, left to right) before horizontal ones (bands, top to bottom). Each interval is
  shrunk by :data:`XY_CUT_SHRINK` of its own length on each side first, so boxes that overlap
  slightly across a gutter still split into columns. A full-width headline above two columns comes
  first; two columns each with their own headline read column by column.
* :func:`group_into_lines` collects items whose vertical extents overlap by at least
  :data:`LINE_VERTICAL_OVERLAP_RATIO` of the smaller height into lines, top to bottom, each line
  left to right.

Both are deterministic: every sort key ends in the item's input position, so equal keys keep input
order. The XY-cut runs on an explicit stack, so a deep cut tree cannot exhaust Python's recursion.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Iterable, Sequence, TypeVar

from scorekit.errors import InvalidTypeError, InvalidValueError

__all__ = [
    "XY_CUT_SHRINK",
    "LINE_VERTICAL_OVERLAP_RATIO",
    "group_items_left_to_right_top_to_bottom",
    "group_into_lines",
]

XY_CUT_SHRINK = 0.10
"""Share of its own length trimmed from each end of an interval before the XY-cut looks for gaps."""

LINE_VERTICAL_OVERLAP_RATIO = 0.5
"""Vertical overlap with a line, as a share of the smaller height, that puts an item on it."""

T = TypeVar("T")
Rect = tuple[float, float, float, float]
_PLAIN_NUMBERS = (float, int)


def _is_real(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _bboxes(items: Sequence[Any], bbox_fn: Callable[[Any], Sequence[float]]) -> list[Rect]:
    """``bbox_fn`` of every item as float tuples, checked finite and of non-negative size."""
    field = "bbox_fn(item)"
    out = []
    for i, item in enumerate(items):
        raw = bbox_fn(item)
        try:
            vals = tuple(raw)
        except TypeError:
            raise InvalidTypeError(
                f"must return (x1, y1, x2, y2), got {raw!r}", field=field, item=i
            ) from None
        if len(vals) != 4 or not (
            all(type(v) in _PLAIN_NUMBERS for v in vals) or all(_is_real(v) for v in vals)
        ):
            raise InvalidTypeError(
                f"must return 4 real numbers (x1, y1, x2, y2), got {raw!r}", field=field, item=i
            )
        try:
            x1, y1, x2, y2 = float(vals[0]), float(vals[1]), float(vals[2]), float(vals[3])
        except OverflowError:  # an int too large for a float
            raise InvalidValueError(f"must be finite, got {vals!r}", field=field, item=i) from None
        if not (
            math.isfinite(x1) and math.isfinite(y1) and math.isfinite(x2) and math.isfinite(y2)
        ):
            raise InvalidValueError(f"must be finite, got {vals!r}", field=field, item=i)
        if x2 < x1 or y2 < y1:
            raise InvalidValueError(
                f"must have x2 >= x1 and y2 >= y1 (non-negative size), got {vals!r}",
                field=field,
                item=i,
            )
        out.append((x1, y1, x2, y2))
    return out


def _shrunk(lo: float, hi: float) -> tuple[float, float]:
    trim = XY_CUT_SHRINK * (hi - lo)
    return lo + trim, hi - trim


def _split(members: list[int], keys: list[tuple[float, float, int]]) -> list[list[int]]:
    """Members split into runs of overlapping or touching intervals, in ascending order.

    ``keys[i] = (lo, hi, i)``. Members are sorted by that key; one joins the current run when its
    ``lo`` is at most the run's highest ``hi``. One sort: O(m log m) for m members.
    """
    order = sorted(members, key=keys.__getitem__)
    groups = [[order[0]]]
    reach = keys[order[0]][1]
    for i in order[1:]:
        lo, hi, _ = keys[i]
        if lo <= reach:
            groups[-1].append(i)
            if hi > reach:
                reach = hi
        else:
            groups.append([i])
            reach = hi
    return groups


def group_items_left_to_right_top_to_bottom(
    items: Iterable[T], bbox_fn: Callable[[T], Sequence[float]]
) -> list[T]:
    """The items in page reading order: a column-major XY-cut.

    A set of items is split into columns where the shrunk x-intervals (``XY_CUT_SHRINK`` of each
    width trimmed from both sides) leave a gap, read left to right; failing that, into bands where
    the shrunk y-intervals leave a gap, read top to bottom. Each part is split again the same way.
    A set that no cut divides is read by ``(y1, x1, input position)``.

    Time: one sort per attempted cut, so O(n log n) per level of the cut tree and
    O(n log n * depth) in all. Real pages are a few levels deep (20,000 words in columns of lines
    take well under a second); only a contrived spiral that peels one box per cut reaches depth n
    and O(n^2 log n). A part that just came out of a column (band) split is one connected run in
    x (y), so that cut is not tried again on it. The parts wait on an explicit stack, never in
    recursion, so any depth is safe. Memory O(n). Bad boxes (NaN, infinite, negative size) raise ``InvalidValueError`` naming the
    item index; a ``bbox_fn`` result that is not four real numbers raises ``InvalidTypeError``.

    >>> boxes = {"H": (0, 0, 1000, 50), "A1": (0, 60, 490, 300), "A2": (0, 310, 490, 600),
    ...          "B1": (510, 60, 1000, 400), "B2": (510, 410, 1000, 600)}
    >>> group_items_left_to_right_top_to_bottom(["B2", "A2", "H", "B1", "A1"], boxes.get)
    ['H', 'A1', 'A2', 'B1', 'B2']
    """
    items = list(items)
    rects = _bboxes(items, bbox_fn)
    if not items:
        return []
    xkeys = [(*_shrunk(r[0], r[2]), i) for i, r in enumerate(rects)]
    ykeys = [(*_shrunk(r[1], r[3]), i) for i, r in enumerate(rects)]
    leaf_keys = [(r[1], r[0], i) for i, r in enumerate(rects)]

    out: list[int] = []
    # Each task: (members, try_columns, try_bands). Parts are pushed in reverse so the first
    # part is read first.
    stack: list[tuple[list[int], bool, bool]] = [(list(range(len(items))), True, True)]
    while stack:
        members, try_columns, try_bands = stack.pop()
        if len(members) <= 1:
            out.extend(members)
            continue
        if try_columns:
            parts = _split(members, xkeys)
            if len(parts) > 1:
                stack.extend((p, False, True) for p in reversed(parts))
                continue
        if try_bands:
            parts = _split(members, ykeys)
            if len(parts) > 1:
                stack.extend((p, True, False) for p in reversed(parts))
                continue
        out.extend(sorted(members, key=leaf_keys.__getitem__))
    return [items[i] for i in out]


def group_into_lines(
    items: Iterable[T],
    bbox_fn: Callable[[T], Sequence[float]],
    ratio: float = LINE_VERTICAL_OVERLAP_RATIO,
) -> list[list[T]]:
    """The items grouped into visual lines, top to bottom, each line left to right.

    Items are visited by ``(centre y, centre x, input position)``. Each is compared with the last
    line only: with ``h = max(y2 - y1, 1)``, the line spanning ``[min y1, max y2]`` of its members
    and ``L.h`` the mean of their ``h``, the item joins the line when its vertical overlap
    ``min(y2, L.y2) - max(y1, L.y1)`` is at least ``ratio * min(h, L.h)``; otherwise it starts a
    new line. Each line is then ordered by ``(x1, centre x, input position)``.

    Time O(n log n) (two sorts and one pass), memory O(n). Bad boxes raise as in
    :func:`group_items_left_to_right_top_to_bottom`; ``ratio`` must be finite and >= 0.

    >>> words = {"a": (10, 10, 100, 30), "b": (120, 12, 200, 32), "d": (110, 28, 150, 48),
    ...          "c": (10, 45, 100, 65)}
    >>> group_into_lines(["c", "d", "b", "a"], words.get)
    [['a', 'b'], ['d'], ['c']]
    """
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real):
        raise InvalidTypeError(f"must be a real number, got {ratio!r}", field="ratio")
    if not (math.isfinite(ratio) and ratio >= 0):
        raise InvalidValueError(f"must be finite and >= 0, got {ratio!r}", field="ratio")
    items = list(items)
    rects = _bboxes(items, bbox_fn)
    visit_keys = [((r[1] + r[3]) / 2, (r[0] + r[2]) / 2, i) for i, r in enumerate(rects)]
    line_keys = [(r[0], (r[0] + r[2]) / 2, i) for i, r in enumerate(rects)]

    lines: list[list[int]] = []
    line_y1 = line_y2 = line_h_sum = 0.0
    for i in sorted(range(len(items)), key=visit_keys.__getitem__):
        _, y1, _, y2 = rects[i]
        h = max(y2 - y1, 1.0)
        if lines:
            line_h = line_h_sum / len(lines[-1])
            overlap = min(y2, line_y2) - max(y1, line_y1)
            if overlap >= ratio * min(h, line_h):
                lines[-1].append(i)
                line_y1, line_y2, line_h_sum = min(line_y1, y1), max(line_y2, y2), line_h_sum + h
                continue
        lines.append([i])
        line_y1, line_y2, line_h_sum = y1, y2, h
    return [
        [items[i] for i in sorted(line, key=line_keys.__getitem__)] for line in lines
    ]
