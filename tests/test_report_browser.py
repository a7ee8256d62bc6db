"""A generated report in a real headless browser (Debian's ``chromium``): the page's script runs
under its Content-Security-Policy and sorts the table, nothing is logged to the console, no
network request leaves the page, and a screenshot is taken. A control page with a wrong script
hash and a remote image shows that each of these checks does catch a failure.

Needs ``chromium`` on PATH (``apt-get install -y chromium``); set ``SCOREKIT_SKIP_BROWSER=1`` to
skip these tests on a machine without it.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import sys
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from scorekit import report
from scorekit.batch import editops

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--no-pings"]
HOSTILE = "<script>alert(1)</script> \"' </style> \u202e\u05d0\u0627 \x00 \ud800 http://example.com/x.png"
CERS = [0.25, 0.5, float("nan"), 0.0, 0.125, 1.0]


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("SCOREKIT_SKIP_BROWSER") == "1":
            pytest.skip("chromium not on PATH and SCOREKIT_SKIP_BROWSER=1")
        pytest.fail("the report browser check needs Debian's chromium on PATH: install it with "
                    "`apt-get install -y chromium` (or set SCOREKIT_SKIP_BROWSER=1 to skip this check)")
    return CHROMIUM


def _run(chromium: str, page: Path, work: Path, *action: str) -> tuple[str, str, list[str]]:
    """Load ``page`` with ``action`` flags; stdout, stderr and the URLs the page itself requested
    (from the network log; the browser's own background requests have no page initiator)."""
    work.mkdir()
    netlog = work / "netlog.json"
    done = subprocess.run([chromium, *FLAGS, f"--user-data-dir={work / 'profile'}", f"--log-net-log={netlog}",
                           *action, page.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    log = json.loads(netlog.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    requests = [e["params"]["url"] for e in log["events"]
                if e["type"] == start and "url" in e["params"] and e["params"].get("initiator") != "not an origin"]
    return done.stdout, done.stderr, requests


def _problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Content Security Policy" in line]


class Dom(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.body: dict = {}
        self.sort_header: list[tuple[str, str]] = []
        self.cells: list[list[str]] = []
        self._in_td = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "body":
            self.body = attrs
        if tag == "th" and "aria-sort" in attrs:
            self.sort_header.append(attrs["aria-sort"])
        if tag == "tr":
            self.cells.append([])
        self._in_td = tag == "td"

    def handle_endtag(self, tag):
        self._in_td = False

    def handle_data(self, data):
        if self._in_td:
            self.cells[-1].append(data)


def _png_rows(png: bytes) -> bytes:
    """The decompressed (still filtered) image data of a PNG file, read chunk by chunk."""
    data, at = [], 8
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        if kind == b"IDAT":
            data.append(png[at + 8:at + 8 + length])
        at += 12 + length
    return zlib.decompress(b"".join(data))


def _report(tmp_path: Path) -> Path:
    gt = "Երևանը Հայաստանի մայրաքաղաքն է " + HOSTILE.replace("\ud800", "?")
    pred = "Երեվանը Հայաստանի մայրաքաղաք է " + HOSTILE.replace("\ud800", "!")
    rows = [[f"page {i} {HOSTILE}", cer, 100 * i] for i, cer in enumerate(CERS)]
    html = report.render_page(HOSTILE, [
        report.summary_table("Corpus", {"pages": len(CERS), "CER": 0.31, HOSTILE: HOSTILE}),
        report.data_table("Pages", ["page", "CER", "chars"], rows, sort_by="CER", descending=True),
        report.diff_view("page 1", gt, pred, editops(gt, pred)),
        report.bar_chart("Confusions", ["ե→է", HOSTILE], [3, 1]),
        report.histogram("CER per page", [c for c in CERS if not math.isnan(c)], bins=4),
        report.heatmap("Confusion matrix", ["ա", HOSTILE], ["ա", HOSTILE], [[9, 1], [2, 7]]),
    ])
    return report.write_report(tmp_path / "report.html", html)


def test_report_in_headless_chromium(chromium, tmp_path):
    page = _report(tmp_path)
    dom_html, stderr, requests = _run(chromium, page, tmp_path / "dom", "--dump-dom")
    assert _problems(stderr) == []
    assert requests == []
    dom = Dom(dom_html)
    assert dom.body.get("data-script-ran") == "1"   # the CSP hash let the script run
    assert dom.sort_header == ["descending"]
    shown = [row[1] for row in dom.cells if len(row) == 3]
    expected = sorted((c for c in CERS if not math.isnan(c)), reverse=True)
    assert shown == [report.sections.format_number(c) for c in expected] + ["NaN"]

    _, stderr, requests = _run(chromium, page, tmp_path / "shot", "--screenshot=" + str(tmp_path / "shot.png"),
                               "--window-size=1200,900")
    assert _problems(stderr) == [] and requests == []
    png = (tmp_path / "shot.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1200, 900)
    assert len(set(_png_rows(png))) > 50   # drawn content, not a blank page


def test_the_checks_catch_a_blocked_script_and_a_request(chromium, tmp_path):
    control = tmp_path / "control.html"
    control.write_text("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\""
                       "default-src 'none'; img-src http:; script-src 'sha256-AAAA'\"></head><body>"
                       "<img src=\"http://example.com/x.png\" alt=\"\">"
                       "<script>document.body.setAttribute('data-script-ran', '1')</script></body></html>",
                       encoding="utf-8")
    dom_html, stderr, requests = _run(chromium, control, tmp_path / "dom", "--dump-dom")
    assert Dom(dom_html).body.get("data-script-ran") is None
    assert any("Executing inline script violates" in line for line in _problems(stderr))
    assert requests == ["http://example.com/x.png"]


@pytest.mark.parametrize("skip", [False, True])
def test_missing_chromium_fails_with_the_install_command_unless_skipped(tmp_path, skip):
    env = {k: v for k, v in os.environ.items() if k != "SCOREKIT_SKIP_BROWSER"}
    env.update(PATH=str(tmp_path), PYTHONPATH=str(Path(report.__file__).parents[2]))
    if skip:
        env["SCOREKIT_SKIP_BROWSER"] = "1"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", __file__,
                           "-k", "test_report_in_headless_chromium"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    if skip:
        assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout
    else:
        assert done.returncode == 1 and "apt-get install -y chromium" in done.stdout, done.stdout
