"""The Arrow path's byte-level shortcuts (rust/kernels/src/text_columns.rs): a column checked for
UTF-8 at once, the common prefix and suffix of a pair found on its bytes (cut back to character
boundaries), only the middles decoded and aligned, and equal pairs not aligned at all. Each
shape they take (equal texts, ASCII and multi-byte texts, texts differing only in the last byte of
a character, lengths around one 64-symbol word, nulls, invalid bytes in the shared affixes or in a
middle, items cut inside a character) against the Python-list path and the Numba twin, which
decodes and aligns whole items."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

import scorekit
import scorekit.arrow
from scorekit._kernels import use_backend, utf8
from scorekit.arrow import evaluate_arrow

#: Characters of every UTF-8 width, with pairs differing in their last byte only (é/è, 的/皆, 😀/😁).
CHARS = "ab é è Ցց 的皆 😀😁"


def _shaped_pairs(seed: int, count: int) -> list[tuple[str, str]]:
    """Pairs sharing a prefix and a suffix around short middles; equal pairs; ASCII-only pairs; and
    lengths of 62 to 67 code points (one 64-bit word of the alignment, or two)."""
    rng = random.Random(seed)

    def text(n: int, chars: str = CHARS) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    pairs = []
    for k in range(count):
        shape = k % 5
        if shape == 0:  # equal
            t = text(rng.randint(0, 70))
            pairs.append((t, t))
        elif shape == 1:  # ASCII only
            pairs.append((text(rng.randint(0, 40), "abc "), text(rng.randint(0, 40), "abc ")))
        elif shape == 2:  # lengths around a word
            n = rng.randint(62, 67)
            head = text(rng.randint(0, n))
            pairs.append((head + text(n - len(head)), head + text(n - len(head))))
        else:  # a shared prefix and suffix, short middles
            head, tail = text(rng.randint(0, 30)), text(rng.randint(0, 30))
            pairs.append((head + text(rng.randint(0, 4)) + tail, head + text(rng.randint(0, 4)) + tail))
    return pairs


def test_shaped_pairs_equal_the_python_path(backend):
    pairs = _shaped_pairs(3, 2500)
    preds, golds = [p for p, _ in pairs], [g for _, g in pairs]
    preds[7], golds[11], preds[12], golds[12] = None, None, None, None
    python = scorekit.evaluate(list(zip(preds, golds)), metric="cer")
    for kind in (pa.string(), pa.large_binary()):
        table = pa.table({"pred": pa.array([p and p.encode() for p in preds]).cast(kind),
                          "gold": pa.array([g and g.encode() for g in golds]).cast(kind)})
        report = evaluate_arrow(table, nulls="count", per_item=True)
        assert report.detail == python.detail
        assert report.items.column("edits").to_pylist() == [s.detail["edits"] for s in python.scores]
        assert report.items.column("gold_len").to_pylist() == [len(g or "") for g in golds]
    assert sum(p == g for p, g in pairs) > 500


#: UTF-8 pieces and broken ones: a lone continuation byte, a bad lead byte, a truncated sequence,
#: an encoded surrogate, an overlong form, and the first bytes of 的/皆 without their last byte.
PIECES = [b"a", b" ", "é".encode(), "è".encode(), "的".encode(), "😀".encode()]
BROKEN = [b"\x80", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xe7\x9a"]


def _bytes_pairs(seed: int, count: int) -> list[tuple[bytes, bytes]]:
    """Byte pairs sharing prefixes and suffixes, with a broken piece in the affixes, in a middle,
    or nowhere."""
    rng = random.Random(seed)

    def piece(broken: bool) -> bytes:
        return b"".join(rng.choice(BROKEN if broken and rng.random() < 0.3 else PIECES) for _ in range(rng.randint(0, 6)))

    pairs = []
    for k in range(count):
        where = k % 4  # 0 nowhere, 1 in the affixes, 2 in the pred middle, 3 in the gold middle
        head, tail = piece(where == 1), piece(where == 1)
        pred, gold = head + piece(where == 2) + tail, head + piece(where == 3) + tail
        pairs.append((pred, gold) if k % 9 else (gold, gold))
    return pairs


def _statuses(pred: pa.Array, gold: pa.Array) -> dict[str, np.ndarray]:
    out = {}
    for name in ("rust", "numba"):
        with use_backend(name):
            out[name] = utf8.pair_counts(scorekit.arrow._buffers(pred), scorekit.arrow._buffers(gold), "cer")
    return out


def _python_rows(preds: list[bytes], golds: list[bytes]) -> np.ndarray:
    """Rows as the kernels give them, from Python's decoder and the Python-list path."""
    rows = []
    for p, g in zip(preds, golds):
        try:
            p.decode()
        except UnicodeDecodeError:
            rows.append([0, 0, 0, 0, utf8.INVALID_PRED])
            continue
        try:
            g.decode()
        except UnicodeDecodeError:
            rows.append([0, 0, 0, 0, utf8.INVALID_GOLD])
            continue
        d = scorekit.evaluate([(p.decode(), g.decode())], metric="cer").detail
        rows.append([d["ref_len"], d["substitutions"], d["deletions"], d["insertions"], 0])
    return np.array(rows, dtype=np.int64)


