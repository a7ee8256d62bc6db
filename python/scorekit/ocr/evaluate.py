"""OCR output scored against ground truth, file by file or folder by folder (``scorekit ocr-eval``).

Owns the pairing of folders by file name, the streamed evaluation (one page read, compared and
reduced to its numbers at a time: a folder of any size runs in bounded memory), the totals over a
folder (total edits over total length), the engine comparison (per-page CER differences through
:func:`scorekit.stats.paired_difference`) and the JSON document. Reading is
:func:`scorekit.ocr.read`'s, the metrics are :func:`scorekit.ocr.metrics.compare_texts`'.

Pairing (:func:`pair_folders`): only the files directly in a folder are pages (hidden files and
subfolders are not). A ground-truth file pairs with the OCR file of the same name; failing that,
with the one OCR file whose *stem* (the name up to its first dot: ``0001.gt.xml``,
``0001.tesseract.txt`` and ``0001.xml`` all have the stem ``0001``) is the same. Two candidates
with one stem are an error naming both, never a guess. Files without a partner are listed in
the result, never dropped silently.
"""

from __future__ import annotations

import heapq
import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, cast

from scorekit.errors import InputTooLargeError, InvalidValueError

__all__ = ["METRICS", "DEFAULT_METRICS", "PageScore", "Totals", "Pairing", "pair_folders", "score_pair", "evaluate",
           "Evaluation", "rate", "DIFFS_KEPT", "top_confusions", "to_json", "json_pieces"]

#: The metrics ``--metrics`` chooses from: CER, WER, bag-of-words WER and flexible character accuracy.
METRICS = ("cer", "wer", "bow", "fca")
#: What is computed unless told otherwise (fca, the costly one, only when asked).
DEFAULT_METRICS = ("cer", "wer", "bow")
#: Pages of a folder whose aligned diff the HTML report shows (the worst by CER, per engine).
DIFFS_KEPT = 10


def rate(edits: int, length: int) -> float:
    """Edits over length as dinglehopper 0.11 gives it (:func:`scorekit.ocr.metrics.error_rate`):
    0 without an edit, ``inf`` for edits against an empty ground truth."""
    from scorekit.ocr.metrics import error_rate

    return error_rate(edits, length)


def _stem(name: str) -> str:
    return name.split(".", 1)[0]


def _pages(folder: Path) -> list[str]:
    return sorted(e.name for e in os.scandir(folder) if e.is_file() and not e.name.startswith("."))


@dataclass(frozen=True)
class Pairing:
    """Folders paired page by page: ``pairs`` are ``(name, gt path, (ocr path per engine))`` in
    ground-truth name order; ``gt_only`` the ground-truth files missing from at least one engine
    (with the engines they miss from), ``ocr_only`` per engine the OCR files without ground truth."""

    pairs: tuple[tuple[str, Path, tuple[Path, ...]], ...]
    gt_only: tuple[tuple[str, tuple[str, ...]], ...]
    ocr_only: dict[str, tuple[str, ...]]


def _match(gt_names: list[str], ocr_dir: Path) -> tuple[dict[str, str], list[str]]:
    """GT name -> OCR name for one OCR folder, and the OCR names left without a partner."""
    ocr_names = _pages(ocr_dir)
    by_name = set(ocr_names)
    stems: dict[str, list[str]] = {}
    for name in ocr_names:
        stems.setdefault(_stem(name), []).append(name)
    matched: dict[str, str] = {g: g for g in gt_names if g in by_name}
    taken = set(matched.values())
    gt_stems: dict[str, list[str]] = {}
    for g in gt_names:
        if g not in matched:
            gt_stems.setdefault(_stem(g), []).append(g)
    for stem, gts in gt_stems.items():
        candidates = [o for o in stems.get(stem, ()) if o not in taken]
        if not candidates:
            continue
        if len(gts) > 1 or len(candidates) > 1:
            raise InvalidValueError(f"cannot pair by file name: {', '.join(gts)} (ground truth) and "
                                    f"{', '.join(candidates)} (in {str(ocr_dir)!r}) share the stem {stem!r}; "
                                    "give them the same names or distinct stems")
        matched[gts[0]] = candidates[0]
        taken.add(candidates[0])
    return matched, [o for o in ocr_names if o not in taken]


def pair_folders(gt_dir: os.PathLike | str, ocr_dirs: Sequence[os.PathLike | str]) -> Pairing:
    """Pair the pages of ``gt_dir`` with those of each folder of ``ocr_dirs`` (see the module)."""
    gt_dir = Path(gt_dir)
    gt_names = _pages(gt_dir)
    matches, extra = [], {}
    for folder in ocr_dirs:
        matched, left = _match(gt_names, Path(folder))
        matches.append(matched)
        extra[str(folder)] = tuple(left)
    pairs, gt_only = [], []
    for g in gt_names:
        missing = tuple(str(f) for f, m in zip(ocr_dirs, matches) if g not in m)
        if missing:
            gt_only.append((g, missing))
            continue
        pairs.append((g, gt_dir / g, tuple(Path(f) / m[g] for f, m in zip(ocr_dirs, matches))))
    return Pairing(tuple(pairs), tuple(gt_only), extra)


