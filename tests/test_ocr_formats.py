"""The OCR format readers (scorekit.ocr.read, issue #32 §1) and ``scorekit ocr-extract``: the text
is dinglehopper 0.11's (its ``ocr_files.extract`` is the oracle) on PAGE-XML in four namespaces,
reading orders (nested, unordered, regions left out, references to non-text regions), nested
regions and tables, several TextEquivs, empty regions, combining characters, RTL text, ALTO v1-v4
with hyphenation, and UTF-8 text; random PAGE and ALTO documents (Hypothesis) as well. Values the
oracle does not give (word and glyph levels, segments, hOCR, errors) are written out by hand."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from dinglehopper.extracted_text import normalize_sbb
from dinglehopper.ocr_files import extract as dinglehopper_extract
from doc_examples import run_python_blocks
from hypothesis import given, settings
from hypothesis import strategies as st

import scorekit.ocr
from scorekit.cli import main
from scorekit.errors import InvalidValueError
from scorekit.ocr import OcrDocument, OcrFormatError, Segment, read
from scorekit.ocr.formats import detect, normalize_text
from scorekit.ocr.formats.normalization import EQUIVALENCES, LIGATURES

PAGE_NS = "http://schema.primaresearch.org/PAGE/gts/pagecontent/{}"
PAGE_DATES = ("2013-07-15", "2017-07-15", "2018-07-15", "2019-07-15")
ALTO_NS = {"1": "http://schema.ccs-gmbh.com/ALTO", "2": "http://www.loc.gov/standards/alto/ns-v2#",
           "3": "http://www.loc.gov/standards/alto/ns-v3#", "4": "http://www.loc.gov/standards/alto/ns-v4#"}


# --------------------------------------------------------------------------------------------- builders
def te(text, **attrs):
    """A TextEquiv holding ``text`` (``None``: a TextEquiv without Unicode)."""
    attributes = "".join(f" {k}={quoteattr(str(v))}" for k, v in attrs.items())
    unicode = "" if text is None else f"<Unicode>{escape(text)}</Unicode>"
    return f"<TextEquiv{attributes}>{unicode}</TextEquiv>"


def coords(x0, y0, x1, y1):
    return f'<Coords points="{x0},{y0} {x1},{y0} {x1},{y1} {x0},{y1}"/>'


def line(ident, *equivs, words=""):
    return f'<TextLine id="{ident}">{words}{"".join(equivs)}</TextLine>'


def region(ident, *content, tag="TextRegion"):
    return f'<{tag} id="{ident}">{"".join(content)}</{tag}>'


def page(*content, ro="", date="2019-07-15"):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<PcGts xmlns="{PAGE_NS.format(date)}">\n'
            f'<Page imageFilename="p.png" imageWidth="1000" imageHeight="1000">{ro}{"".join(content)}</Page></PcGts>\n')


def ordered(*children, ident="og"):
    return f'<OrderedGroup id="{ident}">{"".join(children)}</OrderedGroup>'


def unordered(*children, ident="ug", indexed=None):
    tag = "UnorderedGroupIndexed" if indexed is not None else "UnorderedGroup"
    index = f' index="{indexed}"' if indexed is not None else ""
    return f'<{tag} id="{ident}"{index}>{"".join(children)}</{tag}>'


def ref(ident, index=None):
    return f'<RegionRefIndexed index="{index}" regionRef="{ident}"/>' if index is not None \
        else f'<RegionRef regionRef="{ident}"/>'


def reading_order(group):
    return f"<ReadingOrder>{group}</ReadingOrder>"


def alto(blocks, version="4"):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<alto xmlns="{ALTO_NS[version]}"><Description>'
            f'<MeasurementUnit>pixel</MeasurementUnit></Description><Layout><Page ID="P1" WIDTH="1000" HEIGHT="1000">'
            f'<PrintSpace>{blocks}</PrintSpace></Page></Layout></alto>\n')


def string(content, ident=None, **attrs):
    attributes = "".join(f" {k}={quoteattr(str(v))}" for k, v in attrs.items())
    return f'<String{f" ID={quoteattr(ident)}" if ident else ""} CONTENT={quoteattr(content)}{attributes}/>'


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def oracle(path, level="region"):
    """dinglehopper 0.11's extracted text (plain text read as UTF-8, a byte-order mark dropped)."""
    return dinglehopper_extract(str(path), textequiv_level=level, plain_encoding="utf-8-sig").text


