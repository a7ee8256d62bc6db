"""Numba twin of the ``align`` kernels (Needleman–Wunsch): same signatures and results as
``scorekit._core.nw_table_align`` / ``nw_calls_align`` / ``nw_calls_distance_batch``.

The recurrence, the order of every floating-point addition, ``min``'s preference for the first
of equal candidates and the traceback preference (diagonal, then deletion, then insertion) are
those of ``rust/kernels/src/align/mod.rs``; see ``scorekit._kernels.align`` for the contract.
Validation happens here in Python, before the compiled loops, with the Rust messages.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

OP_MATCH, OP_DELETE, OP_INSERT = 0, 1, 2
#: Batches smaller than this run serially (a parallel launch costs more than it saves).
SERIAL_BELOW = 32


# --------------------------------------------------------------------------- validation

def _array(x, dtype, name):
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a contiguous 1-D array")
    if arr.dtype != dtype:
        raise TypeError(f"{name} must be a {np.dtype(dtype).name} array, got {arr.dtype}")
    return np.ascontiguousarray(arr)


def _table(tools, mass, arg_offsets, arg_names, arg_values, arg_weights):
    tools = _array(tools, np.uint32, "tools")
    mass = _array(mass, np.float64, "mass")
    arg_offsets = _array(arg_offsets, np.int64, "arg_offsets")
    arg_names = _array(arg_names, np.uint32, "arg_names")
    arg_values = _array(arg_values, np.uint32, "arg_values")
    arg_weights = _array(arg_weights, np.float64, "arg_weights")
    n = len(tools)
    if len(mass) != n:
        raise ValueError(f"mass must have one value per call ({n}), got {len(mass)}")
    if len(arg_offsets) != n + 1:
        raise ValueError(f"arg_offsets must have n_calls + 1 = {n + 1} entries, got {len(arg_offsets)}")
    n_args = len(arg_names)
    if len(arg_values) != n_args or len(arg_weights) != n_args:
        raise ValueError("arg_names, arg_values and arg_weights must have equal lengths")
    if arg_offsets[0] != 0 or arg_offsets[n] != n_args:
        raise ValueError(f"arg_offsets must start at 0 and end at the number of arguments ({n_args})")
    defect, k = _table_defect(arg_offsets, arg_names)
    if defect == 1:
        raise ValueError(f"arg_offsets must be non-decreasing (call {k})")
    if defect == 2:
        raise ValueError(f"arg_names must be strictly increasing within a call (call {k})")
    return tools, mass, arg_offsets, arg_names, arg_values, arg_weights


def _ids(calls, n_calls, name):
    calls = _array(calls, np.uint32, name)
    if len(calls) and calls.max() >= n_calls:
        raise ValueError(f"{name} holds call id {calls.max()}, but the call table has {n_calls} calls")
    return calls


def _seq_offsets(offsets, n_steps, name):
    offsets = _array(offsets, np.int64, name)
    if len(offsets) == 0:
        raise ValueError(f"{name} must have n_pairs + 1 entries, got 0")
    if offsets[0] != 0 or offsets[-1] != n_steps:
        raise ValueError(f"{name} must start at 0 and end at the number of steps ({n_steps})")
    if _first_decrease(offsets) >= 0:
        raise ValueError(f"{name} must be non-decreasing")
    return offsets


# --------------------------------------------------------------------------- compiled loops

@njit(cache=True)
def _table_defect(arg_offsets, arg_names):
    """``(0, -1)`` for a valid layout, ``(1, k)`` if ``arg_offsets`` decreases at call ``k``, ``(2, k)``
    if call ``k``'s names are not strictly increasing (checked only where ``arg_names`` reaches)."""
    for k in range(len(arg_offsets) - 1):
        lo, hi = arg_offsets[k], arg_offsets[k + 1]
        if hi < lo:
            return 1, k
        for t in range(lo + 1, min(hi, len(arg_names))):
            if arg_names[t - 1] >= arg_names[t]:
                return 2, k
    return 0, -1


@njit(cache=True)
def _first_decrease(offsets):
    """The first ``k`` with ``offsets[k + 1] < offsets[k]``, or -1."""
    for k in range(len(offsets) - 1):
        if offsets[k + 1] < offsets[k]:
            return k
    return -1


