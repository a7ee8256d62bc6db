"""Reading a saved ``scorekit cases`` summary (issue 30, item 13): every value is checked when the
file is read, a malformed one is a ``ValueError`` naming its path inside the JSON
("malformed scorekit cases summary: pipelines[0].cases[1].overall_score: …"), and the command
line exits 1 with that line for ``--from-summary`` and ``--compare``; random mutations of a valid
summary never end in any other exception, nor in a report that cannot be drawn."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cases_report_data import detailed, multi
from scorekit.cases.cli import print_summary
from scorekit.cases.compare import compare_summaries
from scorekit.cases.report import SECTIONS, report_sections
from scorekit.cases.results import BenchmarkSummary
from scorekit.cli import main


def saved() -> dict[str, Any]:
    """A valid saved summary with every kind of value: two pipelines, an error case, a list match,
    a runner status, attempt logs, a graph."""
    summary = multi()
    summary.pipelines.append(detailed().pipelines[0])
    return json.loads(summary.to_json())


def _set(data: Any, path: list, value: Any) -> Any:
    out = copy.deepcopy(data)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


def _delete(data: Any, path: list) -> Any:
    out = copy.deepcopy(data)
    target = out
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return out


@pytest.mark.parametrize("path, value, message", [
    (["pipelines", 0, "cases", 1], "c2", "pipelines[0].cases[1]: expected an object, got a string"),
    (["pipelines", 0, "cases", 1, "overall_score"], "0.5",
     "pipelines[0].cases[1].overall_score: expected a number in [0, 1], got a string"),
    (["pipelines", 2, "cases", 0, "step_scores", 0, "score"], 1.5,
     "pipelines[2].cases[0].step_scores[0].score: expected a number in [0, 1], got 1.5"),
    (["pipelines", 0, "step_mean_accuracy", "extract"], None,
     'pipelines[0].step_mean_accuracy["extract"]: expected a number in [0, 1], got null'),
    (["pipelines", 0, "cases"], {}, "pipelines[0].cases: expected an array, got an object"),
    (["pipelines", 0, "cases", 0, "status"], "ok",
     "pipelines[0].cases[0].status: expected one of 'success', 'error', got 'ok'"),
    (["pipelines", 0, "error_count"], True, "pipelines[0].error_count: expected a whole number >= 0, got a boolean"),
    (["pass_threshold"], [1], "pass_threshold: expected a number in [0, 1], got an array"),
    (["case_names", 1], 2, "case_names[1]: expected a string, got a number"),
    (["pipelines", 0, "dag", 0, "children"], [{"kind": "llm"}], "pipelines[0].dag[0].children[0]: the key 'name' is missing"),
])
def test_a_malformed_value_is_named_by_its_path(path: list, value: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        BenchmarkSummary.from_dict(_set(saved(), path, value))
    assert str(raised.value) == f"malformed scorekit cases summary: {message}"


def test_a_missing_key_and_a_bad_list_match_are_named() -> None:
    with pytest.raises(ValueError, match=r"^malformed scorekit cases summary: pipelines\[1\]\.cases\[0\]: "
                                         r"the key 'step_scores' is missing$"):
        BenchmarkSummary.from_dict(_delete(saved(), ["pipelines", 1, "cases", 0, "step_scores"]))
    data = saved()
    steps = data["pipelines"][2]["cases"]
    where = next((c, s, f) for c, case in enumerate(steps) for s, step in enumerate(case["step_scores"])
                 for f, fs in enumerate(step["field_scores"]) if fs["match"])
    with pytest.raises(ValueError, match=r"\.match\.pairs\[0\]\[1\]: expected a whole number >= 0, got a string$"):
        BenchmarkSummary.from_dict(_set(data, ["pipelines", 2, "cases", where[0], "step_scores", where[1],
                                               "field_scores", where[2], "match", "pairs", 0, 1], "x"))


def test_a_case_named_twice_in_one_pipeline_is_refused() -> None:
    # compared and shown by name, the second case would silently hide the first
    data = saved()
    data["pipelines"][0]["cases"][1]["case_name"] = data["pipelines"][0]["cases"][0]["case_name"]
    with pytest.raises(ValueError, match=r"^malformed scorekit cases summary: pipelines\[0\]\.cases\[1\]\.case_name: "
                                         r"'c1' is already the name of pipelines\[0\]\.cases\[0\]$"):
        BenchmarkSummary.from_dict(data)


def test_to_json_replaces_the_file_atomically_never_writing_through_a_link(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text("someone else's file", encoding="utf-8")
    (tmp_path / "s.json").symlink_to(other)
    summary = BenchmarkSummary.from_dict(saved())
    summary.to_json(tmp_path / "s.json")
    assert other.read_text(encoding="utf-8") == "someone else's file"
    assert not (tmp_path / "s.json").is_symlink()
    assert BenchmarkSummary.from_json(tmp_path / "s.json").to_dict() == summary.to_dict()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.json", "s.json"]  # no temporary file left


def test_non_finite_numbers_are_refused_on_read(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(saved()).replace('"pass_threshold": 1.0', '"pass_threshold": NaN'), encoding="utf-8")
    with pytest.raises(ValueError, match="NaN is not valid JSON"):
        BenchmarkSummary.from_json(path)


@pytest.mark.parametrize("option", ["--from-summary", "--compare"])
def test_the_command_line_exits_1_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys,
                                                option: str) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.json").write_text(json.dumps(_set(saved(), ["pipelines", 0, "cases", 1, "overall_score"], "high")),
                                encoding="utf-8")
    case = tmp_path / "bench" / "c1"
    case.mkdir(parents=True)
    (case / "input.json").write_text("{}", encoding="utf-8")
    (case / "expected.json").write_text('{"s": 1}', encoding="utf-8")
    (tmp_path / "saved").mkdir()
    argv = ["--from-summary", "bad.json"] if option == "--from-summary" else ["bench", "-p", "saved:saved",
                                                                              "--compare", "bad.json"]
    code = main(["cases", *argv, "--report", "r.html"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err == (f"scorekit cases: {option} 'bad.json': malformed scorekit cases summary: "
                   "pipelines[0].cases[1].overall_score: expected a number in [0, 1], got a string\n")
    assert not Path("r.html").exists()


# ------------------------------------------------------------------------------------- fuzz
def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, prefix + (index,))
    return out


_SAVED = saved()
_PATHS = [p for p in _paths(_SAVED) if p]
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 2**70) | st.floats() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=6)


@st.composite
def mutated(draw: Any) -> Any:
    data = copy.deepcopy(_SAVED)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_PATHS))
        try:
            parent = data
            for key in path[:-1]:
                parent = parent[key]
            if draw(st.booleans()) and isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(_JSON)
        except (KeyError, IndexError, TypeError):  # an earlier mutation changed the way there
            continue
    return data


@settings(max_examples=300, deadline=None)
@given(mutated())
def test_fuzz_a_mutated_summary_is_read_and_drawn_or_refused_by_name(data: Any) -> None:
    try:
        summary = BenchmarkSummary.from_dict(data)
    except ValueError as exc:
        assert str(exc).startswith(("malformed scorekit cases summary: ", "not a saved scorekit cases summary"))
        return
    # what was read renders: console, every report section, a comparison, the JSON again
    print_summary(summary, io.StringIO())
    report_sections(summary, SECTIONS, previous=BenchmarkSummary.from_dict(_SAVED))
    compare_summaries(summary, summary)
    assert BenchmarkSummary.from_dict(json.loads(summary.to_json())).to_dict() == summary.to_dict()
