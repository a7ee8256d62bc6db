"""Reading and checking the parsing benchmark's files (ground truth in four folders, predictions in one or more).

Every check names the file. Wrong JSON types raise TypeError (a JSON boolean is not an integer),
every other rule ValueError; files are opened once, read as UTF-8 and never written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

__all__ = ["N_DIAGRAMS_IN_BENCHMARK", "json_files", "check_folder", "load_json", "check_pred_dirs", "check_true_dirs",
           "PRED_NODE_PARTS"]

#: Flowcharts in the full benchmark.
N_DIAGRAMS_IN_BENCHMARK = 346
#: The optional parts of a predicted node, besides its number.
PRED_NODE_PARTS = ("text", "labels", "points_to")
MAX_NODE_NUMBER = 1000


def json_files(directory: Path) -> dict[str, Path]:
    """Top-level regular ``*.json`` files of ``directory`` by stem, in stem order; a missing folder is empty."""
    directory = Path(directory)
    if not directory.is_dir():
        return {}
    found = {}
    for entry in os.scandir(directory):
        if entry.name.endswith(".json") and entry.is_file():
            path = directory / entry.name
            found[path.stem] = path
    return dict(sorted(found.items()))


def check_folder(directory: Path, what: str) -> Path:
    """``directory`` as a Path, or ValueError naming it (``what``: "ground-truth nodes folder", …)
    when it does not exist or is not a folder: a missing folder is an error, not an empty one."""
    directory = Path(directory)
    if not directory.exists():
        raise ValueError(f"The {what} {str(directory)!r} does not exist.")
    if not directory.is_dir():
        raise ValueError(f"The {what} {str(directory)!r} is not a folder.")
    return directory


def load_json(path: Path) -> Any:
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: malformed JSON ({exc})") from exc


# ------------------------------------------------------------------------------------ type checks
def _list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise TypeError(f"{where} should be a list, found {type(value).__name__}.")
    return value


def _dict(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"{where} should be an object, found {type(value).__name__}.")
    return value


def _int(value: Any, where: str) -> int:
    if type(value) is not int:
        raise TypeError(f"{where} should be an integer, found {type(value).__name__}.")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{where} should be a string, found {type(value).__name__}.")
    if not value:
        raise ValueError(f"{where} should be a non-empty string.")
    return value


def _texts(value: Any, where: str) -> list[str]:
    return [_text(s, f"{where}[{i}]") for i, s in enumerate(_list(value, where))]


def _node_number(value: Any, where: str) -> int:
    number = _int(value, where)
    if number >= MAX_NODE_NUMBER:
        raise ValueError(f"{where} must be below {MAX_NODE_NUMBER}, found {number}.")
    return number


def _ints(value: Any, where: str) -> list[int]:
    return [_int(k, f"{where}[{i}]") for i, k in enumerate(_list(value, where))]


# ------------------------------------------------------------------------------------- predictions
def _check_pred_file(path: Path, data: Any, node_keys: set | None) -> tuple[dict, set | None]:
    """One prediction file -> ``{"nodes": {number: {part: value}} | None, "additional_texts": [...] | None}``."""
    data = _dict(data, f"{path}: the prediction")
    keys = set(data)
    if not keys or not keys <= {"nodes", "additional_texts"}:
        raise ValueError(f"{path}: top-level keys must be a non-empty subset of nodes, additional_texts; "
                         f"found {sorted(keys)}.")
    parsed: dict[str, Any] = {"nodes": None, "additional_texts": None}
    if "additional_texts" in data:
        parsed["additional_texts"] = _texts(data["additional_texts"], f"{path}: additional_texts")
    if "nodes" in data:
        nodes = _list(data["nodes"], f"{path}: nodes")
        if not nodes:
            raise ValueError(f"{path}: nodes must not be empty.")
        by_number: dict[int, dict] = {}
        for i, node in enumerate(nodes):
            where = f"{path}: nodes[{i}]"
            node = _dict(node, where)
            nkeys = set(node)
            parts = nkeys - {"node_number"}
            if "node_number" not in nkeys or not parts or not parts <= set(PRED_NODE_PARTS):
                raise ValueError(f"{where}: a node needs node_number and a non-empty subset of "
                                 f"{', '.join(PRED_NODE_PARTS)}; found {sorted(nkeys)}.")
            if node_keys is None:
                node_keys = nkeys
            elif nkeys != node_keys:
                raise ValueError(f"{where}: every predicted node in a folder needs the keys {sorted(node_keys)}; "
                                 f"found {sorted(nkeys)}.")
            number = _node_number(node["node_number"], f"{where}.node_number")
            if number in by_number:
                raise ValueError(f"{path}: node number {number} appears twice.")
            entry: dict[str, Any] = {}
            if "text" in node:
                entry["text"] = _text(node["text"], f"{where}.text")
            if "labels" in node:
                entry["labels"] = _texts(node["labels"], f"{where}.labels")
            if "points_to" in node:
                entry["points_to"] = _ints(node["points_to"], f"{where}.points_to")
            by_number[number] = entry
        for number, entry in by_number.items():
            for k in entry.get("points_to", ()):
                if k not in by_number:
                    raise ValueError(f"{path}: node {number} points to missing node {k}.")
        parsed["nodes"] = by_number
    return parsed, node_keys


def check_pred_dirs(pred_dirs: Sequence[Path]) -> tuple[list[str], dict[str, dict], dict[str, Path], set[str]]:
    """Check and join the prediction folders: (stems, joined predictions by stem, one path per stem, parts)."""
    if not pred_dirs:
        raise ValueError("pred_diagrams_dir must name at least one folder.")
    resolved = [os.path.realpath(d) for d in pred_dirs]
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"A prediction folder is given twice: {[str(d) for d in pred_dirs]}.")
    per_dir = []
    for directory in pred_dirs:
        files = json_files(check_folder(directory, "prediction folder"))
        if not files:
            raise ValueError(f"No prediction files (*.json) in {directory}.")
        top_keys = None
        node_keys = None
        parsed = {}
        for stem, path in files.items():
            parsed[stem], node_keys = _check_pred_file(path, load_json(path), node_keys)
            keys = {k for k, v in parsed[stem].items() if v is not None}
            if top_keys is None:
                top_keys = keys
            elif keys != top_keys:
                raise ValueError(f"{path}: every prediction file in {directory} needs the top-level keys "
                                 f"{sorted(top_keys)}; found {sorted(keys)}.")
        parts = set(top_keys or ()) - {"nodes"}
        if node_keys is not None:
            parts |= node_keys - {"node_number"}
        per_dir.append((directory, files, parsed, parts))
    supplied: dict[str, Path] = {}
    for directory, _, _, parts in per_dir:
        for part in sorted(parts):
            if part in supplied:
                raise ValueError(f"The prediction part {part!r} is supplied by both {supplied[part]} and {directory}.")
            supplied[part] = directory
    if "text" not in supplied:
        raise ValueError("Predicted node text is required: no prediction folder supplies node text.")
    text_dir = next(d for d in per_dir if "text" in d[3])
    stems = list(text_dir[1])
    for directory, files, _, _ in per_dir:
        if list(files) != stems:
            raise ValueError(f"The prediction folders {text_dir[0]} and {directory} hold different stems.")
    joined: dict[str, dict] = {}
    for stem in stems:
        nodes: dict[int, dict] | None = None
        additional = None
        numbers = None
        for _, files, parsed, _ in per_dir:
            part = parsed[stem]
            if part["additional_texts"] is not None:
                additional = part["additional_texts"]
            if part["nodes"] is not None:
                if numbers is None:
                    numbers = set(part["nodes"])
                    nodes = {n: {} for n in sorted(numbers)}
                elif set(part["nodes"]) != numbers:
                    raise ValueError(f"{files[stem]}: the node numbers differ from the other prediction folders'.")
                for n, entry in part["nodes"].items():
                    nodes[n].update(entry)  # type: ignore[index]
        joined[stem] = {"nodes": nodes, "additional_texts": additional}
    return stems, joined, dict(text_dir[1]), set(supplied)


# ----------------------------------------------------------------------------------- ground truth
_TRUE_NODE_KEYS = {"nodes": ("node_number", "text"), "labels": ("node_number", "labels"),
                   "flow": ("node_number", "points_to")}


def _check_true_file(kind: str, path: Path, data: Any) -> list:
    """One ground-truth file -> per option: ``{number: value}`` (nodes kinds) or the additional texts."""
    data = _dict(data, f"{path}: the ground truth")
    if set(data) != {"options"}:
        raise ValueError(f"{path}: a ground-truth file holds exactly one key, options; found {sorted(data)}.")
    options = _list(data["options"], f"{path}: options")
    if not options:
        raise ValueError(f"{path}: options must not be empty.")
    result = []
    for i, option in enumerate(options):
        where = f"{path}: options[{i}]"
        option = _dict(option, where)
        if kind == "additional_texts":
            if set(option) != {"additional_texts"}:
                raise ValueError(f"{where}: expected exactly the key additional_texts; found {sorted(option)}.")
            result.append(_texts(option["additional_texts"], f"{where}.additional_texts"))
            continue
        if set(option) != {"nodes"}:
            raise ValueError(f"{where}: expected exactly the key nodes; found {sorted(option)}.")
        nodes = _list(option["nodes"], f"{where}.nodes")
        if not nodes:
            raise ValueError(f"{where}: nodes must not be empty.")
        values: dict[int, Any] = {}
        for j, node in enumerate(nodes):
            nwhere = f"{where}.nodes[{j}]"
            node = _dict(node, nwhere)
            if set(node) != set(_TRUE_NODE_KEYS[kind]):
                raise ValueError(f"{nwhere}: expected exactly the keys {list(_TRUE_NODE_KEYS[kind])}; "
                                 f"found {sorted(node)}.")
            number = _node_number(node["node_number"], f"{nwhere}.node_number")
            if number in values:
                raise ValueError(f"{where}: node number {number} appears twice.")
            if kind == "nodes":
                values[number] = _text(node["text"], f"{nwhere}.text")
            elif kind == "labels":
                values[number] = _texts(node["labels"], f"{nwhere}.labels")
            else:
                targets = _ints(node["points_to"], f"{nwhere}.points_to")
                if len(set(targets)) != len(targets):
                    raise ValueError(f"{nwhere}: points_to repeats a target.")
                values[number] = targets
        if set(values) != set(range(1, len(values) + 1)):
            raise ValueError(f"{where}: node numbers must be exactly 1..{len(values)}; found {sorted(values)}.")
        result.append(dict(sorted(values.items())))
    return result


def check_true_dirs(dirs: dict[str, Path], expected: int, pred_stems: Sequence[str], allow_missing: bool
                    ) -> tuple[list[str], dict[str, dict[str, Path]], dict[str, dict[str, list]]]:
    """Check the four ground-truth folders (keys nodes, labels, flow, additional_texts) against the predictions."""
    files = {kind: json_files(check_folder(d, f"ground-truth {kind.replace('_', ' ')} folder"))
             for kind, d in dirs.items()}
    for kind, found in files.items():
        if len(found) != expected:
            raise ValueError(f"Expected {expected} ground-truth files in {dirs[kind]}, found {len(found)}.")
    if not allow_missing and len(pred_stems) != expected:
        raise ValueError(f"Expected {expected} prediction files, found {len(pred_stems)}.")
    stems = list(files["nodes"])
    for kind, found in files.items():
        if list(found) != stems:
            raise ValueError(f"The ground-truth folders {dirs['nodes']} and {dirs[kind]} hold different stems.")
    if allow_missing:
        missing = sorted(set(pred_stems) - set(stems))
        if missing:
            raise ValueError(f"Predictions without ground truth: {missing}.")
    elif list(pred_stems) != stems:
        extra = sorted(set(pred_stems) - set(stems))
        absent = sorted(set(stems) - set(pred_stems))
        raise ValueError(f"Prediction stems differ from the ground truth: missing {absent}, extra {extra}.")
    wanted = set(pred_stems)
    parsed: dict[str, dict[str, list]] = {}
    for stem in stems:
        if stem not in wanted:
            continue
        per_kind = {kind: _check_true_file(kind, files[kind][stem], load_json(files[kind][stem])) for kind in dirs}
        counts = {kind: len(v) for kind, v in per_kind.items()}
        if len(set(counts.values())) != 1:
            raise ValueError(f"Ground truth for {stem!r}: the files have different numbers of options {counts}.")
        for i in range(counts["nodes"]):
            sets = {kind: sorted(per_kind[kind][i]) for kind in ("nodes", "labels", "flow")}
            if not sets["nodes"] == sets["labels"] == sets["flow"]:
                raise ValueError(f"Ground truth for {stem!r}, option {i}: the node numbers of the nodes, labels "
                                 "and flow files differ.")
            flow = per_kind["flow"][i]
            targets = {k for ts in flow.values() for k in ts}
            for number, ts in flow.items():
                for k in ts:
                    if k not in flow:
                        raise ValueError(f"{files['flow'][stem]}: option {i}: node {number} points to missing "
                                         f"node {k}.")
                if not ts and number not in targets:
                    raise ValueError(f"{files['flow'][stem]}: option {i}: node {number} is in no edge.")
        parsed[stem] = per_kind
    kept = [s for s in stems if s in wanted]
    return kept, {s: {kind: files[kind][s] for kind in dirs} for s in kept}, parsed
