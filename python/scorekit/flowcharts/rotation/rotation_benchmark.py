"""The rotation benchmark: saved clockwise corrections (0, 90, 180 or 270 degrees) against ground
truth. Exact matches only: a neighbouring angle earns nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from scorekit.errors import InvalidTypeError
from scorekit.flowcharts.classification.classification_bench_types import SingleClassificationResult
from scorekit.flowcharts.classification.classification_benchmark import MulticlassClassificationBenchmark

__all__ = ["ROTATION_LABELS", "RotationBenchmark", "RotationLabel"]

RotationLabel = Literal[0, 90, 180, 270]
ROTATION_LABELS: tuple[RotationLabel, ...] = (0, 90, 180, 270)


@dataclass(frozen=True, kw_only=True)
class RotationBenchmark(MulticlassClassificationBenchmark[RotationLabel]):
    """A multiclass benchmark over the fixed labels ``(0, 90, 180, 270)`` (no ``labels`` argument).
    A boolean label is a ``TypeError`` (JSON ``false`` is not the angle 0); ``"90"``, ``45`` or
    ``360`` are ``ValueError`` (not a supported angle)."""

    labels: tuple[RotationLabel, ...] = field(default=ROTATION_LABELS, init=False)

    def _check_record(self, index: int, record: SingleClassificationResult[RotationLabel]) -> None:
        for value, pred in ((record.pred, True), (record.true, False)):
            if isinstance(value, bool):
                raise InvalidTypeError(
                    f"RotationBenchmark expects integer angle labels, not booleans. Found pred={record.pred!r}, "
                    f"true={record.true!r} for image {record.img_path!r}. ({self._entry(index, pred=pred)})")
