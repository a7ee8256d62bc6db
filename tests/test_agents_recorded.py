"""scorekit.agents.cost.RecordedEpisodes: the cost columns recorded with a run's episodes.

The column path is checked against the one-episode-at-a-time path and the reference kit on random
suites (priced, unpriced, missing costs, several models, refused counts), and against every way of
changing the episodes after they were recorded: none may make the two paths disagree.
"""

from __future__ import annotations

import copy
import math
import pickle
from types import SimpleNamespace

import numpy as np
import pytest
from ek.agents import base as ekb
from ek.agents import cost as ekc
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit import _core, _kernels
from scorekit.agents import (
    Cost, Episode, ModelPrice, RecordedEpisodes, RunProvenance, TaskSpec, cost_report, per_million, run_suite,
)
from scorekit.agents import cost as C
from scorekit.agents.cost import episode_dollars_array
from scorekit.agents.harness import score_episodes
from scorekit.errors import InvalidTypeError

TABLE = {"m1": per_million(3.0, 15.0, cached_input=0.3), "m2": per_million(0.15, 0.6), "": per_million(1.0, 2.0)}
PRICINGS = [{}, {"price": per_million(2.5, 10.0)}, {"prices": TABLE}, {"prices": {"m1": TABLE["m1"]}}]


def object_path(monkeypatch, episodes, **kw):
    """``cost_report`` one episode at a time (no columns of any kind), as an outcome."""
    with monkeypatch.context() as m:
        m.setattr(C, "_columns", lambda *a, **k: None)
        m.setattr(C, "_cost_report_small", lambda *a, **k: None)
        m.setattr(C.RecordedEpisodes, "_priced", lambda *a, **k: None)
        return outcome(lambda: cost_report(list(episodes), **kw))


def outcome(call):
    try:
        return ("ok", call())
    except (ValueError, TypeError, KeyError) as exc:
        return ("error", type(exc).__name__, str(exc))


def same(a, b):
    """Outcomes equal, NaN equal to NaN."""
    if a[0] != b[0] or a[0] == "error":
        return a == b
    ra, rb = a[1], b[1]
    return ra.keys() == rb.keys() and all(
        ra[k] == rb[k] or (isinstance(ra[k], float) and isinstance(rb[k], float)
                           and math.isnan(ra[k]) and math.isnan(rb[k])) for k in ra)


def no_list_path(monkeypatch):
    """Make every path but the recorded columns fail, so that a report that succeeds used them."""
    def boom(*a, **k):
        raise AssertionError("the list path was taken")
    for name in ("_columns", "_cost_report_small", "_cost_report_one_by_one"):
        monkeypatch.setattr(C, name, boom)


# --- random suites: the columns, the one-by-one path and the reference kit agree -------------------

counts = st.one_of(st.integers(0, 2 ** 40), st.sampled_from([0, 1, 2 ** 62]))
odd_counts = st.sampled_from([-1, 1.5, float("nan"), True, 2 ** 70])
latencies = st.one_of(st.none(), st.floats(0, 1e4), st.sampled_from([float("nan"), 2]))
costs = st.one_of(
    st.none(),
    st.builds(Cost, counts, counts, counts, counts, st.integers(0, 3), latencies),
    st.builds(Cost, odd_counts, counts),
)
runs = st.one_of(st.none(), st.sampled_from(["", "m1", "m2", "unknown"]).map(lambda m: RunProvenance(model=m)))
episodes = st.lists(st.builds(Episode, task_id=st.sampled_from(["a", "b", "c"]), cost=costs,
                              success=st.one_of(st.booleans(), st.just(None)), run=runs), max_size=130)


def mirror(e):
    """The reference kit's twin of an episode."""
    c, r = e.cost, e.run
    return ekb.Episode(task_id=e.task_id, success=e.success,
                       cost=None if c is None else ekb.Cost(c.input_tokens, c.output_tokens, c.cached_input_tokens,
                                                            c.reasoning_tokens, c.retries, c.latency_s),
                       run=None if r is None else ekb.RunProvenance(model=r.model))


def ek_kw(kw):
    p = lambda x: ekc.ModelPrice(x.input, x.output, x.cached_input, x.reasoning)  # noqa: E731
    return {k: ({m: p(v) for m, v in x.items()} if k == "prices" else p(x)) for k, x in kw.items()}


