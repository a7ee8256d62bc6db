"""Tree kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract of the Zhang–Shasha ordered tree edit distance (``rust/kernels/src/tree``).
It does not parse trees, intern labels or build cost tables (that is ``scorekit.trees``).

Layout: each side packs its trees in post-order, ``labels`` (``uint32`` label ids), ``lld``
(``uint32``, the post-order index of each node's leftmost leaf descendant, relative to its own tree)
and ``offsets`` (``int64``, ``n_pairs + 1`` node offsets). Costs (``float64``, finite, >= 0):

* ``delete_costs`` / ``insert_costs``: one entry per packed node of the first / second side, or an
  empty array for unit cost;
* ``rename_mode``: :data:`RENAME_UNIT` (0/1 on label equality), :data:`RENAME_TABLE`
  (``rename_table[a * n_labels + b]``) or :data:`RENAME_TEXT` (``label_mismatch`` when labels differ,
  else ``lev(text_a, text_b) / max(len)``, 0 for equal texts); texts are ``uint32`` code points with
  absolute per-node offsets (total nodes + 1) on each side.

Both backends validate the same way (``ValueError``) and return bit-identical distances and mappings.
"""

from __future__ import annotations

import numpy as np

from scorekit import _kernels

RENAME_UNIT, RENAME_TABLE, RENAME_TEXT = 0, 1, 2


def _impl():
    return _kernels.implementation("tree")


def _u32(a) -> np.ndarray:
    return np.ascontiguousarray(np.zeros(0, np.uint32) if a is None else a, dtype=np.uint32)


def _i64(a) -> np.ndarray:
    return np.ascontiguousarray(np.zeros(0, np.int64) if a is None else a, dtype=np.int64)


def _f64(a) -> np.ndarray:
    return np.ascontiguousarray(np.zeros(0, np.float64) if a is None else a, dtype=np.float64)


def distance_batch(
    labels1, lld1, offsets1, labels2, lld2, offsets2, *,
    delete_costs=None, insert_costs=None, rename_mode: int = RENAME_UNIT, rename_table=None, n_labels: int = 0,
    text1_values=None, text1_offsets=None, text2_values=None, text2_offsets=None, label_mismatch: float = 1.0,
    threads: int = 0,
) -> np.ndarray:
    """Tree edit distance of every packed pair; ``float64[n_pairs]``."""
    return _impl().tree_distance_batch(
        _u32(labels1), _u32(lld1), _i64(offsets1), _u32(labels2), _u32(lld2), _i64(offsets2),
        _f64(delete_costs), _f64(insert_costs), int(rename_mode), _f64(rename_table), int(n_labels),
        _u32(text1_values), _i64(text1_offsets), _u32(text2_values), _i64(text2_offsets),
        float(label_mismatch), _kernels.resolve_threads(threads),
    )


def mapping(
    labels1, lld1, labels2, lld2, *,
    delete_costs=None, insert_costs=None, rename_mode: int = RENAME_UNIT, rename_table=None, n_labels: int = 0,
    text1_values=None, text1_offsets=None, text2_values=None, text2_offsets=None, label_mismatch: float = 1.0,
) -> tuple[float, np.ndarray]:
    """Distance and one optimal edit mapping of one pair: ``(float, int64[k, 2])`` rows ``(a, b)`` of
    post-order indices, ``-1`` for no partner (a deletion or an insertion)."""
    distance, pairs = _impl().tree_mapping(
        _u32(labels1), _u32(lld1), _u32(labels2), _u32(lld2),
        _f64(delete_costs), _f64(insert_costs), int(rename_mode), _f64(rename_table), int(n_labels),
        _u32(text1_values), _i64(text1_offsets), _u32(text2_values), _i64(text2_offsets),
        float(label_mismatch),
    )
    return float(distance), np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
