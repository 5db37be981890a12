"""Pandas out of a forecaster fitted or called on pandas: ``predict`` and ``forecast_path``.

``filter`` and ``forecast`` give back the type they are given (:func:`restore`); these two
return another shape, so they have their own rules (docs/CONTRACTS.md):

* ``predict(steps)`` after a fit on a Series returns a Series, after a DataFrame a DataFrame
  (the fitted name or columns), on the index that continues the fitted one: a
  DatetimeIndex / TimedeltaIndex with a frequency (its own, or one pandas infers), a
  PeriodIndex, an integer index of one constant step; otherwise the positions the forecasts
  would take after the fitted series (a RangeIndex from its length), since a made-up time
  would be a guess. A fit on numpy (or a tensor) gives numpy, as before.
* ``predict(steps, y=buffer)`` continues the buffer's index by the same rules; where a time
  index gives positions (no step pandas infers: a jittered clock, missing rows), an
  ``UnevenSamplingWarning`` says so (silent before 2026-12-07 under the jitter tolerance).
* ``forecast_path(y, H)`` of a Series ``y`` returns a DataFrame on ``y``'s index with the
  columns ``h`` = 1..H; of a DataFrame, one with the columns (column, h): ``out["gyro"]``
  is that channel's (T, H) path (MultiIndex columns: their levels, then h).

A saved forecaster keeps what ``predict`` returns (``config.json``'s ``pandas_output``), its
labels exactly (:mod:`.labels`: numpy scalars, tuples, Timestamps and Timedeltas as typed
objects); a label of any other type, a time zone that does not come back from its name, or
columns of a pandas dtype (categorical, nullable ``Int64``: they come back as numpy's) are
refused by ``save`` naming them (before, the loaded model returned numpy, or a numpy integer
name as a Python int, without a word).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tssdpa.checks import time_index
from tssdpa.estimators.arrays import ArrayMeta, tensor_like
from tssdpa.estimators.labels import NUMPY_DTYPES, decode_label, encode_label, same_label

__all__ = ["inferred_freq", "loaded_output", "path_like", "predicted", "predicted_after",
           "record_output", "saved_output", "times_as_positions"]  # fmt: skip

ATTRIBUTE = "_pandas_output_"
#: how saved_output names the index / the columns where they would not come back (the
#: advice of each is its own)
_INDEX_DIFFERS = "the fitted series' index"
_COLUMNS_DIFFER = "the column labels"


def record_output(estimator, series) -> None:
    """After a fit of ``estimator`` on ``series``: where it is a forecaster (it has
    ``forecast_path``), what its ``predict`` returns (a pandas Series / DataFrame, or numpy
    where ``series`` is not pandas). Called by the fit guard, for every forecaster's fit."""
    pd = sys.modules.get("pandas")
    if not hasattr(type(estimator), "forecast_path"):
        return
    if pd is None or not isinstance(series, (pd.Series, pd.DataFrame)):
        estimator.__dict__.pop(ATTRIBUTE, None)
        return
    spec: dict[str, Any] = {"index": _continuation(pd, time_index(series.index))}
    if isinstance(series, pd.Series):
        spec.update(kind="series", name=series.name)
    else:
        # a copy: an Index's values are immutable, not its name(s), and the user's
        # df.columns.name = "x" after the fit renamed what predict returned
        spec.update(kind="frame", columns=series.columns.copy())
    estimator.__dict__[ATTRIBUTE] = spec


def inferred_freq(pd, index):
    """``index.inferred_freq`` (an offset or a string; None where pandas infers none) without
    pandas 3's note that it will return an offset: silenced by pandas' option, not by
    ``warnings.catch_warnings``, which resets every "once" registry of the process (a library
    warning was told again at every ``predict`` of a loop) and swaps filters other threads
    read."""
    try:
        with pd.option_context("future.infer_freq_returns_offset", True):
            return index.inferred_freq
    except KeyError:  # pandas 2 (OptionError): no such option, and no such note
        return index.inferred_freq


