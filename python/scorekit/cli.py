"""The ``scorekit`` command line: quick CER/WER of two strings, corpus scoring of text files,
workflow-tree metrics over two folders (``flows``), ROVER consensus (``rover``), the demo over the
packaged sample corpus, and the version.

Owns argument parsing, reading line-aligned text and JSONL files, progress display on long inputs,
and human or JSON output. Scoring itself is ``scorekit.evaluate``.

Input: files are streamed once from start to end (``-`` is standard input, named pipes work) and
never modified. A UTF-8 byte order mark at the start of a file is dropped. In a text file every
line is an item, a blank line being the empty string; in a JSONL file blank lines are skipped.
The one file a command here writes, ``demo --html``, is checked against every file the demo reads
before anything is scored, and written atomically (:mod:`scorekit.files`); its folder must exist.

``--unit grapheme`` (``cer`` and ``eval-text --metric cer``) counts extended grapheme clusters
instead of code points (docs/decisions.md#grapheme-clusters); ``eval-text --json`` reports the unit.

Output: every JSON printed is strict JSON (no ``NaN``): an aggregate without any reference unit is
``null``. ``eval-text --json`` gives ``per_slice`` as a list of ``{"slice", "aggregate", "n"}`` in
first-appearance order, so that slices ``1``, ``"1"`` and ``true`` stay three slices.

Exit status: 0 success; 2 bad input, with one line ``scorekit: error: …`` on stderr for every
subcommand (usage errors, unreadable or invalid files, mismatched line counts, errors raised by the
library); 130 on Ctrl-C and 141 (128 + SIGPIPE, what a shell reports for a tool stopped by a closed
pipe) when stdout's reader has gone (``scorekit … | head -1``), both without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import math
import os
import signal
import sys
import time
from typing import Any, BinaryIO, Iterator, NoReturn, Optional, Sequence

from scorekit.errors import ScorekitError
from scorekit.progress import progress_printer
from scorekit.files import strict_json_loads

#: Subpackages that register their own subcommand: each module has ``add_parser(sub)``, which
#: sets a ``handler(args) -> exit status`` default on the parsers it adds.
SUBCOMMAND_MODULES = ("scorekit.ocr_pages.cli", "scorekit.flowcharts.cli", "scorekit.cases.cli", "scorekit.arrow_cli",
                      "scorekit.agents_cli", "scorekit.ocr.extract_cli", "scorekit.ocr.eval_cli")
#: Subcommands run with only their own module's parser loaded: the others import NumPy and more,
#: which would add a third of a second to every start of a command that scores one OCR page.
OWN_PARSER = {"ocr-eval": "scorekit.ocr.eval_cli", "ocr-extract": "scorekit.ocr.extract_cli"}
#: Inputs with at least this many pairs show a progress line (when stderr is a terminal).
PROGRESS_MIN_PAIRS = 100_000
#: ``demo --repeat`` bound: the sample corpus scored this many times stays seconds and ~50 MB.
MAX_DEMO_REPEAT = 1000


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _normalize_arg(values: Optional[list[str]]) -> Any:
    """The normalizer names of ``-n/--normalize`` (repeated or comma-separated): one name, a list,
    or ``None`` when the option is not given; an empty name (``-n ""``, ``-n lower,``) is an error."""
    if not values:
        return None
    names = [n for v in values for n in v.split(",")]
    if "" in names:
        empty = next(v for v in values if "" in v.split(","))
        raise CliError(f"--normalize {empty!r} holds an empty normalizer name")
    return names[0] if len(names) == 1 else names


def _add_normalize(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--normalize", action="append", metavar="NAME",
                   help="normalizer name(s) applied to both sides, in order (repeat or comma-separate: "
                        "nfc, nfkc, lower, strip, collapse_whitespace, strip_punctuation)")


def _add_unit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--unit", choices=("char", "grapheme"), default="char",
                   help="what one CER character is: a code point (char, the default) or an extended grapheme "
                        "cluster (grapheme: one visible letter with its combining marks, a conjunct, a flag, "
                        "an emoji sequence); CER only")


def _error_line(message: Any) -> str:
    """``scorekit: error: …`` on one line, whatever line breaks the message (or an argument it
    quotes) holds."""
    text = str(message).replace("\r", "\\r").replace("\n", "\\n")
    return f"scorekit: error: {text}"


class _Parser(argparse.ArgumentParser):
    """argparse with the command line's one error format: usage, then ``scorekit: error: …``, status 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, _error_line(message) + "\n")


