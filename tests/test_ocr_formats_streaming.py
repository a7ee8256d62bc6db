"""Big PAGE-XML and ALTO files are streamed (issue #32 §1): read a megabyte at a time, each line and
region freed once read. The documents are those a whole-tree read gives (dinglehopper's extraction
and a tree-based XPath reading of the segments are the oracles, on files of several chunks), the
same for every chunk size (every document and every refusal of the reader tests, cut anywhere), the
refusals of untrusted XML hold across chunks, and the tree holds a chunk, the open elements and
the reading order, never the document: the memory a file takes is that of what is read from it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from test_ocr_formats import BAD, FIXTURES, HOCR_XHTML, alto_documents, oracle, page_documents, write

import scorekit.ocr.formats.model as model
import scorekit.ocr.formats.xml as xml
from scorekit.ocr import OcrFormatError, read
from scorekit.ocr.formats import normalize_text
from scorekit.ocr.formats.xml import MAX_DEPTH

PAGE_NS = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"
ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"
WORDS = ("Die", "Überschrift", "ﬁnden", "daß", "—", "’s", "a\u0364", "e\u0301", "שלום", "&amp;", "&lt;x&gt;")


def big_page(regions, lines=6, words=5):
    """A PAGE file of ``regions`` regions (a reading order first, in reverse, leaving one out; every
    fifth region holding a nested one; several TextEquivs), of ``lines`` lines of ``words`` words."""
    def word(r, l, w):
        x = 10 * w
        return (f'<Word id="w{r}_{l}_{w}"><Coords points="{x},{l} {x + 9},{l} {x + 9},{l + 5}"/>'
                f'<TextEquiv conf="0.{(r + w) % 9 + 1}"><Unicode>{WORDS[(r + l + w) % len(WORDS)]}</Unicode>'
                "</TextEquiv></Word>")

    def region(r, inner="", suffix=""):
        body = "".join(f'<TextLine id="l{r}{suffix}_{l}"><Coords points="0,{l} 99,{l} 99,{l + 5}"/>'
                       + "".join(word(r, l, w) for w in range(words))
                       + f"<TextEquiv index=\"2\"><Unicode>not {l}</Unicode></TextEquiv>"
                       + f"<TextEquiv index=\"1\"><Unicode>line {r} {l} ﬁ</Unicode></TextEquiv></TextLine>"
                       for l in range(lines))
        return (f'<TextRegion id="r{r}{suffix}"><Coords points="0,0 9,0 9,9"/>{body}{inner}'
                f"<TextEquiv><Unicode>region {r}{suffix}</Unicode></TextEquiv></TextRegion>")

    refs = "".join(f'<RegionRefIndexed index="{i}" regionRef="r{r}"/>' for i, r in enumerate(range(regions - 1, 0, -1)))
    body = "".join(region(r, region(r, suffix="n") if r % 5 == 0 else "") for r in range(regions))
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<PcGts xmlns="{PAGE_NS}"><Page imageFilename="p.png" '
            f'imageWidth="9" imageHeight="9"><ReadingOrder><OrderedGroup id="ro">{refs}</OrderedGroup></ReadingOrder>'
            f'<ImageRegion id="img"/>{body}</Page></PcGts>\n')


def big_alto(blocks, lines=6, words=5):
    """An ALTO file of ``blocks`` blocks (every fourth in a ComposedBlock) of lines of strings with boxes."""
    def line(b, l):
        strings = "<SP/>".join(f'<String ID="s{b}_{l}_{w}" CONTENT="{WORDS[(b + l + w) % len(WORDS)]}" '
                               f'HPOS="{w}" VPOS="{l}" WIDTH="9" HEIGHT="5" WC="0.{w + 1}"/>' for w in range(words))
        return f'<TextLine ID="t{b}_{l}" HPOS="0" VPOS="{l}" WIDTH="99" HEIGHT="5">{strings}<HYP CONTENT="-"/></TextLine>'

    def block(b):
        text = f'<TextBlock ID="b{b}">' + "".join(line(b, l) for l in range(lines)) + "</TextBlock>"
        return f'<ComposedBlock ID="c{b}">{text}</ComposedBlock>' if b % 4 == 0 else text

    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<alto xmlns="{ALTO_NS}"><Layout><Page ID="p"><PrintSpace>'
            + "".join(block(b) for b in range(blocks)) + "</PrintSpace></Page></Layout></alto>\n")


def tree_segments(path, level):
    """The segments of ``level`` as a whole-tree XPath reading finds them: (id, text, box, confidence)."""
    root = etree.parse(str(path)).getroot()
    if root.tag == f"{{{ALTO_NS}}}alto":
        tag = {"word": "String", "line": "TextLine"}[level]
        found = []
        for e in root.iter(f"{{{ALTO_NS}}}{tag}"):
            x, y, w, h = (float(e.get(a)) for a in ("HPOS", "VPOS", "WIDTH", "HEIGHT"))
            text = normalize_text(e.get("CONTENT") if level == "word" else
                                  " ".join(s.get("CONTENT") for s in e.iterfind(f"{{{ALTO_NS}}}String")))
            found.append((e.get("ID"), text, (x, y, x + w, y + h), float(e.get("WC")) if level == "word" else None))
        return found
    ns = {"p": PAGE_NS}
    order = [r.get("regionRef") for r in root.iterfind(".//p:RegionRefIndexed", ns)]
    regions = {r.get("id"): r for r in root.iterfind(".//p:TextRegion", ns)}
    found = []
    for ident in order:
        for word in regions[ident].xpath("p:TextLine/p:Word", namespaces=ns):
            points = [tuple(map(float, p.split(","))) for p in word.find("p:Coords", ns).get("points").split()]
            xs, ys = [x for x, _ in points], [y for _, y in points]
            found.append((word.get("id"), normalize_text(word.findtext("p:TextEquiv/p:Unicode", namespaces=ns)),
                          (min(xs), min(ys), max(xs), max(ys)), float(word.find("p:TextEquiv", ns).get("conf"))))
    return found


@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    (folder / "page.xml").write_text(big_page(60, lines=60), encoding="utf-8")  # dinglehopper is slow on many regions
    (folder / "alto.xml").write_text(big_alto(700), encoding="utf-8")
    return folder


@pytest.mark.parametrize("name", ["page.xml", "alto.xml"])
def test_big_files_read_as_a_whole_tree_reads_them(big_files, name):
    path = big_files / name
    assert path.stat().st_size > 2 * xml.CHUNK_BYTES  # several chunks, the reading order in the first only
    for level in ("region", "line"):
        assert read(path, level=level).text == oracle(path, level)
    words = read(path, level="word")
    assert [(s.id, s.text, s.box, s.confidence) for s in words.segments] == tree_segments(path, "word")
    assert len(words.segments) > 15_000
    if name == "page.xml":  # left out of the reading order (r0 and the nested regions), listed
        assert words.omitted == ("r0", "r0n", *(f"r{r}n" for r in range(5, 60, 5)))
    else:
        lines = read(path, level="line").segments
        assert [(s.id, s.text, s.box, s.confidence) for s in lines] == tree_segments(path, "line")


IRREGULAR_ALTO = {  # words or glyphs outside a line, lines in lines: not ALTO's schema, read in document order
    "string-in-block": '<TextBlock ID="b"><String ID="s0" CONTENT="a"/><TextLine ID="t"><String ID="s1" CONTENT="b"/>'
                       '</TextLine><String ID="s2" CONTENT="c"/></TextBlock>',
    "string-before-block": '<String ID="s0" CONTENT="a"/><TextBlock ID="b"><TextLine ID="t"><String ID="s1" CONTENT="b">'
                           '<Glyph ID="g1" CONTENT="b"/></String></TextLine></TextBlock><Glyph ID="g2" CONTENT="z"/>',
    "nested-lines": '<TextBlock><TextLine ID="t1"><String ID="s1" CONTENT="a"><Glyph ID="g1" CONTENT="a"/>'
                    '<TextLine ID="t2"><String ID="s2" CONTENT="b"><Glyph ID="g2" CONTENT="b"/></String></TextLine>'
                    '</String><String ID="s3" CONTENT="c"/></TextLine></TextBlock>',
    "regular": '<TextBlock><TextLine ID="t1"><String ID="s1" CONTENT="a"><Glyph ID="g1" CONTENT="a"/></String><SP/>'
               '<String ID="s2" CONTENT="b"/></TextLine></TextBlock>',
}


@pytest.mark.parametrize("name", sorted(IRREGULAR_ALTO))
@pytest.mark.parametrize("level, tag", [("word", "String"), ("glyph", "Glyph")])
def test_alto_words_and_glyphs_anywhere_are_read_in_document_order(tmp_path, monkeypatch, name, level, tag):
    path = write(tmp_path, "a.xml", f'<alto xmlns="{ALTO_NS}"><Layout><Page><PrintSpace>{IRREGULAR_ALTO[name]}'
                                    "</PrintSpace></Page></Layout></alto>")
    streams = []
    stream = xml.stream_xml
    monkeypatch.setattr(xml, "stream_xml", lambda *args: streams.append(1) or stream(*args))
    document = read(path, level=level)
    tree = etree.parse(str(path))
    assert [(s.id, s.text) for s in document.segments] == [(e.get("ID"), e.get("CONTENT"))
                                                           for e in tree.iter(f"{{{ALTO_NS}}}{tag}")]
    assert document.text == oracle(path, "line")
    line = f"{{{ALTO_NS}}}TextLine"
    irregular = any(next(e.iterancestors(line), None) is None for e in tree.iter(f"{{{ALTO_NS}}}{tag}")) or any(
        next(e.iterancestors(line), None) is not None for e in tree.iter(line))
    assert len(streams) == 1 + irregular and (name != "regular" or not irregular)  # a regular file is read once


def test_what_a_line_reads_stays_when_an_element_inside_it_is_freed(tmp_path):
    # found by comparing with the whole-tree reader on random nestings: a region or block inside a
    # line, freed when it ends, took the words before it out of the line
    words = '<Word id="w{0}"><TextEquiv><Unicode>w{0}</Unicode></TextEquiv></Word>'
    inner = '<TextRegion id="inner"><TextEquiv><Unicode>in</Unicode></TextEquiv></TextRegion>'
    page_path = write(tmp_path, "p.xml", page(f'<TextRegion id="r"><TextLine id="l">{words.format(1)}{inner}'
                                              f'{words.format(2)}</TextLine></TextRegion>'))
    assert read(page_path, level="word").text == "w1 w2"
    alto_path = write(tmp_path, "a.xml", f'<alto xmlns="{ALTO_NS}"><TextBlock><TextLine><String CONTENT="a"/>'
                                         '<TextBlock><TextLine><String CONTENT="b"/></TextLine></TextBlock>'
                                         '<String CONTENT="c"/></TextLine></TextBlock></alto>')
    assert read(alto_path).text == oracle(alto_path, "line") == "a c\nb"


def outcome(path, level):
    """The document read, or the refusal's message."""
    try:
        return read(path, level=level)
    except OcrFormatError as error:
        return str(error)


