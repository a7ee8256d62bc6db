"""``scorekit agents score`` and ``scorekit agents gate``: recorded agent episodes scored against a
task suite, and a regression gate for a CI step (docs/agents.md#on-the-command-line).

Owns the commands' arguments, reading their files (episodes JSONL, Inspect logs in JSON or
``.eval``, the tasks file, the baseline) and their output (the printed summary and per-task table, ``--json``,
``--html``, ``--save-baseline``). Grading and every figure are :func:`scorekit.agents.harness.
score_episodes`'s, the verdict :func:`scorekit.agents.agent_regression_gate`'s, the page
:func:`scorekit.agents.report.suite_report`'s. Registered by ``scorekit.cli`` through
:func:`add_parser`; the agents package is imported only when a command runs.

Exit status: 0 done (``gate``: no regression); 1 ``gate`` only: the run regressed, or cannot be
compared with the baseline (its file is not a baseline of this suite, k, conditions or pricing);
2 bad input (usage, a missing or malformed file, an episode of no task, too few trials).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any, Optional

from scorekit.cli import CliError
from scorekit.errors import ScorekitError
from scorekit.files import strict_json_loads

__all__ = ["add_parser", "load_tasks", "read_episodes", "score", "gate"]

#: Task keys of a tasks file (JSON list or JSONL), as the bundled sample writes them.
TASK_KEYS = ("task_id", "input", "answer", "final_state", "calls", "slice", "value", "check")
#: What each built-in checker compares, and the task key that must hold it.
_CHECKER_NEEDS = {"output": "answer", "final_state": "final_state"}
#: Suffixes of an episodes file read line by line.
JSONL_SUFFIXES = (".jsonl", ".ndjson")


def _add_common(p: Any) -> None:
    p.add_argument("episodes", nargs="+", metavar="EPISODES",
                   help="recorded episodes: .jsonl files (one episode per line: OpenAI/Anthropic chat 'messages' or "
                        "scorekit 'trajectory' steps) or Inspect AI logs (.eval, or .json)")
    p.add_argument("--tasks", required=True, metavar="FILE",
                   help="the suite: a JSON list (or .jsonl) of tasks with task_id and the gold its checker reads "
                        "(answer, final_state), optionally input, calls, slice, value, check")
    p.add_argument("--k", type=int, default=None, metavar="K",
                   help="pass@k / pass^k at K (default: the trials every task has)")
    p.add_argument("--check", default="output", metavar="NAME",
                   help="checker of tasks without their own 'check': output (the default: the final answer equals "
                        "'answer'), final_state, recorded (the episodes' own success, as Inspect's scorer graded)")
    p.add_argument("--agent-version", default=None, metavar="V",
                   help="score only the episodes whose 'version' is V (needed when the files hold several versions)")
    p.add_argument("--prices", default=None, metavar="FILE",
                   help="per-token prices in LiteLLM's JSON format, for dollars and cost per success")


def add_parser(sub: Any) -> None:
    """Register ``scorekit agents score …`` and ``scorekit agents gate …``."""
    agents = sub.add_parser("agents", help="score recorded agent episodes against a task suite; gate a run in CI")
    commands = agents.add_subparsers(dest="agents_command", metavar="COMMAND", required=True)
    p = commands.add_parser("score", help="pass@k, pass^k with intervals, cost per success and a per-task table",
                            epilog="Example: scorekit agents score episodes.jsonl --tasks tasks.json --prices prices.json "
                                   "--agent-version v1 --html report.html --save-baseline baseline.json")
    _add_common(p)
    p.add_argument("--json", default=None, metavar="FILE", help="write the run's record (summary and per task) as JSON")
    p.add_argument("--html", default=None, metavar="FILE", help="write the HTML report")
    p.add_argument("--save-baseline", default=None, metavar="FILE",
                   help="write the run as the baseline 'scorekit agents gate --baseline' compares with")
    p.add_argument("--title", default="Agent suite report", help="title of the HTML report")
    p.add_argument("--open", action="store_true", help="open the written HTML report in a web browser")
    p.set_defaults(handler=score)
    p = commands.add_parser("gate", help="exit 1 when the run regressed against a baseline (or cannot be compared)",
                            epilog="Exit status: 0 no confident regression; 1 regressed, or not comparable with the "
                                   "baseline (other tasks, k, conditions or pricing; not a baseline); 2 bad input.")
    _add_common(p)
    p.add_argument("--baseline", required=True, metavar="FILE", help="a baseline written by 'agents score --save-baseline'")
    p.add_argument("--tolerance", type=float, default=0.0,
                   help="drop in success rate / pass^k tolerated beyond the interval (default 0)")
    p.add_argument("--cost-tolerance", type=float, default=0.0,
                   help="relative rise in cost per success tolerated (default 0)")
    p.set_defaults(handler=gate)


# ------------------------------------------------------------------------------------- reading
def _read_json(path: str, label: str) -> Any:
    """The strict JSON value of the file ``path`` (``label`` names it in errors)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"{label} {path!r}: invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise CliError(f"cannot read {label} {path!r}: {exc.strerror}") from None
    try:
        return strict_json_loads(text)
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, numbers out of range
        raise CliError(f"{label} {path!r}: invalid JSON ({exc})") from None
    except RecursionError:
        raise CliError(f"{label} {path!r}: invalid JSON (nested too deeply)") from None


