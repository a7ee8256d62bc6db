"""Hostile input for the agent metrics and ROVER (issue 11, section 3), on both kernel backends.

* Trajectory scores do not depend on the rest of the batch, on ``threads``, on the backend or on
  the reader (compiled ``_core.CallPacker`` or its Python twin), also when argument values mix
  number types whose Python ``==`` is not transitive (``Decimal(1)``, ``1.0``, ``np.int64(1)``,
  ``np.int64(2**53 + 1)`` vs ``2.0**53`` vs ``2**53`` …): values compare by exact value.
* Weights: negative, NaN, infinite, too large and non-numeric importances are named errors.
* Bad argument values (recursive, too deep) are named errors giving the item, step and argument;
  NumPy arrays compare by shape and exact element values.
* ROVER: confidences, ``conf_weight`` and ``null_conf`` outside ``[0, 1]`` and a bare ``str``/
  ``bytes`` as the hypotheses are named errors, in the API and in both kernels.
"""

from __future__ import annotations

import math
import random
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scorekit import _kernels
from scorekit._interning import MAX_DEPTH, ValueInterner, exact_key
from scorekit._kernels import rover as rover_kernel
from scorekit.agents import Step, ToolCallMetric, ToolSpec, TrajectoryMetric
from scorekit.agents import trajectory as trajectory_module
from scorekit.agents.base import TaskSpec
from scorekit.base import FieldSpec, GraphGrammar, NodeType
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.qe import AgreementSignal, rover

#: Argument values whose Python ``==`` is not transitive across types, and their neighbours.
MIXED = [
    Decimal(1), 1.0, np.int64(1), Fraction(1), True, 1, np.float32(1.0), complex(1, 0),
    np.float32(0.1), 0.1, Decimal(0.1), Decimal("0.1"), Fraction(1, 10), np.float16(0.1),
    np.int64(2**53 + 1), 2.0**53, 2**53, 2**53 + 1, np.uint64(2**64 - 1), 2.0**64, 2**64 - 1,
    0, -0.0, np.float64(-0.0), Decimal("-0"), 10**400, Decimal("1e400"),
    math.nan, np.float64("nan"), Decimal("NaN"), math.inf, Decimal("Infinity"), np.float32("inf"),
    (1, 2.0), [np.int64(1), 2], (Decimal(1), 2), np.array([1, 2]), np.array([1.0, 2.0]),
    {"k": 1}, {"k": 1.0}, {"k": np.int64(1)}, {1, 2}, frozenset({1.0, 2.0}), "1", "a", None,
]


def _call(rng: random.Random):
    tool = rng.choice(["search", "open"])
    names = rng.sample(["q", "n", "m"], rng.randrange(1, 3))
    return Step(tool, {k: rng.choice(MIXED) for k in names})


def _pair(rng: random.Random):
    return ([_call(rng) for _ in range(rng.randrange(4))], [_call(rng) for _ in range(rng.randrange(4))])


def _alone(metric: TrajectoryMetric, pair) -> float:
    """Raw distance of ``pair`` scored on its own by the Python twin (the reference)."""
    prep = trajectory_module._Preparer(metric.canonicalizer, trajectory_module._Weights(None))
    return prep.score_pairs([pair[0]], [pair[1]], 1)[0][0]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_others=st.integers(0, 40))
def test_pair_score_independent_of_batch_threads_backend_and_reader(seed, n_others):
    rng = random.Random(seed)
    metric = TrajectoryMetric()
    target = _pair(rng)
    want = _alone(metric, target)
    batch = [_pair(rng) for _ in range(n_others)] + [target]
    rng.shuffle(batch)
    k = next(i for i, p in enumerate(batch) if p is target)
    preds, golds = [p for p, _ in batch], [g for _, g in batch]
    for backend in _kernels.BACKENDS:
        with _kernels.use_backend(backend):
            assert metric(*target).detail["raw_distance"] == want
            for threads in (1, 2, 0):
                got = metric.score_batch(preds, golds, threads=threads)
                assert got[k].detail["raw_distance"] == want, (backend, threads)


def test_compiled_reader_equals_twin_on_mixed_values(monkeypatch, backend):
    rng = random.Random(3)
    pairs = [_pair(rng) for _ in range(300)]
    preds, golds = [p for p, _ in pairs], [g for _, g in pairs]
    metric = TrajectoryMetric()
    compiled = [s.detail["raw_distance"] for s in metric.score_batch(preds, golds)]
    monkeypatch.setattr(_kernels, "compiled", lambda: None)
    twin = [s.detail["raw_distance"] for s in metric.score_batch(preds, golds)]
    assert compiled == twin
    # the twin pair by pair agrees too (no pair depends on the others)
    assert twin == [_alone(metric, p) for p in pairs]


