"""Span / entity F1 under an explicit match scheme: ``MatchScheme`` and ``SpanF1Metric``.

This module owns both span-F1 semantics of the reference kit, computed natively (neither seqeval
nor nervaluate is imported):

* **seqeval** (``SEQEVAL_CONLL``, ``SEQEVAL_STRICT``) over tag sequences such as
  ``["B-PER", "I-PER", "O"]``: the CoNLL ``conlleval`` decoder (lenient) and the strict decoder keyed
  to a tagging scheme (IOB2, IOBES, BILOU, IOB1, IOE1, IOE2). Counts are TP/FP/FN over the sets of
  ``(type, start, end)`` entities of the two sides.
* **nervaluate** (``STRICT``, ``EXACT``, ``PARTIAL``, ``TYPE``) over span lists
  ``[{"label": str, "start": int, "end": int}, ...]`` with inclusive ends: SemEval-2013's greedy
  matching with COR/INC/PAR/MIS/SPU counts, partial matches worth half.

Everything runs on whole batches. Tags are interned once per batch into integer codes (by the
compiled reader ``_core.span_read_tags`` when the core is built; in Python otherwise), and both
decoders are NumPy passes over the flat token array (the decisions of each decoder depend only on
adjacent pairs of tags, so entities come from lookup tables, cumulative maxima and segment ids,
without a Python loop over tokens). Span matching finds every sufficiently-overlapping
(prediction, gold) pair of a document with array operations, settles the pairs that do not compete
with any other pair at once, and runs the greedy scan in Python only over the rest. A single call
is a batch of one. The corpus value is always a micro-average of the summed counts.

Decisions where the reference kit crashes or is silent (docs/spans.md#bad-input):

* a tag that is not a non-empty ``str``, a bare string given as a tag sequence, a span that is not
  a mapping, a span label that is not a ``str``, a start or end that is not an int (``bool``
  included), outside ±2**50, or an end before its start each raise a clear error naming the item;
* an unknown prefix letter under ``SEQEVAL_STRICT`` raises :class:`UnknownTagPrefixError` (a
  ``KeyError``, as the reference raises, and an ``InvalidValueError``) naming the tag;
* tags that do not look like entity tags are decoded as the CoNLL rules say, without seqeval's
  per-tag warning; no optional dependency is needed, so no extra guard fires.

>>> m = SpanF1Metric(MatchScheme.SEQEVAL_CONLL)
>>> m(["B-PER", "I-PER", "O", "O"], ["B-PER", "I-PER", "O", "B-LOC"]).detail["fn"]
1
>>> spans = SpanF1Metric("partial")
>>> spans([{"label": "ORG", "start": 8, "end": 16}], [{"label": "ORG", "start": 0, "end": 16}]).f1
0.5
"""

from __future__ import annotations

import enum
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Optional

import numpy as np

from scorekit import _kernels
from scorekit.base import GraphGrammar, LazyScores, Report, Score
from scorekit.errors import InvalidTypeError, InvalidValueError, describe

__all__ = ["MatchScheme", "SpanF1Metric", "TAGGING_SCHEMES", "UnknownTagPrefixError", "SpanFieldTypeError"]


class MatchScheme(str, enum.Enum):
    """The (backend, scheme) contract a span F1 is computed under; always explicit, because seqeval
    and nervaluate disagree. ``SEQEVAL_*`` members score tag sequences, the others span lists.

    >>> MatchScheme("type") is MatchScheme.TYPE, MatchScheme.STRICT == "strict"
    (True, True)
    """

    SEQEVAL_CONLL = "seqeval_conll"  #: CoNLL conlleval-compatible entity F1, lenient decoding
    SEQEVAL_STRICT = "seqeval_strict"  #: boundaries and type must match, keyed to a tagging scheme
    STRICT = "strict"  #: exact boundaries and the same label (SemEval-2013 strict)
    EXACT = "exact"  #: exact boundaries, label ignored
    PARTIAL = "partial"  #: boundary overlap earns half credit, label ignored
    TYPE = "type"  #: the same label with some overlap (nervaluate's ``ent_type``)


TAGGING_SCHEMES = ("IOB2", "IOBES", "BILOU", "IOB1", "IOE1", "IOE2")
"""The tagging schemes ``SEQEVAL_STRICT`` decoding can be keyed to."""

_SEQEVAL = (MatchScheme.SEQEVAL_CONLL, MatchScheme.SEQEVAL_STRICT)

_MISSING_SCHEME = (
    "SpanF1Metric requires an explicit scheme=MatchScheme.<...>; seqeval and nervaluate disagree, so a "
    "bare F1 is ambiguous. Choose one of: ['SEQEVAL_CONLL', 'SEQEVAL_STRICT', 'STRICT', 'EXACT', "
    "'PARTIAL', 'TYPE']."
)


class UnknownTagPrefixError(InvalidValueError, KeyError):
    """A tag whose first letter is none of I, O, B, E, S, U, L under ``SEQEVAL_STRICT``: a
    ``KeyError`` as the reference raises, and an ``InvalidValueError``."""

    def __str__(self) -> str:  # the plain message, not KeyError's quoted repr
        return str(self.args[0]) if self.args else ""


class SpanFieldTypeError(InvalidTypeError, ValueError):
    """A span label, start or end of the wrong type: an ``InvalidTypeError``, and a ``ValueError``
    as nervaluate raises for it."""


