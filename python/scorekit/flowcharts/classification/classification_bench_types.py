"""One image's saved ground-truth and predicted labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["LabelType", "SingleClassificationResult"]

LabelType = TypeVar("LabelType")


@dataclass(frozen=True, kw_only=True)
class SingleClassificationResult(Generic[LabelType]):
    """The ground-truth (``true``) and predicted (``pred``) label of the image at ``img_path``
    (the ground-truth file's path). Plain data: compared and hashed by value, not validated."""

    img_path: str
    pred: LabelType
    true: LabelType
