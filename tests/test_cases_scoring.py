"""scorekit.cases scoring: every reference vector (tests/data/cases/score_step_vectors.json, rows
produced by pyconveyor 1.10's scorer), with the decided value where a numbered decision of
docs/cases.md changes it; list matching (greedy, optimal, wildcards, precision/recall); comparators;
score_case statuses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from doc_examples import run_python_blocks
from scorekit.cases import CasesConfigError, ComparatorError
from scorekit.cases.scoring import score_case, score_step, values_equal

VECTORS = json.loads((Path(__file__).parent / "data" / "cases" / "score_step_vectors.json").read_text("utf-8"))


def ci(a, e):
    return 1.0 if str(a).lower() == str(e).lower() else 0.0


def within10(a, e):
    if e == 0:
        return 1.0 if a == 0 else 0.0
    return 1.0 if abs(a - e) / abs(e) <= 0.1 else 0.0


COMPARATORS = {"ci": ci, "within10": within10, "half": lambda a, e: 0.5, "two": lambda a, e: 2.0}

#: vector id -> (decided score, decided status, the decision that changes the reference's value)
DECIDED = {
    4: (0.0, "scored", "20: booleans are not numbers"),
    5: (0.0, "scored", "20: booleans are not numbers"),
    32: (0.5, "scored", "20: true does not fill the expected 1"),
    38: (1.0, "scored", "14: [] expects an empty list"),
    45: (1.0, "scored", "14: {$ordered: []} expects an empty list"),
    49: (1.0, "scored", "16: an item with nothing to score is a wildcard"),
    56: (1 / 3, "scored", "15: a 0-score best match takes no actual item"),
    59: (1.0, "scored", "16: an item with nothing to score is a wildcard"),
    79: (1.0, "scored", "18: comparator results are clamped to [0, 1]"),
}
#: comparator vectors keyed by list index: decision 19 refuses index keys and offers `[]`
INDEX_KEYED = {80: ("s.k[]", 1.0), 81: ("s.au[].n", 1.0), 82: ("s.au[].n", 1.0), 83: ("s.k[]", 1.0)}
JSON_ROWS = [v for v in VECTORS["vectors"] if "expected" in v]


def _comparators(row):
    return {key: COMPARATORS[name] for key, name in row["comparators"].items()}


@pytest.mark.parametrize("row", [v for v in JSON_ROWS if v["id"] not in INDEX_KEYED], ids=lambda v: f"v{v['id']}")
def test_reference_vector(row, backend):
    with pytest.warns(RuntimeWarning, match="clamped") if row["id"] == 79 else _no_warning():
        step = score_step(row["actual"], row["expected"], comparators=_comparators(row), step_name=row["step"])
    score, status, _ = DECIDED.get(row["id"], (row["score"], row["status"], None))
    assert step.score == pytest.approx(score, abs=1e-6)
    assert step.status == status


class _no_warning:
    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


@pytest.mark.parametrize("vector_id", sorted(INDEX_KEYED))
def test_index_comparator_keys_are_refused_and_the_wildcard_form_applies(vector_id):
    row = next(v for v in JSON_ROWS if v["id"] == vector_id)
    with pytest.raises(CasesConfigError, match=r"index keys are not supported"):
        score_step(row["actual"], row["expected"], comparators=_comparators(row), step_name="s")
    key, decided = INDEX_KEYED[vector_id]
    step = score_step(row["actual"], row["expected"], comparators={key: ci}, step_name="s")
    assert step.score == decided


def test_python_only_vectors(backend):
    # 31: a tuple is not a list
    assert score_step({"k": ("a",)}, {"k": ["a"]}, step_name="s").score == 0.0
    # 64-66: the reference raises TypeError; decision 17 scores them by pairing
    assert score_step({"k": ["a", {"x": 1}]}, {"k": ["a", {"x": 1}]}).score == 1.0
    assert score_step({"k": [["a"], "b"]}, {"k": ["a", "b"]}).score == 0.5
    assert score_step({"k": [["a"], ["b"]]}, {"k": [["a"], ["b"]]}).score == 1.0
    assert score_step({"k": [["b", "a"], ["c"]]}, {"k": [["a"], ["b"], ["c"]]}).score == pytest.approx(2 / 3)
    # 67: NaN equals nothing, also itself
    nan = float("nan")
    assert score_step({"x": nan}, {"x": nan}).score == 0.0
    assert score_step({"k": [nan]}, {"k": [nan]}).score == 0.0
    assert score_step({"k": [{"x": nan}]}, {"k": [{"x": nan}]}).score == 0.0


def test_all_vectors_are_covered():
    ids = {v["id"] for v in VECTORS["vectors"]}
    assert ids == set(range(1, 86))
    repr_rows = {v["id"] for v in VECTORS["vectors"] if "expected" not in v}
    assert repr_rows == {31, 64, 65, 66, 67}


def test_values_equal_is_json_equality():
    assert values_equal(1, 1.0) and values_equal(2**70, 2**70) and values_equal(None, None)
    assert not values_equal(True, 1) and not values_equal(0, False) and values_equal(True, True)
    assert not values_equal("1", 1) and not values_equal(float("nan"), float("nan"))
    assert not values_equal([1], 1)


def test_greedy_pairs_and_list_match():
    expected = {"au": [{"x": 1, "y": 0}, {"x": 1, "y": 1}]}
    actual = {"au": [{"x": 1, "y": 1}, {"x": 2, "y": 0}]}
    greedy = score_step(actual, expected)
    assert greedy.score == 0.25  # vector 55: ties go to the lowest actual index
    match = greedy.field_scores[0].match
    assert match.pairs == [(0, 0, 0.5)] and match.method == "greedy"
    assert (match.precision, match.recall) == (0.25, 0.25)
    optimal = score_step(actual, expected, matching="optimal")
    assert optimal.score == 0.75
    assert optimal.field_scores[0].match.pairs == [(0, 1, 0.5), (1, 0, 1.0)]


def test_optimal_prefers_a_wildcard_when_worth_more():
    # one actual item: pairing it with the 0.5 record gives 0.5/2; giving it to $ignore gives 1/2
    expected = {"k": [{"a": 1, "b": 2}, "$ignore"]}
    actual = {"k": [{"a": 1, "b": 0}]}
    assert score_step(actual, expected).score == 0.25
    step = score_step(actual, expected, matching="optimal")
    assert step.score == 0.5 and step.field_scores[0].match.wildcards == 1


def test_precision_counts_extra_actual_items():
    step = score_step({"k": ["a", "b", "c", "d"]}, {"k": ["a", "b"]})
    match = step.field_scores[0].match
    assert step.score == 1.0 and match.precision == 0.5 and match.f1 == pytest.approx(2 / 3)
    assert match.pairs == [(0, 0, 1.0), (1, 1, 1.0)]
    empty = score_step({"k": []}, {"k": ["a"]}).field_scores[0].match
    assert (empty.precision, empty.recall, empty.f1) == (0.0, 0.0, 0.0)


def test_comparator_on_every_item_and_unwrapped_ordered():
    seen = []

    def record(a, e):
        seen.append(e)
        return 1.0

    score_step({"k": ["b", "a"]}, {"k": {"$ordered": ["a", "b"]}}, comparators={"step.k": record})
    assert seen == [["a", "b"]]
    step = score_step({"au": [{"n": "x"}, {"n": "ADA"}]}, {"au": [{"n": "ada"}, {"n": "X"}]},
                      comparators={"step.au[].n": ci})
    assert step.score == 1.0


@pytest.mark.parametrize("bad, message", [
    (lambda a, e: 1 / 0, "raised ZeroDivisionError"),
    (lambda a, e: None, "not a number"),
    (lambda a, e: float("nan"), "not a finite number"),
    (lambda a, e: "x", "not a number"),
])
def test_failing_comparators(bad, message):
    with pytest.raises(ComparatorError, match=message) as info:
        score_step({"v": 1}, {"v": 1}, comparators={"s.v": bad}, step_name="s")
    assert "'s.v'" in str(info.value)


def test_check_comparators_collects_problems():
    with pytest.raises(CasesConfigError) as info:
        score_step({}, {"a": 1}, comparators={"s.a[0]": ci, 5: ci, "s.b": "nope"})
    assert len(info.value.problems) == 3


def test_matching_must_be_known():
    with pytest.raises(ValueError, match="matching must be one of"):
        score_step({}, {"a": 1}, matching="hungarian")


def test_score_case_statuses():
    expected = {"extract": {"t": "T", "u": "U"}, "classify": "bio", "ghost": "$ignore", "gone": {"x": 1},
                "skipped": None}
    outputs = {"extract": {"t": "T", "u": "x"}, "classify": "bio", "skipped": None}
    steps = score_case(expected, outputs, runner_statuses={"skipped": "skipped"})
    assert [(s.step_name, s.status, s.score) for s in steps] == [
        ("extract", "scored", 0.5), ("classify", "scored", 1.0), ("ghost", "ignored", 0.0),
        ("gone", "missing", 0.0), ("skipped", "scored", 1.0)]
    assert steps[4].runner_status == "skipped" and steps[0].runner_status is None
    assert [f.field for f in steps[0].field_scores] == ["extract.t", "extract.u"]


def test_pydantic_models_are_dumped():
    import pydantic

    class Author(pydantic.BaseModel):
        n: str

    class Paper(pydantic.BaseModel):
        title: str
        authors: list[Author]

    paper = Paper(title="T", authors=[Author(n="B"), Author(n="A")])
    step = score_step(paper, {"title": "T", "authors": [{"n": "A"}, {"n": "B"}]})
    assert step.score == 1.0
    assert score_step([Author(n="A")], [{"n": "A"}]).score == 1.0


def test_deep_mean_is_exact():
    expected = {"a": 1, "n": {"x": 1, "y": 1, "z": 1}}
    assert score_step({"a": 1, "n": {"x": 0, "y": 0, "z": 0}}, expected).score == 0.25
    assert math.isclose(score_step({"k": [1, 2]}, {"k": [1, 2, 3]}).score, 2 / 3)


def test_docs_examples_run(backend):
    assert run_python_blocks("cases.md", min_blocks=7) >= 10


def _fuzz_documents():
    from hypothesis import strategies as st

    from fuzz_harness import wrong_values

    leaves = st.one_of(st.sampled_from(["$ignore", "a", "", None, True, 0, 1.0]), wrong_values)
    keys = st.sampled_from(["a", "b", "$ordered", "$file"])
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=3)), max_leaves=12)


def test_hostile_documents_never_escape_and_backends_agree():
    """Random documents with hostile leaves (raising __eq__/__hash__, NumPy values, huge ints,
    NaN, bytes): scoring gives a result or a clear error, the same on both backends."""
    from hypothesis import given, settings

    from fuzz_harness import on_both_backends

    @settings(max_examples=300, deadline=None)
    @given(_fuzz_documents(), _fuzz_documents(), st_matching())
    def check(actual, expected, matching):
        on_both_backends(lambda: score_step(actual, expected, matching=matching),
                         view=lambda s: (s.score, s.status, [(f.field, f.score, f.status) for f in s.field_scores]))

    check()


def st_matching():
    from hypothesis import strategies as st

    return st.sampled_from(["greedy", "optimal"])


def test_result_objects_are_slotted_and_keep_their_behaviour():
    """The result classes are slotted dataclasses (a leaf is built faster: issue #33, "speed at the
    small end"); equality, repr, replace, asdict, pickling and assigning a field work as before,
    and an attribute that is not a field is refused."""
    import copy
    import dataclasses
    import pickle

    from scorekit.cases.results import FieldScore, ListMatch, StepScore

    step = score_step({"a": 1, "tags": ["x", "y"]}, {"a": 1, "tags": ["y", "z"]})
    leaf, listed = step.field_scores
    assert [leaf.field, leaf.score, listed.field, listed.score] == ["step.a", 1.0, "step.tags", 0.5]
    assert listed.match == ListMatch("greedy", 2, 2, [(0, 1, 1.0)], 0, 0.5, 0.5, 0.5)
    for cls in (FieldScore, ListMatch, StepScore):
        assert "__slots__" in cls.__dict__
    for obj in (step, leaf, listed.match):
        assert not hasattr(obj, "__dict__")
        assert pickle.loads(pickle.dumps(obj)) == obj and copy.deepcopy(obj) == obj
        assert dataclasses.replace(obj) == obj and dataclasses.asdict(obj) == dataclasses.asdict(copy.copy(obj))
    assert repr(leaf) == ("FieldScore(field='step.a', actual=1, expected=1, score=1.0, status='scored', "
                          "match=None, comparator=None)")
    assert dataclasses.asdict(leaf) == {"field": "step.a", "actual": 1, "expected": 1, "score": 1.0, "status": "scored",
                                        "match": None, "comparator": None}
    leaf.comparator = "exact"
    step.runner_status = "failed"
    assert (leaf.comparator, step.runner_status) == ("exact", "failed")
    with pytest.raises(AttributeError):
        leaf.note = "not a field"
