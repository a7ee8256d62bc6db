"""Hyphen joins and the schwa-forgiving distance (docs/decisions.md#hyphen-joins, #schwa-forgiving-distance)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scorekit import batch
from scorekit.text import JoinedText, concat_joined, join_lines_with_hyphenation, schwa_distance, schwa_distance_batch


@pytest.mark.parametrize(
    "raw, text, joins",
    [
        ("գրա-\nկան", "գրական", (3,)),                # J1
        ("մը-\nտնել", "մըտնել", (2,)),                # J2
        ("Արե-\nվելք", "Արևելք", (3,)),               # J3: ե-վ → և
        ("բարե-\nվ ձեզ", "բարև ձեզ", (4,)),           # J4
        ("ԱՐԵ-\nՎԵԼՔ", "ԱՐԵՎԵԼՔ", (3,)),              # J5: capitals never ligated
        ("Ե-\nվ", "Եվ", (1,)),
        ("ե-\nւ", "և", (1,)),                         # J6
        ("1941-\n1945", "19411945", (4,)),            # J7
        ("բառ -\nնոր", "բառ - նոր", ()),              # J8: spaced dash
        ("առաջին\nտող", "առաջին տող", ()),            # J9
        ("ա֊\nբ", "աբ", (1,)), ("ա‐\nբ", "աբ", (1,)), ("ա–\nբ", "աբ", (1,)), ("ա—\nբ", "աբ", (1,)),  # J10
        ("  ա-  \n\n  բ  ", "աբ", (1,)),              # J11
        ("-\nբ", "- բ", ()),                          # J12
        ("a-\r\nb\rc", "ab c", (1,)),
        ("", "", ()),
        ("last-", "last-", ()),
    ],
)
def test_join_vectors(raw, text, joins):
    assert join_lines_with_hyphenation(raw) == JoinedText(text, joins)


def test_join_accepts_lines_and_concat_shifts_positions():
    assert join_lines_with_hyphenation(["գրա-", "կան"]) == JoinedText("գրական", (3,))
    j = concat_joined([join_lines_with_hyphenation("գրա-\nկան"), join_lines_with_hyphenation("մը-\nտնել")])
    assert j == JoinedText("գրական\nմըտնել", (3, 9))   # J13
    with pytest.raises(TypeError, match=r"text_or_lines\[1\] must be str"):
        join_lines_with_hyphenation(["a", 3])


def J(raw):
    return join_lines_with_hyphenation(raw)


@pytest.mark.parametrize(
    "gt, pred, forgiving, strict",
    [
        (J("մը-\nտնել"), "մտնել", 0, 1),      # D1
        ("մտնել", J("մ-\nտնել"), 0, 0),       # D2
        ("մըտնել", J("մ-\nտնել"), 0, 1),      # D3
        (J("մ-\nտնել"), "մըտնել", 0, 1),      # D4
        ("մտնել", "մըտնել", 1, 1),            # D5
        (J("գրա-\nկան"), "գրաըկան", 0, 1),    # D6
        (J("գրա-\nկան"), "գրաական", 1, 1),    # D7
        (J("գրա-\nկան"), J("գրա-\nըկան"), 0, 1),  # D8
        (J("ԳՐԱ-\nԿԱՆ"), "ԳՐԱԸԿԱՆ", 0, 1),    # D9: capital Ը forgiven
        ("ընկեր", "նկեր", 1, 1),              # D10
        ("", "", 0, 0), ("", "աբ", 2, 2), ("աբգ", "", 3, 3),  # D15–D17
        ("kitten", "sitting", 3, 3),           # D19
    ],
)
def test_distance_vectors(backend, gt, pred, forgiving, strict):
    assert schwa_distance(gt, pred) == forgiving
    gt_text = gt.text if isinstance(gt, JoinedText) else gt
    pred_text = pred.text if isinstance(pred, JoinedText) else pred
    assert batch.levenshtein([gt_text], [pred_text]).tolist() == [strict]


def test_raw_dp_vector(backend):
    assert schwa_distance("մըտնել", "մտնել", gt_joins=[2]) == 0   # D21
    assert schwa_distance("մըտնել", "մտնել") == 1


def plain_dp(g, p, jg, jp, schwa="ըԸ"):
    """The schwa-forgiving distance written out as the full O(n·m) table."""
    n, m = len(g), len(p)
    inf = float("inf")
    d = [[inf] * (m + 1) for _ in range(n + 1)]
    d[0][0] = 0
    for i in range(n + 1):
        for j in range(m + 1):
            if i:
                free = g[i - 1] in schwa and (i - 1 in jg or i in jg or j in jp)
                d[i][j] = min(d[i][j], d[i - 1][j] + (0 if free else 1))
            if j:
                free = p[j - 1] in schwa and (j - 1 in jp or j in jp or i in jg)
                d[i][j] = min(d[i][j], d[i][j - 1] + (0 if free else 1))
            if i and j:
                d[i][j] = min(d[i][j], d[i - 1][j - 1] + (g[i - 1] != p[j - 1]))
    return d[n][m]


def test_random_cases_match_the_plain_dp(backend):
    rng = random.Random(42)
    alphabet = ["ա", "ը", "Ը", "-", " ", "b"]
    gts, preds, gjs, pjs, expected = [], [], [], [], []
    for _ in range(2000):
        g = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        p = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        jg = sorted({rng.randint(0, len(g)) for _ in range(rng.randint(0, 3))})
        jp = sorted({rng.randint(0, len(p)) for _ in range(rng.randint(0, 3))})
        gts.append(g), preds.append(p), gjs.append(jg), pjs.append(jp)
        expected.append(plain_dp(g, p, set(jg), set(jp)))
    got = schwa_distance_batch(gts, preds, gjs, pjs)
    assert got.tolist() == expected
    swapped = schwa_distance_batch(preds, gts, pjs, gjs)
    np.testing.assert_array_equal(got, swapped)
    strict = batch.levenshtein(gts, preds)
    assert (got <= strict).all()
    np.testing.assert_array_equal(schwa_distance_batch(gts, preds), strict)


def test_custom_schwa_and_schwa_cer(backend):
    assert schwa_distance("ab", "axb", gt_joins=[1], schwa="x") == 0
    d, n = batch.schwa_cer([J("մը-\nտնել"), "kitten"], ["մտնել", "sitting"])
    assert d.tolist() == [0, 3] and n.tolist() == [6, 6]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: schwa_distance("ab", "ab", gt_joins=[3]), ValueError, r"gt_joins\[0\] position 3 is outside 0..2"),
        (lambda: schwa_distance("ab", "ab", pred_joins=["x"]), TypeError, "integer positions"),
        (lambda: schwa_distance(3, "ab"), TypeError, r"gts\[0\] must be str or JoinedText"),
        (lambda: schwa_distance("a", "b", schwa=""), ValueError, "schwa must be a non-empty string"),
        (lambda: schwa_distance_batch(["a"], ["b", "c"]), ValueError, "gts has 1 items but preds has 2"),
        (lambda: schwa_distance_batch(["a"], ["b"], [[0], [1]]), ValueError, "gts has 1 items but gt_joins has 2"),
    ],
)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()
