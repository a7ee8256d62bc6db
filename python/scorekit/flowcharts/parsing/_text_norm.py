"""A private stand-in for the text distances of the flowchart spec (§2.2, §2.3).

The public versions live in ``text_distance_fns`` (written with the classification half); the
parsing code prefers them when they are importable and uses these otherwise. Both follow the
same rules, so the numbers are the same either way.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Optional

_ORDINALS = (("\u02e2\u1d57", "st"), ("\u207f\u1d48", "nd"), ("\u02b3\u1d48", "rd"), ("\u1d57\u02b0", "th"))
_BULLETS = "\u2022\u25cf\u25cb\u25aa\u25ab\u25fb\u25a0\u25a1\u25e6\u2023\u2043\u2219\u2666\u25c6\u2610"
_DASHES = "\u2010\u002d\u2012\u2013\u2014\u2015\u2212"
_TABLE = {ord(c): "\u2022" for c in _BULLETS}
_TABLE.update({ord(c): "-" for c in _DASHES})
_TABLE.update({ord(c): "'" for c in "\u2018\u2019\u201a\u201b"})
_TABLE.update({ord(c): '"' for c in "\u201c\u201d\u201e\u201f"})
_TABLE.update({ord(c): "^" for c in "\u005e\u02c6\u0302"})

_SUBS = [
    (re.compile(r"(?:<br\s*/?>\s*){2,}", re.IGNORECASE), "<br>"),   # R5
    (None, None),                                                  # R6-R10: one translate table
    (re.compile(r"(?m)^ *[oO]\s+"), "\u2022 "),                     # R7 (after the bullets of R6)
    (re.compile(r" +"), " "),                                       # R11
    (re.compile(r" *\n *"), "\n"),                                  # R12
    (re.compile(r"(?m)^ *\u2022\s*"), "\u2022 "),                   # R13a
    (re.compile(r"(?m)^ *-\s*"), "- "),                             # R13b
    (re.compile(r"\s+(?=[,.;:!?%)\]])"), ""),                       # R13c
    (re.compile(r"(?<=[(\[])\s+"), ""),                             # R13d
    (re.compile(r"\s*=\s*"), " = "),                                # R13e
    (re.compile(r"[^\S\n]*\+[^\S\n]*"), "+"),                       # R13f
    (re.compile(r"(?<=\w)\s*-\s*(?=\w)"), "-"),                     # R13g
    (re.compile(r" +"), " "),                                       # R13h
    (re.compile(r"\n+"), "\n"),                                     # R14
]


def nfc_and_space_normalise(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    for sup, plain in _ORDINALS:
        text = re.sub(r"(?<=\d)" + sup, plain, text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    for pattern, repl in _SUBS:
        text = text.translate(_TABLE) if pattern is None else pattern.sub(repl, text)
    return text.strip()


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def numbers_only_normalise(text: str) -> str:
    return " ".join(_NUMBER.findall(_THOUSANDS.sub("", unicodedata.normalize("NFC", text))))


def _sides(true_text: Optional[str], pred_text: Optional[str]) -> tuple[str, str]:
    if true_text is None and pred_text is None:
        raise ValueError("Both true_text and pred_text cannot be None.")
    for name, value in (("true_text", true_text), ("pred_text", pred_text)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string or None, got {type(value).__name__}.")
    return true_text or "", pred_text or ""


def _lev(a: str, b: str) -> int:
    from scorekit.batch import levenshtein

    return int(levenshtein([a], [b])[0])


def levenshtein_fn(true_text: Optional[str], pred_text: Optional[str]) -> int:
    return _lev(*_sides(true_text, pred_text))


def levenshtein_with_text_normalisation(true_text: Optional[str], pred_text: Optional[str]) -> int:
    a, b = _sides(true_text, pred_text)
    return _lev(nfc_and_space_normalise(a), nfc_and_space_normalise(b))


def number_only_levenshtein(true_text: Optional[str], pred_text: Optional[str]) -> int:
    a, b = _sides(true_text, pred_text)
    return _lev(numbers_only_normalise(a), numbers_only_normalise(b))
