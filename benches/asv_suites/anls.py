"""asv suite: ANLS* (``scorekit.metrics.anls``, issue #17) on the answers of ``benches/bench_anls.py``
— the batch ``anls_scores`` on the mixed answers and on page-length strings, one ``AnlsMetric`` call
per pair, and the ``anls-star`` package on a slice of the same answers as the peer; ``track_*``
pins the batch's mean on fixed answers so a behaviour drift shows up in the history."""

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anls_star import anls_score  # noqa: E402

from bench_anls import make_answers, make_pages  # noqa: E402
from scorekit.metrics.anls import AnlsMetric, anls_scores  # noqa: E402


class MixedAnswers:
    params = [10_000, 100_000]
    param_names = ["pairs"]
    timeout = 300

    def setup(self, pairs):
        self.preds, self.golds = make_answers(pairs)
        self.metric = AnlsMetric()

    def time_anls_scores(self, pairs):
        anls_scores(self.preds, self.golds)

    def time_one_call_per_pair(self, pairs):
        metric = self.metric
        for p, g in zip(self.preds[:2_000], self.golds[:2_000]):
            metric(p, g)

    def time_peer_anls_star_2000_pairs(self, pairs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for p, g in zip(self.preds[:2_000], self.golds[:2_000]):
                anls_score(g, p)

    def track_mean_anls(self, pairs):
        return float(anls_scores(self.preds, self.golds).mean())


class PageLengthAnswers:
    def setup(self):
        self.preds, self.golds = make_pages(50)

    def time_anls_scores(self):
        anls_scores(self.preds, self.golds)

    def track_mean_anls(self):
        return float(anls_scores(self.preds, self.golds).mean())
