"""ROVER consensus of several engines' outputs, and the agreement signal built on it (docs/decisions.md#rover).

This module owns the user-facing side of ROVER: reading hypotheses into ``(token, confidence)``
units (strings, token lists, ``(token, confidence)`` pairs, OCR-result-shaped objects), the input
checks, and the result objects :class:`RoverSlot` / :class:`RoverConsensus`. The progressive
alignment and the vote run in the ``rover`` kernel (:mod:`scorekit._kernels.rover`), which keeps
the reference's traceback preference and voting arithmetic, so slots, winners, scores and
agreement are those of the reference. :func:`agreement_batch` gives the agreement of a whole
corpus of fields (one list of hypotheses per field) with one kernel call.

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

import bisect
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from scorekit._interning import ValueInterner
from scorekit import _kernels
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
    "agreement_batch",
    "text_agreement_batch",
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


def _word_level(texts: list) -> bool:
    """Whether every block text is a ``str`` of one word (non-empty, no ``isspace`` character):
    exactly when joining them with spaces and splitting gives them back."""
    try:
        return " ".join(texts).split() == texts
    except TypeError:  # a text that is not a str
        return False


def _as_units(hyp: Any, *, default_conf: float = DEFAULT_TOKEN_CONF) -> list[Unit]:
    """Read one hypothesis into ``(token, confidence)`` units (docs/decisions.md#rover)."""
    if hyp is None:
        return []
    if isinstance(hyp, str):
        return [(w, default_conf) for w in hyp.split()]
    if hasattr(hyp, "text"):  # OCR-result-shaped
        blocks = getattr(hyp, "blocks", None)
        if blocks and _word_level(texts := [getattr(b, "text", None) for b in blocks]):
            return [(t, _conf(getattr(b, "confidence", None), default_conf)) for t, b in zip(texts, blocks)]
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


@dataclass
class _Packed:
    """Hypotheses read into the kernel's layout: hypothesis ``h`` is
    ``ids[engine_offsets[h]:engine_offsets[h+1]]`` (with ``confs``), item ``k`` the hypotheses
    ``item_offsets[k]:item_offsets[k+1]``; ``vocab[i]`` is the token of id ``i`` (when asked for)."""

    ids: np.ndarray
    confs: np.ndarray
    engine_offsets: np.ndarray
    item_offsets: np.ndarray
    vocab: Optional[list]


def _offsets(lengths: list[int]) -> np.ndarray:
    """``int64`` offsets of consecutive runs of these lengths (``n + 1`` entries from 0)."""
    return np.fromiter(itertools.accumulate(lengths, initial=0), np.int64, len(lengths) + 1)


def _collect(items: Iterable[Any], batch: bool) -> tuple[list, list[int], Optional[Exception]]:
    """Every item's hypotheses, one after the other, and the number of hypotheses per item, up to
    the first item that is not a collection of hypotheses (then also its error)."""
    hypotheses: list = []
    counts: list[int] = []
    extend, count = hypotheses.extend, counts.append
    for k, hyps in enumerate(items):
        if type(hyps) is not list:  # lists are the common case; anything else is checked first
            try:
                hyps = _engines(hyps, k if batch else None)
            except Exception as exc:  # raised once the items before it are known to be good
                return hypotheses, counts, exc
        extend(hyps)
        count(len(hyps))
    return hypotheses, counts, None


def _engines(hyps: Any, item: Optional[int]) -> list:
    """One item's hypotheses as a list, or the error for something that is not a collection of them."""
    return _collection(hyps, "hypotheses (one per engine)", "; pass [text] for one engine", "hypotheses", item)


def _collection(value: Any, what: str, hint: str, field: str, item: Optional[int] = None) -> list:
    """``value`` as a list, or the error (``hint`` added for a single string) for something that is
    not a collection of ``what``."""
    if isinstance(value, (str, bytes, bytearray)):
        raise InvalidTypeError(f"must be a collection of {what}, got a single {type(value).__name__}{hint}",
                               field=field, item=item)
    try:
        values = iter(value)
    except TypeError:
        raise InvalidTypeError(f"must be a collection of {what}, got {type(value).__name__}", field=field,
                               item=item) from None
    return list(values)


def _pack(items: Iterable[Any], tokenize: Optional[Callable[[Any], list[Unit]]], max_tokens: Optional[int], *,
          batch: bool, vocab: bool) -> _Packed:
    """Read every item's hypotheses into units (``tokenize``, else :func:`_as_units`), check them and
    intern their tokens once for all items. Errors name the hypothesis and, in a batch, the item;
    with several bad items, the error is the one a loop of :func:`rover` calls meets first.

    Lists of plain ``str`` hypotheses are read by the compiled core when it is available
    (``_core.rover_read_texts``: the same words and ids as :func:`_as_units` and the interning below)."""
    if tokenize is None and _kernels.compiled() is not None:
        items = items if type(items) is list else list(items)
        packed = _read_plain_texts(items, vocab, max_tokens, batch)
        if packed is not None:
            return packed
    hypotheses, counts, error = _collect(items, batch)
    packed = _read(hypotheses, _offsets(counts), tokenize, max_tokens, batch, vocab)
    if error is not None:
        raise error
    return packed


def _read_plain_texts(items: list, vocab: bool, max_tokens: Optional[int], batch: bool,
                     first: Optional[list] = None) -> Optional[_Packed]:
    """Items of plain ``str`` hypotheses (item ``k`` preceded by ``first[k]`` when given) read by
    the compiled core, checked; ``None`` when the core declines them (not exactly lists of
    ``str``, or a lone surrogate)."""
    core = _kernels.compiled()
    compiled = None if core is None else core.rover_read_texts(items, vocab, first)
    if compiled is None:
        return None
    ids, engine_offsets, item_offsets, words = compiled
    _check_units(None, None, engine_offsets, item_offsets, max_tokens, batch)
    return _Packed(ids, np.full(len(ids), DEFAULT_TOKEN_CONF), engine_offsets, item_offsets, words)


def _read(hypotheses: list, item_offsets: np.ndarray, tokenize: Optional[Callable[[Any], list[Unit]]],
          max_tokens: Optional[int], batch: bool, vocab: bool) -> _Packed:
    """:func:`_pack` by the Python reader once the items are collected (item ``k``:
    ``hypotheses[item_offsets[k]:item_offsets[k+1]]``). Units go straight into flat token and
    confidence lists: millions of small lists kept alive would make every garbage collection
    walk them."""
    read = tokenize if tokenize is not None else _as_units
    tokens: list = []
    confs: list = []
    lengths: list[int] = []
    for h, hyp in enumerate(hypotheses):
        try:
            units = read(hyp)
            units = units if type(units) is list else list(units)
        except Exception as exc:
            k, i = _position(item_offsets, h)
            # a loop of rover() calls would have stopped at a bad earlier item first
            done = _offsets(lengths[:item_offsets[k]])
            _check_units(tokens, confs, done, item_offsets[:k + 1], max_tokens, batch)
            if tokenize is None and isinstance(exc, TypeError):
                raise InvalidTypeError(
                    "must be a string, a list of tokens or (token, confidence) pairs, "
                    f"or an OCR result; got {type(hyp).__name__}", field=f"hypotheses[{i}]",
                    item=k if batch else None) from exc
            if batch and hasattr(exc, "add_note"):  # Python >= 3.11
                exc.add_note(f"(reading item {k}, hypotheses[{i}])")
            raise
        tokens.extend([t for t, _ in units])
        confs.extend([c for _, c in units])
        lengths.append(len(units))
    engine_offsets = _offsets(lengths)
    conf_array = _check_units(tokens, confs, engine_offsets, item_offsets, max_tokens, batch)
    if set(map(type, tokens)) <= {str}:
        ids_of: dict = {}
        ids = [ids_of.setdefault(t, len(ids_of)) for t in tokens]
        words = list(ids_of)
    else:  # tokens from a custom tokenize: Python == semantics
        interner = ValueInterner()
        ids = [interner.id(t) for t in tokens]
        words = interner.values
    return _Packed(np.array(ids, dtype=np.uint32), conf_array, engine_offsets, item_offsets,
                   words if vocab else None)


def _position(item_offsets: np.ndarray, h: int) -> tuple[int, int]:
    """(item, hypothesis within the item) of hypothesis ``h``."""
    k = bisect.bisect_right(item_offsets, h) - 1
    return k, h - int(item_offsets[k])


def _check_units(tokens: Optional[list], confs: Optional[list], engine_offsets: np.ndarray,
                 item_offsets: np.ndarray, max_tokens: Optional[int], batch: bool) -> Optional[np.ndarray]:
    """The ``max_tokens`` guard and, given the flat ``tokens`` and ``confs`` of the hypotheses, the
    unit checks (no None token, confidences numbers in ``[0, 1]``); returns the confidences as
    ``float64``. ``item_offsets`` may cover only the first items.

    A problem is reported as a loop of :func:`rover` calls would meet it: the first bad item, and
    in it the guard before a bad unit."""
    # (no hypothesis can be too long when all of them together are not)
    too_long = max_tokens is not None and engine_offsets[-1] > max_tokens and \
        np.diff(engine_offsets).max() > max_tokens
    conf_array = None
    bad_unit = False
    if tokens is not None:
        try:
            conf_array = np.array(confs, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            conf_array = None
        bad_unit = conf_array is None or None in tokens or not ((conf_array >= 0.0) & (conf_array <= 1.0)).all()
    if too_long or bad_unit:
        lengths = np.diff(engine_offsets)
        for k in range(len(item_offsets) - 1):
            lo, hi = item_offsets[k], item_offsets[k + 1]
            item = k if batch else None
            if too_long and hi > lo and lengths[lo:hi].max() > max_tokens:
                longest = int(lengths[lo:hi].max())
                raise InputTooLargeError(rover_kernel.too_long_message(longest, max_tokens), item=item)
            if bad_unit:
                spans = zip(engine_offsets[lo:hi].tolist(), engine_offsets[lo + 1:hi + 1].tolist())
                _raise_bad_unit([list(zip(tokens[a:b], confs[a:b])) for a, b in spans], item)
        if conf_array is None:  # numbers NumPy cannot convert in bulk (a Decimal, an int beyond float)
            conf_array = np.array([float(c) for c in confs], dtype=np.float64)
    return conf_array


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
    hypotheses = _engines(hypotheses, None)
    cw, nc = _parameters(use_confidence, conf_weight, null_conf, max_tokens)
    packed = _pack([hypotheses], tokenize, max_tokens, batch=False, vocab=True)
    n = len(packed.engine_offsets) - 1
    if n == 0:
        return RoverConsensus(n_engines=0)
    slot_tokens, slot_confs, winners, scores, shares = rover_kernel.align_vote(
        packed.ids, packed.confs, packed.engine_offsets, cw, nc, max_tokens)
    # token ids -> tokens, with the NULL id mapped to None (the kernel stores 0.0 as a NULL's confidence)
    lookup = dict(enumerate(packed.vocab))  # mapped in Python: two np.where calls cost more on a few slots
    lookup[rover_kernel.NULL] = None
    entries = list(zip([lookup[t] for t in slot_tokens.ravel().tolist()], slot_confs.ravel().tolist()))
    winner_tokens = [lookup[t] for t in winners.tolist()]
    share_list = shares.tolist()
    slots = [RoverSlot(entries[k * n:(k + 1) * n], w, s, v)
             for k, (w, s, v) in enumerate(zip(winner_tokens, scores.tolist(), share_list))]
    tokens = [w for w in winner_tokens if w is not None]
    agreement = [v for w, v in zip(winner_tokens, share_list) if w is not None]
    return RoverConsensus(tokens=tokens, slots=slots, agreement=agreement, n_engines=n)


def _parameters(use_confidence: bool, conf_weight: Any, null_conf: Any, max_tokens: Any) -> tuple[float, float]:
    """The effective confidence weight and the NULL confidence, with ``max_tokens`` checked."""
    cw = _probability(conf_weight, "conf_weight") if use_confidence else 0.0
    nc = _probability(null_conf, "null_conf")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)):
        raise InvalidTypeError(f"must be an int or None, got {type(max_tokens).__name__}", field="max_tokens")
    return cw, nc


