"""score/evaluate: doctests, vectors, streaming and slices."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scorekit as ek
from scorekit.base import FieldSpec, GraphGrammar, NodeType, Report, Score
from scorekit.facade import CHUNK_SIZE, evaluate, score


def test_quickstart_doctests(backend):
    assert round(ek.score("hello wrld", "hello world").value, 3) == 0.091
    assert ek.evaluate([("ct", "cat"), ("dg", "dog")], metric="cer").n == 2
    assert score("hello wrld", "hello world").metric == "cer"
    assert round(score("hello wrld", "hello world", metric="wer").value, 3) == 0.5
    r = evaluate([("ct", "cat"), ("dg", "dog")], metric="cer")
    assert (r.n, round(r.aggregate, 3)) == (2, 0.333)


def test_text_like_objects_dispatch_to_cer():
    ocr = type("OcrResult", (), {"text": "hello wrld"})()
    s = score(ocr, "hello world")
    assert (s.metric, round(s.value, 4)) == ("cer", 0.0909)


def test_global_aggregate_not_mean_of_rates(backend):
    assert evaluate([("xx", "x"), ("dg", "dog")], metric="cer").aggregate == 0.5


def test_slices(backend):
    r = evaluate([("cat", "cat", "easy"), ("xxx", "dog", "hard"), ("dog", "dog", "easy"), ("dog", "dog", None)],
                 metric="cer")
    assert r.per_slice == {"easy": 0.0, "hard": 1.0}
    assert (r.aggregate, r.n) == (0.25, 4)
    assert list(r.per_slice) == ["easy", "hard"]


def test_normalize(backend):
    assert score("Hello   WORLD", "hello world", metric="cer", normalize="lower").value == pytest.approx(2 / 11)
    assert score("Hello   WORLD", "hello world", metric="cer", normalize=["lower", "collapse_whitespace"]).value == 0.0
    r = evaluate([("Hello", "hello")], metric="cer", normalize="lower")
    assert r.aggregate == 0.0


def test_fields_dispatch():
    s = score({"name": "Acme", "city": "Paris", "amount": "100"}, {"name": "Acme", "city": "Paris", "amount": "200"})
    assert s.metric == "fields"
    assert s.detail == {"tp": 2, "fp": 1, "fn": 1, "higher_is_better": True}
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(2 / 3)
    r = evaluate([({"a": "1", "b": "2"}, {"a": "1", "b": "2"}), ({"a": "9"}, {"a": "1", "b": "2"})])
    assert r.aggregate == pytest.approx(0.5714285714285714)
    assert score({}, {}).f1 == 1.0
    assert evaluate([({}, {})], metric="fields").aggregate == 1.0


def test_fields_grammar_normalizer():
    g = GraphGrammar(node_types={"rec": NodeType("rec", fields={"name": FieldSpec("name", normalizer="lower")})})
    s = score({"name": "ACME", "code": "ab"}, {"name": "acme", "code": "AB"}, metric="fields", grammar=g)
    assert s.detail["tp"] == 1 and s.f1 < 1
    assert score({"name": "ACME", "code": "AB"}, {"name": "acme", "code": "AB"}, metric="fields", grammar=g).f1 == 1.0


def test_empty_references():
    assert math.isnan(evaluate([("a", ""), ("b", "")], metric="cer").aggregate)


def test_custom_metric_uses_mean_fallback():
    def m(p, g, *, grammar=None):
        return float(p == g)

    r = evaluate([("a", "a"), ("a", "b", "s1"), ("c", "c", "s1")], metric=m)
    assert (r.metric, r.aggregate, r.per_slice, r.n) == ("m", pytest.approx(2 / 3), {"s1": 0.5}, 3)


def test_empty_cases():
    r = evaluate([])
    assert (r.metric, r.aggregate, r.n, list(r.scores)) == ("", None, 0, [])
    assert evaluate([], metric="wer").metric == "wer"
    assert evaluate(iter(()), metric="cer").n == 0


def test_errors():
    with pytest.raises(TypeError, match="No default metric for int vs list"):
        score(123, ["a", "b"])
    with pytest.raises(KeyError, match="no_such_metric"):
        score("a", "b", metric="no_such_metric")
    with pytest.raises(TypeError, match="cases must be an iterable"):
        evaluate(5)
    with pytest.raises(ValueError, match=r"cases\[1\] must be a \(pred, gold\)"):
        evaluate([("a", "b"), ("c",)], metric="cer")
    with pytest.raises(ValueError, match=r"cases\[1\] gold contains a lone surrogate"):
        evaluate([("a", "b"), ("c", "\udfff")], metric="cer")
    with pytest.raises(KeyError):
        score("a", "b", normalize="no_such_normalizer")
    with pytest.raises(TypeError):
        score("a", "b", metric=42)


def test_lazy_scores_match_direct_scores(backend):
    cases = [("ct", "cat", "a"), ("", "dog", "b"), ("spurious", "", None), ("hello wrld", "hello world", "a")]
    r = evaluate(cases, metric="cer")
    direct = [score(p, g, metric="cer") for p, g, _ in cases]
    assert list(r.scores) == direct
    assert r.scores[-1] == direct[-1] and r.scores[1:3] == direct[1:3]
    assert r.scores == direct
    with pytest.raises(IndexError):
        r.scores[4]
    assert isinstance(r.scores[0], Score) and isinstance(r, Report)


def test_streams_a_generator_across_chunks(backend):
    n = CHUNK_SIZE + 10
    gen = (("ab", "abc", "odd" if k % 2 else "even") for k in range(n))
    r = evaluate(gen, metric="cer")
    assert r.n == n
    assert r.aggregate == pytest.approx(1 / 3)
    assert r.detail["ref_len"] == 3 * n and r.detail["deletions"] == n
    assert r.scores[CHUNK_SIZE + 5].detail["ref_len"] == 3
    assert r.per_slice == {"even": pytest.approx(1 / 3), "odd": pytest.approx(1 / 3)}


def test_wer_corpus_equals_jiwer(backend):
    import jiwer

    refs = ["the cat sat on the mat", "a b c", "one two three four"]
    hyps = ["the cat sit on mat", "a x b c", "one too three"]
    r = evaluate(list(zip(hyps, refs)), metric="wer")
    out = jiwer.process_words(refs, hyps)
    assert r.aggregate == pytest.approx(out.wer)
    d = r.detail
    assert (d["substitutions"], d["deletions"], d["insertions"], d["hits"]) == (
        out.substitutions, out.deletions, out.insertions, out.hits)


def test_unknown_names_are_key_and_value_errors():
    for call in (lambda: score("a", "b", metric="nope"), lambda: score("a", "b", normalize="nope")):
        with pytest.raises(KeyError):
            call()
        with pytest.raises(ValueError, match="No '(metrics|normalizers)' strategy named 'nope'"):
            call()


def test_slice_labels_must_be_hashable():
    with pytest.raises(TypeError, match="slice labels must be hashable, got list"):
        evaluate([("a", "a", ["x"])], metric="cer")


def test_mixed_two_and_three_item_cases(backend):
    r = evaluate([("a", "ab"), ("a", "abc", 7), ("x", "x", None), ("ab", "ab", 7)], metric="cer")
    assert r.per_slice == {7: pytest.approx(2 / 5)}
    assert r.aggregate == pytest.approx(3 / 8)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30), st.sampled_from([None, "cer", "wer"]))
def test_the_short_pair_path_gives_what_the_metric_gives(pred, gold, metric):
    # score() on two plain strings skips building the metric; the result must be the metric's
    from scorekit.metrics.strings import StringMetric

    got = score(pred, gold, metric=metric)
    want = StringMetric(metric or "cer")(pred, gold)
    assert (got.value, got.metric, got.detail) == (want.value, want.metric, want.detail)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_evaluate_gives_the_same_in_one_chunk_or_many(monkeypatch, size):
    import scorekit.facade as facade

    cases = [("ct", "cat", "a"), ("dg", "dog", "b"), ("hello wrld", "hello world", "a"), ("", "x", "b"), ("y", "", "a")]
    whole = evaluate(cases)
    monkeypatch.setattr(facade, "CHUNK_SIZE", size)
    chunked = evaluate(cases)
    assert (chunked.n, chunked.aggregate, chunked.per_slice, chunked.detail) == \
        (whole.n, whole.aggregate, whole.per_slice, whole.detail)
    assert [s.detail for s in chunked.scores] == [s.detail for s in whole.scores]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=12), st.text(max_size=12),
                          st.sampled_from([None, "a", "b", 1, 1.0, True, "1"])), max_size=16),
       st.booleans(), st.sampled_from(["cer", "wer", None]))
def test_a_small_corpus_counted_pair_by_pair_equals_the_batch_path(cases, sliced, metric):
    import scorekit.facade as facade

    cases = [c if sliced else c[:2] for c in cases]
    small = evaluate(cases, metric=metric)
    saved = facade.SMALL_CORPUS
    facade.SMALL_CORPUS = 0
    try:
        batch = evaluate(cases, metric=metric)
    finally:
        facade.SMALL_CORPUS = saved
    assert repr((small.n, small.aggregate, small.per_slice, small.detail)) == \
        repr((batch.n, batch.aggregate, batch.per_slice, batch.detail))
    assert list(small.per_slice) == list(batch.per_slice)
    assert [s.detail for s in small.scores] == [s.detail for s in batch.scores]


def test_a_small_corpus_keeps_the_batch_paths_errors():
    with pytest.raises(ValueError, match=r"cases\[1\] pred"):
        evaluate([("a", "a"), ("\ud800", "b")])
    with pytest.raises(TypeError, match="slice labels"):
        evaluate([("a", "a", "x"), ("b", "b", [1])])
