"""The shapes a user's table comes in, read and written by ``tssdpa filter``: what is in the
file's columns comes out in the same columns, nothing the user did not ask for is filtered,
and no input file or earlier output is ever overwritten or left half-written."""

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.cli import main
from tssdpa.data.tables import read_table

FIXED = '{"window": [3], "embedding": [1], "degree": [0]}'  # a fast fit


def _rows(n=40):
    t = np.arange(n)
    return t * 0.01, np.sin(t / 5), np.cos(t / 7)


def test_a_trailing_separator_on_the_data_rows_keeps_every_column_in_its_place(tmp_path):
    t, a, b = _rows()
    lines = ["time,gx,gy"] + [f"{ti},{float(ai)!r},{float(bi)!r}," for ti, ai, bi in zip(t, a, b)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    args = ["filter", str(tmp_path / "log.csv"), "--columns", "gx", "--params", FIXED]
    assert main([*args, "--out", str(out)]) == 0
    res = pd.read_csv(out)
    assert list(res.columns) == ["time", "gx", "gy", "gx_filtered"]
    np.testing.assert_array_equal(res["time"], t)  # pandas took the time as the index: gone
    np.testing.assert_array_equal(res["gx"], a)
    np.testing.assert_array_equal(res["gy"], b)


@pytest.mark.parametrize("layout", ["saved index", "trailing separator everywhere"])
def test_a_column_with_no_name_is_copied_through_and_not_filtered(tmp_path, layout, capsys):
    t, a, b = _rows()
    if layout == "saved index":
        pd.DataFrame({"a": a, "b": b}).to_csv(tmp_path / "log.csv")  # header ",a,b"
    else:
        lines = ["a,b,"] + [f"{float(ai)!r},{float(bi)!r}," for ai, bi in zip(a, b)]
        (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    assert main(["filter", str(tmp_path / "log.csv"), "--params", FIXED, "--out", str(out)]) == 0
    res = pd.read_csv(out)
    assert [c for c in res.columns if c.endswith("_filtered")] == ["a_filtered", "b_filtered"]
    assert "with no name" in capsys.readouterr().err
    # the same fit on a and b alone: the unnamed column took no part in it
    alone = tmp_path / "alone.csv"
    pd.DataFrame({"a": a, "b": b}).to_csv(alone, index=False)
    assert main(["filter", str(alone), "--params", FIXED, "--out", str(tmp_path / "o2.csv")]) == 0
    np.testing.assert_array_equal(res["a_filtered"], pd.read_csv(tmp_path / "o2.csv")["a_filtered"])


def test_a_parquet_files_index_comes_back_as_columns_and_can_be_the_time_column(tmp_path):
    pytest.importorskip("pyarrow")
    t, a, _ = _rows()
    when = pd.date_range("2024-01-01", periods=len(a), freq="10ms", name="ts")
    pd.DataFrame({"a": a}, index=when).to_parquet(tmp_path / "log.parquet")
    assert list(read_table(tmp_path / "log.parquet").columns) == ["ts", "a"]
    out = tmp_path / "out.parquet"
    args = ["filter", str(tmp_path / "log.parquet"), "--params", '{"tau": 0.05, "sigma": 1.0}']
    assert main([*args, "--out", str(out)]) == 0  # tau: the index is the sample times
    res = pd.read_parquet(out)  # a Parquet file, as its name says (it was CSV text)
    assert list(res.columns) == ["ts", "a", "a_filtered"]
    pd.testing.assert_series_equal(res["ts"], when.to_series(index=res.index), check_freq=False)


def test_a_failed_write_leaves_the_earlier_output_whole(tmp_path, monkeypatch, capsys):
    t, a, _ = _rows()
    pd.DataFrame({"time": t, "a": a}).to_csv(tmp_path / "log.csv", index=False)
    out = tmp_path / "out.csv"
    out.write_text("an earlier result\n")

    def half_then_fail(self, handle, *args, **kwargs):
        handle.write("time,a\n0.0,")  # a partial file, then the disk fills up
        raise OSError("No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)
    assert main(["filter", str(tmp_path / "log.csv"), "--params", FIXED, "--out", str(out)]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert out.read_text() == "an earlier result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.csv", "out.csv"]


def test_the_batch_summary_never_overwrites_an_input(tmp_path, capsys):
    t, a, _ = _rows()
    (tmp_path / "logs").mkdir()
    (tmp_path / "out").mkdir()
    log = tmp_path / "logs" / "log0.csv"
    pd.DataFrame({"time": t, "a": a}).to_csv(log, index=False)
    before = log.read_bytes()
    args = ["filter", str(log), "--out-dir", str(tmp_path / "out"), "--summary", str(log)]
    assert main([*args, "--params", FIXED, "--no-progress"]) == 2
    assert "--summary" in capsys.readouterr().err
    assert log.read_bytes() == before


def test_a_repeated_header_name_in_a_compressed_csv_is_refused_as_in_a_plain_one(tmp_path):
    # the header was read from the gzip bytes as text: "a,a" became "a" and "a.1", unnoticed
    import gzip

    (tmp_path / "log.csv.gz").write_bytes(gzip.compress(b"a,a,b\n1,2,3\n4,5,6\n"))
    with pytest.raises(ValueError, match=r"\['a'\] appear more than once"):
        read_table(tmp_path / "log.csv.gz")


@pytest.mark.parametrize(
    "name, is_time",
    [("T (degC)", False), ("t [degC]", False), ("t (s)", True), ("Time (s)", True),
     ("timestamp [ms]", True), ("time (UTC)", True), ("T", True), ("Date Time", True)],
)  # fmt: skip
def test_a_name_like_t_is_the_time_column_unless_its_unit_is_not_one_of_time(name, is_time):
    # Jena climate's temperature "T (degC)" was taken for the time column and not filtered
    from tssdpa.data.tables import find_time_column

    df = pd.DataFrame({name: [1.0, 2.0], "x": [0.5, 0.7]})
    assert find_time_column(df) == (name if is_time else None)


@pytest.mark.parametrize("last", ["b", "an all-NA column"])
def test_row_names_the_header_does_not_name_are_dropped_not_shifted_into_the_columns(
    tmp_path, last
):
    # R's write.table(sep=","): each data row starts with its name; index_col=False read the
    # names as "time" and shifted every column by one. With an all-NA last column the rows
    # looked like a trailing separator (NA read as missing), and were shifted so again
    t, a, b = _rows()
    na = last != "b"
    lines = ['"time","a","b"' + (',"c"' if na else "")] + [
        f'"{i + 1}",{ti},{ai!r},{bi!r}' + (",NA" if na else "")
        for i, (ti, ai, bi) in enumerate(zip(t, map(float, a), map(float, b)))
    ]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    df = read_table(tmp_path / "log.csv")
    assert list(df.columns) == ["time", "a", "b"] + (["c"] if na else [])
    np.testing.assert_array_equal(df["time"], t)
    np.testing.assert_array_equal(df["b"], b)


@pytest.mark.parametrize("how", ["named row numbers", "rows left after a filter"])
def test_a_parquet_files_row_numbers_are_not_a_column(tmp_path, how):
    pytest.importorskip("pyarrow")
    _, a, _ = _rows()
    df = pd.DataFrame({"a": a})
    if how == "named row numbers":
        df.index.name = "sample"
    else:
        df = df[df["a"] > -0.5]  # an Int64 index of the rows kept
    df.to_parquet(tmp_path / "log.parquet")
    assert list(read_table(tmp_path / "log.parquet").columns) == ["a"]


def test_a_trailing_separator_after_an_integer_first_column_keeps_the_columns(tmp_path):
    # pandas reads an index of 0, 1, 2, ... back as a RangeIndex: taken for its own row
    # numbers, the shifted read was kept (t held x, x was empty)
    lines = ["t,x"] + [f"{i},{0.5 + i}," for i in range(30)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    df = read_table(tmp_path / "log.csv")
    assert list(df.columns) == ["t", "x"]
    np.testing.assert_array_equal(df["t"], np.arange(30))
    np.testing.assert_array_equal(df["x"], 0.5 + np.arange(30))


def test_a_named_integer_parquet_index_is_kept_even_when_evenly_spaced(tmp_path):
    # epoch nanoseconds, evenly spaced: pandas stores them as a range, and they were dropped
    pytest.importorskip("pyarrow")
    t_ns = 1_700_000_000_000_000_000 + 10_000_000 * np.arange(5)
    pd.DataFrame({"t_ns": t_ns, "x": np.arange(5.0)}).set_index("t_ns").to_parquet(
        tmp_path / "log.parquet"
    )
    df = read_table(tmp_path / "log.parquet")
    assert list(df.columns) == ["t_ns", "x"]
    np.testing.assert_array_equal(df["t_ns"], t_ns)


def test_an_integer_column_with_a_blank_cell_is_copied_digit_for_digit(tmp_path):
    """pandas reads integers with an empty cell as float64: nanosecond times were written
    rounded to 17 digits (1.7333000001234568e+18) and counts as 3.0; they are read as exact
    nullable integers now, copied as written, and still filtered as numbers when asked."""
    t0, n = 1733300000123456789, 40
    times = ["" if i == 7 else str(t0 + i * 10_000_001) for i in range(n)]
    counts = ["" if i == 3 else str(i * 3) for i in range(n)]
    lines = ["t_ns,gx,count"] + [f"{t},{float(np.sin(i / 5))!r},{c}"
                                 for i, (t, c) in enumerate(zip(times, counts))]  # fmt: skip
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    args = ["filter", str(tmp_path / "log.csv"), "--params", FIXED, "--out", str(out)]
    assert main([*args, "--columns", "gx"]) == 0
    rows = [line.split(",") for line in out.read_text().splitlines()[1:]]
    assert [r[0] for r in rows] == times and [r[2] for r in rows] == counts
    assert main([*args, "--columns", "gx", "count"]) == 0  # a column of them, filtered
    res = pd.read_csv(out)  # the blank is a missing sample, estimated from the others
    assert np.isnan(res["count"][3]) and np.isfinite(res["count_filtered"]).all()


def test_integers_past_int64_or_an_inf_beside_a_blank_stay_floats_without_a_word(tmp_path, capsys):
    """Columns the exact-integer reading cannot hold: a number past int64 (an OverflowError,
    exit 1) and an inf (a RuntimeWarning from its remainder on every run); read as floats,
    and copied as their text."""
    n = ["99999999999999999999999" if i == 0 else "" if i == 3 else str(i) for i in range(40)]
    m = ["inf" if i == 0 else "" if i == 4 else str(i) for i in range(40)]
    lines = ["time;a;n;m"] + [f"{i};{float(np.sin(i / 5))!r};{n[i]};{m[i]}" for i in range(40)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    args = ["filter", str(tmp_path / "log.csv"), "--columns", "a", "--params", FIXED]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert main([*args, "--out", str(out)]) == 0
    rows = [line.split(";") for line in out.read_text().splitlines()[1:]]
    assert [r[2] for r in rows] == n and [r[3] for r in rows] == m  # copied as written


@pytest.mark.parametrize("to", ["file", "stdout"])
def test_every_column_not_filtered_is_copied_as_its_text(tmp_path, capsys, to):
    """pandas writes what it parsed: ``true`` came out as ``True``, ``2.50`` as ``2.5``,
    ``1e3`` as ``1000.0`` and a ``NaN`` cell as an empty one. The columns the command does not
    write are now copied as the file has them, cell for cell (a ';' file is written with
    ';', as it was read); the filtered column is written as numbers."""
    n = 40
    time = [f"{i / 100:.3f}" for i in range(n)]
    flag = ["true" if i % 3 else "FALSE" for i in range(n)]
    temp = ["NaN" if i == 5 else "1e3" if i == 6 else f"{20 + i / 4:.2f}" for i in range(n)]
    note = ['"left, right"' if i == 2 else "ok" for i in range(n)]
    gx = [repr(float(np.sin(i / 5))) for i in range(n)]
    rows = zip(time, flag, temp, note, gx)
    (tmp_path / "log.csv").write_text(
        "\n".join(["time;flag;temp;note;gx"] + [";".join(r) for r in rows]) + "\n"
    )
    args = ["filter", str(tmp_path / "log.csv"), "--columns", "gx", "--inplace", "--params", FIXED]
    out = tmp_path / "out.csv"
    assert main([*args, "--out", str(out)] if to == "file" else args) == 0
    written = out.read_text() if to == "file" else capsys.readouterr().out
    lines = written.splitlines()
    assert lines[0] == "time;flag;temp;note;gx"
    cells = [line.rsplit(";", 1)[0] for line in lines[1:]]  # all but the filtered gx
    assert cells == [";".join(r[:3] + (r[3].strip('"'),)) for r in zip(time, flag, temp, note)]
    res = pd.read_csv(out if to == "file" else __import__("io").StringIO(written), sep=";")
    assert np.isfinite(res["gx"]).all() and not np.allclose(res["gx"], [float(v) for v in gx])


def test_a_spreadsheet_export_with_decimal_commas_is_read_as_numbers_and_written_so(tmp_path):
    """Much of Europe's spreadsheets write ``20,5`` with ';' between cells: such columns were
    text, skipped ("no numeric column"). They are numbers now, and the output keeps the
    file's format (';' and decimal commas) so that the same spreadsheet reads it."""
    n = 40
    temp = [f"{20 + np.sin(i / 5):.3f}".replace(".", ",") for i in range(n)]
    count = [str(i) for i in range(n)]
    note = ["a, b" if i == 2 else "ok" for i in range(n)]
    lines = ["time;temp;count;note"] + [f"{i};{a};{c};{d}" for i, (a, c, d) in
                                       enumerate(zip(temp, count, note))]  # fmt: skip
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    df = read_table(tmp_path / "log.csv")
    np.testing.assert_allclose(df["temp"], [float(v.replace(",", ".")) for v in temp])
    out = tmp_path / "out.csv"
    args = ["filter", str(tmp_path / "log.csv"), "--columns", "temp", "--params", FIXED]
    assert main([*args, "--out", str(out)]) == 0
    written = out.read_text().splitlines()
    assert written[0] == "time;temp;count;note;temp_filtered"
    assert [line.rsplit(";", 1)[0] for line in written[1:]] == lines[1:]
    res = pd.read_csv(out, sep=";", decimal=",")
    assert res["temp_filtered"].dtype == np.float64 and np.isfinite(res["temp_filtered"]).all()


def test_a_tab_file_whose_header_holds_a_comma_is_read_with_tabs(tmp_path):
    # the comma reading found two columns ("time\tspeed", " m/s\ttemp") and filtered those
    lines = ["time\tspeed, m/s\ttemp"] + [f"{i}\t{np.sin(i / 5):.4f}\t{20 + i}" for i in range(40)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    df = read_table(tmp_path / "log.csv")
    assert list(df.columns) == ["time", "speed, m/s", "temp"] and df.attrs["sep"] == "\t"


def test_an_empty_column_name_is_written_empty_and_a_gz_output_is_compressed(tmp_path):
    # the output's header read "Unnamed: 1" (pandas' name), and --out log.csv.gz wrote plain
    # text under a .gz name, which nothing could read back
    lines = ["time,,a"] + [f"{i},x{i},{float(np.sin(i / 5))!r}" for i in range(40)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv.gz"
    args = ["filter", str(tmp_path / "log.csv"), "--params", FIXED, "--out", str(out)]
    assert main(args) == 0
    import gzip

    written = gzip.decompress(out.read_bytes()).decode().splitlines()
    assert written[0] == "time,,a,a_filtered"
    assert [w.rsplit(",", 1)[0] for w in written[1:]] == lines[1:]
    assert list(read_table(out).columns[-2:]) == ["a", "a_filtered"]


@pytest.mark.parametrize("name", ["t_ns", "timestamp_ms", "%time", "Time_s"])
def test_a_time_column_with_its_unit_in_its_name_is_the_time_column(tmp_path, name):
    # "t_ns" (the library's own examples) and ROS's "%time" were filtered as a data channel
    from tssdpa.data.tables import find_time_column

    df = pd.DataFrame({name: np.arange(5), "a": np.arange(5.0)})
    assert find_time_column(df) == name
    assert find_time_column(pd.DataFrame({"t_motor": [1.0], "temp": [2.0]})) is None


def test_a_file_changed_while_it_was_filtered_is_not_copied_from(tmp_path):
    # its copied columns were taken from the new file beside outputs computed from the old
    from tssdpa.data.csv_files import cells_as_read

    p = tmp_path / "log.csv"
    p.write_text("time,a\n0,1.0\n1,2.0\n")
    df = read_table(p)
    assert cells_as_read(df)["a"].tolist() == ["1.0", "2.0"]
    with open(p, "a") as f:
        f.write("2,3.0\n")  # a logger still writing it
    with pytest.raises(ValueError, match="log.csv changed while it was filtered"):
        cells_as_read(df)


def test_a_column_a_sensor_left_empty_is_skipped_and_reported_unless_asked_for(tmp_path, capsys):
    # it stopped the whole file: "column(s) ['c'] have no finite value", though a and b were fine
    lines = ["time,a,c,b"] + [f"{i},{float(np.sin(i / 5))!r},,{i % 7}" for i in range(40)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    args = ["filter", str(tmp_path / "log.csv"), "--params", FIXED, "--out", str(out)]
    assert main(args) == 0
    assert list(pd.read_csv(out).columns) == ["time", "a", "c", "b", "a_filtered", "b_filtered"]
    assert "with no finite value or with no name ['c']" in capsys.readouterr().err
    assert main([*args, "--columns", "c"]) == 2
    assert "['c'] have no finite value" in capsys.readouterr().err


@pytest.mark.parametrize("sep", [";", "\t"])
def test_commas_in_a_column_beside_decimal_points_are_text_not_decimal_commas(tmp_path, sep):
    # a ';' file's pin pairs "1,2" (or a tab file's thousands "1,037") switched the whole file
    # to decimal commas: that column was filtered as 1.2, the real numbers skipped as text
    cells = [f"1,{i % 9 + 1}" if sep == ";" else f"1,{i:03d}" for i in range(30)]
    lines = [sep.join(["time", "a", "pins"])]
    lines += [sep.join([str(i), f"{np.sin(i / 4):.3f}", c]) for i, c in enumerate(cells)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    df = read_table(tmp_path / "log.csv")
    assert df["a"].dtype == np.float64 and df["pins"].tolist() == cells
    assert "decimal" not in df.attrs


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_semicolon_file_with_short_rows_is_read_with_its_separator(tmp_path, sep):
    # one row with cells left off, or a logger's cut last line, made ';' and tabs fail the
    # separator's check: the header came out as one column, "no numeric column"
    lines = [sep.join(["time", "a", "b"])] + [
        sep.join([str(i), f"{np.sin(i / 4):.3f}", f"{np.cos(i / 4):.3f}"]) for i in range(60)
    ]
    lines[10] = sep.join(["9", "0.5"])
    lines.append(sep.join(["60", "0.1"]))
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    df = read_table(tmp_path / "log.csv")
    assert list(df.columns) == ["time", "a", "b"] and df.attrs["sep"] == sep
    assert np.isnan(df["b"].iloc[9]) and np.isnan(df["b"].iloc[-1]) and df["a"].iloc[-1] == 0.1


def test_a_parquet_output_of_a_csv_is_filtered_again(tmp_path):
    # pandas stored the CSV's read options in the Parquet file; read back, its copied columns
    # were refused as "changed while it was filtered"
    pytest.importorskip("pyarrow")
    lines = ["time,a,b"] + [f"{i},{np.sin(i / 4):.3f},{i}" for i in range(40)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    args = ["--params", FIXED, "--columns", "a"]
    assert (
        main(["filter", str(tmp_path / "log.csv"), *args, "--out", str(tmp_path / "a.parquet")])
        == 0
    )
    assert read_table(tmp_path / "a.parquet").attrs == {}
    assert main(["filter", str(tmp_path / "a.parquet"), *args, "--suffix", "_2",
                 "--out", str(tmp_path / "b.csv")]) == 0  # fmt: skip
    assert list(pd.read_csv(tmp_path / "b.csv").columns) == ["time", "a", "b", "a_filtered", "a_2"]


def test_row_names_with_a_name_given_twice_are_refused_and_long_cells_read(tmp_path):
    # R's row names moved the duplicate check one name on: "a","b","a" was read as a, b, a.1
    rows = [f'"{i + 1}",{i},{np.sin(i / 4):.3f},{i % 3}' for i in range(30)]
    (tmp_path / "r.csv").write_text('"a","b","a"\n' + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"\['a'\] appear more than once"):
        read_table(tmp_path / "r.csv")
    # a cell past csv's 131,072 characters was refused (names that differ by a space are
    # one name given twice: test_cli_review)
    lines = ["time,a, b,note"] + [
        f"{i},{i},{i},{'x' * (200_000 if i == 3 else 1)}" for i in range(9)
    ]
    (tmp_path / "long.csv").write_text("\n".join(lines) + "\n")
    assert list(read_table(tmp_path / "long.csv").columns) == ["time", "a", "b", "note"]


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_file_whose_rows_mostly_leave_off_a_last_cell_keeps_its_separator(tmp_path, sep):
    # most rows without their optional last cell made ';' and tabs fail the sniff: one column
    lines = [sep.join(["t", "a", "b", "event"])]
    lines += [sep.join([str(i), f"{np.sin(i / 4):.3f}", str(i % 3)]) for i in range(20)]
    lines.append(sep.join(["20", "1", "2", "start"]))
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    df = read_table(tmp_path / "log.csv")
    assert list(df.columns) == ["t", "a", "b", "event"] and df["event"].iloc[-1] == "start"


@pytest.mark.parametrize("sep", [";", "\t"])
def test_decimal_commas_under_a_header_with_a_comma_split_on_the_files_separator(tmp_path, sep):
    # "time;speed, m/s" and "0;10,84" split in two with commas too: the comma reading won the
    # tie and filtered the digits after the decimal comma as a column " m/s" (exit 0)
    speeds = [f"{10 + np.sin(i / 4):.2f}".replace(".", ",") for i in range(30)]
    lines = [f"time{sep}speed, m/s"] + [f"{i}{sep}{v}" for i, v in enumerate(speeds)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    df = read_table(tmp_path / "log.csv")
    assert list(df.columns) == ["time", "speed, m/s"] and df.attrs["sep"] == sep
    np.testing.assert_allclose(df["speed, m/s"], [float(v.replace(",", ".")) for v in speeds])


def test_a_semicolon_file_in_a_tar_archive_is_read_with_semicolons(tmp_path):
    # a tar archive is read by pandas alone; the sniff gave ',' without looking: one column
    import tarfile

    (tmp_path / "data.csv").write_text(
        "time;a;b\n" + "".join(f"{i};{i / 2};{i % 3}\n" for i in range(20))
    )
    with tarfile.open(tmp_path / "data.csv.tar", "w") as tar:
        tar.add(tmp_path / "data.csv", arcname="data.csv")
    assert list(read_table(tmp_path / "data.csv.tar").columns) == ["time", "a", "b"]