@njit(cache=True, inline="always")
def _call_sub(p, g, tools, mass, ao, an, av, aw):
    if p == g:
        return 0.0
    if tools[p] != tools[g]:
        return mass[p] + mass[g]
    i, i_end = ao[p], ao[p + 1]
    j, j_end = ao[g], ao[g + 1]
    cost = 0.0
    while i < i_end or j < j_end:
        if j == j_end or (i < i_end and an[i] < an[j]):
            cost += aw[i]
            i += 1
        elif i == i_end or an[j] < an[i]:
            cost += aw[j]
            j += 1
        else:
            if av[i] != av[j]:
                cost += aw[j]
            i += 1
            j += 1
    return cost


@njit(cache=True)
def _calls_distance(a, b, tools, mass, ao, an, av, aw, row):
    m = len(b)
    row[0] = 0.0
    for j in range(m):
        row[j + 1] = row[j] + mass[b[j]]
    for i in range(len(a)):
        d = mass[a[i]]
        diag = row[0]
        row[0] = diag + d
        for j in range(m):
            up = row[j + 1]
            best = diag + _call_sub(a[i], b[j], tools, mass, ao, an, av, aw)
            via_up = up + d
            if via_up < best:
                best = via_up
            via_left = row[j] + mass[b[j]]
            if via_left < best:
                best = via_left
            diag = up
            row[j + 1] = best
    return row[m]


@njit(cache=True, parallel=True)
def _calls_distance_batch(tools, mass, ao, an, av, aw, a_calls, a_off, b_calls, b_off):
    n_pairs = len(a_off) - 1
    out = np.empty(n_pairs, dtype=np.float64)
    for k in prange(n_pairs):
        row = np.empty(b_off[k + 1] - b_off[k] + 1, dtype=np.float64)
        out[k] = _calls_distance(a_calls[a_off[k]:a_off[k + 1]], b_calls[b_off[k]:b_off[k + 1]],
                                 tools, mass, ao, an, av, aw, row)
    return out


@njit(cache=True)
def _calls_distance_serial(tools, mass, ao, an, av, aw, a_calls, a_off, b_calls, b_off):
    n_pairs = len(a_off) - 1
    out = np.empty(n_pairs, dtype=np.float64)
    longest = 0
    for k in range(n_pairs):
        longest = max(longest, b_off[k + 1] - b_off[k])
    row = np.empty(longest + 1, dtype=np.float64)
    for k in range(n_pairs):
        out[k] = _calls_distance(a_calls[a_off[k]:a_off[k + 1]], b_calls[b_off[k]:b_off[k + 1]],
                                 tools, mass, ao, an, av, aw, row)
    return out


@njit(cache=True)
def _traceback(dp, n, m, sub, dl):
    ops = np.empty((n + m, 3), dtype=np.int64)
    k = 0
    i, j = n, m
    while i > 0 or j > 0:
        here = dp[i, j]
        if i > 0 and j > 0 and here == dp[i - 1, j - 1] + sub[i - 1, j - 1]:
            ops[k, 0], ops[k, 1], ops[k, 2] = OP_MATCH, i - 1, j - 1
            i -= 1
            j -= 1
        elif i > 0 and (j == 0 or here == dp[i - 1, j] + dl[i - 1]):
            ops[k, 0], ops[k, 1], ops[k, 2] = OP_DELETE, i - 1, -1
            i -= 1
        else:
            ops[k, 0], ops[k, 1], ops[k, 2] = OP_INSERT, -1, j - 1
            j -= 1
        k += 1
    return ops[:k][::-1].copy()


@njit(cache=True)
def _align_full(sub, dl, ins):
    """Full-table NW over a precomputed ``sub[n, m]`` matrix (each cell computed once, exactly
    as the Rust kernel computes it)."""
    n, m = sub.shape
    dp = np.zeros((n + 1, m + 1), dtype=np.float64)
    for j in range(m):
        dp[0, j + 1] = dp[0, j] + ins[j]
    for i in range(1, n + 1):
        d = dl[i - 1]
        dp[i, 0] = dp[i - 1, 0] + d
        for j in range(1, m + 1):
            best = dp[i - 1, j - 1] + sub[i - 1, j - 1]
            via_up = dp[i - 1, j] + d
            if via_up < best:
                best = via_up
            via_left = dp[i, j - 1] + ins[j - 1]
            if via_left < best:
                best = via_left
            dp[i, j] = best
    return dp[n, m], _traceback(dp, n, m, sub, dl)