# -- tag codes -------------------------------------------------------------------------------------

# The first letter of a tag, as a small code; every other first letter is _OTHER.
_O, _B, _I, _E, _S, _U, _L, _DOT, _OTHER = range(9)
_K = 9
_LETTERS = {"O": _O, "B": _B, "I": _I, "E": _E, "S": _S, "U": _U, "L": _L, ".": _DOT}
_STRICT_LETTERS = "IOBESUL"


def _conll_table() -> np.ndarray:
    """The CoNLL decoder as one table over ``(previous letter*K + letter)*2 + types differ``: bit 1
    set where the open chunk closes, bit 2 where a chunk opens. A type change alone closes a chunk
    after, and opens one at, any letter but O and '.'."""
    ends = np.zeros((_K, _K, 2), dtype=bool)
    ends[[_E, _S]] = True
    ends[np.ix_([_B, _I], [_B, _S, _O])] = True
    starts = np.zeros((_K, _K, 2), dtype=bool)
    starts[:, [_B, _S]] = True
    starts[np.ix_([_E, _S, _O], [_E, _I])] = True
    typed = np.ones(_K, dtype=bool)
    typed[[_O, _DOT]] = False
    ends[typed, :, 1] = True
    starts[:, typed, 1] = True
    return (ends.astype(np.uint8) | starts.astype(np.uint8) << 1).ravel()


_CONLL_TABLE = _conll_table()
_CONLL_TYPED = np.array([letter not in (_O, _DOT) for letter in range(_K)])

# Strict decoding patterns per tagging scheme: (allowed letters, start, inside, end), each pattern
# (previous letters, current letters, type condition) with "*" = any letter or any type,
# "=" = same type as the previous tag, "!" = a different type.
_STRICT_PATTERNS: dict[str, tuple[str, tuple, tuple, tuple]] = {
    "IOB2": ("IOB",
             (("*", "B", "*"),),
             (("B", "I", "="), ("I", "I", "=")),
             (("I", "O", "*"), ("I", "I", "!"), ("I", "B", "*"), ("B", "O", "*"), ("B", "I", "!"),
              ("B", "B", "*"))),
    "IOBES": ("IOBES",
              (("*", "B", "*"), ("*", "S", "*")),
              (("B", "I", "="), ("B", "E", "="), ("I", "I", "="), ("I", "E", "=")),
              (("S", "*", "*"), ("E", "*", "*"))),
    "BILOU": ("BILOU",
              (("*", "B", "*"), ("*", "U", "*")),
              (("B", "I", "="), ("B", "L", "="), ("I", "I", "="), ("I", "L", "=")),
              (("U", "*", "*"), ("L", "*", "*"))),
    "IOB1": ("IOB",
             (("O", "I", "*"), ("I", "I", "!"), ("B", "I", "*"), ("I", "B", "="), ("B", "B", "=")),
             (("B", "I", "="), ("I", "I", "=")),
             (("I", "I", "!"), ("I", "O", "*"), ("I", "B", "*"), ("B", "O", "*"), ("B", "I", "!"),
              ("B", "B", "="))),
    "IOE1": ("IOE",
             (("O", "I", "*"), ("I", "I", "!"), ("E", "I", "*"), ("E", "E", "=")),
             (("I", "I", "="), ("I", "E", "=")),
             (("I", "I", "!"), ("I", "O", "*"), ("I", "E", "!"), ("E", "I", "="), ("E", "E", "="))),
    "IOE2": ("IOE",
             (("O", "I", "*"), ("O", "E", "*"), ("E", "I", "*"), ("E", "E", "*"), ("I", "I", "!"),
              ("I", "E", "!")),
             (("I", "E", "="), ("I", "I", "=")),
             (("E", "*", "*"),)),
}


def _pattern_table(patterns: tuple) -> np.ndarray:
    """A flat boolean table indexed by ``(previous letter*K + letter)*2 + types differ``."""
    table = np.zeros((_K, _K, 2), dtype=bool)
    for previous, current, condition in patterns:
        rows = [_LETTERS[c] for c in (_STRICT_LETTERS if previous == "*" else previous)]
        columns = [_LETTERS[c] for c in (_STRICT_LETTERS if current == "*" else current)]
        differ = {"*": [0, 1], "=": [0], "!": [1]}[condition]
        table[np.ix_(rows, columns, differ)] = True
    return table.ravel()


# Per tagging scheme: the allowed letters, and one table with bit 1 = start, 2 = inside, 4 = end.
_STRICT_TABLES = {
    name: (np.isin(np.arange(_K), [_LETTERS[c] for c in allowed]),
           _pattern_table(start).astype(np.uint8) | _pattern_table(inside).astype(np.uint8) << 1
           | _pattern_table(end).astype(np.uint8) << 2)
    for name, (allowed, start, inside, end) in _STRICT_PATTERNS.items()
}


# -- reading tag sequences -------------------------------------------------------------------------

def _as_list(value: Any, argument: str, what: str) -> list:
    """``value`` as a list, for a sequence of sentences or of tags; a bare string is refused."""
    if isinstance(value, list):
        return value
    if isinstance(value, (str, bytes)) or isinstance(value, Mapping):
        raise InvalidTypeError(f"must be {what}, got {describe(value)}", field=argument)
    try:
        return list(value)
    except TypeError:
        raise InvalidTypeError(f"must be {what}, got {describe(value)}", field=argument) from None


