"""asv suite: span F1 (``scorekit.metrics.spans``) on the corpus of ``benches/bench_spans.py``: the
two tag-sequence decoders and the span matcher over a corpus in one call, and one sentence at a
time; ``track_*`` pins corpus values of a fixed corpus so a behaviour drift shows up."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_spans import corpus, to_spans  # noqa: E402

from scorekit.metrics.spans import MatchScheme, SpanF1Metric  # noqa: E402


class TagSequences:
    params = [1_000, 20_000]
    param_names = ["sentences"]

    def setup(self, sentences):
        self.preds, self.golds = corpus(sentences)
        self.conll = SpanF1Metric(MatchScheme.SEQEVAL_CONLL)
        self.strict = SpanF1Metric(MatchScheme.SEQEVAL_STRICT, tagging_scheme="IOB2")

    def time_conll_corpus(self, sentences):
        self.conll.score_corpus(self.preds, self.golds)

    def time_strict_corpus(self, sentences):
        self.strict.score_corpus(self.preds, self.golds)

    def time_conll_one_sentence(self, sentences):
        self.conll(self.preds[0], self.golds[0])


class SpanLists:
    params = [1_000, 20_000]
    param_names = ["documents"]

    def setup(self, documents):
        preds, golds = corpus(documents)
        self.preds, self.golds = [to_spans(p) for p in preds], [to_spans(g) for g in golds]
        self.metrics = {scheme: SpanF1Metric(scheme) for scheme in ("strict", "exact", "partial", "type")}

    def time_strict_corpus(self, documents):
        self.metrics["strict"].score_corpus(self.preds, self.golds)

    def time_type_corpus(self, documents):
        self.metrics["type"].score_corpus(self.preds, self.golds)

    def time_partial_one_document(self, documents):
        self.metrics["partial"](self.preds[0], self.golds[0])


def track_conll_f1_of_2000_sentences():
    preds, golds = corpus(2_000)
    return SpanF1Metric("seqeval_conll").score_corpus(preds, golds).aggregate


def track_partial_f1_of_2000_documents():
    preds, golds = corpus(2_000)
    return SpanF1Metric("partial").score_corpus([to_spans(p) for p in preds], [to_spans(g) for g in golds]).aggregate
