"""Versioned text canonicalization applied before scoring.

This module owns the built-in normalizer steps, the :class:`Canonicalizer` pipeline that chains
them under a persistable ``version`` string, and :func:`resolve_canonicalizer`, which turns every
accepted form of a ``normalize=`` argument into a callable. It does not score anything.

Each step is a ``str -> str`` function registered under the ``"normalizers"`` namespace when this
module is imported, so a :class:`~scorekit.base.FieldSpec` can name one and plugins can add more:

==========================  =====================================================================
``nfc``                     Unicode NFC (composition); the safe default
``nfkc``                    Unicode NFKC (compatibility composition); lossy
``lower``                   full Unicode casefold (``"Straße"`` → ``"strasse"``), not ``str.lower``
``strip``                   strip leading and trailing whitespace
``collapse_whitespace``     every whitespace run becomes one space, ends stripped
``strip_punctuation``       drop characters of Unicode category ``P*`` (spaces are kept)
==========================  =====================================================================

Folding text in a script that relies on combining marks (Devanagari and other abugidas) can
destroy meaning; :func:`mark_class_count` measures the exposure and ``audit_marks=True`` makes a
canonicalizer warn about it.

``Canonicalizer.version`` is the ``+``-joined step names (the documentation calls it a "stable
hash", but the documented example pins the joined form).

>>> canon = Canonicalizer(["nfc", "lower", "collapse_whitespace"])
>>> canon(" Héllo WORLD ")
'héllo world'
>>> canon.version  # stable hash of the step names
'nfc+lower+collapse_whitespace'
>>> mark_class_count("e\\u0301")  # 'e' + combining acute
1
"""

from __future__ import annotations

import unicodedata
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Optional, Union, cast

from scorekit.errors import InvalidTypeError, describe
from scorekit.registry import get, register

__all__ = [
    "nfc",
    "nfkc",
    "lower",
    "strip",
    "collapse_whitespace",
    "strip_punctuation",
    "mark_class_count",
    "Canonicalizer",
    "default_canonicalizer",
    "resolve_canonicalizer",
]

Step = Union[str, Callable[[str], str]]

MARKS_WARNING = (
    "Canonicalizing text with Unicode combining marks; verify the pipeline does not strip "
    "script-meaningful diacritics."
)


def _require_text(s: Any, function: str) -> None:
    if not isinstance(s, str):
        raise InvalidTypeError(f"expects a str, got {type(s).__name__}: {describe(s)}", field=f"{function}()")


@register("normalizers", "nfc")
def nfc(s: str) -> str:
    """Unicode NFC normalization (canonical composition); the safe default."""
    _require_text(s, "nfc")
    return unicodedata.normalize("NFC", s)


@register("normalizers", "nfkc")
def nfkc(s: str) -> str:
    """Unicode NFKC normalization (compatibility composition, e.g. ``"ﬁ"`` → ``"fi"``); lossy."""
    _require_text(s, "nfkc")
    return unicodedata.normalize("NFKC", s)


@register("normalizers", "lower")
def lower(s: str) -> str:
    """Full Unicode casefold (``str.casefold``)."""
    _require_text(s, "lower")
    return s.casefold()


@register("normalizers", "strip")
def strip(s: str) -> str:
    """Strip leading and trailing whitespace."""
    _require_text(s, "strip")
    return s.strip()


@register("normalizers", "collapse_whitespace")
def collapse_whitespace(s: str) -> str:
    """Replace every run of Unicode whitespace with one space and strip both ends."""
    _require_text(s, "collapse_whitespace")
    # str.split() and the regex class \s agree on what whitespace is, so this equals
    # re.sub(r"\s+", " ", s).strip() without the regex machinery.
    return " ".join(s.split())


@register("normalizers", "strip_punctuation")
def strip_punctuation(s: str) -> str:
    """Remove every character whose Unicode category starts with ``P``; everything else stays."""
    _require_text(s, "strip_punctuation")
    category = unicodedata.category
    return "".join(ch for ch in s if category(ch)[0] != "P")


def mark_class_count(s: str) -> int:
    """Number of Unicode Mark-class (category ``M*``, combining) characters in ``s``."""
    _require_text(s, "mark_class_count")
    category = unicodedata.category
    return sum(1 for ch in s if category(ch)[0] == "M")


def _step_name(step: Callable[[str], str]) -> str:
    return getattr(step, "__name__", None) or str(step)


