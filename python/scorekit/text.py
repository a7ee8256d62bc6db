"""Line joining with hyphenation and the schwa-forgiving edit distance (docs/decisions.md#hyphen-joins).

Owns the reassembly of multi-line transcriptions into one string with the positions where a
line-end hyphen was removed (``join_lines_with_hyphenation``), and the distance in which the
Armenian schwa present in one string and absent from the other is free at such a join position
(docs/decisions.md#schwa-forgiving-distance). The distance itself runs in the Levenshtein kernels.

>>> j = join_lines_with_hyphenation("բա-\\nրև ձեզ")
>>> j.text, j.joins
('բարև ձեզ', (2,))
>>> schwa_distance("բարև", "բըարև", gt_joins=(1,))
0
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Union

import numpy as np

from scorekit import _kernels
from scorekit._graphemes import check_unit, grapheme_packer
from scorekit._kernels import levenshtein as lev
from scorekit._packing import as_sequence, check_same_length, pack_positions, pack_texts

#: Line-end characters that mark a hyphenated word break.
HYPHEN_CHARS = frozenset("-\u058a\u2010\u2011\u2012\u2013\u2014")
#: Code points whose insertion or deletion is free at a join (Armenian schwa, both cases).
SCHWA_CHARS = "\u0568\u0538"

_YE, _VEW, _VO, _YIWN = "\u0565", "\u0587", "\u057e", "\u0582"


@dataclass(frozen=True, slots=True)
class JoinedText:
    """Text reassembled from lines, with the boundary positions of its hyphen joins (position
    ``k`` lies between ``text[k-1]`` and ``text[k]``)."""

    text: str
    joins: tuple[int, ...] = ()


def join_lines_with_hyphenation(text_or_lines: Union[str, Sequence[str]]) -> JoinedText:
    """Join lines into one string: a line ending in a hyphen attached to a word (``- ֊ ‐ ‑ ‒ – —``)
    loses the hyphen and is glued to the next line without a space (a join position is recorded);
    other lines are joined with one space. ``ե`` + hyphen + ``վ``/``ւ`` becomes the ligature ``և``.
    Lines are stripped and empty ones dropped; a trailing hyphen on the last line is kept.

    >>> join_lines_with_hyphenation(["Երե-", "վան"]).text
    'Երևան'
    >>> join_lines_with_hyphenation(["word -", "next"]).joins
    ()
    """
    if isinstance(text_or_lines, str):
        lines = text_or_lines.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    else:
        lines = list(text_or_lines)
        for k, line in enumerate(lines):
            if not isinstance(line, str):
                raise TypeError(f"text_or_lines[{k}] must be str, got {type(line).__name__}")
    kept = [stripped for stripped in map(str.strip, lines) if stripped]
    if not kept:
        return JoinedText("", ())
    # The output is built as a list of pieces (linear time); only its last two characters are ever
    # inspected or removed, and ``length`` is its length so far.
    pieces, joins = [kept[0]], []
    length = len(kept[0])
    for nxt in kept[1:]:
        last = _last_two(pieces)
        if len(last) == 2 and last[1] in HYPHEN_CHARS and not last[0].isspace():
            _drop_last(pieces)  # the hyphen
            length -= 1
            if last[0] == _YE and nxt[0] in (_VO, _YIWN):
                _drop_last(pieces)
                pieces.append(_VEW)
                joins.append(length)
                if len(nxt) > 1:
                    pieces.append(nxt[1:])
                length += len(nxt) - 1
            else:
                joins.append(length)
                pieces.append(nxt)
                length += len(nxt)
        else:
            pieces.append(" ")
            pieces.append(nxt)
            length += 1 + len(nxt)
    return JoinedText("".join(pieces), tuple(joins))


def _last_two(pieces: list[str]) -> str:
    """The last two characters of ``"".join(pieces)`` (fewer if it is shorter); pieces are non-empty."""
    last = pieces[-1]
    if len(last) >= 2 or len(pieces) == 1:
        return last[-2:]
    return pieces[-2][-1:] + last


def _drop_last(pieces: list[str]) -> None:
    """Remove the last character of ``"".join(pieces)``, keeping every piece non-empty."""
    if len(pieces[-1]) == 1:
        pieces.pop()
    else:
        pieces[-1] = pieces[-1][:-1]


def concat_joined(parts: Iterable[JoinedText], sep: str = "\n") -> JoinedText:
    """Concatenate joined texts with ``sep``, shifting each part's join positions (never joins across parts)."""
    text, joins = "", []
    for k, part in enumerate(parts):
        if k:
            text += sep
        joins.extend(len(text) + j for j in part.joins)
        text += part.text
    return JoinedText(text, tuple(joins))


def _schwa_codes(schwa: str) -> np.ndarray:
    if not isinstance(schwa, str) or not schwa:
        raise ValueError(f"schwa must be a non-empty string of code points, got {schwa!r}")
    return pack_texts([schwa], "schwa")[0]


_text_of = operator.attrgetter("text")
_joins_of = operator.attrgetter("joins")


