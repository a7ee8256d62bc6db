"""Text layer of the OCR page kit: normalisation, hyphen joins, edit distances and text metrics.

Owns how a ground-truth or predicted page text is made comparable (``normalize_text``: NFC,
whitespace collapse, then the punctuation table of ``normalize_punctuation_chars``), the join of box
lines at line-end hyphens (``join_box_lines_with_hyphenation``), the two distances (plain and
schwa-forgiving, both computed by the Levenshtein kernels of ``scorekit.batch`` and
``scorekit.text``; no dynamic programme runs here) and the per-text CER record ``TextMetrics``,
single (``compute_text_metrics``) or for a whole corpus
(``compute_text_metrics_batch``, one plain and one schwa-forgiving kernel call for the whole batch).
It imports nothing from ``box_grouping``.

``unit="grapheme"`` (every distance and metric function here) counts extended grapheme clusters
instead of code points (docs/decisions.md#grapheme-clusters): the ``*_char_count`` fields are then
cluster counts and every distance is over clusters. Joins stay code-point positions of the
normalised text (what ``JoinedText.joins`` holds) and are read as cluster boundaries; a join that
falls inside a cluster (a line that starts with a combining mark) is moved to the start of that
cluster. A schwa is forgiven only as a cluster of its own (``ը`` carrying a combining mark is another
letter).

Differences from the plain ``scorekit.text`` functions it wraps: every argument is checked here, so
a wrong type is a ``scorekit.errors.InvalidTypeError`` and a lone surrogate (not a Unicode scalar
value, so not scorable) or a join position outside its text an ``InvalidValueError``, each naming
the argument (and the item, in a batch).

>>> m = compute_text_metrics(join_box_lines_with_hyphenation("մը-\\nտնել"), "մտնել")
>>> m.char_edit_distance, m.char_edit_distance_strict, m.cer
(0, 1, 0.0)
>>> normalize_text("  Ժամը 5։30 -- եւ…  ")
'Ժամը 5:30 - և...'
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from itertools import accumulate
from typing import Iterable, Optional, Union

import numpy as np

from scorekit import _kernels, batch
from scorekit._graphemes import check_unit, unit_lengths
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.config import JOIN_SENTINEL, PageKitConfig, resolve_config
from scorekit.text import (
    HYPHEN_CHARS, SCHWA_CHARS, JoinedText, concat_joined, join_lines_with_hyphenation, schwa_distance,
    schwa_distance_batch,
)

__all__ = [
    "HYPHEN_CHARS", "SCHWA_CHARS", "JOIN_SENTINEL", "JoinedText", "TextMetrics",
    "normalize_text", "normalize_punctuation_chars", "join_box_lines_with_hyphenation", "concat_joined",
    "prepare_text", "edit_distance", "edit_distance_schwa_forgiving",
    "compute_text_metrics", "compute_text_metrics_batch",
]

_SENTINEL_STAND_IN = "\ufffd"  # replaces a JOIN_SENTINEL already present in the input (same length)

Text = Union[str, JoinedText]


# --------------------------------------------------------------------------- argument checks

def _check_str(value: object, field: str, item: Optional[int] = None) -> str:
    """``value`` if it is a ``str`` of Unicode scalar values; otherwise the error naming ``field``."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"must be str, got {type(value).__name__}", field=field, item=item)
    if not value.isascii():
        try:
            value.encode("utf-32-le")  # refuses exactly the lone surrogates, at C speed
        except UnicodeEncodeError as exc:
            raise InvalidValueError(
                f"contains a lone surrogate U+{ord(value[exc.start]):04X} at position {exc.start}; "
                "only Unicode scalar values can be scored", field=field, item=item) from None
    return value


def _check_joins(joins: object, length: int, field: str, item: Optional[int] = None) -> tuple[int, ...]:
    """Join positions as a tuple of ints, each a boundary of a text of ``length`` code points."""
    if isinstance(joins, (str, bytes)):
        raise InvalidTypeError(f"must be a collection of int positions, got {type(joins).__name__}", field=field, item=item)
    try:
        positions = tuple(joins)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidTypeError(f"must be a collection of int positions, got {type(joins).__name__}",
                               field=field, item=item) from None
    for p in positions:
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise InvalidTypeError(f"must hold int positions, got {type(p).__name__}", field=field, item=item)
        if not 0 <= p <= length:
            raise InvalidValueError(f"position {p} is outside 0..{length}", field=field, item=item)
    return tuple(int(p) for p in positions)


