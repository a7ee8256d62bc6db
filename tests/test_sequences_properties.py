"""Property tests (both backends): ``in_order`` distance is 0 iff the trajectories are identical and
is symmetric; ``superset`` is 0 whenever the gold is a subsequence of the prediction; ROVER on
identical hypotheses returns them with agreement 1.0; the two backends agree."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorekit import _kernels
from scorekit.agents import TrajectoryMetric, as_call
from scorekit.qe import rover

# the backend fixture only selects a backend for the whole test, so sharing it across inputs is safe
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

values = st.one_of(st.integers(-2, 2), st.sampled_from(["a", "b", "B", "c"]), st.none())
calls = st.tuples(st.sampled_from(["search", "open", "answer"]),
                  st.dictionaries(st.sampled_from(["q", "n", "m"]), values, max_size=3))
trajectories = st.lists(calls, max_size=8)
words = st.lists(st.sampled_from(["the", "cat", "sat", "mat", "a"]), max_size=12)


@pytest.fixture(params=["rust", "numba"])
def backend(request):
    with _kernels.use_backend(request.param):
        yield request.param


RAW = TrajectoryMetric(canonicalizer=str)  # byte-exact strings: "identical" means Python ==


@given(p=trajectories, g=trajectories)
@SETTINGS
def test_in_order_zero_iff_identical_and_symmetric(backend, p, g):
    d = RAW(p, g).detail["raw_distance"]
    identical = [as_call(x) for x in p] == [as_call(x) for x in g]
    assert (d == 0) == identical
    assert RAW(g, p).detail["raw_distance"] == d
    assert RAW(p, p).value == 0.0


@given(pred=trajectories, data=st.data())
@SETTINGS
def test_superset_is_zero_for_a_subsequence(backend, pred, data):
    keep = data.draw(st.lists(st.booleans(), min_size=len(pred), max_size=len(pred)))
    gold = [c for c, k in zip(pred, keep) if k]
    assert TrajectoryMetric("superset")(pred, gold).value == 0.0


@given(p=trajectories, g=trajectories)
@SETTINGS
def test_backends_agree_on_trajectories(p, g):
    results = []
    for name in _kernels.BACKENDS:
        with _kernels.use_backend(name):
            results.append(TrajectoryMetric()(p, g).detail["raw_distance"])
    assert results[0] == results[1]


@given(hyp=words, n=st.integers(1, 6))
@SETTINGS
def test_rover_on_identical_hypotheses(backend, hyp, n):
    c = rover([list(hyp)] * n)
    assert c.tokens == hyp
    assert c.agreement == [1.0] * len(hyp)
    assert c.mean_agreement == (1.0 if hyp or n <= 1 else 0.0)


@given(hyps=st.lists(words, min_size=1, max_size=5))
@SETTINGS
def test_rover_backends_agree(hyps):
    results = []
    for name in _kernels.BACKENDS:
        with _kernels.use_backend(name):
            c = rover(hyps)
            results.append(([(s.entries, s.winner, s.score, s.vote_share) for s in c.slots], c.agreement))
    assert results[0] == results[1]
    slots = results[0][0]
    assert all(len(entries) == len(hyps) for entries, *_ in slots)
