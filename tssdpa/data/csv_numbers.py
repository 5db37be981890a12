"""Numbers in a user's CSV as a spreadsheet writes them: decimal commas (``0,5``), thousands
grouped by points, spaces or commas (``1.234,5``, ``1 234,5``, ``1,234.5``), integers with
blank cells -- each read as the number it is, in one place for the reader of a file
(:func:`~tssdpa.data.csv_files.read_csv_file`) and the note telling a column's stray cell
(:func:`as_numbers`).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = ["as_numbers", "decimal_comma_file", "exact_integers", "grouped_thousands"]


def _is_text(column: pd.Series) -> bool:
    return column.dtype == object or pd.api.types.is_string_dtype(column.dtype)


#: a number written with a decimal comma (a spreadsheet's export in much of Europe): "1,5",
#: its thousands perhaps grouped by points or spaces: "1.234,5", "1 234,5"
#: (never a first group with a leading 0: "0,125" is a decimal comma, "0.000" a time)
_THOUSANDS = r"[1-9]\d{0,2}((\.\d{3})+|([ \u00a0\u202f]\d{3})+)"  # by points or spaces
_DECIMAL_COMMA = re.compile(rf"\s*[+-]?(({_THOUSANDS}|\d+),\d*|,\d+)([eE][+-]?\d+)?\s*")
#: by the decimal mark, an integer whose thousands are grouped by the other mark, a decimal
#: mark after it or not: "1.234.567", "1.234,5" (not "01.05.2026", a date); "1,234.5" (a
#: spreadsheet writes a CSV's cells as they are shown)
_GROUPED_BY = {",": re.compile(rf"\s*[+-]?{_THOUSANDS}(,\d*)?\s*"),
               ".": re.compile(r"\s*[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?\s*")}  # fmt: skip
_GROUPED = _GROUPED_BY[","]
_MARKS = re.compile(r"[.,\s]")  # the marks a grouped number shows (no-break spaces are \s)
#: a number with a decimal point
_DECIMAL_POINT = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def decimal_comma_file(df: pd.DataFrame, sep: str) -> bool:
    """Whether the table read with decimal points is one written with decimal commas: a text
    column at least is all integers and numbers with a decimal comma -- in a tab file not all
    with 3 digits after it (``1,000``: a thousands separator as much; ';' is a decimal-comma
    spreadsheet's) -- and no column is numbers with a decimal point (a text column of ``1,2``
    pin numbers beside them is text)."""
    for c in df.columns:
        v = df[c]
        if pd.api.types.is_float_dtype(v.dtype):
            finite = v.to_numpy(dtype=np.float64, na_value=np.nan)
            finite = finite[np.isfinite(finite)]
            if np.any(finite != np.round(finite)):
                return False  # decimal points
    return any(_decimal_commas(df[c], sep == ";") for c in df.columns if _is_text(df[c]))


def _decimal_commas(cells: pd.Series, thousands_too: bool) -> bool:
    """Whether every non-empty cell of a text column is an integer (its thousands grouped by
    points or not) or a number with a decimal comma, and one at least has the comma (unless
    ``thousands_too``, with other than 3 digits after it)."""
    text = cells.dropna().astype(str)
    found = text.map(_DECIMAL_COMMA.fullmatch)
    commas = found.map(lambda m: m is not None)
    if not len(text) or not commas.any():
        return False
    integers = text.map(lambda v: bool(_INTEGER.fullmatch(v) or _GROUPED.fullmatch(v)))
    fraction = found[commas].map(lambda m: len(m[1].split(",")[1]))
    return bool((commas | integers).all() and (thousands_too or (fraction != 3).any()))


def grouped_thousands(df: pd.DataFrame, decimal: str) -> pd.DataFrame:
    """``df``, read with the ``decimal`` mark, with each text column of numbers some of which
    group their thousands by the other mark (``1.234,5``, ``1,234.5``; the others such as
    ``980,5`` or ``12``) as float64: they were text, skipped (pandas' ``thousands="."`` read
    a date ``01.05.2026`` as 1052026). One cell at least must show two marks (both, or two
    groups): a column of ``1,037`` may be decimal commas (a ',' file's ``"0,125"`` quoted, as
    pandas writes ``decimal=","``), ``1.000`` a time in seconds, ``120 080`` two numbers, and
    each stays text."""
    grouping = _GROUPED_BY[decimal]
    plain = _DECIMAL_COMMA if decimal == "," else _DECIMAL_POINT
    for c in df.columns:
        if not _is_text(df[c]):
            continue
        text = df[c].dropna().astype(str)
        grouped = text.map(lambda v: grouping.fullmatch(v) is not None)
        other = text.map(lambda v: bool(plain.fullmatch(v) or _INTEGER.fullmatch(v)))
        shown = text[grouped].map(lambda v: len(_MARKS.findall(v.strip())) > 1).any()
        if grouped.any() and (grouped | other).all() and shown:
            df[c] = pd.to_numeric(_point_decimals(df[c], decimal)).astype(np.float64)
    return df


#: a thousands mark by the decimal mark a file writes: one between a digit and three digits
_THOUSANDS_MARK = {",": re.compile(r"(?<=\d)[.\s](?=\d{3}(?!\d))"),
                   ".": re.compile(r"(?<=\d),(?=\d{3}(?!\d))")}  # fmt: skip


def _point_decimals(cells: pd.Series, decimal: str) -> pd.Series:
    """Text ``cells`` of numbers written with the ``decimal`` mark, their thousands grouped
    by the other (``1.234,5``, ``1 234,5``; ``1,234.5``), as pd.to_numeric reads them
    (``1234.5``)."""
    text = cells.str.strip().str.replace(_THOUSANDS_MARK[decimal], "", regex=True)
    return text.str.replace(",", ".", regex=False) if decimal == "," else text


def as_numbers(cells: pd.Series, decimal: str) -> pd.Series:
    """``cells`` as numbers (NaN where a cell is none), each text cell read with the file's
    ``decimal`` mark and thousands grouped by the other: a column that a stray cell kept as
    text holds them as written ("0,5", "1.234,5" in a ';' file), and pd.to_numeric read none
    of them, so no stray cell was told."""
    numbers = pd.to_numeric(cells, errors="coerce")
    unread = (numbers.isna() & cells.map(lambda v: isinstance(v, str))).to_numpy()
    if not unread.any():
        return numbers
    text = _point_decimals(cells[unread], decimal)
    numbers = numbers.astype(np.float64)
    numbers[unread] = pd.to_numeric(text, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    return numbers


def exact_integers(df: pd.DataFrame, read_text) -> pd.DataFrame:
    """``df`` with each column of integers that has empty cells -- which pandas reads as
    float64, rounding integers past 2^53 (nanosecond times) and writing ``1.0`` for ``1`` --
    as pandas' nullable ``Int64`` read from its text (``read_text()``: the file read again as
    text, in the same columns): nanosecond times stay exact as sample times too."""

    def whole(v):  # finite whole numbers (inf has no remainder)
        return np.isfinite(v).all() and np.all(np.mod(v, 1) == 0)

    floats = [i for i, d in enumerate(df.dtypes) if d == np.float64]
    maybe = [i for i in floats if df.iloc[:, i].isna().any()
             and whole(df.iloc[:, i].dropna().to_numpy())]  # fmt: skip
    if not maybe:
        return df
    text = read_text()
    if text.shape != df.shape:
        return df
    for i in maybe:
        cells = text.iloc[:, i]
        text_ints = cells.map(lambda v: isinstance(v, str) and _INTEGER.fullmatch(v) is not None)
        if (text_ints | df.iloc[:, i].isna()).all():
            ints = [int(v) if w else None for v, w in zip(cells, text_ints)]
            if all(v is None or _INT64_MIN <= v <= _INT64_MAX for v in ints):  # else float
                df.isetitem(i, pd.array(ints, dtype="Int64"))
    return df
