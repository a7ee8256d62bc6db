"""Numba twin of the ``bootstrap`` kernel: same signatures and results as
``scorekit._core.bootstrap_means``, ``bootstrap_ratios`` and ``float_sum``.

CPython's MT19937 (the twist, the tempering), ``randrange`` by rejection on the top
``n.bit_length()`` bits, and the two summations (plain, and CPython 3.12's Neumaier) are those of
``rust/kernels/src/bootstrap/mod.rs``; see ``scorekit._kernels.bootstrap`` for the contract. The
Rust kernel sums eight resamples side by side, this twin one at a time: each resample's own order
of additions is the same, so are the results. Validation happens here in Python, with the Rust
messages.
"""

from __future__ import annotations

import math
import operator

import numpy as np
from numba import njit

STATE_WORDS = 624
_SHIFT_M = 397
_MATRIX_A = 0x9908B0DF
_UPPER_MASK = 0x80000000
_LOWER_MASK = 0x7FFFFFFF


@njit(cache=True)
def _twist(mt):
    # In place, in CPython's order: each word mixes words not yet rewritten with ones already final.
    for k in range(STATE_WORDS):
        nxt = k + 1 if k + 1 < STATE_WORDS else 0
        far = k + _SHIFT_M if k + _SHIFT_M < STATE_WORDS else k + _SHIFT_M - STATE_WORDS
        y = (np.int64(mt[k]) & _UPPER_MASK) | (np.int64(mt[nxt]) & _LOWER_MASK)
        word = np.int64(mt[far]) ^ (y >> 1)
        if y & 1:
            word ^= _MATRIX_A
        mt[k] = np.uint32(word)


@njit(cache=True)
def _temper(word):
    y = np.int64(word)
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    return y ^ (y >> 18)


@njit(cache=True)
def _resample(rows, mt, pos, resamples, compensated, ratio):
    n = rows.shape[0]
    width = rows.shape[1]
    shift = 32
    while n >> (32 - shift):  # shift = 32 - n.bit_length()
        shift -= 1
    stats = np.empty(resamples)
    sums = np.empty(width)
    corrections = np.empty(width)
    for r in range(resamples):
        sums[:] = 0.0
        corrections[:] = 0.0
        for _ in range(n):
            while True:
                if pos >= STATE_WORDS:
                    _twist(mt)
                    pos = 0
                i = _temper(mt[pos]) >> shift
                pos += 1
                if i < n:
                    break
            for w in range(width):
                x = rows[i, w]
                s = sums[w]
                t = s + x
                if compensated:
                    if abs(s) >= abs(x):
                        corrections[w] += (s - t) + x
                    else:
                        corrections[w] += (x - t) + s
                sums[w] = t
        if compensated:
            for w in range(width):
                c = corrections[w]
                if c != 0.0 and math.isfinite(c):
                    sums[w] += c
        if ratio:
            stats[r] = math.inf if sums[1] <= 0.0 else sums[0] / sums[1]
        else:
            stats[r] = sums[0] / n
    return stats


@njit(cache=True)
def _sum(values, compensated):
    total = 0.0
    correction = 0.0
    for x in values:
        t = total + x
        if compensated:
            if abs(total) >= abs(x):
                correction += (total - t) + x
            else:
                correction += (x - t) + total
        total = t
    if compensated and correction != 0.0 and math.isfinite(correction):
        total += correction
    return total


def _array(a, dtype, name):
    # the compiled core takes exactly 1-D arrays of this dtype (TypeError otherwise)
    if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype != dtype:
        raise TypeError(f"{name} must be a 1-D {np.dtype(dtype).name} array")
    return a


def _count(value, name):
    # as the compiled core converts a count to an unsigned integer
    value = operator.index(value)
    if value < 0:
        raise OverflowError(f"{name}: can't convert negative int to unsigned")
    return value


def _generator(state, pos):
    state = _array(state, np.uint32, "state")
    pos = _count(pos, "pos")
    if len(state) != STATE_WORDS:
        raise ValueError(f"state must hold {STATE_WORDS} words, got {len(state)}")
    if pos > STATE_WORDS:
        raise ValueError(f"pos must be in [0, {STATE_WORDS}], got {pos}")
    return state.copy(), pos


def _check_length(n):
    if n == 0:
        raise ValueError("values must not be empty")
    if n > 0xFFFFFFFF:
        raise ValueError(f"at most {0xFFFFFFFF} values can be resampled, got {n}")


def bootstrap_means(values, state, pos, resamples, compensated):
    """Twin of ``_core.bootstrap_means``: the mean of every resample, in resample order."""
    values = _array(values, np.float64, "values")
    mt, pos = _generator(state, pos)
    resamples = _count(resamples, "resamples")
    _check_length(len(values))
    return _resample(values.reshape(-1, 1), mt, pos, resamples, bool(compensated), False)


def bootstrap_ratios(costs, wins, state, pos, resamples, compensated):
    """Twin of ``_core.bootstrap_ratios``: ``sum(costs) / sum(wins)`` of every resample."""
    costs = _array(costs, np.float64, "costs")
    wins = _array(wins, np.float64, "wins")
    mt, pos = _generator(state, pos)
    resamples = _count(resamples, "resamples")
    if len(costs) != len(wins):
        raise ValueError(f"wins must have one value per cost ({len(costs)}), got {len(wins)}")
    _check_length(len(costs))
    return _resample(np.column_stack((costs, wins)), mt, pos, resamples, bool(compensated), True)


def float_sum(values, compensated):
    """Twin of ``_core.float_sum``: ``sum(values)`` as this Python adds floats."""
    return float(_sum(_array(values, np.float64, "values"), bool(compensated)))
