"""Reference-free quality estimation (``ek.qe``): signals, verifiers, calibration, decisions, ROVER.

This package module owns the public re-exports of ``scorekit.qe`` and the registration of the
``"agreement"`` signal (the :class:`AgreementSignal` class) under the ``"signals"`` namespace (the
other modules register their own strategies when imported here). As in the reference, the
attribute ``scorekit.qe.rover`` is the :func:`rover` function, which shadows the submodule of the
same name (``from scorekit.qe.rover import …`` still works).
"""

from __future__ import annotations

from scorekit.qe.calibrate import (
    GroupCalibrator,
    IsotonicCalibrator,
    PlattCalibrator,
    SignalFamilyCalibrator,
    TemperatureCalibrator,
    expected_calibration_error,
    load_calibrator,
    mean_probability,
    min_probability,
    reliability_curve,
    save_calibrator,
    sklearn_calibrator,
)
from scorekit.qe.decide import (
    ConformalGate,
    CostSensitiveGate,
    GroupConformalGate,
    RiskControlGate,
    risk_coverage_curve,
    split_conformal_quantile,
)
from scorekit.qe.rover import AgreementSignal, RoverConsensus, RoverSlot, agreement_batch, rover
from scorekit.qe.signals import (
    IntrinsicConfidenceSignal,
    LogprobSignal,
    geo_mean,
    length_normalized,
    mean_prob,
    min_prob,
)
from scorekit.qe.verifiers import (
    VerifierSignal,
    checksum_validator,
    enum_validator,
    iban_check,
    isbn_check,
    luhn_check,
    range_validator,
    regex_validator,
    schema_validator,
    totals_consistent,
)
from scorekit.registry import register

__all__ = ["rover", "RoverConsensus", "RoverSlot", "AgreementSignal", "agreement_batch",
           "VerifierSignal", "LogprobSignal", "IntrinsicConfidenceSignal", "geo_mean", "length_normalized",
           "min_prob", "mean_prob",
           "checksum_validator", "regex_validator", "range_validator", "enum_validator", "schema_validator",
           "totals_consistent", "luhn_check", "iban_check", "isbn_check",
           "CostSensitiveGate", "ConformalGate", "GroupConformalGate", "RiskControlGate", "risk_coverage_curve",
           "split_conformal_quantile",
           "PlattCalibrator", "IsotonicCalibrator", "TemperatureCalibrator", "GroupCalibrator", "SignalFamilyCalibrator",
           "mean_probability", "min_probability", "expected_calibration_error", "reliability_curve", "save_calibrator",
           "load_calibrator", "sklearn_calibrator"]

register("signals", "agreement", AgreementSignal)
