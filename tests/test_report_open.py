"""``--open`` on every command that writes an HTML report: the report written is handed to the web
browser (``webbrowser.open`` of its ``file://`` URI, replaced here by a recorder), only when asked;
``--open`` without a report to open is a usage error (exit 2, one line) before any work."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path

import pytest

from cases_report_data import multi, p1, p1b
from scorekit import report
from scorekit.cli import main
from scorekit.ocr_pages import evaluate_from_hf as hf
from scorekit.ocr_pages.evaluation import measure_accuracy as measure
from scorekit.ocr_pages.evaluation import measure_overall_accuracy as overall
from test_flowcharts_parsing_cli import dirs  # noqa: F401  (fixture)
from test_ocr_pages_cli import converted, dataset  # noqa: F401  (dataset: fixture)
from test_ocr_pages_hf import argv as hf_argv, no_datasets, shards  # noqa: F401  (fixtures)


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """The URLs handed to the web browser."""
    urls: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **kw: urls.append(url) or True)
    return urls


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


def test_open_in_browser_opens_the_file_uri_and_says_when_no_browser_starts(tmp_path, monkeypatch, capsys):
    page = tmp_path / "a b" / "r é.html"
    page.parent.mkdir()
    page.write_text("x", encoding="utf-8")
    urls: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **kw: urls.append(url) or False)
    monkeypatch.chdir(tmp_path)
    assert report.open_in_browser(Path("a b") / "r é.html") is None
    assert urls == [f"file://{tmp_path}/a%20b/r%20%C3%A9.html"]     # absolute, percent-encoded
    assert capsys.readouterr().err == f"scorekit: note: no web browser could be started; the report is {urls[0]}\n"


def _label_files(tmp_path: Path) -> tuple[str, str]:
    true = [{"img_path": f"i{k}.png", "label": label} for k, label in enumerate(["a", "b", "a"])]
    pred = [{"img_path": f"i{k}.png", "label": label} for k, label in enumerate(["a", "a", "a"])]
    (tmp_path / "t.json").write_text(json.dumps(true), encoding="utf-8")
    (tmp_path / "p.json").write_text(json.dumps(pred), encoding="utf-8")
    return str(tmp_path / "t.json"), str(tmp_path / "p.json")


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_flowcharts_label_commands(tmp_path, opened, capsys, extra):
    true, pred = _label_files(tmp_path)
    out = tmp_path / "r.html"
    assert main(["flowcharts", "classify", true, pred, "--html", str(out), *extra]) == 0
    assert opened == []
    assert main(["flowcharts", "classify", true, pred, "--html", str(out), "--open", *extra]) == 0
    assert opened == [_uri(out)]


def test_flowcharts_parse(dirs, tmp_path, opened, capsys):  # noqa: F811
    gt, preds = dirs
    out = tmp_path / "parse.html"
    assert main(["flowcharts", "parse", str(gt), str(preds), "--html", str(out), "--open"]) == 0
    assert opened == [_uri(out)]


def test_cases(tmp_path, opened, capsys, monkeypatch):
    saved = tmp_path / "s.json"
    saved.write_text(multi(p1(), p1b()).to_json(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["cases", "--from-summary", str(saved), "--report", "r.html"]) == 0
    assert opened == []
    assert main(["cases", "--from-summary", str(saved), "--report", "r.html", "--open"]) == 0
    assert opened == [_uri(tmp_path / "r.html")]


def test_demo(tmp_path, opened, capsys):
    out = tmp_path / "demo.html"
    assert main(["demo", "--repeat", "1", "--html", str(out), "--open"]) == 0
    assert opened == [_uri(out)] and out.is_file()


def test_ocr_pages_commands(dataset, tmp_path, opened, capsys):  # noqa: F811
    csv_dir = converted(dataset, capsys)
    one, many, merged = tmp_path / "one.html", tmp_path / "many.html", tmp_path / "all.html"
    assert measure.main(["--annotations-json", str(dataset / "ann" / "p1.json"), "--predictions-csv",
                         str(csv_dir / "p1.csv"), "--output", str(tmp_path / "p1.json"), "--html", str(one),
                         "--open"]) == 0
    assert main(["ocr-pages", "variants", "--predictions-dir", str(csv_dir), "--annotations-dir",
                 str(dataset / "ann"), "--output-dir", str(tmp_path / "res"), "--html", str(many), "--open"]) == 0
    assert overall.main(["--reports", str(tmp_path / "p1.json"), "--output", str(tmp_path / "all.json"),
                         "--html", str(merged), "--open"]) == 0
    assert opened == [_uri(one), _uri(many), _uri(merged)]


def test_ocr_pages_evaluate_hf(shards, no_datasets, opened, capsys):  # noqa: F811
    out = shards / "hf.html"
    assert hf.main(hf_argv(shards, "--html", str(out), "--open")) == 0
    assert opened == [_uri(out)]


@pytest.mark.parametrize("command", [
    ["demo", "--repeat", "1"],
    ["flowcharts", "classify", "{true}", "{pred}"],
    ["flowcharts", "parse", "{dir}", "{dir}"],
    ["ocr-pages", "measure", "--annotations-json", "{true}", "--predictions-csv", "{pred}"],
    ["ocr-pages", "variants", "--predictions-dir", "{dir}", "--annotations-dir", "{dir}", "--output-dir", "{out}"],
    ["ocr-pages", "overall", "--reports", "{true}", "--output", "{out}"],
    ["ocr-pages", "evaluate-hf", "--dataset", "{dir}", "--predictions-dir", "{dir}", "--output-dir", "{out}"],
])
def test_open_without_a_report_is_a_usage_error_before_any_work(tmp_path, opened, capsys, command):
    true, pred = _label_files(tmp_path)
    (tmp_path / "in").mkdir()
    names = {"true": true, "pred": pred, "dir": str(tmp_path / "in"), "out": str(tmp_path / "out")}
    before = sorted(tmp_path.rglob("*"))
    assert main([part.format(**names) for part in command] + ["--open"]) == 2
    err = capsys.readouterr().err
    assert "--open needs --html REPORT" in err and err.count("\n") == 1, err
    assert opened == [] and sorted(tmp_path.rglob("*")) == before   # nothing written, no folder made
