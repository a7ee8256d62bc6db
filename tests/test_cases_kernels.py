"""The records kernels of scorekit.cases (scorekit._kernels.cases): the compiled reader and
matrix against the Python reader and the Numba twin, and both against the general scorer's item
scores, on thousands of random record lists (with the values that stress equality: booleans,
integral floats, NaN, big ints, lone surrogates, containers, dict subclasses, missing keys)."""

from __future__ import annotations

import collections
import random

import numpy as np
import pytest

from scorekit import _core, _kernels
from scorekit._kernels import cases as kernels
from scorekit._kernels import cases_numba
from scorekit.cases.scoring import _Scorer

LEAVES = [None, True, False, 0, 1, 2, -1, 1.0, 0.0, -0.0, 2.5, float("nan"), float("inf"), "a", "b", "1", "",
          "é", "$ignore", 2**63, 2**63 - 1, -(2**63), 9.3e18, [1], ("a",), {"x": 1}, {}, "\ud800"]
EXPECTED_LEAVES = [v for v in LEAVES if not isinstance(v, (list, tuple, dict))]
KEYS = ["a", "b", "c", "$ordered"]


def _record(rng: random.Random, leaves, depth: int = 0):
    d = {}
    for key in rng.sample(KEYS, rng.randint(0, 3)):
        if depth < 2 and rng.random() < 0.2:
            d[key] = _record(rng, leaves, depth + 1)
        else:
            d[key] = rng.choice(leaves)
    return d


def _actual(rng: random.Random):
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(LEAVES)
    if roll < 0.11:
        return collections.OrderedDict(_record(rng, LEAVES))
    return _record(rng, LEAVES)


def _lists(seed: int):
    rng = random.Random(seed)
    expected = [_record(rng, EXPECTED_LEAVES) for _ in range(rng.randint(0, 5))]
    if rng.random() < 0.05 and expected:
        expected[0] = {"a": [1]}
    actual = [_actual(rng) for _ in range(rng.randint(0, 5))]
    return expected, actual


def _general(expected, actual):
    scorer = _Scorer(None, "greedy")
    return np.array([[scorer.item_score(a, e, "s[]") for a in actual] for e in expected]).reshape(
        len(expected), len(actual))


def test_compiled_and_twin_readers_agree_with_the_general_scorer():
    read = 0
    for seed in range(4000):
        expected, actual = _lists(seed)
        compiled = _core.cases_record_matrix(expected, actual)
        ids = kernels.read_records(expected, actual)
        assert (compiled is None) == (ids is None), (seed, expected, actual)
        if compiled is None:
            continue
        read += 1
        compiled, counts = compiled
        assert counts.tolist() == (ids[0] >= 0).sum(axis=1).tolist()
        twin = cases_numba.cases_match_matrix(*ids)
        assert np.array_equal(compiled, twin), (seed, expected, actual)
        # rows with nothing to score are wildcards and never reach the kernel
        scorable = [j for j, e in enumerate(expected) if _Scorer(None, "greedy").scorable(e, "s[]")]
        assert [j for j, c in enumerate(counts) if c > 0] == scorable
        general = _general([expected[j] for j in scorable], actual)
        assert np.array_equal(compiled[scorable], general), (seed, expected, actual)
        rust_ids = _core.cases_record_ids(expected, actual)
        assert np.array_equal(_core.cases_match_matrix(*rust_ids), compiled)
        assert np.array_equal(cases_numba.cases_match_matrix(*rust_ids), compiled)
    assert read > 2000  # most random lists take the compiled path


def test_unsupported_shapes_take_the_general_path():
    for expected, actual in [([{"a": [1]}], [{}]), ([{"a": {"$ordered": [1]}}], [{}]), ([{1: "x"}], [{}]),
                             ([{"a": 2**64}], [{}]), ([{"a": "\ud800"}], [{}]), ([{"a": 1}], [{"a": 2**64}]),
                             (["x"], [{}]), ([collections.OrderedDict(a=1)], [{}]),
                             ([{"a": {"b": 1}}], [{"a": collections.OrderedDict(b=1)}])]:
        assert _core.cases_record_matrix(expected, actual) is None
        assert kernels.read_records(expected, actual) is None


def test_match_matrix_backends_agree_on_random_ids():
    rng = np.random.default_rng(7)
    for _ in range(500):
        rows, cols, paths = rng.integers(0, 7, size=3)
        e = rng.integers(-1, 4, size=(rows, paths)).astype(np.int64)
        a = rng.integers(-2, 4, size=(cols, paths)).astype(np.int64)
        assert np.array_equal(_core.cases_match_matrix(e, a), cases_numba.cases_match_matrix(e, a))


