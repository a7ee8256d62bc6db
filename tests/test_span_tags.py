"""The compiled tag reader of span F1 (``_core.span_read_tags``) against its Python twin, the loop
of ``scorekit.metrics.spans._TagTable.encode``: the same ids, dtypes and new tags on seeded random
corpora (non-ASCII tags, more than 256 distinct tags, tuples, repeated and distinct ``str``
objects), ``None`` for everything the Python reader must handle, and span F1 scores equal on
both paths."""

from __future__ import annotations

import random

import numpy as np
import pytest
import scorekit.metrics.spans as spans_module
from hypothesis import given, settings
from hypothesis import strategies as st
from scorekit import _kernels
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.metrics.spans import MatchScheme, SpanF1Metric

_core = _kernels._core
pytestmark = pytest.mark.skipif(_core is None, reason="the compiled core is not built")

LETTERS = ["B", "I", "O", "E", "S", "L", "U", "X", "b"]
TYPES = ["PER", "LOC", "ORG", "Straße", "日本", "😀", "a-b", ""]


def tag_pool(rng: random.Random, size: int) -> list[str]:
    """``size`` distinct tags: BIO-like ones over non-ASCII types, then numbered types."""
    pool = dict.fromkeys(f"{letter}-{kind}" for letter in LETTERS for kind in TYPES)
    pool.update(dict.fromkeys(f"{rng.choice(LETTERS)}-T{k}ü" for k in range(size)))
    tags = ["O", *pool]
    return tags[:size]


def random_corpus(rng: random.Random, n: int, pool: list[str]) -> list:
    """``n`` sentences of tags from ``pool``: lists and tuples, empty ones, and tags that are fresh
    ``str`` objects (so that equal tags are not always the same object)."""
    sentences = []
    for _ in range(n):
        tags = [rng.choice(pool) for _ in range(rng.choice([0, 1, 3, 12, 40]))]
        tags = ["".join(list(t)) if rng.random() < 0.5 else t for t in tags]
        sentences.append(tuple(tags) if rng.random() < 0.2 else tags)
    return sentences


def python_table(known: list[str]) -> spans_module._TagTable:
    table = spans_module._TagTable()
    table._add([t for t in known if t not in table.ids])
    return table


def name(k: int) -> str:
    return f"preds[{k}]"


