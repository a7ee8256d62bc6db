"""Deterministic verifiers (``ek.qe.verifiers``, cost tier 1): free, label-free checks that catch a
value the extractor was sure of but that cannot be right (docs/qe-signals.md).

This module owns the checksums (:func:`luhn_check`, :func:`iban_check`, :func:`isbn_check`,
:func:`isbn10_check`, :func:`isbn13_check`; :data:`CHECKSUMS`, registered under ``"checks"``), the
validator factories (:func:`checksum_validator`, :func:`regex_validator`, :func:`range_validator`,
:func:`enum_validator`), the spec-driven :func:`schema_validator`, the cross-field
:func:`totals_consistent`, and :class:`VerifierSignal` (registered under ``"signals"`` as
``verifier``). A verifier reports evidence, FLAG :class:`~scorekit.base.Finding` s and the fraction
of checks passed, never a probability or a decision. Everything is pure Python; no optional library
is used.

>>> luhn_check("79927398713")          # a classic Luhn-valid number
True
>>> luhn_check("79927398710")
False
>>> isbn_check("0-306-40615-2")         # ISBN-10
True
>>> iban_check("GB82 WEST 1234 5698 7654 32")
True

**What counts as a digit.** Only the ASCII digits ``0``–``9``. Other Unicode digits (Arabic-Indic
``'٣'``, superscript ``'²'``, fullwidth ``'３'``) are ordinary characters: Luhn ignores them as it
ignores spaces, hyphens and letters, and the IBAN and ISBN checks reject a value containing one.

**Junk never raises.** A checksum reads ``str(value)`` (so ``79927398713`` and ``"7992 7398 713"``
are the same number, and ``None`` or ``nan`` has no digits) and returns ``False`` for anything it
cannot read, including an object whose ``str()`` fails.

Where the reference is silent or accidental:

* an integer of more than 4,300 digits is read exactly and an IBAN of any length is reduced mod 97
  in chunks (the reference raises Python's integer-string conversion ``ValueError``);
* :func:`checksum_validator` also finds checks registered under ``"checks"`` after the built-ins
  (the reference looks in :data:`CHECKSUMS` only and raises ``KeyError`` for anything else);
* bad arguments raise at construction, naming the argument: ``range_validator`` bounds that are not
  numbers, NaN or ``lo > hi`` (the reference flags every value, or raises ``TypeError`` when a
  value arrives), ``enum_validator`` members given as one string, ``totals_consistent``'s
  ``item_keys`` given as one string, a negative or NaN ``tol``, a record that is not a mapping, and
  a ``schema_validator`` spec whose ``domain`` is a string (the reference iterates its characters);
* a number beyond the float range counts as the infinity of its sign (``range_validator`` and
  ``totals_consistent`` flag it; the reference raises ``OverflowError``);
* an enum comparison that raises ``ValueError`` (a NumPy array value) counts as "not a member", as
  a ``TypeError`` does in the reference.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Optional

from scorekit.base import FieldSpec, Finding, Severity
from scorekit.errors import InvalidTypeError, InvalidValueError, describe
from scorekit.registry import get, register

__all__ = [
    "DEFAULT_TOTALS_TOL",
    "CHECKSUMS",
    "luhn_check",
    "iban_check",
    "isbn_check",
    "isbn10_check",
    "isbn13_check",
    "checksum_validator",
    "regex_validator",
    "range_validator",
    "enum_validator",
    "schema_validator",
    "totals_consistent",
    "VerifierSignal",
]

#: Default absolute tolerance of :func:`totals_consistent`.
DEFAULT_TOTALS_TOL = 0.01

Validator = Callable[..., Iterable[Finding]]

_WHITESPACE = re.compile(r"\s+")  # the characters str.isspace() accepts, as str.split() removes
_NON_DIGITS = bytes(c for c in range(256) if not 0x30 <= c <= 0x39)
_DOUBLED = bytes.maketrans(b"0123456789", bytes([0, 2, 4, 6, 8, 1, 3, 5, 7, 9]))  # 2d, minus 9 if > 9
_LETTER_CODES = str.maketrans({chr(c): str(c - 55) for c in range(ord("A"), ord("Z") + 1)})  # A=10 … Z=35
_MOD97_CHUNK = 4000  # decimal digits per int() call, under Python's 4,300-digit conversion limit
_TEXT = (str, bytes, bytearray)


def _text(value: Any) -> str:
    """``str(value)``, also for ints too long for ``str()``; ``""`` (no digits) when it cannot be had."""
    try:
        return str(value)
    except ValueError:
        return str(Decimal(value)) if isinstance(value, int) else ""  # Decimal has no conversion limit
    except Exception:  # a hostile __str__: junk, not an error
        return ""


def _compact(value: Any) -> str:
    """The text of ``value`` without whitespace and hyphens (how ISBNs are written)."""
    return _WHITESPACE.sub("", _text(value)).replace("-", "")


def luhn_check(number: Any) -> bool:
    """Luhn (mod-10) checksum of the ASCII digits of ``str(number)``: card numbers, IMEIs, some
    national ids. Every other character is ignored; fewer than two digits fail.

    >>> luhn_check(4111_1111_1111_1111), luhn_check("4111-1111-1111-1112"), luhn_check("0")
    (True, False, False)
    """
    digits = _text(number).encode("ascii", "ignore").translate(None, _NON_DIGITS)
    if len(digits) < 2:
        return False
    from_right = digits[::-1]
    kept, doubled = from_right[0::2], from_right[1::2].translate(_DOUBLED)
    return (sum(kept) - 0x30 * len(kept) + sum(doubled)) % 10 == 0


def _mod97(digits: str) -> int:
    """The decimal number ``digits`` modulo 97, read in chunks."""
    if len(digits) <= _MOD97_CHUNK:
        return int(digits) % 97
    rest = 0
    for start in range(0, len(digits), _MOD97_CHUNK):
        chunk = digits[start:start + _MOD97_CHUNK]
        rest = (rest * pow(10, len(chunk), 97) + int(chunk)) % 97
    return rest


def iban_check(iban: Any) -> bool:
    """IBAN validity by the ISO 13616 / ISO 7064 mod-97 rule (the remainder must be 1).

    Whitespace is removed and letters upper-cased; the value must then be ASCII letters and digits,
    two letters (the country) followed by two digits. There is no table of national lengths.

    >>> iban_check("de89 3704 0044 0532 0130 00"), iban_check("DE89370400440532013001")
    (True, False)
    """
    s = _WHITESPACE.sub("", _text(iban)).upper()
    if len(s) < 5 or not (s.isascii() and s.isalnum()) or not (s[:2].isalpha() and s[2:4].isdigit()):
        return False
    return _mod97((s[4:] + s[:4]).translate(_LETTER_CODES)) == 1


def isbn10_check(value: Any) -> bool:
    """ISBN-10 checksum (weights 10 … 1, mod 11); a final ``X`` (or ``x``) counts as 10.

    >>> isbn10_check("0-8044-2957-X"), isbn10_check("X-8044-2957-0")
    (True, False)
    """
    s = _compact(value).upper()
    if len(s) != 10:
        return False
    total = 0
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            total += (10 - i) * (ord(c) - 0x30)
        elif c == "X" and i == 9:
            total += 10
        else:
            return False
    return total % 11 == 0


def isbn13_check(value: Any) -> bool:
    """ISBN-13 / EAN-13 checksum (weights 1, 3, 1, 3 … from the left, mod 10).

    >>> isbn13_check("978-0-306-40615-7"), isbn13_check("978-0-306-40615-8")
    (True, False)
    """
    s = _compact(value)
    if len(s) != 13 or not (s.isascii() and s.isdigit()):
        return False
    return sum((3 if i % 2 else 1) * (ord(c) - 0x30) for i, c in enumerate(s)) % 10 == 0


def isbn_check(value: Any) -> bool:
    """An ISBN-10 or ISBN-13, chosen by the length once spaces and hyphens are removed.

    >>> isbn_check("978 0 306 40615 7"), isbn_check("0306406153"), isbn_check("123")
    (True, False, False)
    """
    s = _compact(value)
    if len(s) == 10:
        return isbn10_check(s)
    return len(s) == 13 and isbn13_check(s)


#: The built-in checksums by name (more can be registered under the ``"checks"`` namespace).
CHECKSUMS: dict[str, Callable[[Any], bool]] = {
    "luhn": luhn_check,
    "iban": iban_check,
    "isbn": isbn_check,
    "isbn10": isbn10_check,
    "isbn13": isbn13_check,
}
for _name, _check in CHECKSUMS.items():
    register("checks", _name, _check)


def _field(field_name: str, spec: Optional[FieldSpec]) -> str:
    """The field a finding names: ``field_name``, else the spec's name, else ``""``."""
    if field_name:
        return field_name
    return getattr(spec, "name", "") if spec is not None else ""


