"""scorekit.metrics.fields.FieldMetric (ek's documented field vectors)."""

from __future__ import annotations

import gc
import math

import pytest

import scorekit.metrics.fields as fields_module
from scorekit.base import FieldSpec, GraphGrammar, NodeType, Score
from scorekit.canonicalize import Canonicalizer, lower
from scorekit.metrics.fields import FieldMetric
from scorekit.registry import get


def record_grammar(**normalizers: str | None) -> GraphGrammar:
    return GraphGrammar(
        node_types={
            "rec": NodeType(
                "rec", fields={name: FieldSpec(name, normalizer=norm) for name, norm in normalizers.items()}
            )
        }
    )


def test_one_wrong_value_is_a_false_positive_and_a_false_negative() -> None:
    score = FieldMetric()(
        {"name": "Acme", "city": "Paris", "amount": "100"},
        {"name": "Acme", "city": "Paris", "amount": "200"},
    )
    assert score.metric == "fields"
    assert score.detail == {"tp": 2, "fp": 1, "fn": 1, "higher_is_better": True}
    assert score.precision == pytest.approx(2 / 3) and score.recall == pytest.approx(2 / 3)
    assert score.value == score.f1 == pytest.approx(2 / 3)


def test_missing_and_spurious_keys() -> None:
    score = FieldMetric()({"a": "1", "extra": "x"}, {"a": "1", "b": "2"})
    assert score.detail == {"tp": 1, "fp": 1, "fn": 1, "higher_is_better": True}


def test_empty_records() -> None:
    both_empty = FieldMetric()({}, {})
    assert (both_empty.precision, both_empty.recall, both_empty.f1, both_empty.value) == (1.0, 1.0, 1.0, 1.0)
    spurious = FieldMetric()({"a": 1}, {})
    assert (spurious.precision, spurious.recall, spurious.f1) == (0.0, 0.0, 0.0)
    missed = FieldMetric()({}, {"a": 1})
    assert (missed.precision, missed.recall, missed.f1) == (0.0, 0.0, 0.0)


def test_none_values_are_present_and_compared_with_eq() -> None:
    assert FieldMetric()({"a": None}, {"a": None}).detail["tp"] == 1
    assert FieldMetric()({"a": 100}, {"a": "100"}).detail == {"tp": 0, "fp": 1, "fn": 1, "higher_is_better": True}
    assert FieldMetric()({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}).value == 1.0


def test_aggregate_is_micro_f1() -> None:
    metric = FieldMetric()
    scores = [metric({"a": "1", "b": "2"}, {"a": "1", "b": "2"}), metric({"a": "9"}, {"a": "1", "b": "2"})]
    assert [s.detail["tp"] for s in scores] == [2, 0]
    p, r = 2 / 3, 1 / 2
    assert metric.aggregate(scores) == pytest.approx(2 * p * r / (p + r))
    assert metric.aggregate(scores) == pytest.approx(0.5714285714285714)
    assert metric.aggregate(scores) != pytest.approx(sum(s.value for s in scores) / 2)


def test_aggregate_edge_cases() -> None:
    metric = FieldMetric()
    assert metric.aggregate([]) == 1.0
    assert metric.aggregate([metric({}, {})]) == 1.0
    assert metric.aggregate([Score(0.5)]) == 1.0  # missing counts are zero
    assert metric.aggregate([metric({"a": 1}, {})]) == 0.0
    assert metric.aggregate([metric({}, {"a": 1})]) == 0.0
    assert metric.aggregate(iter([metric({"a": 1}, {"a": 1})])) == 1.0


def test_canonicalizer_applies_to_strings_only() -> None:
    metric = FieldMetric(canonicalizer=Canonicalizer(["lower", "collapse_whitespace"]))
    assert metric({"a": "ACME  Corp", "n": 5}, {"a": "acme corp", "n": 5}).value == 1.0
    assert FieldMetric()({"a": "ACME"}, {"a": "acme"}).value == 0.0
    assert FieldMetric(canonicalizer=lower)({"a": "X"}, {"a": ["x"]}).value == 0.0


