"""The layout of report pages in a real headless browser (Debian's ``chromium``): the contents
link to every section and stay in view as the page scrolls, a series has one colour on every
chart of a page, a wide table scrolls inside its box while the page itself never scrolls
sideways, and CJK text is drawn with real glyphs (``fonts-noto-cjk``), not as empty boxes.

Geometry is measured by a probe script added to a copy of the page (with its hash added to the
copy's Content-Security-Policy); it writes what it measured into ``<body data-probe>``, read
back from ``--dump-dom``. The report's own page carries no such script. Uses the helpers of
tests/test_report_browser.py; ``SCOREKIT_SKIP_BROWSER=1`` skips it on a machine without chromium.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cases_report_data import multi, p1, p1b, renamed
from scorekit import report
from scorekit.cases.report import generate_report
from test_report_browser import Dom, _png_rows, _problems, _run, chromium  # noqa: F401  (chromium: fixture)

#: The probe: for every link of the contents, follow it as a click does (the fragment
#: navigation) and record where the linked block and the contents then are on screen; then the
#: page's horizontal overflow, each table's box (its visible and scrolled widths) with the size
#: of its cells that start with ``LONG_TEXT``, the direction of every table cell, and the legend
#: colours of every chart as drawn.
PROBE = r"""
(function () {
  var out = {links: [], charts: [], tables: [], directions: []};
  var nav = document.querySelector("nav.contents");
  var links = nav ? Array.prototype.slice.call(nav.querySelectorAll("a")) : [];
  links.forEach(function (a) {
    var href = a.getAttribute("href"), target = document.getElementById(href.slice(1));
    location.hash = href;
    var box = nav.getBoundingClientRect();
    out.links.push({href: href, found: target !== null, scroll: window.scrollY,
                    top: target ? target.getBoundingClientRect().top : null, nav: [box.top, box.bottom]});
  });
  out.viewport = [window.innerWidth, window.innerHeight];
  out.height = document.documentElement.scrollHeight;
  out.overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
  Array.prototype.forEach.call(document.querySelectorAll("table"), function (table) {
    var box = table.parentElement;
    var long = Array.prototype.filter.call(table.querySelectorAll("td"), function (td) {
      return td.textContent.indexOf("LONG_TEXT") === 0;
    }).map(function (td) { var r = td.getBoundingClientRect(); return [r.width, r.height]; });
    out.tables.push({box: box.className, client: box.clientWidth, scroll: box.scrollWidth,
                     right: box.getBoundingClientRect().right, long: long});
  });
  Array.prototype.forEach.call(document.querySelectorAll("tbody td"), function (td) {
    out.directions.push([td.textContent, getComputedStyle(td).direction]);
  });
  Array.prototype.forEach.call(document.querySelectorAll("figure svg"), function (svg) {
    var legend = {};
    Array.prototype.forEach.call(svg.querySelectorAll(":scope > rect"), function (rect) {
      var text = rect.nextElementSibling;
      if (rect.getAttribute("y") === "6" && text && text.tagName === "text") {
        legend[text.textContent] = getComputedStyle(rect).fill;
      }
    });
    out.charts.push(legend);
  });
  document.body.setAttribute("data-probe", JSON.stringify(out));
})();
"""


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def _probe(chromium: str, page: Path, work: Path, width: int, height: int) -> dict:  # noqa: F811
    """Load a copy of ``page`` with the probe added; what the probe measured."""
    html = page.read_text(encoding="utf-8")
    assert html.count("script-src &#39;sha256-") == 1, "the page has no script hash to extend"
    html = html.replace("script-src ", "script-src " + _sha(PROBE).replace("'", "&#39;") + " ", 1)
    html = html.replace("</body>", f"<script>{PROBE}</script></body>", 1)
    probed = work.with_suffix(".html")
    probed.write_text(html, encoding="utf-8")
    dom_html, stderr, requests = _run(chromium, probed, work, "--dump-dom", f"--window-size={width},{height}")
    assert _problems(stderr) == [] and requests == []
    dom = Dom(dom_html)
    assert dom.body.get("data-script-ran") == "1"
    return json.loads(dom.body["data-probe"])


def _long_page(tmp_path: Path) -> Path:
    """A page many screens long: groups of tables, notes and details blocks."""
    sections = [report.summary_table("Totals", {"pages": 40, "CER": 0.05})]
    for g in range(1, 7):
        parts = [report.data_table(f"Table {g}.{t}", ["page", "CER"], [[f"p{k}", k / 100] for k in range(25)])
                 for t in range(1, 3)]
        parts.append(report.details_block(f"Details {g}", [report.note("inside")]))
        sections.append(report.group(f"Group {g}", parts))
    sections.append(report.note("the end, untitled"))
    return report.write_report(tmp_path / "long.html", report.render_page("Long report", sections))


@pytest.mark.parametrize("width", [1280, 640])   # the sidebar, and the bar along the top of a narrow window
def test_contents_link_every_section_and_stay_in_view(chromium, tmp_path, width):  # noqa: F811
    page = _long_page(tmp_path)
    found = _probe(chromium, page, tmp_path / "probe", width, 800)
    titled = ["#s1"] + [f"#s{g + 1}{suffix}" for g in range(1, 7) for suffix in ("", "-1", "-2", "-3")]
    assert [link["href"] for link in found["links"]] == titled   # every titled section and part, in order
    viewport_h = found["viewport"][1]
    assert found["height"] > 5 * viewport_h                     # long enough for the check to mean something
    for link in found["links"]:
        assert link["found"], link["href"]
        # the link scrolled its block to the top (or as far as the page goes, near the end)
        at_end = link["scroll"] >= found["height"] - viewport_h - 1
        assert -1 <= link["top"] < viewport_h and (abs(link["top"]) < 60 or at_end), link
        # and the contents are still on screen, at the top edge of the window
        top, bottom = link["nav"]
        assert top == 0 and bottom > 20, link
    assert max(link["scroll"] for link in found["links"]) > 4 * viewport_h


def test_a_series_has_one_colour_on_every_chart(chromium, tmp_path):  # noqa: F811
    summary = multi(p1(), p1b(), renamed(p1b(), "p1c.yaml"))
    page = generate_report(summary, tmp_path / "report.html", ["plots"])
    charts = [c for c in _probe(chromium, page, tmp_path / "probe", 1280, 900)["charts"] if c]
    assert [sorted(c) for c in charts] == [["p1.yaml", "p1b.yaml", "p1c.yaml"], ["p1b.yaml", "p1c.yaml"]]
    accuracy, delta = charts
    assert delta == {name: accuracy[name] for name in delta}          # the Δ chart keeps each pipeline's colour
    assert len(set(accuracy.values())) == 3                            # and no two pipelines share one
    assert accuracy["p1.yaml"] == "rgb(74, 120, 181)"                 # the palette's first colour, as drawn


LONG_TEXT = "LONG_TEXT " + "a flowchart node whose text goes on and on " * 20


def test_a_wide_table_scrolls_in_its_box_and_long_texts_wrap(chromium, tmp_path):  # noqa: F811
    columns = ["flowchart"] + [f"pipeline {p} {what} (a long column name)" for p in "ABC"
                               for what in ("node text cost", "label cost", "flow F1", "additional text cost")]
    rows = [[LONG_TEXT] + [k / 7 for k in range(12)], ["chart_" + "x" * 150] + [1.0] * 12]
    html = report.render_page("Wide", [report.data_table("Flowcharts", columns, rows),
                                       report.summary_table("Settings", {"note": LONG_TEXT})])
    page = report.write_report(tmp_path / "wide.html", html)
    found = _probe(chromium, page, tmp_path / "probe", 1024, 768)
    width = found["viewport"][0]
    assert found["overflow"] == 0                                      # the page never scrolls sideways
    wide, settings = found["tables"]
    assert wide["box"] == "scroll" and wide["scroll"] > wide["client"] and wide["right"] <= width
    (cell_w, cell_h), = wide["long"]
    assert cell_w < width / 2 and cell_h > 5 * 14                     # the long text wraps over many lines
    (cell_w, cell_h), = settings["long"]
    assert settings["scroll"] == settings["client"] and cell_w < width and cell_h > 3 * 14


def test_right_to_left_data_reads_right_to_left(chromium, tmp_path):  # noqa: F811
    texts = ["שלום עולם", "مرحبا بالعالم 42", "Երևան", "Москва", "漢字", "abc שלום"]
    html = report.render_page("Scripts", [report.data_table("Cells", ["text", "n"], [[t, 1] for t in texts])])
    found = _probe(chromium, report.write_report(tmp_path / "rtl.html", html), tmp_path / "probe", 800, 600)
    assert found["directions"] == [["שלום עולם", "rtl"], ["1", "ltr"], ["مرحبا بالعالم 42", "rtl"], ["1", "ltr"],
                                   ["Երևան", "ltr"], ["1", "ltr"], ["Москва", "ltr"], ["1", "ltr"],
                                   ["漢字", "ltr"], ["1", "ltr"], ["abc שלום", "ltr"], ["1", "ltr"]]


# ----------------------------------------------------------------------------- CJK glyphs

CJK = "漢字の表示テスト 中文字符 한국어"
#: As many code points of an unassigned block (plane 3, past CJK Extension H): no font has them,
#: so they are drawn as the missing-glyph box; CJK without a CJK font is drawn the same way.
TOFU = "".join(chr(0x33000 + k) if c != " " else " " for k, c in enumerate(CJK))


def _cjk_page(tmp_path: Path, name: str, text: str) -> Path:
    html = report.render_page("Glyphs", [report.summary_table("Text", {"sample": text}),
                                         report.data_table("Cells", ["text"], [[text * 3]])])
    return report.write_report(tmp_path / f"{name}.html", html)


def _screenshot(chromium: str, page: Path, work: Path, env: dict | None = None) -> bytes:  # noqa: F811
    work.mkdir()
    shot = work / "shot.png"
    done = subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                           f"--user-data-dir={work / 'profile'}", "--hide-scrollbars", "--window-size=900,400",
                           f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=120,
                          env=env)
    assert done.returncode == 0, done.stderr
    return _png_rows(shot.read_bytes())


@pytest.fixture(scope="module")
def cjk_font() -> None:
    listed = shutil.which("fc-list") and subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True,
                                                        text=True).stdout
    if not listed or not listed.strip():
        if os.environ.get("SCOREKIT_SKIP_BROWSER") == "1":
            pytest.skip("no CJK font and SCOREKIT_SKIP_BROWSER=1")
        pytest.fail("the CJK check needs a CJK font: install it with `apt-get install -y fonts-noto-cjk` "
                    "(or set SCOREKIT_SKIP_BROWSER=1 to skip this check)")


def test_cjk_text_is_drawn_with_real_glyphs(chromium, cjk_font, tmp_path):  # noqa: F811
    cjk = _screenshot(chromium, _cjk_page(tmp_path, "cjk", CJK), tmp_path / "cjk")
    tofu = _screenshot(chromium, _cjk_page(tmp_path, "tofu", TOFU), tmp_path / "tofu")
    assert cjk != tofu      # the CJK text is not drawn as missing-glyph boxes

    # the control: with the CJK fonts hidden from fontconfig, the same page draws only boxes,
    # pixel for pixel the screenshot of the unassigned code points, so the check above can fail
    dejavu = Path("/usr/share/fonts/truetype/dejavu")
    assert dejavu.is_dir(), "the control needs fonts-dejavu-core"
    config = tmp_path / "fonts.conf"
    config.write_text(f"<?xml version=\"1.0\"?><!DOCTYPE fontconfig SYSTEM \"fonts.dtd\"><fontconfig>"
                      f"<dir>{dejavu}</dir><cachedir>{tmp_path / 'fc-cache'}</cachedir></fontconfig>",
                      encoding="utf-8")
    env = {**os.environ, "FONTCONFIG_FILE": str(config)}
    without = _screenshot(chromium, _cjk_page(tmp_path, "cjk2", CJK), tmp_path / "cjk-without", env)
    boxes = _screenshot(chromium, _cjk_page(tmp_path, "tofu2", TOFU), tmp_path / "tofu-without", env)
    assert without == boxes
