"""hOCR (XHTML, or HTML that is not well-formed XML): the document text and the segments of one level.

dinglehopper 0.11 does not read hOCR; scorekit reads it as it reads ALTO, so the two compare
alike: the text is every line (an element of class ``ocr_line``, ``ocr_header``, ``ocr_caption``
or ``ocr_textfloat``) in document order, joined by newlines; a line's text is its ``ocrx_word``
texts joined by single spaces (a line without words: its own text with white space collapsed);
a word's text is its text content with white space collapsed, and words left empty are skipped.
Texts are normalised as the other formats' are.

The level chooses the segments: ``region`` gives the ``ocr_carea`` elements (``ocr_par`` when
there is none), ``line`` (the default) the lines, ``word`` the ``ocrx_word`` elements, ``glyph``
the ``ocrx_cinfo`` elements. Boxes come from the ``bbox`` property of the ``title`` attribute,
confidences from ``x_wconf`` (0 to 100, given as 0 to 1).
"""

from __future__ import annotations

from typing import Any, Optional

from scorekit.ocr.formats.model import OcrDocument, OcrFormatError, Segment, finite_number
from scorekit.ocr.formats.normalization import normalize_checked

__all__ = ["LINE_CLASSES", "read_hocr"]

LINE_CLASSES = frozenset({"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"})


def _classes(element: Any) -> set[str]:
    return set((element.get("class") or "").split()) if isinstance(element.tag, str) else set()


def _title(element: Any) -> dict[str, list[str]]:
    """The ``title`` properties: ``bbox 1 2 3 4; x_wconf 90`` -> ``{"bbox": [...], "x_wconf": [...]}``."""
    properties = {}
    for part in (element.get("title") or "").split(";"):
        words = part.split()
        if words:
            properties[words[0]] = words[1:]
    return properties


def _box(path: Any, element: Any, properties: dict[str, list[str]]) -> Optional[tuple[float, float, float, float]]:
    if "bbox" not in properties:
        return None
    values = properties["bbox"]
    if len(values) != 4:
        raise OcrFormatError(path, f"bbox needs 4 numbers, got {' '.join(values)!r}", element)
    x0, y0, x1, y1 = (finite_number(path, element, "bbox", v) for v in values)
    return (x0, y0, x1, y1)


def _collapsed(element: Any) -> str:
    return " ".join("".join(element.itertext()).split())



def read_hocr(path: Any, root: Any, level: Optional[str]) -> OcrDocument:
    """The :class:`OcrDocument` of the hOCR document ``root`` read from ``path``; ``level``
    (``None``: ``line``) chooses the segments."""
    elements = [e for e in root.iter() if isinstance(e.tag, str)]
    if not any("ocr_page" in _classes(e) for e in elements):
        raise OcrFormatError(path, "is HTML without hOCR markup (no element of class ocr_page)", root)
    level = level or "line"

    def line_text(line: Any) -> str:
        words = [text for w in line.iter() if "ocrx_word" in _classes(w) for text in [_collapsed(w)] if text]
        return normalize_checked(path, line, " ".join(words) if words else _collapsed(line))

    def lines_in(element: Any) -> list[Any]:
        return [e for e in element.iter() if _classes(e) & LINE_CLASSES]

    wanted = {"line": LINE_CLASSES, "word": {"ocrx_word"}, "glyph": {"ocrx_cinfo"}}.get(level)
    if wanted is None:
        wanted = {"ocr_carea"} if any("ocr_carea" in _classes(e) for e in elements) else {"ocr_par"}
    segments = []
    for element in elements:
        if not _classes(element) & wanted:
            continue
        if level == "region":
            text = "\n".join(line_text(line) for line in lines_in(element))
        elif level == "line":
            text = line_text(element)
        else:
            text = normalize_checked(path, element, _collapsed(element))
            if not text:
                continue
        properties = _title(element)
        wconf = properties.get("x_wconf")
        confidence = finite_number(path, element, "x_wconf", wconf[0]) / 100 if wconf else None
        segments.append(Segment(element.get("id"), level, text, _box(path, element, properties), None, confidence))
    text = "\n".join(line_text(line) for line in lines_in(root))
    return OcrDocument(str(path), "hocr", text, tuple(segments))