@settings(max_examples=150)
@given(eps=episodes, pricing=st.sampled_from(range(len(PRICINGS))))
def test_columns_agree_with_one_by_one_and_the_kit(eps, pricing):
    kw = PRICINGS[pricing]
    recorded = RecordedEpisodes(eps)
    ours = outcome(lambda: cost_report(recorded, **kw))
    mp = pytest.MonkeyPatch()
    try:
        assert same(ours, object_path(mp, eps, **kw))
    finally:
        mp.undo()
    theirs = outcome(lambda: ekc.cost_report([mirror(e) for e in eps], **ek_kw(kw)))
    if ours[0] == "ok" and theirs[0] == "ok":
        assert same(ours, theirs)
    if ours[0] == "ok" and kw:
        assert episode_dollars_array(recorded, **kw).tolist() == \
            [C.episode_dollars(e, **kw) for e in eps]


def plain_suite(n=400, seed=3):
    rng = np.random.default_rng(seed)
    models = [RunProvenance(model=m) for m in ("m1", "m2", "")]
    return [Episode(task_id=f"t{i % 37}", success=bool(rng.random() < 0.4),
                    cost=None if rng.random() < 0.1 else Cost(*map(int, rng.integers(0, 10 ** 6, 4)),
                                                              latency_s=None if rng.random() < 0.2 else
                                                              float(rng.random() * 30)),
                    run=None if rng.random() < 0.05 else models[int(rng.integers(0, 3))]) for i in range(n)]


@pytest.mark.parametrize("kw", PRICINGS[:3])
def test_plain_suites_are_reported_from_the_columns_alone(monkeypatch, kw):
    eps = plain_suite()
    expected = object_path(monkeypatch, eps, **kw)
    recorded = RecordedEpisodes(eps)
    assert recorded._recorded is not None
    no_list_path(monkeypatch)
    assert same(outcome(lambda: cost_report(recorded, **kw)), expected)
    assert expected[1] == ekc.cost_report([mirror(e) for e in eps], **ek_kw(kw))


def test_the_columns_hold_the_hand_computed_figures():
    eps = [Episode("a", success=True, cost=Cost(1, 2, 3, 4, latency_s=0.5), run=RunProvenance(model="x")),
           Episode("b", success=False),
           Episode("d", success=False, cost=Cost(output_tokens=7, latency_s=0.25))]
    recorded = RecordedEpisodes(eps)
    prices = {"x": ModelPrice(1.0, 10.0, 100.0, 1000.0), "": ModelPrice(0.5, 2.0)}
    assert cost_report(recorded, prices=prices) == {
        "n": 3, "n_success": 1, "success_rate": 1 / 3, "total_dollars": 4335.0, "cost_per_success": 4335.0,
        "mean_latency_s": 0.375, "total_tokens": 17, "priced": True}
    assert episode_dollars_array(recorded, prices=prices).tolist() == [4321.0, 0.0, 14.0]
    assert cost_report(recorded)["total_dollars"] is None


@pytest.mark.parametrize("odd, kw, error", [
    (Episode("u", cost=Cost(1)), {}, "ungraded"),                                      # success None
    (Episode("n", success=True, cost=Cost(-1)), {"price": per_million(1.0, 1.0)}, ">= 0"),
    (Episode("n", success=True, cost=Cost(float("nan"))), {"price": per_million(1.0, 1.0)}, "token count"),
    (Episode("m", success=True, cost=Cost(1), run=RunProvenance(model="unknown")), {"prices": TABLE}, "unknown"),
])
def test_refused_episodes_are_refused_as_today(monkeypatch, odd, kw, error):
    eps = plain_suite(120) + [odd]
    recorded = RecordedEpisodes(eps)
    ours = outcome(lambda: cost_report(recorded, **kw))
    assert ours[0] == "error" and error in ours[2]
    assert ours == object_path(monkeypatch, eps, **kw) == outcome(lambda: cost_report(eps, **kw))


def test_a_negative_count_is_counted_unpriced_and_refused_priced(monkeypatch):
    eps = plain_suite(120) + [Episode("n", success=True, cost=Cost(-5))]
    recorded = RecordedEpisodes(eps)
    assert recorded._recorded is not None
    assert same(outcome(lambda: cost_report(recorded)), object_path(monkeypatch, eps))
    with pytest.raises(ValueError, match=">= 0"):
        cost_report(recorded, prices=TABLE)