def test_readers_give_identical_rows_on_mixed_values():
    """The compiled reader and the twin intern the same value ids and build the same rows (tool,
    mass, sorted (name, value, weight) arguments) for every step, whatever the order of values."""
    from test_call_packer import _compiled, _rows

    rng = random.Random(17)
    for _ in range(40):
        values = rng.sample(MIXED, len(MIXED))
        batch = [[Step(rng.choice(["s", "o"]), {k: rng.choice(values) for k in rng.sample("qnm", 2)})
                  for _ in range(rng.randrange(1, 6))] for _ in range(4)]
        native = _compiled(None, trajectory_module._Weights(None))
        python = trajectory_module._Preparer(None, trajectory_module._Weights(None))
        a, b = native.pack(batch), python.pack(batch)
        assert a[1].tolist() == b[1].tolist() and a[2] == b[2] and a[3] == b[3]
        assert [len(v) for v in native.interned()] == [len(v) for v in python.interned()]
        assert _rows(native.table(), a[0]) == _rows(python.table(), b[0])


@pytest.mark.parametrize("a, b, equal", [
    (Decimal(1), np.int64(1), True),          # raised TypeError inside ==
    (Decimal(1), 1.0, True),
    (np.int64(2**53 + 1), 2.0**53, False),    # numpy's == rounds; exact values differ
    (2.0**53, 2**53, True),
    (np.float32(0.1), 0.1, False),
    (np.float32(0.5), Fraction(1, 2), True),
    (np.uint64(2**64 - 1), 2.0**64, False),
    (10**400, Decimal("1e400"), True),
    (-0.0, 0, True),
    (math.nan, math.nan, False),
    (Decimal("NaN"), Decimal("NaN"), False),
    ((1, 2.0), [np.int64(1), 2], True),       # lists and tuples are the same to the agents
    (np.array([1, 2]), np.array([1.0, 2.0]), True),
    (np.array([1, 2]), np.array([[1, 2]]), False),
    (np.array([1, 2]), (1, 2), False),
    ({"k": np.int64(1)}, {"k": 1.0}, True),
    ({1, 2}, frozenset({1.0, 2.0}), True),
])
def test_values_compare_by_exact_value(backend, a, b, equal):
    metric = TrajectoryMetric()
    for x, y in ((a, b), (b, a)):
        pred, gold = [Step("t", {"v": x})], [Step("t", {"v": y})]
        raw = metric(pred, gold).detail["raw_distance"]
        assert raw == (0.0 if equal else 1.0)
        assert ToolCallMetric()(pred, gold).f1 == (1.0 if equal else 0.0)
        assert TrajectoryMetric(scheme="exact")(pred, gold).detail["raw_distance"] == (0.0 if equal else 4.0)


def test_exact_key_is_transitive_on_the_mixed_values():
    keys = [exact_key(v) for v in MIXED]
    for i, a in enumerate(keys):
        for j, b in enumerate(keys):
            if a == b:
                assert all((b == c) == (a == c) for c in keys), (MIXED[i], MIXED[j])


def test_nan_inside_a_container_matches_only_itself():
    nan = math.nan
    interner = ValueInterner()
    same = (nan,)
    assert interner.id(same) == interner.id((nan,))      # the same NaN object, as Python's ==
    assert interner.id((float("nan"),)) != interner.id(same)
    assert interner.id_shared(nan)[1] is False


@pytest.mark.parametrize("bad, message", [
    ("recursive", "contains itself"),
    ("deep", f"nested deeper than {MAX_DEPTH} levels"),
])
def test_bad_values_name_item_step_and_argument(monkeypatch, backend, bad, message):
    if bad == "recursive":
        value: list = [1]
        value.append(value)
    else:
        value = 0
        for _ in range(MAX_DEPTH + 5):
            value = [value]
    preds = [[Step("t", {"a": 1})], [Step("t", {"a": 1}), Step("t", {"q": 2, "a": value})]]
    golds = [[], []]
    errors = []
    for use_core in (True, False):
        if not use_core:
            monkeypatch.setattr(_kernels, "compiled", lambda: None)
        with pytest.raises(InvalidValueError, match=message) as info:
            TrajectoryMetric().score_batch(preds, golds)
        errors.append(str(info.value))
        assert info.value.item == 1 and info.value.field == "steps[1].args['a']"
    assert errors[0] == errors[1]
    assert errors[0].startswith("item 1: steps[1].args['a'] ")
    for scheme in ("exact", "any_order"):
        with pytest.raises(InvalidValueError, match=message):
            TrajectoryMetric(scheme=scheme).score_batch(preds, golds)
    with pytest.raises(InvalidValueError, match=r"pred\.steps\[1\]\.args\['a'\]"):
        ToolCallMetric()(preds[1], golds[1])