def _continuation(pd, index) -> dict:
    """How to continue ``index`` past its end (see the module's docstring): an index as
    :func:`~tssdpa.checks.time_index` reads it (pyarrow times, Python dates: as the
    DatetimeIndex they are)."""
    name = index.name
    if isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)) and index.is_monotonic_increasing:
        freq = index.freq
        if freq is None:
            freq = inferred_freq(pd, index)
        if freq is not None:
            kind = "datetime" if isinstance(index, pd.DatetimeIndex) else "timedelta"
            tz, freq = getattr(index, "tz", None), pd.tseries.frequencies.to_offset(freq)
            return {"type": kind, "last": index[-1].isoformat(), "tz": tz,
                    "freq": freq.freqstr, "name": name}  # fmt: skip
    if isinstance(index, pd.PeriodIndex):
        return {"type": "period", "last": str(index[-1]), "freq": index.freqstr, "name": name}
    if isinstance(index, pd.RangeIndex) and index.step > 0:  # no array of a long one
        return {"type": "range", "next": int(index[-1]) + index.step, "step": index.step,
                "name": name}  # fmt: skip
    if index.dtype.kind in "iu" and len(index) > 1:
        steps = np.diff(index.to_numpy().astype(np.int64))
        if steps[0] > 0 and (steps == steps[0]).all():
            step = int(steps[0])
            return {"type": "range", "next": int(index[-1]) + step, "step": step, "name": name}
    return {"type": "position", "next": len(index), "name": None}


def _future(pd, ix: dict, steps: int):
    """The ``steps`` labels after the fitted index described by ``ix``."""
    kind, name = ix["type"], ix["name"]
    if kind == "datetime":
        start = pd.Timestamp(ix["last"])
        start = start.tz_convert(ix["tz"]) if ix["tz"] is not None else start
        return pd.date_range(start, periods=steps + 1, freq=ix["freq"], name=name)[1:]
    if kind == "timedelta":
        start = pd.Timedelta(ix["last"])
        return pd.timedelta_range(start, periods=steps + 1, freq=ix["freq"], name=name)[1:]
    if kind == "period":
        start = pd.Period(ix["last"], freq=ix["freq"]) + 1
        return pd.period_range(start, periods=steps, freq=ix["freq"], name=name)
    if kind == "range":
        step = ix["step"]
        return pd.RangeIndex(ix["next"], ix["next"] + step * steps, step, name=name)
    if kind == "position":
        return pd.RangeIndex(ix["next"], ix["next"] + steps)
    raise ValueError(f"unknown index type {kind!r}")


def predicted(estimator, out: np.ndarray):
    """``predict``'s (steps,) or (steps, C) ``out``, as pandas where ``estimator`` was fitted
    on pandas."""
    spec = estimator.__dict__.get(ATTRIBUTE)
    if spec is None:
        return out
    import pandas as pd  # fitted on pandas: it is loaded

    index = _future(pd, spec["index"], len(out))
    if spec["kind"] == "series":
        return pd.Series(out, index=index, name=spec["name"])
    # a copy of the columns each time: renaming one output's columns renamed every later one's
    columns = spec["columns"].copy()
    return pd.DataFrame(out.reshape(len(out), -1), index=index, columns=columns)


def predicted_after(out: np.ndarray, meta: ArrayMeta):
    """``predict(steps, y=...)``'s (steps, C) ``out``, like the ``y`` that ``meta`` describes:
    (steps,) for 1-D input, numpy or a tensor as it was; a Series / DataFrame (its name or
    columns) on the index that continues ``y``'s, by the rules of ``predict`` after a fit."""
    if meta.kind not in ("series", "frame"):
        out = out[:, 0] if meta.was_1d else out
        return tensor_like(out, meta) if meta.kind == "torch" else out
    import pandas as pd  # the input was pandas

    index = _future(pd, _continuation(pd, meta.read_index), len(out))
    if meta.kind == "series":
        return pd.Series(out[:, 0], index=index, name=meta.name)
    return pd.DataFrame(out, index=index, columns=meta.columns.copy())


