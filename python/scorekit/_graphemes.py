"""Grapheme clusters as the unit of CER: the reader behind ``unit="grapheme"`` (docs/decisions.md#grapheme-clusters).

Owns the option itself (:data:`UNITS`, :func:`check_unit`) and the packing of strings into the
batch layout with one symbol per *extended grapheme cluster* (UAX #29) instead of one per code
point, so the existing Levenshtein kernels count edits over what a reader sees as one letter
(Devanagari conjuncts with their vowel signs, a base letter with its combining marks, a flag, a
ZWJ emoji sequence, Hangul jamo, CR LF).

Ids: a cluster of one code point is that code point, so a text without multi-code-point clusters
packs exactly as ``unit="char"`` packs it; a cluster of several code points gets ``0x110000 + n``
(above every code point), ``n`` numbering the distinct such clusters met by one packer. A packer
serves one batch or one streamed chunk, shared by both sides of its pairs (equal clusters, equal
ids), and is then dropped, so the table never grows over a corpus. Ids are only compared within a
packer: the compiled and the Python packer may number clusters differently, never count differently.

Two packers, same results: ``scorekit._core.GraphemePacker`` (the ``unicode-segmentation`` crate),
used whenever the compiled core is present, and :class:`PythonGraphemePacker`, its twin and the
reference in the tests (the ``regex`` package's ``\\X``; the ``graphemes`` extra). Both validate
exactly as the code-point readers do: a non-``str`` item is a ``TypeError`` and a lone surrogate a
``ValueError``, each naming ``name[k]``.

No normalisation happens here: ``"e\\u0301"`` (e + combining acute, one cluster of two code points)
and ``"é"`` (precomposed, one code point) are different clusters; pass ``normalize="nfc"`` to make
them equal.

>>> p = grapheme_packer()
>>> values, offsets = p.pack_texts(["नमस्ते", "abc"], "texts")
>>> offsets.tolist()                     # 3 clusters (न, म, स्ते) where there are 6 code points
[0, 3, 6]
>>> values[3:].tolist()                  # one-code-point clusters are their code points
[97, 98, 99]
"""

from __future__ import annotations

import bisect
import importlib
from typing import TYPE_CHECKING, Any, Optional, Sequence

from scorekit import _kernels
from scorekit.errors import InvalidValueError
from scorekit.registry import MissingExtraError, install_hint

if TYPE_CHECKING:
    import numpy as np

    from scorekit._packing import Packed

# NumPy and the code-point packer are imported by the packing functions only: ``check_unit`` (and
# one ``score`` call with the compiled core) needs neither.

#: The values of the ``unit`` option: ``"char"`` (code points, the default) or ``"grapheme"``.
UNITS = ("char", "grapheme")
#: Id of the first multi-code-point cluster of a packer.
FIRST_CLUSTER_ID = 0x110000
#: Code points below this never form a cluster with the next one, except CR + LF (the first
#: Extend code points are the combining diacritics at U+0300).
_ALWAYS_ALONE_BELOW = 0x300


def check_unit(unit: Any, metric: Any = "cer") -> str:
    """``unit`` if it is one of :data:`UNITS` (and, for ``"grapheme"``, ``metric`` is CER); else
    an ``InvalidValueError`` naming ``unit``."""
    if not isinstance(unit, str) or unit not in UNITS:
        raise InvalidValueError(f"must be 'char' or 'grapheme', got {unit!r}", field="unit")
    if unit == "grapheme" and metric != "cer":
        shown = metric if isinstance(metric, str) else type(metric).__name__
        raise InvalidValueError(f"'grapheme' applies to metric 'cer' only, not to {shown!r}", field="unit")
    return unit


def import_regex(need: str) -> Any:
    """The ``regex`` package (the ``graphemes`` extra), or :class:`MissingExtraError` beginning with
    ``need`` (what needs it) and saying what to install."""
    try:
        return importlib.import_module("regex")
    except ImportError as exc:
        raise MissingExtraError(f"{need} ({exc}); {install_hint('graphemes')}") from exc


_regex = None


def _x_pattern():
    """The compiled ``\\X`` of the ``regex`` package, or :class:`MissingExtraError`."""
    global _regex
    if _regex is None:
        _regex = import_regex("unit='grapheme' needs the compiled core (scorekit._core) or the regex package to "
                              "segment grapheme clusters, and neither is available").compile(r"\X")
    return _regex