def _sentences(value: Any, argument: str, what: str) -> list:
    """The items of ``value`` (a sequence of tag sequences or of span lists), each a list or tuple."""
    items = _as_list(value, argument, f"a sequence whose items are each {what}")
    if not set(map(type, items)) <= {list, tuple}:
        items = [s if type(s) in (list, tuple) else _as_list(s, f"{argument}[{k}]", what)
                 for k, s in enumerate(items)]
    return items


def _item_name(argument: str, k: int, single: bool) -> str:
    """How an error names item ``k`` of ``argument``: ``pred`` for a single call, ``preds[k]`` else."""
    return argument if single else f"{argument}s[{k}]"


def _flatten_nested(sentence: Sequence, argument: str) -> Sequence:
    """seqeval's reading of a tag sequence holding lists: each list followed by an 'O'."""
    if not any(isinstance(t, list) for t in sentence):
        return sentence
    flat: list = []
    for j, part in enumerate(sentence):
        if not isinstance(part, list):
            raise InvalidTypeError(f"mixes nested tag lists with a single tag {describe(part)} at position {j}",
                                   field=argument)
        flat.extend(part)
        flat.append("O")
    return flat


_CHUNK_TOKENS = 1 << 15  # tokens per NumPy pass: the arrays of a chunk stay in cache


class _TagTable:
    """The distinct tags of a batch, interned as they are met: ``ids`` maps a tag to its id (``'O'``
    is 0), and per id ``letter`` holds its letter code and ``conll_type`` / ``strict_type`` the ids
    of its entity type as the CoNLL and the strict decoder read it."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.tags: list[str] = []
        self._types: dict[str, int] = {}
        self._columns: tuple[list[int], list[int], list[int]] = ([], [], [])
        self._add(["O"])

    def _add(self, tags: Iterable[str]) -> None:
        letters, conll_types, strict_types = self._columns
        for tag in tags:
            self.ids[tag] = len(self.tags)
            self.tags.append(tag)
            letters.append(_LETTERS.get(tag[0], _OTHER))
            conll_types.append(self._types.setdefault(tag[1:].split("-", 1)[-1] or "_", len(self._types)))
            strict_types.append(self._types.setdefault(tag[1:].strip("-") or "_", len(self._types)))
        self.letter = np.array(letters, dtype=np.uint8)
        narrow = np.uint8 if len(self._types) <= 256 else np.int32  # narrow arrays are cheaper to gather
        self.conll_type = np.array(conll_types, dtype=narrow)
        self.strict_type = np.array(strict_types, dtype=narrow)

    def encode(self, sentences: list, name: Callable[[int], str]) -> np.ndarray:
        """The ids of the tags of ``sentences``, one after the other. New tags are checked and
        interned; an unhashable tag raises ``TypeError`` (``name(k)`` names sentence ``k`` in the
        other errors). The compiled reader (``_core.span_read_tags``) gives the same ids for plain
        lists of ``str``; this method's own loop is its twin and reads everything else."""
        core = _kernels.compiled()
        compiled = core.span_read_tags(sentences, self.ids) if core is not None else None
        if compiled is not None:
            ids, new = compiled
            if new:
                self._add(new)
            return ids
        while True:
            tags = itertools.chain.from_iterable(sentences)
            try:
                if len(self.tags) <= 256:  # one byte per tag is the cheapest way out of Python
                    return np.frombuffer(bytes(map(self.ids.__getitem__, tags)), dtype=np.uint8)
                return np.fromiter(map(self.ids.__getitem__, tags), dtype=np.int32)
            except KeyError:
                new = [t for t in dict.fromkeys(itertools.chain.from_iterable(sentences)) if t not in self.ids]
                if any(not isinstance(t, str) or not t for t in new):
                    _raise_bad_tag(sentences, name)
                self._add(new)


def _raise_bad_tag(sentences: list, name: Callable[[int], str]) -> None:
    for k, sentence in enumerate(sentences):
        for j, tag in enumerate(sentence):
            if not isinstance(tag, str):
                raise InvalidTypeError(f"tag at position {j} must be a str, got {describe(tag)}", field=name(k))
            if not tag:
                raise InvalidValueError(f"tag at position {j} is the empty string", field=name(k))


class _TagChunk:
    """A chunk of sentence pairs, encoded: ``n`` pred sentences then their ``n`` golds, as one array
    of tag ids with an 'O' (id 0) before every sentence and after the last, as the decoders read
    them. ``starts[k]`` is where sentence ``k`` begins in ``ids``, ``sentence_at[i]`` the sentence
    of position ``i``."""

    def __init__(self, table: _TagTable, preds: list, golds: list, lengths: np.ndarray, conll: bool,
                 name: Callable[[int], str]) -> None:
        sentences = preds + golds
        try:
            tags = table.encode(sentences, name)
        except TypeError:  # an unhashable tag: seqeval's CoNLL reading flattens nested lists
            if not conll:
                _raise_bad_tag(sentences, name)
            sentences = [_flatten_nested(s, name(k)) for k, s in enumerate(sentences)]
            lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
            try:
                tags = table.encode(sentences, name)
            except TypeError:
                _raise_bad_tag(sentences, name)
        self.table, self.n, self.name, self.lengths = table, len(preds), name, lengths
        ends = np.cumsum(lengths + 1)
        self.starts = ends - lengths
        is_tag = np.ones(int(ends[-1]) + 1, dtype=bool)
        is_tag[0] = False
        is_tag[ends] = False
        self.ids = np.zeros(is_tag.size, dtype=tags.dtype)
        self.ids[is_tag] = tags
        self.sentence_at = np.repeat(np.arange(len(sentences)), lengths + 1)
        self.sentence_at = np.r_[0, self.sentence_at]  # the leading 'O' counts as sentence 0's


