"""StringMetric and ek's documented CER/WER vectors, on both backends."""

from __future__ import annotations

import math

import jiwer
import pytest

from scorekit.metrics.strings import StringMetric, as_text, text_score


def test_mode_is_checked():
    with pytest.raises(ValueError, match="mode must be 'cer' or 'wer', got 'ter'"):
        StringMetric("ter")
    with pytest.raises(TypeError, match="canonicalizer"):
        StringMetric("cer", canonicalizer="lower")


def test_name_is_the_mode():
    assert StringMetric().name == "cer"
    assert StringMetric("wer").name == "wer"


@pytest.mark.parametrize(
    "value, expected",
    [(None, ""), ("abc", "abc"), (type("R", (), {"text": "t"})(), "t"),
     (type("R", (), {"text": None})(), ""), (12, "12")],
)
def test_text_coercion(value, expected):
    assert as_text(value) == expected


def test_cer_vector(backend):
    s = StringMetric("cer")("hello wrld", "hello world")
    assert s.value == pytest.approx(1 / 11)
    assert s.metric == "cer"
    assert s.detail == {"edits": 1, "ref_len": 11, "higher_is_better": False,
                        "substitutions": 0, "deletions": 1, "insertions": 0, "hits": 10}


def test_wer_vector(backend):
    s = StringMetric("wer")("hello wrld", "hello world")
    assert s.value == 0.5
    assert s.detail == {"edits": 1, "ref_len": 2, "higher_is_better": False,
                        "substitutions": 1, "deletions": 0, "insertions": 0, "hits": 1}


def test_empty_reference_is_a_count_not_a_rate(backend):
    s = StringMetric("cer")("spurious", "")
    assert (s.value, s.detail) == (8.0, {"edits": 8, "ref_len": 0, "higher_is_better": False})
    assert StringMetric("cer")("", "").value == 0.0
    assert StringMetric("wer")("two words", "   ").value == 2.0


def test_rate_may_exceed_one(backend):
    assert StringMetric("cer")("abcdef", "ab").value == 2.0


def test_edge_whitespace_counts_unlike_jiwer(backend):
    # Documented decision: every code point counts (jiwer strips edges and reports 0 edits).
    s = StringMetric("cer")("cat", " cat ")
    assert (s.detail["edits"], s.detail["ref_len"]) == (2, 5)
    assert jiwer.process_characters(" cat ", "cat").deletions == 0
    assert StringMetric("cer", canonicalizer=str.strip)("cat", " cat ").value == 0.0


def test_canonicalizer_applies_to_both_sides(backend):
    assert StringMetric("cer", canonicalizer=str.lower)("HeLLo", "hello").value == 0.0
    with pytest.raises(TypeError, match="canonicalizer must return str"):
        StringMetric("cer", canonicalizer=lambda s: None)("a", "b")


@pytest.mark.parametrize(
    "ref, hyp, wer",
    [("X", "X X Y Y", 3.0), ("X Y X", "X Z", 2 / 3), ("X", "Y Z", 2.0),
     ("i am a short ground truth", "i am a considerably longer and very much incorrect hypothesis", 7 / 6)],
)
def test_morris_wer_vectors(backend, ref, hyp, wer):
    assert StringMetric("wer")(hyp, ref).value == pytest.approx(wer)


def test_jiwer_cer_vector(backend):
    assert StringMetric("cer")("This test", "This is a test").value == pytest.approx(5 / 14)


def test_aggregate_is_global():
    m = StringMetric("cer")
    scores = [m("xx", "x"), m("dg", "dog")]
    assert m.aggregate(scores) == pytest.approx(2 / 4)
    assert math.isnan(m.aggregate([]))
    assert math.isnan(m.aggregate([m("a", ""), m("b", "")]))
    assert m.aggregate([text_score("cer", 4, 1, 0, 0), object()]) == 0.25  # missing keys count 0


def test_lone_surrogate_is_rejected(backend):
    with pytest.raises(ValueError, match=r"gold\[0\] contains a lone surrogate U\+D800"):
        StringMetric("cer")("a", "\ud800")
