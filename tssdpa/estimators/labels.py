"""Pandas labels in a saved config (JSON) and back, exactly, or refused at save.

A forecaster fitted on pandas returns ``predict`` labelled as its fit was
(:mod:`.pandas_out`): the Series' name, the DataFrame's column labels and names, the index's
name. JSON holds text, numbers, booleans and null; the other labels pandas users give are
written as small typed objects, each read back strictly (an object of any other shape is
refused, and nothing is unpickled):

* a numpy scalar (``np.int64(3)``): ``{"numpy": "int64", "value": 3}``, of a bool, integer
  or float dtype;
* a tuple (a MultiIndex column): ``{"tuple": [label, ...]}``;
* a ``pd.Timestamp``: ``{"timestamp": ISO 8601, "tz": its zone's name or null}`` (a zone
  known by no name, such as dateutil's ``tzoffset``, is refused: ``ValueError``);
* a ``pd.Timedelta``: ``{"timedelta": ISO 8601}``;
* a ``pd.Period``: ``{"period": its text, "freq": its frequency}``.

:func:`encode_label` raises ``TypeError`` naming the label for anything else (a frozenset, a
``datetime.date``, an object of the user's class): a saved model whose ``predict`` came back
labelled otherwise (or as numpy, as it did before) would differ from the fitted one without a
word.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["decode_label", "encode_label", "same_label"]

#: the numpy scalar types a label may have (what pandas Index dtypes hold of numbers)
NUMPY_DTYPES = (
    "bool",
    *(f"{sign}int{bits}" for sign in ("", "u") for bits in (8, 16, 32, 64)),
    *(f"float{bits}" for bits in (16, 32, 64)),
)
_JSON_SCALARS = (str, bool, int, float)


def encode_label(value, what: str):
    """``value``, a pandas label, as JSON (see the module's docstring); ``TypeError`` naming
    ``what`` and the label where it has no exact form (``ValueError`` where it is a Timestamp
    whose time zone has none)."""
    import pandas as pd  # a label of a pandas fit: pandas is loaded

    if value is None or type(value) in _JSON_SCALARS:
        return value
    if isinstance(value, np.generic) and value.dtype.name in NUMPY_DTYPES:
        return {"numpy": value.dtype.name, "value": value.item()}
    if type(value) is tuple:
        return {"tuple": [encode_label(v, what) for v in value]}
    if type(value) is pd.Timestamp:
        out = {"timestamp": value.isoformat(), "tz": None if value.tz is None else str(value.tz)}
        if value.tz is not None:  # a zone known by no name (dateutil's tzoffset) does not come
            _zone_comes_back(value, out, what)  # back: refused here, naming the label
        return out
    if type(value) is pd.Timedelta:
        return {"timedelta": value.isoformat()}
    if type(value) is pd.Period:
        return {"period": str(value), "freq": value.freqstr}
    raise TypeError(
        f"cannot save {what} {value!r} of type {type(value).__name__}: the loaded model would "
        "label its predictions otherwise (labels that can be saved: text, numbers, booleans, "
        "None, numpy scalars, tuples of them, Timestamps, Timedeltas, Periods); rename it and "
        "fit again"
    )


def _zone_comes_back(value, encoded: dict, what: str) -> None:
    """``ValueError`` naming ``what`` and the Timestamp ``value`` where its ``encoded`` form
    does not read back as it (its time zone is known by no name pandas reads): the error
    otherwise blamed the series' index, whose zone was not the one lost."""
    try:
        same = same_label(decode_label(encoded, what), value)
    except ValueError:
        same = False
    if not same:
        raise ValueError(f"cannot save {what} {value!r}: its time zone {str(value.tz)!r} is "
                         "known by no name and would not come back from the file; convert it, "
                         "e.g. tz_convert('UTC'), and fit again")  # fmt: skip


def decode_label(value, what: str):
    """The label :func:`encode_label` wrote as ``value``; ``ValueError`` naming ``what`` where
    ``value`` is not one of its forms."""
    import pandas as pd

    if value is None or type(value) in _JSON_SCALARS:
        return value
    keys = set(value) if isinstance(value, dict) else None
    try:
        if keys == {"numpy", "value"} and value["numpy"] in NUMPY_DTYPES:
            kind = np.dtype(value["numpy"]).kind
            allowed = {"b": (bool,), "f": (int, float)}.get(kind, (int,))
            if type(value["value"]) in allowed:
                out = np.dtype(value["numpy"]).type(value["value"])
                if out.item() == value["value"] or math.isnan(out):
                    return out
        if keys == {"tuple"} and isinstance(value["tuple"], list):
            return tuple(decode_label(v, what) for v in value["tuple"])
        if keys == {"timestamp", "tz"} and isinstance(value["timestamp"], str):
            stamp, tz = pd.Timestamp(value["timestamp"]), value["tz"]
            if tz is None and stamp.tz is None:
                return stamp
            if isinstance(tz, str) and stamp.tz is not None:
                return stamp.tz_convert(tz)
        if keys == {"timedelta"} and isinstance(value["timedelta"], str):
            return pd.Timedelta(value["timedelta"])
        if keys == {"period", "freq"} and all(isinstance(value[k], str) for k in keys):
            return pd.Period(value["period"], freq=value["freq"])
    except (TypeError, ValueError, OverflowError, KeyError) as exc:
        raise ValueError(f"{what}: {value!r:.100} ({type(exc).__name__}: {exc})") from None
    raise ValueError(
        f"{what} must be text, a number, a boolean, null or a typed label (numpy, tuple, "
        f"timestamp, timedelta, period), got {value!r:.100}"
    )


def same_label(a, b) -> bool:
    """Whether labels ``a`` and ``b`` are the same, of the same type (``1``, ``1.0``,
    ``True`` and ``np.int64(1)`` are equal in Python, not the same label); NaN is NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(same_label, a, b))
    if isinstance(a, np.generic) and a.dtype != b.dtype:
        return False
    if getattr(a, "tz", None) is not None and str(a.tz) != str(b.tz):
        return False
    if a == b:
        return True
    return isinstance(a, (float, np.floating)) and math.isnan(a) and math.isnan(b)
