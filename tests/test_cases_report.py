"""The cases report (scorekit.cases.report): sections and their order, the values of every table,
the charts' gaps, the DAG from the summary alone, the per-case blocks, escaping of hostile data
everywhere, the saved-summary round trip, the PDF, and the run comparison (scorekit.cases.compare)."""

from __future__ import annotations

import json
import os
import re
import sys
import zlib

import pytest

from cases_report_data import (Page, case, detailed, disjoint, missing, multi, p1, p1b, pipeline,
                               renamed, value)
from doc_examples import run_python_blocks
from scorekit.cases.compare import KINDS, compare_summaries
from scorekit.cases.report import (DEFAULT_SECTIONS, MAX_CASE_DETAILS, SECTIONS, PdfSupportError, format_delta,
                                   format_score, generate_report, report_sections, require_pdf_support)
from scorekit.cases.results import BenchmarkSummary, DagNode, FieldScore, StepScore
from scorekit.report import display_text, render_page

DASH = "\u2014"
HEADINGS = ["Overall summary", "Per-step accuracy", "Per-field accuracy", "Pipeline comparison", "Pipeline graph",
            "Accuracy plots", "Per-case breakdown", "Attempt logs"]


def page(summary, sections=None, **kwargs) -> Page:
    return Page(render_page("T", report_sections(summary, sections, **kwargs)))


def test_section_names_and_default():
    assert SECTIONS == ("overall_summary", "per_step_accuracy", "per_field_accuracy", "pipeline_comparison",
                        "mermaid_graph", "plots", "per_case_breakdown", "attempt_logs")
    assert DEFAULT_SECTIONS == SECTIONS[:-1]
    assert page(multi()).h2 == HEADINGS[:-1]


def test_sections_follow_docs_order_whatever_the_order_asked():
    assert page(multi(), list(reversed(SECTIONS))).h2 == HEADINGS
    assert page(multi(), ["plots", "overall_summary", "plots"]).h2 == ["Overall summary", "Accuracy plots"]
    assert page(multi(), []).h2 == []


@pytest.mark.parametrize("sections, message", [
    (["overall_summary", "stats_bar"], "unknown report section 'stats_bar'"),
    (["a", "b"], "unknown report sections 'a', 'b'"),
    ("overall_summary,plots", "not the string"),
])
def test_unknown_section_is_a_value_error(sections, message):
    with pytest.raises(ValueError, match=message) as info:
        report_sections(multi(), sections)
    if "unknown" in message:
        assert "overall_summary, per_step_accuracy" in str(info.value)   # the valid names are listed


def test_overall_summary_one_row_per_pipeline():
    p = page(multi(), ["overall_summary"])
    assert p.table("Pipelines")[0] == ["pipeline", "cases", "errors", "no scored steps", "mean accuracy (errors as 0)",
                                       "mean of successful cases", "passed", "pass rate (score \u2265 100.0%)",
                                       "missing steps", "passed with missing steps"]
    rows = p.table("Pipelines")[1:]
    # p1's c1 passes with "summarize" missing (left out of its score): counted, and said first
    assert rows == [["p1.yaml", "2", "0", "0", "62.5%", "62.5%", "1", "50.0%", "2", "1"],
                    ["p1b.yaml", "2", "0", "0", "37.5%", "37.5%", "0", "0.0%", "2", "0"]]
    assert p.table("Overall summary") == [["cases", "2"], ["pipelines", "2"], ["pass threshold", "100.0%"],
                                          ["list matching", "greedy"], ["missing steps", "left out of the case score"]]
    assert p.notes[0].startswith("1 case passed with missing steps: a step the pipeline gave no output for is "
                                 "left out of the case score")


def test_overall_summary_errors_count_as_zero_and_unscored_cases_are_apart():
    p = page(detailed(), ["overall_summary"])
    # ok 1.0, lists (0.5 + 1.0) / 2 = 0.75, crash = error (0), empty = no scored steps (left out)
    assert p.row("Pipelines", "solo.py") == ["solo.py", "4", "1", "1", "58.3%", "87.5%", "1", "33.3%", "1", "0"]
    assert p.table("Skipped directories (1)")[1:] == [[".git", "dot-directory"]]


def test_no_cases_found_state():
    empty = BenchmarkSummary([pipeline("p.yaml", [])], [], 1.0)
    p = page(empty, SECTIONS)
    assert any(n.startswith("No cases found") for n in p.notes)
    assert "No benchmark results to display." in p.notes
    assert "No step was scored in any case." in p.notes
    assert "No attempt logs recorded." in p.notes
    assert p.row("Pipelines", "p.yaml") == ["p.yaml", "0", "0", "0", "0.0%", DASH, "0", "0.0%", "0", "0"]