def agreement_batch(
    items: Iterable[Iterable[Any]],
    *,
    use_confidence: bool = True,
    conf_weight: float = DEFAULT_CONF_WEIGHT,
    null_conf: float = DEFAULT_NULL_CONF,
    tokenize: Optional[Callable[[Any], list[Unit]]] = None,
    max_tokens: Optional[int] = DEFAULT_MAX_TOKENS,
    threads: Optional[int] = None,
) -> np.ndarray:
    """ROVER mean agreement of every item: ``items`` is an iterable of hypothesis lists (each as
    :func:`rover` takes them); returns ``float64[n]``, bit for bit ``[AgreementSignal(...)(h) for h in
    items]`` with the same parameters, from one kernel call (items run in parallel on ``threads``
    threads, ``None`` = every core; results do not depend on it). Errors are those of :func:`rover`
    and name the item (``item k: hypotheses[i] ...``).

    >>> agreement_batch([["the cat sat", "the cat sit", "the bat sat"], ["a b", "a b"], [], ["x", "y"]])
    array([0.77777778, 1.        , 1.        , 0.5       ])
    """
    items = _collection(items, "hypothesis lists (one per item)", "", "items")
    cw, nc = _parameters(use_confidence, conf_weight, null_conf, max_tokens)
    return _mean_agreements(_pack(items, tokenize, max_tokens, batch=True, vocab=False), cw, nc, max_tokens, threads)


