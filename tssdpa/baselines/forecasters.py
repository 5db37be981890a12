"""Simple and linear forecasters: naive, seasonal naive, AutoReg and a DLinear-style model."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tssdpa.checks import check_choice, check_int, check_moving_average, check_positive
from tssdpa.estimators.base import Forecaster
from tssdpa.estimators.persistence import check_context, require_floats, saved_channels
from tssdpa.signal.missing import fill_missing, reading_span, reading_spans

__all__ = [
    "NaiveForecaster",
    "SeasonalNaiveForecaster",
    "AutoRegForecaster",
    "DLinearForecaster",
    "moving_average_matrix",
]


class NaiveForecaster(Forecaster):
    """Last value carried forward: ``y[t+h] ≈ y[t]``."""

    def __init__(self):
        pass

    def _fit(self, a):
        pass

    def _path(self, a, horizon):
        return np.repeat(a[:, None, :], horizon, axis=1)

    def _predict_context(self) -> int:
        return 1


class SeasonalNaiveForecaster(Forecaster):
    """Value one season earlier: ``y[t+h] ≈ y[t+h-k*period]`` with the smallest k >= 1 that
    keeps the index at or before ``t``.

    Parameters
    ----------
    period : int
        Samples in a season (24: one day of hourly samples); ``fit`` needs at least that many.
    """

    _structural_params = ("period",)

    def __init__(self, period: int = 24):
        self.period = period

    def _validate_params(self):
        check_int(self.period, "period")

    def _fit(self, a):
        if len(a) < self.period:  # no value one season earlier: every forecast would be NaN
            raise ValueError(f"y has {len(a)} samples, fewer than period={self.period}")

    def _predict_context(self) -> int:
        return self.period

    def _path(self, a, horizon):
        T, C = a.shape
        out = np.full((T, horizon, C), np.nan)
        t = np.arange(T)
        for h in range(1, horizon + 1):
            k = -(-h // self.period)
            src = t + h - k * self.period
            ok = src >= 0
            out[ok, h - 1] = a[src[ok]]
        return out


class AutoRegForecaster(Forecaster):
    """AR(p) from ``statsmodels.tsa.ar_model.AutoReg`` (OLS) with recursive h-step forecasts.

    The parameters are estimated once on the training split; forecasts from every origin of a
    new series are computed by vectorised recursion (identical to ``AutoRegResults.apply`` then
    ``forecast`` at each origin, without the per-origin Python loop).

    Parameters
    ----------
    lags : int
        The order p: each forecast is a linear function of the last ``lags`` values. ``fit``
        needs more than ``2 * lags + 1`` samples.
    trend : {"c", "n"}
        ``"c"``: with a constant (statsmodels' ``trend="c"``). ``"n"``: none, so forecasts
        revert to 0.
    """

    _structural_params = ("lags", "trend")

    def __init__(self, lags: int = 2, trend: str = "c"):
        self.lags = lags
        self.trend = trend

    def _validate_params(self):
        check_int(self.lags, "lags")
        check_choice(self.trend, "trend", ("n", "c"))

    def _fit_1d(self, y):
        from statsmodels.tsa.ar_model import AutoReg

        if len(y) <= 2 * self.lags + 1:
            raise ValueError(f"y is too short ({len(y)}) for lags={self.lags}")
        # with a constant, OLS on the centred series is the same model: its constant c' is
        # c - m (1 - sum phi). Uncentred, a unit signal on an offset of 1e9 lost the slopes to
        # the constant column's rounding (forecasts off by 1e3)
        m = float(np.mean(y)) if self.trend == "c" else 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = AutoReg(y - m, lags=self.lags, trend=self.trend).fit()
        p = np.asarray(res.params)
        phi = p[1:] if self.trend == "c" else p
        const = p[0] + m * (1.0 - phi.sum()) if self.trend == "c" else 0.0
        return const, phi

    def _predict_context(self) -> int:
        return self.lags

    # persistence: the AR coefficients of every channel
    _fitted_schema = {"n_channels_": (int,)}
    _array_schema = ("train_", "const_", "coef_")

    def _state(self):
        fitted, arrays = super()._state()
        arrays["const_"] = np.array([m[0] for m in self.models_], dtype=float)  # (C,)
        arrays["coef_"] = np.stack([m[1] for m in self.models_])  # (C, lags)
        return fitted, arrays

    def _set_state(self, fitted, arrays):
        C = saved_channels(fitted)
        const, coef, train = require_floats(arrays, "const_", "coef_", "train_")
        super()._set_state(fitted, {"train_": train})
        check_context(self, train)
        if coef.shape != (C, self.lags) or const.shape != (C,):
            raise ValueError(f"coef_ must be (n_channels_={C}, lags={self.lags}) with const_ "
                             f"({C},); got {coef.shape} and {const.shape}")  # fmt: skip
        self.models_ = [(float(c), p) for c, p in zip(const, coef)]

    def _path_1d(self, model, y, horizon):
        const, phi = model
        p = len(phi)
        T = len(y)
        out = np.full((T, horizon), np.nan)
        if T < p:
            return out
        # hist[:, j] = y[t-j] for origins t = p-1 .. T-1 (newest first)
        hist = sliding_window_view(y, p)[:, ::-1].copy()
        for h in range(horizon):
            nxt = const + hist @ phi
            out[p - 1 :, h] = nxt
            hist = np.concatenate([nxt[:, None], hist[:, :-1]], axis=1)
        return out


def moving_average_matrix(length: int, window: int) -> np.ndarray:
    """The (length, length) matrix of DLinear's ``series_decomp`` moving average.

    ``window`` is the length of the moving average (DLinear's ``kernel_size``), odd. DLinear pads
    the series with ``(window-1)//2`` copies of its first and last values and averages with
    stride 1; ``trend = A @ x``. An even window is refused: it has no centre (DLinear's own
    ``series_decomp`` returns one sample too few), and this padding gave an average over one
    more sample ahead than behind, a trend half a sample early.
    """
    length = check_int(length, "length")
    k = check_int(window, "window")
    if k % 2 == 0:
        raise ValueError(f"window must be odd (a centred moving average); got {k}")
    pad = (k - 1) // 2
    A = np.zeros((length, length))
    for i in range(length):
        for j in range(i - pad, i - pad + k):
            A[i, min(max(j, 0), length - 1)] += 1.0 / k
    return A


class DLinearForecaster(Forecaster):
    """DLinear-style direct multi-horizon linear forecaster fitted by (ridge) least squares.

    The lookback window ``x`` (length ``lookback``) is split into trend ``A x`` (DLinear's
    centred moving average over ``moving_average`` samples, an odd number, formerly
    ``kernel_size``) and remainder ``x - A x``; each part gets its own linear map
    to the ``horizon`` future values (plus a bias), fitted jointly by least squares with an L2
    penalty ``ridge`` on all training windows whose targets lie inside the training series
    (one penalty, or a sequence of ``horizon`` penalties, one per step ahead: each step is its
    own least-squares problem). With ``individual=False`` (DLinear's default) one set of
    weights is shared by all channels, so the fit is not equivariant to a channel's scale or
    offset: standardise channels in other units first, as DLinear's data loaders do (the
    comparison harness z-scores with the training statistics), or take ``individual=True``.
    ``normalize="last"`` subtracts the window's last value first (NLinear).

    Parameters
    ----------
    lookback : int
        Length of the input window each forecast reads.
    horizon : int
        Steps ahead forecast directly (``predict`` goes beyond it recursively); ``fit`` needs
        ``lookback + horizon`` samples.
    moving_average : int
        Odd kernel of the trend's centred moving average (formerly ``kernel_size``).
    ridge : float or sequence of float
        L2 penalty, >= 0: one for every step ahead, or ``horizon`` of them, one per step.
    individual : bool
        ``False``: one set of weights shared by every channel. ``True``: one per channel.
    normalize : {"none", "last"}
        ``"last"``: the window's last value subtracted from it and added back to the forecasts
        (NLinear).

    Notes
    -----
    DLinear trains with Adam on an MSE loss; here the same linear model is fitted in closed form.
    Because both branches are linear in ``x``, the fitted map equals ridge regression on ``x`` in
    a reparametrised basis; the decomposition only changes how the penalty acts.
    Outputs for horizons ``h <= horizon`` are independent least-squares problems, so one fit with
    the largest horizon serves every smaller one exactly.
    """

    _renamed_params = {"kernel_size": "moving_average"}

    def __init__(
        self,
        lookback: int = 336,
        horizon: int = 96,
        moving_average: int = 25,
        ridge: float | Sequence[float] = 1e-3,
        individual: bool = False,
        normalize: str = "none",
    ):
        self._store(locals())

    def _validate_params(self):
        for name in ("lookback", "horizon", "moving_average"):
            check_int(getattr(self, name), name)
        self._ridges()
        check_choice(self.individual, "individual", (True, False))
        check_choice(self.normalize, "normalize", ("none", "last"))

    def _ridges(self) -> np.ndarray:
        """(horizon,) penalty of each step ahead."""
        # a 0-d array is one penalty (its len() raised "len() of unsized object")
        if isinstance(self.ridge, (list, tuple, np.ndarray)) and np.ndim(self.ridge) > 0:
            if len(self.ridge) != self.horizon:
                raise ValueError(
                    f"ridge: give one penalty or one per step ahead ({self.horizon}); "
                    f"got {len(self.ridge)}"
                )
            return np.array([check_positive(r, "ridge", allow_zero=True) for r in self.ridge])
        return np.full(self.horizon, check_positive(self.ridge, "ridge", allow_zero=True))

    def _windows(self, y, H):
        L = self.lookback
        W = sliding_window_view(y, L + H)
        X, Y = W[:, :L], W[:, L:]
        if self.normalize == "last":
            last = X[:, -1:]
            return X - last, Y - last
        return X, Y

    def _fit(self, a):
        # at fit, not in _validate_params: a model saved with an even one (before 2026-12-05)
        # holds its fitted map, which loads and forecasts as it did
        check_moving_average(self.moving_average)
        L, H = self.lookback, self.horizon
        if len(a) < L + H:
            raise ValueError(
                f"y has {len(a)} samples; lookback + horizon = {L + H} are needed to fit"
            )
        # each channel's windows lie between its first and last readings: a missing head filled
        # back, or a tail filled forward, was a constant the map was fitted to forecast
        spans = reading_spans(a)
        for c, (start, end) in enumerate(spans):
            if end - start < L + H:
                raise ValueError(f"{reading_span('y', c, start, end, len(a))}: lookback + "
                                 f"horizon = {L + H} samples of it are needed to fit")  # fmt: skip
        a = fill_missing(a, True)
        A = moving_average_matrix(L, self.moving_average)
        M = np.hstack([(np.eye(L) - A).T, A.T])  # features = x @ M  (L -> 2L)
        groups = [[c] for c in range(a.shape[1])] if self.individual else [list(range(a.shape[1]))]
        self.weights_ = [None] * a.shape[1]
        for g in groups:
            # the sums below are taken about a level of the group's readings: about 0, the
            # covariances xx / n - mx mx' of a unit signal on an offset of 1e9 lost it to
            # rounding (forecasts 8e2 off). One level for the group keeps its covariances,
            # and the bias is mapped back (normalize="last" windows have no level)
            level = 0.0 if self.normalize == "last" else float(np.nanmean(a[:, g]))
            n, sx, sy = 0, np.zeros(L), np.zeros(H)
            xx, xy = np.zeros((L, L)), np.zeros((L, H))
            for c in g:
                X, Y = self._windows(a[slice(*spans[c]), c] - level, H)
                for s in range(0, len(X), 4096):
                    xb, yb = X[s : s + 4096], Y[s : s + 4096]
                    n += len(xb)
                    sx += xb.sum(0)
                    sy += yb.sum(0)
                    xx += xb.T @ xb
                    xy += xb.T @ yb
            mx, my = sx / n, sy / n
            cxx = xx / n - np.outer(mx, mx)
            cxy = xy / n - np.outer(mx, my)
            rhs = M.T @ cxy
            Wf = np.empty((2 * L, H))
            ridges = self._ridges()
            for r in np.unique(ridges):  # steps sharing a penalty share one solve
                cols = ridges == r
                G = M.T @ cxx @ M + float(r) * np.eye(2 * L)
                # lstsq: the two branches are collinear, so G is singular when ridge == 0
                Wf[:, cols] = np.linalg.lstsq(G, rhs[:, cols], rcond=None)[0]  # (2L, H)
            W = M @ Wf  # effective (L, H)
            b = my - mx @ W + level * (1.0 - W.sum(axis=0))
            for c in g:
                self.weights_[c] = (W, b)

    def _direct_horizon(self) -> int:
        return self.horizon

    def _predict_context(self) -> int:
        return self.lookback

    # persistence: the effective linear map of every channel
    _fitted_schema = {"n_channels_": (int,)}
    _array_schema = ("train_", "linear_map_", "bias_")
    _structural_params = ("lookback", "horizon", "individual", "normalize")

    def _state(self):
        fitted, arrays = super()._state()
        arrays["linear_map_"] = np.stack([w for w, _ in self.weights_])  # (C, lookback, horizon)
        arrays["bias_"] = np.stack([b for _, b in self.weights_])  # (C, horizon)
        return fitted, arrays

    def _set_state(self, fitted, arrays):
        C = saved_channels(fitted)
        W, b, train = require_floats(arrays, "linear_map_", "bias_", "train_")
        super()._set_state(fitted, {"train_": train})
        check_context(self, train)
        L, H = self.lookback, self.horizon
        if W.shape != (C, L, H) or b.shape != (C, H):
            raise ValueError(
                f"linear_map_ must be (n_channels_={C}, {L}, {H}) with bias_ ({C}, {H}); "
                f"got {W.shape} and {b.shape}"
            )
        self.weights_ = list(zip(W, b))

    def _path(self, a, horizon):
        if horizon > self.horizon:
            raise ValueError(f"horizon must be <= the fitted horizon {self.horizon}; got {horizon}")
        L = self.lookback
        T, C = a.shape
        out = np.full((T, horizon, C), np.nan)
        if T < L:
            return out
        for c in range(C):
            W, b = self.weights_[c]
            X = sliding_window_view(a[:, c], L)
            last = X[:, -1:] if self.normalize == "last" else 0.0
            out[L - 1 :, :, c] = (X - last) @ W[:, :horizon] + b[:horizon] + last
        return out
