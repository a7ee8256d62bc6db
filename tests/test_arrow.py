"""The Arrow path (scorekit.arrow, _core.utf8_pair_counts and its Numba twin): equal to the
Python-list ``evaluate`` on random corpora over both backends, every input kind and Arrow layout,
the compiled normalisers equal to ``scorekit.canonicalize`` code point by code point, per-item
tables, and bad input named by column and row."""

from __future__ import annotations

import doctest
import random
import unicodedata

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scorekit
import scorekit.arrow
from _textgen import random_pairs
from doc_examples import run_python_blocks
from scorekit import _core, canonicalize
from scorekit._kernels import utf8
from scorekit._kernels.utf8_numba import decode_column
from scorekit.arrow import ITEM_COLUMNS, ArrowReport, CountTotals, evaluate_arrow
from scorekit.errors import InvalidTypeError, InvalidValueError

#: Normalisers as ``evaluate`` takes them; the last is a Python callable (the Python path).
NORMALIZERS = [None, "nfc", "nfkc", "lower", "strip", "collapse_whitespace", "strip_punctuation",
               ["nfkc", "lower", "collapse_whitespace", "strip_punctuation"], canonicalize.default_canonicalizer(),
               str.upper]
#: Texts where Python's rules have special cases: final sigma, sharp s, dotted I, ligatures, Hangul
#: jamo, stacked combining marks, every kind of whitespace, compatibility forms, a code point that
#: Python 3.11 (Unicode 14) leaves unassigned but newer Unicode assigns (U+1E030, U+0CF3).
TRICKY = "ΣσςΌΣ ßẞİıﬁﬀ \u1100\u1161\u11a8 e\u0301\u0323 \u212b\u2126 \u00a0\u2003\u3000\x1c\x85\u2028 ｆｕｌｌ ² ㎏ ǅ\u1e030\u0cf3"  # noqa: E501


def _corpus(seed: int, count: int) -> tuple[list[str], list[str], list]:
    rng = random.Random(seed)
    pairs = random_pairs(seed, count)
    preds, golds = [p for p, _ in pairs], [g for _, g in pairs]
    for k in range(0, count, 7):  # sprinkle the special cases in
        preds[k] = "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 20)))
        golds[k + 3 if k + 3 < count else k] = "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 20)))
    labels = [rng.choice(["latin", "cjk", None, "mixed"]) for _ in range(count)]
    return preds, golds, labels


def _same(arrow: ArrowReport, python: scorekit.Report) -> None:
    assert arrow.n == python.n
    assert arrow.detail == python.detail
    assert arrow.aggregate == python.aggregate or (np.isnan(arrow.aggregate) and np.isnan(python.aggregate))
    assert list(arrow.per_slice.items()) == list(python.per_slice.items())


@pytest.mark.parametrize("metric", ["cer", "wer"])
def test_equals_the_python_path_on_random_corpora(backend, metric):
    preds, golds, labels = _corpus(11, 1500)
    table = pa.table({"p": preds, "g": golds, "s": labels})
    for normalize in NORMALIZERS:
        python = scorekit.evaluate(list(zip(preds, golds, labels)), metric=metric, normalize=normalize)
        arrow = evaluate_arrow(table.to_batches(max_chunksize=400), pred="p", gold="g", slice="s", metric=metric,
                               normalize=normalize)
        _same(arrow, python)
        assert arrow.slice_counts["latin"]["edits"] == sum(
            s.detail["edits"] for s, label in zip(python.scores, labels) if label == "latin")


def test_backends_agree_on_counts_and_statuses():
    preds, golds, _ = _corpus(5, 800)
    col = scorekit.arrow._buffers
    pred, gold = pa.array(preds), pa.array(golds, pa.large_string())
    for mode in ("cer", "wer"):
        with scorekit._kernels.use_backend("rust"):
            rust = utf8.pair_counts(col(pred), col(gold), mode)
        with scorekit._kernels.use_backend("numba"):
            numba = utf8.pair_counts(col(pred), col(gold), mode)
        np.testing.assert_array_equal(rust, numba)
        assert not rust[:, 4].any()


