"""Page and corpus reports of the OCR page kit; for now the script test of the ``non-armenian`` filter.

``is_non_armenian_text`` decides whether a ground-truth box is written in another script: its
letters (Unicode category ``L*``, after NFC; digits, punctuation, symbols and spaces are ignored)
are counted, and the box is non-Armenian when the share of Latin and Cyrillic letters is strictly
above ``NON_ARMENIAN_SCRIPT_RATIO``. Other scripts (Greek, for instance) count as letters but not
as Latin or Cyrillic.

>>> is_non_armenian_text("Москва 2024"), is_non_armenian_text("Hello Աշխարհ")
(True, False)
"""

from __future__ import annotations

import unicodedata
from typing import Optional

from scorekit.ocr_pages.evaluation.text_metrics import _check_str

__all__ = ["NON_ARMENIAN_SCRIPT_RATIO", "is_non_armenian_text"]

#: A text is non-Armenian when its share of Latin and Cyrillic letters is strictly above this.
NON_ARMENIAN_SCRIPT_RATIO = 0.9

_FOREIGN_SCRIPTS = frozenset(("LATIN", "CYRILLIC"))


def _latin_cyrillic_share(t: str) -> Optional[float]:
    """The share of Latin and Cyrillic letters among the letters of ``t`` (None when it has none)."""
    letters = [c for c in unicodedata.normalize("NFC", t) if unicodedata.category(c).startswith("L")]
    if not letters:
        return None
    foreign = sum(1 for c in letters if not _FOREIGN_SCRIPTS.isdisjoint(unicodedata.name(c, "").split()))
    return foreign / len(letters)


def is_non_armenian_text(t: str) -> bool:
    """True when more than ``NON_ARMENIAN_SCRIPT_RATIO`` of the letters of ``t`` are Latin or
    Cyrillic; a text without letters is not non-Armenian. A non-``str`` is an ``InvalidTypeError``
    and a lone surrogate an ``InvalidValueError``, both naming ``t``.

    >>> is_non_armenian_text("abcdefghi բ"), is_non_armenian_text("abcdefghij բ")
    (False, True)
    """
    share = _latin_cyrillic_share(_check_str(t, "t"))
    return share is not None and share > NON_ARMENIAN_SCRIPT_RATIO
