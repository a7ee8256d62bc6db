"""The metric classes, re-exported, and their registration under the ``"metrics"`` namespace.

This package module owns two things: the public re-exports of the metric modules beside it and
the registration of the built-in metric names (``registry.get("metrics", name)``), done once at
import (re-importing re-registers the same names, so it is idempotent). Each metric lives in its
own module; nothing here computes a score.
"""

from __future__ import annotations

from scorekit.metrics.fields import FieldMetric
from scorekit.metrics.strings import StringMetric
from scorekit.registry import register

__all__ = ["FieldMetric", "StringMetric"]

register("metrics", "cer", StringMetric("cer"))
register("metrics", "wer", StringMetric("wer"))
register("metrics", "fields", FieldMetric())