# ------------------------------------------------------------------------------------ parity fixtures
TWO_REGIONS = (region("r1", line("l1", te("Erste Zeile")), line("l2", te("zweite")), te("Erste Zeile\nzweite")),
               region("r2", line("l3", te("Ende.")), te("Ende.")))

FIXTURES = {
    **{f"page-{date}": page(*TWO_REGIONS, date=date) for date in PAGE_DATES},
    # nested ordered and unordered groups, indexes out of order, a reference to an image region,
    # a region the reading order leaves out
    "page-reading-order": page(
        region("a", te("alpha"), line("la", te("alpha line"))), region("b", te("beta"), line("lb", te("beta line"))),
        region("c", te("gamma"), line("lc", te("gamma line"))), region("d", te("delta"), line("ld", te("delta line"))),
        region("left", te("left out")), '<ImageRegion id="img"/>',
        ro=reading_order(ordered(ref("c", 2), ref("img", 1), ref("a", 10),
                                 unordered(ref("d"), ref("b"), ident="u", indexed=5),
                                 '<RegionRef regionRef="left"/>'))),
    "page-unordered-top": page(region("x", te("x text")), region("y", te("y text")),
                               ro=reading_order(unordered(ref("y"), ref("x")))),
    # nested text regions and table cells, no reading order: every TextRegion in document order
    "page-nested-table": page(
        region("outer", te("outer text"), line("lo", te("outer line")), region("inner", te("inner text"),
                                                                               line("li", te("inner line")))),
        region("t", region("cell1", te("cell one"), line("lc1", te("cell one line"))),
               region("cell2", te("cell two"), line("lc2", te("cell two line"))), tag="TableRegion")),
    # a reading order naming the table: its cells are not read (dinglehopper), and are listed as omitted
    "page-table-in-reading-order": page(
        region("p", te("para")), region("t", region("cell", te("cell text")), tag="TableRegion"),
        ro=reading_order(ordered(ref("p", 0), ref("t", 1)))),
    # several TextEquivs: lowest index, else highest conf, else the first; missing Unicode
    "page-textequivs": page(region(
        "r", te("by index 2", index=2), te("by index 1", index=1), te("no index"),
        line("l1", te("c low", conf=0.2), te("c high", conf=0.9), te("c high too", conf=0.9)),
        line("l2", te("first"), te("second")),
        line("l3", te(None)),
        line("l4"),
        line("l5", te("index wins", index=0), te("conf loses", conf=1)))),
    "page-empty-regions": page(
        region("e1"), region("e2", te("")), region("full", te("full"), line("l", te("line"))),
        region("e3", line("blank1", te("")), line("blank2", te(""))), region("e4", line("one", te(""))),
        region("ws", te("  spaced  "), line("ws-l", te(" spaced line ")))),
    "page-combining": page(region(
        "r", te("Cafe\u0301 \u1ec7 ﬁne ﬀ ſt a\u0364 u\u0364 == — ’s ⸗ \ueba7 नमस्ते 한국어 q\u0301"),
        line("l1", te("e\u0301\u0323 o\u0308\u0304 \U0001F469\u200d\U0001F4BB")),
        line("l2", te("\u0133 \ufb06 \uf50e")))),
    "page-rtl": page(
        region("he", te("שָׁלוֹם עולם 123"), line("he1", te("שָׁלוֹם עולם")), line("he2", te("\u200f123 ש"))),
        region("ar", te("مرحبا بالعالم"), line("ar1", te("مرحبا بالعالم")))),
    "page-markup-in-text": page(region("r", te('a < b & "c" > d'), line("l", te("x &amp; y")))),
    **{f"alto-v{v}": alto(
        '<TextBlock ID="b1"><TextLine ID="t1">' + string("Ver", "s1", SUBS_TYPE="HypPart1", SUBS_CONTENT="Verbindung")
        + '<HYP CONTENT="-"/></TextLine><TextLine ID="t2">'
        + string("bindung", "s2", SUBS_TYPE="HypPart2", SUBS_CONTENT="Verbindung") + '<SP/>' + string("ﬁx")
        + '<SP/>' + string("Cafe\u0301") + '</TextLine><TextLine ID="t3"/></TextBlock>'
        + '<ComposedBlock ID="c"><TextBlock ID="b2"><TextLine ID="t4">' + string("") + string("שלום")
        + '</TextLine></TextBlock></ComposedBlock>', v) for v in ALTO_NS},
    "text-bom-crlf": b"\xef\xbb\xbf  first line \r\nsecond\rthird\t\n\n  \nCafe\xcc\x81 \xef\xac\x81\n",
    "text-no-final-newline": "one\ntwo",
    "text-empty": "",
}