def _pair_codes(chunk: _TagChunk, letter: np.ndarray, types: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table`` looked up for every adjacent pair of tags: entry ``k`` is the decision at
    position ``k + 1`` (previous letter, letter, whether the two types differ)."""
    type_ = np.take(types, chunk.ids)
    index = letter[:-1] * np.uint8(2 * _K)
    index += letter[1:] * np.uint8(2)
    index += type_[:-1] != type_[1:]
    return np.take(table, index)


def _conll_entities(chunk: _TagChunk) -> tuple[np.ndarray, ...]:
    """seqeval's CoNLL ``get_entities`` on every sentence: ``(sentence, start, end inclusive, type)``,
    sorted by sentence then end."""
    letter = np.take(chunk.table.letter, chunk.ids)
    codes = _pair_codes(chunk, letter, chunk.table.conll_type, _CONLL_TABLE)
    # At a sentence start there is no previous type at all (not the sentinel's): a typed letter starts.
    codes[chunk.starts - 1] |= np.take(_CONLL_TYPED, letter[chunk.starts]).view(np.uint8) << 1
    closing = np.flatnonzero((codes & 1).view(bool)) + 1  # an entity ends just before each closing position
    opened = np.flatnonzero(np.r_[True, (codes & 2).view(bool)])  # position 0 stands for "none yet"
    sentence = np.take(chunk.sentence_at, closing)
    first = np.take(chunk.starts, sentence)  # a chunk begins at the sentence start until a start is seen
    begin = np.maximum(np.take(opened, np.searchsorted(opened, closing - 1, side="right") - 1), first)
    return sentence, begin - first, closing - 1 - first, np.take(chunk.table.conll_type, chunk.ids[closing - 1])


def _strict_entities(chunk: _TagChunk, tagging_scheme: str) -> tuple[np.ndarray, ...]:
    """seqeval's strict ``Entities`` on every sentence: ``(sentence, start, end exclusive, type)``,
    sorted by sentence then start; a sentence holding a letter its scheme does not allow has none."""
    letter = np.take(chunk.table.letter, chunk.ids)
    unknown = np.flatnonzero(letter >= _DOT)
    if unknown.size:
        _raise_unknown_prefix(chunk, int(unknown[0]))
    allowed, table = _STRICT_TABLES[tagging_scheme]
    codes = _pair_codes(chunk, letter, chunk.table.strict_type, table ^ np.uint8(2))  # bit 2: not inside
    # A chain runs from a start over the tokens "inside" it, and the decoder skips starts within a
    # chain: each segment (a token not inside, and the inside tokens after it) holds at most one
    # entity, begun by its first start and ending where the next segment begins.
    outside = (codes & 2).view(bool)
    segment = np.cumsum(outside) - 1
    segment_starts = np.flatnonzero(outside)
    starts = np.flatnonzero(codes & 1)
    first = starts[np.r_[True, segment[starts[1:]] != segment[starts[:-1]]]] if starts.size else starts
    end = segment_starts[segment[first] + 1]
    closed = (codes[end] & 4).astype(bool)
    first, end = first[closed] + 1, end[closed] + 1
    sentence = np.take(chunk.sentence_at, first)
    invalid = np.zeros(len(chunk.lengths), dtype=bool)
    invalid[np.take(chunk.sentence_at, np.flatnonzero(~np.take(allowed, letter)))] = True
    keep = ~invalid[sentence]
    sentence, first, end = sentence[keep], first[keep], end[keep]
    offset = chunk.starts[sentence]
    return sentence, first - offset, end - offset, np.take(chunk.table.strict_type, chunk.ids[first])


def _raise_unknown_prefix(chunk: _TagChunk, position: int) -> None:
    k = int(chunk.sentence_at[position])
    tag = chunk.table.tags[chunk.ids[position]]
    raise UnknownTagPrefixError(
        f"tag {tag!r} at position {position - int(chunk.starts[k])} has the prefix {tag[0]!r}, which is none "
        "of I, O, B, E, S, U, L (SEQEVAL_STRICT decodes tags by their first letter)", field=chunk.name(k))


def _seqeval_counts(chunk: _TagChunk, entities: tuple[np.ndarray, ...]) -> np.ndarray:
    """``(tp, fp, fn)`` per sentence pair of ``chunk``, as an ``(n, 3)`` int64 array."""
    sentence, start, end, type_ = entities
    n = chunk.n
    is_pred = sentence < n
    pair = np.where(is_pred, sentence, sentence - n)
    # One side's entities are sorted and unique by (sentence, end): key them on an axis common to both.
    width = np.maximum(chunk.lengths[:n], chunk.lengths[n:]) + 2
    key = (np.cumsum(width) - width)[pair] + end
    p, g = is_pred, ~is_pred
    gold_key = key[g]
    at = np.minimum(np.searchsorted(gold_key, key[p]), max(gold_key.size - 1, 0))
    if gold_key.size:
        hit = (gold_key[at] == key[p]) & (start[g][at] == start[p]) & (type_[g][at] == type_[p])
    else:
        hit = np.zeros(int(p.sum()), dtype=bool)
    tp = np.bincount(pair[p][hit], minlength=n)
    n_pred = np.bincount(pair[p], minlength=n)
    n_gold = np.bincount(pair[g], minlength=n)
    return np.stack([tp, n_pred - tp, n_gold - tp], axis=1).astype(np.int64)


def _seqeval_batch(preds: list, golds: list, scheme: MatchScheme, tagging_scheme: str, single: bool) -> np.ndarray:
    """``(tp, fp, fn)`` of every sentence pair, chunk by chunk over one table of tags. A prediction
    equal to its gold is not decoded: all the gold's entities are true positives."""
    table = _TagTable()
    conll = scheme is MatchScheme.SEQEVAL_CONLL
    try:
        same = np.fromiter(map(operator.eq, preds, golds), dtype=bool, count=len(preds))
    except Exception:  # a tag whose == has no truth value (an array): decode everything
        same = np.zeros(len(preds), dtype=bool)
    if same.any():
        preds = [() if equal else pred for pred, equal in zip(preds, same.tolist())]
    pred_lengths = np.fromiter(map(len, preds), dtype=np.int64, count=len(preds))
    gold_lengths = np.fromiter(map(len, golds), dtype=np.int64, count=len(golds))
    sizes = np.cumsum(pred_lengths + gold_lengths + 2)
    counts, begin = [], 0
    while begin < len(preds):
        done = int(sizes[begin - 1]) if begin else 0
        stop = max(int(np.searchsorted(sizes, done + _CHUNK_TOKENS, side="right")), begin + 1)

        def name(k: int, begin: int = begin, n: int = stop - begin) -> str:
            side, index = ("pred", begin + k) if k < n else ("gold", begin + k - n)
            return _item_name(side, index, single)

        lengths = np.concatenate((pred_lengths[begin:stop], gold_lengths[begin:stop]))
        chunk = _TagChunk(table, preds[begin:stop], golds[begin:stop], lengths, conll, name)
        entities = _conll_entities(chunk) if conll else _strict_entities(chunk, tagging_scheme)
        counts.append(_seqeval_counts(chunk, entities))
        begin = stop
    result = np.concatenate(counts)
    result[same, 0], result[same, 2] = result[same, 2], 0
    return result


# -- reading span lists ----------------------------------------------------------------------------

_COORDINATE_LIMIT = 2**50  # floats stay exact (overlap ratios, search keys) well within this


class _SpanColumns:
    """One side's span lists as columns: ``doc``, ``label`` (ids interned in ``labels``), ``start``,
    ``end`` (inclusive), in document then list order, and ``offsets`` per document."""

    def __init__(self, docs: list, argument: str, labels: dict[str, int], single: bool) -> None:
        self.argument, self.single = argument, single
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        spans = list(itertools.chain.from_iterable(docs))
        try:  # one column at a time: no object is created per span (which would wake the collector)
            names, starts, ends = (list(map(operator.itemgetter(key), spans)) for key in ("label", "start", "end"))
        except Exception:  # not a mapping, or a key missing: name the first such span
            for k, span in enumerate(spans):
                _check_span(span, self.span_name(lengths, k))
            raise
        if not set(map(type, names)) <= {str}:
            self._check_fields(names, (str,), "label", "a str", lengths)
        for values, key in ((starts, "start"), (ends, "end")):
            if not set(map(type, values)) <= {int}:
                self._check_fields(values, (int, np.integer), key, "an int", lengths)
        for name in dict.fromkeys(names):
            labels.setdefault(name, len(labels))
        label = np.fromiter(map(labels.__getitem__, names), dtype=np.int64, count=len(names))
        start, end = self._coordinates(starts, "start", lengths), self._coordinates(ends, "end", lengths)
        reversed_ = np.flatnonzero(end < start)
        if reversed_.size:
            k = int(reversed_[0])
            raise InvalidValueError(f"has end {int(end[k])} before start {int(start[k])} (ends are inclusive)",
                                    field=self.span_name(lengths, k))
        self.doc = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
        self.label, self.start, self.end = label, start, end
        self.offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)

    def span_name(self, lengths: np.ndarray, k: int) -> str:
        """``preds[doc][j]`` (``pred[j]`` for a single call) for the ``k``-th span of the batch."""
        ends = np.cumsum(lengths)
        doc = int(np.searchsorted(ends, k, side="right"))
        return f"{_item_name(self.argument, doc, self.single)}[{k - (int(ends[doc - 1]) if doc else 0)}]"

    def _check_fields(self, values: list, types: tuple, key: str, what: str, lengths: np.ndarray) -> None:
        for k, value in enumerate(values):
            if not isinstance(value, types) or isinstance(value, bool):
                raise SpanFieldTypeError(f"{key!r} must be {what}, got {describe(value)}",
                                         field=self.span_name(lengths, k))

    def _coordinates(self, values: list, key: str, lengths: np.ndarray) -> np.ndarray:
        try:
            array = np.array(values, dtype=np.int64)
        except OverflowError:
            array = None
        if array is None or ((array > _COORDINATE_LIMIT) | (array < -_COORDINATE_LIMIT)).any():
            k = next(k for k, v in enumerate(values) if abs(int(v)) > _COORDINATE_LIMIT)
            raise InvalidValueError(f"{key!r} must lie within ±2**50, got {values[k]}",
                                    field=self.span_name(lengths, k))
        return array


