"""``scorekit flowcharts <command>``: the flowchart benchmarks on the command line.

Label commands (``classify``, ``binary``, ``multiclass``, ``rotation``) take the ground-truth and
the prediction label files, ``TRUE PRED``, print the metrics (``--json``: strict JSON, the
summary of :mod:`scorekit.flowcharts.label_report`) and with ``--html REPORT`` also write a
self-contained HTML report. Inputs are only read; the report never overwrites them.

Bad data (an unreadable file, invalid JSON, a wrong entry) ends the run with status 2 and one
``scorekit: error: …`` line naming the file and the entry (the top-level ``scorekit`` command
prints it).

A new command is one entry of :data:`COMMANDS`: its help line, a function adding its arguments,
and the function running it (returning the exit status).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, NamedTuple

__all__ = ["COMMANDS", "Command", "add_parser"]


class Command(NamedTuple):
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _label_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("true", metavar="TRUE", help="ground-truth label file: a JSON list of {img_path, label}")
    p.add_argument("pred", metavar="PRED", help="predicted label file, paired with TRUE by position")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.add_argument("--html", metavar="REPORT", default=None,
                   help="also write a self-contained HTML report (confusion matrix, accuracy per class) to REPORT")


def _multiclass_arguments(p: argparse.ArgumentParser) -> None:
    _label_arguments(p)
    p.add_argument("--labels", default=None, metavar="LABELS",
                   help="the declared classes, in order: comma-separated strings (flowchart,table,other) or a JSON "
                        "array ('[0, 1]', '[\"a\", true]'); default: the labels found, ground truth first")


def _parse_labels(text: str) -> tuple[Any, ...]:
    """``--labels``: a JSON array (text starting with ``[``) or comma-separated strings."""
    if text.lstrip().startswith("["):
        try:
            labels = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--labels is not a valid JSON array ({exc.msg})") from None
        if not isinstance(labels, list) or any(type(x) not in (str, int, bool) for x in labels):
            raise ValueError("--labels as JSON must be an array of strings, integers or booleans")
        return tuple(labels)
    if not text:
        raise ValueError("--labels names no label")
    return tuple(text.split(","))


def _output(kind: str, benchmark: Any, args: argparse.Namespace) -> int:
    from scorekit.flowcharts import label_report

    summary = label_report.summarise(kind, benchmark)
    if args.html:
        from scorekit.report import write_report

        page = label_report.render_html(summary, f"Flowchart {kind} benchmark")
        written = write_report(args.html, page, inputs=[args.true, args.pred])
    if args.json:
        text = json.dumps(summary, ensure_ascii=False, indent=2, allow_nan=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in the data: escape it
            text = json.dumps(summary, indent=2, allow_nan=False)
        print(text)
    else:
        print(label_report.format_text(summary).encode("utf-8", "backslashreplace").decode("utf-8"))
    if args.html:
        print(f"report: {written}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _run_classify(args: argparse.Namespace) -> int:
    from scorekit.flowcharts import ClassificationBenchmark

    return _output("classify", ClassificationBenchmark(true_path=args.true, pred_path=args.pred), args)


def _run_binary(args: argparse.Namespace) -> int:
    from scorekit.flowcharts import BinaryClassificationBenchmark

    return _output("binary", BinaryClassificationBenchmark(true_path=args.true, pred_path=args.pred), args)


def _run_multiclass(args: argparse.Namespace) -> int:
    from scorekit.flowcharts import ClassificationBenchmark, MulticlassClassificationBenchmark

    if args.labels is None:  # the classes are the labels found: the generic benchmark, files read once
        return _output("multiclass", ClassificationBenchmark(true_path=args.true, pred_path=args.pred), args)
    labels = _parse_labels(args.labels)
    return _output("multiclass", MulticlassClassificationBenchmark(true_path=args.true, pred_path=args.pred,
                                                                   labels=labels), args)


def _run_rotation(args: argparse.Namespace) -> int:
    from scorekit.flowcharts import RotationBenchmark

    return _output("rotation", RotationBenchmark(true_path=args.true, pred_path=args.pred), args)


#: ``scorekit flowcharts <name>`` -> its command.
COMMANDS: dict[str, Command] = {
    "classify": Command("accuracy of any saved labels (strings, integers, booleans)", _label_arguments,
                        _run_classify),
    "binary": Command("binary classification (labels 0 and 1): precision, recall, F1, rates", _label_arguments,
                      _run_binary),
    "multiclass": Command("multiclass classification: confusion matrix and accuracy per class",
                          _multiclass_arguments, _run_multiclass),
    "rotation": Command("rotation (0, 90, 180, 270 degrees): confusion matrix and accuracy per angle",
                        _label_arguments, _run_rotation),
}


def add_parser(sub: Any) -> None:
    """Register ``scorekit flowcharts <command>`` for every entry of :data:`COMMANDS`."""
    p = sub.add_parser("flowcharts", help="flowchart benchmarks: " + ", ".join(COMMANDS))
    commands = p.add_subparsers(dest="flowcharts_command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        c = commands.add_parser(name, help=command.help, description=command.help)
        command.add_arguments(c)
        c.set_defaults(handler=command.run)
