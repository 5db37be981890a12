"""A user's CSV file read as it is laid out, and its cells written back as they were.

* :func:`read_csv_file`: the separator (',' ';' or tab, :func:`separator`), the layout of
  its rows (:func:`row_layout`: a trailing separator, R's row names, or rows whose fields do
  not line up with the header -- refused, never shifted), decimal commas (``1.234,5``),
  integers with blanks read exactly (:mod:`~tssdpa.data.csv_numbers`);
* :func:`cells_as_read`: a table read so, its copied columns as the file's text again;
* :func:`compression`: the compression a file name asks for.

pandas alone reads such files silently wrong: a data row with one field more than the header
makes every row's first field the index and shifts each column one place left; R's
``write.table`` with an all-``NA`` last column looked like a trailing separator; a ';' file
whose header holds a comma was read with commas.
"""

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import io
import lzma
import os
import re
import warnings
import zipfile
from pathlib import Path

import pandas as pd

from tssdpa.data.csv_numbers import decimal_comma_file, exact_integers, grouped_thousands

__all__ = [
    "cells_as_read",
    "check_text",
    "compression",
    "declared_separator",
    "open_bytes",
    "read_csv_file",
    "row_layout",
    "separator",
    "text_encoding",
]

SEPARATORS = (",", ";", "\t")
SNIFF_ROWS = 200  # rows read to choose the separator
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}


def compression(path) -> str | dict | None:
    """The compression pandas should write ``path`` with, from its name (``None``: plain)."""
    name = Path(path).name
    method = _COMPRESSIONS.get(Path(path).suffix.lower())
    if method == "zip":  # the archive's member: the name without .zip
        return {"method": "zip", "archive_name": name[:-4]}
    return method


def open_bytes(p: Path):
    """The file's bytes, decompressed by its suffix; ``None`` for a compression read here by
    pandas alone (:func:`_readable_here`, a zip archive of other than one file)."""
    if not _readable_here(p):
        return None
    suffix = p.suffix.lower()
    if suffix in (".gz", ".bz2", ".xz"):
        return {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}[suffix](p, "rb")
    if suffix == ".zip":
        archive = zipfile.ZipFile(p)
        members = archive.namelist()
        if len(members) != 1:
            archive.close()
            return None  # pandas says what is wrong with it
        return archive.open(members[0])  # the archive: closed by gc
    return open(p, "rb")  # noqa: SIM115 -- closed by the caller's with


#: byte-order marks of the encodings read besides UTF-8 (UTF-32's first: it starts as UTF-16's)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))  # fmt: skip


def _open_text(p: Path):
    """The file as text (UTF-8, or UTF-16 / UTF-32 with a byte-order mark, as a spreadsheet's
    "Unicode text" is saved; a BOM dropped, newlines as written: csv's reader needs them),
    decompressed by its suffix; ``None`` for a compression read here by pandas alone."""
    raw = open_bytes(p)
    if raw is None:
        return None
    head = raw.read(4)
    raw.seek(0)
    return io.TextIOWrapper(raw, encoding=text_encoding(head), newline="")


def text_encoding(head: bytes) -> str:
    """The encoding of a text that starts with the bytes ``head``: by its byte-order mark,
    else UTF-8 (``utf-8-sig``: a UTF-8 BOM dropped)."""
    return next((e for bom, e in _BOMS if head.startswith(bom)), "utf-8-sig")


#: the first bytes of files that are no text, by what they are
_NOT_TEXT = {
    b"PAR1": "a Parquet file: name it .parquet",
    b"PK\x03\x04": "a zip archive (an Excel workbook?): save the sheet as CSV",
    b"\xd0\xcf\x11\xe0": "an Excel 97-2003 workbook (.xls): save the sheet as CSV",
}
_HEAD_BYTES = 1 << 16  # bytes looked at for NUL characters and the first line


