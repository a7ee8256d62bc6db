"""Fuzz cases of the OCR page kit: adjacency in watermark matching, and the configured rules.

Random short real words (Armenian one-letter words, page numbers) before and after a watermark
that is whole or split into word records, on the watermark's line, on lines of their own or
without a line (a watermark split over lines has those lines to itself); the watermark records,
and only they, are removed, at both unit levels. The same holds for another corpus's watermark
given by a configuration (which then keeps the built-in one as text). Under configured text
rules the distances equal an independent oracle: Levenshtein (rapidfuzz) of the texts
normalised by ``str.translate``.
"""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from scorekit.ocr_pages.box_grouping.group import build_rows, remove_watermark_words
from scorekit.ocr_pages.box_grouping.loading import PredictedWord
from scorekit.ocr_pages.config import config_from_dict
from scorekit.ocr_pages.evaluation.text_metrics import compute_text_metrics, join_box_lines_with_hyphenation

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


#: Another corpus's watermark (a configuration's), split as the built-in one is above.
FRENCH = config_from_dict({"watermark": {"phrases": ["Numérisé par la BnF", "Source gallica.bnf.fr"]}})
FRENCH_WATERMARKS = (("Numérisé par la BnF",), ("Numérisé", "par", "la", "BnF"), ("NUMERISE", "par la", "bnf"),
                     ("Source", "gallica.bnf.fr"), ("source gallica.bnf.fr",))


@st.composite
def pages(draw, watermarks=WATERMARKS, real_words=REAL_WORDS):
    """``(texts, groups, watermark positions)`` of one page's CSV records."""
    before = draw(st.lists(st.sampled_from(real_words), max_size=3))
    after = draw(st.lists(st.sampled_from(real_words), max_size=3))
    watermark = draw(st.sampled_from(watermarks))
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
@given(st.one_of(pages().map(lambda p: (p, None)),
                 pages(FRENCH_WATERMARKS, REAL_WORDS + ("OCR", "by", "PortMind", "à", "la")).map(lambda p: (p, FRENCH))))
def test_watermark_adjacency_never_removes_a_real_word(case):
    (texts, groups, marks), config = case
    words = [PredictedWord(0.0, 0.0, 1.0, 1.0, g, t, k) for k, (g, t) in enumerate(zip(groups, texts))]
    kept, dropped = remove_watermark_words(words, config)
    assert [w.csv_index for w in dropped] == list(marks)
    real = [t for k, t in enumerate(texts) if k not in marks]
    assert [w.text for w in kept] == real
    for level in ("word", "line"):  # line rows regroup the words: compare them as a multiset
        assert sorted(" ".join(r.text for r in build_rows(kept, level)).split()) == sorted(t for t in real if t)


#: Characters the rules map and what they map to (no target is a source: no rule feeds another).
SOURCES, TARGETS = "„“«»ſ–", "\"'sxy"
TEXT = st.text(alphabet="ab ſs„“«»–-ը\n", max_size=12)


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT, st.dictionaries(st.sampled_from(SOURCES), st.sampled_from(TARGETS)))
def test_configured_text_rules_equal_a_translate_oracle(gt, pred, table):
    config = config_from_dict({"text": {"replacements": [[a, b] for a, b in table.items()],
                                        "lowercase_replacements": [], "free_at_joins": ""}})
    translate = str.maketrans(table)

    def oracle(s: str) -> str:  # NFC, whitespace collapse, then the one-character rules
        return " ".join(unicodedata.normalize("NFC", s).split()).translate(translate)

    m = compute_text_metrics(gt, pred, config=config)
    assert (m.gt_text, m.predicted_text) == (oracle(gt), oracle(pred))
    assert m.char_edit_distance == m.char_edit_distance_strict == Levenshtein.distance(oracle(gt), oracle(pred))
    assert m.char_edit_distance_lowercase == Levenshtein.distance(oracle(gt).lower(), oracle(pred).lower())
    # nothing is free at a join without free characters, even where the default forgives a schwa
    joined = join_box_lines_with_hyphenation(gt)
    assert compute_text_metrics(joined, pred, config=config).char_edit_distance == \
        Levenshtein.distance(oracle(joined.text), oracle(pred))
