"""Page and corpus reports of the OCR page kit: the filters, the report variants, the summary
block shared by page and aggregate reports, and ``aggregate_reports``.

Every ratio of a summary is computed from its region list (region-weighted, never a mean of page
means); page-level counters are summed. Reports are plain dicts whose key order is the schema's,
holding only JSON values (no NaN: an undefined CER is ``None``).

``is_non_armenian_text`` decides whether a ground-truth box is written in another script: its
letters (Unicode category ``L*``, after NFC; digits, punctuation, symbols and spaces are ignored)
are counted, and the box is non-Armenian when the share of Latin and Cyrillic letters is strictly
above ``NON_ARMENIAN_SCRIPT_RATIO``. Other scripts (Greek, for instance) count as letters but not
as Latin or Cyrillic.

>>> is_non_armenian_text("Москва 2024"), is_non_armenian_text("Hello Աշխարհ")
(True, False)
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Iterable, Mapping, Optional, Sequence

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.box_grouping.group import DEFAULT_UNIT_LEVEL, ROW_STATUSES
from scorekit.ocr_pages.box_grouping.loading import DROP_KINDS
from scorekit.ocr_pages.config import DEFAULT_CONFIG, BoxFilter, PageKitConfig, resolve_config
from scorekit.ocr_pages.evaluation.text_metrics import _check_str

__all__ = [
    "NON_ARMENIAN_SCRIPT_RATIO", "FILTERS", "FILTER_LABELS", "REPORT_VARIANTS", "SCHEMA_VERSION",
    "MAX_FAILURE_EXAMPLES", "MAX_EXAMPLE_TEXT_CHARS", "is_non_armenian_text", "canonical_filters",
    "variant_of_filters", "aggregate_reports", "report_to_json",
    "build_ocr_region_reports",  # noqa: F822 - provided lazily by __getattr__ below (import cycle with prediction)
]


def __getattr__(name: str) -> Any:
    """``build_ocr_region_reports``, where the seed documents it; it lives in ``prediction``, which
    imports this module, so it is looked up on first use."""
    if name == "build_ocr_region_reports":
        from scorekit.ocr_pages.evaluation.prediction import build_ocr_region_reports

        return build_ocr_region_reports
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: A text is non-Armenian when its share of Latin and Cyrillic letters is strictly above this.
NON_ARMENIAN_SCRIPT_RATIO = DEFAULT_CONFIG.filter_map["non-armenian"].share_above


def _script_share(t: str, scripts: Sequence[str]) -> Optional[float]:
    """The share of letters of ``t`` (category ``L*``, after NFC) whose Unicode name holds one of
    the words ``scripts`` (None when ``t`` has no letters)."""
    letters = [c for c in unicodedata.normalize("NFC", t) if unicodedata.category(c).startswith("L")]
    if not letters:
        return None
    wanted = frozenset(scripts)
    return sum(1 for c in letters if not wanted.isdisjoint(unicodedata.name(c, "").split())) / len(letters)


def _latin_cyrillic_share(t: str) -> Optional[float]:
    """The share of Latin and Cyrillic letters among the letters of ``t`` (None when it has none)."""
    return _script_share(t, DEFAULT_CONFIG.filter_map["non-armenian"].scripts)


def is_non_armenian_text(t: str) -> bool:
    """True when more than ``NON_ARMENIAN_SCRIPT_RATIO`` of the letters of ``t`` are Latin or
    Cyrillic; a text without letters is not non-Armenian. A non-``str`` is an ``InvalidTypeError``
    and a lone surrogate an ``InvalidValueError``, both naming ``t``.

    >>> is_non_armenian_text("abcdefghi բ"), is_non_armenian_text("abcdefghij բ")
    (False, True)
    """
    share = _latin_cyrillic_share(_check_str(t, "t"))
    return share is not None and share > NON_ARMENIAN_SCRIPT_RATIO


def filter_excludes(box_filter: BoxFilter, label: str, transcription: str) -> bool:
    """Whether ``box_filter`` excludes a box of this label and transcription: its label is one of
    the filter's (after ``strip().lower()``), or more than ``share_above`` of its letters are in
    the filter's scripts."""
    if box_filter.scripts:
        share = _script_share(transcription, box_filter.scripts)
        return share is not None and share > box_filter.share_above
    return label.strip().lower() in box_filter.label_keys


# ---------------------------------------------------------------------------------------------
# Filters and variants

#: The seed's label filters: name -> the box labels they exclude (``DEFAULT_CONFIG.filters``).
FILTER_LABELS: dict[str, tuple[str, ...]] = {name: f.labels for name, f in DEFAULT_CONFIG.filters if not f.scripts}

