"""The page data model and its loaders.

Owns the ground-truth boxes (:class:`AnnotationBox`), the predicted words, rows and row matches,
and the readers of the kit's inputs: the evaluation CSV (:func:`load_prediction_words`), the
per-page prediction JSON (:func:`load_prediction_items`), the annotations of a Hugging Face row
(:func:`annotation_boxes_from_records`) and a local Label Studio export
(:func:`load_annotation_boxes`).

Readers never modify their input. Malformed input raises :class:`scorekit.errors.InvalidValueError`
(or ``InvalidTypeError``) whose message names the file and the 1-based line, or the 0-based
position of the offending entry. Ground-truth boxes that cannot be scored (``Rule`` separators,
zero-size, duplicates, containers) are skipped, and the skips are counted in
:attr:`AnnotationBoxes.dropped`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Mapping, Optional
from urllib.parse import parse_qsl, urlsplit

from scorekit.errors import InvalidTypeError, InvalidValueError, describe
from scorekit.ocr_pages.box_grouping import geometry

__all__ = [
    "AnnotationBox",
    "AnnotationBoxes",
    "PredictedWord",
    "PredictedRow",
    "RowMatch",
    "PredictionItem",
    "CSV_HEADER",
    "load_prediction_words",
    "load_prediction_items",
    "annotation_boxes_from_records",
    "load_annotation_boxes",
    "load_predicted_rows",  # noqa: F822 - provided lazily by __getattr__ below (import cycle with group)
]


def __getattr__(name: str) -> Any:
    """``load_predicted_rows``, where the seed documents it; it lives in ``group``, which imports
    this module, so it is looked up on first use."""
    if name == "load_predicted_rows":
        from scorekit.ocr_pages.box_grouping.group import load_predicted_rows

        return load_predicted_rows
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

CSV_HEADER = ("x1", "y1", "x2", "y2", "group_row", "text")
DROP_KINDS = ("rule", "degenerate", "duplicate", "container")


def _finite_rect(x1: float, y1: float, x2: float, y2: float) -> bool:
    return all(math.isfinite(v) for v in (x1, y1, x2, y2))


# ---------------------------------------------------------------------------------------------
# Data model


@dataclass(frozen=True)
class AnnotationBox:
    """One ground-truth box: an unrotated ``bbox`` (x1<=x2, y1<=y2) turned by ``rotation`` degrees
    clockwise about its top-left corner."""

    id: str
    label: str
    transcription: str
    reading_order: Optional[int]
    parent_id: Optional[str]
    bbox: tuple[float, float, float, float]
    rotation: float
    has_transcription: bool
    index: int

    def __post_init__(self) -> None:
        x1, y1, x2, y2 = self.bbox
        if not _finite_rect(x1, y1, x2, y2) or x1 > x2 or y1 > y2:
            raise InvalidValueError(
                f"must be finite with x1<=x2 and y1<=y2, got {self.bbox!r}", field=f"box {self.id!r} bbox"
            )
        if not math.isfinite(self.rotation):
            raise InvalidValueError(f"must be finite, got {self.rotation!r}", field=f"box {self.id!r} rotation")

    @cached_property
    def polygon(self) -> tuple[tuple[float, float], ...]:
        """The four corners of the rotated box (see :func:`geometry.box_polygon`)."""
        return geometry.box_polygon(self.bbox, self.rotation)

    @property
    def area(self) -> float:
        x1, y1, x2, y2 = self.bbox
        return (x2 - x1) * (y2 - y1)

    @cached_property
    def envelope(self) -> tuple[float, float, float, float]:
        """The axis-aligned bounding rectangle of :attr:`polygon`."""
        return geometry.polygon_envelope(self.polygon)

    @property
    def pivot(self) -> tuple[float, float]:
        return (self.bbox[0], self.bbox[1])


class AnnotationBoxes(list):
    """The boxes of one page (a plain list of :class:`AnnotationBox`) plus the skip counts.

    ``dropped`` maps ``rule``, ``degenerate``, ``duplicate`` and ``container`` to the number of
    input entries skipped for that reason.
    """

    def __init__(self, boxes: Iterable[AnnotationBox] = (), dropped: Optional[Mapping[str, int]] = None):
        super().__init__(boxes)
        self.dropped = {k: int((dropped or {}).get(k, 0)) for k in DROP_KINDS}


@dataclass(frozen=True)
class PredictedWord:
    """One record of the evaluation CSV; an axis-aligned rectangle with x1<=x2, y1<=y2."""

    x1: float
    y1: float
    x2: float
    y2: float
    group_row: str
    text: str
    csv_index: int

    @property
    def rect(self) -> tuple[float, float, float, float]:
        return (self.x1, self.y1, self.x2, self.y2)

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x1 + self.x2) / 2, (self.y1 + self.y2) / 2)

    @property
    def area(self) -> float:
        return (self.x2 - self.x1) * (self.y2 - self.y1)


@dataclass(frozen=True)
class PredictedRow:
    """Predicted words scored together (one word in word mode, one ``group_row`` in line mode)."""

    row_id: str
    words: tuple[PredictedWord, ...]

    @property
    def text(self) -> str:
        return " ".join(w.text.strip() for w in self.words if w.text.strip())

    @property
    def groups(self) -> frozenset[str]:
        return frozenset(w.group_row for w in self.words)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """The union of the word rectangles."""
        return (
            min(w.x1 for w in self.words),
            min(w.y1 for w in self.words),
            max(w.x2 for w in self.words),
            max(w.y2 for w in self.words),
        )


@dataclass(frozen=True)
class RowMatch:
    """How one predicted row relates to the ground-truth boxes (the classifier's output)."""

    row: PredictedRow
    status: str
    box_index: Optional[int]
    touched: tuple[int, ...]
    coverage: dict[int, float]
    overlap_coverage: dict[int, float]
    assignment: dict[int, Optional[int]]
    fragments: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class PredictionItem:
    """One usable item of a per-page prediction JSON: an axis-aligned box and its text."""

    x1: float
    y1: float
    x2: float
    y2: float
    text: str


# ---------------------------------------------------------------------------------------------
# Shared file helpers


def _path_field(path: Any) -> str:
    return f"{os.fspath(path)}:"


def _read_text(path: Any) -> str:
    """The whole file as UTF-8 (a leading BOM removed); unreadable files raise naming the path."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InvalidValueError(f"cannot read file ({exc.strerror or exc})", field=_path_field(path)) from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidValueError(f"line {line}: not valid UTF-8", field=_path_field(path)) from exc


def _read_json(path: Any) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidValueError(
            f"line {exc.lineno} column {exc.colno}: malformed JSON ({exc.msg})", field=_path_field(path)
        ) from exc
    except RecursionError as exc:
        raise InvalidValueError("JSON nested too deeply", field=_path_field(path)) from exc


# ---------------------------------------------------------------------------------------------
# Evaluation CSV


def _parse_float(cell: str) -> Optional[float]:
    try:
        return float(cell)
    except ValueError:
        return None


def load_prediction_words(csv_path: Any) -> list[PredictedWord]:
    """Read one page's evaluation CSV (``x1,y1,x2,y2,group_row,text``) into words, in file order;
    a file that starts like markup is an OCR file (PAGE-XML, ALTO, hOCR, detected by content) and
    is read as its words in reading order instead (:mod:`.ocr_files`).

    The header may be missing when the first row starts with four numbers. Extra cells (an
    unquoted comma in the text) are joined back into ``text``; a row of 5 cells has empty text.
    Blank lines are skipped. Fewer than 5 cells, a coordinate that is not a finite number, or a
    malformed quoted field raise ``InvalidValueError`` naming the file and 1-based line.
    """
    from scorekit.ocr_pages.box_grouping.ocr_files import is_ocr_file, ocr_file_words

    if is_ocr_file(csv_path):
        return [PredictedWord(*fields) for fields in ocr_file_words(csv_path)]
    where = _path_field(csv_path)
    text = _read_text(csv_path)
    # newline="" splits records only at \n, \r and \r\n, as the csv module expects; a U+2028 or
    # form feed inside a text cell stays part of the text.
    reader = csv.reader(io.StringIO(text, newline=""))
    words: list[PredictedWord] = []
    first = True
    end_line = 0
    while True:
        start_line = end_line + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InvalidValueError(f"line {start_line}: malformed CSV ({exc})", field=where) from exc
        end_line = reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if first:
            first = False
            if tuple(c.strip().lower() for c in row) == CSV_HEADER:
                continue
            if len(row) < 4 or any(_parse_float(c) is None for c in row[:4]):
                raise InvalidValueError(f"bad header (expected {','.join(CSV_HEADER)})", field=where)
        if len(row) < 5:
            raise InvalidValueError(f"line {start_line}: expected 6 cells, got {len(row)}", field=where)
        coords = []
        for name, cell in zip(CSV_HEADER[:4], row[:4]):
            value = _parse_float(cell)
            if value is None or not math.isfinite(value):
                raise InvalidValueError(
                    f"line {start_line}: {name} must be a finite number, got {cell!r}", field=where
                )
            coords.append(value)
        x1, y1, x2, y2 = coords
        cell_text = ",".join(row[5:]) if len(row) > 5 else ""
        words.append(
            PredictedWord(
                min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2), row[4].strip(), cell_text, len(words)
            )
        )
    return words


# ---------------------------------------------------------------------------------------------
# Per-page prediction JSON


def _usable_box(raw: Any) -> Optional[tuple[float, float, float, float]]:
    """``[x1,y1,x2,y2]``, 8 numbers or 4 ``[x,y]`` points -> a normalised envelope, else None."""
    if not isinstance(raw, (list, tuple)):
        return None
    if len(raw) == 4 and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in raw):
        flat = [c for p in raw for c in p]
    else:
        flat = list(raw)
    if len(flat) not in (4, 8):
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
        return None
    vals = [float(v) for v in flat]
    if not all(math.isfinite(v) for v in vals):
        return None
    xs, ys = vals[0::2], vals[1::2]
    return (min(xs), min(ys), max(xs), max(ys))


def load_prediction_items(path: Any) -> tuple[list[PredictionItem], int]:
    """Read a per-page prediction JSON; returns ``(items, skipped)``.

    Accepted: ``[{"box": [x1,y1,x2,y2], "text": ...}, ...]`` or the same list under
    ``{"predictions": [...]}``; ``"bbox"`` is an alias of ``"box"``; a box may also be 8 numbers
    or 4 ``[x, y]`` points (reduced to their envelope). Missing or ``None`` text is ``""``, other
    non-string text goes through ``str``. An item without a usable box (missing, wrong shape,
    non-finite numbers, not an object) is skipped and counted. Malformed JSON or any other top
    level raises ``InvalidValueError`` naming the file.
    """
    data = _read_json(path)
    if isinstance(data, dict) and "predictions" in data:
        data = data["predictions"]
    if not isinstance(data, list):
        raise InvalidValueError(
            f"expected a list of predictions (or {{'predictions': [...]}}), got {type(data).__name__}",
            field=_path_field(path),
        )
    items: list[PredictionItem] = []
    skipped = 0
    for entry in data:
        box = None
        if isinstance(entry, dict):
            box = _usable_box(entry["box"] if "box" in entry else entry.get("bbox"))
        if box is None:
            skipped += 1
            continue
        raw_text = entry.get("text")
        text = "" if raw_text is None else raw_text if isinstance(raw_text, str) else str(raw_text)
        items.append(PredictionItem(*box, text))
    return items, skipped


# ---------------------------------------------------------------------------------------------
# Ground-truth boxes: the Hugging Face row adapter


def _as_entries(records: Any, source: str) -> list[Any]:
    """Accept a list of dicts, a dict of columns (transposed) or a JSON string of either."""
    if isinstance(records, (str, bytes)):
        try:
            records = json.loads(records)
        except json.JSONDecodeError as exc:
            raise InvalidValueError(f"malformed JSON ({exc.msg} at column {exc.colno})", field=source) from exc
    if records is None:
        return []
    if isinstance(records, Mapping):
        columns = {k: list(v) if isinstance(v, (list, tuple)) else None for k, v in records.items()}
        bad = [k for k, v in columns.items() if v is None]
        if bad:
            raise InvalidTypeError(f"column {bad[0]!r} must be a list in the columnar form", field=source)
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise InvalidValueError(f"columns have different lengths {sorted(lengths)}", field=source)
        n = lengths.pop() if lengths else 0
        return [{k: v[i] for k, v in columns.items()} for i in range(n)]
    if isinstance(records, (list, tuple)):
        return list(records)
    raise InvalidTypeError(f"must be a list of boxes, a dict of columns or a JSON string, got {describe(records)}", field=source)


def _number(value: Any, what: str, source: str, item: int) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            parsed = _parse_float(value)
            if parsed is not None:
                value = parsed
            else:
                raise InvalidValueError(f"must be a number, got {describe(value)}", field=f"{source} {what}", item=item)
        else:
            raise InvalidValueError(f"must be a number, got {describe(value)}", field=f"{source} {what}", item=item)
    try:
        value = float(value)
    except OverflowError:
        raise InvalidValueError("must be finite, got an integer too large for a float",
                                field=f"{source} {what}", item=item) from None
    if not math.isfinite(value):
        raise InvalidValueError(f"must be finite, got {value!r}", field=f"{source} {what}", item=item)
    return value


def _opt_str(value: Any) -> Optional[str]:
    if value is None:
        return None
    text = str(value)
    return text if text else None


def _build_boxes(entries: list[dict[str, Any]], source: str) -> AnnotationBoxes:
    """The adapter steps: drop Rule, build, drop degenerate, duplicates and containers, sort.

    Each entry is a dict with the HF annotation keys plus the optional ``_has_transcription``
    (the Label Studio loader knows it independently of the text) and ``_item`` (the position
    reported in errors).
    """
    dropped = dict.fromkeys(DROP_KINDS, 0)
    built: list[tuple[int, dict[str, Any]]] = []  # (input index, fields)
    used_ids: set[str] = set()
    for i, entry in enumerate(entries):
        item = entry.get("_item", i) if isinstance(entry, dict) else i
        if not isinstance(entry, Mapping):
            raise InvalidTypeError(f"must be an object, got {describe(entry)}", field=f"{source} box", item=item)
        label = "" if entry.get("label") is None else str(entry.get("label")).strip()
        if label.lower() == "rule":
            dropped["rule"] += 1
            continue
        raw_bbox = entry.get("bbox")
        if not isinstance(raw_bbox, (list, tuple)) or len(raw_bbox) != 4:
            raise InvalidValueError(f"must be 4 numbers [x1,y1,x2,y2], got {describe(raw_bbox)}",
                                    field=f"{source} bbox", item=item)
        x1, y1, x2, y2 = (_number(v, "bbox", source, item) for v in raw_bbox)
        rotation = _number(entry.get("rotation") or 0, "rotation", source, item)
        raw_text = entry.get("transcription")
        text = "" if raw_text is None else str(raw_text).replace("\r\n", "\n").replace("\r", "\n")
        has_text = bool(entry["_has_transcription"]) if "_has_transcription" in entry else bool(text)
        raw_order = entry.get("reading_order")
        if raw_order is None:
            order = None
        else:
            order_f = _number(raw_order, "reading_order", source, item)
            if not order_f.is_integer():
                raise InvalidValueError(f"must be an integer, got {raw_order!r}", field=f"{source} reading_order", item=item)
            order = int(order_f)
        box_id = _opt_str(entry.get("id")) or f"box{i}"
        if box_id in used_ids:
            k = 2
            while f"{box_id}#{k}" in used_ids:
                k += 1
            box_id = f"{box_id}#{k}"
        used_ids.add(box_id)
        fields = dict(
            id=box_id,
            label=label,
            transcription=text,
            reading_order=order,
            parent_id=_opt_str(entry.get("parent_id")),
            bbox=(min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)),
            rotation=rotation,
            has_transcription=has_text,
        )
        bx1, by1, bx2, by2 = fields["bbox"]
        if bx2 - bx1 <= 0 or by2 - by1 <= 0:
            dropped["degenerate"] += 1
            continue
        if not all(math.isfinite(v) for v in (2 * bx1, 2 * by1, 2 * bx2, 2 * by2, (bx2 - bx1) * (by2 - by1))):
            raise InvalidValueError(f"too large to measure (its area or coordinates overflow), got {raw_bbox!r}",
                                    field=f"{source} bbox", item=item)
        built.append((i, fields))

    seen: set[tuple[Any, ...]] = set()
    unique: list[tuple[int, dict[str, Any]]] = []
    for i, f in built:
        key = (f["label"], tuple(round(c * 2) for c in f["bbox"]), round(f["rotation"], 6), f["transcription"])
        if key in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(key)
        unique.append((i, f))

    ids = {f["id"] for _, f in unique}
    children: dict[str, list[dict[str, Any]]] = {}
    for _, f in unique:
        parent = f["parent_id"]
        if parent is not None and parent != f["id"] and parent in ids:
            children.setdefault(parent, []).append(f)
    removed: set[str] = set()
    for parent, kids in children.items():
        if any(k["has_transcription"] for k in kids):
            removed.add(parent)
        else:
            removed.update(k["id"] for k in kids)
    dropped["container"] = len(removed)
    kept = [(i, f) for i, f in unique if f["id"] not in removed]

    kept.sort(key=lambda p: (p[1]["reading_order"] is None, p[1]["reading_order"] or 0, p[0]))
    return AnnotationBoxes((AnnotationBox(**f, index=n) for n, (_, f) in enumerate(kept)), dropped)


def annotation_boxes_from_records(records: Any, *, source: str = "annotations") -> AnnotationBoxes:
    """Turn the ``annotations`` value of a dataset row into the page's ground-truth boxes.

    ``records`` is a list of ``{id, label, transcription, reading_order, parent_id, bbox,
    rotation}`` dicts, the same as a dict of columns, or a JSON string of either. Entries are
    dropped, in this order: ``Rule`` separators, boxes of zero width or height, duplicates (same
    label, bbox to 0.5 px, rotation to 1e-6 and text; the first is kept) and containers (a parent
    whose children carry text is dropped, otherwise its children are). The rest is sorted stably
    by reading order (missing last) and numbered by ``index``. A missing id becomes ``box{i}``; a
    repeated id gets ``#2``, ``#3``, ... ``source`` names the input in error messages.
    """
    return _build_boxes(_as_entries(records, source), source)


# ---------------------------------------------------------------------------------------------
# Ground-truth boxes: a local Label Studio export


def _is_flat_box_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and isinstance(value[0], dict) and "bbox" in value[0]


def _label_studio_entries(task: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    annotations = task.get("annotations") or []
    if not isinstance(annotations, list):
        raise InvalidValueError("'annotations' must be a list", field=where)
    chosen = None
    for ann in annotations:
        if isinstance(ann, dict) and not ann.get("was_cancelled") and ann.get("result"):
            chosen = ann["result"]
            break
    if chosen is None:
        return []
    if not isinstance(chosen, list):
        raise InvalidValueError("annotation 'result' must be a list", field=where)
    groups: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    for pos, res in enumerate(chosen):
        if not isinstance(res, dict) or not isinstance(res.get("value", {}), dict):
            raise InvalidValueError(f"result item {pos}: must be an object with an object 'value'", field=where)
        key = res.get("id")
        groups.setdefault(f"box{pos}" if key is None else key, []).append((pos, res))

    entries: list[dict[str, Any]] = []
    for key, items in groups.items():
        entry: dict[str, Any] = {"id": key, "label": "", "_has_transcription": False}
        texts: list[str] = []
        for pos, res in items:
            value = res.get("value") or {}
            if "bbox" not in entry and all(k in value for k in ("x", "y", "width", "height")):
                dims = []
                for name in ("original_width", "original_height"):
                    if res.get(name) is None:
                        raise InvalidValueError(f"result item {pos}: missing {name}", field=where)
                    dims.append(_number(res[name], name, where, pos))
                x, y, w, h = (_number(value[k], k, where, pos) for k in ("x", "y", "width", "height"))
                if w < 0 or h < 0:
                    raise InvalidValueError(
                        f"result item {pos}: negative size (width={w}, height={h})", field=where
                    )
                x1, y1 = x / 100 * dims[0], y / 100 * dims[1]
                entry["bbox"] = [x1, y1, x1 + w / 100 * dims[0], y1 + h / 100 * dims[1]]
                entry["rotation"] = _number(value.get("rotation", 0) or 0, "rotation", where, pos)
                entry["_item"] = pos
            if not entry["label"]:
                labels = value.get("rectanglelabels") or value.get("labels")
                if isinstance(labels, list) and labels:
                    entry["label"] = str(labels[0])
                elif isinstance(labels, str):  # one label written as text: still the box's label
                    entry["label"] = labels
            if res.get("type") == "textarea":
                lines = value.get("text") or []
                if isinstance(lines, str):
                    lines = [lines]
                texts.append("\n".join(str(t) for t in lines))
                entry["_has_transcription"] = True
            if res.get("type") == "number" and value.get("number") is not None and "reading_order" not in entry:
                entry["reading_order"] = value["number"]
            if res.get("parentID") is not None and "parent_id" not in entry:
                entry["parent_id"] = res.get("parentID")
        entry["transcription"] = "\n".join(texts)
        if "bbox" not in entry:
            entry["bbox"] = [0.0, 0.0, 0.0, 0.0]  # no rectangle: counted as degenerate
            entry["_item"] = items[0][0]
        entries.append(entry)
    return entries


_UPLOAD_PREFIX = re.compile(r"^[0-9a-f]{8}-")
"""The prefix Label Studio gives an uploaded file (``3f2a1b9c-p2.png``)."""
_MAX_LISTED_TASKS = 20


def _task_names(task: Mapping[str, Any]) -> list[str]:
    """The names a Label Studio task answers to: its ``id`` and the stem of each file it points
    at (``file_upload`` and every string in ``data``, an upload's ``xxxxxxxx-`` prefix removed)."""
    names = [] if task.get("id") is None else [str(task["id"])]
    data = task.get("data")
    values = list(data.values()) if isinstance(data, Mapping) else []
    for value in [task.get("file_upload")] + values:
        if not isinstance(value, str) or not value.strip():
            continue
        url = urlsplit(value.strip())  # a path, or a URL whose path or query (``?d=dir/p2.png``) names the file
        for file in [url.path] + [v for _, v in parse_qsl(url.query)]:
            stem = re.split(r"[/\\]", file)[-1].rsplit(".", 1)[0]
            for name in (stem, _UPLOAD_PREFIX.sub("", stem)):
                if name and name not in names:
                    names.append(name)
    return names


def _pick_task(tasks: list[Any], page_id: Optional[str], where: str) -> Any:
    """The one task of a multi-task export that belongs to ``page_id``; refuses, listing the tasks,
    when none or several do, or when no page id is given."""
    if len(tasks) == 1:
        return tasks[0]
    named = [(k, _task_names(t) if isinstance(t, Mapping) else []) for k, t in enumerate(tasks)]
    listed = "; ".join(f"task {k}: {', '.join(map(repr, names)) or 'no id or file'}"
                       for k, names in named[:_MAX_LISTED_TASKS])
    more = f"; … ({len(tasks)} tasks)" if len(tasks) > _MAX_LISTED_TASKS else ""
    if page_id is None:
        raise InvalidValueError(f"{len(tasks)} Label Studio tasks and no page id to choose one ({listed}{more})",
                                field=where)
    matches = [k for k, names in named if page_id in names]
    if len(matches) != 1:
        how = "none matches" if not matches else f"tasks {', '.join(map(str, matches))} all match"
        raise InvalidValueError(f"{len(tasks)} Label Studio tasks and {how} page {page_id!r} by id or image file "
                                f"stem ({listed}{more}); give the page id of one task", field=where)
    return tasks[matches[0]]


def load_annotation_boxes(path: Any, page_id: Optional[str] = None) -> AnnotationBoxes:
    """Read one page's ground-truth boxes from a local JSON file.

    Accepted shapes, tried in order: a list of HF-style box dicts (with ``bbox``); a dict whose
    ``annotations`` is such a list; a Label Studio task; a Label Studio export (a list of tasks).
    An export of several tasks is read for the task whose ``id``, or the stem of whose image or
    uploaded file (``data`` values, ``file_upload``; Label Studio's ``xxxxxxxx-`` upload prefix
    ignored), equals ``page_id``; no ``page_id``, no matching task or several raise
    ``InvalidValueError`` listing the tasks. For a task the first non-cancelled annotation with
    results is used; its results are grouped by ``id``: the rectangle (percent of
    ``original_width``/``original_height``) gives the pixel bbox and rotation, ``textarea`` items
    the transcription (lines joined by ``\\n``), a ``number`` item the reading order and
    ``parentID`` the parent. The adapter's drops and sort then apply (see
    :func:`annotation_boxes_from_records`); an id without a rectangle counts as degenerate.
    """
    where = _path_field(path)
    data = _read_json(path)
    if _is_flat_box_list(data):
        return _build_boxes(data, where)
    if isinstance(data, dict) and _is_flat_box_list(data.get("annotations")):
        return _build_boxes(data["annotations"], where)
    if isinstance(data, list) and not data:
        return AnnotationBoxes()
    task = _pick_task(data, page_id, where) if isinstance(data, list) else data
    if not isinstance(task, dict):
        raise InvalidValueError(
            f"expected a Label Studio task or a list of boxes, got {type(task).__name__}", field=where
        )
    return _build_boxes(_label_studio_entries(task, where), where)
