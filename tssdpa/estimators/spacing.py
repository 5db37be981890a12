"""What an estimator tells of a time index (DatetimeIndex, TimedeltaIndex, or a numeric index
of times: :func:`numeric_times`) not equally spaced.

Every forecaster counts its lags, embedding, lookback, horizon and ``predict(steps)`` in
samples, and every denoiser its window, cutoff or decay (``ProjectionFilter`` without
``tau``): a series with gaps or repeated times in its index is forecast or filtered as if its
samples were equally spaced, which no number shows. :func:`warn_uneven` says so, naming the
median and the largest step, as ``tssdpa filter`` notes of a time column
(``tssdpa.data.tables``); an index that runs backwards (rows newest first) it names as such,
suggesting ``sort_index()``.
"""

from __future__ import annotations

import sys

import numpy as np

from tssdpa.checks import LibraryWarning, warn
from tssdpa.estimators.index_notes import stacked_note, text_dates_note
from tssdpa.estimators.input_notes import user_stacklevel
from tssdpa.estimators.pandas_out import inferred_freq

__all__ = ["FORECASTER_COUNTS", "UnevenSamplingWarning", "numeric_times", "uneven_note",
           "warn_uneven"]  # fmt: skip

#: a step this far from the median step, as a share of it, is uneven: a missing sample (twice
#: the median) or a repeated time is, the jitter of a logger's clock is not
TOLERANCE = 0.5


class UnevenSamplingWarning(LibraryWarning):
    """A series' time index is not equally spaced; the estimator counts samples."""


def _steps(times) -> tuple[np.ndarray, float]:
    """The finite steps between the sample ``times`` (seconds) and their median (NaN: none)."""
    steps = np.diff(np.asarray(times, dtype=np.float64))
    steps = steps[np.isfinite(steps)]
    return steps, float(np.median(steps)) if steps.size else float("nan")


def _order_note(steps: np.ndarray, name: str, index: str) -> str | None:
    """What of the ``steps`` (seconds) does not go forward in time: steps back or repeated
    times, or None where every step is > 0. Told apart from uneven steps because the median
    step of rows newest first (``ORDER BY date DESC``) is itself negative, and every step equal
    to it looked regular."""
    back, same = int((steps < 0).sum()), int((steps == 0).sum())
    if not back and not same:
        return None
    counts = [f"{n} of {steps.size} steps {what}"
              for n, what in ((back, "go back in time"), (same, "repeat a time")) if n]  # fmt: skip
    if back == steps.size:
        return f"{name}'s {index} runs backwards (newest first: every step goes back in time)"
    what = "runs backwards" if back else "repeats times"
    return f"{name}'s {index} {what} ({', '.join(counts)})"


def _missing_note(times, index: str) -> str | None:
    """What of the sample ``times`` is missing (NaT, or NaN in a numeric index), or None.
    Their steps were dropped as not finite, so a time that failed to parse
    (``pd.to_datetime(..., errors="coerce")``) passed without a word, its row taken as one
    more equally spaced sample."""
    missing = np.flatnonzero(~np.isfinite(np.asarray(times, dtype=np.float64)))
    if not missing.size:
        return None
    what = "NaN" if index == "numeric index" else "NaT"
    s = "" if missing.size == 1 else "s"
    return f"{index} has {missing.size} missing time{s} ({what}), the first at row {missing[0]}"