def times_as_positions(index) -> bool:
    """Whether ``predict`` labels the forecasts past ``index`` (a pandas row index as
    :func:`~tssdpa.checks.time_index` reads it: ``ArrayMeta.read_index``) by position
    although it holds times: a DatetimeIndex / TimedeltaIndex of no step pandas infers."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)):
        return False
    return _continuation(pd, index)["type"] == "position"


def path_like(out: np.ndarray, meta: ArrayMeta):
    """``forecast_path``'s (T, H, C) ``out`` for the input ``meta`` describes: (T, H) for 1-D
    input, (T, H, C) otherwise, numpy or a tensor as the input was (its device, and dtype as
    :func:`~tssdpa.estimators.arrays.restore` gives); a DataFrame on a pandas input's index."""
    if meta.kind not in ("series", "frame"):
        out = out[:, :, 0] if meta.was_1d else out
        return tensor_like(out, meta) if meta.kind == "torch" else out
    import pandas as pd  # the input was pandas

    T, H, C = out.shape
    h = pd.RangeIndex(1, H + 1, name="h")
    if meta.kind == "series":
        return pd.DataFrame(out[:, :, 0], index=meta.index, columns=h)
    cols = meta.columns
    if isinstance(cols, pd.MultiIndex):  # its levels then h: path[('imu', 'ax')] a channel's
        columns = pd.MultiIndex.from_tuples([(*c, k) for c in cols for k in h],
                                            names=[*cols.names, "h"])  # fmt: skip
    else:
        columns = pd.MultiIndex.from_product([cols, h], names=[cols.name, "h"])
    # (T, C, H) flattened: each channel's H horizons side by side, as the columns list them
    return pd.DataFrame(out.transpose(0, 2, 1).reshape(T, C * H), index=meta.index,
                        columns=columns)  # fmt: skip


def saved_output(estimator) -> dict | None:
    """What :func:`record_output` recorded, in JSON types, for ``config.json`` (None where
    nothing was): ``TypeError`` / ``ValueError`` naming a label that would not come back as
    it is (:mod:`.labels`), or an index time zone that would not."""
    spec = estimator.__dict__.get(ATTRIBUTE)
    if spec is None:
        return None
    import pandas as pd  # fitted on pandas: it is loaded

    ix = {**spec["index"], "name": encode_label(spec["index"]["name"], "the index's name")}
    if ix.get("tz") is not None:
        ix["tz"] = str(ix["tz"])
    saved = {"kind": spec["kind"], "index": ix}
    if spec["kind"] == "series":
        saved["name"] = encode_label(spec["name"], "the Series' name")
    else:
        columns = spec["columns"]
        saved["columns"] = [encode_label(c, "the column label") for c in columns]
        names = [encode_label(n, "the columns' name") for n in columns.names]
        if isinstance(columns, pd.MultiIndex):
            saved["columns_names"] = names
        else:
            saved["columns_name"] = names[0]
        # numpy's dtypes only: a nullable Int64 one ("Int64" is no numpy name) made the
        # file unreadable, and save blamed the index's time zone; refused below, by name
        if isinstance(columns.dtype, np.dtype) and columns.dtype.kind in "biuf":
            saved["columns_dtype"] = columns.dtype.name  # uint8 labels: not the default int64
        if isinstance(columns, (pd.DatetimeIndex, pd.TimedeltaIndex)):  # their resolution,
            saved["columns_unit"] = columns.unit  # which the labels do not carry
    try:  # as load reads it: the labels are, an index's time zone may not be
        differs = _difference(spec, loaded_output(saved, "pandas_output", None))
    except ValueError:
        differs = f"{_INDEX_DIFFERS} (time zone {ix.get('tz')!r})"
    if differs:
        if differs.startswith(_INDEX_DIFFERS):
            advice = "; a time zone known by no name: convert the index, e.g. tz_convert('UTC')"
        elif differs.startswith(_COLUMNS_DIFFER):  # a categorical or nullable dtype
            advice = ("; give the columns a numpy dtype or text, e.g. df.columns = "
                      "df.columns.astype(str), and fit again")  # fmt: skip
        else:
            advice = ""
        raise ValueError(f"cannot save {differs}: it would not come back from the file as it "
                         f"is, and the loaded model's predict would differ{advice}")  # fmt: skip
    return saved


