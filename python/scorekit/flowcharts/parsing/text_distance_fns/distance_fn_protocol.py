"""The shape of a text distance a flowchart benchmark accepts as ``distance_fn``."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["DistanceFnProtocol"]


@runtime_checkable
class DistanceFnProtocol(Protocol):
    """A callable giving the cost of reading ``pred_text`` where the ground truth says ``true_text``.

    Benchmarks call it by keyword. Either side may be ``None`` (an unmatched text), never both.
    The cost must be a finite number ``>= 0``; lower means closer. The protocol only describes the
    interface: it computes and checks nothing, and a plain function with these keyword parameters
    satisfies it without inheriting from it.
    """

    def __call__(self, *, true_text: str | None, pred_text: str | None) -> int | float: ...
