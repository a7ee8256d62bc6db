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
        ((parquet, "--pred", "p", "--gold", "truth"),
         "scorekit: error: gold column 'truth' not found (columns: 'p', 'g', 'lang', 'score')"),
        ((parquet, "--pred", "p", "--gold", "g", "--slice", "nope"), "scorekit: error: slice column 'nope' not found"),
        ((parquet, "--pred", "score", "--gold", "g"), "scorekit: error: pred column 'score' has type int64; expected text"),
        ((parquet, "--pred", "p", "--gold", "g"), "scorekit: error: column 'p' row 3 is null (pass --nulls count"),
        ((tmp_path / "missing.parquet", "--pred", "p", "--gold", "g"), "scorekit: error: FILE not found: "),
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
    cases.append(((bad, "--pred", "p", "--gold", "g"),
                  "scorekit: error: column 'p' row 1: invalid UTF-8 (invalid start byte at byte 0)"))
    for args, message in cases:
        code, out, err = run(capsys, *args)
        assert code == 2 and out == "", args
        assert message in err and err.count("\n") == 1, (args, err)


def test_non_finite_float_slices_are_labelled_as_text_mode_does(capsys, tmp_path):
    """A float slice column holding NaN and ±inf: the JSON report is strict JSON with the labels the
    text report shows (``NaN``, ``Infinity``, ``-Infinity``), all NaN rows in one slice, across row
    groups, and the rows with a null label counted."""
    nan, inf = float("nan"), float("inf")
    path = tmp_path / "floats.parquet"
    pq.write_table(pa.table({"p": ["a", "x", "c", "d", "e", "f"], "g": ["a", "b", "c", "x", "e", "f"],
                             "s": [nan, nan, inf, -inf, 1.5, None]}), path, row_group_size=1)
    code, out, err = run(capsys, path, "--pred", "p", "--gold", "g", "--slice", "s")
    assert (code, err) == (0, "")
    assert '  NaN        0.5000  (n=2)\n  Infinity   0.0000  (n=1)\n  -Infinity  1.0000  (n=1)\n' in out
    assert "  rows in no slice (null label in 's'): 1\n" in out
    code, out, err = run(capsys, path, "--pred", "p", "--gold", "g", "--slice", "s", "--json")
    assert (code, err) == (0, "")
    report = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert [(s["slice"], s["aggregate"], s["n"]) for s in report["per_slice"]] == [
        ("NaN", 0.5, 2), ("Infinity", 0.0, 1), ("-Infinity", 1.0, 1), (1.5, 0.0, 1)]
    assert (report["n"], report["unsliced"], report["row_groups"]) == (6, 1, 6)


def test_every_row_is_counted(capsys, parquet):
    """n rows scored, null cells per column, and the rows in no slice: shown in both reports."""
    code, out, _ = run(capsys, parquet, "--pred", "p", "--gold", "g", "--slice", "lang", "--nulls", "count", "--json")
    report = json.loads(out)
    assert (report["n"], report["nulls"], report["unsliced"]) == (4, {"p": 1, "g": 0}, 1)
    assert sum(s["n"] for s in report["per_slice"]) + report["unsliced"] == report["n"]
    code, out, _ = run(capsys, parquet, "--pred", "p", "--gold", "g", "--nulls", "count", "--json")
    assert json.loads(out)["unsliced"] is None  # no --slice: no slices to be out of
    code, out, _ = run(capsys, parquet, "--pred", "p", "--gold", "g", "--slice", "lang", "--nulls", "count")
    assert "  rows in no slice (null label in 'lang'): 1\n" in out


def test_null_error_speaks_the_command_line(capsys, parquet):
    code, out, err = run(capsys, parquet, "--pred", "p", "--gold", "g")
    assert (code, out) == (2, "")
    assert err == ("scorekit: error: column 'p' row 3 is null (pass --nulls count to score null cells as "
                   "empty text)\n")


def test_column_edges(capsys, tmp_path):
    """``--slice ''`` reads the column named ''; one column in two roles is one clean error."""
    path = tmp_path / "edge.parquet"
    pq.write_table(pa.table({"p": ["ct", "dog"], "g": ["cat", "dog"], "": ["a", "b"]}), path)
    code, out, _ = run(capsys, path, "--pred", "p", "--gold", "g", "--slice", "", "--json")
    assert code == 0 and [s["slice"] for s in json.loads(out)["per_slice"]] == ["a", "b"]
    for args, message in ((("--pred", "p", "--gold", "p"), "gold names column 'p', as pred does"),
                          (("--pred", "p", "--gold", "g", "--slice", "g"), "slice names column 'g', as gold does"),
                          (("--pred", "p", "--gold", "g", "-n", ""), "--normalize '' holds an empty normalizer name"),
                          (("--pred", "p", "--gold", "g", "-n", "lower,"), "--normalize 'lower,' holds an empty")):
        code, out, err = run(capsys, path, *args)
        assert (code, out) == (2, "") and err.startswith(f"scorekit: error: {message}") and err.count("\n") == 1


def test_help_speaks_the_command_line(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["eval-table", "--help"])
    text = capsys.readouterr().out
    assert "``" not in text and "Arrow" not in text and "nulls='count'" not in text
    assert "usage: scorekit eval-table [-h] --pred COL --gold COL" in text and " FILE\n" in text


