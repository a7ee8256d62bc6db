"""``scorekit flowcharts <command>``: the flowchart benchmarks on the command line.

Label commands (``classify``, ``binary``, ``multiclass``, ``rotation``) take the ground-truth and
the prediction label files, ``TRUE PRED``, print the metrics (``--json``: strict JSON, the
summary of :mod:`scorekit.flowcharts.label_report`) and with ``--html REPORT`` also write a
self-contained HTML report (``--open``: then shown in the web browser). Inputs are only read:
before any work, every command checks that its input files and folders exist and that its
outputs replace none of them nor any file inside them (:func:`scorekit.files.check_outputs`).

``parse TRUE_DIR PRED_DIR [PRED_DIR ...]`` scores predicted flowcharts against the ground truth in
``TRUE_DIR`` (sub-folders ``nodes``, ``labels``, ``flow`` and ``additional_texts``, each overridable),
prints the totals (``--json``: strict JSON with one entry per flowchart) and with ``--html REPORT``
writes a self-contained HTML report: per flowchart, the node, label and additional-text matchings
whose costs add up to its scores. A node matching not proven optimal within ``--time-limit`` is
counted (``unproven_flowcharts``), listed with its bound in the flowchart's entry, and named in a
warning on stderr. Progress over the flowcharts goes to stderr when it is a terminal.

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
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional, Sequence

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
    p.add_argument("--open", action="store_true", help="open the --html report in the web browser once it is written")


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


def _input_file(name: str, path: str) -> Path:
    """An input file named on the command line, or a ValueError naming the argument."""
    given = Path(path)
    if not given.exists():
        raise ValueError(f"{name} {path!r} does not exist")
    if given.is_dir():
        raise ValueError(f"{name} {path!r} is a folder; give a file")
    return given


def _check_outputs(args: argparse.Namespace, inputs: Sequence[Path]) -> None:
    """Refuse, before any work, an output that would replace an input (or a file in an input folder)."""
    from scorekit.files import check_outputs

    check_outputs({"--html": args.html}, inputs=inputs)


def _check_open(args: argparse.Namespace) -> None:
    """Refuse ``--open`` without ``--html`` (there is no report to open), first of all."""
    if args.open and not args.html:
        raise ValueError("--open needs --html REPORT: there is no report to open")


def _output(kind: str, build: Callable[[], Any], args: argparse.Namespace) -> int:
    """Check the paths, build the benchmark, print its metrics and write the report."""
    from scorekit.flowcharts import label_report

    _check_open(args)
    inputs = [_input_file("TRUE", args.true), _input_file("PRED", args.pred)]
    _check_outputs(args, inputs)
    summary = label_report.summarise(kind, build())
    written = None
    if args.html:
        from scorekit.report import write_report

        page = label_report.render_html(summary, f"Flowchart {kind} benchmark")
        written = write_report(args.html, page, inputs=inputs)
    if args.json:
        text = json.dumps(summary, ensure_ascii=False, indent=2, allow_nan=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in the data: escape it
            text = json.dumps(summary, indent=2, allow_nan=False)
        print(text)
    else:
        print(label_report.format_text(summary).encode("utf-8", "backslashreplace").decode("utf-8"))
    _announce(args, written)
    return 0


def _announce(args: argparse.Namespace, written: Optional[Path]) -> None:
    """Name the report written (on stderr when stdout carries JSON) and open it with ``--open``."""
    if written is None:
        return
    print(f"report: {written}", file=sys.stderr if args.json else sys.stdout)
    if args.open:
        from scorekit.report import open_in_browser

        open_in_browser(written)


def _run_classify(args: argparse.Namespace) -> int:
    from scorekit.flowcharts import ClassificationBenchmark

    return _output("classify", lambda: ClassificationBenchmark(true_path=args.true, pred_path=args.pred), args)


def _run_binary(args: argparse.Namespace) -> int:
    from scorekit.flowcharts import BinaryClassificationBenchmark

    return _output("binary", lambda: BinaryClassificationBenchmark(true_path=args.true, pred_path=args.pred), args)


def _run_multiclass(args: argparse.Namespace) -> int:
    from scorekit.flowcharts import ClassificationBenchmark, MulticlassClassificationBenchmark

    if args.labels is None:  # the classes are the labels found: the generic benchmark, files read once
        return _output("multiclass", lambda: ClassificationBenchmark(true_path=args.true, pred_path=args.pred), args)
    labels = _parse_labels(args.labels)
    return _output("multiclass", lambda: MulticlassClassificationBenchmark(true_path=args.true, pred_path=args.pred,
                                                                           labels=labels), args)


def _run_rotation(args: argparse.Namespace) -> int:
    from scorekit.flowcharts import RotationBenchmark

    return _output("rotation", lambda: RotationBenchmark(true_path=args.true, pred_path=args.pred), args)


_TRUE_PARTS = (("nodes", "true_nodes_dir"), ("labels", "true_labels_dir"), ("flow", "true_flow_dir"),
               ("additional_texts", "true_additional_texts_dir"))


def _parse_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("true_dir", metavar="TRUE_DIR",
                   help="ground truth: a folder with nodes/, labels/, flow/ and additional_texts/ sub-folders")
    p.add_argument("pred_dirs", metavar="PRED_DIR", nargs="+",
                   help="predictions, one JSON file per flowchart; several folders may each supply some parts")
    for part, dest in _TRUE_PARTS:
        p.add_argument(f"--true-{part.replace('_', '-')}-dir", dest=dest, default=None, metavar="DIR",
                       help=f"ground-truth {part.replace('_', ' ')} folder (default: TRUE_DIR/{part})")
    p.add_argument("--expected-num-diagrams", type=int, default=None, metavar="N",
                   help="number of ground-truth flowcharts (default: the number of files in the nodes folder)")
    p.add_argument("--allow-missing", action="store_true",
                   help="score only the flowcharts that have a prediction")
    p.add_argument("--distance", choices=("normalised", "raw"), default="normalised",
                   help="text distance: Levenshtein after normalisation (default) or raw Levenshtein")
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="longest time spent proving the node matching of one flowchart against one ground-truth "
                        "reading optimal (default: 10); a matching not proven by then is kept, counted as "
                        "unproven and reported with its bound")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--html", metavar="REPORT", default=None,
                   help="also write a self-contained HTML report (one row per flowchart, the node, label and "
                        "additional-text matchings behind each cost) to REPORT")
    p.add_argument("--open", action="store_true", help="open the --html report in the web browser once it is written")


def _distance(name: str) -> Any:
    from scorekit.flowcharts.parsing.text_distance_fns import levenshtein_fn as fns

    return fns.levenshtein_fn if name == "raw" else fns.levenshtein_with_text_normalisation


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        end = "\n" if done == total else ""
        print(f"\rscorekit flowcharts parse: {done}/{total} flowcharts", end=end, file=sys.stderr, flush=True)


def _parse_inputs(args: argparse.Namespace) -> tuple[dict[str, Path], list[Path], list[Path]]:
    """The ground-truth folders by benchmark argument, the prediction folders, and every input
    (those folders and the JSON files in them); a missing folder is named, before any work."""
    from scorekit.flowcharts.parsing.check_parsing_bench_data import check_folder, json_files

    true_dir = Path(args.true_dir)
    if any(getattr(args, dest) is None for _, dest in _TRUE_PARTS):  # a missing TRUE_DIR is named as such
        check_folder(true_dir, "ground-truth folder TRUE_DIR")
    dirs = {}
    for part, dest in _TRUE_PARTS:
        given = getattr(args, dest)
        name = f"--true-{part.replace('_', '-')}-dir" if given else f"TRUE_DIR/{part}"
        dirs[dest] = check_folder(Path(given or true_dir / part), f"ground-truth {part.replace('_', ' ')} folder ({name})")
    pred_dirs = [check_folder(Path(d), "prediction folder PRED_DIR") for d in args.pred_dirs]
    folders = [*dirs.values(), *pred_dirs]
    return dirs, pred_dirs, [*folders, *(path for d in folders for path in json_files(d).values())]


def _run_parse(args: argparse.Namespace) -> int:
    from scorekit.flowcharts.parsing import match_diagrams as m
    from scorekit.flowcharts.parsing._costs import Costs
    from scorekit.flowcharts.parsing.check_parsing_bench_data import json_files
    from scorekit.flowcharts.parsing.parsing_bench import ParsingBenchmark

    _check_open(args)
    time_limit = m.TIME_LIMIT if args.time_limit is None else args.time_limit
    m.check_time_limit(time_limit, "--time-limit")
    dirs, pred_dirs, inputs = _parse_inputs(args)
    _check_outputs(args, inputs)
    expected = args.expected_num_diagrams
    if expected is None:
        expected = len(json_files(dirs["true_nodes_dir"]))
    bench = ParsingBenchmark(pred_dirs if len(pred_dirs) > 1 else pred_dirs[0], _distance(args.distance),
                             args.allow_missing, expected_num_diagrams=expected, time_limit=time_limit, **dirs)
    s = bench.pred_structure
    costs = Costs(bench.distance_fn)
    pairs = list(zip(bench.true_diagrams_options_list, bench.pred_diagrams))
    rows: list[dict[str, Any]] = []
    matchings: list[_Matching] = []
    for k, (options, pred) in enumerate(pairs, 1):
        nm = m.match_nodes(options, pred, costs, bench.time_limit)
        true = options.options[nm.true_diagram_option_idx]
        row: dict[str, Any] = {"stem": pred.parent_img_code, "option": nm.true_diagram_option_idx,
                               "node_text_cost": nm.total_node_text_cost,
                               "numbers_only_node_text_cost": nm.total_numbers_only_node_text_cost}
        if s.labels:
            row["label_cost"] = m.match_node_labels(nm, costs).total_label_error_cost
        texts = m.match_additional_texts(true, pred, costs) if s.additional_texts else None
        if texts is not None:
            row["additional_text_cost"] = texts.total_cost
        if s.flow:
            fs = nm.flow_score
            row.update(flow_tp=fs.tp, flow_fp=fs.fp, flow_fn=fs.fn, flow_precision=fs.precision,
                       flow_recall=fs.recall, flow_f1=fs.f1, flow_jaccard=fs.jaccard)
        row["unproven"] = [gap.model_dump() for gap in nm.unproven]
        rows.append(row)
        matchings.append(_Matching(pred.parent_img_code, nm, texts))
        _progress(k, len(pairs))
    summary: dict[str, Any] = {"flowcharts": len(rows), "parts": sorted(s.parts), "distance": args.distance,
                               "total_node_text_cost": float(sum(r["node_text_cost"] for r in rows))}
    if s.labels:
        summary["total_label_cost"] = float(sum(r["label_cost"] for r in rows))
    if s.additional_texts:
        summary["total_additional_text_cost"] = float(sum(r["additional_text_cost"] for r in rows))
    if s.flow:
        summary["avg_flow_jaccard"] = float(sum(r["flow_jaccard"] for r in rows) / len(rows)) if rows else None
    unproven = [(x.stem, x.nodes.unproven) for x in matchings if x.nodes.unproven]
    summary["unproven_flowcharts"] = len(unproven)
    written = None
    if args.html:
        written = _write_html(args, summary, rows, matchings, inputs)
    if args.json:
        print(json.dumps({"summary": summary, "flowcharts": rows}, ensure_ascii=False, indent=2, allow_nan=False)
              .encode("utf-8", "backslashreplace").decode("utf-8"))
    else:
        for key, value in summary.items():
            text = ", ".join(value) if isinstance(value, list) else (f"{value:.4f}" if isinstance(value, float)
                                                                        else str(value))
            print(f"{key}: {text}")
    _announce(args, written)
    if unproven:
        detail = "; ".join(f"{stem!r} ({', '.join(g.describe() for g in gaps)})" for stem, gaps in unproven)
        print(f"scorekit flowcharts parse: warning: the node matching of {len(unproven)} flowchart(s) is not proven "
              f"optimal within --time-limit {time_limit:g} s, so their scores may be below the best possible: "
              f"{detail}".encode("utf-8", "backslashreplace").decode("utf-8"), file=sys.stderr)
    return 0


class _Matching(NamedTuple):
    """What one flowchart's costs are made of: its node matching (with the label matching of each
    node pair once labels are scored) and its additional-text matching (``None``: not scored)."""

    stem: str
    nodes: Any
    texts: Any


def _matching_sections(x: _Matching, row: dict[str, Any]) -> list[Any]:
    """The tables behind one flowchart's costs: each row a pair (or an unmatched node, label or
    text) with its cost; the costs of a table add up to the cost in the flowchart's row."""
    from scorekit import report

    nm = x.nodes
    parts = [report.data_table(f"{x.stem}: node matching (option {nm.true_diagram_option_idx})",
                               ["true #", "true text", "pred #", "pred text", "cost"],
                               [[mt.true_node.node_number if mt.true_node else None,
                                 mt.true_node.text if mt.true_node else None,
                                 mt.pred_node.node_number if mt.pred_node else None,
                                 mt.pred_node.text if mt.pred_node else None, mt.node_text_cost]
                                for mt in nm.matches])]
    totals = [f"node text cost {row['node_text_cost']:g} (the node matching)"]
    if "label_cost" in row:
        labels = [[mt.true_node.node_number if mt.true_node else None, lm.true_text,
                   mt.pred_node.node_number if mt.pred_node else None, lm.pred_text, lm.cost]
                  for mt in nm.matches for lm in mt.label_matches.matches]
        parts.append(report.data_table(f"{x.stem}: label matching", ["true #", "true label", "pred #", "pred label",
                                                                    "cost"], labels))
        totals.append(f"label cost {row['label_cost']:g} (the label matching)")
    if x.texts is not None:
        parts.append(report.data_table(f"{x.stem}: additional-text matching",
                                       ["true index", "true text", "pred index", "pred text", "cost"],
                                       [[t.true_index, t.true_text, t.pred_index, t.pred_text, t.cost]
                                        for t in x.texts.matches]))
        totals.append(f"additional-text cost {row['additional_text_cost']:g} (the additional-text matching)")
    parts.append(report.note("Each cost is the sum of the cost column of its table: " + "; ".join(totals)
                             + ". An empty side is an unmatched node, label or text."))
    return parts


