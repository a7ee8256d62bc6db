"""``scorekit.agents.judge`` and the IAA statistics of ``scorekit.harness``: the spec's vectors,
hand-computed values, properties, bad input, and a differential check against the reference kit
``ek`` (the test oracle) on thousands of random inputs.

Agreement with ``ek`` is exact equality where both sides do exact arithmetic (spec vectors, two
raters with integer labels at the nominal, ordinal and interval levels) and otherwise a relative
tolerance of 1e-9 (with an absolute floor of 1e-12 for values near 0): the sums are added in
another order."""

from __future__ import annotations

import doctest
import math
import random
import types
from decimal import Decimal
from fractions import Fraction

import ek.harness as ek_harness
import numpy as np
import pytest
from ek.agents import base as ek_base
from ek.agents import judge as ek_judge
from hypothesis import given, settings
from hypothesis import strategies as st

import scorekit.harness as harness
import scorekit.interrater as interrater
from doc_examples import run_python_blocks
from scorekit.agents import Episode
from scorekit.agents import judge as J
from scorekit.base import Finding, Score, Severity
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.harness import cohen_kappa, krippendorff_alpha, percent_agreement

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def close(a, b):
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


# --- docstrings and the docs page ----------------------------------------------------------------

@pytest.mark.parametrize("module", [harness, J])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 10


def test_ek_docstring_examples_run_on_scorekit():
    """The examples of ek's judge module and ek.harness's IAA functions, against our functions."""
    names = {"JudgeSignal": J.JudgeSignal, "judge_validation": J.judge_validation,
             "pairwise_judge": J.pairwise_judge, "krippendorff_alpha": krippendorff_alpha,
             "cohen_kappa": cohen_kappa, "percent_agreement": percent_agreement}
    sources = [ek_judge, ek_judge.judge_validation, ek_judge.pairwise_judge,
               ek_harness.krippendorff_alpha, ek_harness.cohen_kappa, ek_harness.percent_agreement]
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner()
    attempted = 0
    for source in sources:
        test = parser.get_doctest(source.__doc__ or "", dict(names), source.__name__, None, 0)
        result = runner.run(test)
        assert result.failed == 0, source.__name__
        attempted += result.attempted
    assert attempted >= 7


def test_docs_page():
    assert run_python_blocks("agents-judges.md", min_blocks=4) >= 20


# --- spec vectors (§8.4, §8.5): exact ----------------------------------------------------------

def test_constants():
    assert (J.JUDGE_COST_TIER, J.ALPHA_GOOD, J.ALPHA_TENTATIVE) == (5, 0.8, 0.67)


@pytest.mark.parametrize("judge, human, level, expected", [
    ([1, 1, 0, 0], [1, 1, 0, 0], "nominal",
     {"n": 4, "alpha": 1.0, "percent_agreement": 1.0, "verdict": "good", "kappa": 1.0}),
    ([1, 0, 1, 0], [0, 1, 0, 1], "nominal",
     {"n": 4, "alpha": -0.75, "percent_agreement": 0.0, "verdict": "unreliable", "kappa": -1.0}),
    ([1, 1, 0, 0, 1], [1, 1, 0, 1, 1], "nominal",
     {"n": 5, "alpha": 0.5714285714285714, "percent_agreement": 0.8, "verdict": "unreliable",
      "kappa": 0.5454545454545454}),  # 6/11 rounded once (the float formula gave the next float)
    ([1, 2, 3, 4], [1, 2, 3, 5], "interval",
     {"n": 4, "alpha": 0.9369369369369369, "percent_agreement": 0.75, "verdict": "good"}),
])
def test_judge_validation_vectors(judge, human, level, expected):
    got = J.judge_validation(judge, human, level=level)
    assert got == expected and list(got) == list(expected)   # same keys, same order, exact values


@pytest.mark.parametrize("judge, human", [([], []), ([None, None], [1, 2]), ([1, None, math.nan], [None, 2, 3]),
                                          (np.array([np.nan, 1.0]), [1.0, np.nan])])
