"""scorekit.registry: register/get/names/resolve, plugins, extras guard."""

from __future__ import annotations

import doctest
import importlib.util
import itertools
import sys
import types

import pytest

import scorekit.registry as registry
from scorekit.registry import (
    MissingExtraError,
    check_requirements,
    get,
    install_hint,
    names,
    register,
    requires_extra,
    resolve,
)

_counter = itertools.count()


@pytest.fixture
def namespace() -> str:
    """A namespace no other test uses, so the global registry needs no cleanup."""
    return f"test_ns_{next(_counter)}"


def test_module_doctest() -> None:
    result = doctest.testmod(registry)
    assert result.attempted >= 5 and result.failed == 0


def test_documented_examples() -> None:
    @register("metrics", "shout")
    def shout(pred, gold, *, grammar=None):  # type: ignore[no-untyped-def]
        return pred == gold

    assert get("metrics", "shout")("a", "a") is True
    assert "shout" in names("metrics")

    @requires_extra("ocr", packages=["definitely_not_installed_pkg"])
    def run() -> str:
        return "ran"

    with pytest.raises(MissingExtraError) as info:
        run()
    assert "ek[ocr]" in str(info.value)


def test_register_returns_object_and_decorates(namespace: str) -> None:
    def echo(pred, gold, *, grammar=None):  # type: ignore[no-untyped-def]
        return pred

    assert register(namespace, "echo", echo) is echo
    assert "echo" in names(namespace)
    assert get(namespace, "echo")("x", "y") == "x"

    @register(namespace, "other")
    def other() -> None: ...

    assert get(namespace, "other") is other
    assert names(namespace) == ["echo", "other"]


def test_register_overwrites_silently(namespace: str) -> None:
    register(namespace, "a", 1)
    register(namespace, "a", 2)
    assert get(namespace, "a") == 2
    assert names(namespace) == ["a"]


def test_unknown_name_lists_available(namespace: str) -> None:
    register(namespace, "present", object())
    with pytest.raises(KeyError) as info:
        get(namespace, "absent")
    message = info.value.args[0]
    assert message == f"No {namespace!r} strategy named 'absent'. Available: ['present']"


def test_unknown_namespace_has_no_names(namespace: str) -> None:
    assert names(namespace) == []
    with pytest.raises(KeyError, match="Available: \\[\\]"):
        get(namespace, "x")


