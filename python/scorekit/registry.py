"""Named strategies, plugin discovery and optional-dependency guards.

This module owns three things and nothing else:

* **The registry.** Every swappable behaviour (metrics, normalizers, signals, calibrators,
  policies, OCR backends …) is stored under a *namespace* and a *name*; :func:`register` adds one
  (also as a decorator), :func:`get` / :func:`names` / :func:`resolve` look them up. Before the
  first lookup in a namespace, installed plugins are loaded once from the entry-point groups
  ``scorekit.<namespace>`` and, for plugins written for the reference kit, ``ek.<namespace>``
  (``scorekit.*`` is loaded second, so it wins a name clash). A failing plugin is skipped.
* **The extras guard.** :func:`requires_extra` wraps a callable so that a missing optional
  dependency raises :class:`MissingExtraError` with an install hint, at call time.
* **The requirement report.** :func:`check_requirements` says, without raising, whether an OCR
  engine or an extra is usable and what to install otherwise.

Install hints name both packages. scorekit is installed as ``scorekit[<extra>]``, but the
documented example (kept unchanged) checks for the reference kit's spelling ``ek[<extra>]``, so
every hint reads ``pip install scorekit[<extra>]  (the reference kit's ek[<extra>])``.

>>> @register("metrics", "shout")
... def shout(pred, gold, *, grammar=None):
...     return pred == gold
>>> get("metrics", "shout")("a", "a")
True
>>> "shout" in names("metrics")
True
>>> @requires_extra("ocr", packages=["definitely_not_installed_pkg"])
... def run():
...     return "ran"
>>> try:
...     run()
... except MissingExtraError as e:
...     print("ek[ocr]" in str(e))
True
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable
from typing import Any, Optional, TypeVar, overload

from scorekit.errors import ScorekitError

__all__ = [
    "register",
    "get",
    "names",
    "resolve",
    "MissingExtraError",
    "requires_extra",
    "check_requirements",
    "install_hint",
    "ENTRY_POINT_GROUPS",
    "EXTRA_PACKAGES",
]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

ENTRY_POINT_GROUPS: tuple[str, ...] = ("ek.{namespace}", "scorekit.{namespace}")
"""Entry-point group templates searched for plugins, in load order (later wins a clash)."""

EXTRA_PACKAGES: dict[str, list[str]] = {
    "ocr": ["ocracy"],
    "metrics": ["networkx", "anls_star", "seqeval", "nervaluate", "apted"],
    "calibration": ["netcal", "sklearn"],
    "validation": ["pydantic", "jsonschema"],
    "constrained": ["outlines"],
    "agreement": ["uqlm"],
    "hitl": ["label_studio_sdk"],
    "monitoring": ["nannyml"],
    "agents": ["inspect_ai", "ragas", "deepeval"],
    "hf": ["datasets", "pyarrow"],
}
"""Import names probed by :func:`check_requirements` for each known extra."""

_registry: dict[str, dict[str, Any]] = {}
_discovered: set[str] = set()


def _require_str(value: Any, argument: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{argument} must be a str, got {type(value).__name__}: {value!r}")


@overload
def register(namespace: str, name: str, obj: None = None) -> Callable[[T], T]: ...


@overload
def register(namespace: str, name: str, obj: T) -> T: ...


def register(namespace: str, name: str, obj: Any = None) -> Any:
    """Store ``obj`` under ``namespace``/``name`` (replacing any previous entry) and return it.

    Without ``obj``, return a decorator that registers its target and returns it unchanged.
    """
    _require_str(namespace, "namespace")
    _require_str(name, "name")
    if obj is None:

        def decorator(target: Any) -> Any:
            _registry.setdefault(namespace, {})[name] = target
            return target

        return decorator
    _registry.setdefault(namespace, {})[name] = obj
    return obj


#: Built-in modules that register their strategies when imported, by namespace. They are
#: imported on the first lookup, so that ``import scorekit.registry`` stays cheap.
BUILTIN_MODULES: dict[str, tuple[str, ...]] = {
    "normalizers": ("scorekit.canonicalize",),
    "metrics": ("scorekit.canonicalize", "scorekit.metrics.builtins", "scorekit.agents"),
    "checkers": ("scorekit.agents",),
    "signals": ("scorekit.qe", "scorekit.agents"),
    "aggregators": ("scorekit.qe",),
    "checks": ("scorekit.qe",),
    "policies": ("scorekit.qe",),
    "calibrators": ("scorekit.qe",),
    "combiners": ("scorekit.qe",),
}


class UnknownStrategyError(ScorekitError, KeyError, ValueError):
    """No strategy is registered under that name. A ``KeyError`` as the reference kit raises, and
    a ``ValueError`` (an unknown name is a bad argument value) for callers that catch that."""

    def __str__(self) -> str:  # the plain message, not KeyError's quoted repr
        return str(self.args[0]) if self.args else ""


def entry_points(*, group: str) -> Iterable[Any]:
    """The installed entry points of ``group``; ``importlib.metadata`` is slow to import, so it is
    loaded here, on the first lookup, rather than with this module."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