def _check_span(span: Any, name: str) -> None:
    if not isinstance(span, Mapping):
        raise InvalidTypeError(f"must be a span mapping with keys 'label', 'start', 'end', got {describe(span)}",
                               field=name)
    missing = [key for key in ("label", "start", "end") if key not in span]
    if missing:
        raise InvalidValueError(f"span is missing the key(s) {missing}; a span needs 'label', 'start' and 'end'",
                                field=name)


# -- span matching ---------------------------------------------------------------------------------

_COR, _INC, _PAR, _SPU = range(4)
_PAIR_BUDGET = 1 << 22  # candidate pairs examined per NumPy pass (bounds memory on long documents)


def _overlapping_pairs(pred: _SpanColumns, gold: _SpanColumns) -> tuple[np.ndarray, np.ndarray]:
    """Every (pred, gold) pair of a document whose overlap is sufficient for nervaluate, i.e. at
    least 1% of the gold span (inclusive ends), sorted by pred then gold index.

    Gold spans are sorted by (document, start); a prediction can only overlap those starting at
    most at its end and at least the document's longest gold span before its start, a window
    found by binary search (keys are complex numbers, which NumPy orders by real then imaginary
    part: document, then coordinate, all exact below 2**53)."""
    lengths = gold.end - gold.start + 1
    longest = np.zeros(len(gold.offsets) - 1, dtype=np.int64)
    np.maximum.at(longest, gold.doc, lengths)
    order = np.lexsort((gold.start, gold.doc))
    keys = gold.doc[order] + 1j * gold.start[order]
    low = np.searchsorted(keys, pred.doc + 1j * (pred.start - longest[pred.doc]), side="left")
    counts = np.searchsorted(keys, pred.doc + 1j * pred.end, side="right") - low
    cumulative = np.cumsum(counts)
    found_p, found_g = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    begin = 0
    while begin < len(counts):  # at most _PAIR_BUDGET candidate pairs at a time
        done = int(cumulative[begin - 1]) if begin else 0
        stop = max(int(np.searchsorted(cumulative, done + _PAIR_BUDGET, side="right")), begin + 1)
        window = counts[begin:stop]
        p = np.repeat(np.arange(begin, stop, dtype=np.int64), window)
        g = order[np.repeat(low[begin:stop] - (np.cumsum(window) - window), window) + np.arange(p.size)]
        overlap = np.minimum(pred.end[p], gold.end[g]) - np.maximum(pred.start[p], gold.start[g]) + 1
        sufficient = overlap / lengths[g] * 100 >= 1.0
        found_p.append(p[sufficient])
        found_g.append(g[sufficient])
        begin = stop
    p, g = np.concatenate(found_p), np.concatenate(found_g)
    ranked = np.lexsort((g, p))
    return p[ranked], g[ranked]


