"""`ProjectionForecaster`: analogue (method-of-analogues) forecasting with projection SDPA."""

from __future__ import annotations

import math

import numpy as np

from tssdpa.filters._core import attend_lags, delay_embedding
from tssdpa.filters._io import ParamsMixin, as_2d, load_bundle, restore, save_bundle

__all__ = ["ProjectionForecaster"]


class ProjectionForecaster(ParamsMixin):
    """Forecast y[t+h] as the projection-weighted mean of the futures of similar past patterns.

    The query is the lag embedding ``e_t = [y_t, ..., y_(t-lags+1)]`` (channels standardised
    with the mean/std seen by :meth:`fit`); the keys are the embeddings ``e_j`` whose future
    ``y[j+h]`` is already known at time t (``j <= t - h``, at most ``window`` of them, the
    newest first), and the value attended to is that future. With ``model="hybrid"`` a direct
    linear autoregression (least squares, one per horizon) predicts first and the projection
    averages the futures of its residuals -- the residual bypass of the paper.

    Parameters
    ----------
    lags : int
        Embedding length p (number of past samples in a pattern).
    horizon : int
        Largest horizon :meth:`fit` prepares for (and scores sigma at).
    window : int
        Number of past keys attended to (memory / compute is O(T * window)).
    sigma : float, list of float, or None
        Kernel width in standardised units; ``None`` or a list: chosen by :meth:`fit` from a
        grid (or the list) by rolling-origin forecast error on the fitted series.
    decay : float or None
        Weight ``decay**(t - h - j)`` favouring recent analogues.
    model : {"analogue", "hybrid"}
    ridge : float
        Ridge penalty of the linear part (relative to the trace of the Gram matrix).
    max_fit_samples : int
        Sigma is scored on at most the last this-many samples.
    channel_independent : bool
        Fit one univariate forecaster per channel (own sigma and linear part) instead of one
        joint embedding of all channels.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import ProjectionForecaster
    >>> y = np.sin(np.arange(600) * 0.2)
    >>> fc = ProjectionForecaster(lags=8, horizon=3).fit(y)
    >>> pred = fc.forecast(y, horizon=3)    # pred[t] predicts y[t + 3] from y[:t+1]
    >>> bool(np.nanmean((pred[:-3] - y[3:]) ** 2) < 1e-2)
    True
    >>> fc.predict(5).shape
    (5,)
    """

    def __init__(
        self,
        lags=16,
        horizon=1,
        window=1000,
        sigma=None,
        decay=None,
        model="analogue",
        ridge=1e-6,
        max_fit_samples=5000,
        channel_independent=False,
    ):
        self.lags = lags
        self.horizon = horizon
        self.window = window
        self.sigma = sigma
        self.decay = decay
        self.model = model
        self.ridge = ridge
        self.max_fit_samples = max_fit_samples
        self.channel_independent = channel_independent

    # ------------------------------------------------------------------ checks
    def _check(self):
        for name in ("lags", "horizon", "window"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{name} must be an int, got {type(v).__name__}")
            if v < 1:
                raise ValueError(f"{name} must be >= 1, got {v}")
        if self.model not in ("analogue", "hybrid"):
            raise ValueError(f"model must be 'analogue' or 'hybrid', got {self.model!r}")
        if self.decay is not None and not 0 < self.decay <= 1:
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")

    def _fitted(self):
        if not hasattr(self, "sigma_"):
            raise ValueError("call fit() first")

    # ------------------------------------------------------------------ pieces
    def _embed(self, y2):
        z = (y2 - self.mean_) / self.scale_
        return delay_embedding(z, int(self.lags))

    def _linear_design(self, y2):
        E = delay_embedding(y2, int(self.lags))
        return np.concatenate([E, np.ones((E.shape[0], 1))], axis=1)

    def _fit_linear(self, y2):
        X = self._linear_design(y2)
        coefs = []
        for h in range(1, int(self.horizon) + 1):
            target = np.full_like(y2, np.nan)
            target[:-h] = y2[h:]
            ok = ~(np.isnan(X).any(1) | np.isnan(target).any(1))
            if ok.sum() < X.shape[1]:
                raise ValueError("series too short for the linear part of model='hybrid'")
            A, b = X[ok], target[ok]
            G = A.T @ A
            G[np.diag_indices_from(G)] += self.ridge * np.trace(G) / G.shape[0]
            coefs.append(np.linalg.solve(G, A.T @ b))
        return np.stack(coefs)  # (horizon, p*C + 1, C)

    def _linear_predict(self, y2, h):
        if h > self.coef_.shape[0]:
            raise ValueError(
                f"model='hybrid' was fitted up to horizon {self.coef_.shape[0]}, asked for {h}"
            )
        return self._linear_design(y2) @ self.coef_[h - 1]

    def _analogue(self, E, values, h, sigma):
        """Rolling-origin projection: row t attends to keys j in [t-h-window+1, t-h]."""
        T, C = values.shape
        W = int(self.window)
        P = h + W - 1
        V = values.copy()
        V[np.isnan(E).any(axis=1)] = np.nan  # incomplete patterns are not keys
        Ep = np.concatenate([np.full((P, E.shape[1]), np.nan), E])
        Vp = np.concatenate([np.full((P, C), np.nan), V])
        out = attend_lags(
            Ep, Vp, (P, P + T), h, h + W - 1, sigma=sigma, decay=self.decay, decay_origin=h
        )
        out[: int(self.lags) - 1] = np.nan  # not enough history for a query pattern
        return out

    def _forecast2d(self, y2, h, sigma=None):
        if getattr(self, "channel_models_", None):
            return np.column_stack(
                [m._forecast2d(y2[:, [c]], h)[:, 0] for c, m in enumerate(self.channel_models_)]
            )
        sigma = self.sigma_ if sigma is None else sigma
        E = self._embed(y2)
        fut = np.full_like(y2, np.nan)
        fut[:-h] = y2[h:]
        if self.model == "hybrid":
            lin = self._linear_predict(y2, h)
            resid = fut - lin
            return lin + np.nan_to_num(self._analogue(E, resid, h, sigma), nan=0.0) * np.where(
                np.isnan(lin), np.nan, 1.0
            )
        return self._analogue(E, fut, h, sigma)

    # ------------------------------------------------------------------ public
    def fit(self, y):
        """Standardise, fit the linear part (hybrid) and choose sigma. Returns self."""
        self._check()
        y2, _ = as_2d(y, "y")
        if np.isnan(y2).all():
            raise ValueError("y is all NaN")
        if y2.shape[0] <= int(self.lags) + int(self.horizon):
            raise ValueError(f"y has {y2.shape[0]} samples; need more than lags + horizon")
        if self.channel_independent and y2.shape[1] > 1:
            params = {**self.get_params(), "channel_independent": False}
            self.channel_models_ = [
                ProjectionForecaster(**params).fit(y2[:, c]) for c in range(y2.shape[1])
            ]
            self.n_channels_ = y2.shape[1]
            self.sigma_ = [m.sigma_ for m in self.channel_models_]
            self.series_ = y2.copy()
            return self
        self.channel_models_ = None
        self.n_channels_ = y2.shape[1]
        self.mean_ = np.nanmean(y2, axis=0)
        sd = np.nanstd(y2, axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        if self.model == "hybrid":
            self.coef_ = self._fit_linear(y2)
        self.series_ = y2.copy()
        ys = y2[-int(self.max_fit_samples) :]
        D = int(self.lags) * y2.shape[1]
        if self.sigma is None:
            cands = math.sqrt(D) * 2.0 ** np.linspace(-5, 1, 10)
        else:
            cands = [float(s) for s in np.atleast_1d(self.sigma)]
        if any(not s > 0 for s in cands):
            raise ValueError("sigma candidates must be > 0")
        h = int(self.horizon)
        scores = []
        for s in cands:
            pred = self._forecast2d(ys, h, sigma=s)
            err = pred[:-h] - ys[h:]
            ok = ~np.isnan(err)
            scores.append(float(np.mean(err[ok] ** 2)) if ok.any() else np.inf)
        self.sigma_ = float(cands[int(np.argmin(scores))])
        self.fit_scores_ = list(zip(map(float, cands), scores))
        return self

    def forecast(self, y, horizon=1):
        """Rolling-origin forecasts: entry t predicts y[t+horizon] from y[:t+1] (NaN if unknown).

        Returns the type of ``y`` (pandas index preserved), shaped like ``y``.
        """
        self._fitted()
        h = self._check_h(horizon)
        y2, meta = as_2d(y, "y")
        self._check_channels(y2)
        return restore(self._forecast2d(y2, h), meta)

    def forecast_path(self, y, horizon=1):
        """(T, H) or (T, H, C) array: entry [t, h-1] predicts y[t+h] from y[:t+1]."""
        self._fitted()
        H = self._check_h(horizon)
        y2, meta = as_2d(y, "y")
        self._check_channels(y2)
        out = np.stack([self._forecast2d(y2, h) for h in range(1, H + 1)], axis=1)
        return out[:, :, 0] if meta.was_1d else out

    def predict(self, steps):
        """Forecast ``steps`` samples past the end of the series given to :meth:`fit`."""
        self._fitted()
        steps = self._check_h(steps, "steps")
        path = np.stack([self._forecast2d(self.series_, h)[-1] for h in range(1, steps + 1)])
        return path[:, 0] if self.n_channels_ == 1 else path

    def _check_h(self, h, name="horizon"):
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(h).__name__}")
        if h < 1:
            raise ValueError(f"{name} must be >= 1, got {h}")
        return int(h)

    def _check_channels(self, y2):
        if y2.shape[1] != self.n_channels_:
            raise ValueError(
                f"y has {y2.shape[1]} channel(s) but the forecaster was fitted "
                f"on {self.n_channels_}"
            )

    def save(self, path):
        """Save to directory ``path`` (config.json + arrays.safetensors; nothing pickled)."""
        from pathlib import Path

        self._fitted()
        models = getattr(self, "channel_models_", None)
        if models:
            save_bundle(
                path,
                "ProjectionForecaster",
                self.get_params(),
                {"sigma_": self.sigma_, "n_channels_": self.n_channels_},
                {"series_": self.series_},
            )
            for c, m in enumerate(models):
                m.save(Path(path) / f"channel_{c}")
            return
        arrays = {
            k: getattr(self, k) for k in ("mean_", "scale_", "series_", "coef_") if hasattr(self, k)
        }
        save_bundle(
            path,
            "ProjectionForecaster",
            self.get_params(),
            {"sigma_": self.sigma_, "n_channels_": self.n_channels_},
            arrays,
        )

    @classmethod
    def load(cls, path) -> ProjectionForecaster:
        """Load a forecaster written by :meth:`save`."""
        from pathlib import Path

        params, fitted, arrays = load_bundle(path, "ProjectionForecaster")
        obj = cls(**params)
        for k, v in {**fitted, **arrays}.items():
            setattr(obj, k, np.array(v) if isinstance(v, np.ndarray) else v)
        obj.channel_models_ = None
        if obj.channel_independent and obj.n_channels_ > 1:
            obj.channel_models_ = [
                cls.load(Path(path) / f"channel_{c}") for c in range(obj.n_channels_)
            ]
        return obj
