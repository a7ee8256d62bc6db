"""PAGE-XML and ALTO files written by the ``scorekit ocr-eval`` tests and benchmarks, and dinglehopper
0.11 (the oracle) run on them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Sequence
from xml.sax.saxutils import escape, quoteattr

DINGLEHOPPER = "/work/main/.venv/bin/dinglehopper"
PAGE_NS = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"
ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"


def page_xml(regions: Sequence[tuple[str, Sequence[str]]], *, namespace: str = PAGE_NS) -> str:
    """A PAGE-XML document: one TextRegion per ``(id, lines)``, each line a TextLine with its
    TextEquiv, the region's TextEquiv the lines joined by line breaks, in a reading order."""
    body, order = [], []
    for k, (rid, lines) in enumerate(regions):
        order.append(f'<RegionRefIndexed index="{k}" regionRef={quoteattr(rid)}/>')
        xml_lines = "".join(
            f'<TextLine id={quoteattr(f"{rid}_l{j}")}><Coords points="0,0 10,0 10,10 0,10"/>'
            f"<TextEquiv><Unicode>{escape(line)}</Unicode></TextEquiv></TextLine>" for j, line in enumerate(lines))
        body.append(f'<TextRegion id={quoteattr(rid)}><Coords points="0,0 100,0 100,100 0,100"/>{xml_lines}'
                    f"<TextEquiv><Unicode>{escape(chr(10).join(lines))}</Unicode></TextEquiv></TextRegion>")
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<PcGts xmlns="{namespace}"><Metadata><Creator>t</Creator>'
            "<Created>2024-01-01T00:00:00</Created><LastChange>2024-01-01T00:00:00</LastChange></Metadata>"
            '<Page imageFilename="p.png" imageWidth="1000" imageHeight="1000">'
            f'<ReadingOrder><OrderedGroup id="ro">{"".join(order)}</OrderedGroup></ReadingOrder>'
            f'{"".join(body)}</Page></PcGts>\n')


def alto_xml(lines: Sequence[str]) -> str:
    """An ALTO v4 document: one TextBlock, a TextLine per line, a String per word with SP between."""
    xml_lines = []
    for j, line in enumerate(lines):
        words = line.split()
        parts = [f'<String ID="s{j}_{k}" CONTENT={quoteattr(w)}/>' for k, w in enumerate(words)]
        xml_lines.append(f'<TextLine ID="l{j}">' + "<SP/>".join(parts) + "</TextLine>")
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<alto xmlns="{ALTO_NS}"><Layout><Page ID="p1">'
            f'<PrintSpace><TextBlock ID="b1">{"".join(xml_lines)}</TextBlock></PrintSpace></Page></Layout></alto>\n')


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def dinglehopper_json(gt: Path, ocr: Path, work: Path, *, level: str = "region") -> dict:
    """dinglehopper's own JSON report of ``gt`` against ``ocr`` (its ``Infinity`` read as a float)."""
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run([DINGLEHOPPER, "--textequiv-level", level, "--plain-encoding", "utf-8", str(gt), str(ocr),
                    "report", str(work)], check=True, capture_output=True, timeout=300)
    return json.loads((work / "report.json").read_text(encoding="utf-8"))
