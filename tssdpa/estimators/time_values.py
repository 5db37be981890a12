"""Times given as a signal -- datetimes, dates, timedeltas -- refused naming where they are,
with the advice to make them the index (:func:`refuse_times`; :func:`~tssdpa.estimators.
arrays.as_2d` calls it). Asked for float64, numpy and pandas read datetime64 values as counts
of their unit (nanoseconds since 1970), which were filtered as a signal with the channels
beside them without a word; Python's ``datetime.date`` objects (a column of dates pandas keeps
as objects, as ``df["day"] = df["time"].dt.date`` makes) were refused as "got DataFrame
holding date datetime.date(2026, 1, 1)", with no word of what to do."""

from __future__ import annotations

import datetime
import sys

import numpy as np

__all__ = ["NUMBERS_ONLY", "inferred_kind", "refuse_times", "times_held"]

#: what a value of each type is called, the most specific first (a datetime is a date too)
_TIME_OBJECTS = ((datetime.datetime, "datetimes"), (np.datetime64, "datetimes"),
                 (datetime.date, "dates"), (datetime.timedelta, "timedeltas"),
                 (np.timedelta64, "timedeltas"))  # fmt: skip


#: what pandas' infer_dtype calls an object array of numbers or true / false (NaN, None and
#: pd.NA aside)
NUMBERS_ONLY = {"empty", "floating", "integer", "mixed-integer-float", "boolean", "decimal",
                "complex"}  # fmt: skip
#: ... and one that holds no time object either: any that does (NaT too) is "mixed",
#: "datetime", ...
_NO_TIMES = NUMBERS_ONLY | {"string", "bytes"}


def inferred_kind(objects: np.ndarray) -> str | None:
    """pandas' ``infer_dtype`` of the 1-d object array ``objects``, one pass in C (None where
    pandas is not loaded: the caller gave no pandas object). Cell by cell in Python, an object
    column of numbers with pd.NA (read with blanks) took 1.5 s for two columns of 2M."""
    pd = sys.modules.get("pandas")
    return None if pd is None else pd.api.types.infer_dtype(objects, skipna=True)


def times_held(values) -> str | None:
    """What the array or pandas column ``values`` holds where it is times: ``"datetimes"``
    or ``"timedeltas"`` by its dtype, ``"datetimes"``, ``"dates"`` or ``"timedeltas"`` by the
    first such object in an object array (pandas' ``Timestamp`` and ``Timedelta`` are
    Python's); None otherwise. Only object arrays are looked into."""
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind in ("M", "m"):
        return "datetimes" if kind == "M" else "timedeltas"
    if kind != "O":
        return None
    objects = np.asarray(values, dtype=object).ravel()
    if inferred_kind(objects) in _NO_TIMES:  # the usual object column, without a loop
        return None
    for v in objects:
        for kind_of, what in _TIME_OBJECTS:
            if isinstance(v, kind_of):
                return what
    return None


def refuse_times(x, name: str) -> None:
    """``ValueError`` naming ``name`` -- and, for a DataFrame, the first column -- where the
    array, Series or DataFrame ``x`` holds times (:func:`times_held`): a DataFrame's column is
    to be set as the index or dropped, other times to be the index of the signal's values."""
    if type(x).__name__ == "DataFrame":  # pandas' (not imported here)
        for i, d in enumerate(x.dtypes):
            what = times_held(x.iloc[:, i]) if d.kind in "mMO" else None
            if what is not None:
                label = x.columns[i]
                raise ValueError(
                    f"{name} column {label!r} holds {what}: they are times, not a signal; set "
                    f"it as the index ({name}.set_index({label!r})) or drop it "
                    f"({name}.drop(columns={label!r}))"
                )
        return
    what = times_held(x)
    if what is not None:
        dtype = x.dtype
        shown = dtype if dtype.kind != "O" else f"{what[:-1]} objects"
        raise ValueError(
            f"{name} holds {what} ({shown}): they are times, not a signal; pass the signal's "
            "values with these times as their index (pandas.Series(values, index=times))"
        )
