"""scorekit.metrics.spans: MatchScheme and SpanF1Metric against the spec vectors
(ek-metrics-ocr.md §13), the oracles (seqeval 1.2.2, nervaluate 1.2.1 and ek's own
ek.metrics.spans, which wraps them) on thousands of seeded random inputs, properties of the
batch path, and bad input."""

from __future__ import annotations

import math
import random
import warnings

import ek.metrics.spans as ek_spans
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nervaluate import Evaluator
from seqeval.metrics import f1_score
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.scheme import BILOU, IOB1, IOB2, IOBES, IOE1, IOE2

import scorekit.metrics.spans as spans_module
from doc_examples import run_python_blocks
from ek_doctests import run_ek_doctests
from scorekit.base import Score
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.metrics.spans import TAGGING_SCHEMES, MatchScheme, SpanF1Metric, UnknownTagPrefixError

NERVALUATE = [MatchScheme.STRICT, MatchScheme.EXACT, MatchScheme.PARTIAL, MatchScheme.TYPE]
SEQEVAL_CLASSES = {"IOB2": IOB2, "IOBES": IOBES, "BILOU": BILOU, "IOB1": IOB1, "IOE1": IOE1, "IOE2": IOE2}


def span(label: str, start: int, end: int) -> dict:
    return {"label": label, "start": start, "end": end}


def as_tuple(score) -> tuple:
    """A score of either kit as plain values (ek's Score is another class)."""
    return score.value, score.precision, score.recall, score.f1, score.metric, score.detail


@pytest.fixture(autouse=True)
def _quiet_oracles():
    with warnings.catch_warnings():  # seqeval warns about tags that do not look like entity tags
        warnings.simplefilter("ignore", UserWarning)
        yield


# -- spec vectors (ek-metrics-ocr.md §13.1 and §13.2) -------------------------------------------------

def test_docstring_example_of_the_reference():
    m = SpanF1Metric(scheme=MatchScheme.SEQEVAL_CONLL)
    assert m(["B-PER", "I-PER", "O"], ["B-PER", "I-PER", "O"]).f1 == 1.0
    with pytest.raises(TypeError, match=r"^SpanF1Metric requires an explicit scheme=MatchScheme\.<\.\.\.>; seqeval"):
        SpanF1Metric()


def test_ek_docstring_examples_run_on_scorekit():
    results = run_ek_doctests(ek_spans, spans_module)
    assert sum(r.attempted for r in results.values()) >= 5
    assert not any(r.failed for r in results.values())


def test_conll_vectors():
    m = SpanF1Metric(MatchScheme.SEQEVAL_CONLL)
    assert m(["B-PER", "I-PER", "O", "B-LOC"], ["B-PER", "I-PER", "O", "B-LOC"]).detail["tp"] == 2
    s = m(["B-PER", "I-PER", "O", "O"], ["B-PER", "I-PER", "O", "B-LOC"])
    assert s.detail == {"scheme": "seqeval_conll", "tp": 1, "fp": 0, "fn": 1, "higher_is_better": True,
                        "backend": "seqeval"}
    assert s.f1 == s.value == pytest.approx(2 / 3) and s.metric == "span_f1[seqeval_conll]"
    assert m(["I-PER", "I-PER", "O"], ["B-PER", "I-PER", "O"]).f1 == 1.0  # lenient decoding
    assert m(["B-PER", "E-PER", "O"], ["B-PER", "E-PER", "O"]).detail["tp"] == 1
    wrong_type = m(["B-PER", "I-LOC"], ["B-PER", "I-PER"])
    assert (wrong_type.detail["tp"], wrong_type.detail["fp"], wrong_type.detail["fn"], wrong_type.f1) == (0, 2, 1, 0.0)
    assert m([], []).value == 1.0
    missed, spurious = m(["O"], ["B-PER"]), m(["B-PER"], ["O"])
    assert (missed.detail["fn"], missed.f1, spurious.detail["fp"], spurious.f1) == (1, 0.0, 1, 0.0)


