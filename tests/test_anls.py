"""ANLS* (scorekit.metrics.anls, issue #17) against the oracles ``anls_star`` 1.0.1 and the reference
kit's ``ek.metrics.anls``: the spec's vectors (ek-metrics-ocr.md §13.2, copied here), ek's
docstring examples, seeded differential tests on thousands of random nested answers, the pairing
solver against ``munkres``, properties, and bad input."""

from __future__ import annotations

import math
import random
import warnings

import munkres
import pytest
from anls_star import anls_score
from doc_examples import run_python_blocks
from ek.metrics.anls import AnlsMetric as EkAnlsMetric
from ek_doctests import run_ek_doctests
from hypothesis import given, settings
from hypothesis import strategies as st
from munkres._native import forced_off

import scorekit.metrics.anls as anls_module
from scorekit.base import Score
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.metrics.anls import MAX_DEPTH, AnlsMetric, anls_scores, assign

M = AnlsMetric()

# ---------------------------------------------------------------------------------------------------
# Spec vectors: ek-metrics-ocr.md §13.1 (doctests) and §13.2 (AnlsMetric, anls_star 1.0.1).
# (pred, gold, expected value)
SPEC_VECTORS = [
    ("Hello Wrld", "Hello World", 1 - 1 / 11),
    ("Helo Wrld", "Hello World", 1 - 2 / 11),
    ("cat", "cats", 0.75),
    ("cats", "cat", 0.75),
    ({"name": "Acme", "city": "Lyon"}, {"name": "Acme", "city": "Paris"}, 0.5),
    ({"name": "Acme", "city": "Paris"}, {"name": "Acme", "city": "Paris"}, 1.0),
    ({"items": ["cat", "dog"]}, {"items": ["dog", "cat"]}, 1.0),
    ({"a": "x"}, {"a": "x", "b": "y"}, 0.5),
    ({"a": "x", "b": "y"}, {"a": "x"}, 0.5),
    ({"a": "x", "b": None}, {"a": "x"}, 0.5),  # a hallucinated empty key still counts (§12 quirk 5)
    (None, None, 1.0),
    ("x", None, 0.0),
    (None, "x", 0.0),
    ("", None, 1.0),
    (["a", "b", "c"], ["a", "b"], 2 / 3),
    (["a"], ["a", "b"], 0.5),
    ("hello", ("hello", "world"), 1.0),
    ("HELLO  world", "hello world", 1.0),
    (123, "123", 1.0),
    (True, "True", 1.0),
    ("abc", ["abc", "xyz"], 1.0),  # compatibility mode: a gold list of strings against a string
    ([], [], 1.0),
    ({}, {}, 1.0),
    ("", "", 1.0),
    ({"a": "hello!", "b": ["a", "test", "this", "be"]},
     {"a": ("hello", "world"), "b": ["this", "is", "a", "test"]}, 0.7666666666666667),
]


@pytest.mark.filterwarnings("ignore:Treating ground truth as a list of options")
@pytest.mark.parametrize("pred, gold, expected", SPEC_VECTORS)
def test_spec_vectors(pred, gold, expected):
    score = M(pred, gold)
    assert score.value == pytest.approx(expected, abs=1e-12)
    assert score.value == anls_score(gold, pred)
    assert score == Score(score.value, metric="anls",
                          detail={"anls": score.value, "threshold": 0.5, "higher_is_better": True})


def test_threshold_is_a_plain_parameter():
    assert AnlsMetric(threshold=0.9)("Helo Wrld", "Hello World").value == 0.0
    assert AnlsMetric(threshold=0.5)("Helo Wrld", "Hello World").value == pytest.approx(0.818, abs=1e-3)
    assert AnlsMetric(threshold=1.0)("Hello Wrld", "Hello World").value == 0.0
    assert AnlsMetric(threshold=0.75)("cat", "cats").value == 0.75  # equal to the threshold is kept
    assert AnlsMetric(threshold=1.5)("cat", "cat").value == 0.0  # even a perfect leaf is below it
    assert AnlsMetric(threshold=0.0)("abc", "xyz").value == 0.0
    assert AnlsMetric(threshold=0.9)("Helo Wrld", "Hello World").detail["threshold"] == 0.9