def test_per_step_table_two_pipelines():
    p = page(multi(), ["per_step_accuracy"])
    header, *rows = p.table("Per-step accuracy")
    assert header == ["step", "p1.yaml", "p1.yaml pass rate", "p1.yaml missing", "p1b.yaml", "p1b.yaml pass rate",
                      "p1b.yaml missing", "\u0394 p1b.yaml vs p1.yaml"]
    assert rows == [
        ["extract", "75.0%", "50.0%", "0 of 2", "25.0%", "0.0%", "0 of 2", "-50.0"],
        ["classify", "50.0%", "50.0%", "0 of 2", "0.0%", "0.0%", "2 of 2", DASH],
        ["summarize", "0.0%", "0.0%", "2 of 2", "50.0%", "50.0%", "0 of 2", DASH],
    ]


def test_per_step_and_comparison_with_disjoint_keys():
    p = page(disjoint({"b": 0.8, "c": 0.4}), ["per_step_accuracy", "pipeline_comparison"])
    rows = p.table("Per-step accuracy")[1:]
    assert [r[0] for r in rows] == ["a", "b", "c"]
    assert rows[0] == ["a", "50.0%", "0.0%", "0", DASH, DASH, DASH, DASH]
    assert rows[1][-1] == "-20.0"
    assert rows[2] == ["c", DASH, DASH, DASH, "40.0%", "0.0%", "0", DASH]
    assert p.table("Shared steps")[1:] == [["b", "100.0%", "80.0%", "-20.0"]]
    assert p.table("Steps not shared with the baseline")[1:] == [["a", "50.0%", DASH], ["c", DASH, "40.0%"]]


def test_comparison_without_shared_steps_compares_overall_only():
    p = page(disjoint({"c": 0.4}), ["pipeline_comparison"])
    assert any("only the overall accuracy is compared" in n for n in p.notes)
    assert p.table("Overall")[1:] == [["mean accuracy", "75.0%", "60.0%", "-15.0"],
                                      ["pass rate", "50.0%", "0.0%", "-50.0"]]
    assert "Shared steps" not in p.headings


def test_comparison_two_pipelines():
    p = page(multi(), ["pipeline_comparison"])
    assert "Baseline: p1.yaml. \u0394 = pipeline \u2212 baseline, in percentage points." in p.notes
    assert p.table("Overall") == [["measure", "p1.yaml", "p1b.yaml", "\u0394 p1b.yaml"],
                                  ["mean accuracy", "62.5%", "37.5%", "-25.0"],
                                  ["pass rate", "50.0%", "0.0%", "-50.0"]]
    assert p.table("Shared steps")[1:] == [["extract", "75.0%", "25.0%", "-50.0"]]
    assert p.table("Steps not shared with the baseline")[1:] == [["classify", "50.0%", DASH],
                                                                 ["summarize", DASH, "50.0%"]]


def test_comparison_three_pipelines_shows_every_cell():
    p = page(multi(p1(), p1b(), renamed(p1(), "p3")), ["per_step_accuracy", "pipeline_comparison"])
    assert p.table("Per-step accuracy")[0][-2:] == ["\u0394 p1b.yaml vs p1.yaml", "\u0394 p3 vs p1.yaml"]
    assert p.table("Shared steps")[1:] == [["extract", "75.0%", "25.0%", "-50.0", "75.0%", "+0.0"],
                                           ["classify", "50.0%", DASH, DASH, "50.0%", "+0.0"]]
    assert p.table("Steps not shared with the baseline")[1:] == [["summarize", DASH, "50.0%", DASH]]


def test_one_pipeline_has_nothing_to_compare_but_keeps_its_heading():
    p = page(multi(p1()), ["pipeline_comparison", "plots"])
    assert p.h2 == ["Pipeline comparison", "Accuracy plots"]
    assert p.notes[0].startswith("One pipeline only")
    assert not any(t.startswith("\u0394") for t in p.svg_titles)   # no delta chart for one pipeline


