"""The HTML report of ``scorekit ocr-eval``: which sections show an :class:`~scorekit.ocr.evaluate.Evaluation`.

Owns the choice and content of the sections: the totals per engine, the engines' comparison
(paired per-page CER differences), the per-page table of a folder, the character classes, the
character confusions and the aligned side-by-side diffs (a page's, or a folder's worst pages'),
each run of a diff carrying on hover the id of the segment (region, line, word) it lies in.
Rendering, escaping and the atomic write are :mod:`scorekit.report`'s.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from typing import Any, Sequence

from scorekit import report
from scorekit.ocr.evaluate import Evaluation, Totals, top_confusions

__all__ = ["build_report", "report_sections", "diff_runs"]

#: The figures only some runs compute: (``--metrics`` name, column label, attribute).
_OPTIONAL = (("bow", "bag-of-words WER", "bow_wer"), ("fca", "FCA", "fca"))


def _optional(metrics: Sequence[str]) -> list[tuple[str, str]]:
    """(label, attribute) of the optional figures computed in this run."""
    return [(label, attribute) for name, label, attribute in _OPTIONAL if name in metrics]


class _SegmentIndex:
    """Which segment of a document a text position lies in: each segment's text is found in the
    document text in reading order (a segment not found there has no span, and shows no id)."""

    def __init__(self, document: Any) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.ids: list[str] = []
        text, at = document.text, 0
        for segment in document.segments:
            if not segment.text or segment.id is None:
                continue
            found = text.find(segment.text, at)
            if found < 0:
                continue
            self.starts.append(found)
            self.ends.append(found + len(segment.text))
            self.ids.append(str(segment.id))
            at = found + len(segment.text)

    def tip(self, start: int, end: int) -> str:
        """The ids of the segments ``text[start:end]`` touches: ``r1``, or ``r1 … r3``."""
        if start >= end:
            return ""
        first = bisect.bisect_right(self.starts, start) - 1
        if first < 0 or start >= self.ends[first]:
            first += 1
        last = bisect.bisect_left(self.starts, end) - 1
        if first > last:
            return ""
        return self.ids[first] if first == last else f"{self.ids[first]} … {self.ids[last]}"

    def cuts(self, start: int, end: int) -> list[int]:
        """The segment starts and ends strictly inside ``(start, end)``."""
        lo, hi = bisect.bisect_right(self.starts, start), bisect.bisect_left(self.starts, end)
        inner = set(self.starts[lo:hi])
        inner.update(e for e in self.ends[max(lo - 1, 0):hi] if start < e < end)
        return sorted(inner)


_OPS = {"equal": "eq", "replace": "sub", "delete": "del", "insert": "ins"}


def diff_runs(alignment: Sequence[tuple[str, str, str]], gt_doc: Any, ocr_doc: Any) -> list[tuple[str, str, str, str, str]]:
    """The runs of :func:`scorekit.report.aligned_diff` of a :func:`~scorekit.ocr.metrics.compare_texts`
    alignment (``(gt piece, ocr piece, op)`` runs), each tipped with the ids of the segments it lies
    in; equal runs are cut where a ground-truth segment starts or ends."""
    gt_index, ocr_index = _SegmentIndex(gt_doc), _SegmentIndex(ocr_doc)
    runs: list[tuple[str, str, str, str, str]] = []
    gp = op = 0
    for g, o, name in alignment:
        kind = _OPS[name]
        if kind == "eq":
            bounds = [gp, *gt_index.cuts(gp, gp + len(g)), gp + len(g)]
            for a, b in zip(bounds, bounds[1:]):
                piece = g[a - gp:b - gp]
                runs.append((kind, piece, piece, gt_index.tip(a, b), ocr_index.tip(op + a - gp, op + b - gp)))
        else:
            runs.append((kind, g, o, gt_index.tip(gp, gp + len(g)), ocr_index.tip(op, op + len(o))))
        gp += len(g)
        op += len(o)
    return runs


def _engine_rows(engines: Sequence[Totals]) -> tuple[list[str], list[list[Any]]]:
    optional = _optional(engines[0].metrics)
    rows = []
    for t in engines:
        s = t.summary()
        rows.append([t.name, len(t.pages), s["cer"], s["wer"], *(s[a] for _, a in optional), s["word_accuracy"],
                     s["n_characters"], s["n_words"]])
    columns = ["OCR", "pages", "CER", "WER", *(label for label, _ in optional), "word accuracy", "characters", "words"]
    return columns, rows


def _visible(c: str) -> str:
    return {"": "∅", " ": "␣", "\n": "⏎"}.get(c, c)


def _anchor(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", text)


def _engine_sections(t: Totals, *, folder: bool, prefix: str) -> list[Any]:
    sections: list[Any] = []
    s = t.summary()
    if folder:
        optional = _optional(t.metrics)
        rows = [[p.name, p.cer, p.wer, *(getattr(p, a) for _, a in optional), p.n_characters, p.char_edits,
                 p.n_words, p.word_edits] for p in t.pages]
        sections.append(report.data_table(prefix + "Pages", ["page", "CER", "WER", *(label for label, _ in optional),
                                                             "characters", "character edits", "words", "word edits"],
                                          rows, sort_by="CER", descending=True))
    sections.append(report.data_table(prefix + "Accuracy by character class (ground-truth characters)",
                                      ["class", "characters", "errors", "accuracy"],
                                      [[name, c["count"], c["errors"], c["accuracy"]]
                                       for name, c in s["char_classes"].items()]))
    confusions = top_confusions(t.confusions)
    sections.append(report.data_table(prefix + "Character confusions (ground truth → OCR; ∅: nothing)",
                                      ["ground truth", "OCR", "count"],
                                      [[_visible(g), _visible(o), n] for (g, o), n in confusions],
                                      sort_by="count", descending=True))
    for k, (page, alignment, gt_doc, ocr_doc) in enumerate(t.diffs()):
        title = f"{prefix}{'Worst pages · ' if folder else ''}{page.name}: CER {report.sections.format_number(page.cer)}"
        sections.append(report.aligned_diff(title, diff_runs(alignment, gt_doc, ocr_doc),
                                            anchor=f"{_anchor(prefix) or 'e'}-{k}", labels=("ground truth", "OCR")))
    return sections


def build_report(evaluation: Evaluation) -> str:
    """The report page of ``evaluation``."""
    return report.render_page("OCR evaluation", report_sections(evaluation), subtitle="scorekit ocr-eval")


def report_sections(evaluation: Evaluation, *, prefix: str = "") -> list[Any]:
    """The report's sections, every title starting with ``prefix`` (the demo page holds them
    among other samples')."""
    engines = evaluation.engines
    several = len(engines) > 1
    head: dict[str, Any] = {"ground truth": evaluation.gt, "text-equiv level": evaluation.level or "region (default)"}
    if evaluation.pairing is not None:
        head["pages paired"] = len(evaluation.pairing.pairs)
        head["ground-truth pages without OCR"] = ", ".join(
            f"{n} (missing in {', '.join(m)})" for n, m in evaluation.pairing.gt_only) or "none"
        for engine, names in evaluation.pairing.ocr_only.items():
            head[f"OCR pages without ground truth in {engine}"] = ", ".join(names) or "none"
    sections: list[Any] = [report.summary_table("Inputs", head)]
    columns, rows = _engine_rows(engines)
    sections.append(report.data_table("Engines" if several else "Totals (total edits over total length)", columns, rows))
    if several:
        rows = []
        for c in evaluation.comparisons:
            d = c["cer_difference"]
            if d is None:
                rows.append([c["a"], c["b"], c["pages"], None, None, None, None, None, None, None])
                continue
            rows.append([c["a"], c["b"], d["n"], d["mean_diff"], d["ci_low"], d["ci_high"], d["n_lower"], d["n_higher"],
                         d["n_equal"], d["p_value"]])
        sections.append(report.data_table(
            "Comparison: per-page CER of A minus B (negative: A better)",
            ["A", "B", "pages", "mean difference", "95% CI low", "95% CI high", "A better", "B better", "equal",
             "sign test p"], rows))
        if evaluation.excluded:
            sections.append(report.note("Left out of the comparison (empty ground truth, no finite CER): "
                                        + ", ".join(evaluation.excluded)))
        engine_names = [t.name for t in engines]
        page_rows = []
        for k, page in enumerate(engines[0].pages):
            cers = [t.pages[k].cer for t in engines]
            page_rows.append([page.name, *cers, cers[0] - cers[1]])
        sections.append(report.data_table("Per-page CER", ["page", *engine_names,
                                                           f"{engine_names[0]} − {engine_names[1]}"],
                                          page_rows, sort_by=len(engine_names) + 1))
    sections = [dataclasses.replace(s, title=prefix + s.title) if s.title else s for s in sections]
    for t in engines:
        sections += _engine_sections(t, folder=evaluation.folder, prefix=prefix + (f"{t.name} · " if several else ""))
    return sections
