"""The formats of the files the command line reads and writes, as a user names them: a name
of another format (``--out out.xlsx``) is refused before the fit, not written as CSV text
under that name, and a file that is not a CSV or Parquet table (a workbook, another text
encoding, a spreadsheet's ``sep=;`` line) is read right or refused in one line."""

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(0)
    good = pd.DataFrame({"time": np.arange(100) * 0.01, "a": rng.normal(size=100)})
    good.to_csv(tmp_path / "good.csv", index=False)
    return tmp_path


@pytest.mark.parametrize(
    "name",
    [
        "out.xlsx",
        "out.XLS",
        "out.json",
        "out.feather",
        "out.csv.zst",
        "out.tar.gz",
        "out.parquet.gz",
        "out.csv.lz4",
        "out.7z",
        "out.csv.Z",
    ],  # fmt: skip
)
def test_an_output_named_for_another_format_is_refused_and_nothing_written(
    cli, cli_in_process, folder, name
):
    # it wrote CSV text under the name, exit 0: a workbook no spreadsheet opened
    r = cli_in_process("filter", "good.csv", "-m", "moving_average", "-o", name, cwd=folder)
    cli.assert_usage_error(r, f"--out: '{name}' names a")
    assert "give a name for CSV (.csv, .tsv" in r.stderr
    assert not (folder / name).exists()


def test_a_batch_summary_named_for_another_format_is_refused(cli, cli_in_process, folder):
    (folder / "out").mkdir()
    r = cli_in_process("filter", "good.csv", "--out-dir", "out", "--summary", "s.xlsx",
                       cwd=folder)  # fmt: skip
    cli.assert_usage_error(r, "--summary: 's.xlsx' names a .xlsx file")
    assert not list((folder / "out").iterdir())


@pytest.mark.parametrize("name", ["out.csv", "out.txt.gz", "out", "out.dat", "out.parquet"])
def test_an_output_named_for_csv_or_parquet_is_written(cli_in_process, folder, name):
    r = cli_in_process("filter", "good.csv", "-m", "moving_average", "-o", name, cwd=folder)
    assert r.returncode == 0, r.stderr
    read = pd.read_parquet if name.endswith(".parquet") else pd.read_csv
    assert list(read(folder / name).columns) == ["time", "a", "a_filtered"]


def test_write_table_refuses_a_name_of_another_format(tmp_path):
    from tssdpa.data.tables import write_table

    with pytest.raises(ValueError, match=r"'.*out\.xlsx' names a \.xlsx file"):
        write_table(pd.DataFrame({"a": [1.0]}), tmp_path / "out.xlsx")
    assert not list(tmp_path.iterdir())


def _workbook(path):
    import zipfile

    with zipfile.ZipFile(path, "w") as z:  # what an .xlsx is: a zip archive of XML
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")


LATIN1 = "Zeit;Höhe °C\n" + "".join(f"{i};{i},5\n" for i in range(30))