def test_plots_leave_gaps_and_draw_one_delta_series_per_other_pipeline():
    p = page(multi(p1(), p1b(), renamed(p1(), "p3")), ["plots"])
    titles = p.svg_titles
    assert titles[0] == "Accuracy per step (%)"
    assert "extract \u00b7 p1.yaml: 75.0%" in titles and "extract \u00b7 p1b.yaml: 25.0%" in titles
    assert "summarize \u00b7 p1.yaml: no value" in titles          # never produced: a gap, not 0
    assert "classify \u00b7 p1b.yaml: no value" in titles
    delta = titles.index("\u0394 accuracy per step vs p1.yaml (percentage points)")
    assert titles[delta + 1:] == ["extract \u00b7 p1b.yaml: -50.0", "extract \u00b7 p3: +0.0",
                                  "classify \u00b7 p1b.yaml: no value", "classify \u00b7 p3: +0.0",
                                  "summarize \u00b7 p1b.yaml: no value", "summarize \u00b7 p3: no value"]


def test_graph_is_built_from_the_summary_alone(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)   # the pipeline paths do not exist anywhere: nothing is re-read
    p = page(multi(), ["mermaid_graph"])
    assert p.h2 == ["Pipeline graph"] and "p1.yaml" in p.headings and "p1b.yaml" in p.headings
    assert "extract / llm / model: small-1 / accuracy: 75.0%" in p.svg_titles
    assert "classify / transform / fn: pick / accuracy: 50.0%" in p.svg_titles
    assert "fanout / parallel" in p.svg_titles            # the group box, around its children
    assert "summarize / llm / model: big-2 / accuracy: 50.0%" in p.svg_titles
    assert "tidy / transform" in p.svg_titles
    html = render_page("T", report_sections(multi(), ["mermaid_graph"]))
    assert "mermaid" not in html.lower().replace("mermaid_graph", "")
    assert html.count('stroke-dasharray="5 3"') == 1         # one parallel group


def test_graph_without_a_recorded_dag():
    p = page(multi(pipeline("bare.py", [])), ["mermaid_graph"])
    assert "No graph was recorded for this pipeline." in p.notes


def test_per_case_failed_first_open_and_step_values_as_json():
    p = page(multi(), ["per_case_breakdown"])
    assert p.details == [("FAIL \u00b7 c2 \u00b7 25.0% \u00b7 1 step missing", True),
                         ("PASS \u00b7 c1 \u00b7 100.0% \u00b7 1 step missing", False),
                         ("FAIL \u00b7 c1 \u00b7 75.0% \u00b7 1 step missing", True),
                         ("FAIL \u00b7 c2 \u00b7 0.0% \u00b7 1 step missing", True)]
    steps = [rows for title, rows in p.tables if title == "Steps"]
    assert steps[0][1:] == [["extract", "scored", "50.0%", '{"t": "T", "u": "x"}', '{"t": "T", "u": "U"}'],
                            ["classify", "scored", "0.0%", '"chem"', '"bio"'],
                            ["summarize", "missing", DASH, "missing", '"short"']]
    extract = [rows for title, rows in p.tables if title == "Fields of extract"][0]
    assert extract[1:] == [["extract.t", "scored", "100.0%", '"T"', '"T"'],
                           ["extract.u", "scored", "0.0%", '"x"', '"U"']]
    assert "1 not passing" in p.notes[0] and "All cases passed." not in p.notes[0]


def test_per_case_output_diff_diffs_the_json_text():
    p = page(multi(p1()), ["per_case_breakdown"])
    diff = [rows for title, rows in p.tables if title == "Output diff of extract"][0]
    assert diff[0] == ["#", "expected", "#", "actual"]
    assert diff[1:] == [["1", "{", "1", "{"], ["2", '  "t": "T",', "2", '  "t": "T",'],
                        ["3", '  "u": "U"', "3", '  "u": "x"'], ["4", "}", "4", "}"]]
    assert [rows for title, rows in p.tables if title == "Output diff of classify"][0][1:] == \
        [["1", '"bio"', "1", '"chem"']]
    # c2 (failed) first, then c1, whose outputs equal the expected ones: no diff for it
    assert [title for title, _ in p.tables] == ["Steps", "Fields of extract", "Output diff of extract",
                                                "Output diff of classify", "Steps", "Fields of extract"]