def _json_lines(path: str, label: str) -> list[tuple[str, Any]]:
    """``(where, value)`` of every non-blank line of the JSONL file ``path``."""
    out = []
    try:
        with open(path, encoding="utf-8-sig") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                where = f"{path}:{number}"
                try:
                    out.append((where, strict_json_loads(line)))
                except ValueError as exc:
                    raise CliError(f"{label} {where}: invalid JSON ({exc})") from None
                except RecursionError:
                    raise CliError(f"{label} {where}: invalid JSON (nested too deeply)") from None
    except UnicodeDecodeError as exc:
        raise CliError(f"{label} {path!r}: invalid UTF-8 ({exc.reason})") from None
    except OSError as exc:
        raise CliError(f"cannot read {label} {path!r}: {exc.strerror}") from None
    return out


def read_episodes(paths: list[str], version: Optional[str] = None) -> list[Any]:
    """The episodes of ``paths`` (episode records, Inspect logs), in file order, those of
    ``version`` only when given: an error when the files hold several versions and none is
    chosen, or two episodes of one task claim one trial (``trial``, an Inspect epoch)."""
    from scorekit.agents.bridge import _repeated_trial, episode_from_record, episodes_from_inspect_log

    found: list[tuple[str, Any, Any]] = []  # (where, episode, version)
    for path in paths:
        if path.lower().endswith(JSONL_SUFFIXES):
            for where, record in _json_lines(path, "episodes"):
                try:
                    found.append((where, episode_from_record(record), record.get("version")))
                except (ScorekitError, ValueError, TypeError) as exc:
                    raise CliError(f"episodes {where}: {exc}") from None
            continue
        log = _inspect_eval_log(path) if path.lower().endswith(".eval") else _read_json(path, "episodes")
        if not isinstance(log, dict) or not isinstance(log.get("samples"), list):
            raise CliError(f"episodes {path!r}: not an Inspect log (a JSON object with 'samples'); episode records "
                           f"go in a file named {' or '.join('*' + s for s in JSONL_SUFFIXES)}")
        if log.get("status", "success") != "success":
            raise CliError(f"episodes {path!r}: the Inspect eval ended with status {log['status']!r}, not 'success' "
                           "(samples of an unfinished eval would be scored as the whole run)")
        try:
            episodes = list(episodes_from_inspect_log(log))
        except (ScorekitError, ValueError, TypeError) as exc:
            raise CliError(f"episodes {path!r}: {exc}") from None
        found += [(f"{path} sample {e.task_id!r} epoch {e.meta['epoch']!r}", e, None) for e in episodes]
    versions = list(dict.fromkeys(v for _, _, v in found))
    if version is not None:
        found = [item for item in found if item[2] == version]
        if not found:
            raise CliError(f"no episode has the version {version!r} (versions in the files: "
                           f"{', '.join(map(repr, versions))})")
    elif len(versions) > 1:
        raise CliError(f"the episodes are of {len(versions)} agent versions ({', '.join(map(repr, versions))}); "
                       "score one at a time with --agent-version")
    trials = [(where, e) for where, e, _ in found if e.meta.get("trial", e.meta.get("epoch")) is not None]
    repeat = _repeated_trial((e.task_id, e.meta.get("trial", e.meta.get("epoch"))) for _, e in trials)
    if repeat is not None:
        (first, _), (again, episode) = trials[repeat[0]], trials[repeat[1]]
        raise CliError(f"episodes {again}: repeats trial {episode.meta.get('trial', episode.meta.get('epoch'))!r} "
                       f"of task {episode.task_id!r} ({first}); one trial is one episode")
    return [episode for _, episode, _ in found]


def _sample_order(sample: Any) -> tuple:
    """Inspect's order of samples: by id (numbers before text), then epoch."""
    sample_id, epoch = (sample.get("id"), sample.get("epoch")) if isinstance(sample, dict) else (None, None)
    return (isinstance(sample_id, str), sample_id if isinstance(sample_id, (int, float)) else 0, str(sample_id),
            epoch if isinstance(epoch, int) else 0)


