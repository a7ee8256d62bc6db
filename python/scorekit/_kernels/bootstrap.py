"""Bootstrap kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract of the resampling bootstrap (``rust/kernels/src/bootstrap``): the
statistic of every resample, in resample order, where resample ``r`` is exactly
``[values[rng.randrange(n)] for _ in range(n)]`` drawn on ``rng = random.Random(seed)`` after the
``r`` resamples before it. The generator is handed over as its CPython state (624 ``uint32``
words and a position, from ``random.Random(seed).getstate()``, so any seed Python accepts
works), and each resample's values are added left to right the way this interpreter's ``sum``
adds floats: plainly up to Python 3.11, with Neumaier compensation from 3.12 on
(:data:`COMPENSATED`). The statistics are then bit-identical to the Python loop. Sorting them and
picking percentiles is the caller's job (``scorekit.agents.reliability``). :func:`float_sum` is
the same summation over one array (``scorekit.agents.cost`` totals dollars with it).
"""

from __future__ import annotations

import random
import sys
from typing import Any

import numpy as np

from scorekit import _kernels

#: Whether this interpreter's ``sum`` of floats is compensated (CPython >= 3.12).
COMPENSATED = sys.version_info >= (3, 12)


def _impl():
    return _kernels.implementation("bootstrap")


def generator_state(seed: Any) -> tuple[np.ndarray, int]:
    """``(words uint32[624], position)`` of ``random.Random(seed)`` (``None``: OS entropy)."""
    state = random.Random(seed).getstate()[1]
    return np.array(state[:-1], dtype=np.uint32), state[-1]


def resample_means(values: np.ndarray, seed: Any, resamples: int) -> np.ndarray:
    """``sum(sample) / n`` of each of ``resamples`` resamples of ``values`` (float64, n >= 1)."""
    words, pos = generator_state(seed)
    return _impl().bootstrap_means(np.ascontiguousarray(values, dtype=np.float64), words, pos,
                                   resamples, COMPENSATED)


def resample_ratios(costs: np.ndarray, wins: np.ndarray, seed: Any, resamples: int) -> np.ndarray:
    """``sum(costs) / sum(wins)`` of each resample of the pairs, ``inf`` when the wins sum to
    ``<= 0``."""
    words, pos = generator_state(seed)
    return _impl().bootstrap_ratios(np.ascontiguousarray(costs, dtype=np.float64),
                                    np.ascontiguousarray(wins, dtype=np.float64), words, pos,
                                    resamples, COMPENSATED)


def float_sum(values: np.ndarray) -> float:
    """``sum(values.tolist())``, bit for bit, without the list."""
    return _impl().float_sum(np.ascontiguousarray(values, dtype=np.float64), COMPENSATED)