def test_judge_validation_without_a_labelled_pair_certifies_nothing(judge, human):
    """Issue 30 (fail-open gates): with no item labelled by both, ek (and scorekit before) said "good", alpha 1.0."""
    assert ek_judge.judge_validation(list(judge), list(human))["verdict"] == "good"
    with pytest.raises(InvalidValueError, match="none of the .* items has both a judge and a human label"):
        J.judge_validation(judge, human)


def test_judge_validation_tentative_and_reuse():
    # 10 items, one disagreement; 13 ones and 7 zeros: D_o = 2, D_e = 400 - 169 - 49
    r = J.judge_validation([1] * 6 + [0] * 4, [1] * 7 + [0] * 3)
    assert r["alpha"] == 1 - 19 * 2 / 182 and r["verdict"] == "tentative"
    assert close(r["kappa"], (0.9 - 0.54) / (1 - 0.54))            # p_e = .6·.7 + .4·.3
    # ordinal, 9 ones and 5 zeros: mid-ranks 2.5 and 9.5, D_o = 2 * 7**2, D_e = 2 * 9 * 5 * 7**2
    r = J.judge_validation([1, 1, 1, 0, 0, 0, 1], [1, 1, 1, 0, 0, 1, 1], level="ordinal")
    assert r["alpha"] == 1 - 13 * 98 / 4410 and r["verdict"] == "tentative" and "kappa" not in r
    assert J.judge_validation([1] * 9 + [0], [1] * 9 + [2])["verdict"] == "unreliable"
    assert J.krippendorff_alpha is harness.krippendorff_alpha and J.cohen_kappa is harness.cohen_kappa


def test_pairwise_vectors():
    first_wins = lambda x, y, *, criteria="": 1.0  # noqa: E731
    assert J.pairwise_judge(first_wins, "A", "B") == 0.5
    assert J.pairwise_judge(first_wins, "A", "B", swap=False) == 1.0
    prefer_longer = lambda a, b, *, criteria="": 1.0 if len(a) > len(b) else 0.0  # noqa: E731
    assert J.pairwise_judge(prefer_longer, "long answer", "s") == 1.0
    constant = lambda a, b, *, criteria="": 0.8  # noqa: E731
    assert J.pairwise_judge(constant, "x", "y") == 0.5 and J.pairwise_judge(constant, "x", "y", swap=False) == 0.8
    assert J.pairwise_judge(lambda a, b, *, criteria="": 0.9 if a == "A" else 0.3, "A", "B") == 0.8
    seen = []
    J.pairwise_judge(lambda a, b, *, criteria="": seen.append((a, b, criteria)) or 0.5,
                     Episode(output="p"), types.SimpleNamespace(text="q"), criteria="c")
    assert seen == [("p", "q", "c"), ("q", "p", "c")]


def test_judge_signal():
    stub = lambda output, *, criteria="", reference=None: 0.9 if "meow" in output else 0.1  # noqa: E731
    sig = J.JudgeSignal(stub, criteria="Is the answer helpful?")
    assert sig("the cat says meow") == 0.9 and sig(Episode(output="the cat says meow")) == 0.9
    assert sig("woof") == 0.1 and (sig.cost_tier, sig.name) == (5, "judge")
    f = sig.finding("ignored", "too short")
    assert f == Finding(field="", layer="judge", severity=Severity.FLAG, message="too short")
    assert f.suggestion is None and isinstance(f, Finding)
    assert J.JudgeSignal(stub) == J.JudgeSignal(stub) and J.JudgeSignal(stub, name="j2").name == "j2"


def test_output_of_rule():
    seen = []
    sig = J.JudgeSignal(lambda out, *, criteria="": seen.append(out) or 0.0)
    sig(Episode(output=None))                            # exists, even if None: the judge gets None
    sig(types.SimpleNamespace(value="v", text="t"))      # output, then value, then text
    sig(types.SimpleNamespace(text="t"))
    sig(Score(value=0.25))
    sig({"output": "not an attribute"})
    sig("plain")
    assert seen == [None, "v", "t", 0.25, {"output": "not an attribute"}, "plain"]