class Canonicalizer:
    """An ordered, named, versioned pipeline of ``str -> str`` steps, applied left to right.

    ``steps`` holds registered normalizer names and/or callables; names are resolved when the
    pipeline is built, so an unknown name raises ``KeyError`` immediately. ``version`` overrides
    the derived version string. With ``audit_marks=True`` a call on text that carries combining
    marks emits a ``UserWarning`` (and still runs every step).
    """

    def __init__(
        self,
        steps: Sequence[Step] = (),
        *,
        version: str = "",
        audit_marks: bool = False,
    ) -> None:
        if isinstance(steps, str) or not isinstance(steps, Iterable):
            raise TypeError(
                "steps must be a sequence of normalizer names or callables "
                f"(e.g. [{steps!r}]), got {type(steps).__name__}: {steps!r}"
            )
        if not isinstance(version, str):
            raise TypeError(f"version must be a str, got {type(version).__name__}: {version!r}")
        names: list[str] = []
        functions: list[Callable[[str], str]] = []
        for step in steps:
            if isinstance(step, str):
                names.append(step)
                functions.append(get("normalizers", step))
            elif callable(step):
                names.append(_step_name(step))
                functions.append(step)
            else:
                raise TypeError(
                    f"steps items must be normalizer names or callables, got {type(step).__name__}: {step!r}"
                )
        self._names = tuple(names)
        self._functions = tuple(functions)
        self._version = version or "+".join(names)
        self.audit_marks = audit_marks

    @property
    def steps(self) -> list[str]:
        """The step names, in application order (a callable contributes its ``__name__``)."""
        return list(self._names)

    @property
    def version(self) -> str:
        """Identifier of the pipeline to persist next to a gold set (``""`` for the identity)."""
        return self._version

    def __call__(self, s: str) -> str:
        if not isinstance(s, str):
            raise InvalidTypeError(f"expects a str, got {type(s).__name__}: {describe(s)}", field="Canonicalizer")
        if self.audit_marks and mark_class_count(s) > 0:
            warnings.warn(MARKS_WARNING, UserWarning, stacklevel=2)
        for function in self._functions:
            s = function(s)
        return s

    def __repr__(self) -> str:
        return f"Canonicalizer({self.steps!r}, version={self.version!r})"


#: The built-in steps compiled readers reproduce on ASCII text (``rust/kernels/src/canon.rs``).
_ASCII_RULES = {"nfc": nfc, "nfkc": nfkc, "lower": lower, "strip": strip,
                "collapse_whitespace": collapse_whitespace, "strip_punctuation": strip_punctuation}


def builtin_steps(canon: Any) -> Optional[list[str]]:
    """The step names of ``canon`` when it is one of the built-in steps above or a
    :class:`Canonicalizer` made only of them (compiled code reproduces those exactly on ASCII
    text), else ``None``.

    >>> builtin_steps(default_canonicalizer())
    ['nfc', 'lower', 'collapse_whitespace']
    >>> builtin_steps(strip)
    ['strip']
    >>> builtin_steps(Canonicalizer([str.upper])) is None
    True
    """
    for name, function in _ASCII_RULES.items():
        if canon is function:
            return [name]
    if not isinstance(canon, Canonicalizer):
        return None
    if all(_ASCII_RULES.get(n) is f for n, f in zip(canon._names, canon._functions)):
        return list(canon._names)
    return None


def default_canonicalizer() -> Canonicalizer:
    """A conservative default pipeline: NFC, then casefold, then whitespace collapsing."""
    return Canonicalizer(["nfc", "lower", "collapse_whitespace"])


def resolve_canonicalizer(
    normalize: Any,
) -> Optional[Union[Canonicalizer, Callable[[str], str]]]:
    """Turn a ``normalize=`` argument into a callable, or ``None`` for no canonicalization.

    Accepted forms, checked in this order: ``None``; a :class:`Canonicalizer` (returned as is);
    a registered normalizer name (its function, unwrapped); any other callable (as is); an
    iterable of steps (wrapped in a new :class:`Canonicalizer`).
    """
    if normalize is None or isinstance(normalize, Canonicalizer):
        return normalize
    if isinstance(normalize, str):
        normalizer: Callable[[str], str] = get("normalizers", normalize)
        return normalizer
    if callable(normalize):
        return cast(Callable[[str], str], normalize)
    if isinstance(normalize, Iterable):
        return Canonicalizer(list(normalize))
    raise TypeError(
        "normalize must be None, a normalizer name, a callable, a sequence of steps or a "
        f"Canonicalizer, got {type(normalize).__name__}: {normalize!r}"
    )
