"""Joint or per-channel patterns: how ``ProjectionForecaster(channel_independent="auto")``
chooses.

A joint pattern (every channel's lags in one key) lets one channel's past inform another's
future; per-channel patterns have fewer dimensions, so their neighbours are nearer and their
linear parts have fewer coefficients. Which wins depends on the data (a dynamical system's
components need each other; on the IMU fusion recording's six channels one forecaster per
channel is 30% better at h = 1: ``experiments/multichannel_dev.py``), and the two fits'
cross-validation errors do not compare: a joint fit of a series that changed regime scores
forward only, a single channel both ways. :func:`choose_independent` compares them on one
ground instead: both fitted on the first three quarters of the series, each forecasting the
last quarter from its causal past at every anchor horizon. The choice is one for all
horizons (the forecaster keeps one kind of model).
"""

from __future__ import annotations

import numpy as np

__all__ = ["VALIDATION_SHARE", "choose_independent", "validation_errors"]

#: the share of the fitted series both candidates forecast (the forward holdout's quarter)
VALIDATION_SHARE = 0.25


def validation_errors(model, a: np.ndarray, cut: int, horizons) -> dict[int, float]:
    """``{h: mse}``: the mean squared error of ``model``'s h-step forecasts of ``a[cut:]``
    from the causal past (``model`` fitted on ``a[:cut]``), each channel's squared errors
    divided by its variance before ``cut`` (so that every channel counts alike), NaN
    targets left out; NaN where no forecast of a known target exists."""
    scale = np.nanvar(a[:cut], axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    out = {}
    for h in horizons:
        pred = np.asarray(model.forecast(a, horizon=h), dtype=np.float64).reshape(a.shape)
        err = (pred[cut - h : len(a) - h] - a[cut:]) ** 2 / scale  # pred[t] is of a[t + h]
        out[h] = float(np.nanmean(err)) if np.isfinite(err).any() else np.nan
    return out


def choose_independent(cls, params: dict, a: np.ndarray, horizons,
                       verbose: bool = False) -> tuple[bool, dict]:  # fmt: skip
    """Whether per-channel fits forecast the last quarter of (T, C) ``a`` better than a joint
    one, each a ``cls(**params)`` with ``channel_independent`` set (a forecaster class).

    Both are fitted on ``a[:cut]`` (the first three quarters) and score
    :func:`validation_errors` at every anchor horizon in ``horizons``; per-channel wins where
    the geometric mean over the horizons of its error over the joint error is below 1 (a
    tie keeps the joint pattern). Returns ``(independent, scores)``, ``scores`` =
    ``{"joint": {h: mse}, "independent": {h: mse}}`` (empty where no comparison was possible:
    a series too short to fit on three quarters, or no horizon both could forecast -- the
    joint pattern is kept).
    """
    cut = int(round(len(a) * (1.0 - VALIDATION_SHARE)))
    scores: dict = {}
    try:
        for name, independent in (("joint", False), ("independent", True)):
            model = cls(**{**params, "channel_independent": independent}).fit(a[:cut])
            scores[name] = validation_errors(model, a, cut, horizons)
    except ValueError:  # too few samples (or complete patterns) in three quarters
        return False, {}
    pairs = [(scores["independent"][h], scores["joint"][h]) for h in horizons]
    ratios = [i / j for i, j in pairs if np.isfinite(i) and np.isfinite(j) and j > 0]
    if not ratios:
        return False, {}
    independent = bool(np.exp(np.mean(np.log(np.maximum(ratios, 1e-300)))) < 1.0)
    if verbose:
        print("channel_independent='auto': validation MSE on the last quarter (per channel "
              "variance units) by anchor horizon")  # fmt: skip
        for h in horizons:
            print(f"  h={h}: joint {scores['joint'][h]:.4g}  per channel "
                  f"{scores['independent'][h]:.4g}")  # fmt: skip
        print(f"  -> {'per-channel' if independent else 'joint'} patterns")
    return independent, scores
