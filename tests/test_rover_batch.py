"""``scorekit.qe.rover.agreement_batch`` (the agreement of a corpus in one kernel call) on both backends:
bit for bit the loop of ``AgreementSignal`` calls on thousands of random items, through the compiled
plain-text reader and its Python twin, independent of threads; the errors of bad items (named, and the
one the loop meets first); ek's ``AgreementSignal`` as an oracle; the batch kernel's own checks."""

from __future__ import annotations

import importlib
import random

import ek.qe
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scorekit import _kernels
from scorekit._kernels import rover as rover_kernel
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError, ScorekitError
from scorekit.qe.rover import AgreementSignal, agreement_batch, text_agreement_batch
from test_rover_api import Block, Ocr  # OCR-result-shaped objects

rover_module = importlib.import_module("scorekit.qe.rover")  # the package attribute is the function

WORDS = ["the", "cat", "sat", "bat", "sit", "INV-001", "12.50", "€", "Zürich", "日本", "🙂", "a", "b"]
#: Separators ``str.split()`` splits on, beyond the space (information separators, NBSP, ideographic space).
SEPARATORS = [" ", "  ", "\t", "\n", "\x1c", "\x1f", "\x85", "\xa0", "\u2003", "\u3000"]
CONFS = [1.0, 0.9, 0.5, 0.25, 0.0, None]


def random_text(rng: random.Random, base: list[str]) -> str:
    words = []
    for w in base:
        r = rng.random()
        if r < 0.12:
            continue                                # dropped
        words.append(rng.choice(WORDS) if r < 0.25 else w)
        if rng.random() < 0.08:
            words.append(rng.choice(WORDS))         # inserted
    edge = rng.choice(["", "", " ", "\n"])
    return edge + "".join(w + rng.choice(SEPARATORS) for w in words).rstrip(rng.choice(["", " \t"])) + edge


def random_hypothesis(rng: random.Random, base: list[str], plain: bool):
    text = random_text(rng, base)
    if plain:
        return text
    shape = rng.randrange(6)
    if shape == 0:
        return text
    if shape == 1:
        return text.split()
    if shape == 2:
        return [(w, rng.choice(CONFS)) for w in text.split()]
    if shape == 3:
        return Ocr(text, rng.choice(CONFS))
    if shape == 4:
        blocks = [Block(w, rng.choice(CONFS)) for w in text.split()]
        if rng.random() < 0.2:  # not word-level: the text is read instead
            blocks.insert(rng.randrange(len(blocks) + 1), Block(rng.choice(["", "two words", "x\xa0y", None])))
        return Ocr(text, rng.choice(CONFS), tuple(blocks))
    return None


def random_items(rng: random.Random, n: int, *, plain: bool, longest: int = 7) -> list[list]:
    items = []
    for _ in range(n):
        base = [rng.choice(WORDS) for _ in range(rng.randrange(longest))]
        items.append([random_hypothesis(rng, base, plain) for _ in range(rng.randrange(6))])
    return items


def loop(items, **params) -> list[float]:
    signal = AgreementSignal(**params)
    return [signal(h) for h in items]


PARAMS = [{}, {"use_confidence": False}, {"conf_weight": 1.0, "null_conf": 0.0}, {"conf_weight": 0.3, "null_conf": 1.0}]


@pytest.mark.parametrize("params", PARAMS)
def test_plain_texts_equal_the_loop(backend, params):
    items = random_items(random.Random(len(params)), 1500, plain=True)
    assert agreement_batch(items, **params).tolist() == loop(items, **params)


@pytest.mark.parametrize("params", PARAMS)
def test_every_hypothesis_shape_equals_the_loop(backend, params):
    items = random_items(random.Random(10 + len(params)), 1500, plain=False)
    assert agreement_batch(items, **params).tolist() == loop(items, **params)