@njit(cache=True)
def _table_sub(a, b, table):
    sub = np.empty((len(a), len(b)), dtype=np.float64)
    for i in range(len(a)):
        for j in range(len(b)):
            sub[i, j] = table[a[i], b[j]]
    return sub


@njit(cache=True)
def _calls_sub(a, b, tools, mass, ao, an, av, aw):
    sub = np.empty((len(a), len(b)), dtype=np.float64)
    for i in range(len(a)):
        for j in range(len(b)):
            sub[i, j] = _call_sub(a[i], b[j], tools, mass, ao, an, av, aw)
    return sub


# --------------------------------------------------------------------------- public twins

def nw_table_align(a, b, table, del_, ins):
    """Twin of ``_core.nw_table_align``: ``(distance, int64[k, 3] ops)``."""
    a = _array(a, np.uint32, "a")
    b = _array(b, np.uint32, "b")
    del_ = _array(del_, np.float64, "del")
    ins = _array(ins, np.float64, "ins")
    table = np.asarray(table)
    if table.ndim != 2 or table.dtype != np.float64:
        raise ValueError("table must be a C-contiguous 2-D array")
    table = np.ascontiguousarray(table)
    if len(del_) != len(a):
        raise ValueError(f"del must have one cost per element of a ({len(a)}), got {len(del_)}")
    if len(ins) != len(b):
        raise ValueError(f"ins must have one cost per element of b ({len(b)}), got {len(ins)}")
    rows, cols = table.shape
    if len(a) and len(b):
        if cols == 0:
            raise ValueError("table must have at least one column")
        if a.max() >= rows:
            raise ValueError(f"a holds symbol {a.max()}, but table has only {rows} rows")
        if b.max() >= cols:
            raise ValueError(f"b holds symbol {b.max()}, but table has only {cols} columns")
    sub = _table_sub(a, b, table) if len(a) and len(b) else np.zeros((len(a), len(b)))
    return _align_full(sub, del_, ins)


def nw_calls_align(tools, mass, arg_offsets, arg_names, arg_values, arg_weights, a_calls, b_calls):
    """Twin of ``_core.nw_calls_align``: ``(distance, int64[k, 3] ops)``."""
    table = _table(tools, mass, arg_offsets, arg_names, arg_values, arg_weights)
    a = _ids(a_calls, len(table[0]), "a_calls")
    b = _ids(b_calls, len(table[0]), "b_calls")
    sub = _calls_sub(a, b, *table)
    return _align_full(sub, table[1][a], table[1][b])


def nw_calls_distance_batch(tools, mass, arg_offsets, arg_names, arg_values, arg_weights,
                            a_calls, a_offsets, b_calls, b_offsets, threads=0):
    """Twin of ``_core.nw_calls_distance_batch``: ``float64[n_pairs]``."""
    table = _table(tools, mass, arg_offsets, arg_names, arg_values, arg_weights)
    a = _ids(a_calls, len(table[0]), "a_calls")
    b = _ids(b_calls, len(table[0]), "b_calls")
    a_off = _seq_offsets(a_offsets, len(a), "a_offsets")
    b_off = _seq_offsets(b_offsets, len(b), "b_offsets")
    if len(a_off) != len(b_off):
        raise ValueError(
            "a_offsets and b_offsets must describe the same number of pairs "
            f"({len(a_off) - 1} vs {len(b_off) - 1})")
    if len(a_off) - 1 < SERIAL_BELOW:
        return _calls_distance_serial(*table, a, a_off, b, b_off)
    previous = numba.get_num_threads()
    if threads:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        return _calls_distance_batch(*table, a, a_off, b, b_off)
    finally:
        numba.set_num_threads(previous)
