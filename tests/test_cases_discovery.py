"""Case discovery and loading (scorekit.cases.discovery; docs/cases-files.md): layout, order and
skipping, the JSON and YAML rules, ``$file`` and its confinement, every problem collected into one
error, no input file ever modified, and agreement with pyconveyor's discovery where no decision of
ours changes the result."""

from __future__ import annotations

import contextlib
import datetime
import doctest
import hashlib
import json
import logging
import math
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from doc_examples import run_python_blocks
from scorekit.cases import CasesConfigError, SkippedCase
from scorekit.cases import discovery
from scorekit.cases.discovery import MAX_NESTING, Case, discover_cases
from scorekit.errors import InvalidValueError

EXPECTED_OK = '{"step": 1}'


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def make_case(root: Path, name: str, input: str | bytes = '{"doc": "x"}', expected: str | bytes = EXPECTED_OK,
              input_file: str = "input.json", expected_file: str = "expected.json") -> Path:
    directory = root / name
    write(directory / input_file, input)
    write(directory / expected_file, expected)
    return directory


def problems_of(root: Path, **options) -> list[str]:
    with pytest.raises(CasesConfigError) as raised:
        discover_cases(root, **options)
    return raised.value.problems


def load_one(tmp_path: Path, **files: str | bytes) -> Case:
    """The single case of a benchmark holding one case ``c`` with ``files`` (name → content)."""
    for name, content in files.items():
        write(tmp_path / "c" / name.replace("_", "."), content)
    cases, skipped = discover_cases(tmp_path)
    assert skipped == []
    assert [case.name for case in cases] == ["c"]
    return cases[0]


def expected_yaml(tmp_path: Path, text: str) -> dict:
    return load_one(tmp_path, input_json="{}", expected_yaml=text).expected