def _check_text(value: object, field: str, item: Optional[int] = None) -> JoinedText:
    """A ``str`` or ``JoinedText`` argument as a checked ``JoinedText`` (a ``str`` has no joins)."""
    if isinstance(value, JoinedText):
        text = _check_str(value.text, f"{field}.text", item)
        return JoinedText(text, _check_joins(value.joins, len(text), f"{field}.joins", item))
    if isinstance(value, str):
        return JoinedText(_check_str(value, field, item), ())
    raise InvalidTypeError(f"must be str or JoinedText, got {type(value).__name__}", field=field, item=item)


def _as_list(items: object, field: str) -> list:
    """A batch argument materialised once as a list (a single string is refused)."""
    if isinstance(items, (str, bytes, JoinedText)):
        raise InvalidTypeError(f"must be a sequence of texts, not a single {type(items).__name__}", field=field)
    try:
        return list(items)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidTypeError(f"must be an iterable of texts, got {type(items).__name__}", field=field) from None


# --------------------------------------------------------------------------- normalisation

def _replace_all(s: str, rules: Iterable[tuple[str, str]]) -> str:
    """``s`` with each ``(old, new)`` rule applied in turn over the whole text."""
    for old, new in rules:
        if old in s:
            s = s.replace(old, new)
    return s


def normalize_punctuation_chars(s: str, config: Optional[PageKitConfig] = None) -> str:
    """Canonicalise the punctuation of ``s`` with ``config.replacements`` (its text rules'),
    applied one after another. The default rules: first ``--`` → ``—`` and ``եւ`` → ``և`` (in that order, left to
    right), then one character at a time: Armenian hyphen and em dash → ``-``, combining acute →
    ``՛``, Armenian comma → `` ` ``, one-dot leader → ``.``, ellipsis → ``...``, ``№`` → ``N``,
    Armenian full stop and the colon look-alikes (U+02F8, U+FE13, U+FE30, U+FF1A, U+2236, U+A789)
    → ``:``. Nothing else is mapped (en dash, soft hyphen and quotes stay). No output of a
    one-character rule is the input of another, so the default equals a single left-to-right pass.

    >>> normalize_punctuation_chars("a--b a---b №5")
    'a-b a--b N5'
    """
    s = _check_str(s, "s")
    return _replace_all(s, resolve_config(config).replacements)


def normalize_text(s: str, config: Optional[PageKitConfig] = None) -> str:
    """NFC, then every run of whitespace (``str.split`` semantics) becomes one space and the ends
    are trimmed, then :func:`normalize_punctuation_chars` with ``config``'s rules. A single pass:
    not idempotent on runs of three or more ``-``.

    >>> normalize_text("  Երևան \\n\\t քաղաք  ")
    'Երևան քաղաք'
    """
    s = _check_str(s, "s")
    return normalize_punctuation_chars(" ".join(unicodedata.normalize("NFC", s).split()), config)


# --------------------------------------------------------------------------- hyphen joins

def join_box_lines_with_hyphenation(text_or_lines: Union[str, Iterable[str]]) -> JoinedText:
    """Join the lines of one box (a ``str`` split on any line break, or a sequence of lines):
    lines are stripped and empty ones dropped; a line ending in a hyphen attached to a word is glued
    to the next without the hyphen and the join position is recorded (``ե`` + hyphen + ``վ``/``ւ``
    becomes ``և``, the join after it); other lines are joined with one space.

    >>> join_box_lines_with_hyphenation("Արե-\\nվելք")
    JoinedText(text='Արևելք', joins=(3,))
    """
    if isinstance(text_or_lines, str):
        return join_lines_with_hyphenation(_check_str(text_or_lines, "text_or_lines"))
    if isinstance(text_or_lines, (bytes, JoinedText)):
        raise InvalidTypeError(f"must be str or a sequence of str, got {type(text_or_lines).__name__}",
                               field="text_or_lines")
    try:
        lines = list(text_or_lines)
    except TypeError:
        raise InvalidTypeError(f"must be str or a sequence of str, got {type(text_or_lines).__name__}",
                               field="text_or_lines") from None
    for k, line in enumerate(lines):
        _check_str(line, f"text_or_lines[{k}]")
    return join_lines_with_hyphenation(lines)


