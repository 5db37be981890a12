"""What the command line says of a file it would otherwise read wrong without a word: a CSV
with no header row, whose first sample was taken for the column names."""

import numpy as np
import pandas as pd
import pytest

from tssdpa.cli import main


def _rows(n=60):
    t = np.arange(n) * 0.01
    return "".join(f"{ti:.2f},{np.sin(ti * 9):.4f}\n" for ti in t)


def test_filter_refuses_a_csv_without_a_header_row_in_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "nohdr.csv").write_text(_rows())
    monkeypatch.chdir(tmp_path)
    assert main(["filter", "nohdr.csv", "--method", "moving_average", "--out", "o.csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "the first row (0.00, 0.0000) looks like data, not column names" in err
    assert "add a header row" in err
    assert not (tmp_path / "o.csv").exists()


def test_filter_reads_a_csv_whose_header_names_the_columns(tmp_path, monkeypatch):
    (tmp_path / "hdr.csv").write_text("time,a\n" + _rows())
    monkeypatch.chdir(tmp_path)
    assert main(["filter", "hdr.csv", "--method", "moving_average", "--out", "o.csv"]) == 0
    assert len(pd.read_csv(tmp_path / "o.csv")) == 60


@pytest.mark.parametrize("header", ["0,1", "0,1,2", "2019,2020", "450,550,650", "1,2,3"])
def test_filter_reads_a_header_of_whole_numbers_as_names(tmp_path, monkeypatch, header):
    # DataFrame(array).to_csv(index=False) names the columns 0, 1, ...; years, wavelengths and
    # channel numbers are names too: only a decimal point, sign or exponent says data
    n = len(header.split(","))
    rows = "".join(
        ",".join([f"{np.sin(i / 7 + c):.4f}" for c in range(n)]) + "\n" for i in range(60)
    )
    (tmp_path / "pd.csv").write_text(header + "\n" + rows)
    monkeypatch.chdir(tmp_path)
    assert main(["filter", "pd.csv", "--method", "moving_average", "--out", "o.csv"]) == 0
    assert len(pd.read_csv(tmp_path / "o.csv")) == 60


@pytest.mark.parametrize(
    "name", ["seconds", "secs", "elapsed_s", "Elapsed Time (s)", "stamp", "epoch_ms"]
)
def test_time_column_is_found_by_common_logger_names(name):
    from tssdpa.data.tables import find_time_column

    df = pd.DataFrame({"gyro": [0.1, 0.2, 0.3], name: [0.0, 0.01, 0.02]})
    assert find_time_column(df) == name


@pytest.mark.parametrize(
    "name", ["time_constant", "seconds_left", "stamp_count", "epochs", "sector", "T (degC)"]
)
def test_time_column_is_not_a_signal_whose_name_starts_like_a_time(name):
    from tssdpa.data.tables import find_time_column

    df = pd.DataFrame({"gyro": [0.1, 0.2, 0.3], name: [0.0, 0.01, 0.02]})
    assert find_time_column(df) is None


def test_filter_copies_a_seconds_column_through_unfiltered(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.csv").write_text("seconds,a\n" + _rows())
    monkeypatch.chdir(tmp_path)
    assert main(["filter", "s.csv", "--method", "moving_average", "--out", "o.csv"]) == 0
    out = pd.read_csv(tmp_path / "o.csv")
    assert "seconds_filtered" not in out.columns and "a_filtered" in out.columns
    assert "time column 'seconds' copied through" in capsys.readouterr().err