def _discover(namespace: str) -> None:
    """Load the built-ins, then the entry-point plugins, of ``namespace`` once per process.

    Plugin failures never raise (a broken plugin must not break scorekit).
    """
    if namespace in _discovered:
        return
    _discovered.add(namespace)  # first, so a plugin that looks names up cannot recurse here
    for module in BUILTIN_MODULES.get(namespace, ()):
        importlib.import_module(module)
    for template in ENTRY_POINT_GROUPS:
        try:
            found = entry_points(group=template.format(namespace=namespace))
        except Exception:  # a broken installation must not break scorekit
            continue
        for entry_point in found:
            try:
                register(namespace, entry_point.name, entry_point.load())
            except Exception:  # nor may a broken plugin
                continue


def get(namespace: str, name: str) -> Any:
    """Return the strategy registered as ``namespace``/``name``.

    Raises ``KeyError`` listing the available names when ``name`` is unknown.
    """
    _require_str(namespace, "namespace")
    _require_str(name, "name")
    _discover(namespace)
    entries = _registry.get(namespace, {})
    try:
        return entries[name]
    except KeyError:
        raise UnknownStrategyError(
            f"No {namespace!r} strategy named {name!r}. Available: {sorted(entries)}"
        ) from None


def names(namespace: str) -> list[str]:
    """Registered names of ``namespace`` in registration order (``[]`` for an unknown namespace)."""
    _require_str(namespace, "namespace")
    _discover(namespace)
    return list(_registry.get(namespace, {}))


def resolve(namespace: str, ref: Any, *, default: Any = None) -> Any:
    """Turn a strategy reference into the strategy.

    ``None`` falls back to ``default``; a ``str`` is looked up with :func:`get`; anything else is
    returned unchanged (no callability check).
    """
    if ref is None:
        ref = default
    if isinstance(ref, str):
        return get(namespace, ref)
    return ref


class MissingExtraError(ScorekitError, ImportError):
    """An optional feature was used without the extra that provides its dependencies."""


#: Extras scorekit has and the reference kit does not: their hints name scorekit's alone.
SCOREKIT_ONLY_EXTRAS = frozenset({"numba", "hf", "graphemes", "flowcharts", "pdf", "cases", "arrow", "dask"})


def install_hint(extra: str) -> str:
    """The pip command that installs ``extra``, in scorekit's and (for an extra the reference kit
    may have too) the reference kit's spelling.

    >>> install_hint("arrow")
    'pip install scorekit[arrow]'
    """
    if extra in SCOREKIT_ONLY_EXTRAS:
        return f"pip install scorekit[{extra}]"
    return f"pip install scorekit[{extra}]  (the reference kit's ek[{extra}])"


def _importable(package: str) -> bool:
    try:
        importlib.import_module(package)
    except Exception:  # any failure while importing counts as missing
        return False
    return True


def requires_extra(extra: str, *, packages: Optional[Iterable[str]] = None) -> Callable[[F], F]:
    """Decorator: check on every call that the extra's packages import, else raise.

    ``packages`` are the import names to probe (default ``[extra]``). A missing one raises
    :class:`MissingExtraError` whose message carries :func:`install_hint`.
    """
    _require_str(extra, "extra")
    probes = tuple(packages or ()) or (extra,)
    for package in probes:
        _require_str(package, "packages item")

    def decorator(fn: F) -> F:
        if not callable(fn):
            raise TypeError(f"requires_extra decorates callables, got {type(fn).__name__}")

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            missing = [package for package in probes if not _importable(package)]
            if missing:
                raise MissingExtraError(
                    f"{fn.__qualname__} needs optional dependencies {missing} "
                    f"-- install them with:  {install_hint(extra)}"
                )
            return fn(*args, **kwargs)

        return guarded  # type: ignore[return-value]

    return decorator


def check_requirements(*, engine: Optional[str] = None, extra: Optional[str] = None) -> dict[str, Any]:
    """Report whether an OCR ``engine`` or a feature ``extra`` is usable, without raising.

    Always returns at least ``{"ok": bool, "hint": str}``:

    * ``engine``: defers to ``ocracy.check``/``ocracy.doctor`` when ocracy is installed
      (``"via": "ocracy"``), else reports that the OCR extra is missing (``"via": "none"``);
    * ``extra``: imports the extra's packages (:data:`EXTRA_PACKAGES`, or the extra's own name
      when unknown) and lists the ``missing`` ones;
    * neither: ``{"ok": True, "hint": ""}``.
    """
    if engine is not None:
        return _check_engine(engine)
    if extra is not None:
        missing = [p for p in EXTRA_PACKAGES.get(extra, [extra]) if not _importable(p)]
        hint = f"{install_hint(extra)}  (missing: {', '.join(missing)})" if missing else ""
        return {"ok": not missing, "extra": extra, "missing": missing, "hint": hint}
    return {"ok": True, "hint": ""}


def _check_engine(engine: str) -> dict[str, Any]:
    try:
        ocracy = importlib.import_module("ocracy")
    except Exception:
        return {
            "ok": False,
            "engine": engine,
            "hint": f"Install the OCR fleet:  {install_hint('ocr')}",
            "via": "none",
        }
    try:
        ok = bool(ocracy.check(engine))
        hint = "" if ok else str(ocracy.doctor()["missing"].get(engine, ""))
    except Exception as exc:  # ocracy's own failure is reported, never raised
        ok, hint = False, f"ocracy could not check {engine!r}: {exc}"
    return {"ok": ok, "engine": engine, "hint": hint, "via": "ocracy"}
