"""Isotonic kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract of the isotonic fit (``rust/kernels/src/isotonic.rs``): given finite
``float64`` scores and ``bool`` outcomes of equal length, the distinct scores ascending (``-0.0``
counted as ``0.0``) and, for each, the accuracy of its pool-adjacent-violators block (adjacent
blocks pool while the left one's accuracy is ``>=`` the right one's, compared exactly), divided
once as ``hits / rows``. Both backends return identical arrays.
"""

from __future__ import annotations

import numpy as np

from scorekit import _kernels


def isotonic_fit(scores: np.ndarray, correct: np.ndarray, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct scores, levels)`` of the isotonic fit of ``correct`` on ``scores``; ``threads``
    as for the batch kernels (``None``: every core; the fit uses two at most)."""
    return _kernels.implementation("isotonic").isotonic_fit(
        np.ascontiguousarray(scores, dtype=np.float64), np.ascontiguousarray(correct, dtype=np.bool_),
        _kernels.resolve_threads(threads))
