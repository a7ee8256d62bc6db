"""The HTML report of ``scorekit ocr-eval`` and :func:`scorekit.report.aligned_diff`: every section
there, hostile text escaped, segment ids on hover, each error linked to the next (no script), and
the page in headless Chromium under its Content-Security-Policy, with a screenshot."""

from __future__ import annotations

import re
import struct
from html.parser import HTMLParser

import pytest

from scorekit import cli, report
from scorekit.errors import InvalidValueError
from tests.ocr_eval_files import page_xml, write
from tests.test_report_browser import Dom, _png_rows, _problems, _run, chromium  # noqa: F401  (fixture)

HOSTILE = "<script>alert(1)</script> \"' </style> \u202e\u05d0\u0627"


class Links(HTMLParser):
    """The diff panes' error links: ``(id, href, title)`` per ``<a class="d …">``."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str]] = []
        self.titles: list[str] = []
        self.scripts = 0
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "a" and "d" in attrs.get("class", "").split():
            self.links.append((attrs["id"], attrs["href"], attrs.get("title", "")))
        if tag in ("a", "span") and attrs.get("title"):
            self.titles.append(attrs["title"])


def test_aligned_diff_links_every_error_to_the_next():
    section = report.aligned_diff("d", [("eq", "ab", "ab", "r1", "r1"), ("sub", "c", "x", "r1", "l9"),
                                        ("eq", "d", "d", "", ""), ("del", "e", "", "r2", ""), ("ins", "", "f", "", "r3")],
                                  anchor="p-1")
    gt, ocr = section.panes
    assert [(s.op, s.text, s.tip, s.anchor, s.link) for s in gt.segments] == [
        ("eq", "ab", "r1", "", ""), ("sub", "c", "r1", "p-1-0", "p-1-1"), ("eq", "d", "", "", ""),
        ("del", "e", "r2", "p-1-1", "p-1-2"), ("gap", "", "", "p-1-2", "p-1-0")]
    assert [(s.op, s.anchor, s.link) for s in ocr.segments if s.anchor] == [
        ("sub", "p-1-0o", "p-1-1o"), ("gap", "p-1-1o", "p-1-2o"), ("ins", "p-1-2o", "p-1-0o")]
    assert section.anchor == "p-1-0"
    assert report.aligned_diff("d", [("eq", "ab", "ab", "", "")], anchor="x").anchor == ""


@pytest.mark.parametrize("runs, anchor", [
    ([("eq", "a", "b", "", "")], "x"),          # an equal run of unequal texts
    ([("ins", "a", "b", "", "")], "x"),         # an insertion with ground-truth text
    ([("del", "a", "b", "", "")], "x"),
    ([("swap", "a", "b", "", "")], "x"),
    ([("eq", "a", "a", "")], "x"),
    ([("eq", "a", "a", "", "")], "x\" onclick=\"y"),
    ([("eq", "a", "a", "", "")], ""),
])
def test_aligned_diff_refuses_what_is_not_an_alignment(runs, anchor):
    with pytest.raises(InvalidValueError):
        report.aligned_diff("d", runs, anchor=anchor)


@pytest.fixture
def engines_report(tmp_path):
    """Two engines on a folder of three PAGE pages (one with hostile text), one page missing in B."""
    gt_dir, a_dir, b_dir = tmp_path / "gt", tmp_path / "engine A", tmp_path / "engine B"
    pages = {
        "p1": ([("r1", ["Die erste Zeile.", "Und die zweite, 1848."])], [("r1", ["Dic erste Zeile", "Und die zweite, l848."])],
               [("r1", ["Die erste Zeile.", "Und dic zweite, 1848."])]),
        "p2": ([("r1", [HOSTILE]), ("r2", ["Ende."])], [("r1", [HOSTILE.replace("alert", "a1ert")]), ("r2", ["Ende"])],
               [("r1", [HOSTILE]), ("r2", ["Ende."])]),
        "p3": ([("r1", ["nur hier"])], [("r1", ["nur hicr"])], None),
    }
    for name, (gt, a, b) in pages.items():
        write(gt_dir / f"{name}.gt.xml", page_xml(gt))
        write(a_dir / f"{name}.a.xml", page_xml(a))
        if b is not None:
            write(b_dir / f"{name}.b.xml", page_xml(b))
    out = tmp_path / "report.html"
    assert cli.main(["ocr-eval", str(gt_dir), str(a_dir), str(b_dir), "--html", str(out), "--progress", "never"]) == 0
    return out


def test_engines_report_sections_escaping_and_links(engines_report, capsys):
    html = engines_report.read_text(encoding="utf-8")
    capsys.readouterr()
    for title in ("Engines", "Comparison: per-page CER of A minus B", "Per-page CER", "Pages",
                  "Accuracy by character class", "Character confusions", "Worst pages · p1.gt.xml",
                  "ground-truth pages without OCR"):
        assert title in html, title
    assert "p3.gt.xml (missing in" in html
    assert '<button type="button">bag-of-words WER</button>' in html and ">FCA</button>" not in html  # not asked
    parsed = Links(html)
    assert parsed.scripts == 1                                  # only the report module's hashed script
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    ids = {i for i, _, _ in parsed.links}
    assert len(ids) == len(parsed.links) and {h[1:] for _, h, _ in parsed.links} == ids   # a closed chain
    assert {"r1", "r2"} <= set(parsed.titles)                   # segment ids on hover
    assert re.search(r'<a class="jump" href="#[^"]+-0">first error</a>', html)


def test_report_in_headless_chromium(chromium, engines_report, tmp_path):  # noqa: F811
    dom_html, stderr, requests = _run(chromium, engines_report, tmp_path / "dom", "--dump-dom")
    assert _problems(stderr) == [] and requests == []
    assert Dom(dom_html).body.get("data-script-ran") == "1"
    assert "<script>alert" not in dom_html
    _, stderr, requests = _run(chromium, engines_report, tmp_path / "shot", "--screenshot=" + str(tmp_path / "shot.png"),
                               "--window-size=1200,1600")
    assert _problems(stderr) == [] and requests == []
    png = (tmp_path / "shot.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1200, 1600)
    assert len(set(_png_rows(png))) > 50
