"""``scorekit flowcharts parse``: totals, JSON, HTML report and clean errors."""

from __future__ import annotations

import json

import pytest


from scorekit.cli import main  # noqa: E402

from test_flowcharts_parsing_bench import PRED, TRUE, write  # noqa: E402


@pytest.fixture
def dirs(tmp_path):
    for kind, files in TRUE.items():
        write(tmp_path / "gt" / kind, files)
    return tmp_path / "gt", write(tmp_path / "preds", PRED)


def test_parse_json(dirs, capsys):
    gt, preds = dirs
    assert main(["flowcharts", "parse", str(gt), str(preds), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    s = out["summary"]
    assert s["flowcharts"] == 2 and s["total_node_text_cost"] == 2.0 and s["total_label_cost"] == 0.0
    assert s["total_additional_text_cost"] == 16.0 and s["avg_flow_jaccard"] == 0.875
    assert [r["stem"] for r in out["flowcharts"]] == ["trial_A", "trial_B"]
    assert out["flowcharts"][0]["flow_fp"] == 1 and out["flowcharts"][0]["option"] == 0
    assert main(["flowcharts", "parse", str(gt), str(preds), "--distance", "raw", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["total_node_text_cost"] == 4.0


def test_parse_text_and_html(dirs, tmp_path, capsys):
    gt, preds = dirs
    report = tmp_path / "out" / "parse.html"
    report.parent.mkdir()
    assert main(["flowcharts", "parse", str(gt), str(preds), "--html", str(report)]) == 0
    out = capsys.readouterr().out
    assert "total_node_text_cost: 2.0000" in out and "report:" in out
    html = report.read_text(encoding="utf-8")
    assert "Flowcharts" in html and "trial_A: node matching (option 0)" in html and "Randomized (n=100)" in html
    assert "http://" not in html and "https://" not in html
    # the report never overwrites an input
    assert main(["flowcharts", "parse", str(gt), str(preds), "--html", str(preds / "trial_A.json")]) == 2


def test_parse_errors_exit_2_naming_the_file(dirs, capsys):
    gt, preds = dirs
    (preds / "trial_B.json").write_text("{oops", encoding="utf-8")
    assert main(["flowcharts", "parse", str(gt), str(preds)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scorekit: error:") and "trial_B.json" in err and err.count("\n") == 1
    assert main(["flowcharts", "parse", str(gt), str(preds.parent / "none")]) == 2
    assert "No prediction files" in capsys.readouterr().err


def test_parse_html_report_in_headless_browser(dirs, tmp_path, capsys):
    """The parsing report loads in chromium under its CSP: the script runs, no console message,
    no request leaves the page (the browser helpers of the report tests)."""
    import shutil

    from test_report_browser import Dom, _problems, _run

    browser = shutil.which("chromium")
    if browser is None:
        pytest.fail("the flowcharts report browser check needs Debian's chromium on PATH (apt-get install -y chromium)")
    gt, preds = dirs
    html = tmp_path / "parse.html"
    assert main(["flowcharts", "parse", str(gt), str(preds), "--html", str(html)]) == 0
    dom_html, stderr, requests = _run(browser, html, tmp_path / "dom", "--dump-dom")
    assert Dom(dom_html).body.get("data-script-ran") == "1"
    assert _problems(stderr) == []
    assert [url for url in requests if url != html.as_uri()] == [], requests
    assert "trial_A: node matching (option 0)" in dom_html