def _grammar(tool_importance=1.0, arg_importance=1.0) -> GraphGrammar:
    return GraphGrammar(node_types={"t": NodeType("t", fields={"a": FieldSpec("a", importance=arg_importance)},
                                                  importance=tool_importance)})


BAD_WEIGHTS = [(-5.0, InvalidValueError), (math.nan, InvalidValueError), (math.inf, InvalidValueError),
               (-math.inf, InvalidValueError), (10**400, InvalidValueError), ("heavy", InvalidTypeError)]


@pytest.mark.parametrize("weight, error", BAD_WEIGHTS)
def test_bad_grammar_weights_are_named_errors(monkeypatch, backend, weight, error):
    pred, gold = [Step("t", {"a": 1})], [Step("t", {"a": 2})]
    for use_core in (True, False):
        if not use_core:
            monkeypatch.setattr(_kernels, "compiled", lambda: None)
        for scheme in ("in_order", "exact", "any_order", "superset"):
            with pytest.raises(error, match=r"grammar weight of tool 't'"):
                TrajectoryMetric(scheme, grammar=_grammar(tool_importance=weight))(pred, gold)
            with pytest.raises(error, match=r"grammar weight of argument 'a' of tool 't'"):
                TrajectoryMetric(scheme, grammar=_grammar(arg_importance=weight))(pred, gold)
    for level in ("call", "arg"):
        with pytest.raises(error, match="grammar weight of"):
            ToolCallMetric(level, grammar=_grammar(tool_importance=weight, arg_importance=weight))(pred, gold)
    with pytest.raises(error, match=r"ToolSpec\('t'\)\.importance"):
        ToolSpec("t", importance=weight)
    with pytest.raises(error, match=r"ToolSpec\('t'\)\.params\['a'\]\.importance"):
        ToolSpec("t", params={"a": FieldSpec("a", importance=weight)})
    with pytest.raises(error, match=r"TaskSpec\('x'\)\.value"):
        TaskSpec("x", value=weight)


def test_weights_whose_sums_overflow_are_named_errors(backend):
    """Finite weights of 1e308 on three steps: the masses sum to inf, which is an error, not a score."""
    grammar = GraphGrammar(node_types={"t": NodeType("t", fields={"a": FieldSpec("a", importance=1e308)},
                                                     importance=1e308)})
    pred, gold = [Step("t", {"a": 1})] * 3, [Step("t", {"a": 2})] * 3
    for scheme in ("in_order", "exact", "any_order", "superset"):
        with pytest.raises(InvalidValueError, match="grammar weights are too large"):
            TrajectoryMetric(scheme, grammar=grammar)(pred, gold)
        with pytest.raises(InvalidValueError, match=r"^item 1: the grammar weights are too large"):
            TrajectoryMetric(scheme, grammar=grammar).score_batch([pred[:0], pred], [gold[:0], gold])
    for level in ("call", "arg"):
        with pytest.raises(InvalidValueError, match="grammar weights are too large"):
            ToolCallMetric(level, grammar=grammar)(pred, gold)


def test_valid_weights_still_score(backend):
    """Zero and large finite weights are accepted; the distance is the cost model's."""
    pred, gold = [Step("t", {"a": 1})], [Step("t", {"a": 2})]
    s = TrajectoryMetric(grammar=_grammar(tool_importance=0.0, arg_importance=1e300))(pred, gold)
    assert s.detail["raw_distance"] == 1e300 and s.detail["denom"] == 2e300
    assert ToolSpec("t", importance=0.0).weight == 0.0


# --------------------------------------------------------------------------- ROVER

@pytest.mark.parametrize("conf", [math.inf, -math.inf, 1e308, -0.5, 1.5, 10**400, math.nan])
def test_rover_rejects_confidences_outside_0_1(backend, conf):
    hyps = [[("a", 1.0), ("b", 1.0)], [("a", 1.0), ("c", conf)], [("a", 1.0), ("b", 1.0)]]
    with pytest.raises(InvalidValueError, match=r"hypotheses\[1\] token 1 \('c'\)"):
        rover(hyps)
    with pytest.raises(InvalidValueError, match=r"hypotheses\[1\] token 1"):
        AgreementSignal()(hyps)


