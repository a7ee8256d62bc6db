"""Flowchart benchmarks: the parsing benchmark (docs/flowcharts-parsing.md).

Every public name is importable from here and loaded on first use, so ``import scorekit.flowcharts``
needs neither pydantic nor SciPy. :data:`_EXPORTS` has one line per name.
"""

from __future__ import annotations

import importlib
from typing import Any

_PARSING = "scorekit.flowcharts.parsing"
_TYPES = f"{_PARSING}.parsing_bench_types"
_MATCH = f"{_PARSING}.match_diagrams"

#: public name -> the module defining it
_EXPORTS: dict[str, str] = {
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
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