class _Rates:
    """CER and WER from the edit counts and lengths a page or a total holds."""

    char_edits: int
    n_characters: int
    word_edits: int
    n_words: int

    @property
    def cer(self) -> float:
        return rate(self.char_edits, self.n_characters)

    @property
    def wer(self) -> float:
        return rate(self.word_edits, self.n_words)


@dataclass(frozen=True)
class PageScore(_Rates):
    """One page's numbers: what the totals and the per-page table need, never its text."""

    name: str
    gt: str
    ocr: str
    n_characters: int
    char_edits: int
    n_words: int
    word_edits: int
    bow_wer: Optional[float] = None
    fca: Optional[float] = None
    word_accuracy: Optional[float] = None


def score_pair(gt_path: os.PathLike | str, ocr_path: os.PathLike | str, *, level: Optional[str],
               metrics: Sequence[str], name: Optional[str] = None,
               alignment: bool = True) -> tuple[PageScore, Any, Any, Any]:
    """Read and compare one pair: ``(PageScore, comparison, gt document, ocr document)``. CER, WER,
    the confusions, character classes and word accuracy are always computed, the alignment (the
    diff's runs) unless ``alignment`` is false; ``bow`` and ``fca`` when in ``metrics``."""
    from scorekit.ocr import read
    from scorekit.ocr.metrics import compare_texts

    gt_doc = read(gt_path, level=level)
    ocr_doc = read(ocr_path, level=level)
    wanted = ("cer", "wer", "alignment" if alignment else "confusions") + tuple(m for m in ("bow", "fca") if m in metrics)
    name = name if name is not None else Path(gt_path).name
    try:
        result = compare_texts(gt_doc.text, ocr_doc.text, metrics=wanted)
    except InputTooLargeError as exc:  # fca's size guard: the evaluation stops, no page is left out
        raise InputTooLargeError(f"page {name} (OCR {str(ocr_path)!r}): {exc}; leave fca out of --metrics "
                                 "to score these pages") from None
    counts = cast("tuple[int, int, int]", (result.char_edits, result.n_words, result.word_edits))  # asked for
    score = PageScore(name=name, gt=str(gt_path), ocr=str(ocr_path),
                      n_characters=result.n_characters, char_edits=counts[0], n_words=counts[1],
                      word_edits=counts[2], bow_wer=result.bow_wer, fca=result.fca,
                      word_accuracy=result.word_accuracy)
    return score, result, gt_doc, ocr_doc


def _count(rate_: Optional[float], length: int, when_empty: int) -> int:
    """The count behind a rate over ``length`` units (``when_empty`` when there is no unit)."""
    return round(rate_ * length) if length and rate_ is not None else when_empty


@dataclass
class Totals(_Rates):
    """One engine's running totals over the pages scored so far, and the worst pages' material for
    the report's diffs (at most :data:`DIFFS_KEPT`, so memory stays bounded)."""

    name: str
    metrics: tuple[str, ...]
    keep_diffs: int = 0
    pages: list[PageScore] = field(default_factory=list)
    n_characters: int = 0
    char_edits: int = 0
    n_words: int = 0
    word_edits: int = 0
    bow_edits: int = 0
    word_hits: int = 0
    fca_mass: float = 0.0
    char_classes: dict[str, list[int]] = field(default_factory=dict)
    confusions: Counter = field(default_factory=Counter)
    worst: list = field(default_factory=list)

    def add(self, score: PageScore, result: Any, gt_doc: Any, ocr_doc: Any) -> None:
        self.pages.append(score)
        self.n_characters += score.n_characters
        self.char_edits += score.char_edits
        self.n_words += score.n_words
        self.word_edits += score.word_edits
        # bag distance against an empty ground truth: every OCR word, as the word edits count them
        self.bow_edits += _count(score.bow_wer, score.n_words, score.word_edits)
        self.word_hits += _count(score.word_accuracy, score.n_words, 0)
        self.fca_mass += score.fca * score.n_characters if score.fca is not None else 0.0
        for name, counts in result.char_classes.items():
            total = self.char_classes.setdefault(name, [0, 0])
            total[0] += counts["count"]
            total[1] += counts["errors"]
        self.confusions.update(dict(result.confusions))
        if self.keep_diffs:
            entry = (score.cer, -len(self.pages), score, result.alignment, gt_doc, ocr_doc)
            if len(self.worst) < self.keep_diffs:
                heapq.heappush(self.worst, entry)
            elif entry[:2] > self.worst[0][:2]:
                heapq.heapreplace(self.worst, entry)

    def summary(self) -> dict[str, Any]:
        """The totals under dinglehopper's keys (``cer``, ``wer``, ``n_characters``, ``n_words``)
        and scorekit's (``bow_wer``, ``fca``, ``char_edits``, ``word_edits``, ``word_accuracy``,
        ``char_classes``): total edits (correct words, errors) over total length, except ``fca``,
        the pages' accuracies weighted by their ground-truth characters."""
        out: dict[str, Any] = {"cer": self.cer, "wer": self.wer, "n_characters": self.n_characters,
                               "n_words": self.n_words, "char_edits": self.char_edits, "word_edits": self.word_edits}
        if "bow" in self.metrics:
            out["bow_wer"] = rate(self.bow_edits, self.n_words)
        if "fca" in self.metrics:
            out["fca"] = self.fca_mass / self.n_characters if self.n_characters else _single(self.pages, "fca")
        out["word_accuracy"] = self.word_hits / self.n_words if self.n_words else None
        out["char_classes"] = {name: {"count": c, "errors": e, "accuracy": (c - e) / c if c else None}
                               for name, (c, e) in sorted(self.char_classes.items())}
        return out

    def diffs(self) -> list[tuple]:
        """The kept pages, worst CER first: ``(PageScore, alignment, gt document, ocr document)``."""
        return [entry[2:] for entry in sorted(self.worst, key=lambda e: e[:2], reverse=True)]


