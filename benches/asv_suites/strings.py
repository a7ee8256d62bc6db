"""asv suite: CER/WER and raw Levenshtein, scorekit and its peers on the same pairs.

Each ``time_*`` loops over a whole batch (≥ 10 µs per sample, as asv recommends); ``track_*``
pins metric values on fixed vectors so a behaviour drift shows up in the history.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jiwer
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist

import scorekit as ek
from corpus import make_pairs
from scorekit import batch


class ErrorRates:
    params = [1_000, 20_000]
    param_names = ["pairs"]

    def setup(self, pairs):
        data = make_pairs(pairs, seed=1)
        self.cases = [(p, r) for p, r, _ in data]
        self.hyps = [p for p, _, _ in data]
        self.refs = [r for _, r, _ in data]

    def time_evaluate_cer(self, pairs):
        ek.evaluate(self.cases, metric="cer")

    def time_evaluate_wer(self, pairs):
        ek.evaluate(self.cases, metric="wer")

    def time_batch_levenshtein(self, pairs):
        batch.levenshtein(self.hyps, self.refs)

    def time_peer_rapidfuzz_cpdist(self, pairs):
        cpdist(self.hyps, self.refs, scorer=Levenshtein.distance, workers=-1)

    def time_peer_jiwer_cer(self, pairs):
        jiwer.cer(reference=self.refs, hypothesis=self.hyps)

    def peakmem_evaluate_cer(self, pairs):
        ek.evaluate(self.cases, metric="cer")


def track_cer_fixed_vector():
    return ek.score("hello wrld", "hello world").value


def track_wer_morris_vector():
    return ek.score("X Z", "X Y X", metric="wer").value


def timeraw_import_scorekit():
    return "import scorekit"