def _normalized_by_core(texts: list[str], steps: list[str]) -> tuple[list[str], np.ndarray]:
    data, offsets, status = _core.utf8_normalize(scorekit.arrow._buffers(pa.array(texts)), steps, utf8.unicode_tables())
    raw = data.tobytes()
    return [raw[offsets[k]:offsets[k + 1]].decode() for k in range(len(texts))], status


@pytest.mark.parametrize("step", sorted(utf8.COMPILED_STEPS))
def test_compiled_normalisers_equal_python_on_every_code_point(step):
    """Each code point alone, and after 'A' and before a combining mark, through each step in Rust
    and in Python; a code point Python leaves unassigned is handed back under NFC/NFKC."""
    python = canonicalize._ASCII_RULES[step]
    category = unicodedata.category
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    unassigned = [ch for ch in chars if category(ch) == "Cn"]
    chars = [ch for ch in chars if category(ch) != "Cn"] + unassigned[::101]
    texts = chars + ["A" + ch + "\u0301" for ch in chars[::5]]
    got, status = _normalized_by_core(texts, [step])
    unassigned = np.array([category(t[-1] if len(t) == 1 else t[1]) == "Cn" for t in texts])
    if step in ("nfc", "nfkc"):
        assert (status == 1).tolist() == unassigned.tolist()
    else:
        assert not status.any()
    mismatches = [(t, g, python(t)) for t, g, s in zip(texts, got, status) if s == 0 and g != python(t)]
    assert mismatches == []


def test_compiled_normalisers_on_tricky_text():
    texts = [TRICKY, TRICKY.upper(), TRICKY[::-1], " \t" + TRICKY + "\n "]
    for steps in (["nfc"], ["lower"], ["nfkc", "lower", "collapse_whitespace"], ["strip", "strip_punctuation"],
                  ["lower", "nfkc"]):
        got, status = _normalized_by_core(texts, steps)
        expected = [canonicalize.Canonicalizer(steps)(t) for t in texts]
        handed_back = [t for t, s in zip(texts, status) if s == 1]
        assert [g for g, s in zip(got, status) if s == 0] == [e for e, s in zip(expected, status) if s == 0]
        assert handed_back == ([] if not {"nfc", "nfkc"} & set(steps) else texts)  # U+1E030 is unassigned in 3.11
    # the Arrow path still equals the Python one: handed-back pairs go through the Python canonicaliser
    table = pa.table({"pred": texts, "gold": texts[::-1]})
    _same(evaluate_arrow(table, normalize="nfkc"), scorekit.evaluate(list(zip(texts, texts[::-1])), normalize="nfkc"))


_STEP_LISTS = st.lists(st.sampled_from(sorted(utf8.COMPILED_STEPS)), max_size=4)


@settings(max_examples=150)
@given(st.lists(st.tuples(st.text(max_size=30), st.text(max_size=30)), min_size=1, max_size=20),
       _STEP_LISTS, st.sampled_from(["cer", "wer"]))
def test_arrow_equals_python_on_any_text(pairs, steps, metric):
    table = pa.table({"pred": [p for p, _ in pairs], "gold": [g for _, g in pairs]})
    normalize = steps or None
    _same(evaluate_arrow(table, metric=metric, normalize=normalize),
          scorekit.evaluate(pairs, metric=metric, normalize=normalize))


def _layouts(preds: list, golds: list) -> dict[str, pa.Table]:
    """The same column pair in every Arrow layout the path reads."""
    def table(pred, gold):
        return pa.table({"pred": pred, "gold": gold})

    encoded = [(None if p is None else p.encode()) for p in preds], [(None if g is None else g.encode()) for g in golds]
    padded = pa.array(["skip", *preds], pa.large_string()).slice(1)  # offsets that do not start at 0
    layouts = {
        "string": table(pa.array(preds), pa.array(golds)),
        "large_string": table(pa.array(preds, pa.large_string()), pa.array(golds, pa.large_string())),
        "binary": table(pa.array(encoded[0], pa.binary()), pa.array(encoded[1], pa.large_binary())),
        "dictionary": table(pa.array(preds).dictionary_encode(), pa.array(golds).dictionary_encode()),
        "sliced": table(padded, pa.array(golds)),
        "chunked": pa.concat_tables([table(pa.array(preds[:5]), pa.array(golds[:5])),
                                     table(pa.array(preds[5:]), pa.array(golds[5:]))]),
    }
    if hasattr(pa, "string_view"):
        layouts["string_view"] = table(pa.array(preds, pa.string_view()), pa.array(golds, pa.string_view()))
    return layouts