def test_text_agreement_batch_reads_values_and_sources_in_place(backend):
    """The first hypothesis of each item from ``values``, the rest from ``sources``: the same numbers
    as :func:`agreement_batch` on the built items; ``None`` wherever the input is not plain text, and
    on the Numba backend (no compiled reader: the caller builds the items)."""
    items = [item for item in random_items(random.Random(21), 1500, plain=True) if item]
    values, sources = [item[0] for item in items], [item[1:] for item in items]
    if backend == "numba":
        assert text_agreement_batch(values, sources) is None
        return
    assert text_agreement_batch(values, sources).tolist() == agreement_batch(items).tolist()
    assert text_agreement_batch([], []).tolist() == []
    for bad_values, bad_sources in ((["a", 3], [["a"], ["b"]]), (["a", "b"], [["a"], ("b",)]),
                                    (["a", "b"], [["a"], ["b", None]]), (["a\ud800", "b"], [["a"], ["b"]])):
        assert text_agreement_batch(bad_values, bad_sources) is None
    with pytest.raises(ValueError, match="2 values but 1 source lists"):
        text_agreement_batch(["a", "b"], [["a"]])


def test_long_items_equal_the_loop(backend):
    """Items of 60–250 tokens: the alignment spans several 64-bit words; insertions grow the slots."""
    rng = random.Random(5)
    items = random_items(rng, 40, plain=True, longest=250)
    assert agreement_batch(items).tolist() == loop(items)
    assert agreement_batch(items, max_tokens=None).tolist() == loop(items, max_tokens=None)


