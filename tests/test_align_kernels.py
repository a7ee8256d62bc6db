"""Needleman–Wunsch kernels on both backends: against a plain O(n·m) dynamic program on thousands of
random trajectories, against Biopython's PairwiseAligner where the cost models coincide, and
against each other."""

from __future__ import annotations

import random

import numpy as np
import pytest
from Bio.Align import PairwiseAligner

from reference_sequences import call_sub, nw_distance
from scorekit import _kernels
from scorekit._kernels import align

WEIGHTS = (0.5, 1.0, 2.0, 20.0, 0.1)


@pytest.fixture(params=["rust", "numba"])
def backend(request):
    with _kernels.use_backend(request.param):
        yield request.param


def random_calls(rng, n, n_tools=3, n_names=4, n_values=3):
    """Random calls ``(tool, {name: value})`` over small alphabets (so that matches happen)."""
    return [
        (f"t{rng.randrange(n_tools)}",
         {f"a{k}": rng.randrange(n_values) for k in range(n_names) if rng.random() < 0.5})
        for _ in range(n)
    ]


def pack_table(calls, tool_w, arg_w):
    """A call table with one row per call (names and values are the digits after the prefix)."""
    tools, mass, arg_offsets, names, values, weights = [], [], [0], [], [], []
    for tool, args in calls:
        t = int(tool[1:])
        tools.append(t)
        m = tool_w[t]
        for name in sorted(args, key=lambda a: int(a[1:])):
            k = int(name[1:])
            names.append(k)
            values.append(args[name])
            weights.append(arg_w[t][k])
        for name in args:
            m += arg_w[t][int(name[1:])]
        mass.append(m)
        arg_offsets.append(len(names))
    return (np.array(tools, np.uint32), np.array(mass, np.float64), np.array(arg_offsets, np.int64),
            np.array(names, np.uint32), np.array(values, np.uint32), np.array(weights, np.float64))


def pack(preds, golds, tool_w, arg_w, share=False):
    """One call table for both sides; ``share`` makes equal calls share one row (as the API does)."""
    rows, ids = [], {}

    def call_id(call):
        key = (call[0], tuple(sorted(call[1].items())))
        if share and key in ids:
            return ids[key]
        rows.append(call)
        ids[key] = len(rows) - 1
        return len(rows) - 1

    sides = []
    for trajectories in (preds, golds):
        calls, offsets = [], [0]
        for traj in trajectories:
            calls += [call_id(c) for c in traj]
            offsets.append(len(calls))
        sides += [np.array(calls, np.uint32), np.array(offsets, np.int64)]
    return (pack_table(rows, tool_w, arg_w), *sides)


def random_model(rng):
    tool_w = [rng.choice(WEIGHTS + (10.0,)) for _ in range(3)]
    arg_w = [[rng.choice(WEIGHTS) for _ in range(4)] for _ in range(3)]
    return tool_w, arg_w


def test_batch_matches_plain_dp_on_random_trajectories(backend):
    rng = random.Random(7)
    for _ in range(4):
        tool_w, arg_w = random_model(rng)
        preds = [random_calls(rng, rng.randrange(9)) for _ in range(750)]
        golds = [random_calls(rng, rng.randrange(9)) for _ in range(750)]
        got = align.calls_distance_batch(*pack(preds, golds, tool_w, arg_w, share=rng.random() < 0.5))
        expected = [
            nw_distance(p, g, lambda t: tool_w[int(t[1:])], lambda t, n: arg_w[int(t[1:])][int(n[1:])])
            for p, g in zip(preds, golds)
        ]
        assert got.tolist() == expected


def test_alignment_is_optimal_and_covers_both_sides(backend):
    rng = random.Random(11)
    tool_w, arg_w = random_model(rng)
    for _ in range(300):
        p, g = random_calls(rng, rng.randrange(7)), random_calls(rng, rng.randrange(7))
        table, a, _, b, _ = pack([p], [g], tool_w, arg_w)
        w_tool, w_arg = lambda t: tool_w[int(t[1:])], lambda t, n: arg_w[int(t[1:])][int(n[1:])]
        distance, ops = align.calls_align(table, a, b)
        assert distance == nw_distance(p, g, w_tool, w_arg)
        i = j = 0
        cost = 0.0
        for op, oi, oj in ops.tolist():
            if op == align.OP_MATCH:
                assert (oi, oj) == (i, j)
                cost += call_sub(p[i], g[j], w_tool, w_arg, None)
                i, j = i + 1, j + 1
            elif op == align.OP_DELETE:
                assert (oi, oj) == (i, -1)
                cost += table[1][a[i]]
                i += 1
            else:
                assert (oi, oj) == (-1, j)
                cost += table[1][b[j]]
                j += 1
        assert (i, j) == (len(p), len(g))
        assert cost == pytest.approx(distance, abs=1e-9)


