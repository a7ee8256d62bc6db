"""The text normalisers behind the normalised and the numbers-only Levenshtein distances.

They stay in Python's ``re`` on purpose: the rules lean on Python's own Unicode meaning of ``\\s``,
``\\w``, ``\\d`` and of ``str.strip()``, which a port would have to reproduce exactly. The order of
the steps is part of the definition (docs/flowcharts.md lists it).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["nfc_and_space_normalise", "numbers_only_normalise"]

# Superscript ordinal suffixes after a digit, replaced in this order.
_ORDINALS = tuple((re.compile(r"(?<=\d)" + re.escape(sup)), plain) for sup, plain in (
    ("\u02e2\u1d57", "st"), ("\u207f\u1d48", "nd"), ("\u02b3\u1d48", "rd"), ("\u1d57\u02b0", "th")))
_BR_RUN = re.compile(r"(?:<br\s*/?>\s*){2,}", re.IGNORECASE)
_BULLETS = str.maketrans({c: "\u2022" for c in
                          "\u2022\u25cf\u25cb\u25aa\u25ab\u25fb\u25a0\u25a1\u25e6\u2023\u2043\u2219\u2666\u25c6\u2610"})
_LETTER_O_BULLET = re.compile(r"^ *[oO]\s+", re.MULTILINE)
# Dashes, quotes and carets: three independent one-character maps, applied together.
_CHAR_MAP = str.maketrans({
    **{c: "-" for c in "\u2010\u002d\u2012\u2013\u2014\u2015\u2212"},
    **{c: "'" for c in "\u2018\u2019\u201a\u201b"},
    **{c: '"' for c in "\u201c\u201d\u201e\u201f"},
    **{c: "^" for c in "\u005e\u02c6\u0302"},
})
_SPACES = re.compile(r" {2,}")
_SPACES_AROUND_NEWLINE = re.compile(r" *\n *")
_LINE_BULLET = re.compile(r"^ *\u2022\s*", re.MULTILINE)
_LINE_DASH = re.compile(r"^ *-\s*", re.MULTILINE)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+(?=[,.;:!?%)\]])")
_SPACE_AFTER_OPEN = re.compile(r"(?<=[(\[])\s+")
_EQUALS = re.compile(r"\s*=\s*")
_PLUS = re.compile(r"[^\S\n]*\+[^\S\n]*")
_WORD_HYPHEN = re.compile(r"(?<=\w)\s*-\s*(?=\w)")
_NEWLINES = re.compile(r"\n{2,}")

_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}\b)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def nfc_and_space_normalise(text: str) -> str:
    """``text`` with formatting differences removed, for the default flowchart text distance.

    NFC; superscript ordinals after digits spelled out; ``\\r\\n``/``\\r`` to ``\\n``; tabs to
    spaces; runs of two or more ``<br>`` tags to one; bullet characters (and a line-initial ``o``
    followed by whitespace) to ``•``; dashes, quotes and carets to their ASCII forms; ASCII space
    runs collapsed and removed around newlines; spacing fixed around ``• - , . ; : ! ? % ) ] ( [ =
    +`` and hyphens between word characters; newline runs collapsed; ends stripped. Never changes
    case or accents, and a single newline stays a newline.

    >>> nfc_and_space_normalise("Allocated  \\n\\n\\t n  =  50")
    'Allocated\\nn = 50'
    """
    # A step whose pattern needs a character the text lacks is skipped: it could not change it.
    text = unicodedata.normalize("NFC", text)
    if "\u1d57" in text or "\u1d48" in text:  # every superscript suffix holds one of these
        for pattern, plain in _ORDINALS:
            text = pattern.sub(plain, text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    if "<" in text:
        text = _BR_RUN.sub("<br>", text)
    text = text.translate(_BULLETS)
    text = _LETTER_O_BULLET.sub("\u2022 ", text)
    text = text.translate(_CHAR_MAP)
    text = _SPACES.sub(" ", text)
    newline = "\n" in text
    if newline:
        text = _SPACES_AROUND_NEWLINE.sub("\n", text)
    if "\u2022" in text:
        text = _LINE_BULLET.sub("\u2022 ", text)
    if "-" in text:
        text = _LINE_DASH.sub("- ", text)
    text = _SPACE_BEFORE_PUNCT.sub("", text)
    if "(" in text or "[" in text:
        text = _SPACE_AFTER_OPEN.sub("", text)
    if "=" in text:
        text = _EQUALS.sub(" = ", text)
    if "+" in text:
        text = _PLUS.sub("+", text)
    if "-" in text:
        text = _WORD_HYPHEN.sub("-", text)
    text = _SPACES.sub(" ", text)
    if newline:
        text = _NEWLINES.sub("\n", text)
    return text.strip()


def numbers_only_normalise(text: str) -> str:
    """The numbers of ``text`` (``12``, ``3.5``; thousands commas dropped), joined by single spaces.

    >>> numbers_only_normalise("Randomised 45.5% (n = 1,912)")
    '45.5 1912'
    """
    text = _THOUSANDS_COMMA.sub("", unicodedata.normalize("NFC", text))
    return " ".join(_NUMBER.findall(text))