def test_per_case_error_unscored_list_match_null_and_runner_status():
    p = page(detailed(), ["per_case_breakdown"])
    assert [d for d in p.details] == [("FAIL \u00b7 lists \u00b7 75.0% \u00b7 1 step missing", True),
                                      ("ERROR \u00b7 crash", True),
                                      ("NO SCORED STEPS \u00b7 empty", True), ("PASS \u00b7 ok \u00b7 100.0%", False)]
    assert p.pres == ["ValueError: pipeline exploded"]
    assert any(n.startswith("No scored steps") for n in p.notes)
    steps = [rows for title, rows in p.tables if title == "Steps"]
    lists = steps[0][1:]
    assert lists[1] == ["note", "scored (runner: skipped)", "100.0%", "null", "null"]    # null, not missing
    assert lists[2] == ["ghost", "missing", DASH, "missing", '{"x": 1}']
    assert steps[1][1:] == [["classify", "ignored", DASH, '"x"', '"$ignore"']]
    match = p.table("List people.au: greedy matching, precision 50.0%, recall 50.0%, F1 50.0%")
    assert match == [["expected #", "expected item", "actual #", "actual item", "score"],
                     ["0", '{"n": "A"}', "1", '{"n": "A"}', "100.0%"],
                     ["1", '{"n": "B", "r": 1}', "0", '{"n": "B", "r": 2}', "50.0%"],
                     ["2", '{"n": "C"}', "", "unpaired", "0.0%"],
                     ["", "extra item", "2", '{"n": "Z"}', DASH]]


def test_case_detail_is_capped_and_the_page_says_how_many_are_left_out():
    many = [case(f"k{i:03d}", [value("classify", "bio", "bio" if i % 2 else "x")], {"classify": "bio"},
                 {"classify": "bio"}) for i in range(MAX_CASE_DETAILS + 5)]
    summary = BenchmarkSummary([pipeline("p.py", many)], [c.case_name for c in many], 1.0)
    p = page(summary, ["per_case_breakdown"])
    assert len(p.details) == MAX_CASE_DETAILS == 200
    assert all(s.startswith("FAIL") for s, _ in p.details[:103])          # the 103 failures come first
    assert "5 more cases not shown in full (the first 200 are; the limit is 200)." in p.notes
    assert p.table("Cases not shown in full")[1:] == [[f"k{i:03d}", "PASS", "100.0%"] for i in range(195, 205, 2)]
    small = page(summary, ["per_case_breakdown"], max_case_details=3)
    assert len(small.details) == 3 and len(small.table("Cases not shown in full")) == 1 + 202
    with pytest.raises(ValueError, match="max_case_details"):
        report_sections(summary, max_case_details=-1)


def test_attempt_logs_off_by_default_and_shown_when_asked():
    assert "Attempt logs" not in page(detailed()).h2
    p = page(detailed(), ["attempt_logs"])
    assert p.table("Attempt logs") == [
        ["pipeline", "case", "step", "attempt", "status", "prompt tokens", "completion tokens", "elapsed (s)", "other"],
        ["solo.py", "ok", "classify", "1", "success", "12", "3", "0.2500", ""]]
    assert p.details == [("stderr \u00b7 solo.py \u00b7 ok \u00b7 classify \u00b7 attempt 1", False)]
    assert p.pres == ["warning: slow\nline 2"]
    assert page(multi(), ["attempt_logs"]).notes == ["No attempt logs recorded."]


def test_score_display_rounds_down_to_one_decimal():
    assert [format_score(k / 1000) for k in range(1001)] == [f"{k / 10:.1f}%" for k in range(1001)]
    assert [format_score(x) for x in (0.9999999, 0.9995, 0.995, 2 / 3, 1 / 3, None)] == \
        ["99.9%", "99.9%", "99.5%", "66.6%", "33.3%", DASH]
    assert [format_delta(x) for x in (0.5, -0.5, 0.0, 2 / 3, -2 / 3)] == ["+50.0", "-50.0", "+0.0", "+66.6", "-66.6"]


def test_generated_line_under_the_title():
    html = render_page("T", report_sections(multi()), subtitle="Generated: 2026-12-01 10:00 UTC")
    assert '<h1>T</h1>\n<p class="subtitle">Generated: 2026-12-01 10:00 UTC</p>' in html


def test_generate_report_writes_the_page(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = generate_report(multi())
    assert path.name == "benchmark_report.html" and path.exists()
    html = path.read_text(encoding="utf-8")
    assert "<title>Benchmark Report</title>" in html and "Generated: 2026-12-01 10:00 UTC" in html
    assert Page(html).h2 == HEADINGS[:-1]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["benchmark_report.html"]   # no temporary file, no PDF
    out = generate_report(multi(), tmp_path / "r.html", ["plots"], title="Sprint 3")
    assert Page(out.read_text(encoding="utf-8")).h2 == ["Accuracy plots"]


def test_saved_summary_renders_the_same_sections(tmp_path):
    for summary in (multi(), detailed(), disjoint({"b": 0.8, "c": 0.4})):
        summary.to_json(tmp_path / "s.json")
        loaded = BenchmarkSummary.from_json(tmp_path / "s.json")
        assert report_sections(loaded, SECTIONS) == report_sections(summary, SECTIONS)
        assert render_page("T", report_sections(loaded, SECTIONS, previous=loaded)) == \
            render_page("T", report_sections(summary, SECTIONS, previous=summary))


# ---- hostile data ---------------------------------------------------------------------------------------------

PAYLOADS = [
    "</script><script>document.title='pwned'</script>",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(2)",
    '"><svg onload=alert(3)>',
    "</title></style><!-- {{ 7 * 7 }}",
]
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "h5", "h6", "section",
                "div", "p", "pre", "table", "thead", "tbody", "tr", "th", "td", "button", "span", "figure", "svg", "g",
                "rect", "text", "line", "polygon", "details", "summary", "script", "nav", "main", "ol", "li", "a"}
