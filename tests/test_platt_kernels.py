"""The Platt kernel family (``scorekit._kernels.platt``) on both backends: the two agree to the
last bit; the fit against the same Newton iteration with every sum correctly rounded
(``math.fsum``; ``tests/test_qe_calibrate.py`` compares the fit with the reference kit); rows
without a finite score left out; strided arrays; the list-reading entry; bad input."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from scorekit._kernels import _core, platt, use_backend
from scorekit._kernels import platt_numba as twin

FITS = [_core.platt_fit, twin.platt_fit]
IDS = ["rust", "numba"]


def rows(rnd: random.Random, n: int, *, extremes: bool = True) -> tuple[np.ndarray, np.ndarray]:
    scale, offset = 10 ** rnd.uniform(-2, 2), rnd.choice([0.0, 0.0, -50.0, 1e3])
    x = [offset + scale * rnd.gauss(0, 1) for _ in range(n)]
    if extremes and n:
        for _ in range(rnd.choice([0, 0, 1, 3])):
            x[rnd.randrange(n)] = rnd.choice([math.nan, math.inf, -math.inf, 0.0, -0.0])
    flip = rnd.random()
    return np.array(x, dtype=np.float64), np.array([rnd.random() < flip for _ in range(n)], dtype=bool)


def fsum_fit(x: np.ndarray, c: np.ndarray, max_iter: int) -> tuple[float, float]:
    """The kernel's iteration (centred scores, the ridge mapped to those coordinates) with every
    sum correctly rounded by ``math.fsum``: what the kernel's compensated sums approximate."""
    keep = np.isfinite(x)
    xs, cs = x[keep].tolist(), c[keep].tolist()
    n, n_pos = len(xs), sum(cs)
    n_neg = n - n_pos
    b = math.log((n_pos + 1) / (n_neg + 1)) if n_neg > 0 else 0.0
    if n == 0 or max_iter == 0:
        return 0.0, b
    mu = math.fsum(xs) / n
    t_pos, t_neg = (n_pos + 1) / (n_pos + 2), 1.0 / (n_neg + 2)
    xc = [v - mu for v in xs]
    total, correct = math.fsum(xc), math.fsum(v for v, k in zip(xc, cs) if k)
    tx, ts = t_pos * correct + t_neg * (total - correct), t_pos * n_pos + t_neg * n_neg
    a, bc = 0.0, b
    for _ in range(max_iter):
        p = [1.0 / (math.exp(v * -a - bc) + 1.0) for v in xc]
        w = [max(q - q * q, 1e-12) for q in p]
        h00 = math.fsum(u * v * v for u, v in zip(w, xc)) + 1e-10 * (1.0 + mu * mu)
        h01 = math.fsum(u * v for u, v in zip(w, xc)) - 1e-10 * mu
        h11 = math.fsum(w) + 1e-10
        g0, g1 = math.fsum(q * v for q, v in zip(p, xc)) - tx, math.fsum(p) - ts
        det = h00 * h11 - h01 * h01
        if abs(det) < 1e-18:
            break
        da, dbc = (h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det
        a, bc = a - da, bc - dbc
        if abs(da) < 1e-9 and abs(dbc - mu * da) < 1e-9:
            break
    return a, bc - a * mu


def close(x: float, y: float, rel: float, scale: float) -> bool:
    """``x`` and ``y`` within ``rel`` of the larger of them and of ``scale``, the size the value
    has in the problem (a slope of 0 comes out as 0 within the rounding of the sums)."""
    return x == y or abs(x - y) <= rel * max(abs(x), abs(y), scale)


def test_backends_agree_to_the_last_bit():
    rnd = random.Random(1)
    for n in [0, 1, 2, 7, 8, 9, 127, 128, 129, 300, 2000]:
        for _ in range(20 if n < 1000 else 3):
            x, c = rows(rnd, n)
            max_iter = rnd.choice([100, 100, 5, 1, 0])
            ours, twins = _core.platt_fit(x, c, max_iter), twin.platt_fit(x, c, max_iter)
            assert [repr(v) for v in ours] == [repr(v) for v in twins], (n, ours, twins)


@pytest.mark.parametrize("fit", FITS, ids=IDS)
def test_against_correctly_rounded_sums(fit):
    rnd = random.Random(2)
    for n in [1, 2, 3, 5, 8, 20, 129, 1000]:
        for _ in range(15 if n < 500 else 3):
            x, c = rows(rnd, n)
            a, b, kept, positive = fit(x, c, 100)
            keep = np.isfinite(x)
            assert (kept, positive) == (int(keep.sum()), int(c[keep].sum()))
            want_a, want_b = fsum_fit(x, c, 100)
            finite = x[keep]
            spread = float(np.ptp(finite)) if finite.size else 0.0
            slope_scale = 1.0 / spread if spread else 1.0
            intercept_scale = 1.0 + slope_scale * float(np.max(np.abs(finite), initial=0.0))
            assert close(a, want_a, 1e-12, slope_scale) and close(b, want_b, 1e-12, intercept_scale), (
                x, c, (a, b), (want_a, want_b))


@pytest.mark.parametrize("fit", FITS, ids=IDS)
def test_edges(fit):
    assert fit(np.zeros(0), np.zeros(0, dtype=bool), 100) == (0.0, 0.0, 0, 0)
    assert fit(np.array([0.2, 0.7, 0.9]), np.array([False, True, True]), 0) == (0.0, math.log(3 / 2), 3, 2)
    assert fit(np.array([math.nan, math.inf]), np.array([True, False]), 100) == (0.0, 0.0, 0, 0)
    a, b, _, _ = fit(np.array([1e300, -1e300, 1e300]), np.array([True, False, False]), 100)
    assert not (math.isfinite(a) and math.isfinite(b))  # the caller names the overflow
    x, c = rows(random.Random(3), 40, extremes=False)
    assert fit(x[::2], c[::2], 100) == fit(x[::2].copy(), c[::2].copy(), 100)  # strided views are read
    with pytest.raises(ValueError, match=r"^2 scores but 1 correct flags$"):
        fit(np.array([0.1, 0.2]), np.array([True]), 100)


def test_listed_entry_reads_plain_lists_only():
    x, c = rows(random.Random(4), 30)
    want = _core.platt_fit(x, c, 100)
    assert platt.platt_fit_listed(x.tolist(), c.tolist(), 100) == want
    assert platt.platt_fit_listed(tuple(x.tolist()), tuple(c.tolist()), 100) == want
    ints = [1, 2, 3, True]
    assert platt.platt_fit_listed(ints, [True, False, True, False], 100) == _core.platt_fit(
        np.array(ints, dtype=np.float64), np.array([True, False, True, False]), 100)
    for scores, labels in [([0.5, "0.5"], [True, False]), ([0.5, 2**64], [True, False]),
                           ([0.5, np.float64(0.5)], [True, False]), ([0.5, 0.6], [True, 1]),
                           ([0.5, 0.6], [True]), (np.array([0.5]), [True])]:
        assert platt.platt_fit_listed(scores, labels, 100) is None
    with use_backend("numba"):
        assert platt.platt_fit_listed(x.tolist(), c.tolist(), 100) is None
        assert platt.platt_fit(x, c, 100) == want
