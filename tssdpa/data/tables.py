"""A user's table of samples: reading a CSV / Parquet log, finding its time column, and
taking its numeric columns as a (T, C) array -- the one set of rules ``tssdpa filter`` (one
file) and :mod:`tssdpa.batch` (many files) share.

Every function raises ``ValueError`` saying what is wrong and what to do; the command line
turns it into its one-line message.
"""

from __future__ import annotations

import csv
import lzma
import re
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.checks import (
    ISO_CELL,
    TIME_NAMES,
    UNIT_IN_NAME,
    named_as_times,
    times_of_column,
    to_seconds,
)
from tssdpa.data.csv_files import cells_as_read, compression, read_csv_file
from tssdpa.data.csv_numbers import as_numbers
from tssdpa.data.csv_output import write_csv
from tssdpa.data.text_dates import is_numbered_dates, parse_dates
from tssdpa.files import OTHER_FORMATS, WRITTEN, check_table_name, replacing, table_format

__all__ = [
    "TIME_NAMES",
    "check_new_columns",
    "column_named",
    "column_values",
    "date_order_note",
    "find_time_column",
    "numeric_columns",
    "read_table",
    "sampling_note",
    "skipped_note",
    "time_order_note",
    "write_table",
]

#: seconds per unit of a time column's numbers, by the unit in its name (``t_ns``,
#: ``time (ms)``); any other name's numbers are seconds
_SECONDS_PER = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "min": 60.0,
                "mins": 60.0, "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0,
                "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0, "d": 86400.0, "day": 86400.0,
                "days": 86400.0}  # fmt: skip


def seconds_per_unit(name) -> float:
    """Seconds per unit of the numbers in a time column named ``name``: ``t_ns`` and ROS's
    ``%time`` (epoch nanoseconds) 1e-9, ``timestamp_ms`` and ``time (ms)`` 1e-3, ``t (min)``
    60, ...; 1 for seconds and for a name that gives no unit."""
    text = str(name).strip()
    if text.lower() == "%time":  # rostopic echo -p: nanoseconds since the epoch
        return 1e-9
    unit = None
    named = TIME_NAMES.match(text)
    if named and named[3]:
        unit = named[3]
    bracket = UNIT_IN_NAME.search(text)
    if bracket:
        unit = bracket[1]
    return _SECONDS_PER.get((unit or "").lower(), 1.0)


def _first_line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_table(path) -> pd.DataFrame:
    """A CSV (comma, semicolon or tab separated, header row) or Parquet file as a DataFrame;
    a CSV's separator is in ``df.attrs["sep"]`` (:func:`~tssdpa.data.csv_files.read_csv_file`
    reads it as it is laid out).

    Parquet is read with pyarrow (no pickled objects are ever loaded); an index stored in the
    file (a ``DatetimeIndex``, a time index, a MultiIndex's levels) comes back as ordinary
    leading columns, so that it is found as the time column and written out again. A CSV's
    columns are its header's: a trailing separator on the data rows does not shift them, and
    the names of columns with an empty header (a saved index, a trailing separator on every
    line) are in ``df.attrs["unnamed"]``, never picked for filtering on their own. Raises
    ``ValueError`` naming the file and what is wrong with it.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "log.csv")
    >>> _ = open(p, "w").write("time;a\\n0;1.5\\n1;2.5\\n")
    >>> read_table(p).columns.tolist()
    ['time', 'a']
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{path} is a folder; give a CSV or Parquet file")
    if not p.is_file():
        raise ValueError(f"{path}: no such file")
    inner = table_format(p)[0]
    if inner in OTHER_FORMATS:  # an .xlsx: "'utf-8' codec can't decode byte 0xf9"
        raise ValueError(f"{path}: no {inner} file is read here; save it as {WRITTEN}")
    if p.suffix.lower() in (".parquet", ".pq"):
        try:
            df = pd.read_parquet(p, engine="pyarrow")
        except ImportError:
            raise ValueError(
                "reading Parquet needs pyarrow: pip install 'tssdpa[distributed]'"
            ) from None
        except Exception as exc:  # noqa: BLE001 -- pyarrow raises several types for bad files
            why = _first_line(exc)
            raise ValueError(f"{path} is not a readable Parquet file ({why})") from None
        if _stored_index(p, df.index):
            df = df.reset_index()  # pyarrow restored a stored index: keep it as columns
        df.attrs = {}  # pandas restores a writer's attrs (another CSV's read options)
    else:
        try:
            df = read_csv_file(p)
        except pd.errors.EmptyDataError:
            raise ValueError(f"{path} is empty; expected a header row and data rows") from None
        except UnicodeDecodeError as exc:  # a spreadsheet's plain "CSV": Windows-1252
            if "utf-8" not in exc.encoding.lower().replace("_", "-"):  # a broken UTF-16 file
                raise ValueError(f"{path} is not a readable CSV file: not {exc.encoding} after "
                                 f"its byte-order mark ({exc.reason})") from None  # fmt: skip
            raise ValueError(f"{path} is not a readable CSV file: not UTF-8 (byte "
                             f"{exc.object[exc.start]:#04x}: Latin-1 / Windows-1252?); save it "
                             "as UTF-8 ('CSV UTF-8' in a spreadsheet; iconv -f cp1252 -t utf-8)"
                             ) from None  # fmt: skip
        except (pd.errors.ParserError, csv.Error, EOFError, OSError, zipfile.BadZipFile,
                lzma.LZMAError, tarfile.TarError, ImportError) as exc:  # fmt: skip
            raise ValueError(f"{path} is not a readable CSV file ({_first_line(exc)})") from None
    if len(df) == 0:
        raise ValueError(f"{path} has a header but no data rows")
    return df


def _stored_index(p: Path, index: pd.Index) -> bool:
    """Whether a Parquet file's ``index`` is data to keep: stored as a column and named or
    not integers (an unnamed integer index is the row numbers a filtered frame kept), or a
    named RangeIndex other than 0, 1, ... (evenly spaced epoch nanoseconds ``t_ns``, which
    pandas stores as a range)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(p).pandas_metadata or {}
    stored = meta.get("index_columns", [])
    if any(isinstance(c, str) for c in stored):
        return any(n is not None for n in index.names) or not pd.api.types.is_integer_dtype(index)
    # a RangeIndex: row numbers (0, 1, ...) or, named and evenly spaced elsewhere, data
    return any(c.get("name") is not None and (c.get("start"), c.get("step")) != (0, 1)
               for c in stored if isinstance(c, dict))  # fmt: skip