CASES = {**{f"fixture-{k}": v for k, v in FIXTURES.items() if not k.startswith("text")},
         **{f"bad-{k}": v[0] for k, v in BAD.items() if k != "latin-1-text"}, "hocr": HOCR_XHTML,
         "entity": '<?xml version="1.0"?>\n<alto><TextLine>&amp;&lt;&unknown;</TextLine></alto>',
         "utf-16": FIXTURES["page-rtl"].replace('encoding="UTF-8"', 'encoding="UTF-16"')}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_chunk_size_reads_the_same(tmp_path, monkeypatch, name):
    content = CASES[name]
    path = write(tmp_path, name, content.encode("utf-16") if name == "utf-16" else content)
    whole = {level: outcome(path, level) for level in ("region", "line", "word", "glyph")}
    for size in (1, 2, 3, 5, 16, 61):
        monkeypatch.setattr(xml, "CHUNK_BYTES", size)
        assert {level: outcome(path, level) for level in whole} == whole, size


@settings(max_examples=60)
@given(st.one_of(page_documents(), alto_documents()), st.integers(1, 40), st.sampled_from(["region", "line", "word"]))
def test_random_documents_read_the_same_in_any_chunks(tmp_path_factory, content, size, level):
    path = tmp_path_factory.mktemp("chunks") / "doc.xml"
    path.write_text(content, encoding="utf-8")
    whole = outcome(path, level)
    original = xml.CHUNK_BYTES
    xml.CHUNK_BYTES = size
    try:
        assert outcome(path, level) == whole
    finally:
        xml.CHUNK_BYTES = original