def test_arguments_must_be_strings(namespace: str) -> None:
    with pytest.raises(TypeError, match="namespace"):
        register(3, "x", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name"):
        get(namespace, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="extra"):
        requires_extra(None)  # type: ignore[arg-type]


def test_resolve(namespace: str) -> None:
    def up(s: str) -> str:
        return s.upper()

    register(namespace, "up", up)
    assert resolve(namespace, "up") is up
    assert resolve(namespace, up) is up
    assert resolve(namespace, None, default="up") is up
    assert resolve(namespace, None, default=up) is up
    assert resolve(namespace, None) is None
    assert resolve(namespace, 42) == 42  # no callability check
    with pytest.raises(KeyError):
        resolve(namespace, "missing")


class FakeEntryPoint:
    def __init__(self, name: str, target: object = None, error: Exception | None = None) -> None:
        self.name, self.target, self.error = name, target, error

    def load(self) -> object:
        if self.error is not None:
            raise self.error
        return self.target


def test_entry_point_discovery(monkeypatch: pytest.MonkeyPatch, namespace: str) -> None:
    groups: dict[str, list[FakeEntryPoint]] = {
        f"ek.{namespace}": [FakeEntryPoint("legacy", "from-ek"), FakeEntryPoint("both", "ek-version")],
        f"scorekit.{namespace}": [
            FakeEntryPoint("broken", error=RuntimeError("plugin import failed")),
            FakeEntryPoint("both", "scorekit-version"),
            FakeEntryPoint("native", "from-scorekit"),
        ],
    }
    calls: list[str] = []

    def fake_entry_points(*, group: str) -> list[FakeEntryPoint]:
        calls.append(group)
        return groups.get(group, [])

    monkeypatch.setattr(registry, "entry_points", fake_entry_points)
    assert get(namespace, "legacy") == "from-ek"
    assert get(namespace, "native") == "from-scorekit"
    assert get(namespace, "both") == "scorekit-version"  # scorekit.* loads last and wins
    assert "broken" not in names(namespace)
    assert sorted(calls) == [f"ek.{namespace}", f"scorekit.{namespace}"]  # once per namespace


def test_entry_point_scan_failure_is_swallowed(monkeypatch: pytest.MonkeyPatch, namespace: str) -> None:
    def failing_entry_points(*, group: str) -> list[FakeEntryPoint]:
        raise RuntimeError("broken metadata")

    monkeypatch.setattr(registry, "entry_points", failing_entry_points)
    register(namespace, "kept", 1)
    assert names(namespace) == ["kept"]


def test_requires_extra_passes_through_and_wraps() -> None:
    @requires_extra("core", packages=["json"])
    def ok(x: int) -> int:
        """Doubles."""
        return 2 * x

    assert ok(21) == 42
    assert ok.__name__ == "ok" and ok.__doc__ == "Doubles."


def test_requires_extra_message_and_probe_default() -> None:
    @requires_extra("definitely_not_installed_extra_pkg")
    def feature() -> None: ...

    with pytest.raises(MissingExtraError) as info:
        feature()
    message = str(info.value)
    assert isinstance(info.value, ImportError)
    assert message.startswith(
        "test_requires_extra_message_and_probe_default.<locals>.feature needs optional dependencies "
        "['definitely_not_installed_extra_pkg'] -- install them with:  pip install "
        "scorekit[definitely_not_installed_extra_pkg]"
    )
    assert "ek[definitely_not_installed_extra_pkg]" in message


def test_requires_extra_checks_on_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    @requires_extra("demo", packages=["scorekit_demo_late_pkg"])
    def feature() -> str:
        return "ran"

    with pytest.raises(MissingExtraError):
        feature()
    monkeypatch.setitem(sys.modules, "scorekit_demo_late_pkg", types.ModuleType("scorekit_demo_late_pkg"))
    assert feature() == "ran"


def test_requires_extra_counts_a_failing_import_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scorekit_demo_broken_pkg", None)  # import raises ImportError

    @requires_extra("demo", packages=["scorekit_demo_broken_pkg", "json"])
    def feature() -> None: ...

    with pytest.raises(MissingExtraError, match=r"\['scorekit_demo_broken_pkg'\]"):
        feature()


def test_install_hint_names_both_packages() -> None:
    assert install_hint("ocr") == "pip install scorekit[ocr]  (the reference kit's ek[ocr])"


def test_check_requirements_without_arguments() -> None:
    assert check_requirements() == {"ok": True, "hint": ""}


def test_check_requirements_extra() -> None:
    report = check_requirements(extra="definitely_not_a_real_extra")
    assert report["ok"] is False
    assert report["extra"] == "definitely_not_a_real_extra"
    assert report["missing"] == ["definitely_not_a_real_extra"]
    assert "ek[" in report["hint"]
    assert report["hint"] == (
        "pip install scorekit[definitely_not_a_real_extra]  "
        "(the reference kit's ek[definitely_not_a_real_extra])  (missing: definitely_not_a_real_extra)"
    )
    assert check_requirements(extra="ocr")["ok"] == (importlib.util.find_spec("ocracy") is not None)


def test_check_requirements_known_extra_probes_its_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.EXTRA_PACKAGES, "demo", ["json", "scorekit_missing_a", "scorekit_missing_b"])
    report = check_requirements(extra="demo")
    assert report["missing"] == ["scorekit_missing_a", "scorekit_missing_b"]
    assert report["hint"].endswith("(missing: scorekit_missing_a, scorekit_missing_b)")
    monkeypatch.setitem(registry.EXTRA_PACKAGES, "demo", ["json"])
    assert check_requirements(extra="demo") == {"ok": True, "extra": "demo", "missing": [], "hint": ""}


def test_check_requirements_engine_without_ocracy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ocracy", None)
    assert check_requirements(engine="tesseract") == {
        "ok": False,
        "engine": "tesseract",
        "hint": "Install the OCR fleet:  pip install scorekit[ocr]  (the reference kit's ek[ocr])",
        "via": "none",
    }


def _fake_ocracy(check: object, doctor: object) -> types.ModuleType:
    module = types.ModuleType("ocracy")
    module.check = check  # type: ignore[attr-defined]
    module.doctor = doctor  # type: ignore[attr-defined]
    return module


def test_check_requirements_engine_defers_to_ocracy(monkeypatch: pytest.MonkeyPatch) -> None:
    doctor = lambda: {"missing": {"tesseract": "apt install tesseract-ocr"}}  # noqa: E731
    monkeypatch.setitem(sys.modules, "ocracy", _fake_ocracy(lambda engine: engine == "rapidocr", doctor))
    assert check_requirements(engine="rapidocr") == {"ok": True, "engine": "rapidocr", "hint": "", "via": "ocracy"}
    assert check_requirements(engine="tesseract") == {
        "ok": False,
        "engine": "tesseract",
        "hint": "apt install tesseract-ocr",
        "via": "ocracy",
    }
    assert check_requirements(engine="other")["hint"] == ""


def test_check_requirements_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def check(engine: str) -> bool:
        raise RuntimeError("doctor crashed")

    monkeypatch.setitem(sys.modules, "ocracy", _fake_ocracy(check, dict))
    report = check_requirements(engine="tesseract")
    assert report["ok"] is False and report["via"] == "ocracy"
    assert "doctor crashed" in report["hint"]


def test_scorekit_only_extras_are_those_of_pyproject_the_reference_kit_lacks():
    import tomllib
    from importlib.metadata import metadata
    from pathlib import Path

    from scorekit.registry import SCOREKIT_ONLY_EXTRAS

    ours = set(tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
               ["project"]["optional-dependencies"]) - {"test", "bench"}
    theirs = set(metadata("ek").get_all("Provides-Extra"))
    assert SCOREKIT_ONLY_EXTRAS == ours - theirs
    assert install_hint("dask") == "pip install scorekit[dask]"
