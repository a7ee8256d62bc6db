"""Flowchart benchmarks: image classification and rotation over saved label files, the parsing
benchmark over saved diagrams, and the text distances flowchart texts are compared with
(docs/flowcharts.md, docs/flowcharts-parsing.md).

Every public name of the subpackages is importable from here, loaded on first use: importing
``scorekit.flowcharts`` (or ``scorekit.flowcharts.cli``, which the ``scorekit`` command does on
every run) loads no benchmark module, so the parsing benchmark's heavier dependencies (pydantic,
SciPy) cost nothing until one of its names is used. :data:`_EXPORTS` has one line per name.
"""

from __future__ import annotations

import importlib
from typing import Any

_CLASSIFICATION = "scorekit.flowcharts.classification.classification_benchmark"
_DISTANCES = "scorekit.flowcharts.parsing.text_distance_fns"
_PARSING = "scorekit.flowcharts.parsing"
_TYPES = f"{_PARSING}.parsing_bench_types"
_MATCH = f"{_PARSING}.match_diagrams"

#: public name -> the module defining it
_EXPORTS: dict[str, str] = {
    "SingleClassificationResult": "scorekit.flowcharts.classification.classification_bench_types",
    "ClassificationBenchmark": _CLASSIFICATION,
    "BinaryClassificationBenchmark": _CLASSIFICATION,
    "MulticlassClassificationBenchmark": _CLASSIFICATION,
    "check_generic_classification_benchmark_data": _CLASSIFICATION,
    "load_classification_benchmark_results": _CLASSIFICATION,
    "RotationBenchmark": "scorekit.flowcharts.rotation.rotation_benchmark",
    "RotationLabel": "scorekit.flowcharts.rotation.rotation_benchmark",
    "DistanceFnProtocol": f"{_DISTANCES}.distance_fn_protocol",
    "levenshtein_fn": f"{_DISTANCES}.levenshtein_fn",
    "levenshtein_with_text_normalisation": f"{_DISTANCES}.levenshtein_fn",
    "number_only_levenshtein": f"{_DISTANCES}.levenshtein_fn",
    "nfc_and_space_normalise": f"{_DISTANCES}.normalise_text",
    "numbers_only_normalise": f"{_DISTANCES}.normalise_text",
    "ParsingBenchmark": f"{_PARSING}.parsing_bench",
    "ParsingBenchmarkCapabilities": f"{_PARSING}.parsing_bench",
    "N_DIAGRAMS_IN_BENCHMARK": f"{_PARSING}.check_parsing_bench_data",
    "Node": _TYPES,
    "Diagram": _TYPES,
    "DiagramOptions": _TYPES,
    "TextListMatch": _TYPES,
    "TextListMatches": _TYPES,
    "NodeMatch": _TYPES,
    "NodeMatches": _TYPES,
    "FlowScores": _TYPES,
    "DiagramMatch": _TYPES,
    "PredDiagramStructure": _TYPES,
    "Unproven": _TYPES,
    "match_texts_lists": _MATCH,
    "match_nodes_single_option": _MATCH,
    "match_nodes": _MATCH,
    "match_node_labels": _MATCH,
    "match_additional_texts": _MATCH,
    "match_single_diagram": _MATCH,
    "match_diagrams": _MATCH,
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