def check_text(p: Path) -> tuple[str, dict]:
    """The encoding of the CSV ``p`` (:func:`text_encoding`) and what its text holds besides
    its cells, written back as it was (:func:`~tssdpa.data.csv_output.write_csv`):
    ``{"bom": ..., "sep_line": ..., "newline": ...}`` -- the encoding that writes its
    byte-order mark (``"utf-8-sig"``, ``"utf-16"``, ``"utf-32"``; ``None``: none), whether
    its first line is ``sep=;`` (:func:`declared_separator`) and its first line's ending
    (``"\\r\\n"`` or ``"\\n"``); ``("utf-8-sig", {})`` for a file read by pandas alone (a
    ``.tar`` or ``.zst`` archive). ``ValueError`` where its first bytes show it is no CSV
    text: a Parquet file or a workbook under a CSV's name, or NUL characters (UTF-16 text
    without its byte-order mark, whose names came out as ``t\\x00i\\x00m\\x00e``; a binary
    file)."""
    raw = open_bytes(p)
    if raw is None:
        return "utf-8-sig", {}
    with raw:
        head = raw.read(_HEAD_BYTES)
    for magic, what in _NOT_TEXT.items():
        if head.startswith(magic):
            raise ValueError(f"{p} is {what}")
    encoding = text_encoding(head)
    text = head.decode(encoding, errors="replace")
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ValueError(f"{p} is not a readable CSV file: line {line} holds NUL characters "
                         "(UTF-16 text without its byte-order mark, or no text); save it as "
                         "UTF-8 CSV")  # fmt: skip
    if head.startswith(codecs.BOM_UTF8):
        bom = "utf-8-sig"
    else:
        bom = None if encoding == "utf-8-sig" else encoding  # UTF-16 / 32: read by their mark
    first = text.split("\n", 1)[0]
    sep_line = _declared(re.match(r"[^\r\n]*", text)[0]) is not None  # as readline ends it
    return encoding, {"bom": bom, "sep_line": sep_line,
                      "newline": "\r\n" if first.endswith("\r") else "\n"}  # fmt: skip


def leading_comments(p: Path) -> int:
    """How many lines at the top of ``p`` are a logger's comments (``# rate 100 Hz``) and blank
    lines before its header, to be skipped: 0 where there are none, or where the last ``#``
    line has as many fields as the numbers after it (it was the header, ``# time,a``: refused
    as data). A header of numbers (``400,410,420``, a spectrometer's wavelengths) under one
    comment line is a header: the comment's field count is not its.
    """
    handle = _open_text(p)
    if handle is None:
        return 0
    count, last, declared = 0, None, 0
    with handle:
        for line in handle:
            if count == 0 and _declared(line) is not None:  # sep=; (skipped)
                count = declared = 1
                continue
            text = line.strip()
            if text and not text.startswith("#"):
                return declared if last is None or _commented_header(last, text) else count
            count, last = count + 1, (text or last)
    return declared


#: the first line a spreadsheet writes to declare a CSV's separator: ``sep=;``
_SEP_LINE = re.compile(r'"?sep=([^\r\n"])"?')


def declared_separator(p: Path) -> str | None:
    """The separator a first line ``sep=;`` declares (Excel writes and reads it), or None: it
    was read as the header, whose columns ``sep=`` and ``Unnamed: 1`` held no number."""
    handle = _open_text(p)
    if handle is None:
        return None
    with handle:
        return _declared(handle.readline())


def _declared(line: str) -> str | None:
    """The separator the first ``line`` of a file declares (``sep=;``), or None."""
    found = _SEP_LINE.fullmatch(line.rstrip("\r\n"))
    return found[1] if found else None


def _commented_header(comment: str, row: str) -> bool:
    """Whether the ``#`` line ``comment`` is the header of the data ``row`` after it: split by
    one of the separators, as many names as the row has cells, every cell a number (or empty,
    NaN, quoted: ``# time;a`` over ``0,5;1``, decimal commas, splits by ';' alone)."""
    for sep in SEPARATORS:
        cells = [c.strip().strip('"').strip() for c in row.split(sep)]
        names = comment.lstrip("#").split(sep)
        numbers = all(not c or c.lower() in ("nan", "na") or _NUMBER.fullmatch(c) for c in cells)
        if len(cells) >= 2 and len(names) == len(cells) and numbers:
            return True
    return False


def _rows(p: Path, sep: str, limit: int | None = None):
    """Each non-blank row's ``(line number, fields)`` (csv's reader, pandas' quoting rules;
    cells of any length) after the :func:`leading_comments`, the first ``limit`` rows only
    where given; nothing where the file is not read here (:func:`_open_text`). A generator: a
    whole file is never held."""
    skip = leading_comments(p)
    handle = _open_text(p)
    if handle is None:
        return
    for _ in range(skip):
        handle.readline()
    limit_before = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)  # pandas reads a cell of any length
    try:
        with handle:
            reader = csv.reader(handle, delimiter=sep)
            count = 0
            for fields in reader:
                if fields and any(f.strip() for f in fields):  # pandas skips blank lines
                    yield reader.line_num + skip, fields
                    count += 1
                    if limit is not None and count >= limit:
                        return
    finally:
        csv.field_size_limit(limit_before)


#: a cell that is a number, with a decimal point or comma
_NUMBER = re.compile(r"\s*[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?\s*")


