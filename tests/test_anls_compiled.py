"""The compiled ANLS* path (``_core.AnlsBatch``: the reader of answer trees and the scorer of
``rust/kernels/src/anls.rs``) against its Python twin, the trees of ``scorekit.metrics.anls``
(``_Reader`` and ``_Scorer``): bit-identical values on thousands of seeded random nested answers,
one call per item and in batches, both interpreter summations; the same errors (class, message,
field, item, and which item fails first); the items it hands to Python; hostile input; the Rust
pairing solver against the Python ``assign`` on tie-heavy matrices; and a sample against the
``anls_star`` oracle."""

from __future__ import annotations

import builtins
import random
import warnings

import numpy as np
import pytest
import scorekit._kernels.bootstrap as bootstrap_kernels
import scorekit.metrics.anls as anls_module
from anls_star import anls_score
from scorekit import _kernels
from scorekit.errors import InputTooLargeError, InvalidValueError, ScorekitError
from scorekit.metrics.anls import MAX_DEPTH, MAX_LIST_CELLS, anls_scores, assign
from test_anls import random_answers, tie_heavy_costs
from test_bootstrap_kernels import neumaier_sum

_core = _kernels._core
pytestmark = [pytest.mark.skipif(_core is None, reason="the compiled core is not built"),
              pytest.mark.filterwarnings("ignore:Treating ground truth as a list of options")]


def outcome(preds: list, golds: list, threshold: float = 0.5):
    """The values of a batch, or the error it raises as (class, message, field, item)."""
    try:
        return anls_scores(preds, golds, threshold=threshold, threads=1).tolist()
    except ScorekitError as exc:
        return type(exc), str(exc), exc.field, exc.item
    except Exception as exc:  # noqa: BLE001 - any other error must match too
        return type(exc), str(exc)


def both(preds: list, golds: list, monkeypatch: pytest.MonkeyPatch, threshold: float = 0.5) -> tuple:
    """The outcome of the compiled path and of the Python twin."""
    compiled = outcome(preds, golds, threshold)
    with monkeypatch.context() as patch:
        patch.setattr(_kernels, "compiled", lambda: None)
        python = outcome(preds, golds, threshold)
    return compiled, python


def fallback_of(preds: list, golds: list) -> list:
    return _core.AnlsBatch(preds, golds, MAX_DEPTH, MAX_LIST_CELLS).fallback


# ---------------------------------------------------------------------------------------------------
# Random nested answers.


@pytest.mark.parametrize("seed, width", [(1, 3), (2, 5), (3, 7)])
def test_random_nested_answers_bit_for_bit(seed, width, monkeypatch):
    """Every item alone (values and errors) and the valid items as one batch, at four thresholds."""
    cases = random_answers(seed, 1_500, width=width)
    singles = [both([p], [g], monkeypatch) for p, g in cases]
    assert all(compiled == python for compiled, python in singles)
    valid = [case for case, (value, _) in zip(cases, singles) if isinstance(value, list)]
    assert len(valid) > 1_400 and len(cases) - len(valid) > 10  # errors exercised too
    preds, golds = [p for p, _ in valid], [g for _, g in valid]
    assert fallback_of(preds, golds) == []  # the compiled path took every valid item
    for threshold in (0.0, 0.5, 0.8, 1.5):
        compiled, python = both(preds, golds, monkeypatch, threshold)
        assert compiled == python and len(compiled) == len(valid)
        if threshold == 0.5:
            assert compiled == [value for value, _ in singles if isinstance(value, list) for value in value]


def test_batches_with_errors_fail_on_the_same_item(monkeypatch):
    cases = random_answers(41, 2_000, width=4)
    failed = 0
    for start in range(0, 2_000, 100):
        chunk = cases[start:start + 100]
        compiled, python = both([p for p, _ in chunk], [g for _, g in chunk], monkeypatch)
        assert compiled == python
        if isinstance(compiled, tuple):
            failed += 1
            assert compiled[3] is not None  # the item is named
    assert failed > 5


def test_equal_to_the_oracle_on_a_sample():
    cases = [(p, g) for p, g in random_answers(43, 600, width=4)]
    expected = []
    for p, g in cases:
        try:
            expected.append(anls_score(g, p))
        except ValueError:
            expected.append(None)
    valid = [(c, e) for c, e in zip(cases, expected) if e is not None]
    preds, golds = [p for (p, _), _ in valid], [g for (_, g), _ in valid]
    assert anls_scores(preds, golds).tolist() == [e for _, e in valid]


def _sum_312(values, start=0):
    """CPython 3.12's ``sum``: floats added with Neumaier's compensation."""
    values = list(values)
    if not any(isinstance(x, float) for x in values):  # sizes: exact integers either way
        return builtins.sum(values, start)
    return neumaier_sum([float(start), *values])


