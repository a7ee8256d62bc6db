"""``scorekit flowcharts parse``: totals, JSON, HTML report and clean errors."""

from __future__ import annotations

import json
import os
import time

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


def test_parse_report_shows_the_matchings_behind_each_cost(tmp_path, capsys):
    """Labels changed by hand on trial_A: node 1 gains "Screened" (8 characters, unmatched), node 2
    loses "Declined" (8, unmatched), node 4 reads "IT" for "ITT" (1 edit): label cost 17. The
    additional texts: "Figure 1" read "Figure 1." (1 edit), "Source: CONSORT" extra (15)."""
    from cases_report_data import Page

    for kind, files in TRUE.items():
        write(tmp_path / "gt" / kind, files)
    pred = json.loads(json.dumps(PRED))
    labels = pred["trial_A"]["nodes"]
    labels[0]["labels"], labels[1]["labels"], labels[3]["labels"] = ["Screened"], [], ["IT"]
    preds = write(tmp_path / "preds", pred)
    html = tmp_path / "parse.html"
    assert main(["flowcharts", "parse", str(tmp_path / "gt"), str(preds), "--html", str(html), "--json"]) == 0
    rows = {r["stem"]: r for r in json.loads(capsys.readouterr().out)["flowcharts"]}
    assert (rows["trial_A"]["label_cost"], rows["trial_A"]["additional_text_cost"]) == (17.0, 16.0)
    tables = dict(Page(html.read_text(encoding="utf-8")).tables)
    assert tables["trial_A: node matching (option 0)"][1:] == [
        ["1", "Assessed for eligibility (n=120)", "1", "Assessed for eligibility (n = 120)", "0.0000"],
        ["2", "Excluded (n=20)", "2", "Excluded (n=20)", "0.0000"],
        ["3", "Randomised (n=100)", "3", "Randomized (n=100)", "1.0000"],
        ["4", "Analysed (n=95)", "4", "Analysed (n=95)", "0.0000"]]
    assert tables["trial_A: label matching"] == [
        ["true #", "true label", "pred #", "pred label", "cost"],
        ["1", "", "1", "Screened", "8.0000"], ["2", "Declined", "2", "", "8.0000"], ["4", "ITT", "4", "IT", "1.0000"]]
    assert tables["trial_A: additional-text matching"][1:] == [["0", "Figure 1", "0", "Figure 1.", "1.0000"],
                                                                ["", "", "1", "Source: CONSORT", "15.0000"]]
    assert tables["trial_B: label matching"] == [["true #", "true label", "pred #", "pred label", "cost"]]
    assert tables["trial_B: node matching (option 0)"][2] == ["2", "Completed (n=45)", "2", "Completed (n=44)",
                                                             "1.0000"]
    # each flowchart's costs are restated under its tables, as the sums they are
    notes = Page(html.read_text(encoding="utf-8")).notes
    assert any("node text cost 1 (the node matching); label cost 17 (the label matching); additional-text cost 16"
               in n for n in notes), notes