def test_judge_metric():
    calls = []

    def judge(out, *, criteria, reference):
        calls.append((out, criteria, reference))
        return 1.0 if out == reference else 0.0

    jm = J.JudgeMetric(judge, criteria="same answer?")
    s = jm(Episode(output="x"), "x")
    assert (s.value, s.metric, s.detail) == (1.0, "judge", {"criteria": "same answer?", "higher_is_better": True})
    assert calls == [("x", "same answer?", "x")] and jm.name == "judge"
    assert jm.aggregate([s, jm("y", "x")]) == 0.5 and jm.aggregate([]) == 0.0
    assert jm.aggregate(iter([Score(0.25), 0.75])) == 0.5
    assert J.JudgeMetric(lambda o, *, criteria, reference: "0.5")("a", "b").value == 0.5  # float() semantics


# --- IAA: spec vectors and hand-computed values ------------------------------------------------

def test_iaa_spec_vectors():
    assert krippendorff_alpha([[1, 1, 1, 1], [1, 1, 1, 1]]) == 1.0
    assert krippendorff_alpha([]) == 1.0 and krippendorff_alpha([[], []]) == 1.0
    assert krippendorff_alpha([[1, 2, 3]]) == 1.0                  # one rater: no pairable item
    assert krippendorff_alpha([[1, None], [None, 2]], level="interval") == 1.0
    assert percent_agreement([], []) == 1.0 and cohen_kappa([], []) == 1.0
    assert cohen_kappa([1, 1], [1, 1]) == 1.0                      # p_e == 1
    assert cohen_kappa([1, 1, 0, 0, 1], [1, 1, 0, 1, 1]) == 0.5454545454545454  # 6/11, correctly rounded
    for level in LEVELS:
        assert krippendorff_alpha([[1, 0, 1, 0], [0, 1, 0, 1]], level=level) == -0.75


@pytest.mark.parametrize("level, expected", [
    # items (1, 1) and (2, 3); pairable values 1, 1, 2, 3 (n = 4); D_o is the (2, 3) item's pairs.
    ("nominal", 1 - 3 * 2 / (16 - 4 - 1 - 1)),                 # D_o = 2, D_e = n² - Σ n_c²
    ("interval", 1 - 3 * 2 / 22),                              # D_o = 2·1², D_e = 2·(1+4+1+4+1)
    ("ordinal", 1 - 3 * 2 / 36),                               # mid-ranks 1, 1, 2.5, 3.5
    ("ratio", 1 - 3 * (2 * 0.2 ** 2) / (2 * (2 * (1 / 3) ** 2 + 2 * 0.5 ** 2 + 0.2 ** 2))),
])
def test_alpha_hand_computed(level, expected):
    got = krippendorff_alpha([[1, 2], [1, 3]], level=level)
    assert close(got, expected)
    assert got == ek_harness.krippendorff_alpha([[1, 2], [1, 3]], level=level)


def test_alpha_three_raters_missing_hand_computed():
    # Items (a, a, a), (a, b, -), (b, b, None→missing), (c, -, -): the last is not pairable.
    data = [["a", "a", "b", "c"], ["a", "b", "b", None], ["a", None, float("nan"), None]]
    # pairable values: a×4, b×3 (n = 7); D_o = (0)/2 + (4 - 2)/1 + 0 = 2; D_e = 49 - 16 - 9 = 24
    assert krippendorff_alpha(data) == 1 - 6 * 2 / 24 == 0.5


def test_ratio_zero_and_opposite_values():
    assert krippendorff_alpha([[0, 0], [0, 0.0]], level="ratio") == 1.0
    assert krippendorff_alpha([[2, -2, 2], [-2, 2, -2]], level="ratio") == 1.0   # every δ² is 0
    assert krippendorff_alpha([[1, 2], [2, 1]], level="ratio") == -0.5


def test_nominal_label_kinds_follow_python_equality():
    # 1, 1.0 and True are one label (as in a dict); strings and ints are different labels.
    assert krippendorff_alpha([[True, False, True], [1, 0, 0.0]]) == ek_harness.krippendorff_alpha(
        [[True, False, True], [1, 0, 0.0]])
    assert krippendorff_alpha([[1, "1"], [1, "1"]]) == 1.0
    assert krippendorff_alpha([[(1, 2), frozenset({3})], [(1, 2), frozenset({3})]]) == 1.0
    big = 2 ** 60
    assert krippendorff_alpha([[big, big + 1, 1], [big, big + 1, 2]]) == ek_harness.krippendorff_alpha(
        [[big, big + 1, 1], [big, big + 1, 2]])