@pytest.mark.parametrize("name", ["conf_weight", "null_conf"])
@pytest.mark.parametrize("value", [math.inf, -0.1, 1.01, 1e308, 10**400, math.nan])
def test_rover_rejects_weights_outside_0_1(backend, name, value):
    with pytest.raises(InvalidValueError, match=f"{name} must be finite and within"):
        rover(["a b", "a c"], **{name: value})
    with pytest.raises(InvalidValueError, match=name):
        AgreementSignal(**{name: value})(["a b", "a c"])


def test_rover_bounds_are_inclusive(backend):
    c = rover([[("a", 0.0)], [("a", 1.0)]], conf_weight=1.0, null_conf=0.0)
    assert c.tokens == ["a"] and c.slots[0].score == 0.5
    assert rover(["a", "b"], conf_weight=0.0, null_conf=1.0).n_engines == 2


@pytest.mark.parametrize("hyps", ["the cat sat", b"the cat sat", bytearray(b"ab")])
def test_rover_rejects_a_bare_string(backend, hyps):
    with pytest.raises(InvalidTypeError, match="hypotheses must be a collection of hypotheses"):
        rover(hyps)
    with pytest.raises(InvalidTypeError, match="hypotheses"):
        AgreementSignal()(hyps)


def test_rover_ocr_result_with_non_text_is_a_named_error(backend):
    """Found by tests/test_fuzz_structures.py: an OCR-result-shaped object whose ``text`` is an
    int reached ``int.split`` (AttributeError)."""
    class Result:
        text, blocks, mean_confidence = 5, None, 0.9

    with pytest.raises(InvalidTypeError, match=r"^hypotheses\[1\] must be a string, a list of tokens"):
        rover(["the cat", Result()])
    Result.text = None
    assert rover(["the cat", Result()]).text == "the cat"


@pytest.mark.parametrize("conf", [math.inf, -math.inf, 1e308, -0.5, 1.0000001])
def test_rover_kernels_reject_confidences_outside_0_1(backend, conf):
    tokens, offsets = np.array([0, 0], np.uint32), np.array([0, 1, 2], np.int64)
    with pytest.raises(ValueError, match=r"confs must be within \[0, 1\] \(token 1\)"):
        rover_kernel.align_vote(tokens, np.array([1.0, conf]), offsets, 0.5, 0.7)
    for cw, nc in ((conf, 0.7), (0.5, conf)):
        with pytest.raises(ValueError, match="must be within"):
            rover_kernel.align_vote(tokens, np.array([1.0, 1.0]), offsets, cw, nc)


def test_equal_argument_names_of_different_types_sum_in_one_order(monkeypatch, backend):
    """Names ``1``, ``1.0``, ``True`` and ``np.int64(1)`` are one name; its place among the other
    names (and so the order in which differing argument weights are summed) does not depend on
    which of them the batch met first (by type name, ``1.0`` sorted before a frozenset name and
    ``1`` after it)."""
    fs = frozenset({9})
    assert (0.7 + 0.2) + 0.1 != (0.7 + 0.1) + 0.2  # the two orders give different sums
    grammar = GraphGrammar(node_types={"t": NodeType("t", importance=1.0, fields={
        "a": FieldSpec("a", importance=0.7), 1: FieldSpec("1", importance=0.2),
        fs: FieldSpec("fs", importance=0.1)})})
    pair = ([Step("t", {"a": 1, 1: 1, fs: 1})], [Step("t", {"a": 2, 1: 2, fs: 2})])
    metric = TrajectoryMetric(grammar=grammar)
    want = metric(*pair).detail["raw_distance"]
    assert want == (0.7 + 0.2) + 0.1  # strings, then numbers, then other names
    for use_core in (True, False):
        if not use_core:
            monkeypatch.setattr(_kernels, "compiled", lambda: None)
        for leader in (np.int64(1), 1.0, True, 1):
            got = metric.score_batch([[Step("t", {leader: 0})], pair[0]], [[], pair[1]])
            assert got[1].detail["raw_distance"] == want, leader


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(
    st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.fractions(max_denominator=2**60),
    st.decimals(allow_nan=False), st.booleans(), st.complex_numbers(allow_nan=False, max_magnitude=1e300),
    st.sampled_from([2**53, 2**53 + 1, 0.1, -0.0, 10**400])), min_size=2, max_size=6))
def test_exact_key_is_python_eq_on_python_numbers(values):
    """On Python's own number types (whose ``==`` compares exact values) the rule is ``==``."""
    for a in values:
        for b in values:
            try:
                python = a == b
            except OverflowError:  # complex == huge int: Python cannot say; here they are unequal
                assert exact_key(a) != exact_key(b)
                continue
            assert (exact_key(a) == exact_key(b)) == python, (a, b)
            if python:
                assert hash(exact_key(a)) == hash(exact_key(b))
