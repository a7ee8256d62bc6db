"""Scoring one step's output against its expected value (docs/cases.md, "Scoring").

Owns the scoring rules: dicts flattened into leaves (a list is one leaf), ``$ignore`` at any
level, ``{"$ordered": [...]}`` for positional lists, unordered lists matched item by item, custom
comparators, and the step statuses. The rules are the reference's except where docs/cases.md
records a decision; in short:

- equality follows JSON: ``true`` is not ``1``, ``1 == 1.0``, NaN equals nothing;
- ``[]`` (and ``{"$ordered": []}``) expects an empty list: 1.0 against ``[]``, else 0.0;
- in an unordered list every expected item is paired with at most one actual item, greedily in
  expected order (the best-scoring remaining actual item, ties to the lowest index; an item whose
  best score is 0 takes nothing) or, with ``matching="optimal"``, by the assignment that maximises
  the list's score; ``$ignore`` items, and items with nothing to score, are wildcards that any
  leftover actual item fills; the list scores ``(sum of paired scores + filled wildcards) /
  len(expected)``, with precision, recall and F1 in the list's :class:`ListMatch`;
- a comparator is keyed ``step``, ``step.a.b`` or ``step.list[].field`` (every item of a list); it
  gets the actual and expected values (an ``$ordered`` list unwrapped) and must return a finite
  number, clamped to [0, 1] with a warning; one that raises is a :class:`ComparatorError`.

Lists of records take the compiled path (:mod:`scorekit._kernels.cases`): the records' leaves are
read and compared in the kernel, which fills the item score matrix; greedy pairing runs there too.
A step without comparators and with greedy matching is walked whole by the compiled walker
(``step_leaves``) when it reads every value of it; else, and on the Numba backend, by the Python
walker below, which gives the same leaves.
"""

from __future__ import annotations

import functools
import math
import re
import warnings
from typing import Any, Callable, Mapping, Optional

from scorekit.cases.errors import ComparatorError
from scorekit.cases.results import FieldScore, ListMatch, StepScore

__all__ = ["IGNORE", "ORDERED", "MATCHING", "check_comparators", "score_case", "score_step", "values_equal"]

IGNORE = "$ignore"
ORDERED = "$ordered"
#: The list matching methods.
MATCHING = ("greedy", "optimal")

Comparators = Mapping[str, Callable[[Any, Any], Any]]
_INDEX_KEY = re.compile(r"\[\d+\]")
_PLAIN = frozenset((str, int, float))
_BOOL = object()  # tags booleans in multiset keys, so that True and 1 stay apart


