"""The compiled and the pure-Python packers produce identical batch layouts and errors."""

from __future__ import annotations

import numpy as np
import pytest

from scorekit._packing import pack_positions, pack_texts, pack_texts_python
from tests._textgen import random_pairs


def test_compiled_and_python_packing_agree():
    texts = [t for pair in random_pairs(8, 500) for t in pair] + ["", "\U0010ffff", "\x00"]
    for packer_input in (texts, tuple(texts), np.array(texts, dtype=object)):
        a_values, a_offsets = pack_texts(packer_input, "t")
        b_values, b_offsets = pack_texts_python(list(texts), "t")
        assert a_values.dtype == np.uint32 and a_offsets.dtype == np.int64
        np.testing.assert_array_equal(a_values, b_values)
        np.testing.assert_array_equal(a_offsets, b_offsets)
    assert [chr(c) for c in pack_texts(["a😀b"], "t")[0]] == ["a", "😀", "b"]


@pytest.mark.parametrize("packer", [pack_texts, pack_texts_python])
def test_errors_name_the_item(packer):
    with pytest.raises(TypeError, match=r"xs\[2\] must be str, got bytes"):
        packer(["a", "b", b"c"], "xs")
    with pytest.raises(ValueError, match=r"xs\[1\] contains a lone surrogate U\+DC00 at position 2"):
        packer(["a", "bc\udc00"], "xs")


def test_positions():
    values, offsets = pack_positions([[0, 2], [], [1]], [2, 0, 1], "joins")
    assert values.tolist() == [0, 2, 1] and offsets.tolist() == [0, 2, 2, 3]
    with pytest.raises(ValueError, match=r"joins\[1\] position 1 is outside 0..0"):
        pack_positions([[0], [1]], [1, 0], "joins")


def test_joined_texts_pack_alike_in_rust_and_python():
    from scorekit.text import JoinedText, _pack_side, _pack_side_python, join_lines_with_hyphenation

    items = [join_lines_with_hyphenation("գրա-\nկան"), "plain", JoinedText("", ()), JoinedText("ab", (0, 2)), "😀"]
    fast = _pack_side(items, None, "gts", "gt_joins")
    slow = _pack_side_python(items, set(map(type, items)), None, "gts", "gt_joins")
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"gt_joins\[0\] position 3 is outside 0..2"):
        _pack_side([JoinedText("ab", (3,))], None, "gts", "gt_joins")
    with pytest.raises(TypeError, match=r"gts\[1\] must be str or JoinedText, got int"):
        _pack_side(["a", 5], None, "gts", "gt_joins")


def test_pairs_pack_like_each_side_alone():
    from scorekit._kernels import _core

    pairs = random_pairs(9, 300)
    cases = [(h, r, "slice") if k % 2 else [h, r] for k, (h, r) in enumerate(pairs)]
    (hv, ho), (rv, ro) = _core.pack_pairs(cases)
    for (values, offsets), side in (((hv, ho), [h for h, _ in pairs]), ((rv, ro), [r for _, r in pairs])):
        expected_values, expected_offsets = pack_texts_python(side, "t")
        np.testing.assert_array_equal(values, expected_values)
        np.testing.assert_array_equal(offsets, expected_offsets)
    for bad in ([("a", None)], [("a",)], ["ab"]):
        with pytest.raises(TypeError):
            _core.pack_pairs(bad)
    with pytest.raises(ValueError, match=r"gold\[1\] contains a lone surrogate"):
        _core.pack_pairs([("a", "b"), ("c", "\ud800")])


def test_plain_lists_of_numbers_and_bools_read_as_numpy_would():
    """``floats_of`` / ``bools_of`` (the compiled one-pass readers) give NumPy's arrays for exact
    lists and tuples of floats, bools and 64-bit ints (or of True and False), and ``None`` for
    anything NumPy must convert or check itself."""
    from scorekit._kernels import use_backend
    from scorekit._packing import bools_of, floats_of

    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(0, 50))
        pool = [float(x) for x in rng.normal(size=8)] + [0.0, -0.0, np.inf, -np.inf, np.nan, True, False,
                                                          0, 1, -7, 2**53 + 1, -(2**63), 2**63 - 1]
        values = [pool[i] for i in rng.integers(0, len(pool), n)]
        for container in (list, tuple):
            read = floats_of(container(values))
            expected = np.asarray(values, dtype=np.float64) if values else np.zeros(0)
            assert read.dtype == np.float64 and np.array_equal(read, expected, equal_nan=True)
            assert np.array_equal(np.signbit(read), np.signbit(expected))
        flags = [bool(b) for b in rng.integers(0, 2, n)]
        assert np.array_equal(bools_of(flags), np.asarray(flags, dtype=bool)) and bools_of(flags).dtype == np.bool_

    class Real(float):
        pass

    for odd in ([1.0, 2**63], [1.0, "2"], [1.0, Real(2.0)], [1.0, np.float64(2.0)], [None], [[1.0]]):
        assert floats_of(odd) is None, odd
    for odd in ([True, 1], [True, np.True_], [0, 1], [True, None]):
        assert bools_of(odd) is None, odd
    assert floats_of(np.array([1.0])) is None and floats_of(iter([1.0])) is None and bools_of("TF") is None
    with use_backend("numba"):  # a compiled reader: only on the compiled backend
        assert floats_of([1.0]) is None and bools_of([True]) is None