@pytest.mark.parametrize("mismatch", [1.0, 2.0])
def test_unit_costs_match_biopython(backend, mismatch):
    """Unit gaps and a constant mismatch: the distance is minus Biopython's global score."""
    aligner = PairwiseAligner(mode="global", match_score=0.0, mismatch_score=-mismatch, gap_score=-1.0)
    rng = random.Random(3)
    table = np.full((4, 4), mismatch)
    np.fill_diagonal(table, 0.0)
    for _ in range(400):
        x = "".join(rng.choice("ACGT") for _ in range(rng.randrange(1, 25)))
        y = "".join(rng.choice("ACGT") for _ in range(rng.randrange(1, 25)))
        a = np.array(["ACGT".index(c) for c in x], np.uint32)
        b = np.array(["ACGT".index(c) for c in y], np.uint32)
        distance, ops = align.table_align(a, b, table, np.ones(len(a)), np.ones(len(b)))
        assert distance == -aligner.score(x, y)
        assert len(ops) >= max(len(a), len(b))


def test_call_model_without_arguments_is_indel_distance_like_biopython(backend):
    """Tools without arguments and unit tool weights: a tool mismatch costs 2 (delete + insert)."""
    aligner = PairwiseAligner(mode="global", match_score=0.0, mismatch_score=-2.0, gap_score=-1.0)
    rng = random.Random(5)
    tool_w, arg_w = [1.0] * 3, [[1.0] * 4 for _ in range(3)]
    for _ in range(300):
        x = "".join(rng.choice("012") for _ in range(rng.randrange(1, 20)))
        y = "".join(rng.choice("012") for _ in range(rng.randrange(1, 20)))
        table, a, _, b, _ = pack([[(f"t{c}", {}) for c in x]], [[(f"t{c}", {}) for c in y]], tool_w, arg_w, share=True)
        assert align.calls_align(table, a, b)[0] == -aligner.score(x, y)


def test_backends_and_thread_counts_agree():
    rng = random.Random(13)
    tool_w, arg_w = random_model(rng)
    packed = pack([random_calls(rng, rng.randrange(12)) for _ in range(2000)],
                  [random_calls(rng, rng.randrange(12)) for _ in range(2000)], tool_w, arg_w, share=True)
    results = []
    for name in _kernels.BACKENDS:
        with _kernels.use_backend(name):
            for threads in (0, 1, 2):
                results.append(align.calls_distance_batch(*packed, threads))
    for r in results[1:]:
        assert np.array_equal(r, results[0])


def test_traceback_preference(backend):
    table = np.array([[0.0, 2.0], [2.0, 0.0]])
    # sub == del + ins: the diagonal is preferred.
    _, ops = align.table_align(np.array([0], np.uint32), np.array([1], np.uint32), table, np.ones(1), np.ones(1))
    assert ops.tolist() == [[0, 0, 0]]
    # [x, x] vs [x]: the first x is the one deleted (diagonal preferred at the end).
    _, ops = align.table_align(np.array([0, 0], np.uint32), np.array([0], np.uint32), table, np.ones(2), np.ones(1))
    assert ops.tolist() == [[1, 0, -1], [0, 1, 0]]
    empty, ones = np.array([], np.uint32), np.array([1, 1], np.uint32)
    d, ops = align.table_align(empty, ones, table, np.ones(0), np.array([1.5, 2.0]))
    assert d == 3.5 and ops.tolist() == [[2, -1, 0], [2, -1, 1]]


def test_bad_input_names_the_argument(backend):
    table = np.zeros((2, 2))
    with pytest.raises(ValueError, match="table has only 2 rows"):
        align.table_align(np.array([5], np.uint32), np.array([0], np.uint32), table, np.ones(1), np.ones(1))
    with pytest.raises(ValueError, match="^del"):
        align.table_align(np.array([0], np.uint32), np.array([0], np.uint32), table, np.ones(2), np.ones(1))
    table, a, a_off, b, b_off = pack([[("t0", {})]], [[], []], [1.0] * 3, [[1.0] * 4] * 3)
    with pytest.raises(ValueError, match="same number of pairs"):
        align.calls_distance_batch(table, a, a_off, b, b_off)
    with pytest.raises(ValueError, match="b_calls holds call id 7"):
        align.calls_align(table, a, np.array([7], np.uint32))
    bad = (*table[:2], np.array([0, 2], np.int64), np.array([1, 0], np.uint32), np.array([0, 0], np.uint32), np.ones(2))
    with pytest.raises(ValueError, match="arg_names must be strictly increasing"):
        align.calls_align(bad, a, a)
