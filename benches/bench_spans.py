"""Side-by-side benchmark of span F1 (issue #17): scorekit.metrics.spans against seqeval 1.2.2,
nervaluate 1.2.1 and the reference kit ek (which calls them one sentence at a time).

The corpus: 100,000 gold sentences of BIO tags over four types (5–30 tags, 1% of them 500–2,000
tags long), and predictions that change each tag with probability 0.05. The span schemes score the
same entities as ``{"label", "start", "end"}`` span lists (inclusive ends).

* seqeval: ``f1_score(golds, preds)`` (CoNLL) and ``f1_score(..., mode="strict", scheme=IOB2)``, one
  call over the corpus, against ``SpanF1Metric(...).score_corpus(preds, golds)``;
* nervaluate: ``Evaluator(golds, preds, tags).evaluate()`` (all four schemes at once, one call)
  against ``score_corpus`` for each span scheme;
* ek: ``SpanF1Metric`` called per sentence, then ``aggregate`` (CoNLL, on the first 20,000 sentences).

Each corpus F1 is checked equal to the peer's. Times are CPU seconds of this process (the machine
is shared), the best of ``--repeats`` runs for scorekit and one run for each peer. Usage:

    python benches/bench_spans.py [--sentences 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
import warnings
from datetime import datetime, timezone

import ek.metrics.spans as ek_spans
from nervaluate import Evaluator
from seqeval.metrics import f1_score
from seqeval.scheme import IOB2

from scorekit.metrics.spans import MatchScheme, SpanF1Metric

TYPES = ["PER", "LOC", "ORG", "MISC"]


def gold_sentence(rng: random.Random, length: int) -> list[str]:
    tags: list[str] = []
    while len(tags) < length:
        if rng.random() < 0.8:
            tags.append("O")
            continue
        kind = rng.choice(TYPES)
        size = min(rng.randint(1, 3), length - len(tags))
        tags += [f"B-{kind}"] + [f"I-{kind}"] * (size - 1)
    return tags


def corpus(n: int, seed: int = 17) -> tuple[list[list[str]], list[list[str]]]:
    """``(preds, golds)``: n sentences, 1% of them long, predictions with 5% of the tags changed."""
    rng = random.Random(seed)
    golds = [gold_sentence(rng, rng.randint(500, 2000) if rng.random() < 0.01 else rng.randint(5, 30))
             for _ in range(n)]
    noise = ["O", "B-PER", "I-LOC", "B-ORG", "I-MISC"]
    preds = [[t if rng.random() > 0.05 else rng.choice(noise) for t in g] for g in golds]
    return preds, golds


def to_spans(tags: list[str]) -> list[dict]:
    """The IOB2 entities of ``tags`` as span dicts (inclusive ends), as a span-list pipeline has them."""
    spans, start = [], None
    for k, tag in enumerate([*tags, "O"]):
        if start is not None and not (tag.startswith("I-") and tag[2:] == spans[-1]["label"]):
            spans[-1]["end"] = k - 1
            start = None
        if tag.startswith("B-") or (tag.startswith("I-") and start is None):
            spans.append({"label": tag[2:], "start": k, "end": k})
            start = k
    return spans


def cpu(fn) -> tuple[float, object]:
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def best(fn, repeats: int) -> tuple[float, object]:
    runs = [cpu(fn) for _ in range(repeats)]
    return min(t for t, _ in runs), runs[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ek-sentences", type=int, default=20_000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    preds, golds = corpus(args.sentences)
    tokens = sum(map(len, golds))
    rows = []

    conll = SpanF1Metric(MatchScheme.SEQEVAL_CONLL)
    t_seqeval, expected = cpu(lambda: f1_score(golds, preds))
    t_ours, report = best(lambda: conll.score_corpus(preds, golds), args.repeats)
    assert abs(report.aggregate - expected) < 1e-12, (report.aggregate, expected)
    rows.append(("CoNLL entity F1", "seqeval `f1_score`", t_seqeval, t_ours))

    strict = SpanF1Metric(MatchScheme.SEQEVAL_STRICT)
    t_seqeval, expected = cpu(lambda: f1_score(golds, preds, mode="strict", scheme=IOB2))
    t_ours, report = best(lambda: strict.score_corpus(preds, golds), args.repeats)
    assert abs(report.aggregate - expected) < 1e-12, (report.aggregate, expected)
    rows.append(("strict IOB2 entity F1", "seqeval `f1_score(mode='strict')`", t_seqeval, t_ours))

    m = args.ek_sentences
    reference = ek_spans.SpanF1Metric("seqeval_conll")
    t_ek, expected = cpu(lambda: reference.aggregate([reference(p, g) for p, g in zip(preds[:m], golds[:m])]))
    t_ours, report = best(lambda: conll.score_corpus(preds[:m], golds[:m]), args.repeats)
    assert report.aggregate == expected
    rows.append((f"CoNLL, per-sentence scores ({m:,} sentences)", "ek `SpanF1Metric` per sentence", t_ek, t_ours))

    pred_spans, gold_spans = [to_spans(p) for p in preds], [to_spans(g) for g in golds]
    labels = sorted(TYPES)
    t_nervaluate, overall = cpu(lambda: Evaluator(gold_spans, pred_spans, tags=labels).evaluate()["overall"])
    for scheme, key in (("strict", "strict"), ("exact", "exact"), ("partial", "partial"), ("type", "ent_type")):
        t_ours, report = best(lambda s=scheme: SpanF1Metric(s).score_corpus(pred_spans, gold_spans), args.repeats)
        assert (report.detail["correct"], report.detail["partial"], report.detail["possible"]) == (
            overall[key].correct, overall[key].partial, overall[key].possible), scheme
        rows.append((f"span F1, {scheme}", "nervaluate `Evaluator` (all four schemes)", t_nervaluate, t_ours))

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{args.sentences:,} sentences, {tokens:,} gold tags; {stamp}; Python {platform.python_version()}, "
          f"{platform.machine()}; CPU seconds (scorekit: best of {args.repeats})\n")
    print("| operation | peer | peer | scorekit | ratio |")
    print("|---|---|---|---|---|")
    for name, peer, t_peer, t_ours in rows:
        print(f"| {name} | {peer} | {t_peer:.2f} s | {t_ours * 1e3:.0f} ms | **{t_peer / t_ours:.1f}×** |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