def test_strict_vectors():
    iob2 = SpanF1Metric(MatchScheme.SEQEVAL_STRICT)
    s = iob2(["I-PER", "I-PER", "O"], ["B-PER", "I-PER", "O"])
    assert (s.f1, s.detail["tp"], s.detail["fn"]) == (0.0, 0, 1)
    both_invalid = iob2(["B-PER", "E-PER", "O"], ["B-PER", "E-PER", "O"])  # E- is not an IOB2 prefix
    assert (both_invalid.detail["tp"], both_invalid.detail["fp"], both_invalid.detail["fn"], both_invalid.f1) == (0, 0, 0, 1.0)
    iobes = SpanF1Metric(MatchScheme.SEQEVAL_STRICT, tagging_scheme="IOBES")
    assert iobes(["B-PER", "E-PER", "O"], ["B-PER", "E-PER", "O"]).detail["tp"] == 1
    wrong_type = iob2(["B-PER", "I-LOC"], ["B-PER", "I-PER"]).detail
    assert (wrong_type["tp"], wrong_type["fp"], wrong_type["fn"]) == (0, 1, 1)


@pytest.mark.parametrize("pred, gold, expected", [
    # (pred, gold, {scheme: F1}) from the table of §13.2
    (span("ORG", 8, 16), span("ORG", 0, 16), {"strict": 0.0, "exact": 0.0, "partial": 0.5, "type": 1.0}),
    (span("LOC", 0, 5), span("PER", 0, 5), {"strict": 0.0, "exact": 1.0, "partial": 1.0, "type": 0.0}),
    (span("LOC", 0, 3), span("PER", 0, 5), {"strict": 0.0, "exact": 0.0, "partial": 0.5, "type": 0.0}),
    (span("PER", 10, 12), span("PER", 0, 2), {"strict": 0.0, "exact": 0.0, "partial": 0.0, "type": 0.0}),
    (span("PER", 2, 4), span("PER", 0, 2), {"strict": 0.0, "exact": 0.0, "partial": 0.5, "type": 1.0}),
    (span("PER", 0, 3), span("PER", 0, 5), {"strict": 0.0, "exact": 0.0, "partial": 0.5, "type": 1.0}),
])
def test_span_table(pred, gold, expected):
    for scheme, f1 in expected.items():
        assert SpanF1Metric(scheme)([pred], [gold]).f1 == f1, scheme


def test_span_counts():
    strict = SpanF1Metric("strict")
    assert strict([span("ORG", 8, 16)], [span("ORG", 0, 16)]).detail["incorrect"] == 1
    apart = strict([span("PER", 10, 12)], [span("PER", 0, 2)]).detail
    assert (apart["missed"], apart["spurious"]) == (1, 1)
    touching = strict([span("PER", 2, 4)], [span("PER", 0, 2)]).detail  # inclusive ends overlap at 2
    assert touching["incorrect"] == 1
    partial = SpanF1Metric("partial")([span("PER", 0, 3)], [span("PER", 0, 5)])
    assert (partial.detail["partial"], partial.precision, partial.recall, partial.f1) == (1, 0.5, 0.5, 0.5)
    assert strict([], []).value == 1.0
    spurious, missed = strict([span("PER", 0, 1)], []), strict([], [span("PER", 0, 1)])
    assert (spurious.f1, spurious.detail["spurious"], missed.f1, missed.detail["missed"]) == (0.0, 1, 0.0, 1)


