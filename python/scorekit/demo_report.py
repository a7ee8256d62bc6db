"""The HTML page of ``scorekit demo``: what scorekit found in the packaged samples.

Owns the choice of sections for the demo (corpus figures, per-slice error rates, the worst pairs
with their aligned differences, the most frequent character confusions; then the OCR pages
sample as the OCR pages commands' run report shows it, the flowchart rotation sample, the case
benchmark sample, the agent suite sample, the quality-estimation sample, the OCR files sample) and the scoring of the OCR
pages sample
(``data/ocr_pages``: synthetic newspaper pages as dataset rows in ``pages.jsonl``, one evaluation
CSV per page in ``csv/``, with a watermark line and a line the OCR split in two). Rendering and
writing are :mod:`scorekit.report`'s, scoring is :func:`scorekit.evaluate`'s,
:mod:`scorekit.batch`'s and :mod:`scorekit.ocr_pages`'.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from scorekit import batch, report
from scorekit.base import Report

#: Pairs shown with their aligned differences, worst CER first.
WORST_PAIRS_SHOWN = 8
#: Character confusions shown in the chart.
CONFUSIONS_SHOWN = 15
#: The OCR pages sample's CSVs hold one row per OCR line (``group_row`` = line).
OCR_SAMPLE_UNIT_LEVEL = "line"
#: Section titles of the OCR pages sample start with this.
OCR_PREFIX = "OCR pages sample · "
#: Section titles of the flowchart rotation sample start with this.
FLOWCHARTS_PREFIX = "Flowchart rotation sample · "
#: The packaged samples: every file the demo reads lies in this folder.
SAMPLE_DATA = Path(__file__).parent / "data"
#: Section titles of the case benchmark sample start with this.
CASES_PREFIX = "Case benchmark sample · "
#: The case benchmark sample: four cases and the saved outputs of two pipeline versions.
CASES_SAMPLE = SAMPLE_DATA / "cases_sample"
#: Section titles of the agent suite sample start with this.
AGENTS_PREFIX = "Agent suite sample · "
#: The agent suite sample: ten tasks, recorded transcripts of two agent versions, made-up prices.
AGENTS_SAMPLE = SAMPLE_DATA / "agents_sample"
#: Recorded trials per task in the agent suite sample.
AGENTS_SAMPLE_TRIALS = 4
#: Section titles of the quality-estimation sample start with this.
QE_PREFIX = "Quality without gold · "
#: The quality-estimation sample: fields read by three engines, a labelled calibration split.
QE_SAMPLE = SAMPLE_DATA / "qe_sample" / "fields.jsonl"
#: Error rate the demo's conformal gate is asked to guarantee among accepted fields.
QE_SAMPLE_ALPHA = 0.1
#: Section titles of the document-QA and entity sample start with this.
DOCQA_PREFIX = "Document QA and entities · "
#: The document-QA and entity sample: answers (accepted variants or nested records) and entity tags.
DOCQA_SAMPLE = SAMPLE_DATA / "docqa_sample"
#: Section titles of the OCR files sample start with this.
OCR_EVAL_PREFIX = "OCR files sample · "
#: The OCR files sample: one page's PAGE-XML ground truth and an ALTO OCR of it (made up).
OCR_EVAL_SAMPLE = SAMPLE_DATA / "ocr_eval_sample"


def demo_inputs() -> list[Path]:
    """What ``scorekit demo`` reads, for :func:`scorekit.files.check_outputs`: the sample folder and
    each file in it (so that a hard link of one, anywhere, is caught too)."""
    return [SAMPLE_DATA, *sorted(path for path in SAMPLE_DATA.rglob("*") if path.is_file())]


def score_cases_sample() -> Any:
    """The packaged case benchmark sample (``data/cases_sample``) run through its two saved
    pipeline versions: a :class:`scorekit.cases.BenchmarkSummary`."""
    from scorekit.cases import BenchmarkRunner

    versions = [f"saved:{CASES_SAMPLE / name}" for name in ("outputs_v1", "outputs_v2")]
    return BenchmarkRunner(CASES_SAMPLE / "benchmark", versions, pass_threshold=0.9).run()


class _AgainstGoldCalls:
    """A tool-call or trajectory metric scored against the ``"calls"`` of the sample's gold (which
    also holds the answer the success checker reads)."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric

    def __call__(self, episode: Any, gold: Mapping[str, Any], *, grammar: Any = None) -> Any:
        return self.metric(episode, gold["calls"], grammar=grammar)

    def aggregate(self, scores: Sequence[Any]) -> float:
        return self.metric.aggregate(scores)


