"""OCR page evaluation: box-annotated ground truth against page-level OCR predictions.

Scores newspaper pages (Armenian and other scripts) whose ground truth is a set of annotated boxes
and whose predictions are word or line boxes: loading, geometry, row-to-box matching, text
normalisation, hyphen joins, schwa-forgiving CER, regions and reports. ``box_grouping`` owns
loading and geometry; ``evaluation`` owns text metrics and reports.
"""
