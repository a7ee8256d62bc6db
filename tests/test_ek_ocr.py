"""``scorekit.ocr`` (the reference kit's ``ek.ocr``): bridge, profiles, table recovery, benchmark.

The expected values are the reference kit's documented examples and its further test vectors for
``ek.ocr`` (copied here as data); the CER values are checked against the hand count of edits.
"""

from __future__ import annotations

import doctest
import importlib
import json
import math
import subprocess
import sys
import types

import pytest
from hypothesis import given, settings, strategies as st

import scorekit as ek
from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError
from scorekit.metrics.tables import GritsMetric, Table, TedsMetric
from scorekit.ocr import (
    DEFAULT_PROFILE,
    ENGINE_PROFILES,
    add_gold_item,
    engine_yields_tables,
    evaluate_ocr,
    has_table_structure,
    ocracy_backend,
    profile,
    read_text,
    resolve_table_parser,
    table_from_ocr,
)
from scorekit.ocr.benchmark import JsonStore, data_root, store
from scorekit.stores import CorruptStoreFileError
from scorekit.registry import MissingExtraError, install_hint, register


class Result:
    """An OcrResult-shaped object: only the attributes given exist."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)


def echo_engine(image):
    """Reads the image reference back as its text (the reference suite's fake engine)."""
    return Result(text=image, mean_confidence=0.8, backend="fake")


def cells(table):
    return [[c.text for c in row] for row in table.rows]


# -- the package and its doc examples ---------------------------------------------------------------

@pytest.mark.parametrize("name", ["scorekit.ocr", "scorekit.ocr.profiles", "scorekit.ocr.tables",
                                  "scorekit.ocr.benchmark"])
def test_documented_examples(backend, name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_reachable_as_attribute_of_scorekit():
    assert ek.ocr is importlib.import_module("scorekit.ocr")
    assert "ocr" in dir(ek)
    for name in ("ocracy_backend", "read_text", "evaluate_ocr", "add_gold_item", "profile", "ENGINE_PROFILES",
                 "table_from_ocr", "has_table_structure", "resolve_table_parser", "engine_yields_tables"):
        assert callable(getattr(ek.ocr, name)) or name == "ENGINE_PROFILES"
    assert ek.ocr.benchmark.evaluate_ocr is evaluate_ocr
    assert ek.ocr.bridge.ocracy_backend is ocracy_backend
    assert ek.ocr.profiles.profile is profile
    assert ek.ocr.tables.table_from_ocr is table_from_ocr


def _modules_after(code):
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_scorekit_does_not_load_ocr():
    loaded = _modules_after("import scorekit")
    assert "scorekit.ocr" not in loaded and "numpy" not in loaded


def test_tables_heuristics_import_no_engine():
    code = ("import scorekit.ocr as o\n"
            "class R: raw = {'tables': [[['a', 'b']]]}\n"
            "assert o.table_from_ocr(R()) is not None\n"
            "class M: markdown = '<table><tr><td>m</td></tr></table>'\n"
            "assert o.has_table_structure(M())")
    loaded = _modules_after(code)
    assert not loaded & {"ocracy", "pytesseract", "easyocr", "paddleocr", "boto3"}


# -- benchmark (evaluate_ocr, add_gold_item) ---------------------------------------------------------

def test_doc_corpus_values(tmp_path):
    gold = {"d1": {"image": "ignored", "reference_text": "cat", "slice": "easy"},
            "d2": {"image": "ignored", "reference_text": "dog", "slice": "easy"}}
    report = evaluate_ocr(lambda image: type("R", (), {"text": "cat"})(), gold, metric="cer", rootdir=tmp_path)
    assert report.n == 2 and report.metric == "cer"
    assert report.aggregate == pytest.approx(3 / 6)  # 0 + 3 substitutions over 6 reference characters
    assert report.per_slice == {"easy": pytest.approx(0.5)}
    assert report.detail["per_item"]["d1"]["score"] == 0.0
    assert report.detail["per_item"]["d2"]["score"] == pytest.approx(1.0)
    assert list(tmp_path.iterdir()) == []  # nothing persisted without persist=True


def test_echo_engine_persisted(tmp_path):
    gold = {"d1": {"image": "cat", "reference_text": "cat", "slice": "easy"},
            "d2": {"image": "cot", "reference_text": "cat", "slice": "hard"}}
    report = evaluate_ocr(echo_engine, gold, persist=True, run_id="r1", rootdir=tmp_path)
    assert report.aggregate == pytest.approx(1 / 6)
    items = report.detail["per_item"]
    assert items["d1"] == {"prediction": "cat", "reference": "cat", "slice": "easy", "mean_confidence": 0.8,
                           "backend": "fake", "score": 0.0}
    assert items["d2"]["score"] == pytest.approx(1 / 3)
    assert report.per_slice == {"easy": 0.0, "hard": pytest.approx(1 / 3)}
    results, runs = store("results", rootdir=tmp_path), store("runs", rootdir=tmp_path)
    assert runs["r1"] == {"metric": "cer", "aggregate": pytest.approx(1 / 6), "n": 2,
                          "per_slice": {"easy": 0.0, "hard": pytest.approx(1 / 3)}}
    assert results["r1"]["per_item"]["d2"]["prediction"] == "cot"
    assert "gold" not in {p.name for p in tmp_path.iterdir()}  # evaluate_ocr never writes gold

    evaluate_ocr(echo_engine, {"d1": gold["d1"]}, persist=True, run_id="r2", rootdir=tmp_path)
    assert runs["r2"]["n"] == 1
    assert results["r2"]["per_item"]["d1"]["reference"] == "cat"
    assert sorted(runs) == ["r1", "r2"]


def test_default_run_id_is_utc_stamp(tmp_path):
    evaluate_ocr(echo_engine, {"a": {"image": "x", "reference_text": "x"}}, persist=True, rootdir=tmp_path)
    (run_id,) = list(store("runs", rootdir=tmp_path))
    assert run_id.startswith("ocr-") and len(run_id) == len("ocr-20260101T000000") and run_id[12] == "T"


def test_nan_aggregate_persists_as_null(tmp_path):
    gold = {"e": {"image": "", "reference_text": "", "slice": "blank"}}
    report = evaluate_ocr(lambda image: image, gold, persist=True, run_id="blank", rootdir=tmp_path)
    assert math.isnan(report.aggregate) and math.isnan(report.per_slice["blank"])
    assert store("runs", rootdir=tmp_path)["blank"] == {"metric": "cer", "aggregate": None, "n": 1,
                                                        "per_slice": {"blank": None}}
    assert store("results", rootdir=tmp_path)["blank"]["per_item"]["e"]["score"] == 0.0


def test_gold_store_round_trip(tmp_path):
    add_gold_item("g1", "dog.png", "dog", slice="easy", rootdir=tmp_path)
    add_gold_item("g2", "dig", "dog", slice="hard", rootdir=tmp_path, scan="bad")
    gold = store("gold", rootdir=tmp_path)
    assert gold["g2"] == {"image": "dig", "reference_text": "dog", "scan": "bad", "slice": "hard"}
    add_gold_item("g3", "x", "y", rootdir=tmp_path)
    assert "slice" not in gold["g3"]
    del gold["g3"]
    report = evaluate_ocr(lambda image: Result(text="dog" if image == "dog.png" else image), gold)
    assert report.aggregate == pytest.approx(1 / 6)
    assert report.per_slice == {"easy": 0.0, "hard": pytest.approx(1 / 3)}


def test_data_root_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("EK_DATA_HOME", str(tmp_path / "home"))
    assert data_root() == tmp_path / "home"
    add_gold_item("k", "img", "text")
    assert json.loads((tmp_path / "home" / "gold" / "k.json").read_text()) == {"image": "img",
                                                                               "reference_text": "text"}
    assert data_root(tmp_path / "x") == tmp_path / "x"


def test_null_text_scores_as_empty():
    report = evaluate_ocr(lambda image: Result(text=None), {"k": {"image": 1, "reference_text": "cat"}})
    assert report.detail["per_item"]["k"]["prediction"] == ""
    assert report.aggregate == 1.0
    assert report.detail["per_item"]["k"]["mean_confidence"] is None
    assert report.detail["per_item"]["k"]["backend"] is None


def test_str_result_wer_slices_pairs_and_normalize():
    pairs = [("a", {"image": "hello wrld", "reference_text": "hello world", "slice": None}),
             ("b", {"image": "Hello   WORLD", "reference_text": "hello world", "slice": "s"})]
    wer = evaluate_ocr(lambda image: image, pairs, metric="wer")
    assert wer.aggregate == pytest.approx((1 + 2) / 4)
    assert wer.per_slice == {"s": 1.0}  # items without a slice are not grouped
    clean = evaluate_ocr(lambda image: image, pairs[1:], normalize=["lower", "collapse_whitespace"])
    assert clean.aggregate == 0.0


def test_custom_field_names():
    gold = {"k": {"img": "abcd", "ref": "abce", "tier": "t1"}}
    report = evaluate_ocr(lambda image: image, gold, image_key="img", reference_key="ref", slice_key="tier")
    assert report.per_slice == {"t1": pytest.approx(0.25)}


def test_empty_gold():
    report = evaluate_ocr(echo_engine, {})
    assert (report.metric, report.aggregate, report.n, report.detail) == ("cer", None, 0, {"per_item": {}})
    assert math.isnan(float(report))


def test_engine_exception_propagates():
    def broken(image):
        raise RuntimeError("engine down")

    with pytest.raises(RuntimeError, match="engine down"):
        evaluate_ocr(broken, {"k": {"image": 1, "reference_text": "x"}})


def test_engine_id_without_ocracy(monkeypatch):
    monkeypatch.setitem(sys.modules, "ocracy", None)  # import ocracy fails even where it is installed
    with pytest.raises(MissingExtraError) as info:
        evaluate_ocr("tesseract", {})
    assert str(info.value) == ("ocracy_backend needs optional dependencies ['ocracy'] -- install them with:  "
                               + install_hint("ocr"))


@pytest.mark.parametrize("confidence", [float("nan"), float("inf"), -0.1, 1.5])
def test_bad_confidence(confidence):
    engine = lambda image: Result(text="x", mean_confidence=confidence)
    with pytest.raises(InvalidValueError, match=r"per_item\['k'\].mean_confidence"):
        evaluate_ocr(engine, {"k": {"image": 1, "reference_text": "x"}})


def test_confidence_of_wrong_type():
    engine = lambda image: Result(text="x", mean_confidence="high")
    with pytest.raises(InvalidTypeError, match="mean_confidence"):
        evaluate_ocr(engine, {"k": {"image": 1, "reference_text": "x"}})


@pytest.mark.parametrize("engine, gold, error, fragment", [
    (42, {}, InvalidTypeError, "engine"),
    (echo_engine, 7, InvalidTypeError, "gold"),
    (echo_engine, "abc", InvalidTypeError, "gold"),
    (echo_engine, [("k", {"image": "a", "reference_text": "a"}), "oops"], InvalidTypeError, "item 1: gold"),
    (echo_engine, {"k": ["image", "ref"]}, InvalidTypeError, "gold['k']"),
    (echo_engine, {"k": {"image": "a", "reference_text": 5}}, InvalidTypeError, "gold['k']['reference_text']"),
    (echo_engine, [("k", {"image": "a", "reference_text": "a"})] * 2, InvalidValueError, "gold key 'k'"),
])
def test_bad_benchmark_input(engine, gold, error, fragment):
    with pytest.raises(error) as info:
        evaluate_ocr(engine, gold)
    assert fragment in str(info.value)
    assert isinstance(info.value, ScorekitError)


def test_missing_record_field_is_key_error():
    with pytest.raises(KeyError, match="reference_text"):
        evaluate_ocr(echo_engine, {"k": {"image": "a"}})
    with pytest.raises(KeyError, match="image"):
        evaluate_ocr(echo_engine, {"k": {"reference_text": "a"}})


@pytest.mark.parametrize("key", ["../escape", "", ".hidden", 3, "/abs"])
def test_store_keys_cannot_leave_the_directory(tmp_path, key):
    with pytest.raises(ScorekitError, match="store key"):
        add_gold_item(key, "img", "text", rootdir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_ocr_stores_are_the_package_stores(tmp_path):
    # one store implementation: a key with a folder stays inside the root, a symbolic link out of
    # it is refused, and NaN in a file is a corrupt file, not a number
    add_gold_item("a/b", "img", "text", rootdir=tmp_path)
    assert (tmp_path / "gold" / "a" / "b.json").is_file()
    (tmp_path / "outside").mkdir()
    (tmp_path / "gold" / "link").symlink_to(tmp_path / "outside")
    with pytest.raises(ScorekitError, match="store key"):
        add_gold_item("link/x", "img", "text", rootdir=tmp_path)
    assert list((tmp_path / "outside").iterdir()) == []
    (tmp_path / "gold" / "nan.json").write_text('{"image": "i", "reference_text": NaN}')
    with pytest.raises(CorruptStoreFileError, match="NaN is not valid JSON"):
        store("gold", rootdir=tmp_path)["nan"]


def test_store_errors(tmp_path):
    with pytest.raises(InvalidValueError, match="kind"):
        store("nope", rootdir=tmp_path)
    with pytest.raises(InvalidTypeError, match="rootdir"):
        store("gold", rootdir=3)
    with pytest.raises(InvalidTypeError, match="reference_text"):
        add_gold_item("k", "img", None, rootdir=tmp_path)
    with pytest.raises(InvalidTypeError, match="not JSON-serialisable"):
        add_gold_item("k", b"\x89PNG", "text", rootdir=tmp_path)  # a reference, not bytes
    with pytest.raises(InvalidTypeError, match="store value for 'r' is not JSON-serialisable"):
        evaluate_ocr(lambda image: Result(text="x", backend=object()), {"k": {"image": 1, "reference_text": "x"}},
                     persist=True, run_id="r", rootdir=tmp_path)
    s = JsonStore(tmp_path / "gold")
    assert len(s) == 0 and list(s) == []
    with pytest.raises(KeyError):
        s["absent"]
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "bad.json").write_text("{not json")
    with pytest.raises(CorruptStoreFileError, match="bad.json"):
        s["bad"]


# -- bridge -----------------------------------------------------------------------------------------

@pytest.fixture
def fake_ocracy(monkeypatch):
    """A duck-typed stand-in for the ocracy module, recording each call."""
    calls = []
    module = types.ModuleType("ocracy")

    def ocr(image, *, backend=None, **kwargs):
        calls.append(("ocr", image, backend, kwargs))
        return Result(text=f"read:{image}", mean_confidence=0.5, backend=backend or "first", blocks=[])

    def read_text_(image, *, backend=None, **kwargs):
        calls.append(("read_text", image, backend, kwargs))
        return f"text:{image}"

    module.ocr, module.read_text = ocr, read_text_
    monkeypatch.setitem(sys.modules, "ocracy", module)
    return calls


def test_ocracy_backend_forwards_kwargs(fake_ocracy):
    run = ocracy_backend("tesseract", languages=["en"], psm=6)
    assert run.__name__ == "ocracy[tesseract]"
    result = run("page.png", psm=3)
    assert result.text == "read:page.png"
    assert fake_ocracy == [("ocr", "page.png", "tesseract", {"languages": ["en"], "psm": 3})]
    assert ocracy_backend().__name__ == "ocracy[default]"


def test_read_text_forwards(fake_ocracy):
    assert read_text("img", backend="easyocr", detail=1) == "text:img"
    assert fake_ocracy == [("read_text", "img", "easyocr", {"detail": 1})]


def test_engine_id_through_fake_ocracy(fake_ocracy):
    gold = {"a": {"image": "x", "reference_text": "read:x", "slice": "s"}}
    report = evaluate_ocr("google_vision", gold)
    assert report.aggregate == 0.0
    assert report.detail["per_item"]["a"]["backend"] == "google_vision"
    assert report.detail["per_item"]["a"]["mean_confidence"] == 0.5


def test_bridge_without_ocracy(monkeypatch):
    monkeypatch.setitem(sys.modules, "ocracy", None)
    for call in (lambda: ocracy_backend("tesseract"), lambda: read_text("img")):
        with pytest.raises(MissingExtraError) as info:
            call()
        assert install_hint("ocr") in str(info.value) and "['ocracy']" in str(info.value)
        assert isinstance(info.value, ImportError)


def test_bridge_bad_backend(fake_ocracy):
    with pytest.raises(InvalidTypeError, match="backend"):
        ocracy_backend(3)
    with pytest.raises(InvalidTypeError, match="backend"):
        read_text("img", backend=["tesseract"])
    assert fake_ocracy == []


# -- profiles ---------------------------------------------------------------------------------------

def test_profile_vectors():
    assert profile("mathpix")["calibrated"] is True
    assert profile("aws-textract")["tables"] is True
    assert profile("unknown-engine") == DEFAULT_PROFILE
    assert profile("Google-Vision") is ENGINE_PROFILES["google-vision"]
    assert profile("GOOGLE_VISION") is ENGINE_PROFILES["google-vision"]
    assert profile("azure_document_intelligence")["confidence_grain"] == "word"


def test_profile_table():
    expected = {  # id: (grain, real provenance, calibrated, tables)
        "tesseract": ("symbol", True, False, False), "google-vision": ("symbol", True, False, False),
        "aws-textract": ("word", True, False, True), "azure-document-intelligence": ("word", True, False, True),
        "mathpix": ("word", True, True, False), "paddleocr": ("line", True, False, True),
        "easyocr": ("line", True, False, False), "rapidocr": ("line", True, False, False),
        "ocrmac": ("line", True, False, False), "doctr": ("word", True, False, False),
        "ocr-space": ("none", False, False, False), "gpt-4o-vision": ("none", False, False, False),
        "claude-vision": ("none", False, False, False), "mistral-ocr": ("none", False, False, False),
        "pix2tex-latex-ocr": ("none", False, False, False), "trocr": ("none", False, False, False),
        "trocr-handwritten": ("none", False, False, False),
    }
    assert {k: (p["confidence_grain"], p["has_real_provenance"], p["calibrated"], p["tables"])
            for k, p in ENGINE_PROFILES.items()} == expected
    assert all(set(p) == set(DEFAULT_PROFILE) for p in ENGINE_PROFILES.values())


@pytest.mark.parametrize("engine, expected", [("aws-textract", True), ("paddleocr", True),
                                              ("azure_document_intelligence", True), ("google-vision", False),
                                              ("unknown", False)])
def test_engine_yields_tables(engine, expected):
    assert engine_yields_tables(engine) is expected


def test_profile_wrong_type():
    with pytest.raises(InvalidTypeError, match="engine"):
        profile(None)


# -- tables -----------------------------------------------------------------------------------------

HTML = "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>"


@pytest.mark.parametrize("result, expected", [
    (Result(raw=[["a", "b"], ["c", "d"]]), [["a", "b"], ["c", "d"]]),
    (Result(raw=HTML), [["a", "b"], ["c", "d"]]),
    (Result(raw={"cells": [["1", "2"]]}), [["1", "2"]]),
    (Result(raw={"html": "<table><tr><td>z</td></tr></table>"}), [["z"]]),
    (Result(markdown="see below\n<table><tr><td>m</td></tr></table>\n"), [["m"]]),
    (Result(meta={"markdown": "<table><tr><td>q</td></tr></table>"}), [["q"]]),
    (Result(raw={"tables": [["a", "b"]]}), [["a", "b"]]),
    (Result(raw={"tables": [[], [["x"]]]}), [[], ["['x']"]]),  # not a list of tables: one grid
    (Result(raw={"tables": [[["e"]], HTML]}), [["e"]]),
    (Result(raw={"tables": [[[]], HTML]}), [["a", "b"], ["c", "d"]]),  # an empty table is skipped
    (Result(raw={"table": "no table here", "grid": [["g"]]}), [["g"]]),
    (Result(raw={"text": "x"}, meta={"tables": [["t"]]}), [["t"]]),
    (Result(raw={"text": "x"}, meta={"html": "<TABLE><tr><td>u</td></tr></TABLE>"}), [["u"]]),
])
def test_table_heuristics(result, expected):
    assert cells(table_from_ocr(result)) == expected
    assert has_table_structure(result)


@pytest.mark.parametrize("result", [
    Result(raw={"text": "just prose"}), Result(raw="hello world, plain text"), Result(raw=[]),
    Result(raw="<table></table>"), Result(), Result(raw=None, markdown="| a | b |\n|---|---|\n| 1 | 2 |"),
    Result(raw=[[]], meta={"tables": [["hidden"]]}),  # an empty direct table blocks the fallback
    Result(raw=types.MappingProxyType({"tables": [["a"]]})),  # only plain dicts are searched
    Result(raw=b"<table><tr><td>a</td></tr></table>"), Result(raw=42),
])
def test_no_table(result):
    assert table_from_ocr(result) is None
    assert has_table_structure(result) is False


def test_prebuilt_table_is_returned_as_is():
    t = Table.from_grid([["a"]])
    assert table_from_ocr(Result(raw=t)) is t


def test_callable_and_registered_parsers():
    seen = []
    raw = {"payload": [["p", "q"]]}

    def parser(r):
        seen.append(r)
        return r["payload"]

    assert cells(table_from_ocr(Result(raw=raw), parser=parser)) == [["p", "q"]]
    assert seen[0] is raw
    whole = Result(other=1)
    table_from_ocr(whole, parser=lambda r: seen.append(r))
    assert seen[-1] is whole  # no .raw: the result itself
    assert table_from_ocr(Result(raw=raw), parser=lambda r: None) is None
    assert cells(table_from_ocr(Result(raw=1), parser=lambda r: HTML)) == [["a", "b"], ["c", "d"]]
    assert table_from_ocr(Result(raw=1), parser=lambda r: "no table") is None
    assert table_from_ocr(Result(raw=1), parser=lambda r: [[]]) is None

    fn = register("table_parsers", "test-ek-ocr-engine", lambda r: r["payload"])
    assert resolve_table_parser("test-ek-ocr-engine") is fn
    assert resolve_table_parser(parser) is parser and resolve_table_parser(None) is None
    assert cells(table_from_ocr(Result(raw=raw), parser="test-ek-ocr-engine")) == [["p", "q"]]
    with pytest.raises(KeyError, match="table_parsers"):
        table_from_ocr(Result(raw=raw), parser="no-such-parser")


def test_bad_parser_and_result():
    with pytest.raises(InvalidTypeError, match="parser"):
        table_from_ocr(Result(raw=[["a"]]), parser=3)
    with pytest.raises(InvalidTypeError, match="parser result"):
        table_from_ocr(Result(raw=1), parser=lambda r: 5)


def test_recovered_table_scores():
    pred = table_from_ocr(Result(raw={"tables": [[["a", "b"], ["c", "d"]]]}))
    gold = Table.from_grid([["a", "b"], ["c", "x"]])
    teds = TedsMetric()(pred, gold).value
    grits = GritsMetric()(pred, gold).value
    assert 0 < teds < 1 and 0 < grits <= 1
    assert TedsMetric(structure_only=True)(pred, gold).value == 1.0
    assert TedsMetric()(pred, Table.from_grid([["a", "b"], ["c", "d"]])).value == 1.0


# -- properties -------------------------------------------------------------------------------------

_texts = st.text(alphabet="abc ւ", max_size=12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_texts, _texts.filter(bool), st.sampled_from([None, "x", "y"])), max_size=6))
def test_benchmark_scores_match_evaluate(cases):
    gold = {f"k{i}": {"image": pred, "reference_text": ref, "slice": label}
            for i, (pred, ref, label) in enumerate(cases)}
    report = evaluate_ocr(lambda image: Result(text=image), gold)
    direct = ek.evaluate(cases, metric="cer")
    assert report.n == direct.n and report.aggregate == direct.aggregate and report.per_slice == direct.per_slice
    assert [item["score"] for item in report.detail["per_item"].values()] == [s.value for s in direct.scores]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.text(max_size=4), max_size=4), min_size=1, max_size=4))
def test_grid_round_trip(grid):
    table = table_from_ocr(Result(raw={"grid": grid}))
    if any(grid):
        assert cells(table) == grid
    else:
        assert table is None


def test_table_helpers_are_top_level_names_loaded_on_use() -> None:
    """ek re-exports the OCR table helpers at the top level; scorekit loads them on first access."""
    import scorekit.ocr

    assert ek.table_from_ocr is scorekit.ocr.table_from_ocr
    assert ek.has_table_structure is scorekit.ocr.has_table_structure
    assert ek.resolve_table_parser is scorekit.ocr.resolve_table_parser
    assert ek.engine_yields_tables is scorekit.ocr.engine_yields_tables
