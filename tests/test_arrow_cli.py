"""``scorekit eval-table``: the report of a Parquet file (text and JSON) equal to the Python path,
the progress bar over row groups, and one-line errors naming the file, column and row."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import scorekit
from scorekit import cli


@pytest.fixture(autouse=True)
def eval_table_registered(monkeypatch):
    """The command as the lead registers it: ``scorekit.arrow_cli`` among the subcommand modules."""
    monkeypatch.setattr(cli, "SUBCOMMAND_MODULES", tuple(dict.fromkeys((*cli.SUBCOMMAND_MODULES, "scorekit.arrow_cli"))))


@pytest.fixture
def parquet(tmp_path):
    table = pa.table({"p": ["hello wrld", "ct", "Straße", None], "g": ["hello world", "cat", "STRASSE", "x"],
                      "lang": ["en", "en", "de", None], "score": [1, 2, 3, 4]})
    path = tmp_path / "pairs.parquet"
    pq.write_table(table, path, row_group_size=2)
    return path


def run(capsys, *args):
    code = cli.main(["eval-table", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_text_and_json_reports(capsys, parquet):
    code, out, _ = run(capsys, parquet, "--pred", "p", "--gold", "g", "--slice", "lang", "--nulls", "count")
    assert code == 0
    assert out.startswith("CER over 4 pairs: 0.4091  (edits 9 / reference 22; S 5  D 4  I 0  H 13)")
    assert '  "en"  0.1429  (n=2)' in out and "null cells (scored as empty text): p 1, g 0" in out
    code, out, _ = run(capsys, parquet, "--pred", "p", "--gold", "g", "--slice", "lang", "--nulls", "count",
                       "--metric", "wer", "-n", "nfkc,lower", "--json", "--progress", "never")
    report = json.loads(out)
    expected = scorekit.evaluate([("hello wrld", "hello world", "en"), ("ct", "cat", "en"), ("Straße", "STRASSE", "de"),
                                  (None, "x", None)], metric="wer", normalize=["nfkc", "lower"])
    assert (report["n"], report["aggregate"], report["totals"]) == (4, expected.aggregate, expected.detail)
    assert report["per_slice"][1] == {"slice": "de", "aggregate": 0.0, "n": 1, "ref_len": 1, "substitutions": 0,
                                      "deletions": 0, "insertions": 0, "edits": 0, "hits": 1}
    assert report["row_groups"] == 2 and report["nulls"] == {"p": 1, "g": 0}


def test_progress_over_row_groups(capsys, parquet):
    code, _, err = run(capsys, parquet, "--pred", "p", "--gold", "g", "--nulls", "count", "--progress", "always")
    assert code == 0
    assert "1/2 row groups" in err and "100.0% 2/2 row groups\n" in err


def test_errors_name_the_file_column_and_row(capsys, parquet, tmp_path):
    cases = [
        ((parquet, "--pred", "p", "--gold", "truth"), "scorekit: error: gold column 'truth' not found (columns: 'p', 'g', 'lang', 'score')"),
        ((parquet, "--pred", "score", "--gold", "g"), "scorekit: error: pred column 'score' has type int64; expected text"),
        ((parquet, "--pred", "p", "--gold", "g"), "scorekit: error: column 'p' row 3 is null (pass nulls='count'"),
        ((tmp_path / "missing.parquet", "--pred", "p", "--gold", "g"), "scorekit: error: FILE not found: "),
        ((tmp_path, "--pred", "p", "--gold", "g"), "is a directory, not a Parquet file"),
    ]
    empty = tmp_path / "empty.parquet"
    empty.write_bytes(b"")
    cases.append(((empty, "--pred", "p", "--gold", "g"), "is not a readable Parquet file (Parquet file size is 0 bytes)"))
    no_rows = tmp_path / "no_rows.parquet"
    pq.write_table(pa.table({"p": pa.array([], pa.string()), "g": pa.array([], pa.string())}), no_rows)
    cases.append(((no_rows, "--pred", "p", "--gold", "g"), "has no rows"))
    text = tmp_path / "notes.txt"
    text.write_text("not parquet")
    cases.append(((text, "--pred", "p", "--gold", "g"), "is not a readable Parquet file"))
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"p": pa.array([b"ok", b"\xff"]), "g": ["ok", "no"]}), bad)
    cases.append(((bad, "--pred", "p", "--gold", "g"), "scorekit: error: column 'p' row 1: invalid UTF-8 (invalid start byte at byte 0)"))
    for args, message in cases:
        code, out, err = run(capsys, *args)
        assert code == 2 and out == "", args
        assert message in err and err.count("\n") == 1, (args, err)