@pytest.mark.parametrize("level", ["region", "line"])
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_text_is_dinglehopper_s(tmp_path, name, level):
    path = write(tmp_path, name, FIXTURES[name])
    assert read(path, level=level).text == oracle(path, level)


EXPECTED = {  # by hand, from the documented rules
    ("page-reading-order", "region"): "gamma\ndelta\nbeta\nalpha",
    ("page-reading-order", "line"): "gamma line\ndelta line\nbeta line\nalpha line",
    ("page-unordered-top", "region"): "y text\nx text",
    ("page-nested-table", "region"): "outer text\ninner text\ncell one\ncell two",
    ("page-nested-table", "line"): "outer line\ninner line\ncell one line\ncell two line",
    ("page-table-in-reading-order", "region"): "para",
    ("page-textequivs", "region"): "by index 1",
    ("page-textequivs", "line"): "c high\nfirst\n\n\nindex wins",
    ("page-empty-regions", "region"): "full\n  spaced  ",
    ("page-empty-regions", "line"): "line\n\n\n spaced line ",
    ("page-combining", "line"): "\u1eb9\u0301 \u022b \U0001F469\u200d\U0001F4BB\nij st q\u0301",
    ("page-markup-in-text", "region"): 'a < b & "c" > d',
    ("alto-v3", "line"): "Ver\nbindung fix Caf\u00e9\n\n שלום",
    ("text-bom-crlf", "line"): "first line\nsecond\nthird\n\n\nCaf\u00e9 fi",
    ("text-no-final-newline", "line"): "one\ntwo",
    ("text-empty", "line"): "",
}


@pytest.mark.parametrize("name, level", sorted(EXPECTED))
def test_text_by_hand(tmp_path, name, level):
    assert read(write(tmp_path, name, FIXTURES[name]), level=level).text == EXPECTED[name, level]


def test_combining_and_ligatures_are_normalised_as_dinglehopper(tmp_path):
    text = read(write(tmp_path, "p.xml", FIXTURES["page-combining"])).text
    assert text.startswith("Caf\u00e9 \u1ec7 fine ff ſt \u00e4 \u00fc – – 's - ſſi ")
    assert normalize_text("ﬁ\u2014a\u0364") == "fi–ä"


def test_versions_formats_and_segments(tmp_path):
    for date in PAGE_DATES:
        doc = read(write(tmp_path, date, FIXTURES[f"page-{date}"]), level="line")
        assert (doc.format, doc.version, [s.id for s in doc.segments]) == ("page", date, ["l1", "l2", "l3"])
    for version in ALTO_NS:
        doc = read(write(tmp_path, version, FIXTURES[f"alto-v{version}"]), level="region")
        assert (doc.format, doc.version, [s.id for s in doc.segments]) == ("alto", version, ["b1", "b2"])
        assert [s.text for s in doc.segments] == ["Ver\nbindung fix Caf\u00e9\n", " שלום"]
    doc = read(write(tmp_path, "t.txt", FIXTURES["text-bom-crlf"]))
    assert (doc.format, doc.version, doc.segments[0]) == ("text", None, Segment("line 1", "line", "first line"))
    assert isinstance(doc, OcrDocument) and scorekit.ocr.OcrDocument is OcrDocument


def test_reading_order_omits_and_lists_left_out_regions(tmp_path):
    doc = read(write(tmp_path, "p.xml", FIXTURES["page-reading-order"]))
    assert [s.id for s in doc.segments] == ["c", "d", "b", "a"]
    assert doc.omitted == ("left",)
    assert read(write(tmp_path, "t.xml", FIXTURES["page-table-in-reading-order"])).omitted == ("cell",)
    assert read(write(tmp_path, "n.xml", FIXTURES["page-nested-table"])).omitted == ()


