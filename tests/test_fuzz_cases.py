"""Property tests of the compiled step walker of scorekit.cases (issue #33, "speed at the small
end"): on random small documents the walker scores the step whole, and its StepScore is exactly
the Python walker's (the Numba backend's path: every field, value, score, status and list match);
where no decision of docs/cases.md applies, both equal pyconveyor 1.10's scorer (a test oracle)."""

from __future__ import annotations

import collections
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit._kernels import cases as kernels
from scorekit._kernels import use_backend
from scorekit.cases.results import FieldScore, ListMatch, StepScore
from scorekit.cases.scoring import score_case, score_step
from test_cases_pyconveyor import REFERENCE, _perturb, _value

CLASSES = (StepScore, FieldScore, ListMatch)
KEYS = st.sampled_from(["a", "b", "c", "é"])
#: The scalars equality is subtle on: booleans beside 0 and 1, integral floats, -0.0, NaN, inf.
SCALARS = [None, True, False, 0, 1, 2, -1, 1.0, 0.0, -0.0, 2.5, math.nan, math.inf, 1e20, "a", "b", "A", "1", "",
           "é", "$ignore"]
scalars = st.sampled_from(SCALARS)
records = st.dictionaries(KEYS, st.one_of(scalars, st.dictionaries(KEYS, scalars, max_size=2)), max_size=3)
#: What the walker reads: dicts of scalars, scalar lists and record lists, nested.
walked_values = st.recursive(scalars | st.lists(scalars, max_size=5) | st.lists(records, max_size=5),
                             lambda inner: st.dictionaries(KEYS, inner, max_size=4), max_leaves=15)
#: What it leaves to Python somewhere inside: $ordered, big ints, lone surrogates, tuples, dict
#: subclasses, non-str keys, records holding lists, mixed lists.
odd = st.sampled_from([{"$ordered": [1, "a"]}, 2**63, -(2**63) - 1, "\ud800", ("a",), collections.OrderedDict(a=1),
                       {1: "a"}, [{"a": [1]}], [1, {"a": 1}], {"a": [1, 2]}])
any_values = st.recursive(scalars | odd | st.lists(scalars | odd, max_size=4) | st.lists(records, max_size=4),
                          lambda inner: st.dictionaries(KEYS, inner, max_size=4) | st.lists(inner, max_size=3),
                          max_leaves=15)


def _near(rng: random.Random, value):
    """An actual output near ``value``: keys dropped, items dropped, added and shuffled, values changed."""
    if type(value) is dict:
        out = {k: _near(rng, v) for k, v in value.items() if rng.random() > 0.15}
        if rng.random() < 0.2:
            out["extra"] = rng.choice(SCALARS)
        return out
    if type(value) is list:
        out = [_near(rng, v) for v in value if rng.random() > 0.2]
        if rng.random() < 0.3:
            out.append(rng.choice(value) if value and rng.random() < 0.5 else rng.choice(SCALARS))
        rng.shuffle(out)
        return out
    return value if rng.random() < 0.7 else rng.choice(SCALARS)


def _python(actual, expected, **kw):
    with use_backend("numba"):  # the compiled walker answers None there: the Python walker scores
        return score_step(actual, expected, **kw)


def _same(compiled: StepScore, python: StepScore) -> None:
    # repr shows every value (NaN and -0.0 included) and the float scores to the last bit
    assert repr(compiled) == repr(python)


@settings(max_examples=400, deadline=None)
@given(walked_values, st.randoms(use_true_random=False), st.booleans())
def test_the_walker_scores_small_documents_as_the_python_walker(expected, rng, independent):
    actual = rng.choice(SCALARS) if independent and rng.random() < 0.2 else _near(rng, expected)
    walked = kernels.step_score(actual, expected, "s", CLASSES)
    assert walked is not None  # read whole: nothing in these documents is left to Python
    _same(walked, _python(actual, expected, step_name="s"))
    _same(score_step(actual, expected, step_name="s"), walked)