def _flag(field_name: str, layer: str, message: str) -> Finding:
    return Finding(field=field_name, layer=layer, severity=Severity.FLAG, message=message)


def _as_list(values: Any, argument: str, what: str) -> list[Any]:
    """``values`` as a list; a lone string (a likely slip for a list of one) or a non-iterable
    raises, naming ``argument``."""
    if isinstance(values, _TEXT):
        raise InvalidTypeError(f"must be a collection of {what}, got {describe(values)}; "
                               "wrap a single one in a list", field=argument)
    try:
        return list(values)
    except TypeError:
        raise InvalidTypeError(f"must be a collection of {what}, got {describe(values)}", field=argument) from None


def _to_float(value: Any) -> Optional[float]:
    """``float(value)``, ``None`` when it is not a number; beyond the float range, ±inf."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):
        return None


def checksum_validator(kind: str = "luhn", *, field_name: str = "", layer: str = "checksum") -> Validator:
    """A validator flagging a value that fails the checksum ``kind``: a key of :data:`CHECKSUMS`
    or a name registered under ``"checks"`` (unknown names raise ``KeyError``). ``None`` passes.

    >>> [f.message for f in checksum_validator("luhn", field_name="card")("79927398710")]
    ["luhn checksum failed for '79927398710'"]
    """
    if not isinstance(kind, str):
        raise InvalidTypeError(f"must be a checksum name, got {describe(kind)}", field="kind")
    check = CHECKSUMS.get(kind) or get("checks", kind)

    def validate(value: Any, *, spec: Optional[FieldSpec] = None) -> Iterator[Finding]:
        if value is not None and not check(value):
            yield _flag(_field(field_name, spec), layer, f"{kind} checksum failed for {value!r}")

    return validate


def regex_validator(pattern: str, *, field_name: str = "", layer: str = "format") -> Validator:
    """A validator flagging a value whose ``str()`` does not match ``pattern`` in full (compiled
    now, so a bad pattern raises ``re.error`` here). ``None`` passes.

    >>> [f.message for f in regex_validator(r"\\d{4}")("20x6")]
    ["'20x6' does not match /\\\\d{4}/"]
    """
    if not isinstance(pattern, (str, re.Pattern)):
        raise InvalidTypeError(f"must be a str or a compiled pattern, got {describe(pattern)}", field="pattern")
    compiled = re.compile(pattern)

    def validate(value: Any, *, spec: Optional[FieldSpec] = None) -> Iterator[Finding]:
        if value is not None and compiled.fullmatch(str(value)) is None:
            yield _flag(_field(field_name, spec), layer, f"{value!r} does not match /{pattern}/")

    return validate


def _range_finding(value: Any, x: Optional[float], lo: Any, hi: Any, field_name: str, layer: str) -> Finding:
    """The finding for ``value`` (read as ``x``, ``None`` when not a number) outside ``[lo, hi]``;
    NaN is outside every range."""
    if x is None:
        return _flag(field_name, layer, f"{value!r} is not numeric")
    return _flag(field_name, layer, f"{x} outside [{lo}, {hi}]")


def range_validator(lo: float, hi: float, *, field_name: str = "", layer: str = "range") -> Validator:
    """A validator flagging a value that is not a number (``None`` included) or lies outside
    ``[lo, hi]`` (inclusive; NaN is outside). The bounds must be numbers with ``lo <= hi``.

    >>> [f.message for f in range_validator(0, 100)("999")]
    ['999.0 outside [0, 100]']
    """
    for name, bound in (("lo", lo), ("hi", hi)):
        if isinstance(bound, _TEXT) or _to_float(bound) is None:
            raise InvalidTypeError(f"must be a number, got {describe(bound)}", field=name)
        if bound != bound:
            raise InvalidValueError("must not be NaN", field=name)
    if lo > hi:
        raise InvalidValueError(f"is empty: lo={lo!r} > hi={hi!r}", field="range")

    def validate(value: Any, *, spec: Optional[FieldSpec] = None) -> Iterator[Finding]:
        x = _to_float(value)
        if x is None or not lo <= x <= hi:
            yield _range_finding(value, x, lo, hi, _field(field_name, spec), layer)

    return validate


def _is_member(value: Any, allowed: Sequence[Any]) -> bool:
    for member in allowed:
        try:
            if member is value or member == value:
                return True
        except (TypeError, ValueError):  # incomparable, or an array's ambiguous truth value
            continue
    return False


def _enum_finding(value: Any, allowed: Sequence[Any], field_name: str, layer: str) -> Finding:
    return _flag(field_name, layer, f"{value!r} not in {sorted(map(str, allowed))}")


def enum_validator(members: Iterable[Any], *, field_name: str = "", layer: str = "enum") -> Validator:
    """A validator flagging a value that equals (``==``) none of ``members``; members may be
    unhashable, and ``None`` is checked like any value.

    >>> [f.message for f in enum_validator(["B", "A"])("C")]
    ["'C' not in ['A', 'B']"]
    """
    allowed = _as_list(members, "members", "values")

    def validate(value: Any, *, spec: Optional[FieldSpec] = None) -> Iterator[Finding]:
        if not _is_member(value, allowed):
            yield _enum_finding(value, allowed, _field(field_name, spec), layer)

    return validate


_compiled = functools.lru_cache(maxsize=1024)(re.compile)


def _is_plain_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def schema_validator(value: Any, *, spec: Optional[FieldSpec] = None) -> Iterator[Finding]:
    """A validator driven by a :class:`~scorekit.base.FieldSpec`'s ``type`` and ``domain``; with no
    spec it finds nothing, so it fits in any validator list.

    A ``"number"`` field must convert with ``float()`` (else one ``type`` finding). Its ``domain``
    is then read as a ``(lo, hi)`` range when the field is a number and the domain two numbers, as
    a regex when it is one string, and as the allowed values otherwise.

    >>> spec = FieldSpec("amount", "number", domain=(0.0, 100.0))
    >>> [(f.layer, f.message) for f in schema_validator("150", spec=spec)]
    [('range', '150.0 outside [0.0, 100.0]')]
    >>> [f.layer for f in schema_validator("abcde", spec=FieldSpec("zip", domain=(r"\\d{5}",)))]
    ['format']
    """
    if spec is None:
        return
    name, kind, domain = spec.name, getattr(spec, "type", None), getattr(spec, "domain", ())
    if kind == "number" and _to_float(value) is None:
        yield _flag(name, "type", f"{value!r} is not a number")
        return
    if isinstance(domain, _TEXT):
        raise InvalidTypeError(f"must be a tuple (allowed values, (lo, hi) or (regex,)), got {describe(domain)}",
                               field=f"spec {name!r} domain")
    domain = tuple(domain or ())
    if not domain:
        return
    if kind == "number" and len(domain) == 2 and all(map(_is_plain_number, domain)):
        x, lo, hi = _to_float(value), domain[0], domain[1]
        if x is None or not lo <= x <= hi:
            yield _range_finding(value, x, lo, hi, name, "range")
    elif len(domain) == 1 and isinstance(domain[0], str):
        if value is not None and _compiled(domain[0]).fullmatch(str(value)) is None:
            yield _flag(name, "format", f"{value!r} does not match /{domain[0]}/")
    elif not _is_member(value, domain):
        yield _enum_finding(value, domain, name, "enum")


def totals_consistent(record: Mapping[str, Any], *, total_key: str, item_keys: Iterable[str],
                      tol: float = DEFAULT_TOTALS_TOL, layer: str = "cross_field") -> Iterator[Finding]:
    """Flag a record whose ``record[total_key]`` differs from the sum of its ``item_keys`` by more
    than ``tol`` (absolute), or whose numbers are NaN or infinite.

    Safe on partial records: nothing is checked when the total or every item key is absent, or when
    one of them is not a number; absent item keys are left out of the sum. Arguments are checked
    when called; findings come as the result is iterated.

    >>> [f.message for f in totals_consistent({"total": 99, "a": 10, "b": 20}, total_key="total",
    ...                                       item_keys=["a", "b"])]
    ["total=99.0 != sum(['a', 'b'])=30.0"]
    """
    if type(record) is not dict and not (isinstance(record, Mapping) or hasattr(record, "keys")):
        raise InvalidTypeError(f"must be a mapping, got {describe(record)}", field="record")
    keys = _as_list(item_keys, "item_keys", "keys")
    if type(tol) is not float or not 0.0 <= tol < math.inf:
        tolerance = None if isinstance(tol, _TEXT) else _to_float(tol)
        if tolerance is None:
            raise InvalidTypeError(f"must be a number, got {describe(tol)}", field="tol")
        if not (tolerance >= 0.0 and math.isfinite(tolerance)):
            raise InvalidValueError(f"must be finite and >= 0, got {tol!r}", field="tol")
    shown = item_keys if type(item_keys) in (list, tuple) else keys
    return _totals_findings(record, total_key, keys, shown, tol, layer)


def _totals_findings(record: Mapping[str, Any], total_key: str, keys: list[Any], shown: Any, tol: float,
                     layer: str) -> Iterator[Finding]:
    if total_key not in record:
        return
    present = [k for k in keys if k in record]
    if not present:
        return
    total = _to_float(record[total_key])
    parts = [_to_float(record[k]) for k in present]
    if total is None or None in parts:
        return
    if not (math.isfinite(total) and all(map(math.isfinite, parts))):
        yield _flag(total_key, layer, f"{total_key} or its line items are non-finite (NaN/inf)")
        return
    items_sum = sum(parts)
    if abs(total - items_sum) > tol:
        yield _flag(total_key, layer, f"{total_key}={total} != sum({shown})={items_sum}")


@dataclass
class VerifierSignal:
    """Deterministic verifier evidence as a raw signal (cost tier 1): the fraction of
    ``validators`` that found nothing (1.0 with no validators). A validator fails once however many
    findings it yields; :meth:`findings` lists them all, for review.

    >>> v = VerifierSignal([checksum_validator("luhn"), regex_validator(r"\\d+")])
    >>> v("79927398713"), v("79927398710"), v("abc")
    (1.0, 0.5, 0.0)
    >>> [f.layer for f in v.findings("79927398710")]
    ['checksum']
    """

    validators: list[Validator] = field(default_factory=list)
    cost_tier: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.validators, (list, tuple)):
            self.validators = _as_list(self.validators, "validators", "validators")
        for i, v in enumerate(self.validators):
            if not callable(v):
                raise InvalidTypeError(f"must be a validator (a callable), got {describe(v)}",
                                       field=f"validators[{i}]")

    def __call__(self, value: Any, *, spec: Optional[FieldSpec] = None) -> float:
        if not self.validators:
            return 1.0
        failed = 0
        for validate in self.validators:
            for _ in validate(value, spec=spec):  # one finding is enough to fail
                failed += 1
                break
        return 1.0 - failed / len(self.validators)

    def findings(self, value: Any, *, spec: Optional[FieldSpec] = None) -> list[Finding]:
        """Every finding of every validator for ``value``, in validator order (empty: all clear)."""
        return [f for v in self.validators for f in v(value, spec=spec)]


register("signals", "verifier", VerifierSignal)
