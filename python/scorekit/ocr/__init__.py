"""OCR evaluation in the reference kit's shape (``ek.ocr``): the ocracy bridge, engine capability
profiles, table recovery from OCR results and the offline benchmark; and the text metrics of a
ground-truth page against an OCR page (dinglehopper's CER and WER, ``bow_wer``, the flexible
character accuracy: :mod:`scorekit.ocr.metrics`, :mod:`scorekit.ocr.fca`, docs/ocr-metrics.md).

Importing it needs no OCR engine, SDK or credentials (ocracy is imported only when the bridge is
called); :func:`scorekit.registry.check_requirements` reports at call time what an engine lacks.

>>> import scorekit as ek
>>> ek.ocr.profile("mathpix")["calibrated"]
True
>>> ek.ocr.engine_yields_tables("aws-textract")
True
"""

from scorekit.ocr.benchmark import add_gold_item, evaluate_ocr
from scorekit.ocr.bridge import ocracy_backend, read_text
from scorekit.ocr.fca import flexible_character_accuracy
from scorekit.ocr.metrics import TextComparison, bow_wer, compare_texts, words
from scorekit.ocr.profiles import DEFAULT_PROFILE, ENGINE_PROFILES, profile
from scorekit.ocr.tables import engine_yields_tables, has_table_structure, resolve_table_parser, table_from_ocr

__all__ = [
    "ocracy_backend", "read_text", "evaluate_ocr", "add_gold_item", "profile", "ENGINE_PROFILES",
    "DEFAULT_PROFILE", "table_from_ocr", "has_table_structure", "resolve_table_parser", "engine_yields_tables",
    "compare_texts", "TextComparison", "bow_wer", "flexible_character_accuracy", "words",
]
