"""Reference-free validation and correction of extracted values (``ek.validate``): FLAG vs CORRECT.

This module owns the layered pipeline that checks a value without gold, cheapest layer first, and
the layers it composes. A *layer* is a callable ``(value, *, spec=None) -> Iterable[Finding]``:

- a **validator** only flags: its findings have ``severity=FLAG`` and it never changes the value;
- a **corrector** may also correct: a ``severity=CORRECT`` finding carries the proposed
  replacement in ``suggestion``, which :func:`validation_pipeline` applies before the next layer.

The layers, cheapest to most expensive: :func:`canonicalize_corrector` (L0, CORRECT), the
deterministic verifiers of :mod:`scorekit.qe.verifiers` (L1, FLAG; re-exported here:
``checksum_validator``, ``regex_validator``, ``range_validator``, ``enum_validator``,
``schema_validator``, ``totals_consistent``), :func:`lexicon_corrector` (L2, closed-set fuzzy
match, CORRECT), the record checks :func:`cross_field_validator` and :func:`ordering_validator`,
the column checks :func:`benford_findings` and :func:`zscore_anomaly_findings` (FLAG),
:func:`lm_surprisal_validator` (L3, an injected language-model scorer, FLAG) and
:func:`llm_corrector` (L5, an injected LLM call, gated to flagged values, CORRECT). Models are
never imported here: the LM scorer and the LLM call are plain callables the caller passes in.

The lexicon corrector scores values against the whole vocabulary at once with RapidFuzz's
compiled ``process.cdist`` (and, for the default ``fuzz.ratio``, skips word lengths that cannot
beat the best match found), and gives the same match, score and tie-breaking as one
``process.extractOne`` per value. :meth:`ValidationPipeline.many` runs a whole column through
the pipeline, layer by layer, so that such a layer sees every value at once.

>>> from scorekit.base import Severity
>>> fix = validation_pipeline(lexicon_corrector(["France", "Germany", "Spain"]),
...                           stop_when=stop_on_correction)
>>> r = fix("Frnace")                      # one transposition from a closed set
>>> r.value, r.corrected, r.findings[0].severity is Severity.CORRECT
('France', True, True)
>>> fix("Atlantis").findings[0].message
"'Atlantis' not in vocabulary (nearest 'Spain' @ 0.31)"
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, runtime_checkable

import numpy as np
from rapidfuzz import fuzz, process

from scorekit.base import FieldSpec, Finding, Severity
from scorekit.canonicalize import resolve_canonicalizer
from scorekit.errors import InvalidTypeError, InvalidValueError, describe
from scorekit.qe.verifiers import (checksum_validator, enum_validator, range_validator, regex_validator,
                                   schema_validator, totals_consistent)

__all__ = [
    "Layer", "DEFAULT_LEXICON_THRESHOLD", "BENFORD_EXPECTED", "DEFAULT_BENFORD_TOL", "DEFAULT_BENFORD_MIN_N",
    "DEFAULT_ZSCORE_THRESHOLD", "Corrector", "ValidationResult", "ValidationPipeline", "LexiconCorrector",
    "validation_pipeline", "validate", "stop_on_correction", "stop_on_flag",
    "canonicalize_corrector", "lexicon_corrector", "cross_field_validator", "ordering_validator",
    "lm_surprisal_validator", "llm_corrector", "benford_findings", "zscore_anomaly_findings",
    # the deterministic verifiers (L1) of scorekit.qe.verifiers, re-exported as the reference kit does
    "checksum_validator", "regex_validator", "range_validator", "enum_validator", "schema_validator",
    "totals_consistent",
]

Layer = Callable[..., Iterable[Finding]]
"""A validator or corrector: a value (and an optional ``spec=``) in, zero or more findings out."""

DEFAULT_LEXICON_THRESHOLD = 0.8
"""Least similarity (RapidFuzz ``fuzz.ratio`` / 100) at which a lexicon match is applied as a
correction rather than flagged: "Frnace" → "France" is 0.83, an unrelated word about 0.3."""

BENFORD_EXPECTED = {d: math.log10(1 + 1 / d) for d in range(1, 10)}
"""Benford's law: the expected share of each first significant digit, ``log10(1 + 1/d)``."""

DEFAULT_BENFORD_TOL = 0.15
"""Largest deviation of one digit's share from Benford's before a column is flagged."""

DEFAULT_BENFORD_MIN_N = 30
"""Fewest usable values before Benford's law is applied (the law is asymptotic)."""

DEFAULT_ZSCORE_THRESHOLD = 3.5
"""Modified (median/MAD) z-score above which a value is an outlier (Iglewicz and Hoaglin)."""

#: Scale factors of the modified z-score: MAD → σ and, when the MAD is 0, mean absolute deviation → σ.
_MAD_FACTOR = 0.6745
_MEAN_AD_FACTOR = 1.253314
#: Cells of one block of lexicon scores (8 MiB of float64).
_BLOCK_CELLS = 1 << 20
#: Score cells from which one ``cdist`` call is worth spreading over threads.
_PARALLEL_CELLS = 1 << 18
#: Below this, floats are subnormal: fewer significant bits than their shortest repr suggests.
_SMALLEST_NORMAL = 2.2250738585072014e-308


# --------------------------------------------------------------------------------------------
# Types and the pipeline
# --------------------------------------------------------------------------------------------


@runtime_checkable
class Corrector(Protocol):
    """A validator that may also CORRECT: same call shape, plus the ``layer`` it runs as.

    It can emit a ``severity=CORRECT`` :class:`~scorekit.base.Finding` whose ``suggestion`` is the
    proposed replacement value.
    """

    layer: str

    def __call__(self, value: Any, *, spec: Optional[FieldSpec] = None) -> Iterable[Finding]: ...


