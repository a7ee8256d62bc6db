"""Fuzzing the text side of the public API with hostile values (``fuzz_harness``): ``score`` and
``evaluate`` for the string and record metrics, the ``batch`` functions, the hyphenation joiner,
the schwa distance, the normalizers and the OCR text comparison. Each call must give a valid result
(checked against a plain dynamic-programming oracle where one applies) or a named error,
identically on both backends.
"""

from __future__ import annotations

import math
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

import scorekit as ek
from scorekit import batch, canonicalize
from scorekit.metrics.fields import FieldMetric
from scorekit.ocr import compare_texts
from scorekit.ocr.metrics import METRICS
from scorekit.text import JoinedText, join_lines_with_hyphenation, schwa_distance, schwa_distance_batch

from fuzz_harness import (
    NORMALIZER_NAMES, Hostile, any_text, hostile_objects, levenshtein_dp, normalize_values, on_both_backends, outcome,
    scalar_text, text_or_wrong, texts, threads_values, wrong_values,
)

#: Lengths up to which the quadratic Python oracle is run.
ORACLE_MAX = 60


def is_scalar_text(x) -> bool:
    return isinstance(x, str) and not any(0xD800 <= ord(c) <= 0xDFFF for c in x)


def score_view(s):
    return (s.value, s.metric, dict(s.detail))


def check_text_score(s, pred, gold, metric) -> None:
    d = s.detail
    assert s.metric == metric and d["higher_is_better"] is False
    assert math.isfinite(s.value) and s.value >= 0
    if d["ref_len"]:
        assert s.value == d["edits"] / d["ref_len"]
        assert d["hits"] >= 0 and d["substitutions"] + d["deletions"] + d["insertions"] == d["edits"]
    else:
        assert s.value == d["edits"]
    if is_scalar_text(pred) and is_scalar_text(gold) and len(pred) + len(gold) <= 2 * ORACLE_MAX:
        a, b = (gold, pred) if metric == "cer" else (gold.split(), pred.split())
        assert d["edits"] == levenshtein_dp(a, b)
        assert d["ref_len"] == len(a)


@given(text_or_wrong, text_or_wrong, st.sampled_from(["cer", "wer"]), normalize_values)
def test_score_text_metrics(pred, gold, metric, normalize):
    out = on_both_backends(lambda: ek.score(pred, gold, metric=metric, normalize=normalize), score_view)
    if out[0] == "ok" and normalize is None:
        check_text_score(ek.score(pred, gold, metric=metric), pred, gold, metric)


slice_labels = st.one_of(st.none(), st.integers(0, 2), st.sampled_from(["1", 1.0, True, (1, [2])]), hostile_objects())


@given(st.lists(st.tuples(text_or_wrong, text_or_wrong, slice_labels), max_size=8),
       st.sampled_from(["cer", "wer", None]), threads_values, normalize_values)
def test_evaluate_text_metrics(cases, metric, threads, normalize):
    def run():
        return ek.evaluate(cases, metric=metric, threads=threads, normalize=normalize)

    def view(r):
        return (r.metric, r.n, r.aggregate, list(r.per_slice.items()), [score_view(s) for s in r.scores], r.detail)

    out = on_both_backends(run, view)
    if out[0] != "ok":
        return
    report = run()
    assert report.n == len(cases) == len(report.scores)
    if not cases:
        return
    if report.metric == "fields":  # metric=None on records picks the field metric
        assert 0.0 <= report.aggregate <= 1.0
        return
    edits = sum(s.detail["edits"] for s in report.scores)
    ref_len = sum(s.detail["ref_len"] for s in report.scores)
    if ref_len:
        assert report.aggregate == edits / ref_len
    else:
        assert math.isnan(report.aggregate)
    labelled = {}
    for (_, _, label), s in zip(cases, report.scores):
        if label is not None:
            acc = labelled.setdefault(label, [0, 0])
            acc[0] += s.detail["edits"]
            acc[1] += s.detail["ref_len"]
    assert list(report.per_slice) == list(labelled)
    for label, (e, n) in labelled.items():
        assert same_rate(report.per_slice[label], e / n if n else math.nan)


