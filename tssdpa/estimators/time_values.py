"""Times given as a signal -- datetimes, dates, timedeltas -- refused naming where they are,
with the advice to make them the index (:func:`refuse_times`; :func:`~tssdpa.estimators.
arrays.as_2d` calls it). Asked for float64, numpy and pandas read datetime64 values as counts
of their unit (nanoseconds since 1970), which were filtered as a signal with the channels
beside them without a word; Python's ``datetime.date`` objects (a column of dates pandas keeps
as objects, as ``df["day"] = df["time"].dt.date`` makes) were refused as "got DataFrame
holding date datetime.date(2026, 1, 1)", with no word of what to do."""

from __future__ import annotations

from tssdpa.checks import times_in

__all__ = ["refuse_times"]


def refuse_times(x, name: str) -> None:
    """``ValueError`` naming ``name`` -- and, for a DataFrame, the first column -- where the
    array, Series or DataFrame ``x`` holds any time (:func:`~tssdpa.checks.times_in`): a
    DataFrame's column is to be set as the index or dropped, other times to be the index of
    the signal's values."""
    if type(x).__name__ == "DataFrame":  # pandas' (not imported here)
        for i, d in enumerate(x.dtypes):
            what = times_in(x.iloc[:, i]) if d.kind in "mMO" else None
            if what is not None:
                label = x.columns[i]
                raise ValueError(
                    f"{name} column {label!r} holds {what}: they are times, not a signal; set "
                    f"it as the index ({name}.set_index({label!r})) or drop it "
                    f"({name}.drop(columns={label!r}))"
                )
        return
    what = times_in(x)
    if what is not None:
        dtype = x.dtype
        shown = dtype if dtype.kind != "O" else f"{what[:-1]} objects"
        raise ValueError(
            f"{name} holds {what} ({shown}): they are times, not a signal; pass the signal's "
            "values with these times as their index (pandas.Series(values, index=times))"
        )
