"""The page kit's corpus rules from a configuration file (``scorekit.ocr_pages.config``).

The default configuration reproduces the seed's numbers (the other ``test_ocr_pages_*`` files run
unchanged on it; here a file spelling out the defaults gives byte-identical reports); a German
configuration (its scanner's watermark, its quotes and long s, its own filters and variants)
changes the numbers to the values computed by hand below; bad files are refused with one error
line naming the file and the key (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages import config as cfg
from scorekit.ocr_pages.box_grouping.group import is_watermark_text, remove_watermark_words
from scorekit.ocr_pages.box_grouping.loading import PredictedWord, annotation_boxes_from_records
from scorekit.ocr_pages.evaluation import generate_accuracy_report_variants as variants_cmd
from scorekit.ocr_pages.evaluation import measure_accuracy, measure_overall_accuracy
from scorekit.ocr_pages.evaluation.prediction import evaluate_rows
from scorekit.ocr_pages.evaluation.reports import aggregate_reports
from scorekit.ocr_pages.evaluation.text_metrics import (compute_text_metrics, join_box_lines_with_hyphenation,
                                                        normalize_text)

GERMAN = {
    "watermark": {"phrases": ["Digitalisiert von der Staatsbibliothek"]},
    "filters": {
        "non-latin": {"scripts": ["CYRILLIC", "GREEK"], "share_above": 0.5},
        "ads": {"labels": ["Advertisement"]},
    },
    "variants": {"all": [], "no_ads": ["ads"], "clean": ["non-latin", "ads"]},
    "text": {"replacements": [["\u201e", '"'], ["\u201c", '"'], ["\u017f", "s"]],
             "lowercase_replacements": [], "free_at_joins": ""},
}

#: Box A (a paragraph) reads „Straße“ iſt; box B (an advertisement) reads Kaufen Sie.
BOXES = [
    {"id": "A", "label": "Paragraph", "bbox": [0, 0, 400, 100], "transcription": "\u201eStra\u00dfe\u201c i\u017ft"},
    {"id": "B", "label": "Advertisement", "bbox": [0, 200, 400, 260], "transcription": "Kaufen Sie"},
]
#: The OCR: box A's line, the scanner's watermark on a second line inside box A, box B short of a word.
CSV = ("x1,y1,x2,y2,group_row,text\n"
       '10,10,100,30,0,"""Stra\u00dfe"""\n110,10,150,30,0,ist\n'
       "10,60,100,80,1,Digitalisiert\n110,60,140,80,1,von\n150,60,180,80,1,der\n190,60,350,80,1,Staatsbibliothek\n"
       "10,210,100,240,2,Kaufen\n")


def _words() -> list[PredictedWord]:
    rows = [line.split(",") for line in CSV.splitlines()[1:]]
    return [PredictedWord(*map(float, r[:4]), r[4], ",".join(r[5:]).replace('"""', '"'), k) for k, r in enumerate(rows)]


def _report(config, filters=()):
    return evaluate_rows(annotation_boxes_from_records(BOXES), _words(), page_id="p", filters=filters, config=config)


# ------------------------------------------------------------------------------ defaults
def test_the_default_config_is_the_seeds_rules():
    d = cfg.DEFAULT_CONFIG
    assert cfg.config_from_dict({}) == d and cfg.config_from_dict(d.to_dict()).fingerprint == d.fingerprint
    assert d.watermark.phrases == ("National Library of Armenia OCR by PortMind", "OCR by PortMind")
    assert (d.watermark.max_edit_distance, d.watermark.max_window) == (2, 12)
    assert d.filter_names == ("non-armenian", "graphics", "photo", "image", "header", "image-header")
    assert d.variant_names == ("no_filter", "non_armenian", "graphics_headers_images_photos", "all_filters")
    assert d.text.free_at_joins == "\u0568\u0538" and len(d.text.replacements) == 16
    assert cfg.resolve_config(None) is d
    with pytest.raises(InvalidTypeError, match="config"):
        cfg.resolve_config({"watermark": {}})


