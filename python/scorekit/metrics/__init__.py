"""The metric classes, re-exported.

This package module owns only the public re-exports of the metric modules beside it, each imported
on first access so that importing one metric (``scorekit.metrics.strings`` on the text path) does not
load the others and their dependencies. The built-in metric names (``registry.get("metrics", name)``)
are registered by :mod:`scorekit.metrics.builtins`, which the registry imports before the first
lookup. Each metric lives in its own module; nothing here computes a score.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> module that defines it.
_EXPORTS = {
    "FieldMetric": "scorekit.metrics.fields",
    "StringMetric": "scorekit.metrics.strings",
    "Cell": "scorekit.metrics.tables",
    "Table": "scorekit.metrics.tables",
    "TedsMetric": "scorekit.metrics.tables",
    "GritsMetric": "scorekit.metrics.tables",
    "TypedGraphMetric": "scorekit.metrics.graphs",
    "TypedGraph": "scorekit.metrics.graphs",
    "TypedNode": "scorekit.metrics.graphs",
    "TypedEdge": "scorekit.metrics.graphs",
    "AnlsMetric": "scorekit.metrics.anls",
    "anls_scores": "scorekit.metrics.anls",
    "SpanF1Metric": "scorekit.metrics.spans",
    "MatchScheme": "scorekit.metrics.spans",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'scorekit.metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
