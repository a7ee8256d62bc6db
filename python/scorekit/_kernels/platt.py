"""Platt kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract of the Platt fit (``rust/kernels/src/platt.rs``):
``platt_fit(scores, correct, max_iter)`` → ``(a, b, rows, positive)``: the reference kit's Newton
iteration on a ``float64`` array of scores and a ``bool`` array of outcomes of equal length (any
strides), in centred coordinates,
the rows whose score is not finite left out (``rows`` and ``positive`` count the others, in all
and correct); ``a`` or ``b`` is not finite when the iteration overflowed (the caller names the
error). Every sum is accurate to about one rounding (8 lanes per block of 128 rows, the blocks'
totals added with their rounding errors carried). Both backends run the same operations in the
same order with the platform's ``exp``, so they return the same values. The compiled core also
reads plain lists in the same call (:func:`platt_fit_listed`), as ``scorekit._packing.floats_of``
and ``bools_of`` read them.
"""

from __future__ import annotations

import numpy as np

from scorekit import _kernels


def platt_fit(scores: np.ndarray, correct: np.ndarray, max_iter: int) -> tuple[float, float, int, int]:
    """``(a, b, rows, positive)`` of the Platt fit (see the module docs)."""
    return _kernels.implementation("platt").platt_fit(scores, correct, max_iter)


def platt_fit_listed(scores: object, correct: object, max_iter: int) -> tuple[float, float, int, int] | None:
    """:func:`platt_fit` of exact lists or tuples of plain numbers (``float``, ``bool``, an ``int`` of
    at most 64 bits) and of bools of one length, read by the compiled core in the same call (no
    arrays made); ``None`` for any other input, or off the compiled backend (the caller reads the
    rows, with their checks, and calls :func:`platt_fit`)."""
    core = _kernels.compiled()
    return None if core is None else core.platt_fit_listed(scores, correct, max_iter)