class _VersionAction(argparse.Action):
    """``scorekit --version``: prints ``scorekit <version>`` and exits (the version is looked up
    only when asked, which keeps every other command's start fast)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the scorekit version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from scorekit.tools import version

        print(f"scorekit {version()}")
        parser.exit(0)


def build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only`` (a module of :data:`SUBCOMMAND_MODULES`), the
    other modules' subcommands are left out."""
    parser = _Parser(prog="scorekit", description="Exact, fast evaluation of extraction outputs.")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    for mode in ("cer", "wer"):
        p = sub.add_parser(mode, help=f"{mode.upper()} of one prediction against one reference")
        p.add_argument("prediction", metavar="PRED", help="the predicted text")
        p.add_argument("gold", metavar="GOLD", help="the reference text")
        _add_normalize(p)
        if mode == "cer":
            _add_unit(p)
    p = sub.add_parser("eval-text", help="score line-aligned text files or JSONL files (corpus CER/WER)",
                       epilog="Files are read once, start to end, so '-' (standard input), pipes and FIFOs work. "
                              "A UTF-8 byte order mark at the start of a file is ignored. In a text file every line is "
                              "an item (a blank line is an empty string); in JSONL, blank lines are skipped. With "
                              "--json, an aggregate with no reference unit at all is null, and per_slice is a list "
                              "of {slice, aggregate, n} in first-appearance order (slices 1 and \"1\" stay apart).")
    p.add_argument("pred", metavar="PRED",
                   help="predictions: one per line, or .jsonl records with a 'text' field ('-': stdin)")
    p.add_argument("gold", metavar="GOLD",
                   help="references, aligned line by line with PRED (.jsonl may carry 'slice'; '-': stdin)")
    p.add_argument("--format", choices=("auto", "text", "jsonl"), default="auto",
                   help="input format of both files (auto: .jsonl/.ndjson are JSONL, anything else and '-' text)")
    p.add_argument("--metric", choices=("cer", "wer"), default="cer")
    _add_normalize(p)
    _add_unit(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--threads", type=int, default=None, help="kernel threads (default: all cores)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress line on stderr (auto: long inputs on a terminal)")
    p = sub.add_parser("rover", help="ROVER consensus of several hypotheses and their agreement",
                       epilog='Example: scorekit rover "the cat sat" "the cat sit" "the bat sat"')
    p.add_argument("hypotheses", nargs="+", help="one hypothesis per argument (whitespace-separated tokens)")
    p.add_argument("-c", "--confidence", dest="confidence", action="store_true", default=True,
                   help="weigh votes by confidence (the default)")
    p.add_argument("--no-confidence", dest="confidence", action="store_false",
                   help="ignore confidences (plain majority vote)")
    p.add_argument("--json", action="store_true", help="print strict JSON instead of the reference kit's dict")
    p = sub.add_parser("pass-k", help="pass@k (capability) and pass^k (reliability) from C successes in N trials",
                       epilog="Example: scorekit pass-k 10 9 --k 8  (a 90%-reliable agent, judged over 8 trials)")
    p.add_argument("n", help="trials")
    p.add_argument("c", help="successes")
    p.add_argument("-k", "--k", default="1", help="k (default 1)")
    p = sub.add_parser("cost-per-success", help="Cost-of-Pass: total dollars / successes (inf without a success)")
    p.add_argument("total_dollars")
    p.add_argument("successes")
    p.add_argument("-a", "--attempts", default=None, help="attempts, to add the success rate")
    sub.add_parser("where", help="print the local data folder where scorekit keeps gold sets, results and runs "
                                 "(the reference kit's folder while scorekit's does not exist, said on stderr)")
    p = sub.add_parser("check", help="report what an OCR engine needs to run (asks ocracy when installed)")
    p.add_argument("engine")
    sub.add_parser("engines", help="list the installed OCR backends (the ocr extra)")
    sub.add_parser("version", help="print the scorekit version (as --version does, without the name)")
    p = sub.add_parser("flows", help="FlowSim/TreeBLEU/Trigger/Component match of two folders of workflow JSON files")
    p.add_argument("pred_dir", metavar="PRED_DIR", help="predicted workflows, one JSON file per item")
    p.add_argument("ref_dir", metavar="REF_DIR", help="reference workflows, matched to predictions by file name stem")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--trigger-match", choices=("exact", "type"), default="exact",
                   help="exact: the whole trigger must equal the reference's (StarFlow's recipe, the default); "
                        "type: only the trigger types")
    p.add_argument("--missing-prediction", choices=("zero", "empty"), default="zero",
                   help="how a reference without a prediction file scores: zero (the default) or as the empty flow")
    p = sub.add_parser("demo", help="score the sample corpus shipped with scorekit")
    p.add_argument("--repeat", type=int, default=50,
                   help=f"score the corpus this many times over (throughput; 1 to {MAX_DEMO_REPEAT:,})")
    p.add_argument("--html", metavar="REPORT", default=None,
                   help="also write a self-contained HTML report of the sample corpus to REPORT")
    p.add_argument("--open", action="store_true", help="open the --html report in the web browser once it is written")
    for name in SUBCOMMAND_MODULES:
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional dependency of that subpackage is missing
            continue
        module.add_parser(sub)
    return parser