def test_every_arrow_layout(backend):
    preds = ["ct", None, "dög", "", "x y", "ΣΑΣ", None, "ab", "", "z"]
    golds = ["cat", "dog", None, "", "x  y", "σας", "é", "ab", "zz", None]
    expected = scorekit.evaluate(list(zip(preds, golds)), metric="cer")
    for name, table in _layouts(preds, golds).items():
        report = evaluate_arrow(table, nulls="count")
        _same(report, expected)
        assert report.nulls == {"pred": 2, "gold": 2}, name


def test_every_input_kind(tmp_path):
    preds, golds, labels = _corpus(3, 300)
    table = pa.table({"pred": preds, "gold": golds, "slice": labels})
    path = tmp_path / "pairs.parquet"
    pq.write_table(table, path, row_group_size=64)
    expected = scorekit.evaluate(list(zip(preds, golds, labels)))
    kinds = {
        "table": table,
        "record batch": table.combine_chunks().to_batches()[0],
        "reader": pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=50)),
        "dataset": ds.dataset(path),
        "path": str(path),
        "parquet file": pq.ParquetFile(path),
        "batches": iter(table.to_batches(max_chunksize=77)),
    }
    for _name, data in kinds.items():
        _same(evaluate_arrow(data, slice="slice"), expected)
    # evaluate() dispatches Arrow data (columns pred, gold and slice) to the Arrow path
    _same(scorekit.evaluate(table), expected)
    _same(scorekit.evaluate(ds.dataset(path), metric="wer"), scorekit.evaluate(list(zip(preds, golds, labels)), metric="wer"))
    seen = []
    evaluate_arrow(path, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(k, 5) for k in range(1, 6)]


def test_per_item_table_and_lazy_scores():
    preds, golds, labels = _corpus(8, 500)
    table = pa.table({"pred": preds, "gold": golds, "lang": labels})
    report = evaluate_arrow(table.to_batches(max_chunksize=128), slice="lang", per_item=True)
    python = scorekit.evaluate(list(zip(preds, golds)))
    items = report.items
    assert items.column_names == [*ITEM_COLUMNS, "slice"]
    assert items.column("row").to_pylist() == list(range(500))
    assert items.column("slice").to_pylist() == labels
    assert items.column("edits").to_pylist() == [s.detail["edits"] for s in python.scores]
    assert items.column("gold_len").to_pylist() == [s.detail["ref_len"] for s in python.scores]
    assert items.column("pred_len").to_pylist() == [len(p) for p in preds]
    hits = [s.detail.get("hits", 0) for s in python.scores]
    assert items.column("hits").to_pylist() == hits
    assert list(report.scores) == list(python.scores)
    assert report.scores[-1] == python.scores[-1]
    assert evaluate_arrow(table.slice(0, 0), per_item=True).items.num_rows == 0


def test_totals_merge_exactly():
    counts = np.array([[3, 1, 0, 0], [0, 0, 0, 2], [4, 0, 1, 1]])
    whole = CountTotals()
    whole.add(counts, np.array([0, 1, 0]), ["a", None])
    first, second = CountTotals(), CountTotals()
    first.add(counts[:1], np.array([0]), ["a"])
    second.add(counts[1:], np.array([0, 1]), [None, "a"])
    first.merge(second)
    assert (first.n, first.counts) == (whole.n, whole.counts) == (3, [7, 1, 1, 3])
    assert first.slices == whole.slices == {"a": [2, 7, 1, 1, 1]}
    report = first.report("cer")
    assert report.per_slice == {"a": 3 / 7} and report.aggregate == 5 / 7
    assert CountTotals().report("wer").n == 0