def _match(pred: _SpanColumns, gold: _SpanColumns, scheme: MatchScheme) -> np.ndarray:
    """nervaluate's counts ``(correct, incorrect, partial, missed, spurious)`` per document."""
    p, g = _overlapping_pairs(pred, gold)
    outcome = np.full(len(pred.doc), _SPU, dtype=np.int8)
    taken = np.zeros(len(gold.doc), dtype=bool)
    same_bounds = (pred.start[p] == gold.start[g]) & (pred.end[p] == gold.end[g])
    same_label = pred.label[p] == gold.label[g]
    miss = _INC if scheme is not MatchScheme.PARTIAL else _PAR
    if scheme is MatchScheme.STRICT:
        correct = same_bounds & same_label
    elif scheme is MatchScheme.TYPE:
        correct = same_label
    else:
        correct = same_bounds
    # A pair that is the only candidate of both its spans is settled regardless of the order.
    alone = (np.bincount(p, minlength=len(pred.doc))[p] == 1) & (np.bincount(g, minlength=len(gold.doc))[g] == 1)
    outcome[p[alone]] = np.where(correct[alone], _COR, miss)
    taken[g[alone]] = True
    if not alone.all():
        rest = ~alone
        _greedy(p[rest].tolist(), g[rest].tolist(), correct[rest].tolist(), pred, gold, scheme, miss,
                outcome, taken)
    n = len(pred.offsets) - 1
    counts = [np.bincount(pred.doc[outcome == code], minlength=n) for code in (_COR, _INC, _PAR)]
    missed = np.bincount(gold.doc[~taken], minlength=n)
    spurious = np.bincount(pred.doc[outcome == _SPU], minlength=n)
    return np.stack([*counts, missed, spurious], axis=1).astype(np.int64)