def _pack_side(items: Sequence, joins: Optional[Sequence], name: str, joins_name: str, packer=None) -> tuple:
    """Packed texts, offsets and packed joins of one side (``str`` or :class:`JoinedText` items;
    explicit ``joins`` win over the items' own). The compiled core reads ``JoinedText`` objects
    directly; the Python path gives identical arrays. With a grapheme ``packer`` the symbols are
    cluster ids and the joins (checked in code points) become cluster boundaries."""
    kinds = set(map(type, items))
    if packer is not None:
        if joins is None and kinds <= {str, JoinedText}:
            items = items if type(items) is list else list(items)
        else:  # validate (and name errors) as the code-point path does, then re-read as clusters
            _pack_side_python(items, kinds, joins, name, joins_name)
            texts = [x.text if type(x) is JoinedText else x for x in items]
            if joins is None:
                joins = [x.joins if type(x) is JoinedText else () for x in items]
            items = [JoinedText(t, tuple(j)) for t, j in zip(texts, joins)]
        (values, offsets), join_values, join_offsets = packer.pack_joined(items, name, joins_name)
        return values, offsets, join_values, join_offsets
    core = _kernels.compiled()
    if joins is None and core is not None and kinds <= {str, JoinedText}:
        listed = items if type(items) is list else list(items)
        (values, offsets), join_values, join_offsets = core.pack_joined(listed, name, joins_name)
        return values, offsets, join_values, join_offsets
    return _pack_side_python(items, kinds, joins, name, joins_name)


def _pack_side_python(items: Sequence, kinds: set, joins: Optional[Sequence], name: str, joins_name: str) -> tuple:
    """:func:`_pack_side` without the compiled core's reader."""
    if kinds == {JoinedText}:  # read at C speed
        texts = list(map(_text_of, items))
        joins = list(map(_joins_of, items)) if joins is None else joins
    else:
        texts = [x.text if type(x) is JoinedText else x for x in items]
        if joins is None:
            joins = [x.joins if type(x) is JoinedText else () for x in items]
    try:
        values, offsets = pack_texts(texts, name)
    except TypeError as exc:
        raise TypeError(str(exc).replace("must be str,", "must be str or JoinedText,")) from None
    return (values, offsets, *pack_positions(joins, np.diff(offsets), joins_name))


def schwa_distance(
    gt: Union[str, JoinedText], pred: Union[str, JoinedText],
    gt_joins: Optional[Sequence[int]] = None, pred_joins: Optional[Sequence[int]] = None,
    *, schwa: str = SCHWA_CHARS, unit: str = "char",
) -> int:
    """Levenshtein distance in which a ``schwa`` character present in one string and absent from the
    other costs 0 when it sits at a join position of either string (docs/decisions.md#schwa-forgiving-distance).
    ``gt``/``pred`` may be :class:`JoinedText` (their joins are used unless given explicitly).
    ``unit="grapheme"``: see :func:`schwa_distances_and_lengths`."""
    return int(schwa_distance_batch([gt], [pred], None if gt_joins is None else [gt_joins],
                                    None if pred_joins is None else [pred_joins], schwa=schwa, threads=1,
                                    unit=unit)[0])


def schwa_distance_batch(
    gts: Iterable[Union[str, JoinedText]], preds: Iterable[Union[str, JoinedText]],
    gt_joins: Optional[Iterable[Sequence[int]]] = None, pred_joins: Optional[Iterable[Sequence[int]]] = None,
    *, schwa: str = SCHWA_CHARS, threads: Optional[int] = None, unit: str = "char",
) -> np.ndarray:
    """:func:`schwa_distance` of every pair, through one kernel call; ``int64[n]``."""
    return schwa_distances_and_lengths(gts, preds, gt_joins, pred_joins, schwa=schwa, threads=threads, unit=unit)[0]


def schwa_distances_and_lengths(
    gts: Iterable[Union[str, JoinedText]], preds: Iterable[Union[str, JoinedText]],
    gt_joins: Optional[Iterable[Sequence[int]]] = None, pred_joins: Optional[Iterable[Sequence[int]]] = None,
    *, schwa: str = SCHWA_CHARS, threads: Optional[int] = None, unit: str = "char",
) -> tuple[np.ndarray, np.ndarray]:
    """Schwa-forgiving distances and the gt lengths (code points) of every pair.

    ``unit="grapheme"`` aligns extended grapheme clusters instead (lengths are clusters): a schwa
    is then a cluster made of one schwa code point alone (a schwa carrying a combining mark is
    another letter, never free), and joins, still given in code points, are read as cluster
    boundaries; a join that falls inside a cluster is moved to the start of that cluster.
    """
    check_unit(unit)
    gts, preds = as_sequence(gts, "gts"), as_sequence(preds, "preds")
    check_same_length(gts, preds, "gts", "preds")
    if gt_joins is not None:
        gt_joins = as_sequence(gt_joins, "gt_joins")
        check_same_length(gts, gt_joins, "gts", "gt_joins")
    if pred_joins is not None:
        pred_joins = as_sequence(pred_joins, "pred_joins")
        check_same_length(preds, pred_joins, "preds", "pred_joins")
    packer = grapheme_packer() if unit == "grapheme" else None
    gt_values, gt_offsets, gj_values, gj_offsets = _pack_side(gts, gt_joins, "gts", "gt_joins", packer)
    pred_values, pred_offsets, pj_values, pj_offsets = _pack_side(preds, pred_joins, "preds", "pred_joins", packer)
    distances = lev.schwa_distance_batch(
        gt_values, gt_offsets, pred_values, pred_offsets,
        gj_values, gj_offsets, pj_values, pj_offsets,
        _schwa_codes(schwa), _kernels.resolve_threads(threads),
    )
    return distances, np.diff(gt_offsets)