def _with_sentinels(x: JoinedText) -> str:
    """``x.text`` (any ``JOIN_SENTINEL`` in it replaced by U+FFFD) with a sentinel at each join."""
    text = x.text.replace(JOIN_SENTINEL, _SENTINEL_STAND_IN)
    if not x.joins:
        return text
    cuts = sorted(set(x.joins))
    bounds = zip([0, *cuts], [*cuts, len(text)])
    return JOIN_SENTINEL.join(text[a:b] for a, b in bounds)


def _without_sentinels(s: str) -> JoinedText:
    """Remove the sentinels of ``s``; each one marks a join at the position it leaves behind."""
    pieces = s.split(JOIN_SENTINEL)
    if len(pieces) == 1:
        return JoinedText(s, ())
    joins = tuple(sorted(set(accumulate(map(len, pieces[:-1])))))
    return JoinedText("".join(pieces), joins)


def _prepare_both(x: JoinedText, config: PageKitConfig) -> tuple[JoinedText, JoinedText]:
    """The normalised text of ``x`` with its joins carried through, as is and in lowercase form
    (``.lower()``, then the ``lowercase_replacements``: by default ``եւ`` → ``և`` again, since
    lowercasing ``ԵՒ`` gives ``եւ``)."""
    normalized = normalize_text(_with_sentinels(x), config)
    lowered = _replace_all(normalized.lower(), config.text.lowercase_replacements)
    return _without_sentinels(normalized), _without_sentinels(lowered)


def prepare_text(x: Text, *, lower: bool = False, config: Optional[PageKitConfig] = None) -> JoinedText:
    """``normalize_text`` of ``x`` (a ``str`` or ``JoinedText``) with ``config``'s rules, keeping
    its join positions pointing at the same boundaries: each join is marked with ``JOIN_SENTINEL``
    before normalising and read back after. ``lower=True`` gives the lowercase form compared by
    ``cer_lowercase``.

    >>> prepare_text(join_box_lines_with_hyphenation("Նա ասաց… մը-\\nտնել"))
    JoinedText(text='Նա ասաց... մըտնել', joins=(13,))
    """
    cased, lowered = _prepare_both(_check_text(x, "x"), resolve_config(config))
    return lowered if lower else cased


# --------------------------------------------------------------------------- distances

def edit_distance(a: str, b: str, *, unit: str = "char") -> int:
    """Levenshtein distance over code points, or grapheme clusters with ``unit="grapheme"`` (unit
    insert, delete and substitute).

    >>> edit_distance("kitten", "sitting")
    3
    >>> edit_distance("नमस्ते", "नमस्त"), edit_distance("नमस्ते", "नमस्त", unit="grapheme")
    (1, 1)
    """
    unit = check_unit(unit)
    a, b = _check_str(a, "a"), _check_str(b, "b")
    return int(batch.levenshtein([a], [b], threads=1, unit=unit)[0])


def edit_distance_schwa_forgiving(gt: str, pred: str, gt_joins: Iterable[int] = (),
                                  pred_joins: Iterable[int] = (), *, unit: str = "char",
                                  config: Optional[PageKitConfig] = None) -> int:
    """Levenshtein distance in which deleting a schwa (``ը``/``Ը``; in general a character of
    ``config.text.free_at_joins``) of ``gt`` or inserting one of ``pred`` is free when it sits at a
    join: a deleted ``gt[i-1]`` when ``i-1`` or ``i`` is in ``gt_joins`` or the aligned prediction
    position ``j`` is in ``pred_joins``, and symmetrically for an insertion. Substituting a schwa is
    never free. Without joins, or with no free characters, it equals :func:`edit_distance`.

    >>> edit_distance_schwa_forgiving("մըտնել", "մտնել", {2}), edit_distance_schwa_forgiving("մըտնել", "մտնել")
    (0, 1)
    """
    unit = check_unit(unit)
    gt, pred = _check_str(gt, "gt"), _check_str(pred, "pred")
    gj = _check_joins(gt_joins, len(gt), "gt_joins")
    pj = _check_joins(pred_joins, len(pred), "pred_joins")
    free = resolve_config(config).text.free_at_joins
    if not free:
        return edit_distance(gt, pred, unit=unit)
    return schwa_distance(gt, pred, gj, pj, schwa=free, unit=unit)


# --------------------------------------------------------------------------- metrics