def test_compensated_summation_of_newer_interpreters(monkeypatch):
    """With ``sum`` compensated (CPython >= 3.12) on both paths, the values still agree."""
    cases = [(p, g) for p, g in random_answers(47, 1_500, width=5)]
    cases = [c for c in cases if isinstance(both([c[0]], [c[1]], monkeypatch)[0], list)]
    preds, golds = [p for p, _ in cases], [g for _, g in cases]
    plain = outcome(preds, golds)
    monkeypatch.setattr(bootstrap_kernels, "COMPENSATED", True)
    monkeypatch.setattr(anls_module, "sum", _sum_312, raising=False)
    compiled, python = both(preds, golds, monkeypatch)
    assert compiled == python
    assert compiled != plain  # the summation mode reaches some value


# ---------------------------------------------------------------------------------------------------
# What the compiled reader hands to Python, and hostile input.


class Loud(str):
    def __str__(self) -> str:
        return "LOUD"


class Touchy(str):
    def __eq__(self, other):
        raise RuntimeError("no comparing")

    __hash__ = str.__hash__


class Counting(list):
    pass


def test_unusual_items_go_to_the_python_reader():
    nan = float("nan")
    preds = ["a", Loud("a"), ["x", 10 ** 5000], ("a",), {(1, 2): "a"}, {nan: "a"}, "a", ["a", "b"],
             Counting(["a"]), {"k": "a\ud800"}, {"k": b"a"}, "a", "a", {"k": 10 ** 30}]
    golds = ["a", "a", ["x", "1"], "a", {(1, 2): "a"}, {nan: "a"}, [], ["a", "b", 3], ["a"],
             {"k": "a"}, {"k": "a"}, ["a", Loud("b")], ["a", "b"], {"k": 1e30}]
    assert fallback_of(preds, golds) == [1, 2, 3, 4, 5, 6, 8, 9, 10, 11]
    assert _core.AnlsBatch(preds, golds, MAX_DEPTH, MAX_LIST_CELLS).compat == 1  # item 12
    assert fallback_of(tuple(preds), Counting(golds)) == list(range(len(golds)))


@pytest.mark.parametrize("pred, gold", [
    (["x", Loud("abc")], ["abc", "x"]),
    ({"k": Loud("a")}, {"k": "LOUD"}),
    ([1, 1.0, True, 10 ** 20, 1e20, 2 ** 53 + 1], [1e20, 10 ** 20, 1, 2.0 ** 53, True, 1.0]),
    ([float("nan"), float("inf"), -0.0], [float("inf"), float("nan"), 0.0]),
    ({1: "a", 2.5: "b", None: "c"}, {True: "a", 2.5: "b", None: ["c"]}),
    ({1.0: "a", 0: "b"}, {1: ("a", "x"), False: "b", "0": "b"}),
    ({-0.0: "a", 2 ** 63: "b"}, {0: "a", float(2 ** 63): "b"}),
    ([{"k": 10 ** 30}, {"k": "x"}], [{"k": 1e30}, {"k": float(10 ** 30)}]),
    ([[[]], {}, None, ""], [[], [{}], "", None]),
])
def test_numbers_keys_and_subclasses_agree(pred, gold, monkeypatch):
    compiled, python = both([pred] * 3, [gold] * 3, monkeypatch)
    assert compiled == python
    assert compiled == [anls_score(gold, pred)] * 3


def test_hostile_nesting_and_sizes(monkeypatch):
    deep_list, deep_dict = "x", "x"
    for _ in range(10_000):
        deep_list, deep_dict = [deep_list], {"k": deep_dict}
    looped: list = ["a"]
    looped.append(looped)
    looped_dict: dict = {"a": "x"}
    looped_dict["b"] = looped_dict
    ok = MAX_DEPTH * ["a"]
    for name, pred, gold in [("deep list", deep_list, "x"), ("deep dict", "x", deep_dict),
                             ("loop", looped, ["a"]), ("dict loop", {"a": "x"}, looped_dict)]:
        compiled, python = both(["a", pred], ["a", gold], monkeypatch)
        assert compiled == python, name
        assert compiled[0] is InputTooLargeError and compiled[2:] == ("answer", 1)
    nested = ok[0]
    for _ in range(MAX_DEPTH - 1):
        nested = [nested]
    assert both([nested], [nested], monkeypatch) == ([1.0], [1.0])  # just within the limit


def test_list_comparisons_beyond_the_limit(monkeypatch):
    """A nested one fails while scoring (no item named), after the earlier items' own errors."""
    big_gold, big_pred = {"k": ["a"] * 2_001}, {"k": ["b"] * 2_000}
    preds, golds = ["a", big_pred, "b"], ["a", big_gold, "b"]
    compiled, python = both(preds, golds, monkeypatch)
    assert compiled == python == (InputTooLargeError, compiled[1], "list", None)
    assert "pairs 2001 gold items with 2000 predicted items" in compiled[1]
    # a reading error of a later item comes first; a top-level list of plain answers names its item
    assert both([big_pred, ("t",)], [big_gold, "t"], monkeypatch)[0][2:] == (None, 1)
    flat = both(["a", ["a"] * 2_001], ["a", ["b"] * 2_001], monkeypatch)
    assert flat[0] == flat[1] and flat[0][2:] == ("list", 1)