# ------------------------------------------------------------------------------------- word and glyph
WORDS_PAGE = page(region(
    "r", coords(0, 0, 500, 100), te("region text", conf=0.5),
    line("l1", te("line one"), words=(
        '<Word id="w1"><Coords points="10,10 60,12 58,40 12,38"/>'
        '<Glyph id="g1"><TextEquiv><Unicode>H</Unicode></TextEquiv></Glyph>'
        '<Glyph id="g2"><TextEquiv conf="0.25"><Unicode>i</Unicode></TextEquiv></Glyph>'
        + te("Hi", conf=0.75) + "</Word>"
        '<Word id="w2">' + coords(70, 10, 120, 40) + te("ﬁn") + "</Word>")),
    line("l2", te("second"), words='<Word id="w3">' + te("last") + "</Word>"),
    line("l3", te("no words"))),
    region("empty-words", line("l4", words='<Word id="w4">' + te("") + "</Word>")))


def test_page_word_and_glyph_levels(tmp_path):
    path = write(tmp_path, "w.xml", WORDS_PAGE)
    words = read(path, level="word")
    assert words.text == "Hi fin\nlast\n"
    assert words.segments[0] == Segment("w1", "word", "Hi", (10.0, 10.0, 60.0, 40.0),
                                        ((10.0, 10.0), (60.0, 12.0), (58.0, 40.0), (12.0, 38.0)), 0.75)
    assert [(s.id, s.text, s.box) for s in words.segments[1:]] == [
        ("w2", "fin", (70.0, 10.0, 120.0, 40.0)), ("w3", "last", None)]
    glyphs = read(path, level="glyph")
    assert glyphs.text == "Hi \n\n"
    assert [(s.id, s.text, s.confidence) for s in glyphs.segments] == [("g1", "H", None), ("g2", "i", 0.25)]
    regions = read(path)
    assert regions.text == "region text" and regions.segments[0].box == (0.0, 0.0, 500.0, 100.0)
    assert regions.segments[0].confidence == 0.5
    # the region and line levels are still dinglehopper's
    assert read(path, level="line").text == oracle(path, "line") == "line one\nsecond\nno words"


def test_alto_words_boxes_and_glyphs(tmp_path):
    doc = alto('<TextBlock ID="b"><TextLine ID="t" HPOS="1" VPOS="2" WIDTH="300" HEIGHT="20">'
               + string("Hallo", "s1", HPOS=10, VPOS=20, WIDTH=30, HEIGHT=40, WC="0.93")
               + '<SP/><String ID="s2" CONTENT="Welt" HPOS="50" VPOS="20" WIDTH="25" HEIGHT="40">'
               '<Glyph ID="g1" CONTENT="W" GC="0.5" HPOS="50" VPOS="20" WIDTH="5" HEIGHT="40"/></String>'
               "</TextLine></TextBlock>")
    path = write(tmp_path, "a.xml", doc)
    words = read(path, level="word")
    assert words.text == oracle(path) == "Hallo Welt"
    assert words.segments == (Segment("s1", "word", "Hallo", (10.0, 20.0, 40.0, 60.0), None, 0.93),
                              Segment("s2", "word", "Welt", (50.0, 20.0, 75.0, 60.0), None, None))
    assert read(path, level="glyph").segments == (Segment("g1", "glyph", "W", (50.0, 20.0, 55.0, 60.0), None, 0.5),)
    assert read(path).segments == (Segment("t", "line", "Hallo Welt", (1.0, 2.0, 301.0, 22.0)),)


# --------------------------------------------------------------------------------------------------- hOCR
HOCR_XHTML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
    "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
 <head><title></title><meta name="ocr-system" content="tesseract 5.3.0"/></head>
 <body>
  <div class="ocr_page" id="page_1" title="image &quot;p.png&quot;; bbox 0 0 1000 800; ppageno 0">
   <div class="ocr_carea" id="block_1_1" title="bbox 10 10 400 90">
    <p class="ocr_par" id="par_1_1" lang="eng" title="bbox 10 10 400 90">
     <span class="ocr_line" id="line_1_1" title="bbox 10 10 400 40; baseline 0 -5; x_size 30">
      <span class="ocrx_word" id="word_1_1" title="bbox 10 10 90 40; x_wconf 96">The</span>
      <span class="ocrx_word" id="word_1_2" title="bbox 100 10 200 40; x_wconf 87"><strong>ﬁne</strong></span>
      <span class="ocrx_word" id="word_1_3" title="bbox 210 10 220 40; x_wconf 10"> </span>
     </span>
     <span class="ocr_header" id="line_1_2" title="bbox 10 50 400 90">
      <span class="ocrx_word" id="word_1_4" title="bbox 10 50 200 90; x_wconf 91">Cafe&#x301;</span>
     </span>
    </p>
   </div>
   <div class="ocr_carea" id="block_1_2" title="bbox 10 100 400 140">
    <span class="ocr_line" id="line_1_3" title="bbox 10 100 400 140">loose   text</span>
   </div>
  </div>
 </body>
