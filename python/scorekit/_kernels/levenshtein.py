"""Levenshtein kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract for edit distances over packed ``uint32`` sequences (code points, or token
ids): plain distance, the alignment breakdown (hits/substitutions/deletions/insertions), word-level
alignment with in-kernel tokenisation, the schwa-forgiving distance, single-pair edit operations,
the best substring of a text for a whole pattern (approximate matching, used by ``scorekit.ocr.fca``),
and the length of a longest common subsequence (dinglehopper's word accuracy, ``scorekit.ocr.metrics``).
It does not canonicalise text or build Python result objects (that is ``scorekit.metrics.strings``).

Batch layout (docs/architecture.md): pair ``k`` is ``values[offsets[k]:offsets[k+1]]`` on each side;
``values`` is ``uint32``, ``offsets`` is ``int64`` of length ``n + 1``.

Alignment tie-breaking (both backends, identical): among optimal alignments the traceback is the
one rapidfuzz's ``Levenshtein.editops(ref, hyp)`` returns, so counts equal jiwer's. With
``D[i][j]`` the distance between ``ref[:i]`` and ``hyp[:j]``, walking back from ``(len(ref), len(hyp))``:
delete ``ref[i-1]`` if ``D[i][j] == D[i-1][j] + 1``; else insert ``hyp[j-1]`` if
``D[i][j-1] + 1 == D[i-1][j-1]``; else take the diagonal (a hit or a substitution). Common
prefixes/suffixes are hits. Large problems are split Hirschberg-style exactly as rapidfuzz splits them
(see ``rust/kernels/src/levenshtein/alignment.rs``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorekit import _kernels

if TYPE_CHECKING:
    import numpy as np

#: Column order of :func:`alignment_batch` results.
ALIGNMENT_COLUMNS = ("hits", "substitutions", "deletions", "insertions")
#: Column order of :func:`word_alignment_batch` results.
WORD_ALIGNMENT_COLUMNS = ("hits", "substitutions", "deletions", "insertions", "ref_words", "hyp_words")
#: Edit-operation codes of :func:`editops`.
OP_SUBSTITUTE, OP_DELETE, OP_INSERT = 1, 2, 3


def _impl():
    return _kernels.implementation("levenshtein")


def distance_batch(a_values, a_offsets, b_values, b_offsets, threads: int = 0) -> np.ndarray:
    """Unit-cost Levenshtein distance of every pair; ``int64[n]``."""
    threads = _kernels.resolve_threads(threads)
    return _impl().levenshtein_distance_batch(a_values, a_offsets, b_values, b_offsets, threads)


def lcs_length_batch(a_values, a_offsets, b_values, b_offsets, threads: int = 0) -> np.ndarray:
    """Length of a longest common subsequence of every pair (rapidfuzz's ``LCSseq.similarity``); ``int64[n]``."""
    threads = _kernels.resolve_threads(threads)
    return _impl().lcs_length_batch(a_values, a_offsets, b_values, b_offsets, threads)


def alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads: int = 0) -> np.ndarray:
    """Alignment breakdown of every (ref, hyp) pair; ``int64[n, 4]`` in :data:`ALIGNMENT_COLUMNS` order."""
    threads = _kernels.resolve_threads(threads)
    return _impl().levenshtein_alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads)


def word_alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads: int = 0) -> np.ndarray:
    """Word-level breakdown: each side is split on Python ``str.split()`` whitespace inside the kernel,
    words are compared by exact code-point equality; ``int64[n, 6]`` in :data:`WORD_ALIGNMENT_COLUMNS` order."""
    threads = _kernels.resolve_threads(threads)
    return _impl().word_alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads)


def schwa_distance_batch(
    gt_values, gt_offsets, pred_values, pred_offsets,
    gt_join_values, gt_join_offsets, pred_join_values, pred_join_offsets,
    schwa_chars, threads: int = 0,
) -> np.ndarray:
    """Schwa-forgiving distance (docs/decisions.md#schwa-forgiving-distance) of every pair; ``int64[n]``.

    Join positions are ``int64`` boundary indices packed like the values; ``schwa_chars`` is a
    ``uint32`` array of the code points whose insertion/deletion is free at a join.
    """
    return _impl().schwa_distance_batch(
        gt_values, gt_offsets, pred_values, pred_offsets,
        gt_join_values, gt_join_offsets, pred_join_values, pred_join_offsets,
        schwa_chars, _kernels.resolve_threads(threads),
    )


def best_substring_batch(pattern_values, pattern_offsets, text_values, text_offsets, threads: int = 0) -> np.ndarray:
    """``int64[n, 3]`` rows ``(d, start, end)``: ``d`` the least ``distance(pattern, text[start:end])``
    over every substring, ``end`` the last end reaching it and ``start`` the earliest start reaching
    it for that end (the longest such substring); an empty pattern gives ``(0, len(text), len(text))``."""
    threads = _kernels.resolve_threads(threads)
    return _impl().best_substring_batch(pattern_values, pattern_offsets, text_values, text_offsets, threads)


def editops(ref, hyp) -> np.ndarray:
    """Edit operations turning ``ref`` into ``hyp`` (``uint32`` arrays); ``int64[k, 3]`` rows of
    ``(op, ref_pos, hyp_pos)`` with op in {1 substitute, 2 delete, 3 insert}, in sequence order."""
    return _impl().levenshtein_editops(ref, hyp)