def find_time_column(df: pd.DataFrame, name=None):
    """The column of sample times: ``name`` when given, else the first column named like
    :data:`TIME_NAMES` (``time``, ``Time (s)``, ``timestamp``, ...) or holding datetimes, else
    the first holding text dates (as a CSV has them: ISO 8601, or day and month as numbers
    such as 01/05/2026, :mod:`~tssdpa.data.text_dates`); None when there is none."""
    if name is not None:
        if name not in df.columns:
            raise ValueError(f"{name!r} is not a column of the file (its columns: "
                             f"{list(df.columns)})")  # fmt: skip
        return name
    for c in df.columns:
        if pd.api.types.is_datetime64_any_dtype(df[c]):
            return c
        if named_as_times(c, df[c]):
            return c
    # text dates only where no column is named as times: a 'run_date' of one value ahead of
    # 't' took the time role from it, and 't' was filtered as a signal
    return next((c for c in df.columns if _text_dates(df[c]) or is_numbered_dates(df[c])), None)


def _text_dates(column: pd.Series) -> bool:
    """Whether a text column holds ISO 8601 dates (``2026-05-01T12:00:00.25``, with or without
    a zone): a CSV keeps its datetime column as text, which was not found as the time column
    (its first 20 values are looked at, each a date with its ``-`` and ``:`` or ``-`` only)."""
    if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return False
    head = column.dropna().head(20)
    if head.empty or not all(isinstance(v, str) and ISO_CELL.match(v.strip()) for v in head):
        return False
    return not pd.to_datetime(head, format="ISO8601", errors="coerce", utc=True).isna().any()


def sample_times(est, df: pd.DataFrame, time_column):
    """The time column's values as the ``timestamps`` of a filter whose decay is a time
    constant (``est.tau`` set), in seconds (numbers in the unit the column's name gives,
    :func:`seconds_per_unit`); None for any other filter. ``ValueError`` where the table has
    no time column, or one that is not numbers or dates, or not finite and in order."""
    if getattr(est, "tau", None) is None:
        return None
    if time_column is None:
        raise ValueError("tau (a time constant) needs the sample times: the file has no "
                         "time column; name it with --time-column")  # fmt: skip
    from tssdpa.signal.lagfilter import check_sample_times

    t = _time_values(df, time_column)
    scale = seconds_per_unit(time_column)
    if scale != 1.0 and np.issubdtype(t.dtype, np.number):  # t_ns: tau is in seconds
        t = t.astype(np.float64) * scale
    check_sample_times(t, len(t), name=f"time column {time_column!r}")
    times_of_column(time_column)  # advice on their unit: name it in the column's name
    return t


