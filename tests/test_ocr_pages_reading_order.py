"""Reading order (column-major XY-cut) and line grouping of ``scorekit.ocr_pages``.

Exact cases come from the ocr-pages test vectors; properties check permutations, shuffle
invariance, column-by-column reading and line grouping; a recursive reference written from the
rule text is the oracle for random pages; a 20,000-item page and a cut tree deeper than Python's
recursion limit check the iterative implementation.
"""

from __future__ import annotations

import itertools
import math
import random
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.box_grouping.reading_order import (
    LINE_VERTICAL_OVERLAP_RATIO,
    XY_CUT_SHRINK,
    group_into_lines,
    group_items_left_to_right_top_to_bottom as reading_order,
)

# The ocr-pages test vectors, reading order and line grouping: (boxes by name, expected order).
ORDER_VECTORS = {
    "R1": (
        {"H": (0, 0, 1000, 50), "A1": (0, 60, 490, 300), "A2": (0, 310, 490, 600),
         "B1": (510, 60, 1000, 400), "B2": (510, 410, 1000, 600)},
        ["H", "A1", "A2", "B1", "B2"],
    ),
    "R2": (
        {"H": (0, 0, 660, 50), "C1": (0, 60, 320, 600), "C2": (340, 60, 660, 600),
         "C3": (680, 0, 1000, 600)},
        ["H", "C1", "C2", "C3"],
    ),
    "R3": ({"C1": (0, 0, 505, 500), "C2": (495, 0, 1000, 500)}, ["C1", "C2"]),
    "R4": ({"X": (0, 0, 600, 100), "Y": (400, 50, 1000, 150)}, ["X", "Y"]),
    "R5": (
        {"H1": (0, 0, 490, 40), "H2": (510, 0, 1000, 40), "C1": (0, 50, 490, 300),
         "C2": (510, 50, 1000, 300)},
        ["H1", "C1", "H2", "C2"],
    ),
}
LINE_VECTOR = (
    {"a": (10, 10, 100, 30), "b": (120, 12, 200, 32), "d": (110, 28, 150, 48),
     "c": (10, 45, 100, 65)},
    [["a", "b"], ["d"], ["c"]],
)


def test_constants():
    assert XY_CUT_SHRINK == 0.10
    assert LINE_VERTICAL_OVERLAP_RATIO == 0.5


@pytest.mark.parametrize("name", sorted(ORDER_VECTORS))
def test_reading_order_vectors_in_every_input_order(name):
    boxes, expected = ORDER_VECTORS[name]
    for perm in itertools.permutations(boxes):
        assert reading_order(list(perm), boxes.get) == expected


def test_line_vector_in_every_input_order():
    boxes, expected = LINE_VECTOR
    for perm in itertools.permutations(boxes):
        assert group_into_lines(list(perm), boxes.get) == expected
        assert group_into_lines(list(perm), boxes.get, ratio=0.5) == expected


def test_line_ratio_changes_grouping():
    boxes, _ = LINE_VECTOR
    # d overlaps the first line by 4 px = 0.2 of the smaller height 20: ratio 0.2 joins it.
    assert group_into_lines(list(boxes), boxes.get, ratio=0.2) == [["a", "d", "b"], ["c"]]
    assert group_into_lines(list(boxes), boxes.get, ratio=0.21) == [["a", "b"], ["d"], ["c"]]


def test_empty_and_single():
    assert reading_order([], lambda b: b) == []
    assert group_into_lines([], lambda b: b) == []
    assert reading_order(iter([(1, 2, 3, 4)]), lambda b: b) == [(1, 2, 3, 4)]
    assert group_into_lines([(1, 2, 3, 4)], lambda b: b) == [[(1, 2, 3, 4)]]


def test_ties_keep_input_order():
    same = [("p", (0, 0, 10, 10)), ("q", (0, 0, 10, 10)), ("r", (0, 0, 10, 10))]
    for perm in itertools.permutations(same):
        names = [n for n, _ in perm]
        assert [n for n, _ in reading_order(perm, lambda it: it[1])] == names
        lines = group_into_lines(perm, lambda it: it[1])
        assert [[n for n, _ in line] for line in lines] == [names]


