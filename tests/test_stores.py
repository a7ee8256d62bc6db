"""scorekit.stores: JSON stores — round trips, nested keys, atomic, streamed and exclusive writes, hostile
keys, corrupt files, the root resolution order — the mall, persistent_cache and cache_this, against
ek's stores and dol's cache_this doctests (the spec's Appendix A)."""

from __future__ import annotations

import doctest
import json
import os
import random
import time

import dol
import ek.stores as ek_stores
import pytest
from ek_doctests import run_ek_doctests
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit import stores
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.stores import (KINDS, CachedMethod, CachedProperty, CorruptStoreFileError, Mall, StoreKeyError,
                             cache_this, data_dir, json_key, json_store, mall, persistent_cache)


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


# --------------------------------------------------------------------------------------------
# Streaming and exclusive writes
# --------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=60, deadline=None)
@given(head=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "items"), json_values, max_size=3),
       items=st.dictionaries(st.one_of(st.text(max_size=6), st.integers(-5, 5)), json_values, max_size=6),
       position=st.integers(0, 3))
def test_streamed_write_reads_back_as_json_dumps_would(tmp_path_factory, head, items, position):
    s = json_store("results", rootdir=tmp_path_factory.mktemp("stream"))
    members = list(head.items())
    members.insert(min(position, len(members)), ("items", items))
    doc = dict(members)
    if any(str(k) in items for k in items if not isinstance(k, str)):
        with pytest.raises(InvalidValueError, match="the same JSON key"):
            s.write("doc", doc, stream="items")
        assert "doc" not in s
        return
    s.write("doc", doc, stream="items")
    expected = json.loads(json.dumps(doc))
    assert s["doc"] == expected
    assert json.loads(s.path("doc").read_text(encoding="utf-8")) == expected
    assert list(s["doc"]) == list(expected) and list(s["doc"]["items"]) == list(expected["items"])


def test_streamed_write_errors_leave_the_old_file(tmp_path):
    s = json_store("results", rootdir=tmp_path)
    s["run"] = {"old": True}
    with pytest.raises(InvalidValueError, match=r"'run'\['items'\]\['b'\] is not strict JSON"):
        s.write("run", {"n": 2, "items": {"a": 1.0, "b": float("nan")}}, stream="items")
    with pytest.raises(InvalidTypeError, match="must be a mapping whose 'items' member is a mapping"):
        s.write("run", {"items": [1, 2]}, stream="items")
    with pytest.raises(InvalidTypeError, match="must be a mapping whose 'items' member"):
        s.write("run", [1], stream="items")
    assert s["run"] == {"old": True} and sorted(os.listdir(tmp_path / "results")) == ["run.json"]


def test_empty_streamed_member(tmp_path):
    s = json_store("results", rootdir=tmp_path)
    s.write("e", {"items": {}, "n": 0}, stream="items")
    assert s.path("e").read_text() == '{\n  "items": {},\n  "n": 0\n}\n' and s["e"] == {"items": {}, "n": 0}


def test_write_new_never_replaces(tmp_path, monkeypatch):
    s = json_store("runs", rootdir=tmp_path)
    s["a"] = 1
    s["b"] = 2
    assert s.write_new({"v": 3}, iter(["a", "b", "c/d"])) == "c/d" and s["c/d"] == {"v": 3}
    with pytest.raises(FileExistsError):
        s.write_new(4, ["a", "b"])
    with pytest.raises(InvalidValueError, match="keys must name at least one key"):
        s.write_new(4, [])
    with pytest.raises(StoreKeyError):
        s.write_new(4, ["a", "../x"])
    assert (s["a"], s["b"], len(s)) == (1, 2, 3)
    monkeypatch.setattr(os, "link", lambda *a, **k: (_ for _ in ()).throw(OSError(95, "not supported")))
    assert s.write_new(5, ["a", "e"]) == "e" and (s["a"], s["e"]) == (1, 5)
    assert sorted(p.name for p in (tmp_path / "runs").rglob("*")) == ["a.json", "b.json", "c", "d.json", "e.json"]


def test_json_key():
    assert [json_key(k) for k in ("x", 0, -3, 1.5, 1e20, True, False, None)] == \
        [json.dumps({k: 0})[2:-5] for k in ("x", 0, -3, 1.5, 1e20, True, False, None)]
    with pytest.raises(InvalidTypeError, match="cannot be a JSON object key"):
        json_key(("a", 1))
    with pytest.raises(InvalidValueError, match="strict JSON"):
        json_key(float("inf"))