def test_comparisons_that_raise_and_odd_leaves(monkeypatch):
    """An ``__eq__`` that raises, an int beyond the digit limit of ``str()``, lone surrogates."""
    touchy = Touchy("a")
    compiled, python = both(["a", [touchy, "b"]], [["a"], ["a", "b"]], monkeypatch)
    assert compiled == python and compiled[0] is RuntimeError
    compiled, python = both([{"k": [10 ** 5000]}], [{"k": ["1"]}], monkeypatch)
    assert compiled == python and compiled[0] is InvalidValueError and "cannot be turned into text" in compiled[1]
    compiled, python = both([{"k": "ab\ud800c"}, ["\udfff"]], [{"k": "ab\ud800d"}, ["\udfff", "x"]], monkeypatch)
    assert compiled == python == [0.75, 0.5]


def test_nan_leaves_as_the_same_object(monkeypatch):
    nan = float("nan")
    preds = [[nan, "a"], {"k": nan}, [nan], [[nan], [float("nan")]]]
    golds = [[nan, "a"], {"k": nan}, ([nan], ["x"]), [[float("nan")], [nan]]]
    compiled, python = both(preds, golds, monkeypatch)
    assert compiled == python == [anls_score(g, p) for p, g in zip(preds, golds)]


def test_mutating_str_during_reading_leaves_the_compiled_items_alone(monkeypatch):
    """A ``__str__`` of an item the Python reader takes empties another item's answers: both paths
    score the answers as they were read."""
    shared_gold, shared_pred = {"k": ["a", "b"]}, {"k": ["b", "a"]}

    class Vandal(str):
        def __str__(self) -> str:
            shared_gold["k"].clear()
            shared_pred.clear()
            return "v"

    def run():
        shared_gold["k"][:] = ["a", "b"]
        shared_pred.update(k=["b", "a"])
        return outcome([shared_pred, Vandal("v")], [shared_gold, "v"])

    compiled = run()
    with monkeypatch.context() as patch:
        patch.setattr(_kernels, "compiled", lambda: None)
        python = run()
    assert compiled == python == [1.0, 1.0]


def test_backends(backend, monkeypatch):
    """On the Numba backend every item goes through the Python trees; the values are the same."""
    calls = []
    spy = type("Spy", (), {"AnlsBatch": lambda self, *args: calls.append(1) or _core.AnlsBatch(*args),
                           "__getattr__": lambda self, name: getattr(_core, name)})()
    dispatch = _kernels.compiled
    monkeypatch.setattr(_kernels, "compiled", lambda: spy if dispatch() is not None else None)
    cases = [(p, g) for p, g in random_answers(53, 400) if isinstance(outcome([p], [g]), list)]
    values = anls_scores([p for p, _ in cases], [g for _, g in cases], threads=1).tolist()
    assert bool(calls) == (backend == "rust")
    monkeypatch.setattr(_kernels, "compiled", lambda: None)
    assert anls_scores([p for p, _ in cases], [g for _, g in cases], threads=1).tolist() == values


def test_compatibility_mode_warns_once_from_either_reader(monkeypatch):
    preds, golds = ["abc", "abc", Loud("x")], [["abc", "xyz"], ["ab"], ["LOUD"]]
    with pytest.warns(UserWarning, match="list of options") as record:
        values = anls_scores(preds, golds).tolist()
    assert len(record) == 1 and fallback_of(preds, golds) == [2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert both(preds, golds, monkeypatch) == (values, values)


# ---------------------------------------------------------------------------------------------------
# The pairing solver.


def test_rust_assign_equals_python_assign_on_tie_heavy_matrices():
    rnd = random.Random(12)
    for _ in range(5_000):
        costs = tie_heavy_costs(rnd, 9)
        assert _core.anls_assign(np.array(costs)) == assign(costs)
    assert _core.anls_assign(np.zeros((0, 3))) == [] == assign([])
    assert _core.anls_assign(np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]])) == [(0, 1), (1, 0), (2, 2)]


def test_long_lists_of_nested_items(monkeypatch):
    """Lists of up to 9 line items (the solver on larger tie-heavy matrices, nested results)."""
    r = random.Random(59)
    preds, golds = [], []
    for _ in range(300):
        items = [{"d": r.choice(["a", "b", "ab", ""]), "n": r.choice(["1", "2", 1, None])}
                 for _ in range(r.randint(0, 9))]
        pred = [dict(x) for x in items if r.random() < 0.8] + [{"d": "a"}] * r.randint(0, 2)
        r.shuffle(pred)
        golds.append({"items": items, "t": ("1", "one")})
        preds.append({"items": pred, "t": r.choice(["1", "one", "x"])})
    compiled, python = both(preds, golds, monkeypatch)
    assert compiled == python