ALLOWED_ATTRS = {"lang", "charset", "http-equiv", "content", "name", "id", "class", "scope", "type", "data-sort-col",
                 "data-sort-dir", "data-value", "role", "viewbox", "width", "height", "font-family", "font-size", "x",
                 "y", "x1", "x2", "y1", "y2", "text-anchor", "fill", "stroke", "transform", "rx", "stroke-dasharray",
                 "font-weight", "points", "open", "colspan", "href", "dir", "aria-label"}


def hostile(h: str) -> tuple[BenchmarkSummary, BenchmarkSummary]:
    """A summary with ``h`` in every place data reaches the page, and a previous run to compare with."""
    step = f"step {h}"
    fs = [FieldScore(f"{step}.{h}", f"actual {h}", f"expected {h}", 0.0), FieldScore(f"{step}.ok", 1, 1, 1.0)]
    cases = [case(f"case {h}", [StepScore(step, 0.5, "scored", fs)], {step: {h: f"actual {h}", "ok": 1}},
                  {step: {h: f"expected {h}", "ok": 1}},
                  logs=[{"step": step, "attempt": 1, "status": h, "stderr": h, h: h}]),
             case(f"crash {h}", [], {}, {step: {}}, error=f"Error: {h}")]
    current = pipeline(f"dir/{h}", cases, [DagNode(f"node {h}", f"kind {h}", {h: h},
                                                   [DagNode(f"child {h}", h)])], name=f"pipe {h}")
    previous = renamed(current, current.name)
    previous.cases = previous.cases[:1]
    # a fixed creation time: the clock's digits (16:49) would otherwise meet the "49" check below
    created = "2026-12-01 10:00 UTC"
    return (BenchmarkSummary([current, renamed(current, f"other {h}")], [c.case_name for c in cases], 1.0,
                             created=created),
            BenchmarkSummary([previous], [cases[0].case_name], 1.0, created=created))


@pytest.mark.parametrize("h", PAYLOADS)
def test_hostile_data_is_only_ever_text(h):
    summary, previous = hostile(h)
    html = render_page(h, report_sections(summary, SECTIONS, previous=previous), subtitle=h)
    p = Page(html)
    assert set(p.tags) <= ALLOWED_TAGS
    assert p.tags.count("script") == 1 and p.tags.count("style") == 1 and "img" not in p.tags
    assert {name for name, _ in p.attrs} <= ALLOWED_ATTRS
    for name, attr_value in p.attrs:
        assert attr_value is None and name == "open" or not re.search(r"[<>]|alert|javascript|on\w+=", attr_value or ""), name
    text = "".join(p.text)
    shown = display_text(h)
    assert text.count(shown) >= 30        # title, names, steps, fields, values, errors, DAG labels, logs
    for where in (f"case {shown}", f"step {shown}", f"pipe {shown}", f"node {shown}", f"Error: {shown}"):
        assert where in text, where
    assert "49" not in text
    markup = re.sub(r'href="#s[0-9]+(?:-[0-9]+)*"', "", re.sub(r">[^<]*<", "><", html))   # links to its sections
    assert not re.search(r"""(?:src|href|action)\s*=""", markup, re.I)


def test_hostile_values_render_as_json_text():
    summary, _ = hostile("<img src=x onerror=alert(1)>")
    p = page(summary, ["per_case_breakdown"])
    fields_table = p.table("Fields of step <img src=x onerror=alert(1)>")
    assert fields_table[1] == ["step <img src=x onerror=alert(1)>.<img src=x onerror=alert(1)>", "scored", "0.0%",
                               '"actual <img src=x onerror=alert(1)>"', '"expected <img src=x onerror=alert(1)>"']


# ---- PDF ----------------------------------------------------------------------------------------------------------