def separator(p: Path) -> str:
    """The separator a first line ``sep=;`` declares (:func:`declared_separator`), else
    ',', ';' or tab: of those whose first :data:`SNIFF_ROWS` rows have at least 2 fields in
    the header and no data row more than one more (a row name or a trailing separator; fewer
    are cells left off, a logger's cut last line), the one whose data rows hold the most
    numbers, then the most fields in the header; the first of them on a tie, ',' where none
    fits. A ';' file's cells may hold commas ("left, right", decimal commas) and its header too
    ("time;speed, m/s" splits in two either way: its rows "0;10,84" are numbers with ';')."""
    if not _readable_here(p):
        return _pandas_separator(p)
    declared = declared_separator(p)
    if declared is not None:
        return declared
    best, score = ",", None
    for sep in SEPARATORS:
        rows = [f for _, f in _rows(p, sep, SNIFF_ROWS)]
        if not rows:
            return ","
        n, data = len(rows[0]), rows[1:]
        if n < 2 or any(len(f) > n + 1 for f in data):
            continue
        numbers = sum(_NUMBER.fullmatch(c) is not None for f in data for c in f)
        if score is None or (numbers, n) > score:
            best, score = sep, (numbers, n)
    return best


def _readable_here(p: Path) -> bool:
    """Whether :func:`_open_text` reads ``p`` (a tar archive, .zst: pandas alone)."""
    name = p.name.lower()
    return not name.endswith((".zst", ".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz"))


def _pandas_separator(p: Path) -> str:
    """The separator of a file read by pandas alone: ',' unless its header, read so, is one
    name that ';' or tabs split (into more names: the more)."""
    header = str(pd.read_csv(p, nrows=1).columns[0]) if p.stat().st_size else ""
    splits = {sep: len(header.split(sep)) for sep in (";", "\t")}
    sep = max(splits, key=splits.get)
    return sep if splits[sep] > 1 else ","


def row_layout(p: Path, sep: str) -> tuple[str, list[str]]:
    """``(layout, header)``: how the data rows of the CSV ``p`` line up with its ``header``'s
    fields -- ``"plain"`` (as many or fewer: the missing ones are blank), ``"trailing"`` (one
    more, empty, in some rows: a trailing separator), ``"row names"`` (one more in every row,
    not all empty: R's ``write.table``, whose header does not name its row names) -- and
    ``ValueError`` naming the first row that fits none (pandas made its first field every
    row's index and shifted the columns one place left). ``("plain", [])`` where the file is
    not read here. One pass over the rows, none of them kept."""
    rows = _rows(p, sep)
    header = next(rows, (0, []))[1]
    n = len(header)
    n_data = n_longer = 0
    trailing = names = True  # every longer row: one more field, empty / one more field
    first_bad = first_longer = None  # (line, fields): of more than one more / of one more
    for line, f in rows:
        n_data += 1
        if len(f) > n:
            n_longer += 1
            if first_longer is None:
                first_longer = (line, len(f))
            trailing = trailing and len(f) == n + 1 and f[-1] == ""
            if len(f) != n + 1:
                names = False
                first_bad = first_bad or (line, len(f))
    if not n_longer:
        return "plain", header
    if trailing:
        return "trailing", header
    if names and n_longer == n_data:
        return "row names", header
    line, k = first_bad or first_longer
    raise ValueError(f"{p}: line {line} has {k} fields, the header {n}: a separator in a cell "
                     "that is not quoted? Quote that cell or fix the row")  # fmt: skip


