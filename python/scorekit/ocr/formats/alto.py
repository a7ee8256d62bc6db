"""ALTO v1 to v4: the document text as dinglehopper 0.11 extracts it, and the segments of one level.

The text is every ``TextLine`` in document order, joined by newlines; a line's text is the
``CONTENT`` of its ``String`` children joined by single spaces, normalised
(:func:`~scorekit.ocr.formats.normalization.normalize_text`). ``SP`` adds nothing beyond that
space; ``HYP`` and ``SUBS_CONTENT`` do not change the text (a hyphenated word stays in its two
written parts, without the hyphen): that is dinglehopper's reading, kept for parity
(docs/decisions.md#ocr-readers). An empty line stays in the text as an empty line.

The level only chooses the segments (the text is the same at every level): ``region`` gives the
``TextBlock`` elements, ``line`` (the default) the ``TextLine`` elements, ``word`` the ``String``
elements and ``glyph`` the ``Glyph`` elements (ALTO 3 and later). Boxes are ``HPOS``, ``VPOS``,
``HPOS + WIDTH``, ``VPOS + HEIGHT`` in the file's ``MeasurementUnit``; confidences are ``WC``
(words) and ``GC`` (glyphs).
"""

from __future__ import annotations

from typing import Any, Optional

from scorekit.ocr.formats.model import OcrDocument, OcrFormatError, Segment, finite_number
from scorekit.ocr.formats.normalization import normalize_checked

__all__ = ["NAMESPACES", "read_alto"]

#: The ALTO namespaces read, with the major version each names.
NAMESPACES = {
    "http://schema.ccs-gmbh.com/ALTO": "1",
    "http://www.loc.gov/standards/alto/ns-v2#": "2",
    "http://www.loc.gov/standards/alto/ns-v3#": "3",
    "http://www.loc.gov/standards/alto/ns-v4#": "4",
}
_ELEMENT = {"region": "TextBlock", "line": "TextLine", "word": "String", "glyph": "Glyph"}
_CONFIDENCE = {"word": "WC", "glyph": "GC"}



def _box(path: Any, element: Any) -> Optional[tuple[float, float, float, float]]:
    values = [finite_number(path, element, name, element.get(name)) for name in ("HPOS", "VPOS", "WIDTH", "HEIGHT")]
    if None in values:
        return None
    x, y, width, height = values
    return (x, y, x + width, y + height)


def read_alto(path: Any, root: Any, level: Optional[str]) -> OcrDocument:
    """The :class:`OcrDocument` of the ALTO document ``root`` read from ``path``; ``level``
    (``None``: ``line``) chooses the segments."""
    namespace = root.tag.partition("}")[0].lstrip("{") if root.tag.startswith("{") else None
    if namespace not in NAMESPACES:
        raise OcrFormatError(path, f"unknown ALTO namespace {namespace!r} (read: {', '.join(NAMESPACES)})", root)
    ns = "{" + namespace + "}"
    level = level or "line"

    def line_text(line: Any) -> str:
        return normalize_checked(path, line, " ".join(s.get("CONTENT", "") for s in line.iterchildren(ns + "String")))

    elements = list(root.iter(ns + "TextLine"))  # kept alive: ``lines`` is keyed by their ids
    lines = {id(line): line_text(line) for line in elements}
    segments = []
    for element in root.iter(ns + _ELEMENT[level]):
        if level == "region":
            text = "\n".join(lines[id(line)] for line in element.iter(ns + "TextLine"))
        elif level == "line":
            text = lines[id(element)]
        else:
            text = normalize_checked(path, element, element.get("CONTENT", ""))
        confidence = finite_number(path, element, _CONFIDENCE[level], element.get(_CONFIDENCE[level])) \
            if level in _CONFIDENCE else None
        segments.append(Segment(element.get("ID"), level, text, _box(path, element), None, confidence))
    return OcrDocument(str(path), "alto", "\n".join(lines.values()), tuple(segments), NAMESPACES[namespace])
