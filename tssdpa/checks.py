"""Argument checks shared by every tier (plain Python and numpy scalars; no torch).

Each check names the argument in its error, returns the value in a normalised type, and never
mutates what it was given. Tensor-valued parameters of the torch operator are checked in
:mod:`tssdpa.ops.structure`, which delegates plain numbers here. The rules that tell times
in a user's data, which several tiers apply, live here too: column names of sample times
(:data:`TIME_NAMES`), dates written as text (:data:`TEXT_DATE` and its kin), time objects
among values (:func:`times_in`).
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import os
import re
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np

#: seconds per unit of numpy's datetime64 / timedelta64 codes
_SECONDS = {"W": 604800.0, "D": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3,
            "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "fs": 1e-15, "as": 1e-18}  # fmt: skip

__all__ = [
    "LibraryWarning",
    "SettingWarning",
    "check_choice",
    "check_decay",
    "check_fraction",
    "check_int",
    "check_number",
    "check_positive",
    "check_sigma",
    "check_tau",
    "named_as_times",
    "time_index",
    "times_in",
    "times_of_column",
    "to_seconds",
    "unit_advice",
    "warn",
]


class LibraryWarning(UserWarning):
    """The base of every warning tssdpa itself gives its user (a note on their data, a
    setting used otherwise than given, sample times that make a filter return x unchanged):
    the command-line tools tell a warning of this category as a note and silence every other,
    whoever's code raised it (a UserWarning of torch's C++ raised under a library call is
    torch's, not the library's)."""


class SettingWarning(LibraryWarning):
    """A setting used otherwise than it was given (a learned model's ``patch_len`` built as its
    ``lookback``, a data module's ``seq_len`` as a short split): the message names the
    argument, the value given and the value used. The command-line tools, which silence
    other warnings, tell it as a note (the user gave the setting and believed it used)."""


#: per thread, ``said``: the list a table filtered in a batch gathers the library's warnings
#: in (:func:`tssdpa.estimators.input_notes.library_warnings`), or None; ``time_column``: the
#: table's column whose numbers are the sample times given to its fit
#: (:func:`times_of_column`), or None
gathered = threading.local()
_gathered_lock = threading.Lock()  # a list of a caller and its parallel_map workers


def gather(message) -> None:
    """``message`` as one line, once, in this thread's :data:`gathered` list."""
    line = " ".join(str(message).split())
    with _gathered_lock:
        if line not in gathered.said:
            gathered.said.append(line)


def warn(message, category: type[Warning] = LibraryWarning, stacklevel: int = 1) -> None:
    """:func:`warnings.warn` for a warning of the library's (``category`` a
    :class:`LibraryWarning`; ``message`` a string or a warning, ``stacklevel`` counted from
    the caller). Where this thread's table gathers them (a batch) it goes to that list
    directly: :func:`warnings.warn` consults the process's filters, which a
    :func:`warnings.catch_warnings` on another thread (pandas', a CSV being read) swaps, and
    a table's warning was lost while another thread silenced every warning."""
    if isinstance(message, Warning):
        category = type(message)
    if not issubclass(category, LibraryWarning):
        raise TypeError(f"category must be a LibraryWarning, got {category.__name__}")
    if getattr(gathered, "said", None) is not None:
        gather(message)
        return
    warnings.warn(message, category, stacklevel=stacklevel + 1)


def check_int(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``.

    Python and numpy integers are accepted; bools, floats and non-numbers raise ``TypeError``
    (a float window or lag count is almost always a mistake), integers below ``minimum``
    ``ValueError``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_number(value: Any, name: str) -> float:
    """``value`` as a float: a real number that is not a bool, or a 0-d numpy array or
    tensor holding one; else ``TypeError``."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and tuple(shape) == () and getattr(dtype, "is_complex", False) is False:
        kind = getattr(dtype, "kind", None)  # numpy; torch dtypes have is_floating_point
        if kind in ("f", "i", "u") or getattr(dtype, "is_floating_point", False):
            return float(value)
    raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")


def check_positive(
    value: Any, name: str, *, allow_zero: bool = False, allow_inf: bool = False
) -> float:
    """A float > 0 (or >= 0 with ``allow_zero``), finite unless ``allow_inf``."""
    v = check_number(value, name)
    ok = v >= 0 if allow_zero else v > 0
    if not (ok and (math.isfinite(v) or (allow_inf and v == math.inf))):
        bound = ">= 0" if allow_zero else "> 0"
        finite = "" if allow_inf else "finite "
        raise ValueError(f"{name} must be a {finite}number {bound}, got {value!r}")
    return v


#: the narrowest kernel width the numpy filters take: below about 7e-155 their logit scale
#: 0.5/σ² overflows float64 (and their output was NaN, or a ZeroDivisionError below 1.5e-162)
SIGMA_FLOOR = 1e-154


def check_sigma(value: Any, name: str = "sigma", *, allow_inf: bool = False) -> float:
    """A kernel width of the numpy filters: :func:`check_positive`, and at least
    :data:`SIGMA_FLOOR`."""
    v = check_positive(value, name, allow_inf=allow_inf)
    if v < SIGMA_FLOOR:
        raise ValueError(f"{name} must be at least {SIGMA_FLOOR:g} (0.5/{name}² overflows "
                         f"float64 below), got {value!r}: rescale the data instead")  # fmt: skip
    return v


def check_fraction(value: Any, name: str, *, closed_right: bool = False) -> float:
    """A float in (0, 1), or (0, 1] with ``closed_right``."""
    v = check_number(value, name)
    ok = 0.0 < v <= 1.0 if closed_right else 0.0 < v < 1.0
    if not ok:
        raise ValueError(f"{name} must be in (0, 1{']' if closed_right else ')'}, got {value!r}")
    return v


def check_decay(value: Any, name: str = "decay") -> float:
    """The per-sample IIR factor γ in (0, 1] (1 = no decay)."""
    v = check_number(value, name)
    if not 0.0 < v <= 1.0:
        raise ValueError(f"{name} must be in (0, 1] (the per-sample factor gamma), got {value!r}")
    return v


def check_tau(value: Any, name: str = "tau") -> float:
    """The IIR time constant τ > 0, in seconds (the unit timestamps are read in). A duration
    (``pandas.Timedelta('50ms')``, ``datetime.timedelta``, ``numpy.timedelta64``) is refused
    naming its seconds: as given it failed deep in ``fit`` with a bare ``float()`` error."""
    if isinstance(value, np.timedelta64) or hasattr(value, "total_seconds"):
        seconds = (value / np.timedelta64(1, "s") if isinstance(value, np.timedelta64)
                   else value.total_seconds())  # fmt: skip
        raise TypeError(f"{name} must be a number of seconds, got {value!r}: give "
                        f"{name}={float(seconds)!r}")  # fmt: skip
    return check_positive(value, name)


def check_moving_average(value: Any, name: str = "moving_average") -> int:
    """An odd positive width of a centred moving average (DLinear's trend kernel): an even one
    has no centre, its trend half a sample early. Checked at fit only by the forecasters that
    take one: a model saved with an even one (before 2026-12-05) loads as it was fitted."""
    k = check_int(value, name)
    if k % 2 == 0:
        raise ValueError(f"{name} must be odd (a centred moving average); got {k}: take "
                         f"{k - 1} or {k + 1}")  # fmt: skip
    return k


def check_fits_dtype(values: np.ndarray, maximum: float, dtype: str) -> np.ndarray:
    """``values``, an output to be returned in the input's ``dtype`` (a float16 tensor's),
    or ``ValueError`` where a finite one lies beyond ``maximum``, the largest that dtype holds:
    forecasts of a float16 ramp past 65504 came back as inf without a word."""
    finite = np.abs(values[np.isfinite(values)])
    peak = float(finite.max()) if finite.size else 0.0
    if peak > maximum:
        raise ValueError(f"the output reaches {peak:.3g}, beyond {dtype}'s range (largest "
                         f"{maximum:.6g}), the dtype of the tensor given, in which it is "
                         "returned: give the tensor as float32 (.float())")  # fmt: skip
    return values


def check_choice(value: Any, name: str, choices: tuple) -> Any:
    """``value`` if it is one of ``choices``, else ``ValueError`` listing them (an array,
    Series or tensor is none, whatever its values)."""
    # an array's == is elementwise: `in` raised numpy's "truth value ... is ambiguous",
    # naming no argument, and took a 0-d or one-element array (np.array([True])) for its
    # value, which failed later ("unhashable type") or ran as that choice without a word.
    # Only numpy scalars (np.True_, np.str_) are values with a shape that are accepted
    if hasattr(value, "shape") and not isinstance(value, np.generic):
        known = False
    else:
        try:
            known = value in choices
        except (ValueError, TypeError):  # pd.NA: its truth value raises
            known = False
    if not known:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def as_path(value: Any, name: str = "path", *, folder_must_exist: bool = False) -> Path:
    """``value`` (a str or ``os.PathLike``) as a Path, else a TypeError naming ``name``
    (pathlib's own, "expected str, bytes or os.PathLike object, not int", named nothing).
    ``folder_must_exist``: the folder it is in must exist, else a ValueError (a path written
    to: made with its parents, a misspelt one went unnoticed)."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"{name} must be a str or os.PathLike, got {type(value).__name__} "
                        f"{value!r:.80}")  # fmt: skip
    path = Path(value)
    if folder_must_exist and not path.parent.is_dir():
        raise ValueError(f"{name}: the folder {str(path.parent)!r} does not exist")
    return path


#: what pandas' infer_dtype calls an object array of numbers or true / false (NaN, None and
#: pd.NA aside)
NUMBERS_ONLY = {"empty", "floating", "integer", "mixed-integer-float", "boolean", "decimal",
                "complex"}  # fmt: skip
#: ... one of times alone, and what they are called (a datetime is a date too: dates with
#: datetimes are "date")
_ONE_KIND = {"datetime": "datetimes", "datetime64": "datetimes", "date": "dates",
             "timedelta": "timedeltas", "timedelta64": "timedeltas"}  # fmt: skip
#: ... and one that holds no time object: any that does (NaT too) is one of _ONE_KIND or
#: "mixed", "mixed-integer"
_NO_TIMES = NUMBERS_ONLY | {"string", "bytes"}
#: what a time object of each type is called, the most specific first
_TIME_OBJECTS = ((dt.datetime, "datetimes"), (np.datetime64, "datetimes"),
                 (dt.date, "dates"), (dt.timedelta, "timedeltas"),
                 (np.timedelta64, "timedeltas"))  # fmt: skip


def inferred_kind(objects) -> str | None:
    """pandas' ``infer_dtype`` of the 1-d ``objects``, one pass in C (None where pandas is
    not loaded: the caller gave no pandas object). Cell by cell in Python, an object column
    of numbers with pd.NA (read with blanks) took 1.5 s for two columns of 2M."""
    pd = sys.modules.get("pandas")
    return None if pd is None else pd.api.types.infer_dtype(objects, skipna=True)


def times_in(values, every: bool = False) -> str | None:
    """The times an array, pandas Index or Series ``values`` holds -- ``"datetimes"``,
    ``"dates"`` or ``"timedeltas"`` -- or None: by its dtype (datetime64, timedelta64,
    pyarrow's times), or in objects (pandas' ``Timestamp`` and ``Timedelta`` are Python's) by
    :func:`inferred_kind`, missing values (None, NaN, pd.NA) aside. ``every``: only where
    all are times of one kind (a time axis); else where any is (a signal holding one is
    refused), a mix told by its first time (types in order of first use, a pass in C). The
    one rule of :func:`time_index`, :func:`to_seconds` and ``estimators.time_values``."""
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind in ("M", "m"):
        return "datetimes" if kind == "M" else "timedeltas"
    if kind != "O" and kind is not None:
        return None
    # a 1-d pandas object is told by its own dtype (pandas' text without a copy)
    flat = values if getattr(values, "ndim", None) == 1 else np.asarray(values, object).ravel()
    inferred = inferred_kind(flat)
    if inferred in _ONE_KIND or every or inferred in _NO_TIMES:
        return _ONE_KIND.get(inferred)
    for of_type in dict.fromkeys(map(type, np.asarray(flat, dtype=object))):
        for time_type, what in _TIME_OBJECTS:
            if issubclass(of_type, time_type):
                return what
    return None


def time_index(index):
    """A pandas row ``index`` of times that is no DatetimeIndex / TimedeltaIndex -- pyarrow
    timestamps or durations (``read_parquet(..., dtype_backend="pyarrow")`` then
    ``set_index``), Python dates or datetimes (``s.groupby(s.index.date).mean()``, pyarrow's
    ``read_csv``) -- as the DatetimeIndex / TimedeltaIndex of the same times, which the rules
    for a time index read (they were taken as mere labels); any other ``index`` as it is.
    For reading only: outputs keep the caller's own index."""
    pd = sys.modules.get("pandas")  # a pandas index has it loaded
    if pd is None or type(index) is not pd.Index:
        return index
    what = times_in(index, every=True)  # a C pass tells dates from labels
    if what is None:
        return index
    try:
        return pd.TimedeltaIndex(index) if what == "timedeltas" else pd.DatetimeIndex(index)
    except (TypeError, ValueError):  # datetimes of several zones: no one time axis
        return index


#: pandas' ``infer_dtype`` of numbers (missing cells aside): seconds in :func:`to_seconds`
_NUMBERS = ("integer", "floating", "mixed-integer-float", "decimal")


def to_seconds(times: Any, name: str = "timestamps") -> np.ndarray:
    """Sample times as float64 seconds: numbers are taken as seconds already; datetimes
    (numpy ``datetime64`` of any unit, a pandas ``DatetimeIndex`` / datetime Series of any
    resolution, timezone-aware or not) become seconds since the Unix epoch (UTC), timedeltas
    seconds. The resolution is read from the dtype, never assumed (pandas 3 makes
    microsecond indexes by default; nanoseconds were assumed before 0.2.1)."""
    tz = getattr(getattr(times, "dtype", None), "tz", None)
    if tz is not None:  # a timezone-aware pandas index or Series: its UTC instants
        # a Series' values through .dt: Series.tz_convert converts its index, and raised
        # pandas' "index is not a valid DatetimeIndex" for a Series of aware datetimes
        times = times.dt.tz_convert("UTC").dt.tz_localize(None) if hasattr(times, "dt") \
            else times.tz_convert("UTC").tz_localize(None)  # fmt: skip
    arr = np.asarray(times)
    if arr.dtype == object:  # Python datetimes / pandas Timestamps, or boxed numbers
        import pandas as pd

        flat = arr.ravel()
        # told before numbers are: np.datetime64 objects cast to float64 as counts of their
        # unit (days since 1970, NaT as -9.2e18)
        what = times_in(flat, every=True)
        if what == "timedeltas":  # pd.Timedelta, datetime.timedelta: pd.to_datetime refuses
            return to_seconds(pd.to_timedelta(flat).to_numpy(), name)
        if what is None:
            try:
                return arr.astype(np.float64)
            except (TypeError, ValueError):
                pass  # text, or a mix: pandas reads what it can as datetimes
            if inferred_kind(flat) in _NUMBERS:  # numbers beside pd.NA: seconds, NA as NaN
                return pd.to_numeric(flat).astype(np.float64).reshape(arr.shape)
        try:
            return to_seconds(pd.DatetimeIndex(pd.to_datetime(flat, utc=True)), name)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be numbers (seconds) or datetimes: {exc}") from None
    if arr.dtype.kind in "mM":
        unit, count = np.datetime_data(arr.dtype)
        if unit not in _SECONDS:
            raise ValueError(f"{name}: unsupported time unit {unit!r}")
        ints = arr.view("i8")
        per_second = 1.0 / (count * _SECONDS[unit])
        if per_second > 1.0:  # sub-second units: one correctly rounded division
            out = ints / round(per_second)
        else:
            out = ints.astype(np.float64) * (count * _SECONDS[unit])
        out[ints == np.iinfo(np.int64).min] = np.nan  # NaT
        return out
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be numbers (seconds) or datetimes, got {arr.dtype}")
    return arr.astype(np.float64)


#: column names of sample times (case-insensitive; ``t_ns``, ``timestamp_ms``, ROS's ``%time``
#: too; ``seconds``, ``elapsed_s``, ``stamp``, ``epoch_ms``, ``ts``, ``unix_time``, German
#: ``Zeit [s]``, which loggers write as often). A whole word only: ``time_constant``,
#: ``seconds_left``, ``stamp_count``, ``tsX`` or ``TS 1`` / ``TS-Temp`` (temperature sensors)
#: are not times: the name is the whole text, but for a unit in brackets. One rule for the
#: command line's time column (``tssdpa.data.tables``) and the estimators'
#: ``TimeColumnWarning``.
TIME_NAMES = re.compile(r"^%?(?:unix_?)?(t|ts|time|times|timestamp|timestamps|datetime|date"
                        r"|seconds|secs|sec|elapsed|elapsed[_ ]time|time[_ ]elapsed|date[_ ]time"
                        r"|stamp|epoch|zeit|unix)(_(ns|us|ms|s|sec|secs|utc|unix|epoch))?(?=\s*[(\[]|\s*$)",
                        re.IGNORECASE)  # fmt: skip
#: a unit in brackets after such a name must be one of time for it to be a time column
#: ("T (degC)" is a temperature, "t (s)" a time)
UNIT_IN_NAME = re.compile(r"[(\[]\s*([^)\]]*?)\s*[)\]]")
_TIME_UNITS = {"s", "sec", "secs", "second", "seconds", "ms", "us", "µs", "μs", "ns", "min", "mins",
               "minute", "minutes", "h", "hr", "hrs", "hour", "hours", "d", "day", "days",
               "utc", "unix", "epoch", "iso"}  # fmt: skip


# Dates written as text: one home for the tiers that recognise them -- ``tssdpa.data`` finding
# and parsing a table's time column (``tables``, ``text_dates``), the estimators' notes on a row
# index of text dates (``estimators.index_notes``). Four meanings, so four patterns, of two
# pieces: an ISO 8601 day, zero-padded (text that starts so sorts as its time does), and a day
# with the day and month as numbers, in either order, then the year (1/5/2026, 01.05.26).
_ISO_DAY = r"\d{4}-\d{2}-\d{2}"
_NUMBERED_DAY = r"\d{1,2}(?P<sep>[/.-])\d{1,2}(?P=sep)(?:\d{4}|\d{2})"
#: text that starts as an ISO 8601 day: such labels sort as their times (``2016-07-01...``)
ISO_START = re.compile(rf"^{_ISO_DAY}")
#: a cell that is an ISO 8601 day alone or with hours and minutes (``2016-07-01T00:00...``)
ISO_CELL = re.compile(rf"^{_ISO_DAY}(?:[T ]\d{{2}}:\d{{2}}|$)")
#: text that starts as a day with the day and month as numbers (``01/07/2016 00:00``)
NUMBERED_DATE = re.compile(rf"^\s*{_NUMBERED_DAY}(?:\D|$)")
#: text that starts as a date: ISO 8601 (months and days of one digit too: 2016-7-1) or
#: numbered (1.7.16), as ``tssdpa.data.text_dates`` reads them
TEXT_DATE = re.compile(rf"^\s*(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|{_NUMBERED_DAY})(?:\D|$)")


#: names as short as a variable's (``T``, ``Ts``: a temperature, a surface temperature) that
#: are times only where their numbers rarely step back (a clock's resync may, once)
_SHORT = {"t", "ts"}
_BACK_SHARE = 0.05


def named_as_times(label, values=None) -> bool:
    """Whether a column labelled ``label`` is named as sample times (:data:`TIME_NAMES`, with
    a unit in brackets, if any, one of time); with its numeric ``values``, a short name
    (``t``, ``ts``) only where at most 5% of their steps go back (a temperature ``Ts``'s half
    do, a clock's resync one)."""
    name = str(label).strip()
    unit = UNIT_IN_NAME.search(name)
    named = TIME_NAMES.match(name)
    if not named or (unit is not None and unit[1].lower() not in _TIME_UNITS):
        return False
    v = None if values is None else np.asarray(values)
    if named[1].lower() in _SHORT and v is not None and v.dtype.kind in "iuf":
        steps = np.diff(v[np.isfinite(v)].astype(np.float64))
        return not steps.size or float(np.mean(steps < 0)) <= _BACK_SHARE
    return True


#: the factor from seconds to each unit that sample times far apart for tau may be in
_PER_SECOND = {"ms": "1e3", "us": "1e6", "ns": "1e9"}


def times_of_column(column) -> None:
    """Says that the sample times given to fits in this thread are the numbers of a table's
    time ``column``, read in the unit its name gives (``tssdpa filter``, a batch): advice on
    their unit (:func:`unit_advice`) is then to name it there. Only while this thread gathers
    the library's warnings (:func:`~tssdpa.estimators.input_notes.library_warnings`, which
    forgets it at its end); nothing elsewhere."""
    if getattr(gathered, "said", None) is not None:
        gathered.time_column = column


def unit_advice(units) -> str:
    """How to give sample times that are in one of ``units`` (``"ms"``, ``"us"``, ``"ns"``) as
    seconds: ``divide them by 1e3 or 1e9``, or, for a table's time column
    (:func:`times_of_column`), whose numbers are not divided, ``name the unit in the column's
    name, 't (ms)' or 't (ns)'``."""
    column = getattr(gathered, "time_column", None)
    if column is None:
        return "divide them by " + " or ".join(_PER_SECOND[u] for u in units)
    names = [f"'{_with_unit(column, u)}'" for u in units]
    return "name the unit in the column's name, " + " or ".join(names)


def _with_unit(column, unit: str) -> str:
    """The name of the time ``column`` with ``unit`` in place of the unit it names (its
    brackets, or a suffix as in ``t_s``): 'timestamp (s)' was told to become
    'timestamp (s) (ms)'."""
    text = str(column).strip()
    if UNIT_IN_NAME.search(text):
        return UNIT_IN_NAME.sub(f"({unit})", text, count=1)
    suffix = TIME_NAMES.match(text)
    if suffix and suffix[2]:
        text = text[: suffix.start(2)] + text[suffix.end(2) :]
    return f"{text} ({unit})"
