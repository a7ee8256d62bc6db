"""OCR files are untrusted input (issue #32 §1): no external entity or DTD is read from disk or the
network (XXE), entity-expansion bombs and entity declarations are refused, nesting depth is
bounded, and random bytes give a document or a named error, never another exception. Every
refusal is an OcrFormatError naming the file."""

from __future__ import annotations

import http.server
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit.ocr import OcrDocument, OcrFormatError, read
from scorekit.ocr.formats.xml import MAX_DEPTH

SECRET = "TOP-SECRET-CONTENT"
PAGE_NS = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"
ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"


def page_with(text, doctype=""):
    return (f'<?xml version="1.0"?>\n{doctype}\n<PcGts xmlns="{PAGE_NS}"><Page><TextRegion id="r"><TextEquiv>'
            f"<Unicode>{text}</Unicode></TextEquiv></TextRegion></Page></PcGts>\n")


def alto_with(content, doctype=""):
    return (f'<?xml version="1.0"?>\n{doctype}\n<alto xmlns="{ALTO_NS}"><Layout><Page><PrintSpace><TextBlock>'
            f'<TextLine><String CONTENT="{content}"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>\n')


@pytest.fixture
def secret(tmp_path):
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "evil.dtd").write_text(f'<!ENTITY e "{SECRET}">')
    return tmp_path


def refused(path, message):
    with pytest.raises(OcrFormatError, match=message) as caught:
        read(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("build", [page_with, alto_with])
def test_external_entity_is_not_read(secret, build):
    doctype = f'<!DOCTYPE x [<!ENTITY e SYSTEM "file://{secret}/secret.txt">]>'
    path = secret / "xxe.xml"
    path.write_text(build("a&e;b", doctype))
    refused(path, "uses the XML entity &e;")


@pytest.mark.parametrize("build", [page_with, alto_with])
def test_entities_of_an_external_dtd_are_not_read(secret, build):
    # libxml2 would otherwise load evil.dtd to expand &e; in an attribute (ALTO's CONTENT)
    path = secret / "dtd.xml"
    path.write_text(build("a&e;b", f'<!DOCTYPE x SYSTEM "file://{secret}/evil.dtd">'))
    refused(path, "uses the XML entity &e;")


@pytest.mark.parametrize("build", [page_with, alto_with])
def test_external_dtd_is_not_loaded(tmp_path, build):
    # a broken DTD would stop the parse if it were loaded
    (tmp_path / "broken.dtd").write_text("<!ELEMENT broken (((\n<!ENTITY")
    path = tmp_path / "doc.xml"
    path.write_text(build("kept", f'<!DOCTYPE x SYSTEM "file://{tmp_path}/broken.dtd">'))
    assert read(path).text == "kept"


def test_parameter_entity_is_neither_fetched_nor_accepted(secret):
    path = secret / "param.xml"
    path.write_text(page_with("text", f'<!DOCTYPE x [<!ENTITY % p SYSTEM "file://{secret}/evil.dtd"> %p;]>'))
    refused(path, "declares XML entities")


def test_hocr_entities_are_html_s_never_external(secret):
    # not XML that scorekit accepts, so read as HTML: HTML's own entities only, nothing fetched
    path = secret / "page.hocr"
    path.write_text(f'<!DOCTYPE html [<!ENTITY e SYSTEM "file://{secret}/secret.txt">]><html><body>'
                    "<div class='ocr_page'><span class='ocr_line'><span class='ocrx_word'>a&e;b</span>"
                    "<span class='ocrx_word'>c&nbsp;d&amp;</span></span></div></body></html>")
    document = read(path)
    assert document.format == "hocr" and document.text == "a&e;b c d&"


def test_internal_entity_declaration_is_refused(tmp_path):
    path = tmp_path / "internal.xml"
    path.write_text(page_with("plain text", '<!DOCTYPE x [<!ENTITY unused "x">]>'))
    refused(path, "declares XML entities in its DOCTYPE")


def test_billion_laughs_is_refused(tmp_path):
    entities = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    path = tmp_path / "bomb.xml"
    path.write_text(page_with("&l9;", f"<!DOCTYPE x [{entities}]>"))
    refused(path, "XML entit")
    path.write_text(page_with("no reference", f"<!DOCTYPE x [{entities}]>"))
    refused(path, "XML entit")


def test_no_network_fetch(tmp_path):
    requests = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            body = b'<!ENTITY e "FETCHED">'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/evil.dtd"
        path = tmp_path / "net.xml"
        path.write_text(alto_with("plain", f'<!DOCTYPE x SYSTEM "{url}">'))
        assert read(path).text == "plain"  # an external DTD that is not needed is not loaded
        path.write_text(alto_with("a&e;b", f'<!DOCTYPE x SYSTEM "{url}">'))
        refused(path, "uses the XML entity &e;")
        path.write_text(page_with("t", f'<!DOCTYPE x [<!ENTITY % p SYSTEM "{url}"> %p;]>'))
        refused(path, "declares XML entities")
    finally:
        server.shutdown()
        server.server_close()
    assert requests == []


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 300, 5000])
def test_nesting_depth_is_bounded(tmp_path, depth):
    path = tmp_path / "deep.xml"
    inner = "<TextRegion>" * depth + "</TextRegion>" * depth
    path.write_text(f'<PcGts xmlns="{PAGE_NS}"><Page>{inner}</Page></PcGts>')
    refused(path, f"nested deeper than {MAX_DEPTH} levels")


def test_nesting_depth_is_bounded_in_html(tmp_path):
    path = tmp_path / "deep.html"
    path.write_text("<html><body><div class='ocr_page'>" + "<div>" * 400 + "x" + "</div>" * 400 + "</body></html>")
    refused(path, f"nested deeper than {MAX_DEPTH} levels")


def test_depth_within_the_bound_is_read(tmp_path):
    path = tmp_path / "ok.xml"
    groups = '<UnorderedGroup id="u">' * 40 + '<RegionRef regionRef="r"/>' + "</UnorderedGroup>" * 40
    path.write_text(page_with("deep order").replace("<Page>", f"<Page><ReadingOrder>{groups}</ReadingOrder>"))
    assert read(path).text == "deep order"


def test_file_size_is_bounded(tmp_path, monkeypatch):
    import scorekit.ocr.formats.model as model

    path = tmp_path / "big.txt"
    path.write_text("x" * 101)
    monkeypatch.setattr(model, "MAX_FILE_BYTES", 100)
    refused(path, "is larger than 100 bytes")
    path.write_text("x" * 100)
    assert read(path).text == "x" * 100


@settings(max_examples=300)
@given(st.one_of(st.binary(max_size=300),
                 st.text(alphabet=st.sampled_from(list('<>/="&;! ?xaPcGtsltoTextRegionUnicode\n')), max_size=200)
                 .map(lambda t: ("<PcGts" + t).encode())))
def test_any_bytes_give_a_document_or_a_named_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "f"
    path.write_bytes(data)
    try:
        document = read(path)
    except OcrFormatError as exc:
        assert str(exc).startswith(f"{path}: ")
    else:
        assert isinstance(document, OcrDocument) and isinstance(document.text, str)