def _mean_agreements(packed: _Packed, cw: float, nc: float, max_tokens: Optional[int],
                     threads: Optional[int]) -> np.ndarray:
    return rover_kernel.mean_agreements(packed.ids, packed.confs, packed.engine_offsets, packed.item_offsets,
                                        cw, nc, max_tokens, threads)


def text_agreement_batch(values: list, sources: list, *, threads: Optional[int] = None) -> Optional[np.ndarray]:
    """:func:`agreement_batch` (default parameters) of the items ``[values[k], *sources[k]]``, read by
    the compiled core straight from ``values`` (a list of ``str``) and ``sources`` (a list of lists
    of ``str``) without building those lists: the fast path of ``estimate_quality_batch``. ``None``
    when some value or source is not exactly a ``str`` (or a list), holds a lone surrogate, or the
    compiled core is missing or the Numba backend is in use: then build the items and call
    :func:`agreement_batch`.

    >>> values, sources = ["the cat sat", "a b"], [["the cat sit", "the bat sat"], ["a b"]]
    >>> scores = text_agreement_batch(values, sources)
    >>> if scores is None:  # no compiled reader: the same numbers from the built items
    ...     scores = agreement_batch([[value, *rest] for value, rest in zip(values, sources)])
    >>> scores.round(4).tolist()
    [0.7778, 1.0]
    """
    if _kernels.compiled() is None:
        return None
    if len(values) != len(sources):
        raise InvalidValueError(f"{len(values)} values but {len(sources)} source lists", field="sources")
    packed = _read_plain_texts(sources, False, DEFAULT_MAX_TOKENS, True, first=values)
    if packed is None:
        return None
    cw, nc = _parameters(True, DEFAULT_CONF_WEIGHT, DEFAULT_NULL_CONF, DEFAULT_MAX_TOKENS)
    return _mean_agreements(packed, cw, nc, DEFAULT_MAX_TOKENS, threads)


def _raise_bad_unit(units: list[list[Unit]], item: Optional[int] = None) -> None:
    """Raise the error for the first None token or non-numeric, NaN or out-of-range confidence
    (``item``: the batch item, named in the error)."""
    for i, hyp in enumerate(units):
        for k, (tok, conf) in enumerate(hyp):
            field = f"hypotheses[{i}]"
            if tok is None:
                raise InvalidValueError(f"token {k} is None; None is reserved for the NULL vote", field=field,
                                        item=item)
            try:
                c = float(conf)
            except OverflowError:
                c = math.inf
            except (TypeError, ValueError):
                raise InvalidTypeError(
                    f"token {k} ({tok!r}) has a non-numeric confidence {conf!r:.60}", field=field, item=item) from None
            if c != c:
                raise InvalidValueError(f"token {k} ({tok!r}) has a NaN confidence", field=field, item=item)
            if not 0.0 <= c <= 1.0:
                raise InvalidValueError(
                    f"token {k} ({tok!r}) has confidence {conf!r:.60}; confidences must be within [0, 1]",
                    field=field, item=item)


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
