"""fca kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract of the flexible character accuracy's greedy line matching
(``rust/kernels/src/fca.rs``, docs/ocr-metrics.md#flexible-character-accuracy):

* ``fca_errors(gt_values, gt_offsets, ocr_values, ocr_offsets, coefficients)`` → the fewest
  errors over the coefficient combinations (``int64[n, 4]`` rows ``(edit distance, length
  difference, offset, length)``, each in ``0..=MAX_COEFFICIENT``) of the greedy matching of the
  ground-truth lines with the OCR lines (each side in the batch layout, ``uint32`` ids). Empty
  lines are no pieces. Malformed offsets or coefficients, or a side of :data:`MAX_SIDE` characters or
  more (of a page whose both sides hold characters), raise ``ValueError``.

Both backends return the same number.
"""

from __future__ import annotations

import numpy as np

from scorekit import _kernels

#: The largest coefficient the kernels accept (penalties stay far inside ``int64``).
MAX_COEFFICIENT = 1_000_000
#: A side (of a page whose both sides hold characters) must have fewer characters than this: the
#: kernels number positions in 32 bits.
MAX_SIDE = (1 << 32) - 1


def fca_errors(gt_values: np.ndarray, gt_offsets: np.ndarray, ocr_values: np.ndarray, ocr_offsets: np.ndarray,
               coefficients: np.ndarray) -> int:
    """The fewest errors of the greedy line matching over ``coefficients`` (see the module)."""
    return _kernels.implementation("fca").fca_errors(
        np.ascontiguousarray(gt_values, dtype=np.uint32), np.ascontiguousarray(gt_offsets, dtype=np.int64),
        np.ascontiguousarray(ocr_values, dtype=np.uint32), np.ascontiguousarray(ocr_offsets, dtype=np.int64),
        np.ascontiguousarray(coefficients, dtype=np.int64))
