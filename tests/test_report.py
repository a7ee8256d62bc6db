"""The shared report module: escaping of everything from data, the CSP hashes, no external URL,
the diff view's faithfulness, charts' values, and the atomic write."""

from __future__ import annotations

import base64
import hashlib
import math
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from scorekit import report
from scorekit.batch import editops
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.report import display_text

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    "</style><script>alert(2)</script>",
    "</script><b>bold</b>",
    "lone \ud800 and \udfff surrogates",
    "RTL \u202eoverride\u202c \u2067isolate \u05d0\u05d1\u05d2 \u0627\u0644\u0639",
    "nul\x00byte and cr\r and esc\x1b",
    "<!-- comment --> <![CDATA[ x ]]> <?pi?>",
    "&amp; &lt;b&gt; &#60;",
    "{{ 7 * 7 }} {% if true %}jinja{% endif %}",
    "javascript:alert(3) http://example.com //cdn.example.com/x.js",
    "</title></textarea></svg><svg onload=alert(4)>",
]

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "section", "table", "thead", "tbody",
                "tr", "th", "td", "button", "p", "span", "div", "figure", "svg", "g", "rect", "text", "line",
                "script", "nav", "main", "ol", "li", "a"}
ALLOWED_ATTRS = {"lang", "charset", "http-equiv", "content", "name", "id", "class", "scope", "type", "data-sort-col",
                 "data-sort-dir", "data-value", "data-seg", "role", "viewbox", "width", "height", "font-family",
                 "font-size", "x", "y", "x1", "x2", "y1", "y2", "text-anchor", "fill", "stroke", "transform", "href",
                 "dir", "aria-label"}
#: The one kind of link a page has: the contents' links to its own sections.
SECTION_LINK = re.compile(r"#s[0-9]+(?:-[0-9]+)*")