def uneven_note(times, name: str = "y", index: str = "DatetimeIndex",
                unit: str = " s") -> str | None:  # fmt: skip
    """What is uneven about the sample ``times`` (in ``unit``: seconds, or "" for a numeric
    index's own, in order of the rows) of ``name``'s ``index`` (its kind), or None where every
    step is within ``TOLERANCE`` of the median step (or there are fewer than 2 steps). A step
    back or a repeated time is always told, and a missing time before it."""
    if missing := _missing_note(times, index):
        return f"{name}'s {missing}"
    steps, typical = _steps(times)
    if steps.size and (order := _order_note(steps, name, index)):
        return order
    if steps.size < 2:
        return None
    off = np.abs(steps - typical) > TOLERANCE * abs(typical)
    if typical > 0 and not off.any():
        return None
    # 4 digits: epoch seconds in float64 resolve 2e-7 s, and an exact 10 ms step read as
    # 0.00999999 s
    return (f"{name}'s {index} is not equally spaced: median step {typical:.4g}{unit}, "
            f"largest {steps.max():.4g}{unit}, smallest {steps.min():.4g}{unit} "
            f"({int(off.sum())} of {steps.size} steps off the median by more than "
            f"{TOLERANCE:g} of it)")  # fmt: skip


def numeric_times(index) -> np.ndarray | None:
    """The values of a numeric pandas ``index`` read as sample times (float years, seconds,
    ...), or None where it is positional or not numeric: a RangeIndex, or integers not
    strictly increasing (row labels of concatenated or shuffled rows, which say nothing of
    time). Integers that rise with gaps are times or the labels of rows dropped: uneven either
    way. (Only datetime and timedelta indexes were read: an irregular float index of years
    was forecast as equally spaced without a word.)"""
    pd = sys.modules.get("pandas")  # a pandas index has it loaded; numpy input must not
    if pd is None or not isinstance(index, pd.Index) or isinstance(index, pd.RangeIndex):
        return None
    if index.dtype.kind not in "iuf" or isinstance(index, pd.MultiIndex):
        return None
    times = index.to_numpy(np.float64)
    if index.dtype.kind != "f" and not (np.diff(times) > 0).all():
        return None
    return times


def _calendar(index) -> bool:
    """Whether pandas names the frequency of ``index``: a series regular in its calendar
    (business days: Monday after Friday) is equally spaced in it."""
    if index.freq is not None:
        return True
    return inferred_freq(sys.modules["pandas"], index) is not None


def _grid(times) -> str:
    """A pandas frequency of the median step of ``times`` (seconds), e.g. 'h' for 3600 s;
    '1s' where that step is not positive (repeated times)."""
    import pandas as pd

    typical = _steps(times)[1]
    step = pd.Timedelta(seconds=typical).round("us") if typical > 0 else pd.Timedelta(0)
    return pd.tseries.frequencies.to_offset(step).freqstr if step > pd.Timedelta(0) else "1s"


#: what a forecaster counts in samples (:func:`warn_uneven`'s ``counts``)
FORECASTER_COUNTS = "its lags, horizon and predict steps"


