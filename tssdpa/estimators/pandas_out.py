"""Pandas out of a forecaster fitted or called on pandas: ``predict`` and ``forecast_path``.

``filter`` and ``forecast`` give back the type they are given (:func:`restore`); these two
return another shape, so they have their own rules (docs/CONTRACTS.md):

* ``predict(steps)`` after a fit on a Series returns a Series, after a DataFrame a DataFrame
  (the fitted name or columns), on the index that continues the fitted one: a
  DatetimeIndex / TimedeltaIndex with a frequency (its own, or one pandas infers), a
  PeriodIndex, an integer index of one constant step; otherwise the positions the forecasts
  would take after the fitted series (a RangeIndex from its length), since a made-up time
  would be a guess. A fit on numpy (or a tensor) gives numpy, as before.
* ``forecast_path(y, H)`` of a Series ``y`` returns a DataFrame on ``y``'s index with the
  columns ``h`` = 1..H; of a DataFrame, one with the columns (column, h): ``out["gyro"]``
  is that channel's (T, H) path.

A saved forecaster keeps what ``predict`` returns (``config.json``'s ``pandas_output``) where
its labels are text or numbers; otherwise the loaded one returns numpy.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np

from tssdpa.estimators.arrays import ArrayMeta

__all__ = ["loaded_output", "path_like", "predicted", "record_output", "saved_output"]

ATTRIBUTE = "_pandas_output_"
_SCALARS = (str, int, float, bool, type(None), np.integer, np.floating, np.bool_)


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
    spec: dict[str, Any] = {"index": _continuation(pd, series.index)}
    if isinstance(series, pd.Series):
        spec.update(kind="series", name=series.name)
    else:
        spec.update(kind="frame", columns=series.columns.tolist(), columns_name=series.columns.name)
    estimator.__dict__[ATTRIBUTE] = spec


def _continuation(pd, index) -> dict:
    """How to continue ``index`` past its end (see the module's docstring)."""
    name = index.name
    if isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)) and index.is_monotonic_increasing:
        freq = index.freq
        if freq is None:
            with warnings.catch_warnings():  # pandas 3: inferred_freq will be an offset
                warnings.simplefilter("ignore", DeprecationWarning)
                freq = index.inferred_freq
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
    columns = pd.Index(spec["columns"], name=spec["columns_name"])
    return pd.DataFrame(out.reshape(len(out), -1), index=index, columns=columns)


def path_like(out: np.ndarray, meta: ArrayMeta):
    """``forecast_path``'s (T, H, C) ``out`` for the input ``meta`` describes: numpy (T, H) for
    1-D input, (T, H, C) otherwise; a DataFrame on a pandas input's index (see above)."""
    if meta.kind not in ("series", "frame"):
        return out[:, :, 0] if meta.was_1d else out
    import pandas as pd  # the input was pandas

    T, H, C = out.shape
    h = pd.RangeIndex(1, H + 1, name="h")
    if meta.kind == "series":
        return pd.DataFrame(out[:, :, 0], index=meta.index, columns=h)
    columns = pd.MultiIndex.from_product([meta.columns, h], names=[meta.columns.name, "h"])
    # (T, C, H) flattened: each channel's H horizons side by side, as the columns list them
    return pd.DataFrame(out.transpose(0, 2, 1).reshape(T, C * H), index=meta.index,
                        columns=columns)  # fmt: skip


def saved_output(estimator) -> dict | None:
    """What :func:`record_output` recorded, in JSON types, for ``config.json``; None where
    nothing was or its labels are not text or numbers (the loaded model returns numpy)."""
    spec = estimator.__dict__.get(ATTRIBUTE)
    if spec is None:
        return None
    ix = dict(spec["index"])
    if ix.get("tz") is not None:
        ix["tz"] = str(ix["tz"])
    saved = {**spec, "index": ix}
    labels = [saved.get("name"), saved.get("columns_name"), ix["name"], *saved.get("columns", [])]
    if not all(isinstance(v, _SCALARS) for v in labels):
        return None
    if _malformed(saved, None):  # a zone that does not come back from its name: not kept
        return None
    return saved


def loaded_output(saved, where, n_channels: int | None) -> dict:
    """``config.json``'s ``pandas_output`` checked against the ``n_channels`` fitted (a
    ``ValueError`` naming ``where`` and the key where it is malformed)."""
    why = _malformed(saved, n_channels)
    if why:
        raise ValueError(f"{where}: malformed 'pandas_output' ({why}): {saved!r:.200}")
    return saved


def _malformed(saved, n_channels: int | None) -> str | None:
    """What is wrong with a saved ``pandas_output`` (None: nothing)."""
    import pandas as pd  # a model fitted on pandas is used with pandas

    if not (isinstance(saved, dict) and isinstance(saved.get("index"), dict)):
        return "an object with an 'index' object"
    if saved.get("kind") == "series":
        if n_channels not in (None, 1):
            return f"a Series output for n_channels_={n_channels}"
    elif saved.get("kind") == "frame":
        cols = saved.get("columns")
        if not isinstance(cols, list) or n_channels not in (None, len(cols)):
            return f"one column per channel (n_channels_={n_channels})"
    else:
        return "kind 'series' or 'frame'"
    try:
        _future(pd, saved["index"], 2)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"an index that cannot be continued: {type(exc).__name__}: {exc}"
    return None
