"""Shared plumbing for the classical baselines: input conversion, parameters, validation.

Every denoiser implements ``fit(x, target=None) -> self``, ``filter(x)`` (same shape and type as
``x``), ``causal`` and ``get_params()``; every forecaster implements ``fit(y)``,
``forecast(y, horizon=h)``, ``forecast_path(y, horizon=H)`` and ``predict(steps)`` with the
rolling-origin semantics of ``docs/CONTRACTS.md``: entry ``[t, h-1]`` predicts ``y[t+h]`` from
``y[:t+1]`` only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "BaseDenoiser",
    "BaseForecaster",
    "as_2d",
    "fill_missing",
    "check_positive_int",
]


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        return None
    return torch


def as_2d(x: Any, name: str = "x") -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """Convert ``x`` to a float64 (T, C) copy and return a function restoring the input's type.

    Accepts numpy arrays (T,) or (T, C), pandas Series/DataFrame and torch tensors. The input is
    never mutated: the returned array is always a fresh copy.
    """
    import pandas as pd

    torch = _torch()
    if isinstance(x, pd.DataFrame):
        arr = x.to_numpy(dtype=np.float64, copy=True)
        index, columns = x.index, x.columns

        def restore(a):
            return pd.DataFrame(np.asarray(a).reshape(len(index), -1), index=index, columns=columns)

        return arr, restore
    if isinstance(x, pd.Series):
        arr = x.to_numpy(dtype=np.float64, copy=True)[:, None]
        index, sname = x.index, x.name

        def restore(a):
            return pd.Series(np.asarray(a).reshape(-1), index=index, name=sname)

        return arr, restore
    if torch is not None and isinstance(x, torch.Tensor):
        dtype, device, ndim = x.dtype, x.device, x.ndim
        arr = x.detach().cpu().to(torch.float64).numpy().copy()
        if ndim not in (1, 2):
            raise ValueError(f"{name} must be 1-D (T,) or 2-D (T, C); got shape {tuple(x.shape)}")
        arr = arr[:, None] if ndim == 1 else arr
        out_dtype = dtype if dtype.is_floating_point else torch.float64

        def restore(a):
            a = np.asarray(a)
            a = a.reshape(-1) if ndim == 1 else a
            return torch.as_tensor(a, dtype=out_dtype, device=device)

        return arr, restore
    try:
        arr = np.array(x, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric array-like; {exc}") from None
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (T,) or 2-D (T, C); got shape {arr.shape}")
    ndim = arr.ndim
    arr = arr[:, None] if ndim == 1 else arr

    def restore(a):
        a = np.asarray(a)
        return a.reshape(-1) if ndim == 1 else a

    return arr, restore


def fill_missing(a: np.ndarray, causal: bool) -> np.ndarray:
    """Fill NaN per column: carry the last value forward (causal) or interpolate (offline).

    Leading NaN are filled with the first finite value; an all-NaN column becomes zeros.
    """
    if not np.isnan(a).any():
        return a
    out = a.copy()
    t = np.arange(len(a))
    for c in range(a.shape[1]):
        col = out[:, c]
        ok = np.isfinite(col)
        if not ok.any():
            col[:] = 0.0
            continue
        if causal:
            idx = np.where(ok, t, 0)
            np.maximum.accumulate(idx, out=idx)
            first = np.argmax(ok)
            idx[:first] = first
            out[:, c] = col[idx]
        else:
            out[:, c] = np.interp(t, t[ok], col[ok])
    return out


def check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """Return ``value`` as int, raising ValueError naming ``name`` when it is not >= minimum."""
    if isinstance(value, bool) or not float(value).is_integer() or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


class _Params:
    """``get_params`` / ``set_params`` from the constructor signature (scikit-learn style)."""

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments as a dict."""
        sig = inspect.signature(type(self).__init__)
        return {
            k: getattr(self, k)
            for k in sig.parameters
            if k != "self" and sig.parameters[k].kind is not inspect.Parameter.VAR_KEYWORD
        }

    def set_params(self, **params) -> _Params:
        """Return a fresh, unfitted copy with ``params`` changed."""
        new = self.get_params()
        for k in params:
            if k not in new:
                raise ValueError(f"unknown parameter {k!r} for {type(self).__name__}")
        new.update(params)
        return type(self)(**new)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class BaseDenoiser(_Params):
    """Base class: ``fit`` (optional training) then ``filter``; subclasses define ``_filter``."""

    causal: bool = True
    #: whether ``fit`` learns anything from data (for the leak tests and timing tables)
    trainable: bool = False

    def fit(self, x, target=None) -> BaseDenoiser:
        """Fit on a noisy training series ``x`` (and its clean ``target`` when known)."""
        a, _ = as_2d(x, "x")
        tgt = None
        if target is not None:
            tgt, _ = as_2d(target, "target")
            if tgt.shape != a.shape:
                raise ValueError(f"target must have the shape of x {a.shape}; got {tgt.shape}")
        self.n_channels_ = a.shape[1]
        self._fit(a, tgt)
        self.fitted_ = True
        return self

    def _fit(self, a: np.ndarray, target: np.ndarray | None) -> None:
        return None

    def filter(self, x):
        """Filter ``x`` (T,) or (T, C); returns the same shape and type. NaN are filled first."""
        a, restore = as_2d(x, "x")
        if len(a) == 0:
            raise ValueError("x must not be empty")
        if self.trainable and not getattr(self, "fitted_", False):
            raise ValueError(f"{type(self).__name__} must be fitted before filter(x)")
        a = fill_missing(a, self.causal) if not getattr(self, "handles_nan", False) else a
        out = np.column_stack([self._filter_1d(a[:, c], c) for c in range(a.shape[1])])
        return restore(out)

    def _filter_1d(self, x: np.ndarray, channel: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class BaseForecaster(_Params):
    """Base class: subclasses define ``_fit_1d`` and ``_path_1d`` (per channel).

    Channels are modelled independently (a separate model per channel unless the subclass
    shares weights), as in DLinear's channel-independent setting.
    """

    trainable: bool = True
    causal: bool = True

    def fit(self, y) -> BaseForecaster:
        """Fit on the training series ``y`` (T,) or (T, C)."""
        a, _ = as_2d(y, "y")
        if len(a) < 3:
            raise ValueError(f"y must have at least 3 samples; got {len(a)}")
        self.n_channels_ = a.shape[1]
        self.train_ = a
        self._fit(a)
        self.fitted_ = True
        return self

    def _fit(self, a: np.ndarray) -> None:
        a = fill_missing(a, True)
        self.models_ = [self._fit_1d(a[:, c]) for c in range(a.shape[1])]

    def _check(self, y, horizon) -> tuple[np.ndarray, bool, int]:
        if not getattr(self, "fitted_", False):
            raise ValueError(f"{type(self).__name__} must be fitted before forecasting")
        horizon = check_positive_int(horizon, "horizon")
        a, _ = as_2d(y, "y")
        if a.shape[1] != self.n_channels_:
            raise ValueError(
                f"y must have {self.n_channels_} channel(s) like the fitted series; "
                f"got {a.shape[1]}"
            )
        was_1d = np.ndim(y) == 1 or (hasattr(y, "ndim") and y.ndim == 1)
        return fill_missing(a, True), was_1d, horizon

    def forecast_path(self, y, horizon: int = 1) -> np.ndarray:
        """Rolling-origin forecasts: ``out[t, h-1]`` predicts ``y[t+h]`` from ``y[:t+1]`` only.

        Returns (T, H) for a 1-D ``y`` and (T, H, C) otherwise; NaN where history is too short.
        """
        a, was_1d, horizon = self._check(y, horizon)
        out = self._path(a, horizon)
        return out[:, :, 0] if was_1d else out

    def _path(self, a: np.ndarray, horizon: int) -> np.ndarray:
        return np.stack(
            [self._path_1d(self.models_[c], a[:, c], horizon) for c in range(a.shape[1])], axis=-1
        )

    def forecast(self, y, horizon: int = 1) -> np.ndarray:
        """Array aligned with ``y``: entry ``t`` predicts ``y[t+horizon]`` from ``y[:t+1]``."""
        path = self.forecast_path(y, horizon)
        return path[:, horizon - 1]

    def predict(self, steps: int) -> np.ndarray:
        """Forecast ``steps`` values past the end of the series given to ``fit``."""
        steps = check_positive_int(steps, "steps")
        path = self._path(fill_missing(self.train_, True), steps)[-1]  # (steps, C)
        return path[:, 0] if self.n_channels_ == 1 else path
