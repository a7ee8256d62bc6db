"""Character and word error rates: ``StringMetric`` and the batch machinery behind it.

Owns text coercion (``None`` → "", objects with ``.text``), canonicalisation of both sides, the
call into the Levenshtein kernels, and the construction of ``Score`` objects with exact corpus
aggregation (Σ edits / Σ reference length, never a mean of rates). It never loops over DP cells:
a corpus goes through the batch kernels, a single pair through the same kernels without packing
(:func:`count_pair`), so that one ``score`` call does not import NumPy.

Decisions (documented where they differ from the reference kit's jiwer backend):

* CER counts every code point of the canonicalised strings. jiwer's CER silently strips leading
  and trailing whitespace before aligning (so ``("cat", " cat ")`` scores 0 edits there, 2 here);
  pass ``normalize="strip"`` to get jiwer's behaviour. For strings without edge whitespace the
  hit/substitution/deletion/insertion counts equal ``jiwer.process_characters``.
* WER splits on any run of Unicode whitespace, exactly like Python's ``str.split()``; its counts
  equal ``jiwer.process_words``.
* ``unit="grapheme"`` (CER only) counts extended grapheme clusters (UAX #29) instead of code
  points: every length, hit and edit is a cluster (docs/decisions.md#grapheme-clusters). Without
  multi-code-point clusters it gives exactly the code-point counts.
* An empty reference gives ``value = float(edits)`` (pure insertions, not a rate) and a detail
  without the S/D/I/H keys, as the reference does.
"""

from __future__ import annotations

import bisect
import itertools
import math
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Sequence

from scorekit import _kernels
from scorekit._kernels import levenshtein as lev
from scorekit.base import GraphGrammar, LazyScores, Score

if TYPE_CHECKING:
    import numpy as np

MODES = ("cer", "wer")

#: Columns of :func:`count_errors` results.
COUNT_COLUMNS = ("ref_len", "substitutions", "deletions", "insertions")


def as_text(x: Any) -> str:
    """Coerce a prediction or reference to text: ``None`` → "", ``str`` as is, an object with a
    ``.text`` attribute → that text if it is a ``str`` else "" (never the literal ``"None"``),
    anything else → ``str(x)``."""
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if hasattr(x, "text"):
        text = x.text
        return text if isinstance(text, str) else ""
    return str(x)


def check_mode(mode: Any) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be 'cer' or 'wer', got {mode!r}")
    return mode


def count_errors(
    preds: Sequence[str], refs: Sequence[str], mode: str, *, threads: int = 0,
    pred_name: str = "preds", ref_name: str = "refs", unit: str = "char",
) -> np.ndarray:
    """Error counts of every (pred, ref) pair of strings: ``int64[n, 4]`` in :data:`COUNT_COLUMNS`
    order (reference length in characters, grapheme clusters or words, substitutions, deletions,
    insertions). With ``unit="grapheme"`` both sides go through one packer (shared cluster ids)."""
    from scorekit._graphemes import grapheme_packer, pack_units  # NumPy is loaded only by batches (see count_pair)

    packer = grapheme_packer() if unit == "grapheme" else None
    hyp = pack_units(preds, pred_name, unit, packer)
    ref = pack_units(refs, ref_name, unit, packer)
    if len(hyp[1]) != len(ref[1]):
        raise ValueError(f"{pred_name} has {len(hyp[1]) - 1} items but {ref_name} has {len(ref[1]) - 1}")
    return count_packed(hyp, ref, mode, threads=threads)


def count_packed(hyp: tuple[np.ndarray, np.ndarray], ref: tuple[np.ndarray, np.ndarray], mode: str, *,
                 threads: int = 0) -> np.ndarray:
    """:func:`count_errors` on sides already packed as (values, offsets)."""
    import numpy as np

    (hyp_values, hyp_offsets), (ref_values, ref_offsets) = hyp, ref
    out = np.empty((len(ref_offsets) - 1, 4), dtype=np.int64)
    if mode == "cer":
        raw = lev.alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads)
        out[:, 0] = np.diff(ref_offsets)
        out[:, 1:] = raw[:, 1:]
    else:
        raw = lev.word_alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads)
        out[:, 0] = raw[:, 4]
        out[:, 1:] = raw[:, 1:4]
    return out


def count_pair(pred: str, gold: str, mode: str, unit: str = "char") -> tuple[int, int, int, int]:
    """:func:`count_errors` of one pair, as ints. The compiled core takes the two strings as they
    are, so scoring one pair loads no NumPy and a first ``score`` call starts fast; the Numba
    backend packs the pair and runs the batch kernels."""
    core = _kernels.compiled()
    if core is not None:
        if unit == "char":
            return core.text_pair_counts(gold, pred, mode)
        return core.text_pair_counts(gold, pred, mode, unit)
    counts = count_errors([pred], [gold], mode, threads=1, pred_name="pred", ref_name="gold", unit=unit)
    return tuple(int(v) for v in counts[0])


