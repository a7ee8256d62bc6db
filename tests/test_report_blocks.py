"""The report module's nesting blocks, line diff, grouped bar chart and flow chart: what they show,
their checks on bad input, and that hostile data stays text in all of them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit import report
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.report import FlowNode, display_text
from test_report import HOSTILE, Page


def _sides(section) -> tuple[list[str], list[str], list[int], list[int]]:
    left, right, left_no, right_no = [], [], [], []
    for line in section.lines:
        if line.left_no is not None:
            left.append("".join(text for _, text in line.left))
            left_no.append(line.left_no)
        if line.right_no is not None:
            right.append("".join(text for _, text in line.right))
            right_no.append(line.right_no)
    return left, right, left_no, right_no


_LINES = st.lists(st.sampled_from(["{", "}", '  "a": 1,', '  "b": "x<y"', "a&b", "\u05d0\u202e", "", "\x00"]),
                  max_size=12).map("\n".join)


@settings(max_examples=80, deadline=None)
@given(_LINES, _LINES)
def test_line_diff_shows_both_texts_whole(a, b):
    left, right, left_no, right_no = _sides(report.line_diff("d", a, b, context=None))
    assert left == display_text(a).split("\n") and right == display_text(b).split("\n")
    assert left_no == list(range(1, len(left) + 1)) and right_no == list(range(1, len(right) + 1))


def test_line_diff_highlights_inside_a_line_without_splitting_escapes():
    section = report.line_diff("d", "x\na<b\ny", "x\na>b\ny")
    assert [line.op for line in section.lines] == ["eq", "sub", "eq"]
    changed = section.lines[1]
    assert changed.left == (("eq", "a"), ("chg", "<"), ("eq", "b")) and changed.right == (("eq", "a"), ("chg", ">"),
                                                                                           ("eq", "b"))
    html = report.render_page("t", [section])
    assert '<span class="eq">a</span><span class="chg">&lt;</span><span class="eq">b</span>' in html


def test_line_diff_collapses_far_unchanged_lines():
    a = "\n".join(f"line {i}" for i in range(20))
    section = report.line_diff("d", a, a.replace("line 9", "line nine"), context=3)
    assert [(line.op, line.count) for line in section.lines] == \
        [("skip", 6), ("eq", 0), ("eq", 0), ("eq", 0), ("sub", 0), ("eq", 0), ("eq", 0), ("eq", 0), ("skip", 7)]
    page = Page(report.render_page("t", [section]))
    assert "6 unchanged lines" in page.text and "7 unchanged lines" in page.text
    assert [line.op for line in report.line_diff("d", "a\nb", "a\nc\nd").lines] == ["eq", "sub", "ins"]


@pytest.mark.parametrize("call, error", [
    (lambda: report.line_diff("d", "a", 1), InvalidTypeError),
    (lambda: report.line_diff("d", "a", "b", context=-1), InvalidValueError),
    (lambda: report.line_diff("d", "a", "b", labels=("x",)), InvalidValueError),
    (lambda: report.line_diff("d", "\n" * 5000, ""), InputTooLargeError),
])
def test_line_diff_bad_input(call, error):
    with pytest.raises(error):
        call()


def _bars(svg: str) -> list[tuple[float, float]]:
    return [(float(x), float(w)) for x, w in re.findall(r'<rect x="([\d.]+)" y="\d+" width="([\d.]+)" height="14"', svg)]


def test_grouped_bar_chart_gaps_and_negative_values():
    section = report.grouped_bar_chart("g", ["a", "b"], [("p", [50.0, None]), ("q", [-25.0, 100.0])],
                                       texts=[["50.0%", ""], ["-25.0", "100.0"]])
    titles = re.findall(r"<title>([^<]*)</title>", section.svg)
    assert titles == ["g", "a \u00b7 p: 50.0%", "a \u00b7 q: -25.0", "b \u00b7 p: no value", "b \u00b7 q: 100.0"]
    bars = _bars(section.svg)
    assert len(bars) == 3                                  # the missing value is a gap, not a bar of 0
    zero = float(re.search(r'<line x1="([\d.]+)"', section.svg).group(1))
    (x_a, w_a), (x_neg, w_neg), (x_b, w_b) = bars
    assert x_a == pytest.approx(zero) and x_neg + w_neg == pytest.approx(zero)   # the negative bar ends at zero
    assert w_a == pytest.approx(2 * w_neg) and w_b == pytest.approx(2 * w_a)
    assert section.svg.count("#4a78b5") == 2 and section.svg.count("#e08a2c") == 3   # legend + bars per series


@pytest.mark.parametrize("call, error", [
    (lambda: report.grouped_bar_chart("g", ["a"], [("p", [1, 2])]), InvalidValueError),
    (lambda: report.grouped_bar_chart("g", ["a"], [("p", [float("nan")])]), InvalidValueError),
    (lambda: report.grouped_bar_chart("g", ["a"], [("p", ["1"])]), InvalidTypeError),
    (lambda: report.grouped_bar_chart("g", ["a"], [["p", [1]]]), InvalidTypeError),
    (lambda: report.grouped_bar_chart("g", ["a"], [("p", [1])], texts=[[]]), InvalidValueError),
    (lambda: report.grouped_bar_chart("g", ["a"] * 251, [("p", [1] * 251), ("q", [1] * 251)]), InputTooLargeError),
])
def test_grouped_bar_chart_bad_input(call, error):
    with pytest.raises(error):
        call()


def _rects(svg: str) -> list[tuple[float, float, float, float]]:
    return [tuple(map(float, m)) for m in
            re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" rx', svg)]


def test_flow_chart_nests_groups_and_joins_steps():
    nodes = [FlowNode(("load", "io")), FlowNode(("fan", "parallel"), (FlowNode(("a",), tone="good"),
                                                                       FlowNode(("b", "llm"), tone="poor"))),
             FlowNode(("end",), tone="fair")]
    svg = report.flow_chart("f", nodes).svg
    assert re.findall(r"<title>([^<]*)</title>", svg) == ["f", "load / io", "fan / parallel", "a", "b / llm", "end"]
    load, fan, a, b, end = _rects(svg)
    for child in (a, b):   # inside the group's box
        assert fan[0] < child[0] and child[0] + child[2] < fan[0] + fan[2]
        assert fan[1] < child[1] and child[1] + child[3] < fan[1] + fan[3]
    assert a[0] + a[2] < b[0] and a[1] == b[1]              # side by side
    assert load[1] + load[3] < fan[1] < fan[1] + fan[3] < end[1]   # top to bottom
    assert svg.count("<polygon") == 2                        # two arrows between three steps
    assert 'fill="#d7f0d2"' in svg and 'fill="#f6cccc"' in svg and 'fill="#fbe7b9"' in svg


@pytest.mark.parametrize("nodes, error", [
    ([("a",)], InvalidTypeError),
    ([FlowNode(())], InvalidValueError),
    ([FlowNode(("a",), tone="red")], InvalidValueError),
    ([FlowNode((1,))], InvalidTypeError),
])
def test_flow_chart_bad_input(nodes, error):
    with pytest.raises(error):
        report.flow_chart("f", nodes)


def test_flow_chart_limits():
    deep = FlowNode(("leaf",))
    for _ in range(31):
        deep = FlowNode(("box",), (deep,))
    with pytest.raises(InputTooLargeError, match="deeper"):
        report.flow_chart("f", [deep])
    with pytest.raises(InputTooLargeError, match="1000"):
        report.flow_chart("f", [FlowNode(("n",))] * 1001)


def test_nesting_blocks_headings_and_details():
    html = report.render_page("t", [report.group("Outer", [
        report.note("a note"),
        report.group("Inner", [report.text_block("Log", "line 1\nline 2")]),
        report.details_block("closed", [report.note("body")]),
        report.details_block("opened", [report.data_table("Rows", ["n"], [[report.number_cell(0.5, "50.0%")]])],
                             open=True)])])
    assert "<h2>Outer</h2>" in html and "<h3>Inner</h3>" in html and "<h4>Log</h4><pre dir=\"auto\">line 1\nline 2</pre>" in html
    assert '<details id="s1-3"><summary>closed</summary>' in html
    assert '<details id="s1-4" open><summary>opened</summary>' in html
    assert '<td class="num" data-value="0.5">50.0%</td>' in html and "<h4>Rows</h4>" in html
    with pytest.raises(InvalidTypeError):
        report.group("g", ["<b>raw</b>"])
    with pytest.raises(InvalidTypeError):
        report.number_cell("1", "x")


def test_subtitle_is_text():
    html = report.render_page("t", [], subtitle="<b>x</b>")
    assert '<p class="subtitle">&lt;b&gt;x&lt;/b&gt;</p>' in html
    with pytest.raises(InvalidTypeError):
        report.render_page("t", [], subtitle=3)


ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "section", "div", "p",
                "pre", "table", "thead", "tbody", "tr", "th", "td", "button", "span", "figure", "svg", "g", "rect",
                "text", "line", "polygon", "details", "summary", "script", "nav", "main", "ol", "li", "a"}


@pytest.mark.parametrize("h", HOSTILE)
def test_hostile_data_stays_text_in_the_new_blocks(h):
    html = report.render_page(h, [report.group(h, [
        report.note(h), report.text_block(h, h), report.details_block(h, [report.note(h)], open=True),
        report.line_diff(h, f"{h}\n1", f"{h[::-1]}\n1", labels=(h, h)),
        report.grouped_bar_chart(h, [h], [(h, [1.0])], texts=[[h]]),
        report.flow_chart(h, [FlowNode((h, h), (FlowNode((h,)),)), FlowNode((h,))]),
        report.data_table(h, [h], [[report.number_cell(1, h)]])])], subtitle=h)
    page = Page(html)
    assert set(page.tags) <= ALLOWED_TAGS
    assert page.tags.count("script") == 1 and page.other == []
    for name, value in page.attrs:
        assert name == "open" or not re.search(r"[<>]|alert|javascript|on\w+=", value or ""), (name, value)
    assert "".join(page.text).count(display_text(h)) >= 14


def test_series_colours_follow_the_name_across_charts():
    colours = report.SeriesColours()
    first = report.grouped_bar_chart("a", ["x"], [("p1", [1.0]), ("p2", [2.0]), ("p3", [3.0])], colours=colours)
    second = report.grouped_bar_chart("b", ["x"], [("p3", [1.0]), ("p2", [2.0])], colours=colours)

    def legend(svg: str) -> dict[str, str]:
        return dict((name, fill) for fill, name in re.findall(r'y="6" width="12" height="12" fill="([^"]+)"/>'
                                                              r'<text [^>]*>([^<]*)</text>', svg))

    assert legend(first.svg) == {"p1": report.charts.PALETTE[0], "p2": report.charts.PALETTE[1],
                                 "p3": report.charts.PALETTE[2]}
    assert legend(second.svg) == {"p3": report.charts.PALETTE[2], "p2": report.charts.PALETTE[1]}
    # without a shared instance each chart starts the palette again (the old behaviour)
    assert legend(report.grouped_bar_chart("c", ["x"], [("p3", [1.0])]).svg) == {"p3": report.charts.PALETTE[0]}
    # past the palette every new name still gets a colour of its own
    names = [f"s{k}" for k in range(40)]
    assert len({colours(name) for name in names}) == 40 and colours("p1") == report.charts.PALETTE[0]
    with pytest.raises(InvalidTypeError):
        report.grouped_bar_chart("d", ["x"], [("p", [1.0])], colours={"p": "#000"})