def encode_both(sentences: list, known: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple:
    """``(ids, tags)`` of the compiled and of the Python path, each from a fresh table knowing ``known``."""
    compiled_table = python_table(known)
    compiled = compiled_table.encode(sentences, name)
    with monkeypatch.context() as patch:
        patch.setattr(_kernels, "compiled", lambda: None)
        python = python_table(known)
        expected = python.encode(sentences, name)
    return (compiled, compiled_table), (expected, python)


@pytest.mark.parametrize("pool_size", [5, 60, 256, 257, 400])
@pytest.mark.parametrize("seed", range(4))
def test_compiled_reader_equals_python_reader(pool_size: int, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed * 1000 + pool_size)
    pool = tag_pool(rng, pool_size)
    known = rng.sample(pool, rng.randint(1, len(pool)))
    sentences = random_corpus(rng, 300, pool)
    assert _core.span_read_tags(sentences, python_table(known).ids) is not None
    (ids, table), (expected, python) = encode_both(sentences, known, monkeypatch)
    assert ids.dtype == expected.dtype == (np.uint8 if len(python.tags) <= 256 else np.int32)
    np.testing.assert_array_equal(ids, expected)
    assert table.tags == python.tags
    np.testing.assert_array_equal(table.letter, python.letter)
    np.testing.assert_array_equal(table.conll_type, python.conll_type)
    np.testing.assert_array_equal(table.strict_type, python.strict_type)


def test_new_tags_in_first_appearance_order_after_the_known_ones() -> None:
    ids, new = _core.span_read_tags([["B-X", "O"], ("I-Ü", "B-X", "B-日本")], {"O": 0, "B-日本": 1})
    assert ids.dtype == np.uint8
    assert ids.tolist() == [2, 0, 3, 2, 1]
    assert new == ["B-X", "I-Ü"]


def test_ids_widen_when_the_tags_pass_256() -> None:
    known = {f"k{i}": i for i in range(249)}
    sentences = [[f"k{i}" for i in range(0, 249, 7)], [f"n{i}" for i in range(7)]]
    ids, new = _core.span_read_tags(sentences, known)
    assert (ids.dtype, len(new)) == (np.uint8, 7)
    ids, new = _core.span_read_tags([*sentences, ["k3", "n99"]], known)
    assert (ids.dtype, len(new)) == (np.int32, 8)
    assert ids.tolist() == [*range(0, 249, 7), *range(249, 256), 3, 256]


def test_empty_corpus_and_empty_sentences() -> None:
    for sentences in ([], [[]], [[], ()]):
        ids, new = _core.span_read_tags(sentences, {"O": 0})
        assert (ids.dtype, ids.size, new) == (np.uint8, 0, [])


class Tag(str):
    pass


@pytest.mark.parametrize("sentences", [
    (["O"],),  # the corpus is not a list
    [["O"], iter(["O"])],  # a sentence that is no list or tuple
    [["O"], ("O", 1.5)],  # a tuple holding a non-str
    [["O", 3]],
    [["O", None]],
    [["O", ["B-X"]]],  # a nested list (the CoNLL reading flattens it)
    [["O"], ["B-\ud800"]],  # a lone surrogate
    [["O", ""]],
    [["O", Tag("B-X")]],  # a str subclass
])
def test_unusual_input_goes_to_the_python_reader(sentences: list) -> None:
    assert _core.span_read_tags(sentences, {"O": 0}) is None


def test_a_known_tag_the_python_reader_interned_goes_to_the_python_reader() -> None:
    assert _core.span_read_tags([["O"]], {"O": 0, Tag("B-X"): 1}) is None
    assert _core.span_read_tags([["O"]], {"O": 0, "B-\udfff": 1}) is None
    with pytest.raises(ValueError, match="known tag ids must be 0..len"):
        _core.span_read_tags([["O"]], {"O": 0, "B-X": 5})
    with pytest.raises(ValueError, match="known tag ids must be int"):
        _core.span_read_tags([["O"]], {"O": 0, "B-X": True})


def test_encode_falls_back_with_the_python_results_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    sentences = [["O", Tag("B-X")], ["B-X", "I-\ud800", "B-X"]]
    (ids, table), (expected, python) = encode_both(sentences, ["O"], monkeypatch)
    np.testing.assert_array_equal(ids, expected)
    assert ids.tolist() == [0, 1, 1, 2, 1] and table.tags == python.tags
    with pytest.raises(InvalidTypeError, match=r"preds\[1\].*position 1 must be a str, got 4 \(int\)"):
        python_table(["O"]).encode([["O"], ["B-X", 4]], name)
    with pytest.raises(InvalidValueError, match=r"preds\[0\].*position 2 is the empty string"):
        python_table(["O"]).encode([["O", "B-X", ""]], name)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["O", "B-A", "I-A", "B-é", "I-é", "E-😀", "S-x-y"]), max_size=8),
                max_size=12),
       st.lists(st.sampled_from(["O", "B-A", "I-é", "S-x-y", "Z"]), unique=True))
def test_compiled_reader_property(sentences: list, known: list) -> None:
    table = python_table(known)
    ids, new = _core.span_read_tags(sentences, table.ids)
    lookup = dict(table.ids)
    for tag in new:
        assert tag not in lookup
        lookup[tag] = len(lookup)
    assert ids.tolist() == [lookup[t] for s in sentences for t in s]
    assert new == [t for t in dict.fromkeys(t for s in sentences for t in s) if t not in table.ids]


@pytest.mark.parametrize("scheme", [MatchScheme.SEQEVAL_CONLL, MatchScheme.SEQEVAL_STRICT])
def test_span_f1_equal_on_both_readers(scheme: MatchScheme, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(17)
    pool = [t for t in tag_pool(rng, 300) if scheme is MatchScheme.SEQEVAL_CONLL or t[0] in "BIOES"]
    golds = [[rng.choice(pool) for _ in range(rng.randint(0, 30))] for _ in range(2000)]
    preds = [[t if rng.random() < 0.9 else rng.choice(pool) for t in g] for g in golds]
    metric = SpanF1Metric(scheme, tagging_scheme="IOBES")
    compiled = metric.score_corpus(preds, golds)
    with monkeypatch.context() as patch:
        patch.setattr(_kernels, "compiled", lambda: None)
        python = metric.score_corpus(preds, golds)
    assert compiled.aggregate == python.aggregate
    assert [s.detail for s in compiled.scores] == [s.detail for s in python.scores]