def test_empty_inputs():
    empty = pa.table({"pred": pa.array([], pa.string()), "gold": pa.array([], pa.string())})
    report = evaluate_arrow(empty)
    assert (report.n, report.aggregate, report.detail) == (0, None, {})
    all_empty = pa.table({"pred": ["", "x"], "gold": ["", ""]})
    assert np.isnan(evaluate_arrow(all_empty).aggregate)


# ----------------------------------------------------------------------------------- bad input
def test_missing_and_non_text_columns():
    table = pa.table({"pred": ["a"], "gold": ["b"], "score": [1.5], "tags": [["x"]]})
    with pytest.raises(InvalidValueError, match=r"gold column 'truth' not found \(columns: 'pred', 'gold'"):
        evaluate_arrow(table, gold="truth")
    with pytest.raises(InvalidTypeError, match=r"pred column 'score' has type double; expected text"):
        evaluate_arrow(table, pred="score")
    with pytest.raises(InvalidValueError, match="slice column 'lang' not found"):
        evaluate_arrow(table, slice="lang")
    with pytest.raises(InvalidTypeError, match="column 'tags' has type list<item: string>, which cannot label slices"):
        evaluate_arrow(table, slice="tags")
    with pytest.raises(InvalidTypeError, match="pred must be a column name"):
        evaluate_arrow(table, pred=0)
    with pytest.raises(InvalidValueError, match="metric must be 'cer' or 'wer'"):
        evaluate_arrow(table, metric="fields")
    with pytest.raises(InvalidValueError, match="nulls must be 'error' or 'count'"):
        evaluate_arrow(table, nulls="drop")
    with pytest.raises(InvalidTypeError, match="must hold pyarrow record batches, got str at position 0"):
        evaluate_arrow(["not a batch"])
    with pytest.raises(InvalidTypeError, match="data must be a pyarrow Table"):
        evaluate_arrow(42)
    with pytest.raises(InvalidValueError, match="unit='grapheme'"):
        scorekit.evaluate(table, unit="grapheme")


