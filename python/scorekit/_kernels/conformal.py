"""Conformal kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract of the split-conformal fit (``rust/kernels/src/conformal.rs``):

* ``conformal_fit(probs, correct, alpha)`` → ``(q, scores, n)``: ``scores`` holds every row's
  nonconformity ``1 - p``, NaN for a row whose outcome is wrong or whose probability is not
  finite; ``n`` counts the other rows; ``q`` is the ``ceil((n + 1)(1 - alpha))``-th smallest of
  their scores (``inf`` when that rank is above ``n``, ``-inf`` below 1). A finite probability
  outside ``[0, 1]`` raises ``ValueError(row, value)`` for the first such row.
* ``kth_smallest(values, k)``: the ``k``-th smallest (0-based) of the values other than NaN.

Zeros come back as ``0.0``. Both backends return identical values and arrays.
"""

from __future__ import annotations

import numpy as np

from scorekit import _kernels


def conformal_fit(probs: np.ndarray, correct: np.ndarray, alpha: float,
                  threads: int | None = None) -> tuple[float, np.ndarray, int]:
    """``(q, scores, n)`` of the split-conformal fit (see the module docs); ``threads`` as for the
    batch kernels (``None``: every core; the fit uses two at most)."""
    return _kernels.implementation("conformal").conformal_fit(
        np.ascontiguousarray(probs, dtype=np.float64), np.ascontiguousarray(correct, dtype=np.bool_),
        float(alpha), _kernels.resolve_threads(threads))


def kth_smallest(values: np.ndarray, k: int) -> float:
    """The ``k``-th smallest (0-based) of ``values`` other than NaN, found by selection in O(n)."""
    if k < 0:
        raise ValueError(f"rank {k} is negative")
    return _kernels.implementation("conformal").kth_smallest(np.ascontiguousarray(values, dtype=np.float64), k)