#: Every filter name of the seed in canonical order; ``non-armenian`` excludes boxes whose
#: transcription is written in Latin or Cyrillic (:func:`is_non_armenian_text`), the others exclude labels.
FILTERS: tuple[str, ...] = DEFAULT_CONFIG.filter_names

#: The seed's report variants, in order: name -> filters.
REPORT_VARIANTS: dict[str, tuple[str, ...]] = dict(DEFAULT_CONFIG.variants)

SCHEMA_VERSION = 1
MAX_FAILURE_EXAMPLES = 25
MAX_EXAMPLE_TEXT_CHARS = 2000


def canonical_filters(filters: Any, config: Optional[PageKitConfig] = None) -> tuple[str, ...]:
    """``filters`` (a comma-separated ``str`` or an iterable of names) in the canonical order of
    ``config``'s filters, without duplicates; an unknown name raises ``InvalidValueError`` naming it."""
    known = resolve_config(config).filter_names
    if isinstance(filters, str):
        names = [f.strip() for f in filters.split(",") if f.strip()]
    else:
        try:
            names = list(filters)
        except TypeError:
            raise InvalidTypeError(f"must be a str or an iterable of str, got {type(filters).__name__}",
                                   field="filters") from None
    for k, name in enumerate(names):
        if name not in known:
            raise InvalidValueError(f"unknown filter {name!r}; known: {', '.join(known)}", field="filters", item=k)
    return tuple(f for f in known if f in names)


def variant_of_filters(filters: Sequence[str], config: Optional[PageKitConfig] = None) -> Optional[str]:
    """The name of ``config``'s report variant whose filters equal ``filters`` (canonical), else ``None``."""
    config = resolve_config(config)
    wanted = canonical_filters(filters, config)
    for name, fs in config.variants:
        if canonical_filters(fs, config) == wanted:
            return name
    return None


def excluded_labels(filters: Sequence[str], config: Optional[PageKitConfig] = None) -> list[str]:
    """The sorted union of the labels the label filters among ``filters`` exclude."""
    known = resolve_config(config).filter_map
    return sorted({label for f in filters if f in known for label in known[f].labels})


# ---------------------------------------------------------------------------------------------
# Summary

#: Summary keys that are page-level counters (summed when reports are aggregated).
_COUNTERS = (
    "page_count", "pages_without_predictions", "gt_box_count", "gt_boxes_dropped",
    "untranscribed_box_count", "filtered_box_count", "included_box_count", "predicted_word_count",
    "watermark_words_removed", "predicted_row_count", "row_status_counts", "split_line_fragments",
    "unassigned_word_count", "unassigned_char_count", "missing_text_boxes", "predicted_boxes_in_text_gt",
)


def _ratio(d: int, n: int, pred: int) -> float:
    """``d / n``; with ``n == 0`` 0.0 when nothing was predicted either, else 1.0."""
    if n > 0:
        return d / n
    return 0.0 if pred == 0 else 1.0


def _corpus(regions: Sequence[Mapping[str, Any]], d_key: str, n_key: str,
            cer_key: str) -> tuple[Optional[float], Optional[float], int, int]:
    """(Σd/Σn with the 0/0 rule, mean of the region CERs, Σd, Σn); the CERs are None without regions."""
    d = sum(r[d_key] for r in regions)
    n = sum(r[n_key] for r in regions)
    if not regions:
        return None, None, d, n
    pred = sum(r["pred_char_count"] for r in regions)
    return _ratio(d, n, pred), sum(r[cer_key] for r in regions) / len(regions), d, n


