"""What the ``scorekit flowcharts`` label commands show: one summary of a classification or
rotation benchmark (:func:`summarise`), printed as text (:func:`format_text`), as strict JSON (the
summary itself), or as a self-contained HTML page built with :mod:`scorekit.report`
(:func:`render_html`: the metrics, the confusion matrix as a heat map, accuracy per class as bars,
the class table and the wrong predictions).

Labels keep their JSON type in the JSON summary (``"labels": [0, 90, 180, 270]``); the confusion
matrix is a list of rows in label order (truth), each a list of counts in label order
(prediction), since JSON object keys could not keep ``1`` and ``"1"`` apart; beyond
:data:`MAX_MATRIX_CLASSES` classes it is ``null`` (the per-class counts remain). A generic
``classify`` run has no declared labels: its classes are the labels seen, ground truth first, in
order of first appearance (by Python equality, so ``1`` and ``true`` are one class).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any, Sequence

from scorekit.flowcharts.classification.classification_benchmark import (
    BinaryClassificationBenchmark,
    ClassificationBenchmark,
    MulticlassClassificationBenchmark,
)

__all__ = ["label_names", "render_html", "format_text", "summarise"]

#: Wrong predictions listed in a summary and a report (the counts always cover every image).
MAX_LISTED = 1000
#: Most classes a summary gives the confusion matrix for (``null`` beyond: it grows as the square).
MAX_MATRIX_CLASSES = 500


def _classes(benchmark: ClassificationBenchmark) -> tuple[Any, ...]:
    if isinstance(benchmark, MulticlassClassificationBenchmark):
        return benchmark.labels
    if isinstance(benchmark, BinaryClassificationBenchmark):
        return (0, 1)
    seen: dict[Any, None] = {}
    for value in (*benchmark.trues, *benchmark.preds):
        seen.setdefault(value, None)
    return tuple(seen)


def label_names(labels: Sequence[Any]) -> list[str]:
    """How labels are shown: the strings themselves when every label is a string, otherwise each
    label's JSON text (so ``"1"``, ``1`` and ``true`` stay distinguishable)."""
    if all(isinstance(label, str) for label in labels):
        return list(labels)
    return [json.dumps(label) for label in labels]


def summarise(kind: str, benchmark: ClassificationBenchmark) -> dict[str, Any]:
    """The benchmark's numbers as plain JSON-ready data (see the module docstring)."""
    labels = _classes(benchmark)
    index = {label: k for k, label in enumerate(labels)}
    num_true, num_pred, correct_per_class = [0] * len(labels), [0] * len(labels), [0] * len(labels)
    pairs: Counter[tuple[int, int]] = Counter()
    for r in benchmark.result_list:
        t, p = index[r.true], index[r.pred]
        num_true[t] += 1
        num_pred[p] += 1
        correct_per_class[t] += t == p
        pairs[t, p] += 1
    n, correct = len(benchmark), len(benchmark.correct_predictions)
    out: dict[str, Any] = {
        "benchmark": kind,
        "true_path": os.fspath(benchmark.true_path),
        "pred_path": os.fspath(benchmark.pred_path),
        "n": n,
        "correct": correct,
        "accuracy": benchmark.accuracy,
    }
    if isinstance(benchmark, BinaryClassificationBenchmark):
        b = benchmark
        out.update(tp=b.num_tp, fp=b.num_fp, fn=b.num_fn, tn=b.num_tn, precision=b.precision, recall=b.recall,
                   f1_score=b.f1_score, tpr=b.tpr, fpr=b.fpr, specificity=b.specificity, tnr=b.tnr)
    out["labels"] = list(labels)
    out["confusion_matrix"] = ([[pairs[t, p] for p in range(len(labels))] for t in range(len(labels))]
                               if len(labels) <= MAX_MATRIX_CLASSES else None)
    out["per_class"] = [{"label": label, "num_true": num_true[k], "num_pred": num_pred[k],
                         "correct": correct_per_class[k],
                         "accuracy": correct_per_class[k] / num_true[k] if num_true[k] else 0.0}
                        for k, label in enumerate(labels)]
    wrong = benchmark.incorrect_predictions
    out["num_incorrect"] = len(wrong)
    out["incorrect_predictions"] = [{"img_path": r.img_path, "true": r.true, "pred": r.pred}
                                    for r in wrong[:MAX_LISTED]]
    return out


def _ratio(x: float) -> str:
    return f"{x:.4f}"


