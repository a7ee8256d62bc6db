"""The HTML page of ``scorekit demo``: what scorekit found in the packaged sample corpus.

Owns only the choice of sections for the demo (corpus figures, per-slice error rates, the worst
pairs with their aligned differences, the most frequent character confusions); rendering and
writing are :mod:`scorekit.report`'s, scoring is :func:`scorekit.evaluate`'s and
:mod:`scorekit.batch`'s.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from scorekit import batch, report
from scorekit.base import Report

#: Pairs shown with their aligned differences, worst CER first.
WORST_PAIRS_SHOWN = 8
#: Character confusions shown in the chart.
CONFUSIONS_SHOWN = 15


def _visible(c: str) -> str:
    """A confused character as a chart label: a space is shown as ␣."""
    return "␣" if c == " " else c


def _rate(r: Report) -> float | None:
    value = r.aggregate
    return None if value != value else value  # NaN (no reference at all) shows as n/a


def build_demo_report(corpus: Sequence[tuple[str, str, str]], cer: Report, wer: Report, *,
                      backend: str, pairs_per_second: float) -> str:
    """The demo page for ``corpus`` (prediction, reference, slice) scored once as ``cer`` and ``wer``
    (reports over exactly these pairs, in this order)."""
    slices = sorted({label for _, _, label in corpus})
    counts = Counter(label for _, _, label in corpus)
    per_slice_cer, per_slice_wer = cer.per_slice, wer.per_slice
    preds, refs = [p for p, _, _ in corpus], [g for _, g, _ in corpus]
    char = batch.cer(preds, refs)
    order = sorted(range(len(corpus)), key=lambda k: (-float(char.rates[k]), k))

    confusions: Counter[tuple[str, str]] = Counter()
    for k in order[: max(200, WORST_PAIRS_SHOWN)]:  # the worst pairs carry most of the confusions
        for op, i, j in batch.editops(refs[k], preds[k]):
            if op == "replace":
                confusions[(refs[k][i], preds[k][j])] += 1
    top = confusions.most_common(CONFUSIONS_SHOWN)

    sections: list[Any] = [
        report.summary_table("Corpus", {
            "pairs": len(corpus),
            "CER (edits / reference characters)": _rate(cer),
            "WER (edits / reference words)": _rate(wer),
            "character edits": int(char.edits.sum()),
            "reference characters": int(char.ref_len.sum()),
            "substitutions / deletions / insertions": (f"{int(char.substitutions.sum()):,} / "
                                                       f"{int(char.deletions.sum()):,} / {int(char.insertions.sum()):,}"),
            "backend": backend,
            "throughput (pairs/s, CER)": round(pairs_per_second),
        }),
        report.data_table("Per slice", ["slice", "pairs", "CER", "WER"],
                          [[s, counts[s], per_slice_cer.get(s), per_slice_wer.get(s)] for s in slices],
                          sort_by="CER", descending=True),
        report.bar_chart("CER per slice", slices, [per_slice_cer.get(s) or 0.0 for s in slices]),
        report.histogram("Distribution of per-pair CER", [float(x) for x in char.rates], bins=20),
    ]
    if top:
        sections.append(report.bar_chart("Most frequent character confusions (reference → prediction)",
                                         [f"{_visible(a)} → {_visible(b)}" for (a, b), _ in top], [n for _, n in top]))
    sections.append(report.data_table(
        "Worst pairs", ["#", "slice", "CER", "reference", "prediction"],
        [[k, corpus[k][2], float(char.rates[k]), refs[k], preds[k]] for k in order[:50]],
        sort_by="CER", descending=True))
    for k in order[:WORST_PAIRS_SHOWN]:
        sections.append(report.diff_view(f"Pair {k} ({corpus[k][2]}), CER {float(char.rates[k]):.3f}",
                                         refs[k], preds[k], batch.editops(refs[k], preds[k])))
    return report.render_page("scorekit demo: the sample OCR corpus", sections)
