"""scorekit.canonicalize: normalizer steps, Canonicalizer, resolve_canonicalizer."""

from __future__ import annotations

import doctest
import warnings

import pytest

import scorekit.canonicalize as canonicalize
from scorekit.canonicalize import (
    MARKS_WARNING,
    Canonicalizer,
    collapse_whitespace,
    default_canonicalizer,
    lower,
    mark_class_count,
    nfc,
    nfkc,
    resolve_canonicalizer,
    strip,
    strip_punctuation,
)
from scorekit.registry import get, names

STEPS = {
    "nfc": nfc,
    "nfkc": nfkc,
    "lower": lower,
    "strip": strip,
    "collapse_whitespace": collapse_whitespace,
    "strip_punctuation": strip_punctuation,
}


def test_module_doctest() -> None:
    result = doctest.testmod(canonicalize)
    assert result.attempted >= 4 and result.failed == 0


def test_documented_example() -> None:
    canon = Canonicalizer(["nfc", "lower", "collapse_whitespace"])
    assert canon(" Héllo WORLD ") == "héllo world"
    assert canon.version == "nfc+lower+collapse_whitespace"
    assert mark_class_count("e\u0301") == 1


def test_steps_are_registered_under_normalizers() -> None:
    assert list(STEPS) == [n for n in names("normalizers") if n in STEPS]
    for name, function in STEPS.items():
        assert get("normalizers", name) is function


def test_step_vectors() -> None:
    assert nfc("e\u0301") == "\u00e9"
    assert nfkc("\ufb01") == "fi"
    assert lower("Straße") == "strasse"
    assert lower("ΣΑΣ") == "σασ"
    assert strip(" \t a b \n") == "a b"
    assert collapse_whitespace("  a \t\n b  ") == "a b"
    assert collapse_whitespace("a\u00a0\u2003b\u3000") == "a b"
    assert strip_punctuation("Hello, world! «x» — y's") == "Hello world x  ys"


def test_mark_class_count() -> None:
    assert mark_class_count("e\u0301") == 1
    assert mark_class_count("\u00e9") == 0
    assert mark_class_count("नमस्ते") == 2
    assert mark_class_count("") == 0


@pytest.mark.parametrize("function", [*STEPS.values(), mark_class_count])
def test_non_str_input_is_a_type_error(function) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match=f"{function.__name__}\\(\\) expects a str, got int"):
        function(5)


def test_canonicalizer_repr_steps_and_version() -> None:
    canon = Canonicalizer(["lower", "strip"])
    assert canon.steps == ["lower", "strip"]
    assert canon.version == "lower+strip"
    assert repr(canon) == "Canonicalizer(['lower', 'strip'], version='lower+strip')"


def test_canonicalizer_with_callables() -> None:
    canon = Canonicalizer([str.upper, "strip"])
    assert canon.steps == ["upper", "strip"]
    assert canon.version == "upper+strip"
    assert canon(" ab ") == "AB"
    assert Canonicalizer([lambda s: s]).steps == ["<lambda>"]


def test_callable_without_a_name_falls_back_to_str() -> None:
    class Reverse:
        def __call__(self, s: str) -> str:
            return s[::-1]

        def __str__(self) -> str:
            return "reverse"

    canon = Canonicalizer([Reverse()])
    assert canon.steps == ["reverse"] and canon("ab") == "ba"


def test_version_override_and_identity() -> None:
    assert Canonicalizer(["lower"], version="v2").version == "v2"
    empty = Canonicalizer()
    assert empty.steps == [] and empty.version == "" and empty("  Ab ") == "  Ab "


def test_steps_property_is_a_copy() -> None:
    canon = Canonicalizer(["lower"])
    canon.steps.append("strip")
    assert canon.steps == ["lower"]


def test_unknown_step_fails_at_construction() -> None:
    with pytest.raises(KeyError, match="no_such_step"):
        Canonicalizer(["lower", "no_such_step"])


def test_bad_steps_argument() -> None:
    with pytest.raises(TypeError, match="steps must be a sequence"):
        Canonicalizer("lower")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="steps items"):
        Canonicalizer(["lower", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="version"):
        Canonicalizer(["lower"], version=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Canonicalizer expects a str, got NoneType"):
        Canonicalizer(["lower"])(None)  # type: ignore[arg-type]


def test_audit_marks_warns_and_still_runs() -> None:
    canon = Canonicalizer(["strip_punctuation"], audit_marks=True)
    with pytest.warns(UserWarning) as record:
        assert canon("नमस्ते!") == "नमस्ते"
    assert str(record[0].message) == MARKS_WARNING
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert canon("plain!") == "plain"
        assert Canonicalizer(["strip"])("e\u0301") == "e\u0301"  # no audit by default


def test_default_canonicalizer() -> None:
    canon = default_canonicalizer()
    assert canon.steps == ["nfc", "lower", "collapse_whitespace"]
    assert canon.version == "nfc+lower+collapse_whitespace"
    assert canon("  E\u0301TÉ \t Straße ") == "été strasse"
    assert default_canonicalizer() is not canon


def test_resolve_canonicalizer() -> None:
    canon = Canonicalizer(["lower"])
    assert resolve_canonicalizer(None) is None
    assert resolve_canonicalizer(canon) is canon
    assert resolve_canonicalizer("lower") is lower  # the function itself, not wrapped
    assert resolve_canonicalizer(str.upper) is str.upper
    steps = resolve_canonicalizer(["lower", "collapse_whitespace"])
    assert isinstance(steps, Canonicalizer) and steps.version == "lower+collapse_whitespace"
    assert steps("Hello   WORLD") == "hello world"
    assert resolve_canonicalizer(("strip",)).steps == ["strip"]  # type: ignore[union-attr]
    with pytest.raises(KeyError):
        resolve_canonicalizer("no_such_normalizer")
    with pytest.raises(TypeError, match="normalize must be"):
        resolve_canonicalizer(3.5)