def test_corpus_aggregate_is_the_mean():
    scores = [M("cat", "cat"), M("dg", "dog")]
    assert M.aggregate(scores) == pytest.approx((1 + 2 / 3) / 2)
    assert math.isnan(M.aggregate([]))
    assert M.aggregate([Score(0.25), Score(0.75, detail={"anls": 0.5})]) == 0.375
    rnd = random.Random(3)
    for _ in range(200):
        values = [Score(rnd.random(), detail={"anls": rnd.random()}) for _ in range(rnd.randint(1, 9))]
        assert M.aggregate(values) == EkAnlsMetric().aggregate(values)


def test_name_and_registry_shape():
    assert AnlsMetric.name == "anls" and repr(AnlsMetric(threshold=0.6)) == "AnlsMetric(threshold=0.6)"


def test_ek_docstring_examples_run_on_scorekit():
    import ek.metrics.anls as ek_anls

    results = run_ek_doctests(ek_anls, anls_module)
    assert sum(r.attempted for r in results.values()) >= 4
    assert not {name: r.failed for name, r in results.items() if r.failed}


def test_docs_page_runs():
    assert run_python_blocks("anls.md", min_blocks=3) >= 12


# ---------------------------------------------------------------------------------------------------
# Differential tests on random nested answers.
WORDS = ["a", "b", "ab", "cat", "cats", "dog", "Dog", "DOG ", "hello", "hello world", "helo", "", " ",
         "x", "xy", "1", "1.0", "true", "None", "ünïcode", "ß", "İ"]


def _leaf(r: random.Random):
    c = r.random()
    if c < 0.7:
        return r.choice(WORDS)
    if c < 0.8:
        return r.choice([0, 1, 2, 10, -1])
    if c < 0.9:
        return r.choice([1.0, 0.5, 2.5, float("nan"), float("inf")])
    return r.choice([True, False])


def _answer(r: random.Random, depth: int, gold: bool, width: int):
    c = r.random()
    if depth <= 0 or c < 0.35:
        return _leaf(r)
    if c < 0.42:
        return None
    if c < 0.62:
        return [_answer(r, depth - 1, gold, width) for _ in range(r.randint(0, width))]
    if c < 0.82:
        return {r.choice("abcd"): _answer(r, depth - 1, gold, width) for _ in range(r.randint(0, 3))}
    if gold:
        return tuple(_answer(r, depth - 1, gold, width) for _ in range(r.randint(1, 3)))
    return [_answer(r, depth - 1, gold, width) for _ in range(r.randint(0, width))]


def _mutate(r: random.Random, x, width: int):
    while isinstance(x, tuple):
        x = r.choice(x)
    if r.random() < 0.15:
        return _answer(r, 2, False, width)
    if isinstance(x, list):
        y = [_mutate(r, v, width) for v in x]
        r.shuffle(y)
        if y and r.random() < 0.3:
            y.pop()
        if r.random() < 0.3:
            y.append(_answer(r, 1, False, width))
        return y
    if isinstance(x, dict):
        y = {k: _mutate(r, v, width) for k, v in x.items() if r.random() < 0.85}
        if r.random() < 0.3:
            y[r.choice("abcde")] = _answer(r, 1, False, width)
        return y
    if isinstance(x, str) and x and r.random() < 0.5:
        i = r.randrange(len(x))
        return x[:i] + r.choice("xyz") + x[i + 1:]
    return x


