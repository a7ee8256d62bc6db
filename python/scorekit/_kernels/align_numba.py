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


# --------------------------------------------------------------------------- validation

def _array(x, dtype, name):
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a contiguous 1-D array")
    if arr.dtype != dtype:
        raise TypeError(f"{name} must be a {np.dtype(dtype).name} array, got {arr.dtype}")
    return np.ascontiguousarray(arr)


def _steps(side, tools, mass, arg_offsets, arg_names, arg_values, arg_weights):
    tools = _array(tools, np.uint32, f"{side}_tools")
    mass = _array(mass, np.float64, f"{side}_mass")
    arg_offsets = _array(arg_offsets, np.int64, f"{side}_arg_offsets")
    arg_names = _array(arg_names, np.uint32, f"{side}_arg_names")
    arg_values = _array(arg_values, np.uint32, f"{side}_arg_values")
    arg_weights = _array(arg_weights, np.float64, f"{side}_arg_weights")
    n = len(tools)
    if len(mass) != n:
        raise ValueError(f"{side}_mass must have one value per step ({n}), got {len(mass)}")
    if len(arg_offsets) != n + 1:
        raise ValueError(f"{side}_arg_offsets must have n_steps + 1 = {n + 1} entries, got {len(arg_offsets)}")
    n_args = len(arg_names)
    if len(arg_values) != n_args or len(arg_weights) != n_args:
        raise ValueError(f"{side}_arg_names, {side}_arg_values and {side}_arg_weights must have equal lengths")
    if arg_offsets[0] != 0 or arg_offsets[n] != n_args:
        raise ValueError(f"{side}_arg_offsets must start at 0 and end at the number of arguments ({n_args})")
    if np.any(np.diff(arg_offsets) < 0):
        raise ValueError(f"{side}_arg_offsets must be non-decreasing")
    if n_args > 1:
        step_of_arg = np.repeat(np.arange(n), np.diff(arg_offsets))
        same_step = step_of_arg[1:] == step_of_arg[:-1]
        if np.any(same_step & (arg_names[1:] <= arg_names[:-1])):
            raise ValueError(f"{side}_arg_names must be strictly increasing within a step")
    return tools, mass, arg_offsets, arg_names, arg_values, arg_weights


def _seq_offsets(offsets, n_steps, name):
    offsets = _array(offsets, np.int64, name)
    if len(offsets) == 0:
        raise ValueError(f"{name} must have n_pairs + 1 entries, got 0")
    if offsets[0] != 0 or offsets[-1] != n_steps:
        raise ValueError(f"{name} must start at 0 and end at the number of steps ({n_steps})")
    if np.any(np.diff(offsets) < 0):
        raise ValueError(f"{name} must be non-decreasing")
    return offsets


# --------------------------------------------------------------------------- compiled loops

@njit(cache=True, inline="always")
def _call_sub(i, j, at, am, ao, an, av, aw, bt, bm, bo, bn, bv, bw):
    if at[i] != bt[j]:
        return am[i] + bm[j]
    p, p_end = ao[i], ao[i + 1]
    g, g_end = bo[j], bo[j + 1]
    cost = 0.0
    while p < p_end or g < g_end:
        if g == g_end or (p < p_end and an[p] < bn[g]):
            cost += aw[p]
            p += 1
        elif p == p_end or bn[g] < an[p]:
            cost += bw[g]
            g += 1
        else:
            if av[p] != bv[g]:
                cost += bw[g]
            p += 1
            g += 1
    return cost


