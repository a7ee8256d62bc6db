"""Parsing OCR XML (and hOCR's HTML) as untrusted input.

The parsers never resolve entities, load a DTD or any other external resource, or touch the
network (no XXE: every load libxml2 asks for is answered with nothing). A document that declares
entities, or uses a named entity other than XML's five (``&amp;`` …), is refused: an unexpanded
entity would silently cut a text short, an expanded one can be a "billion laughs" bomb or the
content of a local file. Nesting deeper than :data:`MAX_DEPTH` and libxml2's size limits
(``huge_tree`` off) are refused. Every refusal is an :class:`OcrFormatError` naming the file.

XML files are streamed (:func:`stream_xml`): parsed a chunk at a time, each element handed to a
reader and freed once read, so that reading a file takes the memory of what is extracted from it,
not of its tree. hOCR is read from its whole tree: XHTML kept whole as it is streamed, HTML (hOCR
that is not well-formed XML) parsed whole (:func:`parse_html`).
"""

from __future__ import annotations

import codecs
import re
from typing import Any, Callable, Collection, Iterator, Optional

from lxml import etree

from scorekit.ocr.formats.model import OcrFormatError

__all__ = ["MAX_DEPTH", "CHUNK_BYTES", "HEAD_BYTES", "iterparse", "stream_xml", "parse_html", "localname",
           "looks_like_markup", "looks_like_html"]

#: Elements nested deeper than this are refused (PAGE, ALTO and hOCR need fewer than 20 levels).
MAX_DEPTH = 128
#: The bytes of a file parsed at a time.
CHUNK_BYTES = 1 << 20
#: The bytes at the start of a file that :func:`looks_like_markup` and :func:`looks_like_html` look at.
HEAD_BYTES = 4096 + 3

_XML_OPTIONS = dict(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                    huge_tree=False, collect_ids=False)
_NAMED_ENTITY = re.compile(rb"&(?!(?:amp|lt|gt|quot|apos);)([A-Za-z_:][-\w.:]*);")
_NAME_PART = re.compile(rb"[-\w.:]*")
_NO_ELEMENT = "{urn:scorekit:no-element}none"  # a tag no element has (lxml reads no tags as every tag)
_CHARSET = re.compile(rb"""<meta[^>]*charset\s*=\s*["']?([-\w.:]+)""", re.I)
_MARKUP_START = re.compile(rb"\s*<(\?xml|!|[A-Za-z_])")
_HTML_START = re.compile(rb"\s*(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*<(!doctype\s+html|html)", re.I | re.S)


def _head(data: bytes) -> bytes:
    """The first bytes of ``data`` as ASCII-compatible bytes (a UTF-8 BOM dropped, UTF-16 decoded)."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):len(bom) + 4096].decode(codec, "ignore").encode("utf-8")
    return data[:4096]


def looks_like_markup(data: bytes) -> bool:
    """Whether ``data`` starts (after a BOM and white space) with an XML declaration, a
    ``<!…>`` declaration or comment, or a start tag: then it is read as XML or HTML, never as text."""
    return _MARKUP_START.match(_head(data)) is not None


def looks_like_html(data: bytes) -> bool:
    """Whether ``data`` starts with an HTML doctype or ``<html>`` tag (after an XML declaration)."""
    return _HTML_START.match(_head(data)) is not None


def localname(element: Any) -> str:
    """An element's tag without its namespace (``""`` for comments and processing instructions)."""
    tag = element.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


class _NoFetch(etree.Resolver):
    """Answers every DTD or entity load libxml2 asks for with an empty document."""

    def resolve(self, url: Any, public_id: Any, context: Any) -> Any:
        return self.resolve_string("", context)


def _check_depth(path: Any, root: Any) -> None:
    """Refuses a tree with an element below :data:`MAX_DEPTH` levels (one XPath, run in libxml2)."""
    too_deep = root.xpath("/*" * (MAX_DEPTH + 1))
    if too_deep:
        raise OcrFormatError(path, f"elements nested deeper than {MAX_DEPTH} levels are refused", too_deep[0])


def _refusal(path: Any, exc: Any) -> OcrFormatError:
    """The :class:`OcrFormatError` for libxml2's syntax error ``exc``."""
    message = str(exc.msg or exc)
    if "depth" in message.lower():
        return OcrFormatError(path, f"elements nested deeper than {MAX_DEPTH} levels are refused (line {exc.lineno})")
    if "entit" in message.lower():
        return OcrFormatError(path, f"XML entities are refused (line {exc.lineno}: {message})")
    return OcrFormatError(path, f"malformed XML at line {exc.lineno}: {message}")


