"""Named field comparators and the field paths they apply to (docs/cases.md, "Named comparators").

Owns the six named comparators — ``exact``, ``casefold``, ``fuzzy``, ``numeric``, ``date``,
``set`` — as :class:`Comparator` objects (``comparator("numeric", abs=0.01)``, or from a spec: a
name or a mapping ``{"name": ..., **options}``), the path patterns that say where they apply
(``extract.total``, ``*`` for any key or list position: ``extract.line_items.*.qty``), resolved
against the cases' expected values into the scorer's keys (:func:`resolve_comparators`), the
comparators file of ``scorekit cases --comparators`` (:func:`load_comparators`), and the label
recorded on each field a comparator scored (:func:`label_fields`). The scorer
(:mod:`scorekit.cases.scoring`) calls them like any Python comparator: one implementation for
the Python API and the command line.

A value a comparator cannot read on the **actual** side (a string where a number is expected, an
unparsable or ambiguous date, NaN) scores 0; on the **expected** side it is a wrong benchmark,
raised as a named error that makes the case an ``error`` (:class:`~scorekit.cases.ComparatorError`).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import numbers
import re
from typing import Any, Callable, Iterable, Mapping, Optional

from scorekit.cases.errors import CasesConfigError, ComparatorConfigError
from scorekit.cases.scoring import ORDERED, _multiset_key, check_comparators, values_equal
from scorekit.errors import InvalidTypeError, InvalidValueError, describe

__all__ = ["NAMES", "Comparator", "comparator", "comparator_label", "label_fields", "load_comparators",
           "resolve_comparators", "similarity"]

#: The named comparators and their options with defaults.
_OPTIONS: dict[str, dict[str, Any]] = {"exact": {}, "casefold": {}, "fuzzy": {"threshold": 0.8},
                                       "numeric": {"abs": 0.0, "rel": 0.0}, "date": {"formats": ()}, "set": {}}
NAMES = tuple(_OPTIONS)
WILDCARD = "*"
_ITEM = "[]"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# exact decimal arithmetic: the difference of two JSON numbers is never rounded
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


# ------------------------------------------------------------------------------- the rules
def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _decimal(value: Any) -> decimal.Decimal:
    """A number as the decimal it is written as in JSON (a float's shortest repr)."""
    return decimal.Decimal(int(value)) if isinstance(value, numbers.Integral) else decimal.Decimal(repr(float(value)))


def similarity(a: str, b: str) -> float:
    """Normalised Levenshtein similarity of two strings, in code points: ``1 - distance /
    max(len(a), len(b))``; 1.0 for two empty strings.

    >>> round(similarity("kitten", "sitting"), 4), similarity("", "")
    (0.5714, 1.0)
    """
    from scorekit.metrics.strings import count_pair

    if not a and not b:
        return 1.0
    _, substitutions, deletions, insertions = count_pair(a, b, "cer")
    return 1.0 - (substitutions + deletions + insertions) / max(len(a), len(b))


def _exact(actual: Any, expected: Any) -> float:
    return 1.0 if values_equal(actual, expected) else 0.0


def _casefold(actual: Any, expected: Any) -> float:
    if isinstance(actual, str) and isinstance(expected, str):
        return 1.0 if actual.casefold() == expected.casefold() else 0.0
    return _exact(actual, expected)


def _fuzzy(actual: Any, expected: Any, threshold: float) -> float:
    if isinstance(actual, str) and isinstance(expected, str):
        score = similarity(actual, expected)
        return score if score >= threshold else 0.0
    return _exact(actual, expected)


def _numeric(actual: Any, expected: Any, abs: float, rel: float) -> float:  # noqa: A002 (the option names)
    if not _is_number(expected) or not math.isfinite(expected):
        raise InvalidValueError(f"numeric: the expected value is {describe(expected)}, not a finite number")
    if not _is_number(actual) or not math.isfinite(actual):
        return 0.0
    with decimal.localcontext(_EXACT):
        gold = _decimal(expected)
        tolerance = max(_decimal(abs), _decimal(rel) * gold.copy_abs())
        return 1.0 if (_decimal(actual) - gold).copy_abs() <= tolerance else 0.0


def _parse_date(value: Any, formats: tuple[str, ...]) -> tuple[Optional[_dt.date], str]:
    """The date ``value`` is written as, or ``None`` and why not: ISO ``YYYY-MM-DD``, or any of
    ``formats`` (``strptime``); text that two formats read as different dates is ambiguous."""
    if not isinstance(value, str):
        return None, f"{describe(value)} is not a text"
    found = set()
    if _ISO_DATE.fullmatch(value):
        try:
            found.add(_dt.date.fromisoformat(value))
        except ValueError:
            pass
    for form in formats:
        try:
            found.add(_dt.datetime.strptime(value, form).date())
        except ValueError:
            pass
    if len(found) == 1:
        return found.pop(), ""
    if found:
        return None, f"{value!r} is ambiguous: the formats read it as {', '.join(sorted(map(str, found)))}"
    return None, f"{value!r} is not a date (YYYY-MM-DD{''.join(', ' + f for f in formats)})"


def _date(actual: Any, expected: Any, formats: tuple[str, ...]) -> float:
    gold, why = _parse_date(expected, formats)
    if gold is None:
        raise InvalidValueError(f"date: the expected value {why}")
    got, _ = _parse_date(actual, formats)
    return 1.0 if got == gold else 0.0


_SCALARS = (str, int, float, bool, type(None))


def _set(actual: Any, expected: Any) -> float:
    if not isinstance(expected, list):
        raise InvalidTypeError(f"set: the expected value is {describe(expected)}, not a list")
    for item in expected:
        if not isinstance(item, _SCALARS) or (isinstance(item, float) and not math.isfinite(item)):
            raise InvalidValueError(f"set: the expected list holds {describe(item)}; a set holds text, finite "
                                    "numbers, booleans and null")
    if not isinstance(actual, list):
        return 0.0
    gold = {_multiset_key(item) for item in expected}
    got = {_multiset_key(item) if isinstance(item, _SCALARS) else object() for item in actual}
    if not gold and not got:
        return 1.0
    return 2 * len(gold & got) / (len(gold) + len(got))


_RULES: dict[str, Callable[..., float]] = {"exact": _exact, "casefold": _casefold, "fuzzy": _fuzzy,
                                           "numeric": _numeric, "date": _date, "set": _set}


# ------------------------------------------------------------------------------ comparators
class Comparator:
    """A named comparator with its options, called as ``comparator(actual, expected)`` by the
    scorer; ``label`` is what the summary records (``numeric(abs=0.01, rel=0)``)."""

    __slots__ = ("name", "options")

    def __init__(self, name: str, options: Mapping[str, Any]) -> None:
        self.name = name
        self.options = dict(options)

    def __call__(self, actual: Any, expected: Any) -> float:
        return _RULES[self.name](actual, expected, **self.options)

    @property
    def label(self) -> str:
        if not self.options:
            return self.name
        shown = (f"{k}={v:g}" if _is_number(v) else f"{k}={list(v)!r}" for k, v in self.options.items())
        return f"{self.name}({', '.join(shown)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Comparator) and (self.name, self.options) == (other.name, other.options)

    def __hash__(self) -> int:
        return hash(self.label)

    def __repr__(self) -> str:
        return f"Comparator({self.label})"


def _option(name: str, key: str, value: Any) -> tuple[Any, Optional[str]]:
    """The checked value of option ``key`` of comparator ``name``, or the problem with it."""
    if key == "formats":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(f, str) and "%" in f for f in value):
            return None, f"{name} option 'formats' must be a list of strptime formats such as '%d.%m.%Y'"
        return tuple(value), None
    try:
        number = float(value) if _is_number(value) else math.nan
    except OverflowError:  # an integer beyond the floats
        number = math.inf
    if not math.isfinite(number) or number < 0 or (key == "threshold" and number > 1):
        bound = "a number in [0, 1]" if key == "threshold" else "a finite number >= 0"
        return None, f"{name} option {key!r} must be {bound}, got {describe(value)}"
    return number, None