def test_nan_semantics_match_python():
    x = float("nan")
    assert percent_agreement([x, 1], [x, 1]) == 0.5                 # NaN != NaN
    assert cohen_kappa([x, 1], [x, 1]) == ek_harness.cohen_kappa([x, 1], [x, 1]) == 0.0
    # The one NaN object is one label (2 * 1 pairs), as in the kit: kappa = -1/5, rounded once
    # (the kit's float formula gives -0.19999999999999998).
    assert cohen_kappa([x, x, 1], [x, 1, 1]) == -0.2
    assert cohen_kappa([x, x, 1], [x, 1, 1]) == pytest.approx(ek_harness.cohen_kappa([x, x, 1], [x, 1, 1]), rel=1e-9)
    # Missing cells: None and anything not equal to itself (NaN of any type).
    for missing in (None, x, np.float32("nan"), Decimal("NaN")):
        assert krippendorff_alpha([[missing, 1, 2], [1, 1, 2]]) == 1.0


def test_array_inputs():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, (3, 40)).astype(float)
    a[rng.random(a.shape) < 0.2] = np.nan
    as_lists = [[None if math.isnan(v) else v for v in row] for row in a.tolist()]
    for level in LEVELS:
        want = krippendorff_alpha(as_lists, level=level)
        assert krippendorff_alpha(a, level=level) == want
        assert krippendorff_alpha(list(a), level=level) == want
        assert krippendorff_alpha([a[0], as_lists[1], a[2]], level=level) == want
    ints = rng.integers(-3, 3, (2, 30))
    assert krippendorff_alpha(ints, level="ordinal") == krippendorff_alpha(ints.tolist(), level="ordinal")
    assert cohen_kappa(ints[0], ints[1]) == cohen_kappa(ints[0].tolist(), ints[1].tolist())
    assert krippendorff_alpha(np.array([["a", "b"], ["a", "c"]], dtype=object)) == 0.4


def test_numbers_of_other_types_at_numeric_levels():
    want = krippendorff_alpha([[1.5, 1, 2], [1, 1, 2]], level="interval")
    assert krippendorff_alpha([[Decimal("1.5"), 1, 2], [1, 1, 2]], level="interval") == want
    assert krippendorff_alpha([[Fraction(3, 2), np.int64(1), 2], [1, True, 2]], level="interval") == want


# --- properties -------------------------------------------------------------------------------

cells = st.one_of(st.none(), st.integers(-4, 4))
tables = st.integers(2, 5).flatmap(
    lambda raters: st.integers(0, 12).flatmap(
        lambda items: st.lists(st.lists(cells, min_size=items, max_size=items), min_size=raters, max_size=raters)))