def test_greedy_backends_agree_and_follow_the_rule():
    rng = np.random.default_rng(11)
    for _ in range(3000):
        rows, cols = rng.integers(0, 8, size=2)
        m = rng.integers(0, 5, size=(rows, cols)) / 4.0
        rust = _core.cases_greedy_pairs(m)
        assert np.array_equal(rust, cases_numba.cases_greedy_pairs(m))
        free = list(range(cols))
        for r in range(rows):
            best = max(free, key=lambda c: (m[r, c], -c), default=None)
            if best is None or m[r, best] <= 0:
                assert rust[r] == -1
            else:
                assert rust[r] == best
                free.remove(best)


@pytest.mark.parametrize("bad", [np.array([[np.nan]]), np.array([[1.5]]), np.array([[-0.1]])])
def test_greedy_refuses_values_outside_unit_interval(bad, backend):
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        kernels.greedy_pairs(bad)


def test_match_matrix_refuses_mismatched_paths(backend):
    with pytest.raises(ValueError, match="same number of paths"):
        kernels.match_matrix(np.zeros((1, 2), np.int64), np.zeros((1, 3), np.int64))


def test_dispatch_gives_the_same_matrix_on_both_backends():
    expected = [{"a": 1, "b": {"c": "x"}}, {"a": True, "b": "$ignore"}]
    actual = [{"a": 1.0, "b": {"c": "x"}}, {"a": 1}, "text", {"a": True, "b": {"c": "y"}}]
    results = {}
    for name in _kernels.BACKENDS:
        with _kernels.use_backend(name):
            results[name] = kernels.record_score_matrix(expected, actual)
    assert all(np.array_equal(r, n) for r, n in zip(results["rust"], results["numba"]))
    # true is not 1 (JSON equality); "text" is not a record: every field compares with None
    matrix, counts = results["rust"]
    assert matrix.tolist() == [[1.0, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]] and counts.tolist() == [2, 1]


class _GrowingKey:
    """A dict key that collides with ``"a"`` and, each time a lookup compares with it, appends a
    record to the lists it was given (the hostile ``__eq__`` of issue 30)."""

    def __init__(self, *lists: list) -> None:
        self.lists = lists

    def __hash__(self) -> int:
        return hash("a")

    def __eq__(self, other: object) -> bool:
        for items in self.lists:
            items.append({"a": 1})
        return False


def _hostile_lists() -> tuple[list, list]:
    expected: list = [{"a": 1}]
    actual: list = []
    actual.append({_GrowingKey(expected, actual): 1})
    return expected, actual


def test_a_list_grown_while_read_does_not_change_the_shape(backend):
    expected, actual = _hostile_lists()
    matrix, counts = kernels.record_score_matrix(expected, actual)
    # the lists as they were when the call began: "a" is missing from the one actual record
    assert matrix.tolist() == [[0.0]] and counts.tolist() == [1]
    assert len(expected) > 1 and len(actual) > 1  # the key did grow them while they were read


def test_the_compiled_reader_takes_the_lengths_once():
    expected, actual = _hostile_lists()
    matrix, counts = _core.cases_record_matrix(expected, actual)
    assert matrix.tolist() == [[0.0]] and counts.tolist() == [1]
    expected, actual = _hostile_lists()
    e, a = _core.cases_record_ids(expected, actual)
    assert e.shape == (1, 1) and a.shape == (1, 1) and a.tolist() == [[0]]


@pytest.mark.parametrize("comparators", [None, {"step[].a": lambda a, e: float(a == e)}],
                         ids=["records kernel", "general scorer"])
def test_a_list_grown_while_scored_is_scored_as_it_was(backend, comparators):
    from scorekit.cases import score_step

    for make in (lambda e: e, lambda e: {"$ordered": e}):
        expected, actual = _hostile_lists()
        step = score_step(actual, make(expected), comparators=comparators)
        leaf = step.field_scores[0]
        # one expected record against one actual record lacking "a": nothing pairs, score 0
        assert step.score == 0.0 and len(leaf.actual) == 1 and len(leaf.expected) == 1
        assert len(expected) > 1 and len(actual) > 1  # the key did grow them while they were scored
        if leaf.match is not None:
            assert (leaf.match.expected_len, leaf.match.actual_len, leaf.match.pairs) == (1, 1, [])