def _build(spec: Any) -> tuple[Optional[Comparator], list[str]]:
    if isinstance(spec, str):
        name, given = spec, {}
    elif isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
        name, given = spec["name"], {k: v for k, v in spec.items() if k != "name"}
    else:
        return None, [f"a comparator is a name ({', '.join(NAMES)}) or a mapping with a 'name', got {describe(spec)}"]
    if name not in _OPTIONS:
        return None, [f"unknown comparator {name!r} (the comparators are {', '.join(NAMES)})"]
    options, problems = dict(_OPTIONS[name]), []
    for key, value in given.items():
        if key not in options:
            allowed = ", ".join(_OPTIONS[name]) or "none"
            problems.append(f"{name} has no option {key!r} (its options: {allowed})")
            continue
        options[key], problem = _option(name, key, value)
        if problem:
            problems.append(problem)
    return (None, problems) if problems else (Comparator(name, options), [])


def comparator(spec: Any, **options: Any) -> Comparator:
    """The named comparator of ``spec`` — a name, or a mapping ``{"name": ..., **options}`` —
    with ``options``; a :class:`~scorekit.cases.CasesConfigError` for an unknown name or option.

    >>> near = comparator("numeric", abs=0.01)
    >>> near.label, near(104.01, 104.0), near(104.02, 104.0)
    ('numeric(abs=0.01, rel=0)', 1.0, 0.0)
    >>> comparator({"name": "fuzzy", "threshold": 0.5})("sitting", "kitten") == 4 / 7
    True
    """
    if options:
        if not isinstance(spec, str):
            raise TypeError("give options either in the spec mapping or as keyword arguments")
        spec = {"name": spec, **options}
    built, problems = _build(spec)
    if built is None:
        raise CasesConfigError(problems)
    return built


