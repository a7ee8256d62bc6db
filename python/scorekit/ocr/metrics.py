"""Text metrics of OCR evaluation on two page texts (docs/ocr-metrics.md): CER and WER exactly as
dinglehopper 0.11 computes them on two strings, the bag-of-words WER, word accuracy, the per-class
character accuracy, the grapheme confusions and the alignment a side-by-side diff shows, and the
flexible character accuracy (:mod:`scorekit.ocr.fca`).

Units are dinglehopper's: both texts are NFC-normalised, characters are extended grapheme
clusters (the compiled grapheme packer), words are the UAX #29 word-boundary segments that hold at
least one character outside the categories M, P, Z, S, Cc and Cf
(docs/decisions.md#ocr-dinglehopper-units). Edit distances run in the Levenshtein kernels.

>>> c = compare_texts("Der Hund bellt.", "Der Hnud bellt")
>>> c.char_edits, c.n_characters, c.word_edits, c.n_words
(3, 15, 1, 3)
>>> round(c.cer, 4), round(c.wer, 4), round(c.bow_wer, 4)
(0.2, 0.3333, 0.3333)
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from scorekit._graphemes import grapheme_packer, import_regex
from scorekit._kernels import levenshtein as lev
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.text import JoinedText

#: What :func:`compare_texts` can compute; ``"alignment"`` gives the alignment, the confusions and
#: the per-class accuracy, ``"confusions"`` the last two without the alignment's runs (the same edit
#: script), ``"fca"`` the flexible character accuracy (the costly one).
METRICS = ("cer", "wer", "bow", "confusions", "alignment", "fca")
#: What :func:`compare_texts` computes unless told otherwise.
DEFAULT_METRICS = ("cer", "wer", "bow", "alignment")
#: Character classes of :attr:`TextComparison.char_classes`, by the Unicode category of a
#: grapheme's first code point (docs/ocr-metrics.md#character-classes).
CHAR_CLASSES = ("letters", "digits", "punctuation", "whitespace", "other")
#: What an empty ground truth with a non-empty OCR text gives: ``"inf"`` (dinglehopper's value) or
#: ``"error"`` (an :class:`~scorekit.errors.InvalidValueError`).
EMPTY_REFERENCE = ("inf", "error")

#: dinglehopper drops a word-boundary segment made only of these categories (and of Cc, Cf).
_UNWANTED_MAJOR = frozenset("MPZS")
_UNWANTED_MINOR = frozenset(("Cc", "Cf"))


@dataclass(frozen=True)
class TextComparison:
    """Figures of one ground-truth / OCR pair; a field a caller did not ask for is ``None``.

    ``cer``/``wer`` are edits over the ground-truth length (``inf`` when the ground truth is empty
    and the OCR text is not, 0 when both are), ``n_characters``/``n_words`` that length.
    ``alignment`` is a tuple of ``(gt_piece, ocr_piece, op)`` runs, op one of ``"equal"``,
    ``"replace"``, ``"delete"``, ``"insert"``; joined, the pieces give back both texts (NFC).
    ``confusions`` counts ``(gt_grapheme, ocr_grapheme)`` edits, ``""`` for the absent side.
    ``char_classes`` maps each of :data:`CHAR_CLASSES` to ``{"count", "errors", "accuracy"}``.
    """

    cer: Optional[float]
    wer: Optional[float]
    n_characters: int
    n_words: Optional[int]
    char_edits: Optional[int]
    word_edits: Optional[int]
    bow_wer: Optional[float] = None
    word_accuracy: Optional[float] = None
    fca: Optional[float] = None
    char_classes: Optional[dict] = None
    confusions: Optional[Counter] = None
    alignment: Optional[tuple] = None

    def as_dict(self) -> dict[str, Any]:
        """The figures as a JSON-ready dict (dinglehopper's keys for what it shares); confusions
        become ``[gt, ocr, count]`` rows, most frequent first; the alignment is left out."""
        out = {
            "cer": self.cer, "wer": self.wer, "n_characters": self.n_characters, "n_words": self.n_words,
            "char_edits": self.char_edits, "word_edits": self.word_edits, "bow_wer": self.bow_wer,
            "word_accuracy": self.word_accuracy, "fca": self.fca, "char_classes": self.char_classes,
        }
        if self.confusions is not None:
            out["confusions"] = [[g, o, n] for (g, o), n in self.confusions.most_common()]
        return out


def _check_text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise InvalidTypeError(f"must be str, got {type(value).__name__}", field=field)
    return unicodedata.normalize("NFC", value)


def _check_metrics(metrics: Any) -> frozenset:
    if isinstance(metrics, str) or not isinstance(metrics, (list, tuple, set, frozenset)):
        raise InvalidTypeError(f"must be a sequence of metric names, got {type(metrics).__name__}",
                               field="metrics")
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise InvalidValueError(f"unknown metric {unknown[0]!r}; choose from {', '.join(METRICS)}",
                                field="metrics")
    return frozenset(metrics)


def error_rate(edits: int, n: int, empty_reference: str = "inf") -> float:
    """``edits / n`` as dinglehopper gives it: 0 without edits, ``inf`` for edits on an empty
    reference (or an :class:`InvalidValueError` with ``empty_reference="error"``)."""
    if edits == 0:
        return 0.0
    if n == 0:
        if empty_reference == "error":
            raise InvalidValueError("is empty while the OCR text is not; the error rate is undefined "
                                    "(pass empty_reference='inf' for dinglehopper's inf)", field="gt")
        return math.inf
    return edits / n


# --- words ---------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _boundary_pattern():
    """The ``regex`` package's UAX #29 word-boundary pattern, or :class:`MissingExtraError`."""
    return import_regex("OCR word segmentation needs the regex package").compile(r"(?wV1)\b")


@functools.lru_cache(maxsize=4096)
def _is_word(segment: str) -> bool:
    """Whether dinglehopper keeps a word-boundary segment: some character is not whitespace,
    punctuation, a mark, a symbol or a Cc/Cf control (categories from this Python's unicodedata)."""
    if segment[0].isalnum():
        return True
    category = unicodedata.category
    for c in segment:
        cat = category(c)
        if cat[0] not in _UNWANTED_MAJOR and cat not in _UNWANTED_MINOR:
            return True
    return False


def words(text: str) -> list[str]:
    """The words of ``text`` as dinglehopper 0.11 counts them (``text`` taken as it is: NFC it
    first to match ``words_normalized``).

    >>> words("Hello, world!  ¿Qué tal? 3.14")
    ['Hello', 'world', 'Qué', 'tal', '3.14']
    """
    # Most segments start with a letter or digit; the others (spaces, punctuation) repeat: cached.
    return [w for w in _boundary_pattern().split(text) if w and (w[0].isalnum() or _is_word(w))]


def _word_ids(gt_words: Sequence[str], ocr_words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Both word lists as ``uint32`` ids, equal words equal ids."""
    table: dict[str, int] = {}
    def ids(ws):
        return np.fromiter((table.setdefault(w, len(table)) for w in ws), dtype=np.uint32, count=len(ws))
    return ids(gt_words), ids(ocr_words)


def _one_pair(batch, a: np.ndarray, b: np.ndarray) -> int:
    """A pair kernel of :mod:`scorekit._kernels.levenshtein` (``distance_batch``, ``lcs_length_batch``)
    on the one pair ``(a, b)``."""
    offsets_a = np.array([0, len(a)], dtype=np.int64)
    offsets_b = np.array([0, len(b)], dtype=np.int64)
    return int(batch(a, offsets_a, b, offsets_b)[0])


def _distance(a: np.ndarray, b: np.ndarray) -> int:
    return _one_pair(lev.distance_batch, a, b)


def bag_distance(gt_words: Sequence[str], ocr_words: Sequence[str]) -> int:
    """``max(|G − O|, |O − G|)`` on the word multisets: the edit distance between two bags."""
    return _bag_distance(*_word_ids(gt_words, ocr_words))


def _bag_distance(a: np.ndarray, b: np.ndarray) -> int:
    """:func:`bag_distance` of two word-id arrays (:func:`_word_ids`)."""
    size = int(max(a.max(initial=0), b.max(initial=0))) + 1
    surplus = np.bincount(a, minlength=size).astype(np.int64) - np.bincount(b, minlength=size)
    return int(max(surplus[surplus > 0].sum(), -surplus[surplus < 0].sum()))


def bow_wer(gt: str, ocr: str, empty_reference: str = "inf") -> float:
    """Order-independent word error rate: :func:`bag_distance` of the two texts' words (as
    dinglehopper segments them) over the ground-truth word count. Shuffled lines score 0.

    >>> bow_wer("a b c d", "d c b a"), bow_wer("a b c d", "a b x")
    (0.0, 0.5)
    """
    g = words(_check_text(gt, "gt"))
    o = words(_check_text(ocr, "ocr"))
    return error_rate(bag_distance(g, o), len(g), empty_reference)


# --- characters ----------------------------------------------------------------------------------

def _graphemes(packer, text: str, field: str) -> tuple[np.ndarray, np.ndarray]:
    """Cluster ids of ``text`` and the code-point start of every cluster (then ``len(text)``)."""
    (ids, _), cuts, _ = packer.pack_joined([JoinedText(text, tuple(range(len(text))))], field, field + "_joins")
    starts = np.flatnonzero(np.diff(cuts, prepend=-1)) if len(cuts) else np.zeros(0, dtype=np.int64)
    return ids, np.append(starts, len(text))


def _char_class(c: str) -> str:
    if c.isspace():
        return "whitespace"
    cat = unicodedata.category(c)[0]
    return {"L": "letters", "N": "digits", "P": "punctuation", "Z": "whitespace"}.get(cat, "other")


#: Names of the alignment runs by code: 0 for hits, then the edit-operation codes
#: ``lev.OP_SUBSTITUTE``, ``OP_DELETE``, ``OP_INSERT``; and the id standing for the absent side of
#: a confusion (above every grapheme id).
_RUN_NAMES = ("equal", "replace", "delete", "insert")
_ABSENT = np.uint64(0xFFFFFFFF)


def _confusions(gt: str, ocr: str, gt_starts: np.ndarray, ocr_starts: np.ndarray, kind: np.ndarray,
                at_g: np.ndarray, at_o: np.ndarray, gt_ids: np.ndarray, ocr_ids: np.ndarray) -> Counter:
    """``(gt_grapheme, ocr_grapheme)`` counts of the edits, ``""`` for the absent side, in the order
    of their first edit (equal graphemes have equal ids: one packer serves both texts)."""
    has_g, has_o = kind != lev.OP_INSERT, kind != lev.OP_DELETE
    g_id = np.where(has_g, gt_ids[np.minimum(at_g, len(gt_ids) - 1)] if len(gt_ids) else 0, _ABSENT)
    o_id = np.where(has_o, ocr_ids[np.minimum(at_o, len(ocr_ids) - 1)] if len(ocr_ids) else 0, _ABSENT)
    codes = g_id.astype(np.uint64) << np.uint64(32) | o_id.astype(np.uint64)
    _, first, counts = np.unique(codes, return_index=True, return_counts=True)
    order = np.argsort(first)
    first, counts = first[order], counts[order]
    # Each distinct confusion's graphemes, sliced at its first edit (an absent side's position,
    # possibly past the end, is clamped and not used).
    n_g, n_o = len(gt_starts) - 1, len(ocr_starts) - 1
    i, j = at_g[first], at_o[first]
    pieces = zip(has_g[first].tolist(), gt_starts[np.minimum(i, n_g)].tolist(),
                 gt_starts[np.minimum(i + 1, n_g)].tolist(), has_o[first].tolist(),
                 ocr_starts[np.minimum(j, n_o)].tolist(), ocr_starts[np.minimum(j + 1, n_o)].tolist(),
                 counts.tolist())
    confusions: Counter = Counter()
    for in_g, g0, g1, in_o, o0, o1, n in pieces:
        confusions[(gt[g0:g1] if in_g else "", ocr[o0:o1] if in_o else "")] = n
    return confusions


def _runs(ops: np.ndarray, n_gt: int, n_ocr: int) -> tuple[np.ndarray, ...]:
    """The alignment runs of the edit script ``ops``: ``(op, gt_from, gt_to, ocr_from, ocr_to)``
    arrays, ``op`` 0 for a run of hits, else the code of a run of equal operations in a row."""
    kind, at_g, at_o = ops[:, 0], ops[:, 1], ops[:, 2]
    end_g = at_g + (kind != lev.OP_INSERT)
    end_o = at_o + (kind != lev.OP_DELETE)
    prev_g = np.concatenate(([0], end_g[:-1]))
    prev_o = np.concatenate(([0], end_o[:-1]))
    hits_before = (at_g > prev_g) | (at_o > prev_o)
    starts = hits_before | np.concatenate(([True], kind[1:] != kind[:-1]))
    first = np.flatnonzero(starts)
    last = np.append(first[1:], len(kind))[:len(first)] - 1
    before = np.flatnonzero(hits_before)
    end_gt, end_ocr = (int(end_g[-1]), int(end_o[-1])) if len(kind) else (0, 0)
    tail = [0] if end_gt < n_gt else []
    # Order: the hits before operation k (key 2k), the run starting at k (2k + 1), the tail hits.
    key = np.concatenate((2 * before, 2 * first + 1, [2 * len(kind)] * len(tail)))
    order = np.argsort(key, kind="stable")
    columns = (
        np.concatenate((np.zeros(len(before), dtype=np.int64), kind[first], tail)),
        np.concatenate((prev_g[before], at_g[first], [end_gt] * len(tail))),
        np.concatenate((at_g[before], end_g[last], [n_gt] * len(tail))),
        np.concatenate((prev_o[before], at_o[first], [end_ocr] * len(tail))),
        np.concatenate((at_o[before], end_o[last], [n_ocr] * len(tail))),
    )
    return tuple(c[order].astype(np.int64) for c in columns)


def _alignment(gt: str, ocr: str, gt_starts: np.ndarray, ocr_starts: np.ndarray, ops: np.ndarray) -> tuple:
    """The ``(gt_piece, ocr_piece, op)`` runs of the edit script ``ops``."""
    op, g0, g1, o0, o1 = _runs(ops, len(gt_starts) - 1, len(ocr_starts) - 1)
    pieces = zip(op.tolist(), gt_starts[g0].tolist(), gt_starts[g1].tolist(), ocr_starts[o0].tolist(),
                 ocr_starts[o1].tolist())
    return tuple((gt[a:b], ocr[c:d], _RUN_NAMES[k]) for k, a, b, c, d in pieces)


def _details(gt: str, ocr: str, gt_starts: np.ndarray, ocr_starts: np.ndarray, ops: np.ndarray,
             gt_ids: np.ndarray, ocr_ids: np.ndarray) -> tuple[Counter, dict]:
    """Confusions and per-class accuracy from the edit script ``ops``."""
    kind, at_g, at_o = ops[:, 0], ops[:, 1], ops[:, 2]
    confusions = _confusions(gt, ocr, gt_starts, ocr_starts, kind, at_g, at_o, gt_ids, ocr_ids)
    wrong = np.zeros(len(gt_ids), dtype=bool)
    wrong[at_g[kind != lev.OP_INSERT]] = True
    classes = {name: {"count": 0, "errors": 0, "accuracy": None} for name in CHAR_CLASSES}
    if len(gt_ids):
        # A grapheme's class is its first code point's, read at its first occurrence.
        _, first, inverse = np.unique(gt_ids, return_index=True, return_inverse=True)
        kinds = np.array([CHAR_CLASSES.index(_char_class(gt[at])) for at in gt_starts[first].tolist()])[inverse]
        counts = np.bincount(kinds, minlength=len(CHAR_CLASSES))
        errors = np.bincount(kinds[wrong], minlength=len(CHAR_CLASSES))
        for k, name in enumerate(CHAR_CLASSES):
            n, e = int(counts[k]), int(errors[k])
            classes[name] = {"count": n, "errors": e, "accuracy": (n - e) / n if n else None}
    return confusions, classes


def compare_texts(gt: str, ocr: str, metrics: Sequence[str] = DEFAULT_METRICS,
                  empty_reference: str = "inf") -> TextComparison:
    """Compare a ground-truth page text with an OCR text (see :class:`TextComparison`).

    ``metrics`` picks from :data:`METRICS` what to compute (``n_characters`` always is); ``cer``,
    ``wer``, ``n_characters`` and ``n_words`` equal dinglehopper 0.11's ``character_error_rate_n``
    and ``word_error_rate_n`` on the same two strings. ``empty_reference``: see :data:`EMPTY_REFERENCE`.
    """
    wanted = _check_metrics(metrics)
    if empty_reference not in EMPTY_REFERENCE:
        raise InvalidValueError(f"must be 'inf' or 'error', got {empty_reference!r}", field="empty_reference")
    gt = _check_text(gt, "gt")
    ocr = _check_text(ocr, "ocr")
    packer = grapheme_packer()
    fields: dict[str, Any] = {}
    script = wanted & {"alignment", "confusions"}
    if script:
        gt_ids, gt_starts = _graphemes(packer, gt, "gt")
        ocr_ids, ocr_starts = _graphemes(packer, ocr, "ocr")
        ops = lev.editops(gt_ids, ocr_ids)
        char_edits = len(ops)
        fields["confusions"], fields["char_classes"] = _details(gt, ocr, gt_starts, ocr_starts, ops, gt_ids, ocr_ids)
        if "alignment" in wanted:
            fields["alignment"] = _alignment(gt, ocr, gt_starts, ocr_starts, ops)
    else:
        gt_ids, ocr_ids = packer.ids(gt, "gt"), packer.ids(ocr, "ocr")
        char_edits = _distance(gt_ids, ocr_ids) if "cer" in wanted else None
    n_characters = len(gt_ids)
    if "cer" in wanted or script:
        fields["char_edits"] = char_edits
        fields["cer"] = error_rate(char_edits, n_characters, empty_reference)
    if wanted & {"wer", "bow"}:
        gt_words, ocr_words = words(gt), words(ocr)
        fields["n_words"] = len(gt_words)
        a, b = _word_ids(gt_words, ocr_words)
        if "wer" in wanted:
            fields["word_edits"] = _distance(a, b)
            fields["wer"] = error_rate(fields["word_edits"], len(a), empty_reference)
            fields["word_accuracy"] = _one_pair(lev.lcs_length_batch, a, b) / len(a) if len(a) else None
        if "bow" in wanted:
            fields["bow_wer"] = error_rate(_bag_distance(a, b), len(gt_words), empty_reference)
    if "fca" in wanted:
        from scorekit.ocr.fca import flexible_character_accuracy

        fields["fca"] = flexible_character_accuracy(gt, ocr)
    return TextComparison(
        cer=fields.get("cer"), wer=fields.get("wer"), n_characters=n_characters, n_words=fields.get("n_words"),
        char_edits=fields.get("char_edits"), word_edits=fields.get("word_edits"), bow_wer=fields.get("bow_wer"),
        word_accuracy=fields.get("word_accuracy"), fca=fields.get("fca"), char_classes=fields.get("char_classes"),
        confusions=fields.get("confusions"), alignment=fields.get("alignment"),
    )