# ----------------------------------------------------------------------------------- file input
def _is_jsonl(path: str, fmt: str) -> bool:
    if fmt != "auto":
        return fmt == "jsonl"
    return path != "-" and path.lower().endswith((".jsonl", ".ndjson"))


def _open(path: str, label: str) -> BinaryIO:
    """``path`` opened for binary reading (``-`` is standard input)."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CliError(f"cannot read {label} file {path!r}: {exc.strerror}") from None


def _count_lines(path: str) -> Optional[int]:
    """Lines of a regular file (for the progress line); ``None`` for stdin, pipes and devices,
    which can be read only once."""
    if path == "-" or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        count = last = 0
        for chunk in iter(lambda: f.read(1 << 20), b""):
            count += chunk.count(b"\n")
            last = chunk[-1]
    return count + (last not in (0, 0x0A))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _records(path: str, label: str, fmt: str) -> Iterator[tuple[str, Any]]:
    """(text, slice) per item of ``path``, read once from start to end; text files give slice ``None``.

    A UTF-8 byte order mark at the start is dropped. In a text file every line is an item (a blank
    line is an empty string); in a JSONL file, blank lines are skipped.
    """
    jsonl = _is_jsonl(path, fmt)
    f = _open(path, label)
    where = "<stdin>" if path == "-" else path
    try:
        for number, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CliError(f"{label} {where}:{number}: invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
            if number == 1 and line.startswith("\ufeff"):
                line = line[1:]
            line = line.rstrip("\n").rstrip("\r")
            if not jsonl:
                yield line, None
                continue
            if not line.strip():
                continue
            try:
                record = strict_json_loads(line)
            except json.JSONDecodeError as exc:
                raise CliError(f"{label} {where}:{number}: invalid JSON ({exc.msg})") from None
            except ValueError as exc:  # NaN/Infinity, a number out of range, an integer too long
                raise CliError(f"{label} {where}:{number}: invalid JSON ({exc})") from None
            except RecursionError:
                raise CliError(f"{label} {where}:{number}: invalid JSON (nested too deeply)") from None
            if not isinstance(record, dict) or "text" not in record:
                raise CliError(f"{label} {where}:{number}: expected an object with a 'text' field")
            text = record["text"]
            if text is not None and not isinstance(text, str):
                raise CliError(f"{label} {where}:{number}: 'text' must be a string or null")
            slice_ = record.get("slice")
            if slice_ is not None and not isinstance(slice_, (str, int, float)):
                raise CliError(f"{label} {where}:{number}: 'slice' must be a string, number, boolean or null, "
                               f"got {type(slice_).__name__}")
            if isinstance(slice_, str) and not _encodable(slice_):
                raise CliError(f"{label} {where}:{number}: 'slice' contains a lone surrogate")
            yield text or "", slice_
    finally:
        if f is not sys.stdin.buffer:
            f.close()


class _Progress:
    """The progress line of ``eval-text`` (:mod:`scorekit.progress`), drawn every 65,536 pairs and at
    the end; ``total`` is ``None`` when the input can be read only once."""

    def __init__(self, total: Optional[int], enabled: bool) -> None:
        self.total, self.done = total, 0
        self.show = progress_printer("always", "pairs", rate=True, every=0.0) if enabled else None

    def update(self, n: int) -> None:
        self.done += n
        if self.show is not None and not self.done % 65536:
            self.show(self.done, self.total)

    def close(self) -> None:
        if self.show is not None:
            self.show(self.done, self.done if self.total is None else max(self.total, self.done))


def slice_key(label: Any) -> str:
    """The slice a JSONL ``slice`` value names: its JSON text, so that ``1``, ``"1"``, ``1.0`` and
    ``true`` are four slices (a JSON object's keys could not keep them apart)."""
    return json.dumps(label, ensure_ascii=False)


def _pairs(args: argparse.Namespace, progress: _Progress, slices: dict[str, list]) -> Iterator[tuple]:
    """(pred, gold, slice key) per aligned pair; ``slices`` collects key -> [label, count]."""
    preds = _records(args.pred, "PRED", args.format)
    golds = _records(args.gold, "GOLD", args.format)
    n = 0
    for pred in preds:
        gold = next(golds, None)
        if gold is None:
            total = n + 1 + sum(1 for _ in preds)
            raise CliError(f"line counts differ: PRED has more lines than GOLD (PRED {total:,}, GOLD {n:,})")
        label = gold[1] if gold[1] is not None else pred[1]
        key = None
        if label is not None:
            key = slice_key(label)
            slices.setdefault(key, [label, 0])[1] += 1
        n += 1
        progress.update(1)
        yield pred[0], gold[0], key
    if next(golds, None) is not None:
        total = n + 1 + sum(1 for _ in golds)
        raise CliError(f"line counts differ: GOLD has more lines than PRED (PRED {n:,}, GOLD {total:,})")


# --------------------------------------------------------------------------------------- output
def _finite(x: Optional[float]) -> Optional[float]:
    """``None`` for a missing or non-finite aggregate (no reference unit at all): JSON has no NaN."""
    return x if x is not None and math.isfinite(x) else None


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)


