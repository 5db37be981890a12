"""`ProjectionForecaster`: analogue (method-of-analogues) forecasting with projection SDPA."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.checks import check_choice, check_decay, check_int, check_positive
from tssdpa.estimators.base import Forecaster
from tssdpa.estimators.persistence import check_fitted
from tssdpa.estimators.selection import forecast_mse, sigma_candidates, sigma_grid
from tssdpa.signal.embedding import delay_embedding, standardise
from tssdpa.signal.lags import attend_lags

__all__ = ["ProjectionForecaster"]


class ProjectionForecaster(Forecaster):
    """Forecast y[t+h] as the projection-weighted mean of the futures of similar past patterns.

    The query is the delay embedding ``e_t = [y_t, ..., y_(t-embedding+1)]`` (channels
    standardised with the mean/std seen by :meth:`fit`); the keys are the embeddings ``e_j``
    whose future ``y[j+h]`` is already known at time t (``j <= t - h``, at most
    ``library_size`` of them, the newest first), and the value attended to is that future.
    With ``model="hybrid"`` a direct linear autoregression (least squares, one per horizon)
    predicts first and the projection averages the futures of its residuals -- the residual
    bypass of the paper.

    Parameters
    ----------
    embedding : int
        Pattern length (number of past samples compared). Formerly ``lags``.
    horizon : int
        Largest horizon :meth:`fit` prepares for (and scores sigma at).
    library_size : int
        Number of past keys attended to (memory / compute is O(T * library_size)).
        Formerly ``window``.
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

    Attributes
    ----------
    sigma_ : float (a list per channel with ``channel_independent``)
    cv_results_ : pandas.DataFrame, the rolling-origin MSE of every sigma tried.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import ProjectionForecaster
    >>> y = np.sin(np.arange(600) * 0.2)
    >>> fc = ProjectionForecaster(embedding=8, horizon=3).fit(y)
    >>> pred = fc.forecast(y, horizon=3)    # pred[t] predicts y[t + 3] from y[:t+1]
    >>> bool(np.nanmean((pred[:-3] - y[3:]) ** 2) < 1e-2)
    True
    >>> fc.predict(5).shape
    (5,)
    """

    _renamed_params = {"lags": "embedding", "window": "library_size"}

    def __init__(
        self,
        embedding=16,
        horizon=1,
        library_size=1000,
        sigma=None,
        decay=None,
        model="analogue",
        ridge=1e-6,
        max_fit_samples=5000,
        channel_independent=False,
    ):
        self._store(locals())

    def _validate_params(self) -> None:
        for name in ("embedding", "horizon", "library_size", "max_fit_samples"):
            check_int(getattr(self, name), name)
        check_choice(self.model, "model", ("analogue", "hybrid"))
        if self.decay is not None:
            check_decay(self.decay)
        check_positive(self.ridge, "ridge", allow_zero=True)
        if self.sigma is not None:
            sigma_candidates(self.sigma, (), "sigma")

    # ------------------------------------------------------------------ pieces
    def _embed(self, y2):
        return delay_embedding(standardise(y2, self.mean_, self.scale_), int(self.embedding))

    def _linear_design(self, y2):
        E = delay_embedding(y2, int(self.embedding))
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
        return np.stack(coefs)  # (horizon, embedding*C + 1, C)

    def _linear_predict(self, y2, h):
        if h > self.coef_.shape[0]:
            raise ValueError(
                f"model='hybrid' was fitted up to horizon {self.coef_.shape[0]}, asked for {h}"
            )
        return self._linear_design(y2) @ self.coef_[h - 1]

    def _analogue(self, E, values, h, sigma):
        """Rolling-origin projection: row t attends to keys j in [t-h-library_size+1, t-h]."""
        T, C = values.shape
        W = int(self.library_size)
        P = h + W - 1
        V = values.copy()
        V[np.isnan(E).any(axis=1)] = np.nan  # incomplete patterns are not keys
        Ep = np.concatenate([np.full((P, E.shape[1]), np.nan), E])
        Vp = np.concatenate([np.full((P, C), np.nan), V])
        out = attend_lags(
            Ep, Vp, (P, P + T), h, h + W - 1, sigma=sigma, decay=self.decay, decay_origin=h
        )
        out[: int(self.embedding) - 1] = np.nan  # not enough history for a query pattern
        return out

    def _forecast_h(self, y2, h, sigma=None):
        if getattr(self, "channel_models_", None):
            return np.column_stack(
                [m._forecast_h(y2[:, [c]], h)[:, 0] for c, m in enumerate(self.channel_models_)]
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

    def _path(self, a, horizon):
        return np.stack([self._forecast_h(a, h) for h in range(1, horizon + 1)], axis=1)

    def _prepare(self, a):
        return a  # missing samples are never keys: no filling needed

    # ------------------------------------------------------------------ public
    def _fit(self, y2):
        """Standardise, fit the linear part (hybrid) and choose sigma."""
        if np.isnan(y2).all():
            raise ValueError("y is all NaN")
        if y2.shape[0] <= int(self.embedding) + int(self.horizon):
            raise ValueError(f"y has {y2.shape[0]} samples; need more than embedding + horizon")
        if self.channel_independent and y2.shape[1] > 1:
            params = {**self.get_params(), "channel_independent": False}
            self.channel_models_ = [
                ProjectionForecaster(**params).fit(y2[:, c]) for c in range(y2.shape[1])
            ]
            self.sigma_ = [m.sigma_ for m in self.channel_models_]
            return
        self.channel_models_ = None
        self.mean_ = np.nanmean(y2, axis=0)
        sd = np.nanstd(y2, axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        if self.model == "hybrid":
            self.coef_ = self._fit_linear(y2)
        ys = y2[-int(self.max_fit_samples) :]
        D = int(self.embedding) * y2.shape[1]
        cands = sigma_candidates(self.sigma, sigma_grid(math.sqrt(D), -5, 1, 10))
        h = int(self.horizon)
        scores = [forecast_mse(self._forecast_h(ys, h, sigma=s), ys, h) for s in cands]
        self.sigma_ = float(cands[int(np.argmin(scores))])
        self.best_params_ = {"sigma": self.sigma_}
        self.cv_results_ = pd.DataFrame({"sigma": cands, "mse": scores})

    # ------------------------------------------------------------------ persistence
    _fitted_schema = {
        "sigma_": (float, list),
        "n_channels_": (int,),
        "channel_models_": (list, dict, type(None)),  # the per-channel models' own state
    }
    _array_schema = ("mean_", "scale_", "train_", "coef_", "series_")  # series_: before 0.2

    def _state(self):
        fitted, arrays = super()._state()
        models = fitted.pop("channel_models_", None)
        if models:
            fitted["channel_models_"] = []
            for c, m in enumerate(models):
                sub_fitted, sub_arrays = m._state()
                fitted["channel_models_"].append(sub_fitted)
                arrays |= {f"channel_{c}.{k}": v for k, v in sub_arrays.items()}
        return fitted, arrays

    def _set_state(self, fitted, arrays):
        fitted = dict(fitted)
        models = fitted.pop("channel_models_", None)
        own = {k: v for k, v in arrays.items() if not k.startswith("channel_")}
        if "series_" in own:  # the training series' name in files saved before 0.2
            own["train_"] = own.pop("series_")
        super()._set_state(fitted, own)
        self.channel_models_ = None
        if not models:
            return
        if not isinstance(models, list):
            raise ValueError(f"channel_models_ must be a list of states, got {models!r}")
        params = {**self.get_params(), "channel_independent": False}
        self.channel_models_ = []
        for c, sub_fitted in enumerate(models):
            check_fitted(ProjectionForecaster, sub_fitted, f"channel_models_[{c}]")
            if "channel_models_" in sub_fitted:
                raise ValueError(f"channel_models_[{c}] cannot hold channel models itself")
            m = ProjectionForecaster(**params)
            prefix = f"channel_{c}."
            sub = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
            m._set_state(sub_fitted, sub)
            self.channel_models_.append(m)

    @classmethod
    def _array_allowed(cls, key: str) -> bool:
        return key in cls._array_schema or (
            key.startswith("channel_") and key.split(".", 1)[-1] in cls._array_schema
        )

    @classmethod
    def load(cls, path):
        """Load a forecaster written by :meth:`save` (also the per-channel sub-folders
        ``channel_0/``, ``channel_1/``, ... that ``channel_independent`` saves had before 0.2)."""
        obj = super().load(path)
        legacy = Path(path) / "channel_0"
        if obj.channel_independent and obj.n_channels_ > 1 and obj.channel_models_ is None:
            if not (legacy / "config.json").is_file():
                raise ValueError(
                    f"{Path(path) / 'config.json'}: the per-channel models are missing"
                )
            obj.channel_models_ = [
                cls.load(Path(path) / f"channel_{c}") for c in range(obj.n_channels_)
            ]
        return obj

    @property
    def fit_scores_(self):
        """Deprecated: ``(sigma, mse)`` pairs; use ``cv_results_``."""
        warnings.warn(
            "fit_scores_ is deprecated, use cv_results_ (a DataFrame)", DeprecationWarning, 2
        )
        return list(zip(self.cv_results_["sigma"], self.cv_results_["mse"]))