def score_agents_sample() -> dict[str, Any]:
    """The packaged agent suite sample (``data/agents_sample``: ten tasks, four recorded trials of
    each by two agent versions) replayed through :func:`scorekit.agents.run_suite`: ``{"tasks",
    "runs": {version: ReliabilityReport}, "gate": v2 against v1, "comparison": v2 against v1 (paired)}``."""
    from scorekit.agents import (AgentGateResult, RunProvenance, TaskSpec, ToolCallMetric, ToolSpec,
                                 TrajectoryMetric, agent_regression_gate, compare_agents, load_prices, run_suite)
    from scorekit.agents.bridge import episode_from_messages
    from scorekit.base import FieldSpec

    spec = json.loads((AGENTS_SAMPLE / "tasks.json").read_text(encoding="utf-8"))
    recorded: dict[tuple[str, str, int], dict] = {}
    with open(AGENTS_SAMPLE / "episodes.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            recorded[(row["version"], row["task_id"], row["trial"])] = row
    tools = (ToolSpec("refund", params={"amount": FieldSpec("amount", "number", importance=5.0)}, destructive=True),
             ToolSpec("book_flight", params={"flight": FieldSpec("flight"), "seat": FieldSpec("seat")}))
    tasks = [TaskSpec(t["task_id"], input=t["input"], gold={"output": t["answer"], "calls": t["calls"]},
                      slice=t["slice"], tools=tools) for t in spec]
    prices = load_prices(AGENTS_SAMPLE / "prices.json")
    runs = {}
    for version in ("v1", "v2"):
        def replay(task: Any, *, seed: int, version: str = version) -> Any:
            row = recorded[(version, task.task_id, seed)]
            episode = episode_from_messages(row["messages"], task_id=task.task_id, usage=row["usage"],
                                            latency_s=row["latency_s"])
            episode.run = RunProvenance(model=row["model"], seed=seed, suite_version="demo-1")
            return episode

        runs[version] = run_suite(replay, tasks, k=AGENTS_SAMPLE_TRIALS, seed=0, prices=prices, progress="never",
                                  run=RunProvenance(suite_version="demo-1"),
                                  metrics={"tool calls (argument F1)": _AgainstGoldCalls(ToolCallMetric(level="arg")),
                                           "trajectory distance": _AgainstGoldCalls(TrajectoryMetric())})
    gate: AgentGateResult = agent_regression_gate(runs["v2"], runs["v1"])
    comparison = compare_agents(runs["v2"], runs["v1"], names=("v2", "v1"))
    return {"tasks": len(tasks), "runs": runs, "gate": gate, "comparison": comparison}


def score_qe_sample() -> dict[str, Any]:
    """The packaged quality-estimation sample (``data/qe_sample``) through the whole pipeline: the
    engines' ROVER agreement as the raw signal, a Platt calibrator and a split-conformal gate
    (``alpha`` = :data:`QE_SAMPLE_ALPHA`) fitted on the labelled split, then the production split
    estimated in one batch with an IBAN checksum validator. Returns the figures the demo shows."""
    from scorekit.base import Decision
    from scorekit.qe import ConformalGate, PlattCalibrator, checksum_validator, reliability_curve
    from scorekit.qe.estimate import estimate_quality_batch

    rows = [json.loads(line) for line in QE_SAMPLE.read_text(encoding="utf-8").splitlines()]
    cal_rows = [r for r in rows if r["split"] == "calibration"]
    prod_rows = [r for r in rows if r["split"] == "production"]
    raw = [r.raw_signals["agreement"] for r in estimate_quality_batch(
        [r["engines"][0] for r in cal_rows], sources=[r["engines"][1:] for r in cal_rows])]
    correct = [r["correct"] for r in cal_rows]
    calibrator = PlattCalibrator().fit(raw, correct)
    gate = ConformalGate(alpha=QE_SAMPLE_ALPHA).fit([calibrator(x) for x in raw], correct)

    def iban_checksum(value: Any, *, spec: Any = None) -> Any:
        return checksum_validator("iban")(value.replace(" ", "")) if value.startswith("DE") else ()

    reports = estimate_quality_batch([r["engines"][0] for r in prod_rows], sources=[r["engines"][1:] for r in prod_rows],
                                     calibrator=calibrator, policy=gate, validators=[iban_checksum])
    decisions = Counter(rep.decision.value for rep in reports)
    accepted = [r["correct"] for r, rep in zip(prod_rows, reports) if rep.decision == Decision.ACCEPT]
    by_kind: dict[str, Counter] = {}
    for r, rep in zip(prod_rows, reports):
        by_kind.setdefault(r["kind"], Counter())[rep.decision.value] += 1
    return {
        "n_calibration": len(cal_rows), "n_production": len(prod_rows), "alpha": QE_SAMPLE_ALPHA,
        "decisions": dict(decisions), "by_kind": by_kind,
        "error_among_accepted": (1 - sum(accepted) / len(accepted)) if accepted else None,
        "error_without_gate": 1 - sum(r["correct"] for r in prod_rows) / len(prod_rows),
        "curve": reliability_curve([calibrator(x) for x in raw], correct, n_bins=5),
        "flagged_by_checksum": sum(1 for rep in reports if rep.findings),
    }


def qe_sections(qe: Mapping[str, Any]) -> list[Any]:
    """The quality-estimation sample's sections: the outcome, decisions per field kind, and the
    calibration curve on the labelled split."""
    kinds = sorted(qe["by_kind"])
    return [
        report.summary_table("Outcome", {
            "labelled fields (calibration)": qe["n_calibration"],
            "new fields (production)": qe["n_production"],
            "guaranteed error among accepted (alpha)": qe["alpha"],
            "accepted / flagged / blocked": " / ".join(str(qe["decisions"].get(d, 0)) for d in ("accept", "flag", "block")),
            "error among accepted (known here, never in production)": qe["error_among_accepted"],
            "error if every field were accepted": qe["error_without_gate"],
            "fields with a failed IBAN checksum": qe["flagged_by_checksum"],
        }),
        report.data_table("Decisions per field kind", ["kind", "accept", "flag", "block"],
                          [[k, qe["by_kind"][k].get("accept", 0), qe["by_kind"][k].get("flag", 0),
                            qe["by_kind"][k].get("block", 0)] for k in kinds]),
        report.data_table("Calibration on the labelled split (agreement → Platt)",
                          ["mean calibrated confidence", "observed accuracy", "fields"],
                          [[b["confidence"], b["accuracy"], b["count"]] for b in qe["curve"]]),
    ]


def score_docqa_sample() -> dict[str, Any]:
    """The packaged document-QA and entity sample (``data/docqa_sample``): every answer scored with
    ANLS* in one batch (a gold list is the accepted variants, read as ANLS*'s tuple of
    alternatives), and the entities with span F1 under seqeval's CoNLL reading of the tags and
    the SemEval-2013 strict and partial schemes on the spans."""
    from scorekit.metrics.anls import anls_scores
    from scorekit.metrics.spans import MatchScheme, SpanF1Metric

    answers = [json.loads(line) for line in (DOCQA_SAMPLE / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    golds = [tuple(a["gold"]) if a["kind"] == "answer" else a["gold"] for a in answers]
    values = anls_scores([a["pred"] for a in answers], golds)
    sentences = [json.loads(line) for line in (DOCQA_SAMPLE / "entities.jsonl").read_text(encoding="utf-8").splitlines()]
    entities = {}
    for scheme, pred_key, gold_key in ((MatchScheme.SEQEVAL_CONLL, "pred", "gold"),
                                       (MatchScheme.STRICT, "pred_spans", "gold_spans"),
                                       (MatchScheme.PARTIAL, "pred_spans", "gold_spans")):
        entities[scheme.value] = SpanF1Metric(scheme).score_corpus([s[pred_key] for s in sentences],
                                                                   [s[gold_key] for s in sentences])
    return {"answers": [dict(a, anls=float(v)) for a, v in zip(answers, values)],
            "anls": float(values.mean()), "sentences": len(sentences), "entities": entities}


def docqa_sections(docqa: Mapping[str, Any]) -> list[Any]:
    """The document-QA and entity sample's sections: the figures, every answer with its ANLS*, and
    span F1 per scheme."""
    answers = docqa["answers"]
    return [
        report.summary_table("Outcome", {
            "questions": len(answers),
            "ANLS* (mean over questions)": docqa["anls"],
            "answers scored 0 (below the 0.5 threshold, or missing)": sum(1 for a in answers if a["anls"] == 0),
            "sentences with entity tags": docqa["sentences"],
            **{f"entity F1, {scheme}": r.aggregate for scheme, r in docqa["entities"].items()},
        }),
        report.data_table("Answers", ["question", "gold", "prediction", "ANLS*"],
                          [[a["question"], json.dumps(a["gold"], ensure_ascii=False),
                            json.dumps(a["pred"], ensure_ascii=False), a["anls"]] for a in answers],
                          sort_by="ANLS*"),
        report.data_table("Entity span F1 by scheme", ["scheme", "F1", "counts"],
                          [[scheme, r.aggregate, ", ".join(f"{k} {v}" for k, v in r.detail.items()
                                                         if isinstance(v, int))]
                           for scheme, r in docqa["entities"].items()]),
    ]


def score_ocr_eval_sample() -> Any:
    """The packaged OCR files sample (``data/ocr_eval_sample``: a PAGE-XML ground truth and an ALTO
    OCR of one page) scored as ``scorekit ocr-eval`` scores it, with every metric: an
    :class:`scorekit.ocr.evaluate.Evaluation` (its aligned diff kept for the report)."""
    from scorekit.ocr.evaluate import METRICS, evaluate

    return evaluate(str(OCR_EVAL_SAMPLE / "page0001.gt.xml"), [str(OCR_EVAL_SAMPLE / "page0001.alto.xml")],
                    metrics=METRICS, keep_diffs=1)


def score_flowcharts_sample() -> dict[str, Any]:
    """The packaged flowchart rotation sample (``data/flowcharts``: twelve synthetic scans, their
    true rotation and a model's) as the summary of ``scorekit flowcharts rotation``."""
    from scorekit.flowcharts import RotationBenchmark
    from scorekit.flowcharts.label_report import summarise

    folder = resources.files("scorekit") / "data" / "flowcharts"
    with resources.as_file(folder / "true_rotations.json") as true, \
            resources.as_file(folder / "pred_rotations.json") as pred:
        return summarise("rotation", RotationBenchmark(true_path=true, pred_path=pred))


def score_ocr_pages_sample() -> dict[str, dict]:
    """The packaged OCR pages sample scored under every report variant: variant -> aggregate report."""
    from scorekit.ocr_pages.box_grouping.group import load_predicted_rows
    from scorekit.ocr_pages.box_grouping.loading import annotation_boxes_from_records
    from scorekit.ocr_pages.evaluation.generate_accuracy_report_variants import score_variants
    from scorekit.ocr_pages.evaluation.reports import REPORT_VARIANTS, aggregate_reports

    folder = resources.files("scorekit") / "data" / "ocr_pages"
    per_variant: dict[str, list[dict]] = {v: [] for v in REPORT_VARIANTS}
    with (folder / "pages.jsonl").open("r", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    for row in rows:
        with resources.as_file(folder / "csv" / f"{row['page_id']}.csv") as csv_path:
            words, dropped = load_predicted_rows(csv_path, OCR_SAMPLE_UNIT_LEVEL)
        reports = score_variants(annotation_boxes_from_records(row["annotations"]), words, dropped,
                                 page_id=row["page_id"], unit_level=OCR_SAMPLE_UNIT_LEVEL, coverage_threshold=1.0,
                                 variants=tuple(REPORT_VARIANTS))
        for v, page in reports.items():
            per_variant[v].append(page)
    return {v: aggregate_reports(pages, variant=v) for v, pages in per_variant.items()}


def _visible(c: str) -> str:
    """A confused character as a chart label: a space is shown as ␣."""
    return "␣" if c == " " else c


def _rate(r: Report) -> float | None:
    value = r.aggregate
    return None if value != value else value  # NaN (no reference at all) shows as n/a


def build_demo_report(corpus: Sequence[tuple[str, str, str]], cer: Report, wer: Report, *,
                      backend: str, pairs_per_second: float, pairs_scored: Optional[int] = None,
                      ocr_pages: Optional[Mapping[str, Any]] = None,
                      flowcharts: Optional[dict[str, Any]] = None, cases: Any = None,
                      agents: Optional[Mapping[str, Any]] = None, qe: Optional[Mapping[str, Any]] = None,
                      docqa: Optional[Mapping[str, Any]] = None, ocr_eval: Any = None) -> str:
    """The demo page for ``corpus`` (prediction, reference, slice) scored once as ``cer`` and ``wer``
    (reports over exactly these pairs, in this order), with the throughput measured over
    ``pairs_scored`` pairs (the corpus scored several times over; ``None``: once), then, when
    given, the ``ocr_pages``
    aggregate report (of :func:`score_ocr_pages_sample`) in the OCR pages run report's sections,
    the flowchart rotation summary, the case benchmark summary (:func:`score_cases_sample`) and
    the agent suite sample (:func:`score_agents_sample`) in their reports' sections, the
    quality-estimation sample (:func:`score_qe_sample`), the document-QA and entity sample
    (:func:`score_docqa_sample`) and the OCR files sample (:func:`score_ocr_eval_sample`) in
    ``scorekit ocr-eval``'s report sections."""
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
            "pairs in the sample corpus": len(corpus),
            "CER (edits / reference characters)": _rate(cer),
            "WER (edits / reference words)": _rate(wer),
            "character edits": int(char.edits.sum()),
            "reference characters": int(char.ref_len.sum()),
            "substitutions / deletions / insertions": (f"{int(char.substitutions.sum()):,} / "
                                                       f"{int(char.deletions.sum()):,} / {int(char.insertions.sum()):,}"),
            "backend": backend,
            "pairs scored (the corpus repeated, for the throughput)":
                len(corpus) if pairs_scored is None else pairs_scored,
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
    colours = report.SeriesColours()   # a pipeline or an agent version keeps its colour on every chart
    if ocr_pages is not None:
        from scorekit.ocr_pages.evaluation.html import run_report_sections

        sections += run_report_sections(ocr_pages, prefix=OCR_PREFIX)
    if flowcharts is not None:
        from scorekit.flowcharts.label_report import report_sections

        sections += report_sections(flowcharts, prefix=FLOWCHARTS_PREFIX)
    if cases is not None:
        from scorekit.cases.report import report_sections as case_sections

        sections += [dataclasses.replace(s, title=CASES_PREFIX + s.title)
                     for s in case_sections(cases, colours=colours)]
    if agents is not None:
        from scorekit.agents.report import report_sections as agent_sections

        sections += [dataclasses.replace(s, title=AGENTS_PREFIX + s.title) if s.title else s
                     for s in agent_sections(agents["runs"], gate=agents["gate"], gate_runs=("v2", "v1"),
                                             comparison=agents["comparison"], colours=colours)]
    if qe is not None:
        sections += [dataclasses.replace(s, title=QE_PREFIX + s.title) for s in qe_sections(qe)]
    if docqa is not None:
        sections += [dataclasses.replace(s, title=DOCQA_PREFIX + s.title) for s in docqa_sections(docqa)]
    if ocr_eval is not None:
        from scorekit.ocr.eval_report import report_sections as ocr_eval_sections

        sections += ocr_eval_sections(ocr_eval, prefix=OCR_EVAL_PREFIX)
    return report.render_page("scorekit demo: the sample OCR corpus", sections)