@dataclass(frozen=True)
class ValidationResult:
    """One value after a :func:`validation_pipeline`: the input (``original``), the value after the
    applied corrections (``value``) and every finding, FLAG and CORRECT, in layer order.

    >>> from scorekit.base import Finding
    >>> r = ValidationResult("Frnace", "France", (Finding("country", "lexicon", Severity.CORRECT),))
    >>> r.corrected, r.flagged, r.clean
    (True, False, False)
    """

    original: Any
    value: Any
    findings: tuple[Finding, ...] = ()

    @property
    def corrected(self) -> bool:
        """Whether an applied correction changed the value."""
        return bool(self.value != self.original)

    @property
    def flagged(self) -> bool:
        """Whether a layer raised a FLAG (something a person should look at)."""
        return any(f.severity is Severity.FLAG for f in self.findings)

    @property
    def clean(self) -> bool:
        """No finding at all: the value passed every layer that ran."""
        return not self.findings


def stop_on_correction(findings: Sequence[Finding]) -> bool:
    """Stop policy: end the pass once any layer has proposed a correction.

    >>> stop_on_correction([Finding("", "lexicon", Severity.CORRECT, suggestion="x")])
    True
    """
    return any(f.severity is Severity.CORRECT for f in findings)


def stop_on_flag(findings: Sequence[Finding]) -> bool:
    """Stop policy: end the pass at the first FLAG (fail fast).

    >>> stop_on_flag([Finding("", "checksum")]), stop_on_flag([])
    (True, False)
    """
    return any(f.severity is Severity.FLAG for f in findings)


def _never_stop(findings: Sequence[Finding]) -> bool:
    return False


def _layer_name(layer: Any) -> str:
    return str(getattr(layer, "layer", None) or getattr(layer, "__name__", None) or type(layer).__name__)


def _checked_findings(produced: Any, layer: Any) -> list[Finding]:
    """``produced`` as a list of findings, or an error naming the layer that returned something else."""
    if produced is None or isinstance(produced, (str, bytes)) or not isinstance(produced, Iterable):
        raise InvalidTypeError(f"must return an iterable of Finding, got {describe(produced)}",
                               field=f"layer {_layer_name(layer)!r}")
    found = list(produced)
    for f in found:
        if not isinstance(f, Finding):
            raise InvalidTypeError(f"must yield scorekit.base.Finding objects, got {describe(f)}",
                                   field=f"layer {_layer_name(layer)!r}")
    return found


def _corrected_value(found: list[Finding], value: Any) -> Any:
    """The suggestion of the layer's first CORRECT finding that has one, else ``value``."""
    for f in found:
        if f.severity is Severity.CORRECT and f.suggestion is not None:
            return f.suggestion
    return value


class ValidationPipeline:
    """Layers run in the given order (cheapest first) on one value (``pipeline(value)``) or on a
    column (:meth:`many`); built by :func:`validation_pipeline`.

    With ``apply_corrections`` the first CORRECT finding (with a suggestion) of each layer replaces
    the value before the next layer runs; ``stop_when(findings so far)`` is checked after every
    layer and ends the pass when true. A layer with a true ``wants_findings`` attribute also
    receives ``findings=`` (everything found so far, as a tuple).
    """

    def __init__(self, layers: Sequence[Layer], *, apply_corrections: bool = True,
                 stop_when: Callable[[Sequence[Finding]], bool] = _never_stop) -> None:
        for k, layer in enumerate(layers):
            if not callable(layer):
                raise InvalidTypeError(f"must be callable, got {describe(layer)}", field=f"layers[{k}]")
        if not isinstance(apply_corrections, bool):
            raise InvalidTypeError(f"must be a bool, got {describe(apply_corrections)}", field="apply_corrections")
        if not callable(stop_when):
            raise InvalidTypeError(f"must be a callable (findings) -> bool, got {describe(stop_when)}",
                                   field="stop_when")
        self.layers: tuple[Layer, ...] = tuple(layers)
        self.apply_corrections = apply_corrections
        self.stop_when = stop_when

    def _run_layer(self, layer: Layer, value: Any, spec: Optional[FieldSpec], so_far: list[Finding]) -> list[Finding]:
        if getattr(layer, "wants_findings", False):
            return _checked_findings(layer(value, spec=spec, findings=tuple(so_far)), layer)
        return _checked_findings(layer(value, spec=spec), layer)

    def __call__(self, value: Any, *, spec: Optional[FieldSpec] = None) -> ValidationResult:
        original, collected = value, []
        for layer in self.layers:
            found = self._run_layer(layer, value, spec, collected)
            collected.extend(found)
            if self.apply_corrections:
                value = _corrected_value(found, value)
            if self.stop_when(collected):
                break
        return ValidationResult(original, value, tuple(collected))

    def many(self, values: Iterable[Any], *, spec: Optional[FieldSpec] = None) -> list[ValidationResult]:
        """Run every value of a column (one ``spec`` for all) and return one result per value, equal
        to ``[pipeline(v, spec=spec) for v in values]`` for layers that are pure functions.

        The pass goes layer by layer: a layer with a ``many(values, *, spec=None)`` method (such as
        :class:`LexiconCorrector`) gets all the values still running at once, the others get them
        one at a time.

        >>> fix = validation_pipeline(canonicalize_corrector("lower"), lexicon_corrector(["france", "spain"]))
        >>> [r.value for r in fix.many(["FRNACE", "Spain", "atlantis"])]
        ['france', 'spain', 'atlantis']
        """
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidTypeError(f"must be an iterable of values, got {describe(values)}", field="values")
        originals = list(values)
        current = list(originals)
        collected: list[list[Finding]] = [[] for _ in originals]
        running = list(range(len(originals)))
        for layer in self.layers:
            if not running:
                break
            bulk = getattr(layer, "many", None)
            if callable(bulk) and not getattr(layer, "wants_findings", False):
                produced = bulk([current[i] for i in running], spec=spec)
                if len(produced) != len(running):
                    raise InvalidValueError(f"many() returned {len(produced)} lists for {len(running)} values",
                                            field=f"layer {_layer_name(layer)!r}")
                found_per_item = [_checked_findings(p, layer) for p in produced]
            else:
                found_per_item = [self._run_layer(layer, current[i], spec, collected[i]) for i in running]
            still_running = []
            for i, found in zip(running, found_per_item):
                collected[i].extend(found)
                if self.apply_corrections:
                    current[i] = _corrected_value(found, current[i])
                if not self.stop_when(collected[i]):
                    still_running.append(i)
            running = still_running
        return [ValidationResult(o, v, tuple(c)) for o, v, c in zip(originals, current, collected)]

    def __repr__(self) -> str:
        return f"ValidationPipeline([{', '.join(_layer_name(layer) for layer in self.layers)}])"


