"""The metric classes, re-exported, and their registration under the ``"metrics"`` namespace.

This package module owns two things: the public re-exports of the metric modules beside it and
the registration of the built-in metric names (``registry.get("metrics", name)``), done once at
import (re-importing re-registers the same names, so it is idempotent). Each metric lives in its
own module; nothing here computes a score.
"""

from __future__ import annotations

from scorekit.metrics.fields import FieldMetric
from scorekit.metrics.graphs import TypedEdge, TypedGraph, TypedGraphMetric, TypedNode
from scorekit.metrics.strings import StringMetric
from scorekit.metrics.tables import Cell, GritsMetric, Table, TedsMetric
from scorekit.registry import register

__all__ = ["FieldMetric", "StringMetric", "Cell", "Table", "TedsMetric", "GritsMetric", "TypedGraphMetric",
           "TypedGraph", "TypedNode", "TypedEdge"]

register("metrics", "cer", StringMetric("cer"))
register("metrics", "wer", StringMetric("wer"))
register("metrics", "fields", FieldMetric())
register("metrics", "graph", TypedGraphMetric())
register("metrics", "typed_graph", TypedGraphMetric())
register("metrics", "teds", TedsMetric())
register("metrics", "teds_struct", TedsMetric(structure_only=True))
register("metrics", "grits", GritsMetric())
register("metrics", "grits_con", GritsMetric())
register("metrics", "grits_top", GritsMetric(structure_only=True))
