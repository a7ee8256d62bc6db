"""Finding and loading the cases of a benchmark directory (docs/cases-files.md).

This module owns the case directory layout (one ``input`` and one ``expected`` file in each
immediate child directory), the two file formats (strict JSON; YAML read with YAML-1.2-like core
rules), ``$file`` references and their confinement to the case directory, and every check made on
case files before a pipeline runs. It only reads the benchmark directory, never writes to it.
"""

from __future__ import annotations

import codecs
import json
import logging
import os
import re
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from scorekit.cases.errors import CasesConfigError
from scorekit.cases.results import SkippedCase
from scorekit.errors import InvalidTypeError, InvalidValueError

__all__ = ["Case", "MAX_NESTING", "discover_cases", "read_data_file"]

logger = logging.getLogger(__name__)

ROLES = ("input", "expected")
SUFFIXES = (".json", ".yaml", ".yml")
FILE_KEY = "$file"
IGNORE = "$ignore"
#: The deepest nesting of lists and mappings a case file may hold.
MAX_NESTING = 100
# A payload may hold this many values per byte of its file (plus the slack): without YAML aliases
# every value takes at least one byte, so only an alias bomb goes over.
_VALUES_PER_BYTE = 4
_VALUES_SLACK = 10_000

# YAML 1.2 core schema, as plain-scalar resolvers (tag, pattern, possible first characters).
_YAML_BOOL = r"true|True|TRUE|false|False|FALSE"
_YAML_INT = r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
_YAML_FLOAT = (r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_YAML_NULL = r"~|null|Null|NULL|"
_YAML_RESOLVERS = [
    ("tag:yaml.org,2002:bool", _YAML_BOOL, list("tTfF")),
    ("tag:yaml.org,2002:int", _YAML_INT, list("-+0123456789")),
    ("tag:yaml.org,2002:float", _YAML_FLOAT, list("-+0123456789.")),
    ("tag:yaml.org,2002:null", _YAML_NULL, ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:merge", r"<<", ["<"]),
]

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO must not wait for a writer
_O_BINARY = getattr(os, "O_BINARY", 0)


@dataclass(frozen=True)
class Case:
    """One case: the name of its directory, the directory, the loaded input and expected payloads
    (every ``$file`` reference replaced by the file's text), the format of the input file, and
    every file loading it read (the role files and the ``$file`` targets, resolved)."""

    name: str
    directory: Path
    input: dict
    expected: dict
    input_format: str  # "json" or "yaml"
    files: tuple[Path, ...] = field(default=(), compare=False)


class _Refused(Exception):
    """A file or a value that cannot be used; the message says why."""


def discover_cases(benchmark_dir: str | os.PathLike[str], *, allow_external_files: bool = False,
                   max_file_bytes: int = 10 * 2**20) -> tuple[list[Case], list[SkippedCase]]:
    """The cases of ``benchmark_dir`` (its immediate child directories, sorted by the code points of
    their names) and the child directories skipped, each with its reason.

    Skipped, with a warning: a directory lacking an input or an expected file, and a symlink that
    resolves outside ``benchmark_dir``; skipped quietly: a directory whose name starts with ``.``.
    Every other problem (unreadable, empty or malformed files, two files for one role, an expected
    payload that is not a mapping of steps, a refused ``$file``) is collected over all cases and
    raised at the end as one :class:`CasesConfigError`.

    ``allow_external_files=True`` lets ``$file`` references and symlinked case files reach outside
    their directory; ``max_file_bytes`` caps the size of every file read.
    """
    if isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int) or max_file_bytes < 1:
        raise InvalidValueError(f"must be a positive int, got {max_file_bytes!r}", field="max_file_bytes")
    if not isinstance(benchmark_dir, (str, os.PathLike)):
        raise InvalidTypeError(f"must be a path (str or os.PathLike), got {type(benchmark_dir).__name__}",
                               field="benchmark_dir")
    root = Path(benchmark_dir)
    if not root.exists():
        raise CasesConfigError([f"benchmark directory not found: {root}"])
    if not root.is_dir():
        raise CasesConfigError([f"benchmark directory is not a directory: {root}"])
    loader = _Loader(root.resolve(), bool(allow_external_files), max_file_bytes)
    cases: list[Case] = []
    skipped: list[SkippedCase] = []
    for child in sorted(root.iterdir(), key=lambda path: path.name):
        if not child.is_dir():
            continue
        found = loader.visit(child)
        if isinstance(found, Case):
            cases.append(found)
        elif isinstance(found, SkippedCase):
            skipped.append(found)
    if loader.problems:
        raise CasesConfigError(loader.problems)
    return cases, skipped


class _Loader:
    """Loads the case directories of one benchmark, recording problems instead of raising them."""

    def __init__(self, root: Path, allow_external_files: bool, max_file_bytes: int) -> None:
        self.root = root
        self.allow_external_files = allow_external_files
        self.max_file_bytes = max_file_bytes
        self.problems: list[str] = []

    def visit(self, directory: Path) -> Case | SkippedCase | None:
        """The case held by ``directory``, why it is skipped, or ``None`` if it has problems."""
        name = directory.name
        if name.startswith("."):
            logger.info("directory %r skipped: hidden", name)
            return SkippedCase(name, "hidden directory (its name starts with '.')")
        target = directory.resolve()
        if target == self.root:
            return self._skip(name, "symlink to the benchmark directory itself")
        if not target.is_relative_to(self.root):
            return self._skip(name, f"symlink resolving outside the benchmark directory ({target})")
        try:
            entries = set(os.listdir(directory))
        except OSError as error:
            self.problems.append(f"case '{name}': cannot list its directory ({error.strerror})")
            return None
        files = {role: [role + suffix for suffix in SUFFIXES if role + suffix in entries] for role in ROLES}
        several = [role for role in ROLES if len(files[role]) > 1]
        for role in several:
            self.problems.append(f"case '{name}': multiple {role} files ({', '.join(files[role])}); keep only one")
        missing = [role for role in ROLES if not files[role]]
        if missing:
            names = ", ".join(role + suffix for role in missing for suffix in SUFFIXES)
            return self._skip(name, f"no {' or '.join(missing)} file ({names})")
        if several:
            return None
        read: list[Path] = []
        input_payload = self._load_role(name, directory / files["input"][0], target, "input", read)
        expected_payload = self._load_role(name, directory / files["expected"][0], target, "expected", read)
        if input_payload is None or expected_payload is None:
            return None
        input_format = "json" if files["input"][0].endswith(".json") else "yaml"
        return Case(name, directory, input_payload, expected_payload, input_format, tuple(dict.fromkeys(read)))

    def _skip(self, name: str, reason: str) -> SkippedCase:
        logger.warning("case directory %r skipped: %s", name, reason)
        return SkippedCase(name, reason)

    def _load_role(self, name: str, path: Path, case_dir: Path, role: str, read: list[Path]) -> dict | None:
        """The payload of one role file with its ``$file`` references expanded; ``None`` (and the
        problems recorded) if it cannot be used. Every file read is appended to ``read``."""
        label = f"case '{name}': {path.name}"
        try:
            payload = self._read_payload(path, read)
        except _Refused as refusal:
            self.problems.append(f"{label}: {refusal}")
            return None
        shape_problem = _shape_problem(role, payload)
        if shape_problem is not None:
            self.problems.append(f"{label}: {shape_problem}")
            return None
        if not _holds_file_key(payload):
            return payload
        references = _References(case_dir, self.allow_external_files, self.max_file_bytes)
        expanded = {key: references.expand(value, str(key)) for key, value in payload.items()}
        read.extend(references.read)
        if references.problems:
            self.problems.extend(f"{label}: {problem}" for problem in references.problems)
            return None
        return expanded

    def _read_payload(self, path: Path, read: list[Path]) -> Any:
        """The parsed content of a role file, checked for emptiness, depth and size; its resolved
        path is appended to ``read``."""
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError) as error:
            raise _Refused(f"cannot be read ({_reason(error)})") from None
        if not self.allow_external_files and not target.is_relative_to(self.root):
            raise _Refused(f"resolves outside the benchmark directory ({target}); "
                           "allow_external_files=True permits it")
        read.append(target)
        data = _read_regular_file(target, self.max_file_bytes)
        text = _decode(data)
        if not text.strip():
            raise _Refused("the file is empty")
        payload = _parse_json(text) if path.suffix == ".json" else _parse_yaml(text)
        if payload is None:
            raise _Refused("the file holds only null")
        # JSON holds at most one value per byte and nests at most as deep as it has brackets
        if path.suffix != ".json" or text.count("[") + text.count("{") > MAX_NESTING:
            _check_nesting(payload, _VALUES_PER_BYTE * len(data) + _VALUES_SLACK)
        return payload


