"""The corpus rules of the OCR page kit, as one configuration object.

Owns what makes the kit one corpus's tool or another's: the scanner watermark phrases and how
closely a text must match one, the box filters (by label, or by the script of the transcription)
and the report variants built from them, and the text rules (the ordered replacements that
canonicalise punctuation, the ones re-applied after lowercasing, and the characters whose
insertion or deletion is free at a hyphen join). :data:`DEFAULT_CONFIG` holds the seed's values
(an Armenian newspaper corpus); :func:`load_config` reads a YAML or JSON file that replaces some
of them, and :func:`config_from_dict` does the same from a mapping. Every other module of the kit
takes a ``config`` argument (``None`` = :data:`DEFAULT_CONFIG`). The file format, with the
default values, is in docs/ocr-pages.md#the-configuration-file.

>>> cfg = config_from_dict({"watermark": {"phrases": ["Scanned by ACME"]}})
>>> cfg.watermark.phrases, cfg.variant_names == DEFAULT_CONFIG.variant_names
(('Scanned by ACME',), True)
>>> config_from_dict({"watermark": {"phrase": []}})
Traceback (most recent call last):
...
scorekit.errors.InvalidValueError: config: watermark: unknown key 'phrase' (known: phrases, max_edit_distance, max_window)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Optional

from scorekit.errors import InvalidTypeError, InvalidValueError, describe

__all__ = ["PageKitConfig", "WatermarkRules", "BoxFilter", "TextRules", "DEFAULT_CONFIG", "load_config",
           "config_from_dict", "resolve_config", "JOIN_SENTINEL"]

#: Private-use code point that marks a join position while a text is normalised (text_metrics);
#: no text rule may contain it.
JOIN_SENTINEL = "\ue000"

_VEW = "\u0587"  # the ligature և
_YE_YIWN = "\u0565\u0582"  # its old spelling եւ


def _wkey(s: str) -> str:
    """How a watermark is compared: NFC, casefolded, whitespace runs collapsed to one space."""
    return " ".join(unicodedata.normalize("NFC", s).casefold().split())


@dataclass(frozen=True)
class WatermarkRules:
    """Scanner watermark phrases: a text within ``max_edit_distance`` edits of a phrase (compared
    by :func:`_wkey`) is a watermark; a match spans at most ``max_window`` consecutive words."""

    phrases: tuple[str, ...]
    max_edit_distance: int
    max_window: int

    @cached_property
    def keys(self) -> tuple[str, ...]:
        """The phrase keys, longest first (a long phrase may end with a short one)."""
        return tuple(sorted(dict.fromkeys(_wkey(p) for p in self.phrases), key=len, reverse=True))

    @cached_property
    def key_lengths(self) -> frozenset[int]:
        """Lengths a key can have and still be within reach of a phrase."""
        d = self.max_edit_distance
        return frozenset(len(k) + e for k in self.keys for e in range(-d, d + 1))


@dataclass(frozen=True)
class BoxFilter:
    """One box filter: it excludes the boxes whose label is one of ``labels`` (compared after
    ``strip().lower()``), or, when ``scripts`` is given, the boxes whose transcription has more
    than ``share_above`` of its letters in those scripts (a script is a word of the Unicode
    character name: ``LATIN``, ``CYRILLIC``, ``GREEK``…)."""

    labels: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    share_above: float = 0.0

    @cached_property
    def label_keys(self) -> frozenset[str]:
        """The labels as compared: ``strip().lower()``."""
        return frozenset(x.strip().lower() for x in self.labels)


@dataclass(frozen=True)
class TextRules:
    """How texts are made comparable after NFC and whitespace collapse: ``replacements`` applied
    one after another (each over the whole text), ``lowercase_replacements`` applied after
    lowercasing (for the ``cer_lowercase`` figures), and ``free_at_joins``, the characters whose
    insertion or deletion costs nothing at a hyphen join (empty: no edit is free)."""

    replacements: tuple[tuple[str, str], ...]
    lowercase_replacements: tuple[tuple[str, str], ...]
    free_at_joins: str


@dataclass(frozen=True)
class PageKitConfig:
    """The corpus rules of the kit: watermark, filters (name -> :class:`BoxFilter`, in canonical
    order), variants (name -> filter names) and text rules. Build it with :func:`config_from_dict`
    or :func:`load_config`, which check every value."""

    watermark: WatermarkRules
    filters: tuple[tuple[str, BoxFilter], ...]
    variants: tuple[tuple[str, tuple[str, ...]], ...]
    text: TextRules
    source: str = field(default="built-in default", compare=False)  # names the file in messages
    #: Scoring predictions read from an OCR file: the readers' normalisation comes first (see
    #: :meth:`for_ocr_files`). Not part of :meth:`to_dict` nor of the fingerprint.
    ocr_file_text: bool = False

    def for_ocr_files(self) -> "PageKitConfig":
        """This configuration for a page whose predictions come from an OCR file (PAGE-XML, ALTO,
        hOCR): the readers of :mod:`scorekit.ocr` give those texts normalised as dinglehopper
        normalises them, so :attr:`replacements` starts with the same rules (its ligatures and
        equivalences), applied to both sides."""
        return replace(self, ocr_file_text=True)

    @cached_property
    def replacements(self) -> tuple[tuple[str, str], ...]:
        """The replacements text normalisation applies, in order: ``text.replacements``, after the
        OCR readers' rules when :attr:`ocr_file_text` is set."""
        if not self.ocr_file_text:
            return self.text.replacements
        from scorekit.ocr.formats.normalization import EQUIVALENCES, LIGATURES

        return LIGATURES + EQUIVALENCES + self.text.replacements

    @cached_property
    def filter_map(self) -> dict[str, BoxFilter]:
        return dict(self.filters)

    @cached_property
    def variant_map(self) -> dict[str, tuple[str, ...]]:
        return dict(self.variants)

    @property
    def filter_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.filters)

    @property
    def variant_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.variants)

    def to_dict(self) -> dict[str, Any]:
        """The configuration in the file format (``config_from_dict(c.to_dict())`` gives it back)."""
        def filter_entry(f: BoxFilter) -> dict[str, Any]:
            return {"scripts": list(f.scripts), "share_above": f.share_above} if f.scripts else {"labels": list(f.labels)}

        return {
            "watermark": {"phrases": list(self.watermark.phrases), "max_edit_distance": self.watermark.max_edit_distance,
                          "max_window": self.watermark.max_window},
            "filters": {name: filter_entry(f) for name, f in self.filters},
            "variants": {name: list(fs) for name, fs in self.variants},
            "text": {"replacements": [list(r) for r in self.text.replacements],
                     "lowercase_replacements": [list(r) for r in self.text.lowercase_replacements],
                     "free_at_joins": self.text.free_at_joins},
        }

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`to_dict`: equal rules, equal fingerprint."""
        canonical = json.dumps(self.to_dict(), ensure_ascii=True, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("ascii")).hexdigest()

    @property
    def is_default(self) -> bool:
        return self.fingerprint == DEFAULT_CONFIG.fingerprint


# ------------------------------------------------------------------------------ the seed's values
_IMAGE_LABELS = ("Photo", "Graphics", "SealFigure", "FrontPicture")
_HEADER_LABELS = ("Headline", "Kicker", "Banner", "Deck", "Subhead", "Nameplate", "Masthead", "FrontStory")

DEFAULT_CONFIG = PageKitConfig(
    watermark=WatermarkRules(("National Library of Armenia OCR by PortMind", "OCR by PortMind"), 2, 12),
    filters=(
        ("non-armenian", BoxFilter(scripts=("LATIN", "CYRILLIC"), share_above=0.9)),
        ("graphics", BoxFilter(labels=("Graphics",))),
        ("photo", BoxFilter(labels=("Photo",))),
        ("image", BoxFilter(labels=_IMAGE_LABELS)),
        ("header", BoxFilter(labels=_HEADER_LABELS)),
        ("image-header", BoxFilter(labels=_IMAGE_LABELS + _HEADER_LABELS)),
    ),
    variants=(
        ("no_filter", ()),
        ("non_armenian", ("non-armenian",)),
        ("graphics_headers_images_photos", ("graphics", "photo", "image", "header")),
        ("all_filters", ("non-armenian", "graphics", "photo", "image", "header")),
    ),
    text=TextRules(
        replacements=(
            ("--", "\u2014"),         # two hyphens -> EM DASH (then -> "-" below)
            (_YE_YIWN, _VEW),         # եւ -> ligature և
            ("\u058a", "-"),          # ARMENIAN HYPHEN
            ("\u2014", "-"),          # EM DASH
            ("\u0301", "\u055b"),     # COMBINING ACUTE ACCENT -> ARMENIAN EMPHASIS MARK
            ("\u055d", "`"),          # ARMENIAN COMMA -> GRAVE ACCENT
            ("\u2024", "."),          # ONE DOT LEADER
            ("\u2026", "..."),        # HORIZONTAL ELLIPSIS
            ("\u2116", "N"),          # NUMERO SIGN
            ("\u0589", ":"),          # ARMENIAN FULL STOP
            ("\u02f8", ":"),          # MODIFIER LETTER RAISED COLON
            ("\ufe13", ":"),          # PRESENTATION FORM FOR VERTICAL COLON
            ("\ufe30", ":"),          # PRESENTATION FORM FOR VERTICAL TWO DOT LEADER
            ("\uff1a", ":"),          # FULLWIDTH COLON
            ("\u2236", ":"),          # RATIO
            ("\ua789", ":"),          # MODIFIER LETTER COLON
        ),
        lowercase_replacements=((_YE_YIWN, _VEW),),  # lowercasing ԵՒ gives եւ
        free_at_joins="\u0568\u0538",  # the Armenian schwa ը / Ը
    ),
)


def resolve_config(config: Optional[PageKitConfig]) -> PageKitConfig:
    """``config``, or :data:`DEFAULT_CONFIG` for ``None``; anything else is an ``InvalidTypeError``."""
    if config is None:
        return DEFAULT_CONFIG
    if not isinstance(config, PageKitConfig):
        raise InvalidTypeError(f"must be a PageKitConfig (see load_config), got {describe(config)}", field="config")
    return config


# ------------------------------------------------------------------------------------- checking
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")  # a variant names a file: accuracy_report_<name>.json
_FILTER_NAME = re.compile(r"[^\s,]+")                # filters are given comma-separated
_SCRIPT = re.compile(r"[A-Z][A-Z0-9-]*")


class _Checker:
    """Reads one configuration mapping; every error names ``<source>: <dotted key>:``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, message: str) -> InvalidValueError:
        return InvalidValueError(message, field=f"{self.source}: {key}:" if key else f"{self.source}:")

    def mapping(self, value: Any, key: str, known: tuple[str, ...] = ()) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key, f"must be a mapping, got {describe(value)}")
        for k in value:
            if not isinstance(k, str):
                raise self.fail(key, f"keys must be strings, got {describe(k)}")
            if known and k not in known:
                raise self.fail(key, f"unknown key {k!r} (known: {', '.join(known)})")
        return value

    def text(self, value: Any, key: str, *, empty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {describe(value)}")
        if not empty and not value:
            raise self.fail(key, "must not be empty")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise self.fail(key, "holds a lone surrogate (not a Unicode character)") from None
        if JOIN_SENTINEL in value:
            raise self.fail(key, "holds U+E000, which the kit reserves to mark hyphen joins")
        return value

    def texts(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"must be a list of strings, got {describe(value)}")
        return tuple(self.text(v, f"{key}[{k}]") for k, v in enumerate(value))

    def integer(self, value: Any, key: str, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {describe(value)}")
        if value < minimum:
            raise self.fail(key, f"must be at least {minimum}, got {value}")
        return value

    def pairs(self, value: Any, key: str) -> tuple[tuple[str, str], ...]:
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"must be a list of [from, to] pairs, got {describe(value)}")
        out = []
        for k, pair in enumerate(value):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise self.fail(f"{key}[{k}]", f"must be a [from, to] pair, got {describe(pair)}")
            out.append((self.text(pair[0], f"{key}[{k}][0]"), self.text(pair[1], f"{key}[{k}][1]", empty=True)))
        return tuple(out)


def _watermark(c: _Checker, raw: Mapping[str, Any]) -> WatermarkRules:
    d = DEFAULT_CONFIG.watermark
    raw = c.mapping(raw, "watermark", ("phrases", "max_edit_distance", "max_window"))
    phrases = c.texts(raw["phrases"], "watermark.phrases") if "phrases" in raw else d.phrases
    for k, p in enumerate(phrases):
        if not _wkey(p):
            raise c.fail(f"watermark.phrases[{k}]", "is only whitespace")
    distance = (c.integer(raw["max_edit_distance"], "watermark.max_edit_distance", 0)
                if "max_edit_distance" in raw else d.max_edit_distance)
    window = c.integer(raw["max_window"], "watermark.max_window", 1) if "max_window" in raw else d.max_window
    for k, p in enumerate(phrases):
        if len(_wkey(p)) <= distance:
            raise c.fail(f"watermark.phrases[{k}]", f"{p!r} is not longer than max_edit_distance {distance}, so "
                                                    "every short word would match it")
    return WatermarkRules(phrases, distance, window)


def _filter(c: _Checker, raw: Any, key: str) -> BoxFilter:
    raw = c.mapping(raw, key, ("labels", "scripts", "share_above"))
    if ("labels" in raw) == ("scripts" in raw):
        raise c.fail(key, "must have either 'labels' or 'scripts' (with 'share_above')")
    if "labels" in raw:
        if "share_above" in raw:
            raise c.fail(key, "'share_above' goes with 'scripts', not 'labels'")
        labels = c.texts(raw["labels"], f"{key}.labels")
        if not labels or any(not x.strip() for x in labels):
            raise c.fail(f"{key}.labels", "must be a non-empty list of non-blank labels")
        return BoxFilter(labels=labels)
    scripts = c.texts(raw["scripts"], f"{key}.scripts")
    bad = [s for s in scripts if not _SCRIPT.fullmatch(s)]
    if not scripts or bad:
        raise c.fail(f"{key}.scripts", "must be a non-empty list of Unicode script words in capitals "
                                       f"(LATIN, CYRILLIC, GREEK, …), got {bad[0] if bad else 'none'!r}")
    if "share_above" not in raw:
        raise c.fail(key, "needs 'share_above' (the share of letters in those scripts, in [0, 1))")
    share = raw["share_above"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not math.isfinite(share) \
            or not 0 <= share < 1:
        raise c.fail(f"{key}.share_above", f"must be a number in [0, 1), got {describe(share)}")
    return BoxFilter(scripts=scripts, share_above=float(share))


def _variants(c: _Checker, raw: Any, filters: Mapping[str, BoxFilter]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    raw = c.mapping(raw, "variants")
    if not raw:
        raise c.fail("variants", "must name at least one variant")
    out, seen = [], {}
    for name, fs in raw.items():
        key = f"variants.{name}"
        if not _NAME.fullmatch(name):
            raise c.fail(key, "a variant name may hold only letters, digits, '_', '.' and '-' (it names a file)")
        names = c.texts(fs, key)
        unknown = [f for f in names if f not in filters]
        if unknown:
            raise c.fail(key, f"unknown filter {unknown[0]!r} (filters: {', '.join(filters) or 'none'})")
        if len(set(names)) != len(names):
            raise c.fail(key, "names a filter twice")
        canonical = tuple(f for f in filters if f in names)
        if canonical in seen:
            raise c.fail(key, f"has the same filters as variant {seen[canonical]!r}")
        seen[canonical] = name
        out.append((name, names))
    return tuple(out)


def _text(c: _Checker, raw: Any) -> TextRules:
    d = DEFAULT_CONFIG.text
    raw = c.mapping(raw, "text", ("replacements", "lowercase_replacements", "free_at_joins"))
    free = c.text(raw["free_at_joins"], "text.free_at_joins", empty=True) if "free_at_joins" in raw else d.free_at_joins
    if any(ch.isspace() for ch in free):
        raise c.fail("text.free_at_joins", "must not hold whitespace")
    return TextRules(
        replacements=c.pairs(raw["replacements"], "text.replacements") if "replacements" in raw else d.replacements,
        lowercase_replacements=(c.pairs(raw["lowercase_replacements"], "text.lowercase_replacements")
                                if "lowercase_replacements" in raw else d.lowercase_replacements),
        free_at_joins=free,
    )


def config_from_dict(data: Mapping[str, Any], *, source: str = "config") -> PageKitConfig:
    """A configuration from the file format's mapping (``source`` names it in errors).

    Top-level keys: ``watermark``, ``filters``, ``variants``, ``text``; each is optional and
    defaults to :data:`DEFAULT_CONFIG`'s. Inside ``watermark`` and ``text`` each key is optional
    too; ``filters`` and ``variants``, when given, replace the default ones whole. An unknown key,
    a value of the wrong type or range, a variant naming an unknown filter, two variants with the
    same filters: ``InvalidValueError`` naming ``<source>: <key>:``.
    """
    c = _Checker(source)
    data = c.mapping(data, "", ("watermark", "filters", "variants", "text"))
    d = DEFAULT_CONFIG
    watermark = _watermark(c, data["watermark"]) if "watermark" in data else d.watermark
    if "filters" in data:
        raw = c.mapping(data["filters"], "filters")
        for name in raw:
            if not _FILTER_NAME.fullmatch(name):
                raise c.fail(f"filters.{name}", "a filter name must not be empty nor hold a comma or whitespace")
        filters = tuple((name, _filter(c, f, f"filters.{name}")) for name, f in raw.items())
    else:
        filters = d.filters
    variants = _variants(c, data["variants"] if "variants" in data else d.to_dict()["variants"], dict(filters))
    text = _text(c, data["text"]) if "text" in data else d.text
    return PageKitConfig(watermark, filters, variants, text, source)


def load_config(path: str | os.PathLike[str]) -> PageKitConfig:
    """Read a configuration file: JSON when its name ends in ``.json``, YAML otherwise (YAML 1.2
    core types; duplicate keys, invalid UTF-8 and malformed syntax refused). See
    :func:`config_from_dict` for the keys. Every error is an ``InvalidValueError`` naming the file
    (and the key)."""
    from scorekit.cases.discovery import (_VALUES_PER_BYTE, _VALUES_SLACK, _check_nesting, _decode, _parse_json,
                                          _parse_yaml, _Refused)

    where = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidValueError(f"cannot read the configuration file ({exc.strerror or exc})", field=f"{where}:") from None
    try:
        text = _decode(data)
        payload = _parse_json(text) if where.lower().endswith(".json") else _parse_yaml(text)
        _check_nesting(payload, _VALUES_PER_BYTE * len(data) + _VALUES_SLACK)
    except _Refused as exc:
        raise InvalidValueError(str(exc), field=f"{where}:") from None
    if payload is None:
        raise InvalidValueError("the file is empty; give at least one of watermark, filters, variants, text",
                                field=f"{where}:")
    return config_from_dict(payload, source=where)