def _report_dict(report: Any, slices: dict[str, list], seconds: float, unit: str = "char") -> dict:
    return {
        "metric": report.metric,
        "unit": unit if report.metric == "cer" else None,
        "n": report.n,
        "aggregate": _finite(report.aggregate),
        "totals": report.detail,
        "per_slice": [{"slice": slices[key][0], "aggregate": _finite(value), "n": slices[key][1]}
                      for key, value in report.per_slice.items()],
        "seconds": round(seconds, 6),
        "pairs_per_second": round(report.n / seconds) if seconds > 0 else None,
    }


def _fmt(x: Optional[float]) -> str:
    return "n/a" if _finite(x) is None else f"{x:.4f}"


def _print_report(report: Any, slices: dict[str, list], seconds: float, unit: str = "char") -> None:
    """The human-readable report; slices are shown by their JSON text (``"1"`` vs ``1``)."""
    d = report.detail
    over = " (grapheme clusters)" if unit == "grapheme" else ""
    print(f"{report.metric.upper()}{over} over {report.n:,} pairs: {_fmt(report.aggregate)}"
          f"  (edits {d.get('edits', 0):,} / reference {d.get('ref_len', 0):,}; "
          f"S {d.get('substitutions', 0):,}  D {d.get('deletions', 0):,}  I {d.get('insertions', 0):,}  H {d.get('hits', 0):,})")
    if report.per_slice:
        width = max(len(k) for k in report.per_slice)
        for key, value in report.per_slice.items():
            print(f"  {key:<{width}}  {_fmt(value)}  (n={slices[key][1]:,})")
    if seconds > 0:
        print(f"  {report.n / seconds:,.0f} pairs/s ({seconds:.3f} s)")