def values_equal(actual: Any, expected: Any) -> bool:
    """Equality of two leaf values, JSON's: booleans equal only booleans, numbers compare by value
    (``1 == 1.0``), NaN equals nothing, anything else by Python ``==``."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual is expected
    kind = type(expected)
    if kind is type(actual) and kind in _PLAIN:
        return actual == expected
    return _python_equal(actual, expected)


def _python_equal(actual: Any, expected: Any) -> bool:
    from scorekit.metrics.fields import values_equal as record_equal

    try:
        return record_equal(actual, expected, "value")
    except Exception:  # values that cannot be compared are not equal
        return False


def _plain(value: Any) -> Any:
    """A Pydantic model as its ``model_dump()``; anything else unchanged."""
    dump = getattr(value, "model_dump", None)
    if dump is not None and callable(dump) and not isinstance(value, type):
        return dump()
    return value


def _is_ordered(expected: Any) -> bool:
    return isinstance(expected, dict) and len(expected) == 1 and isinstance(expected.get(ORDERED), list)


class _Scorer:
    """One scoring call's settings: the comparators and the matching method."""

    __slots__ = ("comparators", "matching", "element_prefixes", "walked")

    def __init__(self, comparators: Optional[Comparators], matching: str) -> None:
        if matching not in MATCHING:
            raise ValueError(f"matching must be one of {MATCHING}, got {matching!r}")
        self.comparators = dict(comparators) if comparators else {}
        self.matching = matching
        # list paths under which some comparator applies to the items: those lists take the
        # general path (the compiled one compares by equality only)
        self.element_prefixes = tuple(key.split("[]", 1)[0] for key in self.comparators if "[]" in key)
        # steps the compiled walker may score whole: no comparators, greedy matching
        self.walked = not self.comparators and matching == "greedy"

    # -- comparators -------------------------------------------------------------------------

    def compare(self, key: str, actual: Any, expected: Any) -> float:
        comparator = self.comparators[key]
        if _is_ordered(expected):
            expected = expected[ORDERED]
        try:
            result = comparator(actual, expected)
        except Exception as exc:
            raise ComparatorError(f"comparator {key!r} raised {type(exc).__name__}: {exc}") from exc
        if isinstance(result, bool):
            return 1.0 if result else 0.0
        try:
            value = float(result)
        except (TypeError, ValueError, OverflowError):
            raise ComparatorError(f"comparator {key!r} returned {type(result).__name__} {result!r}, "
                                  "not a number") from None
        if not math.isfinite(value):
            raise ComparatorError(f"comparator {key!r} returned {value!r}, not a finite number")
        if value < 0.0 or value > 1.0:
            warnings.warn(f"comparator {key!r} returned {value!r}; clamped to [0, 1]", RuntimeWarning, stacklevel=4)
            value = min(1.0, max(0.0, value))
        return value

    # -- values ------------------------------------------------------------------------------

    def score(self, actual: Any, expected: Any, path: str, out: list[FieldScore]) -> None:
        """Append the FieldScores of ``actual`` against ``expected`` at ``path`` to ``out``."""
        if type(actual) not in _SCALAR_TYPES:
            actual = _plain(actual)
        if type(expected) is str and expected == IGNORE:
            out.append(FieldScore(path, actual, expected, 0.0, "ignored"))
        elif path in self.comparators:
            out.append(FieldScore(path, actual, expected, self.compare(path, actual, expected)))
        elif isinstance(expected, dict):
            if _is_ordered(expected):
                out.append(self.ordered(actual, expected[ORDERED], path))
            else:
                source = actual if isinstance(actual, dict) else {}
                comparators = self.comparators
                for key, value in expected.items():
                    kind = type(value)
                    if kind in _SCALAR_TYPES and not comparators and not (kind is str and value == IGNORE):
                        got = source.get(key)  # the common leaf, inline
                        out.append(FieldScore(f"{path}.{key}", got, value, 1.0 if values_equal(got, value) else 0.0))
                    else:
                        self.score(source.get(key), value, f"{path}.{key}", out)
        elif isinstance(expected, list):
            out.append(self.unordered(actual, expected, path))
        else:
            out.append(FieldScore(path, actual, expected, 1.0 if values_equal(actual, expected) else 0.0))

    def item_score(self, actual: Any, expected: Any, path: str) -> float:
        """One list item's score: the mean of its scored leaves (0.0 when none is scored)."""
        leaves: list[FieldScore] = []
        self.score(actual, expected, path, leaves)
        scored = [f.score for f in leaves if f.status == "scored"]
        return math.fsum(scored) / len(scored) if scored else 0.0

    def scorable(self, expected: Any, path: str) -> bool:
        """Whether an expected list item has anything to score (else it is a wildcard)."""
        if type(expected) is str and expected == IGNORE:
            return False
        if path in self.comparators or not isinstance(expected, dict) or _is_ordered(expected):
            return True
        return any(self.scorable(v, f"{path}.{k}") for k, v in expected.items())

    # -- lists -------------------------------------------------------------------------------

    def ordered(self, actual: Any, expected: list, path: str) -> FieldScore:
        """``$ordered``: position by position over the longer list (extra actual items count 0)."""
        if not isinstance(actual, list):
            return FieldScore(path, actual, expected, 0.0)
        actual, expected = _snapshot(actual), _snapshot(expected)
        n = max(len(actual), len(expected))
        if n == 0:
            return FieldScore(path, actual, expected, 1.0)
        item_path = path + "[]"
        total = 0.0
        for i in range(min(len(actual), len(expected))):
            e = expected[i]
            total += self.item_score(actual[i], e, item_path) if self.scorable(e, item_path) else 1.0
        return FieldScore(path, actual, expected, total / n)

    def unordered(self, actual: Any, expected: list, path: str) -> FieldScore:
        if not isinstance(actual, list):
            return FieldScore(path, actual, expected, 0.0)
        actual, expected = _snapshot(actual), _snapshot(expected)
        if not expected:
            return FieldScore(path, actual, expected, 1.0 if not actual else 0.0)
        item_path = path + "[]"
        plain = [j for j, e in enumerate(expected) if not (type(e) is str and e == IGNORE)]
        matrix = None
        if not self._has_element_comparator(path):
            if all(type(expected[j]) in _SCALAR_TYPES for j in plain) and all(type(a) in _SCALAR_TYPES for a in actual):
                pairs = _multiset_pairs(expected, plain, actual)
                wildcards = min(len(expected) - len(plain), len(actual) - len(pairs))
                return _list_score(path, actual, expected, pairs, wildcards, self.matching)
            matrix, rows = self._record_matrix(expected, plain, actual)
        if matrix is None:
            rows = [j for j in plain if self.scorable(expected[j], item_path)]
            matrix = self._general_matrix(actual, expected, rows, item_path)
        wild_slots = len(expected) - len(rows)
        pairs = _pairs(matrix, rows, self.matching, wild_slots)
        wildcards = min(wild_slots, len(actual) - len(pairs))
        return _list_score(path, actual, expected, pairs, wildcards, self.matching)

    @staticmethod
    def _record_matrix(expected: list, plain: list[int], actual: list):
        """The compiled item score matrix of the scorable records, and their indexes; ``(None,
        None)`` when the records are not of the shape the kernels read."""
        from scorekit._kernels import cases as kernels

        read = kernels.record_score_matrix([expected[j] for j in plain], actual)
        if read is None:
            return None, None
        matrix, counts = read
        if counts.all():  # every record has a scored leaf (the usual case)
            return matrix, plain
        keep = counts > 0
        return matrix[keep], [j for j, k in zip(plain, keep) if k]

    def _has_element_comparator(self, path: str) -> bool:
        return any(prefix == path or prefix.startswith(path + "[]") or prefix.startswith(path + ".")
                   for prefix in self.element_prefixes)

    def _general_matrix(self, actual: list, expected: list, rows: list[int], item_path: str):
        """Scores of every scorable expected item (rows) against every actual item, by the
        general rules (items the kernels do not read, or with comparators)."""
        import numpy as np

        matrix = np.zeros((len(rows), len(actual)))
        for r, j in enumerate(rows):
            for i, a in enumerate(actual):
                matrix[r, i] = self.item_score(a, expected[j], item_path)
        return matrix