class PythonGraphemePacker:
    """The Python twin of ``scorekit._core.GraphemePacker``: same methods, same arguments, same
    errors, the same counts (ids may be numbered differently). Needs the ``regex`` package."""

    def __init__(self) -> None:
        self._split = _x_pattern().findall
        self._clusters: dict[str, int] = {}
        self._starts: list[int] = []

    @property
    def distinct_clusters(self) -> int:
        """Number of distinct multi-code-point clusters interned so far."""
        return len(self._clusters)

    def _id(self, cluster: str) -> int:
        if len(cluster) == 1:
            return ord(cluster)
        clusters = self._clusters
        found = clusters.get(cluster)
        if found is None:
            found = clusters[cluster] = FIRST_CLUSTER_ID + len(clusters)
        return found

    def _cluster_ids(self, text: str) -> list[int]:
        clusters = self._split(text)
        self._starts = list(_accumulate_starts(clusters))
        return [self._id(c) for c in clusters]

    def ids(self, text: str, name: str) -> np.ndarray:
        """The ids of ``text`` alone (``uint32``)."""
        return self.pack_texts([text], name)[0]

    def pack_texts(self, texts: Sequence[str], name: str) -> Packed:
        """``pack_texts`` over clusters."""
        if not isinstance(texts, (list, tuple)):
            raise TypeError(f"{name} must be a list or tuple of str")
        from scorekit._packing import pack_texts_python

        values, offsets = pack_texts_python(texts, name)  # validates types and scalar values
        return self._regroup(texts, values, offsets)[:2]

    def _regroup(self, texts: Sequence[str], values: np.ndarray, offsets: np.ndarray,
                 keep_starts: bool = False) -> tuple[np.ndarray, np.ndarray, list]:
        """Code-point packing → cluster packing (and, with ``keep_starts``, every item's cluster
        starts in code points, ``None`` where clusters are code points)."""
        import numpy as np

        from scorekit._packing import offsets_of

        joined = (values >= _ALWAYS_ALONE_BELOW) | (values == 0x0D)
        marks = np.concatenate(([0], np.cumsum(joined, dtype=np.int64)))
        complex_items = np.flatnonzero(marks[offsets[1:]] > marks[offsets[:-1]])
        starts: list = [None] * len(texts) if keep_starts else []
        if len(complex_items) == 0:
            return values, offsets, starts
        pieces, lengths, done = [], np.diff(offsets), 0
        for k in complex_items.tolist():
            pieces.append(values[offsets[done]:offsets[k]])
            ids = self._cluster_ids(texts[k])
            pieces.append(np.array(ids, dtype=np.uint32))
            lengths[k] = len(ids)
            if keep_starts:
                starts[k] = self._starts
            done = k + 1
        pieces.append(values[offsets[done]:])
        return (np.concatenate(pieces).astype(np.uint32, copy=False), offsets_of(lengths.tolist(), len(texts)),
                starts)

    def pack_pairs(self, cases: list) -> tuple[Packed, Packed]:
        """``pack_pairs`` over clusters: a ``TypeError`` unless every case is a tuple or list whose
        first two items are ``str``."""
        for k, case in enumerate(cases):
            if not isinstance(case, (tuple, list)):
                raise TypeError(f"cases[{k}] is not a tuple or list")
            if len(case) < 2:
                raise TypeError(f"cases[{k}] has fewer than two items")
            for side, name in ((0, "pred"), (1, "gold")):
                if not isinstance(case[side], str):
                    raise TypeError(f"{name}[{k}] is not str")
        return self.pack_texts([c[0] for c in cases], "pred"), self.pack_texts([c[1] for c in cases], "gold")

    def pack_joined(self, items: list, name: str, joins_name: str) -> tuple[Packed, np.ndarray, np.ndarray]:
        """``pack_joined`` over clusters: joins are given in code points and come back as cluster
        boundaries (a join inside a cluster moves to the start of that cluster)."""
        from scorekit._packing import pack_positions, pack_texts_python

        texts, joins = [], []
        for k, item in enumerate(items):
            text = item if isinstance(item, str) else item.text
            if not isinstance(text, str):
                raise TypeError(f"{name}[{k}] must be str or JoinedText, got {type(item).__name__}")
            texts.append(text)
            joins.append(() if isinstance(item, str) else item.joins)
        values, offsets = pack_texts_python(texts, name)
        join_values, join_offsets = pack_positions(joins, [len(t) for t in texts], joins_name)
        values, offsets, starts = self._regroup(texts, values, offsets, keep_starts=True)
        mapped = join_values.copy()
        for k in range(len(texts)):
            if starts[k] is not None:
                cuts = starts[k]
                for at in range(int(join_offsets[k]), int(join_offsets[k + 1])):
                    mapped[at] = bisect.bisect_right(cuts, int(join_values[at])) - 1
        return (values, offsets), mapped, join_offsets


def _accumulate_starts(clusters: list[str]):
    """Code-point start of every cluster, then the total length."""
    position = 0
    for c in clusters:
        yield position
        position += len(c)
    yield position


def grapheme_packer() -> Any:
    """A fresh packer for one batch or chunk: the compiled one when the core is present, else the
    Python twin (which needs ``regex``: :class:`~scorekit.registry.MissingExtraError` otherwise)."""
    core = _kernels.compiled()
    if core is not None:
        return core.GraphemePacker()
    return PythonGraphemePacker()


def pack_units(texts: Any, name: str, unit: str, packer: Optional[Any] = None) -> Packed:
    """``texts`` packed in ``unit``: code points (``scorekit._packing.pack_texts``) or clusters
    (through ``packer``, a fresh one when ``None``)."""
    import numpy as np

    from scorekit._packing import pack_texts

    if unit == "char":
        return pack_texts(texts, name)
    if isinstance(texts, np.ndarray):
        texts = texts.tolist()
    elif not isinstance(texts, (list, tuple)):
        texts = list(texts)
    return (packer or grapheme_packer()).pack_texts(texts, name)


def unit_lengths(texts: Sequence[str], unit: str, name: str = "texts") -> list[int]:
    """Length of every text in ``unit`` (code points or clusters)."""
    if unit == "char":
        return [len(t) for t in texts]
    offsets = pack_units(list(texts), name, unit)[1]
    return (offsets[1:] - offsets[:-1]).tolist()