def _terminal(text: str) -> str:
    """``text`` printable on a UTF-8 terminal (a lone surrogate shown as its escape)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def format_text(summary: dict[str, Any]) -> str:
    """The summary for a terminal: the metrics, the class table and the confusion matrix."""
    s = summary
    lines = [f"{s['benchmark']}: {s['n']:,} images, {s['correct']:,} correct, accuracy {_ratio(s['accuracy'])}"]
    if "precision" in s:
        lines.append(f"  precision {_ratio(s['precision'])}  recall {_ratio(s['recall'])}  "
                     f"f1 {_ratio(s['f1_score'])}")
        lines.append(f"  tpr {_ratio(s['tpr'])}  fpr {_ratio(s['fpr'])}  specificity {_ratio(s['specificity'])}  "
                     f"tnr {_ratio(s['tnr'])}")
        lines.append(f"  tp {s['tp']:,}  fp {s['fp']:,}  fn {s['fn']:,}  tn {s['tn']:,}")
    names = [_terminal(name) for name in label_names(s["labels"])]
    width = max([len("label"), *map(len, names)])
    lines.append(f"  {'label':<{width}}  {'true':>7}  {'pred':>7}  {'correct':>7}  accuracy")
    for name, row in zip(names, s["per_class"]):
        lines.append(f"  {name:<{width}}  {row['num_true']:>7,}  {row['num_pred']:>7,}  {row['correct']:>7,}  "
                     f"{_ratio(row['accuracy'])}")
    if len(names) <= 12 and s["confusion_matrix"] is not None:
        cell = max([5, *map(len, names)])
        lines.append("  confusion matrix (rows: truth, columns: prediction)")
        lines.append(f"  {'':<{width}}  " + "  ".join(f"{name:>{cell}}" for name in names))
        for name, row in zip(names, s["confusion_matrix"]):
            lines.append(f"  {name:<{width}}  " + "  ".join(f"{count:>{cell},}" for count in row))
    return "\n".join(lines)


def render_html(summary: dict[str, Any], title: str) -> str:
    """The report page of a summary: the sections of :func:`report_sections`."""
    from scorekit import report

    return report.render_page(title, report_sections(summary))


def report_sections(summary: dict[str, Any], prefix: str = "") -> list[Any]:
    """The report sections of a summary, each title starting with ``prefix``: metrics, confusion
    heat map, per-class accuracy bars, the class table and the wrong predictions (at most
    :data:`MAX_LISTED`)."""
    from scorekit import report
    from scorekit.report.charts import MAX_BARS, MAX_HEATMAP_SIDE

    s = summary
    names = label_names(s["labels"])
    metrics: list[tuple[str, Any]] = [("benchmark", s["benchmark"]), ("ground truth", s["true_path"]),
                                      ("predictions", s["pred_path"]), ("images", s["n"]),
                                      ("correct", s["correct"]), ("accuracy", s["accuracy"])]
    if "precision" in s:
        metrics += [(key, s[key]) for key in ("precision", "recall", "f1_score", "tpr", "fpr", "specificity", "tnr",
                                              "tp", "fp", "fn", "tn")]
    sections = [report.summary_table(f"{prefix}Metrics", metrics)]
    if len(names) <= MAX_HEATMAP_SIDE and s["confusion_matrix"] is not None:
        sections.append(report.heatmap(f"{prefix}Confusion matrix (rows: ground truth, columns: prediction)",
                                       names, names, s["confusion_matrix"]))
    if len(names) <= MAX_BARS:
        sections.append(report.bar_chart(f"{prefix}Accuracy per ground-truth class", names,
                                         [row["accuracy"] for row in s["per_class"]]))
    sections.append(report.data_table(
        f"{prefix}Classes", ["label", "ground truth", "predicted", "correct", "accuracy"],
        [[name, row["num_true"], row["num_pred"], row["correct"], row["accuracy"]]
         for name, row in zip(names, s["per_class"])]))
    name_of = dict(zip(s["labels"], names))  # by Python equality, as the classes were counted
    wrong = s["incorrect_predictions"]
    title_wrong = f"Incorrect predictions ({s['num_incorrect']:,}" + (
        f", first {len(wrong):,} listed)" if len(wrong) < s["num_incorrect"] else ")")
    sections.append(report.data_table(prefix + title_wrong, ["image", "ground truth", "prediction"],
                                      [[r["img_path"], name_of[r["true"]], name_of[r["pred"]]] for r in wrong]))
    return sections