_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))


def _snapshot(items: list) -> list:
    """A copy of a list taken before it is scored: a hostile ``__eq__`` (a dict lookup calls it)
    that grows or shrinks the list cannot change the lengths one score is built from."""
    return list(items)


def _multiset_key(value: Any) -> Any:
    if type(value) is bool:
        return (_BOOL, value)
    if type(value) is float and value != value:
        return object()  # NaN matches nothing
    return value


def _multiset_pairs(expected: list, rows: list[int], actual: list) -> list[tuple[int, int, float]]:
    """Greedy pairing of scalar items by equality: each expected item takes the first unpaired
    equal actual item (what the greedy rule gives when every score is 0 or 1)."""
    free: dict[Any, list[int]] = {}
    for i in range(len(actual) - 1, -1, -1):
        free.setdefault(_multiset_key(actual[i]), []).append(i)
    pairs = []
    for j in rows:
        stack = free.get(_multiset_key(expected[j]))
        if stack:
            pairs.append((j, stack.pop(), 1.0))
    return pairs


def _pairs(matrix, rows: list[int], matching: str, wild_slots: int) -> list[tuple[int, int, float]]:
    """``(expected index, actual index, score)`` of every pair with a positive score."""
    from scorekit._kernels import cases as kernels

    if matrix.shape[1] == 0 or not rows:
        return []
    if matching == "greedy":
        chosen = kernels.greedy_pairs(matrix).tolist()
        scores = matrix.tolist()
        return [(rows[r], i, scores[r][i]) for r, i in enumerate(chosen) if i >= 0]
    return _optimal_pairs(matrix, rows, wild_slots)


def _optimal_pairs(matrix, rows: list[int], wild_slots: int) -> list[tuple[int, int, float]]:
    """The pairing that maximises the list's score: wildcard rows scoring 1 against every actual
    item join the assignment, so that an actual item goes to a wildcard when that is worth more."""
    import numpy as np

    try:
        from scipy.optimize import linear_sum_assignment
    except ImportError:  # checked up front by the runner; here for direct callers
        raise ImportError("matching='optimal' needs SciPy: pip install 'scorekit[cases]'") from None
    n_actual = matrix.shape[1]
    extra = min(wild_slots, n_actual)
    full = np.vstack([matrix, np.ones((extra, n_actual))]) if extra else matrix
    assigned_rows, assigned_cols = linear_sum_assignment(full, maximize=True)
    pairs = [(rows[r], int(c), float(matrix[r, c])) for r, c in zip(assigned_rows, assigned_cols)
             if r < len(rows) and matrix[r, c] > 0.0]
    return sorted(pairs)


def _list_score(path: str, actual: list, expected: list, pairs: list[tuple[int, int, float]], wildcards: int,
                method: str) -> FieldScore:
    hits = math.fsum(s for _, _, s in pairs) + wildcards
    recall = hits / len(expected)
    precision = hits / len(actual) if actual else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    match = ListMatch(method, len(expected), len(actual), pairs, wildcards, precision, recall, f1)
    return FieldScore(path, actual, expected, recall, "scored", match)


