"""Text-distance matrices for the matcher, validated and memoised for one method call.

With a built-in distance (raw, normalised or numbers-only Levenshtein) every text is normalised
once in Python and all missing (true, pred) pairs of a request go to the compiled core in one
``scorekit.batch.levenshtein`` call. Any other ``distance_fn`` is called once per distinct pair,
by keyword, and each returned value is checked (finite, non-negative, a real number, not a bool).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, Callable, Optional, Sequence

import numpy as np

COST_ERROR = "Text distance functions must return finite, non-negative costs. Found {value!r}."


def check_cost(value: Any) -> float:
    """``value`` as a float, or ValueError when it is not a finite, non-negative real number."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.integer, np.floating)):
        raise ValueError(COST_ERROR.format(value=value))
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(COST_ERROR.format(value=value))
    return number


#: Batches smaller than this run on the calling thread (a thread pool costs more than it saves).
SMALL_BATCH = 4096


def _threads(n_pairs: int) -> "int | None":
    return 1 if n_pairs < SMALL_BATCH else None


def _identity(text: str) -> str:
    return text


def _builtin_normalisers() -> dict[Any, Callable[[str], str]]:
    """Known distance functions -> the normaliser applied before plain Levenshtein."""
    from scorekit.flowcharts.parsing.text_distance_fns import levenshtein_fn as fns
    from scorekit.flowcharts.parsing.text_distance_fns import normalise_text as norm

    return {
        fns.levenshtein_fn: _identity,
        fns.levenshtein_with_text_normalisation: norm.nfc_and_space_normalise,
        fns.number_only_levenshtein: norm.numbers_only_normalise,
    }


_NORMALISERS: Optional[dict[Any, Callable[[str], str]]] = None


def normaliser_for(distance_fn: Any) -> Optional[Callable[[str], str]]:
    global _NORMALISERS
    if _NORMALISERS is None:
        _NORMALISERS = _builtin_normalisers()
    try:
        return _NORMALISERS.get(distance_fn)
    except TypeError:  # unhashable callable
        return None


class Costs:
    """Memoised ``distance_fn`` values for one benchmark method call. ``None`` stands for a missing side."""

    def __init__(self, distance_fn: Callable[..., Any]):
        self.distance_fn = distance_fn
        self.normalise = normaliser_for(distance_fn)
        self.memo: dict[tuple[Optional[str], Optional[str]], float] = {}
        self._normal: dict[str, str] = {}
        self._rows: dict[tuple[str, ...], dict[str, np.ndarray]] = {}

    def _norm(self, text: Optional[str]) -> str:
        if text is None:
            return ""
        got = self._normal.get(text)
        if got is None:
            got = self._normal[text] = self.normalise(text)  # type: ignore[misc]
        return got

    def fill(self, true_texts: Sequence[Optional[str]], pred_texts: Sequence[Optional[str]]) -> None:
        """Compute every missing ``d(t, p)`` for t in true_texts, p in pred_texts (either may be None)."""
        memo = self.memo
        todo = [(t, p) for t in dict.fromkeys(true_texts) for p in dict.fromkeys(pred_texts)
                if (t is not None or p is not None) and (t, p) not in memo]
        if not todo:
            return
        if self.normalise is not None:
            from scorekit.batch import levenshtein

            values = levenshtein([self._norm(t) for t, _ in todo], [self._norm(p) for _, p in todo],
                                 threads=_threads(len(todo)))
            for key, value in zip(todo, values.tolist()):
                memo[key] = float(value)
            return
        fn = self.distance_fn
        for t, p in todo:
            memo[(t, p)] = check_cost(fn(true_text=t, pred_text=p))

    def matrices(self, true_texts: Sequence[str], pred_texts: Sequence[str]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(C, u, v)``: pair costs ``d(T_i, P_j)``, ``d(T_i, None)`` and ``d(None, P_j)``."""
        nT, nP = len(true_texts), len(pred_texts)
        memo = self.memo
        if self.normalise is not None and not all((t, p) in memo for t in true_texts[:1] for p in pred_texts[:1]):
            # One compiled batch for every true text not seen against this pred list (ground-truth
            # options share most texts); the last row and column stand for the missing text.
            from scorekit.batch import levenshtein

            pred_key = tuple(pred_texts)
            rows = self._rows.setdefault(pred_key, {})
            pa = np.array([self._norm(p) for p in pred_texts] + [""], dtype=object)
            t_norm = [self._norm(t) for t in true_texts] + [""]
            todo = [t for t in dict.fromkeys(t_norm) if t not in rows]
            if todo:
                grid = levenshtein(np.repeat(np.array(todo, dtype=object), nP + 1).tolist(),
                                   np.tile(pa, len(todo)).tolist(), threads=_threads(len(todo) * (nP + 1)))
                for t, row in zip(todo, grid.reshape(len(todo), nP + 1).astype(np.float64)):
                    rows[t] = row
            grid = np.stack([rows[t] for t in t_norm])
            return grid[:nT, :nP].copy(), grid[:nT, nP].copy(), grid[nT, :nP].copy()
        self.fill(list(true_texts) + [None], list(pred_texts) + [None])
        C = np.array([[memo[(t, p)] for p in pred_texts] for t in true_texts], dtype=np.float64).reshape(nT, nP)
        u = np.array([memo[(t, None)] for t in true_texts], dtype=np.float64)
        v = np.array([memo[(None, p)] for p in pred_texts], dtype=np.float64)
        return C, u, v


def as_costs(distance_fn: Any) -> Costs:
    return distance_fn if isinstance(distance_fn, Costs) else Costs(distance_fn)