# ------------------------------------------------------------------------------------ paths
def _split(pattern: str) -> list[str]:
    """``a.b.*.c`` and ``a.b[].c`` as segments: keys, ``*`` (any key or list position) and ``[]``
    (any list position)."""
    out: list[str] = []
    for part in pattern.split("."):
        items = 0
        while part.endswith(_ITEM):
            part, items = part[:-len(_ITEM)], items + 1
        if part:
            out.append(part)
        out.extend([_ITEM] * items)
    return out


def _walk(segments: list[str], value: Any, prefix: str, found: set[str]) -> None:
    """Add to ``found`` the scorer key of every place ``segments`` reach from ``value``."""
    if not segments:
        found.add(prefix)
        return
    head, rest = segments[0], segments[1:]
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(ORDERED), list):
        value = value[ORDERED]
    if isinstance(value, dict) and head != _ITEM:
        keys = list(value) if head == WILDCARD else [head] if head in value else []
        for key in keys:
            _walk(rest, value[key], f"{prefix}.{key}" if prefix else key, found)
    elif isinstance(value, list) and head in (WILDCARD, _ITEM) and prefix:
        for item in value:
            _walk(rest, item, prefix + _ITEM, found)


def resolve_comparators(comparators: Mapping[str, Any], expecteds: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The scorer's comparators for path patterns mapped to comparators (a :class:`Comparator`,
    a spec, or any Python callable), against the cases' expected values.

    Each pattern becomes the keys of every place it reaches in any expected value (``*``: any
    key or list position; a list position is the scorer's ``[]``; with no expected value, no
    place and no check). Where several patterns reach
    one place the one with the fewest ``*`` wins. A
    :class:`~scorekit.cases.errors.ComparatorConfigError` lists every problem: a bad spec, a
    pattern that reaches nothing, two equally specific patterns giving one place different
    comparators, a comparator under a place another one scores whole (it would never be called).

    >>> expected = [{"extract": {"total": 1.0, "items": [{"qty": 2, "sku": "A"}]}}]
    >>> sorted(resolve_comparators({"extract.items.*.qty": "numeric", "*.total": "exact"}, expected))
    ['extract.items[].qty', 'extract.total']
    """
    problems: list[str] = []
    built: dict[str, Any] = {}
    for pattern, spec in comparators.items():
        if callable(spec):
            built[pattern] = spec
            continue
        made, issues = _build(spec)
        problems += [f"comparator for {pattern!r}: {p}" for p in issues]
        if made is not None:
            built[pattern] = made
    key_problems = check_comparators(built)
    if key_problems:
        raise ComparatorConfigError(problems + key_problems)
    cases = list(expecteds)
    chosen: dict[str, tuple[int, str, Any]] = {}
    for pattern, fn in built.items():
        segments = _split(pattern)
        found: set[str] = set()
        for expected in cases:
            _walk(segments, expected, "", found)
        if cases and not found:
            problems.append(f"comparator path {pattern!r} matches no field of any case's expected output")
        rank = segments.count(WILDCARD)
        for key in found:
            held = chosen.get(key)
            if held is None or rank < held[0]:
                chosen[key] = (rank, pattern, fn)
            elif rank == held[0] and held[2] != fn:
                problems.append(f"comparator paths {held[1]!r} and {pattern!r} both give {key!r} a comparator")
    for key, (_, pattern, _) in sorted(chosen.items()):
        outer = next((k for k in chosen if key.startswith(k + ".") or key.startswith(k + _ITEM)), None)
        if outer is not None:
            problems.append(f"comparator path {pattern!r} ({key!r}) is never used: {chosen[outer][1]!r} "
                            f"compares the whole of {outer!r}")
    if problems:
        raise ComparatorConfigError(problems)
    return {key: fn for key, (_, _, fn) in chosen.items()}


def load_comparators(path: str) -> dict[str, Comparator]:
    """The comparators file of ``scorekit cases --comparators``: JSON or YAML mapping path
    patterns to comparator specs; a :class:`~scorekit.cases.errors.ComparatorConfigError` with
    every problem (the paths are checked against the cases by :func:`resolve_comparators`)."""
    from scorekit.cases.discovery import read_data_file

    try:
        data = read_data_file(path)
    except ValueError as exc:
        raise ComparatorConfigError([f"comparators file {path!r} {exc}"]) from None
    if data is None or data == {}:
        raise ComparatorConfigError([f"comparators file {path!r} is empty"])
    if not isinstance(data, dict):
        raise ComparatorConfigError([f"comparators file {path!r} must map field paths to comparators, "
                                     f"got {describe(data)}"])
    out: dict[str, Comparator] = {}
    problems = []
    for pattern, spec in data.items():
        made, issues = _build(spec)
        problems += [f"comparator for {pattern!r}: {p}" for p in issues]
        if made is not None:
            out[pattern] = made
    if problems:
        raise ComparatorConfigError(problems)
    return out


# ----------------------------------------------------------------------------------- labels
def comparator_label(fn: Any) -> str:
    """What the summary records for a comparator: a named one's label, else the callable's name."""
    return getattr(fn, "label", None) or getattr(fn, "__qualname__", None) or type(fn).__name__


def label_fields(steps: Iterable[Any], comparators: Mapping[str, Any]) -> None:
    """Set ``comparator`` on every scored field of ``steps`` a comparator scored: the
    comparator's label, or for a list whose items comparators scored, ``*.qty: label`` per
    item path."""
    if not comparators:
        return
    for step in steps:
        for fs in step.field_scores:
            if fs.status != "scored":
                continue
            key = step.step_name if fs.field == "<value>" else fs.field
            if key in comparators:
                fs.comparator = comparator_label(comparators[key])
                continue
            inner = sorted(k for k in comparators if k.startswith(key + _ITEM))
            if inner:
                fs.comparator = "; ".join(
                    f"{k[len(key):].replace(_ITEM, '.' + WILDCARD).lstrip('.')}: {comparator_label(comparators[k])}"
                    for k in inner)