def _pdf_pages(data: bytes) -> int:
    """Page objects of a PDF, also inside compressed object streams."""
    chunks = [data]
    for stream in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S):
        try:
            chunks.append(zlib.decompress(stream))
        except zlib.error:
            pass
    return sum(len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", chunk)) for chunk in chunks)


def test_pdf_is_written_beside_the_html(tmp_path):
    out = generate_report(detailed(), tmp_path / "report.html", SECTIONS, pdf=True)
    pdf = (tmp_path / "report.pdf").read_bytes()
    assert out == tmp_path / "report.html" and pdf.startswith(b"%PDF-")
    assert _pdf_pages(pdf) >= 2
    generate_report(multi(), tmp_path / "out", pdf=True)
    assert (tmp_path / "out.pdf").read_bytes().startswith(b"%PDF-")


@pytest.mark.parametrize("spelling", ["symlink", "hard link"])
def test_the_pdf_never_replaces_an_input_and_nothing_is_written(tmp_path, spelling):
    from scorekit.files import OutputPathError

    source = tmp_path / "source.pdf"
    source.write_bytes(b"the user's own PDF")
    if spelling == "hard link":
        os.link(source, tmp_path / "report.pdf")
    else:
        (tmp_path / "report.pdf").symlink_to(source)
    with pytest.raises(OutputPathError, match=r"pdf .*report\.pdf.* is an input of this run"):
        generate_report(multi(), tmp_path / "report.html", pdf=True, inputs=[source])
    assert source.read_bytes() == b"the user's own PDF" and not (tmp_path / "report.html").exists()


def test_missing_weasyprint_fails_cleanly_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "weasyprint", None)   # import weasyprint -> ImportError
    with pytest.raises(PdfSupportError, match=r"pip install 'scorekit\[pdf\]'") as info:
        require_pdf_support()
    assert isinstance(info.value, ImportError)
    with pytest.raises(ImportError, match="PDF export needs WeasyPrint"):
        generate_report(multi(), tmp_path / "report.html", pdf=True)
    assert list(tmp_path.iterdir()) == []


# ---- comparison of two runs -------------------------------------------------------------------------------------

def _runs():
    def pipe(name, cases):
        return pipeline(f"{name}.py", cases, name=name)

    before = pipe("p", [
        case("same", [value("c", "a", "a")], {"c": "a"}),
        case("up", [value("c", "x", "a"), value("d", "a", "a")], {"c": "x", "d": "a"}),
        case("down", [value("c", "a", "a")], {"c": "a"}),
        case("reworded", [value("c", "x", "a")], {"c": "x"}),
        case("fixed", [], {}, error="boom"),
        case("broken", [value("c", "a", "a")], {"c": "a"}),
        case("gone", [value("c", "a", "a")], {"c": "a"}),
        case("lost step", [value("c", "a", "a"), value("d", "a", "a")], {"c": "a", "d": "a"}),
    ])
    after = pipe("p", [
        case("same", [value("c", "a", "a")], {"c": "a"}),
        case("up", [value("c", "a", "a"), value("d", "a", "a")], {"c": "a", "d": "a"}),
        case("down", [value("c", "x", "a")], {"c": "x"}),
        case("reworded", [value("c", "y", "a")], {"c": "y"}),
        case("fixed", [value("c", "a", "a")], {"c": "a"}),
        case("broken", [], {}, error="bang"),
        case("lost step", [value("c", "a", "a"), missing("d")], {"c": "a"}),
        case("new", [value("c", "a", "a")], {"c": "a"}),
    ])
    return (BenchmarkSummary([before, pipe("old only", [])], [], 1.0, created="run 1"),
            BenchmarkSummary([after, pipe("new only", [])], [], 1.0, created="run 2"))


def test_compare_kinds_per_case_and_step():
    previous, current = _runs()
    cmp = compare_summaries(previous, current)
    assert cmp.pipelines == ["p"] and cmp.new_pipelines == ["new only"] and cmp.gone_pipelines == ["old only"]
    kinds = {c.case: c.kind for c in cmp.cases}
    # "lost step": the case score (missing steps left out) stays 1.0, the step goes from 1.0 to missing (0)
    assert kinds == {"same": "same", "up": "better", "down": "worse", "reworded": "changed", "fixed": "fixed",
                     "broken": "broken", "lost step": "changed", "new": "new", "gone": "gone"}
    steps = {c.case: [(s.step, s.kind, s.previous_score, s.current_score) for s in c.steps] for c in cmp.cases}
    assert steps["up"] == [("c", "better", 0.0, 1.0), ("d", "same", 1.0, 1.0)]
    assert steps["reworded"] == [("c", "changed", 0.0, 0.0)]
    assert steps["lost step"] == [("c", "same", 1.0, 1.0), ("d", "worse", 1.0, 0.0)]
    assert steps["fixed"] == [("c", "new", None, 1.0)] and steps["broken"] == [("c", "gone", 1.0, None)]
    assert steps["gone"] == [] and steps["new"] == []
    assert cmp.counts() == {"broken": 1, "worse": 1, "gone": 1, "changed": 2, "new": 1, "better": 1, "fixed": 1,
                            "same": 1}
    assert cmp.step_counts() == {"broken": 0, "worse": 2, "gone": 1, "changed": 1, "new": 1, "better": 1, "fixed": 0,
                                 "same": 3}
    assert set(cmp.counts()) == set(KINDS)