def random_answers(seed: int, n: int, width: int = 3) -> list:
    """``n`` seeded (pred, gold) pairs: nested strings, numbers, booleans, None, lists, dicts and (in
    the gold) tuples; a prediction is a mutated copy of its gold (it shares leaf objects with it,
    NaN included) or an unrelated answer, and sometimes holds a tuple (an error)."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        gold = _answer(r, 3, True, width)
        pred = _mutate(r, gold, width) if r.random() < 0.8 else _answer(r, 3, r.random() < 0.1, width)
        out.append((pred, gold))
    return out


def _reference(pred, gold):
    try:
        return anls_score(gold, pred)
    except ValueError as exc:
        return ("error", str(exc)[:40])


def _ours(pred, gold):
    try:
        return M(pred, gold).value
    except ValueError as exc:
        return ("error", str(exc)[:40])


@pytest.mark.filterwarnings("ignore:Treating ground truth as a list of options")
def test_differential_random_nested_answers():
    """Every value (bit for bit) and every error equals anls_star's, one call per pair and as one batch."""
    cases = random_answers(seed=17, n=4_000)
    expected = [_reference(p, g) for p, g in cases]
    assert [_ours(p, g) for p, g in cases] == expected
    valid = [(p, g) for (p, g), e in zip(cases, expected) if not isinstance(e, tuple)]
    assert 3_800 < len(valid) < 4_000  # errors are exercised too
    batch = anls_scores([p for p, _ in valid], [g for _, g in valid]).tolist()
    assert batch == [e for e in expected if not isinstance(e, tuple)]


@pytest.mark.filterwarnings("ignore:Treating ground truth as a list of options")
def test_differential_long_lists_against_munkres_python_solver():
    """Lists of up to 7 items (matrices of 16 cells and more): equal to anls_star on munkres's
    pure-Python solver, whose tie-breaking scorekit reproduces."""
    cases = random_answers(seed=23, n=1_200, width=7)
    with forced_off():
        expected = [_reference(p, g) for p, g in cases]
    assert [_ours(p, g) for p, g in cases] == expected


@pytest.mark.filterwarnings("ignore:Treating ground truth as a list of options")
def test_differential_with_munkres_native_kernel_on_tie_free_shapes():
    """With munkres's native kernel (anls_star's default for matrices of 16+ cells), lists of plain
    answers still agree: their value does not depend on how ties are broken."""
    r = random.Random(5)
    preds, golds = [], []
    for _ in range(1_500):
        gold = [r.choice(WORDS) for _ in range(r.randint(0, 8))]
        pred = [_mutate(r, x, 3) for x in gold if r.random() < 0.8] + [r.choice(WORDS)] * r.randint(0, 2)
        r.shuffle(pred)
        preds.append(pred)
        golds.append(gold)
    expected = [anls_score(g, p) for p, g in zip(preds, golds)]
    assert anls_scores(preds, golds).tolist() == pytest.approx(expected, abs=1e-12)


@pytest.mark.filterwarnings("ignore:Treating ground truth as a list of options")
def test_differential_with_thresholds():
    cases = [(p, g) for p, g in random_answers(seed=29, n=600) if not isinstance(_reference(p, g), tuple)]
    for threshold in (0.0, 0.3, 0.7, 1.0):
        ek_metric = EkAnlsMetric(threshold=threshold)
        expected = [ek_metric(p, g).value for p, g in cases]
        assert anls_scores([p for p, _ in cases], [g for _, g in cases], threshold=threshold).tolist() == expected


@pytest.mark.filterwarnings("ignore:Treating ground truth as a list of options")
def test_batch_matches_single_calls_on_the_common_shapes():
    r = random.Random(11)
    preds, golds = [], []
    for _ in range(3_000):
        c = r.random()
        if c < 0.25:
            gold = r.choice(WORDS)
            pred = _mutate(r, gold, 3)
        elif c < 0.5:
            gold = tuple(r.choice(WORDS) for _ in range(r.randint(1, 4)))
            pred = _mutate(r, r.choice(gold), 3)
        elif c < 0.75:
            gold = [_leaf(r) for _ in range(r.randint(0, 5))]
            pred = _mutate(r, gold, 3)
        else:
            gold = {k: _leaf(r) for k in r.sample("abcdef", r.randint(0, 4))}
            pred = _mutate(r, gold, 3)
        if not isinstance(_reference(pred, gold), tuple):  # an unrelated answer may be invalid
            preds.append(pred)
            golds.append(gold)
    assert len(preds) > 2_900
    batch = anls_scores(preds, golds).tolist()
    assert batch == [M(p, g).value for p, g in zip(preds, golds)]
    assert batch == [anls_score(g, p) for p, g in zip(preds, golds)]