def test_grammar_normalizers_take_precedence() -> None:
    g = record_grammar(name="lower", code=None)
    metric = FieldMetric()
    partial = metric({"name": "ACME", "code": "ab"}, {"name": "acme", "code": "AB"}, grammar=g)
    assert partial.detail["tp"] == 1 and partial.f1 < 1.0
    assert metric({"name": "ACME", "code": "AB"}, {"name": "acme", "code": "AB"}, grammar=g).f1 == 1.0

    collapse_only = FieldMetric(canonicalizer=Canonicalizer(["collapse_whitespace"]))
    g_strip = record_grammar(name="strip")
    # The metric-wide canonicalizer would match " a  b " with "a b"; the field's own one does not.
    assert collapse_only({"name": " a  b "}, {"name": "a b"}, grammar=g_strip).value == 0.0
    assert collapse_only({"other": " a  b "}, {"other": "a b"}, grammar=g_strip).value == 1.0


def test_later_node_type_wins_a_field_name_clash() -> None:
    g = GraphGrammar(
        node_types={
            "a": NodeType("a", fields={"x": FieldSpec("x", normalizer="strip")}),
            "b": NodeType("b", fields={"x": FieldSpec("x", normalizer="lower")}),
        }
    )
    assert FieldMetric()({"x": "ABC"}, {"x": "abc"}, grammar=g).value == 1.0
    assert FieldMetric()({"x": " abc"}, {"x": "abc"}, grammar=g).value == 0.0


def test_field_normalizers_are_cached_per_grammar_object() -> None:
    g = record_grammar(name="lower")
    first = fields_module._field_normalizers(g)
    assert first == {"name": lower}
    assert fields_module._field_normalizers(g) is first
    equal_but_distinct = record_grammar(name="lower")
    assert fields_module._field_normalizers(equal_but_distinct) is not first

    key = id(g)
    assert key in fields_module._normalizer_cache
    del g, first
    gc.collect()
    assert key not in fields_module._normalizer_cache


def test_unknown_grammar_normalizer_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="no_such_normalizer"):
        FieldMetric()({"name": "a"}, {"name": "a"}, grammar=record_grammar(name="no_such_normalizer"))


def test_non_mapping_input_is_a_type_error() -> None:
    with pytest.raises(TypeError) as info:
        FieldMetric()([("a", 1)], {"a": 1})
    assert str(info.value) == "FieldMetric compares Mapping records; got list vs dict"
    with pytest.raises(TypeError, match="got dict vs str"):
        FieldMetric()({}, "x")
    with pytest.raises(TypeError, match="canonicalizer"):
        FieldMetric(canonicalizer="lower")  # type: ignore[arg-type]


def test_name_and_registration() -> None:
    import scorekit.metrics  # noqa: F401  (registers the built-in metric names)

    assert FieldMetric.name == "fields"
    registered = get("metrics", "fields")
    assert isinstance(registered, FieldMetric) and registered.canonicalizer is None
    score = registered({"a": "1"}, {"a": "2"})
    assert score.value == 0.0 and not math.isnan(registered.aggregate([score]))


def test_values_without_a_truth_value_compare_exactly() -> None:
    """NumPy arrays (whose ``==`` has no truth value) and comparisons that raise (an array against
    an int too large for a float) compare by exact value instead of escaping as errors."""
    import numpy as np

    from scorekit.metrics.fields import FieldMetric

    s = FieldMetric()({"a": np.array([1, 2]), "b": np.array([]), "c": 3}, {"a": [1.0, 2.0], "b": 10**400, "c": np.int64(3)})
    assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (1, 2, 2)
    same_arrays = FieldMetric()({"a": np.array([1, 2])}, {"a": np.array([1.0, 2.0])})
    assert same_arrays.value == 1.0