def test_a_missing_slice_column_of_a_parquet_file_is_named(tmp_path):
    """pyarrow's reader raised a bare ``KeyError: b'lang'`` for a missing dictionary column."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"pred": ["a"], "gold": ["b"]}), path)
    with pytest.raises(InvalidValueError, match=r"slice column 'lang' not found \(columns: 'pred', 'gold'\)"):
        evaluate_arrow(path, slice="lang")


def test_null_cells_are_an_error_naming_column_and_row():
    batches = [pa.record_batch({"pred": ["a", "b"], "gold": ["a", "b"]}),
               pa.record_batch({"pred": ["c", "d", "e"], "gold": ["c", None, "e"]})]
    with pytest.raises(InvalidValueError, match=r"column 'gold' row 3 is null \(pass nulls='count'"):
        evaluate_arrow(batches)
    report = evaluate_arrow(batches, nulls="count")
    assert report.nulls == {"pred": 0, "gold": 1} and report.detail["insertions"] == 1


def _invalid_utf8_table(kind: pa.DataType) -> pa.Table:
    data = b"okfine\xffbad\xe0\x80\xafend"  # a lone 0xff, then an overlong '/'
    offsets = np.array([0, 2, 6, 10, 16], dtype=np.int64 if kind in (pa.large_string(), pa.large_binary()) else np.int32)
    bad = pa.Array.from_buffers(kind, 4, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data)])
    return pa.table({"pred": pa.array(["ok", "fine", "x", "y"]).cast(kind), "gold": bad})


@pytest.mark.parametrize("kind", [pa.binary(), pa.large_binary(), pa.string()])
def test_invalid_utf8_is_named(backend, kind):
    table = _invalid_utf8_table(kind)
    with pytest.raises(InvalidValueError, match=r"column 'gold' row 2: invalid UTF-8 \(invalid start byte at byte 0\)"):
        evaluate_arrow(table)
    with pytest.raises(InvalidValueError, match=r"column 'gold' row 2: invalid UTF-8"):
        evaluate_arrow(table, normalize=str.lower)
    assert evaluate_arrow(table.slice(0, 2)).detail["edits"] == 0
    swapped = table.rename_columns(["gold", "pred"]).slice(3)
    with pytest.raises(InvalidValueError, match=r"column 'pred' row 0: invalid UTF-8 \(invalid continuation byte at byte 0\)"):
        evaluate_arrow(swapped)


def test_numba_decoder_validates_like_python():
    rng = random.Random(4)
    pieces = [b"a", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80",
              b"\xf4\x90\x80\x80", b"\xe0\x80\xaf", b"\xc3", b"\x80", b"\xf0\x9f", b"\xef\xbf\xbf", b"\xf4\x8f\xbf\xbf"]
    items = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 5))) for _ in range(3000)]
    column = scorekit.arrow._buffers(pa.array(items, pa.binary()))
    values, offsets, bad = decode_column(column)
    for k, item in enumerate(items):
        try:
            text = item.decode("utf-8")
        except UnicodeDecodeError:
            assert bad[k], item
            continue
        assert not bad[k]
        assert values[offsets[k]:offsets[k + 1]].tolist() == [ord(c) for c in text]
    assert 300 < bad.sum() < 2900


def test_malformed_buffers_are_errors_not_crashes(backend):
    good = (np.frombuffer(b"abc", np.uint8), np.array([0, 1, 3], np.int64), None, 0)
    cases = [((good[0], np.array([0, 5, 3], np.int64), None, 0), "offset|out of order"),
             ((good[0], np.array([0, 1, 9], np.int64), None, 0), "offset|outside"),
             ((good[0], np.array([], np.int64), None, 0), "at least one offset"),
             ((good[0], good[1], np.zeros(0, np.uint8), 0), "validity bitmap too short")]
    for column, message in cases:
        with pytest.raises(ValueError, match=message):
            utf8.pair_counts(column, good, "cer")
    with pytest.raises(ValueError, match="items"):
        utf8.pair_counts(good, (good[0], np.array([0, 3], np.int64), None, 0), "cer")


def test_compiled_core_rejects_bad_tables_and_steps():
    column = scorekit.arrow._buffers(pa.array(["a"]))
    keys, offsets, values, punct, unassigned = utf8.unicode_tables()
    with pytest.raises(ValueError, match="no compiled rule for the normalizer 'upper'"):
        _core.utf8_pair_counts(column, column, "cer", ["upper"], None, 1)
    with pytest.raises(ValueError, match="tables are required"):
        _core.utf8_pair_counts(column, column, "cer", ["lower"], None, 1)
    with pytest.raises(ValueError, match="keys must be sorted"):
        _core.utf8_pair_counts(column, column, "cer", ["lower"], (keys[::-1].copy(), offsets, values, punct, unassigned), 1)
    with pytest.raises(ValueError, match="mode must be"):
        _core.utf8_pair_counts(column, column, "ter", [], None, 1)


def test_unicode_tables_come_from_this_python():
    keys, offsets, values, punctuation, unassigned = utf8.unicode_tables()
    folds = {chr(k): "".join(map(chr, values[offsets[i]:offsets[i + 1]])) for i, k in enumerate(keys.tolist())}
    assert folds["ß"] == "ss" and folds["Σ"] == "σ" and folds["ς"] == "σ" and "a" not in folds
    bit = lambda bits, c: bool(bits[c // 8] >> (c % 8) & 1)  # noqa: E731
    assert bit(punctuation, ord("¿")) and not bit(punctuation, ord("$"))
    assert bit(unassigned, 0x0378) and not bit(unassigned, ord("a"))


def test_module_docstrings_run():
    assert doctest.testmod(scorekit.arrow).failed == 0


@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index")  # inside dask's Parquet reader
def test_docs_page_runs():
    run_python_blocks("arrow-dask.md")


def test_misaligned_offsets_buffer(backend):
    """Buffers that arrive over a wire (Dask) may start at any address: read them all the same."""
    offsets = np.array([0, 2, 5], dtype=np.int64).tobytes()
    shifted = pa.py_buffer(b"\x00" + offsets)[1:]
    column = pa.Array.from_buffers(pa.large_string(), 2, [None, shifted, pa.py_buffer(b"ctdog")])
    report = evaluate_arrow(pa.table({"pred": column, "gold": ["cat", "dog"]}))
    assert report.detail["deletions"] == 1 and report.n == 2


@pytest.mark.parametrize("index_type", [pa.int8(), pa.uint8(), pa.int16(), pa.int32(), pa.uint32(), pa.int64()])
def test_slice_dictionaries_in_any_order(index_type):
    """A slice column given as a dictionary whose order is not first appearance, with unused and
    repeated labels, null indices and an offset (a sliced array), or a dictionary far larger than
    the labels used: slices come in order of first appearance, with the Python path's counts."""
    preds, golds, labels = _corpus(17, 700)
    names = ["mixed", "cjk", "spare", "latin", "cjk"]  # reversed-ish order, one unused, one repeated
    rng = random.Random(3)
    indices = [None if label is None else rng.choice([k for k, v in enumerate(names) if v == label])
               for label in ["latin", *labels]]
    dictionary = pa.DictionaryArray.from_arrays(pa.array(indices, index_type), pa.array(names)).slice(1)
    huge = pa.DictionaryArray.from_arrays(pa.array([None if k is None else k + 500 for k in indices[1:]], index_type)
                                          if index_type.bit_width > 8 else pa.array(indices[1:], index_type),
                                          pa.array([f"unused{k}" for k in range(500)] + names)
                                          if index_type.bit_width > 8 else pa.array(names))
    expected = scorekit.evaluate(list(zip(preds, golds, labels)))
    for column in (dictionary, huge):
        table = pa.table({"pred": preds, "gold": golds, "slice": column})
        report = evaluate_arrow(table.to_batches(max_chunksize=128), slice="slice")
        _same(report, expected)
        assert list(report.slice_counts) == list(dict.fromkeys(label for label in labels if label is not None))


