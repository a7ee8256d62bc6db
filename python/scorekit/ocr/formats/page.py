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
from typing import Any, NamedTuple, Optional, Union

from lxml import etree

from scorekit.ocr.formats.model import (LEVELS, OcrDocument, OcrFormatError, Segment, bounding_box,
                                        describe_element, finite_number)
from scorekit.ocr.formats.normalization import normalize_checked
from scorekit.ocr.formats.xml import localname

__all__ = ["NAMESPACES", "PageReader"]

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
#: The kinds of region of PAGE 2013 to 2019 (each leaves the tree once read, with what it holds).
_REGIONS = ("TextRegion", "ImageRegion", "LineDrawingRegion", "GraphicRegion", "TableRegion", "ChartRegion",
            "MapRegion", "SeparatorRegion", "MathsRegion", "ChemRegion", "MusicRegion", "AdvertRegion",
            "NoiseRegion", "UnknownRegion", "CustomRegion")
#: The ``id`` attributes' values in an element and the elements it holds (plain strings: faster).
_IDS = etree.XPath("descendant-or-self::*/@id", smart_strings=False)
#: What a region or line reads as: its text and segments, or why it cannot be read.
Result = Union[tuple[str, list[Segment]], OcrFormatError]


class _Entry(NamedTuple):
    """An element of the reading order, kept once the element itself is freed: its local name,
    attributes, where it is (for errors) and its child elements."""

    name: str
    attributes: dict[str, str]
    where: str
    children: tuple["_Entry", ...]


def _entry(element: Any) -> _Entry:
    return _Entry(localname(element), dict(element.attrib), describe_element(element),
                  tuple(_entry(child) for child in element if isinstance(child.tag, str)))


class _Region:
    """A ``TextRegion`` met in the file: its id, line and, once it has ended, what it reads as."""

    __slots__ = ("id", "line", "result")

    def __init__(self, element: Any) -> None:
        self.id, self.line = element.get("id"), element.sourceline
        self.result: Result = OcrFormatError("", "not read")  # what it reads as, set at its end