# ------------------------------------------------------------------------------------- commands
def _cmd_string(mode: str, args: argparse.Namespace) -> int:
    from scorekit.facade import score

    unit = getattr(args, "unit", "char")
    print(score(args.prediction, args.gold, metric=mode, normalize=_normalize_arg(args.normalize), unit=unit).value)
    return 0


def _cmd_eval_text(args: argparse.Namespace) -> int:
    from scorekit.facade import evaluate

    if args.pred == "-" and args.gold == "-":
        raise CliError("only one of PRED and GOLD can be '-' (standard input)")
    if args.unit != "char" and args.metric != "cer":
        raise CliError(f"--unit {args.unit} applies to --metric cer only")
    for label, path in (("PRED", args.pred), ("GOLD", args.gold)):
        if path == "-":
            continue
        if not os.path.exists(path):
            raise CliError(f"{label} file not found: {path!r}")
        if os.path.isdir(path):
            raise CliError(f"{label} {path!r} is a directory, not a file")
    wanted = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    total = _count_lines(args.gold) if wanted else None
    show = args.progress == "always" or (wanted and total is not None and total >= PROGRESS_MIN_PAIRS)
    progress = _Progress(total, show)
    slices: dict[str, list] = {}
    start = time.perf_counter()
    try:
        report = evaluate(_pairs(args, progress, slices), metric=args.metric,
                          normalize=_normalize_arg(args.normalize), threads=args.threads, unit=args.unit)
    finally:
        progress.close()
    seconds = time.perf_counter() - start
    if args.json:
        print(_json_text(_report_dict(report, slices, seconds, args.unit)))
    else:
        _print_report(report, slices, seconds, args.unit)
    return 0


def load_sample_corpus() -> list[tuple[str, str, str]]:
    """The packaged sample corpus: (prediction, reference, slice) triples."""
    from importlib import resources  # with tempfile, shutil, pathlib: only the demo reads package data

    path = resources.files("scorekit") / "data" / "sample_corpus.jsonl"
    with path.open("r", encoding="utf-8") as f:
        return [(r["prediction"], r["reference"], r["slice"]) for r in map(json.loads, f)]