@settings(max_examples=150, deadline=None)
@given(tables, st.randoms(use_true_random=False))
def test_alpha_invariances(data, rnd):
    for level in LEVELS:
        alpha = krippendorff_alpha(data, level=level)
        assert alpha <= 1.0 + 1e-12
        columns = list(zip(*data))
        rnd.shuffle(columns)
        shuffled = [list(row) for row in zip(*columns)] if columns else data
        rnd.shuffle(shuffled)
        assert close(krippendorff_alpha(shuffled, level=level), alpha)     # order of items, raters
    # nominal: relabelling; ordinal: any increasing map; interval: affine maps; ratio: scaling
    relabel = {v: f"L{(v * 7) % 11}" for v in range(-4, 5)}
    mapped = lambda f: [[None if v is None else f(v) for v in row] for row in data]  # noqa: E731
    assert krippendorff_alpha(mapped(relabel.get)) == krippendorff_alpha(data)
    assert krippendorff_alpha(mapped(lambda v: v ** 3 + 10 * v), level="ordinal") == \
        krippendorff_alpha(data, level="ordinal")
    assert close(krippendorff_alpha(mapped(lambda v: -2.5 * v + 7), level="interval"),
                 krippendorff_alpha(data, level="interval"))
    assert close(krippendorff_alpha(mapped(lambda v: 3.0 * v), level="ratio"),
                 krippendorff_alpha(data, level="ratio"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd")), max_size=30))
def test_kappa_and_agreement_properties(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    assert close(cohen_kappa(a, b), cohen_kappa(b, a))
    assert percent_agreement(a, b) == (sum(x == y for x, y in pairs) / len(pairs) if pairs else 1.0)
    assert cohen_kappa(a, a) == 1.0
    assert krippendorff_alpha([a, a]) == 1.0


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("data, level, exc, pattern", [
    ([[1, 2], [1, 2]], "foo", ValueError, r"unknown level 'foo'; use nominal/ordinal/interval/ratio"),
    ([], None, ValueError, r"unknown level None; use nominal/ordinal/interval/ratio"),
    ([[1, 2], [1]], "nominal", ValueError, r"same length .*row 0 has 2 items, row 1 has 1"),
    (5, "nominal", TypeError, r"reliability_data must be a sequence of rows"),
    ([[1, 2], 3], "nominal", TypeError, r"reliability_data\[1\] must be a sequence of labels"),
    (np.zeros((2, 2, 2)), "interval", ValueError, r"2-dimensional"),
    ([[1, "x"], [1, 2]], "interval", TypeError, r"reliability_data\[0\]\[1\] must be a number at the interval level"),
    ([[1, 2, "x"], [1, 3, None]], "ratio", TypeError, r"\[0\]\[2\] must be a number"),  # even unpairable
    ([[1, float("inf")], [1, 2]], "interval", ValueError, r"\[0\]\[1\] must be finite"),
    ([[1, 10 ** 400], [1, 2]], "interval", ValueError, r"too large"),
    ([[[1], 2], [1, 2]], "nominal", TypeError, r"labels must be hashable, got \[1\]"),
    ([[1, "a"], [1, 2]], "ordinal", TypeError, r"mutually comparable"),
])
def test_alpha_bad_input(data, level, exc, pattern):
    with pytest.raises(exc, match=pattern):
        krippendorff_alpha(data, level=level)


def test_error_types_are_scorekit_errors():
    with pytest.raises(InvalidValueError):
        krippendorff_alpha([[1], [1]], level="bogus")
    with pytest.raises(InvalidTypeError):
        krippendorff_alpha([["x"], [1]], level="interval")


def test_ratio_distinct_value_guard(monkeypatch):
    monkeypatch.setattr(interrater, "RATIO_MAX_DISTINCT", 3)
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 3]], level="ratio") == 1.0
    with pytest.raises(InputTooLargeError, match="4 distinct values at the ratio level"):
        krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 4]], level="ratio")
    assert krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 4]], level="interval") == 1.0


def test_two_rater_bad_input():
    for fn in (cohen_kappa, percent_agreement):
        with pytest.raises(ValueError, match="raters must label the same number of items"):
            fn([1], [1, 2])
        with pytest.raises(TypeError, match="rater_a must be a sequence of labels"):
            fn(3, [1])
    with pytest.raises(TypeError, match="labels must be hashable"):
        cohen_kappa([[1]], [[1]])
    assert percent_agreement([[1]], [[1]]) == 1.0        # equality needs no hashing


def test_judge_bad_input():
    with pytest.raises(ValueError, match="judge and human must label the same items"):
        J.judge_validation([1, 0], [1])
    with pytest.raises(ValueError, match="unknown level 'bogus'"):
        J.judge_validation([1], [1], level="bogus")
    with pytest.raises(TypeError, match="judge must return a number, got None"):
        J.JudgeSignal(lambda out, *, criteria="": None)("x")
    with pytest.raises(ValueError, match="judge must return a number, got 'good'"):
        J.JudgeMetric(lambda out, *, criteria, reference: "good")("x", "y")
    with pytest.raises(TypeError, match="judge must return a number"):
        J.pairwise_judge(lambda a, b, *, criteria="": [1.0], "a", "b")


# --- differential: ek on random inputs ----------------------------------------------------------