MARKUP = list('<>/="&;! ?xaPcGtsltoTextRegionUnicodeLineEquiv\n') + ["&e;", "&amp;", "<!ENTITY e 'x'>", "<!DOCTYPE x ["]


@settings(max_examples=200)
@given(st.one_of(st.binary(max_size=200).map(lambda b: b"<" + b),
                 st.lists(st.sampled_from(MARKUP), max_size=80)
                 .map(lambda t: (f'<PcGts xmlns="{PAGE_NS}"><Page>' + "".join(t)).encode()),
                 st.lists(st.sampled_from(MARKUP), max_size=80).map(lambda t: (f'<alto xmlns="{ALTO_NS}">'
                                                                               + "".join(t)).encode())),
       st.integers(1, 30))
def test_any_bytes_give_the_same_document_or_error_in_any_chunks(tmp_path_factory, data, size):
    path = tmp_path_factory.mktemp("fuzz") / "f"
    path.write_bytes(data)
    whole = outcome(path, "line")
    original = xml.CHUNK_BYTES
    xml.CHUNK_BYTES = size
    try:
        assert outcome(path, "line") == whole
    finally:
        xml.CHUNK_BYTES = original


# ------------------------------------------------------------------------------- untrusted input, streamed
FILL = "<!--fill-->"


