"""scorekit.stores: JSON stores — round trips, nested keys, atomic writes, hostile keys, corrupt
files, and the root resolution order."""

from __future__ import annotations

import doctest
import json
import os

import pytest

from scorekit import stores
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.stores import CorruptStoreFileError, StoreKeyError, data_dir, json_store


def test_doctests():
    assert doctest.testmod(stores).failed == 0


def test_round_trip_and_mapping_protocol(tmp_path):
    s = json_store("gold", rootdir=tmp_path)
    assert len(s) == 0 and list(s) == [] and "doc-001" not in s
    s["doc-001"] = {"text": "héllo", "n": [1, 2.5, None, True]}
    assert (tmp_path / "gold" / "doc-001.json").is_file()
    assert s["doc-001"] == {"text": "héllo", "n": [1, 2.5, None, True]}
    s["run-1/item-a"] = 1
    assert (tmp_path / "gold" / "run-1" / "item-a.json").is_file()
    assert sorted(s) == ["doc-001", "run-1/item-a"] and len(s) == 2
    s["doc-001"] = "replaced"
    assert s["doc-001"] == "replaced"
    del s["doc-001"]
    assert "doc-001" not in s and list(s) == ["run-1/item-a"]
    with pytest.raises(KeyError):
        s["doc-001"]
    with pytest.raises(KeyError):
        del s["doc-001"]


def test_no_temporary_files_left_and_failed_write_keeps_old_value(tmp_path):
    s = json_store("baselines", rootdir=tmp_path)
    s["v1"] = {"a": 1}
    with pytest.raises(InvalidValueError, match="not strict JSON"):
        s["v1"] = {"a": float("nan")}
    with pytest.raises(InvalidTypeError, match="not JSON-serialisable"):
        s["v1"] = {"a": object()}
    assert s["v1"] == {"a": 1}
    assert sorted(os.listdir(tmp_path / "baselines")) == ["v1.json"]


@pytest.mark.parametrize("key", ["../x", "a/../../x", "/etc/passwd", "a\\b", "a\x00b", "", "a//b", "./x", "a/"])
def test_hostile_keys_are_refused(tmp_path, key):
    s = json_store("runs", rootdir=tmp_path)
    with pytest.raises(StoreKeyError):
        s[key] = 1
    with pytest.raises(StoreKeyError):
        s[key]
    assert key not in s
    assert not any(tmp_path.parent.glob("x.json"))


def test_non_string_key(tmp_path):
    with pytest.raises(InvalidTypeError, match="store keys are strings"):
        json_store("runs", rootdir=tmp_path)[3] = 1
    assert 3 not in json_store("runs", rootdir=tmp_path)


def test_corrupt_file_is_reported_with_its_path_and_kept(tmp_path):
    s = json_store("calibrators", rootdir=tmp_path)
    (tmp_path / "calibrators").mkdir()
    bad = tmp_path / "calibrators" / "cal.json"
    bad.write_text('{"kind": "platt", ')
    with pytest.raises(CorruptStoreFileError, match=str(bad)):
        s["cal"]
    bad.write_bytes(b"\xff\xfe{}")
    with pytest.raises(CorruptStoreFileError, match="not UTF-8"):
        s["cal"]
    assert bad.read_bytes() == b"\xff\xfe{}"


def test_root_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("SCOREKIT_DATA_HOME", raising=False)
    monkeypatch.setenv("EK_DATA_HOME", str(tmp_path / "ek"))
    assert data_dir("runs") == tmp_path / "ek" / "runs"
    monkeypatch.setenv("SCOREKIT_DATA_HOME", str(tmp_path / "sk"))
    assert data_dir("runs") == tmp_path / "sk" / "runs"
    assert data_dir("runs", rootdir=tmp_path / "explicit") == tmp_path / "explicit" / "runs"
    monkeypatch.delenv("SCOREKIT_DATA_HOME")
    monkeypatch.delenv("EK_DATA_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir("gold") == tmp_path / "xdg" / "scorekit" / "gold"
    with pytest.raises(StoreKeyError):
        data_dir("../gold")
    with pytest.raises(InvalidTypeError):
        data_dir(None)


def test_values_are_readable_json(tmp_path):
    s = json_store("results", rootdir=tmp_path)
    s["r"] = {"x": "✓"}
    assert json.loads((tmp_path / "results" / "r.json").read_text(encoding="utf-8")) == {"x": "✓"}
