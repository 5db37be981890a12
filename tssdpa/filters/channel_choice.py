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

from tssdpa.filters.analogues import anchor_horizons

__all__ = [
    "VALIDATION_SHARE",
    "check_channel_independent",
    "choose_independent",
    "resolve_independence",
    "validation_errors",
]

#: the share of the fitted series both candidates forecast (the forward holdout's quarter)
VALIDATION_SHARE = 0.25


def check_channel_independent(value):
    """``value`` if it is True, False (or 1, 0) or ``"auto"``, else ValueError naming it."""
    auto = isinstance(value, str) and value == "auto"
    boolean = isinstance(value, (bool, np.bool_, int, np.integer)) and value in (0, 1)
    if not (auto or boolean):
        raise ValueError(f"channel_independent must be True, False or 'auto', got {value!r}")
    return value


def resolve_independence(est, a: np.ndarray) -> tuple[bool, dict]:
    """``(channel_independent_, channel_choice_)`` of a fit of the forecaster ``est`` on
    (T, C) ``a``: its setting, or for ``"auto"`` on several channels
    :func:`choose_independent` at the anchor horizons of ``est.horizon``."""
    if a.shape[1] == 1:
        return False, {}
    if not isinstance(est.channel_independent, str):
        return bool(est.channel_independent), {}
    horizons = anchor_horizons(est.horizon)
    return choose_independent(type(est), est.get_params(), a, horizons, est._verbose)


def validation_errors(model, a: np.ndarray, cut: int, horizons) -> dict[int, float]:
    """``{h: mse}``: the mean squared error of ``model``'s h-step forecasts of ``a[cut:]``
    from the causal past (``model`` fitted on ``a[:cut]``), each channel's squared errors
    divided by its variance before ``cut`` and averaged over its known targets, then over the
    channels (so that every channel counts alike); NaN where no forecast of a known target
    exists."""
    scale = np.nanvar(a[:cut], axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    out = {}
    for h in horizons:
        pred = np.asarray(model.forecast(a, horizon=h), dtype=np.float64).reshape(a.shape)
        err = (pred[cut - h : len(a) - h] - a[cut:]) ** 2 / scale  # pred[t] is of a[t + h]
        per_channel = [np.mean(e[np.isfinite(e)]) for e in err.T if np.isfinite(e).any()]
        out[h] = float(np.mean(per_channel)) if per_channel else np.nan
    return out


def choose_independent(cls, params: dict, a: np.ndarray, horizons,
                       verbose: bool = False) -> tuple[bool, dict]:  # fmt: skip
    """Whether per-channel fits forecast the last quarter of (T, C) ``a`` better than a joint
    one, each a ``cls(**params)`` with ``channel_independent`` set (a forecaster class).

    Both are fitted on ``a[:cut]`` (the first three quarters) and score
    :func:`validation_errors` at every anchor horizon in ``horizons``; per-channel wins where
    the geometric mean over the horizons of its error over the joint error is below 1 (a
    tie keeps the joint pattern). A kind that cannot be fitted on three quarters (too few
    samples, or too few rows with every channel known for a joint pattern) loses to the
    other. Returns ``(independent, scores)``, ``scores`` = ``{"joint": {h: mse},
    "independent": {h: mse}}`` holding the kinds that were fitted (empty where neither was:
    the joint pattern is kept, and its fit on the whole series says what is missing).
    """
    cut = int(round(len(a) * (1.0 - VALIDATION_SHARE)))
    scores: dict = {}
    for name, independent in (("joint", False), ("independent", True)):
        try:
            model = cls(**{**params, "channel_independent": independent}).fit(a[:cut])
        except ValueError:
            continue
        scores[name] = validation_errors(model, a, cut, horizons)
    if len(scores) < 2:
        independent = "independent" in scores
    else:
        logs = [_log_ratio(scores["independent"][h], scores["joint"][h]) for h in horizons]
        logs = [v for v in logs if not np.isnan(v)]
        independent = bool(logs) and float(np.mean(logs)) < 0.0
    if verbose:
        _report(scores, horizons, independent)
    return independent, scores


def _log_ratio(independent: float, joint: float) -> float:
    """log(independent / joint); NaN where either is missing (the horizon does not count)."""
    if not (np.isfinite(independent) and np.isfinite(joint)):
        return np.nan
    if joint == 0.0 or independent == 0.0:  # an exact forecast wins; two are a tie
        return 0.0 if joint == independent else (np.inf if joint == 0.0 else -np.inf)
    return float(np.log(independent / joint))


def _report(scores: dict, horizons, independent: bool) -> None:
    print("channel_independent='auto': validation MSE on the last quarter (in each channel's "
          "variance) by anchor horizon")  # fmt: skip
    for name in ("joint", "independent"):
        if name not in scores:
            print(f"  {name}: could not be fitted on the first three quarters")
    for h in horizons:
        cells = "  ".join(
            f"{n} {scores[n][h]:.4g}" for n in ("joint", "independent") if n in scores
        )
        if cells:
            print(f"  h={h}: {cells}")
    print(f"  -> {'per-channel' if independent else 'joint'} patterns")