def test_a_damaged_file_is_one_error_naming_it(capsys, tmp_path):
    from test_arrow import _damaged_parquet

    path = _damaged_parquet(tmp_path)
    code, out, err = run(capsys, path, "--pred", "p", "--gold", "g")
    assert (code, out) == (2, "")
    assert err == (f"scorekit: error: FILE {str(path)!r} could not be read (could not verify page integrity, "
                   "CRC checksum verification failed for page_ordinal 0)\n")


def _comparable(out):
    """The ``--json`` report without what depends on how the rows were stored (the files, their row
    groups, the order slices first appear in) or timed."""
    report = json.loads(out)
    report["per_slice"] = sorted(report["per_slice"], key=lambda s: s["slice"])
    return {k: v for k, v in report.items() if k not in ("files", "row_groups", "seconds", "pairs_per_second")}


def test_folder_and_glob_read_as_the_single_file(capsys, tmp_path):
    """A folder of shards (nested, with Spark/Dask side files) and a glob give the single file's
    report; shards are read in natural order (part.2 before part.10), which orders the slices."""
    table = pa.table({"p": ["hello wrld", "ct", "Straße", None, "oui", "da"],
                      "g": ["hello world", "cat", "STRASSE", "x", "non", "da"],
                      "lang": ["en", "en", "de", None, "fr", "ru"]})
    single = tmp_path / "all.parquet"
    pq.write_table(table, single, row_group_size=4)
    folder = tmp_path / "shards"
    (folder / "year=2026").mkdir(parents=True)
    pq.write_table(table.slice(0, 2), folder / "part.1.parquet")
    pq.write_table(table.slice(2, 2), folder / "part.2.parquet", row_group_size=1)
    pq.write_table(table.slice(4, 1), folder / "year=2026" / "part.10.pq")
    pq.write_table(table.slice(5, 1), folder / "part.11.parquet")
    (folder / "_SUCCESS").write_text("")
    (folder / ".part.1.parquet.crc").write_text("not parquet")
    (folder / "README.txt").write_text("not parquet")
    pq.write_table(table, folder / "_temporary.parquet")  # a writer's leftover: skipped as pyarrow skips it
    options = ("--pred", "p", "--gold", "g", "--slice", "lang", "--nulls", "count", "--json", "--progress", "never")
    code, expected, _ = run(capsys, single, *options)
    assert code == 0
    code, out, _ = run(capsys, folder, *options)
    assert code == 0 and _comparable(out) == _comparable(expected)
    assert (json.loads(out)["files"], json.loads(out)["row_groups"]) == (4, 5)
    assert [s["slice"] for s in json.loads(out)["per_slice"]] == ["en", "de", "ru", "fr"]  # part.11 after part.2
    code, out, _ = run(capsys, f"{folder}/part.*.parquet", *options)
    partial = scorekit.evaluate(
        [("hello wrld", "hello world"), ("ct", "cat"), ("Straße", "STRASSE"), (None, "x"), ("da", "da")])
    assert code == 0 and json.loads(out)["files"] == 3
    assert (json.loads(out)["n"], json.loads(out)["totals"]) == (5, partial.detail)
    code, out, err = run(capsys, folder, "--pred", "p", "--gold", "g", "--nulls", "count", "--progress", "always")
    assert code == 0 and out.startswith("CER over 6 pairs in 4 files: ") and "100.0% 4/4 files" in err


def test_shard_errors_are_one_clean_line(capsys, tmp_path):
    """An empty glob, a folder without Parquet, a shard of another schema (read by a dataset, its
    integers would be cast to text) or a damaged shard: exit 2, one line naming the problem."""
    good = pa.table({"p": ["a"], "g": ["b"]})
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no parquet here")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    pq.write_table(good, mixed / "a.parquet")
    pq.write_table(pa.table({"p": [1], "g": ["b"]}), mixed / "b.parquet")
    fewer = tmp_path / "fewer"
    fewer.mkdir()
    pq.write_table(pa.table({"p": ["a"], "g": ["b"], "x": [1]}), fewer / "a.parquet")
    pq.write_table(good, fewer / "b.parquet")
    broken = tmp_path / "broken"
    broken.mkdir()
    pq.write_table(good, broken / "a.parquet")
    (broken / "b.parquet").write_bytes(b"PAR1 not really")
    no_rows = tmp_path / "no_rows"
    no_rows.mkdir()
    pq.write_table(good.slice(0, 0), no_rows / "a.parquet")
    for source, message in ((tmp_path / "nothing-*.parquet", "matches no file"),
                            (tmp_path / "empty", "is a folder holding no Parquet files"),
                            (mixed, "does not have the schema of"),
                            (fewer, "missing: x"),
                            (broken, "not all readable as Parquet"),
                            (no_rows, "1 Parquet file of")):
        code, out, err = run(capsys, source, "--pred", "p", "--gold", "g")
        assert (code, out) == (2, ""), source
        assert err.startswith("scorekit: error: ") and message in err and err.count("\n") == 1, (source, err)
    code, _, err = run(capsys, mixed / "b.parquet", "--pred", "p", "--gold", "g")
    assert code == 2 and "pred column 'p' has type int64; expected text" in err