def test_long_answers():
    r = random.Random(2)
    gold = " ".join(r.choice(["invoice", "total", "paris", "amount"]) for _ in range(90))
    pred = "".join(r.choice("xyz") if r.random() < 0.05 else ch for ch in gold)
    golds, preds = [gold, [gold, "short"], {"page": gold}], [pred, ["short", pred], {"page": pred}]
    expected = [anls_score(g, p) for p, g in zip(preds, golds)]
    assert anls_scores(preds, golds).tolist() == expected
    assert anls_scores(preds * 30, golds * 30).tolist() == expected * 30  # the batch kernel path


@pytest.mark.filterwarnings("ignore:Treating ground truth as a list of options")
def test_batch_on_both_kernel_backends(backend):
    cases = [(p, g) for p, g in random_answers(seed=31, n=800) if not isinstance(_reference(p, g), tuple)]
    preds, golds = [p for p, _ in cases], [g for _, g in cases]
    assert anls_scores(preds, golds, threads=1).tolist() == [anls_score(g, p) for p, g in cases]


def test_lone_surrogates_are_scored_as_code_points():
    pred, gold = "ab\ud800c", "ab\ud800d"
    assert M(pred, gold).value == anls_score(gold, pred) == 0.75
    assert anls_scores([pred] * 100, [gold] * 100).tolist() == [0.75] * 100


def test_nan_and_infinite_numbers_are_leaves():
    nan = float("nan")
    assert M(nan, nan).value == 1.0 and M("NaN", nan).value == 1.0 and M(float("inf"), "inf").value == 1.0
    assert M([nan, 1.0], [nan, "1.0"]).value == anls_score([nan, "1.0"], [nan, 1.0]) == 1.0


def test_compatibility_mode_warns():
    with pytest.warns(UserWarning, match="list of options"):
        assert M("abc", ["abc", "xyz"]).value == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert M(["abc"], ["abc", "xyz"]).value == 0.5  # a list prediction: no compatibility mode


# ---------------------------------------------------------------------------------------------------
# The pairing solver.


def tie_heavy_costs(rnd: random.Random, max_side: int) -> list:
    """A random cost matrix as the list pairing builds one: the top profit minus each profit, the
    profits drawn from a few similarities (many ties), some nudged up as exact matches are."""
    values = [0.0, 1.0, 2 / 3, 0.5, 0.75, 0.8, 5 / 7, 1 / 11, 1 / 3]
    rows, cols = rnd.randint(1, max_side), rnd.randint(1, max_side)
    profits = [[rnd.choice(values) for _ in range(cols)] for _ in range(rows)]
    for row in profits:
        for j in range(cols):
            if rnd.random() < 0.15:
                row[j] = math.nextafter(row[j], math.inf)
    top = max(map(max, profits))
    return [[top - x for x in row] for row in profits]


def test_assign_equals_munkres_python_solver_on_tie_heavy_matrices():
    rnd = random.Random(12)
    with forced_off():
        for _ in range(3_000):
            costs = tie_heavy_costs(rnd, 8)
            assert assign(costs) == munkres.Munkres().compute(costs)