# ------------------------------------------------------------- edges: falsy names, duplicates, NaN
def test_a_slice_column_named_empty_is_a_column():
    """``slice=""`` names the column ``""`` (Arrow allows it); only ``None`` means no slice."""
    table = pa.table({"pred": ["ct", "dog", "x"], "gold": ["cat", "dog", "y"], "": ["a", "a", "b"]})
    report = evaluate_arrow(table, slice="")
    assert report.slice_counts["a"]["n"] == 2 and report.per_slice == {"a": 1 / 6, "b": 1.0}
    assert list(evaluate_arrow(table, slice="", per_item=True).items.column("slice").to_pylist()) == ["a", "a", "b"]
    assert evaluate_arrow(table, slice=None).per_slice == {}
    with pytest.raises(InvalidValueError, match="slice column '' not found"):
        evaluate_arrow(table.drop_columns([""]), slice="")
    path = _parquet(table)
    assert evaluate_arrow(path, slice="").per_slice == {"a": 1 / 6, "b": 1.0}


def _parquet(table: pa.Table, row_group_size: int = 1) -> str:
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


@pytest.mark.parametrize("roles, message", [
    ({"pred": "pred", "gold": "pred"}, "gold names column 'pred', as pred does"),
    ({"pred": "gold", "gold": "gold"}, "gold names column 'gold', as pred does"),
    ({"slice": "pred"}, "slice names column 'pred', as pred does"),
    ({"slice": "gold"}, "slice names column 'gold', as gold does"),
    ({"pred": "", "gold": "", "slice": ""}, "gold names column '', as pred does"),
])
def test_one_column_in_two_roles_is_a_named_error(roles, message):
    table = pa.table({"pred": ["a"], "gold": ["b"], "": ["c"]})
    for data in (table, table.to_batches(), _parquet(table)):
        with pytest.raises(InvalidValueError, match=message):
            evaluate_arrow(data, **roles)


def test_a_column_name_the_data_holds_twice_is_ambiguous():
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"]), pa.array(["c"])], names=["pred", "pred", "gold"])
    with pytest.raises(InvalidValueError, match="pred column 'pred' appears 2 times in the data"):
        evaluate_arrow(table)