def warn_uneven(estimator, meta, name: str = "y", counts: str = FORECASTER_COUNTS,
                advice: str = "") -> bool:  # fmt: skip
    """Warn where the time index of the input ``meta`` describes is not equally spaced:
    ``counts`` names what ``estimator`` counts in samples, ``advice`` what to do other than
    resample (ending in ", or ", e.g. "give tau=..., or "). Returns whether it warned."""
    times, own, unit = meta.timestamps, meta.index, " s"
    index = meta.read_index  # pyarrow times, dates: read as the DatetimeIndex they are
    if times is None and (times := numeric_times(index)) is not None:
        unit = ""  # its own: years, seconds, ...
    kind = type(index).__name__ if unit else "numeric index"
    said = kind if index is own else f"index (read as a {kind})"
    note = None if times is None else uneven_note(times, name, said, unit)
    if times is None and (text := text_dates_note(index, name)):
        # dates left as text (read_csv without parse_dates): nothing read them, and predict
        # continued the index with positions where the next dates were expected, without a word
        then = " and predict's index is positions" if counts == FORECASTER_COUNTS else ""
        warn(f"{text}: {type(estimator).__name__} cannot see a gap in them ({counts} "
             f"count samples){then}; parse them first, e.g. {name}.index = "
             f"pd.to_datetime({name}.index) (or read_csv(..., parse_dates=[...]))",
             UnevenSamplingWarning, stacklevel=user_stacklevel())  # fmt: skip
        return True
    if times is None and (stacked := stacked_note(index, name)):
        # a long-format panel: its series went in as one, joined end to end, without a word
        warn(f"{stacked[0]}: {type(estimator).__name__} takes the rows as one series "
             f"({counts} count samples), each stacked series joined to the next; fit "
             f"one per series, e.g. on {stacked[1]}",
             UnevenSamplingWarning, stacklevel=user_stacklevel())  # fmt: skip
        return True
    if note and _missing_note(times, said):  # no calendar or grid excuses a row without a time
        warn(f"{note}; {type(estimator).__name__} takes the samples as equally spaced "
             f"({counts} count samples, not time): drop or fix the rows without a "
             f"time first, e.g. {name}[{name}.index.notna()]",
             UnevenSamplingWarning, stacklevel=user_stacklevel())  # fmt: skip
        return True
    if note and (_steps(times)[0] < 0).any():  # told first by uneven_note (_order_note)
        # pandas names a calendar of a reversed index too ('-1h'), so no calendar excuses it
        warn(f"{note}; {type(estimator).__name__} takes the rows in the order given "
             f"as samples going forward ({counts} count samples): sort the rows by "
             f"time first, e.g. {name}.sort_index()",
             UnevenSamplingWarning, stacklevel=user_stacklevel())  # fmt: skip
        return True
    if note and unit and _calendar(index):
        return False
    if note:
        # pandas resamples datetimes alone: numeric times are interpolated onto a grid
        # pandas resamples on its own time indexes only: dates as objects are made one first
        on = name if index is own else f"{name}.set_axis(pd.{kind}({name}.index))"
        regrid = (f"resample the series onto a regular grid first, e.g. {on}.resample("
                  f"'{_grid(times)}').mean()" if unit else "interpolate the series onto "
                  "equally spaced times first (numpy.interp)")  # fmt: skip
        labels = (
            "; predict labels its forecasts by position"
            if unit and counts == FORECASTER_COUNTS
            else ""
        )
        warn(f"{note}; {type(estimator).__name__} takes the samples as equally spaced "
             f"({counts} count samples, not time): {advice}{regrid}{labels}",
             UnevenSamplingWarning, stacklevel=user_stacklevel())  # fmt: skip
    return bool(note)


def warn_other_step(estimator, meta, name: str = "y") -> bool:
    """Warn where a forecasting call's series is sampled at another step than the series the
    forecaster was fitted on (the frequency of its fitted pandas index, recorded for
    ``predict``): its horizon and patterns count samples, so a forecaster fitted on hourly
    data and given a 15-minute frame forecast 15 minutes ahead at ``horizon=1``, without a
    word. Returns whether it warned."""
    from tssdpa.estimators.pandas_out import ATTRIBUTE

    spec, times = estimator.__dict__.get(ATTRIBUTE), getattr(meta, "timestamps", None)
    if spec is None or times is None or len(times) < 3:
        return False
    ix = spec["index"]
    if ix.get("type") not in ("datetime", "timedelta"):
        return False
    import pandas as pd

    try:
        fitted = pd.tseries.frequencies.to_offset(ix["freq"]).nanos / 1e9
    except ValueError:  # a calendar frequency (months, business days): no one step
        return False
    step = _steps(times)[1]
    if not (step > 0 and fitted > 0) or abs(step / fitted - 1.0) <= 0.01:
        return False
    given, was = (f if f[:1].isdigit() else "1" + f for f in (_grid(times), ix["freq"]))
    warn(f"{name} is sampled every {given} but {type(estimator).__name__} was "
         f"fitted on samples every {was}: {FORECASTER_COUNTS} count samples, "
         f"so they mean other times here; resample {name} to the fitted step first, "
         f"e.g. {name}.resample('{ix['freq']}').mean()",
         UnevenSamplingWarning, stacklevel=user_stacklevel())  # fmt: skip
    return True
