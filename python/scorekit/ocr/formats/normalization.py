"""The text normalisation dinglehopper 0.11 applies to every text it extracts (its "SBB"
normalisation): NFC, then ligatures written out (MUFI and eMOP private-use ligatures, ``ﬁ`` →
``fi`` …), then a few historical-print equivalences (``—`` → ``–``, ``’`` → ``'``, ``aͤ`` → ``ä`` …).
Applying it makes scorekit's texts, and so CER and WER, identical to dinglehopper's.

>>> normalize_text("ﬁne — e\\u0301te")
'fine – éte'
"""

from __future__ import annotations

import unicodedata
from typing import Any

from scorekit.ocr.formats.model import OcrFormatError

__all__ = ["normalize_text", "is_stable", "normalize_checked"]

#: Ligatures written out, applied in this order after NFC.
LIGATURES = (
    ("\ueba6", "ſſ"), ("\ueba7", "ſſi"), ("\uf502", "ch"), ("\ueec4", "ck"), ("\uf4f9", "ll"),
    ("\ueba2", "ſi"), ("\ueada", "ſt"), ("\ufb01", "fi"), ("\ufb00", "ff"), ("\ufb02", "fl"),
    ("\ufb03", "ffi"), ("\ueec5", "ct"), ("\ueedc", "tz"), ("\uf532", "as"), ("\uf533", "is"),
    ("\uf534", "us"), ("\uf535", "Qu"), ("\u0133", "ij"), ("\ue8bf", "q&"), ("\ueba5", "ſp"),
    ("\ufb06", "st"),
)
#: Equivalences (OCR-D ground truth, Tesseract ``frk``, Calamari GT4HistOCR), applied after the
#: ligatures, in this order.
EQUIVALENCES = (
    ("\ue72b", "ü"), ("\ue42c", "ä"), ("==", "–"), ("—", "–"), ("\ue644", "ö"), ("’", "'"),
    ("⸗", "-"), ("a\u0364", "ä"), ("o\u0364", "ö"), ("u\u0364", "ü"), ("\uf50e", "q\u0301"),
)


#: The last character of every replaced sequence: a text without any of them is only NFC-normalised.
_TRIGGERS = frozenset(old[-1] for old, _ in LIGATURES + EQUIVALENCES)


def normalize_text(text: str) -> str:
    """``text`` normalised as dinglehopper 0.11 normalises extracted text (see the module). The
    replacements run one after the other, as dinglehopper's do (one can feed the next: the ``u``
    of a written-out ``Qu`` ligature before U+0364 becomes ``ü``)."""
    text = unicodedata.normalize("NFC", text)
    if _TRIGGERS.isdisjoint(text):
        return text
    for old, new in LIGATURES + EQUIVALENCES:
        if old in text:
            text = text.replace(old, new)
    return text


def is_stable(text: str) -> bool:
    """Whether ``text`` (already normalised) is in NFC and unchanged by normalising again.
    dinglehopper refuses a text that is not (writing out a ligature can leave a combining mark
    that NFC would then compose, as in ``ﬀ`` + U+0307), and so does scorekit."""
    return unicodedata.is_normalized("NFC", text) and normalize_text(text) == text


def normalize_checked(path: Any, element: Any, text: str) -> str:
    """``text`` (read from ``element`` of the file ``path``) normalised, or an
    :class:`~scorekit.ocr.formats.model.OcrFormatError` when the result is not stable."""
    text = normalize_text(text)
    if not is_stable(text):
        raise OcrFormatError(path, f"text {text!r} is not stable under NFC after its ligatures are written out "
                                   "(dinglehopper refuses it too)", element)
    return text
