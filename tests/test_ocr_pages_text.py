"""The text layer of the OCR page kit: normalisation, hyphen joins, distances, text metrics and the
non-Armenian script test. Vectors N*, J*, D* and A* are the ocr-pages test vectors."""

from __future__ import annotations

import doctest
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from scorekit._kernels import BACKENDS, use_backend
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.evaluation import reports, text_metrics
from scorekit.ocr_pages.evaluation.reports import NON_ARMENIAN_SCRIPT_RATIO, is_non_armenian_text
from scorekit.ocr_pages.evaluation.text_metrics import (
    HYPHEN_CHARS, JOIN_SENTINEL, SCHWA_CHARS, JoinedText, TextMetrics, compute_text_metrics,
    compute_text_metrics_batch, concat_joined, edit_distance, edit_distance_schwa_forgiving,
    join_box_lines_with_hyphenation, normalize_punctuation_chars, normalize_text, prepare_text,
)

join = join_box_lines_with_hyphenation


def test_constants():
    assert HYPHEN_CHARS == {"\u002d", "\u058a", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014"}
    assert set(SCHWA_CHARS) == {"\u0568", "\u0538"} and len(SCHWA_CHARS) == 2
    assert JOIN_SENTINEL == "\ue000"
    assert NON_ARMENIAN_SCRIPT_RATIO == 0.9


# --------------------------------------------------------------------------- normalisation (N1–N16)

@pytest.mark.parametrize(
    "raw, expected",
    [
        ("a--b", "a-b"),                                   # N1
        ("a---b", "a--b"),                                 # N2: one pass, not idempotent
        ("a\u2014b", "a-b"),                               # N3
        ("a\u058ab", "a-b"),                               # N4
        ("\u0561\u0301", "\u0561\u055b"),                  # N5
        ("e\u0301", "\u00e9"),                             # N6: NFC composes first
        ("բայց\u055d նա", "բայց` նա"),                    # N7
        ("1\u20245", "1.5"),                               # N8
        ("Եվ\u2026", "Եվ..."),                             # N9
        ("\u21165", "N5"),                                 # N10
        ("Ժամը 5\u058930", "Ժամը 5:30"),                  # N11
        ("a\u02f8b\ufe13c\ufe30d\uff1ae\u2236f\ua789g", "a:b:c:d:e:f:g"),  # N12
        ("\u0565\u0582", "\u0587"), ("\u0535\u0552", "\u0535\u0552"), ("\u0535\u0582", "\u0535\u0582"),  # N13
        ("  Երևան \n\t քաղաք  ", "Երևան քաղաք"),          # N14
        ("a\u2013b", "a\u2013b"), ("a\u00adb", "a\u00adb"),  # N15: not in the table
    ],
)
def test_normalize_text_vectors(raw, expected):
    assert normalize_text(raw) == expected


def test_normalisation_details():
    assert len(normalize_text("Եվ\u2026")) == 5                                     # N9: length 3 -> 5
    assert normalize_text(normalize_text("a---b")) == "a-b"                          # N2 again
    assert normalize_text("a\u00a0\u2003b\u200bc") == "a b\u200bc"                  # NBSP/em space split, ZWSP not
    assert normalize_punctuation_chars("  a:b ") == "  a:b "                        # B15 identity, no trimming
    # what is not in the table stays (§5.2 "not mapped")
    for ch in "\u2010\u2011\u2012\u2212\u00ab\u00bb\u055c\u055e\"'":
        assert normalize_text(f"a{ch}b") == f"a{ch}b"


@pytest.mark.parametrize(
    "raw, expected",
    [("ԵՒ", "\u0587"), ("ԵՎ", "եվ"), ("ՄԵԾ ԼՈՒՐ", "մեծ լուր")],                  # N16
)
def test_lowercase_form_vectors(raw, expected):
    assert prepare_text(raw, lower=True) == JoinedText(expected, ())


# --------------------------------------------------------------------------- hyphen joins (J1–J14)

@pytest.mark.parametrize(
    "raw, text, joins",
    [
        ("գրա-\nկան", "գրական", (3,)),                  # J1
        ("մը-\nտնել", "մըտնել", (2,)),                  # J2
        ("Արե-\nվելք", "Արևելք", (3,)),                 # J3
        ("բարե-\nվ ձեզ", "բարև ձեզ", (4,)),             # J4
        ("ԱՐԵ-\nՎԵԼՔ", "ԱՐԵՎԵԼՔ", (3,)),                # J5
        ("Ե-\nվ", "Եվ", (1,)),                          # J5
        ("ե-\nւ", "\u0587", (1,)),                      # J6
        ("1941-\n1945", "19411945", (4,)),              # J7
        ("բառ -\nնոր", "բառ - նոր", ()),                # J8
        ("առաջին\nտող", "առաջին տող", ()),              # J9
        ("ա\u058a\nբ", "աբ", (1,)), ("ա\u2010\nբ", "աբ", (1,)),
        ("ա\u2013\nբ", "աբ", (1,)), ("ա\u2014\nբ", "աբ", (1,)),  # J10
        ("  ա-  \n\n  բ  ", "աբ", (1,)),                # J11
        ("-\nբ", "- բ", ()),                            # J12
        ("Նա ասաց… մը-\nտնել", "Նա ասաց… մըտնել", (11,)),  # J14
        # §5.3 details: line breaks \r\n and \r, no lines, trailing hyphen kept, U+2011/U+2012
        ("a-\r\nb\rc", "ab c", (1,)), ("", "", ()), (" \n\t\n", "", ()), ("last-", "last-", ()),
        ("ա\u2011\nբ\u2012\nգ", "աբգ", (1, 2)),
    ],
)
def test_join_vectors(raw, text, joins):
    assert join(raw) == JoinedText(text, joins)


def test_join_accepts_a_sequence_of_lines():
    assert join(["գրա-", "կան"]) == JoinedText("գրական", (3,))
    assert join(("  Արե-", "վելք ", "")) == JoinedText("Արևելք", (3,))
    assert join(line for line in ["ա-", "բ"]) == JoinedText("աբ", (1,))
    assert join([]) == JoinedText("", ())


def test_concat_joined_vector():
    parts = [join("գրա-\nկան"), join("մը-\nտնել")]
    assert concat_joined(parts, "\n") == JoinedText("գրական\nմըտնել", (3, 9))  # J13


def test_prepare_keeps_join_positions():
    # J14: the ellipsis grows by two code points, so the join moves from 11 to 13
    assert prepare_text(join("Նա ասաց… մը-\nտնել")) == JoinedText("Նա ասաց... մըտնել", (13,))
    # whitespace collapse and `--` -> `-` in front of a join shift it left
    assert prepare_text(JoinedText("  a   b--cd", (10,))) == JoinedText("a b-cd", (5,))
    # a sentinel already in the text is replaced, not read as a join; duplicate joins count once
    assert prepare_text(JoinedText("a\ue000b", (1, 1))) == JoinedText("a\ufffdb", (1,))
    assert prepare_text("a\ue000b") == JoinedText("a\ufffdb", ())
    # a join at either end survives
    assert prepare_text(JoinedText("ab", (0, 2))) == JoinedText("ab", (0, 2))
    # the lowercase form carries the joins too (ԵՒ -> և shortens by one)
    assert prepare_text(JoinedText("ԵՒ ՄԸ", (4,)), lower=True) == JoinedText("\u0587 մը", (3,))


# --------------------------------------------------------------------------- text metrics (D1–D21)

J14_RAW = "Նա ասաց… մը-\nտնել"

# gt raw, pred raw, d, s, lc, n, cer, extra expected fields
D_VECTORS = [
    ("մը-\nտնել", "մտնել", 0, 1, 0, 6, 0.0, {}),                              # D1
    ("մտնել", "մ-\nտնել", 0, 0, 0, 5, 0.0, {}),                               # D2
    ("մըտնել", "մ-\nտնել", 0, 1, 0, 6, 0.0, {}),                              # D3
    ("մ-\nտնել", "մըտնել", 0, 1, 0, 5, 0.0, {}),                              # D4
    ("մտնել", "մըտնել", 1, 1, 1, 5, 0.2, {}),                                 # D5
    ("գրա-\nկան", "գրաըկան", 0, 1, 0, 6, 0.0, {}),                            # D6
    ("գրա-\nկան", "գրաական", 1, 1, 1, 6, 0.16666666666666666, {}),            # D7
    ("գրա-\nկան", "գրա-\nըկան", 0, 1, 0, 6, 0.0, {}),                         # D8
    ("ԳՐԱ-\nԿԱՆ", "ԳՐԱԸԿԱՆ", 0, 1, 0, 6, 0.0, {}),                            # D9
    ("ընկեր", "նկեր", 1, 1, 1, 5, 0.2, {}),                                   # D10
    ("Երևան", "երևան", 1, 1, 0, 5, 0.2, {"cer_lowercase": 0.0}),              # D11
    ("Երեւան", "Երևան", 0, 0, 0, 5, 0.0, {}),                                 # D12
    ("ՄԵԾ ԼՈՒՐ", "Մեծ լուր", 6, 6, 0, 8, 0.75, {"cer_lowercase": 0.0}),       # D13
    ("ԵՒ", "\u0587", 2, 2, 0, 2, 1.0, {"cer_lowercase": 0.0, "gt_char_count_lowercase": 1}),  # D14
    ("", "", 0, 0, 0, 0, 0.0, {"cer_strict": 0.0, "cer_lowercase": 0.0}),     # D15
    ("", "աբ", 2, 2, 2, 0, 1.0, {"cer_strict": 1.0, "cer_lowercase": 1.0}),   # D16
    ("աբգ", "", 3, 3, 3, 3, 1.0, {}),                                          # D17
    ("Ժամը 5\u058930", "Ժամը 5:30", 0, 0, 0, 9, 0.0, {"gt_text": "Ժամը 5:30"}),  # D18
    ("kitten", "sitting", 3, 3, 3, 6, 0.5, {"pred_char_count": 7}),           # D19
    (J14_RAW, "Նա ասաց... մտնել", 0, 1, 0, 17, 0.0,
     {"cer_strict": 0.058823529411764705, "gt_text": "Նա ասաց... մըտնել", "pred_char_count": 16}),  # D20
]


def _check_vector(m: TextMetrics, d, s, lc, n, cer, extra):
    assert (m.char_edit_distance, m.char_edit_distance_strict, m.char_edit_distance_lowercase, m.gt_char_count) == (d, s, lc, n)
    assert m.cer == pytest.approx(cer, abs=1e-9)
    assert m.schwa_forgiven == s - d
    expected = {"gt_char_count_lowercase": n, "cer_strict": s / n if n else None,
                "cer_lowercase": lc / n if n else None, **extra}
    for field, value in expected.items():
        got = getattr(m, field)
        assert got == (pytest.approx(value, abs=1e-9) if isinstance(value, float) else value), field


@pytest.mark.parametrize("gt, pred, d, s, lc, n, cer, extra", D_VECTORS)
def test_text_metrics_vectors(backend, gt, pred, d, s, lc, n, cer, extra):
    m = compute_text_metrics(join(gt), join(pred))
    _check_vector(m, d, s, lc, n, cer, extra)
    strict = compute_text_metrics(join(gt), join(pred), schwa_forgiving=False)
    assert (strict.char_edit_distance, strict.cer, strict.schwa_forgiven) == (s, m.cer_strict, 0)
    assert (strict.char_edit_distance_strict, strict.char_edit_distance_lowercase) == (s, lc)


def test_text_metrics_vectors_batch(backend):
    for schwa_forgiving in (True, False):
        got = compute_text_metrics_batch([join(v[0]) for v in D_VECTORS], [join(v[1]) for v in D_VECTORS],
                                         schwa_forgiving=schwa_forgiving, threads=2)
        for m, (_, _, d, s, lc, n, cer, extra) in zip(got, D_VECTORS, strict=True):
            if schwa_forgiving:
                _check_vector(m, d, s, lc, n, cer, extra)
            else:
                assert (m.char_edit_distance, m.char_edit_distance_lowercase, m.schwa_forgiven) == (s, lc, 0)


def test_raw_distance_vectors(backend):
    assert edit_distance_schwa_forgiving("մըտնել", "մտնել", {2}, set()) == 0      # D21
    assert edit_distance_schwa_forgiving("մըտնել", "մտնել", (), ()) == 1
    assert edit_distance_schwa_forgiving("մըտնել", "մտնել") == 1
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "") == 0 and edit_distance("աբ", "") == 2