def _difference(spec: dict, back: dict) -> str | None:
    """What labels ``predict`` otherwise after a recorded output ``spec`` went through the file
    (``back``): None where nothing does (names, columns, the continued index)."""
    import pandas as pd

    if not same_label(spec.get("name"), back.get("name")):
        return f"the Series' name {spec['name']!r}"
    if spec["kind"] == "frame":
        a, b = spec["columns"], back["columns"]
        # (a RangeIndex comes back an Index of the same integers: the same labels)
        multi = isinstance(a, pd.MultiIndex), isinstance(b, pd.MultiIndex)
        if not (multi[0] == multi[1] and a.dtype == b.dtype and len(a) == len(b)
                and all(map(same_label, a, b))
                and all(map(same_label, a.names, b.names))):  # fmt: skip
            return f"{_COLUMNS_DIFFER} {a!r:.200}"
    ia, ib = _future(pd, spec["index"], 3), _future(pd, back["index"], 3)
    if not (type(ia) is type(ib) and ia.equals(ib) and same_label(ia.name, ib.name)
            and str(getattr(ia, "tz", None)) == str(getattr(ib, "tz", None))):  # fmt: skip
        return f"{_INDEX_DIFFERS} (continued as {ia!r:.200})"
    return None


def loaded_output(saved, where, n_channels: int | None) -> dict:
    """``config.json``'s ``pandas_output`` as :func:`record_output` records it, checked against
    the ``n_channels`` fitted (a ``ValueError`` naming ``where`` and the key where it is
    malformed)."""
    try:
        spec = _decoded(saved, n_channels)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{where}: malformed 'pandas_output' ({exc}): {saved!r:.200}") from None
    return spec


def _decoded(saved, n_channels: int | None) -> dict:
    """The recorded output a saved ``pandas_output`` describes; ``ValueError`` saying what is
    wrong with it."""
    import pandas as pd  # a model fitted on pandas is used with pandas

    if not (isinstance(saved, dict) and isinstance(saved.get("index"), dict)):
        raise ValueError("an object with an 'index' object")
    ix = {**saved["index"], "name": decode_label(saved["index"]["name"], "index name")}
    spec = {"kind": saved.get("kind"), "index": ix}
    if spec["kind"] == "series":
        if n_channels not in (None, 1):
            raise ValueError(f"a Series output for n_channels_={n_channels}")
        spec["name"] = decode_label(saved.get("name"), "name")
    elif spec["kind"] == "frame":
        cols = saved.get("columns")
        if not isinstance(cols, list) or n_channels not in (None, len(cols)):
            raise ValueError(f"one column per channel (n_channels_={n_channels})")
        spec["columns"] = _columns(pd, saved, [decode_label(c, "column label") for c in cols])
    else:
        raise ValueError("kind 'series' or 'frame'")
    try:
        _future(pd, ix, 2)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(
            f"an index that cannot be continued: {type(exc).__name__}: {exc}"
        ) from None
    return spec


def _columns(pd, saved: dict, labels: list):
    """The column Index of a saved frame output: its ``labels``, name(s) and numeric dtype."""
    names = saved.get("columns_names")
    if names is not None:  # a MultiIndex: one name per level, each label a tuple of them
        if not (isinstance(names, list) and names and all(
                isinstance(c, tuple) and len(c) == len(names) for c in labels)):  # fmt: skip
            raise ValueError("columns_names: one name per level of tuple column labels")
        names = [decode_label(n, "columns_names") for n in names]
        return pd.MultiIndex.from_tuples(labels, names=names)
    dtype, unit = saved.get("columns_dtype"), saved.get("columns_unit")
    if dtype is not None and dtype not in NUMPY_DTYPES:
        raise ValueError(f"columns_dtype {dtype!r}: a numpy bool, integer or float dtype")
    name = decode_label(saved.get("columns_name"), "columns_name")
    columns = pd.Index(labels, name=name, dtype=dtype, tupleize_cols=False)
    if unit is None:
        return columns
    if unit not in ("s", "ms", "us", "ns") or not hasattr(columns, "as_unit"):
        raise ValueError(f"columns_unit {unit!r}: s, ms, us or ns, of time column labels")
    return columns.as_unit(unit)