def test_default_numbers_of_the_hand_page():
    """Under the seed's rules: „ “ ſ stay and cost one substitution each, the German watermark is
    not one (its 39 characters, with the space before, are insertions), so box A has 3 + 39 = 42
    edits over 12 characters and box B 4 (" Sie" missing) over 10."""
    for config in (None, cfg.DEFAULT_CONFIG, cfg.config_from_dict(cfg.DEFAULT_CONFIG.to_dict())):
        s = _report(config)["summary"]
        assert (s["ocr_region_char_edit_distance"], s["ocr_region_gt_char_count"]) == (46, 22)
        assert s["ocr_region_cer"] == 46 / 22 and s["watermark_words_removed"] == 0 and s["variant"] == "no_filter"
        assert "config_sha256" not in s
    # both boxes are Latin: the non-armenian filter leaves nothing to score
    s = _report(None, ("non-armenian",))["summary"]
    assert s["scored_region_count"] == 0 and s["ocr_region_cer"] is None and s["variant"] == "non_armenian"


# ------------------------------------------------------------------------------ a German config
def test_a_german_config_changes_the_numbers_as_computed_by_hand():
    german = cfg.config_from_dict(GERMAN)
    assert is_watermark_text("digitalisiert von der  Staatsbibliotek", german)
    assert not is_watermark_text("OCR by PortMind", german)
    kept, dropped = remove_watermark_words(_words(), german)
    assert [w.text for w in dropped] == ["Digitalisiert", "von", "der", "Staatsbibliothek"]
    assert normalize_text("\u201eStra\u00dfe\u201c i\u017ft -- x", german) == '"Straße" ist -- x'
    # box A: '"Straße" ist' both sides, 0 edits; box B: 4 edits over 10
    rep = _report(german)
    s = rep["summary"]
    assert [r["char_edit_distance"] for r in rep["regions"]] == [0, 4]
    assert s["ocr_region_cer"] == 4 / 22 and s["ocr_region_cer_lowercase"] == 4 / 22
    assert s["watermark_words_removed"] == 4 and s["variant"] == "all"
    assert s["config_sha256"] == german.fingerprint and list(s).index("config_sha256") == list(s).index("coverage_threshold") + 1
    no_ads = _report(german, "ads")["summary"]
    assert no_ads["ocr_region_cer"] == 0 / 12 and no_ads["variant"] == "no_ads" and no_ads["excluded_labels"] == ["Advertisement"]
    assert _report(german, "non-latin,ads")["summary"]["variant"] == "clean"
    with pytest.raises(InvalidValueError, match="unknown filter 'header'"):
        _report(german, "header")


def test_free_at_joins_decides_which_edits_a_hyphen_join_forgives():
    joined = join_box_lines_with_hyphenation("մը-\nտնել")
    assert compute_text_metrics(joined, "մտնել").char_edit_distance == 0
    no_free = cfg.config_from_dict({"text": {"free_at_joins": ""}})
    assert compute_text_metrics(joined, "մտնել", config=no_free).char_edit_distance == 1
    # another language's silent letter: "e" free at a join
    silent_e = cfg.config_from_dict({"text": {"free_at_joins": "e"}})
    assert compute_text_metrics(join_box_lines_with_hyphenation("cake-\nwalk"), "cakwalk").char_edit_distance == 1
    assert compute_text_metrics(join_box_lines_with_hyphenation("cake-\nwalk"), "cakwalk",
                                config=silent_e).char_edit_distance == 0


def test_reports_of_different_configs_are_not_merged():
    german = cfg.config_from_dict(GERMAN)
    page = _report(german)
    assert aggregate_reports([page], config=german)["summary"]["ocr_region_cer"] == 4 / 22
    with pytest.raises(InvalidValueError, match="scored under configuration"):
        aggregate_reports([page])
    with pytest.raises(InvalidValueError, match="scored under the default configuration"):
        aggregate_reports([_report(None)], config=german)
    with pytest.raises(InvalidValueError, match="unknown variant 'no_filter'"):
        aggregate_reports([], variant="no_filter", config=german)