#: a step this many times the median step between rows is a gap worth telling (a dropout)
GAP_STEPS = 10


def sampling_note(df: pd.DataFrame, time_column, reader: str = "the filter") -> str | None:
    """What the time column shows that a filter taking the rows as equally spaced does not
    see -- repeated times, steps backwards, gaps of ``GAP_STEPS`` median steps or more --
    or None (none of them, or times that are no numbers or dates). ``reader``: what takes
    the rows so ("the comparison" for ``tssdpa compare``, which runs no filter by name)."""
    if time_column is None:
        return None
    try:
        t = to_seconds(_parsed_times(df, time_column), "time column")
    except (ValueError, TypeError):
        return None
    steps = np.diff(t)
    steps = steps[np.isfinite(steps)]
    if steps.size == 0:
        return None
    told = []
    for count, what in ((int((steps == 0).sum()), "repeated time(s)"),
                        (int((steps < 0).sum()), "step(s) backwards")):  # fmt: skip
        if count:
            told.append(f"{count} {what}")
    typical = float(np.median(steps))
    if typical > 0 and steps.max() >= GAP_STEPS * typical:
        gaps = int((steps >= GAP_STEPS * typical).sum())
        told.append(f"{gaps} gap(s) of {GAP_STEPS} or more median steps (the longest "
                    f"{steps.max() / typical:.0f})")  # fmt: skip
    if not told:
        return None
    return (f"time column {time_column!r} has {', '.join(told)}: {reader} takes the rows as "
            "equally spaced")  # fmt: skip


def date_order_note(df: pd.DataFrame, time_column) -> str | None:
    """Which order a time column of dates like 01/05/2026 was read in, where both parse
    (:func:`~tssdpa.data.text_dates.parse_dates`), or that neither order is more likely; None
    for any other time column."""
    if time_column is None or pd.api.types.is_numeric_dtype(df[time_column]):
        return None
    try:
        return parse_dates(df[time_column], time_column)[1]
    except ValueError as exc:  # copied through as it is: the order matters to no filter
        return str(exc)


def _time_values(df: pd.DataFrame, time_column) -> np.ndarray:
    """:func:`_parsed_times`, ``ValueError`` also at the first step backwards (a log
    concatenated out of order; the filter's own check names no row)."""
    values = _parsed_times(df, time_column)
    back = _step_back(values, time_column)
    if back:
        raise ValueError(back)
    return values


def _step_back(values: np.ndarray, time_column, advice: str = "sort the rows by time, or "
               "drop the repeated stretch") -> str | None:  # fmt: skip
    """What the first step backwards of the times ``values`` is, with ``advice``, or None
    where there is none."""
    steps = np.diff(values)
    with np.errstate(invalid="ignore"):  # NaN / NaT: the filter's check names them
        back = np.flatnonzero(steps < steps.dtype.type(0))
    if not back.size:
        return None
    i = int(back[0])
    return (f"time column {time_column!r} steps backwards at data row {i + 2} "
            f"({values[i + 1]} after {values[i]}): {advice}")  # fmt: skip


#: rows are out of time order (newest first, shuffled) where more than this share of the
#: steps, and more than OUT_OF_ORDER_STEPS of them, go back; fewer are a clock set back --
#: local times at the end of daylight saving time repeat an hour, a logger restarted -- in
#: rows that are in order (one step back in the 99 steps of a 100-row file is over 1%)
OUT_OF_ORDER_SHARE, OUT_OF_ORDER_STEPS = 0.01, 2


def time_order_note(df: pd.DataFrame, time_column) -> tuple[str | None, bool]:
    """``(note, out_of_order)``: the first step backwards of the time column, or None (none,
    no time column, or times that are no numbers or dates: nothing to tell an order by), and
    whether the rows are out of time order (more than ``OUT_OF_ORDER_SHARE`` of the steps and
    more than ``OUT_OF_ORDER_STEPS`` go back) rather than a clock set back in rows in order."""
    if time_column is None:
        return None, False
    try:
        values = _parsed_times(df, time_column)
    except (ValueError, TypeError):
        return None, False
    with np.errstate(invalid="ignore"):
        steps = np.diff(values)
        back = int(np.sum(steps < steps.dtype.type(0)))
    if back > max(OUT_OF_ORDER_STEPS, OUT_OF_ORDER_SHARE * steps.size):
        return _step_back(values, time_column), True
    return _step_back(values, time_column, "a clock set back (as local times repeat an hour "
                      "at the end of daylight saving time)? The rows are taken in file "
                      "order"), False  # fmt: skip


