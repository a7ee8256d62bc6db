"""The page image with the ground-truth boxes drawn over it, coloured by region CER
(``scorekit.report.overlay.image_overlay`` and ``ocr_pages.evaluation.html.page_overlay``), in the report
of ``ocr-pages-measure --page-image``: the image embedded as a data URI, every label escaped, the
colours those of the hand-computed CERs, and in headless Chromium the image and the boxes drawn
under the page's strict CSP with no request leaving the page.
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from scorekit import report
from scorekit.errors import InputTooLargeError, InvalidValueError
from scorekit.ocr_pages.box_grouping.group import load_predicted_rows
from scorekit.ocr_pages.box_grouping.loading import annotation_boxes_from_records
from scorekit.ocr_pages.evaluation import measure_accuracy
from scorekit.ocr_pages.evaluation.html import page_overlay
from scorekit.ocr_pages.evaluation.prediction import evaluate_rows
from scorekit.report.overlay import OverlayShape, image_overlay, image_size, value_colour
from test_ocr_pages_formats import BOXES, write_csv
from test_report_browser import _png_rows, _problems, _run, chromium  # noqa: F401  (chromium: fixture)

HOSTILE = "<script>alert(1)</script>\"' &amp;"
BLUE = (0, 0, 255)


def solid_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A PNG of one colour, written here byte by byte (no imaging library)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def png_pixels(png: bytes) -> np.ndarray:
    """The RGB pixels of an 8-bit RGB or RGBA PNG (the screenshot), unfiltered here."""
    width, height, depth, colour = struct.unpack(">IIBB", png[16:26])
    assert depth == 8 and colour in (2, 6)
    channels = 3 if colour == 2 else 4
    raw = _png_rows(png)
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.int64)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], np.frombuffer(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)], np.uint8)
        line = line.astype(np.int64)
        row = np.zeros(stride, dtype=np.int64)
        for x in range(stride):
            a = row[x - channels] if x >= channels else 0
            b, c = prev[x], (prev[x - channels] if x >= channels else 0)
            if kind == 0:
                pred = 0
            elif kind == 1:
                pred = a
            elif kind == 2:
                pred = b
            elif kind == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            row[x] = (line[x] + pred) & 0xFF
        out[y], prev = row, row
    return out.reshape(height, width, channels)[:, :, :3]


def _page(filters=(), boxes=BOXES, tmp_path=None):
    rows, dropped = load_predicted_rows(write_csv(tmp_path / "p.csv"), "word")
    boxes = annotation_boxes_from_records(boxes)
    return evaluate_rows(boxes, rows, page_id="p", dropped_words=dropped, filters=filters), boxes


def _polygons(svg: str) -> list[tuple[str, str, str]]:
    return re.findall(r'<polygon points="([^"]+)" fill="([^"]+)"[^>]*><title>([^<]*)</title>', svg)


def test_boxes_are_coloured_by_their_regions_cer(tmp_path):
    rep, boxes = _page(tmp_path=tmp_path)
    assert [r["cer"] for r in rep["regions"]] == [0.0, 1 / 6, 0.0]
    svg = str(page_overlay(rep, "p", boxes, solid_png(600, 600, BLUE)).svg)
    assert svg.count("data:image/png;base64,") == 1 and 'viewBox="0 0 600 600"' in svg
    # green at CER 0; at 1/6 red rises to 255 * 2/6 = 85 while green stays 200
    assert _polygons(svg) == [
        ("0.00,0.00 400.00,0.00 400.00,100.00 0.00,100.00", "rgb(0,200,0)",
         "region r0 · box A (Paragraph) · scored · region CER 0.0000"),
        ("0.00,200.00 400.00,200.00 400.00,260.00 0.00,260.00", "rgb(85,200,0)",
         "region r1 · box B (Headline) · scored · region CER 0.1667"),
        ("0.00,300.00 400.00,300.00 400.00,340.00 0.00,340.00", "rgb(0,200,0)",
         "region r2 · box C (Caption) · scored · region CER 0.0000"),
    ]
    assert [value_colour(v, 1.0) for v in (0.5, 1.0, 7.0, None)] == ["rgb(255,200,0)", "rgb(255,0,0)",
                                                                      "rgb(255,0,0)", "#8c8c8c"]
    # the header filter excludes the headline: drawn grey and dashed, without a value
    rep, boxes = _page("header", tmp_path=tmp_path)
    excluded = [p for p in _polygons(str(page_overlay(rep, "p", boxes, solid_png(9, 9, BLUE)).svg)) if "box B" in p[2]]
    assert excluded == [("0.00,200.00 400.00,200.00 400.00,260.00 0.00,260.00", "#8c8c8c",
                         "region r1 · box B (Headline) · excluded · region CER no value")]


def test_every_label_is_escaped(tmp_path):
    hostile = [dict(b, id=f"{b['id']}{HOSTILE}", label=HOSTILE) for b in BOXES]
    rep, boxes = _page(boxes=hostile, tmp_path=tmp_path)
    html = report.render_page(HOSTILE, [page_overlay(rep, "p", boxes, solid_png(9, 9, BLUE), prefix=HOSTILE)])
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39; &amp;amp;" in html
    assert html.count("<polygon ") == 3


def test_the_image_is_checked():
    assert image_size(solid_png(7, 5, BLUE)) == ("image/png", 7, 5)
    assert image_size(b"GIF89a\x10\x00\x08\x00" + b"\x00" * 8) == ("image/gif", 16, 8)
    jpeg = b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x0b\x08\x00\x20\x00\x30\x01\x01\x11\x00"
    assert image_size(jpeg) == ("image/jpeg", 48, 32)
    for bad in (b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", b"", b"\xff\xd8\xff\xd9"):
        with pytest.raises(InvalidValueError, match="image"):
            image_overlay("t", bad, [])
    shape = OverlayShape(((0, 0), (1, 0), (1, 1)), 0.5, "x")
    with pytest.raises(InvalidValueError, match="at least 3 points"):
        image_overlay("t", solid_png(2, 2, BLUE), [shape._replace(points=((0, 0), (1, 1)))])
    with pytest.raises(InvalidValueError, match="finite"):
        image_overlay("t", solid_png(2, 2, BLUE), [shape._replace(value=float("nan"))])
    with pytest.raises(InputTooLargeError, match="shapes"):
        image_overlay("t", solid_png(2, 2, BLUE), [shape] * 20_001)


@pytest.fixture
def page_files(tmp_path: Path) -> Path:
    (tmp_path / "p.json").write_text(json.dumps(BOXES), encoding="utf-8")
    write_csv(tmp_path / "p.csv")
    (tmp_path / "p.png").write_bytes(solid_png(600, 600, BLUE))
    return tmp_path


def _measure(root: Path, *extra: str) -> int:
    return measure_accuracy.main(["--annotations-json", str(root / "p.json"), "--predictions-csv", str(root / "p.csv"),
                                  *extra])


def test_measure_draws_the_page_image_in_its_report(page_files, capsys):
    html = page_files / "p.html"
    assert _measure(page_files, "--page-image", str(page_files / "p.png"), "--html", str(html),
                    "--output", str(page_files / "out.json")) == 0
    text = html.read_text(encoding="utf-8")
    assert "img-src data:;" in text and text.count("data:image/png;base64,") == 1 and text.count("<polygon ") == 3
    assert text.index("Corpus summary") < text.index("boxes coloured by region CER") < text.index("Pages (click")
    capsys.readouterr()
    assert _measure(page_files, "--page-image", str(page_files / "p.png")) == 2
    assert "give --html too" in capsys.readouterr().err
    (page_files / "bad.png").write_text("not an image", encoding="utf-8")
    assert _measure(page_files, "--page-image", str(page_files / "bad.png"), "--html", str(page_files / "b.html"),
                    "--output", str(page_files / "b.json")) == 1
    assert "not a PNG, JPEG or GIF" in capsys.readouterr().err
    assert not (page_files / "b.html").exists() and not (page_files / "b.json").exists()
    assert _measure(page_files, "--page-image", str(page_files / "p.png"), "--html", str(page_files / "p.png")) == 2
    assert image_size((page_files / "p.png").read_bytes())[0] == "image/png"


def test_overlay_in_headless_chromium(chromium, page_files, tmp_path):  # noqa: F811
    html = page_files / "p.html"
    assert _measure(page_files, "--page-image", str(page_files / "p.png"), "--html", str(html),
                    "--output", str(page_files / "out.json")) == 0
    dom, stderr, requests = _run(chromium, html, tmp_path / "dom", "--dump-dom")
    assert _problems(stderr) == [] and requests == []
    assert dom.count("<polygon ") == 3 and 'data-script-ran="1"' in dom
    shot = tmp_path / "shot.png"
    _, stderr, requests = _run(chromium, html, tmp_path / "shot", f"--screenshot={shot}", "--window-size=1000,1500")
    assert _problems(stderr) == [] and requests == []
    pixels = png_pixels(shot.read_bytes()).reshape(-1, 3)
    colours = {tuple(p) for p in np.unique(pixels, axis=0).tolist()}
    assert BLUE in colours  # the embedded scan was drawn
    # a box over the blue scan: green (0, 200, 0) at opacity 0.3 -> (0, 60, 179)
    assert any(r <= 3 and abs(g - 60) <= 3 and abs(b - 179) <= 3 for r, g, b in colours)


def test_folder_commands_draw_the_pages_with_a_scan(page_files, tmp_path, capsys, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from scorekit.ocr_pages import evaluate_from_hf as hf
    from scorekit.ocr_pages.evaluation import generate_accuracy_report_variants as variants_cmd

    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "p.PNG").write_bytes(solid_png(600, 600, BLUE))
    (scans / "other.png").write_bytes(solid_png(5, 5, BLUE))  # a scan of no page: not drawn
    html = tmp_path / "v.html"
    common = ["--output-dir", str(tmp_path / "res"), "--variant", "no_filter", "--html", str(html)]
    assert variants_cmd.main(["--predictions-dir", str(page_files), "--annotations-dir", str(page_files),
                              "--images-dir", str(scans), *common]) == 0
    text = html.read_text(encoding="utf-8")
    assert text.count("data:image/png;base64,") == 1 and text.count("<polygon ") == 3
    assert "page p: boxes coloured by region CER" in text

    monkeypatch.setattr(hf, "_has_datasets", lambda: False)
    pq.write_table(pa.Table.from_pylist([{"page_id": "p", "annotations": BOXES}]), tmp_path / "pages.parquet")
    html_hf = tmp_path / "hf.html"
    assert hf.main(["--dataset", str(tmp_path / "pages.parquet"), "--predictions-dir", str(page_files),
                    "--images-dir", str(scans), "--output-dir", str(tmp_path / "res-hf"), "--variant", "no_filter",
                    "--html", str(html_hf)]) == 0
    assert html_hf.read_text(encoding="utf-8").count("<polygon ") == 3
    capsys.readouterr()
    assert variants_cmd.main(["--predictions-dir", str(page_files), "--annotations-dir", str(page_files),
                              "--images-dir", str(scans), "--output-dir", str(tmp_path / "r2")]) == 2
    assert "--images-dir draws on the HTML report: give --html too" in capsys.readouterr().err
    (scans / "p.jpg").write_bytes(b"\xff\xd8")
    assert variants_cmd.main(["--predictions-dir", str(page_files), "--annotations-dir", str(page_files),
                              "--images-dir", str(scans), *common]) == 1
    assert "page 'p' has two files in the images folder, 'p.PNG' and 'p.jpg'" in capsys.readouterr().err
