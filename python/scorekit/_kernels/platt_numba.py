"""Numba twin of the ``platt`` kernel: same signature and results as ``scorekit._core.platt_fit``.

The same operations in the same order as ``rust/kernels/src/platt.rs`` (see
:mod:`scorekit._kernels.platt`): the terms of each block of 128 rows in 8 lanes, the blocks'
totals added with their rounding errors carried (TwoSum), ``exp`` the platform's.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_RIDGE = 1e-10
_WEIGHT_FLOOR = 1e-12
_SINGULAR = 1e-18
_STEP_TOL = 1e-9
_BLOCK = 128


@njit(cache=True)
def _two_sum(hi, lo, v):
    t = hi + v
    b = t - hi
    return t, lo + ((hi - (t - b)) + (v - b))


@njit(cache=True)
def _value(hi, lo):
    return hi + lo if math.isfinite(hi) else hi


@njit(cache=True)
def _lanes_total(lanes):
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))


@njit(cache=True)
def _target_sums(x, c, mu):
    n = n_pos = 0
    total = np.zeros(2)
    correct = np.zeros(2)
    for lo in range(0, x.size, _BLOCK):
        every = np.zeros(8)
        pos = np.zeros(8)
        for i in range(lo, min(lo + _BLOCK, x.size)):
            v = x[i]
            if math.isfinite(v):
                lane = (i - lo) & 7
                every[lane] += v - mu
                n += 1
                if c[i]:
                    pos[lane] += v - mu
                    n_pos += 1
        total[0], total[1] = _two_sum(total[0], total[1], _lanes_total(every))
        correct[0], correct[1] = _two_sum(correct[0], correct[1], _lanes_total(pos))
    return n, n_pos, _value(total[0], total[1]), _value(correct[0], correct[1])


@njit(cache=True)
def _pass(x, mu, a, bc):
    sums = np.zeros((5, 2))
    lanes = np.empty((5, 8))
    for lo in range(0, x.size, _BLOCK):
        lanes[:] = 0.0
        for i in range(lo, min(lo + _BLOCK, x.size)):
            v = x[i]
            if not math.isfinite(v):
                continue  # a row left out adds 0 to every lane
            xc = v - mu
            p = 1.0 / (math.exp(xc * -a - bc) + 1.0)
            w = p - p * p
            if w < _WEIGHT_FLOOR:
                w = _WEIGHT_FLOOR  # NaN stays NaN
            wx = w * xc
            lane = (i - lo) & 7
            lanes[0, lane] += p * xc
            lanes[1, lane] += p
            lanes[2, lane] += wx * xc
            lanes[3, lane] += wx
            lanes[4, lane] += w
        for k in range(5):
            sums[k, 0], sums[k, 1] = _two_sum(sums[k, 0], sums[k, 1], _lanes_total(lanes[k]))
    return [_value(sums[k, 0], sums[k, 1]) for k in range(5)]


@njit(cache=True)
def _fit(x, c, max_iter):
    n, n_pos, total, _ = _target_sums(x, c, 0.0)
    n_neg = n - n_pos
    b = math.log((n_pos + 1) / (n_neg + 1)) if n_neg > 0 else 0.0
    if n == 0 or max_iter == 0:
        return 0.0, b, n, n_pos
    mu = total / n
    if not math.isfinite(mu):
        lo, hi = math.inf, -math.inf
        for v in x:
            if math.isfinite(v):
                lo, hi = min(lo, v), max(hi, v)
        mu = lo / 2.0 + hi / 2.0
    t_pos, t_neg = (n_pos + 1) / (n_pos + 2), 1.0 / (n_neg + 2)
    _, _, total, correct_sum = _target_sums(x, c, mu)
    tx = t_pos * correct_sum + t_neg * (total - correct_sum)
    ts = t_pos * n_pos + t_neg * (n - n_pos)
    r00, r01, r11 = _RIDGE * (1.0 + mu * mu), -_RIDGE * mu, _RIDGE
    a, bc = 0.0, b
    for _ in range(max_iter):
        px, ps, h00, h01, h11 = _pass(x, mu, a, bc)
        g0, g1 = px - tx, ps - ts
        h00, h01, h11 = h00 + r00, h01 + r01, h11 + r11
        det = h00 * h11 - h01 * h01
        if abs(det) < _SINGULAR:
            break
        da = (h11 * g0 - h01 * g1) / det
        dbc = (h00 * g1 - h01 * g0) / det
        a -= da
        bc -= dbc
        if abs(da) < _STEP_TOL and abs(dbc - mu * da) < _STEP_TOL:
            break
    return a, bc - a * mu, n, n_pos


def platt_fit(scores: np.ndarray, correct: np.ndarray, max_iter: int) -> tuple[float, float, int, int]:
    for array, name in ((scores, "scores"), (correct, "correct")):
        if array.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array")
    if scores.size != correct.size:
        raise ValueError(f"{scores.size} scores but {correct.size} correct flags")
    if max_iter < 0:
        raise OverflowError(f"max_iter must be >= 0, got {max_iter}")
    a, b, n, n_pos = _fit(scores, correct, max_iter)
    return float(a), float(b), int(n), int(n_pos)
