"""Benchmark extraction pipelines over a folder of cases (seed 003; docs/cases.md).

A case is a directory with one ``input.json|yaml|yml`` and one ``expected.json|yaml|yml``; the
expected file maps step names to the output each step should give. :class:`BenchmarkRunner` runs
one or several pipelines over every case, scores each step (:func:`score_step`), aggregates per
step and per pipeline, and :func:`generate_report` writes one self-contained HTML report.
"""

from scorekit.cases.discovery import Case, discover_cases
from scorekit.cases.errors import CasesConfigError, ComparatorError
from scorekit.cases.scoring import score_case, score_step
from scorekit.cases.results import (BenchmarkSummary, CaseResult, DagNode, FieldScore, ListMatch,
                                    PipelineBenchmarkResult, SkippedCase, StepScore)

__all__ = ["BenchmarkSummary", "CaseResult", "CasesConfigError", "ComparatorError", "DagNode", "FieldScore",
           "Case", "discover_cases", "score_case", "score_step",
           "ListMatch", "PipelineBenchmarkResult", "SkippedCase", "StepScore"]