def test_three_span_document():
    pred = [span("PER", 0, 2), span("LOC", 4, 6), span("ORG", 10, 12)]
    gold = [span("PER", 0, 2), span("LOC", 4, 7), span("MISC", 20, 22)]
    strict = SpanF1Metric("strict")(pred, gold)
    assert {k: strict.detail[k] for k in ("correct", "incorrect", "missed", "spurious")} == {
        "correct": 1, "incorrect": 1, "missed": 1, "spurious": 1}
    assert strict.f1 == pytest.approx(1 / 3) and SpanF1Metric("exact")(pred, gold).f1 == pytest.approx(1 / 3)
    partial = SpanF1Metric("partial")(pred, gold)
    assert (partial.detail["correct"], partial.detail["partial"], partial.f1) == (1, 1, 0.5)
    type_ = SpanF1Metric("type")(pred, gold)
    assert (type_.detail["correct"], type_.detail["missed"], type_.detail["spurious"]) == (2, 1, 1)
    assert type_.f1 == pytest.approx(2 / 3)


def test_corpus_is_micro_not_mean():
    m = SpanF1Metric(MatchScheme.STRICT)
    a, b, c, d = span("A", 0, 1), span("B", 1, 2), span("C", 2, 3), span("D", 3, 4)
    doc1 = m([a, b], [a, b, c, d])
    doc2 = m([a, span("X", 5, 6), span("Y", 6, 7), span("Z", 7, 8)], [a])
    assert (doc1.f1, doc2.f1) == (pytest.approx(2 / 3), pytest.approx(0.4))
    assert m.aggregate([doc1, doc2]) == pytest.approx(6 / 11)
    report = m.score_corpus([[a, b], [a, span("X", 5, 6), span("Y", 6, 7), span("Z", 7, 8)]], [[a, b, c, d], [a]])
    assert report.aggregate == m.aggregate([doc1, doc2]) and list(report.scores) == [doc1, doc2]
    assert report.detail == {"scheme": "strict", "backend": "nervaluate", "correct": 3, "incorrect": 0,
                             "partial": 0, "missed": 2, "spurious": 3, "possible": 5, "actual": 6}


def test_mixed_backends_are_rejected_but_not_mixed_schemes():
    seqeval_score = SpanF1Metric("seqeval_conll")(["B-PER"], ["B-PER"])
    strict_score = SpanF1Metric("strict")([span("PER", 0, 1)], [span("PER", 0, 1)])
    partial_score = SpanF1Metric("partial")([span("PER", 0, 0)], [span("PER", 0, 1)])
    with pytest.raises(ValueError, match=r"^Cannot micro-aggregate mixed span-F1 backends \['nervaluate', 'seqeval'\]"):
        SpanF1Metric("strict").aggregate([seqeval_score, strict_score])
    assert SpanF1Metric("strict").aggregate([strict_score, partial_score]) == pytest.approx(0.75)
    assert SpanF1Metric("strict").aggregate([]) == 1.0


@pytest.mark.parametrize("scheme", list(MatchScheme))
def test_every_scheme_scores_identical_inputs_one(scheme):
    m = SpanF1Metric(scheme)
    same = (["B-PER", "O"], ["B-PER", "O"]) if scheme.value.startswith("seqeval") else ([span("PER", 0, 1)],) * 2
    assert m(*same).value == 1.0 and m(*same).metric == f"span_f1[{scheme.value}]"


def test_registered_names():
    """The lead registers ``span_f1.<scheme.value>`` in scorekit.metrics.builtins (spec §0.7)."""
    from scorekit.registry import get

    for scheme in MatchScheme:
        metric = get("metrics", f"span_f1.{scheme.value}")
        assert isinstance(metric, SpanF1Metric) and metric.scheme is scheme


def test_match_scheme_and_constructor():
    assert [s.value for s in MatchScheme] == ["seqeval_conll", "seqeval_strict", "strict", "exact", "partial", "type"]
    assert MatchScheme.STRICT == "strict" and SpanF1Metric("type").scheme is MatchScheme.TYPE
    assert SpanF1Metric.name == "span_f1"
    with pytest.raises(ValueError, match=r"^'bogus' is not a valid MatchScheme$"):
        SpanF1Metric("bogus")
    with pytest.raises(ValueError, match=r"^tagging_scheme must be one of \('IOB2', 'IOBES', 'BILOU', 'IOB1', "
                                         r"'IOE1', 'IOE2'\), got 'NONSENSE'$"):
        SpanF1Metric("strict", tagging_scheme="NONSENSE")
    assert repr(SpanF1Metric("exact")) == "SpanF1Metric(scheme=MatchScheme.EXACT, tagging_scheme='IOB2')"


