"""Numba backend of the Arrow text path (the twin of ``_core.utf8_pair_counts`` and
``_core.group_sums``, ``rust/bindings/src/arrow_text.rs``).

Owns decoding Arrow-style UTF-8 columns (byte buffer, ``int32``/``int64`` offsets, optional
validity bitmap) into the packed code-point layout, with the same strict validation as Rust's
``std::str::from_utf8`` (no overlong forms, surrogates or values past U+10FFFF), and scoring the
pairs with the Numba Levenshtein twins. Rows are ``(ref_len, substitutions, deletions, insertions,
status)`` as in Rust: status 0 counted, 1 left to the caller, 2 prediction not UTF-8, 3 gold not
UTF-8. This twin has no normaliser rules: with any ``steps`` every pair is left to the caller
(status 1), which canonicalises in Python. It builds no Python object per item.
"""

from __future__ import annotations

import numba
import numpy as np

from scorekit._kernels import levenshtein_numba as lev

__all__ = ["utf8_pair_counts", "decode_column", "group_sums"]

NEEDS_CALLER, INVALID_PRED, INVALID_GOLD = 1, 2, 3

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _decode_item(data, lo, hi, out, at):
    """Code points of ``data[lo:hi]`` written to ``out[at:]``; their count, or -1 if not UTF-8."""
    k = lo
    n = 0
    while k < hi:
        b0 = np.int64(data[k])
        if b0 < 0x80:
            out[at + n] = b0
            k += 1
        else:
            if 0xC2 <= b0 <= 0xDF:
                width, c, low, high = 2, b0 & 0x1F, 0x80, 0xBF
            elif 0xE0 <= b0 <= 0xEF:
                width, c = 3, b0 & 0x0F
                low = 0xA0 if b0 == 0xE0 else 0x80
                high = 0x9F if b0 == 0xED else 0xBF
            elif 0xF0 <= b0 <= 0xF4:
                width, c = 4, b0 & 0x07
                low = 0x90 if b0 == 0xF0 else 0x80
                high = 0x8F if b0 == 0xF4 else 0xBF
            else:
                return -1
            if k + width > hi:
                return -1
            b1 = np.int64(data[k + 1])
            if b1 < low or b1 > high:  # the second byte carries the overlong/surrogate/range rules
                return -1
            c = (c << 6) | (b1 & 0x3F)
            for j in range(2, width):
                b = np.int64(data[k + j])
                if b < 0x80 or b > 0xBF:
                    return -1
                c = (c << 6) | (b & 0x3F)
            out[at + n] = c
            k += width
        n += 1
    return n


@_jit
def _decode(data, offsets, validity, validity_start, has_validity, values, out_offsets, bad):
    at = 0
    for k in range(offsets.shape[0] - 1):
        out_offsets[k] = at
        bit = validity_start + k
        if has_validity and (validity[bit >> 3] >> (bit & 7)) & 1 == 0:
            continue
        n = _decode_item(data, offsets[k], offsets[k + 1], values, at)
        if n < 0:
            bad[k] = True
        else:
            at += n
    out_offsets[offsets.shape[0] - 1] = at
    return at


def _check(data, offsets, validity, validity_start, name):
    n = offsets.shape[0] - 1
    if n < 0:
        raise ValueError(f"column {name}: needs at least one offset (n + 1 offsets for n items)")
    steps = np.diff(offsets)
    if offsets[0] < 0 or offsets[-1] > data.shape[0] or (steps < 0).any():
        raise ValueError(f"column {name}: offsets are out of order or outside the data")
    if validity is not None and validity_start + n > 8 * validity.shape[0]:
        raise ValueError(f"column {name}: validity bitmap too short for {n} items")


def decode_column(column, name: str = "column"):
    """``(values uint32, offsets int64, bad bool[n])``: the code points of every item of ``column``
    (``(data, offsets, validity | None, validity_offset)``); a null or non-UTF-8 item is empty and a
    non-UTF-8 one is flagged in ``bad``."""
    data, offsets, validity, validity_start = column
    data = np.ascontiguousarray(data, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    _check(data, offsets, validity, validity_start, name)
    n = offsets.shape[0] - 1
    values = np.empty(int(offsets[-1] - offsets[0]), dtype=np.uint32)
    out_offsets = np.empty(n + 1, dtype=np.int64)
    bad = np.zeros(n, dtype=np.bool_)
    bits = np.zeros(1, np.uint8) if validity is None else np.ascontiguousarray(validity, dtype=np.uint8)
    used = _decode(data, offsets, bits, int(validity_start), validity is not None, values, out_offsets, bad)
    return values[:used], out_offsets, bad


def utf8_pair_counts(pred, gold, mode, steps, tables, threads=0) -> np.ndarray:
    """``int64[n, 5]`` rows ``(ref_len, substitutions, deletions, insertions, status)`` of every
    (pred, gold) pair of two UTF-8 columns (see the module docstring)."""
    if mode not in ("cer", "wer"):
        raise ValueError(f"mode must be 'cer' or 'wer', got {mode!r}")
    hyp_values, hyp_offsets, hyp_bad = decode_column(pred, "pred")
    ref_values, ref_offsets, ref_bad = decode_column(gold, "gold")
    n = ref_offsets.shape[0] - 1
    if hyp_offsets.shape[0] - 1 != n:
        raise ValueError(f"pred has {hyp_offsets.shape[0] - 1} items but gold has {n}")
    out = np.zeros((n, 5), dtype=np.int64)
    if steps:
        out[:, 4] = NEEDS_CALLER
        return out
    if mode == "cer":
        raw = lev.levenshtein_alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads)
        out[:, 0] = np.diff(ref_offsets)
        out[:, 1:4] = raw[:, 1:4]
    else:
        raw = lev.word_alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads)
        out[:, 0] = raw[:, 4]
        out[:, 1:4] = raw[:, 1:4]
    out[ref_bad, :4] = 0
    out[ref_bad, 4] = INVALID_GOLD
    out[hyp_bad, :4] = 0
    out[hyp_bad, 4] = INVALID_PRED
    return out


@_jit
def _group_sums(rows, codes, groups, out):
    for k in range(rows.shape[0]):
        for target in (codes[k], groups):
            if target >= 0:
                for c in range(rows.shape[1]):
                    out[target, c] += rows[k, c]
                if out[target, rows.shape[1]] == 0:
                    out[target, rows.shape[1] + 1] = k
                out[target, rows.shape[1]] += 1


def group_sums(rows, codes, groups: int) -> np.ndarray:
    """``int64[groups + 1, w + 2]``: the column sums of ``rows`` (``int64[n, w]``) per code, every
    row's in the last row, then the row count and the first row (-1: none); code -1 (or no
    ``codes``) is no group (see ``_core.group_sums``)."""
    n = rows.shape[0]
    codes = np.full(n, -1, np.int64) if codes is None else np.asarray(codes, dtype=np.int64)
    if codes.shape[0] != n:
        raise ValueError(f"rows has {n} items but codes has {codes.shape[0]}")
    if n and (codes.min() < -1 or codes.max() >= groups):
        k = int(np.flatnonzero((codes < -1) | (codes >= groups))[0])
        raise ValueError(f"codes[{k}] is {codes[k]}: codes must be -1 or below {groups}")
    out = np.zeros((groups + 1, rows.shape[1] + 2), dtype=np.int64)
    out[:, -1] = -1
    _group_sums(rows, codes, groups, out)
    return out