def test_compare_to_dict_is_strict_json():
    cmp = compare_summaries(*_runs())
    data = json.loads(json.dumps(cmp.to_dict(), allow_nan=False))
    assert data["counts"]["changed"] == 2 and data["previous_created"] == "run 1"
    assert data["cases"][1] == {"pipeline": "p", "case": "up", "kind": "better", "previous_score": 0.5,
                                "current_score": 1.0, "previous_status": "success", "current_status": "success",
                                "steps": [{"step": "c", "kind": "better", "previous_score": 0.0, "current_score": 1.0,
                                           "previous_status": "scored", "current_status": "scored"},
                                          {"step": "d", "kind": "same", "previous_score": 1.0, "current_score": 1.0,
                                           "previous_status": "scored", "current_status": "scored"}]}
    assert json.loads(cmp.to_json()) == data


def test_compare_same_run_is_all_same():
    cmp = compare_summaries(multi(), multi())
    assert {c.kind for c in cmp.cases} == {"same"} and len(cmp.cases) == 4


def test_changes_section_follows_the_summary_worst_first():
    previous, current = _runs()
    p = page(current, previous=previous)
    assert p.h2 == ["Overall summary", "Changes since the previous run", *HEADINGS[1:-1]]
    rows = p.table("Cases that changed (worst first)")
    assert [r[:3] for r in rows[1:]] == [["p", "broken", "broken"], ["p", "down", "worse"], ["p", "gone", "gone"],
                                         ["p", "reworded", "changed"], ["p", "lost step", "changed"],
                                         ["p", "new", "new"], ["p", "up", "better"], ["p", "fixed", "fixed"]]
    assert rows[2] == ["p", "down", "worse", "100.0%", "0.0%", "-100.0", "c worse 100.0% \u2192 0.0%"]
    assert rows[1][3:] == ["100.0%", "error", DASH, "c gone"]
    assert rows[5][3:] == ["100.0%", "100.0%", "+0.0", "d worse 100.0% \u2192 0.0%"]
    assert p.table("Changes per kind")[1:] == [["broken", "1", "0"], ["worse", "1", "2"], ["gone", "1", "1"],
                                               ["changed", "2", "1"], ["new", "1", "1"], ["better", "1", "1"],
                                               ["fixed", "1", "0"], ["same", "1", "3"]]
    assert any("Pipelines only in this run: new only" in n for n in p.notes)
    assert page(current, ["plots"], previous=previous).h2 == ["Changes since the previous run", "Accuracy plots"]


# ---- the user documentation -------------------------------------------------------------------------------------

def test_docs_examples(tmp_path, monkeypatch):
    """docs/cases-report.md: every ```python block runs as a doctest, in order, in one namespace."""
    monkeypatch.chdir(tmp_path)
    run_python_blocks("cases-report.md", min_blocks=6)
    assert (tmp_path / "report.pdf").exists() and (tmp_path / "report_again.html").exists()


def test_module_docstring_examples():
    import doctest

    import scorekit.cases.formatting as module

    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted >= 2