# -- differential tests against the oracles ---------------------------------------------------------

TYPES = ["PER", "LOC", "ORG"]
ODD_TAGS = ["O", ".", ".-PER", "B", "I", "PER", "X-PER", "U-PER", "L-LOC", "B-PER-X", "B--PER", "O-PER",
            "E-", "S-", "-PER", "B-_", "I-PER-X", "Ü-LOC"]


def random_tags(rng: random.Random, letters: str, odd: float, length: int) -> list[str]:
    tags = []
    for _ in range(length):
        if rng.random() < odd:
            tags.append(rng.choice(ODD_TAGS))
        else:
            letter = rng.choice(letters)
            tags.append("O" if letter == "O" else f"{letter}-{rng.choice(TYPES)}")
    return tags


def random_tag_pairs(seed: int, count: int, *, odd: float, strict_letters: bool) -> list[tuple[list, list]]:
    """Pairs of tag sequences: well-formed and malformed under every scheme (I- with no B-, E- under
    IOB2 …), lengths 0–12 and not always equal, the gold often a noisy copy of the prediction."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        letters = rng.choice(["OBI", "OBIES", "OBILU", "OIE", "OBIESUL"])
        pred = random_tags(rng, letters, odd, rng.randint(0, 12))
        if rng.random() < 0.5:
            gold = [t if rng.random() < 0.8 else random_tags(rng, letters, 0, 1)[0] for t in pred]
        else:
            gold = random_tags(rng, letters, odd, rng.randint(0, 12))
        if strict_letters:
            pred, gold = ([t for t in tags if t[0] in "IOBESUL"] for tags in (pred, gold))
        pairs.append((pred, gold))
    return pairs


def random_span_pairs(seed: int, count: int) -> list[tuple[list, list]]:
    """Span lists of 0–6 spans over 3 labels, lengths 1 to 251 (around nervaluate's 1% overlap
    threshold), the prediction a shuffled, perturbed subset of the gold plus random spans, with
    duplicates and nested spans."""
    rng = random.Random(seed)

    def spans() -> list[dict]:
        out = []
        for _ in range(rng.randint(0, 6)):
            start = rng.randint(0, 20)
            out.append(span(rng.choice("ABC"), start, start + rng.choice([0, 0, 1, 2, 3, 5, 99, 100, 101, 250])))
        return out

    pairs = []
    for _ in range(count):
        gold = spans()
        if gold and rng.random() < 0.2:
            gold.append(dict(rng.choice(gold)))
        pred = [dict(s) for s in gold if rng.random() < 0.6]
        for s in pred:
            r = rng.random()
            if r < 0.2:
                s["label"] = rng.choice("ABC")
            elif r < 0.4:
                s["start"] = max(0, s["start"] + rng.randint(-2, 2))
                s["end"] = max(s["start"], s["end"] + rng.randint(-2, 2))
        pred += spans()[: rng.randint(0, 3)]
        rng.shuffle(pred)
        pairs.append((pred, gold))
    return pairs


def test_conll_matches_ek_on_random_sequences():
    pairs = random_tag_pairs(17, 3000, odd=0.2, strict_letters=False)
    ours, theirs = SpanF1Metric("seqeval_conll"), ek_spans.SpanF1Metric("seqeval_conll")
    batch = ours.score_batch(pairs)
    for (pred, gold), got in zip(pairs, batch):
        expected = theirs(pred, gold)
        assert as_tuple(got) == as_tuple(expected), (pred, gold)
    assert ours.aggregate(batch) == theirs.aggregate([theirs(p, g) for p, g in pairs])
    assert as_tuple(ours(*pairs[5])) == as_tuple(batch[5])


@pytest.mark.parametrize("tagging_scheme", TAGGING_SCHEMES)
def test_strict_matches_ek_on_random_sequences(tagging_scheme):
    pairs = random_tag_pairs(23, 1000, odd=0.1, strict_letters=True)
    ours = SpanF1Metric("seqeval_strict", tagging_scheme=tagging_scheme)
    theirs = ek_spans.SpanF1Metric("seqeval_strict", tagging_scheme=tagging_scheme)
    report = ours.score_corpus([p for p, _ in pairs], [g for _, g in pairs])
    expected = [theirs(p, g) for p, g in pairs]
    assert [as_tuple(s) for s in report.scores] == [as_tuple(s) for s in expected]
    assert report.aggregate == theirs.aggregate(expected)


@pytest.mark.parametrize("scheme", NERVALUATE)
def test_spans_match_ek_on_random_documents(scheme):
    pairs = random_span_pairs(31, 1500)
    ours, theirs = SpanF1Metric(scheme), ek_spans.SpanF1Metric(scheme)
    batch = ours.score_batch(pairs)
    expected = [theirs(p, g) for p, g in pairs]
    assert [as_tuple(s) for s in batch] == [as_tuple(s) for s in expected]
    assert ours.aggregate(batch) == theirs.aggregate(expected)


def test_conll_entities_match_seqeval_get_entities_on_a_corpus():
    """seqeval's corpus F1 flattens the sentences with an 'O' between them; with B/I/E/S/O letters that
    is the micro-F1 of the per-sentence counts."""
    rng = random.Random(5)
    golds = [random_tags(rng, "OOOBIES", 0, rng.randint(1, 15)) for _ in range(2000)]
    preds = [[t if rng.random() < 0.85 else rng.choice(["O", "B-PER", "I-LOC", "E-ORG"]) for t in g] for g in golds]
    assert SpanF1Metric("seqeval_conll").score_corpus(preds, golds).aggregate == pytest.approx(
        f1_score(golds, preds), abs=1e-15)
    report = SpanF1Metric("seqeval_conll").score_corpus(preds[:50], golds[:50])
    for pred, gold, s in zip(preds, golds, report.scores):
        p, g = set(get_entities(pred)), set(get_entities(gold))
        assert (s.detail["tp"], s.detail["fp"], s.detail["fn"]) == (len(p & g), len(p - g), len(g - p))


@pytest.mark.parametrize("tagging_scheme", TAGGING_SCHEMES)
def test_strict_corpus_matches_seqeval_strict_mode(tagging_scheme):
    """On sequences valid under the scheme, seqeval's own strict corpus F1 equals ours."""
    ours = SpanF1Metric("seqeval_strict", tagging_scheme=tagging_scheme)
    allowed = {"IOB2": "OOBI", "IOB1": "OOBI", "IOBES": "OOBIES", "BILOU": "OOBILU", "IOE1": "OOIE", "IOE2": "OOIE"}
    rng = random.Random(11)
    golds = [random_tags(rng, allowed[tagging_scheme], 0, rng.randint(1, 12)) for _ in range(1500)]
    preds = [[t if rng.random() < 0.8 else random_tags(rng, allowed[tagging_scheme], 0, 1)[0] for t in g]
             for g in golds]
    expected = f1_score(golds, preds, mode="strict", scheme=SEQEVAL_CLASSES[tagging_scheme])
    assert ours.score_corpus(preds, golds).aggregate == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("scheme, key", [("strict", "strict"), ("exact", "exact"), ("partial", "partial"),
                                         ("type", "ent_type")])
