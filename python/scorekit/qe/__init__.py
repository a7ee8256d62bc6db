"""Reference-free quality estimation (``ek.qe``): this issue's part is ROVER agreement.

This package module owns the public re-exports of ``scorekit.qe`` and the registration of the
``"agreement"`` signal (the :class:`AgreementSignal` class) under the ``"signals"`` namespace. As in
the reference, the attribute ``scorekit.qe.rover`` is the :func:`rover` function, which shadows the
submodule of the same name (``from scorekit.qe.rover import …`` still works). The calibration,
decision, signal and verifier modules come with their own issue.
"""

from __future__ import annotations

from scorekit.qe.rover import AgreementSignal, RoverConsensus, RoverSlot, rover
from scorekit.registry import register

__all__ = ["rover", "RoverConsensus", "RoverSlot", "AgreementSignal"]

register("signals", "agreement", AgreementSignal)