</html>
"""


def test_hocr_text_words_and_regions(tmp_path):
    path = write(tmp_path, "page.hocr", HOCR_XHTML)
    doc = read(path, level="word")
    assert (doc.format, doc.text) == ("hocr", "The fine\nCaf\u00e9\nloose text")
    assert doc.segments[:2] == (Segment("word_1_1", "word", "The", (10.0, 10.0, 90.0, 40.0), None, 0.96),
                                Segment("word_1_2", "word", "fine", (100.0, 10.0, 200.0, 40.0), None, 0.87))
    assert [s.id for s in doc.segments] == ["word_1_1", "word_1_2", "word_1_4"]
    assert [(s.id, s.text) for s in read(path).segments] == [
        ("line_1_1", "The fine"), ("line_1_2", "Caf\u00e9"), ("line_1_3", "loose text")]
    assert [(s.id, s.text, s.box) for s in read(path, level="region").segments] == [
        ("block_1_1", "The fine\nCaf\u00e9", (10.0, 10.0, 400.0, 90.0)),
        ("block_1_2", "loose text", (10.0, 100.0, 400.0, 140.0))]
    # the same page as HTML that is not well-formed XML (no closing tags for <p>, bare attributes)
    html = HOCR_XHTML.split("\n", 1)[1].replace("</p>", "").replace('xml:lang="en" ', "") \
        .replace("<body>", "<body hidden>")
    assert read(write(tmp_path, "page.html", html), level="word").text == doc.text


def test_hocr_glyphs_and_paragraphs_without_areas(tmp_path):
    path = write(tmp_path, "g.hocr", "<html><body><div class='ocr_page'><p class='ocr_par' id='p1' title='bbox 0 0 9 9'>"
                 "<span class='ocr_line' id='l1'><span class='ocrx_word' id='w1'>"
                 "<span class='ocrx_cinfo' id='c1' title='bbox 1 2 3 4; x_wconf 50'>O</span>"
                 "<span class='ocrx_cinfo' id='c2' title='bbox 3 2 5 4'>K</span></span></span></p></div></body></html>")
    assert read(path, level="glyph").segments == (Segment("c1", "glyph", "O", (1.0, 2.0, 3.0, 4.0), None, 0.5),
                                                  Segment("c2", "glyph", "K", (3.0, 2.0, 5.0, 4.0)))
    assert read(path, level="region").segments == (Segment("p1", "region", "OK", (0.0, 0.0, 9.0, 9.0)),)


# ------------------------------------------------------------------------------------------- detection
def test_detection_is_by_content_not_name(tmp_path):
    assert detect(write(tmp_path, "page.txt", FIXTURES["page-2013-07-15"])) == "page"
    assert detect(write(tmp_path, "alto.txt", FIXTURES["alto-v2"])) == "alto"
    assert detect(write(tmp_path, "hocr.xml", HOCR_XHTML)) == "hocr"
    assert detect(write(tmp_path, "text.xml", "3 < 4\n<3 hearts\n")) == "text"
    assert read(write(tmp_path, "forced.txt", "<b>bold</b>\n"), format="text").text == "<b>bold</b>"
    with pytest.raises(OcrFormatError, match="is page, not alto"):
        read(write(tmp_path, "p.xml", FIXTURES["page-rtl"]), format="alto")


# ---------------------------------------------------------------------------------------------- errors
BAD = {
    "malformed": ("<PcGts><Page>\n<TextRegion id='r'></Page>", r"malformed XML at line 2"),
    "unclosed-text-like-markup": ("<b>bold text without end\n", r"malformed XML at line"),
    "unknown-page-ns": (FIXTURES["page-2019-07-15"].replace("2019-07-15", "2099-01-01"),
                        r'line 2 <PcGts>: unknown PAGE namespace .*2099-01-01'),
    "page-no-ns": ('<PcGts><Page/></PcGts>', r"unknown PAGE namespace None"),
    "unknown-alto-ns": (FIXTURES["alto-v4"].replace("ns-v4#", "ns-v9#"), r"<alto>: unknown ALTO namespace"),
    "other-root": ('<?xml version="1.0"?><TEI><text/></TEI>', r"line 1 <TEI>: is neither PAGE-XML"),
    "html-not-hocr": ("<html><body><p>hello</p></body></html>", r"HTML without hOCR markup"),
    "ro-missing-region": (page(region("a", te("a")), ro=reading_order(ordered(ref("a", 0), ref("ghost", 1)))),
                          r'<RegionRefIndexed>: reading order names region .ghost., which is not in the file'),
    "ro-duplicate-id": (page(region("a", te("a")), region("a", te("b")), ro=reading_order(ordered(ref("a", 0)))),
                        r"2 elements have that id"),
    "ro-bad-index": (page(region("a", te("a")), ro=reading_order(ordered(ref("a", "first")))),
                     r"index='first' is not an integer"),
    "ro-bad-group": (page(region("a", te("a")), ro="<ReadingOrder><RegionRef regionRef='a'/></ReadingOrder>"),
                     r"<RegionRef>: is not an OrderedGroup or UnorderedGroup"),
    "bad-conf": (page(region("a", te("a", conf="high"))), r"<TextEquiv>: conf='high' is not a finite number"),
    "nan-index": (page(region("a", te("a", index="nan"), te("b", index=1))), r"index='nan' is not a finite"),
    "bad-points": (page(region("a", '<Coords points="1,2 3"/>', te("a"))), r"<Coords>: points='1,2 3' is not a list"),
    "markup-in-unicode": (page(region("a", "<TextEquiv><Unicode>a<!-- x -->b</Unicode></TextEquiv>")),
                          r"<Unicode>: holds elements or comments"),
    "unstable-normalisation": (page(region("r7", te("\ufb00\u0307"))), r"<Unicode>: text .* is not stable"),
    "alto-bad-box": (alto('<TextBlock><TextLine>' + string("a", "s", HPOS="x", VPOS=1, WIDTH=1, HEIGHT=1)
                          + "</TextLine></TextBlock>"), r'<String id="s">: HPOS=.x. is not a finite number'),
    "hocr-bad-bbox": (HOCR_XHTML.replace("bbox 10 10 90 40", "bbox 10 10"), r"bbox needs 4 numbers"),
    "latin-1-text": ("caf\u00e9\n".encode("latin-1"), r"is not UTF-8 text \(byte 3"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_unreadable_input_is_a_named_error(tmp_path, name):
    content, message = BAD[name]
    path = write(tmp_path, name, content)
    with pytest.raises(OcrFormatError, match=message) as caught:
        read(path, level="word" if name in ("hocr-bad-bbox", "alto-bad-box") else None)
    assert str(caught.value).startswith(f"{path}: ") and caught.value.path == str(path)
    assert isinstance(caught.value, InvalidValueError)


def test_bad_arguments(tmp_path):
    path = write(tmp_path, "t.txt", "x")
    with pytest.raises(InvalidValueError, match="level must be one of"):
        read(path, level="page")
    with pytest.raises(InvalidValueError, match="format must be one of"):
        read(path, format="pdf")
    with pytest.raises(OcrFormatError, match="is a folder, not a page file"):
        read(tmp_path, format="page")
    with pytest.raises(OcrFormatError, match="is a file; a suffix"):
        read(path, suffix=".txt")
    with pytest.raises(FileNotFoundError):
        read(tmp_path / "missing.xml")


# ----------------------------------------------------------------------------------------- line folders
def test_line_folder_reads_each_file_as_dinglehopper(tmp_path):
    folder = tmp_path / "gt"
    (folder / "sub").mkdir(parents=True)
    files = {"1.gt.txt": "eins \n", "11.gt.txt": "\ufeffelf ﬁ\r\n", "sub/2.gt.txt": "zwei\nzwei b\n",
             ".hidden.gt.txt": "no", "1.ocr.txt": "other side"}
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    doc = read(folder, suffix=".gt.txt")
    assert (doc.format, [s.id for s in doc.segments]) == ("line-folder", ["1", "11", "sub/2"])
    assert [s.text for s in doc.segments] == [oracle(folder / f"{s.id}.gt.txt") for s in doc.segments] \
        == ["eins", "elf fi", "zwei\nzwei b"]
    assert doc.text == "eins\nelf fi\nzwei\nzwei b" and detect(folder) == "line-folder"
    (folder / "1.ocr.txt").unlink()
    # the common suffix starts at a dot: ".gt.txt", not dinglehopper's "1.gt.txt" for 1 and 11
    assert [s.id for s in read(folder).segments] == ["1", "11", "sub/2"]


def test_line_folder_errors(tmp_path):
    with pytest.raises(OcrFormatError, match="holds no line files with a common suffix"):
        read(tmp_path)
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.md").write_text("b")
    with pytest.raises(OcrFormatError, match="holds no line files with a common suffix"):
        read(tmp_path)
    with pytest.raises(OcrFormatError, match="holds no line file ending in '.gt.txt'"):
        read(tmp_path, suffix=".gt.txt")
    (tmp_path / "c.txt").write_bytes(b"\xff")
    with pytest.raises(OcrFormatError, match=r"c.txt: is not UTF-8 text \(byte 0"):
        read(tmp_path, suffix=".txt")


# ------------------------------------------------------------------------------------------ ocr-extract
@pytest.mark.parametrize("name, level", [("page-reading-order", "region"), ("page-nested-table", "line"),
                                         ("alto-v3", "region"), ("text-bom-crlf", "region")])
def test_ocr_extract_prints_what_dinglehopper_extract_prints(tmp_path, capsys, name, level):
    path = write(tmp_path, name, FIXTURES[name])
    assert main(["ocr-extract", str(path), "--textequiv-level", level]) == 0
    out, err = capsys.readouterr()
    assert out == oracle(path, level) + "\n"
    assert err == ("scorekit: note: " + str(path) + ": the reading order leaves out text region(s) left; their "
                   "text is not extracted\n" if name == "page-reading-order" else "")


def test_ocr_extract_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    path = write(tmp_path, "bad.xml", BAD["ro-missing-region"][0])
    assert main(["ocr-extract", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"scorekit: error: {path}: line ")
    assert main(["ocr-extract", str(tmp_path / "missing")]) == 2
    assert "No such file" in capsys.readouterr().err
    assert main(["ocr-extract", str(path), "--textequiv-level", "page"]) == 2
    assert "invalid choice" in capsys.readouterr().err


# ------------------------------------------------------------------------------ random documents (Hypothesis)
ALPHABET = list("ab AZ09.,;-=—’ſ&<>\"'") + ["ﬁ", "ﬀ", "\u0301", "\u0364", "ö", "ש", "ل", "\u200f", "e\u0301", "\t"]
texts = st.lists(st.sampled_from(ALPHABET), max_size=8).map("".join)
maybe_number = st.one_of(st.none(), st.integers(-3, 5))
equivs = st.lists(st.tuples(st.one_of(st.none(), texts), maybe_number, maybe_number), max_size=3)


def equivs_xml(found):
    return "".join(te(text, **({"index": i} if i is not None else {}), **({"conf": c / 5} if c is not None else {}))
                   for text, i, c in found)


@st.composite
def page_documents(draw):
    regions = draw(st.lists(st.tuples(equivs, st.lists(equivs, max_size=3)), max_size=5))
    ids, body = [], []
    for i, (own, lines) in enumerate(regions):  # plain, in a table, nested in the previous region, or with an image
        xml = region(f"r{i}", equivs_xml(own), *(line(f"r{i}l{j}", equivs_xml(e)) for j, e in enumerate(lines)))
        ids.append(f"r{i}")
        where = draw(st.sampled_from(["plain", "table", "nested", "image"]))
        if where == "table":
            xml, _ = region(f"t{i}", xml, tag="TableRegion"), ids.append(f"t{i}")
        elif where == "image":
            xml, _ = xml + f'<ImageRegion id="img{i}"/>', ids.append(f"img{i}")
        if where == "nested" and body and body[-1].startswith("<TextRegion") and body[-1].endswith("</TextRegion>"):
            body[-1] = body[-1][: -len("</TextRegion>")] + xml + "</TextRegion>"
        else:
            body.append(xml)
    ro = ""
    if ids and draw(st.booleans()):
        chosen = draw(st.permutations(ids))[: draw(st.integers(0, len(ids)))]

        def group(members, depth):
            children, i = [], 0
            while i < len(members):
                take = draw(st.integers(1, len(members) - i))
                part = members[i:i + take]
                index = draw(st.integers(0, 9))
                if depth < 2 and take > 1 and draw(st.booleans()):
                    kind = draw(st.sampled_from(["OrderedGroupIndexed", "UnorderedGroupIndexed"]))
                    children.append(f'<{kind} id="g{depth}_{i}" index="{index}">{group(part, depth + 1)}</{kind}>')
                else:
                    children.extend(ref(m, draw(st.integers(0, 9))) for m in part)
                i += take
            return "".join(children)

        ro = reading_order(ordered(group(chosen, 0)) if draw(st.booleans()) else
                           f'<UnorderedGroup id="top">{group(chosen, 0).replace("RegionRefIndexed", "RegionRef")}'
                           "</UnorderedGroup>")
    return page(*body, ro=ro, date=draw(st.sampled_from(PAGE_DATES)))


@st.composite
def alto_documents(draw):
    blocks = draw(st.lists(st.lists(st.lists(st.tuples(texts, st.sampled_from(["", "<SP/>", '<HYP CONTENT="-"/>'])),
                                             max_size=4), max_size=3), max_size=3))
    xml = "".join("<TextBlock>" + "".join("<TextLine>" + "".join(string(t) + extra for t, extra in words)
                                         + "</TextLine>" for words in lines) + "</TextBlock>" for lines in blocks)
    return alto(xml, draw(st.sampled_from(sorted(ALTO_NS))))


def same_as_dinglehopper(content, level):
    """``read(...).text`` equals dinglehopper's extraction, or both refuse the document."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "doc.xml"
        path.write_text(content, encoding="utf-8")
        try:
            expected = oracle(path, level)
        except ValueError:  # dinglehopper refuses a text that normalisation leaves unstable
            with pytest.raises(OcrFormatError, match="not stable"):
                read(path, level=level)
            return
        assert read(path, level=level).text == expected