def _cmd_demo(args: argparse.Namespace) -> int:
    from scorekit._kernels import current_backend
    from scorekit.facade import evaluate

    from scorekit.demo_report import demo_inputs
    from scorekit.files import check_outputs

    if not 1 <= args.repeat <= MAX_DEMO_REPEAT:
        raise CliError(f"--repeat must be between 1 and {MAX_DEMO_REPEAT:,}, got {args.repeat:,}")
    if args.open and args.html is None:
        raise CliError("--open needs --html REPORT: there is no report to open")
    check_outputs({"--html": args.html}, inputs=demo_inputs())
    corpus = [(p, g, slice_key(label)) for p, g, label in load_sample_corpus()]
    slices: dict[str, list] = {}
    for _, _, key in corpus:
        slices.setdefault(key, [key, 0])[1] += args.repeat
    print(f"scorekit demo: {len(corpus):,} OCR-like line pairs x {args.repeat} = {len(corpus) * args.repeat:,} pairs "
          f"(backend: {current_backend()})")
    throughput, scored = 0.0, 0
    for metric in ("cer", "wer"):
        start = time.perf_counter()
        report = evaluate(itertools.chain.from_iterable(itertools.repeat(corpus, args.repeat)), metric=metric)
        seconds = time.perf_counter() - start
        _print_report(report, slices, seconds)
        if metric == "cer":
            throughput, scored = (report.n / seconds if seconds > 0 else 0.0), report.n
    from scorekit.demo_report import OCR_SAMPLE_UNIT_LEVEL, score_ocr_pages_sample

    ocr_pages = score_ocr_pages_sample()
    counts = ocr_pages["no_filter"]["summary"]
    print(f"OCR pages sample: {counts['page_count']} pages, {counts['predicted_row_count']} {OCR_SAMPLE_UNIT_LEVEL} rows "
          f"({counts['watermark_words_removed']} watermark record removed, {counts['row_status_counts']['split_line']} "
          "split line reassembled), region CER per report variant:")
    for variant, aggregate in ocr_pages.items():
        print(f"  {variant}: cer={_fmt(aggregate['summary']['ocr_region_cer'])}")
    from scorekit.demo_report import score_flowcharts_sample

    rotations = score_flowcharts_sample()
    print(f"Flowchart rotation sample: {rotations['n']} images, accuracy {_fmt(rotations['accuracy'])} "
          f"({rotations['num_incorrect']} wrong)")
    from scorekit.demo_report import score_cases_sample

    cases = score_cases_sample()
    print(f"Case benchmark sample: {len(cases.case_names)} cases, two pipeline versions, threshold "
          f"{cases.pass_threshold:g}:")
    for pipeline in cases.pipelines:
        print(f"  {pipeline.name}: mean accuracy {pipeline.overall_mean_accuracy:.1%}, "
              f"pass rate {pipeline.overall_pass_rate:.1%}")
    from scorekit.demo_report import AGENTS_SAMPLE_TRIALS, score_agents_sample

    agents = score_agents_sample()
    print(f"Agent suite sample: {agents['tasks']} tasks x {AGENTS_SAMPLE_TRIALS} trials, two agent versions:")
    for version, run in agents["runs"].items():
        print(f"  {version}: success rate {run.success_rate:.1%}, pass^{run.k} {run.pass_hat_k:.3f}, "
              f"${run.cost['cost_per_success']:.4f} per success")
    gate = agents["gate"]
    print("  regression gate v2 against v1: " + ("passed" if gate else "FAILED: " + "; ".join(gate.reasons)))
    from scorekit.demo_report import score_qe_sample

    qe = score_qe_sample()
    error = qe["error_among_accepted"]
    print(f"Quality without gold: {qe['n_production']} new fields read by three engines, gate calibrated on "
          f"{qe['n_calibration']} labelled ones (alpha {qe['alpha']:g}): accepted {qe['decisions'].get('accept', 0)}, "
          f"flagged {qe['decisions'].get('flag', 0)}, blocked {qe['decisions'].get('block', 0)}; error among accepted "
          f"{'n/a' if error is None else f'{error:.1%}'} (all fields: {qe['error_without_gate']:.1%})")
    from scorekit.demo_report import score_docqa_sample

    docqa = score_docqa_sample()
    print(f"Document QA and entities: {len(docqa['answers'])} answers, ANLS* {docqa['anls']:.3f}; "
          f"{docqa['sentences']} tagged sentences, entity F1 "
          + ", ".join(f"{scheme} {r.aggregate:.3f}" for scheme, r in docqa["entities"].items()))
    from scorekit.demo_report import score_ocr_eval_sample

    ocr_eval = score_ocr_eval_sample()
    sample = ocr_eval.engines[0].summary()
    print(f"OCR files sample (PAGE-XML ground truth, ALTO OCR): CER {_fmt(sample['cer'])}, WER {_fmt(sample['wer'])}, "
          f"bag-of-words WER {_fmt(sample['bow_wer'])}, FCA {_fmt(sample['fca'])} (dinglehopper's CER and WER)")
    if args.html is not None:
        from scorekit.demo_report import build_demo_report
        from scorekit.report import open_in_browser, write_report

        sample = load_sample_corpus()
        page = build_demo_report(sample, evaluate(sample, metric="cer"), evaluate(sample, metric="wer"),
                                 backend=current_backend(), pairs_per_second=throughput, pairs_scored=scored,
                                 ocr_pages=ocr_pages["no_filter"], flowcharts=rotations, cases=cases,
                                 agents=agents, qe=qe, docqa=docqa, ocr_eval=ocr_eval)
        written = write_report(args.html, page, inputs=demo_inputs())
        print(f"report: {written}")
        if args.open:
            open_in_browser(written)
    return 0