# --- no change after recording can make the columns disagree with the episodes ---------------------

def assert_consistent(monkeypatch, recorded, before):
    """The record's reports are still ``before`` and still what reading its episodes gives."""
    for kw, expected in zip(PRICINGS, before):
        ours = outcome(lambda: cost_report(recorded, **kw))
        assert same(ours, expected)
        assert same(ours, object_path(monkeypatch, recorded, **kw))


def reports(recorded):
    return [outcome(lambda: cost_report(recorded, **kw)) for kw in PRICINGS]


def test_changing_the_episodes_it_was_made_from_changes_nothing(monkeypatch):
    eps = plain_suite()
    recorded = RecordedEpisodes(eps)
    before = reports(recorded)
    shared_run = next(e.run for e in eps if e.run is not None)
    eps[0].success = not eps[0].success
    eps[1].cost = Cost(10 ** 9)
    eps[2].run = RunProvenance(model="m1")
    eps.append(Episode("new", success=True, cost=Cost(5)))
    del eps[3]
    for e in eps:
        if e.cost is not None:  # a frozen cost changed all the same
            object.__setattr__(e.cost, "input_tokens", 10 ** 8)
            object.__setattr__(e.cost, "latency_s", 99.0)
    object.__setattr__(shared_run, "model", "m2")
    assert_consistent(monkeypatch, recorded, before)


def test_changing_the_episodes_read_from_it_changes_nothing(monkeypatch):
    recorded = RecordedEpisodes(plain_suite())
    before = reports(recorded)
    first = recorded[0]
    first.success, first.cost, first.run = None, Cost(-3), RunProvenance(model="unknown")
    for e in recorded:
        e.success = not e.success
        if e.cost is not None:
            object.__setattr__(e.cost, "output_tokens", 7)
        if e.run is not None:
            object.__setattr__(e.run, "model", "unknown")
    for e in recorded[2:9]:
        e.cost = None
    assert recorded[0] is not recorded[0] and recorded[0] == recorded[0]
    assert_consistent(monkeypatch, recorded, before)


def test_it_cannot_be_changed():
    recorded = RecordedEpisodes(plain_suite(10))
    for name in ("_episodes", "_recorded", "other"):
        with pytest.raises(AttributeError):
            setattr(recorded, name, ())
        with pytest.raises(AttributeError):
            delattr(recorded, name)
    with pytest.raises(TypeError):
        recorded[0] = Episode()
    assert not hasattr(recorded, "append")
    with pytest.raises(ValueError, match="read-only"):
        recorded._recorded.counts[0, 0] = 1


def test_a_subclass_is_read_as_any_sequence(monkeypatch):
    class Other(RecordedEpisodes):
        __slots__ = ()

        def __iter__(self):
            return iter([Episode("x", success=True, cost=Cost(10 ** 6))])

        def __len__(self):
            return 1

    other = Other(plain_suite(200))
    assert cost_report(other, price=per_million(1.0, 1.0))["total_dollars"] == 1.0
    assert episode_dollars_array(other, price=per_million(1.0, 1.0)).tolist() == [1.0]


class Lazy(Episode):
    """An episode whose cost is computed each time it is read."""

    @property
    def cost(self):
        return Cost(self.meta.get("tokens", 1))

    @cost.setter
    def cost(self, value):
        pass


@pytest.mark.parametrize("odd", [
    Lazy("l", success=True),                                                     # a property
    Episode("s", success=True, cost=Cost(1), run=SimpleNamespace(model="m1")),   # a mutable run
    Episode("s", success=True, cost=Cost(1), run=RunProvenance(model=type("S", (str,), {})("m1"))),
    Episode("c", success=True, cost=ekb.Cost(1)),                                # another kit's Cost
    Episode("f", success=True, cost=Cost(1, latency_s=2)),                       # an int latency
])
def test_what_could_change_once_read_keeps_no_columns(monkeypatch, odd):
    eps = plain_suite(150) + [odd]
    recorded = RecordedEpisodes(eps)
    assert recorded._recorded is None
    if isinstance(odd.run, SimpleNamespace):
        odd.run.model = "m2"  # shared with the record: read as it is now
    if isinstance(odd, Lazy):
        recorded._episodes[-1].meta["tokens"] = 5
    for kw in PRICINGS:
        assert same(outcome(lambda: cost_report(recorded, **kw)), object_path(monkeypatch, recorded, **kw))


