"""The fca kernel family (``scorekit._kernels.fca``) on both backends: hand-computed pages, empty
lines and empty sides, the largest coefficients, bad input (the same errors), and the two
backends against each other on generated pages. The pages against the reference implementations
are in ``tests/test_ocr_fca_reference.py``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit._kernels import _core
from scorekit._kernels import fca as kernel
from scorekit._kernels import fca_numba as twin
from scorekit._packing import offsets_of
from scorekit.ocr.fca import COEFFICIENTS

KERNELS = [_core.fca_errors, twin.fca_errors]
IDS = ["rust", "numba"]
GRID = np.array(COEFFICIENTS, dtype=np.int64)


def packed(lines):
    values = np.array([ord(c) for line in lines for c in line], dtype=np.uint32)
    return values, offsets_of([len(x) for x in lines], len(lines))


def errors(run, gt, ocr, coefficients=GRID):
    return run(*packed(gt), *packed(ocr), coefficients)


@pytest.mark.parametrize("run", KERNELS, ids=IDS)
def test_hand_computed(run):
    assert errors(run, ["first line", "second line"], ["second line", "first line"]) == 0
    assert errors(run, ["abc", "def"], ["def", "abx"]) == 1  # fca 1 - 1/6 (docs/ocr-metrics.md)
    # `b` takes one `b` of `bb` for free; the `b` left and `a` are then equally long, and of the two
    # the paper's step 3 matches `a` with `a` (penalty lower): 1 (the first in line order, `b`
    # with `a`, gave 2).
    assert errors(run, ["bb", "a"], ["b", "a"]) == 1
    # One term alone decides: by the edit distance `xyz` goes with `xyzq`, by the length with `abc`.
    assert errors(run, ["xyz"], ["abc", "xyzq"], np.array([[1, 0, 0, 0]])) == 1 + 3
    assert errors(run, ["xyz"], ["abc", "xyzq"], np.array([[0, 1, 0, 0]])) == 3 + 4


@pytest.mark.parametrize("run", KERNELS, ids=IDS)
def test_empty_lines_are_no_pieces_and_an_empty_side_is_all_errors(run):
    assert errors(run, ["ab", "", "bba", ""], ["", "ba", "b"]) == errors(run, ["ab", "bba"], ["ba", "b"]) == 2
    assert errors(run, ["abc", "de"], []) == errors(run, ["abc", "de"], ["", ""]) == 5
    assert errors(run, [], ["x"]) == errors(run, [""], ["x"]) == 1
    assert errors(run, [], []) == 0


@pytest.mark.parametrize("run", KERNELS, ids=IDS)
def test_the_largest_coefficients(run):
    top = np.full((1, 4), kernel.MAX_COEFFICIENT, dtype=np.int64)
    assert errors(run, ["abcd" * 50, "xy"], ["xy", "abce" * 50], top) == 50


BAD = [
    ((np.zeros(3, np.uint32), np.array([0, 4])), "gt_offsets must be n \\+ 1 non-decreasing entries"),
    ((np.zeros(3, np.uint32), np.array([], dtype=np.int64)), "gt_offsets must be"),
    ((np.zeros(3, np.uint32), np.array([1, 3])), "gt_offsets must be"),
    ((np.zeros(3, np.uint32), np.array([0, 2, 1, 3])), "gt_offsets must be"),
]


@pytest.mark.parametrize("run", KERNELS, ids=IDS)
def test_bad_input_is_the_same_value_error(run):
    line = packed(["abc"])
    for side, message in BAD:
        with pytest.raises(ValueError, match=message):
            run(*side, *line, GRID)
        with pytest.raises(ValueError, match=message.replace("gt", "ocr")):
            run(*line, *side, GRID)
    for coefficients in (np.zeros((0, 4), np.int64), np.array([[1, 1, -1, 1]]), np.array([[0, 0, 0, 10**6 + 1]])):
        with pytest.raises(ValueError, match=r"coefficients must be at least one row of four integers in 0..=1000000"):
            run(*line, *line, coefficients)
    for coefficients in (np.zeros((2, 3), np.int64), np.zeros((4, 2), np.int64).T):
        with pytest.raises(ValueError, match=r"coefficients must be a C-contiguous int64 array of shape \(n, 4\)"):
            run(*line, *line, coefficients)


def test_dispatch_converts_and_runs_on_either_backend():
    from scorekit._kernels import use_backend

    gt, ocr = [np.array([1, 2, 3], np.int64)], [np.array([1, 2, 4], np.int64)]
    for backend in IDS:
        with use_backend(backend):
            values = [np.concatenate(gt), np.array([0, 3]), np.concatenate(ocr), np.array([0, 3])]
            assert kernel.fca_errors(*values, [[1, 0, 0, 0]]) == 1


pages = st.lists(st.text(alphabet="abcd", max_size=9), max_size=6)
coefficient_sets = st.one_of(st.just(GRID), st.lists(st.tuples(*[st.integers(0, 40)] * 4), min_size=1, max_size=20)
                             .map(lambda rows: np.array(rows, dtype=np.int64)))


@settings(max_examples=150, deadline=None)
@given(pages, pages, coefficient_sets)
def test_backends_agree_on_generated_pages(gt, ocr, coefficients):
    assert errors(_core.fca_errors, gt, ocr, coefficients) == errors(twin.fca_errors, gt, ocr, coefficients)
