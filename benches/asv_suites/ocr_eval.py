"""asv suite: ``scorekit ocr-eval`` (issue #32) in-process on generated PAGE-XML pages.

Small cases so each ``time_*`` stays near a second: one 10,000-character page at CER ≈ 0.5, a
folder of 10 ordinary pages, the report of that folder, and fca on a 5,000-character page (lines
reversed, and at CER 0.5: the issue #32 page of ``bench_ocr_eval.py --only fca-noise``).
``benches/bench_ocr_eval.py`` is the whole-process run against the ``dinglehopper`` command.
``track_*`` pins the figures of fixed pages so a behaviour drift shows up in the history.
"""

import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_ocr_eval import page_pair, write_pages
from corpus import ocr_noise, reference_line
from scorekit.ocr.eval_report import build_report
from scorekit.ocr.evaluate import DIFFS_KEPT, evaluate
from scorekit.ocr.metrics import compare_texts


class OcrEval:
    timeout = 120

    def setup(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="asv_ocr_eval_")
        work = Path(self.tmp.name)
        g, o = page_pair(random.Random(7), 10_000, 0.7)
        (work / "gt.xml").write_text(g, encoding="utf-8")
        (work / "ocr.xml").write_text(o, encoding="utf-8")
        self.gt, self.ocr = str(work / "gt.xml"), str(work / "ocr.xml")
        gt_dir, ocr_dir = write_pages(work / "folder", 10, 4_700, 0.05, seed=11)
        self.gt_dir, self.ocr_dir = str(gt_dir), str(ocr_dir)
        self.folder = evaluate(self.gt_dir, [self.ocr_dir], keep_diffs=DIFFS_KEPT)
        rng = random.Random(5)
        text = "\n".join(" ".join(f"word{rng.randrange(1000)}" for _ in range(8)) for _ in range(90))
        self.fca_gt, self.fca_ocr = text, "\n".join(reversed(text.split("\n")))   # ≈ 5,000 characters
        rng, gt, ocr, total = random.Random(0), [], [], 0
        while total < 5_000:
            line = reference_line(rng, "latin")
            gt.append(line)
            ocr.append(ocr_noise(rng, line, "latin", 0.5))
            total += len(line) + 1
        self.noisy_gt, self.noisy_ocr = "\n".join(gt), "\n".join(ocr)

    def teardown(self):
        self.tmp.cleanup()

    def time_one_page_cer_0_5(self):
        evaluate(self.gt, [self.ocr])

    def time_folder_of_10_pages(self):
        evaluate(self.gt_dir, [self.ocr_dir])

    def time_folder_report(self):
        build_report(self.folder)

    def time_fca_5000_characters(self):
        compare_texts(self.fca_gt, self.fca_ocr, metrics=("fca",))

    def time_fca_5000_characters_cer_0_5(self):
        compare_texts(self.noisy_gt, self.noisy_ocr, metrics=("fca",))

    def track_one_page_cer(self):
        return evaluate(self.gt, [self.ocr]).engines[0].cer

    def track_folder_char_edits(self):
        return self.folder.engines[0].char_edits