def test_invalid_bytes_anywhere_give_the_side_python_names():
    pairs = _bytes_pairs(8, 1200)
    preds, golds = [p for p, _ in pairs], [g for _, g in pairs]
    expected = _python_rows(preds, golds)
    got = _statuses(pa.array(preds, pa.binary()), pa.array(golds, pa.large_binary()))
    np.testing.assert_array_equal(got["rust"], expected)
    np.testing.assert_array_equal(got["numba"], expected)
    counts = np.bincount(expected[:, 4], minlength=4)
    assert counts[0] > 300 and counts[utf8.INVALID_PRED] > 100 and counts[utf8.INVALID_GOLD] > 100, counts


def test_items_cut_inside_a_character():
    """A buffer that is UTF-8 as a whole while its first items are not (é cut in two)."""
    data = pa.py_buffer("éaé".encode())
    pred = pa.Array.from_buffers(pa.binary(), 3, [None, pa.py_buffer(np.array([0, 1, 2, 5], np.int32).tobytes()), data])
    got = _statuses(pred, pa.array(["x", "y", "aé"]))
    np.testing.assert_array_equal(got["rust"], got["numba"])
    assert got["rust"].tolist() == [[0, 0, 0, 0, utf8.INVALID_PRED]] * 2 + [[2, 0, 0, 0, 0]]


@pytest.mark.parametrize("validity", [False, True])
def test_a_null_item_holding_a_broken_byte(validity):
    """Bytes under a null cell are not read: the column is checked item by item, and the null
    item scores as empty text."""
    bits = pa.py_buffer(np.packbits([1, 0, 1], bitorder="little").tobytes()) if validity else None
    offsets = pa.py_buffer(np.array([0, 1, 2, 3], np.int32).tobytes())
    pred = pa.Array.from_buffers(pa.binary(), 3, [bits, offsets, pa.py_buffer(b"a\xffc")])
    got = _statuses(pred, pa.array(["a", "z", "c"]))
    np.testing.assert_array_equal(got["rust"], got["numba"])
    middle = [1, 0, 1, 0, 0] if validity else [0, 0, 0, 0, utf8.INVALID_PRED]
    assert got["rust"].tolist() == [[1, 0, 0, 0, 0], middle, [1, 0, 0, 0, 0]]


def test_group_sums_equal_numpy(backend):
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 1000, size=(3000, 5))
    codes = rng.integers(-1, 4, size=3000)
    codes[:40] = -1  # so that no group starts at row 0
    got = utf8.group_sums(raw[:, :4], codes, 4)  # a strided view, as the Arrow path passes it
    for g in range(4):
        rows = np.flatnonzero(codes == g)
        assert got[g].tolist() == [*raw[rows, :4].sum(axis=0).tolist(), len(rows), int(rows[0])]
    assert got[4].tolist() == [*raw[:, :4].sum(axis=0).tolist(), 3000, 0]
    assert utf8.group_sums(raw, None, 0).tolist() == [[*raw.sum(axis=0).tolist(), 3000, 0]]
    assert utf8.group_sums(raw[:0], codes[:0], 2).tolist() == [[0] * 5 + [0, -1]] * 3
    assert utf8.group_sums(raw[:3, :1], np.array([1, -1, 1]), 3).tolist() == \
        [[0, 0, -1], [raw[0, 0] + raw[2, 0], 2, 0], [0, 0, -1], [raw[:3, 0].sum(), 3, 0]]
    for bad in (4, -2):
        with pytest.raises(ValueError, match=rf"codes\[1\] is {bad}: codes must be -1 or below 4"):
            utf8.group_sums(raw[:2], np.array([0, bad]), 4)
    with pytest.raises(ValueError, match="items"):
        utf8.group_sums(raw, codes[:5], 4)


def test_read_ahead_keeps_order_and_errors():
    """Batches read ahead on the worker thread come in order, however many; an error of the source
    surfaces at its batch."""
    pairs = _shaped_pairs(9, 300)
    table = pa.table({"pred": [p for p, _ in pairs], "gold": [g for _, g in pairs]})
    batches = table.to_batches(max_chunksize=7)
    assert len(batches) > 3 * scorekit.arrow.READ_AHEAD
    report = evaluate_arrow(iter(batches), per_item=True)
    expected = scorekit.evaluate(pairs, metric="cer")
    assert report.items.column("edits").to_pylist() == [s.detail["edits"] for s in expected.scores]

    def failing():
        yield from batches[:5]
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        evaluate_arrow(failing())