class _EntityScan:
    """Finds the first named entity other than XML's five in a file read chunk by chunk (a
    reference cut by a chunk boundary included; UTF-16 decoded as it comes)."""

    def __init__(self, path: Any, handle: Any) -> None:
        self.path, self.carry = path, b""
        codec = {b"\xff\xfe": "utf-16-le", b"<\x00": "utf-16-le", b"\xfe\xff": "utf-16-be", b"\x00<": "utf-16-be"}
        found = codec.get(handle.read(2))
        handle.seek(0)
        self.decoder = codecs.getincrementaldecoder(found)("ignore") if found else None

    def check(self, chunk: bytes, final: bool = False) -> None:
        """Refuses ``chunk`` (the next bytes of the file; ``final``: the last) if it completes an entity."""
        if self.decoder is not None:
            chunk = self.decoder.decode(chunk, final).encode("utf-8")
        text = self.carry + chunk if self.carry else chunk
        entity = _NAMED_ENTITY.search(text)
        if entity is not None:
            raise OcrFormatError(self.path, f"uses the XML entity &{entity.group(1).decode('utf-8', 'replace')}; "
                                            "(entities other than &amp; &lt; &gt; &quot; &apos; are refused: none "
                                            "is expanded or fetched)")
        last = text.rfind(b"&")  # a reference the next chunk may complete is carried over
        self.carry = text[last:] if last >= 0 and _NAME_PART.fullmatch(text, last + 1) else b""

    def check_rest(self, handle: Any) -> None:
        """Refuses the rest of the file ``handle`` if it uses an entity."""
        for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
            self.check(chunk)
        self.check(b"", final=True)


def _parser(kind: Any = etree.XMLPullParser, **options: Any) -> Any:
    """A parser (by default a pull parser) with the module's safe options (and ``options``)."""
    parser = kind(**_XML_OPTIONS, **options)
    parser.resolvers.add(_NoFetch())
    return parser


class _NoTree:
    """A parser target that builds nothing."""

    def close(self) -> None:
        return None


def _malformed(path: Any, handle: Any, pulled: Any) -> OcrFormatError:
    """The refusal of a file the pull parser found malformed (its error ``pulled``), worded as a
    parse of the whole file words it: libxml2's pull parser words some errors at the end of a
    file differently, or names another, so the file is parsed again from its start (building
    nothing) for the error."""
    handle.seek(0)
    try:
        etree.parse(handle, _parser(etree.XMLParser, target=_NoTree()))
    except etree.XMLSyntaxError as exc:
        return _refusal(path, exc)
    return _refusal(path, pulled)  # pragma: no cover (both parsers find a malformed file malformed)


def iterparse(path: Any, handle: Any, tags: Optional[Collection[str]]) -> Iterator[tuple[str, Any]]:
    """The ``("start", element)`` and ``("end", element)`` events of the elements with ``tags``
    (``None``: every element) of the XML file open as ``handle`` (read from ``path``), parsed
    safely (see the module) :data:`CHUNK_BYTES` at a time, and last ``("close", root)``.
    Refusals are :class:`OcrFormatError`, as for a document parsed whole: a file using an entity
    anywhere is refused as such even when it is malformed before that; entity declarations are
    refused once the file is parsed."""
    parser = _parser(events=("start", "end"), tag=_NO_ELEMENT if tags is not None and not tags else tags)
    scan = _EntityScan(path, handle)
    chunk = handle.read(CHUNK_BYTES)
    while True:
        scan.check(chunk, final=not chunk)
        try:
            root = parser.feed(chunk) if chunk else parser.close()
        except etree.XMLSyntaxError as exc:
            scan.check_rest(handle)
            raise _malformed(path, handle, exc) from None
        yield from parser.read_events()
        if not chunk:
            break
        chunk = handle.read(CHUNK_BYTES)
    if root is None:
        raise OcrFormatError(path, "malformed XML: no root element")
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise OcrFormatError(path, "declares XML entities in its DOCTYPE, which are refused (no entity is "
                                   "expanded or fetched)")
    yield "close", root


def _root(handle: Any) -> Any:
    """The root element of the XML file open as ``handle`` as far as its start tag (``None`` when
    the file is malformed before it); ``handle`` is then back at its start."""
    parser = _parser(events=("start",))
    try:
        for chunk in iter(lambda: handle.read(HEAD_BYTES), b""):
            parser.feed(chunk)
            for _, element in parser.read_events():
                return element
    except etree.XMLSyntaxError:
        for _, element in parser.read_events():  # a start tag parsed before the error
            return element
    finally:
        handle.seek(0)
    return None


_DEEPER: dict[int, Any] = {}


def _holds_levels(element: Any, levels: int) -> bool:
    """Whether ``element`` holds elements ``levels`` levels below it (one XPath, run in libxml2)."""
    if levels not in _DEEPER:
        _DEEPER[levels] = etree.XPath("*/" * (levels - 1) + "*")
    return bool(_DEEPER[levels](element))


