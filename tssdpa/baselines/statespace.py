"""statsmodels state-space baselines: Kalman filter/smoother denoisers and rolling forecasters.

All models are fitted once (maximum likelihood on the training split) and then *applied* to new
data without refitting (``MLEResults.apply``). Rolling h-step forecasts from every origin are
computed from the Kalman filter's one-step predicted states ``a[t+1|t]`` by iterating the
(time-invariant) transition, which is exact for linear Gaussian state-space models and costs one
filter pass plus ``H`` matrix products instead of one ``forecast`` call per origin. Missing
samples (NaN) are missing to the Kalman filter (no update there), in the fit and in the
forecasts, as statsmodels takes them; the other forecasters carry the last reading forward.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from tssdpa.checks import check_choice, check_int
from tssdpa.estimators.base import Denoiser, Forecaster
from tssdpa.signal.missing import (
    fill_missing,
    reading_ends,
    stops_early,
)

__all__ = [
    "KalmanSmoother",
    "ARIMAForecaster",
    "ETSForecaster",
    "UnobservedComponentsForecaster",
    "state_space_forecast_path",
]

_UC_LEVELS = ("local level", "local linear trend", "smooth trend", "random walk with drift")


def _matrix(ssm, name):
    m = np.asarray(ssm[name])
    if m.ndim == 3:
        if m.shape[-1] != 1:
            raise ValueError(f"time-varying {name} matrix is not supported")
        m = m[..., 0]
    elif m.ndim == 2 and name in ("state_intercept", "obs_intercept"):
        if m.shape[1] > 1 and not (m == m[:, :1]).all():  # a time trend: not followed
            raise ValueError(f"time-varying {name} is not supported")
        m = m[:, 0]
    return m


def state_space_forecast_path(results, horizon: int) -> np.ndarray:
    """h-step forecasts from every origin of a filtered statsmodels state-space results object.

    Parameters
    ----------
    results : statsmodels MLEResults
        Results whose model holds the series (typically ``fitted.apply(y)``).
    horizon : int
        Largest horizon ``H``.

    Returns
    -------
    ndarray, shape (nobs, H)
        ``out[t, h-1]`` is the forecast of ``y[t+h]`` given ``y[:t+1]``.
    """
    ssm = results.model.ssm
    Z, T = _matrix(ssm, "design"), _matrix(ssm, "transition")
    c, d = _matrix(ssm, "state_intercept"), _matrix(ssm, "obs_intercept")
    a = np.asarray(results.filter_results.predicted_state)[:, 1:].T  # a[t+1|t], (nobs, k)
    out = np.empty((a.shape[0], horizon))
    for h in range(horizon):
        if h:
            a = a @ T.T + c
        out[:, h] = a @ Z[0] + d[0]
    return out


class _FittedSS:
    """A fitted statsmodels results object plus how to apply it to a new series."""

    def __init__(self, res):
        self.res = res

    def apply(self, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.res.apply(y)


@functools.lru_cache(maxsize=16)
def _fit_uc(level: str, data: bytes):
    """MLE fit of an UnobservedComponents model, cached: the filter and the smoother variants
    of the same model on the same training data share one fit."""
    from statsmodels.tsa.statespace.structural import UnobservedComponents

    y = np.frombuffer(data, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return UnobservedComponents(y, level=level).fit(disp=False, cov_type="none")


class KalmanSmoother(Denoiser):
    """Kalman filter (causal) or RTS smoother (zero-phase) from ``UnobservedComponents``.

    The variances are estimated by maximum likelihood on the training series given to ``fit``
    (the noisy one: no clean target is needed); ``filter`` applies the fitted model to new data
    without refitting. Missing values (NaN) are handled by the Kalman filter itself.

    Parameters
    ----------
    level : str
        ``"local level"``, ``"local linear trend"``, ``"smooth trend"`` or ``"random walk with
        drift"`` (statsmodels' ``UnobservedComponents`` level specification; others refused).
    smoother : bool
        ``False``: filtered state ``E[s_t | x_0..x_t]`` (causal). ``True``: smoothed state
        ``E[s_t | all x]`` (offline).
    max_fit_samples : int
        At most this many (final) training samples are used for the likelihood fit.
    """

    trainable = True
    handles_nan = True
    uses_target = False  # the likelihood of the noisy series alone
    _renamed_params = {"max_fit": "max_fit_samples"}

    def __init__(
        self, level: str = "local level", smoother: bool = False, max_fit_samples: int = 5000
    ):
        self._store(locals())

    @property
    def causal(self) -> bool:
        return not self.smoother

    def _validate_params(self):
        check_choice(self.level, "level", _UC_LEVELS)
        check_choice(self.smoother, "smoother", (True, False))
        check_int(self.max_fit_samples, "max_fit_samples", 10)

    def _fit(self, a, target):
        if len(a) < 2:  # statsmodels failed with "'shape' elements cannot be negative"
            raise ValueError(f"x has {len(a)} sample(s); the state-space fit needs 2 or more")
        self.models_ = []
        # the last max_fit_samples up to each channel's last sample (a missing tail left
        # statsmodels nothing: "'shape' elements cannot be negative")
        for c, end in enumerate(reading_ends(a)):
            if end < 2:  # one reading left statsmodels the same error as one sample
                raise ValueError(f"{stops_early('x', c, end, len(a))}: the state-space fit "
                                 "needs 2 or more")  # fmt: skip
            y = np.ascontiguousarray(a[max(0, end - self.max_fit_samples) : end, c])
            scale = float(np.nanstd(y)) or 1.0
            res = _fit_uc(self.level, (y / scale).tobytes())
            self.models_.append((_FittedSS(res), scale))

    def _filter_1d(self, x, channel):
        if np.isnan(x).all():  # the smoother gave the diffuse prior's 0 as the estimate
            raise ValueError(f"x channel {channel} is all NaN: nothing to filter it from")
        fitted, scale = self.models_[channel]
        r = fitted.apply(x / scale)
        Z = _matrix(r.model.ssm, "design")[0]
        st = r.smoothed_state if self.smoother else r.filtered_state
        return (Z @ np.asarray(st)) * scale


class _StateSpaceForecaster(Forecaster):
    """Fit a statsmodels state-space model per channel; roll forecasts with no refit."""

    _renamed_params = {"max_fit": "max_fit_samples"}

    def _make(self, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _validate_params(self):
        check_int(self.max_fit_samples, "max_fit_samples", 10)

    # Missing samples stay missing: the Kalman filter skips their update, as statsmodels does.
    # Carried forward, as the other forecasters carry them, a gap was fitted and forecast
    # from as the last reading repeated (an AR(2) 1.2 / -0.5 with 15% of it missing came out
    # 1.07 / -0.37, one-step MSE 1.62 where statsmodels' own handling gives 1.35)
    fits_missing = True

    def _prepare(self, a):
        fill_missing(a, True, "y")  # its check alone: a channel of no reading is refused
        return a

    def _fit_1d(self, y):
        # imported before the catch: importing statsmodels' warnings adds "always" filters
        # ahead of its "ignore", and the first fit of a process printed a ConvergenceWarning
        import statsmodels.tools.sm_exceptions  # noqa: F401

        y = y[-self.max_fit_samples :]
        loc, scale = float(np.nanmean(y)), float(np.nanstd(y)) or 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = self._make((y - loc) / scale).fit(disp=False, cov_type="none")
        return _FittedSS(res), loc, scale

    def _path_1d(self, model, y, horizon):
        fitted, loc, scale = model
        r = fitted.apply((y - loc) / scale)
        out = state_space_forecast_path(r, horizon) * scale + loc
        out[: int(np.argmax(np.isfinite(y)))] = np.nan  # before the first reading: the prior's
        return out


class ARIMAForecaster(_StateSpaceForecaster):
    """ARIMA / SARIMAX (``statsmodels.tsa.statespace.SARIMAX``) with rolling forecasts.

    Each channel is standardised by its training mean and standard deviation before the fit
    (and the forecasts scaled back), so with ``d = 0`` and ``trend=None`` the ARMA reverts to
    the training mean, where SARIMAX on the raw series (``trend=None``: no constant) reverts
    to 0. With ``trend="c"``, or ``d >= 1``, the two are the same model.

    Parameters
    ----------
    order : tuple (p, d, q)
    seasonal_order : tuple (P, D, Q, s)
    trend : str or None
        ``"c"`` (a constant) or ``None`` (none beyond the training mean). A time trend
        (``"t"``, ``"ct"``) makes the state intercept vary with time, which the rolling
        forecasts do not follow: refused (its steps beyond the first were off by 0.1-1.7;
        difference the series, ``d = 1``, with ``"c"`` for a drift).
    max_fit_samples : int
        At most this many (final) training samples are used for the likelihood fit.
    """

    _renamed_params = {"max_fit": "max_fit_samples"}

    def __init__(
        self,
        order: tuple = (2, 0, 0),
        seasonal_order: tuple = (0, 0, 0, 0),
        trend: str | None = None,
        max_fit_samples: int = 5000,
    ):
        self._store(locals())

    def _validate_params(self):
        super()._validate_params()
        for name, n, what in (("order", 3, "(p, d, q)"), ("seasonal_order", 4, "(P, D, Q, s)")):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)) or np.ndim(value) != 1 or len(value) != n:
                raise ValueError(f"{name} must be {what}; got {value!r}")
            for v in value:
                check_int(v, name, minimum=0)
        *seasonal, s = self.seasonal_order
        # statsmodels refused these at fit with a message that named no argument
        if s == 1 or (s == 0 and any(seasonal)):
            raise ValueError(f"seasonal_order: the period s must be >= 2, or 0 with P = D = Q = 0; "
                             f"got {tuple(self.seasonal_order)!r}")  # fmt: skip
        check_choice(self.trend, "trend", (None, "n", "c"))

    def _make(self, y):
        from statsmodels.tsa.statespace.sarimax import SARIMAX

        return SARIMAX(
            y, order=tuple(self.order), seasonal_order=tuple(self.seasonal_order), trend=self.trend
        )


class ETSForecaster(_StateSpaceForecaster):
    """Exponential smoothing (ETS, additive errors) as a state-space model.

    Uses ``statsmodels.tsa.statespace.exponential_smoothing.ExponentialSmoothing`` so that the
    fitted model can be applied to the test split without refitting.

    Parameters
    ----------
    trend : bool
        An additive trend (``False``: the level alone).
    damped_trend : bool
        Damp the trend (needs ``trend=True``).
    seasonal : int or None
        Samples in a seasonal cycle, at least 2 (an additive season; ``fit`` needs two full
        cycles), or ``None``: no season.
    max_fit_samples : int
        At most this many (final) training samples are used for the likelihood fit.
    """

    _renamed_params = {"max_fit": "max_fit_samples"}

    def __init__(
        self,
        trend: bool = False,
        damped_trend: bool = False,
        seasonal: int | None = None,
        max_fit_samples: int = 5000,
    ):
        self._store(locals())

    def _validate_params(self):
        super()._validate_params()
        # additive only: trend="mul" was read as True (an additive trend), "False" too
        check_choice(self.trend, "trend", (True, False))
        check_choice(self.damped_trend, "damped_trend", (True, False))
        if self.damped_trend and not self.trend:
            raise ValueError("damped_trend=True needs trend=True")
        if self.seasonal is not None:
            check_int(self.seasonal, "seasonal", 2)
            # the fit reads the last max_fit_samples: fewer than two seasons there, and _make
            # blamed seasonal and a y "of max_fit_samples samples", however long y was
            if self.max_fit_samples < 2 * self.seasonal:
                raise ValueError(f"max_fit_samples={self.max_fit_samples} holds fewer than two "
                                 f"full seasons of seasonal={self.seasonal} "
                                 f"({2 * self.seasonal})")  # fmt: skip

    def _make(self, y):
        from statsmodels.tsa.statespace.exponential_smoothing import ExponentialSmoothing

        # statsmodels' own error ("less than two full seasonal cycles") named no argument
        if self.seasonal is not None and len(y) < 2 * self.seasonal:
            raise ValueError(f"seasonal={self.seasonal} needs two full seasons to fit: "
                             f"y has {len(y)} samples, fewer than {2 * self.seasonal}")  # fmt: skip
        return ExponentialSmoothing(
            y, trend=bool(self.trend), damped_trend=bool(self.damped_trend), seasonal=self.seasonal
        )


class UnobservedComponentsForecaster(_StateSpaceForecaster):
    """Structural time-series model (local level / local linear trend) forecasts.

    Parameters
    ----------
    level : str
        ``"local level"``, ``"local linear trend"``, ``"smooth trend"`` or ``"random walk with
        drift"`` (statsmodels' ``UnobservedComponents`` level specification).
    max_fit_samples : int
        At most this many (final) training samples are used for the likelihood fit.
    """

    _renamed_params = {"max_fit": "max_fit_samples"}

    def __init__(self, level: str = "local level", max_fit_samples: int = 5000):
        self.level = level
        self.max_fit_samples = max_fit_samples

    def _validate_params(self):
        super()._validate_params()
        check_choice(self.level, "level", _UC_LEVELS)

    def _make(self, y):
        from statsmodels.tsa.statespace.structural import UnobservedComponents

        return UnobservedComponents(y, level=self.level)