def padded(document, size=3 * 1024 * 1024):
    """``document`` with ``size`` bytes of text regions in place of its mark :data:`FILL` (so that
    what follows is chunks away from what comes before)."""
    filler = "".join(f'<TextRegion id="f{i}"><TextEquiv><Unicode>{"x" * 200}</Unicode></TextEquiv></TextRegion>'
                     for i in range(size // 260))
    return document.replace(FILL, filler)


def page(inner, doctype=""):
    return f'<?xml version="1.0"?>\n{doctype}<PcGts xmlns="{PAGE_NS}"><Page>{inner}</Page></PcGts>\n'


def test_an_entity_far_into_the_file_is_refused_before_a_syntax_error_or_a_bad_namespace(tmp_path):
    # malformed in the first chunk, an entity megabytes later: as in a whole-tree read, the entity
    # is what is refused
    path = tmp_path / "late.xml"
    path.write_text(padded(page(f'<TextRegion id="r"><Bad></TextRegion>{FILL}&e;')))
    with pytest.raises(OcrFormatError, match="uses the XML entity &e;"):
        read(path)
    path.write_text(padded(page(f"{FILL}&e;")).replace(PAGE_NS, PAGE_NS + "x"))
    with pytest.raises(OcrFormatError, match="uses the XML entity &e;"):
        read(path)
    path.write_text(padded(page(f'<TextRegion id="r"><Bad></TextRegion>{FILL}')))
    with pytest.raises(OcrFormatError, match="malformed XML at line 2: Opening and ending tag mismatch: Bad"):
        read(path)


MALFORMED = {  # found by comparing with the whole-tree reader: libxml2's pull parser words these otherwise
    "entity-name-not-ascii": f'<PcGts xmlns="{PAGE_NS}"><Page>a&iRLU\ufb01;<TextRegion></Page>&b',
    "end-in-start-tag": f'<PcGts xmlns="{PAGE_NS}"><Page>\n<\ufb01v',
    "end-in-attribute": f'<alto xmlns="{ALTO_NS}"><String CONTENT="a',
    "end-in-comment": f'<alto xmlns="{ALTO_NS}"><!-- a',
    "too-deep-for-libxml2": "<alto>" + "<a>" * 300,
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
@pytest.mark.parametrize("size", [1, 7, None])
def test_malformed_files_are_refused_as_a_whole_parse_refuses_them(tmp_path, monkeypatch, name, size):
    data = MALFORMED[name].encode("utf-8")
    with pytest.raises(etree.XMLSyntaxError) as parsed:
        etree.fromstring(data, etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True))
    message = parsed.value.msg
    expected = (f"elements nested deeper than {MAX_DEPTH} levels are refused (line {parsed.value.lineno})"
                if "depth" in message else f"XML entities are refused (line {parsed.value.lineno}: {message})"
                if "Entity" in message else f"malformed XML at line {parsed.value.lineno}: {message}")
    if size:
        monkeypatch.setattr(xml, "CHUNK_BYTES", size)
    path = write(tmp_path, "bad.xml", data)
    with pytest.raises(OcrFormatError) as caught:
        read(path)
    assert str(caught.value) == f"{path}: {expected}"


def test_billion_laughs_and_entity_declarations_are_refused_at_any_size(tmp_path):
    laughs = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    path = tmp_path / "bomb.xml"
    path.write_text(padded(page(f"{FILL}<TextRegion id='r'><TextEquiv><Unicode>&l9;</Unicode></TextEquiv>"
                                "</TextRegion>", f"<!DOCTYPE x [{laughs}]>")))
    with pytest.raises(OcrFormatError, match="uses the XML entity &l0;"):
        read(path)
    path.write_text(padded(page(FILL, '<!DOCTYPE x [<!ENTITY unused "x">]>')))
    with pytest.raises(OcrFormatError, match="declares XML entities in its DOCTYPE"):
        read(path)


def first_too_deep(path):
    """The first element deeper than MAX_DEPTH levels, by a whole-tree XPath (None: none)."""
    found = etree.parse(str(path), etree.XMLParser(huge_tree=True)).getroot().xpath("/*" * (MAX_DEPTH + 1))
    return f"line {found[0].sourceline} <{etree.QName(found[0]).localname}>" if found else None


@pytest.mark.parametrize("where", ["line", "reading-order", "page", "second-region"])
@pytest.mark.parametrize("extra", [0, 1, 2])
def test_depth_is_bounded_exactly_wherever_the_deep_element_is(tmp_path, where, extra):
    # PcGts, Page, TextRegion, TextLine: 4 levels above the nested elements of a line
    above = {"line": 4, "reading-order": 3, "page": 2, "second-region": 4}[where]
    n = MAX_DEPTH + extra - above
    nest = "\n".join(["<X>"] * n) + "</X>" * n
    region = '<TextRegion id="r{0}"><TextLine id="l{0}">{1}<TextEquiv><Unicode>t</Unicode></TextEquiv></TextLine>' \
             '<TextEquiv><Unicode>t</Unicode></TextEquiv></TextRegion>'
    inner = {"line": region.format(1, nest),
             "reading-order": f'<ReadingOrder>{nest.replace("X", "UnorderedGroup")}</ReadingOrder>{region.format(1, "")}',
             "page": region.format(1, "") + nest,
             "second-region": region.format(1, "") + FILL + region.format(2, nest.replace("X", "Y"))}[where]
    path = tmp_path / "deep.xml"
    path.write_text(padded(page(inner), size=300_000))
    expected = first_too_deep(path)
    if expected is None:
        assert extra == 0
        read(path, level="line")
    else:
        with pytest.raises(OcrFormatError, match=f"{expected}: elements nested deeper than {MAX_DEPTH} levels"):
            read(path, level="line")


# ------------------------------------------------------------------------------------------- bounded memory
@pytest.mark.parametrize("kind, level", [("page", "region"), ("page", "word"), ("alto", "line"), ("alto", "glyph")])
def test_the_tree_holds_a_chunk_and_the_reading_order_never_the_document(tmp_path, monkeypatch, kind, level):
    path = tmp_path / "doc.xml"
    path.write_text(big_page(300) if kind == "page" else big_alto(300), encoding="utf-8")
    total = sum(1 for _ in etree.parse(str(path)).iter())
    held = []
    release = xml._release

    def counting(element, *args):
        held.append(sum(1 for _ in element.getroottree().iter()))
        return release(element, *args)

    monkeypatch.setattr(xml, "CHUNK_BYTES", 4096)  # the elements of a chunk not read yet count too
    monkeypatch.setattr(xml, "_release", counting)
    document = read(path, level=level)
    if level == "word":
        assert [(s.id, s.text, s.box, s.confidence) for s in document.segments] == tree_segments(path, "word")
    else:
        assert document.text == oracle(path, level if kind == "page" else "line")
    assert total > 20_000 and len(held) > 1000
    # what is held: the open elements, the reading order (its 300 entries), kept children, one chunk
    assert max(held) < (300 + 200 if kind == "page" else 200), (max(held), total)


def test_a_big_file_is_read_in_the_memory_of_what_it_holds(tmp_path):
    """Peak RSS (VmHWM) of a child reading a 40 MB PAGE file at region level (a few kilobytes of text): the
    whole-tree read took about 500 MB; streamed, the growth is that of one chunk's tree."""
    path = tmp_path / "big.xml"
    with open(path, "w", encoding="utf-8") as out:
        document = big_page(40, lines=50, words=8)
        head, _, tail = document.partition("</Page>")
        out.write(head)
        region = head[head.index('<TextRegion id="r1">'):head.index('<TextRegion id="r2">')]
        for copy in range(40_000_000 // len(region)):
            out.write(region.replace('id="r1"', f'id="x{copy}"').replace('"l1_', f'"x{copy}l'))
        out.write("</Page>" + tail)
    code = textwrap.dedent("""
        import sys
        from scorekit.ocr import read

        def status(key):  # this process's own (ru_maxrss would carry the forking pytest's over)
            return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key))

        base = status("VmRSS:")
        document = read(sys.argv[1], level="region")
        print(len(document.text), (status("VmHWM:") - base) // 1024)
    """)
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    characters, growth_mb = map(int, done.stdout.split())
    assert characters == len("\n".join(f"region {r}" for r in range(39, 0, -1)))
    assert growth_mb < 60, growth_mb


def test_only_files_read_whole_are_bounded_in_size(tmp_path, monkeypatch):
    monkeypatch.setattr(model, "MAX_FILE_BYTES", 100)
    page_path = write(tmp_path, "p.xml", FIXTURES["page-2019-07-15"])
    alto_path = write(tmp_path, "a.xml", FIXTURES["alto-v4"])
    assert page_path.stat().st_size > 100 and read(page_path).text == oracle(page_path)
    assert alto_path.stat().st_size > 100 and read(alto_path).text == oracle(alto_path)
    hocr = write(tmp_path, "h.hocr", HOCR_XHTML)
    with pytest.raises(OcrFormatError, match="is larger than 100 bytes"):
        read(hocr)
