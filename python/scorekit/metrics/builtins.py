"""Registration of the built-in metric names under the ``"metrics"`` namespace.

Imported by the registry before the first ``"metrics"`` lookup (``registry.BUILTIN_MODULES``);
re-importing re-registers the same names, so it is idempotent.
"""

from __future__ import annotations

from scorekit.metrics.anls import AnlsMetric
from scorekit.metrics.fields import FieldMetric
from scorekit.metrics.graphs import TypedGraphMetric
from scorekit.metrics.spans import MatchScheme, SpanF1Metric
from scorekit.metrics.strings import StringMetric
from scorekit.metrics.tables import GritsMetric, TedsMetric
from scorekit.registry import register

register("metrics", "cer", StringMetric("cer"))
register("metrics", "wer", StringMetric("wer"))
register("metrics", "fields", FieldMetric())
register("metrics", "anls", AnlsMetric())
register("metrics", "graph", TypedGraphMetric())
register("metrics", "typed_graph", TypedGraphMetric())
for _scheme in MatchScheme:
    register("metrics", f"span_f1.{_scheme.value}", SpanF1Metric(_scheme))
register("metrics", "teds", TedsMetric())
register("metrics", "teds_struct", TedsMetric(structure_only=True))
register("metrics", "grits", GritsMetric())
register("metrics", "grits_con", GritsMetric())
register("metrics", "grits_top", GritsMetric(structure_only=True))