def _parsed_times(df: pd.DataFrame, time_column) -> np.ndarray:
    """The time column as numbers or datetime64 (text dates parsed, as UTC), ``ValueError``
    naming the first row that is neither."""
    t = df[time_column]
    if not pd.api.types.is_datetime64_any_dtype(t) and not pd.api.types.is_numeric_dtype(t):
        # text dates (a CSV keeps them text); UTC, as the filter takes them: offsets may
        # differ across a daylight-saving change
        t, _ = parse_dates(t, time_column)  # 01/05/2026: day-first where so it reads
        if t.isna().any():
            row = int(np.flatnonzero(t.isna().to_numpy())[0]) + 1
            cell = df[time_column].iloc[row - 1]
            raise ValueError(f"time column {time_column!r}: data row {row} ({cell!r}) is no "
                             "number or date")  # fmt: skip
    if isinstance(t.dtype, pd.DatetimeTZDtype):  # zone-aware: as plain UTC datetimes
        t = t.dt.tz_convert("UTC").dt.tz_localize(None)
    if isinstance(t.dtype, pd.api.extensions.ExtensionDtype):  # Int64 with a blank
        t = pd.Series(t.to_numpy(dtype=np.float64, na_value=np.nan))
    return t.to_numpy()


def numeric_columns(
    df: pd.DataFrame, columns=None, time_column=None, targets=()
) -> tuple[list, list]:
    """The columns to filter and the ones skipped: ``(columns, skipped)``.

    ``columns`` given: those (each must exist and be neither the time column nor one of the
    ``targets``, the clean references a supervised fit is scored against), nothing skipped.
    Otherwise every numeric column with a finite value but those, and the other columns
    (text, true / false flags, a sensor that logged nothing) as skipped. A string for
    ``columns`` or ``targets`` is one column's name (``"gyro"`` was the columns g, y, r, o).
    """
    columns = [columns] if isinstance(columns, str) else columns
    targets = [targets] if isinstance(targets, str) else targets
    if columns is not None:
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise ValueError(f"{missing} not in the file (its columns: {list(df.columns)})")
        if time_column is not None and time_column in columns:
            raise ValueError(f"{time_column!r} is the time column; it is not filtered")
        # a column named twice was filtered (and fitted, compared) as two channels, its
        # outputs written to one "<name>_filtered" column
        twice = sorted({c for c in columns if list(columns).count(c) > 1})
        if twice:
            raise ValueError(f"{twice} named twice; name each column once")
        both = [c for c in columns if c in targets]
        if both:
            raise ValueError(f"{both} given as --target too: a column is not its own reference")
        return list(columns), []
    unnamed = df.attrs.get("unnamed", [])  # a saved index or a trailing separator: copied
    rest = [c for c in df.columns if c != time_column and c not in targets and c not in unnamed]
    cols = [c for c in rest if pd.api.types.is_numeric_dtype(df[c])
            and not pd.api.types.is_bool_dtype(df[c])]  # fmt: skip
    finite = [
        c for c in cols if np.isfinite(df[c].to_numpy(dtype=np.float64, na_value=np.nan)).any()
    ]
    cols = finite if finite else cols  # none finite: column_values says so, naming them
    if not cols:
        raise ValueError(f"no numeric column to filter (columns: {list(df.columns)}"
                         f"{_first_text(df, rest)})")  # fmt: skip
    return cols, [c for c in rest if c not in cols] + [c for c in unnamed if c in df.columns]


def _first_text(df: pd.DataFrame, columns) -> str:
    """``"; 'a' holds '12.5 V' in data row 1"``: the first cell that is no number in the column
    of ``columns`` with the most cells that are (the one meant as numbers: a unit in its cells,
    a number format not read, not a column of labels), which tells why no column was numeric;
    ``""`` where there is none."""
    best = None
    for c in columns:
        n_numbers, rows = _text_cells(df, c)
        if rows.size and (best is None or n_numbers > best[0]):
            best = (n_numbers, c, int(rows[0]))
    if best is None:
        return ""
    _, c, row = best
    cell = str(df[c].iloc[row])
    shown = cell if len(cell) <= 40 else cell[:37] + "..."
    return f"; {c!r} holds {shown!r} in data row {row + 1}"


def _text_cells(df: pd.DataFrame, c) -> tuple[int, np.ndarray]:
    """How many cells of the column ``c`` of ``df`` are numbers (read with the file's decimal
    mark: :func:`~tssdpa.data.csv_numbers.as_numbers`), and the rows of the cells that are
    neither a number nor empty; ``(0, [])`` for a column of true / false values."""
    cells = df[c]
    if pd.api.types.is_bool_dtype(cells):
        return 0, np.empty(0, dtype=np.intp)
    numbers = as_numbers(cells, df.attrs.get("decimal", "."))
    return int(numbers.notna().sum()), np.flatnonzero((numbers.isna() & cells.notna()).to_numpy())