def test_assign_is_optimal():
    import itertools

    rnd = random.Random(4)
    for _ in range(500):
        rows, cols = rnd.randint(1, 5), rnd.randint(1, 5)
        costs = [[rnd.randint(0, 9) for _ in range(cols)] for _ in range(rows)]
        pairs = assign(costs)
        assert len(pairs) == min(rows, cols) and pairs == sorted(pairs)
        assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
        if rows <= cols:
            best = min(sum(costs[i][j] for i, j in enumerate(p)) for p in itertools.permutations(range(cols), rows))
        else:
            best = min(sum(costs[i][j] for j, i in enumerate(p)) for p in itertools.permutations(range(rows), cols))
        assert sum(costs[i][j] for i, j in pairs) == best
    assert assign([]) == [] and assign([[]]) == []


# ---------------------------------------------------------------------------------------------------
# Properties.

leaves = st.one_of(st.text(max_size=8), st.integers(-5, 5), st.booleans(), st.floats(allow_nan=False))
answers = st.recursive(st.one_of(leaves, st.none()),
                       lambda inner: st.one_of(st.lists(inner, max_size=4),
                                               st.dictionaries(st.sampled_from("abc"), inner, max_size=3)),
                       max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(answers, answers)
def test_property_bounded_and_equal_to_oracle(pred, gold):
    if isinstance(gold, list) and isinstance(pred, str) and all(isinstance(x, str) for x in gold):
        return  # compatibility mode, tested above
    value = M(pred, gold).value
    assert 0.0 <= value <= 1.0
    assert value == anls_score(gold, pred)


@settings(max_examples=100, deadline=None)
@given(answers)
def test_property_an_answer_matches_itself(answer):
    assert M(answer, answer).value == 1.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=6), max_size=6), st.randoms(use_true_random=False))
def test_property_list_order_does_not_matter(items, rnd):
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert M(shuffled, items).value == 1.0


# ---------------------------------------------------------------------------------------------------
# Bad input: the reference's errors (ValueError and its wording), never a crash.


