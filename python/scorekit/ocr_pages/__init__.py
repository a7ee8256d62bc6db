"""OCR page evaluation: box-annotated ground truth against page-level OCR predictions.

Scores newspaper pages (Armenian and other scripts) whose ground truth is a set of annotated boxes
and whose predictions are word or line boxes: loading, geometry, row-to-box matching, text
normalisation, hyphen joins, schwa-forgiving CER, regions and reports. ``box_grouping`` owns
loading and geometry; ``evaluation`` owns text metrics and reports.

Here: the data model and loaders (Label Studio JSON, dataset rows, Hugging Face datasets through
``load_hf_pages``), the geometry (a shapely ``STRtree`` index), watermark removal, row building
and row-to-box classification with split-line reassembly, reading order and line grouping, the
text layer (normalisation, hyphen joins, distances, ``compute_text_metrics``), regions, filters
and the page and aggregate report JSONs (``evaluate_rows``, ``aggregate_reports``). The corpus
rules (watermark phrases, filters and variants, text rules) are a ``PageKitConfig``
(``config``: ``DEFAULT_CONFIG``, the seed's, or ``load_config(path)`` of a YAML or JSON file),
passed as ``config=`` to the functions that use them. The commands
(``ocr-pages-evaluate-hf``, ``-convert``, ``-measure``, ``-variants``, ``-overall``, also as
``scorekit ocr-pages …``) and their HTML run report are in ``cli`` and the entry-point modules.

>>> from scorekit import ocr_pages
>>> m = ocr_pages.compute_text_metrics("բարև աշխարհ", "բարեվ աշխարհ")
>>> m.char_edit_distance, m.gt_char_count
(2, 11)
"""
from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module that defines it. Names load on first access, so that importing
#: ``scorekit.ocr_pages`` (as the ``scorekit`` command does to register ``ocr-pages``) stays cheap.
_LAZY = {
    "PageKitConfig": "scorekit.ocr_pages.config",
    "DEFAULT_CONFIG": "scorekit.ocr_pages.config",
    "load_config": "scorekit.ocr_pages.config",
    "config_from_dict": "scorekit.ocr_pages.config",
    "AnnotationBox": "scorekit.ocr_pages.box_grouping.loading",
    "PredictedWord": "scorekit.ocr_pages.box_grouping.loading",
    "PredictedRow": "scorekit.ocr_pages.box_grouping.loading",
    "RowMatch": "scorekit.ocr_pages.box_grouping.loading",
    "JoinedText": "scorekit.ocr_pages.evaluation.text_metrics",
    "TextMetrics": "scorekit.ocr_pages.evaluation.text_metrics",
    "load_annotation_boxes": "scorekit.ocr_pages.box_grouping.loading",
    "annotation_boxes_from_records": "scorekit.ocr_pages.box_grouping.loading",
    "load_prediction_words": "scorekit.ocr_pages.box_grouping.loading",
    "load_prediction_items": "scorekit.ocr_pages.box_grouping.loading",
    "load_hf_pages": "scorekit.ocr_pages.evaluate_from_hf",
    "HfPage": "scorekit.ocr_pages.evaluate_from_hf",
    "box_polygon": "scorekit.ocr_pages.box_grouping.geometry",
    "point_in_polygon": "scorekit.ocr_pages.box_grouping.geometry",
    "BoxIndex": "scorekit.ocr_pages.box_grouping.geometry",
    "GEOMETRY_EPS": "scorekit.ocr_pages.box_grouping.geometry",
    "normalize_text": "scorekit.ocr_pages.evaluation.text_metrics",
    "normalize_punctuation_chars": "scorekit.ocr_pages.evaluation.text_metrics",
    "join_box_lines_with_hyphenation": "scorekit.ocr_pages.evaluation.text_metrics",
    "edit_distance": "scorekit.ocr_pages.evaluation.text_metrics",
    "edit_distance_schwa_forgiving": "scorekit.ocr_pages.evaluation.text_metrics",
    "compute_text_metrics": "scorekit.ocr_pages.evaluation.text_metrics",
    "compute_text_metrics_batch": "scorekit.ocr_pages.evaluation.text_metrics",
    "is_non_armenian_text": "scorekit.ocr_pages.evaluation.reports",
    "group_items_left_to_right_top_to_bottom": "scorekit.ocr_pages.box_grouping.reading_order",
    "group_into_lines": "scorekit.ocr_pages.box_grouping.reading_order",
    "load_predicted_rows": "scorekit.ocr_pages.box_grouping.group",
    "remove_watermark_words": "scorekit.ocr_pages.box_grouping.group",
    "is_watermark_text": "scorekit.ocr_pages.box_grouping.group",
    "classify_row": "scorekit.ocr_pages.box_grouping.group",
    "classify_rows": "scorekit.ocr_pages.box_grouping.group",
    "detect_split_lines": "scorekit.ocr_pages.box_grouping.group",
    "build_ocr_region_reports": "scorekit.ocr_pages.evaluation.prediction",
    "evaluate_rows": "scorekit.ocr_pages.evaluation.prediction",
    "evaluate_matches": "scorekit.ocr_pages.evaluation.prediction",
    "aggregate_reports": "scorekit.ocr_pages.evaluation.reports",
    "report_to_json": "scorekit.ocr_pages.evaluation.reports",
    "REPORT_VARIANTS": "scorekit.ocr_pages.evaluation.reports",
    "FILTERS": "scorekit.ocr_pages.evaluation.reports",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'scorekit.ocr_pages' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