def _single(pages: list[PageScore], attribute: str) -> Optional[float]:
    """FCA over pages without a ground-truth character: the page's own when there is one page
    (1.0 or 0.0), else none."""
    return getattr(pages[0], attribute) if len(pages) == 1 else None


@dataclass
class Evaluation:
    """What ``scorekit ocr-eval`` found: per engine its totals, the pairing, and the paired
    comparisons of every two engines' per-page CER."""

    gt: str
    engines: list[Totals]
    folder: bool
    pairing: Optional[Pairing]
    level: Optional[str]
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)


def _compare_engines(evaluation: Evaluation) -> None:
    """Per pair of engines, the paired bootstrap interval and sign test of the per-page CER
    difference. Pages with an empty ground truth have no finite CER: they are left out of the
    comparison and listed in ``excluded``."""
    from scorekit.stats import paired_difference

    engines = evaluation.engines
    keep = [k for k, page in enumerate(engines[0].pages) if page.n_characters > 0]
    evaluation.excluded = [page.name for page in engines[0].pages if page.n_characters == 0]
    for i in range(len(engines)):
        for j in range(i + 1, len(engines)):
            a, b = engines[i], engines[j]
            entry: dict[str, Any] = {"a": a.name, "b": b.name, "pages": len(keep)}
            if keep:
                d = paired_difference([a.pages[k].cer for k in keep], [b.pages[k].cer for k in keep])
                entry["cer_difference"] = d.as_dict()
            else:
                entry["cer_difference"] = None
            evaluation.comparisons.append(entry)