@pytest.mark.parametrize("pred, gold, message", [
    (("a", "b"), "a", "Tuples are reserved for 1-of-n ground truths. Use lists as containers in predictions."),
    ([("a",)], ["a"], "Tuples are reserved for 1-of-n ground truths"),
    ("a", (), "Expected at least 1 valid ground truth option"),
    ("a", ("a", ()), "Expected at least 1 valid ground truth option"),
    ("x", [], "Expected at least 1 valid ground truth option"),  # compatibility mode on an empty list
    (object(), "a", "Found unsupported type <class 'object'>"),
    ("a", b"a", "Found unsupported type <class 'bytes'>"),
    ({"k": {1, 2}}, {"k": "x"}, "Found unsupported type <class 'set'>"),
])
def test_bad_input_raises_the_reference_errors(pred, gold, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as ours:
            M(pred, gold)
        with pytest.raises(ValueError) as theirs:
            anls_score(gold, pred)
    assert isinstance(ours.value, InvalidValueError)
    assert str(ours.value).startswith(message) and str(theirs.value).startswith(message)


def test_bad_input_in_a_batch_names_the_item():
    with pytest.raises(InvalidValueError, match=r"^item 2: Tuples are reserved"):
        anls_scores(["a", "b", ("c",)], ["a", "b", "c"])
    with pytest.raises(ValueError, match="preds has 2 items but golds has 1"):
        anls_scores(["a", "b"], ["a"])
    with pytest.raises(InvalidTypeError, match="preds must be a sequence of answers"):
        anls_scores("abc", ["a"])
    assert anls_scores([], []).tolist() == []
    assert anls_scores(iter(["a"]), iter([("a", "b")])).tolist() == [1.0]


@pytest.mark.parametrize("threshold", [float("nan"), "0.5", None, True])
def test_bad_threshold(threshold):
    with pytest.raises((InvalidValueError, InvalidTypeError), match="threshold"):
        AnlsMetric(threshold=threshold)
    with pytest.raises((InvalidValueError, InvalidTypeError), match="threshold"):
        anls_scores(["a"], ["a"], threshold=threshold)


def test_hostile_structures_raise_instead_of_crashing():
    deep = "x"
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(InputTooLargeError, match="nests deeper"):
        M(deep, deep)
    looped: list = []
    looped.append(looped)
    with pytest.raises(InputTooLargeError):
        M(looped, ["x"])
    with pytest.raises(ValueError):
        M(10 ** 5000, "1")  # beyond Python's digit limit for str()
    with pytest.raises(InputTooLargeError, match="comparisons"):
        M(["a"] * 2_001, ["b"] * 2_001)


def test_one_row_or_one_column_lists_take_the_first_best_pair():
    """Lists where one side has one item (scored without the pairing), ties and exact matches
    included, against the oracle."""
    r = random.Random(23)
    items = ["ab", "abc", "abd", "AB", "ab ", "x", "", 1, 1.0, True]
    preds, golds = [], []
    for _ in range(2_000):
        one, many = [r.choice(items)], [r.choice(items) for _ in range(r.randint(1, 5))]
        gold, pred = (one, many) if r.random() < 0.5 else (many, one)
        preds.append(pred)
        golds.append(gold)
    assert anls_scores(preds, golds).tolist() == [anls_score(g, p) for p, g in zip(preds, golds)]
    for threshold in (0.0, 1.0, 1.5):
        ek_metric = EkAnlsMetric(threshold=threshold)
        expected = [ek_metric(p, g).value for p, g in zip(preds, golds)]
        assert anls_scores(preds, golds, threshold=threshold).tolist() == expected


class _Shouting(str):
    """A ``str`` whose ``str()`` differs from its value."""

    def __str__(self) -> str:
        return "SHOUT"


def test_str_subclasses_are_read_through_str():
    loud = _Shouting("abc")
    preds = ["x", "abc", loud, [loud], {"k": loud}, ("abc", loud), loud]
    golds = ["x", "abc", "abc", ["abc"], {"k": "abc"}, "abc", "shout"]
    preds[5], golds[5] = "abc", ("abc", [loud])  # a nested answer next to the flat ones
    expected = [anls_score(g, p) for p, g in zip(preds, golds)]
    assert expected[2:5] == [0.0, 0.0, 0.0] and expected[6] == 1.0
    assert anls_scores(preds, golds).tolist() == expected
    assert anls_scores(preds * 20, golds * 20).tolist() == expected * 20  # the batch kernel path


def test_numbers_and_strings_with_the_same_text_share_their_similarities():
    preds = [1, "1", True, 1.0, [1, "1"], {"a": True}, 1, -0.0]
    golds = ["1", 1, "true", "1.0", ["1", 1.0], {"a": 1}, ("1", True), 0.0]
    expected = [anls_score(g, p) for p, g in zip(preds, golds)]
    assert anls_scores(preds, golds).tolist() == expected
    assert anls_scores(preds * 20, golds * 20).tolist() == expected * 20


def test_obvious_pairings_equal_the_solvers():
    """``_distinct_cheapest`` (the shortcut of lists of plain answers) returns a pairing only when
    it is the unique optimum, and then exactly the pairs ``assign`` returns."""
    import itertools
    import random

    from scorekit.metrics.anls import _distinct_cheapest, assign

    rng = random.Random(23)
    shortcuts = 0
    for _ in range(3000):
        n_rows, n_cols = rng.randint(1, 5), rng.randint(1, 5)
        costs = [[rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]) for _ in range(n_cols)] for _ in range(n_rows)]
        got = _distinct_cheapest(costs)
        if got is None:
            continue
        shortcuts += 1
        assert got == assign(costs)
        best = min(sum(costs[i][j] for i, j in zip(rows, cols))
                   for rows in itertools.permutations(range(n_rows), min(n_rows, n_cols))
                   for cols in itertools.permutations(range(n_cols), min(n_rows, n_cols)))
        assert sum(costs[i][j] for i, j in got) == best
    assert shortcuts > 500
    assert _distinct_cheapest([[1.0, 1.0], [0.0, 2.0]]) is None    # a tied row
    assert _distinct_cheapest([[0.0, 2.0], [0.0, 3.0]]) is None    # two rows want column 0
