"""The ``scorekit`` command line: quick CER/WER of two strings, corpus scoring of text files,
workflow-tree metrics over two folders (``flows``), ROVER consensus (``rover``), the demo over the packaged sample corpus, and
the version.

Owns argument parsing, reading line-aligned text and JSONL files (streamed, never modified),
progress display on long inputs, and human or JSON output. Scoring itself is ``scorekit.evaluate``.
Errors (unreadable files, mismatched line counts, bad JSON, unknown normalizers) print one line
``scorekit: error: …`` and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from importlib import resources
from typing import Any, Iterator, Optional, Sequence

#: Inputs with at least this many pairs show a progress line (when stderr is a terminal).
PROGRESS_MIN_PAIRS = 100_000


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _normalize_arg(values: Optional[list[str]]) -> Any:
    if not values:
        return None
    names = [n for v in values for n in v.split(",") if n]
    return names[0] if len(names) == 1 else names


def _add_normalize(p: argparse.ArgumentParser) -> None:
    p.add_argument("--normalize", action="append", metavar="NAME",
                   help="normalizer name(s) applied to both sides, in order (repeat or comma-separate: "
                        "nfc, nfkc, lower, strip, collapse_whitespace, strip_punctuation)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scorekit", description="Exact, fast evaluation of extraction outputs.")
    sub = parser.add_subparsers(dest="command", required=True)
    for mode in ("cer", "wer"):
        p = sub.add_parser(mode, help=f"{mode.upper()} of one prediction against one reference")
        p.add_argument("prediction")
        p.add_argument("gold")
        _add_normalize(p)
    sub.add_parser("version", help="print the scorekit version")
    p = sub.add_parser("eval-text", help="score line-aligned text files or JSONL files (corpus CER/WER)")
    p.add_argument("pred", help="predictions: one per line, or .jsonl records with a 'text' field")
    p.add_argument("gold", help="references, aligned line by line with PRED (.jsonl may carry 'slice')")
    p.add_argument("--metric", choices=("cer", "wer"), default="cer")
    _add_normalize(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--threads", type=int, default=None, help="kernel threads (default: all cores)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress line on stderr (auto: long inputs on a terminal)")
    p = sub.add_parser("rover", help="ROVER consensus of several hypotheses, printed as JSON")
    p.add_argument("hypotheses", nargs="+", help="one hypothesis per argument (whitespace-separated tokens)")
    p.add_argument("--no-confidence", action="store_true", help="ignore confidences (plain majority vote)")
    p = sub.add_parser("flows", help="FlowSim/TreeBLEU/Trigger/Component match of two folders of workflow JSON files")
    p.add_argument("pred_dir", help="predicted workflows, one JSON file per item")
    p.add_argument("ref_dir", help="reference workflows, matched to predictions by file name stem")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p = sub.add_parser("demo", help="score the sample corpus shipped with scorekit")
    p.add_argument("--repeat", type=int, default=50, help="score the corpus this many times over (throughput)")
    return parser


# ----------------------------------------------------------------------------------- file input
def _is_jsonl(path: str) -> bool:
    return path.lower().endswith((".jsonl", ".ndjson"))


def _count_lines(path: str) -> int:
    with open(path, "rb") as f:
        count = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    size = os.path.getsize(path)
    if size:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            count += f.read(1) != b"\n"
    return count


def _records(path: str, label: str) -> Iterator[tuple[str, Any]]:
    """(text, slice) per line of ``path``; text files give slice ``None``."""
    jsonl = _is_jsonl(path)
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise CliError(f"cannot read {label} file {path!r}: {exc.strerror}") from None
    with f:
        for number, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CliError(f"{label} {path}:{number}: invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
            line = line.rstrip("\n").rstrip("\r")
            if not jsonl:
                yield line, None
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CliError(f"{label} {path}:{number}: invalid JSON ({exc.msg})") from None
            if not isinstance(record, dict) or "text" not in record:
                raise CliError(f"{label} {path}:{number}: expected an object with a 'text' field")
            text = record["text"]
            if text is not None and not isinstance(text, str):
                raise CliError(f"{label} {path}:{number}: 'text' must be a string or null")
            yield text or "", record.get("slice")


class _Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled, self.start, self.done = total, enabled, time.perf_counter(), 0

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled or self.done % 65536:
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r[{bar:<30}] {frac:6.1%} {self.done:,}/{self.total:,} pairs {self.done / elapsed:,.0f}/s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def _pairs(pred_path: str, gold_path: str, progress: _Progress, slice_counts: Counter) -> Iterator[tuple]:
    preds = _records(pred_path, "PRED")
    golds = _records(gold_path, "GOLD")
    n = 0
    for pred in preds:
        gold = next(golds, None)
        if gold is None:
            raise CliError(f"line counts differ: PRED has more lines than GOLD ({n} in GOLD)")
        label = gold[1] if gold[1] is not None else pred[1]
        if label is not None:
            try:
                slice_counts[label] += 1
            except TypeError:
                raise CliError(f"line {n + 1}: 'slice' must be a string or number, got {type(label).__name__}") from None
        n += 1
        progress.update(1)
        yield pred[0], gold[0], label
    if next(golds, None) is not None:
        raise CliError(f"line counts differ: GOLD has more lines than PRED ({n} in PRED)")


# --------------------------------------------------------------------------------------- output
def _report_dict(report: Any, slice_counts: Counter, seconds: float) -> dict:
    return {
        "metric": report.metric,
        "n": report.n,
        "aggregate": report.aggregate,
        "totals": report.detail,
        "per_slice": {str(k): {"aggregate": v, "n": slice_counts[k]} for k, v in report.per_slice.items()},
        "seconds": round(seconds, 6),
        "pairs_per_second": round(report.n / seconds) if seconds > 0 else None,
    }


def _fmt(x: Optional[float]) -> str:
    return "n/a" if x is None or x != x else f"{x:.4f}"


def _print_report(report: Any, slice_counts: Counter, seconds: float, title: str = "") -> None:
    d = report.detail
    if title:
        print(title)
    print(f"{report.metric.upper()} over {report.n:,} pairs: {_fmt(report.aggregate)}"
          f"  (edits {d.get('edits', 0):,} / reference {d.get('ref_len', 0):,}; "
          f"S {d.get('substitutions', 0):,}  D {d.get('deletions', 0):,}  I {d.get('insertions', 0):,}  H {d.get('hits', 0):,})")
    if report.per_slice:
        width = max(len(str(k)) for k in report.per_slice)
        for label, value in report.per_slice.items():
            print(f"  {str(label):<{width}}  {_fmt(value)}  (n={slice_counts[label]:,})")
    if seconds > 0:
        print(f"  {report.n / seconds:,.0f} pairs/s ({seconds:.3f} s)")


# ------------------------------------------------------------------------------------- commands
def _cmd_string(mode: str, args: argparse.Namespace) -> int:
    from scorekit.facade import score

    print(score(args.prediction, args.gold, metric=mode, normalize=_normalize_arg(args.normalize)).value)
    return 0


def _cmd_eval_text(args: argparse.Namespace) -> int:
    from scorekit.facade import evaluate

    for label, path in (("PRED", args.pred), ("GOLD", args.gold)):
        if not os.path.isfile(path):
            raise CliError(f"{label} file not found: {path!r}")
    total = _count_lines(args.gold)
    show = args.progress == "always" or (args.progress == "auto" and total >= PROGRESS_MIN_PAIRS and sys.stderr.isatty())
    progress = _Progress(total, show)
    slices: Counter = Counter()
    start = time.perf_counter()
    try:
        report = evaluate(_pairs(args.pred, args.gold, progress, slices), metric=args.metric,
                          normalize=_normalize_arg(args.normalize), threads=args.threads)
    finally:
        progress.close()
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps(_report_dict(report, slices, seconds), ensure_ascii=False, indent=2))
    else:
        _print_report(report, slices, seconds)
    return 0


def load_sample_corpus() -> list[tuple[str, str, str]]:
    """The packaged sample corpus: (prediction, reference, slice) triples."""
    path = resources.files("scorekit") / "data" / "sample_corpus.jsonl"
    with path.open("r", encoding="utf-8") as f:
        return [(r["prediction"], r["reference"], r["slice"]) for r in map(json.loads, f)]


def _cmd_demo(args: argparse.Namespace) -> int:
    from scorekit._kernels import current_backend
    from scorekit.facade import evaluate

    if args.repeat < 1:
        raise CliError(f"--repeat must be >= 1, got {args.repeat}")
    corpus = load_sample_corpus()
    cases = corpus * args.repeat
    slices = Counter(label for _, _, label in cases)
    print(f"scorekit demo: {len(corpus):,} OCR-like line pairs x {args.repeat} = {len(cases):,} pairs "
          f"(backend: {current_backend()})")
    for metric in ("cer", "wer"):
        start = time.perf_counter()
        report = evaluate(cases, metric=metric)
        _print_report(report, slices, time.perf_counter() - start)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command in ("cer", "wer"):
            return _cmd_string(args.command, args)
        if args.command == "version":
            import scorekit

            print(scorekit.__version__)
            return 0
        if args.command == "eval-text":
            return _cmd_eval_text(args)
        if args.command == "rover":
            from scorekit.qe.rover import rover_command

            print(json.dumps(rover_command(args.hypotheses, not args.no_confidence), ensure_ascii=False))
            return 0
        if args.command == "flows":
            from scorekit.flows import flows_command

            return flows_command(args.pred_dir, args.ref_dir, args.json)
        return _cmd_demo(args)
    except CliError as exc:
        print(f"scorekit: error: {exc}", file=sys.stderr)
        return 2
    except (KeyError, ValueError, TypeError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"scorekit: error: {message}", file=sys.stderr)
        return 2