def test_parse_errors_exit_2_naming_the_file(dirs, capsys):
    gt, preds = dirs
    (preds / "trial_B.json").write_text("{oops", encoding="utf-8")
    assert main(["flowcharts", "parse", str(gt), str(preds)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scorekit: error:") and "trial_B.json" in err and err.count("\n") == 1
    assert main(["flowcharts", "parse", str(gt), str(preds.parent / "none")]) == 2
    assert "prediction folder PRED_DIR" in capsys.readouterr().err


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


@pytest.mark.parametrize("missing, named", [
    ("gt/labels", "ground-truth labels folder (TRUE_DIR/labels)"),
    ("gt", "ground-truth folder TRUE_DIR"),
])
def test_parse_names_a_missing_ground_truth_folder_before_any_work(dirs, tmp_path, capsys, missing, named):
    """Was: "Expected 0 prediction files, found 2" (a missing folder counted as empty)."""
    import shutil

    gt, preds = dirs
    shutil.rmtree(tmp_path / missing)
    assert main(["flowcharts", "parse", str(gt), str(preds), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scorekit: error:") and named in err and "does not exist" in err and err.count("\n") == 1


def test_parse_names_a_missing_folder_given_by_option(dirs, tmp_path, capsys):
    gt, preds = dirs
    assert main(["flowcharts", "parse", str(gt), str(preds), "--true-flow-dir", str(tmp_path / "nope")]) == 2
    assert "ground-truth flow folder (--true-flow-dir)" in capsys.readouterr().err


def _same_file(kind, target, out):
    if kind == "symlink":
        out.symlink_to(target)
    elif kind == "hardlink":
        os.link(target, out)
    return out if kind != "equal" else target


@pytest.mark.parametrize("kind", ["equal", "symlink", "hardlink"])
@pytest.mark.parametrize("which", ["preds/trial_A.json", "gt/flow/trial_B.json"])
def test_parse_never_writes_over_an_input_and_checks_before_the_work(dirs, tmp_path, capsys, monkeypatch, kind,
                                                                     which):
    """An --html path equal to, a symbolic link to or a hard link of any file the run reads (also
    files inside the input folders) ends with status 2 before any matching; the input is unchanged."""
    from scorekit.flowcharts.parsing import match_diagrams

    gt, preds = dirs
    target = tmp_path / which
    before = target.read_bytes()
    (tmp_path / "out").mkdir()
    out = _same_file(kind, target, tmp_path / "out" / "report.html")
    monkeypatch.setattr(match_diagrams, "match_nodes", lambda *a, **k: pytest.fail("matching ran"))
    assert main(["flowcharts", "parse", str(gt), str(preds), "--html", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scorekit: error: --html") and "input" in err and err.count("\n") == 1
    assert target.read_bytes() == before


def test_parse_reports_unproven_matchings(dirs, tmp_path, capsys, monkeypatch):
    """A matching stopped by --time-limit is counted, listed with its bound and named on stderr."""
    import scipy.optimize

    from test_flowcharts_parsing_bench import write

    gt, preds = dirs
    # trial_B: two boxes reading "box" in both, the arrows crossed against the labels, so the label stage needs the solver
    (gt / "nodes" / "trial_B.json").write_text(json.dumps({"options": [{"nodes": [
        {"node_number": 1, "text": "box"}, {"node_number": 2, "text": "box"}]}]}))
    (gt / "labels" / "trial_B.json").write_text(json.dumps({"options": [{"nodes": [
        {"node_number": 1, "labels": ["x"]}, {"node_number": 2, "labels": ["y"]}]}]}))
    pred = json.loads((preds / "trial_B.json").read_text())
    pred["nodes"] = [{"node_number": 1, "text": "box", "labels": ["y"], "points_to": [2]},
                     {"node_number": 2, "text": "box", "labels": ["x"], "points_to": []}]
    write(preds, {"trial_B": pred})

    class TimedOut:
        status, success, x, message, mip_dual_bound = 1, False, None, "Time limit reached", None

    monkeypatch.setattr(scipy.optimize, "milp", lambda *a, **k: TimedOut())
    start = time.monotonic()
    assert main(["flowcharts", "parse", str(gt), str(preds), "--json", "--time-limit", "0.5"]) == 0
    assert time.monotonic() - start < 30
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["summary"]["unproven_flowcharts"] == 1
    rows = {r["stem"]: r for r in out["flowcharts"]}
    assert rows["trial_A"]["unproven"] == []
    assert rows["trial_B"]["unproven"] == [{"option_idx": 0, "stage": "labels", "found": 2.0, "bound": 0.0}]
    assert "warning: the node matching of 1 flowchart(s) is not proven optimal within --time-limit 0.5 s" in captured.err
    assert "'trial_B' (option 0: label cost 2 found, at least 0 possible)" in captured.err
    assert main(["flowcharts", "parse", str(gt), str(preds), "--time-limit", "0"]) == 2
    assert "--time-limit must be a positive finite number of seconds" in capsys.readouterr().err
