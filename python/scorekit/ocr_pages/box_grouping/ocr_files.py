"""Predictions in the standard OCR formats (PAGE-XML, ALTO, hOCR) as the page kit's words.

Owns turning an OCR file, read by :func:`scorekit.ocr.read` (which detects the format by
content), into the :class:`~scorekit.ocr_pages.box_grouping.loading.PredictedWord` records an
evaluation CSV would hold: one per word segment with a box, in reading order, its ``group_row``
the index of its line (the line, in reading order, whose box holds the word's centre and overlaps
the word most; ``""`` when no line box holds it). A word without a box, a file whose lines hold
text but which has no word segments, or a PAGE file whose reading order leaves out regions with
text (the readers skip them, as dinglehopper does) is an error naming the file: the words would
be missing from the prediction, never silently.

The readers give every text normalised as dinglehopper normalises it (ligatures written out,
``—`` → ``–``, ``’`` → ``'`` …), so a page whose predictions come from such a file is scored
with :meth:`~scorekit.ocr_pages.config.PageKitConfig.for_ocr_files`, which applies the same rules
to the ground truth before the configuration's own (docs/decisions.md#page-kit-ocr-files).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from scorekit.ocr_pages.config import PageKitConfig

__all__ = ["is_ocr_file", "ocr_file_words", "page_config", "check_words_have_lines"]

_HEAD_BYTES = 4096 + 3  # what the readers' format sniffing looks at (and a BOM)
_CHUNK = 2048  # words matched to lines at a time (bounds the words x lines arrays)


def is_ocr_file(path: Any) -> bool:
    """Whether ``path`` starts like markup (XML or HTML), so is read by :func:`scorekit.ocr.read`
    rather than as an evaluation CSV. A file that cannot be opened is not (the CSV reader then
    reports it)."""
    from scorekit.ocr.formats.xml import looks_like_markup

    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return False
    return looks_like_markup(head)


def page_config(path: Any, config: PageKitConfig) -> PageKitConfig:
    """The configuration a page whose predictions are ``path`` is scored with: ``config``, or
    ``config.for_ocr_files()`` when ``path`` is an OCR file (module docs)."""
    return config.for_ocr_files() if path is not None and is_ocr_file(path) else config


def _line_of_each_word(words: np.ndarray, lines: np.ndarray) -> list[str]:
    """For each word box, the index (as text) of the first line box holding its centre with the
    largest overlap, or ``""``."""
    out: list[str] = []
    if not len(lines):
        return [""] * len(words)
    for start in range(0, len(words), _CHUNK):
        w = words[start:start + _CHUNK, None, :]
        cx, cy = (w[..., 0] + w[..., 2]) / 2, (w[..., 1] + w[..., 3]) / 2
        holds = (lines[None, :, 0] <= cx) & (cx <= lines[None, :, 2]) & (lines[None, :, 1] <= cy) & (cy <= lines[None, :, 3])
        overlap = (np.clip(np.minimum(w[..., 2], lines[None, :, 2]) - np.maximum(w[..., 0], lines[None, :, 0]), 0, None)
                   * np.clip(np.minimum(w[..., 3], lines[None, :, 3]) - np.maximum(w[..., 1], lines[None, :, 1]), 0, None))
        score = np.where(holds, overlap, -1.0)
        best = score.argmax(axis=1)  # the first maximum: the earliest line in reading order
        out.extend(str(int(k)) if holds[i, k] else "" for i, k in enumerate(best))
    return out


def ocr_file_words(path: Any) -> list[tuple]:
    """The words of the OCR file ``path`` as the fields of ``PredictedWord`` records, ``(x1, y1,
    x2, y2, group_row, text, index)`` (module docs); errors are :class:`scorekit.ocr.OcrFormatError`
    (an ``InvalidValueError``) naming the file."""
    from scorekit.ocr import OcrFormatError, read

    words = read(path, level="word")
    if words.format == "text":
        raise OcrFormatError(path, "is plain text: the page kit needs words with boxes (PAGE-XML, ALTO or hOCR)")
    if words.omitted:
        raise OcrFormatError(path, f"text regions {', '.join(map(repr, words.omitted[:5]))} are not in the reading "
                                   "order, so their words would be left out of the prediction; add them to it")
    lines = read(path, level="line")
    unplaced = [s for s in words.segments if s.box is None]
    if unplaced:
        raise OcrFormatError(path, f"word {unplaced[0].id or unplaced[0].text!r} has no box (coordinates); "
                                   "the page kit places every predicted word on the page")
    if not words.segments and any(s.text for s in lines.segments):
        raise OcrFormatError(path, "has text lines but no word segments; the page kit needs words with boxes")
    boxes = np.array([s.box for s in words.segments], dtype=np.float64).reshape(-1, 4)
    boxes = np.concatenate([np.minimum(boxes[:, :2], boxes[:, 2:]), np.maximum(boxes[:, :2], boxes[:, 2:])], axis=1)
    line_boxes = np.array([s.box for s in lines.segments if s.box is not None], dtype=np.float64).reshape(-1, 4)
    line_boxes = np.concatenate([np.minimum(line_boxes[:, :2], line_boxes[:, 2:]),
                                 np.maximum(line_boxes[:, :2], line_boxes[:, 2:])], axis=1)
    groups = _line_of_each_word(boxes, line_boxes)
    return [(*map(float, box), group, s.text, k)
            for k, (box, group, s) in enumerate(zip(boxes.tolist(), groups, words.segments))]


def check_words_have_lines(path: Any, words: Sequence[Any]) -> None:
    """Refuse, for the line unit level, an OCR file some of whose ``words`` lie in none of its
    line boxes (so have no ``group_row``): a PAGE ``TextLine`` without text, for one, is not read
    as a line, and its words would silently become rows of their own. A CSV is not checked (a
    record without a group is its own row by definition)."""
    loose = [w for w in words if not w.group_row]
    if loose and is_ocr_file(path):
        from scorekit.ocr import OcrFormatError

        shown = ", ".join(repr(w.text) for w in loose[:5])
        raise OcrFormatError(path, f"{len(loose)} words ({shown}) lie in no text line of the file (a line without "
                                   "text is not read as one), so the line unit level cannot group them; score at "
                                   "the word level")