def _random_table(rnd):
    level = rnd.choice(LEVELS)
    raters, items, distinct = rnd.randint(2, 5), rnd.randint(0, 25), rnd.randint(1, 8)
    kinds = ["int", "float", "negative"] + (["str", "mixed"] if level in ("nominal", "ordinal") else ["zero"])
    if level == "nominal":
        kinds.append("hashables")
    kind = rnd.choice(kinds)

    def cell():
        if rnd.random() < 0.2:
            return rnd.choice([None, float("nan")])
        k = rnd.randrange(distinct)
        return {"int": k, "float": k * 0.37 + 0.1, "negative": (k - distinct // 2) * 1.5,
                "zero": rnd.choice([0, 0.0, -k, k * 0.5]), "str": "abcdefgh"[k],
                "mixed": rnd.choice([k, float(k), k + 0.5]),
                "hashables": rnd.choice([k, str(k), (k,), True, None])}[kind]

    return [[cell() for _ in range(items)] for _ in range(raters)], level


def test_alpha_matches_ek_on_random_tables():
    rnd = random.Random(20240515)
    for _ in range(3000):
        data, level = _random_table(rnd)
        ours, theirs = krippendorff_alpha(data, level=level), ek_harness.krippendorff_alpha(data, level=level)
        assert close(ours, theirs), (data, level, ours, theirs)


def test_alpha_matches_ek_for_two_raters_with_integer_labels():
    rnd = random.Random(7)
    for _ in range(1000):
        level = rnd.choice(("nominal", "ordinal", "interval"))
        items, distinct = rnd.randint(1, 40), rnd.randint(2, 12)
        data = [[rnd.choice([None] + list(range(-3, distinct))) for _ in range(items)] for _ in range(2)]
        ours, theirs = krippendorff_alpha(data, level=level), ek_harness.krippendorff_alpha(data, level=level)
        if level == "interval":  # exact, rounded once (tests/test_small_end.py); the kit's floats to 1e-12
            assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)
        else:
            assert ours == theirs


def test_alpha_matches_ek_on_continuous_ratings():
    rnd = random.Random(11)
    for _ in range(120):
        level = rnd.choice(("interval", "ratio"))
        scale = 10 ** rnd.uniform(-3, 5)
        offset = rnd.uniform(-1e3, 1e3) if level == "interval" else 0.0
        truth = [rnd.gauss(offset, scale) for _ in range(rnd.randint(20, 80))]
        data = [[x + rnd.gauss(0, scale / 3) if rnd.random() > 0.15 else None for x in truth]
                for _ in range(rnd.randint(2, 6))]
        assert close(krippendorff_alpha(data, level=level), ek_harness.krippendorff_alpha(data, level=level))
    many = [[rnd.randrange(4) for _ in range(6)] for _ in range(25)]      # 25 raters
    for level in LEVELS:
        assert close(krippendorff_alpha(many, level=level), ek_harness.krippendorff_alpha(many, level=level))


def test_kappa_and_agreement_match_ek_on_random_labels():
    rnd = random.Random(99)
    for _ in range(2000):
        n, distinct = rnd.randint(0, 40), rnd.randint(1, 6)
        kind = rnd.choice(["int", "str", "mixed", "big"])

        def label():
            k = rnd.randrange(distinct)
            return {"int": k, "str": "abcdef"[k], "mixed": rnd.choice([k, float(k), str(k), None, True]),
                    "big": k * 10 ** rnd.choice([0, 10, 30])}[kind]

        a, b = [label() for _ in range(n)], [label() for _ in range(n)]
        assert close(cohen_kappa(a, b), ek_harness.cohen_kappa(a, b)), (a, b)
        assert percent_agreement(a, b) == ek_harness.percent_agreement(a, b)


def test_judge_validation_matches_ek_on_random_labels():
    rnd = random.Random(5)
    for _ in range(1500):
        level = rnd.choice(LEVELS)
        n, distinct = rnd.randint(0, 30), rnd.randint(1, 5)
        human = [rnd.randrange(distinct) for _ in range(n)]
        judge = [h if rnd.random() < rnd.random() else rnd.randrange(distinct) for h in human]
        if n == 0:  # nothing to certify on: scorekit refuses (docs/decisions.md#gates-fail-closed)
            continue
        ours, theirs = J.judge_validation(judge, human, level=level), ek_judge.judge_validation(judge, human, level=level)
        assert list(ours) == list(theirs) and ours["verdict"] == theirs["verdict"], (judge, human, level)
        assert all(close(ours[k], theirs[k]) for k in ours if k != "verdict")