def test_span_counts_match_nervaluate_over_a_corpus(scheme, key):
    pairs = random_span_pairs(47, 800)
    preds, golds = [p for p, _ in pairs], [g for _, g in pairs]
    labels = sorted({s["label"] for doc in preds + golds for s in doc})
    overall = Evaluator(golds, preds, tags=labels).evaluate()["overall"][key]
    totals = SpanF1Metric(scheme).score_corpus(preds, golds).detail
    assert (totals["correct"], totals["incorrect"], totals["partial"], totals["missed"], totals["spurious"],
            totals["possible"], totals["actual"]) == (overall.correct, overall.incorrect, overall.partial,
                                                      overall.missed, overall.spurious, overall.possible, overall.actual)


# -- the batch path -----------------------------------------------------------------------------------

def test_chunking_does_not_change_results(monkeypatch):
    pairs = random_tag_pairs(3, 400, odd=0.2, strict_letters=False)
    pairs.append((["B-PER"] + ["I-PER"] * 300, ["B-PER"] * 150 + ["O"] * 151))  # a long sentence
    preds, golds = [p for p, _ in pairs], [g for _, g in pairs]
    metric = SpanF1Metric("seqeval_conll")
    whole = [as_tuple(s) for s in metric.score_corpus(preds, golds).scores]
    monkeypatch.setattr(spans_module, "_CHUNK_TOKENS", 7)
    assert [as_tuple(s) for s in metric.score_corpus(preds, golds).scores] == whole
    monkeypatch.setattr(spans_module, "_PAIR_BUDGET", 3)
    span_pairs = random_span_pairs(8, 200)
    for scheme in NERVALUATE:
        m = SpanF1Metric(scheme)
        assert [as_tuple(m(p, g)) for p, g in span_pairs] == [as_tuple(s) for s in m.score_batch(span_pairs)]


