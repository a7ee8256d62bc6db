"""Named comparators of scorekit.cases (docs/cases.md, "Named comparators"): each rule against
hand-computed values and the textbook Levenshtein of the text fuzz tests, the path patterns and their errors,
the runner's labels and field roll-up, and ``scorekit cases --comparators`` end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit.cases import BenchmarkRunner, CasesConfigError, ComparatorError, score_step
from scorekit.cases.comparators import comparator, load_comparators, resolve_comparators, similarity
from scorekit.cases.errors import ComparatorConfigError
from scorekit.cli import main
from scorekit.demo_report import CASES_SAMPLE
from test_fuzz_text import levenshtein_dp


def score(spec, actual, expected):
    """The field score of one value through the scorer, as the runner calls the comparator."""
    return score_step({"f": actual}, {"f": expected}, comparators={"step.f": comparator(spec)}).score


# ------------------------------------------------------------------------------- the rules
@pytest.mark.parametrize("actual, expected, want", [
    ("a", "a", 1.0), (1, 1.0, 1.0), (True, 1, 0.0), (None, None, 1.0), ("A", "a", 0.0), ([1, 2], [1, 2], 1.0),
    ([2, 1], [1, 2], 0.0)])
def test_exact_is_json_equality(actual, expected, want):
    assert score("exact", actual, expected) == want


@pytest.mark.parametrize("actual, expected, want", [
    ("ACME corp", "acme CORP", 1.0), ("STRASSE", "Straße", 1.0), ("acme ", "ACME", 0.0), (1, 1, 1.0),
    ("1", 1, 0.0), (None, "x", 0.0)])
def test_casefold_folds_text_only(actual, expected, want):
    assert score("casefold", actual, expected) == want


def test_fuzzy_scores_the_similarity_from_the_threshold_up():
    # kitten -> sitting: 3 edits over 7 code points
    assert similarity("kitten", "sitting") == 1 - 3 / 7
    assert score({"name": "fuzzy", "threshold": 0.5}, "sitting", "kitten") == 1 - 3 / 7
    assert score("fuzzy", "sitting", "kitten") == 0.0  # default threshold 0.8
    # "Globex Corp." -> "Globex Corporation": "." -> "o" and 6 letters inserted: 7 edits over 18
    sim = 1 - 7 / 18
    assert similarity("Globex Corp.", "Globex Corporation") == sim == pytest.approx(11 / 18)
    assert score({"name": "fuzzy", "threshold": sim}, "Globex Corp.", "Globex Corporation") == sim  # reached
    assert score({"name": "fuzzy", "threshold": math.nextafter(sim, 1)}, "Globex Corp.", "Globex Corporation") == 0
    assert score("fuzzy", "café", "cafe") == 0.0 and score({"name": "fuzzy", "threshold": 0.75}, "café", "cafe") == 0.75
    assert score("fuzzy", "", "") == 1.0 and score({"name": "fuzzy", "threshold": 0}, "", "abc") == 0.0
    assert score("fuzzy", None, "abc") == 0.0 and score("fuzzy", 5, 5) == 1.0 and score("fuzzy", "5", 5) == 0.0


def test_fuzzy_refuses_a_lone_surrogate():
    with pytest.raises(ComparatorError, match="lone surrogate"):
        score("fuzzy", "\ud800", "a")


@settings(max_examples=300, deadline=None)
@given(st.text("abcé€😀 ", max_size=12), st.text("abcé€😀 ", max_size=12))
def test_similarity_against_the_textbook_levenshtein(a, b):
    want = 1.0 if not a and not b else 1 - levenshtein_dp(a, b) / max(len(a), len(b))
    assert similarity(a, b) == want


@pytest.mark.parametrize("options, actual, expected, want", [
    ({"abs": 0.01}, 104.01, 104.0, 1.0),  # exactly a cent: inside (float subtraction says 0.010000000000005)
    ({"abs": 0.01}, 103.99, 104.0, 1.0),
    ({"abs": 0.01}, 104.0100001, 104.0, 0.0),
    ({"abs": 0.01}, 104.02, 104.0, 0.0),
    ({"rel": 0.01}, 101, 100, 1.0), ({"rel": 0.01}, 99, 100, 1.0), ({"rel": 0.01}, 101.01, 100, 0.0),
    ({"rel": 0.01}, -101, -100, 1.0),
    ({"abs": 0.5, "rel": 0.01}, 1.4, 1.0, 1.0),  # the larger tolerance: abs here
    ({"abs": 0.5, "rel": 0.01}, 100.9, 100, 1.0),  # rel here
    ({}, 1, 1.0, 1.0), ({}, 0.1 + 0.2, 0.3, 0.0),
    ({}, 10**30 + 1, 10**30, 0.0), ({"abs": 1}, 10**30 + 1, 10**30, 1.0),  # ints exactly
    ({"abs": 1}, "104.0", 104.0, 0.0), ({"abs": 1}, True, 1, 0.0), ({"abs": 1}, None, 0, 0.0),
    ({"abs": 1e300}, math.nan, 0.0, 0.0), ({"abs": 1e300}, math.inf, 0.0, 0.0), ({"abs": 1e300}, -math.inf, 0.0, 0.0),
])
def test_numeric_tolerance_on_the_written_decimals(options, actual, expected, want):
    assert abs(104.01 - 104.0) > 0.01  # why the rule compares decimals, not floats
    assert score({"name": "numeric", **options}, actual, expected) == want


@pytest.mark.parametrize("expected", [math.nan, math.inf, "104.0", None, True, [1]])
def test_numeric_refuses_an_expected_value_that_is_not_a_finite_number(expected):
    with pytest.raises(ComparatorError, match=r"'step.f' raised InvalidValueError: numeric: the expected value is"):
        score("numeric", 1.0, expected)


@pytest.mark.parametrize("spec, actual, expected, want", [
    ("date", "2024-01-17", "2024-01-17", 1.0),
    ("date", "2024-01-18", "2024-01-17", 0.0),
    ("date", "17.01.2024", "2024-01-17", 0.0),  # not ISO, no format given: unparsable, 0
    ({"name": "date", "formats": ["%d.%m.%Y"]}, "17.01.2024", "2024-01-17", 1.0),
    ({"name": "date", "formats": "%d.%m.%Y"}, "2024-01-17", "17.01.2024", 1.0),
    ("date", "2024-02-30", "2024-02-28", 0.0),  # no such day
    ("date", "20240117", "2024-01-17", 0.0),  # only YYYY-MM-DD is ISO here
    ("date", None, "2024-01-17", 0.0), ("date", 20240117, "2024-01-17", 0.0),
    # "01/02/2024" is 1 February or 2 January: ambiguous, never a match
    ({"name": "date", "formats": ["%d/%m/%Y", "%m/%d/%Y"]}, "01/02/2024", "2024-02-01", 0.0),
    ({"name": "date", "formats": ["%d/%m/%Y", "%m/%d/%Y"]}, "13/02/2024", "2024-02-13", 1.0),
])
def test_date_compares_parsed_dates(spec, actual, expected, want):
    assert score(spec, actual, expected) == want


@pytest.mark.parametrize("spec, expected, why", [
    ("date", "next tuesday", "'next tuesday' is not a date"),
    ("date", None, "None \\(NoneType\\) is not a text"),
    ({"name": "date", "formats": ["%d/%m/%Y", "%m/%d/%Y"]}, "01/02/2024", "is ambiguous: the formats read it as "
                                                                           "2024-01-02, 2024-02-01")])
def test_date_refuses_an_expected_value_that_is_not_one_date(spec, expected, why):
    with pytest.raises(ComparatorError, match=f"date: the expected value .*{why}"):
        score(spec, "2024-01-17", expected)


@pytest.mark.parametrize("actual, expected, want", [
    (["a", "b", "d", "e"], ["a", "b", "c"], 2 * 2 / (4 + 3)),  # 2 in common: P 2/4, R 2/3
    (["b", "a"], ["a", "b"], 1.0), (["a", "a"], ["a"], 1.0),  # order and repeats do not count
    ([], [], 1.0), ([], ["a"], 0.0), (["a"], [], 0.0), ("a", ["a"], 0.0), (None, ["a"], 0.0),
    ([1.0, True], [1, 1], 2 * 1 / (2 + 1)),  # 1 == 1.0, but true is not 1
    ([{"x": 1}, "a"], ["a"], 2 * 1 / (2 + 1)), ([math.nan], [1], 0.0), ([None], [None], 1.0),
])
def test_set_is_the_f1_of_the_elements(actual, expected, want):
    assert score("set", actual, expected) == want


def test_set_on_an_ordered_list_and_its_refusals():
    assert score_step({"k": ["b", "a"]}, {"k": {"$ordered": ["a", "b"]}},
                      comparators={"step.k": comparator("set")}).score == 1.0
    for expected in ("a", [{"x": 1}], [math.inf]):
        with pytest.raises(ComparatorError, match="set: the expected"):
            score("set", ["a"], expected)


@pytest.mark.parametrize("spec, problem", [
    ("fuzzzy", "unknown comparator 'fuzzzy' (the comparators are exact, casefold, fuzzy, numeric, date, set)"),
    ({"name": "numeric", "tol": 1}, "numeric has no option 'tol' (its options: abs, rel)"),
    ({"name": "exact", "threshold": 1}, "exact has no option 'threshold' (its options: none)"),
    ({"name": "fuzzy", "threshold": 1.5}, "fuzzy option 'threshold' must be a number in [0, 1], got 1.5"),
    ({"name": "numeric", "abs": -1}, "numeric option 'abs' must be a finite number >= 0, got -1"),
    ({"name": "numeric", "abs": math.nan}, "numeric option 'abs' must be a finite number >= 0, got nan"),
    ({"name": "numeric", "rel": True}, "numeric option 'rel' must be a finite number >= 0, got True"),
    ({"name": "numeric", "abs": 10**400}, "numeric option 'abs' must be a finite number >= 0, got 1000"),
    ({"name": "fuzzy", "threshold": "0.8"}, "fuzzy option 'threshold' must be a number in [0, 1], got '0.8'"),
    ({"name": "date", "formats": ["dd.mm.yyyy"]}, "date option 'formats' must be a list of strptime formats"),
    ({"threshold": 1}, "a comparator is a name (exact, casefold, fuzzy, numeric, date, set) or a mapping"),
    (3, "a comparator is a name"),
])
def test_bad_specs_are_named(spec, problem):
    with pytest.raises(CasesConfigError) as info:
        comparator(spec)
    assert info.value.problems[0].startswith(problem)


def test_labels_and_keyword_options():
    assert comparator("numeric", abs=0.01).label == "numeric(abs=0.01, rel=0)"
    assert comparator("numeric", abs=0.01) == comparator({"name": "numeric", "abs": 0.01})
    assert comparator("fuzzy").label == "fuzzy(threshold=0.8)" and comparator("set").label == "set"
    assert comparator("date", formats=["%d.%m.%Y"]).label == "date(formats=['%d.%m.%Y'])"


# ------------------------------------------------------------------------------------ paths
EXPECTED = [{"extract": {"total": 1.0, "items": [{"qty": 1, "sku": "A"}], "meta": {"a": 1},
                         "steps": {"$ordered": [{"x": 1}]}}, "classify": "x"},
            {"extract": {"total": 2.0, "items": [], "grid": [[1, 2]]}}]


@pytest.mark.parametrize("pattern, keys", [
    ("extract.items.*.qty", ["extract.items[].qty"]),
    ("extract.items[].qty", ["extract.items[].qty"]),  # the Python API's spelling
    ("*.total", ["extract.total"]),
    ("extract.*", ["extract.grid", "extract.items", "extract.meta", "extract.steps", "extract.total"]),
    ("extract.items.*", ["extract.items[]"]),
    ("extract.meta.*", ["extract.meta.a"]),
    ("extract.steps.*.x", ["extract.steps[].x"]),  # an $ordered list's items
    ("extract.grid.*.*", ["extract.grid[][]"]),
    ("classify", ["classify"]),
])
def test_patterns_reach_every_place_in_any_case(pattern, keys):
    assert sorted(resolve_comparators({pattern: "exact"}, EXPECTED)) == keys


def test_the_fewest_wildcards_win_and_ties_must_agree():
    resolved = resolve_comparators({"extract.meta.*": "casefold", "extract.meta.a": "numeric"}, EXPECTED)
    assert resolved == {"extract.meta.a": comparator("numeric")}
    assert len(resolve_comparators({"*.total": "exact", "extract.*": "exact"}, EXPECTED)) == 5
    with pytest.raises(ComparatorConfigError, match="comparator paths '\\*.total' and 'extract.\\*' both give "
                                                    "'extract.total' a comparator"):
        resolve_comparators({"*.total": "numeric", "extract.*": "casefold"}, EXPECTED)


def test_path_problems_are_all_listed():
    with pytest.raises(ComparatorConfigError) as info:
        resolve_comparators({"extract.items.0.qty": "exact", "extract.nope": "exact", "nope.*": "exact",
                             "extract.*": "exact", "extract.items.*.sku": "exact", "classify": "bogus"}, EXPECTED)
    assert info.value.problems == [
        "comparator for 'classify': unknown comparator 'bogus' (the comparators are exact, casefold, fuzzy, numeric, "
        "date, set)",
        "comparator path 'extract.items.0.qty' matches no field of any case's expected output",
        "comparator path 'extract.nope' matches no field of any case's expected output",
        "comparator path 'nope.*' matches no field of any case's expected output",
        "comparator path 'extract.items.*.sku' ('extract.items[].sku') is never used: 'extract.*' compares the "
        "whole of 'extract.items'"]
    with pytest.raises(ComparatorConfigError, match="index keys are not supported"):
        resolve_comparators({"extract.items[0].qty": "exact"}, EXPECTED)


# ------------------------------------------------------------------------------------ runner
def write_case(root: Path, name: str, inp: dict, expected: dict) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "input.json").write_text(json.dumps(inp), encoding="utf-8")
    (root / name / "expected.json").write_text(json.dumps(expected), encoding="utf-8")


OUTPUTS = {
    "a": {"extract": {"vendor": "acme corp", "total": 10.01, "date": "17.01.2024",
                      "items": [{"qty": 2.004, "sku": "X"}, {"qty": 1, "sku": "Y"}]}},
    "b": {"extract": {"vendor": "Globex", "total": "9.99", "date": "2024-01-18", "items": [{"qty": 5, "sku": "Z"}]}},
}
EXPECTEDS = {
    "a": {"extract": {"vendor": "ACME Corp", "total": 10.0, "date": "2024-01-17",
                      "items": [{"qty": 1, "sku": "Y"}, {"qty": 2, "sku": "X"}]}},
    "b": {"extract": {"vendor": "Globex Inc", "total": 9.99, "date": "2024-01-18", "items": [{"qty": 5, "sku": "Z"}]}},
}
SPECS = {"extract.vendor": "casefold", "*.total": {"name": "numeric", "abs": 0.01},
         "extract.date": {"name": "date", "formats": ["%d.%m.%Y"]},
         "extract.items.*.qty": {"name": "numeric", "abs": 0.01}}


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    for name in EXPECTEDS:
        write_case(tmp_path / "bench", name, {"case": name}, EXPECTEDS[name])
    return tmp_path / "bench"


def pipeline(case_input):
    return OUTPUTS[case_input["case"]]


def test_runner_scores_labels_and_rolls_up(bench: Path):
    (p,) = BenchmarkRunner(bench, [pipeline], SPECS, jobs=1).run().pipelines
    a, b = p.cases
    fields_a = {f.field: (f.score, f.comparator) for f in a.step_scores[0].field_scores}
    assert fields_a == {"extract.vendor": (1.0, "casefold"), "extract.total": (1.0, "numeric(abs=0.01, rel=0)"),
                        "extract.date": (1.0, "date(formats=['%d.%m.%Y'])"),
                        "extract.items": (1.0, "*.qty: numeric(abs=0.01, rel=0)")}
    # b: "Globex" is not "Globex Inc"; "9.99" is text, not a number; items right
    fields_b = {f.field: f.score for f in b.step_scores[0].field_scores}
    assert fields_b == {"extract.vendor": 0.0, "extract.total": 0.0, "extract.date": 1.0, "extract.items": 1.0}
    assert (a.overall_score, b.overall_score) == (1.0, 0.5)
    assert p.fields == [
        {"field": "extract.total", "mean": 0.5, "count": 2, "comparator": "numeric(abs=0.01, rel=0)"},
        {"field": "extract.vendor", "mean": 0.5, "count": 2, "comparator": "casefold"},
        {"field": "extract.date", "mean": 1.0, "count": 2, "comparator": "date(formats=['%d.%m.%Y'])"},
        {"field": "extract.items", "mean": 1.0, "count": 2, "comparator": "*.qty: numeric(abs=0.01, rel=0)"}]


def test_runner_in_worker_processes_gives_the_same_summary(bench: Path):
    one = BenchmarkRunner(bench, [pipeline], SPECS).run()
    two = BenchmarkRunner(bench, [pipeline], SPECS, jobs=2).run()
    strip = lambda s: [[(c.overall_score, [f.to_dict() for st in c.step_scores for f in st.field_scores])
                        for c in p.cases] for p in s.pipelines]
    assert strip(one) == strip(two)


def test_runner_comparator_problems_before_anything_runs(bench: Path):
    ran = []
    with pytest.raises(ComparatorConfigError) as info:
        BenchmarkRunner(bench, [lambda i: ran.append(i) or {}], {"extract.totl": "numeric"})
    assert info.value.problems == ["comparator path 'extract.totl' matches no field of any case's expected output"]
    assert ran == []
    # with other problems, one CasesConfigError lists them all
    with pytest.raises(CasesConfigError) as info:
        BenchmarkRunner(bench, [pipeline], {"extract.totl": "numeric"}, pass_threshold=2)
    assert not isinstance(info.value, ComparatorConfigError) and len(info.value.problems) == 2


def test_a_bad_expected_value_makes_its_case_an_error(bench: Path):
    (p,) = BenchmarkRunner(bench, [pipeline], {"extract.vendor": "date"}).run().pipelines
    assert [c.status for c in p.cases] == ["error", "error"]
    assert "'extract.vendor' raised InvalidValueError: date: the expected value 'ACME Corp' is not a date" \
        in p.cases[0].error_message


# --------------------------------------------------------------------------------------- CLI
def run(capsys, *argv):
    code = main(["cases", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


SAMPLE_FIELDS_V1 = [  # by hand from data/cases_sample (outputs_v1) and its comparators.yaml
    ("extract.publication_year", 0.0, 1, None),                # "2024" is not 2024
    ("extract.methods", 1 / 3, 1, None),                       # $ordered: one position of three right
    ("extract.line_items", (13 / 15 + 1 / 2) / 2, 2,           # acme: washer 3 of 5 fields; globex: 1 item of 2
     "*.amount: numeric(abs=0.01, rel=0); *.unit_price: numeric(abs=0.01, rel=0)"),
    ("extract.authors", 2 * 2 / (2 + 3), 1, "set"),            # 2 of 3 authors, no extra
    ("extract.vendor", (1 + 11 / 18 + 1) / 3, 3, "fuzzy(threshold=0.6)"),  # "Globex Corp.": 11/18
    ("classify", 1.0, 3, "casefold"), ("extract.currency", 1.0, 2, None), ("extract.doi", 1.0, 1, None),
    ("extract.invoice_number", 1.0, 2, None), ("extract.keywords", 1.0, 1, None),
    ("extract.title", 1.0, 1, "casefold"),                     # differs only in case
    ("extract.total", 1.0, 3, "numeric(abs=0.01, rel=0)"),
]


def test_cli_on_the_bundled_sample(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, CASES_SAMPLE / "benchmark", "-p", f"saved:{CASES_SAMPLE / 'outputs_v1'}",
                         "--comparators", CASES_SAMPLE / "comparators.yaml", "--json", "s.json", "--report", "r.html")
    assert code == 0, err
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    fields = summary["pipelines"][0]["fields"]
    assert [(f["field"], f["count"], f["comparator"]) for f in fields] == [(n, c, k) for n, _, c, k in SAMPLE_FIELDS_V1]
    assert [f["mean"] for f in fields] == pytest.approx([m for _, m, _, _ in SAMPLE_FIELDS_V1], abs=1e-12)
    acme = summary["pipelines"][0]["cases"][0]
    assert acme["case_name"] == "invoice-acme"
    assert acme["step_scores"][0]["score"] == pytest.approx((4 + 13 / 15) / 5, abs=1e-12)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Per-field accuracy" in html and "fuzzy(threshold=0.6)" in html


@pytest.mark.parametrize("text, message", [
    ("extract.total: numerc\n", "unknown comparator 'numerc'"),
    ("extract.totl: numeric\n", "comparator path 'extract.totl' matches no field of any case's expected output"),
    ("extract.total: {name: numeric, abs: .nan}\n", "numeric option 'abs' must be a finite number >= 0, got nan"),
    ("extract.total: {name: numeric, abs: 1, abs: 2}\n", "invalid YAML"),
    ("- extract.total\n", "must map field paths to comparators"),
    ("", "comparators file 'c.yaml' is empty"), ("{}", "comparators file 'c.yaml' is empty"),
])
def test_cli_refuses_a_bad_comparators_file_before_the_run(tmp_path: Path, monkeypatch, capsys, text, message):
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(text, encoding="utf-8")
    code, out, err = run(capsys, CASES_SAMPLE / "benchmark", "-p", f"saved:{CASES_SAMPLE / 'outputs_v1'}",
                         "--comparators", "c.yaml", "--json", "s.json", "--report", "r.html")
    assert code == 2 and message in err and "Traceback" not in err
    assert err.startswith("scorekit cases: ") and out == ""
    assert not Path("s.json").exists() and not Path("r.html").exists()


def test_cli_comparators_json_file_and_usage(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("c.json").write_text(json.dumps({"extract.total": {"name": "numeric", "abs": 0.01}}), encoding="utf-8")
    code, out, err = run(capsys, CASES_SAMPLE / "benchmark", "-p", f"saved:{CASES_SAMPLE / 'outputs_v2'}",
                         "--comparators", "c.json", "--json", "s.json", "--report", "r.html")
    assert code == 0, err
    (total,) = [f for f in json.loads(Path("s.json").read_text())["pipelines"][0]["fields"]
                if f["field"] == "extract.total"]
    assert total == {"field": "extract.total", "mean": 2 / 3, "count": 3, "comparator": "numeric(abs=0.01, rel=0)"}
    code, out, err = run(capsys, "--from-summary", "s.json", "--comparators", "c.json")
    assert code == 2 and "--comparators applies to a run" in err
    code, out, err = run(capsys, CASES_SAMPLE / "benchmark", "-p", f"saved:{CASES_SAMPLE / 'outputs_v2'}",
                         "--comparators", "c.json", "--json", "c.json")
    assert code == 2 and json.loads(Path("c.json").read_text()) == {"extract.total": {"name": "numeric", "abs": 0.01}}
    code, out, err = run(capsys, CASES_SAMPLE / "benchmark", "-p", f"saved:{CASES_SAMPLE / 'outputs_v2'}",
                         "--comparators", "missing.yaml")
    assert code == 2 and "comparators file 'missing.yaml' cannot be read" in err


def test_load_comparators_reads_yaml_and_json(tmp_path: Path):
    (tmp_path / "c.yml").write_text("a.b: {name: fuzzy, threshold: 0.9}\nc: set\n", encoding="utf-8")
    assert load_comparators(str(tmp_path / "c.yml")) == {"a.b": comparator("fuzzy", threshold=0.9),
                                                          "c": comparator("set")}


def test_the_docs_show_the_sample_comparators_file():
    from doc_examples import blocks

    (block,) = blocks("cases-pipelines.md", "yaml")
    assert block[1] == (CASES_SAMPLE / "comparators.yaml").read_text(encoding="utf-8")
