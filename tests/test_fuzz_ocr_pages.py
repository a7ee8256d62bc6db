"""Fuzz cases of the OCR page kit: adjacency in watermark matching.

Random short real words (Armenian one-letter words, page numbers) before and after a watermark
that is whole or split into word records, on the watermark's line, on lines of their own or
without a line (a watermark split over lines has those lines to itself); the watermark records,
and only they, are removed, at both unit levels.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit.ocr_pages.box_grouping.group import build_rows, remove_watermark_words
from scorekit.ocr_pages.box_grouping.loading import PredictedWord

REAL_WORDS = ("է", "և", "ը", "3", "12", "Սա", "էջ", "")
WATERMARKS = (
    ("OCR by PortMind",), ("OCR", "by", "PortMind"), ("OCR by", "PortMind"), ("ocr", "BY", "portmind"),
    ("National Library of Armenia OCR by PortMind",),
    ("National", "Library", "of", "Armenia", "OCR", "by", "PortMind"),
    ("National Library of Armenia", "OCR by PortMind"),
)


#: How records are put on lines (``group_row``): every one on the watermark's line, the watermark
#: on a line of its own between the words before and after it, none on a line, one line each.
LAYOUTS = ("one-line", "own-lines", "no-lines", "word-per-line")


def line_groups(n: int, marks: range, layout: str) -> list[str]:
    """The ``group_row`` of each of ``n`` records, the watermark at ``marks``, under ``layout``."""
    if layout == "one-line":
        return ["1"] * n
    if layout == "own-lines":
        return ["1" if k in marks else ("0" if k < marks.start else "2") for k in range(n)]
    if layout == "no-lines":
        return [""] * n
    return [str(k) for k in range(n)]


@st.composite
def pages(draw):
    """``(texts, groups, watermark positions)`` of one page's CSV records."""
    before = draw(st.lists(st.sampled_from(REAL_WORDS), max_size=3))
    after = draw(st.lists(st.sampled_from(REAL_WORDS), max_size=3))
    watermark = draw(st.sampled_from(WATERMARKS))
    texts = before + list(watermark) + after
    marks = range(len(before), len(before) + len(watermark))
    layout = draw(st.sampled_from(LAYOUTS + ("random",)))
    if layout != "random":
        return texts, line_groups(len(texts), marks, layout), marks
    # real words on any line; the watermark on one line (maybe shared) or on lines of its own
    groups = draw(st.lists(st.sampled_from(("", "0", "1")), min_size=len(texts), max_size=len(texts)))
    own = draw(st.booleans())
    for k in marks:
        groups[k] = draw(st.sampled_from(("", "w1", "w2"))) if own else "1"
    return texts, groups, marks


@settings(max_examples=300, deadline=None)
@given(pages())
def test_watermark_adjacency_never_removes_a_real_word(page):
    texts, groups, marks = page
    words = [PredictedWord(0.0, 0.0, 1.0, 1.0, g, t, k) for k, (g, t) in enumerate(zip(groups, texts))]
    kept, dropped = remove_watermark_words(words)
    assert [w.csv_index for w in dropped] == list(marks)
    real = [t for k, t in enumerate(texts) if k not in marks]
    assert [w.text for w in kept] == real
    for level in ("word", "line"):  # line rows regroup the words: compare them as a multiset
        assert sorted(" ".join(r.text for r in build_rows(kept, level)).split()) == sorted(t for t in real if t)
