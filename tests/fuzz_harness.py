"""The general fuzzing harness: hostile-value strategies and the outcome property every public
entry point must keep (see ``docs/fuzzing.md``).

The property: a call either returns a valid result, or raises one of scorekit's named errors or a
``ValueError``/``TypeError`` with a message. Any other exception (``IndexError``, ``KeyError`` that
is not scorekit's, ``OverflowError``, ``RecursionError``, a ``pyo3_runtime.PanicException`` …) is a
defect, and so is a crash or a hang. The exception a hostile object raises from its own dunder
method (:class:`HostileError`) may propagate unchanged: it is the caller's own error.

``outcome`` turns a call into a comparable value, so that ``on_both_backends`` can check that the
Rust core and the Numba twin agree exactly, results and error messages alike.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

from scorekit._kernels import BACKENDS, use_backend
from scorekit.errors import ScorekitError

ALLOWED = (ScorekitError, ValueError, TypeError)


class HostileError(Exception):
    """Raised by :class:`Hostile` objects; it may escape a call as it is."""


class Hostile:
    """An object whose dunder methods misbehave, chosen by ``mode``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __eq__(self, other: object) -> bool:
        if self.mode == "eq":
            raise HostileError("__eq__")
        return self is other

    def __hash__(self) -> int:
        if self.mode == "hash":
            raise HostileError("__hash__")
        if self.mode == "stop":
            raise StopIteration
        return 7

    def __str__(self) -> str:
        if self.mode == "str":
            raise HostileError("__str__")
        if self.mode == "str-type":
            return 5  # type: ignore[return-value]
        return "hostile"

    def __repr__(self) -> str:
        if self.mode == "repr":
            raise HostileError("__repr__")
        return f"Hostile({self.mode!r})"

    def __len__(self) -> int:
        if self.mode == "len":
            return -1
        raise TypeError("no len")

    @property
    def text(self) -> Any:
        if self.mode == "text":
            raise HostileError("text")
        if self.mode == "text-int":
            return 5
        raise AttributeError("text")


HOSTILE_MODES = ("eq", "hash", "stop", "str", "str-type", "repr", "len", "text", "text-int", "plain")

#: Characters that break naive text handling: lone surrogates, combining marks, RTL and
#: invisible controls, NUL, BOM, an emoji ZWJ sequence, Armenian schwa/ligature letters,
#: hyphens, line separators, characters whose case or compatibility mapping changes length.
SPECIAL_CHARS = (
    "\ud800", "\udfff", "\u0301", "\u0308", "\u202e", "\u200f", "\u200b", "\x00", "\ufeff",
    "\U0001F469\u200d\U0001F4BB", "\u0568", "\u0538", "\u0565", "\u057e", "\u0582", "\u0587",
    "-", "\u058a", "\u2010", "\u2014", "\n", "\r", "\t", " ", "\u00a0", "\u2028", "\u3000",
    "\ufb01", "\u0130", "\u00df", "a", "b", "\U0010FFFF",
)



def joined(pieces: st.SearchStrategy, min_size: int = 0, max_size: int = 30) -> st.SearchStrategy:
    """Strings made of ``pieces`` (a piece may be several code points)."""
    return st.lists(pieces, min_size=min_size, max_size=max_size).map("".join)


#: Text without lone surrogates (what the metrics accept).
scalar_text = joined(st.one_of(st.characters(codec="utf-8"), st.sampled_from(SPECIAL_CHARS[2:])))
#: Any Python string, lone surrogates included.
any_text = st.one_of(scalar_text, joined(st.sampled_from(SPECIAL_CHARS)), st.text(st.characters(), max_size=30))
#: Long strings, bounded so that a quadratic kernel still answers within the suite's budget.
long_text = st.builds(lambda unit, n: (unit * n)[:3000], joined(st.sampled_from(SPECIAL_CHARS[2:]), 1, 4),
                      st.integers(300, 3000))
texts = st.one_of(any_text, long_text)

floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308])
ints = st.integers() | st.sampled_from([-1, 0, 2**31, 2**62, 2**63, 2**64, 10**400])


def hostile_objects() -> st.SearchStrategy:
    return st.sampled_from(HOSTILE_MODES).map(Hostile)


#: A value of a type no text entry point accepts (or accepts only by coercion).
wrong_values = st.one_of(
    st.none(), st.binary(max_size=10), ints, floats, st.booleans(),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
    st.lists(st.integers(), max_size=3),
    st.builds(np.array, st.lists(st.integers(-5, 5), max_size=3)),
    st.just(np.float64("nan")), st.just(np.int64(3)), st.just(np.str_("np")),
    hostile_objects(),
)

#: Something passed where a string is expected: usually text, sometimes anything.
text_or_wrong = st.one_of(texts, texts, wrong_values)

#: ``threads=``: valid counts and hostile ones (the huge counts the kernels must cap).
threads_values = st.one_of(st.none(), st.integers(-3, 4), st.sampled_from([True, 1.5, "2", math.nan]))

NORMALIZER_NAMES = ("nfc", "nfkc", "lower", "strip", "collapse_whitespace", "strip_punctuation")
#: ``normalize=``: names, lists of names, callables, and wrong values.
normalize_values = st.one_of(
    st.none(),
    st.sampled_from(NORMALIZER_NAMES),
    st.lists(st.sampled_from(NORMALIZER_NAMES), max_size=4),
    st.sampled_from(["nope", "", ["lower", 3], [None], 5, b"lower", str.upper, (lambda s: 5), (lambda s: None)]),
)


def levenshtein_dp(a, b) -> int:
    """Unit-cost edit distance of two sequences, the textbook dynamic programme."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def outcome(call: Callable[[], Any]) -> tuple:
    """``("ok", result)`` or ``("error", type name, message)``; anything outside the property
    raises ``AssertionError`` carrying the original exception."""
    try:
        return ("ok", call())
    except HostileError as exc:
        return ("error", "HostileError", str(exc))
    except ALLOWED as exc:
        message = str(exc)
        assert message, f"{type(exc).__name__} without a message"
        return ("error", type(exc).__name__, message)
    except Exception as exc:  # noqa: BLE001 - the property under test
        raise AssertionError(f"{type(exc).__name__} escaped: {exc!r}") from exc


def same(a: Any, b: Any) -> bool:
    """Equality of results where NaN equals NaN and arrays compare element-wise; the very same
    object (a hostile slice label handed back by both backends) is equal without calling ``==``."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def on_both_backends(call: Callable[[], Any], view: Callable[[Any], Any] = lambda r: r) -> tuple:
    """The outcome of ``call`` under every kernel backend; asserts they agree and returns it.
    ``view`` maps a result to what is compared (e.g. a ``Report`` to its numbers)."""
    results = []
    for backend in BACKENDS:
        with use_backend(backend):
            out = outcome(call)
        results.append(("ok", view(out[1])) if out[0] == "ok" else out)
    first = results[0]
    for backend, other in zip(BACKENDS[1:], results[1:]):
        assert same(first, other), f"backends disagree: {BACKENDS[0]} {first!r} vs {backend} {other!r}"
    return first