@pytest.mark.parametrize("matching", ["greedy", "optimal"])
def test_list_matches_from_the_scorer_show_the_pairs(matching):
    from scorekit.cases.scoring import score_case

    expected = {"people": {"au": [{"n": "A", "a": "X"}, {"n": "B", "a": "Y"}, "$ignore"]}, "k": ["a", "b"]}
    outputs = {"people": {"au": [{"n": "B", "a": "Y"}, {"n": "A", "a": "Z"}, {"n": "Q"}, {"n": "R"}]},
               "k": ["b", "c"]}
    steps = score_case(expected, outputs, matching=matching)
    summary = BenchmarkSummary([pipeline("p.py", [case("c", steps, outputs, expected)])], ["c"], 1.0)
    p = page(summary, ["per_case_breakdown"])
    assert p.table(f"List people.au: {matching} matching, precision 62.5%, recall 83.3%, F1 71.4%, "
                   "1 $ignore slot filled")[1:] == [
        ["0", '{"n": "A", "a": "X"}', "1", '{"n": "A", "a": "Z"}', "50.0%"],
        ["1", '{"n": "B", "a": "Y"}', "0", '{"n": "B", "a": "Y"}', "100.0%"],
        ["2", '"$ignore"', "", "wildcard", DASH],
        ["", "extra item or $ignore slot", "2", '{"n": "Q"}', DASH],
        ["", "extra item or $ignore slot", "3", '{"n": "R"}', DASH]]
    assert p.table(f"List k: {matching} matching, precision 50.0%, recall 50.0%, F1 50.0%")[1:] == [
        ["0", '"a"', "", "unpaired", "0.0%"], ["1", '"b"', "0", '"b"', "100.0%"], ["", "extra item", "1", '"c"', DASH]]
    assert p.details == [("FAIL \u00b7 c \u00b7 66.6%", True)]


def test_values_json_cannot_hold_are_shown_not_fatal():
    class Odd:
        def __repr__(self):
            return "<Odd </script>>"

    actual = {"obj": Odd(), "set": {2, 1}, "nan": float("nan"), 3: "int key", "t": (1, True, None)}
    steps = [StepScore("s", 0.0, "scored", [FieldScore("s.obj", actual["obj"], "x", 0.0),
                                            FieldScore("s.nan", actual["nan"], 1.0, 0.0)])]
    summary = BenchmarkSummary([pipeline("p.py", [case("c", steps, {"s": actual}, {"s": {"obj": "x"}})])], ["c"], 1.0)
    p = page(summary, ["per_case_breakdown"])
    assert p.row("Steps", "s")[3] == '{"obj": "<Odd </script>>", "set": [1, 2], "nan": NaN, "3": "int key", ' \
                                     '"t": [1, true, null]}'
    assert p.table("Fields of s")[1:] == [["s.obj", "scored", "0.0%", '"<Odd </script>>"', '"x"'],
                                          ["s.nan", "scored", "0.0%", "NaN", "1.0"]]


def test_a_graph_too_deep_to_draw_is_said_not_cut():
    node = DagNode("leaf", "llm")
    for k in range(40):
        node = DagNode(f"group {k}", "parallel", {}, [node])
    p = page(multi(pipeline("deep.py", [], [node])), ["mermaid_graph"])
    assert p.svg_titles == [] and any(n.startswith("The graph is too large to draw") and "deeper" in n
                                      for n in p.notes)


def test_compare_pairs_pipelines_by_name_never_by_position():
    # previous run: p1.yaml, p1b.yaml; this run: p1b.yaml first, then a pipeline of another name
    previous = multi()
    current = multi(p1b(), renamed(p1(), "p1 (another folder)"))
    cmp = compare_summaries(previous, current)
    assert cmp.pipelines == ["p1b.yaml"]
    assert cmp.compared == [("p1b.yaml", "elsewhere/p1b.yaml", "elsewhere/p1b.yaml")]
    assert cmp.new_pipelines == ["p1 (another folder)"] and cmp.gone_pipelines == ["p1.yaml"]
    assert [(c.pipeline, c.case, c.kind) for c in cmp.cases] == [("p1b.yaml", "c1", "same"), ("p1b.yaml", "c2", "same")]
    assert cmp.to_dict()["compared"] == [{"name": "p1b.yaml", "previous_path": "elsewhere/p1b.yaml",
                                          "current_path": "elsewhere/p1b.yaml"}]
    p = page(current, ["overall_summary"], previous=previous)
    assert ("Pipelines compared (paired by name)",
            [["pipeline", "previous run's pipeline", "this run's pipeline"],
             ["p1b.yaml", "elsewhere/p1b.yaml", "elsewhere/p1b.yaml"]]) in p.tables
    assert "Pipelines only in this run: p1 (another folder). Only in the previous run: p1.yaml." in p.notes


def test_compare_without_a_common_name_compares_nothing():
    previous = multi()
    current = multi(*(renamed(p, p.name + " (another folder)") for p in previous.pipelines))
    cmp = compare_summaries(previous, current)
    assert cmp.pipelines == [] and cmp.compared == [] and cmp.cases == []
    assert cmp.new_pipelines == ["p1.yaml (another folder)", "p1b.yaml (another folder)"]
    assert cmp.gone_pipelines == ["p1.yaml", "p1b.yaml"]
    assert "No pipeline name is in both runs: nothing compared." in page(current, ["overall_summary"],
                                                                         previous=previous).notes