def _check_path(label: str, path: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise InvalidValueError(f"{label} {path!r}: no such file or folder")
    if not (p.is_file() or p.is_dir()):
        raise InvalidValueError(f"{label} {path!r} is neither a file nor a folder")
    return p


def evaluate(gt: str, ocrs: Sequence[str], *, level: Optional[str] = None, metrics: Sequence[str] = DEFAULT_METRICS,
             keep_diffs: int = 0, progress: Optional[Callable[[int, Optional[int]], None]] = None) -> Evaluation:
    """Score ``ocrs`` (one engine, or several against the same ground truth) against ``gt``: two
    files, or folders paired by :func:`pair_folders`. Pages stream: only their numbers (and the
    ``keep_diffs`` worst pages per engine) are kept. ``progress(done, total)`` is called per page."""
    unknown = [m for m in metrics if m not in METRICS]
    if unknown or not metrics:
        raise InvalidValueError(f"must be a comma-separated choice of {', '.join(METRICS)}, got "
                                f"{','.join(metrics)!r}", field="--metrics")
    if len(set(map(os.path.realpath, ocrs))) != len(ocrs):
        raise InvalidValueError("the same OCR input is given twice")
    gt_path = _check_path("GT", gt)
    ocr_paths = [_check_path("OCR", o) for o in ocrs]
    folder = gt_path.is_dir()
    for given, path in zip(ocrs, ocr_paths):
        if path.is_dir() != folder:
            raise InvalidValueError(f"OCR {given!r} must be a {'folder' if folder else 'file'}, as GT {gt!r} is")
    metrics = tuple(m for m in METRICS if m in metrics)
    engines = [Totals(str(o), metrics, keep_diffs) for o in ocrs]
    pairing = None
    if folder:
        pairing = pair_folders(gt_path, ocr_paths)
        if not pairing.pairs:
            raise InvalidValueError(f"no page of GT {gt!r} has a partner in "
                                    + ", ".join(repr(o) for o in ocrs) + " (pages pair by file name)")
        pages: Iterable[tuple[str, Path, tuple[Path, ...]]] = pairing.pairs
    else:
        pages = [(gt_path.name, gt_path, tuple(ocr_paths))]
    total = len(pairing.pairs) if pairing else 1
    for done, (name, g, os_) in enumerate(pages, 1):
        for totals, o in zip(engines, os_):
            totals.add(*score_pair(g, o, level=level, metrics=metrics, name=name, alignment=keep_diffs > 0))
        if progress is not None:
            progress(done, total)
    evaluation = Evaluation(gt, engines, folder, pairing, level)
    if len(engines) > 1:
        _compare_engines(evaluation)
    return evaluation


def _finite(value: Any) -> Any:
    """JSON's value of a figure: strict JSON has no ``inf`` (dinglehopper writes ``Infinity``)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _page_dict(page: PageScore, metrics: Sequence[str]) -> dict[str, Any]:
    out = {"name": page.name, "gt": page.gt, "ocr": page.ocr, "cer": _finite(page.cer), "wer": _finite(page.wer),
           "n_characters": page.n_characters, "n_words": page.n_words, "char_edits": page.char_edits,
           "word_edits": page.word_edits}
    if "bow" in metrics:
        out["bow_wer"] = _finite(page.bow_wer)
    if "fca" in metrics:
        out["fca"] = _finite(page.fca)
    out["word_accuracy"] = _finite(page.word_accuracy)
    return out


class _PageRows(list):
    """A folder's ``pages`` in the JSON document: holds the pages' numbers and gives each page's
    object only as it is iterated, so that writing the JSON of 10,000 pages never holds 10,000
    objects (:func:`json_pieces` iterates it)."""

    def __init__(self, pages: Sequence[PageScore], metrics: Sequence[str]) -> None:
        super().__init__(pages)
        self.metrics = metrics

    def __iter__(self) -> Iterator[dict[str, Any]]:  # type: ignore[override]
        return (_page_dict(page, self.metrics) for page in super().__iter__())

    def __getitem__(self, index: Any) -> Any:
        item = super().__getitem__(index)
        return [_page_dict(p, self.metrics) for p in item] if isinstance(index, slice) else _page_dict(item, self.metrics)


def json_pieces(data: dict[str, Any]) -> Iterator[str]:
    """The JSON text of :func:`to_json`'s document, piece by piece (strict: no NaN or infinity)."""
    yield from json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False).iterencode(data)
    yield "\n"


def _engine_dict(totals: Totals, folder: bool) -> dict[str, Any]:
    out = {k: _finite(v) if not isinstance(v, dict) else v for k, v in totals.summary().items()}
    out["confusions"] = [{"gt": g, "ocr": o, "count": n} for (g, o), n in top_confusions(totals.confusions)]
    if folder:
        out["pages"] = _PageRows(totals.pages, totals.metrics)
    return out


#: Character confusions listed in the JSON and the report, most frequent first.
CONFUSIONS_SHOWN = 50


def top_confusions(confusions: Counter) -> list[tuple[tuple[str, str], int]]:
    # (heapq.nsmallest is sorted(...)[:n] without sorting them all.)
    return heapq.nsmallest(CONFUSIONS_SHOWN, confusions.items(), key=lambda kv: (-kv[1], kv[0]))


def to_json(evaluation: Evaluation) -> dict[str, Any]:
    """The JSON document: one engine gives dinglehopper's shape (``gt``, ``ocr``, ``cer``, ``wer``,
    ``n_characters``, ``n_words``) plus scorekit's figures, and ``pages`` and ``unpaired`` for
    folders; several engines give ``engines`` (one such object each, with ``ocr``),
    ``comparisons`` and ``excluded_from_comparison``."""
    engines = [{"ocr": t.name, **_engine_dict(t, evaluation.folder)} for t in evaluation.engines]
    head: dict[str, Any] = {"gt": evaluation.gt, "textequiv_level": evaluation.level,
                            "metrics": list(evaluation.engines[0].metrics)}
    if evaluation.pairing is not None:
        head["unpaired"] = {"gt_only": [{"name": n, "missing_in": list(m)} for n, m in evaluation.pairing.gt_only],
                            "ocr_only": {k: list(v) for k, v in evaluation.pairing.ocr_only.items()}}
    if len(engines) == 1:
        return {**head, **engines[0]}
    return {**head, "engines": engines, "comparisons": evaluation.comparisons,
            "excluded_from_comparison": evaluation.excluded}
