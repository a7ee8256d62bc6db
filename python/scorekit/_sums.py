"""The order in which NumPy adds a few floats, for the small-input paths that must give the bits
of the NumPy path they short-cut without NumPy's fixed cost per call (issue #31, item 7).

NumPy's ``np.add.reduce`` of a contiguous float64 array adds fewer than 8 values left to right
onto its identity ``0.0``, so a Python loop adding them in order gives the same bits (the
temperature fit's small path relies on it); longer arrays are added in 8 interleaved partial sums
and pairwise blocks.
"""

from __future__ import annotations

#: NumPy adds fewer values than this left to right, so a Python loop gives the same bits.
NUMPY_SEQUENTIAL_BELOW = 8