def same_rate(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


records = st.dictionaries(st.one_of(scalar_text, st.integers(0, 3)),
                          st.one_of(text_or_wrong, st.integers(0, 3)), max_size=5)


@given(st.one_of(records, wrong_values), st.one_of(records, wrong_values), normalize_values)
def test_field_metric(pred, gold, normalize):
    out = outcome(lambda: ek.score(pred, gold, metric="fields", normalize=normalize))
    if out[0] == "ok":
        s = out[1]
        assert 0.0 <= s.value <= 1.0 and s.value == s.f1
        assert 0.0 <= s.precision <= 1.0 and 0.0 <= s.recall <= 1.0
        assert s.detail["tp"] + s.detail["fn"] == len(gold)


@given(st.lists(st.tuples(records, records), max_size=5))
def test_evaluate_fields_aggregate(cases):
    out = outcome(lambda: ek.evaluate(cases, metric="fields"))
    if out[0] == "ok" and cases:
        report = out[1]
        assert report.aggregate == FieldMetric().aggregate(report.scores)
        assert 0.0 <= report.aggregate <= 1.0


@given(st.lists(text_or_wrong, max_size=6), st.lists(text_or_wrong, max_size=6), threads_values)
def test_batch_levenshtein(a, b, threads):
    out = on_both_backends(lambda: batch.levenshtein(a, b, threads=threads))
    if out[0] == "ok":
        for x, y, d in zip(a, b, out[1].tolist()):
            if max(len(x), len(y)) <= ORACLE_MAX:
                assert d == levenshtein_dp(x, y)


@given(st.lists(text_or_wrong, max_size=6), st.lists(text_or_wrong, max_size=6),
       st.sampled_from(["cer", "wer"]), normalize_values, threads_values)
def test_batch_error_rates(preds, refs, mode, normalize, threads):
    function = batch.cer if mode == "cer" else batch.wer
    out = on_both_backends(lambda: function(preds, refs, normalize=normalize, threads=threads),
                           lambda r: (r.ref_len, r.substitutions, r.deletions, r.insertions))
    if out[0] == "ok":
        result = function(preds, refs, normalize=normalize, threads=threads)
        assert (result.hits >= 0).all() and (result.edits >= 0).all()
        rates = result.rates
        assert bool(((rates >= 0) & (rates < math.inf)).all())
        if normalize is None:
            for k, (p, r) in enumerate(zip(preds, refs)):
                check_text_score(ek.score(p, r, metric=mode), p, r, mode)
                assert ek.score(p, r, metric=mode).detail["edits"] == int(result.edits[k])


def replay(ref: str, hyp: str, ops) -> str:
    """Apply editops (positions in ``ref``/``hyp``) to ``ref``."""
    out, i = [], 0
    for op, ref_pos, hyp_pos in ops:
        out.extend(ref[i:ref_pos])
        i = ref_pos
        if op == "replace":
            out.append(hyp[hyp_pos])
            i += 1
        elif op == "delete":
            i += 1
        else:
            assert op == "insert"
            out.append(hyp[hyp_pos])
    out.extend(ref[i:])
    return "".join(out)


@given(text_or_wrong, text_or_wrong)
def test_editops_replay(ref, hyp):
    out = on_both_backends(lambda: batch.editops(ref, hyp))
    if out[0] == "ok":
        ops = out[1]
        assert replay(ref, hyp, ops) == hyp
        if max(len(ref), len(hyp)) <= ORACLE_MAX:
            assert len(ops) == levenshtein_dp(ref, hyp)


joined_texts = st.builds(lambda t, joins: JoinedText(t, tuple(sorted(j % (len(t) + 1) for j in joins))),
                   scalar_text, st.lists(st.integers(0, 40), max_size=3))
schwa_inputs = st.one_of(texts, joined_texts, wrong_values)
schwa_values = st.one_of(st.just("\u0568\u0538"), any_text, wrong_values)


@given(schwa_inputs, schwa_inputs, schwa_values)
def test_schwa_distance(gt, pred, schwa):
    out = on_both_backends(lambda: schwa_distance(gt, pred, schwa=schwa))
    if out[0] == "ok":
        a = gt.text if isinstance(gt, JoinedText) else gt
        b = pred.text if isinstance(pred, JoinedText) else pred
        assert 0 <= out[1] <= levenshtein_dp(a, b) if max(len(a), len(b)) <= ORACLE_MAX else out[1] >= 0


@given(st.lists(schwa_inputs, max_size=5), st.lists(schwa_inputs, max_size=5),
       st.one_of(st.none(), st.lists(st.lists(st.integers(-2, 40), max_size=3), max_size=5), wrong_values),
       threads_values)
def test_schwa_batch_and_cer(gts, preds, gt_joins, threads):
    out = on_both_backends(lambda: schwa_distance_batch(gts, preds, gt_joins, threads=threads))
    if out[0] == "ok":
        assert (out[1] >= 0).all()
        cer = on_both_backends(lambda: batch.schwa_cer(gts, preds, threads=threads))
        assert cer[0] == "ok" and (cer[1][1] >= 0).all()


@given(st.one_of(any_text, st.lists(text_or_wrong, max_size=6), wrong_values))
def test_join_lines_with_hyphenation(value):
    out = outcome(lambda: join_lines_with_hyphenation(value))
    if out[0] == "ok":
        result = out[1]
        assert isinstance(result.text, str)
        assert list(result.joins) == sorted(result.joins)
        assert all(0 < j <= len(result.text) for j in result.joins)
        if isinstance(value, str):
            assert "\n" not in result.text and "\r" not in result.text


@given(st.sampled_from(NORMALIZER_NAMES), st.one_of(any_text, wrong_values))
def test_normalizers(name, value):
    function = ek.registry.get("normalizers", name)
    out = outcome(lambda: function(value))
    if isinstance(value, str):
        assert out[0] == "ok" and isinstance(out[1], str)
        assert function(out[1]) == out[1] or name in ("lower", "nfkc")  # casefold/NFKC need not be idempotent
    else:  # a named error, whose message renders even a value with a hostile __repr__
        assert out[:2] == ("error", "InvalidTypeError")


@given(st.one_of(normalize_values, st.lists(st.one_of(st.sampled_from(NORMALIZER_NAMES), wrong_values), max_size=3)),
       st.one_of(any_text, wrong_values))
def test_canonicalizer_pipelines(normalize, value):
    out = outcome(lambda: canonicalize.resolve_canonicalizer(normalize))
    if out[0] == "ok" and out[1] is not None:
        result = outcome(lambda: out[1](value))
        if result[0] == "ok" and isinstance(out[1], canonicalize.Canonicalizer):
            assert isinstance(result[1], str)


def test_hostile_objects_reach_named_errors():
    """The dunder methods of a hostile object raise its own error or a named one, never another."""
    for mode in ("eq", "hash", "stop", "str", "str-type", "repr", "len", "text", "text-int", "plain"):
        h = Hostile(mode)
        for call in (lambda: ek.score(h, "a", metric="cer"), lambda: ek.evaluate([("a", "a", h)], metric="cer"),
                     lambda: batch.cer([h], ["a"]), lambda: ek.score({"k": h}, {"k": "a"}, metric="fields")):
            outcome(call)


ocr_metric_choices = st.one_of(st.lists(st.sampled_from(METRICS), max_size=5).map(tuple),
                               st.sampled_from(["cer", ("ter",), None, (Hostile("eq"),)]))


@given(text_or_wrong, text_or_wrong, ocr_metric_choices)
def test_ocr_compare_texts(gt, ocr, metrics):
    """``scorekit.ocr.compare_texts``: the same figures on both backends (the compiled grapheme
    reader and kernels, or the regex reader and the Numba twins), or a named error; figures that
    hold together (CER from its counts, bow_wer ≤ wer, fca in 0..1)."""
    out = on_both_backends(lambda: compare_texts(gt, ocr, metrics=metrics))
    if out[0] != "ok":
        return
    c = out[1]
    if c.cer is not None:
        assert c.cer == (c.char_edits / c.n_characters if c.n_characters else (math.inf if c.char_edits else 0))
    if c.wer is not None and c.bow_wer is not None:
        assert c.bow_wer <= c.wer
    if c.alignment is not None:
        assert "".join(g for g, _, _ in c.alignment) == unicodedata.normalize("NFC", gt)
    assert c.fca is None or 0.0 <= c.fca <= 1.0
