"""Needleman–Wunsch kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract for global alignment with a substitution cost and per-element gap costs
(``rust/kernels/src/align/mod.rs``): ``D[i][j] = min(D[i-1][j-1] + sub(i-1, j-1),
D[i-1][j] + del[i-1], D[i][j-1] + ins[j-1])``, first of equal candidates kept, every addition in
that order (bit-identical to the plain dynamic program, docs/decisions.md#trajectory-cost-model). Alignments are
``int64[k, 3]`` rows ``(op, i, j)`` left to right, op in {0 aligned pair, 1 deletion of ``a[i]``,
2 insertion of ``b[j]``} with -1 for the absent side; the traceback prefers the diagonal, then a
deletion, then an insertion. It does not read tool calls or canonicalise values (that is
``scorekit.agents.trajectory``).

Two cost models:

* **table** — ``a``/``b`` are ``uint32`` symbols, ``table`` a ``float64[K_a, K_b]`` substitution
  table, ``del_``/``ins`` the gap cost of every element.
* **calls** (trajectories) — one *call table* of the distinct calls of a batch: ``tools``
  (``uint32`` tool id per call), ``mass`` (``float64`` gap cost per call), ``arg_offsets``
  (``int64``, ``n_calls + 1``; call ``k`` owns arguments ``arg_offsets[k]:arg_offsets[k+1]``),
  ``arg_names`` (``uint32``, strictly increasing within a call), ``arg_values`` (``uint32``; equal
  ids ⇔ equal values) and ``arg_weights`` (``float64``). Trajectories are sequences of call ids
  into that table. Equal ids cost 0; different tools cost ``mass_a + mass_b``; the same tool costs
  the sum, in name-id order, of the weights of the argument names (union of both sides) whose
  values differ or are missing on one side. Batches pack each side's call ids with ``int64``
  offsets (``n_pairs + 1``): pair ``k`` is ``a_calls[a_offsets[k]:a_offsets[k+1]]`` against
  ``b_calls[b_offsets[k]:b_offsets[k+1]]``.
"""

from __future__ import annotations

import numpy as np

from scorekit import _kernels

#: Operation codes of alignment rows.
OP_MATCH, OP_DELETE, OP_INSERT = 0, 1, 2


def _impl():
    return _kernels.implementation("align")


def table_align(a, b, table, del_, ins) -> tuple[float, np.ndarray]:
    """Distance and alignment of symbol sequences under a substitution table and gap costs."""
    return _impl().nw_table_align(a, b, table, del_, ins)


def calls_align(table, a_calls, b_calls) -> tuple[float, np.ndarray]:
    """Distance and alignment of two trajectories (call ids into ``table``, a 6-tuple of arrays)."""
    return _impl().nw_calls_align(*table, a_calls, b_calls)


def calls_distance_batch(table, a_calls, a_offsets, b_calls, b_offsets, threads: int = 0) -> np.ndarray:
    """Trajectory distance of every pair of a packed batch; ``float64[n_pairs]``.
    ``threads``: 0 = all cores; the result does not depend on it."""
    return _impl().nw_calls_distance_batch(*table, a_calls, a_offsets, b_calls, b_offsets, threads)