@pytest.mark.parametrize(
    "name, write, message",
    [
        # "'utf-8' codec can't decode byte 0xf9 in position 10"
        ("in.xlsx", _workbook, "in.xlsx: no .xlsx file is read here; save it as CSV"),
        ("in.json.gz", lambda p: p.write_bytes(b""), "no .json file is read here"),
        ("book.csv", _workbook, "book.csv is a zip archive (an Excel workbook?)"),
        ("old.csv", lambda p: p.write_bytes(b"\xd0\xcf\x11\xe0" + bytes(600)), "97-2003"),
        (
            "table.csv",
            lambda p: pd.DataFrame({"a": [1.0, 2.0]}).to_parquet(p),
            "table.csv is a Parquet file: name it .parquet",
        ),
        # "no numeric column to filter (columns: ['t\x00i\x00m\x00e\x00', ...])"
        (
            "u16.csv",
            lambda p: p.write_bytes("time,a\n0,1\n1,2\n".encode("utf-16-le")),
            "u16.csv is not a readable CSV file: line 1 holds NUL characters (UTF-16 text without",
        ),
        # exit 1, "ReadError: file could not be opened successfully:" and four more lines
        ("in.csv.tar", lambda p: p.write_bytes(b"junk\n" * 9), "in.csv.tar is not a readable CSV"),
        ("nul.csv", lambda p: p.write_bytes(b"time,a\n0,1\x00\n1,2\n"), "line 2 holds NUL"),
        # "not a readable CSV file ('utf-8' codec can't decode byte 0xf6 in position 9: ...)"
        (
            "latin1.csv",
            lambda p: p.write_bytes(LATIN1.encode("latin-1")),
            "latin1.csv is not a readable CSV file: not UTF-8 (byte 0xf6: Latin-1 / Windows-1252?)",
        ),
    ],
)
def test_a_file_that_is_no_utf8_csv_text_is_refused_in_one_line(
    cli, cli_in_process, tmp_path, name, write, message
):
    write(tmp_path / name)
    r = cli_in_process("filter", name, "-m", "moving_average", cwd=tmp_path)
    cli.assert_usage_error(r, message)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-32"])
def test_a_csv_with_a_byte_order_mark_is_read(cli_in_process, tmp_path, encoding):
    # a spreadsheet's "Unicode text": UTF-16 with a BOM, tabs and decimal commas; it was
    # refused ("'utf-8' codec can't decode byte 0xff in position 0")
    text = "Zeit\tHöhe °C\n" + "".join(f"{i}\t{i % 7},5\n" for i in range(30))
    (tmp_path / "in.csv").write_text(text, encoding=encoding)
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", "-o", "out.csv",
                       cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    # written back in its encoding, byte-order mark and all (tests/test_cli_written_as_read.py)
    out = pd.read_csv(tmp_path / "out.csv", sep="\t", decimal=",", encoding=encoding)
    assert list(out.columns) == ["Zeit", "Höhe °C", "Höhe °C_filtered"]
    assert out["Höhe °C"].tolist() == [i % 7 + 0.5 for i in range(30)]


@pytest.mark.parametrize("sep", [";", ",", "\t", "|"])
def test_a_first_line_sep_declares_the_separator_and_is_skipped(cli_in_process, tmp_path, sep):
    # Excel's "sep=;" line was read as the header: "no numeric column to filter (columns:
    # ['sep=', 'Unnamed: 1'])"
    decimal = "," if sep in ";\t" else "."
    rows = "".join(f"{i}{sep}{i % 5}{decimal}25\r\n" for i in range(20))
    (tmp_path / "in.csv").write_text(f"sep={sep}\r\ntime{sep}a\r\n{rows}", newline="")
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", "-o", "out.csv",
                       cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    written = (tmp_path / "out.csv").read_bytes()
    assert written.startswith(f"sep={sep}\r\ntime{sep}a{sep}".encode())  # as the input has it
    out = pd.read_csv(tmp_path / "out.csv", sep=sep, decimal=decimal, skiprows=1)
    assert list(out.columns) == ["time", "a", "a_filtered"]
    assert out["a"].tolist() == [i % 5 + 0.25 for i in range(20)]


def test_numbers_with_thousands_grouped_by_points_and_a_decimal_comma_are_read(
    cli_in_process, tmp_path
):
    # "1.234,5" (a German spreadsheet's export) was text: "no numeric column to filter", or
    # the column skipped beside others; a date 01.05.2026 stays text (pandas' thousands="."
    # read it as 1052026)
    values = [1000.0, 1137.0, 12345678.0, 1013.75, 980.5, -2000.25] * 5
    cells = ["1.000", "1.137", "12.345.678", "1.013,75", "980,5", "-2.000,25"] * 5
    rows = "".join(f"{i};{c};01.05.2026\n" for i, c in enumerate(cells))
    (tmp_path / "in.csv").write_text(f"time;Betrag;Datum\n{rows}")
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", "--params", '{"window": 1}',
                       "-o", "out.csv", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "skipped column(s) of text or true / false values, with no finite value or with " \
        "no name ['Datum']" in r.stderr  # fmt: skip
    out = pd.read_csv(tmp_path / "out.csv", sep=";", decimal=",", dtype={"Betrag": str})
    assert out["Betrag"].tolist() == cells  # copied as the file has it
    assert np.allclose(out["Betrag_filtered"], values)
    assert out["Datum"].tolist() == ["01.05.2026"] * 30


