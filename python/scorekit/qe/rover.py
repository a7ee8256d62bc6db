"""ROVER consensus of several engines' outputs, and the agreement signal built on it (docs/decisions.md#rover).

This module owns the user-facing side of ROVER: reading hypotheses into ``(token, confidence)``
units (strings, token lists, ``(token, confidence)`` pairs, OCR-result-shaped objects), the input
checks, and the result objects :class:`RoverSlot` / :class:`RoverConsensus`. The progressive
alignment and the vote run in the ``rover`` kernel (:mod:`scorekit._kernels.rover`), which keeps
the reference's traceback preference and voting arithmetic, so slots, winners, scores and
agreement are those of the reference.

>>> c = rover(["the cat sat", "the cat sit", "the bat sat"])
>>> c.text
'the cat sat'
>>> [round(a, 3) for a in c.agreement]            # per consensus token
[1.0, 0.667, 0.667]
>>> round(c.mean_agreement, 3)
0.778

Decisions where the reference is silent or accidental:

* confidences are probabilities: every token confidence (from a pair, a block or
  ``mean_confidence``), ``conf_weight`` and ``null_conf`` must be a number in ``[0, 1]``; anything
  else (NaN, ±inf, 1e308, -0.5) raises :class:`~scorekit.errors.InvalidValueError` naming the
  hypothesis and token or the parameter (the reference lets NaN scores pick winners arbitrarily,
  and one huge confidence outvote any majority);
* ``hypotheses`` is a collection of hypotheses, one per engine: a bare ``str`` or ``bytes`` (which
  would make every character an engine) raises :class:`~scorekit.errors.InvalidTypeError`;
* a custom ``tokenize`` may return any ``==``-comparable tokens except ``None``, which is the NULL
  vote and is rejected (``ValueError``);
* ``scorekit.qe.rover`` is, as in the reference, the function (the package re-export shadows this
  module's name); ``from scorekit.qe.rover import AgreementSignal`` still imports from here.

Compared with NIST SCTK ``rover`` (its demo is in ``tests/data/sctk``; docs/decisions.md#rover-vs-sctk): SCTK aligns CTM
files with word times, cuts at common silences and its default method votes by frequency with
``alpha=1`` and NULL confidence 0; ties are broken arbitrarily. This ROVER aligns plain token
sequences progressively against the spine of slot majorities, with a pinned tie order, so slot
structures can differ from SCTK's where alignments are ambiguous.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from scorekit._interning import ValueInterner
from scorekit._kernels import rover as rover_kernel
from scorekit._weights import checked_weight
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError

__all__ = [
    "DEFAULT_TOKEN_CONF",
    "DEFAULT_CONF_WEIGHT",
    "DEFAULT_NULL_CONF",
    "DEFAULT_MAX_TOKENS",
    "RoverSlot",
    "RoverConsensus",
    "AgreementSignal",
    "rover",
    "rover_command",
]

#: Confidence of a present token whose source gives none.
DEFAULT_TOKEN_CONF = 1.0
#: Weight of average confidence against vote frequency.
DEFAULT_CONF_WEIGHT = 0.5
#: Confidence credited to a NULL vote.
DEFAULT_NULL_CONF = 0.7
#: Longest hypothesis (in tokens) accepted by default.
DEFAULT_MAX_TOKENS = 5000

Unit = tuple[Any, float]


@dataclass
class RoverSlot:
    """One branch point of the transition network: each engine's ``(token, confidence)`` entry in
    engine order (NULL = ``(None, 0.0)``), the winner (``None`` when NULL won), its score and the
    fraction of engines that voted for it."""

    entries: list = field(default_factory=list)
    winner: Optional[Any] = None
    score: float = 0.0
    vote_share: float = 0.0


@dataclass
class RoverConsensus:
    """The consensus: winning tokens in order, every slot, the vote share of each consensus token."""

    tokens: list = field(default_factory=list)
    slots: list = field(default_factory=list)
    agreement: list = field(default_factory=list)
    n_engines: int = 0

    @property
    def text(self) -> str:
        """The consensus tokens joined by single spaces."""
        return " ".join(self.tokens)

    @property
    def mean_agreement(self) -> float:
        """Mean vote share of the consensus tokens; with no consensus token, 0.0 for two or more
        engines and 1.0 for one or none (vacuous agreement)."""
        if self.agreement:
            return sum(self.agreement) / len(self.agreement)
        return 0.0 if self.n_engines >= 2 else 1.0


def _conf(value: Any, default: float = DEFAULT_TOKEN_CONF) -> float:
    """``float(value)`` (``default`` for None); an int too large for a float reads as ±inf (then
    rejected with the other out-of-range confidences)."""
    if value is None:
        return default
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _as_units(hyp: Any, *, default_conf: float = DEFAULT_TOKEN_CONF) -> list[Unit]:
    """Read one hypothesis into ``(token, confidence)`` units (docs/decisions.md#rover)."""
    if hyp is None:
        return []
    if isinstance(hyp, str):
        return [(w, default_conf) for w in hyp.split()]
    if hasattr(hyp, "text"):  # OCR-result-shaped
        blocks = getattr(hyp, "blocks", None)
        if blocks and all(
            isinstance(getattr(b, "text", None), str) and b.text and not any(ch.isspace() for ch in b.text)
            for b in blocks
        ):
            return [(b.text, _conf(getattr(b, "confidence", None), default_conf)) for b in blocks]
        text = hyp.text
        if text is not None and not isinstance(text, str):
            raise TypeError(f"an OCR result's text must be a str, got {type(text).__name__}")
        conf = _conf(getattr(hyp, "mean_confidence", None), default_conf)
        return [(w, conf) for w in (text or "").split()]
    units = []
    append = units.append
    for item in hyp:
        if isinstance(item, (tuple, list)) and len(item) == 2:
            tok, conf = item
            append((str(tok), _conf(conf, default_conf)))
        else:
            append((str(item), default_conf))
    return units


def _probability(x: Any, name: str) -> float:
    """``x`` as a float in ``[0, 1]``, or a named error."""
    return checked_weight(x, name, at_most=1.0)


def rover(
    hypotheses: Iterable[Any],
    *,
    use_confidence: bool = True,
    conf_weight: float = DEFAULT_CONF_WEIGHT,
    null_conf: float = DEFAULT_NULL_CONF,
    tokenize: Optional[Callable[[Any], list[Unit]]] = None,
    max_tokens: Optional[int] = DEFAULT_MAX_TOKENS,
) -> RoverConsensus:
    """Align N hypotheses into slots and vote each slot (NIST ROVER, progressive alignment).

    ``hypotheses``: strings, token lists, ``(token, confidence)`` lists or OCR-result-shaped
    objects (``.text``, ``.mean_confidence``, optional word-level ``.blocks``), consumed once; the
    order matters (hypothesis 0 seeds the slots). ``use_confidence=False`` votes by frequency only
    (``conf_weight`` ignored); otherwise ``score = (1 - conf_weight) * votes/N + conf_weight *
    mean confidence``, a NULL vote counting ``null_conf``. ``tokenize`` overrides the unit reader.
    A hypothesis longer than ``max_tokens`` tokens raises ``ValueError`` (``None`` disables).
    Token confidences, ``conf_weight`` and ``null_conf`` must lie in ``[0, 1]``, and a single
    ``str``/``bytes`` is not a collection of hypotheses (named errors otherwise).
    """
    if isinstance(hypotheses, (str, bytes, bytearray)):
        raise InvalidTypeError(
            f"must be a collection of hypotheses (one per engine), got a single {type(hypotheses).__name__}; "
            "pass [text] for one engine", field="hypotheses")
    cw = _probability(conf_weight, "conf_weight") if use_confidence else 0.0
    nc = _probability(null_conf, "null_conf")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)):
        raise InvalidTypeError(f"must be an int or None, got {type(max_tokens).__name__}", field="max_tokens")
    read = tokenize if tokenize is not None else _as_units
    units = []
    for i, h in enumerate(hypotheses):
        try:
            units.append(list(read(h)))
        except TypeError as exc:
            if tokenize is not None:
                raise
            raise InvalidTypeError(
                "must be a string, a list of tokens or (token, confidence) pairs, "
                f"or an OCR result; got {type(h).__name__}", field=f"hypotheses[{i}]"
            ) from exc
    if not units:
        return RoverConsensus(n_engines=0)
    if max_tokens is not None:
        longest = max(len(u) for u in units)
        if longest > max_tokens:
            raise InputTooLargeError(rover_kernel.too_long_message(longest, max_tokens))
    flat = [t for u in units for t, _ in u]
    try:
        confs = np.array([c for u in units for _, c in u], dtype=np.float64)
    except (TypeError, ValueError):
        confs = None
    if confs is None or None in flat or not ((confs >= 0.0) & (confs <= 1.0)).all():
        _raise_bad_unit(units)
        confs = np.array([float(c) for u in units for _, c in u], dtype=np.float64)
    if all(type(t) is str for t in flat):
        ids_of: dict = {}
        ids = [ids_of.setdefault(t, len(ids_of)) for t in flat]
        vocab = list(ids_of)
    else:  # tokens from a custom tokenize: Python == semantics
        interner = ValueInterner()
        ids = [interner.id(t) for t in flat]
        vocab = interner.values
    offsets = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum([len(u) for u in units], out=offsets[1:])
    slot_tokens, slot_confs, winners, scores, shares = rover_kernel.align_vote(
        np.array(ids, dtype=np.uint32), confs, offsets, cw, nc, max_tokens)
    # token ids -> tokens, with the NULL id mapped to None (the kernel stores 0.0 as a NULL's confidence)
    lookup = [*vocab, None]
    null_index = len(vocab)
    n = len(units)
    entry_ids = np.where(slot_tokens == rover_kernel.NULL, null_index, slot_tokens).ravel().tolist()
    entries = list(zip([lookup[t] for t in entry_ids], slot_confs.ravel().tolist()))
    winner_tokens = [lookup[t] for t in np.where(winners == rover_kernel.NULL, null_index, winners).tolist()]
    share_list = shares.tolist()
    slots = [RoverSlot(entries[k * n:(k + 1) * n], w, s, v)
             for k, (w, s, v) in enumerate(zip(winner_tokens, scores.tolist(), share_list))]
    tokens = [w for w in winner_tokens if w is not None]
    agreement = [v for w, v in zip(winner_tokens, share_list) if w is not None]
    return RoverConsensus(tokens=tokens, slots=slots, agreement=agreement, n_engines=n)


