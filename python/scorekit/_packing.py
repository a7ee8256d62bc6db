"""Packing of Python sequences into the flat batch layout shared by every kernel backend.

Owns the conversion of many strings into one ``uint32`` code-point array plus ``int64`` offsets
(Arrow-style: item ``k`` is ``values[offsets[k]:offsets[k+1]]``) and of join-position lists into the
same layout, with input validation whose errors name the argument and the item; and the one-pass
compiled reading of plain lists of numbers or bools into arrays (:func:`floats_of`, :func:`bools_of`).
"""

from __future__ import annotations

import bisect
import itertools
from typing import Iterable, Sequence

import numpy as np

from scorekit import _kernels

Packed = tuple[np.ndarray, np.ndarray]


def as_sequence(items: Iterable, name: str) -> Sequence:
    """Materialise ``items`` once (lists, tuples and arrays are used as they are)."""
    if isinstance(items, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of strings, not a single {type(items).__name__}")
    if isinstance(items, (list, tuple, np.ndarray)):
        return items
    try:
        return list(items)
    except TypeError:
        raise TypeError(f"{name} must be an iterable of strings, got {type(items).__name__}") from None


def floats_of(values: object) -> np.ndarray | None:
    """``values`` as float64, read by the compiled core in one pass, when it is exactly a list or
    tuple of floats, bools and ints of at most 64 bits (the array NumPy would make); ``None``
    otherwise, or off the compiled backend: the caller converts with NumPy and checks the items."""
    core = _kernels.compiled()
    if type(values) not in (list, tuple) or core is None:
        return None
    return core.read_floats(values)


def bools_of(values: object) -> np.ndarray | None:
    """``values`` as a bool array, read by the compiled core in one pass, when it is exactly a list
    or tuple of ``True`` and ``False``; ``None`` otherwise, as :func:`floats_of`."""
    core = _kernels.compiled()
    if type(values) not in (list, tuple) or core is None:
        return None
    return core.read_bools(values)


def offsets_of(lengths: Iterable[int], count: int) -> np.ndarray:
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.fromiter(lengths, dtype=np.int64, count=count), out=offsets[1:])
    return offsets


def pack_texts(texts: Sequence[str], name: str) -> Packed:
    """Pack strings into (``uint32`` code points, ``int64`` offsets).

    Raises ``TypeError`` naming ``name[k]`` for a non-``str`` item and ``ValueError`` for a lone
    surrogate (which is not a Unicode scalar value and cannot be scored consistently). The compiled
    core copies code points straight out of the strings when it is available; the pure-Python path
    gives identical arrays.
    """
    if isinstance(texts, np.ndarray):
        texts = texts.tolist()
    elif not isinstance(texts, (list, tuple)):
        texts = list(texts)
    core = _kernels.compiled()
    if core is not None:
        return core.pack_texts(texts, name)
    return pack_texts_python(texts, name)


def pack_texts_python(texts: Sequence[str], name: str) -> Packed:
    """:func:`pack_texts` without the compiled core (join, then encode as UTF-32)."""
    try:
        joined = "".join(texts)
    except TypeError:
        # the first bad item in order, as the compiled packer reads them (a lone surrogate before
        # a non-str item is the error, not the later item)
        for k, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"{name}[{k}] must be str, got {type(t).__name__}") from None
            _check_scalar_values(t, name, k)
        raise
    offsets = offsets_of(map(len, texts), len(texts))
    try:
        encoded = joined.encode("utf-32-le")
    except UnicodeEncodeError as exc:
        k = bisect.bisect_right(offsets, exc.start) - 1
        _check_scalar_values(texts[k], name, k)
        raise
    return np.frombuffer(encoded, dtype=np.uint32), offsets


def _check_scalar_values(text: str, name: str, k: int) -> None:
    """Refuse ``text`` (item ``k`` of ``name``) when it holds a lone surrogate."""
    try:
        text.encode("utf-32-le")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name}[{k}] contains a lone surrogate U+{ord(text[exc.start]):04X} at position {exc.start}; "
            "only Unicode scalar values can be scored"
        ) from None


def pack_positions(positions: Sequence[Sequence[int]], lengths: Sequence[int], name: str) -> Packed:
    """Pack per-item boundary positions (each within ``0..=lengths[k]``) into (int64 values, offsets)."""
    try:
        counts = offsets_of(map(len, positions), len(positions))
    except TypeError:
        raise TypeError(f"{name} must hold one sequence of integer positions per item") from None
    values = list(itertools.chain.from_iterable(positions))
    flat = np.array(values) if values else np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(positions)), np.diff(counts))
    if flat.dtype.kind not in "iu":
        for at, p in enumerate(values):
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
                raise TypeError(f"{name}[{owner[at]}] must hold integer positions, got {type(p).__name__}")
        raise ValueError(f"{name} holds a position too large for int64")
    flat = flat.astype(np.int64, copy=False)
    bad = (flat < 0) | (flat > np.asarray(lengths, dtype=np.int64)[owner])
    if bad.any():
        at = int(np.argmax(bad))
        k = int(owner[at])
        raise ValueError(f"{name}[{k}] position {int(flat[at])} is outside 0..{int(lengths[k])}")
    return flat, counts


def check_same_length(a: Sequence, b: Sequence, a_name: str, b_name: str) -> int:
    if len(a) != len(b):
        raise ValueError(f"{a_name} has {len(a)} items but {b_name} has {len(b)}; they must pair up one to one")
    return len(a)
