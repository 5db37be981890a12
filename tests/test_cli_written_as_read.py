"""A CSV output is written as its input was -- separator, decimal mark, byte-order mark, a
spreadsheet's ``sep=;`` line, line endings -- for one file (``--out``) and many
(``--out-dir``) alike: read back the way the input is read, it has the input's columns, header
text and cells, and the filtered ones beside them. It was UTF-8 without a byte-order mark and
with ``\\n`` endings, the ``sep=`` line dropped and, for one file, commas unless the cells had
decimal commas: Excel showed ``Â°C`` in the header and, where its list separator is ';', every
row in one column."""

import codecs
import gzip

import numpy as np
import pandas as pd
import pytest

#: (name, encoding, sep, decimal, sep= line, line ending): files as programs save them
FORMS = [
    ("excel-de", "utf-8-sig", ";", ",", True, "\r\n"),  # Excel's "CSV UTF-8" in Germany
    ("excel-points", "utf-8-sig", ";", ".", False, "\r\n"),  # ';' with decimal points
    ("excel-comma", "utf-8-sig", ",", ".", True, "\r\n"),
    ("unicode-text", "utf-16", "\t", ",", False, "\r\n"),  # Excel's "Unicode text"
    ("plain", "utf-8", ",", ".", False, "\n"),
]
BOMS = {"utf-8-sig": codecs.BOM_UTF8, "utf-16": codecs.BOM_UTF16_LE, "utf-8": b""}


def _write_input(path, encoding, sep, decimal, sep_line, newline):
    rng = np.random.default_rng(1)
    lines = [f"sep={sep}"] if sep_line else []
    lines.append(sep.join(["time", "T °C", "Höhe m", "note"]))
    for i in range(60):
        t, h = 20 + np.sin(i / 6) + rng.normal(0, 0.1), 400 + i / 8
        cells = [f"{i / 10:.1f}", f"{t:.3f}", f"{h:.3f}", "ok"]
        lines.append(sep.join(c.replace(".", decimal) for c in cells))
    path.write_bytes((newline.join(lines) + newline).encode(encoding))


def _read(path, encoding, sep, decimal, sep_line):
    return pd.read_csv(path, sep=sep, decimal=decimal, encoding=encoding,
                       skiprows=1 if sep_line else 0)  # fmt: skip


@pytest.mark.parametrize("run", ["out", "out.gz", "out-dir"])
@pytest.mark.parametrize("form", FORMS, ids=[f[0] for f in FORMS])
def test_the_output_reads_back_as_the_input_does(cli_in_process, tmp_path, form, run):
    _, encoding, sep, decimal, sep_line, newline = form
    _write_input(tmp_path / "in.csv", *form[1:])
    if run == "out-dir":
        (tmp_path / "od").mkdir()
        args, written = ["--out-dir", "od"], tmp_path / "od" / "in.csv"
    else:
        name = "out.csv.gz" if run == "out.gz" else "out.csv"
        args, written = ["--out", name], tmp_path / name
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", *args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    given = _read(tmp_path / "in.csv", encoding, sep, decimal, sep_line)
    out = _read(written, encoding, sep, decimal, sep_line)
    names = ["time", "T °C", "Höhe m", "note", "T °C_filtered", "Höhe m_filtered"]
    assert list(out.columns) == names
    pd.testing.assert_frame_equal(out[given.columns], given)
    data = written.read_bytes()
    data = gzip.decompress(data) if run == "out.gz" else data
    assert data.startswith(BOMS[encoding]) and data.startswith(codecs.BOM_UTF8) == (
        encoding == "utf-8-sig"
    )
    body = data.decode(encoding)
    assert body.startswith(f"sep={sep}{newline}") == sep_line
    assert body.count(newline) == body.count("\n") == sep_line + 1 + 60  # each line so


def test_a_tsv_output_of_a_semicolon_input_drops_the_sep_line_that_says_otherwise(
    cli_in_process, tmp_path
):
    _write_input(tmp_path / "in.csv", "utf-8-sig", ";", ",", True, "\r\n")
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", "-o", "out.tsv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = (tmp_path / "out.tsv").read_bytes()
    assert data.startswith(codecs.BOM_UTF8 + "time\tT °C".encode())
    out = pd.read_csv(tmp_path / "out.tsv", sep="\t", decimal=",", encoding="utf-8-sig")
    assert out.columns[-1] == "Höhe m_filtered"


def test_standard_output_keeps_the_separator_but_no_byte_order_mark_or_sep_line(
    cli_in_process, tmp_path
):
    # a pipe's next program reads text: a BOM or a sep= line would be taken for its first cell
    _write_input(tmp_path / "in.csv", "utf-8-sig", ";", ".", True, "\r\n")
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("time;T °C;Höhe m;note;T °C_filtered;Höhe m_filtered\n")


def test_a_zip_output_is_one_member_named_and_dated_as_pandas_writes_it(cli_in_process, tmp_path):
    # written member by member here (its sep= line first), the member was dated 1980-01-01
    import datetime
    import zipfile

    _write_input(tmp_path / "in.csv", "utf-8-sig", ";", ",", True, "\r\n")
    r = cli_in_process("filter", "in.csv", "-m", "moving_average", "-o", "out.csv.zip",
                       cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(tmp_path / "out.csv.zip") as archive:
        (member,) = archive.infolist()
    assert member.filename == "out.csv" and member.compress_type == zipfile.ZIP_DEFLATED
    assert abs(datetime.datetime(*member.date_time) - datetime.datetime.now()).days < 1
    out = _read(tmp_path / "out.csv.zip", "utf-8-sig", ";", ",", True)
    assert out.columns[-1] == "Höhe m_filtered"


def test_a_zip_output_member_is_opened_for_zip64_so_it_may_pass_2_gib(tmp_path, monkeypatch):
    # written as a stream, its size unknown at the start: zipfile refuses a member that then
    # passes 2 GiB unless opened with force_zip64 (checked here on a small table)
    import zipfile

    from tssdpa.data.csv_output import write_csv

    opened = []
    plain_open = zipfile.ZipFile.open

    def recording_open(archive, name, mode="r", pwd=None, *, force_zip64=False):
        opened.append((mode, force_zip64))
        return plain_open(archive, name, mode, pwd, force_zip64=force_zip64)

    monkeypatch.setattr(zipfile.ZipFile, "open", recording_open)
    frame = pd.DataFrame({"time": [0, 1], "a": [0.5, 1.5]})
    write_csv(frame, tmp_path / "o.csv.zip", ",", {"method": "zip", "archive_name": "o.csv"})
    assert opened == [("w", True)]
    monkeypatch.undo()
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "o.csv.zip"), frame)


@pytest.mark.parametrize(("name", "encoding", "sep", "decimal", "sep_line", "newline"), FORMS)
def test_reading_a_csv_gives_what_its_output_is_written_with_from_the_one_read_of_its_head(
    tmp_path, name, encoding, sep, decimal, sep_line, newline
):
    # its byte-order mark, sep= line and line endings came from a second read of the file's
    # head (csv_output.text_form) after read_csv_file had read it
    from tssdpa.data.csv_files import read_csv_file

    path = tmp_path / f"{name}.csv"
    _write_input(path, encoding, sep, decimal, sep_line, newline)
    attrs = read_csv_file(path).attrs
    bom = None if encoding == "utf-8" else encoding
    assert (attrs["sep"], attrs.get("decimal", ".")) == (sep, decimal)
    assert (attrs["bom"], attrs["sep_line"], attrs["newline"]) == (bom, sep_line, newline)