def test_str_inputs_have_no_joins(backend):
    # a plain str brings no joins, so D1 with the GT already joined by hand is strict
    m = compute_text_metrics("մըտնել", "մտնել")
    assert (m.char_edit_distance, m.char_edit_distance_strict, m.cer) == (1, 1, 1 / 6)


def _dp(g, p, jg, jp):
    """The schwa-forgiving distance as the full table (a test oracle)."""
    n, m = len(g), len(p)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            options = []
            if i:
                free = g[i - 1] in SCHWA_CHARS and (i - 1 in jg or i in jg or j in jp)
                options.append(d[i - 1][j] + (0 if free else 1))
            if j:
                free = p[j - 1] in SCHWA_CHARS and (j - 1 in jp or j in jp or i in jg)
                options.append(d[i][j - 1] + (0 if free else 1))
            if i and j:
                options.append(d[i - 1][j - 1] + (g[i - 1] != p[j - 1]))
            d[i][j] = min(options) if options else 0
    return d[n][m]


SMALL = st.text(alphabet=["ա", "ը", "Ը", "-", " ", "b"], max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_distances_against_the_table(data):
    g, p = data.draw(SMALL), data.draw(SMALL)
    jg = data.draw(st.sets(st.integers(0, len(g)), max_size=3))
    jp = data.draw(st.sets(st.integers(0, len(p)), max_size=3))
    expected = _dp(g, p, jg, jp)
    strict = Levenshtein.distance(g, p)
    for name in BACKENDS:
        with use_backend(name):
            assert edit_distance(g, p) == strict
            assert edit_distance_schwa_forgiving(g, p, jg, jp) == expected
            assert edit_distance_schwa_forgiving(p, g, jp, jg) == expected       # swap symmetry
            assert edit_distance_schwa_forgiving(g, p) == strict
    assert expected <= strict


# --------------------------------------------------------------------------- batch == single

ARMENIAN = "աբգդեզէըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆևԱԲԳԵԸՎՒՄ"
LATIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
EXTRA = " \u00a0.,:;-\u058a\u2014\u2013\u2026\u0589\u055d\u0301\u2116\ue000\u0130"
PAGE_CHARS = st.sampled_from(list(ARMENIAN + LATIN + EXTRA) + ["--", "եւ", "ե-\nվ", "-\n", "\n", "\r\n", "ը-\n"])
PAGE_TEXT = st.lists(PAGE_CHARS, max_size=120).map("".join)

@st.composite
def joined_small(draw):
    """Short texts with joins anywhere, where schwas and joins meet often (and upper case is rare)."""
    text = draw(st.text(alphabet=["ա", "ը", "Ը", "Ա", "-", " ", "b"], max_size=25))
    return JoinedText(text, tuple(draw(st.lists(st.integers(0, len(text)), max_size=3))))


PAGE = st.one_of(PAGE_TEXT, PAGE_TEXT.map(join), joined_small(), st.text(alphabet="աըբ", max_size=10))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(PAGE, PAGE), min_size=1, max_size=8), st.booleans())
def test_batch_equals_single(pairs, schwa_forgiving):
    gts, preds = [g for g, _ in pairs], [p for _, p in pairs]
    for name in BACKENDS:
        with use_backend(name):
            single = [compute_text_metrics(g, p, schwa_forgiving=schwa_forgiving) for g, p in pairs]
            assert compute_text_metrics_batch(gts, preds, schwa_forgiving=schwa_forgiving) == single
            assert compute_text_metrics_batch(iter(gts), tuple(preds), schwa_forgiving=schwa_forgiving, threads=1) == single
    for (g, p), m in zip(pairs, single):
        gp, pp = prepare_text(g), prepare_text(p)
        assert (m.gt_text, m.predicted_text) == (gp.text, pp.text)
        assert m.char_edit_distance_strict == Levenshtein.distance(gp.text, pp.text)
        assert m.char_edit_distance <= m.char_edit_distance_strict
        assert JOIN_SENTINEL not in m.gt_text + m.predicted_text