def test_more_than_256_distinct_tags():
    types = [f"T{k}" for k in range(200)]
    gold = [f"B-{t}" for t in types] + [f"I-{t}" for t in types]
    pred = gold[::-1]
    for scheme in ("seqeval_conll", "seqeval_strict"):
        ours, theirs = SpanF1Metric(scheme)(pred, gold), ek_spans.SpanF1Metric(scheme)(pred, gold)
        assert as_tuple(ours) == as_tuple(theirs)


def test_nested_tag_lists_are_flattened_as_seqeval_does():
    m = SpanF1Metric("seqeval_conll")
    assert m([["B-PER"], ["I-PER"]], ["B-PER", "O", "B-PER", "O"]).detail["tp"] == 2
    assert as_tuple(m([["B-PER", "I-PER"], ["B-LOC"]], ["B-PER", "I-PER", "O", "B-LOC"])) == as_tuple(
        ek_spans.SpanF1Metric("seqeval_conll")([["B-PER", "I-PER"], ["B-LOC"]], ["B-PER", "I-PER", "O", "B-LOC"]))


def test_sequences_of_different_lengths_compare_entity_sets():
    m, theirs = SpanF1Metric("seqeval_conll"), ek_spans.SpanF1Metric("seqeval_conll")
    assert as_tuple(m(["B-PER", "I-PER"], ["B-PER", "I-PER", "O", "B-LOC"])) == as_tuple(
        theirs(["B-PER", "I-PER"], ["B-PER", "I-PER", "O", "B-LOC"]))


def test_inputs_other_than_lists():
    m = SpanF1Metric("seqeval_conll")
    assert m(("B-PER", "I-PER"), np.array(["B-PER", "I-PER"])).f1 == 1.0
    assert m(iter(["B-PER"]), (t for t in ["B-PER"])).f1 == 1.0
    report = m.score_corpus((s for s in [("B-PER",), ["O"]]), [np.array(["B-PER"]), []])
    assert [s.detail["tp"] for s in report.scores] == [1, 0] and report.n == 2
    numpy_ints = SpanF1Metric("exact")([{"label": "A", "start": np.int64(1), "end": np.int32(2)}], [span("A", 1, 2)])
    assert numpy_ints.f1 == 1.0