def _inspect_eval_log(path: str) -> Any:
    """An Inspect ``.eval`` log (a zip archive of ``header.json`` and one ``samples/*.json`` per
    sample and epoch) as the JSON log's object: the header with its ``samples``."""
    advice = "convert it with 'inspect log convert --to json' and pass the .json"
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if "header.json" not in names:
                raise CliError(f"episodes {path!r}: no header.json in this .eval log: the eval did not finish, or this "
                               "is not an Inspect log")
            log = strict_json_loads(archive.read("header.json").decode("utf-8"))
            samples = [strict_json_loads(archive.read(name).decode("utf-8")) for name in names
                       if name.startswith("samples/") and name.endswith(".json")]
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, UnicodeDecodeError, ValueError) as exc:
        raise CliError(f"episodes {path!r}: cannot read this Inspect .eval log ({exc}); {advice}") from None
    except RecursionError:
        raise CliError(f"episodes {path!r}: cannot read this Inspect .eval log (nested too deeply); {advice}") from None
    except OSError as exc:
        raise CliError(f"cannot read episodes {path!r}: {exc.strerror or exc}") from None
    if isinstance(log, dict):
        log["samples"] = sorted(samples, key=_sample_order)
    return log


def load_tasks(path: str, default_check: str) -> tuple[list[Any], dict[str, Any]]:
    """The suite of the tasks file ``path`` (a JSON list of task objects, or JSONL) as TaskSpecs,
    and each task's checker (its ``check``, else ``default_check``); a checker whose gold the task
    lacks (``output`` without ``answer``) is an error, not a run where every episode fails."""
    from scorekit.agents import TaskSpec
    from scorekit.agents.metrics import resolve_checker

    if path.lower().endswith(JSONL_SUFFIXES):
        rows = _json_lines(path, "tasks")
    else:
        data = _read_json(path, "tasks")
        if not isinstance(data, list):
            raise CliError(f"tasks {path!r}: expected a JSON list of task objects, got {type(data).__name__}")
        rows = [(f"{path} task {i}", row) for i, row in enumerate(data)]
    if not rows:
        raise CliError(f"tasks {path!r}: the suite has no task")
    tasks, checkers = [], {}
    for where, row in rows:
        if not isinstance(row, dict):
            raise CliError(f"tasks {where}: expected a JSON object, got {type(row).__name__}")
        unknown = [key for key in row if key not in TASK_KEYS]
        if unknown:
            raise CliError(f"tasks {where}: unknown keys {unknown} (a task has {', '.join(TASK_KEYS)})")
        task_id, check = row.get("task_id"), row.get("check", default_check)
        if not isinstance(task_id, str) or not task_id:
            raise CliError(f"tasks {where}: task_id must be a non-empty string, got {task_id!r}")
        if not isinstance(check, str):
            raise CliError(f"tasks {where}: check must be a checker name, got {check!r}")
        needed = _CHECKER_NEEDS.get(check)
        if needed is not None and needed not in row:
            raise CliError(f"tasks {where}: task {task_id!r} is checked by {check!r}, which compares with its "
                           f"{needed!r}, and it has none")
        if row.get("slice") is not None and not isinstance(row["slice"], str):
            raise CliError(f"tasks {where}: slice must be a string or null, got {row['slice']!r}")
        gold = {name: row[key] for name, key in (("output", "answer"), ("final_state", "final_state"),
                                                  ("calls", "calls")) if key in row}
        try:
            tasks.append(TaskSpec(task_id, input=row.get("input"), gold=gold or None, value=row.get("value", 1.0),
                                  slice=row.get("slice")))
            checkers[task_id] = resolve_checker(check)
        except (ScorekitError, ValueError, TypeError, KeyError) as exc:
            raise CliError(f"tasks {where}: {exc.args[0] if isinstance(exc, KeyError) else exc}") from None
    return tasks, checkers


def _score(args: Any) -> Any:
    """The run of ``args``' episodes against its tasks (:func:`score_episodes`)."""
    from scorekit.agents import load_prices
    from scorekit.agents.harness import score_episodes

    tasks, checkers = load_tasks(args.tasks, args.check)
    episodes = read_episodes(args.episodes, args.agent_version)
    prices = None
    if args.prices is not None:
        prices = load_prices(args.prices)
        unpriced = next((e for e in episodes if e.cost is None), None)
        if unpriced is not None:
            raise CliError(f"an episode of task {unpriced.task_id!r} has no token usage, so --prices would count it "
                           "as free; record 'usage' for every episode or score without --prices")
    return score_episodes(episodes, tasks, k=args.k, check=checkers, prices=prices)


