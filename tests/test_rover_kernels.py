"""ROVER kernel on both backends against a straightforward Python implementation of docs/decisions.md#rover
(``reference_sequences.rover_units``) on random hypothesis sets, plus the guard and validation."""

from __future__ import annotations

import random

import numpy as np
import pytest

from reference_sequences import rover_units
from scorekit import _kernels
from scorekit._kernels import rover


@pytest.fixture(params=["rust", "numba"])
def backend(request):
    with _kernels.use_backend(request.param):
        yield request.param


def pack(units):
    """Hypotheses of ``(token id, conf)`` → packed arrays."""
    tokens = [t for hyp in units for t, _ in hyp]
    confs = [c for hyp in units for _, c in hyp]
    offsets = np.cumsum([0] + [len(h) for h in units])
    return np.array(tokens, np.uint32), np.array(confs, np.float64), offsets.astype(np.int64)


def kernel_slots(units, cw, null_conf):
    slot_tokens, slot_confs, winners, scores, shares = rover.align_vote(*pack(units), cw, null_conf, None)
    out = []
    for s in range(len(winners)):
        entries = [(None if t == rover.NULL else int(t), float(c) if t != rover.NULL else 0.0)
                   for t, c in zip(slot_tokens[s].tolist(), slot_confs[s].tolist())]
        w = None if winners[s] == rover.NULL else int(winners[s])
        out.append((entries, w, float(scores[s]), float(shares[s])))
    return out


def random_hypotheses(rng):
    base = [rng.randrange(6) for _ in range(rng.randrange(0, 12))]
    hyps = []
    for _ in range(rng.randrange(1, 6)):
        h = []
        for tok in base:
            r = rng.random()
            if r < 0.15:
                continue                                   # deletion
            h.append(rng.randrange(6) if r < 0.3 else tok)  # substitution or copy
            if rng.random() < 0.1:
                h.append(rng.randrange(6))                 # insertion
        hyps.append([(t, rng.choice([1.0, 0.9, 0.5, 0.3, 0.25])) for t in h])
    return hyps


def test_random_sets_match_the_python_algorithm(backend):
    rng = random.Random(2024)
    for _ in range(1500):
        units = random_hypotheses(rng)
        cw = rng.choice([0.0, 0.5, 1.0, 0.3])
        null_conf = rng.choice([0.7, 0.0, 1.0])
        assert kernel_slots(units, cw, null_conf) == rover_units(units, cw, null_conf)


def test_multiword_alignments_match_the_python_algorithm(backend):
    """Hypotheses of 60–200 tokens: the bit-parallel alignment spans several 64-bit words."""
    rng = random.Random(77)
    for _ in range(12):
        base = [rng.randrange(8) for _ in range(rng.randrange(60, 200))]
        units = [[(t if rng.random() > 0.2 else rng.randrange(8), 1.0) for t in base if rng.random() > 0.1]
                 for _ in range(rng.randrange(2, 5))]
        assert kernel_slots(units, 0.5, 0.7) == rover_units(units, 0.5, 0.7)


def test_backends_agree_on_long_hypotheses():
    rng = random.Random(1)
    base = [rng.randrange(50) for _ in range(400)]
    units = [[(t if rng.random() > 0.2 else rng.randrange(50), 0.5 + rng.random() / 2) for t in base
              if rng.random() > 0.05] for _ in range(5)]
    results = []
    for name in _kernels.BACKENDS:
        with _kernels.use_backend(name):
            results.append(rover.align_vote(*pack(units), 0.5, 0.7, 5000))
    for x, y in zip(*results):
        assert np.array_equal(x, y)
    assert kernel_slots(units, 0.5, 0.7) == rover_units(units, 0.5, 0.7)


def test_vectors_at_kernel_level(backend):
    # the cat sat / the cat sit / the bat sat  (the=0 cat=1 sat=2 sit=3 bat=4)
    units = [[(0, 1.0), (1, 1.0), (2, 1.0)], [(0, 1.0), (1, 1.0), (3, 1.0)], [(0, 1.0), (4, 1.0), (2, 1.0)]]
    slots = kernel_slots(units, 0.5, 0.7)
    assert [s[1] for s in slots] == [0, 1, 2]
    assert [s[2] for s in slots] == [1.0, 0.8333333333333333, 0.8333333333333333]
    assert [s[3] for s in slots] == [1.0, 2 / 3, 2 / 3]
    # [("cat", .9)] vs [("dog", .2)]: 0.7 with confidence; a frequency tie goes to the earliest.
    assert kernel_slots([[(0, 0.9)], [(1, 0.2)]], 0.5, 0.7)[0][1:] == (0, 0.7, 0.5)
    assert kernel_slots([[(0, 0.9)], [(1, 0.2)]], 0.0, 0.7)[0][1:] == (0, 0.5, 0.5)


def test_identical_hypotheses_agree_fully(backend):
    units = [[(t, 1.0) for t in (4, 2, 7, 2, 9)]] * 4
    slots = kernel_slots(units, 0.5, 0.7)
    assert [s[1] for s in slots] == [4, 2, 7, 2, 9]
    assert all(s[3] == 1.0 for s in slots)


def test_guard_and_validation(backend):
    tokens, confs, offsets = pack([[(0, 1.0)] * 50] * 2)
    with pytest.raises(ValueError, match=r"50 tokens \(> max_tokens=10\)"):
        rover.align_vote(tokens, confs, offsets, 0.5, 0.7, 10)
    assert len(rover.align_vote(tokens, confs, offsets, 0.5, 0.7, 50)[2]) == 50
    with pytest.raises(ValueError, match="confs must not be NaN"):
        rover.align_vote(np.array([0], np.uint32), np.array([np.nan]), np.array([0, 1], np.int64), 0.5, 0.7)
    with pytest.raises(ValueError, match="offsets"):
        rover.align_vote(np.array([0], np.uint32), np.array([1.0]), np.array([0, 2], np.int64), 0.5, 0.7)
    out = rover.align_vote(np.array([], np.uint32), np.array([]), np.array([0], np.int64), 0.5, 0.7, 1)
    assert out[0].shape == (0, 0) and len(out[2]) == 0