# ------------------------------------------------------------------------------ the command line
@pytest.fixture
def page(tmp_path: Path) -> Path:
    (tmp_path / "ann").mkdir()
    (tmp_path / "csv").mkdir()
    (tmp_path / "ann" / "p.json").write_text(json.dumps(BOXES), encoding="utf-8")
    (tmp_path / "csv" / "p.csv").write_text(CSV, encoding="utf-8")
    (tmp_path / "german.yaml").write_text(yaml.safe_dump(GERMAN, allow_unicode=True, sort_keys=False), encoding="utf-8")
    (tmp_path / "default.json").write_text(json.dumps(cfg.DEFAULT_CONFIG.to_dict()), encoding="utf-8")
    return tmp_path


def _measure(page: Path, *extra: str) -> int:
    return measure_accuracy.main(["--annotations-json", str(page / "ann" / "p.json"),
                                  "--predictions-csv", str(page / "csv" / "p.csv"), *extra])


def test_cli_config_default_file_is_byte_identical_and_german_file_changes_numbers(page, capsys):
    assert _measure(page, "--output", str(page / "builtin.json")) == 0
    assert _measure(page, "--config", str(page / "default.json"), "--output", str(page / "spelled.json")) == 0
    assert (page / "builtin.json").read_bytes() == (page / "spelled.json").read_bytes()
    assert _measure(page, "--config", str(page / "german.yaml"), "--filter", "ads",
                    "--output", str(page / "german.json")) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"no_ads: cer={0:.4f} (1 pages) -> {page / 'german.json'}"
    # the variants command writes the config's variants, and overall merges them only under that config
    out = page / "res"
    assert variants_cmd.main(["--predictions-dir", str(page / "csv"), "--annotations-dir", str(page / "ann"),
                              "--output-dir", str(out), "--config", str(page / "german.yaml")]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["accuracy_report_all.json", "accuracy_report_clean.json",
                                                     "accuracy_report_no_ads.json"]
    summary = json.loads((out / "accuracy_report_all.json").read_text(encoding="utf-8"))["summary"]
    assert summary["ocr_region_cer"] == 4 / 22 and summary["watermark_words_removed"] == 4
    capsys.readouterr()
    merged = page / "merged.json"
    assert measure_overall_accuracy.main(["--reports", str(out / "accuracy_report_all.json"),
                                          "--output", str(merged), "--config", str(page / "german.yaml")]) == 0
    assert json.loads(merged.read_text(encoding="utf-8"))["summary"]["ocr_region_cer"] == 4 / 22
    assert measure_overall_accuracy.main(["--reports", str(out / "accuracy_report_all.json"),
                                          "--output", str(page / "m2.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "scored under configuration" in err and not (page / "m2.json").exists()


BAD = [
    ("unknown.yaml", "watermarks: {}\n", "unknown key 'watermarks'"),
    ("window.yaml", "watermark: {max_window: 0}\n", "watermark.max_window: must be at least 1, got 0"),
    ("type.json", '{"watermark": {"max_edit_distance": "2"}}', "watermark.max_edit_distance: must be an integer"),
    ("short.yaml", "watermark: {phrases: [ab]}\n", "watermark.phrases[0]: 'ab' is not longer than max_edit_distance 2"),
    ("dup.yaml", "text: {free_at_joins: a}\ntext: {free_at_joins: b}\n", "duplicate key 'text'"),
    ("dup.json", '{"text": {}, "text": {}}', "duplicate key 'text'"),
    ("syntax.yaml", "watermark: [\n", "invalid YAML"),
    ("syntax.json", '{"watermark": ', "invalid JSON"),
    ("both.yaml", "filters: {x: {labels: [A], scripts: [LATIN]}}\n", "filters.x: must have either 'labels' or 'scripts'"),
    ("share.yaml", "filters: {x: {scripts: [LATIN], share_above: 1.5}}\nvariants: {v: [x]}\n",
     "filters.x.share_above: must be a number in [0, 1)"),
    ("script.yaml", "filters: {x: {scripts: [latin], share_above: 0.5}}\n", "filters.x.scripts: must be a non-empty list"),
    ("comma.yaml", "filters: {'a,b': {labels: [A]}}\n", "filters.a,b: a filter name must not be empty"),
    ("novariant.yaml", "filters: {ads: {labels: [Ad]}}\n", "variants.non_armenian: unknown filter 'non-armenian'"),
    ("samevariants.yaml", "variants: {a: [photo], b: [photo]}\n", "variants.b: has the same filters as variant 'a'"),
    ("path.yaml", "variants: {'../x': []}\n", "variants.../x: a variant name may hold only"),
    ("pair.yaml", "text: {replacements: [[a, b, c]]}\n", "text.replacements[0]: must be a [from, to] pair"),
    ("emptyfrom.yaml", "text: {replacements: [['', b]]}\n", "text.replacements[0][0]: must not be empty"),
    ("sentinel.json", '{"text": {"replacements": [["\\ue000", "x"]]}}', "text.replacements[0][0]: holds U+E000"),
    ("surrogate.json", '{"text": {"free_at_joins": "\\ud800"}}', "text.free_at_joins: holds a lone surrogate"),
    ("top.yaml", "- watermark\n", "must be a mapping, got ['watermark'] (list)"),
    ("empty.yaml", "", "the file is empty"),
    ("binary.yaml", b"\xff\xfe", "not valid UTF-8"),
]


@pytest.mark.parametrize("name,content,message", BAD, ids=[b[0] for b in BAD])
def test_bad_configs_are_refused_naming_file_and_key(page, capsys, name, content, message):
    path = page / name
    (path.write_bytes if isinstance(content, bytes) else lambda c: path.write_text(c, encoding="utf-8"))(content)
    with pytest.raises(InvalidValueError) as info:
        cfg.load_config(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert _measure(page, "--config", str(path), "--output", str(page / "out.json")) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("ocr-pages-measure: error: --config: ")
    assert message in err and str(path) in err and not (page / "out.json").exists()


def test_missing_config_file_and_config_as_output_are_usage_errors(page, capsys):
    assert _measure(page, "--config", str(page / "nope.yaml")) == 2
    assert "nope.yaml" in capsys.readouterr().err
    before = (page / "german.yaml").read_bytes()
    assert _measure(page, "--config", str(page / "german.yaml"), "--output", str(page / "german.yaml")) == 2
    assert "error:" in capsys.readouterr().err and (page / "german.yaml").read_bytes() == before
    assert variants_cmd.main(["--predictions-dir", str(page / "csv"), "--annotations-dir", str(page / "ann"),
                              "--output-dir", str(page / "o"), "--config", str(page / "german.yaml"),
                              "--variant", "no_filter"]) == 2
    assert "unknown variant 'no_filter' (choose from all, no_ads, clean)" in capsys.readouterr().err
    assert not (page / "o").exists()


# ------------------------------------------------------------------------------ the docs
def test_the_documented_defaults_are_the_built_in_ones_and_the_examples_run():
    from doc_examples import blocks, run_python_blocks

    (_, documented), = blocks("ocr-pages.md", "yaml", section="The configuration file")
    assert yaml.safe_load(documented) == cfg.DEFAULT_CONFIG.to_dict()
    assert cfg.config_from_dict(yaml.safe_load(documented)) == cfg.DEFAULT_CONFIG
    assert run_python_blocks("ocr-pages.md") >= 8


def test_every_command_refuses_a_bad_config_with_status_2(page, capsys):
    from scorekit.ocr_pages import evaluate_from_hf

    bad = page / "bad.yaml"
    bad.write_text("watermark: {max_window: 0}\n", encoding="utf-8")
    folders = ["--predictions-dir", str(page / "csv"), "--output-dir", str(page / "o"), "--config", str(bad)]
    runs = {
        "ocr-pages-variants": lambda: variants_cmd.main([*folders, "--annotations-dir", str(page / "ann")]),
        "ocr-pages-evaluate-hf": lambda: evaluate_from_hf.main([*folders, "--dataset", str(page / "ann" / "p.json")]),
        "ocr-pages-overall": lambda: measure_overall_accuracy.main(["--reports", str(page / "ann" / "p.json"),
                                                                     "--output", str(page / "m.json"),
                                                                     "--config", str(bad)]),
    }
    for prog, run in runs.items():
        assert run() == 2, prog
        out, err = capsys.readouterr()
        assert out == "" and err == f"{prog}: error: --config: {bad}: watermark.max_window: must be at least 1, got 0\n"
    assert not (page / "o").exists() and not (page / "m.json").exists()