@settings(max_examples=150)
@given(page_documents(), st.sampled_from(["region", "line"]))
def test_random_page_documents_read_as_dinglehopper(content, level):
    same_as_dinglehopper(content, level)


@settings(max_examples=100)
@given(alto_documents(), st.sampled_from(["region", "line"]))
def test_random_alto_documents_read_as_dinglehopper(content, level):
    same_as_dinglehopper(content, level)


REPLACED = sorted({c for old, new in LIGATURES + EQUIVALENCES for c in old + new})


@settings(max_examples=300)
@given(st.lists(st.sampled_from(REPLACED + ["a", "o", "u", "Q", " ", "\u0301", "\u0323", "e"]), max_size=12).map("".join))
def test_normalisation_is_dinglehopper_s(text):
    assert normalize_text(text) == normalize_sbb(text)


@settings(max_examples=100)
@given(st.lists(st.tuples(texts, st.sampled_from(["\n", "\r\n", "\r"])), max_size=6), st.booleans())
def test_random_text_files_read_as_dinglehopper(lines, bom):
    data = ("\ufeff" if bom else "") + "".join(text + end for text, end in lines)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "doc.txt"
        path.write_bytes(data.encode("utf-8"))
        if data.lstrip("\ufeff \t\r\n").startswith("<"):
            return  # markup-like text is read as XML by design (docs/decisions.md#ocr-readers)
        try:
            expected = oracle(path, "line")
        except ValueError:
            with pytest.raises(OcrFormatError, match="not stable"):
                read(path)
            return
        assert read(path).text == expected


def test_reading_loads_only_the_readers(tmp_path):
    # importing scorekit.ocr used to load the table metrics and numpy (0.3 s and more per process)
    path = write(tmp_path, "p.xml", FIXTURES["page-rtl"])
    code = ("import sys; from scorekit.ocr import read; read(sys.argv[1]); "
            "print(sorted(m for m in sys.modules if m.startswith(('numpy', 'scorekit.metrics', 'scorekit.ocr.b', "
            "'scorekit.ocr.t', 'scorekit.ocr.p'))))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


# ------------------------------------------------------------------------------------------------- docs
def test_documentation_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_python_blocks("ocr-formats.md", min_blocks=2,
                      optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert os.listdir(tmp_path)
