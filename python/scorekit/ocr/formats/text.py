"""Plain text files: UTF-8 (a byte-order mark is dropped), one segment per line.

As dinglehopper 0.11 reads them: line breaks are ``\\n``, ``\\r\\n`` or ``\\r``; each line is
stripped of leading and trailing white space and normalised; the lines are joined by newlines (a
final line break adds no empty line). dinglehopper guesses the encoding of a file from its first
kilobyte; scorekit reads UTF-8 only and names the first byte that is not (docs/decisions.md#ocr-readers).
The segments are the lines (ids ``line 1``, ``line 2`` …, no geometry) at every level.
"""

from __future__ import annotations

from typing import Any, Optional

from scorekit.ocr.formats.model import OcrDocument, OcrFormatError, Segment
from scorekit.ocr.formats.normalization import normalize_checked

__all__ = ["read_text_file"]


def read_text_file(path: Any, data: bytes, level: Optional[str]) -> OcrDocument:
    """The :class:`OcrDocument` of the plain text ``data`` read from ``path`` (``level`` does not
    change it)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise OcrFormatError(path, f"is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    segments = tuple(Segment(f"line {number}", "line", normalize_checked(path, f"line {number}", line.strip()))
                     for number, line in enumerate(lines, 1))
    return OcrDocument(str(path), "text", "\n".join(s.text for s in segments), segments)
