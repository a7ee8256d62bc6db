"""Bulk scoring API: many pairs in, NumPy arrays and exact corpus totals out.

Owns the array-first entry points a nightly job uses — ``cer``, ``wer`` (per-item counts and rates
plus the exact corpus rate), ``levenshtein`` (raw distances) and ``schwa_cer`` — on top of the
batch kernels. Inputs are sequences (or any iterable) of ``str``; anything else is an error naming
the argument and the item. Nothing is canonicalised unless ``normalize`` says so. ``unit="grapheme"``
(``cer``, ``levenshtein``, ``editops``, ``schwa_cer``) counts extended grapheme clusters instead of
code points (docs/decisions.md#grapheme-clusters); ``wer`` counts words either way.

>>> r = cer(["hello wrld", "ct"], ["hello world", "cat"])
>>> r.edits.tolist(), r.ref_len.tolist(), round(r.corpus_rate, 4)
([1, 1], [11, 3], 0.1429)
>>> levenshtein(["kitten"], ["sitting"]).tolist()
[3]
>>> cer(["नमस्त"], ["नमस्ते"], unit="grapheme").ref_len.tolist()    # न म स्ते: 3 clusters, 6 code points
[3]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from scorekit import _kernels
from scorekit._graphemes import check_unit, grapheme_packer, pack_units
from scorekit._kernels import levenshtein as lev
from scorekit._packing import as_sequence, check_same_length
from scorekit.canonicalize import resolve_canonicalizer
from scorekit.metrics.strings import count_errors, error_rate
from scorekit.text import SCHWA_CHARS, JoinedText, schwa_distances_and_lengths


@dataclass(frozen=True)
class BatchResult:
    """Per-item error counts of a batch (``int64`` arrays of length n) and their exact totals."""

    metric: str
    ref_len: np.ndarray
    substitutions: np.ndarray
    deletions: np.ndarray
    insertions: np.ndarray

    @property
    def hits(self) -> np.ndarray:
        return self.ref_len - self.substitutions - self.deletions

    @property
    def edits(self) -> np.ndarray:
        return self.substitutions + self.deletions + self.insertions

    @property
    def rates(self) -> np.ndarray:
        """Per-item rate edits/ref_len; for an empty reference the edit count itself (as the
        reference kit's ``StringMetric`` reports it)."""
        edits = self.edits.astype(np.float64)
        safe = np.where(self.ref_len > 0, self.ref_len, 1)
        return np.where(self.ref_len > 0, edits / safe, edits)

    @property
    def totals(self) -> dict[str, int]:
        s, d, i, n = (int(a.sum()) for a in (self.substitutions, self.deletions, self.insertions, self.ref_len))
        return {"edits": s + d + i, "ref_len": n, "substitutions": s, "deletions": d,
                "insertions": i, "hits": n - s - d}

    @property
    def corpus_rate(self) -> float:
        """Σedits / Σref_len (NaN when the corpus has no reference unit)."""
        t = self.totals
        return error_rate(t["edits"], t["ref_len"])

    def __len__(self) -> int:
        return len(self.ref_len)


def _prepare(items: Iterable[Any], name: str, normalize: Any) -> Sequence[str]:
    seq = as_sequence(items, name)
    canon = resolve_canonicalizer(normalize)
    if canon is None:
        return seq
    out = []
    for k, t in enumerate(seq):
        if not isinstance(t, str):
            raise TypeError(f"{name}[{k}] must be str, got {type(t).__name__}")
        out.append(canon(t))
    return out


def _error_rates(mode: str, preds, refs, normalize, threads, unit: str = "char") -> BatchResult:
    check_unit(unit, mode)
    preds = _prepare(preds, "preds", normalize)
    refs = _prepare(refs, "refs", normalize)
    check_same_length(preds, refs, "preds", "refs")
    counts = count_errors(preds, refs, mode, threads=_kernels.resolve_threads(threads), unit=unit)
    return BatchResult(mode, *(np.ascontiguousarray(counts[:, c]) for c in range(4)))


def cer(preds: Iterable[str], refs: Iterable[str], *, normalize: Any = None,
        threads: Optional[int] = None, unit: str = "char") -> BatchResult:
    """Character error counts of every (pred, ref) pair; ``normalize`` is anything
    ``scorekit.canonicalize.resolve_canonicalizer`` accepts; ``threads=None`` uses all cores;
    ``unit`` is ``"char"`` (code points) or ``"grapheme"`` (extended grapheme clusters: lengths,
    hits and edits are clusters, interned once for the whole batch)."""
    return _error_rates("cer", preds, refs, normalize, threads, unit)


def wer(preds: Iterable[str], refs: Iterable[str], *, normalize: Any = None,
        threads: Optional[int] = None) -> BatchResult:
    """Word error counts of every (pred, ref) pair (words split like ``str.split()``)."""
    return _error_rates("wer", preds, refs, normalize, threads)


def levenshtein(a: Iterable[str], b: Iterable[str], *, threads: Optional[int] = None,
                unit: str = "char") -> np.ndarray:
    """Unit-cost Levenshtein distance of every pair, over code points or (``unit="grapheme"``)
    extended grapheme clusters; ``int64[n]``."""
    check_unit(unit)
    a, b = as_sequence(a, "a"), as_sequence(b, "b")
    check_same_length(a, b, "a", "b")
    packer = grapheme_packer() if unit == "grapheme" else None
    a_values, a_offsets = pack_units(a, "a", unit, packer)
    b_values, b_offsets = pack_units(b, "b", unit, packer)
    return lev.distance_batch(a_values, a_offsets, b_values, b_offsets, _kernels.resolve_threads(threads))


#: Names of the edit operations of :func:`editops`, as rapidfuzz names them.
OP_NAMES = {lev.OP_SUBSTITUTE: "replace", lev.OP_DELETE: "delete", lev.OP_INSERT: "insert"}


def editops(ref: str, hyp: str, *, unit: str = "char") -> list[tuple[str, int, int]]:
    """The edit operations turning ``ref`` into ``hyp``: ``(op, ref_pos, hyp_pos)`` with op
    ``"replace"``, ``"delete"`` or ``"insert"``, the same script (and positions) as
    ``rapidfuzz.distance.Levenshtein.editops(ref, hyp)``. With ``unit="grapheme"`` the operations
    act on whole grapheme clusters and the positions are cluster indices.

    >>> editops("qabxcd", "abycdf")
    [('delete', 0, 0), ('replace', 3, 2), ('insert', 6, 5)]
    >>> editops("नमस्ते", "नमस्त", unit="grapheme")
    [('replace', 2, 2)]
    """
    check_unit(unit)
    packer = grapheme_packer() if unit == "grapheme" else None
    ops = lev.editops(pack_units([ref], "ref", unit, packer)[0], pack_units([hyp], "hyp", unit, packer)[0])
    return [(OP_NAMES[op], ref_pos, hyp_pos) for op, ref_pos, hyp_pos in ops.tolist()]


def schwa_cer(gts: Iterable[str | JoinedText], preds: Iterable[str | JoinedText], *,
              schwa: str = SCHWA_CHARS, threads: Optional[int] = None,
              unit: str = "char") -> tuple[np.ndarray, np.ndarray]:
    """Schwa-forgiving character distances and reference lengths of every (gt, pred) pair
    (``JoinedText`` inputs carry their join positions); the corpus CER is ``d.sum() / n.sum()``.
    ``unit="grapheme"``: over grapheme clusters (see ``scorekit.text.schwa_distances_and_lengths``)."""
    return schwa_distances_and_lengths(gts, preds, schwa=schwa, threads=threads, unit=unit)