def test_batch_of_nothing():
    assert compute_text_metrics_batch([], []) == []


# --------------------------------------------------------------------------- non-Armenian ratio (A1–A9)

@pytest.mark.parametrize(
    "text, ratio, excluded",
    [
        ("Hello Աշխարհ", 0.45454545454545453, False),                                 # A1
        ("The quick brown fox jumps over the lazy dog բ", 0.9722222222222222, True),  # A2
        ("abcdefghi բ", 0.9, False),                                                   # A3
        ("abcdefghij բ", 0.9090909090909091, True),                                    # A4
        ("Москва 2024", 1.0, True),                                                    # A5
        ("2024 — 15:30", None, False),                                                 # A6
        ("Ελλάδα abc", 0.3333333333333333, False),                                     # A7
        ("Москва Ереван Գ", 0.9230769230769231, True),                                 # A8
        ("ГАЗЕТА «Правда» №5", 1.0, True),                                             # A9
    ],
)
def test_non_armenian_vectors(text, ratio, excluded):
    share = reports._latin_cyrillic_share(text)
    assert share == (None if ratio is None else pytest.approx(ratio, abs=1e-9))
    assert is_non_armenian_text(text) is excluded


def test_non_armenian_counts_after_nfc():
    decomposed = unicodedata.normalize("NFD", "éééééééééé բ")   # 10 Latin letters once composed
    assert reports._latin_cyrillic_share(decomposed) == pytest.approx(10 / 11)
    assert is_non_armenian_text(decomposed) is True
    assert is_non_armenian_text("") is False