def build_summary(*, unit_level: str, variant: Optional[str], filters: Sequence[str], coverage_threshold: float,
                  counters: Mapping[str, Any], regions: Sequence[Mapping[str, Any]],
                  pages: Sequence[Mapping[str, Any]], cer_unit: str = "char",
                  config: Optional[PageKitConfig] = None) -> dict[str, Any]:
    """The ``summary`` block, in schema key order: ``counters`` gives the page-level counts
    (``_COUNTERS``); every region figure and ratio is computed from ``regions`` and ``pages``.
    Under a ``config`` other than the default, ``config_sha256`` (its fingerprint) follows
    ``coverage_threshold``, so that reports scored under different rules are never merged."""
    config = resolve_config(config)
    scored = [r for r in regions if r["scored"]]
    normal = [r for r in scored if r["normal_single_box_region"]]
    cer, mean, d, n = _corpus(scored, "char_edit_distance", "gt_char_count", "cer")
    cer_s, mean_s, d_s, _ = _corpus(scored, "char_edit_distance_strict", "gt_char_count", "cer_strict")
    cer_l, mean_l, d_l, n_l = _corpus(scored, "char_edit_distance_lowercase", "gt_char_count_lowercase", "cer_lowercase")
    cer_nm, mean_nm, d_nm, n_nm = _corpus(normal, "char_edit_distance", "gt_char_count", "cer")
    cer_nl = _corpus(normal, "char_edit_distance_lowercase", "gt_char_count_lowercase", "cer_lowercase")[0]
    page_cers = [p["ocr_region_cer"] for p in pages if p["scored_region_count"] > 0]
    missing, in_text = counters["missing_text_boxes"], counters["predicted_boxes_in_text_gt"]
    c = counters
    settings = {
        "unit_level": unit_level,
        "cer_unit": cer_unit,
        "variant": variant,
        "filters": list(filters),
        "excluded_labels": excluded_labels(filters, config),
        "coverage_threshold": float(coverage_threshold),
    }
    if not config.is_default:
        settings["config_sha256"] = config.fingerprint
    return {
        **settings,
        "page_count": c["page_count"],
        "pages_without_predictions": c["pages_without_predictions"],
        "gt_box_count": c["gt_box_count"],
        "gt_boxes_dropped": {k: c["gt_boxes_dropped"].get(k, 0) for k in DROP_KINDS},
        "untranscribed_box_count": c["untranscribed_box_count"],
        "filtered_box_count": c["filtered_box_count"],
        "included_box_count": c["included_box_count"],
        "predicted_word_count": c["predicted_word_count"],
        "watermark_words_removed": c["watermark_words_removed"],
        "predicted_row_count": c["predicted_row_count"],
        "row_status_counts": {k: c["row_status_counts"].get(k, 0) for k in ROW_STATUSES},
        "split_line_fragments": c["split_line_fragments"],
        "unassigned_word_count": c["unassigned_word_count"],
        "unassigned_char_count": c["unassigned_char_count"],
        "region_count": len(regions),
        "scored_region_count": len(scored),
        "excluded_region_count": sum(1 for r in regions if r["box_count"] == 0),
        "multi_box_region_count": sum(1 for r in scored if r["merged"]),
        "normal_single_box_region_count": len(normal),
        "ocr_region_cer": cer,
        "ocr_region_mean_cer": mean,
        "ocr_region_char_edit_distance": d,
        "ocr_region_gt_char_count": n,
        "ocr_region_pred_char_count": sum(r["pred_char_count"] for r in scored),
        "ocr_region_cer_strict": cer_s,
        "ocr_region_mean_cer_strict": mean_s,
        "ocr_region_char_edit_distance_strict": d_s,
        "schwa_forgiven_edits": d_s - d,
        "ocr_region_cer_lowercase": cer_l,
        "ocr_region_mean_cer_lowercase": mean_l,
        "ocr_region_char_edit_distance_lowercase": d_l,
        "ocr_region_gt_char_count_lowercase": n_l,
        "normal_single_box_region_cer": cer_nm,
        "normal_single_box_region_mean_cer": mean_nm,
        "normal_single_box_region_char_edit_distance": d_nm,
        "normal_single_box_region_gt_char_count": n_nm,
        "normal_single_box_region_cer_lowercase": cer_nl,
        "missing_text_boxes": missing,
        "predicted_boxes_in_text_gt": in_text,
        "missing_text_box_rate": missing / in_text if in_text else 0.0,
        "page_mean_cer": sum(page_cers) / len(page_cers) if page_cers else None,
    }


# ---------------------------------------------------------------------------------------------
# Examples

def _cut(text: str) -> tuple[str, bool]:
    return (text[:MAX_EXAMPLE_TEXT_CHARS], True) if len(text) > MAX_EXAMPLE_TEXT_CHARS else (text, False)