@dataclass(frozen=True, slots=True)
class TextMetrics:
    """Character error counts of one (ground truth, prediction) pair after normalisation.

    ``char_edit_distance`` is schwa-forgiving unless ``compute_text_metrics`` was told otherwise;
    ``char_edit_distance_lowercase`` is always the schwa-forgiving distance of the lowercase forms.
    Every ``cer*`` is distance / ground-truth length; with an empty ground truth it is 0.0 when the
    prediction is empty too and 1.0 otherwise. A CER can exceed 1. Lengths and distances are in
    code points, or in grapheme clusters when computed with ``unit="grapheme"``.
    """

    gt_text: str
    predicted_text: str
    gt_char_count: int
    pred_char_count: int
    char_edit_distance: int
    char_edit_distance_strict: int
    char_edit_distance_lowercase: int
    gt_char_count_lowercase: int
    cer: float
    cer_strict: float
    cer_lowercase: float
    schwa_forgiven: int


def _cer(distance: int, gt_count: int, pred_count: int) -> float:
    if gt_count > 0:
        return distance / gt_count
    return 0.0 if pred_count == 0 else 1.0


def _metrics(gt: JoinedText, pred: JoinedText, gt_lower: JoinedText, distance: int, strict: int,
             lowercase: int, lengths: Optional[tuple[int, int, int]] = None) -> TextMetrics:
    """The record of one pair; ``lengths`` (gt, pred, lowercase gt) default to code points."""
    n, m, n_lower = lengths or (len(gt.text), len(pred.text), len(gt_lower.text))
    return TextMetrics(
        gt_text=gt.text, predicted_text=pred.text, gt_char_count=n, pred_char_count=m,
        char_edit_distance=distance, char_edit_distance_strict=strict, char_edit_distance_lowercase=lowercase,
        gt_char_count_lowercase=n_lower,
        cer=_cer(distance, n, m), cer_strict=_cer(strict, n, m), cer_lowercase=_cer(lowercase, n_lower, m),
        schwa_forgiven=strict - distance,
    )


def compute_text_metrics(gt_text: Text, predicted_text: Text, *, schwa_forgiving: bool = True,
                         unit: str = "char", config: Optional[PageKitConfig] = None) -> TextMetrics:
    """Normalise both texts (``str`` or ``JoinedText``, whose joins follow the normalisation) with
    ``config``'s text rules (default: :data:`~scorekit.ocr_pages.config.DEFAULT_CONFIG`) and
    count their character errors: the schwa-forgiving distance (``schwa_forgiving=False`` makes
    ``char_edit_distance`` strict), the strict one and the forgiving one of the lowercase forms.
    ``unit="grapheme"`` counts grapheme clusters instead of code points (module docs).

    >>> m = compute_text_metrics("", "աբ")
    >>> m.char_edit_distance, m.cer
    (2, 1.0)
    >>> m = compute_text_metrics("नमस्ते", "नमस्त", unit="grapheme")
    >>> m.gt_char_count, m.char_edit_distance, round(m.cer, 4)
    (3, 1, 0.3333)
    """
    unit = check_unit(unit)
    config = resolve_config(config)
    gt, gt_lower = _prepare_both(_check_text(gt_text, "gt_text"), config)
    pred, pred_lower = _prepare_both(_check_text(predicted_text, "predicted_text"), config)
    strict = edit_distance(gt.text, pred.text, unit=unit)
    distance = (edit_distance_schwa_forgiving(gt.text, pred.text, gt.joins, pred.joins, unit=unit, config=config)
                if schwa_forgiving else strict)
    lowercase = edit_distance_schwa_forgiving(gt_lower.text, pred_lower.text, gt_lower.joins, pred_lower.joins,
                                              unit=unit, config=config)
    lengths = None if unit == "char" else tuple(unit_lengths([gt.text, pred.text, gt_lower.text], unit))
    return _metrics(gt, pred, gt_lower, distance, strict, lowercase, lengths)


def _schwa_can_be_free(gt: JoinedText, pred: JoinedText, unit: str, free: str) -> bool:
    """Whether any free schwa operation exists for this pair; when none does, the schwa-forgiving
    distance is exactly the plain Levenshtein distance. Deleting a schwa of ``gt`` is free when it
    touches a join of ``gt`` or is aligned at any join of ``pred`` (and symmetrically). Over
    grapheme clusters a join moves to a cluster start, so there any schwa with any join counts.
    ``free`` holds the schwa characters (none: nothing is ever free)."""
    if not free or (not gt.joins and not pred.joins):
        return False
    if unit != "char":
        return any(_has_schwa(x.text, free) for x in (gt, pred))
    return any(_has_schwa(x.text, free) and (bool(y.joins) or _schwa_at_join(x, free))
               for x, y in ((gt, pred), (pred, gt)))


