"""Parsing OCR XML (and hOCR's HTML) as untrusted input.

The parsers never resolve entities, load a DTD or any other external resource, or touch the
network (no XXE: every load libxml2 asks for is answered with nothing). A document that declares
entities, or uses a named entity other than XML's five (``&amp;`` …), is refused: an unexpanded
entity would silently cut a text short, an expanded one can be a "billion laughs" bomb or the
content of a local file. Nesting deeper than :data:`MAX_DEPTH` and libxml2's size limits
(``huge_tree`` off) are refused. Every refusal is an :class:`OcrFormatError` naming the file.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from scorekit.ocr.formats.model import OcrFormatError

__all__ = ["MAX_DEPTH", "parse_xml", "parse_html", "localname", "looks_like_markup", "looks_like_html"]

#: Elements nested deeper than this are refused (PAGE, ALTO and hOCR need fewer than 20 levels).
MAX_DEPTH = 128

_XML_OPTIONS = dict(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                    huge_tree=False, collect_ids=False)
_NAMED_ENTITY = re.compile(rb"&(?!(?:amp|lt|gt|quot|apos);)([A-Za-z_:][-\w.:]*);")
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


def _decoded(data: bytes) -> bytes:
    """``data`` as ASCII-compatible bytes, for scanning (UTF-16, with or without a BOM, decoded)."""
    if data[:2] in (b"\xff\xfe", b"<\x00"):
        return data.decode("utf-16-le", "ignore").encode("utf-8")
    if data[:2] in (b"\xfe\xff", b"\x00<"):
        return data.decode("utf-16-be", "ignore").encode("utf-8")
    return data


def _check_depth(path: Any, root: Any) -> None:
    """Refuses a tree with an element below :data:`MAX_DEPTH` levels (one XPath, run in libxml2)."""
    too_deep = root.xpath("/*" * (MAX_DEPTH + 1))
    if too_deep:
        raise OcrFormatError(path, f"elements nested deeper than {MAX_DEPTH} levels are refused", too_deep[0])


def parse_xml(path: Any, data: bytes) -> Any:
    """The root element of the XML document ``data`` (read from ``path``), parsed safely (see the
    module); malformed or refused XML is an :class:`OcrFormatError`."""
    entity = _NAMED_ENTITY.search(_decoded(data))
    if entity is not None:
        raise OcrFormatError(path, f"uses the XML entity &{entity.group(1).decode('utf-8', 'replace')}; (entities "
                                   "other than &amp; &lt; &gt; &quot; &apos; are refused: none is expanded or fetched)")
    parser = etree.XMLParser(**_XML_OPTIONS)
    parser.resolvers.add(_NoFetch())
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        message = str(exc.msg or exc)
        if "depth" in message.lower():
            raise OcrFormatError(path, f"elements nested deeper than {MAX_DEPTH} levels are refused "
                                       f"(line {exc.lineno})") from None
        if "entit" in message.lower():
            raise OcrFormatError(path, f"XML entities are refused (line {exc.lineno}: {message})") from None
        raise OcrFormatError(path, f"malformed XML at line {exc.lineno}: {message}") from None
    if root is None:
        raise OcrFormatError(path, "malformed XML: no root element")
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise OcrFormatError(path, "declares XML entities in its DOCTYPE, which are refused (no entity is "
                                   "expanded or fetched)")
    _check_depth(path, root)
    return root


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