def _holds_file_key(payload: Any) -> bool:
    """Whether a parsed payload has a ``$file`` key anywhere. Decided on the parsed keys, never on
    the file's text, which can spell the key with escapes (``"$fi\\u006ce"``)."""
    pending = [payload]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            if FILE_KEY in value:
                return True
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _shape_problem(role: str, payload: Any) -> str | None:
    """What is wrong with the top level of a role file's payload, or ``None``."""
    if role == "expected" and payload == IGNORE:
        return ("expected cannot be a bare '$ignore'; to ignore a step give it the value '$ignore' "
                "(e.g. {\"summary\": \"$ignore\"})")
    if not isinstance(payload, dict):
        what = "a mapping of step names to expected outputs" if role == "expected" else "a mapping"
        return f"{role} must be {what}, got {_type_name(payload)}"
    if _is_file_reference(payload):
        return f"the whole {role} payload cannot be a $file reference (it would be text, not a mapping)"
    if role == "expected":
        if not payload:
            return "expected is empty ({}): there is no step to score"
        for key in payload:
            if not isinstance(key, str):
                return f"step names must be strings, got {key!r} ({_type_name(key)})"
    return None


class _References:
    """Replaces the ``$file`` references of one payload by the text of the files they name."""

    def __init__(self, case_dir: Path, allow_external_files: bool, max_file_bytes: int) -> None:
        self.case_dir = case_dir
        self.allow_external_files = allow_external_files
        self.max_file_bytes = max_file_bytes
        self.problems: list[str] = []
        self._texts: dict[Path, str] = {}

    @property
    def read(self) -> list[Path]:
        """The resolved paths of the files read so far."""
        return list(self._texts)

    def expand(self, value: Any, where: str) -> Any:
        """``value`` (found at ``where``, e.g. ``doc.pages[0]``) with every reference replaced; the
        recursion depth is bounded by MAX_NESTING, checked before."""
        if isinstance(value, dict):
            if _is_file_reference(value):
                return self._text(value[FILE_KEY], where)
            return {key: self.expand(item, f"{where}.{key}") for key, item in value.items()}
        if isinstance(value, list):
            return [self.expand(item, f"{where}[{index}]") for index, item in enumerate(value)]
        return value

    def _text(self, reference: Any, where: str) -> str | None:
        if not isinstance(reference, str) or not reference.strip():
            self.problems.append(f"$file at {where} must be a non-empty string, got {reference!r}")
            return None
        try:
            target = self._target(reference)
            if target not in self._texts:
                self._texts[target] = _decode(_read_regular_file(target, self.max_file_bytes)).replace(
                    "\r\n", "\n").replace("\r", "\n")
            return self._texts[target]
        except _Refused as refusal:
            self.problems.append(f"$file {reference!r} at {where}: {refusal}")
            return None

    def _target(self, reference: str) -> Path:
        """The resolved path of a reference, if the confinement rules allow it."""
        path = Path(reference)
        if path.anchor and not self.allow_external_files:
            raise _Refused("absolute paths are refused; allow_external_files=True permits them")
        try:
            target = (self.case_dir / path).resolve(strict=True)
        except FileNotFoundError:
            raise _Refused("referenced file not found") from None
        except (OSError, RuntimeError, ValueError) as error:
            raise _Refused(f"cannot be resolved ({_reason(error)})") from None
        if not self.allow_external_files and not target.is_relative_to(self.case_dir):
            raise _Refused(f"resolves outside the case directory ({target}); allow_external_files=True permits it")
        return target


