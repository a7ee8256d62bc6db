"""OCR page evaluation: box-annotated ground truth against page-level OCR predictions.

Scores newspaper pages (Armenian and other scripts) whose ground truth is a set of annotated boxes
and whose predictions are word or line boxes: loading, geometry, row-to-box matching, text
normalisation, hyphen joins, schwa-forgiving CER, regions and reports. ``box_grouping`` owns
loading and geometry; ``evaluation`` owns text metrics and reports.

What is here so far: the data model and loaders, the geometry (a shapely ``STRtree`` index),
watermark removal, row building and row-to-box classification with split-line reassembly,
reading order and line grouping, the text layer (normalisation, hyphen joins, distances,
``compute_text_metrics``), regions, filters and the page and aggregate report JSONs
(``evaluate_rows``, ``aggregate_reports``). The command line and the HTML report are still to come.

>>> from scorekit import ocr_pages
>>> m = ocr_pages.compute_text_metrics("բարև աշխարհ", "բարեվ աշխարհ")
>>> m.char_edit_distance, m.gt_char_count
(2, 11)
"""

from scorekit.ocr_pages.box_grouping.geometry import (
    GEOMETRY_EPS,
    BoxIndex,
    box_polygon,
    point_in_polygon,
)
from scorekit.ocr_pages.box_grouping.group import (
    classify_row,
    classify_rows,
    detect_split_lines,
    is_watermark_text,
    load_predicted_rows,
    remove_watermark_words,
)
from scorekit.ocr_pages.box_grouping.loading import (
    AnnotationBox,
    PredictedRow,
    PredictedWord,
    RowMatch,
    annotation_boxes_from_records,
    load_annotation_boxes,
    load_prediction_items,
    load_prediction_words,
)
from scorekit.ocr_pages.box_grouping.reading_order import (
    group_into_lines,
    group_items_left_to_right_top_to_bottom,
)
from scorekit.ocr_pages.evaluation.prediction import build_ocr_region_reports, evaluate_matches, evaluate_rows
from scorekit.ocr_pages.evaluation.reports import (
    FILTERS,
    REPORT_VARIANTS,
    aggregate_reports,
    is_non_armenian_text,
    report_to_json,
)
from scorekit.ocr_pages.evaluation.text_metrics import (
    JoinedText,
    TextMetrics,
    compute_text_metrics,
    compute_text_metrics_batch,
    edit_distance,
    edit_distance_schwa_forgiving,
    join_box_lines_with_hyphenation,
    normalize_punctuation_chars,
    normalize_text,
)

__all__ = [
    "AnnotationBox", "PredictedWord", "PredictedRow", "RowMatch", "JoinedText", "TextMetrics",
    "load_annotation_boxes", "annotation_boxes_from_records", "load_prediction_words",
    "load_prediction_items", "box_polygon", "point_in_polygon", "BoxIndex", "GEOMETRY_EPS",
    "normalize_text", "normalize_punctuation_chars", "join_box_lines_with_hyphenation",
    "edit_distance", "edit_distance_schwa_forgiving", "compute_text_metrics",
    "compute_text_metrics_batch", "is_non_armenian_text", "group_items_left_to_right_top_to_bottom",
    "group_into_lines", "load_predicted_rows", "remove_watermark_words", "is_watermark_text",
    "classify_row", "classify_rows", "detect_split_lines", "build_ocr_region_reports", "evaluate_rows",
    "evaluate_matches", "aggregate_reports", "report_to_json", "REPORT_VARIANTS", "FILTERS",
]