def read_csv_file(p: Path) -> pd.DataFrame:
    """The CSV ``p`` as a DataFrame, laid out as :func:`row_layout` says, its separator in
    ``attrs["sep"]``, its decimal mark in ``attrs["decimal"]`` where it is a comma, its text's
    byte-order mark, ``sep=`` line and line endings (:func:`check_text`), the names
    its header leaves empty in ``attrs["unnamed"]``, and what :func:`cells_as_read` needs to
    read its cells again in ``attrs["csv_text"]``. ``ValueError`` for a name the header gives
    twice (pandas renamed the second ``a`` to ``a.1``, which the output then carried)."""
    encoding, form = check_text(p)
    sep = separator(p)
    layout, header = row_layout(p, sep)
    kw = {} if sep == "," else dict(sep=sep)
    if encoding != "utf-8-sig":  # UTF-16 / UTF-32 with a byte-order mark
        kw["encoding"] = encoding
    skip = leading_comments(p)  # "# logger v1.2" lines: "line 3 has 2 fields, the header 1"
    if skip:
        kw["skiprows"] = skip
    if layout == "trailing":
        kw["index_col"] = False  # else pandas takes the first column for the index
    with warnings.catch_warnings():  # a trailing separator: rows longer than the header
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        df = pd.read_csv(p, **kw)
        if sep != "," and decimal_comma_file(df, sep):
            kw["decimal"] = ","
            df = grouped_thousands(pd.read_csv(p, **kw), ",")
            df.attrs["decimal"] = ","  # written back so: the file stays one a spreadsheet reads
        else:
            df = grouped_thousands(df, ".")
        if len(df.columns):
            df = exact_integers(df, lambda: pd.read_csv(p, dtype=str, **kw))
    stat = os.stat(p)
    df.attrs["csv_text"] = (str(p), kw, (stat.st_size, stat.st_mtime_ns))
    df.attrs["sep"] = sep  # tssdpa.batch writes its outputs with the input's separator
    df.attrs.update(form)  # its byte-order mark, sep= line, line endings: written back
    names = header  # as written: pandas renames them (R's row names have no name there)
    if len(names) == df.shape[1]:
        df.attrs["unnamed"] = [c for c, n in zip(df.columns, names) if not n.strip()]
    _check_header_is_names(p, names if names else [str(c) for c in df.columns])
    stripped = [n.strip() for n in names]
    twice = sorted({n for n in stripped if n and stripped.count(n) > 1})
    if twice:
        spaced = " once the spaces around them are dropped" if len(set(names)) == len(names) else ""
        raise ValueError(f"{p}: column name(s) {twice} appear more than once in the header"
                         f"{spaced}; rename them")  # fmt: skip
    return _stripped_names(df)


def _stripped_names(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the spaces around its column names dropped: ``time, a, b`` (a space after
    each comma) named its columns ' a' and ' b', and ``--columns a`` found none."""
    names = {c: c.strip() for c in df.columns if isinstance(c, str) and c != c.strip()}
    if not names:
        return df
    df = df.rename(columns=names)
    df.attrs["unnamed"] = [names.get(c, c) for c in df.attrs.get("unnamed", [])]
    return df


def _check_header_is_names(p: Path, names: list[str]) -> None:
    """``ValueError`` where every name in the header row of ``p`` is a number and some have a
    decimal point, sign or exponent: the file has no header, and its first sample was taken for
    the column names -- dropped from the data, and the time column, named by no time name,
    filtered as a signal. Whole numbers are names: years, wavelengths, channel numbers, the
    names pandas gives a frame's columns (``0,1,2``: ``DataFrame(a).to_csv(index=False)``)."""
    if not names or not all(_NUMBER.fullmatch(n) for n in names):
        return
    if all(n.strip().isdigit() for n in names):
        return
    shown = ", ".join(n.strip() for n in names[:4]) + (", ..." if len(names) > 4 else "")
    raise ValueError(f"{p}: the first row ({shown}) looks like data, not column names: add a "
                     "header row naming the columns (e.g. time,a)")  # fmt: skip


def cells_as_read(out: pd.DataFrame, written=()) -> pd.DataFrame:
    """``out`` -- a table :func:`read_csv_file` read, with the columns ``written`` added or
    overwritten -- with each of its other columns as the file's text, cell for cell (pandas
    writes what it parsed: ``true`` as ``True``, ``2.50`` as ``2.5``, ``NaN`` as an empty cell)
    and their names as the header has them, less the spaces around them (an empty one, not
    pandas' ``Unnamed: 2``). A table
    not read from a CSV (Parquet keeps its types) is returned as it is; ``ValueError`` where
    the file changed since it was read (a logger still writing it)."""
    source = out.attrs.get("csv_text")
    if source is None:
        return out
    path, kw, seen = source
    try:
        stat = os.stat(path)
    except OSError:
        stat = None
    if stat is None or (stat.st_size, stat.st_mtime_ns) != tuple(seen):
        raise ValueError(f"{path} changed while it was filtered (a logger still writing it?); "
                         "its columns cannot be copied as they were read -- run again on a "
                         "copy that stays put")  # fmt: skip
    with warnings.catch_warnings():  # a trailing separator: warned of when first read
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        text = _stripped_names(pd.read_csv(path, dtype=str, keep_default_na=False, **kw))
    written = set(written)
    copied = [c for c in out.columns if c in text.columns and c not in written]
    out = out.copy()
    del out.attrs["csv_text"]  # copied: a second call leaves it as it is
    for c in copied:
        out[c] = text[c].to_numpy()  # by position: an R row-name index is read as text there
    unnamed = [c for c in out.attrs.get("unnamed", []) if c in copied]
    return out.rename(columns=dict.fromkeys(unnamed, "")) if unnamed else out
