"""Character edit distances between a ground-truth and a predicted flowchart text.

Three distances, each a plain unit-cost Levenshtein count over Unicode code points (Python ``str``
indexing) computed by scorekit's compiled core (``scorekit._kernels.levenshtein``; the Numba twin
when the core is absent; a pure-Python loop when neither can run):

- :func:`levenshtein_fn`: the raw texts;
- :func:`levenshtein_with_text_normalisation`: both texts through
  :func:`~scorekit.flowcharts.parsing.text_distance_fns.normalise_text.nfc_and_space_normalise`;
- :func:`number_only_levenshtein`: only the numbers of both texts.

``None`` stands for a missing text and counts as ``""``; two missing texts are an error.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.flowcharts.parsing.text_distance_fns.normalise_text import (
    nfc_and_space_normalise,
    numbers_only_normalise,
)

__all__ = ["levenshtein_fn", "levenshtein_with_text_normalisation", "number_only_levenshtein",
           "levenshtein_python"]

_BOTH_NONE = "Both true_text and pred_text cannot be None."


def _code_points(text: str) -> np.ndarray:
    # surrogatepass keeps a lone surrogate as the one code point Python indexes it as
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def levenshtein_python(a: str, b: str) -> int:
    """Unit-cost edit distance of two strings over code points, in plain Python (the reference
    the compiled kernel is tested against, and the last-resort fallback)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _levenshtein(a: str, b: str) -> int:
    if a == b:
        return 0
    if not a or not b:
        return len(a) + len(b)
    from scorekit._kernels import levenshtein as lev
    from scorekit.registry import MissingExtraError

    offsets_a = np.array([0, len(a)], dtype=np.int64)
    offsets_b = np.array([0, len(b)], dtype=np.int64)
    try:
        return int(lev.distance_batch(_code_points(a), offsets_a, _code_points(b), offsets_b, 1)[0])
    except MissingExtraError:  # neither the compiled core nor Numba: same count, slower
        return levenshtein_python(a, b)


def _sides(true_text: object, pred_text: object) -> tuple[str, str]:
    if true_text is None and pred_text is None:
        raise InvalidValueError(_BOTH_NONE)
    for name, value in (("true_text", true_text), ("pred_text", pred_text)):
        if value is not None and not isinstance(value, str):
            raise InvalidTypeError(f"{name} must be a string or None. Found {type(value)}.")
    return true_text or "", pred_text or ""  # type: ignore[return-value]


def _distance_after(normalise: Callable[[str], str], true_text: str | None, pred_text: str | None) -> int:
    t, p = _sides(true_text, pred_text)
    return _levenshtein(normalise(t), normalise(p))


def levenshtein_fn(true_text: str | None, pred_text: str | None) -> int:
    """Unit-cost insertions, deletions and substitutions turning one raw text into the other.

    >>> levenshtein_fn("kitten", "sitting"), levenshtein_fn(None, " ABC ")
    (3, 5)
    """
    t, p = _sides(true_text, pred_text)
    return _levenshtein(t, p)


def levenshtein_with_text_normalisation(true_text: str | None, pred_text: str | None) -> int:
    """Edit distance after normalising both texts (Unicode, whitespace, bullets, dashes, quotes,
    spacing around punctuation; never case or accents). The default flowchart text distance.

    >>> levenshtein_with_text_normalisation("n=10", "n = 10")
    0
    >>> levenshtein_with_text_normalisation("n = 10", "n = 11")
    1
    >>> levenshtein_with_text_normalisation(None, " ABC ")
    3
    """
    return _distance_after(nfc_and_space_normalise, true_text, pred_text)


def number_only_levenshtein(true_text: str | None, pred_text: str | None) -> int:
    """Edit distance between the numbers of the two texts (joined by spaces), ignoring every word.

    >>> number_only_levenshtein("Randomised (n=1,912)", "Randomised n = 1912")
    0
    """
    return _distance_after(numbers_only_normalise, true_text, pred_text)
