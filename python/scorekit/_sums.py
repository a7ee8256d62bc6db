"""Float sums in the order NumPy adds them, for the small-input paths that must give the bits of
the NumPy path they short-cut without NumPy's fixed cost per call (issue #31, item 7).

NumPy's ``np.add.reduce`` of a contiguous float64 array adds fewer than 8 values left to right,
and up to 128 in 8 interleaved partial sums (lane ``j`` takes values ``j, j + 8, ...``), combined
as ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))``, then the last ``n % 8`` values left to
right; all onto its identity ``0.0`` (so a sum of ``-0.0`` values is ``0.0``). Longer arrays are
split in halves, which :func:`numpy_sum` does not do.
"""

from __future__ import annotations

#: NumPy adds fewer values than this left to right, so a Python loop gives the same bits.
NUMPY_SEQUENTIAL_BELOW = 8
#: The most values :func:`numpy_sum` adds as NumPy does (NumPy's pairwise block).
NUMPY_BLOCK = 128


def numpy_sum(values: list[float]) -> float:
    """``float(np.add.reduce(np.array(values)))`` for at most :data:`NUMPY_BLOCK` floats, in Python,
    the same bits."""
    n = len(values)
    if n < NUMPY_SEQUENTIAL_BELOW:
        total = 0.0
        for v in values:
            total += v
        return total
    lanes = values[:8]
    end = n - n % 8
    for i in range(8, end, 8):
        for lane in range(8):
            lanes[lane] += values[i + lane]
    total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
    for v in values[end:]:
        total += v
    return 0.0 + total