def _warned(caught: list) -> None:
    for warning in caught:
        print(f"scorekit agents: warning: {warning.message}", file=sys.stderr)


def _inputs(args: Any) -> list[Any]:
    return [*args.episodes, args.tasks, args.prices, getattr(args, "baseline", None)]


# ------------------------------------------------------------------------------------- output
def _num(x: Any, digits: int = 4) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _ci(ci: Any, digits: int = 4) -> str:
    lo, hi = ci if ci else (None, None)
    return "" if lo is None or hi is None else f"  95% CI [{_num(lo, digits)}, {_num(hi, digits)}]"


def _print_run(report: Any, version: Optional[str]) -> None:
    k, cost = report.k, report.cost or {}
    name = f"agent version {version!r}: " if version is not None else ""
    print(f"{name}{report.n_tasks:,} tasks, {report.n_trials:,} episodes, k={k}")
    print(f"  success rate      {_num(report.success_rate)}{_ci(report.success_ci)}  "
          f"({report.n_success:,}/{report.n_trials:,})")
    print(f"  pass@{k:<12} {_num(report.pass_at_k)}")
    print(f"  pass^{k:<12} {_num(report.pass_hat_k)}{_ci(report.pass_hat_k_ci)}")
    if cost.get("total_dollars") is None:
        print("  dollars           not priced (give --prices)")
    else:
        per = cost.get("cost_per_success")
        print(f"  dollars           {cost['total_dollars']:.6f}  ({cost.get('total_tokens', 0):,} tokens)")
        print(f"  cost per success  {'inf (no success)' if per == float('inf') else f'{per:.6f}'}"
              f"{_ci(cost.get('cost_ci'), 6)}")
    width = max(len("task"), *(len(str(t)) for t in report.per_task))
    print(f"  {'task':<{width}}  {'successes':>9}  {f'pass@{k}':>8}  {f'pass^{k}':>8}")
    for task, row in report.per_task.items():
        successes = f"{row['c']}/{row['n']}"
        print(f"  {task!s:<{width}}  {successes:>9}  {row['pass_at_k']:>8.4f}  {row['pass_hat_k']:>8.4f}")


def _json_bytes(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


# ------------------------------------------------------------------------------------- commands
def score(args: Any) -> int:
    """``scorekit agents score``: print the run, write what was asked for (exit status 0)."""
    from scorekit.agents.harness import run_document
    from scorekit.files import check_outputs, write_atomically

    if args.open and args.html is None:
        raise CliError("--open opens the HTML report: give --html FILE too")
    check_outputs({"--json": args.json, "--html": args.html, "--save-baseline": args.save_baseline},
                  inputs=_inputs(args))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = _score(args)
    _warned(caught)
    _print_run(report, args.agent_version)
    document = _json_bytes(run_document(report))
    for option, path in (("--json", args.json), ("--save-baseline", args.save_baseline)):
        if path is not None:
            print(f"{option[2:].replace('-', ' ')}: {write_atomically(path, document)}")
    if args.html is not None:
        from scorekit.agents.report import suite_report
        from scorekit.report import open_in_browser

        suite_report({args.agent_version or "run": report}, title=args.title, path=args.html, inputs=_inputs(args))
        print(f"report: {args.html}")
        if args.open:
            open_in_browser(args.html)
    return 0


def gate(args: Any) -> int:
    """``scorekit agents gate``: 0 when the run did not confidently regress against the baseline,
    1 (with the reasons) when it did or when the two cannot be compared."""
    from scorekit.agents import agent_regression_gate
    from scorekit.harness import check_tolerance

    check_tolerance(args.tolerance, "--tolerance")
    check_tolerance(args.cost_tolerance, "--cost-tolerance")
    if not os.path.isfile(args.baseline):
        raise CliError(f"baseline file not found: {args.baseline!r}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = _score(args)
        _print_run(report, args.agent_version)
        try:
            result = agent_regression_gate(report, _read_json(args.baseline, "baseline"), tolerance=args.tolerance,
                                           cost_tolerance=args.cost_tolerance)
        except (CliError, ScorekitError, ValueError, TypeError) as exc:
            _warned(caught)
            print(f"gate: FAILED -- the run cannot be compared with the baseline {args.baseline!r}:\n  - {exc}")
            return 1
    _warned(caught)
    if result:
        print(f"gate: passed against {args.baseline!r}" + (" (underpowered: worse, not significantly)"
                                                            if result.underpowered else ""))
        return 0
    print(f"gate: FAILED against {args.baseline!r}:")
    for reason in result.reasons:
        print(f"  - {reason}")
    return 1