def read_data_file(path: "str | os.PathLike[str]", max_bytes: int = 10 * 2**20) -> Any:
    """The value of a JSON (``.json``) or YAML (any other suffix) file read by the case files'
    rules: strict UTF-8, duplicate keys refused, YAML-1.2-like scalars, a size cap; a
    ``ValueError`` saying why when it cannot be read."""
    try:
        text = _decode(_read_regular_file(Path(path), max_bytes))
        return _parse_json(text) if Path(path).suffix == ".json" else _parse_yaml(text)
    except _Refused as exc:
        raise ValueError(str(exc)) from None


def _is_file_reference(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and FILE_KEY in value


def _read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes. The type is checked before the file
    is opened, and again on the open descriptor, so a FIFO or a device is never read."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise _Refused(f"cannot be read ({_reason(error)})") from None
    _check_regular(info, limit)
    try:
        descriptor = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_BINARY)
    except OSError as error:
        raise _Refused(f"cannot be read ({_reason(error)})") from None
    with os.fdopen(descriptor, "rb") as file:
        _check_regular(os.fstat(file.fileno()), limit)
        data = file.read(limit + 1)
    if len(data) > limit:
        raise _Refused(f"is larger than {limit} bytes (max_file_bytes)")
    return data


def _check_regular(info: os.stat_result, limit: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise _Refused("is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise _Refused("is not a regular file (a FIFO, socket or device)")
    if info.st_size > limit:
        raise _Refused(f"is {info.st_size} bytes, larger than {limit} bytes (max_file_bytes)")


def _decode(data: bytes) -> str:
    """Strict UTF-8, a leading byte-order mark dropped."""
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Refused(f"is not valid UTF-8 (byte offset {start + error.start})") from None


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise _Refused(f"invalid JSON: {error.msg} (line {error.lineno}, column {error.colno})") from None
    except RecursionError:
        raise _Refused(f"nested deeper than {MAX_NESTING} levels") from None
    except ValueError as error:  # e.g. an integer with more digits than Python converts
        raise _Refused(f"invalid JSON: {error}") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise _Refused(f"duplicate key {duplicate!r} in a JSON object")
    return mapping


def _parse_yaml(text: str) -> Any:
    yaml, loader_class = _yaml_loader()
    try:
        loader = loader_class(text)  # refuses control characters at once
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        where = error.problem_mark
        at = f" (line {where.line + 1}, column {where.column + 1})" if where is not None else ""
        message = ", ".join(part for part in (error.context, error.problem) if part)
        raise _Refused(f"invalid YAML: {message}{at}") from None
    except yaml.reader.ReaderError as error:
        raise _Refused(f"invalid YAML: unacceptable character #x{error.character:04x}: {error.reason} "
                       f"(character {error.position})") from None
    except RecursionError:
        raise _Refused(f"nested deeper than {MAX_NESTING} levels") from None


@lru_cache(maxsize=1)
def _yaml_loader() -> tuple[Any, type]:
    """PyYAML and the case loader class, built on first use (PyYAML is needed only for YAML files)."""
    try:
        import yaml
    except ImportError:
        raise _Refused("reading YAML needs PyYAML, which is not installed (pip install 'pyyaml>=6')") from None
    from yaml.constructor import ConstructorError, SafeConstructor

    def scalar(loader: Any, node: Any, pattern: str, kind: str) -> str:
        text = loader.construct_scalar(node)
        if not re.fullmatch(pattern, text):
            raise ConstructorError(None, None, f"{text!r} is not a YAML 1.2 {kind}", node.start_mark)
        return text

    def construct_bool(loader: Any, node: Any) -> bool:
        return scalar(loader, node, _YAML_BOOL, "boolean").lower() == "true"

    def construct_int(loader: Any, node: Any) -> int:
        text = scalar(loader, node, _YAML_INT, "integer")
        try:
            if text.startswith(("0o", "0x")):
                return int(text[2:], 8 if text[1] == "o" else 16)
            return int(text, 10)
        except ValueError as error:  # more digits than Python converts
            raise ConstructorError(None, None, str(error), node.start_mark) from None

    def construct_float(loader: Any, node: Any) -> float:
        text = scalar(loader, node, _YAML_FLOAT, "float")
        if text.lstrip("+-").startswith("."):
            special = text.lstrip("+-").lower()
            if special in (".inf", ".nan"):
                return float(("-" if text.startswith("-") else "") + special[1:])
        return float(text)

    class CaseYamlLoader(yaml.SafeLoader):
        """SafeLoader with YAML 1.2 core resolution: no timestamps, booleans only true/false,
        decimal ``010``, ``1e3`` a float; only JSON-like types; duplicate keys refused."""

        yaml_implicit_resolvers: dict = {}
        yaml_multi_constructors: dict = {}
        yaml_constructors = {
            "tag:yaml.org,2002:null": SafeConstructor.construct_yaml_null,
            "tag:yaml.org,2002:bool": construct_bool,
            "tag:yaml.org,2002:int": construct_int,
            "tag:yaml.org,2002:float": construct_float,
            "tag:yaml.org,2002:str": SafeConstructor.construct_yaml_str,
            "tag:yaml.org,2002:seq": SafeConstructor.construct_yaml_seq,
            "tag:yaml.org,2002:map": SafeConstructor.construct_yaml_map,
            None: SafeConstructor.construct_undefined,
        }

        def construct_mapping(self, node: Any, deep: bool = False) -> dict:
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # merged keys may be overridden
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                except TypeError:
                    continue  # an unhashable key: SafeConstructor reports it
                if duplicate:
                    raise ConstructorError("while constructing a mapping", node.start_mark,
                                           f"found duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    for tag, pattern, first in _YAML_RESOLVERS:
        CaseYamlLoader.add_implicit_resolver(tag, re.compile(rf"^(?:{pattern})\Z"), first)
    return yaml, CaseYamlLoader


def _check_nesting(payload: Any, max_values: int) -> None:
    """Refuse a payload nested deeper than MAX_NESTING or holding more than ``max_values`` values
    (YAML aliases can make a small file expand without bound, or refer to themselves)."""
    pending = [(payload, 1)] if isinstance(payload, (dict, list)) else []
    count = 1
    while pending:
        value, depth = pending.pop()
        children = value.values() if isinstance(value, dict) else value
        if depth > MAX_NESTING:
            raise _Refused(f"nested deeper than {MAX_NESTING} levels")
        count += len(children)
        if count > max_values:
            raise _Refused(f"expands to more than {max_values} values (YAML aliases repeated too often?)")
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a float", type(None): "null"}.get(type(value), type(value).__name__)


def _reason(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error)