def test_zero_size_boxes_and_numpy_numbers():
    np = pytest.importorskip("numpy")
    pts = [np.array([5.0, 5.0, 5.0, 5.0]), np.array([0, 0, 0, 0]), np.array([5.0, 0, 5.0, 0])]
    # Columns x=0 | x=5; inside x=5, bands y=0 then y=5.
    assert [tuple(p) for p in reading_order(pts, lambda p: p)] == [(0, 0, 0, 0), (5, 0, 5, 0),
                                                                   (5, 5, 5, 5)]
    lines = group_into_lines(pts, lambda p: tuple(np.float32(v) for v in p))
    # Zero-height boxes overlap nothing (overlap 0 < 0.5 * max(h, 1)): one line each, by centre.
    assert [[tuple(p) for p in line] for line in lines] == [[(0, 0, 0, 0)], [(5, 0, 5, 0)],
                                                            [(5, 5, 5, 5)]]


# --- oracle: the rule text as a direct recursion -------------------------------------------------

def _reference_order(items, bbox_fn):
    def groups(idx, lo_hi):
        order = sorted(idx, key=lambda i: (*lo_hi(i), i))
        out, reach = [], -math.inf
        for i in order:
            lo, hi = lo_hi(i)
            if out and lo <= reach:
                out[-1].append(i)
                reach = max(reach, hi)
            else:
                out.append([i])
                reach = hi
        return out

    def shrink(lo, hi):
        return lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)

    boxes = [tuple(float(v) for v in bbox_fn(it)) for it in items]

    def rec(idx):
        if len(idx) <= 1:
            return list(idx)
        for lo_hi in (lambda i: shrink(boxes[i][0], boxes[i][2]),
                      lambda i: shrink(boxes[i][1], boxes[i][3])):
            parts = groups(idx, lo_hi)
            if len(parts) > 1:
                return [j for p in parts for j in rec(p)]
        return sorted(idx, key=lambda i: (boxes[i][1], boxes[i][0], i))

    return [items[i] for i in rec(list(range(len(items))))]


coord = st.integers(0, 60)
box = st.tuples(coord, coord, st.integers(0, 25), st.integers(0, 25)).map(
    lambda t: (t[0], t[1], t[0] + t[2], t[1] + t[3]))


@settings(max_examples=150, deadline=None)
@given(st.lists(box, max_size=25))
def test_matches_reference_recursion(boxes):
    items = list(enumerate(boxes))
    got = reading_order(items, lambda it: it[1])
    assert got == _reference_order(items, lambda it: it[1])
    assert sorted(got) == items  # a permutation of the input


@settings(max_examples=60, deadline=None)
@given(st.lists(box, max_size=30, unique_by=lambda b: (b[1], b[0])), st.randoms())
def test_invariant_under_shuffle_without_ties(boxes, rnd):
    first = reading_order(boxes, lambda b: b)
    shuffled = list(boxes)
    rnd.shuffle(shuffled)
    assert reading_order(shuffled, lambda b: b) == first
    assert sorted(first) == sorted(boxes)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.tuples(st.integers(20, 60), st.integers(0, 8), st.floats(0.6, 1.0)),
                      min_size=1, max_size=12), min_size=1, max_size=5),
    st.randoms(),
)
def test_columns_of_lines_read_column_by_column(columns, rnd):
    """Column c spans x in [c*1000, c*1000+800]; its lines are stacked with gaps of 5..13 px."""
    expected = []
    for c, lines in enumerate(columns):
        y = rnd.randint(0, 100)
        for k, (height, gap, width_share) in enumerate(lines):
            x1 = c * 1000 + rnd.randint(0, 10)
            expected.append(((c, k), (x1, y, x1 + 790 * width_share, y + height)))
            y += height + 5 + gap
    shuffled = list(expected)
    rnd.shuffle(shuffled)
    got = reading_order(shuffled, lambda it: it[1])
    assert [key for key, _ in got] == [key for key, _ in expected]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.tuples(st.integers(10, 80), st.integers(-3, 3), st.integers(16, 24)),
                      min_size=1, max_size=10), min_size=1, max_size=8),
    st.randoms(),
)
def test_group_into_lines_keeps_each_synthetic_line_together(lines, rnd):
    """Line k has baseline top 40*k; each word jitters by <= 3 px and is 16..24 px high."""
    words, expected = [], []
    for k, line in enumerate(lines):
        x, row = 0, []
        for j, (width, dy, height) in enumerate(line):
            top = 40 * k + dy
            words.append(((k, j), (x, top, x + width, top + height)))
            row.append((k, j))
            x += width + rnd.randint(2, 30)
        expected.append(row)
    rnd.shuffle(words)
    got = group_into_lines(words, lambda it: it[1])
    assert [[key for key, _ in line] for line in got] == expected


