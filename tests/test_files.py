"""The one output guard and atomic writer (scorekit.files): every way an output path can name a
file the run reads, or another output, is refused before anything is written."""

import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorekit.errors import InvalidValueError
from scorekit.files import OutputPathError, check_outputs, write_atomically


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "in").mkdir()
    gold = tmp_path / "in" / "gold.json"
    gold.write_text("{}", encoding="utf-8")
    (tmp_path / "out").mkdir()
    return tmp_path, gold


def _refused(outputs, inputs, match):
    with pytest.raises(OutputPathError, match=match) as info:
        check_outputs(outputs, inputs=inputs)
    assert isinstance(info.value, InvalidValueError)
    return str(info.value)


def test_fresh_outputs_pass_and_come_back_as_paths(tree):
    root, gold = tree
    got = check_outputs({"--json": root / "out" / "a.json", "--html": str(root / "out" / "a.html"), "--pdf": None},
                        inputs=[gold, None, root / "in"])
    assert list(got) == ["--json", "--html"] and got["--html"] == root / "out" / "a.html"
    assert list(check_outputs([root / "out" / "b.json", None], inputs=[gold])) == [str(root / "out" / "b.json")]


@pytest.mark.parametrize("spelling", ["same", "relative", "dotdot", "symlink", "symlinked_folder", "hardlink"])
def test_every_spelling_of_an_input_is_refused(tree, monkeypatch, spelling):
    root, gold = tree
    monkeypatch.chdir(root)
    if spelling == "same":
        out = gold
    elif spelling == "relative":
        out = "in/gold.json"
    elif spelling == "dotdot":
        out = root / "out" / ".." / "in" / "gold.json"
    elif spelling == "symlink":
        out = root / "out" / "link.json"
        out.symlink_to(gold)
    elif spelling == "symlinked_folder":
        (root / "alias").symlink_to(root / "in")
        out = root / "alias" / "gold.json"
    else:
        out = root / "out" / "hard.json"
        os.link(gold, out)
    message = _refused({"--report": out}, [gold], "never overwrite inputs")
    assert "--report" in message and str(gold) in message
    assert gold.read_text(encoding="utf-8") == "{}"


def test_existing_file_inside_an_input_folder_is_refused(tree):
    root, gold = tree
    _refused({"--json": root / "in" / "gold.json"}, [root / "in"], "never overwrite inputs")
    # a new file in an input folder is not something this run reads
    assert check_outputs({"--json": root / "in" / "new.json"}, inputs=[root / "in"])


def test_hard_link_of_a_file_inside_an_input_folder_is_refused(tree):
    root, gold = tree
    (root / "in" / "deep").mkdir()
    deep = root / "in" / "deep" / "page.xml"
    deep.write_text("<x/>", encoding="utf-8")
    os.link(deep, root / "out" / "page.html")
    message = _refused({"--html": root / "out" / "page.html"}, [root / "in"], "never overwrite inputs")
    assert str(deep) in message and deep.read_text(encoding="utf-8") == "<x/>"


def test_two_outputs_on_one_path_are_refused(tree):
    root, _ = tree
    link = root / "out" / "link.html"
    link.symlink_to(root / "out" / "r.html")
    message = _refused({"--json": root / "out" / "r.html", "--html": link}, [], "each output needs its own path")
    assert "--json" in message and "--html" in message


def test_folders_and_missing_folders_are_refused(tree):
    root, _ = tree
    _refused({"--html": root / "out"}, [], "is a folder")
    _refused({"--html": root / "nowhere" / "r.html"}, [], "does not exist")


def test_write_atomically_writes_whole_files_with_the_mode_asked(tree):
    root, _ = tree
    target = root / "out" / "r.txt"
    assert write_atomically(target, "é") == target and target.read_bytes() == "é".encode("utf-8")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    write_atomically(target, b"secret", mode=0o600)
    assert target.read_bytes() == b"secret" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in (root / "out").iterdir()) == ["r.txt"]


def test_write_atomically_leaves_no_temporary_file_on_error(tree):
    root, _ = tree

    with pytest.raises(TypeError):
        write_atomically(root / "out" / "r.txt", 12)  # type: ignore[arg-type]
    assert list((root / "out").iterdir()) == []


# --- fuzz: any spelling of a path, through links and "..", is refused exactly when it is an input ---

@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_outputs_never_name_an_input(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("fuzz")
    for folder in ("a", "b", "a/c"):
        (root / folder).mkdir()
    files = [root / "a" / "x.txt", root / "b" / "y.txt", root / "a" / "c" / "z.txt"]
    for k, f in enumerate(files):
        f.write_text(str(k), encoding="utf-8")
    (root / "b" / "to_a").symlink_to(root / "a")                  # a folder link
    (root / "b" / "to_x").symlink_to(files[0])                    # a file link
    os.link(files[1], root / "a" / "hard_y.txt")                  # a hard link
    names = ["x.txt", "y.txt", "z.txt", "hard_y.txt", "to_x", "new.txt", "to_a", "c", "..", "."]
    parts = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    output = root.joinpath(data.draw(st.sampled_from(["a", "b", "a/c"])), *parts)
    inputs = data.draw(st.lists(st.sampled_from(files), min_size=1, max_size=3, unique=True))
    before = [f.read_bytes() for f in files]
    try:
        check_outputs({"--out": output}, inputs=inputs)
    except OutputPathError as exc:
        refused = str(exc)
    else:
        refused = None
    resolved = output.resolve()
    identity = resolved.stat()[1:3] if resolved.exists() else None
    is_input = identity is not None and any(f.stat()[1:3] == identity for f in inputs)
    if is_input:
        assert refused is not None and "never overwrite inputs" in refused
    elif resolved.is_dir() or not resolved.parent.is_dir():
        assert refused is not None
    else:
        assert refused is None, refused
    assert [f.read_bytes() for f in files] == before