def _raise_bad_unit(units: list[list[Unit]]) -> None:
    """Raise the error for the first None token or non-numeric, NaN or out-of-range confidence."""
    for i, hyp in enumerate(units):
        for k, (tok, conf) in enumerate(hyp):
            field = f"hypotheses[{i}]"
            if tok is None:
                raise InvalidValueError(f"token {k} is None; None is reserved for the NULL vote", field=field)
            try:
                c = float(conf)
            except OverflowError:
                c = math.inf
            except (TypeError, ValueError):
                raise InvalidTypeError(
                    f"token {k} ({tok!r}) has a non-numeric confidence {conf!r:.60}", field=field) from None
            if c != c:
                raise InvalidValueError(f"token {k} ({tok!r}) has a NaN confidence", field=field)
            if not 0.0 <= c <= 1.0:
                raise InvalidValueError(
                    f"token {k} ({tok!r}) has confidence {conf!r:.60}; confidences must be within [0, 1]",
                    field=field)


@dataclass
class AgreementSignal:
    """Reference-free confidence from several engines' outputs: ROVER's mean agreement (raw,
    uncalibrated; cost tier 3 because it needs N engine runs).

    >>> sig = AgreementSignal()
    >>> round(sig(["the cat sat", "the cat sit", "the bat sat"]), 3)
    0.778
    """

    cost_tier: int = 3
    use_confidence: bool = True
    conf_weight: float = DEFAULT_CONF_WEIGHT
    null_conf: float = DEFAULT_NULL_CONF
    tokenize: Optional[Callable[[Any], list[Unit]]] = None
    max_tokens: Optional[int] = DEFAULT_MAX_TOKENS

    def __call__(self, hypotheses: Iterable[Any]) -> float:
        return rover(
            hypotheses, use_confidence=self.use_confidence, conf_weight=self.conf_weight,
            null_conf=self.null_conf, tokenize=self.tokenize, max_tokens=self.max_tokens,
        ).mean_agreement


def rover_command(hypotheses: list[str], use_confidence: bool = True) -> dict:
    """The ``scorekit rover HYP HYP [...] [--no-confidence]`` command: the consensus as a dict.

    >>> rover_command(["the cat sat", "the cat sit", "the bat sat"], True)
    {'consensus': 'the cat sat', 'mean_agreement': 0.7778, 'agreement': [1.0, 0.6667, 0.6667], 'n_engines': 3}
    """
    c = rover(list(hypotheses), use_confidence=use_confidence)
    return {
        "consensus": c.text,
        "mean_agreement": round(c.mean_agreement, 4),
        "agreement": [round(a, 4) for a in c.agreement],
        "n_engines": c.n_engines,
    }
