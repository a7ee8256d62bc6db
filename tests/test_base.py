"""scorekit.base: the data model, cost lookups, result objects and protocols."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import scorekit.base as base
from scorekit.base import (
    AnnotatedExtraction,
    Calibrator,
    Decision,
    DecisionPolicy,
    EdgeType,
    FieldEstimate,
    FieldSpec,
    Finding,
    GraphGrammar,
    Metric,
    NodePath,
    NodeType,
    Provenance,
    QualityReport,
    Report,
    Score,
    Severity,
    Signal,
    TypeRef,
    Validator,
    default_cost_weight,
)

PYTHON_ROOT = Path(base.__file__).resolve().parents[1]


def test_module_doctest() -> None:
    result = doctest.testmod(base)
    assert result.attempted >= 3 and result.failed == 0


def test_documented_grammar_example() -> None:
    g = GraphGrammar(
        node_types={
            "donation": NodeType(
                "donation",
                fields={
                    "amount": FieldSpec("amount", "number", importance=10.0),
                    "city": FieldSpec("city", "string", importance=1.0),
                },
            )
        },
    )
    assert g.field_cost("donation", "amount") == 10.0
    assert g.field_cost("donation", "city") == 1.0


@pytest.fixture
def grammar() -> GraphGrammar:
    return GraphGrammar(
        node_types={
            "donation": NodeType(
                "donation",
                fields={"amount": FieldSpec("amount", "number", importance=10.0)},
                importance=3.0,
            )
        },
        edge_types={"made_by": EdgeType("made_by", "donation", "person", importance=2.0)},
    )


def test_cost_lookups(grammar: GraphGrammar) -> None:
    assert grammar.field_cost("donation", "amount") == 10.0
    assert grammar.field_cost("donation", "nope") == 1.0
    assert grammar.field_cost("nope", "amount") == 1.0
    assert grammar.node_cost("donation") == 3.0
    assert grammar.node_cost("nope") == 1.0
    assert grammar.edge_cost("made_by") == 2.0
    assert grammar.edge_cost("nope") == 1.0


def test_default_cost_weight(grammar: GraphGrammar) -> None:
    assert default_cost_weight(grammar, TypeRef("field", "donation", "amount")) == 10.0
    assert default_cost_weight(grammar, TypeRef("node", "donation")) == 3.0
    assert default_cost_weight(grammar, TypeRef("edge", "made_by")) == 2.0
    assert default_cost_weight(grammar, TypeRef("bogus", "x")) == 1.0
    assert default_cost_weight(grammar, TypeRef("field", "donation")) == 1.0


def test_empty_grammar_costs_one_everywhere() -> None:
    g = GraphGrammar()
    assert g.node_types == {} and g.edge_types == {}
    assert g.cost(TypeRef("node", "x")) == 1.0
    assert g.cost(TypeRef("edge", "x")) == 1.0
    assert g.cost(TypeRef("field", "x", "y")) == 1.0


def test_costs_are_floats() -> None:
    g = GraphGrammar(node_types={"n": NodeType("n", importance=4)})
    assert g.node_cost("n") == 4.0 and isinstance(g.node_cost("n"), float)


def test_field_spec_defaults() -> None:
    spec = FieldSpec("city")
    assert (spec.type, spec.importance, spec.domain, spec.normalizer) == ("string", 1.0, (), None)


def test_layer_a_is_frozen(grammar: GraphGrammar) -> None:
    for obj, attribute in [
        (grammar, "node_types"),
        (FieldSpec("a"), "importance"),
        (NodeType("n"), "importance"),
        (EdgeType("e", "a", "b"), "importance"),
        (TypeRef("node", "n"), "name"),
    ]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attribute, 5.0)


def test_mutable_defaults_are_per_instance() -> None:
    assert NodeType("a").fields is not NodeType("b").fields
    assert GraphGrammar().node_types is not GraphGrammar().node_types
    assert Score(0.0).detail is not Score(0.0).detail
    assert Report().scores is not Report().scores
    assert Report().per_slice is not Report().per_slice
    assert FieldEstimate("x").raw_signals is not FieldEstimate("x").raw_signals
    assert QualityReport().provenance is not QualityReport().provenance


def test_enums_serialise_as_plain_strings() -> None:
    assert json.dumps({"decision": Decision.FLAG}) == '{"decision": "flag"}'
    assert json.dumps({"d": Decision.BLOCK, "s": Severity.CORRECT}) == '{"d": "block", "s": "correct"}'
    assert [d.value for d in Decision] == ["accept", "flag", "block"]
    assert [s.value for s in Severity] == ["correct", "flag"]
    assert Decision("accept") is Decision.ACCEPT and Decision.FLAG == "flag"


def test_layer_b_objects() -> None:
    provenance = Provenance(engine="tesseract")
    assert provenance.bbox is None and provenance.source_span is None
    assert tuple(provenance.raw_transcripts) == ()

    path = NodePath("d1", "donation", "amount")
    assert {path: 1}[NodePath("d1", "donation", "amount")] == 1
    assert NodePath("d1", "donation").field is None

    finding = Finding("amount", "schema")
    assert finding.severity is Severity.FLAG and finding.message == "" and finding.suggestion is None

    estimate = FieldEstimate("100")
    assert (estimate.confidence, estimate.findings, estimate.provenance, estimate.decision) == (
        None,
        (),
        None,
        None,
    )

    g = GraphGrammar()
    extraction = AnnotatedExtraction(g, {path: estimate})
    assert extraction.grammar is g and extraction.estimates[path] is estimate
    assert AnnotatedExtraction(g).estimates == {}


def test_score_float_and_defaults() -> None:
    s = Score(value=0.25, metric="cer")
    assert float(s) == 0.25
    assert (s.precision, s.recall, s.f1, s.detail) == (None, None, None, {})
    assert float(Score(value=1)) == 1.0


def test_report_float_is_aggregate_or_nan() -> None:
    assert math.isnan(float(Report()))
    assert float(Report(aggregate=0.5)) == 0.5
    r = Report()
    assert (r.metric, r.aggregate, r.n, list(r.scores), r.per_slice, r.detail) == ("", None, 0, [], {}, {})


class LazyScores(Sequence):
    """Builds a Score per access, as the facade's lazy sequence does."""

    def __init__(self, values: list[float]) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return Score(self.values[index], metric="m")


