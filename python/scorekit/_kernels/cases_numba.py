"""Numba twin of the ``records`` kernels: same signatures and results as ``scorekit._core``'s
``cases_match_matrix`` and ``cases_greedy_pairs`` (``rust/kernels/src/records.rs``; contract in
``scorekit._kernels.cases``). Validation happens here in Python, with the Rust messages."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _match_matrix(e, a):
    rows, p = e.shape
    cols = a.shape[0]
    out = np.zeros((rows, cols))
    for r in range(rows):
        scored = 0
        for k in range(p):
            if e[r, k] >= 0:
                scored += 1
        if scored == 0:
            continue
        for c in range(cols):
            equal = 0
            for k in range(p):
                if e[r, k] >= 0 and e[r, k] == a[c, k]:
                    equal += 1
            out[r, c] = equal / scored
    return out


@njit(cache=True, nogil=True)
def _greedy(m):
    rows, cols = m.shape
    taken = np.zeros(cols, dtype=np.bool_)
    chosen = np.full(rows, -1, dtype=np.int64)
    for r in range(rows):
        best = -1
        best_score = 0.0
        for c in range(cols):
            if not taken[c] and m[r, c] > best_score:
                best = c
                best_score = m[r, c]
        if best >= 0:
            taken[best] = True
        chosen[r] = best
    return chosen


def _ids(x, name):
    if not isinstance(x, np.ndarray) or x.ndim != 2 or x.dtype != np.int64:
        raise TypeError(f"{name} must be a 2-D int64 array")
    return np.ascontiguousarray(x)


def cases_match_matrix(expected, actual):
    e, a = _ids(expected, "expected"), _ids(actual, "actual")
    if e.shape[1] != a.shape[1]:
        raise ValueError(f"expected and actual ids must have the same number of paths, got {e.shape[1]} and "
                         f"{a.shape[1]}")
    return _match_matrix(e, a)


def cases_greedy_pairs(matrix):
    m = np.ascontiguousarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError("matrix must be a C-contiguous 2-D array")
    bad = m[~((m >= 0.0) & (m <= 1.0))]
    if bad.size:
        raise ValueError(f"matrix values must lie in [0, 1], got {bad.flat[0]}")
    return _greedy(m)