@settings(max_examples=300, deadline=None)
@given(any_values, any_values | st.builds(lambda r: r, any_values))
def test_documents_with_odd_values_score_the_same_either_way(expected, actual):
    _same(score_step(actual, expected), _python(actual, expected))


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_small_documents_score_as_pyconveyor(rng):
    """pyconveyor's scorer on the documents of tests/test_cases_pyconveyor.py (built so that no
    numbered decision applies), drawn by Hypothesis so that a failure shrinks."""
    expected = {k: _value(rng) for k in rng.sample(["t", "u", "v", "w"], rng.randint(1, 4))}
    actual = _perturb(rng, expected)
    ref_score, ref_status, ref_fields = REFERENCE._score_step("s", actual, expected)
    ours = score_step(actual, expected, step_name="s")
    assert ours.score == pytest.approx(ref_score, abs=1e-12)
    assert ours.status == ref_status
    assert [(f.field, f.status) for f in ours.field_scores] == [(f.field, f.status) for f in ref_fields]
    assert [f.score for f in ours.field_scores] == pytest.approx([f.score for f in ref_fields], abs=1e-12)
    _same(ours, _python(actual, expected, step_name="s"))


def test_an_ordinary_extraction_document_is_walked_whole():
    """Top-level fields, a nested dict, a scalar list and a record list (the small end of
    benches/bench_cases.py): the compiled walker answers, with the hand-computed scores."""
    expected = {"vendor": "Acme", "total": 12.5, "paid": True, "address": {"city": "Paris", "zip": "75001"},
                "tags": ["a", "b", "$ignore"],
                "items": [{"sku": "S1", "qty": 2}, {"sku": "S2", "qty": 1}, {"sku": "$ignore"}]}
    actual = {"vendor": "ACME", "total": 12.5, "paid": 1, "address": {"city": "Paris"},
              "tags": ["b", "c", "a", "d"], "items": [{"sku": "S2", "qty": 1.0}, {"sku": "S1", "qty": 3}]}
    step = kernels.step_score(actual, expected, "extract", CLASSES)
    assert step is not None
    fields = {f.field: f for f in step.field_scores}
    assert [f.field for f in step.field_scores] == ["extract.vendor", "extract.total", "extract.paid",
                                                   "extract.address.city", "extract.address.zip", "extract.tags",
                                                   "extract.items"]
    assert [f.score for f in step.field_scores[:5]] == [0.0, 1.0, 0.0, 1.0, 0.0]  # True is not 1
    # tags: a and b found, the $ignore slot filled by a leftover item: 3/3; precision 3/4
    assert fields["extract.tags"].score == 1.0
    assert fields["extract.tags"].match.pairs == [(0, 2, 1.0), (1, 0, 1.0)]
    assert (fields["extract.tags"].match.wildcards, fields["extract.tags"].match.precision) == (1, 0.75)
    # items: S1 pairs with actual 1 (qty differs: 0.5), S2 with actual 0 (1 == 1.0: 1.0); the
    # record with nothing scored is a wildcard with no actual item left: (0.5 + 1.0) / 3
    assert fields["extract.items"].match.pairs == [(0, 1, 0.5), (1, 0, 1.0)]
    assert fields["extract.items"].match.wildcards == 0
    assert fields["extract.items"].score == 0.5
    assert step.score == math.fsum([0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.5]) / 7
    assert (step.step_name, step.status) == ("extract", "scored")
    _same(step, _python(actual, expected, step_name="extract"))
    assert repr(score_case({"extract": expected}, {"extract": actual})[0]) == repr(step)


@pytest.mark.parametrize("actual, expected", [
    ({"a": 1}, {"$ordered": [1, 2]}), ({"a": 1}, {"a": 2**64}), ({"a": [{"b": [1]}]}, {"a": [{"b": [1]}]}),
    ({"a": 1}, ("a",)), ({"a": ("a",)}, {"a": "a"}), ({"a": collections.OrderedDict(b=1)}, {"a": {"b": 1}})])
def test_values_the_walker_does_not_read_go_to_python(actual, expected):
    assert kernels.step_score(actual, expected, "s", CLASSES) is None
    _same(score_step(actual, expected), _python(actual, expected))


def test_an_all_ignored_step_is_ignored_by_the_walker():
    step = kernels.step_score({"a": 1}, {"a": "$ignore", "b": {"c": "$ignore"}}, "s", CLASSES)
    assert (step.score, step.status, [f.status for f in step.field_scores]) == (0.0, "ignored", ["ignored"] * 2)


def test_the_step_mean_is_correctly_rounded():
    """Ten lists scoring 0.1 each: a naive sum gives 0.9999999999999999, math.fsum 1.0."""
    expected = {f"k{n}": list(range(10)) for n in range(10)}
    actual = {f"k{n}": [0] for n in range(10)}
    step = kernels.step_score(actual, expected, "s", CLASSES)
    assert [f.score for f in step.field_scores] == [0.1] * 10
    assert sum([0.1] * 10) != 1.0 and step.score == math.fsum([0.1] * 10) / 10 == 0.1
    _same(step, _python(actual, expected, step_name="s"))