def test_every_nan_label_is_one_slice_however_the_rows_are_batched():
    """NaN equals nothing, not even itself: read batch by batch, each batch's NaN would open a new
    slice. All NaN rows are one slice, as one batch gives (and -0.0 joins 0.0, as in ``evaluate``)."""
    nan, inf = float("nan"), float("inf")
    table = pa.table({"pred": ["a", "x", "c", "d", "e"], "gold": ["a", "b", "c", "x", "e"],
                      "s": [nan, nan, inf, nan, -0.0]})
    expected = {"n": 3, "ref_len": 3, "substitutions": 2, "deletions": 0, "insertions": 0, "edits": 2, "hits": 1}
    for data in (table, table.to_batches(max_chunksize=1), _parquet(table)):
        counts = evaluate_arrow(data, slice="s").slice_counts
        assert len(counts) == 3, data
        (first, nan_counts), (second, _), (third, _) = counts.items()
        assert first != first and nan_counts == expected and (second, third) == (inf, 0.0)
    a, b = CountTotals(), CountTotals()
    a.add(np.array([[1, 0, 0, 0]]), np.array([0]), [float("nan")])
    b.add(np.array([[2, 1, 0, 0]]), np.array([0]), [float("nan")])
    assert [v for v in a.merge(b).slices.values()] == [[2, 3, 1, 0, 0]]


def test_null_cell_error_says_how_to_count_them():
    from scorekit.arrow import NullCellError

    with pytest.raises(NullCellError) as info:
        evaluate_arrow(pa.table({"pred": ["a", None], "gold": ["a", "b"]}))
    assert str(info.value) == "column 'pred' row 1 is null (pass nulls='count' to score null cells as empty text)"
    assert str(info.value.advise("use X")) == "column 'pred' row 1 is null (use X to score null cells as empty text)"
    assert isinstance(info.value, InvalidValueError)


@pytest.mark.parametrize("index", [5, -1])
def test_a_dictionary_index_outside_the_labels_is_damaged_data(index):
    """An index beyond the dictionary was the kernel's 'codes[1] is 5' message; a valid index -1
    silently put its row in no slice. Both name the column and the row."""
    labels = pa.DictionaryArray.from_arrays(pa.array([0, index, 1], pa.int32()), pa.array(["a", "b"]), safe=False)
    table = pa.table({"pred": ["a", "b", "c"], "gold": ["a", "x", "c"], "s": labels})
    with pytest.raises(InvalidValueError, match=rf"column 's' row 3: dictionary index {index} is not one of the 2 "):
        evaluate_arrow([pa.record_batch({"pred": ["z", "z"], "gold": ["z", "z"], "s": pa.array(["a", None])
                                         .dictionary_encode()}), *table.to_batches()], slice="s")
    nulls = pa.DictionaryArray.from_buffers(pa.dictionary(pa.int32(), pa.string()), 2,
                                            [pa.py_buffer(bytes([0b01])), pa.py_buffer(np.array([0, 9], np.int32).tobytes())],
                                            dictionary=pa.array(["a"]))
    report = evaluate_arrow(pa.table({"pred": ["a", "b"], "gold": ["a", "b"], "s": nulls}), slice="s")
    assert report.slice_counts["a"]["n"] == 1  # a null row's index is never read


def test_a_damaged_parquet_page_is_an_error_not_other_text(tmp_path):
    """A file written with page checksums and then damaged (one letter of a text changed) was
    scored as the damaged text; the checksums are now verified."""
    path = _damaged_parquet(tmp_path)
    with pytest.raises(OSError, match="CRC checksum verification failed"):
        evaluate_arrow(str(path), pred="p", gold="g")


def _damaged_parquet(folder):
    path = folder / "damaged.parquet"
    pq.write_table(pa.table({"p": ["hello wrld"], "g": ["hello world"]}), path, compression="none",
                   use_dictionary=False, write_statistics=False, write_page_checksum=True)
    data = path.read_bytes()
    assert data.count(b"wrld") == 1
    path.write_bytes(data.replace(b"wrld", b"wold"))
    return path
