"""One conversion of user input to a (T, C) float64 array, and back to the user's type.

Every estimator reads its series with :func:`as_2d` and returns results with :func:`restore`:
numpy arrays, pandas Series / DataFrames (index, columns and name kept) and torch tensors
(dtype and device kept) go in and come back out alike. The input is never mutated.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tssdpa.checks import check_fits_dtype, time_index, to_seconds
from tssdpa.estimators.plain_input import check_plain_input, real_state
from tssdpa.estimators.tensor_input import is_tensor
from tssdpa.estimators.text_input import (
    floats,
    pandas_floats,
    refuse_text,
    refuse_text_columns,
    true_false_columns,
)
from tssdpa.estimators.text_input import numeric as _numeric
from tssdpa.estimators.time_values import refuse_times

__all__ = ["FLOAT32_MAGNITUDES", "MAGNITUDES", "STREAM_TOLD", "ArrayMeta", "as_2d",
           "check_float32_range", "check_magnitudes", "check_no_inf", "check_columns",
           "check_state", "float32_samples_note", "is_tensor", "peak_magnitudes",
           "plain_step_input", "record_columns", "restore", "step_input", "tensor_like",
           "unmasked", "within_reach"]  # fmt: skip

#: set on an estimator once a stream warned of its uneven index (fit_input.denoiser_input);
#: a fit drops it (fit_guard): a new stream warns again
STREAM_TOLD = "_stream_told_uneven"

#: the magnitudes of the values a channel may hold: beyond the largest, the squares that
#: distances, variances and least squares sum overflow in float64; a channel whose largest
#: value is below the smallest is refused by every ``fit`` (its squares underflow to 0)
MAGNITUDES = (1e-150, 1e150)
#: the same under a float32 compute dtype (its range is about 1e-38 .. 3e38), whose 24-bit
#: significand also cannot resolve a channel whose values reach FLOAT32_SPREAD times their
#: spread (a unit signal on an offset of 1e9 rounds in steps of 64)
FLOAT32_MAGNITUDES, FLOAT32_SPREAD = (1e-15, 1e15), 1e5
_FLOAT64 = np.dtype(np.float64)


@dataclass
class ArrayMeta:
    """How to give the user back an array like the one they passed in."""

    kind: str  # "numpy", "series", "frame", "torch"
    was_1d: bool
    index: Any = None
    columns: Any = None
    name: Any = None
    torch_dtype: Any = None
    torch_device: Any = None
    timestamps: np.ndarray | None = None  # seconds, from a DatetimeIndex or TimedeltaIndex
    flags: tuple = ()  # a DataFrame's columns of true / false values (bool_columns warns)
    #: ``index`` as the rules for a time index read it (:func:`~tssdpa.checks.time_index`:
    #: pyarrow times, Python dates as a DatetimeIndex; ``index`` itself otherwise), read once
    #: here for every check and output of the call (it was read again by each, 5 times a
    #: ``predict``)
    read_index: Any = field(init=False, default=None)

    def __post_init__(self):
        self.read_index = time_index(self.index)


def unmasked(x):
    """``x``, or for a numpy masked array a new array with the missing sample where it is
    masked -- float64 with NaN for numbers, objects with NaN for any other dtype (checked as
    the caller's objects would be): ``np.array`` and ``np.asarray`` read the data under
    the mask (the caller's array is not changed)."""
    if not isinstance(x, np.ma.MaskedArray):
        return x
    if x.dtype.kind in "biuf":
        return x.astype(np.float64).filled(np.nan)
    return x.astype(object).filled(np.nan)


def as_2d(x, name: str = "x", allow_empty: bool = False) -> tuple[np.ndarray, ArrayMeta]:
    """Convert numpy / pandas / torch input to a new float64 (T, C) array (input untouched).

    Raises ``TypeError`` for non-numeric input and ``ValueError`` (naming ``name``) for the
    wrong number of dimensions, no samples (unless ``allow_empty``: a chunk of a stream may
    have none), no channels, ``inf`` (NaN marks a missing
    sample; ``inf`` is refused everywhere) or a value beyond 1e150 in magnitude
    (``MAGNITUDES``). A numpy masked array's masked entries are missing samples (NaN).
    """
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(
            f"{name} must be a real numeric array, Series, DataFrame or tensor, "
            f"got {type(x).__name__}"
        )
    # a pandas object means pandas is loaded: a numpy caller never waits for its import
    pd = sys.modules.get("pandas")
    is_pandas = pd is not None and isinstance(x, (pd.DataFrame, pd.Series))
    if is_pandas:
        dtypes = x.dtypes if isinstance(x, pd.DataFrame) else [x.dtype]
        if any(pd.api.types.is_complex_dtype(d) for d in dtypes):
            raise TypeError(f"{name} must be real, got complex values")
    if is_pandas and isinstance(x, pd.DataFrame):
        refuse_text_columns(x, name)
    elif is_pandas and dtypes[0].kind in "OSU":
        refuse_text(x, name)
    if is_pandas:  # datetime64, or Python's dates kept as objects
        refuse_times(x, name)
    if is_pandas:  # pandas' NA is a missing sample in an object column as in a Float64 one
        meta = (ArrayMeta("frame", False, index=x.index, columns=x.columns,
                          flags=true_false_columns(x))
                if isinstance(x, pd.DataFrame) else ArrayMeta("series", True, index=x.index,
                                                              name=x.name))  # fmt: skip
        arr = _numeric(lambda: pandas_floats(x), x, name)
    elif is_tensor(x):
        import torch

        if x.is_complex():
            raise TypeError(f"{name} must be real, got a {x.dtype} tensor")
        meta = ArrayMeta("torch", x.ndim == 1, torch_dtype=x.dtype, torch_device=x.device)
        arr = x.detach().cpu().to(torch.float64).numpy().copy()
    else:
        check_plain_input(x, name)  # complex values, a list of separate series
        if isinstance(getattr(x, "dtype", None), np.dtype):  # datetime64, dates as objects
            refuse_times(x, name)
        arr = _numeric(lambda: floats(unmasked(x)), x, name)  # pd.NA in a list: missing
        refuse_text(unmasked(x), name)
        meta = ArrayMeta("numpy", arr.ndim == 1)
    if arr.ndim == 1:
        arr = arr[:, None]
        meta.was_1d = True
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D (T,) or 2-D (T, C), got shape {arr.shape}")
    if arr.shape[0] == 0 and not allow_empty:
        raise ValueError(f"{name} is empty (0 samples)")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 channels")
    said = (lambda c: f"{name} column {meta.columns[c]!r}") if meta.kind == "frame" else None
    if np.isinf(arr).any():  # a DataFrame's column by its label (it was by position, or none)
        where = said(int(np.argwhere(np.isinf(arr))[0, 1])) if said else name
        raise ValueError(f"{where} contains inf; use NaN to mark missing samples")
    check_magnitudes(arr, name, channel=said)
    times = meta.read_index  # pyarrow times and Python dates too
    if times is not None and isinstance(times, (pd.DatetimeIndex, pd.TimedeltaIndex)):
        # absolute seconds (chunked calls agree): since the epoch, or zero for a TimedeltaIndex
        meta.timestamps = to_seconds(times, "index")
    return arr, meta


def peak_magnitudes(arr: np.ndarray) -> np.ndarray:
    """The largest magnitude of each channel of (T, C) ``arr`` (0 for an all-NaN channel, or
    where ``arr`` has no rows)."""
    return np.max(np.where(np.isnan(arr), 0.0, np.abs(arr)), axis=0, initial=0.0)


def check_float32_range(arr: np.ndarray, dtype, name: str, fit: bool = False) -> None:
    """Under a float32 compute ``dtype``, a ``ValueError`` naming the channel of (T, C)
    ``arr`` and ``dtype`` where a finite value is beyond ``FLOAT32_MAGNITUDES[1]`` (its
    squares overflow to inf); with ``fit`` (the whole series, not a chunk of a stream) also
    where the channel is nonzero and below ``FLOAT32_MAGNITUDES[0]`` (its squares underflow
    to 0) or reaches ``FLOAT32_SPREAD`` times its standard deviation (float32 rounds the
    signal away). Nothing otherwise: inf and NaN are other checks' to refuse."""
    if type(dtype) is str and dtype == "float64":  # the default, first: step must stay cheap
        return
    try:
        if np.dtype(dtype) != np.float32:
            return
    except TypeError:  # not a dtype: the estimator's own check names it
        return
    finite = np.where(np.isfinite(arr), arr, np.nan)
    peak = peak_magnitudes(finite)
    lo, hi = FLOAT32_MAGNITUDES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all NaN: NaN, never compared true
        # about the median: a constant channel's spread is 0 (np.std of 800 values of 3.3 is
        # 4.4e-16, of 7.0 exactly 0: one was refused, the other not)
        centred = finite - np.nanmedian(finite, axis=0) if fit else None
        spread = np.nanstd(centred, axis=0) if fit else np.full(len(peak), np.nan)
    for c in range(arr.shape[1]):
        why = None
        if peak[c] > hi or (fit and 0 < peak[c] < lo):
            why = f"reaches magnitude {peak[c]:.3g}, beyond {lo:g} to {hi:g}"
        elif peak[c] >= FLOAT32_SPREAD * spread[c] > 0:
            why = f"reaches {peak[c]:.3g}, {peak[c] / spread[c]:.3g} times its spread"
        if why:
            raise ValueError(f"{name} channel {c} {why}, which dtype=float32 cannot compute "
                             "on: use dtype='float64' or rescale it (other units, less an "
                             "offset)")  # fmt: skip


def float32_samples_note(filt) -> str | None:
    """What float32 samples do to a channel that ``filt`` was fitted on (``center_``,
    ``spread_``, ``channel_scale_``), where its level is more than ``FLOAT32_SPREAD`` times its
    spread and it is not constant: they round it coarser than a float32 compute dtype is
    allowed to (``fit`` refuses it there); None where they do not (or nothing is fitted)."""
    center, spread = getattr(filt, "center_", None), getattr(filt, "spread_", None)
    if center is None or spread is None:
        return None
    center, spread = np.asarray(center, dtype=np.float64), np.asarray(spread, dtype=np.float64)
    ratio = np.abs(center) / spread
    # a spread at float64's rounding of the level is a constant channel's (np.std of 3.3s:
    # 4.4e-16), which float32 keeps exactly; so is a spread_ of exactly 1, fit's stand-in for
    # an np.std of 0 (800 samples of 2e5 or 1.7e9)
    constant = (spread <= 64 * np.spacing(np.abs(center))) | (spread == 1.0)
    far = np.flatnonzero((ratio > FLOAT32_SPREAD) & ~constant)
    if not far.size:
        return None
    c = int(far[0])
    units = getattr(filt, "channel_scale_", None)  # center_ is in the kernel's units
    level = float(center[c] * (1.0 if units is None else np.asarray(units)[c]))
    step = float(np.spacing(np.float32(abs(level))))
    return (f"channel {c} was fitted about {level:.6g}, {ratio[c]:.3g} times its spread: "
            f"float32 rounds it in steps of {step:.3g}, {step / abs(level) * ratio[c]:.2g} of "
            "its spread. Subtract an offset (its level) from x before the model and add it "
            "back to y (the filter is equivariant to an offset)")  # fmt: skip


def within_reach(
    z: np.ndarray,
    name: str,
    reach: float = MAGNITUDES[1],
    why: str = "its squares overflow float64 (rescale it as the fitted series was, or fit on it)",
) -> np.ndarray:
    """Standardised (T, C) ``z``, or ``ValueError`` naming ``name``, the channel and ``why``
    where a value lies more than ``reach`` fitted standard deviations from the fitted mean: a
    series within ``MAGNITUDES`` can still be that far from a channel fitted at a small scale,
    and the squared distances and Gram matrices of its patterns overflow to inf (the neighbour
    search of ProjectionForecaster raised IndexError on it; a float32 network, whose reach is
    ``FLOAT32_MAGNITUDES[1]``, gave NaN outputs)."""
    with np.errstate(invalid="ignore"):
        far = np.abs(z) > reach
    if far.any():
        c = int(np.argwhere(far)[0, 1])
        raise ValueError(f"{name} channel {c} lies more than {reach:g} fitted standard "
                         f"deviations from the fitted mean: {why}")  # fmt: skip
    return z


def check_magnitudes(arr: np.ndarray, name: str, lower: bool = False, channel=None) -> None:
    """``ValueError`` for a channel of (T, C) ``arr`` with a value beyond ``MAGNITUDES[1]`` in
    magnitude (its squares overflow); with ``lower`` (a fit's series, the command line's
    columns) also for one nonzero and below ``MAGNITUDES[0]`` throughout (they underflow to
    0). ``channel(c)`` names channel ``c`` (default "``name`` channel c")."""
    peak = peak_magnitudes(arr)
    said = channel or (lambda c: f"{name} channel {c}")
    for c in np.flatnonzero(peak > MAGNITUDES[1])[:1]:
        raise ValueError(
            f"{said(c)} reaches magnitude {peak[c]:.3g}, beyond {MAGNITUDES[1]:g} "
            "where squares overflow float64: rescale it (e.g. other units)"
        )
    for c in np.flatnonzero((peak > 0) & (peak < MAGNITUDES[0]))[:1] if lower else ():
        raise ValueError(f"{said(c)} is at most {peak[c]:.3g} in magnitude, below "
                         f"{MAGNITUDES[0]:g} where squares underflow float64: rescale it (e.g. "
                         "other units)")  # fmt: skip


def step_input(sample, state) -> tuple[np.ndarray, np.ndarray]:
    """A ``step`` call's ``sample`` as float64 and the history array of its ``state`` (the
    state itself, or the first item of a tuple state), each refused by name if malformed or
    holding complex values or inf (NaN marks a missing sample), the sample also beyond
    ``MAGNITUDES``."""
    if is_tensor(sample):  # as as_2d: numpy() refuses one that requires grad or is on a GPU
        if sample.is_complex():
            raise TypeError(f"sample must be real, got a {sample.dtype} tensor")
        sample = sample.detach().cpu().double()  # numpy has no bfloat16: float64 first
    pd = sys.modules.get("pandas")
    if pd is not None and sample is pd.NA:  # a nullable column's missing value, as filter reads
        sample = np.nan
    elif pd is not None and isinstance(sample, pd.Series):  # a row: its NA too, as filter's
        sample = _numeric(lambda: pandas_floats(sample), sample, "sample")
    s = _numeric(lambda: floats(unmasked(sample), copy=False), sample, "sample")
    if not isinstance(sample, (float, int)):  # the cheap test first: step must stay cheap
        refuse_text(unmasked(sample), "sample")
    state = real_state(state, "state")  # the torch twin's tensors, as filter reads them
    hist = state[0] if isinstance(state, tuple) and state else state
    if not isinstance(hist, np.ndarray) or hist.dtype.kind != "f":  # "got ndarray" of an int one
        got = f"an {hist.dtype} array" if isinstance(hist, np.ndarray) else type(state).__name__
        raise TypeError(f"state must be what initial_state() or step() returned (float), got {got}")
    check_no_inf(s, "sample")
    # refused as in filter: the latency path of step computed on, overflowing to a warning
    if (np.abs(s) > MAGNITUDES[1]).any():  # the cheap test first: step must stay cheap
        check_magnitudes(s.reshape(1, -1), "sample")
    check_no_inf(hist, "state")
    if isinstance(state, tuple) and len(state) > 1:  # (samples, times): NaN marks no sample
        check_no_inf(np.asarray(state[1], dtype=np.float64), "state's times")
    return s, hist


def plain_step_input(sample, state) -> bool:
    """Whether a ``step`` call's ``sample`` and ``state`` pass every check of
    :func:`step_input` at a glance, the usual call: a float64 array of at most one dimension
    within ``MAGNITUDES`` (hence finite) and a finite float64 (rows, C) array, C its size.
    False sends the caller to :func:`step_input`, whose checks name what is wrong."""
    if not (type(sample) is np.ndarray and type(state) is np.ndarray and sample.ndim < 2
            and state.ndim == 2 and sample.dtype == _FLOAT64 and state.dtype == _FLOAT64
            and sample.size == state.shape[1]):  # fmt: skip
        return False
    values = sample.tolist()  # Python floats: cheaper than numpy on a few values
    if not all(abs(v) <= MAGNITUDES[1] for v in (values if sample.ndim else (values,))):
        return False  # NaN too (a missing sample): the general path takes it
    return bool(np.isfinite(state).all())  # (a sum, cheaper, warned where it overflowed)


def refuse_state_text(a, name: str) -> None:
    """``TypeError`` naming ``name`` where a state's part ``a`` holds text, as ``x`` is
    refused: a list's "7.5" was read as 7.5 and "nan" as NaN. A float array is not looked
    into (a step reads its state on every sample); a ragged one is left to the shape check."""
    if type(a) is not np.ndarray or a.dtype.kind in "OUS":
        try:
            refuse_text(a, name)
        except ValueError:
            pass


def check_state(zi, ref):
    """A state ``zi`` given back to ``filter`` / ``step``, checked against ``ref``, the empty
    state of the same filter (an array, or a tuple of arrays): as float64 arrays of ``ref``'s
    shapes. An empty (all-NaN) one-column history takes ``ref``'s channel count, since an
    empty state holds no channel data; anything else of the wrong shape raises ``ValueError``
    naming ``zi``, and complex values ``TypeError``. A tensor (the state of the torch twin of
    the exported step) is read as a tensor ``x`` is
    (:func:`~tssdpa.estimators.tensor_input.state_arrays`)."""
    zi = real_state(zi, "zi")
    if isinstance(ref, tuple):
        if not isinstance(zi, tuple) or len(zi) != len(ref):
            raise ValueError(f"zi must be a tuple of {len(ref)} arrays (see initial_state())")
        out = []
        for k, (a, r) in enumerate(zip(zi, ref)):
            refuse_state_text(a, f"zi[{k}]")
            a = floats(a, copy=False)
            if k == 0 and a.shape == (r.shape[0], 1) and np.isnan(a).all():
                a = np.broadcast_to(a, r.shape).copy()  # empty: sized by the first chunk
            if a.shape != r.shape:
                raise ValueError(f"zi[{k}] has shape {a.shape}, expected {r.shape}")
            out.append(check_no_inf(a, f"zi[{k}]"))
        return tuple(out)
    refuse_state_text(zi, "zi")
    try:
        a = floats(zi, copy=False)  # pd.NA, as None, marks no sample yet
    except (ValueError, TypeError):  # numpy's "inhomogeneous shape" said nothing of the cause
        if isinstance(zi, (tuple, list)) and all(isinstance(v, np.ndarray) for v in zi):
            raise ValueError(
                f"zi is a {type(zi).__name__} of {len(zi)} arrays, the state of another filter "
                "(a tau filter's is (samples, times)); this one's is one array: start from "
                "its initial_state()"
            ) from None
        raise ValueError(
            f"zi must be an array of shape {ref.shape} (see initial_state())"
        ) from None
    if a.ndim == 1 and (ref.shape[1] == 1 or np.isnan(a).all()):
        a = a[:, None]
    if a.ndim == 2 and a.shape[0] == ref.shape[0] and a.shape[1] == 1 and np.isnan(a).all():
        a = np.broadcast_to(a, ref.shape).copy()  # an empty state holds no channel data
    if a.shape != ref.shape:
        raise ValueError(f"zi has shape {a.shape}, expected {ref.shape}")
    return check_no_inf(a, "zi")


def check_no_inf(a: np.ndarray, name: str) -> np.ndarray:
    """``a``, or ``ValueError`` naming it where it holds inf (a state marks none by NaN, as
    every input does: projection_filter passed an inf history entry on as inf outputs)."""
    if np.isinf(a).any():
        raise ValueError(f"{name} contains inf; use NaN to mark missing samples")
    return a


def restore(y: np.ndarray, meta: ArrayMeta):
    """Give ``y`` (T, C) the type and shape of the input described by ``meta``.

    Tensors come back on the input's device, in its dtype when that is floating point (else
    float64: a filtered integer signal is not an integer signal).
    """
    out = y[:, 0] if meta.was_1d and y.ndim == 2 else y
    if meta.kind in ("frame", "series"):
        import pandas as pd  # loaded already: the input was pandas
    if meta.kind == "frame":
        return pd.DataFrame(out, index=meta.index, columns=meta.columns)
    if meta.kind == "series":
        return pd.Series(out, index=meta.index, name=meta.name)
    if meta.kind == "torch":
        return tensor_like(out, meta)
    return out


def tensor_like(out: np.ndarray, meta: ArrayMeta):
    """``out`` as a tensor on the device of the tensor input ``meta`` describes, in its dtype
    when that is floating point (else float64: a filtered integer signal is not an integer
    signal); a value beyond that dtype's range raises (:func:`check_fits_dtype`)."""
    import torch  # the input was a tensor: it is loaded

    dtype = meta.torch_dtype if meta.torch_dtype.is_floating_point else torch.float64
    out = check_fits_dtype(np.array(out), torch.finfo(dtype).max, str(dtype))
    return torch.as_tensor(out, dtype=dtype, device=meta.torch_device)


#: where the fit guard keeps the text name of a Series an estimator was fitted on. In memory
#: alone: ``save`` writes no such key, and a loaded forecaster reads the name from what its
#: ``predict`` returns (``_pandas_output_``, saved); a loaded denoiser has none to check.
SERIES_NAME = "_series_name_in_"
#: where the fit guard keeps the labels of a DataFrame's columns that are not all text (tuples
#: of a MultiIndex, sensor numbers 3, 7, 12, positions 0, 1, ...): in memory alone, as
#: :data:`SERIES_NAME`; a loaded forecaster reads them from ``_pandas_output_``
FRAME_COLUMNS = "_column_labels_in_"


def record_columns(estimator, data) -> None:
    """Set ``estimator.feature_names_in_`` to the column names of ``data`` when it is a
    pandas DataFrame whose column names are all text (as scikit-learn does), else remove it:
    called after every ``fit``. ``save`` keeps text names only. A Series' text name is kept
    as :data:`SERIES_NAME`, and other labels (positions too) as :data:`FRAME_COLUMNS` (in
    memory; see there)."""
    pd = sys.modules.get("pandas")
    if (pd is not None and isinstance(data, pd.DataFrame)
            and all(isinstance(c, str) for c in data.columns)):  # fmt: skip
        estimator.feature_names_in_ = list(data.columns)
    else:
        estimator.__dict__.pop("feature_names_in_", None)
    estimator.__dict__.pop(FRAME_COLUMNS, None)
    if pd is not None and isinstance(data, pd.DataFrame) and not hasattr(
            estimator, "feature_names_in_"):  # fmt: skip
        estimator.__dict__[FRAME_COLUMNS] = list(data.columns)  # positions too: [1, 0] swapped
    estimator.__dict__.pop(SERIES_NAME, None)
    if pd is not None and isinstance(data, pd.Series) and isinstance(data.name, str):
        estimator.__dict__[SERIES_NAME] = data.name


def _fitted_series_name(estimator) -> str | None:
    """The text name of the Series ``estimator`` was fitted on, or None (not a Series, no
    text name, or a denoiser loaded from a file, which keeps no name)."""
    name = estimator.__dict__.get(SERIES_NAME)
    spec = estimator.__dict__.get("_pandas_output_")  # a loaded forecaster's predict output
    if name is None and isinstance(spec, dict) and spec.get("kind") == "series":
        name = spec.get("name")
    return name if isinstance(name, str) else None


def _fitted_labels(estimator) -> list | None:
    """The labels of the DataFrame's columns ``estimator`` was fitted on where they are not
    all text (:data:`FRAME_COLUMNS`; a loaded forecaster's from its saved ``predict``
    output), else None."""
    labels = estimator.__dict__.get(FRAME_COLUMNS)
    spec = estimator.__dict__.get("_pandas_output_")
    if labels is None and isinstance(spec, dict) and spec.get("kind") == "frame":
        saved = list(spec["columns"])
        labels = None if all(isinstance(c, str) for c in saved) else saved
    return labels


def _label_index(labels: list):
    """``labels`` as a pandas Index (tuples kept whole), whose ``equals`` takes NaN for NaN."""
    return sys.modules["pandas"].Index(labels, dtype=object, tupleize_cols=False)


def check_columns(estimator, meta: ArrayMeta, name: str = "x") -> None:
    """``ValueError`` where a DataFrame's columns are not those of the DataFrame ``estimator``
    was fitted on, in the same order: each channel keeps its fitted scale, width and settings
    by position, so swapped columns were filtered with each other's (and labelled as given).
    A Series' text name is a one-column label likewise: a model fitted on Series 'HUFL'
    forecast Series 'OT' without a word. Labels that are not text (a MultiIndex's tuples,
    sensor numbers) are checked as well (:data:`FRAME_COLUMNS`). A Series without a text
    name (None: a numpy column's) tells nothing, nor do positions (0, 1, ...: a numpy
    array's frame) against other labels; the same labels in another order ([1, 0] for
    [0, 1]) are refused."""
    fitted = estimator.__dict__.get("feature_names_in_") or _fitted_labels(estimator)
    series = _fitted_series_name(estimator) if fitted is None else None
    what = f"the Series {series!r}" if series is not None else f"the columns {fitted}"
    labels = [series] if series is not None else fitted
    if meta.kind == "series":
        if labels is not None and list(labels) == list(range(len(labels))):
            return  # fitted on a numpy array's frame: a Series' name tells nothing against it
        if isinstance(meta.name, str) and labels is not None and labels != [meta.name]:
            raise ValueError(f"{name} is the Series {meta.name!r}, but {type(estimator).__name__}"
                             f" was fitted on {what}: rename it ({name}.rename({labels[0]!r})),"
                             " or fit on this one")  # fmt: skip
        return
    if meta.kind != "frame":
        return
    if series is not None and all(isinstance(c, str) for c in meta.columns):
        fitted = [series]  # a frame of named columns must name the fitted Series' channel
    given = list(meta.columns)
    if fitted is None or given == list(fitted) or _label_index(given).equals(_label_index(fitted)):
        return
    same = sorted(map(str, given)) == sorted(map(str, fitted))
    positional = [list(range(len(a))) == a for a in (given, list(fitted))]
    if "feature_names_in_" not in estimator.__dict__ and any(positional) and not same:
        return  # positions against other labels (a numpy array's frame): nothing to say
    how = (
        f"select them in that order ({name}[{fitted!r}])"
        if same
        else "rename them, or fit on these"
    )
    raise ValueError(f"{name} has the columns {given}, but {type(estimator).__name__} was fitted "
                     f"on {what}: {how}")  # fmt: skip