class PageReader:
    """Reads one PAGE document at one level as :func:`~scorekit.ocr.formats.xml.stream_xml` hands
    it over (module docs); :meth:`document` gives the :class:`OcrDocument`."""

    format = "page"

    def __init__(self, path: Any, root: Any, level: Optional[str], release_lines: bool = True) -> None:
        self.path, self.level = path, level or "region"
        namespace = root.tag.partition("}")[0].lstrip("{") if root.tag.startswith("{") else None
        self.error = None if namespace in NAMESPACES else OcrFormatError(
            path, f"unknown PAGE namespace {namespace!r} (read: {', '.join(sorted(NAMESPACES.values()))})", root)
        self.version = NAMESPACES.get(namespace or "")
        self.ns = ns = "{" + str(namespace) + "}"
        # freed once read: every region, and each text line too when ``release_lines`` (big files)
        self.releases = frozenset(ns + name for name in _REGIONS + (("TextLine",) if release_lines else ()))
        read_lines = release_lines or self.level != "region"
        self.tags = sorted(self.releases | {ns + "ReadingOrder"} | ({ns + "TextLine"} if read_lines else set()))
        # what a unit reads of its children (words and glyphs are read from their line's subtree)
        self.kept = frozenset(ns + name for name in ("TextEquiv", "Coords", "ReadingOrder", "Word", "Glyph"))
        self.regions: list[_Region] = []   # every TextRegion, in document order
        self.open_regions: list[tuple[_Region, list[Result]]] = []  # with the results of their lines
        self.ids: Counter = Counter()  # the ids in the file: once the reading order is read, those it names
        self.named: Optional[set[str]] = None  # the ids the reading order names
        self.order_element: Any = None
        self.order: Optional[_Entry] = None

    def start(self, element: Any) -> None:
        if element.tag == self.ns + "TextRegion":
            region = _Region(element)
            self.regions.append(region)
            self.open_regions.append((region, []))
        elif element.tag == self.ns + "ReadingOrder" and self.order_element is None:
            self.order_element = element

    def end(self, element: Any) -> None:
        if self.error is not None:
            return
        if element.tag == self.ns + "TextRegion":
            region, lines = self.open_regions.pop()
            region.result = self.result(element, "region") if self.level == "region" else _joined(lines, "\n")
        elif element.tag == self.ns + "TextLine":
            if self.level != "region" and element.getparent().tag == self.ns + "TextRegion":
                self.open_regions[-1][1].append(self.result(element, "line"))
        elif element is self.order_element:
            self.order = _entry(element)
            self.named = {entry.attributes["regionRef"] for entry in _entries(self.order)
                          if "regionRef" in entry.attributes}
            self.ids = Counter({ident: n for ident, n in self.ids.items() if ident in self.named})

    def leaving(self, element: Any) -> None:
        """Counts the ids in ``element``, which leaves the tree (those the reading order names, once read)."""
        for ident in _IDS(element):
            if self.named is None or ident in self.named:
                self.ids[ident] += 1

    def result(self, element: Any, level: str) -> Result:
        """What ``element`` reads as at ``self.level`` (its error, if it cannot be read)."""
        try:
            return self.unit(element, level)
        except OcrFormatError as error:
            return error

    # ----------------------------------------------------------------------------- reading order
    def ordered_regions(self) -> tuple[list[_Region], list[_Region]]:
        """The text regions in reading order, and the text regions the reading order leaves out."""
        if self.order is None:
            return self.regions, []
        text_regions: dict[Optional[str], _Region] = {}
        for region in self.regions:
            text_regions.setdefault(region.id, region)
        ordered: list[_Region] = []
        for group in self.order.children:
            ordered.extend(self._group(group, text_regions))
        reached = {id(r) for r in ordered}
        return ordered, [r for r in self.regions if id(r) not in reached]

    def _group(self, group: _Entry, text_regions: dict[Optional[str], _Region]) -> list[_Region]:
        children = [c for c in group.children if c.name not in _METADATA]
        if group.name in _ORDERED:
            indexed = [c for c in children if c.attributes.get("index") is not None]
            children = sorted(indexed, key=lambda c: self._index(c))
        elif group.name not in _UNORDERED:
            raise OcrFormatError(self.path, "is not an OrderedGroup or UnorderedGroup of the reading order", group.where)
        regions = []
        for child in children:
            if child.name in _ORDERED + _UNORDERED:
                regions.extend(self._group(child, text_regions))
                continue
            ref = child.attributes.get("regionRef")
            if ref is None:
                raise OcrFormatError(self.path, "reading order entry without a regionRef", child.where)
            if not self.ids[ref]:
                raise OcrFormatError(self.path, f"reading order names region {ref!r}, which is not in the file",
                                     child.where)
            if self.ids[ref] > 1:
                raise OcrFormatError(self.path, f"reading order names region {ref!r}, but {self.ids[ref]} elements "
                                                f"have that id", child.where)
            if ref in text_regions:  # a reference to another kind of region adds nothing
                regions.append(text_regions[ref])
        return regions

    def _index(self, child: _Entry) -> int:
        try:
            return int(child.attributes["index"])
        except ValueError:
            raise OcrFormatError(self.path, f"index={child.attributes['index']!r} is not an integer",
                                 child.where) from None

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

    def document(self) -> OcrDocument:
        """The document read (module docs); what cannot be read raises its error."""
        if self.error is not None:
            raise self.error
        ordered, left_out = self.ordered_regions()
        texts, segments = [], []
        for region in ordered:
            result = region.result
            if isinstance(result, OcrFormatError):
                raise result
            text, found = result
            if text:
                texts.append(text)
                segments.extend(found)
        omitted = tuple(r.id or f"line {r.line}" for r in left_out if _has_text(r))
        return OcrDocument(str(self.path), "page", "\n".join(texts), tuple(segments), self.version, omitted)


def _joined(results: list[Result], joiner: str) -> Result:
    """The results of a region's lines joined, or the first one's error."""
    for result in results:
        if isinstance(result, OcrFormatError):
            return result
    return joiner.join(text for text, _ in results), [s for _, found in results for s in found]  # type: ignore[misc]


def _entries(entry: _Entry) -> Any:
    """``entry`` and every entry below it."""
    yield entry
    for child in entry.children:
        yield from _entries(child)


def _has_text(region: _Region) -> bool:
    """Whether a region the reading order leaves out holds text. Its text is not part of the
    document, so what would make it unreadable (text that normalisation leaves unstable, bad
    coordinates) is not an error here, as in dinglehopper, which never reads it: it is listed."""
    result = region.result
    return isinstance(result, OcrFormatError) or bool(result[0])