def digest(root: Path) -> dict[str, tuple]:
    """Every entry under ``root``: its type, and for a file its size, mtime and SHA-256, for a
    symlink its target (FIFOs are never opened)."""
    entries = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        key = str(path.relative_to(root))
        if path.is_symlink():
            entries[key] = ("link", os.readlink(path))
        elif path.is_file():
            entries[key] = ("file", info.st_size, info.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
        else:
            entries[key] = ("other", info.st_mode, info.st_mtime_ns)
    return entries


@contextlib.contextmanager
def deadline(seconds: int):
    """Fail (instead of hanging) if the block blocks, e.g. on a FIFO."""
    def expired(signum, frame):
        raise AssertionError(f"blocked for more than {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- the benchmark directory ---------------------------------------------------------------------

def test_order_is_by_code_point_and_hidden_directories_are_skipped(tmp_path, caplog):
    for name in ["b", "a2", ".hidden", "B", "a10"]:
        make_case(tmp_path, name, input=json.dumps({"who": name}))
    write(tmp_path / "input.json", "{}")  # files in the root itself are not cases
    write(tmp_path / "expected.json", EXPECTED_OK)
    write(tmp_path / "group" / "case" / "input.json", "{}")  # not recursive: group/ is not a case
    write(tmp_path / "group" / "case" / "expected.json", EXPECTED_OK)
    with caplog.at_level(logging.WARNING, logger="scorekit.cases.discovery"):
        cases, skipped = discover_cases(tmp_path)
    assert [case.name for case in cases] == ["B", "a10", "a2", "b"]
    assert [case.input for case in cases] == [{"who": "B"}, {"who": "a10"}, {"who": "a2"}, {"who": "b"}]
    assert skipped == [
        SkippedCase(".hidden", "hidden directory (its name starts with '.')"),
        SkippedCase("group", "no input or expected file (input.json, input.yaml, input.yml, "
                             "expected.json, expected.yaml, expected.yml)"),
    ]
    warned = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert warned == ["case directory 'group' skipped: no input or expected file (input.json, input.yaml, "
                      "input.yml, expected.json, expected.yaml, expected.yml)"]


def test_case_fields_and_input_format(tmp_path):
    make_case(tmp_path, "j", input='{"a": [1, 2.5, null, true]}', expected='{"s": {"x": "y"}}')
    make_case(tmp_path, "y", input="a: 1\n", input_file="input.yml", expected="s: 2\n", expected_file="expected.yaml")
    make_case(tmp_path, "z", input="a: 2\n", input_file="input.yaml", expected='{"s": 3}')
    cases, skipped = discover_cases(str(tmp_path))
    assert skipped == []
    assert cases == [
        Case("j", tmp_path / "j", {"a": [1, 2.5, None, True]}, {"s": {"x": "y"}}, "json"),
        Case("y", tmp_path / "y", {"a": 1}, {"s": 2}, "yaml"),
        Case("z", tmp_path / "z", {"a": 2}, {"s": 3}, "yaml"),
    ]


def test_empty_benchmark_directory_gives_no_cases(tmp_path):
    assert discover_cases(tmp_path) == ([], [])


@pytest.mark.parametrize("present, reason", [
    ({"input.json": "{}"}, "no expected file (expected.json, expected.yaml, expected.yml)"),
    ({"expected.yaml": "s: 1"}, "no input file (input.json, input.yaml, input.yml)"),
    ({"INPUT.JSON": "{}", "expected.json": EXPECTED_OK}, "no input file (input.json, input.yaml, input.yml)"),
    ({"input.txt": "{}", "expected.json": EXPECTED_OK}, "no input file (input.json, input.yaml, input.yml)"),
])
def test_a_directory_lacking_a_role_file_is_skipped_with_a_warning(tmp_path, caplog, present, reason):
    for name, content in present.items():
        write(tmp_path / "c" / name, content)
    make_case(tmp_path, "ok")
    with caplog.at_level(logging.WARNING, logger="scorekit.cases.discovery"):
        cases, skipped = discover_cases(tmp_path)
    assert [case.name for case in cases] == ["ok"]
    assert skipped == [SkippedCase("c", reason)]
    assert [r.getMessage() for r in caplog.records] == [f"case directory 'c' skipped: {reason}"]


def test_missing_and_non_directory_benchmark_dir(tmp_path):
    assert problems_of(tmp_path / "nope") == [f"benchmark directory not found: {tmp_path / 'nope'}"]
    write(tmp_path / "file.json", "{}")
    assert problems_of(tmp_path / "file.json") == [f"benchmark directory is not a directory: {tmp_path / 'file.json'}"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_max_file_bytes_must_be_a_positive_int(tmp_path, bad):
    with pytest.raises(InvalidValueError, match="max_file_bytes"):
        discover_cases(tmp_path, max_file_bytes=bad)


def test_symlinked_case_directories(tmp_path):
    root = tmp_path / "bench"
    make_case(root, "real", input='{"n": 1}')
    make_case(tmp_path, "outside", input='{"secret": 1}')
    (root / "alias").symlink_to(root / "real", target_is_directory=True)
    (root / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "dangling").symlink_to(tmp_path / "gone", target_is_directory=True)
    cases, skipped = discover_cases(root)
    assert [(case.name, case.input) for case in cases] == [("alias", {"n": 1}), ("real", {"n": 1})]
    assert cases[0].directory == root / "alias"
    assert skipped == [
        SkippedCase("escape", "symlink resolving outside the benchmark directory "
                              f"({(tmp_path / 'outside').resolve()})"),
        SkippedCase("loop", "symlink to the benchmark directory itself"),
    ]


# --- configuration problems of the case files ----------------------------------------------------

@pytest.mark.parametrize("file, content, problem", [
    ("input.json", "", "input.json: the file is empty"),
    ("input.json", " \n\t\n", "input.json: the file is empty"),
    ("expected.json", "null", "expected.json: the file holds only null"),
    ("expected.yaml", "", "expected.yaml: the file is empty"),
    ("expected.yaml", "~\n", "expected.yaml: the file holds only null"),
    ("expected.yml", "# nothing but a comment\n", "expected.yml: the file holds only null"),
    ("input.yaml", "null", "input.yaml: the file holds only null"),
])
def test_an_empty_or_null_role_file_is_a_problem(tmp_path, file, content, problem):
    role = file.split(".")[0]
    other = "expected.json" if role == "input" else "input.json"
    write(tmp_path / "c" / file, content)
    write(tmp_path / "c" / other, EXPECTED_OK)
    assert problems_of(tmp_path) == [f"case 'c': {problem}"]


def test_several_files_for_one_role_are_a_problem(tmp_path):
    make_case(tmp_path, "a")
    write(tmp_path / "a" / "input.yaml", "doc: x")
    make_case(tmp_path, "b", expected="s: 1", expected_file="expected.yaml")
    write(tmp_path / "b" / "expected.yml", "s: 1")
    make_case(tmp_path, "c")
    for name in ["input.yaml", "input.yml", "expected.yml"]:
        write(tmp_path / "c" / name, "s: 1")
    assert problems_of(tmp_path) == [
        "case 'a': multiple input files (input.json, input.yaml); keep only one",
        "case 'b': multiple expected files (expected.yaml, expected.yml); keep only one",
        "case 'c': multiple input files (input.json, input.yaml, input.yml); keep only one",
        "case 'c': multiple expected files (expected.json, expected.yml); keep only one",
    ]


@pytest.mark.parametrize("input, expected, problem", [
    ("{}", '"$ignore"', "expected.json: expected cannot be a bare '$ignore'; to ignore a step give it the "
                        "value '$ignore' (e.g. {\"summary\": \"$ignore\"})"),
    ("{}", "{}", "expected.json: expected is empty ({}): there is no step to score"),
    ("{}", "[1, 2]", "expected.json: expected must be a mapping of step names to expected outputs, got a list"),
    ("{}", "3", "expected.json: expected must be a mapping of step names to expected outputs, got an integer"),
    ("{}", '"text"', "expected.json: expected must be a mapping of step names to expected outputs, got a string"),
    ('[["a", 1]]', EXPECTED_OK, "input.json: input must be a mapping, got a list"),
    ('"text"', EXPECTED_OK, "input.json: input must be a mapping, got a string"),
    ("true", EXPECTED_OK, "input.json: input must be a mapping, got a boolean"),
    ('{"$file": "doc.md"}', EXPECTED_OK,
     "input.json: the whole input payload cannot be a $file reference (it would be text, not a mapping)"),
    ("{}", '{"$file": "doc.md"}',
     "expected.json: the whole expected payload cannot be a $file reference (it would be text, not a mapping)"),
])
def test_payload_shapes(tmp_path, input, expected, problem):
    make_case(tmp_path, "c", input=input, expected=expected)
    write(tmp_path / "c" / "doc.md", "text")
    assert problems_of(tmp_path) == [f"case 'c': {problem}"]


@pytest.mark.parametrize("text, key", [("1: a\n", "1 (an integer)"), ("true: a\n", "True (a boolean)"),
                                       ("~: a\n", "None (null)"), ("s: 1\n2.5: b\n", "2.5 (a float)")])
def test_expected_step_names_must_be_strings(tmp_path, text, key):
    make_case(tmp_path, "c", expected=text, expected_file="expected.yaml")
    assert problems_of(tmp_path) == [f"case 'c': expected.yaml: step names must be strings, got {key}"]


def test_input_may_be_empty_and_keep_non_string_keys(tmp_path):
    make_case(tmp_path, "a", input="{}")
    make_case(tmp_path, "b", input="1: one\nnested: {2: two}\n", input_file="input.yaml")
    cases, _ = discover_cases(tmp_path)
    assert [case.input for case in cases] == [{}, {1: "one", "nested": {2: "two"}}]


def test_role_file_that_is_a_directory_a_fifo_or_a_link_outside(tmp_path):
    root = tmp_path / "bench"
    (root / "dir" / "input.json").mkdir(parents=True)
    write(root / "dir" / "expected.json", EXPECTED_OK)
    write(root / "fifo" / "input.json", '{"step": 2}')
    os.mkfifo(root / "fifo" / "expected.json")
    write(tmp_path / "elsewhere.json", '{"s": 9}')
    write(root / "out" / "input.json", "{}")
    (root / "out" / "expected.json").symlink_to(tmp_path / "elsewhere.json")
    write(root / "shared" / "input.json", "{}")  # a link to another case's file stays inside the root
    (root / "shared" / "expected.json").symlink_to(root / "fifo" / "input.json")
    write(root / "broken" / "input.json", "{}")
    (root / "broken" / "expected.json").symlink_to(tmp_path / "gone.json")
    outside = (f"case 'out': expected.json: resolves outside the benchmark directory "
               f"({tmp_path.resolve() / 'elsewhere.json'}); allow_external_files=True permits it")
    others = ["case 'broken': expected.json: cannot be read (No such file or directory)",
              "case 'dir': input.json: is a directory, not a file",
              "case 'fifo': expected.json: is not a regular file (a FIFO, socket or device)"]
    with deadline(10):
        assert problems_of(root) == others + [outside]
        assert problems_of(root, allow_external_files=True) == others
    for bad in ["broken", "dir"]:
        shutil.rmtree(root / bad)
    (root / "fifo" / "expected.json").unlink()
    assert problems_of(root) == [outside]
    cases, skipped = discover_cases(root, allow_external_files=True)
    assert [(case.name, case.input, case.expected) for case in cases] == [("out", {}, {"s": 9}),
                                                                           ("shared", {}, {"step": 2})]
    assert [s.name for s in skipped] == ["fifo"]


def test_the_size_cap_applies_to_role_files(tmp_path):
    make_case(tmp_path, "c", input='{"doc": "0123456789"}')  # 21 bytes
    assert problems_of(tmp_path, max_file_bytes=20) == [
        "case 'c': input.json: is 21 bytes, larger than 20 bytes (max_file_bytes)"]
    assert discover_cases(tmp_path, max_file_bytes=21)[0][0].input == {"doc": "0123456789"}


# --- decoding and JSON -----------------------------------------------------------------------------

def test_a_byte_order_mark_is_tolerated(tmp_path):
    make_case(tmp_path, "c", input=b'\xef\xbb\xbf{"doc": "\xc3\xa9"}', expected=b"\xef\xbb\xbfs: 1\n",
              expected_file="expected.yaml")
    cases, _ = discover_cases(tmp_path)
    assert (cases[0].input, cases[0].expected) == ({"doc": "é"}, {"s": 1})


def test_invalid_utf8_names_the_file_and_the_byte_offset(tmp_path):
    make_case(tmp_path, "a", input=b'{"doc": "\xff"}')
    make_case(tmp_path, "b", expected=b'\xef\xbb\xbf{"s": "\xc3"}')  # a truncated sequence after a BOM
    make_case(tmp_path, "c", expected=b"s: \xed\xa0\x80\n", expected_file="expected.yaml")  # a surrogate
    assert problems_of(tmp_path) == [
        "case 'a': input.json: is not valid UTF-8 (byte offset 9)",
        "case 'b': expected.json: is not valid UTF-8 (byte offset 10)",
        "case 'c': expected.yaml: is not valid UTF-8 (byte offset 3)",
    ]


def test_json_duplicate_keys_are_a_problem_at_any_depth(tmp_path):
    make_case(tmp_path, "a", expected='{"s": 1, "s": 2}')
    make_case(tmp_path, "b", input='{"doc": [{"k": 1, "j": 0, "k": 1}]}')
    assert problems_of(tmp_path) == ["case 'a': expected.json: duplicate key 's' in a JSON object",
                                     "case 'b': input.json: duplicate key 'k' in a JSON object"]


def test_json_nan_and_infinity_are_accepted(tmp_path):
    case = load_one(tmp_path, input_json='{"a": NaN, "b": Infinity, "c": -Infinity}', expected_json=EXPECTED_OK)
    assert math.isnan(case.input["a"]) and case.input["b"] == math.inf and case.input["c"] == -math.inf


@pytest.mark.parametrize("text, problem", [
    ('{"s": 1,}', "invalid JSON: Expecting property name enclosed in double quotes (line 1, column 9)"),
    ('{"s": 1}\n{"t": 2}', "invalid JSON: Extra data (line 2, column 1)"),
    ('{"s": 1', "invalid JSON: Expecting ',' delimiter (line 1, column 8)"),
    ('{"s": ' + "1" * 5000 + "}", "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion: "
                                  "value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit"),
])
def test_json_syntax_errors(tmp_path, text, problem):
    make_case(tmp_path, "c", expected=text)
    assert problems_of(tmp_path) == [f"case 'c': expected.json: {problem}"]


# --- YAML ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scalar, value", [
    ("2024-01-15", "2024-01-15"), ("2024-01-15T10:00:00Z", "2024-01-15T10:00:00Z"),
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("off", "off"), ("NO", "NO"), ("y", "y"), ("Yes", "Yes"),
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("False", False), ("FALSE", False),
    ("tRUE", "tRUE"),
    ("1e3", 1000.0), ("1.0e3", 1000.0), ("1.0e+3", 1000.0), ("-2E-2", -0.02), (".5", 0.5), ("1.", 1.0),
    ("010", 10), ("-010", -10), ("+7", 7), ("0o10", 8), ("0x10", 16), ("0xfF", 255),
    ("0b11", "0b11"), ("1_000", "1_000"), ("1:20", "1:20"), ("0o8", "0o8"), ("-0x10", "-0x10"),
    (".inf", math.inf), ("-.Inf", -math.inf), ("+.INF", math.inf),
    ("null", None), ("Null", None), ("NULL", None), ("~", None), ("", None), ("nULL", "nULL"),
    ("=", "="), ("'010'", "010"), ('"true"', "true"),
    ("!!str 010", "010"), ("!!int '010'", 10), ("!!float '1'", 1.0), ("!!bool 'True'", True),
])
def test_yaml_scalars_follow_the_1_2_core_rules(tmp_path, scalar, value):
    loaded = expected_yaml(tmp_path, f"s: {scalar}\n")["s"]
    assert loaded == value and type(loaded) is type(value)


def test_yaml_nan_and_keys_that_yaml_1_1_would_turn_into_booleans(tmp_path):
    loaded = expected_yaml(tmp_path, "s: .nan\nyes: 1\n'on': 2\nNO: 5\noff: x\n")
    assert math.isnan(loaded.pop("s"))
    assert loaded == {"yes": 1, "on": 2, "NO": 5, "off": "x"}


def test_yaml_merge_keys_and_aliases(tmp_path):
    text = "base: &b {x: 1, y: 2}\nstep:\n  <<: *b\n  y: 3\nagain: *b\n"
    assert expected_yaml(tmp_path, text) == {"base": {"x": 1, "y": 2}, "step": {"x": 1, "y": 3},
                                             "again": {"x": 1, "y": 2}}


@pytest.mark.parametrize("text, problem", [
    ("s: !!python/object/apply:os.system ['true']\n",
     "could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system' "
     "(line 1, column 4)"),
    ("s: !!timestamp 2024-01-15\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:timestamp' "
                                    "(line 1, column 4)"),
    ("s: !!binary aGk=\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:binary' "
                           "(line 1, column 4)"),
    ("s: !!set {a: null}\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:set' "
                             "(line 1, column 4)"),
    ("s: !custom x\n", "could not determine a constructor for the tag '!custom' (line 1, column 4)"),
    ("s: !!int 1.5\n", "'1.5' is not a YAML 1.2 integer (line 1, column 4)"),
    ("s: !!bool yes\n", "'yes' is not a YAML 1.2 boolean (line 1, column 4)"),
    ("s: 1\n---\nt: 2\n", "expected a single document in the stream, but found another document (line 2, column 1)"),
    ("s: 1\ns: 2\n", "while constructing a mapping, found duplicate key 's' (line 2, column 1)"),
    ("s: {a: 1, b: {c: 1, c: 2}}\n", "while constructing a mapping, found duplicate key 'c' (line 1, column 21)"),
    ("s: [1, 2\n", "while parsing a flow sequence, expected ',' or ']', but got '<stream end>' (line 2, column 1)"),
    ("s: {[1]: 2}\n", "while constructing a mapping, found unhashable key (line 1, column 5)"),
    ("s: " + "1" * 5000 + "\n", "Exceeds the limit (4300 digits) for integer string conversion: value has 5000 "
                                "digits; use sys.set_int_max_str_digits() to increase the limit (line 1, column 4)"),
    ("s: \x00\n", "unacceptable character #x0000: special characters are not allowed (character 3)"),
    ("s: a\ns: \x1b\n", "unacceptable character #x001b: special characters are not allowed (character 8)"),
])
def test_yaml_problems(tmp_path, text, problem):
    make_case(tmp_path, "c", expected=text, expected_file="expected.yaml")
    assert problems_of(tmp_path) == [f"case 'c': expected.yaml: invalid YAML: {problem}"]


def _pyyaml_loader_state() -> dict:
    return {loader.__name__: ({key: list(value) for key, value in loader.yaml_implicit_resolvers.items()},
                              dict(loader.yaml_constructors), dict(loader.yaml_multi_constructors))
            for loader in [yaml.SafeLoader, yaml.FullLoader, yaml.UnsafeLoader, yaml.BaseLoader]}


def test_pyyaml_global_loaders_are_not_changed(tmp_path):
    discovery._yaml_loader.cache_clear()  # build the case loader again, after the snapshot
    before = _pyyaml_loader_state()
    assert expected_yaml(tmp_path, "s: yes\n") == {"s": "yes"}
    assert _pyyaml_loader_state() == before
    assert yaml.safe_load("a: yes\nd: 2024-01-15\nn: 010") == {"a": True, "d": datetime.date(2024, 1, 15), "n": 8}


def test_a_missing_pyyaml_is_an_error_only_when_a_yaml_file_is_met(tmp_path):
    make_case(tmp_path / "json", "c")
    make_case(tmp_path / "yaml", "c", expected="s: 1\n", expected_file="expected.yaml")
    program = """
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "yaml":
            raise ModuleNotFoundError("No module named 'yaml' (blocked by the test)", name=name)
sys.meta_path.insert(0, Refuse())
from scorekit.cases import CasesConfigError
from scorekit.cases.discovery import discover_cases
print(len(discover_cases(sys.argv[1])[0]))
try:
    discover_cases(sys.argv[2])
except CasesConfigError as error:
    print(error.problems)
print("yaml" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", program, str(tmp_path / "json"), str(tmp_path / "yaml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "1",
        str(["case 'c': expected.yaml: reading YAML needs PyYAML, which is not installed (pip install 'pyyaml>=6')"]),
        "False",
    ]


# --- hostile depth and size --------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 5000, 200_000])
def test_deep_json_is_a_problem(tmp_path, depth):
    make_case(tmp_path, "c", input='{"doc": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}")
    assert problems_of(tmp_path) == [f"case 'c': input.json: nested deeper than {MAX_NESTING} levels"]


def test_nesting_up_to_the_limit_is_accepted(tmp_path):
    depth = MAX_NESTING
    case = load_one(tmp_path, input_json='{"doc": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}",
                    expected_yaml="s: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n")
    value, levels = case.expected["s"], 2
    while value:
        value, levels = value[0], levels + 1
    assert levels == depth


@pytest.mark.parametrize("text", [
    "s: " + "[" * 5000 + "]" * 5000 + "\n",
    "s: " + "{a: " * (MAX_NESTING + 1) + "1" + "}" * (MAX_NESTING + 1) + "\n",
    "s: &loop [*loop]\n",
])
def test_deep_or_self_referring_yaml_is_a_problem(tmp_path, text):
    make_case(tmp_path, "c", expected=text, expected_file="expected.yaml")
    assert problems_of(tmp_path) == [f"case 'c': expected.yaml: nested deeper than {MAX_NESTING} levels"]


def test_a_yaml_alias_bomb_is_a_problem(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, 9)]
    text = "\n".join(lines) + "\n"
    make_case(tmp_path, "c", expected=text, expected_file="expected.yaml")
    limit = 4 * len(text.encode()) + 10_000
    assert problems_of(tmp_path) == [
        f"case 'c': expected.yaml: expands to more than {limit} values (YAML aliases repeated too often?)"]


# --- $file --------------------------------------------------------------------------------------------

def test_file_references_are_replaced_by_text_in_input_and_expected(tmp_path):
    directory = make_case(tmp_path, "c",
                          input=json.dumps({"doc": {"$file": "doc.md"}, "pages": [{"$file": "sub/p1.txt"}, 7],
                                            "meta": {"$file": "doc.md", "lang": "en"},
                                            "data": {"$file": "data.json"}}),
                          expected="summary:\n  $file: expected/summary.txt\nraw: {$file: nested.txt}\n",
                          expected_file="expected.yaml")
    write(directory / "doc.md", "# Title\r\nline two\rline three\n")
    write(directory / "sub" / "p1.txt", "\ufeffpage one")
    write(directory / "data.json", '{"not": "parsed"}')
    write(directory / "expected" / "summary.txt", "A summary.")
    write(directory / "nested.txt", '{"$file": "doc.md"}')
    case = discover_cases(tmp_path)[0][0]
    assert case.input == {"doc": "# Title\nline two\nline three\n", "pages": ["page one", 7],
                          "meta": {"$file": "doc.md", "lang": "en"}, "data": '{"not": "parsed"}'}
    assert case.expected == {"summary": "A summary.", "raw": '{"$file": "doc.md"}'}


def test_references_inside_a_dict_with_other_keys_are_still_expanded(tmp_path):
    directory = make_case(tmp_path, "c", input=json.dumps({"meta": {"lang": "en", "body": {"$file": "b.txt"}}}))
    write(directory / "b.txt", "body")
    assert discover_cases(tmp_path)[0][0].input == {"meta": {"lang": "en", "body": "body"}}


@pytest.mark.parametrize("input_file, text", [
    ("input.json", '{"doc": {"$fi\\u006ce": "sub/doc.md"}}'),
    ("input.json", '{"doc": {"\\u0024\\u0066ile": "sub/doc.md"}}'),
    ("input.yaml", 'doc: {"$fi\\x6ce": sub/doc.md}\n'),
    ("input.yaml", 'doc: {"\\U00000024file": sub/doc.md}\n'),
])
def test_an_escaped_file_key_is_a_reference(tmp_path, input_file, text):
    # decided on the parsed keys: any spelling that parses to "$file" is a reference
    directory = make_case(tmp_path, "c", input=text, input_file=input_file)
    write(directory / "sub" / "doc.md", "the text")
    case = discover_cases(tmp_path)[0][0]
    assert case.input == {"doc": "the text"}
    assert case.files == ((directory / input_file).resolve(), (directory / "sub" / "doc.md").resolve(),
                          (directory / "expected.json").resolve())


def test_an_escaped_file_key_in_expected_is_confined_too(tmp_path):
    write(tmp_path / "secret.txt", "secret")
    make_case(tmp_path / "bench", "c", expected='{"step": {"$fi\\u006ce": "../../secret.txt"}}')
    assert problems_of(tmp_path / "bench") == [
        f"case 'c': expected.json: $file '../../secret.txt' at step: resolves outside the case directory "
        f"({(tmp_path / 'secret.txt').resolve()}); allow_external_files=True permits it"]


def test_file_reference_problems(tmp_path):
    root = tmp_path / "bench"
    write(tmp_path / "secret.txt", "secret")
    directory = make_case(root, "c", input=json.dumps({
        "missing": {"$file": "nope.md"},
        "up": {"$file": "../../secret.txt"},
        "absolute": {"$file": str(tmp_path / "secret.txt")},
        "link": {"$file": "link.txt"},
        "fifo": {"$file": "pipe"},
        "dir": {"$file": "folder"},
        "home": {"$file": "~/x"},
        "list": [{"$file": ""}, {"$file": "   "}, {"$file": 5}, {"$file": None}],
        "binary": {"$file": "bin.dat"},
        "through_file": {"$file": "ok.txt/x"},
    }))
    (directory / "link.txt").symlink_to(tmp_path / "secret.txt")
    os.mkfifo(directory / "pipe")
    (directory / "folder").mkdir()
    write(directory / "bin.dat", b"ok\x80")
    write(directory / "ok.txt", "fine")
    secret = (tmp_path / "secret.txt").resolve()
    label = "case 'c': input.json: "
    with deadline(10):
        problems = problems_of(root)
    assert problems == [label + p for p in [
        "$file 'nope.md' at missing: referenced file not found",
        f"$file '../../secret.txt' at up: resolves outside the case directory ({secret}); "
        "allow_external_files=True permits it",
        f"$file '{tmp_path / 'secret.txt'}' at absolute: absolute paths are refused; "
        "allow_external_files=True permits them",
        f"$file 'link.txt' at link: resolves outside the case directory ({secret}); "
        "allow_external_files=True permits it",
        "$file 'pipe' at fifo: is not a regular file (a FIFO, socket or device)",
        "$file 'folder' at dir: is a directory, not a file",
        "$file '~/x' at home: referenced file not found",
        "$file at list[0] must be a non-empty string, got ''",
        "$file at list[1] must be a non-empty string, got '   '",
        "$file at list[2] must be a non-empty string, got 5",
        "$file at list[3] must be a non-empty string, got None",
        "$file 'bin.dat' at binary: is not valid UTF-8 (byte offset 2)",
        "$file 'ok.txt/x' at through_file: cannot be resolved (Not a directory)",
    ]]


def test_allow_external_files_lifts_the_confinement_only(tmp_path):
    root = tmp_path / "bench"
    write(tmp_path / "secret.txt", "secret")
    directory = make_case(root, "c", input=json.dumps({
        "up": {"$file": "../../secret.txt"}, "absolute": {"$file": str(tmp_path / "secret.txt")},
        "link": {"$file": "link.txt"}}))
    (directory / "link.txt").symlink_to(tmp_path / "secret.txt")
    case = discover_cases(root, allow_external_files=True)[0][0]
    assert case.input == {"up": "secret", "absolute": "secret", "link": "secret"}
    write(directory / "input.json", json.dumps({"fifo": {"$file": "pipe"}, "dev": {"$file": "/dev/zero"},
                                                "dir": {"$file": str(tmp_path)}, "big": {"$file": "../../big.txt"}}))
    write(tmp_path / "big.txt", "x" * 1001)
    os.mkfifo(directory / "pipe")
    with deadline(10):
        problems = problems_of(root, allow_external_files=True, max_file_bytes=1000)
    assert problems == ["case 'c': input.json: " + p for p in [
        "$file 'pipe' at fifo: is not a regular file (a FIFO, socket or device)",
        "$file '/dev/zero' at dev: is not a regular file (a FIFO, socket or device)",
        f"$file '{tmp_path}' at dir: is a directory, not a file",
        "$file '../../big.txt' at big: is 1001 bytes, larger than 1000 bytes (max_file_bytes)",
    ]]


def test_the_size_cap_of_file_references(tmp_path):
    directory = make_case(tmp_path, "c", input='{"doc": {"$file": "d.txt"}}')  # 27 bytes
    write(directory / "d.txt", "x" * 27)
    assert discover_cases(tmp_path, max_file_bytes=27)[0][0].input == {"doc": "x" * 27}
    write(directory / "d.txt", "x" * 28)
    assert problems_of(tmp_path, max_file_bytes=27) == [
        "case 'c': input.json: $file 'd.txt' at doc: is 28 bytes, larger than 27 bytes (max_file_bytes)"]
    assert problems_of(tmp_path, max_file_bytes=26) == [
        "case 'c': input.json: is 27 bytes, larger than 26 bytes (max_file_bytes)"]


def test_a_symlinked_case_directory_confines_references_to_its_target(tmp_path):
    directory = make_case(tmp_path, "real", input='{"doc": {"$file": "d.txt"}}')
    write(directory / "d.txt", "inside")
    (tmp_path / "alias").symlink_to(directory, target_is_directory=True)
    cases, _ = discover_cases(tmp_path)
    assert [(case.name, case.input) for case in cases] == [("alias", {"doc": "inside"}), ("real", {"doc": "inside"})]


# --- every problem at once, nothing modified ---------------------------------------------------------------

def test_every_problem_of_every_case_is_raised_together(tmp_path):
    make_case(tmp_path, "a-ok")
    make_case(tmp_path, "b", input="{", expected='"$ignore"')
    make_case(tmp_path, "c", input='{"x": {"$file": "gone"}, "y": {"$file": "/etc/hostname"}}', expected="{}")
    make_case(tmp_path, "d", expected="s: 1\ns: 2\n", expected_file="expected.yaml")
    write(tmp_path / "d" / "expected.yml", "s: 1")
    make_case(tmp_path, "e", expected="s: [\n", expected_file="expected.yml")
    write(tmp_path / "f" / "input.json", "{}")  # skipped, not a problem
    with pytest.raises(CasesConfigError) as raised:
        discover_cases(tmp_path)
    assert raised.value.problems == [
        "case 'b': input.json: invalid JSON: Expecting property name enclosed in double quotes (line 1, column 2)",
        "case 'b': expected.json: expected cannot be a bare '$ignore'; to ignore a step give it the value "
        "'$ignore' (e.g. {\"summary\": \"$ignore\"})",
        "case 'c': input.json: $file 'gone' at x: referenced file not found",
        "case 'c': input.json: $file '/etc/hostname' at y: absolute paths are refused; "
        "allow_external_files=True permits them",
        "case 'c': expected.json: expected is empty ({}): there is no step to score",
        "case 'd': multiple expected files (expected.yaml, expected.yml); keep only one",
        "case 'e': expected.yml: invalid YAML: while parsing a flow node, expected the node content, "
        "but found '<stream end>' (line 2, column 1)",
    ]
    assert str(raised.value).startswith("7 configuration problems:\n  - case 'b': input.json: invalid JSON")
    assert isinstance(raised.value, ValueError)


def test_no_file_is_modified_on_success_or_on_error(tmp_path):
    root = tmp_path / "bench"
    directory = make_case(root, "a", input=b'\xef\xbb\xbf{"doc": {"$file": "d.md"}}',
                          expected="s: yes\r\nd: 2024-01-15\n", expected_file="expected.yaml")
    write(directory / "d.md", "one\r\ntwo\r")
    make_case(root, ".git")
    write(root / "notes" / "README.txt", "not a case")
    before = digest(root)
    cases, _ = discover_cases(root)
    assert cases[0].input == {"doc": "one\ntwo\n"} and cases[0].expected == {"s": "yes", "d": "2024-01-15"}
    assert digest(root) == before
    make_case(root, "bad", input='{"a": 1, "a": 2, "f": {"$file": "../a/d.md"}}', expected="{}")
    os.mkfifo(root / "bad" / "pipe")
    before = digest(root)
    with deadline(10):
        assert len(problems_of(root)) == 2
    assert digest(root) == before


# --- pyconveyor's discovery, where no decision applies ------------------------------------------------------

def _random_value(rng: random.Random, depth: int):
    kind = rng.choice(["int", "float", "str", "bool", "null", "list", "dict"] if depth < 3 else
                      ["int", "float", "str", "bool", "null"])
    if kind == "int":
        return rng.randint(-10**6, 10**6)
    if kind == "float":
        return rng.choice([0.5, -2.25, 1e-7, 3.0e20, rng.uniform(-100, 100)])
    if kind == "str":
        return "".join(rng.choice("abcxyzé ") for _ in range(rng.randint(0, 8)))
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return _random_mapping(rng, depth + 1, empty_ok=True)


def _random_mapping(rng: random.Random, depth: int, empty_ok: bool) -> dict:
    count = rng.randint(0 if empty_ok else 1, 5)
    keys = {"".join(rng.choice("abcdefgh_") for _ in range(rng.randint(1, 6))) for _ in range(count)}
    return {key: _random_value(rng, depth) for key in sorted(keys, key=lambda _: rng.random())}


def _dump(rng: random.Random, directory: Path, role: str, payload: dict) -> None:
    suffix = rng.choice([".json", ".yaml", ".yml"])
    if suffix == ".json":
        text = json.dumps(payload, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))
    else:
        text = yaml.safe_dump(payload, allow_unicode=True, sort_keys=False,
                              default_flow_style=rng.choice([False, None]))
    write(directory / (role + suffix), text)


@pytest.mark.parametrize("seed", range(6))
def test_discovery_agrees_with_pyconveyor(tmp_path, seed):
    import pyconveyor  # the reference, called as a test oracle only
    rng = random.Random(seed)
    names = {"".join(rng.choice("abAB019-_") for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(3, 9))}
    for name in names:
        directory = tmp_path / name
        directory.mkdir()
        _dump(rng, directory, "input", _random_mapping(rng, 0, empty_ok=True))
        _dump(rng, directory, "expected", _random_mapping(rng, 0, empty_ok=False))
    ours, skipped = discover_cases(tmp_path)
    theirs = pyconveyor.BenchmarkRunner(tmp_path, pipelines=[])._cases
    assert skipped == []
    assert len(ours) == len(names) >= 3
    assert [case.name for case in ours] == [case["name"] for case in theirs]
    assert [case.input for case in ours] == [case["input"] for case in theirs]
    assert [case.expected for case in ours] == [case["expected"] for case in theirs]
    assert [case.input_format for case in ours] == [case["_input_format"] for case in theirs]


# --- the documentation's examples -----------------------------------------------------------------------------

def test_documentation_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_python_blocks("cases-files.md", min_blocks=3, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


@pytest.mark.parametrize("bad", [5, None, b"dir", ["a"]])
def test_benchmark_dir_must_be_a_path(bad):
    with pytest.raises(TypeError, match="benchmark_dir must be a path"):
        discover_cases(bad)
