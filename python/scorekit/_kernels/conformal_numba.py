"""Numba twin of the ``conformal`` kernel: same signatures and results as ``scorekit._core``'s
``conformal_fit`` and ``kth_smallest``.

Same contract as ``rust/kernels/src/conformal.rs`` (see :mod:`scorekit._kernels.conformal`), a
simpler route to it: the scores in one loop, then the order statistic by ``np.partition`` of the
scores other than NaN (the Rust kernel brackets the rank with a sample and selects among the
few scores inside, on two threads). ``threads`` is accepted for the same signature and not used.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _score_rows(probs, correct):
    scores = np.empty(probs.size, dtype=np.float64)
    kept = 0
    bad = -1
    for i in range(probs.size):
        p = probs[i]
        finite = np.isfinite(p)
        if finite and (p < 0.0 or p > 1.0) and bad < 0:
            bad = i
        if finite and correct[i]:
            scores[i] = 1.0 - p
            kept += 1
        else:
            scores[i] = np.nan
    return scores, kept, bad


@njit(cache=True)
def _kth(values, k):
    counted = 0
    for x in values:
        if not np.isnan(x):
            counted += 1
    kept = np.empty(counted, dtype=np.float64)
    at = 0
    for x in values:
        if not np.isnan(x):
            kept[at] = x
            at += 1
    return np.partition(kept, k)[k] + 0.0  # -0.0 -> 0.0


def _contiguous(array: np.ndarray, name: str) -> None:
    if array.ndim != 1 or not array.flags.c_contiguous:
        raise ValueError(f"{name} must be a contiguous 1-D array")


def conformal_fit(probs: np.ndarray, correct: np.ndarray, alpha: float,
                  threads: int = 0) -> tuple[float, np.ndarray, int]:
    _contiguous(probs, "probs")
    _contiguous(correct, "correct")
    if probs.size != correct.size:
        raise ValueError(f"{probs.size} probabilities but {correct.size} correct flags")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    scores, n, bad = _score_rows(probs, correct)
    if bad >= 0:
        raise ValueError(int(bad), float(probs[bad]))
    rank = math.ceil((n + 1) * (1.0 - alpha))
    if n == 0 or rank > n:
        q = math.inf
    elif rank < 1:
        q = -math.inf
    else:
        q = float(_kth(scores, rank - 1))
    return q, scores, int(n)


def kth_smallest(values: np.ndarray, k: int) -> float:
    _contiguous(values, "values")
    counted = int(np.count_nonzero(~np.isnan(values)))
    if not 0 <= k < counted:
        raise ValueError(f"rank {k} out of {counted} values other than NaN")
    return float(_kth(values, k))