def _has_schwa(text: str, free: str) -> bool:
    return any(c in text for c in free)


def _schwa_at_join(x: JoinedText, free: str) -> bool:
    return any(_has_schwa(x.text[max(k - 1, 0):k + 1], free) for k in x.joins)


def compute_text_metrics_batch(gt_texts: Iterable[Text], pred_texts: Iterable[Text], *,
                               schwa_forgiving: bool = True, threads: Optional[int] = None,
                               unit: str = "char", config: Optional[PageKitConfig] = None) -> list[TextMetrics]:
    """:func:`compute_text_metrics` of every (gt, prediction) pair, for whole corpora: the texts are
    normalised once, then all plain distances go through one batch kernel call and all
    schwa-forgiving ones through another, on ``threads`` worker threads (``None`` = all cores).

    Same numbers as the single form, with less work: a pair where no schwa operation can be free
    (no joins, or no schwa where a join could forgive it) takes the plain distance, and a lowercase
    form identical to the original reuses its distance. ``unit="grapheme"``: over grapheme clusters.
    ``config``: the text rules, as for the single form.

    >>> [m.cer for m in compute_text_metrics_batch(["ab", ""], ["ac", ""])]
    [0.5, 0.0]
    """
    unit = check_unit(unit)
    threads = _kernels.resolve_threads(threads)
    gts, preds = _as_list(gt_texts, "gt_texts"), _as_list(pred_texts, "pred_texts")
    if len(gts) != len(preds):
        raise InvalidValueError(f"has {len(gts)} items but pred_texts has {len(preds)}; they must pair up one to one",
                                field="gt_texts")
    config = resolve_config(config)
    free = config.text.free_at_joins
    gt_sides = [_prepare_both(_check_text(x, "gt_texts", k), config) for k, x in enumerate(gts)]
    pred_sides = [_prepare_both(_check_text(x, "pred_texts", k), config) for k, x in enumerate(preds)]
    # Plan: every distance is a slot (is_forgiving, index) into one of the two kernel calls; the
    # first len(gts) plain pairs are the strict distances of the original forms.
    plain: list[tuple[str, str]] = [(g.text, p.text) for (g, _), (p, _) in zip(gt_sides, pred_sides)]
    forgiving: list[tuple[JoinedText, JoinedText]] = []

    def slot(g: JoinedText, p: JoinedText, plain_index: Optional[int] = None) -> tuple[bool, int]:
        if _schwa_can_be_free(g, p, unit, free):
            forgiving.append((g, p))
            return True, len(forgiving) - 1
        if plain_index is None:
            plain.append((g.text, p.text))
            plain_index = len(plain) - 1
        return False, plain_index

    slots = []
    for k, ((g, g_lower), (p, p_lower)) in enumerate(zip(gt_sides, pred_sides)):
        cased = slot(g, p, k) if schwa_forgiving else (False, k)
        if g_lower == g and p_lower == p:
            lower = cased if schwa_forgiving else slot(g, p, k)
        else:
            lower = slot(g_lower, p_lower)
        slots.append((cased, lower))
    if not plain:
        return []
    results = {False: batch.levenshtein(*map(list, zip(*plain)), threads=threads, unit=unit).tolist(), True: []}
    if forgiving:
        gt_items, pred_items = map(list, zip(*forgiving))
        results[True] = schwa_distance_batch(gt_items, pred_items, schwa=free, threads=threads, unit=unit).tolist()
    lengths: list = [None] * len(gts)
    if unit != "char":
        flat = unit_lengths([x.text for (g, g_lower), (p, _) in zip(gt_sides, pred_sides) for x in (g, p, g_lower)],
                            unit)
        lengths = [tuple(flat[3 * k:3 * k + 3]) for k in range(len(gts))]
    return [
        _metrics(g, p, g_lower, results[cased[0]][cased[1]], results[False][k], results[lower[0]][lower[1]],
                 lengths[k])
        for k, (((g, g_lower), (p, _)), (cased, lower)) in enumerate(zip(zip(gt_sides, pred_sides), slots))
    ]