def _run(args: argparse.Namespace) -> int:
    if hasattr(args, "handler"):
        return args.handler(args)
    if args.command in ("cer", "wer"):
        return _cmd_string(args.command, args)
    if args.command == "eval-text":
        return _cmd_eval_text(args)
    if args.command in _TOOL_COMMANDS:
        return _cmd_tool(args)
    if args.command == "flows":
        from scorekit.flows import flows_command

        return flows_command(args.pred_dir, args.ref_dir, args.json, trigger_match=args.trigger_match,
                             missing_prediction=args.missing_prediction)
    return _cmd_demo(args)


#: Commands answered by one :mod:`scorekit.tools` function, printed as the reference kit prints them.
_TOOL_COMMANDS = ("rover", "pass-k", "cost-per-success", "where", "check", "engines", "version")


def _cmd_tool(args: argparse.Namespace) -> int:
    from scorekit import tools

    if args.command == "rover":
        value = tools.rover(*args.hypotheses, confidence=args.confidence)
        if args.json:
            value = json.dumps(value, ensure_ascii=False, allow_nan=False)
    elif args.command == "pass-k":
        value = tools.pass_k(args.n, args.c, k=args.k)
    elif args.command == "cost-per-success":
        value = tools.cost_per_success(args.total_dollars, args.successes, attempts=args.attempts)
    elif args.command == "check":
        value = tools.check(args.engine)
    elif args.command == "where":
        value, note = tools.where(), tools.where_note()
        if note is not None:
            print(f"scorekit: note: {note}", file=sys.stderr)
    else:
        value = getattr(tools, args.command)()
    print("\n".join(value) if isinstance(value, list) else value)
    return 0


def _error(message: Any) -> int:
    print(_error_line(message), file=sys.stderr)
    return 2


def _stdout_gone() -> int:
    """stdout's reader went away (``scorekit … | head -1``): point stdout at /dev/null so the
    interpreter's final flush is silent, and report 141 (128 + SIGPIPE), as a shell does."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a real file (captured in-process)
        pass
    return 128 + signal.SIGPIPE


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input, 130 Ctrl-C, 141 closed stdout)."""
    try:
        try:
            argv = sys.argv[1:] if argv is None else list(argv)
            args = build_parser(OWN_PARSER.get(argv[0]) if argv else None).parse_args(argv)
        except SystemExit as exc:  # --help (0) or a usage error (2, already printed)
            return exc.code if isinstance(exc.code, int) else 2
        code = _run(args)
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except BrokenPipeError:
        return _stdout_gone()
    except CliError as exc:
        return _error(exc)
    except KeyError as exc:
        return _error(exc.args[0] if exc.args else exc)
    except OSError as exc:
        return _error(f"{exc.strerror or exc}: {exc.filename!r}" if exc.filename else exc)
    except (ScorekitError, ValueError, TypeError, OverflowError) as exc:
        return _error(exc)
    except RecursionError:
        return _error("input nested too deeply")
    except MemoryError:
        return _error("out of memory (input too large)")