# --------------------------------------------------------------------------- bad input

SURROGATE = "ab\ud800c"


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: normalize_text(3), "s"),
        (lambda: normalize_punctuation_chars(b"x"), "s"),
        (lambda: join_box_lines_with_hyphenation(5), "text_or_lines"),
        (lambda: join_box_lines_with_hyphenation(b"a-\nb"), "text_or_lines"),
        (lambda: join_box_lines_with_hyphenation(["a", 3]), r"text_or_lines\[1\]"),
        (lambda: prepare_text(None), "x"),
        (lambda: edit_distance(1, "a"), "a"),
        (lambda: edit_distance("a", None), "b"),
        (lambda: edit_distance_schwa_forgiving(["a"], "a"), "gt"),
        (lambda: edit_distance_schwa_forgiving("a", 2), "pred"),
        (lambda: edit_distance_schwa_forgiving("ab", "a", gt_joins=3), "gt_joins"),
        (lambda: edit_distance_schwa_forgiving("ab", "a", pred_joins=["0"]), "pred_joins"),
        (lambda: edit_distance_schwa_forgiving("ab", "a", pred_joins=[True]), "pred_joins"),
        (lambda: compute_text_metrics(None, "a"), "gt_text"),
        (lambda: compute_text_metrics("a", 1.5), "predicted_text"),
        (lambda: compute_text_metrics(JoinedText(3, ()), "a"), r"gt_text\.text"),
        (lambda: compute_text_metrics_batch("abc", ["a"]), "gt_texts"),
        (lambda: compute_text_metrics_batch(["a"], 7), "pred_texts"),
        (lambda: compute_text_metrics_batch(["a", 3], ["a", "b"]), r"item 1: gt_texts"),
        (lambda: compute_text_metrics_batch(["a"], ["a"], threads="2"), "threads"),
        (lambda: is_non_armenian_text(None), "t"),
    ],
)
def test_wrong_types_name_the_argument(call, field):
    with pytest.raises(InvalidTypeError, match=rf"^{field} must (be|hold)"):
        call()


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: normalize_text(SURROGATE), "s"),
        (lambda: normalize_punctuation_chars(SURROGATE), "s"),
        (lambda: join_box_lines_with_hyphenation(SURROGATE), "text_or_lines"),
        (lambda: join_box_lines_with_hyphenation(["a", SURROGATE]), r"text_or_lines\[1\]"),
        (lambda: edit_distance("a", SURROGATE), "b"),
        (lambda: edit_distance_schwa_forgiving(SURROGATE, "a"), "gt"),
        (lambda: compute_text_metrics("a", SURROGATE), "predicted_text"),
        (lambda: compute_text_metrics(JoinedText(SURROGATE, ()), "a"), r"gt_text\.text"),
        (lambda: compute_text_metrics_batch(["a", "b"], ["a", SURROGATE]), r"item 1: pred_texts"),
        (lambda: is_non_armenian_text(SURROGATE), "t"),
    ],
)
def test_lone_surrogates_are_refused(call, field):
    with pytest.raises(InvalidValueError, match=rf"^{field} contains a lone surrogate U\+D800 at position 2"):
        call()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: edit_distance_schwa_forgiving("ab", "a", gt_joins=[3]), r"^gt_joins position 3 is outside 0..2"),
        (lambda: edit_distance_schwa_forgiving("ab", "a", pred_joins=[-1]), r"^pred_joins position -1 is outside 0..1"),
        (lambda: compute_text_metrics(JoinedText("ab", (3,)), "a"), r"^gt_text\.joins position 3 is outside 0..2"),
        (lambda: compute_text_metrics_batch([JoinedText("ab", (1,)), "x"], ["a", JoinedText("", (1,))]),
         r"^item 1: pred_texts\.joins position 1 is outside 0..0"),
        (lambda: compute_text_metrics_batch(["a"], ["a", "b"]), r"^gt_texts has 1 items but pred_texts has 2"),
        (lambda: compute_text_metrics_batch(["a"], ["a"], threads=-1), r"^threads must be >= 0"),
    ],
)
def test_bad_values(call, message):
    with pytest.raises(InvalidValueError, match=message):
        call()


def test_errors_are_the_builtin_kinds():
    with pytest.raises(TypeError):
        compute_text_metrics(None, "a")
    with pytest.raises(ValueError):
        compute_text_metrics(SURROGATE, "a")


# --------------------------------------------------------------------------- docstring examples

@pytest.mark.parametrize("module", [text_metrics, reports])
def test_docstring_examples(backend, module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