def check_comparators(comparators: Any) -> list[str]:
    """The problems of a ``comparators`` argument (empty when it is fine): a mapping of ``str``
    keys (``step``, ``step.a.b``, ``step.list[].field``) to callables; index keys are refused."""
    if comparators is None:
        return []
    if not isinstance(comparators, Mapping):
        return [f"comparators must be a mapping of field paths to callables, got {type(comparators).__name__}"]
    problems = []
    for key, comparator in comparators.items():
        if not isinstance(key, str) or not key:
            problems.append(f"comparator key {key!r} must be a non-empty string such as 'extract.vendor'")
            continue
        if _INDEX_KEY.search(key):
            problems.append(f"comparator key {key!r}: index keys are not supported; "
                            f"use {_INDEX_KEY.sub('[]', key)!r} to compare every item of the list")
        if not callable(comparator):
            problems.append(f"comparator {key!r} is a {type(comparator).__name__}, not a callable")
    return problems


def _scorer(comparators: Optional[Comparators], matching: str) -> _Scorer:
    if not comparators and matching in _PLAIN_SCORERS:
        return _PLAIN_SCORERS[matching]
    problems = check_comparators(comparators)
    if problems:
        from scorekit.cases.errors import CasesConfigError

        raise CasesConfigError(problems)
    return _Scorer(comparators, matching)


#: The scorer without comparators of every matching method (it holds no per-call state).
_PLAIN_SCORERS = {matching: _Scorer(None, matching) for matching in MATCHING}


_RESULT_CLASSES = (StepScore, FieldScore, ListMatch)


@functools.cache
def _walker() -> Callable[..., Optional[StepScore]]:
    """The compiled walker's dispatch (imported on first use: importing scorekit.cases loads no NumPy)."""
    from scorekit._kernels.cases import step_score

    return step_score


def _score_step(scorer: _Scorer, step_name: str, actual: Any, expected: Any) -> StepScore:
    if scorer.walked:  # first: the walker also scores a step whose expected value is "$ignore"
        step = _walker()(actual, expected, step_name, _RESULT_CLASSES)
        if step is not None:
            return step
    if type(expected) is str and expected == IGNORE:
        return StepScore(step_name, 0.0, "ignored", [FieldScore("<value>", actual, expected, 0.0, "ignored")])
    if step_name in scorer.comparators:
        score = scorer.compare(step_name, actual, expected)
        return StepScore(step_name, score, "scored", [FieldScore("<value>", actual, expected, score)])
    leaves: list[FieldScore] = []
    scorer.score(actual, expected, step_name, leaves)
    scored = [f.score for f in leaves if f.status == "scored"]
    if not scored:
        return StepScore(step_name, 0.0, "ignored", leaves)
    return StepScore(step_name, math.fsum(scored) / len(scored), "scored", leaves)


def score_step(actual: Any, expected: Any, *, comparators: Optional[Comparators] = None, matching: str = "greedy",
               step_name: str = "step") -> StepScore:
    """Score one step's output ``actual`` against ``expected`` (module docstring for the rules).

    Comparator keys start with ``step_name``. The step is ``ignored`` when ``expected`` is
    ``"$ignore"`` or nothing in it is scored; its score is then 0.0 and counts nowhere.

    >>> step = score_step({"title": "Gene Therapy", "year": 2023}, {"title": "Gene Therapy", "year": 2024})
    >>> step.score, step.status, [f.field for f in step.field_scores]
    (0.5, 'scored', ['step.title', 'step.year'])
    >>> score_step(["b", "c"], ["a", "b"]).score
    0.5
    """
    scorer = None if comparators else _PLAIN_SCORERS.get(matching)  # the common call, without a lookup call
    return _score_step(scorer or _scorer(comparators, matching), step_name, actual, expected)


def score_case(expected: Mapping[str, Any], outputs: Mapping[str, Any], *, comparators: Optional[Comparators] = None,
               matching: str = "greedy", runner_statuses: Optional[Mapping[str, str]] = None) -> list[StepScore]:
    """The :class:`StepScore` of every expected step, in expected order.

    A step whose expected value is ``"$ignore"`` is ``ignored``, present or not; any other step
    absent from ``outputs`` is ``missing`` (score 0.0). ``runner_statuses`` records what the
    pipeline said of a step that ran without output (``"skipped"``, ``"failed"``).
    """
    scorer = _scorer(comparators, matching)
    statuses = runner_statuses or {}
    steps = []
    for name, value in expected.items():
        if type(value) is str and value == IGNORE:
            step = StepScore(name, 0.0, "ignored", [FieldScore("<value>", outputs.get(name), value, 0.0, "ignored")])
        elif name not in outputs:
            step = StepScore(name, 0.0, "missing")
        else:
            step = _score_step(scorer, name, outputs[name], value)
        step.runner_status = statuses.get(name)
        steps.append(step)
    return steps