def column_named(message: str, cols) -> str:
    """An estimator's error ``message`` about its input's channel ("x channel 1 reaches
    magnitude ...") told by the name of the column it is, of ``cols`` ("column 'b' ...")."""
    return re.sub(r"^(x|y) channel (\d+)", lambda m: f"column {cols[int(m[2])]!r}", message)


def skipped_note(skipped, df: pd.DataFrame) -> str:
    """What ``tssdpa filter`` and a batch run tell of the columns of ``df`` that
    :func:`numeric_columns` skipped (a non-empty list), with the first cell that is no number
    in each column of numbers but for a few cells: a logger's ``ERR`` in one cell of thousands
    left the sensor out of the output, and only the column was named."""
    note = ("skipped column(s) of text or true / false values, with no finite value or with "
            f"no name {skipped}")  # fmt: skip
    for c in skipped:
        if c not in df.columns:
            continue
        n_numbers, rows = _text_cells(df, c)
        if rows.size and n_numbers > rows.size:  # mostly numbers: a stray cell
            row = int(rows[0])
            cell = str(df[c].iloc[row])[:40]
            note += (f"; {c!r} holds {cell!r} in data row {row + 1}, its other cells numbers: "
                     "fix or empty that cell to filter the column")  # fmt: skip
    return note


def column_values(df: pd.DataFrame, cols, what: str = "column") -> tuple[np.ndarray, int, int]:
    """Columns ``cols`` as a (T, C) float64 array with ``inf`` turned into NaN (a sensor
    glitch, treated as a missing sample), and the counts ``(x, n_nan, n_inf)`` of missing and
    infinite cells. A text cell, or a column with no finite value, raises ``ValueError``
    naming it (``what`` says what the columns are, e.g. ``"--target column"``)."""
    x = np.empty((len(df), len(cols)))
    for i, c in enumerate(cols):
        v = pd.to_numeric(df[c], errors="coerce")
        bad = v.isna() & df[c].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(
                f"{what} {c!r} is not numeric: {df[c].iloc[row]!r} in data row {row + 1}; "
                "clean the file or choose other columns"
            )
        x[:, i] = v.to_numpy(dtype=np.float64, na_value=np.nan)  # Int64 with blanks too
    n_inf, n_nan = int(np.isinf(x).sum()), int(np.isnan(x).sum())
    x[np.isinf(x)] = np.nan
    empty = [c for c, e in zip(cols, np.isnan(x).all(axis=0)) if e]
    if empty:
        raise ValueError(f"{what}(s) {empty} have no finite value")
    return x, n_nan, n_inf


def check_new_columns(df: pd.DataFrame, names, how: str) -> None:
    """``ValueError`` where an output column in ``names`` is already among ``df``'s columns:
    it would be overwritten without a word; ``how`` says how to avoid it."""
    clash = [n for n in names if n in df.columns]
    if clash:
        raise ValueError(f"output column(s) {clash} already in the table: {how}")


def write_table(df: pd.DataFrame, target) -> None:
    """Write ``df`` to ``target`` -- Parquet for a ``.parquet`` / ``.pq`` name, else CSV as
    its input was written (:func:`~tssdpa.data.csv_output.write_csv`: its separator,
    ``df.attrs["sep"]``, but tabs for a ``.tsv`` name; its decimal mark, byte-order mark,
    ``sep=`` line and line endings), the compression its name asks for (``.gz``) and the
    columns it copied from a CSV input as they were read
    (:func:`~tssdpa.data.csv_files.cells_as_read`) -- through :func:`~tssdpa.files.replacing`:
    a failed write (a full disk) leaves no half-written file and any earlier file at
    ``target`` untouched. ``ValueError`` for a name of another format
    (:func:`check_table_name`)."""
    check_table_name(target)
    with replacing(target) as tmp:
        if Path(target).suffix.lower() in (".parquet", ".pq"):
            plain = df.copy(deep=False)
            plain.attrs = {}  # the input's attrs, which pandas would store in the file
            try:
                plain.to_parquet(tmp, engine="pyarrow", index=False)
            except ImportError:
                raise ValueError(
                    "writing Parquet needs pyarrow: pip install 'tssdpa[distributed]'"
                ) from None
        else:
            tsv = table_format(target)[0] == ".tsv"  # (.tsv.gz too): whatever the input's
            sep = "\t" if tsv else df.attrs.get("sep", ",")
            write_csv(cells_as_read(df), tmp, sep, compression(target))