@pytest.mark.parametrize("sep", [",", "\t"])
def test_numbers_with_thousands_grouped_by_commas_and_a_decimal_point_are_read(
    cli_in_process, tmp_path, sep
):
    # a spreadsheet writes cells as shown: "1,234.5" (quoted in a comma file) was text, "no
    # numeric column to filter"
    values = [1234.5, 12.0, -1000000.25, 3.5] * 5
    cells = ["1,234.5", "12", "-1,000,000.25", "3.5"] * 5
    quote = '"' if sep == "," else ""
    rows = "".join(f"{i}{sep}{quote}{c}{quote}\n" for i, c in enumerate(cells))
    (tmp_path / "in.csv").write_text(f"time{sep}v\n{rows}")
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", "--params", '{"window": 1}',
                       "-o", "out.csv", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = pd.read_csv(tmp_path / "out.csv", sep=sep, dtype={"v": str})
    assert out["v"].tolist() == cells  # copied as the file has it
    assert np.allclose(out["v_filtered"], values)


@pytest.mark.parametrize("given", ["in.tsv", "good.csv"])
@pytest.mark.parametrize("name", ["out.tsv", "out.tsv.gz"])
def test_an_output_named_tsv_is_tab_separated(cli_in_process, folder, given, name):
    # a tab file filtered to out.tsv came out comma separated (one file: commas, as on
    # standard output), a .tsv holding one column for a reader of tabs
    pd.read_csv(folder / "good.csv").to_csv(folder / "in.tsv", sep="\t", index=False)
    r = cli_in_process("filter", given, "-m", "moving_average", "-o", name, cwd=folder)
    assert r.returncode == 0, r.stderr
    out = pd.read_csv(folder / name, sep="\t")
    assert list(out.columns) == ["time", "a", "a_filtered"]


def test_an_output_named_tsv_under_another_ending_is_not_tab_separated(cli_in_process, folder):
    # out.tsv.csv came out tab separated: its format is its last ending
    r = cli_in_process("filter", "good.csv", "-m", "moving_average", "-o", "out.tsv.csv",
                       cwd=folder)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert list(pd.read_csv(folder / "out.tsv.csv").columns) == ["time", "a", "a_filtered"]


def test_a_utf16_file_broken_after_its_byte_order_mark_is_told_so(cli, cli_in_process, tmp_path):
    # it was told as "not UTF-8 (byte 0x41: Latin-1 / Windows-1252?)"
    text = "time\ta\n" + "".join(f"{i}\t{i}\n" for i in range(30))
    (tmp_path / "in.csv").write_bytes(text.encode("utf-16") + b"A")
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", cwd=tmp_path)
    cli.assert_usage_error(r, "in.csv is not a readable CSV file: not utf-16")
    assert "Latin-1" not in r.stderr


def test_no_numeric_column_says_which_cell_is_no_number(cli, cli_in_process, tmp_path):
    # "no numeric column to filter (columns: ['time', 'U'])" said nothing of why: here a unit
    # in the cells
    (tmp_path / "in.csv").write_text("time,U\n0,12\n1,12.5 V\n2,12.4 V\n")
    r = cli_in_process("filter", "in.csv", cwd=tmp_path)
    cli.assert_usage_error(r, "no numeric column to filter (columns: ['time', 'U']; 'U' holds "
                              "'12.5 V' in data row 2)")  # fmt: skip