def validation_pipeline(*layers: Layer, apply_corrections: bool = True,
                        stop_when: Callable[[Sequence[Finding]], bool] = _never_stop) -> ValidationPipeline:
    """Compose validators and correctors into one pass, cheapest first (the order given).

    When ``apply_corrections`` (the default), the first CORRECT finding a layer emits replaces the
    value before the next layer runs, so the expensive layers see the cheap fixes; otherwise
    corrections are only recorded. ``stop_when`` ends the pass early (:func:`stop_on_correction`,
    :func:`stop_on_flag`); by default every layer runs.

    >>> r = validation_pipeline(canonicalize_corrector("lower"), lexicon_corrector(["france", "germany"]))("FRNACE")
    >>> r.value, [f.layer for f in r.findings]
    ('france', ['canonicalize', 'lexicon'])
    >>> validation_pipeline(lexicon_corrector(["France"]), apply_corrections=False)("Frnace").value
    'Frnace'
    """
    return ValidationPipeline(layers, apply_corrections=apply_corrections, stop_when=stop_when)


def validate(value: Any, *, layers: Sequence[Layer] = (), spec: Optional[FieldSpec] = None,
             apply_corrections: bool = True,
             stop_when: Callable[[Sequence[Finding]], bool] = _never_stop) -> ValidationResult:
    """Run one value through ``layers`` in one call: ``validation_pipeline(*layers, ...)(value, spec=spec)``.

    >>> validate("Frnace", layers=[lexicon_corrector(["France"])]).value
    'France'
    """
    if isinstance(layers, str) or not isinstance(layers, Iterable):
        raise InvalidTypeError(f"must be a sequence of layers, got {describe(layers)}", field="layers")
    return validation_pipeline(*layers, apply_corrections=apply_corrections, stop_when=stop_when)(value, spec=spec)


# --------------------------------------------------------------------------------------------
# Argument checks shared by the factories
# --------------------------------------------------------------------------------------------


def _field_name(field_name: str, spec: Any) -> str:
    return field_name or (getattr(spec, "name", "") if spec is not None else "") or ""


def _check_str(value: Any, name: str) -> None:
    if not isinstance(value, str):
        raise InvalidTypeError(f"must be a str, got {describe(value)}", field=name)


def _check_bool(value: Any, name: str) -> None:
    if not isinstance(value, bool):
        raise InvalidTypeError(f"must be a bool, got {describe(value)}", field=name)


def _check_callable(value: Any, name: str, shape: str) -> None:
    if not callable(value):
        raise InvalidTypeError(f"must be a callable {shape}, got {describe(value)}", field=name)


