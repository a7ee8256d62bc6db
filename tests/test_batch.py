"""scorekit.batch against rapidfuzz and jiwer on thousands of random pairs, on both backends."""

from __future__ import annotations

import jiwer
import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from scorekit import batch
from tests._textgen import long_pairs, random_pairs

OPCODE_COLUMN = {"replace": 1, "delete": 2, "insert": 3}


def rapidfuzz_counts(ref: str, hyp: str) -> list[int]:
    """[ref_len, S, D, I] from rapidfuzz's edit operations (what jiwer counts)."""
    row = [len(ref), 0, 0, 0]
    for op, *_ in Levenshtein.editops(ref, hyp):
        row[OPCODE_COLUMN[op]] += 1
    return row


def result_rows(r: batch.BatchResult) -> np.ndarray:
    return np.stack([r.ref_len, r.substitutions, r.deletions, r.insertions], axis=1)


def test_distances_match_rapidfuzz(backend):
    pairs = random_pairs(1, 3000) + long_pairs(2, 4)
    a, b = zip(*pairs)
    got = batch.levenshtein(a, b)
    expected = [Levenshtein.distance(x, y) for x, y in pairs]
    assert got.dtype == np.int64
    assert got.tolist() == expected


def test_cer_breakdown_matches_rapidfuzz_and_jiwer(backend):
    pairs = random_pairs(3, 3000) + long_pairs(4, 4)
    hyps, refs = zip(*pairs)
    r = batch.cer(hyps, refs)
    expected = np.array([rapidfuzz_counts(ref, hyp) for hyp, ref in pairs])
    np.testing.assert_array_equal(result_rows(r), expected)
    # jiwer (strips edge whitespace, rejects empty references): compare on stripped, non-empty refs.
    kept = [(h.strip(), f.strip()) for h, f in pairs if f.strip()]
    kh, kf = zip(*kept)
    out = jiwer.process_characters(list(kf), list(kh))
    t = batch.cer(kh, kf).totals
    assert (t["substitutions"], t["deletions"], t["insertions"], t["hits"]) == (
        out.substitutions, out.deletions, out.insertions, out.hits)
    assert batch.cer(kh, kf).corpus_rate == pytest.approx(out.cer)


def test_wer_breakdown_matches_jiwer(backend):
    rng = np.random.default_rng(5)
    vocab = ["the", "cat", "sat", "բարև", "的", "😀", "a", "mat"]
    refs, hyps = [], []
    for _ in range(2000):
        ref = [vocab[i] for i in rng.integers(0, len(vocab), rng.integers(1, 15))]
        hyp = [w if rng.random() > 0.3 else vocab[rng.integers(0, len(vocab))] for w in ref]
        if rng.random() < 0.3:
            hyp = hyp[: rng.integers(0, len(hyp) + 1)]
        refs.append(" ".join(ref))
        hyps.append(" ".join(hyp))
    r = batch.wer(hyps, refs)
    for k in range(0, 2000, 97):
        one = jiwer.process_words(refs[k], hyps[k])
        assert [r.substitutions[k], r.deletions[k], r.insertions[k], r.hits[k]] == [
            one.substitutions, one.deletions, one.insertions, one.hits]
    out = jiwer.process_words(refs, hyps)
    t = r.totals
    assert (t["substitutions"], t["deletions"], t["insertions"], t["hits"]) == (
        out.substitutions, out.deletions, out.insertions, out.hits)
    assert r.corpus_rate == pytest.approx(out.wer)


def test_wer_splits_on_any_unicode_whitespace(backend):
    r = batch.wer(["a\u00a0b\tc"], ["a b  c"])
    assert (r.ref_len[0], r.edits[0]) == (3, 0)


def test_rates_and_totals(backend):
    r = batch.cer(["ct", "spurious", ""], ["cat", "", ""])
    assert r.rates.tolist() == [pytest.approx(1 / 3), 8.0, 0.0]
    assert r.totals == {"edits": 9, "ref_len": 3, "substitutions": 0, "deletions": 1, "insertions": 8, "hits": 2}
    assert len(r) == 3


def test_normalize_and_threads(backend):
    r1 = batch.cer(["HELLO", "Wörld"], ["hello", "world"], normalize="lower", threads=1)
    r2 = batch.cer(["HELLO", "Wörld"], ["hello", "world"], normalize="lower", threads=2)
    assert r1.edits.tolist() == r2.edits.tolist() == [0, 1]


def test_thread_count_does_not_change_results(backend):
    pairs = random_pairs(11, 2000)
    a, b = zip(*pairs)
    one = batch.cer(a, b, threads=1)
    many = batch.cer(a, b, threads=2)
    np.testing.assert_array_equal(result_rows(one), result_rows(many))


def test_generators_are_accepted(backend):
    r = batch.cer((s for s in ["ab"]), (s for s in ["abc"]))
    assert r.edits.tolist() == [1]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: batch.cer(["a"], ["a", "b"]), ValueError, "preds has 1 items but refs has 2"),
        (lambda: batch.cer(["a", None], ["a", "b"]), TypeError, r"preds\[1\] must be str, got NoneType"),
        (lambda: batch.wer("abc", ["a"]), TypeError, "preds must be a sequence of strings"),
        (lambda: batch.cer(5, ["a"]), TypeError, "preds must be an iterable"),
        (lambda: batch.levenshtein(["a"], ["\ud800"]), ValueError, r"b\[0\] contains a lone surrogate"),
        (lambda: batch.cer(["a"], ["b"], normalize="nope"), KeyError, "nope"),
        (lambda: batch.cer(["a"], ["b"], threads=-1), ValueError, "threads must be >= 0"),
        (lambda: batch.cer(["a"], ["b"], threads=1.5), TypeError, "threads must be an int"),
    ],
)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_empty_batch(backend):
    r = batch.cer([], [])
    assert len(r) == 0 and np.isnan(r.corpus_rate)
    assert batch.levenshtein([], []).tolist() == []


def test_editops_match_rapidfuzz(backend):
    assert batch.editops("qabxcd", "abycdf") == [("delete", 0, 0), ("replace", 3, 2), ("insert", 6, 5)]
    for ref, hyp in random_pairs(31, 500) + long_pairs(32, 1, length=2500):
        assert batch.editops(ref, hyp) == [tuple(op) for op in Levenshtein.editops(ref, hyp).as_list()]
    with pytest.raises(TypeError, match=r"ref\[0\] must be str"):
        batch.editops(None, "a")