def test_the_python_reader_gives_the_compiled_readers_arrays(monkeypatch):
    """The compiled reader of plain texts and its Python twin (the unit reader of ``rover``) give the
    same token ids, offsets and vocabulary, hence the same agreements."""
    items = random_items(random.Random(3), 2000, plain=True)
    compiled = rover_module._pack(items, None, None, batch=True, vocab=True)
    expected = agreement_batch(items)
    monkeypatch.setattr(_kernels, "compiled", lambda: None)
    python = rover_module._pack(items, None, None, batch=True, vocab=True)
    for name in ("ids", "confs", "engine_offsets", "item_offsets"):
        a, b = getattr(compiled, name), getattr(python, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert compiled.vocab == python.vocab
    assert agreement_batch(items).tolist() == expected.tolist()


def test_what_the_compiled_reader_hands_back():
    """Only lists of exact ``str`` without lone surrogates are read by the compiled core; anything else
    (a tuple or generator of hypotheses, a ``str`` subclass, a lone surrogate, None) by the Python reader."""
    from scorekit import _core

    class Text(str):
        pass

    ids, engines, items, vocab = _core.rover_read_texts([["a b\x1ca", ""], [], ["\u3000b\xa0c "]], True)
    assert (ids.tolist(), engines.tolist(), items.tolist(), vocab) == (
        [0, 1, 0, 1, 2], [0, 3, 3, 5], [0, 2, 2, 3], ["a", "b", "c"])
    assert _core.rover_read_texts([["a"]], False)[3] is None
    for bad in (["a", Text("b")], ["a", "b\ud800"], ["a", None], ("a", "b")):
        assert _core.rover_read_texts([["x"], bad], False) is None
    hypotheses = iter(["x y", "x"])
    assert _core.rover_read_texts([["x"], hypotheses], False) is None
    assert next(hypotheses) == "x y"  # not consumed
    def items():
        return [["x y", Text("x y")], ["a \ud800", "a"], ["p", None], ("\ud800", "\ud800 q"), iter(["a", "a b"])]

    assert agreement_batch(items()).tolist() == loop(items()) == [1.0, 0.75, 0.5, 0.75, 0.75]


def test_results_do_not_depend_on_threads_or_batch_size(backend):
    items = random_items(random.Random(9), 3000, plain=False)
    one = agreement_batch(items, threads=1)
    assert agreement_batch(items, threads=2).tolist() == one.tolist()
    assert agreement_batch(items, threads=None).tolist() == one.tolist()
    assert agreement_batch(items, threads=64).tolist() == one.tolist()
    halves = np.concatenate([agreement_batch(items[:1234]), agreement_batch(items[1234:])])
    assert halves.tolist() == one.tolist()


def test_custom_tokenize_and_non_string_tokens(backend):
    """A custom ``tokenize`` keeps Python ``==`` semantics (1 == 1.0 == True), as in ``rover``."""
    rng = random.Random(4)
    items = [[[(rng.choice([1, 1.0, True, 2, (3, 4), "x"]), rng.choice([1.0, 0.5])) for _ in range(rng.randrange(5))]
              for _ in range(rng.randrange(5))] for _ in range(400)]
    tokenize = list  # the hypotheses already are units
    assert agreement_batch(items, tokenize=tokenize).tolist() == loop(items, tokenize=tokenize)
    assert agreement_batch([[[(1, 1.0)], [(1.0, 1.0)], [(True, 1.0)]]], tokenize=tokenize).tolist() == [1.0]
    words = [[w.upper() for w in h.split()] for h in ("a b", "A c")]
    upper = lambda h: [(w.upper(), 1.0) for w in h.split()]  # noqa: E731
    assert agreement_batch([["a b", "A c"]], tokenize=upper).tolist() == loop([words])


def test_items_and_hypotheses_may_be_generators(backend):
    items = random_items(random.Random(8), 200, plain=False)
    expected = loop(items)
    assert agreement_batch(iter(h) for h in items).tolist() == expected
    assert agreement_batch(tuple(h) for h in items).tolist() == expected
    assert agreement_batch([]).tolist() == []
    assert agreement_batch([]).dtype == np.float64


def test_documented_values(backend):
    items = [["the cat sat", "the cat sit", "the bat sat"], ["a b c", "a x b c", "a b c"], ["", ""], [""], [],
             [[("cat", 0.9)], [("dog", 0.2)]], ["x a b", "a b", "a b"]]
    assert agreement_batch(items).tolist() == [0.7777777777777777, 1.0, 0.0, 1.0, 1.0, 0.5, 1.0]
    # shares 1/3, 1, 1 (null_conf 0 keeps the lone first token): Python 3.11 sums them to 2.333...31
    assert agreement_batch(items[-1:], null_conf=0.0).tolist() == [sum([1 / 3, 1.0, 1.0]) / 3]


texts = st.text(alphabet="ab\u00e9 \t\x1c\xa0\u3000", max_size=14)
hypothesis_sets = st.lists(st.lists(texts | st.lists(st.sampled_from(["a", "b", "ab"]), max_size=5), max_size=5),
                           max_size=8)


@given(hypothesis_sets, st.integers(0, 8))
def test_property_any_split_of_a_batch_gives_the_loops_values(items, cut):
    """Words made of few letters and every kind of whitespace: many ties, empty hypotheses."""
    expected = loop(items)
    assert agreement_batch(items).tolist() == expected
    assert agreement_batch(items[:cut]).tolist() + agreement_batch(items[cut:]).tolist() == expected


@given(st.lists(st.none() | st.text(alphabet="ab\u00e9 \t\x1c\x85\xa0\u2028\u3000", max_size=4), max_size=5))
def test_property_word_level_blocks(texts):
    """The reader's test for word-level OCR blocks is the definition: every text a non-empty str
    without an ``isspace`` character."""
    expected = all(isinstance(t, str) and t != "" and not any(c.isspace() for c in t) for t in texts)
    assert rover_module._word_level(texts) is expected


# --- errors ---------------------------------------------------------------------------------------------

def first_error(items, **params):
    """The exception the loop of AgreementSignal calls raises first, and the item it raises on."""
    signal = AgreementSignal(**params)
    for k, h in enumerate(items):
        try:
            signal(h)
        except (TypeError, ValueError) as exc:
            return k, exc
    return None, None


def spoil(rng: random.Random, item: list) -> list:
    """The item with one kind of bad input."""
    kind = rng.randrange(6)
    if kind == 0:
        return [*item, [("w", rng.choice([1.5, -0.1, float("nan"), float("inf"), 10**400]))]]
    if kind == 1:
        return [*item, [("w", "high")]]
    if kind == 2:
        return [*item, 42]                        # not a hypothesis
    if kind == 3:
        return [*item, " ".join(["w"] * 9)]       # beyond max_tokens=8
    if kind == 4:
        return "a single string"
    return [*item, Ocr("w", 2.0)]


def test_bad_items_raise_the_loops_first_error_naming_the_item(backend):
    rng = random.Random(12)
    for _ in range(300):
        items = random_items(rng, rng.randrange(1, 12), plain=False)
        for _ in range(rng.randrange(1, 3)):
            k = rng.randrange(len(items))
            items[k] = spoil(rng, items[k])
        k, expected = first_error(items, max_tokens=8)
        with pytest.raises((TypeError, ValueError)) as caught:
            agreement_batch(items, max_tokens=8)
        error = caught.value
        assert type(error) is type(expected), (items, error, expected)
        if isinstance(expected, ScorekitError):
            assert error.item == k and str(error) == f"item {k}: {expected}"
        else:  # a reader's own error (float("high")) is not rewritten, as in rover(); a note names the item
            assert str(error) == str(expected)
            assert getattr(error, "__notes__", [f"(reading item {k}, "])[-1].startswith(f"(reading item {k}, ")


def test_bad_arguments():
    collection = r"items must be a collection of hypothesis lists \(one per item\), got"
    with pytest.raises(InvalidTypeError, match=collection + " a single str$"):
        agreement_batch("the cat")
    with pytest.raises(InvalidTypeError, match=collection + " int"):
        agreement_batch(3)
    with pytest.raises(InvalidTypeError, match=r"^item 1: hypotheses must be a collection of hypotheses .* got int"):
        agreement_batch([["a"], 5])
    with pytest.raises(InvalidTypeError, match=r"^item 0: hypotheses\[1\] must be a string"):
        agreement_batch([["a", 3.5]])
    with pytest.raises(InvalidValueError, match=r"^item 2: hypotheses\[0\] token 1 is None"):
        agreement_batch([[[("a", 1.0)]], [], [[("a", 1.0), (None, 1.0)]]], tokenize=list)
    with pytest.raises(InputTooLargeError, match=r"^item 1: ROVER hypothesis has 3 tokens \(> max_tokens=2\)"):
        agreement_batch([["a b", "a"], ["a b c"]], max_tokens=2)
    assert agreement_batch([["a b c"]], max_tokens=3).tolist() == [1.0]
    for params, match in [({"conf_weight": 1.5}, "conf_weight must be finite and within"),
                          ({"null_conf": float("nan")}, "null_conf must be finite and within"),
                          ({"max_tokens": 2.5}, "max_tokens must be an int or None"),
                          ({"threads": -1}, "threads must be >= 0"), ({"threads": "2"}, "threads must be an int")]:
        with pytest.raises((InvalidTypeError, InvalidValueError), match=match):
            agreement_batch([["a"]], **params)
    assert agreement_batch([["a", "b"]], use_confidence=False, conf_weight=7).tolist() == [0.5]
    with pytest.raises(ZeroDivisionError):  # a custom tokenize's own error is not rewritten, as in rover()
        agreement_batch([["a"]], tokenize=lambda h: 1 / 0)


def test_the_batch_kernel_checks_its_input(backend):
    """Called directly, the kernel names the first bad item (positions count within the item)."""
    def run(tokens, confs, engines, items, max_tokens=None, cw=0.5):
        return rover_kernel.mean_agreements(np.array(tokens, np.uint32), np.array(confs, np.float64),
                                            np.array(engines, np.int64), np.array(items, np.int64), cw, 0.7,
                                            max_tokens)

    tokens, engines, items = [0, 1, 0, 2, 3, 4, 2], [0, 2, 3, 6, 7], [0, 2, 4]
    assert run(tokens, [1.0] * 7, engines, items).tolist() == [0.75, (0.5 + 0.5 + 1.0) / 3]
    cases = [
        ((tokens, [1.0] * 7, engines, items, 2), "item 1: ROVER hypothesis has 3 tokens (> max_tokens=2)"),
        ((tokens, [1.0] * 4 + [float("nan")] + [1.0] * 2, engines, items), "item 1: confs must not be NaN (token 1)"),
        ((tokens, [1.0] * 6 + [1.5], engines, items), "item 1: confs must be within [0, 1] (token 3)"),
        (([0, 1, 0, 2, 2**32 - 1, 4, 2], [1.0] * 7, engines, items), "item 1: tokens must be below 4294967295"),
        ((tokens, [-1.0] + [1.0] * 6, engines, items, 2), "item 0: confs must be within [0, 1] (token 0)"),
        ((tokens, [1.0] * 6, engines, items), "confs must have one value per token (7), got 6"),
        ((tokens, [1.0] * 7, [0, 2, 3, 8], [0, 3]), "engine_offsets must run from 0 to the number of tokens (7)"),
        ((tokens, [1.0] * 7, [0, 3, 2, 6, 7], items), "engine_offsets must be non-decreasing"),
        ((tokens, [1.0] * 7, engines, [0, 2, 3]), "item_offsets must run from 0 to the number of hypotheses (4)"),
        ((tokens, [1.0] * 7, engines, [0, 3, 2, 4]), "item_offsets must be non-decreasing"),
        ((tokens, [1.0] * 7, engines, items, None, 1.1), "conf_weight must be within [0, 1]"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError) as caught:
            run(*args)
        assert str(caught.value).startswith(message), (args, str(caught.value))
    with pytest.raises(TypeError):
        rover_kernel.mean_agreements(np.array(tokens, np.int64), np.ones(7), np.array(engines, np.int64),
                                     np.array(items, np.int64), 0.5, 0.7)
    empty = rover_kernel.mean_agreements(np.array([], np.uint32), np.array([]), np.array([0], np.int64),
                                         np.array([0], np.int64), 0.5, 0.7)
    assert empty.tolist() == []


def test_the_kernel_sums_shares_as_python_does(backend):
    """Shares 1/3, 1, 1: CPython 3.11's ``sum`` gives 2.333...31, 3.12's compensated one 2.333...33."""
    from scorekit import _kernels

    tokens, confs = np.array([0, 1, 2, 1, 2, 1, 2], np.uint32), np.ones(7)  # "x a b", "a b", "a b"
    engines, items = np.array([0, 3, 5, 7], np.int64), np.array([0, 3], np.int64)
    kernel = _kernels.implementation("rover").rover_mean_agreements
    assert kernel(tokens, confs, engines, items, 0.5, 0.0, None, False).tolist() == [0.7777777777777777]
    assert kernel(tokens, confs, engines, items, 0.5, 0.0, None, True).tolist() == [0.7777777777777778]
    assert rover_kernel.mean_agreements(tokens, confs, engines, items, 0.5, 0.0).tolist() == \
        [sum([1 / 3, 1.0, 1.0]) / 3]


def test_against_ek(backend):
    """ek's AgreementSignal on random items of every hypothesis shape, bit for bit."""
    rng = random.Random(2025)
    items = random_items(rng, 2000, plain=False)
    expected = [ek.qe.AgreementSignal()(h) for h in items]
    assert agreement_batch(items).tolist() == expected
    plain = random_items(rng, 1000, plain=True)
    oracle = ek.qe.AgreementSignal(use_confidence=False, null_conf=0.2)
    assert agreement_batch(plain, use_confidence=False, null_conf=0.2).tolist() == [oracle(h) for h in plain]
