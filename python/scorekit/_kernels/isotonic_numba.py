"""Numba twin of the ``isotonic`` kernel: same signature and results as ``scorekit._core.isotonic_fit``.

Same contract as ``rust/kernels/src/isotonic.rs`` (see :mod:`scorekit._kernels.isotonic`), a
simpler route to it: an order-preserving ``uint64`` image of each score, one LSD radix sort with
8-bit digits carrying the labels (the Rust kernel sorts each outcome's scores apart, on two
threads, and merges them, or groups the rows by hash when there are at most 4,096 distinct
scores), grouping of equal keys, and one stack pass of pool-adjacent-violators
comparing integer sums exactly. Validation happens here in Python, with the Rust messages;
``threads`` is accepted for the same signature and not used.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_SIGN = np.uint64(1 << 63)


@njit(cache=True)
def _order_keys(scores):
    bits = (scores + 0.0).view(np.uint64)  # -0.0 -> 0.0
    keys = np.empty_like(bits)
    for i in range(bits.size):
        b = bits[i]
        keys[i] = ~b if b & _SIGN else b | _SIGN
    return keys


@njit(cache=True)
def _radix_sort(keys, labels):
    n = keys.size
    counts = np.zeros((8, 256), dtype=np.int64)
    for i in range(n):
        k = keys[i]
        for d in range(8):
            counts[d, (k >> np.uint64(8 * d)) & np.uint64(0xFF)] += 1
    key_buf = np.empty_like(keys)
    label_buf = np.empty_like(labels)
    for d in range(8):
        if counts[d].max() == n:
            continue
        nxt = np.empty(256, dtype=np.int64)
        start = 0
        for b in range(256):
            nxt[b] = start
            start += counts[d, b]
        shift = np.uint64(8 * d)
        for i in range(n):
            bucket = (keys[i] >> shift) & np.uint64(0xFF)
            key_buf[nxt[bucket]] = keys[i]
            label_buf[nxt[bucket]] = labels[i]
            nxt[bucket] += 1
        keys, key_buf = key_buf, keys
        labels, label_buf = label_buf, labels
    return keys, labels


@njit(cache=True)
def _not_below(h1, r1, h2, r2):
    # h1 / r1 >= h2 / r2 exactly; the products stay below 2**126, so split them into 64-bit halves
    return _mul_ge(np.uint64(h1), np.uint64(r2), np.uint64(h2), np.uint64(r1))


@njit(cache=True)
def _mul_wide(a, b):
    mask = np.uint64(0xFFFFFFFF)
    a_lo, a_hi, b_lo, b_hi = a & mask, a >> np.uint64(32), b & mask, b >> np.uint64(32)
    lo_lo = a_lo * b_lo
    mid1 = a_hi * b_lo
    mid2 = a_lo * b_hi
    carry = ((lo_lo >> np.uint64(32)) + (mid1 & mask) + (mid2 & mask)) >> np.uint64(32)
    high = a_hi * b_hi + (mid1 >> np.uint64(32)) + (mid2 >> np.uint64(32)) + carry
    return high, a * b


@njit(cache=True)
def _mul_ge(a, b, c, d):
    h1, l1 = _mul_wide(a, b)
    h2, l2 = _mul_wide(c, d)
    return h1 > h2 or (h1 == h2 and l1 >= l2)


@njit(cache=True)
def _fit(scores, correct):
    keys, labels = _radix_sort(_order_keys(scores), correct.copy())
    n = keys.size
    distinct_bits = np.empty(n, dtype=np.uint64)
    hits = np.empty(n, dtype=np.int64)   # the stack of blocks
    rows = np.empty(n, dtype=np.int64)
    spans = np.empty(n, dtype=np.int64)
    depth = 0
    distinct = 0
    i = 0
    while i < n:
        key = keys[i]
        h, r, s = 0, 0, 1
        while i < n and keys[i] == key:
            h += 1 if labels[i] else 0
            r += 1
            i += 1
        distinct_bits[distinct] = key & ~_SIGN if key & _SIGN else ~key
        distinct += 1
        while depth > 0 and _not_below(hits[depth - 1], rows[depth - 1], h, r):
            depth -= 1
            h += hits[depth]
            r += rows[depth]
            s += spans[depth]
        hits[depth], rows[depth], spans[depth] = h, r, s
        depth += 1
    levels = np.empty(distinct, dtype=np.float64)
    at = 0
    for b in range(depth):
        level = np.float64(hits[b]) / np.float64(rows[b])
        levels[at:at + spans[b]] = level
        at += spans[b]
    return distinct_bits[:distinct].copy().view(np.float64), levels


def isotonic_fit(scores: np.ndarray, correct: np.ndarray, threads: int = 0) -> tuple[np.ndarray, np.ndarray]:
    if scores.ndim != 1 or not scores.flags.c_contiguous:
        raise ValueError("scores must be a contiguous 1-D array")
    if correct.ndim != 1 or not correct.flags.c_contiguous:
        raise ValueError("correct must be a contiguous 1-D array")
    if scores.size != correct.size:
        raise ValueError(f"{scores.size} scores but {correct.size} correct flags")
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise ValueError(f"scores[{bad[0]}] is not a finite number")
    return _fit(scores, correct)
