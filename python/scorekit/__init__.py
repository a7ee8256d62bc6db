"""scorekit: exact, fast evaluation of extraction systems against gold.

The top level mirrors the reference kit ``ek`` (``import scorekit as ek`` runs its documented
examples). This module owns only the public names, each imported on first access: the data model,
registry and canonicalisation too (stdlib-only, but a command that needs none of them, such as
``scorekit ocr-eval``, would pay for ``dataclasses``, ``inspect`` and their imports at every start).

>>> import scorekit as ek
>>> round(ek.score("hello wrld", "hello world").value, 3)   # CER by default
0.091
>>> ek.evaluate([("ct", "cat"), ("dg", "dog")], metric="cer").n
2
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below are imported on first access (see ``_LAZY``)
    from scorekit import canonicalize, registry
    from scorekit.base import (
        AnnotatedExtraction,
        Calibrator,
        ConfidenceSource,
        CostWeight,
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
        Normalizer,
        OcrBackend,
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
    from scorekit.canonicalize import Canonicalizer, default_canonicalizer
    from scorekit.registry import check_requirements, get, names, register, requires_extra, resolve

#: Names imported on first access: public name -> module that defines it.
_LAZY = {
    "AnnotatedExtraction": "scorekit.base",
    "Calibrator": "scorekit.base",
    "ConfidenceSource": "scorekit.base",
    "CostWeight": "scorekit.base",
    "Decision": "scorekit.base",
    "DecisionPolicy": "scorekit.base",
    "EdgeType": "scorekit.base",
    "FieldEstimate": "scorekit.base",
    "FieldSpec": "scorekit.base",
    "Finding": "scorekit.base",
    "GraphGrammar": "scorekit.base",
    "Metric": "scorekit.base",
    "NodePath": "scorekit.base",
    "NodeType": "scorekit.base",
    "Normalizer": "scorekit.base",
    "OcrBackend": "scorekit.base",
    "Provenance": "scorekit.base",
    "QualityReport": "scorekit.base",
    "Report": "scorekit.base",
    "Score": "scorekit.base",
    "Severity": "scorekit.base",
    "Signal": "scorekit.base",
    "TypeRef": "scorekit.base",
    "Validator": "scorekit.base",
    "default_cost_weight": "scorekit.base",
    "Canonicalizer": "scorekit.canonicalize",
    "default_canonicalizer": "scorekit.canonicalize",
    "check_requirements": "scorekit.registry",
    "get": "scorekit.registry",
    "names": "scorekit.registry",
    "register": "scorekit.registry",
    "requires_extra": "scorekit.registry",
    "resolve": "scorekit.registry",
    "score": "scorekit.facade",
    "evaluate": "scorekit.facade",
    "evaluate_arrow": "scorekit.arrow",
    "estimate_quality": "scorekit.qe.estimate",
    "estimate_quality_batch": "scorekit.qe.estimate",
    "StringMetric": "scorekit.metrics.strings",
    "FieldMetric": "scorekit.metrics.fields",
    "AnlsMetric": "scorekit.metrics.anls",
    "SpanF1Metric": "scorekit.metrics.spans",
    "MatchScheme": "scorekit.metrics.spans",
    "Cell": "scorekit.metrics.tables",
    "Table": "scorekit.metrics.tables",
    "TedsMetric": "scorekit.metrics.tables",
    "GritsMetric": "scorekit.metrics.tables",
    "Tree": "scorekit.trees",
    "tree_edit_distance": "scorekit.trees",
    "tree_edit_distance_batch": "scorekit.trees",
    "tree_edit_mapping": "scorekit.trees",
    "TypedGraph": "scorekit.metrics.graphs",
    "TypedNode": "scorekit.metrics.graphs",
    "TypedEdge": "scorekit.metrics.graphs",
    "TypedGraphMetric": "scorekit.metrics.graphs",
    "rover": "scorekit.qe",
    "VerifierSignal": "scorekit.qe",
    "LogprobSignal": "scorekit.qe",
    "IntrinsicConfidenceSignal": "scorekit.qe",
    "checksum_validator": "scorekit.qe",
    "regex_validator": "scorekit.qe",
    "range_validator": "scorekit.qe",
    "enum_validator": "scorekit.qe",
    "schema_validator": "scorekit.qe",
    "totals_consistent": "scorekit.qe",
    "luhn_check": "scorekit.qe",
    "iban_check": "scorekit.qe",
    "isbn_check": "scorekit.qe",
    "CostSensitiveGate": "scorekit.qe",
    "ConformalGate": "scorekit.qe",
    "GroupConformalGate": "scorekit.qe",
    "RiskControlGate": "scorekit.qe",
    "risk_coverage_curve": "scorekit.qe",
    "split_conformal_quantile": "scorekit.qe",
    "expected_calibration_error": "scorekit.qe",
    "reliability_curve": "scorekit.qe",
    "save_calibrator": "scorekit.qe",
    "load_calibrator": "scorekit.qe",
    "mean_probability": "scorekit.qe",
    "min_probability": "scorekit.qe",
    "PlattCalibrator": "scorekit.qe",
    "IsotonicCalibrator": "scorekit.qe",
    "TemperatureCalibrator": "scorekit.qe",
    "GroupCalibrator": "scorekit.qe",
    "SignalFamilyCalibrator": "scorekit.qe",
    "validation_pipeline": "scorekit.validate",
    "ValidationResult": "scorekit.validate",
    "Corrector": "scorekit.validate",
    "canonicalize_corrector": "scorekit.validate",
    "lexicon_corrector": "scorekit.validate",
    "cross_field_validator": "scorekit.validate",
    "ordering_validator": "scorekit.validate",
    "benford_findings": "scorekit.validate",
    "zscore_anomaly_findings": "scorekit.validate",
    "lm_surprisal_validator": "scorekit.validate",
    "llm_corrector": "scorekit.validate",
    "stop_on_correction": "scorekit.validate",
    "stop_on_flag": "scorekit.validate",
    "RoverConsensus": "scorekit.qe",
    "AgreementSignal": "scorekit.qe",
    "table_from_ocr": "scorekit.ocr",
    "has_table_structure": "scorekit.ocr",
    "resolve_table_parser": "scorekit.ocr",
    "engine_yields_tables": "scorekit.ocr",
    "Episode": "scorekit.agents",
    "TaskSpec": "scorekit.agents",
    "ToolSpec": "scorekit.agents",
    "evaluate_store": "scorekit.harness",
    "save_baseline": "scorekit.harness",
    "load_baseline": "scorekit.harness",
    "regression_gate": "scorekit.harness",
    "GateResult": "scorekit.harness",
    "json_store": "scorekit.stores",
    "mall": "scorekit.stores",
    "app_folder": "scorekit.stores",
    "persistent_cache": "scorekit.stores",
    "cache_this": "scorekit.stores",
    "krippendorff_alpha": "scorekit.harness",
    "cohen_kappa": "scorekit.harness",
    "percent_agreement": "scorekit.harness",
    "run_suite": "scorekit.agents",
    "pass_at_k": "scorekit.agents",
    "pass_hat_k": "scorekit.agents",
}
#: Subpackages importable as attributes (``ek.metrics``, ``ek.batch`` …).
_SUBMODULES = ("canonicalize", "registry", "metrics", "batch", "text", "facade", "trees", "flows", "agents", "qe",
               "graphs", "ocr", "harness", "validate", "stores", "tools", "arrow")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # slow to load: only when asked

    try:
        return version("scorekit")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0+source"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value = _version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"scorekit.{name}")
    else:
        raise AttributeError(f"module 'scorekit' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES) | {"__version__"})


__all__ = [
    "score", "evaluate", "evaluate_arrow", "arrow", "estimate_quality", "estimate_quality_batch", "GraphGrammar", "FieldSpec",
    "NodeType", "EdgeType", "TypeRef", "AnnotatedExtraction", "FieldEstimate", "NodePath", "Provenance",
    "Finding", "Decision", "Severity", "Score", "Report", "QualityReport", "Metric", "Validator",
    "Calibrator", "DecisionPolicy", "Signal", "Normalizer", "ConfidenceSource", "CostWeight", "OcrBackend",
    "default_cost_weight", "Canonicalizer", "default_canonicalizer", "register", "get", "resolve", "names",
    "requires_extra", "check_requirements", "canonicalize", "registry", "metrics", "__version__", "Cell",
    "Table", "TedsMetric", "GritsMetric", "StringMetric", "FieldMetric", "AnlsMetric", "SpanF1Metric", "MatchScheme", "Tree",
    "tree_edit_distance", "tree_edit_distance_batch",
    "tree_edit_mapping", "trees", "flows", "rover", "RoverConsensus", "AgreementSignal", "Episode",
    "TaskSpec", "ToolSpec", "run_suite", "pass_at_k", "pass_hat_k", "agents", "krippendorff_alpha",
    "cohen_kappa", "percent_agreement", "harness", "stores", "tools", "VerifierSignal", "LogprobSignal",
    "IntrinsicConfidenceSignal", "checksum_validator", "regex_validator", "range_validator",
    "enum_validator", "schema_validator", "totals_consistent", "luhn_check", "iban_check", "isbn_check",
    "CostSensitiveGate", "ConformalGate", "GroupConformalGate", "RiskControlGate", "risk_coverage_curve",
    "split_conformal_quantile", "PlattCalibrator", "IsotonicCalibrator", "TemperatureCalibrator", "GroupCalibrator",
    "SignalFamilyCalibrator", "mean_probability", "min_probability", "expected_calibration_error", "reliability_curve",
    "save_calibrator", "load_calibrator", "evaluate_store", "save_baseline", "load_baseline", "regression_gate", "GateResult",
    "json_store", "mall", "app_folder", "persistent_cache", "cache_this", "validation_pipeline", "ValidationResult", "Corrector",
    "canonicalize_corrector",
    "lexicon_corrector", "cross_field_validator", "ordering_validator", "benford_findings", "zscore_anomaly_findings",
    "lm_surprisal_validator", "llm_corrector", "stop_on_correction", "stop_on_flag", "validate", "qe", "TypedGraph", "TypedNode",
    "TypedEdge", "TypedGraphMetric", "graphs",
    "ocr", "table_from_ocr", "has_table_structure", "resolve_table_parser", "engine_yields_tables", "batch", "text",
    "facade",
]