@njit(cache=True)
def _calls_distance(a_lo, a_hi, b_lo, b_hi, at, am, ao, an, av, aw, bt, bm, bo, bn, bv, bw, row):
    m = b_hi - b_lo
    row[0] = 0.0
    for j in range(m):
        row[j + 1] = row[j] + bm[b_lo + j]
    for i in range(a_lo, a_hi):
        d = am[i]
        diag = row[0]
        row[0] = diag + d
        for j in range(m):
            up = row[j + 1]
            best = diag + _call_sub(i, b_lo + j, at, am, ao, an, av, aw, bt, bm, bo, bn, bv, bw)
            via_up = up + d
            if via_up < best:
                best = via_up
            via_left = row[j] + bm[b_lo + j]
            if via_left < best:
                best = via_left
            diag = up
            row[j + 1] = best
    return row[m]


@njit(cache=True, parallel=True)
def _calls_distance_batch(at, am, ao, an, av, aw, a_seq, bt, bm, bo, bn, bv, bw, b_seq):
    n_pairs = len(a_seq) - 1
    out = np.empty(n_pairs, dtype=np.float64)
    for k in prange(n_pairs):
        row = np.empty(b_seq[k + 1] - b_seq[k] + 1, dtype=np.float64)
        out[k] = _calls_distance(a_seq[k], a_seq[k + 1], b_seq[k], b_seq[k + 1],
                                 at, am, ao, an, av, aw, bt, bm, bo, bn, bv, bw, row)
    return out


@njit(cache=True)
def _traceback(dp, n, m, sub, dl, ins):
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
    return dp[n, m], _traceback(dp, n, m, sub, dl, ins)


@njit(cache=True)
def _table_sub(a, b, table):
    sub = np.empty((len(a), len(b)), dtype=np.float64)
    for i in range(len(a)):
        for j in range(len(b)):
            sub[i, j] = table[a[i], b[j]]
    return sub


@njit(cache=True)
def _calls_sub(at, am, ao, an, av, aw, bt, bm, bo, bn, bv, bw):
    sub = np.empty((len(at), len(bt)), dtype=np.float64)
    for i in range(len(at)):
        for j in range(len(bt)):
            sub[i, j] = _call_sub(i, j, at, am, ao, an, av, aw, bt, bm, bo, bn, bv, bw)
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


def nw_calls_align(a_tools, a_mass, a_arg_offsets, a_arg_names, a_arg_values, a_arg_weights,
                   b_tools, b_mass, b_arg_offsets, b_arg_names, b_arg_values, b_arg_weights):
    """Twin of ``_core.nw_calls_align``: ``(distance, int64[k, 3] ops)``."""
    a = _steps("a", a_tools, a_mass, a_arg_offsets, a_arg_names, a_arg_values, a_arg_weights)
    b = _steps("b", b_tools, b_mass, b_arg_offsets, b_arg_names, b_arg_values, b_arg_weights)
    sub = _calls_sub(*a, *b)
    return _align_full(sub, a[1], b[1])


def nw_calls_distance_batch(a_tools, a_mass, a_arg_offsets, a_arg_names, a_arg_values, a_arg_weights,
                            a_seq_offsets,
                            b_tools, b_mass, b_arg_offsets, b_arg_names, b_arg_values, b_arg_weights,
                            b_seq_offsets, threads=0):
    """Twin of ``_core.nw_calls_distance_batch``: ``float64[n_pairs]``."""
    a = _steps("a", a_tools, a_mass, a_arg_offsets, a_arg_names, a_arg_values, a_arg_weights)
    b = _steps("b", b_tools, b_mass, b_arg_offsets, b_arg_names, b_arg_values, b_arg_weights)
    a_seq = _seq_offsets(a_seq_offsets, len(a[0]), "a_seq_offsets")
    b_seq = _seq_offsets(b_seq_offsets, len(b[0]), "b_seq_offsets")
    if len(a_seq) != len(b_seq):
        raise ValueError(
            "a_seq_offsets and b_seq_offsets must describe the same number of pairs "
            f"({len(a_seq) - 1} vs {len(b_seq) - 1})")
    previous = numba.get_num_threads()
    if threads:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        return _calls_distance_batch(*a, a_seq, *b, b_seq)
    finally:
        numba.set_num_threads(previous)