def test_report_accepts_any_sequence() -> None:
    lazy = LazyScores([0.1, 0.2])
    report = Report(metric="m", aggregate=0.15, n=2, scores=lazy)
    assert report.scores is lazy
    assert [s.value for s in report.scores] == [0.1, 0.2]


def test_quality_report_defaults() -> None:
    q = QualityReport()
    assert (q.calibrated_confidence, q.decision, q.findings, q.raw_signals, q.provenance, q.per_field) == (
        None,
        None,
        (),
        {},
        {},
        None,
    )


def test_protocols_are_structural() -> None:
    def metric(pred, gold, *, grammar=None):  # type: ignore[no-untyped-def]
        return Score(float(pred == gold))

    class Platt:
        def fit(self, scores, correct):  # type: ignore[no-untyped-def]
            return self

        def __call__(self, raw_score):  # type: ignore[no-untyped-def]
            return raw_score

    class Cheap:
        cost_tier = 0

        def __call__(self, output):  # type: ignore[no-untyped-def]
            return 1.0

    class NoTier:
        def __call__(self, output):  # type: ignore[no-untyped-def]
            return 1.0

    assert isinstance(metric, Metric)
    assert isinstance(metric, Validator) and isinstance(metric, DecisionPolicy)
    assert isinstance(Platt(), Calibrator)
    assert not isinstance(NoTier(), Calibrator)
    assert isinstance(Cheap(), Signal)
    assert not isinstance(NoTier(), Signal)
    assert not isinstance(42, Metric)


def test_aliases_exist() -> None:
    for alias in ("Normalizer", "ConfidenceSource", "CostWeight", "OcrBackend"):
        assert getattr(base, alias) is not None
    assert set(base.__all__) <= set(dir(base))


def test_base_imports_only_the_stdlib() -> None:
    tree = ast.parse(Path(base.__file__).read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "scorekit.base must not import from the package"
            imported.add((node.module or "").split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


def test_importing_base_does_not_import_numpy() -> None:
    code = "import sys, scorekit.base; print(sorted(m for m in ('numpy', 'numba') if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_ROOT), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr
