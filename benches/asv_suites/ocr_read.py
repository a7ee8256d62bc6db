"""asv suite: ``scorekit.ocr.read`` on generated 10 MB PAGE-XML and ALTO files (issue #32), streamed.

``benches/bench_ocr_big_xml.py`` is the whole-process run on 50 and 300 MB files, against a
checkout before the readers were streamed. ``peakmem_*`` follows the memory a read takes (the
text and segments, not the file's tree); ``track_*`` pins what is read.
"""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_ocr_big_xml import generate
from scorekit.ocr import read


class OcrRead:
    timeout = 120

    def setup(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="asv_ocr_read_")
        self.page, self.alto = Path(self.tmp.name) / "page.xml", Path(self.tmp.name) / "alto.xml"
        generate("page", 10, self.page)
        generate("alto", 10, self.alto)

    def teardown(self):
        self.tmp.cleanup()

    def time_page_line(self):
        read(self.page, level="line")

    def time_alto_word(self):
        read(self.alto, level="word")

    def peakmem_page_region(self):
        read(self.page, level="region")

    def track_page_line_segments(self):
        return len(read(self.page, level="line").segments)
