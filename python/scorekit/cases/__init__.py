"""Benchmark extraction pipelines over a folder of cases (seed 003; docs/cases.md).

A case is a directory with one ``input.json|yaml|yml`` and one ``expected.json|yaml|yml``; the
expected file maps step names to the output each step should give. :class:`BenchmarkRunner` runs
one or several pipelines over every case, scores each step (:func:`score_step`), aggregates per
step and per pipeline, and :func:`generate_report` writes one self-contained HTML report.
:func:`comparator` gives the named field comparators (``exact``, ``casefold``, ``fuzzy``, ``numeric``,
``date``, ``set``).
The runner, report, run comparison and pipeline adapters are imported on first use.
"""

from importlib import import_module
from typing import Any

from scorekit.cases.discovery import Case, discover_cases
from scorekit.cases.errors import CasesConfigError, ComparatorError
from scorekit.cases.scoring import score_case, score_step
from scorekit.cases.results import (BenchmarkSummary, CaseResult, DagNode, FieldScore, ListMatch,
                                    PipelineBenchmarkResult, SkippedCase, StepScore)

#: Public names defined in submodules, imported when first asked for.
_LAZY = {
    "BenchmarkRunner": "scorekit.cases.runner",
    "generate_report": "scorekit.cases.report",
    "compare_summaries": "scorekit.cases.compare",
    "comparator": "scorekit.cases.comparators",
    "Comparator": "scorekit.cases.comparators",
    "CallablePipeline": "scorekit.cases.pipelines",
    "CommandPipeline": "scorekit.cases.pipelines",
    "SavedOutputsPipeline": "scorekit.cases.pipelines",
    "PyconveyorPipeline": "scorekit.cases.pipelines",
    "PipelineRun": "scorekit.cases.pipelines",
    "PipelineError": "scorekit.cases.pipelines",
    "resolve_pipeline": "scorekit.cases.pipelines",
}

__all__ = ["BenchmarkSummary", "CaseResult", "CasesConfigError", "ComparatorError", "DagNode", "FieldScore",
           "Case", "discover_cases", "score_case", "score_step",
           "ListMatch", "PipelineBenchmarkResult", "SkippedCase", "StepScore", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'scorekit.cases' has no attribute {name!r}")
