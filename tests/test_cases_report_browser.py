"""The cases report in a real headless browser (Debian's ``chromium``): every section, hostile case
data in every place it reaches the page; the page's own script runs under its CSP, nothing is
logged to the console, no network request leaves the page, the hostile payloads never run (they
would retitle the page, mark the body or add an element), and a screenshot shows drawn content.

Uses the helpers of tests/test_report_browser.py (same flags, network log, console check, PNG
reader); ``SCOREKIT_SKIP_BROWSER=1`` skips it on a machine without chromium.
"""

from __future__ import annotations

import struct
from html.parser import HTMLParser

from cases_report_data import case, multi, p1, p1b, pipeline, renamed, value
from scorekit.cases.report import SECTIONS, generate_report
from scorekit.cases.results import BenchmarkSummary, DagNode, FieldScore, StepScore
from test_report_browser import Dom, _png_rows, _problems, _run, chromium  # noqa: F401  (chromium: fixture)

MARK = "document.body.setAttribute('data-pwned','1');document.title='pwned';" \
       "document.body.appendChild(document.createElement('blink'))"
PAYLOADS = [
    f"</script><script>{MARK}</script>",
    f"<img src=x onerror=\"{MARK}\">",
    f"javascript:{MARK}",
    f"\"><svg onload=\"{MARK}\"></svg>",
    f"</summary></details><script>{MARK}</script>",
]
TITLE = "Cases report " + PAYLOADS[0]


class Elements(HTMLParser):
    """Tag names, the handler attributes, and the ``<title>`` text of a dumped DOM."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.title = ""
        self._in_title = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title and not self.title:
            self.title = data


def _summaries() -> tuple[BenchmarkSummary, BenchmarkSummary]:
    cases = []
    for k, h in enumerate(PAYLOADS):
        step = f"step {h}"
        fs = [FieldScore(f"{step}.{h}", f"actual {h}", f"expected {h}", 0.0), FieldScore(f"{step}.n", 1, 1, 1.0)]
        cases.append(case(f"case {k} {h}", [StepScore(step, 0.5, "scored", fs), value("classify", "bio", "bio")],
                          {step: {h: f"actual {h}", "n": 1}, "classify": "bio"},
                          {step: {h: f"expected {h}", "n": 1}, "classify": "bio"},
                          logs=[{"step": step, "attempt": 1, "status": h, "stderr": f"stderr {h}"}]))
    cases.append(case("crash", [], {}, {"classify": "bio"}, error="Error: " + " ".join(PAYLOADS)))
    dag = [DagNode(f"node {h}", f"kind {h}", {"model": h}, [DagNode(f"child {h}", h)]) for h in PAYLOADS]
    hostile = pipeline("dir/hostile.py", cases, dag, name="pipe " + PAYLOADS[1])
    current = multi(p1(), p1b(), hostile)
    previous = multi(p1(), renamed(p1b(), "p1b.yaml"), renamed(hostile, hostile.name))
    previous.pipelines[2].cases = previous.pipelines[2].cases[1:]
    return current, previous


def test_cases_report_in_headless_chromium(chromium, tmp_path):  # noqa: F811
    current, previous = _summaries()
    page = generate_report(current, tmp_path / "report.html", SECTIONS, title=TITLE, previous=previous)

    dom_html, stderr, requests = _run(chromium, page, tmp_path / "dom", "--dump-dom")
    assert _problems(stderr) == []
    assert requests == []
    dom = Dom(dom_html)
    assert dom.body.get("data-script-ran") == "1"      # the page's own script ran (its CSP hash holds)
    assert "data-pwned" not in dom.body                 # no payload ran
    found = Elements(dom_html)
    assert found.title == TITLE                         # document.title was never changed
    assert "blink" not in found.tags and "img" not in found.tags and found.handlers == []
    assert found.tags.count("script") == 1
    assert found.tags.count("details") >= 8 and found.tags.count("svg") >= 5

    _, stderr, requests = _run(chromium, page, tmp_path / "shot", "--screenshot=" + str(tmp_path / "shot.png"),
                               "--window-size=1280,2400")
    assert _problems(stderr) == [] and requests == []
    png = (tmp_path / "shot.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1280, 2400)
    assert len(set(_png_rows(png))) > 50                # drawn content, not a blank page