class Page(HTMLParser):
    """Every element, attribute and text node of a page, and the text of each diff pane."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []
        self.other: list[str] = []
        self.raw: dict[str, list[str]] = {"style": [], "script": []}
        self.panes: list[list[tuple[str, str, str]]] = []   # per pane: (op, seg index, text)
        self.cells: list[list[str]] = []
        self._stack: list[tuple[str, dict]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        attributes = dict(attrs)
        if tag == "div" and attributes.get("class") == "pane":
            self.panes.append([])
        if tag == "span" and "data-seg" in attributes:
            self.panes[-1].append((attributes["class"][2:], attributes["data-seg"], ""))
        if tag == "tr":
            self.cells.append([])
        if tag not in ("meta",):
            self._stack.append((tag, attributes))

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_endtag(self, tag):
        if self._stack and self._stack[-1][0] == tag:
            self._stack.pop()

    def handle_data(self, data):
        top = self._stack[-1] if self._stack else ("", {})
        if top[0] in self.raw:
            self.raw[top[0]].append(data)
            return
        self.text.append(data)
        if top[0] == "span" and "data-seg" in top[1]:
            op, seg, text = self.panes[-1][-1]
            self.panes[-1][-1] = (op, seg, text + data)
        if top[0] in ("td", "button", "th"):
            self.cells[-1].append(data)

    def handle_comment(self, data):
        self.other.append("comment " + data)

    def handle_decl(self, decl):
        if decl.lower() != "doctype html":
            self.other.append("decl " + decl)

    def handle_pi(self, data):
        self.other.append("pi " + data)

    def unknown_decl(self, data):
        self.other.append("decl " + data)


def _hostile_page(h: str) -> str:
    gt, pred = f"gt {h} end", f"pred {h[::-1]} end"
    return report.render_page(h, [
        report.summary_table(h, {h: h, "n": 3}),
        report.data_table(h, [h, "value"], [[h, 1.5], ["x", float("nan")], [None, -2]], sort_by=1),
        report.diff_view(h, gt, pred, Levenshtein.editops(gt, pred).as_list(), labels=(h, h)),
        report.bar_chart(h, [h, "b"], [2, 1]),
        report.histogram(h, [0.1, 0.5]),
        report.heatmap(h, [h, "r"], [h, "c"], [[1, 2], [3, 4]]),
    ])


@pytest.mark.parametrize("h", HOSTILE)
def test_data_never_becomes_markup(h):
    page = Page(_hostile_page(h))
    assert set(page.tags) <= ALLOWED_TAGS
    assert page.tags.count("script") == 1 and page.tags.count("style") == 1
    assert page.other == []
    assert {name for name, _ in page.attrs} <= ALLOWED_ATTRS
    for name, value in page.attrs:
        assert value is not None and not re.search(r"[<>]|alert|javascript|on\w+=", value), (name, value)
    shown = display_text(h)
    text = "".join(page.text)
    # title, section titles, keys, cells, column names, pane labels and chart labels: all shown as text
    assert text.count(shown) >= 10
    assert "49" not in text   # no template expression from data was evaluated
    assert "\x00" not in text and not re.search("[\ud800-\udfff]", text)


def test_display_text_is_one_to_one_and_visible():
    raw = "a\x00b\rc\td\ne\x7f\x85\ud800\ufdd0\U0010ffff\u202e\u05d0"
    shown = display_text(raw)
    assert len(shown) == len(raw)
    assert shown == "a\u2400b\u240dc\td\ne\u2421\ufffd\ufffd\ufffd\ufffd\u202e\u05d0"
    shown.encode("utf-8")   # always writable


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_csp_hashes_match_the_inline_contents():
    html = _hostile_page(HOSTILE[3])
    page = Page(html)
    policy = next(v for k, v in page.attrs if k == "content" and "default-src" in (v or ""))
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    style, script = "".join(page.raw["style"]), "".join(page.raw["script"])
    assert directives == {"default-src": "'none'", "style-src": _sha(style), "script-src": _sha(script),
                          "img-src": "data:", "base-uri": "'none'", "form-action": "'none'"}
    assert "unsafe" not in policy
    # the inline contents are exactly the package's files (data never lands inside them)
    assert style == (report.TEMPLATE_DIR / "report.css").read_text(encoding="utf-8")
    assert script == (report.TEMPLATE_DIR / "report.js").read_text(encoding="utf-8")
    # the policy precedes the style and script it governs, and no element carries a style attribute
    assert html.index("Content-Security-Policy") < html.index("<style>") < html.index("<script>")
    assert "style" not in {name for name, _ in page.attrs}


@pytest.mark.parametrize("h", HOSTILE)
def test_no_external_url(h):
    html = _hostile_page(h)
    page = Page(html)
    urls = [v for k, v in page.attrs if k in ("src", "href", "xlink:href", "action", "srcset", "poster")]
    assert urls and all(SECTION_LINK.fullmatch(url) for url in urls)   # only links to the page's own sections
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    markup = re.sub(r">[^<]*<", "><", html)   # markup only, text nodes removed
    assert not re.search(r"https?://|url\(|@import", markup, re.I)
    # a URL in the data is shown as text, nowhere else
    assert len(re.findall(r"https?://", html)) <= len(re.findall(r"https?://", "".join(page.text)))


def _check_diff(gt: str, pred: str, ops) -> None:
    section = report.diff_view("d", gt, pred, ops)
    page = Page(report.render_page("t", [section]))
    assert len(page.panes) == 2
    gt_pane, pred_pane = page.panes
    assert "".join(text for _, _, text in gt_pane) == display_text(gt)
    assert "".join(text for _, _, text in pred_pane) == display_text(pred)
    assert [seg for _, seg, _ in gt_pane] == [seg for _, seg, _ in pred_pane] == [str(k) for k in range(len(gt_pane))]
    counts = {"sub": 0, "del": 0, "ins": 0}
    for (op_a, _, text_a), (op_b, _, text_b) in zip(gt_pane, pred_pane):
        if op_a == "eq" or op_b == "eq":
            assert op_a == op_b == "eq" and text_a == text_b and text_a
        elif op_a == "sub" or op_b == "sub":
            assert op_a == op_b == "sub" and len(text_a) == len(text_b) > 0
            counts["sub"] += len(text_a)
        elif op_b == "gap":
            assert op_a == "del" and text_a and text_b == ""
            counts["del"] += len(text_a)
        else:
            assert (op_a, op_b) == ("gap", "ins") and text_a == "" and text_b
            counts["ins"] += len(text_b)
    expected = {"sub": 0, "del": 0, "ins": 0}
    for name, _, _ in ops:
        expected[{"replace": "sub", "delete": "del", "insert": "ins"}[name]] += 1
    assert counts == expected


def test_diff_view_known_example():
    gt, pred = "qabxcd", "abycdf"
    ops = editops(gt, pred)
    section = report.diff_view("d", gt, pred, ops)
    gt_pane, pred_pane = section.panes
    assert [(s.op, s.text) for s in gt_pane.segments] == [("del", "q"), ("eq", "ab"), ("sub", "x"), ("eq", "cd"),
                                                          ("gap", "")]
    assert [(s.op, s.text) for s in pred_pane.segments] == [("gap", ""), ("eq", "ab"), ("sub", "y"), ("eq", "cd"),
                                                            ("ins", "f")]
    _check_diff(gt, pred, ops)


_ALPHABET = st.sampled_from(list("ab <>&\"'") + ["\x00", "\r", "\n", "\u202e", "\u05d0", "\U0001f600", "\u0301"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join), st.lists(_ALPHABET, max_size=40).map("".join))
def test_diff_view_reconstructs_both_texts(gt, pred):
    _check_diff(gt, pred, editops(gt, pred))


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30))
def test_diff_view_any_text_including_surrogates(gt, pred):
    _check_diff(gt, pred, Levenshtein.editops(gt, pred).as_list())


@pytest.mark.parametrize("ops, message", [
    ([("replace", 0, 0)], "unequal"),                    # leaves b/y unedited
    ([("delete", 5, 5)], "past the end"),
    ([("replace", 9, 9)], "past the end"),
    ([("replace", 1, 2)], "does not follow"),
    ([("swap", 0, 0)], "must be"),
    ([("replace", 0)], "must be"),
    ([("replace", 1.0, 1)], "must be"),
    ([("replace", 0, 0), ("replace", 1, 1), ("replace", 0, 0)], "does not follow"),
])
def test_diff_view_rejects_a_script_that_does_not_fit(ops, message):
    with pytest.raises(InvalidValueError, match=message) as info:
        report.diff_view("d", "abc", "xyc", ops)
    assert info.value.field == "ops"


def test_diff_view_rejects_past_the_end():
    with pytest.raises(InvalidValueError, match="past the end"):
        report.diff_view("d", "ab", "ab", [("delete", 2, 2), ("insert", 2, 2)])


def test_data_table_cells_and_default_sort():
    section = report.data_table("Pages", ["page", "CER"], [["p1", 0.25], ["p2", np.float64(0.5)],
                                                           ["p3", float("nan")], ["p4", np.int64(3)],
                                                           ["p5", float("inf")], ["p6", None]],
                                sort_by="CER", descending=True)
    assert section.sort_col == 1 and section.sort_dir == "descending"
    cells = [row[1] for row in section.rows]
    assert [(c.text, c.numeric, c.value) for c in cells] == [
        ("0.2500", True, "0.25"), ("0.5000", True, "0.5"), ("NaN", True, "NaN"), ("3", True, "3"),
        ("inf", True, "Infinity"), ("", False, "")]
    assert float(cells[0].value) == 0.25 and math.isinf(float(cells[4].value.replace("Infinity", "inf")))
    html = report.render_page("t", [section])
    assert 'data-sort-col="1" data-sort-dir="descending"' in html
    page = Page(html)
    assert page.cells[1:] == [["p1", "0.2500"], ["p2", "0.5000"], ["p3", "NaN"], ["p4", "3"], ["p5", "inf"], ["p6"]]


@pytest.mark.parametrize("kwargs, error", [
    (dict(rows=[[1]]), InvalidValueError),
    (dict(rows=[[1, object()]]), InvalidTypeError),
    (dict(rows=[], sort_by="nope"), InvalidValueError),
    (dict(rows=[], sort_by=2), InvalidValueError),
    (dict(rows=[], sort_by=True), InvalidValueError),
])
def test_data_table_bad_input(kwargs, error):
    with pytest.raises(error) as info:
        report.data_table("t", ["a", "b"], **kwargs)
    assert info.value.field in ("rows", "sort_by")


def _rect_titles(section) -> list[str]:
    return re.findall(r"<title>([^<]*)</title>", section.svg)


def test_histogram_counts_match_numpy():
    rng = np.random.default_rng(5)
    values = rng.normal(size=500)
    section = report.histogram("h", values.tolist(), bins=7)
    counts = [int(t.rsplit(": ", 1)[1]) for t in _rect_titles(section)[1:]]
    assert counts == np.histogram(values, bins=7)[0].tolist()
    section = report.histogram("h", [0.0, 0.5, 1.0, 2.0, -1.0], bins=2, range=(0.0, 1.0))
    assert [int(t.rsplit(": ", 1)[1]) for t in _rect_titles(section)[1:]] == [1, 2]


def test_bar_chart_lengths_and_heatmap_cells():
    section = report.bar_chart("b", ["x", "y", "z"], [4, 2, 0])
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', section.svg)]
    assert widths[1] == pytest.approx(widths[0] / 2) and widths[2] == 0
    matrix = [[5, 0, 1], [2, 7, 0]]
    section = report.heatmap("cm", ["a", "b"], ["a", "b", "c"], matrix)
    titles = _rect_titles(section)[1:]
    assert titles == [f"{r} \u2192 {c}: {matrix[i][j]}" for i, r in enumerate("ab") for j, c in enumerate("abc")]
    fills = re.findall(r'fill="rgb\((\d+),', section.svg)
    assert int(fills[4]) == 55 and int(fills[1]) == 255   # darkest at the peak, white at zero


@pytest.mark.parametrize("build, error", [
    (lambda: report.bar_chart("b", ["x"], [float("nan")]), InvalidValueError),
    (lambda: report.bar_chart("b", ["x"], [-1]), InvalidValueError),
    (lambda: report.bar_chart("b", ["x", "y"], [1]), InvalidValueError),
    (lambda: report.bar_chart("b", [1], [1]), InvalidTypeError),
    (lambda: report.bar_chart("b", ["x"] * 501, [1] * 501), InputTooLargeError),
    (lambda: report.histogram("h", [1, "2"]), InvalidTypeError),
    (lambda: report.histogram("h", [1], bins=0), InvalidValueError),
    (lambda: report.histogram("h", [1], range=(2, 1)), InvalidValueError),
    (lambda: report.heatmap("m", ["a"], ["b"], [[1, 2]]), InvalidValueError),
    (lambda: report.heatmap("m", ["a"], ["b"], [[float("inf")]]), InvalidValueError),
    (lambda: report.heatmap("m", ["a"] * 121, ["b"], [[1]] * 121), InputTooLargeError),
])
def test_charts_bad_input(build, error):
    with pytest.raises(error):
        build()


@pytest.mark.parametrize("template", ["../templates/page.html", "/etc/passwd", "report.css", "missing.html", 3])
def test_render_page_only_uses_package_templates(template):
    with pytest.raises(InvalidValueError) as info:
        report.render_page("t", [], template=template)
    assert info.value.field == "template"


def test_render_page_rejects_foreign_sections():
    with pytest.raises(InvalidTypeError) as info:
        report.render_page("t", [report.summary_table("s", {}), "<b>raw</b>"])
    assert info.value.item == 1


def test_jinja2_is_imported_only_when_rendering_and_numpy_never():
    code = ("import sys, scorekit, scorekit.report as r\n"
            "s = [r.summary_table('s', {'a': 1}), r.bar_chart('b', ['x'], [1])]\n"
            "assert 'jinja2' not in sys.modules, 'imported early'\n"
            "assert 'numpy' not in sys.modules, 'building a report needs no NumPy'\n"
            "r.render_page('t', s)\n"
            "assert 'jinja2' in sys.modules and 'numpy' not in sys.modules\n")
    env = dict(os.environ, PYTHONPATH=str(Path(report.__file__).parents[2]))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_write_report_atomic_and_replaces(tmp_path):
    target = tmp_path / "report.html"
    html = report.render_page("t", [report.summary_table("s", {"a": 1})])
    assert report.write_report(target, html) == target
    assert target.read_text(encoding="utf-8") == html
    report.write_report(target, html + "<!-- v2 -->")
    assert target.read_text(encoding="utf-8").endswith("v2 -->")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]   # no temporary file left


def test_write_report_failure_keeps_old_file_and_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    target.write_text("old", encoding="utf-8")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        report.write_report(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_write_report_never_overwrites_an_input(tmp_path, monkeypatch):
    data = tmp_path / "gt.json"
    data.write_text("{}", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(data)
    monkeypatch.chdir(tmp_path)
    for path in (data, "gt.json", tmp_path / "sub" / ".." / "gt.json", link):
        if "sub" in str(path):
            (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(InvalidValueError, match="never overwrite inputs") as info:
            report.write_report(path, "<p>x</p>", inputs=[tmp_path / "other.json", data])
        assert str(data) in str(info.value)
    with pytest.raises(InvalidValueError, match="never overwrite inputs"):
        report.write_report(data, "<p>x</p>", inputs=str(data))   # one path, not a sequence of characters
    assert data.read_text(encoding="utf-8") == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gt.json", "link.json", "sub"]


def test_write_report_bad_targets(tmp_path):
    with pytest.raises(InvalidValueError, match="does not exist"):
        report.write_report(tmp_path / "missing" / "r.html", "x")
    with pytest.raises(InvalidValueError, match="is a folder"):
        report.write_report(tmp_path, "x")
    with pytest.raises(InvalidValueError, match="UTF-8"):
        report.write_report(tmp_path / "r.html", "lone \ud800")
    with pytest.raises(InvalidTypeError):
        report.write_report(tmp_path / "r.html", b"bytes")
    assert list(tmp_path.iterdir()) == []


def test_contents_link_every_titled_section_to_a_unique_id():
    html = report.render_page("t", [
        report.summary_table("Totals", {"n": 1}),
        report.note("untitled, not listed"),
        report.group("Group", [report.data_table("Inner", ["a"], [[1]]), report.note("n"),
                               report.details_block("Closed", [report.group("Deep", [report.note("d")])])]),
        report.details_block("Top details", [report.note("x")]),
    ])
    page = Page(html)
    ids = [v for k, v in page.attrs if k == "id"]
    links = [v for k, v in page.attrs if k == "href"]
    assert len(ids) == len(set(ids))
    # top-level titled sections and the titled parts of a top-level group, in page order
    assert links == ["#s1", "#s3", "#s3-1", "#s3-3", "#s4"]
    assert all(link[1:] in ids for link in links)
    assert "s3-3-1" in ids                     # deeper parts have an anchor too, only not a contents line
    nav = html[html.index("<nav"):html.index("</nav>")]
    assert [re.sub(r"<[^>]+>", "", m) for m in re.findall(r"<a [^>]*>[^<]*</a>", nav)] == [
        "Totals", "Group", "Inner", "Closed", "Top details"]


def test_a_page_without_titled_sections_has_no_contents():
    html = report.render_page("t", [report.note("just a note")])
    assert "<nav" not in html and 'class="with-contents"' not in html


def test_docs_page_layout_examples_run():
    from doc_examples import run_python_blocks

    run_python_blocks("reports.md", section="Page layout: contents, colours, wide tables, scripts")