def failure_examples(regions: Iterable[Mapping[str, Any]], max_examples: int) -> list[dict[str, Any]]:
    """Up to ``max_examples`` scored regions with errors, worst first: by (−distance, −CER,
    page_id, region_index); texts longer than ``MAX_EXAMPLE_TEXT_CHARS`` are cut and flagged."""
    bad = [r for r in regions if r["scored"] and r["char_edit_distance"] > 0]
    bad.sort(key=lambda r: (-r["char_edit_distance"], -r["cer"], r["page_id"], r["region_index"]))
    out = []
    for r in bad[:max_examples]:
        gt, gt_cut = _cut(r["gt_text"])
        pred, pred_cut = _cut(r["predicted_text"])
        ex = {
            "page_id": r["page_id"], "region_id": r["region_id"], "box_ids": list(r["box_ids"]),
            "labels": list(r["labels"]), "cer": r["cer"], "char_edit_distance": r["char_edit_distance"],
            "gt_char_count": r["gt_char_count"], "gt_text": gt, "predicted_text": pred,
            "row_status_counts": dict(r["row_status_counts"]),
        }
        if gt_cut or pred_cut:
            ex["truncated"] = True
        out.append(ex)
    return out


def _check_max_examples(max_examples: Any) -> int:
    if isinstance(max_examples, bool) or not isinstance(max_examples, int):
        raise InvalidTypeError(f"must be an int, got {type(max_examples).__name__}", field="max_examples")
    if max_examples < 0:
        raise InvalidValueError(f"must be >= 0, got {max_examples}", field="max_examples")
    return max_examples


# ---------------------------------------------------------------------------------------------
# Aggregation

def _summed(values: Sequence[Any]) -> Any:
    if values and isinstance(values[0], Mapping):
        keys = list(values[0])
        return {k: sum(v.get(k, 0) for v in values) for k in keys}
    return sum(values)


#: Summary keys that are settings, not figures.
_SETTINGS = ("unit_level", "cer_unit", "variant", "filters", "excluded_labels", "coverage_threshold", "config_sha256")


def _check_adds_up(rep: Mapping[str, Any], k: int) -> None:
    """Refuse a report whose pages and regions do not give its own summary (cut, edited or
    malformed), so that merging it could not count pages whose regions are missing."""
    summary = rep["summary"]
    pages, regions = rep.get("pages"), rep.get("regions")
    if not isinstance(pages, list) or not isinstance(regions, list):
        raise InvalidValueError("has no 'pages' and 'regions' lists", field="reports", item=k)
    if len(pages) != summary["page_count"]:
        raise InvalidValueError(f"lists {len(pages)} pages, its summary counts {summary['page_count']!r}",
                                field="reports", item=k)
    try:
        again = build_summary(unit_level=summary["unit_level"], cer_unit=summary.get("cer_unit", "char"),
                              variant=summary["variant"], filters=summary["filters"],
                              coverage_threshold=summary["coverage_threshold"], counters=summary,
                              regions=regions, pages=pages)
    except (KeyError, TypeError, AttributeError, ValueError, ZeroDivisionError) as exc:
        raise InvalidValueError(f"malformed page or region entry ({type(exc).__name__}: {exc})",
                                field="reports", item=k) from None
    for key, value in again.items():
        if key not in _SETTINGS and key not in _COUNTERS and key in summary and summary[key] != value:
            raise InvalidValueError(f"its pages and regions give {key} {value!r}, its summary says "
                                    f"{summary[key]!r} (was it cut or edited?)", field="reports", item=k)


