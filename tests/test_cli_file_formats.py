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