def test_deeply_nested_values_are_refused_cleanly(tmp_path):
    s = json_store("runs", rootdir=tmp_path)
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidValueError, match="nested too deeply"):
        s["deep"] = deep
    assert not (tmp_path / "runs").exists()
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CorruptStoreFileError, match="nested too deeply"):
        s["deep"]


# --------------------------------------------------------------------------------------------
# Confinement, key edges, strict reads, file modes and stale temporary files (issue 30 item 15)
# --------------------------------------------------------------------------------------------


def test_a_symlinked_folder_inside_the_store_is_never_followed(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.json").write_text('{"secret": 1}')
    s = json_store("runs", rootdir=tmp_path)
    s["real"] = 1
    (tmp_path / "runs" / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(StoreKeyError, match="reaches the symbolic link"):
        s["link/x"]
    with pytest.raises(StoreKeyError, match="reaches the symbolic link"):
        s["link/y"] = {"written": "outside"}
    with pytest.raises(StoreKeyError, match="reaches the symbolic link"):
        del s["link/x"]
    with pytest.raises(StoreKeyError):
        s.write_new(2, ["link/z"])
    assert "link/x" not in s and list(s) == ["real"] and len(s) == 1
    assert sorted(os.listdir(outside)) == ["x.json"] and (outside / "x.json").read_text() == '{"secret": 1}'


def test_a_symlinked_file_entry_is_refused(tmp_path):
    outside = tmp_path / "secret.json"
    outside.write_text('{"secret": 1}')
    s = json_store("runs", rootdir=tmp_path)
    s["a/real"] = 1
    (tmp_path / "runs" / "a" / "f.json").symlink_to(outside)
    (tmp_path / "runs" / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    for key in ("a/f", "dangling"):
        with pytest.raises(StoreKeyError, match="reaches the symbolic link"):
            s[key]
        with pytest.raises(StoreKeyError, match="reaches the symbolic link"):
            s[key] = {"replaced": True}
        with pytest.raises(StoreKeyError):
            del s[key]
        assert key not in s
    assert list(s) == ["a/real"]
    assert outside.read_text() == '{"secret": 1}' and not (tmp_path / "nowhere.json").exists()


def test_keys_starting_with_a_dot_are_refused(tmp_path):
    """They were saved and never listed (len(s) == 0): the store's temporary files start with '.'."""
    s = json_store("runs", rootdir=tmp_path)
    for key in (".x", "a/.x", ".a/x", "..x"):
        with pytest.raises(StoreKeyError, match="starting with '.'"):
            s[key] = 1
        assert key not in s
    assert len(s) == 0 and not (tmp_path / "runs").exists()
    (tmp_path / "runs" / ".hidden").mkdir(parents=True)
    (tmp_path / "runs" / ".hidden" / "x.json").write_text("1")
    (tmp_path / "runs" / ".y.json").write_text("1")
    assert list(s) == []


def test_long_keys_are_store_key_errors_not_os_errors(tmp_path):
    s = json_store("runs", rootdir=tmp_path)
    for key in ("k" * 300, "é" * 101, "/".join(["p" * 150] * 7)):
        assert key not in s                           # was a raw OSError (file name too long)
        with pytest.raises(StoreKeyError, match="bytes"):
            s[key]
        with pytest.raises(StoreKeyError, match="bytes"):
            s[key] = 1
    longest = "k" * stores.MAX_KEY_PART_BYTES
    s[longest] = 1
    assert s[longest] == 1 and list(s) == [longest]


def test_a_lone_surrogate_key_is_refused(tmp_path):
    with pytest.raises(StoreKeyError, match="lone surrogate"):
        json_store("runs", rootdir=tmp_path)["a\ud800"] = 1


def test_a_folder_where_a_file_belongs_is_a_store_key_error(tmp_path):
    s = json_store("runs", rootdir=tmp_path)
    with pytest.raises(StoreKeyError, match="would take the place of the key 'q'"):
        s["q.json/b"] = 1
    (tmp_path / "runs" / "q.json").mkdir(parents=True)   # made by hand
    for call in (lambda: s["q"], lambda: s.__setitem__("q", 1), lambda: s.__delitem__("q")):
        with pytest.raises(StoreKeyError, match="is not a regular file"):   # was IsADirectoryError
            call()
    assert "q" not in s
    (tmp_path / "runs" / "plain").write_text("not a folder")
    with pytest.raises(StoreKeyError, match="needs .* to be a folder, and it is a file"):
        s["plain/b"] = 1
    with pytest.raises(StoreKeyError, match="to be a folder"):
        s["plain/b"]
    assert "plain/b" not in s and list(s) == []


@pytest.mark.parametrize("text, why", [("NaN", "NaN is not valid JSON"), ('{"a": [Infinity]}', "Infinity"),
                                       ('{"a": -Infinity}', "-Infinity"), ("1e999", "number 1e999 is out of range"),
                                       ("-1e400", "out of range"), ("1" * 5000, "integer of 5,000 digits is out of range")])
def test_non_strict_numbers_are_refused_on_read(tmp_path, text, why):
    """Python's json.loads reads NaN, Infinity and 1e999 (as inf); the store writes none of them and
    now reads none either."""
    s = json_store("baselines", rootdir=tmp_path)
    s["b"] = 0
    s.path("b").write_text(text)
    with pytest.raises(CorruptStoreFileError, match=f"{s.path('b')}: not strict JSON .*{why}"):
        s["b"]
    assert s.path("b").read_text() == text


def test_files_are_owner_only_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        s = json_store("runs", rootdir=tmp_path)
        s["a"] = 1
        s.write("b", {"items": {"x": 1}}, stream="items")
        s.write_new(2, ["c"])
    finally:
        os.umask(old)
    assert [oct(s.path(k).stat().st_mode & 0o777) for k in "abc"] == ["0o600"] * 3


def test_stale_temporary_files_are_removed_by_the_next_write(tmp_path):
    s = json_store("runs", rootdir=tmp_path)
    s["sub/a"] = 1
    folder = tmp_path / "runs" / "sub"
    stale, fresh, other = folder / ".a.json.k1ll3d00.tmp", folder / ".a.json.wr1t1ng0.tmp", folder / ".keep.txt"
    for path in (stale, fresh, other):
        path.write_text("{half")
    old = time.time() - stores.STALE_TEMP_SECONDS - 5
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    fresh_store = json_store("runs", rootdir=tmp_path)      # a new session: the next save sweeps
    fresh_store["sub/b"] = 2
    assert sorted(os.listdir(folder)) == [".a.json.wr1t1ng0.tmp", ".keep.txt", "a.json", "b.json"]
    assert sorted(fresh_store) == ["sub/a", "sub/b"]


def test_write_new_leaves_no_staged_file(tmp_path):
    s = json_store("runs", rootdir=tmp_path)
    s["a"] = 1
    assert s.write_new({"v": 2}, ["a", "b"]) == "b"
    with pytest.raises(FileExistsError):
        s.write_new(3, ["a", "b"])
    assert sorted(os.listdir(tmp_path / "runs")) == ["a.json", "b.json"]


# --------------------------------------------------------------------------------------------
# The mall
# --------------------------------------------------------------------------------------------


def test_mall_spec_vectors(tmp_path):
    m = mall(rootdir=tmp_path)
    assert set(m) == set(KINDS) and list(m) == list(KINDS) and len(m) == 6
    m["gold"]["k"] = {"v": 1}
    assert m["gold", "k"] == {"v": 1} and (tmp_path / "gold" / "k.json").is_file()
    assert m["gold"] is m["gold"] and "gold" in m and "nope" not in m
    with pytest.raises(KeyError) as ours:
        m["nope"]
    with pytest.raises(KeyError) as theirs:
        ek_stores.mall(rootdir=str(tmp_path))["nope"]
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(KeyError):
        m["gold", "missing"]
    with pytest.raises(KeyError, match="mall\\[kind, key\\]"):
        m["gold", "a", "b"]
    with pytest.raises(KeyError):
        m[["gold"]]
    assert ek_stores.mall(rootdir=str(tmp_path))["gold", "k"] == {"v": 1}    # the same files


def test_mall_kinds_and_roots(tmp_path, monkeypatch):
    m = Mall(kinds=["a", "b/c"], rootdir=tmp_path)
    m["b/c"]["x"] = 1
    assert (tmp_path / "b" / "c" / "x.json").is_file() and list(m) == ["a", "b/c"]
    with pytest.raises(KeyError, match="Unknown store kind 'gold'"):
        m["gold"]
    for kinds, error in (("gold", InvalidTypeError), (["../x"], StoreKeyError), ([None], InvalidTypeError),
                         ([""], InvalidTypeError)):
        with pytest.raises(error):
            Mall(kinds=kinds)
    monkeypatch.delenv("SCOREKIT_DATA_HOME", raising=False)
    monkeypatch.setenv("EK_DATA_HOME", str(tmp_path / "env"))
    m = mall()
    m["runs"]["r"] = 1
    assert (tmp_path / "env" / "runs" / "r.json").is_file()


# --------------------------------------------------------------------------------------------
# persistent_cache
# --------------------------------------------------------------------------------------------


def test_persistent_cache_spec_vectors(tmp_path):
    calls = []

    @persistent_cache(kind="runs", key=lambda *a, **k: "the-key", rootdir=tmp_path)
    def compute(x=0):
        calls.append(x)
        return {"answer": 42}

    assert compute(1) == compute(2) == {"answer": 42} and calls == [1]
    assert compute.store["the-key"] == {"answer": 42} and compute.__name__ == "compute"
    assert (tmp_path / "runs" / "the-key.json").is_file()

    @persistent_cache(rootdir=tmp_path)
    def bare():
        calls.append("bare")
        return [1, 2]

    assert bare() == bare() == [1, 2] and calls == [1, "bare"]
    assert list(bare.store) == ["test_persistent_cache_spec_vectors.<locals>.bare", "the-key"]
    del bare.store["test_persistent_cache_spec_vectors.<locals>.bare"]            # invalidate
    assert bare() == [1, 2] and calls == [1, "bare", "bare"]


def test_persistent_cache_returns_the_stored_form_and_keeps_none(tmp_path):
    calls = []

    @persistent_cache(key="tuple", rootdir=tmp_path)
    def pair():
        calls.append(1)
        return (1, 2)

    assert pair() == [1, 2] and pair() == [1, 2] and len(calls) == 1      # ek returns (1, 2) the first time

    @persistent_cache(key="none", rootdir=tmp_path)
    def nothing():
        calls.append(2)

    assert nothing() is None and nothing() is None and calls == [1, 2]


def test_persistent_cache_bad_input_and_corrupt_files(tmp_path):
    @persistent_cache(key="nan", rootdir=tmp_path)
    def nan():
        return float("nan")

    with pytest.raises(InvalidValueError, match="not strict JSON"):
        nan()
    assert "nan" not in nan.store

    @persistent_cache(key=lambda x: x, rootdir=tmp_path)
    def echo(x):
        return x

    with pytest.raises(StoreKeyError):
        echo("../escape")
    with pytest.raises(InvalidTypeError, match="store keys are strings"):
        echo(3)
    echo("fine")
    bad = tmp_path / "runs" / "fine.json"
    bad.write_text("{oops")
    with pytest.raises(CorruptStoreFileError, match=str(bad)):
        echo("fine")
    assert bad.read_text() == "{oops"
    with pytest.raises(InvalidTypeError):
        persistent_cache(3)
    with pytest.raises(StoreKeyError):
        persistent_cache(kind="../x")(echo)


def test_persistent_cache_matches_ek(tmp_path):
    rnd = random.Random(5)
    ours_calls, ek_calls = [], []

    def make(calls):
        def f(a, b=0):
            calls.append((a, b))
            return {"sum": a + b, "args": [a, b]}
        return f

    ours = persistent_cache(make(ours_calls), key=lambda a, b=0: f"k/{a}-{b}", rootdir=tmp_path / "sk")
    theirs = ek_stores.persistent_cache(make(ek_calls), key=lambda a, b=0: f"k/{a}-{b}", rootdir=str(tmp_path / "ek"))
    for _ in range(300):
        a, b = rnd.randrange(8), rnd.randrange(3)
        assert ours(a, b=b) == theirs(a, b=b)
    assert ours_calls == ek_calls and sorted(ours.store) == sorted(theirs.store)


# --------------------------------------------------------------------------------------------
# json_store against ek's
# --------------------------------------------------------------------------------------------


def test_json_store_matches_ek_on_random_operations(tmp_path):
    rnd = random.Random(11)
    ours, theirs = json_store("gold", rootdir=tmp_path / "sk"), ek_stores.json_store("gold", rootdir=str(tmp_path / "ek"))
    keys = ["a", "b", "doc-001", "run-1/item-a", "run-1/item-b", "x/y/z", "é", "with space"]
    for _ in range(500):
        key, op = rnd.choice(keys), rnd.randrange(5)
        if op <= 1:
            value = rnd.choice([None, 1, 2.5, "s", [1, "a"], {"k": {"n": [None, True]}}, {"reference": "ü"}])
            ours[key] = value
            theirs[key] = value
        elif op == 2:
            assert (key in ours) == (key in theirs)
        elif op == 3:
            try:
                expected = theirs[key]
            except KeyError:
                with pytest.raises(KeyError):
                    ours[key]
            else:
                assert ours[key] == expected
        elif key in theirs:
            del ours[key]
            del theirs[key]
        assert len(ours) == len(theirs)
    assert sorted(ours) == sorted(theirs) and dict(ours) == dict(theirs)
    # each kit reads the other's files
    assert dict(ek_stores.json_store("gold", rootdir=str(tmp_path / "sk"))) == dict(ours)
    assert dict(json_store("gold", rootdir=tmp_path / "ek")) == dict(theirs)


def test_ek_stores_docstring_examples_run_against_scorekit():
    results = run_ek_doctests(ek_stores, stores)
    assert sum(r.attempted for r in results.values()) >= 9
    assert sum(r.failed for r in results.values()) == 0


# --------------------------------------------------------------------------------------------
# cache_this
# --------------------------------------------------------------------------------------------


def test_dol_cache_this_doctests_run_against_scorekit():
    """The doctests of ``dol.cache_this`` (ek's ``cache_this``; the spec's Appendix A), with its
    ``from dol import cache_this`` pointing at scorekit's; ``ValueCodecs`` stays dol's."""
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = doctest.DocTestFinder().find(dol.cache_this, "cache_this", globs={})
    for test in tests:
        for example in test.examples:
            example.source = example.source.replace("from dol import cache_this",
                                                    "from scorekit.stores import cache_this")
        test.globs = dict(vars(stores))
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 60 and result.failed == 0


def test_cache_this_property_and_method_keys():
    calls = []

    class Thing:
        def __init__(self):
            self.memo = {}

        @cache_this(cache="memo", key=lambda name: name.upper())
        def shout(self):
            calls.append("shout")
            return "HI"

        @cache_this(cache="memo")
        def combine(self, a, *rest, sep="-", **extra):
            calls.append(("combine", a))
            return sep.join([str(a), *map(str, rest), *map(str, extra.values())])

        @cache_this(cache="memo", key=lambda self, x: f"sq/{x}")
        def square(self, x):
            calls.append(("square", x))
            return x * x

        @cache_this(as_property=False)
        def now(self):
            calls.append("now")
            return 1

    t = Thing()
    assert t.shout == t.shout == "HI" and t.memo == {"SHOUT": "HI"}
    assert t.combine(1) == "1" and t.combine(1, sep="-") == "1"
    assert t.combine(1, 2, z=3, y=4) == "1-2-3-4" and t.combine(1, 2, y=4, z=3) == "1-2-3-4"
    assert t.combine("1") == "1"                        # "1" and 1 are different calls
    assert t.square(3) == t.square(x=3) == 9
    assert t.now() == t.now() == 1 and "now()" in vars(t)
    assert list(t.memo) == ["SHOUT", "combine(a=1; sep='-')", "combine(a=1; rest=(2,); sep='-'; extra={'y': 4, 'z': 3})",
                            "combine(a='1'; sep='-')", "sq/3"]
    assert calls == ["shout", ("combine", 1), ("combine", 1), ("combine", "1"), ("square", 3), "now"]
    assert isinstance(Thing.__dict__["shout"], CachedProperty) and Thing.shout is Thing.__dict__["shout"]
    assert isinstance(Thing.combine, CachedMethod) and Thing.combine.__doc__ is None
    assert Thing.combine.__wrapped__.__name__ == "combine"


def test_cache_this_in_a_json_store_across_instances_and_sessions(tmp_path):
    calls = []

    class Report:
        def __init__(self, root):
            self.root = root

        @cache_this(cache=lambda self: json_store("runs", rootdir=self.root), key=lambda name: f"cache/{name}")
        def summary(self):
            calls.append(1)
            return {"n": 3, "mean": 0.5}

    assert Report(tmp_path).summary == {"n": 3, "mean": 0.5}
    assert Report(tmp_path).summary == {"n": 3, "mean": 0.5} and calls == [1]     # a new instance reads the file
    assert json.loads((tmp_path / "runs" / "cache" / "summary.json").read_text()) == {"n": 3, "mean": 0.5}


def test_cache_this_pre_cache_serialize_and_no_cache():
    import pickle

    backend, calls = {}, []

    class Model:
        @cache_this(cache=backend, pre_cache=True, serialize=pickle.dumps, deserialize=pickle.loads)
        def weights(self):
            calls.append(1)
            return [1.5, 2.5]

        @cache_this(cache=False)
        def fresh(self):
            calls.append("fresh")
            return len(calls)

    a, b = Model(), Model()
    assert a.weights == [1.5, 2.5] and isinstance(backend["weights"], bytes)
    assert b.weights == [1.5, 2.5] and calls == [1]          # read back from the shared cache
    backend.clear()
    assert b.weights == [1.5, 2.5] and calls == [1]          # ... and kept in b's own pre-cache
    assert a.weights == [1.5, 2.5] and calls == [1, 1]       # a never read it back: computed again
    assert a.fresh != a.fresh


def test_cache_this_computes_once_across_threads():
    import threading
    import time

    calls = []

    class Slow:
        @cache_this
        def value(self):
            calls.append(1)
            time.sleep(0.05)
            return 7

    obj = Slow()
    results = []
    threads = [threading.Thread(target=lambda: results.append(obj.value)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [7] * 6 and calls == [1]


def test_cache_this_bad_input():
    with pytest.raises(InvalidTypeError, match="cache must be None"):
        cache_this(cache=3)(lambda self: 1)
    with pytest.raises(InvalidTypeError, match="pre_cache must be a bool or a mapping"):
        cache_this(pre_cache="yes")(lambda self: 1)
    with pytest.raises(InvalidTypeError, match="serialize must be callable"):
        cache_this(serialize=1)(lambda self: 1)
    with pytest.raises(InvalidValueError, match="ignore names no parameter"):
        cache_this(ignore="nope")(lambda self, x: x)
    with pytest.raises(InvalidValueError, match="nothing to ignore"):
        cache_this(ignore="x")(lambda self: 1)
    with pytest.raises(InvalidValueError, match="needs arguments"):
        cache_this(as_property=True)(lambda self, x: x)
    with pytest.raises(InvalidValueError, match="takes no 'self'"):
        cache_this(lambda: 1)
    with pytest.raises(InvalidTypeError, match="must decorate a function"):
        cache_this(3)

    class Slotted:
        __slots__ = ()

        @cache_this
        def value(self):
            return 1

        @cache_this(cache="missing")
        def other(self):
            return 2

        @cache_this(cache=lambda self: None)
        def third(self):
            return 3

    with pytest.raises(InvalidTypeError, match="Slotted objects have none"):
        Slotted().value
    with pytest.raises(AttributeError, match="no attribute 'missing' to cache 'other'"):
        Slotted().other
    with pytest.raises(InvalidTypeError, match="returned None"):
        Slotted().third


def test_cache_this_a_failing_deserializer_is_not_a_miss():
    backend, calls = {"value": "stored"}, []

    def strict(text):
        raise KeyError("bad record")

    class Thing:
        @cache_this(cache=backend, deserialize=strict)
        def value(self):
            calls.append(1)
            return "computed"

    with pytest.raises(KeyError, match="bad record"):
        Thing().value
    assert backend == {"value": "stored"} and calls == []        # the stored value was not replaced


def test_the_one_writer_streams_pieces_and_cleans_up_on_failure(tmp_path):
    """files.write_atomically, which the stores write through: str pieces are written as they come,
    an error from the pieces leaves the old file and no temporary file."""
    from scorekit.files import write_atomically

    target = tmp_path / "doc.json"
    write_atomically(target, iter(["{", '"a": ', "1}"]), mode=0o600)
    assert target.read_text() == '{"a": 1}' and oct(target.stat().st_mode & 0o777) == "0o600"

    def failing():
        yield '{"b": '
        raise InvalidValueError("not strict JSON")

    with pytest.raises(InvalidValueError):
        write_atomically(target, failing())
    assert target.read_text() == '{"a": 1}' and os.listdir(tmp_path) == ["doc.json"]
    write_atomically(target, bytearray(b"[1]"))
    assert target.read_text() == "[1]"
