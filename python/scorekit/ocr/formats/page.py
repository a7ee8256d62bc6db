"""PAGE-XML (2013, 2017, 2018 and 2019 namespaces): the document text in reading order at one
text-equiv level, as dinglehopper 0.11 extracts it, and the segments of that level.

How the text is built (docs/ocr-formats.md, docs/decisions.md#ocr-readers):

- The regions, in order: with a ``ReadingOrder``, the ``TextRegion`` elements its groups refer to
  (an ``OrderedGroup``'s children sorted by ``index``, children without one skipped; an
  ``UnorderedGroup``'s children as written; nested groups in place); a reference to another kind
  of region (image, table …) adds nothing; regions it leaves out are not in the text and are
  listed in :attr:`OcrDocument.omitted`. Without one, every ``TextRegion`` in document order,
  nested ones (table cells, regions in regions) included, after their parent.
- A region's text: at ``region`` level its own ``TextEquiv``; at ``line`` level its ``TextLine``
  children's, joined by newlines; at ``word`` level each line's ``Word`` texts joined by spaces;
  at ``glyph`` level each word's ``Glyph`` texts joined without a separator (``word`` and
  ``glyph`` are not in dinglehopper 0.11; they follow its documented joins).
- Regions whose text is empty are dropped; the rest are joined by newlines.
- Of several ``TextEquiv``: the one with the lowest ``index``; when none has an index, the one
  with the highest ``conf``; when none has either, the first. Each ``Unicode`` text is normalised
  (:func:`~scorekit.ocr.formats.normalization.normalize_text`), otherwise kept as written.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Optional

from lxml import etree

from scorekit.ocr.formats.model import (LEVELS, OcrDocument, OcrFormatError, Segment, bounding_box,
                                        finite_number)
from scorekit.ocr.formats.normalization import normalize_checked
from scorekit.ocr.formats.xml import localname

__all__ = ["NAMESPACES", "read_page"]

#: The PAGE content namespaces read, with the version each names.
NAMESPACES = {
    f"http://schema.primaresearch.org/PAGE/gts/pagecontent/{date}": date
    for date in ("2013-07-15", "2017-07-15", "2018-07-15", "2019-07-15")
}
_ORDERED = ("OrderedGroup", "OrderedGroupIndexed")
_UNORDERED = ("UnorderedGroup", "UnorderedGroupIndexed")
_METADATA = ("UserDefined", "Labels")
#: The element each level's text comes from, and the joiner between its units inside the parent.
_ELEMENT = {"line": "TextLine", "word": "Word", "glyph": "Glyph"}
_JOINER = {"line": "\n", "word": " ", "glyph": ""}
#: Every ``id`` attribute's value in a document (plain strings: faster than lxml's "smart" ones).
_IDS = etree.XPath("//@id", smart_strings=False)


class _Reader:
    """One PAGE document being read at one level."""

    def __init__(self, path: Any, root: Any, level: str) -> None:
        namespace = root.tag.partition("}")[0].lstrip("{") if root.tag.startswith("{") else None
        if namespace not in NAMESPACES:
            raise OcrFormatError(path, f"unknown PAGE namespace {namespace!r} (read: "
                                       f"{', '.join(sorted(NAMESPACES.values()))})", root)
        self.path, self.root, self.level = path, root, level
        self.version = NAMESPACES[namespace]
        self.ns = "{" + namespace + "}"

    # ----------------------------------------------------------------------------- reading order
    def regions(self) -> tuple[list[Any], list[Any]]:
        """The text regions in reading order, and the text regions the reading order leaves out."""
        every = list(self.root.iter(self.ns + "TextRegion"))
        order = next(self.root.iter(self.ns + "ReadingOrder"), None)
        if order is None:
            return every, []
        ids = Counter(_IDS(self.root))
        text_regions: dict[str, Any] = {}
        for region in every:
            text_regions.setdefault(region.get("id"), region)
        ordered: list[Any] = []
        for group in order:
            if isinstance(group.tag, str):
                ordered.extend(self._group(group, ids, text_regions))
        reached = {id(r) for r in ordered}
        return ordered, [r for r in every if id(r) not in reached]

    def _group(self, group: Any, ids: Counter, text_regions: dict[str, Any]) -> list[Any]:
        name = localname(group)
        children = [c for c in group if isinstance(c.tag, str) and localname(c) not in _METADATA]
        if name in _ORDERED:
            indexed = [c for c in children if c.get("index") is not None]
            children = sorted(indexed, key=lambda c: self._index(c))
        elif name not in _UNORDERED:
            raise OcrFormatError(self.path, "is not an OrderedGroup or UnorderedGroup of the reading order", group)
        regions = []
        for child in children:
            if localname(child) in _ORDERED + _UNORDERED:
                regions.extend(self._group(child, ids, text_regions))
                continue
            ref = child.get("regionRef")
            if ref is None:
                raise OcrFormatError(self.path, "reading order entry without a regionRef", child)
            if not ids[ref]:
                raise OcrFormatError(self.path, f"reading order names region {ref!r}, which is not in the file", child)
            if ids[ref] > 1:
                raise OcrFormatError(self.path, f"reading order names region {ref!r}, but {ids[ref]} elements "
                                                f"have that id", child)
            if ref in text_regions:  # a reference to another kind of region adds nothing
                regions.append(text_regions[ref])
        return regions

    def _index(self, child: Any) -> int:
        try:
            return int(child.get("index"))
        except ValueError:
            raise OcrFormatError(self.path, f"index={child.get('index')!r} is not an integer", child) from None

    # ------------------------------------------------------------------------------------- text
    def text_equiv(self, element: Any) -> tuple[str, Optional[float]]:
        """``element``'s chosen ``TextEquiv`` text (normalised) and confidence."""
        equivs = element.findall(self.ns + "TextEquiv")
        if not equivs:
            return "", None
        chosen = equivs[0] if len(equivs) == 1 else self._choose(equivs)
        confidence = finite_number(self.path, chosen, "conf", chosen.get("conf"))
        unicode = chosen.find(self.ns + "Unicode")
        if unicode is None:
            return "", confidence
        if len(unicode):
            raise OcrFormatError(self.path, "holds elements or comments; its text is ambiguous", unicode)
        return normalize_checked(self.path, unicode, unicode.text or ""), confidence

    def _choose(self, equivs: list[Any]) -> Any:
        """The lowest ``index``; else the highest ``conf``; else the first (the first on ties)."""
        for attribute, better in (("index", lambda a, b: a < b), ("conf", lambda a, b: a > b)):
            best, best_value = None, math.nan
            for equiv in equivs:
                value = finite_number(self.path, equiv, attribute, equiv.get(attribute))
                if value is not None and (best is None or better(value, best_value)):
                    best, best_value = equiv, value
            if best is not None:
                return best
        return equivs[0]

    def polygon(self, element: Any) -> Optional[tuple[tuple[float, float], ...]]:
        coords = element.find(self.ns + "Coords")
        text = coords.get("points") if coords is not None else None
        if text is None:
            return None
        try:
            points = tuple((float(x), float(y)) for x, y in (pair.split(",") for pair in text.split()))
        except ValueError:
            points = ()
        if not points or not all(math.isfinite(x) and math.isfinite(y) for x, y in points):
            raise OcrFormatError(self.path, f"points={text[:60]!r} is not a list of finite x,y pairs", coords)
        return points

    def segment(self, element: Any, level: str, text: str, confidence: Optional[float]) -> Segment:
        polygon = self.polygon(element)
        return Segment(element.get("id"), level, text, bounding_box(polygon) if polygon else None, polygon, confidence)

    def unit(self, element: Any, level: str) -> tuple[str, list[Segment]]:
        """The text of ``element`` (a region, line, word or glyph) read at ``self.level``, and
        the segments of ``self.level`` it holds."""
        if level == self.level:
            text, confidence = self.text_equiv(element)
            return text, [self.segment(element, level, text, confidence)]
        below = LEVELS[LEVELS.index(level) + 1]
        texts, segments = [], []
        for child in element.iterchildren(self.ns + _ELEMENT[below]):
            text, found = self.unit(child, below)
            texts.append(text)
            segments.extend(found)
        return _JOINER[below].join(texts), segments


def read_page(path: Any, root: Any, level: Optional[str]) -> OcrDocument:
    """The :class:`OcrDocument` of the PAGE document ``root`` read from ``path`` at ``level``
    (``None``: ``region``, dinglehopper's default)."""
    reader = _Reader(path, root, level or "region")
    ordered, left_out = reader.regions()
    texts, segments = [], []
    for region in ordered:
        text, found = reader.unit(region, "region")
        if text:
            texts.append(text)
            segments.extend(found)
    omitted = tuple(r.get("id") or f"line {r.sourceline}" for r in left_out if reader.unit(r, "region")[0])
    return OcrDocument(str(path), "page", "\n".join(texts), tuple(segments), reader.version, omitted)