def aggregate_reports(reports: Iterable[Mapping[str, Any]], *, variant: Optional[str] = None,
                      max_examples: int = MAX_FAILURE_EXAMPLES,
                      config: Optional[PageKitConfig] = None) -> dict[str, Any]:
    """Merge page or aggregate reports into one aggregate report (so aggregation is associative).

    The inputs must agree on ``unit_level``, ``cer_unit`` (``"char"`` where a report has none),
    ``filters`` and ``coverage_threshold``, must have been scored under ``config`` (their
    ``config_sha256``, absent under the default, is its fingerprint; ``variant`` names one of its
    variants), no ``page_id`` may occur twice, and each report's
    pages and regions must give its own summary figures (a report cut or edited by hand is
    refused): otherwise ``InvalidValueError`` naming the field and the input.
    A report of zero pages (an empty aggregate) is neutral and takes no part in that check.
    Counters are summed; pages are sorted by ``page_id`` and regions by (page_id, region_index);
    row lists are dropped; every ratio and mean is recomputed from the merged regions and pages;
    the failure examples are recomputed and the row failure examples merged, both cut to
    ``max_examples``. The variant is the one the inputs share, else ``variant``. No inputs give
    a report with zero counts and null CERs (unit level ``word``, the filters of ``variant``).

    >>> empty = aggregate_reports([], variant="no_filter")["summary"]
    >>> empty["page_count"], empty["ocr_region_cer"]
    (0, None)
    """
    max_examples = _check_max_examples(max_examples)
    config = resolve_config(config)
    fingerprint = None if config.is_default else config.fingerprint
    if isinstance(reports, Mapping):
        raise InvalidTypeError("must be a sequence of reports, got a single report", field="reports")
    reports = list(reports)
    for k, rep in enumerate(reports):
        if not isinstance(rep, Mapping) or not isinstance(rep.get("summary"), Mapping):
            raise InvalidTypeError("must be a report dict with a summary", field="reports", item=k)
        missing = [key for key in (*_COUNTERS, "unit_level", "filters", "coverage_threshold", "variant")
                   if key not in rep["summary"]]
        if missing:
            raise InvalidValueError(f"summary lacks {', '.join(missing)}", field="reports", item=k)
        _check_adds_up(rep, k)
        scored_under = rep["summary"].get("config_sha256")
        if scored_under != fingerprint:
            raise InvalidValueError(
                f"was scored under {'the default configuration' if scored_under is None else f'configuration {scored_under!r}'}"
                f", not under {'the default one' if fingerprint is None else f'{config.source} ({fingerprint!r})'}; "
                "reports are merged only under the configuration they were scored with", field="reports", item=k)
    if variant is not None and variant not in config.variant_map:
        raise InvalidValueError(f"unknown variant {variant!r}; known: {', '.join(config.variant_names)}",
                                field="variant")
    # A report of no pages (an empty aggregate) is neutral: it neither sets nor checks the settings.
    deciding = [(k, rep) for k, rep in enumerate(reports) if rep["summary"]["page_count"] > 0]
    deciding = deciding or list(enumerate(reports))
    if deciding:
        first_k, first = deciding[0][0], deciding[0][1]["summary"]
        for key in ("unit_level", "cer_unit", "filters", "coverage_threshold"):
            for k, rep in deciding:
                value, want = rep["summary"].get(key, "char"), first.get(key, "char")
                if value != want:
                    raise InvalidValueError(f"{key} {value!r} differs from {want!r} of report {first_k}",
                                            field="reports", item=k)
        unit_level, filters, threshold = first["unit_level"], list(first["filters"]), first["coverage_threshold"]
        cer_unit = first.get("cer_unit", "char")
        variants = {rep["summary"]["variant"] for _, rep in deciding}
        if len(variants) == 1 and None not in variants:
            variant = variants.pop()
    else:
        unit_level, threshold, cer_unit = DEFAULT_UNIT_LEVEL, 1.0, "char"
        filters = list(canonical_filters(config.variant_map[variant], config)) if variant else []
    seen: dict[str, int] = {}
    pages: list[Mapping[str, Any]] = []
    regions: list[Mapping[str, Any]] = []
    row_examples: list[Mapping[str, Any]] = []
    for k, rep in enumerate(reports):
        for page in rep.get("pages", ()):
            pid = page["page_id"]
            if pid in seen:
                raise InvalidValueError(f"duplicated page_id {pid!r} (also in report {seen[pid]})",
                                        field="reports", item=k)
            seen[pid] = k
            pages.append(page)
        regions.extend(rep.get("regions", ()))
        row_examples.extend(rep.get("row_failure_examples", ()))
    pages.sort(key=lambda p: p["page_id"])
    regions.sort(key=lambda r: (r["page_id"], r["region_index"]))
    row_examples.sort(key=lambda r: r["page_id"])  # stable: each page keeps its csv order
    counters = {key: _summed([rep["summary"][key] for rep in reports]) for key in _COUNTERS}
    if not reports:
        counters.update(gt_boxes_dropped={}, row_status_counts={})
    summary = build_summary(unit_level=unit_level, cer_unit=cer_unit, variant=variant, filters=filters,
                            coverage_threshold=threshold, counters=counters, regions=regions, pages=pages,
                            config=config)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "aggregate",
        "summary": summary,
        "pages": [dict(p) for p in pages],
        "regions": [dict(r) for r in regions],
        "failure_examples": failure_examples(regions, max_examples),
        "row_failure_examples": [dict(r) for r in row_examples[:max_examples]],
    }


def report_to_json(report: Mapping[str, Any]) -> str:
    """The report as the kit writes it: UTF-8-ready JSON (non-ASCII kept), two-space indent, a
    trailing newline, key order preserved; a NaN or infinity anywhere raises ``ValueError``
    (reports use ``null`` for undefined values), so the output is always strict JSON.

    >>> report_to_json({"summary": {"ocr_region_cer": None, "unit_level": "word"}})
    '{\\n  "summary": {\\n    "ocr_region_cer": null,\\n    "unit_level": "word"\\n  }\\n}\\n'
    """
    return json.dumps(report, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