def _greedy(p: list[int], g: list[int], correct: list[bool], pred: _SpanColumns, gold: _SpanColumns,
            scheme: MatchScheme, miss: int, outcome: np.ndarray, taken: np.ndarray) -> None:
    """nervaluate's scan over the competing pairs: predictions in order, each against its unmatched
    overlapping golds in order. STRICT, EXACT and PARTIAL take the first gold that matches
    (``correct``); TYPE takes the same-label gold closest in boundaries (the first on ties).
    Failing that, the first overlapping gold makes the prediction INC (PAR under PARTIAL)."""
    closest = scheme is MatchScheme.TYPE
    distance = (np.abs(pred.start[p] - gold.start[g]) + np.abs(pred.end[p] - gold.end[g])).tolist() if closest else []
    used = taken.tolist()
    bounds = [0, *(np.flatnonzero(np.diff(p)) + 1).tolist(), len(p)]
    for lo, hi in zip(bounds, bounds[1:]):
        chosen = fallback = -1
        best = 0
        for k in range(lo, hi):
            gk = g[k]
            if used[gk]:
                continue
            if not correct[k]:
                if fallback < 0:
                    fallback = gk
            elif not closest:
                chosen = gk
                break
            elif chosen < 0 or distance[k] < best:
                chosen, best = gk, distance[k]
        if chosen >= 0:
            outcome[p[lo]], used[chosen] = _COR, True
        elif fallback >= 0:
            outcome[p[lo]], used[fallback] = miss, True
    taken[:] = used


# -- scores ----------------------------------------------------------------------------------------

def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _seqeval_score(scheme: MatchScheme, tp: int, fp: int, fn: int) -> Score:
    precision = tp / (tp + fp) if tp + fp else (1.0 if fn == 0 else 0.0)
    recall = tp / (tp + fn) if tp + fn else (1.0 if fp == 0 else 0.0)
    f1 = _f1(precision, recall)
    return Score(f1, precision, recall, f1, metric=f"span_f1[{scheme.value}]", detail={
        "scheme": scheme.value, "tp": tp, "fp": fp, "fn": fn, "higher_is_better": True, "backend": "seqeval"})


def _nervaluate_score(scheme: MatchScheme, correct: int, incorrect: int, partial: int, missed: int,
                      spurious: int) -> Score:
    possible = correct + incorrect + partial + missed
    actual = correct + incorrect + partial + spurious
    credit = correct + 0.5 * partial
    precision = credit / actual if actual else (1.0 if possible == 0 else 0.0)
    recall = credit / possible if possible else (1.0 if actual == 0 else 0.0)
    f1 = _f1(precision, recall)
    return Score(f1, precision, recall, f1, metric=f"span_f1[{scheme.value}]", detail={
        "backend": "nervaluate", "scheme": scheme.value, "correct": correct, "incorrect": incorrect,
        "partial": partial, "missed": missed, "spurious": spurious, "possible": possible, "actual": actual,
        "higher_is_better": True})


def _micro_seqeval(tp: int, fp: int, fn: int) -> float:
    if tp + fp + fn == 0:
        return 1.0
    return _f1(tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0)


def _micro_nervaluate(correct: int, partial: int, possible: int, actual: int) -> float:
    if possible == 0 and actual == 0:
        return 1.0
    credit = correct + 0.5 * partial
    return _f1(credit / actual if actual else 0.0, credit / possible if possible else 0.0)


class SpanScores(LazyScores):
    """Read-only per-sentence ``Score`` objects of a batch, built on access from one count array
    (``tp, fp, fn`` per row for seqeval schemes; ``correct, incorrect, partial, missed, spurious``
    for the others)."""

    def __init__(self, scheme: MatchScheme, counts: np.ndarray) -> None:
        self._build = _seqeval_score if scheme in _SEQEVAL else _nervaluate_score
        self._scheme = scheme
        self._counts = counts

    def __len__(self) -> int:
        return len(self._counts)

    def _item(self, k: int) -> Score:
        return self._build(self._scheme, *self._counts[k].tolist())

    def __iter__(self) -> Iterator[Score]:
        for row in self._counts.tolist():
            yield self._build(self._scheme, *row)

    def __repr__(self) -> str:
        return f"<SpanScores: {len(self)} span_f1[{self._scheme.value}] scores>"


# -- the metric ------------------------------------------------------------------------------------