def text_score(mode: str, ref_len: int, substitutions: int, deletions: int, insertions: int) -> Score:
    """The ``Score`` of one pair from its counts (the reference kit's layout of ``detail``)."""
    edits = substitutions + deletions + insertions
    if ref_len == 0:
        return Score(value=float(edits), metric=mode,
                     detail={"edits": edits, "ref_len": 0, "higher_is_better": False})
    return Score(
        value=edits / ref_len,
        metric=mode,
        detail={
            "edits": edits,
            "ref_len": ref_len,
            "higher_is_better": False,
            "substitutions": substitutions,
            "deletions": deletions,
            "insertions": insertions,
            "hits": ref_len - substitutions - deletions,
        },
    )


class TextScores(LazyScores):
    """Read-only sequence of per-item CER/WER ``Score`` objects, built on access from compact
    per-chunk count arrays (reference length, substitutions, deletions, insertions)."""

    def __init__(self, mode: str, chunks: list[np.ndarray]) -> None:
        self._mode = mode
        self._chunks = chunks
        self._starts = list(itertools.accumulate((len(c) for c in chunks), initial=0))

    def __len__(self) -> int:
        return self._starts[-1]

    def _item(self, k: int) -> Score:
        c = bisect.bisect_right(self._starts, k) - 1
        row = self._chunks[c][k - self._starts[c]]
        return text_score(self._mode, *(int(v) for v in row))

    def __iter__(self) -> Iterator[Score]:
        for chunk in self._chunks:
            for row in chunk:
                yield text_score(self._mode, *(int(v) for v in row))

    def __repr__(self) -> str:
        return f"<TextScores: {len(self)} {self._mode} scores>"


def compact_counts(counts: np.ndarray) -> np.ndarray:
    """int32 storage when it fits (it always does for realistic text), int64 otherwise."""
    import numpy as np

    return counts.astype(np.int32) if counts.size == 0 or counts.max() < 2**31 else counts


def error_rate(edits: int, ref_len: int) -> float:
    """Corpus error rate Σedits/Σref_len; NaN when there is no reference unit at all."""
    return edits / ref_len if ref_len else math.nan


class StringMetric:
    """Character (``mode="cer"``) or word (``mode="wer"``) error rate; lower is better. ``unit``
    (CER only) is ``"char"`` (code points, the default) or ``"grapheme"`` (extended grapheme
    clusters).

    >>> m = StringMetric("cer")
    >>> round(m("hello wrld", "hello world").value, 4)
    0.0909
    >>> StringMetric("wer")("hello wrld", "hello world").detail["substitutions"]
    1
    >>> StringMetric("cer", unit="grapheme")("नमस्त", "नमस्ते").detail["ref_len"]
    3
    """

    #: ``"char"`` or ``"grapheme"`` (a class default, so subclasses that skip ``__init__`` keep working).
    unit = "char"

    def __init__(self, mode: str = "cer", *, canonicalizer: Optional[Callable[[str], str]] = None,
                 unit: str = "char") -> None:
        from scorekit._graphemes import check_unit

        self.mode = check_mode(mode)
        self.unit = check_unit(unit, self.mode)
        if canonicalizer is not None and not callable(canonicalizer):
            raise TypeError(f"canonicalizer must be callable, got {type(canonicalizer).__name__}")
        self.canonicalizer = canonicalizer

    @property
    def name(self) -> str:
        return self.mode

    def __repr__(self) -> str:
        unit = "" if self.unit == "char" else f", unit={self.unit!r}"
        return f"StringMetric({self.mode!r}, canonicalizer={self.canonicalizer!r}{unit})"

    def prepare(self, x: Any) -> str:
        """Coerce one side to text and canonicalise it."""
        text = as_text(x)
        if self.canonicalizer is not None:
            text = self.canonicalizer(text)
            if not isinstance(text, str):
                raise TypeError(f"canonicalizer must return str, got {type(text).__name__}")
        return text

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        return text_score(self.mode, *count_pair(self.prepare(pred), self.prepare(gold), self.mode, self.unit))

    def aggregate(self, scores: Iterable[Any]) -> float:
        """Corpus rate Σ detail["edits"] / Σ detail["ref_len"] (missing keys count 0); NaN if Σref_len is 0."""
        edits = ref_len = 0
        for s in scores:
            detail = getattr(s, "detail", None) or {}
            edits += detail.get("edits", 0)
            ref_len += detail.get("ref_len", 0)
        return error_rate(edits, ref_len)