def _random_judge(rnd):
    table = {}

    def score(*key):
        if key not in table:
            table[key] = rnd.choice([0.0, 1.0, rnd.random(), rnd.randint(0, 5)])
        return table[key]

    return score


def test_judges_match_ek_on_random_judges():
    rnd = random.Random(13)
    words = ["a", "bb", "meow", "", "ccc"]
    for _ in range(500):
        score = _random_judge(rnd)
        criteria = rnd.choice(["", "helpful?", "correct?"])
        target = rnd.choice([rnd.choice(words), types.SimpleNamespace(output=rnd.choice(words)),
                             types.SimpleNamespace(value=rnd.choice(words), text="t"),
                             types.SimpleNamespace(text=rnd.choice(words)), types.SimpleNamespace(output=None)])
        signal = lambda out, *, criteria="": score("signal", out, criteria)  # noqa: E731
        assert J.JudgeSignal(signal, criteria=criteria)(target) == ek_judge.JudgeSignal(signal, criteria=criteria)(target)

        gold = rnd.choice(words)
        metric = lambda out, *, criteria, reference: score("metric", out, criteria, reference)  # noqa: E731
        ours, theirs = J.JudgeMetric(metric, criteria)(target, gold), ek_judge.JudgeMetric(metric, criteria)(target, gold)
        assert (ours.value, ours.metric, ours.detail) == (theirs.value, theirs.metric, theirs.detail)
        values = [rnd.random() for _ in range(rnd.randint(0, 6))]
        assert J.JudgeMetric(metric).aggregate([Score(v) for v in values]) == \
            ek_judge.JudgeMetric(metric).aggregate([Score(v) for v in values])

        pair = lambda x, y, *, criteria="": score("pair", x, y, criteria)  # noqa: E731
        a, b, swap = rnd.choice(words), rnd.choice(words), rnd.random() < 0.5
        assert J.pairwise_judge(pair, a, b, criteria=criteria, swap=swap) == \
            ek_judge.pairwise_judge(pair, a, b, criteria=criteria, swap=swap)


def test_finding_and_episode_match_ek():
    stub = lambda out, *, criteria="": 0.9 if out and "meow" in out else 0.1  # noqa: E731
    ours, theirs = J.JudgeSignal(stub).finding(None, "why"), ek_judge.JudgeSignal(stub).finding(None, "why")
    assert (ours.field, ours.layer, ours.severity.value, ours.message, ours.suggestion) == \
        (theirs.field, theirs.layer, theirs.severity.value, theirs.message, theirs.suggestion)
    assert J.JudgeSignal(stub)(Episode(output="meow")) == ek_judge.JudgeSignal(stub)(ek_base.Episode(output="meow"))
    assert J.JudgeSignal(stub)(Episode()) == ek_judge.JudgeSignal(stub)(ek_base.Episode()) == 0.1


def test_interval_alpha_of_tiny_or_huge_values_is_the_alpha_of_the_values_scaled():
    """Alpha is scale-free; values whose squared differences underflow (1e-160) or overflow used to
    raise ZeroDivisionError or give a wrong value on the NumPy path (more than 128 cells)."""
    import random

    from scorekit.harness import krippendorff_alpha
    rng = random.Random(7)
    for _ in range(200):
        table = [[rng.choice([1, 2, 3, 4.5, None]) for _ in range(70)] for _ in range(3)]
        expected = krippendorff_alpha(table, level="interval")
        for scale in (2.0 ** -530, 2.0 ** -1060, 2.0 ** 500):   # exact: the same alpha, bit for bit
            scaled = [[None if x is None else x * scale for x in row] for row in table]
            assert krippendorff_alpha(scaled, level="interval") == expected
    tiny = [[1e-160, 2e-160, 3e-160] * 20, [2e-160, 2e-160, 3e-160] * 20]
    assert krippendorff_alpha(tiny, level="interval") == krippendorff_alpha(
        [[x * 1e160 for x in row] for row in tiny], level="interval") == 0.65