def _check_number(value: Any, name: str, *, minimum: Optional[float] = None) -> None:
    """``value`` must be a real number (not a bool), not NaN, and at least ``minimum`` if given."""
    if type(value) is not float and type(value) is not int and (  # the ABC check is slow: plain types first
            isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise InvalidTypeError(f"must be a real number, got {describe(value)}", field=name)
    if math.isnan(value):
        raise InvalidValueError("must not be NaN", field=name)
    if minimum is not None and value < minimum:
        raise InvalidValueError(f"must be >= {minimum}, got {value!r}", field=name)


def _check_count(value: Any, name: str) -> None:
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise InvalidTypeError(f"must be an int, got {describe(value)}", field=name)
    if value < 0:
        raise InvalidValueError(f"must be >= 0, got {value!r}", field=name)


def _names(keys: Any, name: str) -> tuple[Any, ...]:
    """A sequence of record keys (a bare string is refused: it would be read as its characters)."""
    if isinstance(keys, (str, bytes)) or not isinstance(keys, Iterable):
        raise InvalidTypeError(f"must be a sequence of keys (e.g. [{keys!r}]), got {describe(keys)}", field=name)
    return tuple(keys)


# --------------------------------------------------------------------------------------------
# L0 and L2: canonicalization and the closed-set lexicon
# --------------------------------------------------------------------------------------------


def canonicalize_corrector(normalize: Any, *, field_name: str = "", layer: str = "canonicalize") -> Corrector:
    """L0: fold a value to canonical form, with a CORRECT finding when that changes it.

    ``normalize`` is anything :func:`scorekit.canonicalize.resolve_canonicalizer` accepts (a
    registered name, a callable, a list of steps, ``None`` for none). Values that are not ``str``
    pass untouched. Run it first, so that later layers compare canonical forms.

    >>> [(f.severity.value, f.message, f.suggestion) for f in canonicalize_corrector(["strip", "lower"])("  Paris ")]
    [('correct', "canonicalized '  Paris ' -> 'paris'", 'paris')]
    """
    _check_str(field_name, "field_name")
    _check_str(layer, "layer")
    canon = resolve_canonicalizer(normalize)

    def correct(value: Any, *, spec: Optional[FieldSpec] = None) -> list[Finding]:
        if canon is None or not isinstance(value, str):
            return []
        folded = canon(value)
        if not isinstance(folded, str):
            raise InvalidTypeError(f"must return a str, got {describe(folded)} for {value!r}", field="normalize")
        if folded == value:
            return []
        return [Finding(_field_name(field_name, spec), layer, Severity.CORRECT,
                        f"canonicalized {value!r} -> {folded!r}", folded)]

    correct.layer = layer  # type: ignore[attr-defined]
    return correct  # type: ignore[return-value]


def _scorer_direction(scorer: Any) -> tuple[bool, float]:
    """``(higher_is_better, worst_score)`` of a RapidFuzz scorer as ``process.extractOne`` reads them;
    any other callable is a similarity from 0 (RapidFuzz's rule for custom scorers)."""
    params = getattr(scorer, "_RF_ScorerPy", None)
    if isinstance(params, Mapping) and callable(params.get("get_scorer_flags")):
        flags = params["get_scorer_flags"]()
        return flags["optimal_score"] > flags["worst_score"], flags["worst_score"]
    return True, 0


class LexiconCorrector:
    """L2 corrector over a closed vocabulary; built by :func:`lexicon_corrector`.

    ``corrector(value, spec=None)`` checks one value, :meth:`many` a column; :meth:`nearest` gives
    the best vocabulary entry and its raw score for each value.
    """

    def __init__(self, vocabulary: Iterable[str], *, threshold: float = DEFAULT_LEXICON_THRESHOLD,
                 scorer: Any = None, field_name: str = "", layer: str = "lexicon",
                 flag_unmatched: bool = True, threads: Optional[int] = None) -> None:
        if isinstance(vocabulary, (str, bytes)) or not isinstance(vocabulary, Iterable):
            raise InvalidTypeError(f"must be an iterable of str (e.g. [{vocabulary!r}]), got {describe(vocabulary)}",
                                   field="vocabulary")
        entries = list(vocabulary)
        for k, w in enumerate(entries):
            if not isinstance(w, str):
                raise InvalidTypeError(f"must be a str, got {describe(w)}", field=f"vocabulary entry {k}")
        words = list(dict.fromkeys(entries))        # the first occurrence is the one a tie picks
        _check_number(threshold, "threshold")
        if scorer is not None:
            _check_callable(scorer, "scorer", "(str, str) -> score, e.g. rapidfuzz.fuzz.ratio")
        _check_str(field_name, "field_name")
        _check_str(layer, "layer")
        _check_bool(flag_unmatched, "flag_unmatched")
        if threads is not None:
            _check_count(threads, "threads")
        self.words: tuple[str, ...] = tuple(words)
        self.threshold = threshold
        self.scorer = fuzz.ratio if scorer is None else scorer
        self.field_name = field_name
        self.layer = layer
        self.flag_unmatched = flag_unmatched
        self.threads = threads
        self._members = frozenset(words)
        self._higher_is_better, self._worst = _scorer_direction(self.scorer)
        self._rapidfuzz_scorer = hasattr(self.scorer, "_RF_ScorerPy")
        self._prune_by_length = self.scorer is fuzz.ratio
        # The words shortest first (stable, so vocabulary order within a length): a range of lengths
        # is then one slice, and ``_positions`` maps the slice back to vocabulary positions.
        lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
        self._positions = np.argsort(lengths, kind="stable")
        self._word_array = np.array(words, dtype=object)
        self._sorted_lengths = lengths[self._positions]
        self._distinct_lengths = np.unique(lengths)

    # -- scoring -----------------------------------------------------------------------------

    def _workers(self, cells: int) -> int:
        """RapidFuzz workers for one ``cdist`` call: threads pay off only on large blocks."""
        if self.threads == 1 or cells < _PARALLEL_CELLS:
            return 1
        return self.threads or -1

    def _best_in(self, queries: list[str], start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Vocabulary position and raw score of the best of the length-sorted words ``start:stop`` for
        each query. The words go to ``cdist`` in vocabulary order, so the first best column is the
        earliest position, the word ``extractOne`` picks on a tie. Scores ``extractOne`` would not
        accept from a custom scorer (NaN, beyond its worst) never win; a query with none gets
        position -1 and a NaN score."""
        positions = np.sort(self._positions[start:stop])
        choices = self._word_array[positions].tolist()
        block = max(1, _BLOCK_CELLS // len(choices))
        best_position = np.empty(len(queries), dtype=np.int64)
        best = np.empty(len(queries), dtype=np.float64)
        for first in range(0, len(queries), block):
            part = queries[first:first + block]
            scores = process.cdist(part, choices, scorer=self.scorer, dtype=np.float64,
                                   workers=self._workers(len(part) * len(choices)))
            found = np.ones(len(part), dtype=bool)
            if not self._rapidfuzz_scorer:           # RapidFuzz's own scorers stay within their range
                usable = scores >= self._worst if self._higher_is_better else scores <= self._worst
                scores = np.where(usable, scores, -np.inf if self._higher_is_better else np.inf)
                found = usable.any(axis=1)
            pick = scores.argmax(axis=1) if self._higher_is_better else scores.argmin(axis=1)
            top = scores[np.arange(len(part)), pick]
            best_position[first:first + block] = np.where(found, positions[pick], -1)
            best[first:first + block] = np.where(found, top, np.nan)
        return best_position, best

    def _improve(self, queries: list[str], rows: np.ndarray, shortest: int, longest: int,
                 best_position: np.ndarray, best: np.ndarray) -> None:
        """Score ``queries[rows]`` against the words of ``shortest..longest`` characters and keep, per
        row, the better of that and the best so far (a tie: the earlier vocabulary position)."""
        start = int(np.searchsorted(self._sorted_lengths, shortest, side="left"))
        stop = int(np.searchsorted(self._sorted_lengths, longest, side="right"))
        if not len(rows) or start >= stop:
            return
        position, score = self._best_in([queries[i] for i in rows.tolist()], start, stop)
        better = (score > best[rows]) | ((score == best[rows]) & (position < best_position[rows]))
        best_position[rows[better]], best[rows[better]] = position[better], score[better]

    def _nearest_by_ratio(self, queries: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``fuzz.ratio`` is ``100 * (1 - indel / (|a| + |b|))`` with ``indel >= ||a| - |b||``, so a word
        whose length bounds its ratio below a query's best so far can neither beat nor tie it. Per
        query length n: score the words of n - 1 to n + 1 characters, then, for each query, only
        the shorter and the longer lengths whose bound reaches its best (contiguous ranges)."""
        q_len = np.fromiter((len(q) for q in queries), dtype=np.int64, count=len(queries))
        best_position = np.full(len(queries), -1, dtype=np.int64)
        best = np.full(len(queries), -np.inf)
        for n in np.unique(q_len).tolist():
            rows = np.flatnonzero(q_len == n)
            self._improve(queries, rows, n - 1, n + 1, best_position, best)
            shorter = self._distinct_lengths[self._distinct_lengths < n - 1]    # bounds rise towards n
            if len(shorter):
                bounds = 100 * (1.0 - (n - shorter) / (n + shorter))
                reach = np.searchsorted(bounds, best[rows], side="left")        # first bound >= best
                for k in np.unique(reach[reach < len(shorter)]).tolist():
                    self._improve(queries, rows[reach == k], int(shorter[k]), n - 2, best_position, best)
            longer = self._distinct_lengths[self._distinct_lengths > n + 1]     # bounds fall away from n
            if len(longer):
                bounds = 100 * (1.0 - (longer - n) / (n + longer))
                reach = np.searchsorted(-bounds, -best[rows], side="right")     # how many bounds >= best
                for k in np.unique(reach[reach > 0]).tolist():
                    self._improve(queries, rows[reach == k], n + 2, int(longer[k - 1]), best_position, best)
        return best_position, best

    def nearest(self, values: Sequence[str]) -> tuple[list[Optional[str]], np.ndarray]:
        """The best vocabulary entry of each ``str`` value and its raw scorer score (``fuzz.ratio``:
        0–100), as ``rapidfuzz.process.extractOne(value, vocabulary, scorer=scorer)`` gives them.

        >>> LexiconCorrector(["France", "Germany"]).nearest(["Frnace", "Grmany"])
        (['France', 'Germany'], array([83.33333333, 92.30769231]))
        """
        queries = list(values)
        for k, q in enumerate(queries):
            _check_str(q, f"values[{k}]")
        if not self.words or not queries:
            return [None] * len(queries), np.full(len(queries), np.nan)
        if self._prune_by_length:
            idx, score = self._nearest_by_ratio(queries)
        else:
            idx, score = self._best_in(queries, 0, len(self.words))
        for q, i in zip(queries, idx.tolist()):
            if i < 0:
                raise InvalidValueError(f"gave no usable score for {q!r} against any vocabulary entry",
                                        field="scorer")
        return [self.words[i] for i in idx.tolist()], score

    # -- findings ----------------------------------------------------------------------------

    def _finding(self, value: str, match: str, raw: float, field: str) -> list[Finding]:
        similarity = raw / 100
        if similarity >= self.threshold:
            return [Finding(field, self.layer, Severity.CORRECT,
                            f"{value!r} -> {match!r} (lexicon match {similarity:.2f})", match)]
        if self.flag_unmatched:
            return [Finding(field, self.layer, Severity.FLAG,
                            f"{value!r} not in vocabulary (nearest {match!r} @ {similarity:.2f})")]
        return []

    def many(self, values: Iterable[Any], *, spec: Optional[FieldSpec] = None) -> list[list[Finding]]:
        """The findings of each value, scoring the distinct out-of-vocabulary strings all at once.

        >>> fix = LexiconCorrector(["France", "Spain"])
        >>> [[f.severity.value for f in found] for found in fix.many(["Frnace", "Spain", 3, "zzz"])]
        [['correct'], [], [], ['flag']]
        """
        values = list(values)
        field = _field_name(self.field_name, spec)
        unknown = list(dict.fromkeys(v for v in values if isinstance(v, str) and v not in self._members)) \
            if self.words else []
        matches, scores = self.nearest(unknown)
        found = {q: self._finding(q, m, s, field) for q, m, s in zip(unknown, matches, scores.tolist())}
        return [list(found[v]) if isinstance(v, str) and v in found else [] for v in values]

    def __call__(self, value: Any, *, spec: Optional[FieldSpec] = None) -> list[Finding]:
        if not isinstance(value, str) or not self.words or value in self._members:
            return []
        (match,), scores = self.nearest([value])
        return self._finding(value, match, float(scores[0]), _field_name(self.field_name, spec))

    def __repr__(self) -> str:
        return f"LexiconCorrector({len(self.words)} words, threshold={self.threshold!r}, layer={self.layer!r})"


def lexicon_corrector(vocabulary: Iterable[str], *, threshold: float = DEFAULT_LEXICON_THRESHOLD,
                      scorer: Any = None, field_name: str = "", layer: str = "lexicon",
                      flag_unmatched: bool = True, threads: Optional[int] = None) -> LexiconCorrector:
    """L2: resolve a value against a **closed** vocabulary by fuzzy match.

    An exact (case-sensitive) member, a value that is not a ``str`` and any value against an empty
    vocabulary pass untouched. Otherwise the best entry — by ``scorer`` (a RapidFuzz scorer,
    default ``fuzz.ratio``; ties go to the earlier entry) — is a CORRECT finding when its
    similarity (score / 100) is at least ``threshold``, else a FLAG (only when
    ``flag_unmatched``; set it to ``False`` for an open vocabulary). Same matches, scores and
    messages as the reference kit's one ``extractOne`` per value; :meth:`LexiconCorrector.many`
    scores a whole column at once on ``threads`` cores (``None``: all).

    >>> fix = lexicon_corrector(["France", "Germany", "Spain"])
    >>> [f.message for f in fix("Frnace")]
    ["'Frnace' -> 'France' (lexicon match 0.83)"]
    >>> fix("Spain"), fix(42)
    ([], [])
    >>> lexicon_corrector(["France"], flag_unmatched=False)("Atlantis")
    []
    """
    return LexiconCorrector(vocabulary, threshold=threshold, scorer=scorer, field_name=field_name, layer=layer,
                            flag_unmatched=flag_unmatched, threads=threads)


# --------------------------------------------------------------------------------------------
# Record checks
# --------------------------------------------------------------------------------------------


def cross_field_validator(predicate: Callable[[Any], bool], *, message: str, fields: Sequence[str] = (),
                          layer: str = "cross_field") -> Layer:
    """FLAG a record for which ``predicate(record)`` is false (a general cross-field check).

    A predicate that raises ``KeyError``, ``TypeError`` or ``ValueError`` (a partial record) gives
    no finding: a missing field is not a cross-field violation. The check takes ``spec=`` (and
    ``grammar=``), so it runs inside :func:`validation_pipeline`.

    >>> check = cross_field_validator(lambda r: r["received"] <= r["pledged"],
    ...                               message="received exceeds pledged", fields=("received", "pledged"))
    >>> check({"received": 20, "pledged": 10})[0].field, check({"received": 5}), check({"received": 5, "pledged": 10})
    ('received,pledged', [], [])
    """
    _check_callable(predicate, "predicate", "(record) -> bool")
    _check_str(message, "message")
    field = ",".join(_names(fields, "fields"))
    _check_str(layer, "layer")

    def check(record: Any, *, spec: Optional[FieldSpec] = None, grammar: Any = None) -> list[Finding]:
        try:
            holds = predicate(record)
        except (KeyError, TypeError, ValueError):
            return []
        return [] if holds else [Finding(field, layer, Severity.FLAG, message)]

    check.layer = layer  # type: ignore[attr-defined]
    return check


def ordering_validator(keys: Sequence[str], *, strict: bool = True, layer: str = "cross_field") -> Layer:
    """FLAG a record (a mapping) whose values at ``keys``, in that order, are not ascending.

    Keys missing from the record are skipped; values that cannot be compared (``TypeError``) end the
    check without a finding. ``strict=True`` (the default, as in the reference kit) wants ``a < b``
    and so flags equal values; ``strict=False`` accepts ``a <= b``.

    >>> check = ordering_validator(["start", "end"])
    >>> check({"start": 5, "end": 1})[0].message
    "values at ['start', 'end'] are not strictly ascending: [5, 1]"
    >>> check({"start": 1}), len(check({"start": 1, "end": 1}))
    ([], 1)
    >>> ordering_validator(["start", "end"], strict=False)({"start": 1, "end": 1})
    []
    """
    keys = _names(keys, "keys")
    _check_bool(strict, "strict")
    _check_str(layer, "layer")
    field = ",".join(str(k) for k in keys)
    wording = "strictly ascending" if strict else "ascending"

    def check(record: Any, *, spec: Optional[FieldSpec] = None, grammar: Any = None) -> list[Finding]:
        if not isinstance(record, Mapping):
            raise InvalidTypeError(f"must be a mapping of field values, got {describe(record)}", field="record")
        values = [record[k] for k in keys if k in record]
        for a, b in zip(values, values[1:]):
            try:
                ascending = a < b if strict else a <= b
            except TypeError:
                return []
            if not ascending:
                return [Finding(field, layer, Severity.FLAG, f"values at {list(keys)} are not {wording}: {values}")]
        return []

    check.layer = layer  # type: ignore[attr-defined]
    return check


# --------------------------------------------------------------------------------------------
# L3 and L5: injected language models
# --------------------------------------------------------------------------------------------


def lm_surprisal_validator(scorer: Callable[[str], float], *, threshold: float, higher_is_worse: bool = True,
                           field_name: str = "", layer: str = "lm_prior") -> Layer:
    """L3: FLAG a string whose language-model score crosses ``threshold`` (FLAG only).

    ``scorer`` is an injected ``(str) -> float`` — a surprisal, perplexity or negative
    log-likelihood (flagged above ``threshold``), or with ``higher_is_worse=False`` a probability
    (flagged below). Non-strings and the empty string are skipped. A masked-LM pseudo-log-likelihood
    via minicons, for instance: ``scorer=lambda s: -m.sequence_score([s])[0]``.

    >>> lm = lm_surprisal_validator(len, threshold=5.0)
    >>> lm("ok"), lm("a rather long value")[0].message
    ([], 'language-model surprisal 19.000 > 5.0')
    """
    _check_callable(scorer, "scorer", "(str) -> float")
    _check_number(threshold, "threshold")
    _check_bool(higher_is_worse, "higher_is_worse")
    _check_str(field_name, "field_name")
    _check_str(layer, "layer")
    sign = ">" if higher_is_worse else "<"

    def check(value: Any, *, spec: Optional[FieldSpec] = None) -> list[Finding]:
        if not isinstance(value, str) or not value:
            return []
        raw = scorer(value)
        try:
            if isinstance(raw, (str, bytes)):
                raise TypeError
            score = float(raw)
        except (TypeError, ValueError):
            raise InvalidTypeError(f"must return a number, got {describe(raw)} for {value!r}", field="scorer") from None
        if math.isnan(score):
            raise InvalidValueError(f"returned NaN for {value!r}", field="scorer")
        if not (score > threshold if higher_is_worse else score < threshold):
            return []
        return [Finding(_field_name(field_name, spec), layer, Severity.FLAG,
                        f"language-model surprisal {score:.3f} {sign} {threshold}")]

    check.layer = layer  # type: ignore[attr-defined]
    return check


def llm_corrector(correct_fn: Callable[[str], Optional[str]], *, only_flagged: bool = True, field_name: str = "",
                  layer: str = "llm_correct") -> Corrector:
    """L5: a gated LLM corrector, the only layer that invents content (CORRECT).

    ``correct_fn`` is an injected ``(str) -> Optional[str]`` (your LLM or seq2seq call): a string
    different from the value becomes a CORRECT finding, ``None`` leaves the value alone. With
    ``only_flagged`` (the default) it runs only on a value an earlier layer of the pipeline FLAGged
    (the layer reads those findings: ``wants_findings``), so it never rewrites clean values.
    Non-strings are skipped. Verify its output downstream; the original stays in the result.

    >>> fix = validation_pipeline(lexicon_corrector(["alpha"]), llm_corrector(str.upper))
    >>> fix("zzzzz").value, fix("alpha").findings
    ('ZZZZZ', ())
    """
    _check_callable(correct_fn, "correct_fn", "(str) -> Optional[str]")
    _check_bool(only_flagged, "only_flagged")
    _check_str(field_name, "field_name")
    _check_str(layer, "layer")

    def correct(value: Any, *, spec: Optional[FieldSpec] = None, findings: Sequence[Finding] = ()) -> list[Finding]:
        if not isinstance(value, str):
            return []
        if only_flagged and not any(f.severity is Severity.FLAG for f in findings):
            return []
        proposed = correct_fn(value)
        if proposed is not None and not isinstance(proposed, str):
            raise InvalidTypeError(f"must return a str or None, got {describe(proposed)} for {value!r}",
                                   field="correct_fn")
        if proposed is None or proposed == value:
            return []
        return [Finding(_field_name(field_name, spec), layer, Severity.CORRECT,
                        f"LLM correction {value!r} -> {proposed!r}", proposed)]

    correct.layer = layer  # type: ignore[attr-defined]
    correct.wants_findings = True  # type: ignore[attr-defined]
    return correct  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# Column checks: Benford's law and robust z-scores
# --------------------------------------------------------------------------------------------


def _check_column_options(field: Any, bound_name: str, bound: Any, min_n: Any, layer: Any) -> None:
    """The options of a column check: ``field``/``layer`` strs, the ``bound`` (``tol`` or
    ``threshold``) a real number >= 0, ``min_n`` an int >= 0. Plain values pass at once (the
    column checks run per field, often on a handful of values)."""
    if (type(field) is str and type(layer) is str and type(bound) is float and bound >= 0.0
            and type(min_n) is int and min_n >= 0):
        return
    _check_str(field, "field")
    _check_number(bound, bound_name, minimum=0)
    _check_count(min_n, "min_n")
    _check_str(layer, "layer")


def _finite_floats(numbers_: Any, name: str, min_n: int, *,
                   nonzero: bool = False) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """Positions and ``float()`` values of the entries of ``numbers_`` that ``float()`` accepts and that
    are finite (strings such as ``"12.5"`` count, as in the reference kit; ints too large for a
    float are skipped like infinities), and non-zero if ``nonzero``; ``None`` when there are none or
    fewer than ``min_n`` (a short column builds no array)."""
    if type(numbers_) not in (list, tuple):
        if isinstance(numbers_, np.ndarray):
            if numbers_.ndim != 1:
                raise InvalidValueError(f"must be one-dimensional, got shape {numbers_.shape}", field=name)
            if numbers_.dtype.kind in "biuf":
                values = numbers_.astype(np.float64)
                keep = np.flatnonzero(np.isfinite(values) & (values != 0) if nonzero else np.isfinite(values))
                return (keep, values[keep]) if len(keep) and len(keep) >= min_n else None
        if isinstance(numbers_, (str, bytes)) or not isinstance(numbers_, Iterable):
            raise InvalidTypeError(f"must be an iterable of numbers, got {describe(numbers_)}", field=name)
    elif len(numbers_) < min_n and not [x for x in numbers_ if type(x) is not float]:
        return None  # too few values, floats: float() of each would give it back, nothing to read
    positions, values = [], []
    for i, x in enumerate(numbers_):
        try:
            v = float(x)
        except (TypeError, ValueError, OverflowError):
            continue
        if math.isfinite(v) and (v or not nonzero):
            positions.append(i)
            values.append(v)
    if not values or len(values) < min_n:
        return None
    return np.array(positions, dtype=np.int64), np.array(values, dtype=np.float64)


def _first_digits(magnitudes: np.ndarray) -> np.ndarray:
    """First significant digit of each positive finite float, as written in its shortest ``repr``.

    Dividing or multiplying by 10 until the value lies in [1, 10) is exact enough except next to a
    digit boundary (0.0003 scales to 2.9999999999999996) and for subnormal floats (5e-324 is
    exactly 4.94…e-324); those few are read from ``repr``.
    """
    scaled = magnitudes.copy()
    while (big := scaled >= 10).any():
        scaled[big] /= 10
    while (small := scaled < 1).any():
        scaled[small] *= 10
    digits = np.floor(scaled).astype(np.int64)
    near_boundary = np.flatnonzero((np.abs(scaled - np.rint(scaled)) < 1e-9) | (digits < 1) | (digits > 9)
                                   | (magnitudes < _SMALLEST_NORMAL))
    for i in near_boundary.tolist():
        digits[i] = int(next(c for c in repr(float(magnitudes[i])) if c in "123456789"))
    return digits


def benford_findings(numbers: Iterable[Any], *, field: str = "", tol: float = DEFAULT_BENFORD_TOL,
                     min_n: int = DEFAULT_BENFORD_MIN_N, layer: str = "anomaly") -> list[Finding]:
    """FLAG a numeric column whose first-digit distribution deviates from Benford's law.

    Column-level and FLAG-only. Usable values are those ``float()`` accepts, finite and non-zero
    (their absolute value counts); below ``min_n`` of them the check is skipped. The column is
    flagged when some digit's share differs from ``BENFORD_EXPECTED`` by more than ``tol``. The
    first digit is the one the value is written with (0.0003 → 3), also for the magnitudes
    below 1e-8 or above 1e22 where repeated scaling by 10 miscounts it.

    >>> benford_findings(list(range(100, 300)), field="amount")[0].message
    "first-digit distribution deviates from Benford's law (max deviation 0.324 > 0.15) over 200 values"
    >>> benford_findings([100, 200, 300])
    []
    """
    _check_column_options(field, "tol", tol, min_n, layer)
    found = _finite_floats(numbers, "numbers", min_n, nonzero=True)
    if found is None:
        return []
    magnitudes = np.abs(found[1])
    n = len(magnitudes)
    counts = np.bincount(_first_digits(magnitudes), minlength=10).tolist()
    worst = max(abs(counts[d] / n - expected) for d, expected in BENFORD_EXPECTED.items())
    if worst <= tol:
        return []
    return [Finding(field, layer, Severity.FLAG, "first-digit distribution deviates from Benford's law "
                    f"(max deviation {worst:.3f} > {tol}) over {n} values")]


def _median(values: np.ndarray) -> float:
    """Middle value, or the mean of the two middle values, found by selection (no full sort)."""
    n = len(values)
    mid = n // 2
    if n % 2:
        return float(np.partition(values, mid)[mid])
    lower, upper = np.partition(values, [mid - 1, mid])[[mid - 1, mid]].tolist()
    return (lower + upper) / 2.0


def zscore_anomaly_findings(numbers: Iterable[Any], *, field: str = "", threshold: float = DEFAULT_ZSCORE_THRESHOLD,
                            min_n: int = 30, layer: str = "anomaly") -> list[Finding]:
    """FLAG each value whose modified (median/MAD) z-score exceeds ``threshold`` in absolute value.

    Usable values are those ``float()`` accepts and finite; a finding names the value's position in
    ``numbers``. Below ``min_n`` usable values nothing is flagged. The score is
    ``0.6745 * (x - median) / MAD``; when the MAD is 0 (many identical values) the scale is
    ``1.253314 * mean absolute deviation`` instead, and a column with no spread at all gives
    nothing. The arithmetic follows the reference kit's to the last bit.

    >>> zscore_anomaly_findings([100 + (i % 5) for i in range(49)] + [10000])[0].message
    'value 10000.0 at index 49 is a robust-z outlier (|z|=6676.2 > 3.5)'
    >>> zscore_anomaly_findings([100] * 49 + [-99999])[0].message
    'value -99999.0 at index 49 is a robust-z outlier (|z|=39.9 > 3.5)'
    """
    _check_column_options(field, "threshold", threshold, min_n, layer)
    found = _finite_floats(numbers, "numbers", min_n)
    if found is None:
        return []
    positions, values = found
    n = len(values)
    with np.errstate(over="ignore", invalid="ignore"):     # overflow to inf, as Python floats do silently
        median = _median(values)
        deviations = np.abs(values - median)
        mad = _median(deviations)
        if mad > 0:
            scale = _MAD_FACTOR / mad
        else:
            mean_deviation = sum(deviations.tolist()) / n      # Python's summation order, as the reference
            if mean_deviation == 0:
                return []
            scale = 1 / (_MEAN_AD_FACTOR * mean_deviation)
        z = scale * (values - median)
        outliers = np.flatnonzero(np.abs(z) > threshold)
    return [Finding(field, layer, Severity.FLAG, f"value {float(values[k])} at index {int(positions[k])} is a "
                    f"robust-z outlier (|z|={abs(float(z[k])):.1f} > {threshold})") for k in outliers.tolist()]
