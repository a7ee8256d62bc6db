"""asv suite: page-length CER (issue #12), scorekit and its peers on the same generated pages.

Small cases (a few dozen pages of 2,000–20,000 characters) so each ``time_*`` stays well under a
second; ``benches/bench_ocr_pages.py`` is the full side-by-side run. ``track_*`` pins values on
fixed vectors so a behaviour drift shows up in the history.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist

from bench_ocr_pages import editops_counts, make_hyphenated_pages, make_kit_pages, make_page_pairs
from scorekit import batch
from scorekit.ocr_pages.evaluation.text_metrics import (
    compute_text_metrics, compute_text_metrics_batch, join_box_lines_with_hyphenation,
)
from scorekit.text import join_lines_with_hyphenation


class PageCER:
    params = [["uniform", "skewed"]]
    param_names = ["lengths"]

    def setup(self, lengths):
        self.preds, self.refs = make_page_pairs(40, seed=1, skewed=lengths == "skewed")
        self.pairs = list(zip(self.preds, self.refs))

    def time_batch_cer(self, lengths):
        batch.cer(self.preds, self.refs)

    def time_batch_cer_one_thread(self, lengths):
        batch.cer(self.preds, self.refs, threads=1)

    def time_batch_levenshtein(self, lengths):
        batch.levenshtein(self.preds, self.refs)

    def time_peer_rapidfuzz_editops_loop(self, lengths):
        editops_counts(self.pairs)

    def time_peer_rapidfuzz_cpdist(self, lengths):
        cpdist(self.preds, self.refs, scorer=Levenshtein.distance, workers=-1)

    def peakmem_batch_cer(self, lengths):
        batch.cer(self.preds, self.refs)


class SchwaPages:
    def setup(self):
        gts, preds = make_hyphenated_pages(40, seed=3, n_chars=6_000)
        self.gts = [join_lines_with_hyphenation(g) for g in gts]
        self.preds = [join_lines_with_hyphenation(p) for p in preds]
        self.plain_gts = [g.text for g in self.gts]
        self.plain_preds = [p.text for p in self.preds]

    def time_schwa_cer(self):
        batch.schwa_cer(self.gts, self.preds)

    def time_plain_cer(self):
        batch.cer(self.plain_preds, self.plain_gts)


class KitTextMetrics:
    def setup(self):
        gts, self.preds = make_kit_pages(100, seed=5)
        self.gts = [join_box_lines_with_hyphenation(g) for g in gts]

    def time_compute_text_metrics_batch(self):
        compute_text_metrics_batch(self.gts, self.preds)

    def peakmem_compute_text_metrics_batch(self):
        compute_text_metrics_batch(self.gts, self.preds)


def track_schwa_forgiving_join_distance():
    return compute_text_metrics(join_box_lines_with_hyphenation("մը-\nտնել"), "մտնել").char_edit_distance


def track_page_cer_fixed_pair():
    return float(batch.cer(["Երևան 1918 ru"], ["Երեվան 1918 rn"]).corpus_rate)