def _too_deep(element: Any) -> bool:
    """Whether ``element`` or an element in it lies deeper than :data:`MAX_DEPTH` levels."""
    below = MAX_DEPTH - sum(1 for _ in element.iterancestors())  # elements may lie below - 1 levels under it
    if below <= 0:
        return True
    if below > 8 and not _holds_levels(element, 8):  # the usual shallow element: a short path answers
        return False
    return _holds_levels(element, below)


def _first_too_deep(path: Any, handle: Any) -> OcrFormatError:
    """The refusal naming the first element of the file deeper than :data:`MAX_DEPTH` levels."""
    depth = 0
    handle.seek(0)
    for event, element in iterparse(path, handle, None):
        depth += {"start": 1, "end": -1}.get(event, 0)
        if depth > MAX_DEPTH:
            return OcrFormatError(path, f"elements nested deeper than {MAX_DEPTH} levels are refused", element)
        if event == "end":  # freed, with the siblings before it
            element.clear()
            parent = element.getparent()
            while parent is not None and element.getprevious() is not None:
                del parent[0]
    raise AssertionError("no element is too deep")  # pragma: no cover (called when one is)


def stream_xml(path: Any, handle: Any, choose: Callable[[Any], Any]) -> Any:
    """Reads the XML file open as ``handle`` (from ``path``) with the reader ``choose(root)``
    returns (``root``: the root element, its start tag only), and returns that reader once the
    file is parsed.

    The reader is handed the start and end of every element with one of its ``tags``
    (``start(element)``, ``end(element)``, in document order). Once it has seen the end of an
    element whose tag is in its ``releases``, the element and the siblings before it back to the
    first one whose tag is in its ``kept`` leave the tree (the reader's ``leaving`` is called
    with each first), except inside an element with a kept tag; the rest leaves with its
    parent, or at the end, when ``leaving`` is called with the root. So the tree holds the open
    elements, what they keep and what the reader has not released, never the whole document.
    Nesting deeper than :data:`MAX_DEPTH` levels is refused after the whole file is parsed, as
    the first such element."""
    root = _root(handle)
    reader: Any = choose(root) if root is not None else None
    tags, releases, kept = (reader.tags, reader.releases, tuple(reader.kept)) if reader else ((), (), ())
    too_deep = False
    for event, element in iterparse(path, handle, tags):
        if event == "start":
            reader.start(element)
        elif event == "end":
            reader.end(element)
            if (releases is None or element.tag in releases) \
                    and not (kept and next(element.iterancestors(*kept), None) is not None):
                too_deep = _release(element, reader, kept, releases) or too_deep
        elif reader is None:  # pragma: no cover (iterparse refuses a file without a root element)
            raise OcrFormatError(path, "malformed XML: no root element")
        else:  # "close": what is left of the tree
            if too_deep or _too_deep(element):
                raise _first_too_deep(path, handle)
            reader.leaving(element)
    return reader


def _release(element: Any, reader: Any, kept: tuple[str, ...], releases: Any) -> bool:
    """Takes the ended ``element`` and the siblings before it back to the first kept one out of
    the tree (see :func:`stream_xml`); whether one of them held an element too deep. A sibling
    the reader released is already empty (and was checked then)."""
    leaving = [element]
    previous = element.getprevious()
    while previous is not None and previous.tag not in kept:
        leaving.append(previous)
        previous = previous.getprevious()
    too_deep = False
    for gone in leaving:
        if gone is element or (releases is not None and gone.tag not in releases):
            too_deep = too_deep or _too_deep(gone)
            reader.leaving(gone)
    parent = element.getparent()
    for gone in leaving[1:]:
        parent.remove(gone)
    element.clear()
    return too_deep


def parse_html(path: Any, data: bytes) -> Any:
    """The root element of the HTML document ``data`` (hOCR that is not well-formed XML), parsed
    without network access and with the same depth bound (libxml2's HTML parser cuts a tree at 256
    levels without an error; :data:`MAX_DEPTH` is below that, so such a tree is refused). The
    encoding is the one a ``<meta … charset>`` declares, else UTF-8 (not HTML's Latin-1 default:
    hOCR engines write UTF-8); bytes that are not in that encoding are an error."""
    from lxml import html

    declared = _CHARSET.search(_head(data))
    encoding = declared.group(1).decode("ascii") if declared else "utf-8"
    if data.startswith(b"\xef\xbb\xbf"):
        data, encoding = data[3:], "utf-8"
    try:
        data.decode(encoding)
    except LookupError:
        raise OcrFormatError(path, f"declares the unknown charset {encoding!r}") from None
    except UnicodeDecodeError as exc:
        raise OcrFormatError(path, f"is not {encoding} (byte {exc.start})") from None
    parser = html.HTMLParser(no_network=True, huge_tree=False, encoding=encoding)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise OcrFormatError(path, f"malformed HTML at line {exc.lineno}: {exc.msg or exc}") from None
    if root is None:
        raise OcrFormatError(path, "malformed HTML: no root element")
    _check_depth(path, root)
    return root