def test_span_scores_sequence():
    report = SpanF1Metric("seqeval_conll").score_corpus([["B-PER"], ["O"], ["B-LOC"]], [["B-PER"], ["B-PER"], ["O"]])
    scores = report.scores
    assert len(scores) == 3 and scores[-1] == scores[2] and scores[0:2] == [scores[0], scores[1]]
    assert [s.f1 for s in scores] == [1.0, 0.0, 0.0] and isinstance(scores[0], Score)
    assert scores == list(scores) and "3 span_f1[seqeval_conll] scores" in repr(scores)
    with pytest.raises(IndexError):
        scores[3]
    assert report.aggregate == pytest.approx(0.5) and report.metric == "span_f1"
    empty = SpanF1Metric("strict").score_corpus([], [])
    assert (empty.n, empty.aggregate, list(empty.scores)) == (0, None, [])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(["O", "B-A", "I-A", "E-A", "S-B", "I-B", "X-A", "."]), max_size=8),
                          st.lists(st.sampled_from(["O", "B-A", "I-A", "S-B", "B-B"]), max_size=8)), max_size=12))
def test_batch_equals_one_call_at_a_time(pairs):
    for scheme in ("seqeval_conll", "seqeval_strict"):
        m = SpanF1Metric(scheme, tagging_scheme="IOBES")
        if scheme == "seqeval_strict":
            pairs = [([t for t in p if t[0] in "IOBES"], g) for p, g in pairs]
        batch = m.score_batch(pairs)
        assert [as_tuple(s) for s in batch] == [as_tuple(m(p, g)) for p, g in pairs]
        if pairs:
            assert m.aggregate(batch) == m.score_corpus([p for p, _ in pairs], [g for _, g in pairs]).aggregate


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("AB"), st.integers(0, 30), st.integers(0, 40)), max_size=8),
       st.sampled_from(NERVALUATE))
def test_identical_span_lists_are_perfect_and_counts_add_up(raw, scheme):
    doc = [span(label, start, start + length) for label, start, length in raw]
    m = SpanF1Metric(scheme)
    same = m(doc, doc)
    assert same.value == 1.0 and same.detail["correct"] == len(doc)
    shifted = m([dict(s, start=s["start"] + 1, end=s["end"] + 1) for s in doc], doc).detail
    assert shifted["possible"] == len(doc) == shifted["actual"]
    assert shifted["correct"] + shifted["incorrect"] + shifted["partial"] + shifted["missed"] == len(doc)


# -- bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("scheme", ["seqeval_conll", "seqeval_strict"])
def test_bad_tags(scheme):
    m = SpanF1Metric(scheme)
    with pytest.raises(InvalidTypeError, match=r"^pred tag at position 1 must be a str, got 3 \(int\)"):
        m(["O", 3], ["O"])
    with pytest.raises(InvalidTypeError, match=r"^gold tag at position 0 must be a str, got None"):
        m(["O"], [None])
    with pytest.raises(InvalidValueError, match=r"^pred tag at position 1 is the empty string"):
        m(["O", ""], ["O"])
    with pytest.raises(InvalidTypeError, match=r"^pred must be a list of tags, got 'B-PER' \(str\)"):
        m("B-PER", ["B-PER"])
    with pytest.raises(InvalidTypeError, match=r"^gold must be a list of tags, got 5 \(int\)"):
        m(["O"], 5)
    with pytest.raises(InvalidTypeError, match=r"^golds\[1\] tag at position 0 must be a str, got \{\}"):
        m.score_corpus([["O"], ["O"]], [["O"], [{}]])
    with pytest.raises(InvalidValueError, match=r"^preds and golds differ in length: 2 predictions for 1 golds"):
        m.score_corpus([["O"], ["O"]], [["O"]])
    with pytest.raises(InvalidTypeError, match=r"^preds must be a sequence whose items are each a list of tags"):
        m.score_corpus("O", ["O"])
    with pytest.raises(InvalidTypeError, match=r"^golds\[0\] must be a list of tags, got 'O'"):
        m.score_corpus([["O"]], ["O"])


