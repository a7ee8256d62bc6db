"""Classification benchmarks over two saved label files (ground truth and prediction).

A label file is one JSON array of ``{"img_path": <string>, "label": <string | integer | boolean>}``
objects; the two files are paired by position, and paired entries must name the same image file
(the text after the last ``/`` or ``\\``, extension included; folders may differ). Files are read
once, as UTF-8 (a leading byte order mark is ignored), and never written.

Every check raises on the first failure, in the order of docs/flowcharts.md, with a message that
names the file and the entry (index and image path) at fault. Errors are scorekit's
``InvalidValueError`` / ``InvalidTypeError`` (so also ``ValueError`` / ``TypeError``); a file that
cannot be opened raises the ``OSError`` of ``open``.

Labels are compared with Python equality, so ``1 == True``. Every metric is recomputed from
``result_list`` when read, and every ratio with a zero denominator is ``0.0``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Hashable

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.flowcharts.classification.classification_bench_types import LabelType, SingleClassificationResult

__all__ = [
    "BinaryClassificationBenchmark",
    "ClassificationBenchmark",
    "MulticlassClassificationBenchmark",
    "SingleClassificationResult",
    "check_generic_classification_benchmark_data",
    "load_classification_benchmark_results",
]

_KEYS = frozenset(("img_path", "label"))
_LABEL_TYPES = (str, int, bool)


def _where(index: int, path: Any) -> str:
    return f"entry {index} of {os.fspath(path)}"


def _read_json(path: str | os.PathLike[str]) -> Any:
    with open(path, "rb") as handle:  # OSError (missing, a folder, unreadable) propagates as is
        data = handle.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidValueError(f"{os.fspath(path)} is not valid UTF-8 ({exc.reason} at byte {exc.start}).") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidValueError(f"{os.fspath(path)} is not valid JSON ({exc.msg} at line {exc.lineno} "
                                f"column {exc.colno}).") from None
    except RecursionError:
        raise InvalidValueError(f"{os.fspath(path)} is not valid JSON (nested too deeply).") from None
    except ValueError as exc:  # an integer too long to convert
        raise InvalidValueError(f"{os.fspath(path)} is not valid JSON ({exc}).") from None


def _file_name(img_path: str) -> str:
    """The final path component, splitting on both ``/`` and ``\\`` (Windows paths on POSIX too)."""
    return img_path.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]


def _unpaired(entries: list, start: int) -> str:
    entry = entries[start]
    if isinstance(entry, dict) and isinstance(entry.get("img_path"), str):
        return f"entry {start} ({entry['img_path']!r})"
    return f"entry {start}"


def load_classification_benchmark_results(
        true_path: str | os.PathLike[str], pred_path: str | os.PathLike[str]) -> tuple[SingleClassificationResult, ...]:
    """Read and check both label files; one record per position, ``img_path`` from the ground truth."""
    trues = _read_json(true_path)
    preds = _read_json(pred_path)
    if not isinstance(trues, list):
        raise InvalidTypeError(f"True classifications should be a list. {os.fspath(true_path)} holds a JSON "
                               f"{type(trues).__name__}.")
    if not isinstance(preds, list):
        raise InvalidTypeError(f"Pred classifications should be a list. {os.fspath(pred_path)} holds a JSON "
                               f"{type(preds).__name__}.")
    if len(trues) != len(preds):
        longer, path, role = (trues, true_path, "true") if len(trues) > len(preds) else (preds, pred_path, "pred")
        raise InvalidValueError(
            f"True and pred classifications should have the same length. Found {len(trues)} and {len(preds)}. "
            f"({os.fspath(true_path)} and {os.fspath(pred_path)}; first unpaired {role} entry: "
            f"{_unpaired(longer, min(len(trues), len(preds)))} of {os.fspath(path)})")
    for entries, path in ((trues, true_path), (preds, pred_path)):
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise InvalidTypeError(f"Items in {os.fspath(path)} should be dictionaries. Entry {index} is a "
                                       f"JSON {type(entry).__name__}.")
            if entry.keys() != _KEYS:
                raise InvalidValueError(f"Found wrong keys in {os.fspath(path)}. Entry {index} has keys "
                                        f"{sorted(entry)}; expected exactly ['img_path', 'label'].")
    results = []
    for index, (t, p) in enumerate(zip(trues, preds)):
        for entry, path in ((p, pred_path), (t, true_path)):
            if not isinstance(entry["img_path"], str):
                raise InvalidTypeError(f"Image path should be a string. Found {type(entry['img_path'])}. "
                                       f"({_where(index, path)})")
        for entry, path, role in ((p, pred_path, "Predicted"), (t, true_path, "True")):
            if type(entry["label"]) not in _LABEL_TYPES:
                raise InvalidTypeError(f"{role} label should be a string, integer, or boolean. Found "
                                       f"{type(entry['label'])}. ({_where(index, path)}, image "
                                       f"{entry['img_path']!r})")
        if _file_name(p["img_path"]) != _file_name(t["img_path"]):
            raise InvalidValueError(f"Image paths should match between true and pred classifications. Found "
                                    f"{p['img_path']} and {t['img_path']}. ({_where(index, pred_path)} and "
                                    f"{_where(index, true_path)})")
        results.append(SingleClassificationResult(img_path=t["img_path"], true=t["label"], pred=p["label"]))
    return tuple(results)


def check_generic_classification_benchmark_data(
        true_path: str | os.PathLike[str], pred_path: str | os.PathLike[str]) -> None:
    """Raise the first problem of the two label files (see :func:`load_classification_benchmark_results`)."""
    load_classification_benchmark_results(true_path, pred_path)


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


@dataclass(frozen=True, kw_only=True)
class ClassificationBenchmark(Generic[LabelType]):
    """Saved predicted labels against ground truth, paired by position; accuracy and the records.
    Keyword arguments only; the files are read once, here, and never written."""

    true_path: Path
    pred_path: Path
    result_list: tuple[SingleClassificationResult[LabelType], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "result_list", load_classification_benchmark_results(self.true_path, self.pred_path))

    def __len__(self) -> int:
        return len(self.result_list)

    @property
    def correct_predictions(self) -> tuple[SingleClassificationResult[LabelType], ...]:
        return tuple(r for r in self.result_list if r.pred == r.true)

    @property
    def incorrect_predictions(self) -> tuple[SingleClassificationResult[LabelType], ...]:
        return tuple(r for r in self.result_list if r.pred != r.true)

    @property
    def accuracy(self) -> float:
        return _ratio(len(self.correct_predictions), len(self.result_list))

    @property
    def img_paths(self) -> tuple[str, ...]:
        return tuple(r.img_path for r in self.result_list)

    @property
    def trues(self) -> tuple[LabelType, ...]:
        return tuple(r.true for r in self.result_list)

    @property
    def preds(self) -> tuple[LabelType, ...]:
        return tuple(r.pred for r in self.result_list)

    def _entry(self, index: int, *, pred: bool) -> str:
        return _where(index, self.pred_path if pred else self.true_path)


@dataclass(frozen=True, kw_only=True)
class BinaryClassificationBenchmark(ClassificationBenchmark[int]):
    """Labels 0 (negative) and 1 (positive) only (booleans rejected); confusion counts and rates."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for index, r in enumerate(self.result_list):
            found = f"Found pred={r.pred!r}, true={r.true!r} for image {r.img_path!r}"
            if type(r.pred) is not int or type(r.true) is not int:
                bad = self._entry(index, pred=type(r.pred) is not int)
                raise InvalidTypeError(f"BinaryClassificationBenchmark expects integer labels. {found}. ({bad})")
            if r.pred not in (0, 1) or r.true not in (0, 1):
                bad = self._entry(index, pred=r.pred not in (0, 1))
                raise InvalidValueError(f"BinaryClassificationBenchmark expects only 0 and 1 labels. {found}. ({bad})")

    def _cell(self, true: int, pred: int) -> tuple[SingleClassificationResult[int], ...]:
        return tuple(r for r in self.result_list if r.true == true and r.pred == pred)

    @property
    def tp(self) -> tuple[SingleClassificationResult[int], ...]:
        return self._cell(1, 1)

    @property
    def fp(self) -> tuple[SingleClassificationResult[int], ...]:
        return self._cell(0, 1)

    @property
    def fn(self) -> tuple[SingleClassificationResult[int], ...]:
        return self._cell(1, 0)

    @property
    def tn(self) -> tuple[SingleClassificationResult[int], ...]:
        return self._cell(0, 0)

    @property
    def num_tp(self) -> int:
        return len(self.tp)

    @property
    def num_fp(self) -> int:
        return len(self.fp)

    @property
    def num_fn(self) -> int:
        return len(self.fn)

    @property
    def num_tn(self) -> int:
        return len(self.tn)

    @property
    def precision(self) -> float:
        return _ratio(self.num_tp, self.num_tp + self.num_fp)

    @property
    def recall(self) -> float:
        return _ratio(self.num_tp, self.num_tp + self.num_fn)

    @property
    def f1_score(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def tpr(self) -> float:
        return self.recall

    @property
    def fpr(self) -> float:
        return _ratio(self.num_fp, self.num_fp + self.num_tn)

    @property
    def specificity(self) -> float:
        return _ratio(self.num_tn, self.num_tn + self.num_fp)

    @property
    def tnr(self) -> float:
        return self.specificity


@dataclass(frozen=True, kw_only=True)
class MulticlassClassificationBenchmark(ClassificationBenchmark[LabelType]):
    """Labels from a declared tuple ``labels`` (non-empty, unique by hash and equality; its order is
    the order of every dict below): the confusion matrix, per-class counts and accuracies."""

    labels: tuple[LabelType, ...]

    def __post_init__(self) -> None:
        super().__post_init__()
        try:
            labels = tuple(self.labels)
        except TypeError:
            raise InvalidTypeError(f"labels must be a tuple of labels. Found {type(self.labels)}.") from None
        object.__setattr__(self, "labels", labels)
        if not labels:
            raise InvalidValueError("labels cannot be empty.")
        try:
            unique = len(set(labels)) == len(labels)
        except TypeError as exc:
            raise InvalidTypeError(f"labels must be hashable. Found labels: {labels!r} ({exc}).") from None
        if not unique:
            raise InvalidValueError(f"labels must be unique. Found labels: {labels!r}. (Uniqueness follows Python "
                                    "equality: 1 and True are the same label.)")
        index = self._label_index()
        for i, r in enumerate(self.result_list):
            self._check_record(i, r)
            if r.true not in index:
                raise InvalidValueError(f"True label {r.true!r} for image {r.img_path!r} is not in labels: "
                                        f"{labels!r}. ({self._entry(i, pred=False)})")
            if r.pred not in index:
                raise InvalidValueError(f"Predicted label {r.pred!r} for image {r.img_path!r} is not in labels: "
                                        f"{labels!r}. ({self._entry(i, pred=True)})")

    def _check_record(self, index: int, record: SingleClassificationResult[LabelType]) -> None:
        """A subclass's extra check of one record, before the membership checks."""

    def _label_index(self) -> dict[Hashable, int]:
        return {label: k for k, label in enumerate(self.labels)}

    def _counts(self) -> list[list[int]]:
        index = self._label_index()
        n = len(self.labels)
        grid = [[0] * n for _ in range(n)]
        for r in self.result_list:
            grid[index[r.true]][index[r.pred]] += 1
        return grid

    @property
    def confusion_matrix(self) -> dict[LabelType, dict[LabelType, int]]:
        grid = self._counts()
        return {t: dict(zip(self.labels, row)) for t, row in zip(self.labels, grid)}

    @property
    def num_per_true_class(self) -> dict[LabelType, int]:
        return {t: sum(row) for t, row in zip(self.labels, self._counts())}

    @property
    def num_per_pred_class(self) -> dict[LabelType, int]:
        grid = self._counts()
        return {p: sum(row[k] for row in grid) for k, p in enumerate(self.labels)}

    @property
    def per_class_accuracy(self) -> dict[LabelType, float]:
        grid = self._counts()
        return {t: _ratio(row[k], sum(row)) for k, (t, row) in enumerate(zip(self.labels, grid))}