class SpanF1Metric:
    """Entity precision / recall / F1 of ``(pred, gold)`` under an explicit :class:`MatchScheme`.

    ``scheme`` is required (a member or its value). ``tagging_scheme`` (one of
    :data:`TAGGING_SCHEMES`) keys ``SEQEVAL_STRICT`` decoding and is validated for every scheme.
    ``SEQEVAL_*`` schemes take tag sequences (of any lengths: entity sets are compared); the others
    take span lists with inclusive ends. Each ``Score.detail`` carries the raw counts, which
    :meth:`aggregate` sums into a micro-F1.

    >>> m = SpanF1Metric(MatchScheme.SEQEVAL_STRICT, tagging_scheme="IOBES")
    >>> m(["B-PER", "E-PER", "O"], ["B-PER", "E-PER", "O"]).detail["tp"]
    1
    >>> SpanF1Metric("type").score_corpus(
    ...     [[{"label": "PER", "start": 0, "end": 3}], []],
    ...     [[{"label": "PER", "start": 0, "end": 5}], [{"label": "LOC", "start": 2, "end": 2}]]).aggregate
    0.6666666666666666
    """

    name = "span_f1"

    def __init__(self, scheme: Any = None, *, tagging_scheme: str = "IOB2") -> None:
        if scheme is None:  # the built-in TypeError, as the reference's documented example shows it
            raise TypeError(_MISSING_SCHEME)
        try:
            self.scheme = MatchScheme(scheme)
        except ValueError:
            raise InvalidValueError(f"{scheme!r} is not a valid MatchScheme") from None
        if tagging_scheme not in TAGGING_SCHEMES:
            raise InvalidValueError(f"tagging_scheme must be one of {TAGGING_SCHEMES}, got {tagging_scheme!r}")
        self.tagging_scheme = tagging_scheme

    def __repr__(self) -> str:
        return f"SpanF1Metric(scheme=MatchScheme.{self.scheme.name}, tagging_scheme={self.tagging_scheme!r})"

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        counts = self._counts([_as_list(pred, "pred", self._shape())], [_as_list(gold, "gold", self._shape())],
                              single=True)
        return SpanScores(self.scheme, counts)[0]

    def score_batch(self, pairs: Iterable[Any]) -> list[Score]:
        """``[self(pred, gold) for pred, gold in pairs]``, computed in one pass over the batch."""
        preds, golds = [], []
        for k, pair in enumerate(_as_list(pairs, "pairs", "a sequence of (pred, gold) pairs")):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise InvalidValueError(f"must be a (pred, gold) pair, got {describe(pair)}", field=f"pairs[{k}]")
            preds.append(pair[0])
            golds.append(pair[1])
        return list(self.score_corpus(preds, golds).scores)

    def score_corpus(self, preds: Iterable[Any], golds: Iterable[Any]) -> Report:
        """Score sentence (or document) ``k`` of ``preds`` against that of ``golds`` for every ``k``.

        The report's ``aggregate`` is :meth:`aggregate` of the per-item scores (a micro-F1; ``None``
        for an empty corpus), ``scores`` builds each :class:`~scorekit.base.Score` on access, and
        ``detail`` holds the summed counts.
        """
        preds = _sentences(preds, "preds", self._shape())
        golds = _sentences(golds, "golds", self._shape())
        if len(preds) != len(golds):
            raise InvalidValueError(f"and golds differ in length: {len(preds)} predictions for {len(golds)} golds",
                                    field="preds")
        counts = self._counts(preds, golds, single=False)
        totals = dict(zip(self._columns(), (int(v) for v in counts.sum(axis=0))))
        if self.scheme in _SEQEVAL:
            aggregate = _micro_seqeval(totals["tp"], totals["fp"], totals["fn"])
        else:
            totals["possible"] = totals["correct"] + totals["incorrect"] + totals["partial"] + totals["missed"]
            totals["actual"] = totals["correct"] + totals["incorrect"] + totals["partial"] + totals["spurious"]
            aggregate = _micro_nervaluate(totals["correct"], totals["partial"], totals["possible"], totals["actual"])
        return Report(metric=self.name, aggregate=aggregate if len(preds) else None, n=len(preds),
                      scores=SpanScores(self.scheme, counts),
                      detail={"scheme": self.scheme.value, "backend": self._backend(), **totals})

    def aggregate(self, scores: Iterable[Score]) -> float:
        """Micro-F1 over a corpus: the raw counts of every score summed, then divided once (TP/FP/FN
        for seqeval schemes; COR, PAR, POSSIBLE and ACTUAL, partial worth half, for the others).
        Scores of the two backends cannot be mixed; an empty corpus scores 1.0."""
        details = []
        for k, score in enumerate(scores):
            detail = getattr(score, "detail", None)
            if not isinstance(detail, Mapping):
                raise InvalidTypeError(f"must be a Score with a detail mapping, got {describe(score)}",
                                       field=f"scores[{k}]")
            details.append(detail)
        backends = {d.get("backend") for d in details} - {None, ""}
        if len(backends) > 1:
            raise InvalidValueError(
                f"Cannot micro-aggregate mixed span-F1 backends {sorted(backends, key=str)}; their counts "
                "(TP/FP/FN vs COR/INC/PAR/MIS/SPU) are not commensurable. Aggregate each backend/scheme separately.")

        def total(key: str) -> int:
            return sum(d.get(key, 0) for d in details)

        if "nervaluate" in backends:
            return _micro_nervaluate(total("correct"), total("partial"), total("possible"), total("actual"))
        return _micro_seqeval(total("tp"), total("fp"), total("fn"))

    def _shape(self) -> str:
        return "a list of tags" if self.scheme in _SEQEVAL else "a list of span mappings"

    def _backend(self) -> str:
        return "seqeval" if self.scheme in _SEQEVAL else "nervaluate"

    def _columns(self) -> tuple[str, ...]:
        if self.scheme in _SEQEVAL:
            return ("tp", "fp", "fn")
        return ("correct", "incorrect", "partial", "missed", "spurious")

    def _counts(self, preds: list, golds: list, *, single: bool) -> np.ndarray:
        """The count columns (:meth:`_columns`) of each sentence pair."""
        if not preds:
            return np.zeros((0, len(self._columns())), dtype=np.int64)
        if self.scheme in _SEQEVAL:
            return _seqeval_batch(preds, golds, self.scheme, self.tagging_scheme, single)
        labels: dict[str, int] = {}
        pred = _SpanColumns(preds, "pred", labels, single)
        gold = _SpanColumns(golds, "gold", labels, single)
        return _match(pred, gold, self.scheme)