def _write_html(args: argparse.Namespace, summary: dict, rows: list[dict], matchings: list[_Matching],
                inputs: list[Path]) -> Path:
    from scorekit import report

    from scorekit.flowcharts.parsing.parsing_bench_types import Unproven

    def cell(column: str, value: Any) -> Any:  # the unproven stages as text
        return "; ".join(Unproven(**gap).describe() for gap in value) if column == "unproven" else value

    columns = list(rows[0]) if rows else ["stem"]
    sections = [report.summary_table("Totals", {k: (", ".join(v) if isinstance(v, list) else v)
                                                for k, v in summary.items()}),
                report.data_table("Flowcharts", columns, [[cell(c, r[c]) for c in columns] for r in rows],
                                  sort_by="node_text_cost", descending=True)]
    sections += [report.group(x.stem, _matching_sections(x, row)) for x, row in zip(matchings, rows)]
    page = report.render_page("Flowchart parsing benchmark", sections)
    return report.write_report(args.html, page, inputs=inputs)


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
    "parse": Command("parsing benchmark: node text, label, flow and additional-text scores of predicted flowcharts",
                     _parse_arguments, _run_parse),
}


def add_parser(sub: Any) -> None:
    """Register ``scorekit flowcharts <command>`` for every entry of :data:`COMMANDS`."""
    p = sub.add_parser("flowcharts", help="flowchart benchmarks: " + ", ".join(COMMANDS))
    commands = p.add_subparsers(dest="flowcharts_command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        c = commands.add_parser(name, help=command.help, description=command.help)
        command.add_arguments(c)
        c.set_defaults(handler=command.run)
