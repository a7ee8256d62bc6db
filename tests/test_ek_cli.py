"""Every command of the reference kit's command line (``ek cer|wer|rover|pass-k|cost-per-success|where|
check|engines|version``) runs as ``scorekit …`` with the same arguments and the same output; the four
commands that name the product itself (its folder, its extra, its version) differ only in that name."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from scorekit import tools
from scorekit.cli import main


def ek_output(*argv: str, env: dict | None = None) -> str:
    return subprocess.run([sys.executable, "-m", "ek", *argv], capture_output=True, text=True, check=True,
                          env=env).stdout


def ours(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    ["cer", "hello wrld", "hello world"],                       # the docs' example
    ["wer", "hello wrld", "hello world"],
    ["cer", "Hello  World", "hello world", "-n", "lower"],
    ["cer", "Hello  World", "hello world", "--normalize", "collapse_whitespace"],
    ["wer", "", ""],
    ["cer", "", "x"],
    ["cer", "naïve café", "naive cafe"],
    ["rover", "the cat sat", "the cat sit", "the bat sat"],     # the docs' example
    ["rover", "the cat sat", "the cat sit", "-c"],
    ["rover", "the cat sat", "the cat sit", "--confidence"],
    ["rover", "a b c", "a c", "b c d", "--no-confidence"],
    ["rover", "only one"],
    ["pass-k", "10", "9", "--k", "8"],                         # the docs' example
    ["pass-k", "3", "3"],
    ["cost-per-success", "12.50", "5", "--attempts", "20"],    # the docs' example
    ["cost-per-success", "12.50", "5", "-a", "20"],
    ["cost-per-success", "1", "0"],
])
def test_same_output_as_ek(argv, capsys):
    assert ours(capsys, *argv) == ek_output(*argv)


def test_where_prints_the_data_root(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SCOREKIT_DATA_HOME", raising=False)
    monkeypatch.setenv("EK_DATA_HOME", str(tmp_path))
    assert ours(capsys, "where") == f"{tmp_path}\n"
    monkeypatch.setenv("SCOREKIT_DATA_HOME", str(tmp_path / "sk"))
    assert ours(capsys, "where") == f"{tmp_path / 'sk'}\n"
    monkeypatch.delenv("SCOREKIT_DATA_HOME")
    monkeypatch.delenv("EK_DATA_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert ours(capsys, "where") == f"{tmp_path / 'xdg' / 'scorekit'}\n"


def test_where_reads_the_kits_folder_while_scorekits_does_not_exist(tmp_path, capsys, monkeypatch):
    from scorekit.stores import json_store

    monkeypatch.delenv("SCOREKIT_DATA_HOME", raising=False)
    monkeypatch.delenv("EK_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    share = tmp_path / ".local" / "share"
    assert ours(capsys, "where") == f"{share / 'scorekit'}\n" and tools.where_note() is None
    (share / "ek" / "baselines").mkdir(parents=True)            # a folder the reference kit left
    (share / "ek" / "baselines" / "v1.json").write_text('{"n_trials": 4}', encoding="utf-8")
    assert main(["where"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{share / 'ek'}\n"
    assert err == (f"scorekit: note: scorekit's data folder {share / 'scorekit'} does not exist, so the reference "
                   f"kit's folder is used; create {share / 'scorekit'} to keep scorekit's data apart\n")
    assert json_store("baselines")["v1"] == {"n_trials": 4}      # the kit's baseline is read
    assert ek_output("where", env={**os.environ, "HOME": str(tmp_path)}) == out   # the kit's own answer
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert ours(capsys, "where") == f"{tmp_path / 'xdg' / 'scorekit'}\n"
    (tmp_path / "xdg" / "ek").mkdir(parents=True)
    assert ours(capsys, "where") == f"{tmp_path / 'xdg' / 'ek'}\n"
    (tmp_path / "xdg" / "scorekit").mkdir()                      # scorekit's own folder wins once it exists
    assert main(["where"]) == 0
    assert capsys.readouterr() == (f"{tmp_path / 'xdg' / 'scorekit'}\n", "")


def test_check_engines_and_version_name_scorekit(capsys):
    theirs = eval(ek_output("check", "tesseract"))    # a dict repr of plain literals
    mine = eval(ours(capsys, "check", "tesseract"))
    assert mine.keys() == theirs.keys() and mine["engine"] == "tesseract" and mine["via"] == theirs["via"]
    assert mine["ok"] is theirs["ok"] is False and "scorekit[ocr]" in mine["hint"]
    assert ours(capsys, "engines") == tools.NO_OCR_ENGINES + "\n"
    assert ek_output("engines") == tools.NO_OCR_ENGINES.replace("scorekit", "ek") + "\n"
    import scorekit

    assert ours(capsys, "version") == f"{scorekit.__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*\n", ek_output("version"))
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"scorekit {scorekit.__version__}\n"


def test_every_ek_command_exists(capsys):
    """The reference kit's subcommands, read from its own ``--help``, are all scorekit commands."""
    usage = ek_output("--help")
    commands = re.search(r"\{([a-z,-]+)\}", usage).group(1).split(",")
    assert len(commands) == 9
    for command in commands:
        assert main([command, "--help"]) == 0, command
    capsys.readouterr()


def test_tools_are_the_commands():
    assert tools.cer("hello wrld", "hello world") == pytest.approx(1 / 11)
    assert tools.wer("a b", "a c", normalize="lower") == 0.5
    assert tools.rover("a b", "a b", confidence=False)["consensus"] == "a b"
    assert tools.where() == str(__import__("scorekit.stores").stores.data_root())
    with pytest.raises(ValueError, match=r"hypotheses\[1\] contains a lone surrogate"):
        tools.rover("a", "b\ud800")
    with pytest.raises(TypeError, match=r"hypotheses\[0\] must be str"):
        tools.rover(3, "b")
