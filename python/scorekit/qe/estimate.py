"""Quality without gold: the ``signal -> calibrate -> validate -> decide`` pipeline.

This module owns :func:`estimate_quality` (one raw value, one :class:`~scorekit.base.FieldEstimate`
or a whole :class:`~scorekit.base.AnnotatedExtraction`) and :func:`estimate_quality_batch` (a corpus
of values in one call: the ROVER agreement of every item in one compiled batch, and the set-up —
validator lists, the calibrator's and policy's Mondrian capability — done once). Signals give raw
scores, a calibrator turns them into a probability, validators add findings, and a policy decides
accept / flag / block. Gating a raw score is refused (Hard Rule 1): a policy needs a calibrator,
or ``assume_calibrated=True``.

>>> r = estimate_quality("the cat sat", sources=["the cat sat", "the bat sat"])
>>> round(r.raw_signals["agreement"], 3), r.calibrated_confidence == r.raw_signals["agreement"]
(0.889, True)
>>> r.decision is None, r.provenance["calibrated"]
(True, False)
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from scorekit._gc import cyclic_gc_paused
from scorekit.base import AnnotatedExtraction, Decision, FieldEstimate, QualityReport, Severity
from scorekit.qe.calibrate import SignalFamilyCalibrator, accepts_group

__all__ = ["estimate_quality", "estimate_quality_batch"]

_RANK = {Decision.ACCEPT: 0, Decision.FLAG: 1, Decision.BLOCK: 2}

_UNCALIBRATED = (
    "estimate_quality: refusing to gate uncalibrated signals (Hard Rule 1 -- a raw score is not a "
    "probability). Pass calibrator= (e.g. a PlattCalibrator fitted on labelled data), or "
    "assume_calibrated=True if the incoming confidence is already calibrated.")


def _name(obj: Any, index: int, prefix: str) -> str:
    name = getattr(obj, "name", None)
    if isinstance(name, str):
        return name
    name = getattr(obj, "__name__", None)
    return name if isinstance(name, str) else f"{prefix}_{index}"


class _Pipeline:
    """The stages of one ``estimate_quality`` call, checked and prepared once."""

    def __init__(self, *, signals: Iterable, calibrator: Any, validators: Any, policy: Any,
                 assume_calibrated: bool) -> None:
        if policy is not None and calibrator is None and not assume_calibrated:
            raise ValueError(_UNCALIBRATED)
        if isinstance(calibrator, Mapping) and not callable(calibrator):
            calibrator = SignalFamilyCalibrator(calibrators=dict(calibrator))
        self.signals = [(s, _name(s, i, "signal")) for i, s in enumerate(signals)]
        for s, name in self.signals:
            if not callable(s):
                raise TypeError(f"estimate_quality: signal {name!r} is a {type(s).__name__}, not a callable")
        if isinstance(validators, Mapping):
            self.validators: Any = {key: self._named(vs, f"validators[{key!r}]") for key, vs in validators.items()}
            self.all_validators = [v for vs in self.validators.values() for v in vs]
        else:
            self.validators = self.all_validators = self._named(validators, "validators")
        self.calibrator = calibrator
        self.family = hasattr(calibrator, "calibrate_signals") and hasattr(calibrator, "fusion")
        self.calibrator_grouped = calibrator is not None and accepts_group(calibrator)
        self.policy = policy
        self.policy_grouped = policy is not None and accepts_group(policy)
        self.gating = policy is not None and not assume_calibrated
        self.failures: list[dict] = []
        #: nothing but the agreement: no signal, validator, calibrator or policy
        self.bare = not self.signals and not self.all_validators and calibrator is None and policy is None

    @staticmethod
    def _named(validators: Any, where: str) -> list:
        if validators is None:
            return []
        if callable(validators) or isinstance(validators, (str, bytes)):
            raise TypeError(f"estimate_quality: {where} must be an iterable of validators, got one "
                            f"{type(validators).__name__}")
        out = [(v, _name(v, i, "validator")) for i, v in enumerate(validators)]
        for v, name in out:
            if not callable(v):
                raise TypeError(f"estimate_quality: validator {name!r} is a {type(v).__name__}, not a callable")
        return out

    def run_signals(self, target: Any, raw: dict) -> None:
        for sig, name in self.signals:
            try:
                out = sig(target)
                if isinstance(out, Mapping):
                    raw.update(out)
                else:
                    raw[name] = float(out)
            except Exception as exc:  # a failing signal is reported, never fatal
                self.failures.append({"signal": name, "error": repr(exc)})
                warnings.warn(f"estimate_quality: signal {name!r} failed: {exc!r}", UserWarning, stacklevel=4)

    def validators_for(self, node_type: Optional[str] = None, field: Optional[str] = None) -> list:
        if not isinstance(self.validators, Mapping):
            return self.validators
        chosen = list(self.validators.get("*", ()))
        if node_type is not None:
            chosen += self.validators.get(node_type, ())
        if field is not None:
            chosen += self.validators.get(field, ())
        return chosen

    def run_validators(self, validators: list, value: Any, spec: Any, findings: list) -> None:
        for v, name in validators:
            try:
                findings.extend(v(value, spec=spec))
            except Exception as exc:  # a failing validator is reported, never fatal
                self.failures.append({"validator": name, "error": repr(exc)})
                warnings.warn(f"estimate_quality: validator {name!r} failed: {exc!r}", UserWarning, stacklevel=4)

    def calibrate(self, confidence: Any, raw: Mapping, group: Any) -> tuple[Optional[float], bool, Optional[dict]]:
        cal = self.calibrator
        if self.family:
            families = dict(raw)
            if confidence is not None:
                families["confidence"] = confidence
            if not families:
                return None, False, None
            per_family = cal.calibrate_signals(families, group=group)
            if self.gating and len(per_family) > 1 and cal.fusion is None:
                raise ValueError(
                    "estimate_quality: the confidence fuses several calibrated signal families, and the fused "
                    "value is not itself calibrated (no fusion calibrator). Fit the SignalFamilyCalibrator on "
                    "labelled rows (it learns a fusion calibrator), or pass assume_calibrated=True.")
            return cal.fuse(per_family), len(per_family) == 1 or cal.fusion is not None, per_family
        base = confidence
        if base is None and raw:
            values = list(raw.values())
            for name, v in raw.items():
                if type(v) is not float and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
                    raise TypeError(f"estimate_quality: raw signal {name!r} is {v!r}, not a number; a Mapping "
                                    "signal must give numbers")
            base = sum(values) / len(values)
        if cal is None or base is None:
            return base, False, None
        value = cal(base, group=group) if group is not None and self.calibrator_grouped else cal(base)
        return value, True, None

    def decide(self, confidence: Optional[float], group: Any) -> Optional[Decision]:
        if self.policy is None or confidence is None:
            return None
        if group is not None and self.policy_grouped:
            return self.policy(confidence, group=group)
        return self.policy(confidence)


def _flagged(decision: Optional[Decision], findings: Iterable) -> Optional[Decision]:
    """A FLAG finding turns an ACCEPT into a FLAG (a failed verifier is never accepted silently)."""
    if decision == Decision.ACCEPT and any(getattr(f, "severity", None) == Severity.FLAG for f in findings):
        return Decision.FLAG
    return decision


def _as_hypothesis(value: Any) -> Any:
    """A value ROVER can read: strings, token lists and OCR results as they are; other scalars as text."""
    if isinstance(value, (str, list, tuple)) or hasattr(value, "text"):
        return value
    return "" if value is None else str(value)


def _check_sources(sources: list) -> None:
    for i, s in enumerate(sources):
        if callable(s) and not isinstance(s, str) and not hasattr(s, "text"):
            raise TypeError(
                f"estimate_quality: sources[{i}] is a callable. `sources` are alternative hypotheses of the same "
                "content (strings or OCR results), not signal callables. Pass Signal callables via `signals=` "
                "instead.")


def _single(pipe: _Pipeline, extraction: Any, agreement_value: Optional[float]) -> QualityReport:
    if type(extraction) is str:  # the common case, without attribute look-ups
        value, raw, findings, confidence = extraction, {}, [], None
    else:
        value = extraction.value if isinstance(extraction, FieldEstimate) else extraction
        raw = dict(getattr(extraction, "raw_signals", None) or {})
        findings = list(getattr(extraction, "findings", None) or ())
        confidence = getattr(extraction, "confidence", None)
    if pipe.signals:
        pipe.run_signals(extraction, raw)
    if agreement_value is not None:
        raw["agreement"] = agreement_value
    if pipe.all_validators:
        pipe.run_validators(pipe.all_validators, value, None, findings)
    confidence, did, per_family = pipe.calibrate(confidence, raw, None)
    decision = _flagged(pipe.decide(confidence, None), findings) if pipe.policy is not None else None
    provenance: dict[str, Any] = {"n_signals": len(raw), "calibrated": did}
    if per_family is not None:
        provenance["calibrated_signals"] = per_family
    if pipe.failures:
        provenance["failures"] = list(pipe.failures)
    return QualityReport(confidence, decision, tuple(findings), raw, provenance, None)


def _spec_of(grammar: Any, path: Any) -> Any:
    if path.field is None:
        return None
    node = getattr(grammar, "node_types", {}).get(path.node_type)
    return None if node is None else node.fields.get(path.field)


def _annotated(pipe: _Pipeline, extraction: AnnotatedExtraction, sources: list, agreement: bool) -> QualityReport:
    from scorekit.qe.rover import AgreementSignal

    shared = AgreementSignal()([_as_hypothesis(s) for s in sources]) if agreement and len(sources) >= 2 else None
    per_field, every_finding, calibrated_any, by_family = {}, [], False, {}
    for path, fe in extraction.estimates.items():
        raw = dict(fe.raw_signals or {})
        pipe.run_signals(fe, raw)
        if shared is not None:
            raw.setdefault("agreement", shared)
        findings = list(fe.findings or ())
        pipe.run_validators(pipe.validators_for(path.node_type, path.field), fe.value,
                            _spec_of(extraction.grammar, path), findings)
        group = path.node_type
        confidence, did, per_family = pipe.calibrate(fe.confidence, raw, group)
        decision = _flagged(pipe.decide(confidence, group), findings)
        calibrated_any = calibrated_any or did
        if per_family is not None:
            by_family[path] = per_family
        per_field[path] = dataclasses.replace(fe, raw_signals=raw, confidence=confidence, findings=tuple(findings),
                                              decision=decision)
        every_finding.extend(findings)
    confidences = [fe.confidence for fe in per_field.values() if fe.confidence is not None]
    decisions = [fe.decision for fe in per_field.values() if fe.decision is not None]
    provenance: dict[str, Any] = {"n_fields": len(per_field), "calibrated": calibrated_any}
    if by_family:
        provenance["calibrated_signals"] = by_family
    if pipe.failures:
        provenance["failures"] = list(pipe.failures)
    return QualityReport(calibrated_confidence=min(confidences) if confidences else None,
                         decision=max(decisions, key=_RANK.__getitem__) if decisions else None,
                         findings=tuple(every_finding), raw_signals={} if shared is None else {"agreement": shared},
                         provenance=provenance, per_field=per_field)


def estimate_quality(extraction: Any, *, sources: Iterable = (), signals: Iterable = (), calibrator: Any = None,
                     validators: Any = (), policy: Any = None, agreement: bool = True,
                     assume_calibrated: bool = False) -> QualityReport:
    """Estimate the quality of ``extraction`` with no gold: signals, calibration, validation, decision.

    ``extraction`` is a raw value, a :class:`FieldEstimate` or an :class:`AnnotatedExtraction`
    (scored per field; the field's spec feeds the validators and its node type is the Mondrian
    group). ``sources`` are other engines' outputs of the same content: their ROVER agreement with
    the value becomes ``raw_signals["agreement"]``. ``signals`` are callables ``target -> float |
    Mapping``. ``calibrator`` maps the field's confidence (else the mean of its raw signals) to a
    probability; a ``Mapping[str, Calibrator]`` or a ``SignalFamilyCalibrator`` calibrates each
    signal family on its own. ``validators`` yield findings (a ``Mapping`` scopes them by field name
    or node type, ``"*"`` for all). ``policy`` decides from the calibrated confidence; a FLAG
    finding turns an ACCEPT into a FLAG. A failing signal or validator is reported in
    ``provenance["failures"]`` with a warning, never fatal.

    >>> from scorekit.base import Decision
    >>> r = estimate_quality("4111 1111 1111 1111", signals=[lambda v: 0.9],
    ...                      policy=lambda c: Decision.ACCEPT if c > 0.8 else Decision.FLAG,
    ...                      assume_calibrated=True)
    >>> r.raw_signals, r.decision
    ({'<lambda>': 0.9}, <Decision.ACCEPT: 'accept'>)
    """
    sources = list(sources)
    _check_sources(sources)
    pipe = _Pipeline(signals=list(signals), calibrator=calibrator, validators=validators, policy=policy,
                     assume_calibrated=assume_calibrated)
    if isinstance(extraction, AnnotatedExtraction):
        return _annotated(pipe, extraction, sources, agreement)
    agreement_value = None
    if agreement and sources:
        from scorekit.qe.rover import AgreementSignal

        value = extraction.value if isinstance(extraction, FieldEstimate) else extraction
        agreement_value = AgreementSignal()([_as_hypothesis(value), *(_as_hypothesis(s) for s in sources)])
    return _single(pipe, extraction, agreement_value)


def estimate_quality_batch(extractions: Iterable[Any], *, sources: Optional[Iterable[Iterable[Any]]] = None,
                           signals: Iterable = (), calibrator: Any = None, validators: Any = (), policy: Any = None,
                           agreement: bool = True, assume_calibrated: bool = False,
                           threads: Optional[int] = None) -> list[QualityReport]:
    """:func:`estimate_quality` of every item of ``extractions`` (raw values or FieldEstimates),
    with ``sources[i]`` the other engines' outputs for item ``i``; the same reports, item for item,
    as calling it in a loop, but the ROVER agreements run as one compiled, parallel batch and the
    stages are prepared once.

    >>> reports = estimate_quality_batch(["the cat", "a dog"], sources=[["the cat"], ["a dig"]])
    >>> [round(r.raw_signals["agreement"], 2) for r in reports]
    [1.0, 0.75]
    """
    with cyclic_gc_paused():  # 100,000s of small lists and dicts would trigger full collections over and over
        return _batch(extractions, sources, signals, calibrator, validators, policy, agreement, assume_calibrated,
                      threads)


def _batch(extractions: Iterable[Any], sources: Optional[Iterable[Iterable[Any]]], signals: Iterable, calibrator: Any,
           validators: Any, policy: Any, agreement: bool, assume_calibrated: bool,
           threads: Optional[int]) -> list[QualityReport]:
    items = list(extractions)
    for i, item in enumerate(items):
        if isinstance(item, AnnotatedExtraction):
            raise TypeError(f"estimate_quality_batch: item {i} is an AnnotatedExtraction; score it with "
                            "estimate_quality (its fields are already a batch)")
    per_item = [s if type(s) is list else list(s) for s in sources] if sources is not None else [[]] * len(items)
    if len(per_item) != len(items):
        raise ValueError(f"estimate_quality_batch: {len(items)} extractions but {len(per_item)} source lists")
    pipe = _Pipeline(signals=list(signals), calibrator=calibrator, validators=validators, policy=policy,
                     assume_calibrated=assume_calibrated)
    from scorekit.qe.rover import agreement_batch, text_agreement_batch

    if pipe.bare and agreement:  # agreement alone: the confidence is the agreement; nothing calibrated or decided
        # plain text everywhere (else None): read by the compiled core as it stands; an item without
        # sources gets an agreement too (one engine), which its report leaves out
        scores = text_agreement_batch(items, per_item, threads=threads)
        if scores is not None:
            # the reports of _agreement_report, built inline (their provenance copied from one dict):
            # this loop is most of the batch's Python time
            provenance = {"n_signals": 1, "calibrated": False}
            return [QualityReport(a, None, (), {"agreement": a}, provenance.copy()) if s
                    else _no_agreement_report() for a, s in zip(scores.tolist(), per_item)]
    plain = all(type(v) is str for v in items) and all(type(x) is str for s in per_item for x in s)
    if not plain:
        for s in per_item:
            _check_sources(s)
    if plain and pipe.bare:
        scores = iter(agreement_batch([[v, *s] for v, s in zip(items, per_item) if s], threads=threads).tolist()
                      if agreement else ())
        return [_agreement_report(next(scores)) if s and agreement else _no_agreement_report() for s in per_item]
    agreements: list[Optional[float]] = [None] * len(items)
    wanted = [i for i, s in enumerate(per_item) if agreement and s]
    if wanted:
        values = [items[i].value if isinstance(items[i], FieldEstimate) else items[i] for i in wanted]
        scores = agreement_batch([[_as_hypothesis(v), *map(_as_hypothesis, per_item[i])] for v, i in zip(values, wanted)],
                                 threads=threads)
        for i, score in zip(wanted, scores.tolist()):
            agreements[i] = score
    reports = []
    for item, agreement_value in zip(items, agreements):
        if pipe.failures:
            pipe.failures = []
        reports.append(_single(pipe, item, agreement_value))
    return reports


def _agreement_report(a: float) -> QualityReport:
    """The report of a bare pipeline (no signal, calibrator or policy) from the agreement alone."""
    return QualityReport(a, None, (), {"agreement": a}, {"n_signals": 1, "calibrated": False})


def _no_agreement_report() -> QualityReport:
    """The report of a bare pipeline without any signal (no sources, or agreement off)."""
    return QualityReport(None, None, (), {}, {"n_signals": 0, "calibrated": False})