def test_no_numeric_column_names_the_column_meant_as_numbers_not_a_label_column(
    cli, cli_in_process, tmp_path
):
    # it named the first text cell of any column: "'label' holds 'walk'"
    (tmp_path / "in.csv").write_text("time,label,U\n0,walk,12\n1,walk,12.5 V\n2,run,12.4 V\n")
    r = cli_in_process("filter", "in.csv", cwd=tmp_path)
    cli.assert_usage_error(r, "'U' holds '12.5 V' in data row 2)")


@pytest.mark.parametrize("space", [" ", "\u00a0", "\u202f"], ids=["space", "nbsp", "narrow"])
def test_numbers_with_thousands_grouped_by_spaces_and_a_decimal_comma_are_read(
    cli_in_process, tmp_path, space
):
    # a French spreadsheet's "1 013,5" (a no-break space) was text: no numeric column
    values = [980.5, 1013.5, -12345678.25, 1015.0] * 5
    cells = [c.replace(" ", space) for c in ["980,5", "1 013,5", "-12 345 678,25", "1 015"] * 5]
    rows = "".join(f"{i};{c}\n" for i, c in enumerate(cells))
    (tmp_path / "in.csv").write_text(f"time;T\n{rows}", encoding="utf-8")
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", "--params", '{"window": 1}',
                       "-o", "out.csv", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = pd.read_csv(tmp_path / "out.csv", sep=";", decimal=",", dtype={"T": str})
    assert out["T"].tolist() == cells
    assert np.allclose(out["T_filtered"], values)


@pytest.mark.parametrize(
    "cells",
    [
        ['"0,000"', '"0,037"', '"0,125"', '"1,250"'],  # pandas' decimal="," quoted
        ['"12,500"', '"13,250"', '"14,125"', '"15,000"'],  # decimal commas, 3 places
    ],
)
def test_a_comma_files_cells_a_single_comma_could_group_stay_text(cli, tmp_path, cells):
    # the thousands rule read them as 1000x the values meant: no cell shows two marks, so
    # nothing says the comma groups thousands
    rows = "".join(f"{i},{c}\n" for i, c in enumerate(cells * 5))
    (tmp_path / "in.csv").write_text(f"t,x\n{rows}")
    r = cli("filter", "in.csv", "-m", "moving_average", "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 2 and "no numeric column" in r.stderr
    assert not (tmp_path / "out.csv").exists()


def test_in_a_decimal_comma_file_whole_seconds_and_pairs_of_numbers_stay_text(tmp_path):
    # "1.000" (a time in seconds) was read as 1000, "120 080" (two numbers) as 120080
    from tssdpa.data.csv_files import read_csv_file

    pairs = ["120 080", "0 100", "130 090", "140 070"] * 5
    rows = "".join(f"{i}.000;{c};{i},5\n" for i, c in enumerate(pairs))
    (tmp_path / "in.csv").write_text(f"time;pair;x\n{rows}")
    df = read_csv_file(tmp_path / "in.csv")
    assert df["time"].tolist() == [f"{i}.000" for i in range(20)]
    assert df["pair"].tolist() == pairs
    assert np.allclose(df["x"], np.arange(20) + 0.5)


@pytest.mark.parametrize("name", ["arrays.safetensors", "config.onnx"])
def test_an_output_named_for_a_model_file_is_refused_and_the_model_kept(
    cli, cli_in_process, folder, name
):
    # --out m/arrays.safetensors wrote CSV text over the arrays of the model it applied
    from tssdpa.filters import ProjectionFilter

    good = pd.read_csv(folder / "good.csv")
    ProjectionFilter(window=[8], embedding=[1], degree=[0]).fit(good[["a"]]).save(folder / "m")
    before = {p.name: p.read_bytes() for p in (folder / "m").iterdir()}
    r = cli_in_process("filter", "good.csv", "--model", "m", "-o", f"m/{name}", cwd=folder)
    cli.assert_usage_error(r, f"--out: 'm/{name}' names a")
    assert {p.name: p.read_bytes() for p in (folder / "m").iterdir()} == before
    ProjectionFilter.load(folder / "m")