def test_nested_lists_mixed_with_tags():
    with pytest.raises(InvalidTypeError, match=r"^pred mixes nested tag lists with a single tag 'O' \(str\) at position 1"):
        SpanF1Metric("seqeval_conll")([["B-PER"], "O"], ["O"])
    with pytest.raises(InvalidTypeError, match=r"^pred tag at position 0 must be a str, got \['B-PER'\] \(list\)"):
        SpanF1Metric("seqeval_strict")([["B-PER"]], ["O"])


def test_unknown_prefix_under_strict_decoding():
    with pytest.raises(UnknownTagPrefixError) as raised:
        SpanF1Metric("seqeval_strict").score_corpus([["O"], ["B-PER", "X-PER"]], [["O"], ["O"]])
    assert isinstance(raised.value, KeyError) and isinstance(raised.value, ValueError)
    assert str(raised.value).startswith("preds[1] tag 'X-PER' at position 1 has the prefix 'X', which is none of")
    with pytest.raises(KeyError):  # what the reference raises
        ek_spans.SpanF1Metric("seqeval_strict")(["B-PER", "X-PER"], ["O"])
    assert SpanF1Metric("seqeval_conll")(["X-PER"], ["X-PER"]).f1 == 1.0  # CoNLL decoding accepts any letter


@pytest.mark.parametrize("pred, error, message", [
    ([("PER", 0, 1)], InvalidTypeError, r"^pred\[0\] must be a span mapping with keys 'label', 'start', 'end', got"),
    ([{"label": "P", "start": 1}], InvalidValueError, r"^pred\[0\] span is missing the key\(s\) \['end'\]"),
    ([span("P", 1, 2), span("P", 1.0, 2)], ValueError, r"^pred\[1\] 'start' must be an int, got 1\.0 \(float\)"),
    ([span("P", True, 2)], TypeError, r"^pred\[0\] 'start' must be an int, got True \(bool\)"),
    ([span(1, 1, 2)], ValueError, r"^pred\[0\] 'label' must be a str, got 1 \(int\)"),
    ([span("P", 3, 1)], InvalidValueError, r"^pred\[0\] has end 1 before start 3 \(ends are inclusive\)"),
    ([span("P", 0, 2**70)], InvalidValueError, r"^pred\[0\] 'end' must lie within ±2\*\*50, got 1180591620717411303424"),
    ([span("P", -(2**60), 0)], InvalidValueError, r"^pred\[0\] 'start' must lie within ±2\*\*50"),
    ({"label": "P", "start": 0, "end": 1}, InvalidTypeError, r"^pred must be a list of span mappings, got \{"),
    (["B-PER"], InvalidTypeError, r"^pred\[0\] must be a span mapping"),
])
def test_bad_spans(pred, error, message):
    with pytest.raises(error, match=message):
        SpanF1Metric("strict")(pred, [span("P", 0, 1)])


def test_bad_spans_in_a_corpus_name_the_document():
    with pytest.raises(InvalidValueError, match=r"^golds\[2\]\[1\] span is missing the key\(s\) \['label'\]"):
        SpanF1Metric("type").score_corpus([[], [], []], [[], [span("A", 0, 1)], [span("A", 0, 1), {"start": 0, "end": 1}]])


def test_bad_arguments():
    m = SpanF1Metric("partial")
    with pytest.raises(InvalidValueError, match=r"^pairs\[1\] must be a \(pred, gold\) pair"):
        m.score_batch([([], []), ([],)])
    with pytest.raises(InvalidTypeError, match=r"^scores\[0\] must be a Score with a detail mapping"):
        m.aggregate([0.5])
    with pytest.raises(TypeError, match="requires an explicit scheme"):
        SpanF1Metric(None, tagging_scheme="IOBES")
    with pytest.raises(InvalidValueError, match="is not a valid MatchScheme"):
        SpanF1Metric(["strict"])
    assert math.isclose(m.aggregate([m([span("A", 0, 1)], [span("A", 0, 3)])]), 0.5)


def test_documentation_page():
    run_python_blocks("spans.md")