def test_the_reader_reads_only_exact_types_when_asked():
    plain = [Episode("a", success=True, cost=Cost(1, 2), run=RunProvenance(model="m"))]
    exact = (Episode, RunProvenance)
    read = _core.cost_columns(plain, Cost, {}, exact)
    assert [a.tolist() for a in read] == [[1], [0], [1, 2, 0, 0], [], [0]]
    assert _core.cost_columns([Lazy("l", success=True)], Cost, {}, exact) is None
    assert _core.cost_columns([Lazy("l", success=True)], Cost, {}) is not None
    for run in (SimpleNamespace(model="m"), RunProvenance(model=type("S", (str,), {})("m"))):
        odd = [Episode("a", success=True, cost=Cost(1), run=run)]
        assert _core.cost_columns(odd, Cost, {}, exact) is None
        assert _core.cost_columns(odd, Cost, {}) is not None


def test_copies_and_pickles_report_the_same(monkeypatch):
    recorded = RecordedEpisodes(plain_suite())
    before = reports(recorded)
    for twin in (copy.copy(recorded), copy.deepcopy(recorded), pickle.loads(pickle.dumps(recorded))):
        assert type(twin) is RecordedEpisodes and twin._recorded is not None
        assert_consistent(monkeypatch, twin, before)


def test_other_backends_read_the_episodes(monkeypatch):
    recorded = RecordedEpisodes(plain_suite())
    before = reports(recorded)
    monkeypatch.setattr(_kernels, "compiled", lambda: None)
    assert RecordedEpisodes(plain_suite())._recorded is None
    assert_consistent(monkeypatch, recorded, before)


def test_its_copies_are_whole_and_share_nothing_a_report_reads():
    run = RunProvenance(seed=3, temperature=0.5, model="m1", simulator="s", suite_version="v", scaffold="x")
    e = Episode("t", output="o", final_state={"a": 1}, cost=Cost(1, 2, 3, 4, 5, 6.5), success=True, run=run,
                meta={"k": "v"})
    recorded = RecordedEpisodes([e, e])
    first, second = recorded
    assert first == second == e and recorded[1] == e
    assert first.cost is not e.cost and first.run is not e.run and first.meta is not e.meta
    assert first.cost is not recorded[0].cost and first.run is not recorded[0].run


def test_only_episodes_are_recorded():
    with pytest.raises(InvalidTypeError, match="position 1"):
        RecordedEpisodes([Episode(), {"task_id": "a"}])


# --- run_suite and score_episodes hand their episodes out recorded --------------------------------

def test_run_suite_records_its_episodes(monkeypatch):
    eps = {f"t{i}": e for i, e in enumerate(plain_suite(300))}
    for e in eps.values():
        e.task_id = ""  # filled in by the harness
    kept = []

    def keeping(episode, gold):  # a checker that keeps the harness's episodes, to change them later
        kept.append(episode)
        return episode.meta.get("ok", True) and episode.task_id != "t3"

    tasks = [TaskSpec(task_id) for task_id in eps]
    report = run_suite(lambda task: eps[task.task_id], tasks, check=keeping, prices=TABLE, progress="never")
    recorded = report.episodes
    assert type(recorded) is RecordedEpisodes and len(recorded) == 300 and recorded._recorded is not None
    assert [e.task_id for e in recorded] == list(eps)
    report_cost = {k: v for k, v in report.cost.items() if k != "cost_ci"}
    assert cost_report(recorded, prices=TABLE) == report_cost == cost_report(list(recorded), prices=TABLE)
    before = reports(recorded)
    for e in kept:
        e.success = None
        e.cost = Cost(10 ** 9)
    for e in eps.values():
        if e.cost is not None:
            object.__setattr__(e.cost, "input_tokens", 0)
    assert_consistent(monkeypatch, recorded, before)


def test_score_episodes_records_the_graded_copies():
    eps = [Episode("t1", output="4", cost=Cost(10)), Episode("t2", output="5", cost=Cost(20))]
    report = score_episodes(eps, [TaskSpec("t1", gold="4"), TaskSpec("t2", gold="6")])
    assert [e.success for e in report.episodes] == [True, False]
    assert cost_report(report.episodes)["total_tokens"] == 30
    assert report.episodes._recorded is not None
    assert eps[0].success is None  # the caller's episodes are not graded in place
