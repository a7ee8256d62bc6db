"""The flowchart text distances (docs/flowcharts.md): every vector of the spec's text-distance
table, the None/type rules, and the compiled kernel against a plain-Python edit distance on random
Unicode (astral code points and lone surrogates included) on both backends."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.flowcharts import (
    DistanceFnProtocol,
    levenshtein_fn as R,
    levenshtein_with_text_normalisation as L,
    nfc_and_space_normalise as N,
    number_only_levenshtein as NOL,
    numbers_only_normalise,
)
from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import _levenshtein, levenshtein_python


@pytest.mark.parametrize("fn, true, pred, expected", [
    (L, "n=10", "n = 10", 0), (R, "n=10", "n = 10", 2),                                   # T1
    (L, "n = 10", "n = 11", 1),                                                           # T2
    (L, None, " ABC ", 3), (R, None, " ABC ", 5),                                         # T3
    (R, "kitten", "sitting", 3), (R, "", None, 0), (L, "", None, 0),                      # T5
    (L, "Excluded (n = 24)", "Excluded (n=25)", 1), (R, "Excluded (n = 24)", "Excluded (n=25)", 3),  # T6
    (L, "Follow\u2013up", "Follow-up", 0), (R, "Follow\u2013up", "Follow-up", 1),        # T7
    (L, "Allocated\nn = 50", "Allocated n = 50", 1),                                      # T8
    (L, "e\u0301", "\u00e9", 0), (R, "e\u0301", "\u00e9", 2),                             # T9
    (L, "1\u02e2\u1d57 follow-up", "1st follow-up", 0),                                   # T10
    (L, "o Non-smokers", "\u2022 Non-smokers", 0), (L, "\u25cf Non-smokers", "\u2022 Non-smokers", 0),
    (L, "O\tSmokers", "\u2022 Smokers", 0),                                               # T11
    (L, "\u201cquoted\u201d", '"quoted"', 0),                                             # T12
    (L, "mean + SD", "mean+SD", 0),                                                       # T13
    (L, "post - partum", "post-partum", 0), (L, "5 - 10", "5-10", 0),
    (L, "Excluded\n- Declined", "Excluded-Declined", 0),                                  # T14
    (L, "a<br><br>b", "a<br>b", 0), (R, "a<br><br>b", "a<br>b", 4), (L, "a<br/>b", "a<br>b", 1),  # T15
    (L, "( n = 5 )", "(n = 5)", 0),                                                       # T16
    (L, "219\u0302", "219^", 0),                                                          # T17
    (L, "Text", "text", 1),                                                               # T18
    (L, "Lost to follow up\n(n = 3)", "Lost to follow up (n = 3)", 1),                    # T21
    (L, "Total:\u00a0 12", "Total: 12", 1),                                               # T24
    (L, "£5 \u2212 £10", "£5-£10", 2),                                                    # T25
    (NOL, "Randomised (n=1,912)", "Randomised n = 1912", 0),                              # T27
    (NOL, "45.5% (n = 10)", "45,5% (n = 10)", 1),                                         # T28
    (NOL, "Allocated", None, 0), (NOL, None, "n = 12", 2),                                # T29
    (NOL, "Week 12: 3.5 kg", "Week 12: 3.50 kg", 1), (NOL, "Visit 1 (n = 10)", "Visit 10 (n = 1)", 2),  # T30
])
def test_distance_vectors(fn, true, pred, expected):
    assert fn(true, pred) == expected
    assert fn(true_text=true, pred_text=pred) == expected
    assert type(fn(true, pred)) is int


@pytest.mark.parametrize("text, expected", [
    ("2\u207f\u1d48 visit", "2nd visit"),                                                 # T10
    ("x <BR /> <br>\ny", "x <br>y"),                                                      # T15
    ("[ a ]", "[a]"), ("(\n5)", "(5)"),                                                   # T16
    ("participants ,", "participants,"), ("Figure 1 .", "Figure 1."), ("n = 4 ; 5%", "n = 4; 5%"),  # T19
    ("Allocated  \n\n\t n  =  50", "Allocated\nn = 50"),                                  # T20
    ("o\no x", "\u2022 \u2022 x"), ("\u2022\nWithdrew", "\u2022 Withdrew"), ("  -  Withdrew", "- Withdrew"),
    ("-5 kg", "- 5 kg"),                                                                  # T22
    ("a==b", "a = = b"), ("n\n=\n5", "n = 5"), ("a\u00a0=\u00a0b", "a = b"),              # T23
    ("Total:\u00a0 12", "Total:\u00a0 12"),                                               # T24
    ("£5 \u2212 £10", "£5 - £10"),                                                        # T25
    ("Follow \u2011 up", "Follow \u2011 up"),                                             # T26
    ("23\u1d57\u02b0", "23th"), ("x\u1d57\u02b0", "x\u1d57\u02b0"),                       # R2: only after a digit
    ("a\r\nb\rc", "a\nb\nc"), ("Other", "Other"), ("a<br/>b", "a<br/>b"),
    ("\u25a0 x \u2014 y \u2018z\u2019 2\u02c63", "\u2022 x-y 'z' 2^3"),  # R13g joins x - y
    ("\u00ab x \u00bb \u2032", "\u00ab x \u00bb \u2032"),                                 # not listed: untouched
    ("a\n\n\nb", "a\nb"), ("\u00a0 x \u2003", "x"),
])
def test_normalise_vectors(text, expected):
    assert N(text) == expected


def test_numbers_only_normalise():
    assert numbers_only_normalise("1,234,567 and 1,2345") == "1234567 1 2345"           # T29
    assert numbers_only_normalise("Randomised 45.5% (n = 1,912)") == "45.5 1912"
    assert numbers_only_normalise("-3e5, 2,5") == "3 5 2 5"                               # no sign, exponent, decimal comma


@pytest.mark.parametrize("fn", [L, R, NOL])
def test_none_and_type_rules(fn):
    with pytest.raises(ValueError, match="Both true_text and pred_text cannot be None."):   # T4
        fn(None, None)
    with pytest.raises(InvalidValueError):
        fn(true_text=None, pred_text=None)
    for bad in (1, 1.5, True, b"x", ["x"]):
        with pytest.raises(TypeError, match="true_text"):
            fn(bad, "x")
        with pytest.raises(InvalidTypeError, match="pred_text"):
            fn("x", bad)


def test_builtins_satisfy_the_protocol():
    for fn in (L, R, NOL):
        assert isinstance(fn, DistanceFnProtocol)

    class Custom:
        def __call__(self, *, true_text, pred_text):
            return 0.5

    assert isinstance(Custom(), DistanceFnProtocol)
    assert not isinstance(42, DistanceFnProtocol)


_ALPHABET = "ab\u00e9e\u0301\U0001f600\U00010348 \n-\u2013\ud800\udfff"


@settings(max_examples=300)
@given(st.text(alphabet=_ALPHABET, max_size=30), st.text(alphabet=_ALPHABET, max_size=30))
def test_compiled_distance_equals_python_reference(a, b):
    assert _levenshtein(a, b) == levenshtein_python(a, b)


def test_random_unicode_on_both_backends(backend):
    rng = random.Random(13)
    pool = [chr(c) for c in (*range(0x20, 0x7f), 0xe9, 0x301, 0x2013, 0x1f600, 0x10348, 0xd800, 0x0a)]
    for _ in range(400):
        a = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 40)))
        b = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 40)))
        assert R(a, b) == levenshtein_python(a, b), (a, b)
    long_a, long_b = "x" * 3000 + "abc", "y" + "x" * 2990 + "ab"
    assert R(long_a, long_b) == levenshtein_python(long_a, long_b)


def test_distance_does_not_import_the_parsing_dependencies():
    import subprocess
    import sys

    code = ("import sys, scorekit.flowcharts as f; f.levenshtein_with_text_normalisation('a', 'b');"
            "print(sorted(m for m in ('pydantic', 'scipy', 'jinja2') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn",
                                  "scorekit.flowcharts.parsing.text_distance_fns.normalise_text"])
def test_docstring_examples(backend, name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@settings(max_examples=300)
@given(st.text(), st.text())
def test_any_text_is_scored_and_symmetric(a, b):
    """Any Python string (lone surrogates included) is normalised and scored without error; each
    distance is symmetric and zero for equal texts, and bounded by the longer normalised text."""
    for fn, norm in ((R, lambda s: s), (L, N), (NOL, numbers_only_normalise)):
        d = fn(a, b)
        assert d == fn(b, a) and fn(a, a) == 0
        assert abs(len(norm(a)) - len(norm(b))) <= d <= max(len(norm(a)), len(norm(b)))


def test_plain_python_fallback_without_any_backend(monkeypatch):
    from scorekit._kernels import levenshtein as lev
    from scorekit.registry import MissingExtraError

    def missing(*args, **kwargs):
        raise MissingExtraError("no backend")

    monkeypatch.setattr(lev, "distance_batch", missing)
    assert R("kitten", "sitting") == 3 and L("Excluded (n = 24)", "Excluded (n=25)") == 1


def test_package_exports_load_lazily():
    import subprocess
    import sys

    code = ("import sys, scorekit.flowcharts as f, scorekit.flowcharts.cli;"
            "print(sorted(m for m in sys.modules if m.startswith('scorekit.flowcharts.')));"
            "names = [getattr(f, n) for n in f.__all__];"
            "print(all(n in ('RotationLabel', 'N_DIAGRAMS_IN_BENCHMARK') or getattr(f, n).__name__ == n for n in f.__all__),"
            " 'levenshtein_fn' in dir(f))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["['scorekit.flowcharts.cli']", "True True"]
    import scorekit.flowcharts as f

    with pytest.raises(AttributeError):
        f.no_such_name
    from scorekit.flowcharts import RotationBenchmark  # noqa: F401  (from-import goes through __getattr__)