# --- scale and depth -----------------------------------------------------------------------------

def _newspaper(columns=4, lines=250, words=20):
    rnd = random.Random(12)
    items = []
    for c in range(columns):
        for k in range(lines):
            x = c * 2000.0 + rnd.uniform(0, 5)
            for w in range(words):
                width = rnd.uniform(30, 70)
                items.append(((c, k, w), (x, 30.0 * k + rnd.uniform(-2, 2), x + width,
                                          30.0 * k + 20 + rnd.uniform(-2, 2))))
                x += width + rnd.uniform(5, 15)
    return items


def test_twenty_thousand_items_is_fast(capsys):
    items = _newspaper()
    assert len(items) == 20_000
    shuffled = list(items)
    random.Random(3).shuffle(shuffled)
    t0 = time.perf_counter()
    order = reading_order(shuffled, lambda it: it[1])
    t1 = time.perf_counter()
    lines = group_into_lines(shuffled, lambda it: it[1])
    t2 = time.perf_counter()
    assert [key for key, _ in order] == [key for key, _ in items]
    # Lines: 250 rows, each holding the 80 words of its row across the 4 columns, left to right.
    assert [[key for key, _ in line] for line in lines] == [
        [(c, k, w) for c in range(4) for w in range(20)] for k in range(250)]
    with capsys.disabled():
        print(f"\n20,000 items: reading order {t1 - t0:.3f} s, group_into_lines {t2 - t1:.3f} s")
    assert t1 - t0 < 10 and t2 - t1 < 10  # generous: shared CI machines; typical well under 1 s


def _spiral(n):
    """n boxes whose cut tree is n levels deep: alternately a column on the right and a band at
    the bottom are cut off the rest, which shrinks towards the origin; reads last-made first."""
    items, w, h = [], 1.0, 1.0
    for k in range(n):
        if k % 2 == 0:
            items.append((k, (0.8 * w, 0.0, w, h)))
            w *= 0.75
        else:
            items.append((k, (0.0, 0.8 * h, w, h)))
            h *= 0.75
    return items


def test_cut_tree_deeper_than_the_recursion_limit():
    n = sys.getrecursionlimit() + 200
    items = _spiral(n)
    got = reading_order(items[::-1], lambda it: it[1])
    assert [k for k, _ in got] == list(range(n))[::-1]
    small = _spiral(60)
    assert reading_order(small, lambda it: it[1]) == _reference_order(small, lambda it: it[1])


# --- bad input -----------------------------------------------------------------------------------

BAD_VALUES = [
    (math.nan, 0, 1, 1),
    (0, math.inf, 1, 1),
    (0, 0, -math.inf, 1),
    (0, 0, 10**400, 1),  # an int no float can hold
    (5, 0, 4, 1),  # negative width
    (0, 5, 1, 4),  # negative height
]


@pytest.mark.parametrize("bad", BAD_VALUES)
@pytest.mark.parametrize("fn", [reading_order, group_into_lines])
def test_bad_box_names_the_item(fn, bad):
    boxes = [(0, 0, 1, 1), (2, 2, 3, 3), bad]
    with pytest.raises(InvalidValueError) as err:
        fn(boxes, lambda b: b)
    assert err.value.item == 2 and "item 2" in str(err.value)


@pytest.mark.parametrize("bad", [(0, 0, 1), (0, 0, 1, 1, 1), ("0", 0, 1, 1), 7, None,
                                 (True, 0, 1, 1)])
@pytest.mark.parametrize("fn", [reading_order, group_into_lines])
def test_bbox_fn_result_of_wrong_type(fn, bad):
    with pytest.raises(InvalidTypeError) as err:
        fn([(0, 0, 1, 1), bad], lambda b: b)
    assert err.value.item == 1


@pytest.mark.parametrize("ratio", [math.nan, math.inf, -0.1])
def test_bad_ratio(ratio):
    with pytest.raises(InvalidValueError, match="ratio"):
        group_into_lines([(0, 0, 1, 1)], lambda b: b, ratio=ratio)
    with pytest.raises(InvalidTypeError, match="ratio"):
        group_into_lines([(0, 0, 1, 1)], lambda b: b, ratio="0.5")


def test_inputs_not_modified():
    boxes, _ = ORDER_VECTORS["R1"]
    items = list(boxes)
    snapshot = list(items)
    reading_order(items, boxes.get)
    group_into_lines(items, boxes.get)
    assert items == snapshot
