"""Closed-form start of a :class:`~tssdpa.models.ForecastingNet`'s linear branch.

:func:`ridge_linear_init` fits the ridge DLinear of the baselines
(:class:`tssdpa.baselines.DLinearForecaster`) on a training series, chooses its penalty and
level normalisation on validation windows, and copies it into the net. With the attention head
at zero (as built) the net then forecasts exactly like that linear model, so training starts
from the strongest linear forecaster and only has to model what it leaves.
"""

from __future__ import annotations

import numpy as np

from tssdpa.baselines import DLinearForecaster
from tssdpa.models.nets import ForecastingNet
from tssdpa.signal.missing import reading_spans

__all__ = ["RIDGE_GRID", "ridge_linear_init"]

#: Ridge-initialisation grid: the same search as the harness's ``dlinear`` baseline
#: (``tssdpa.compare.registry``): every pair is tried, the best on validation MSE is kept.
RIDGE_GRID = tuple(
    {"ridge": r, "normalize": n} for r in (1e-4, 1e-2, 1.0, 100.0) for n in ("none", "last")
)


def _linear_predict(W: np.ndarray, b: np.ndarray, X: np.ndarray, normalize: str) -> np.ndarray:
    """DLinearForecaster's prediction on windows: X (N, L, C) -> (N, H, C), float64."""
    X = np.asarray(X, dtype=np.float64)
    last = X[:, -1:, :] if normalize == "last" else 0.0
    return np.einsum("nlc,lh->nhc", X - last, W) + b[None, :, None] + last


def ridge_linear_init(net: ForecastingNet, train_series, val_pairs, grid=None) -> dict:
    """Set ``net``'s linear branch to the closed-form ridge DLinear fitted on ``train_series``.

    Each step ahead is its own least-squares problem, so the penalty is chosen per step: for
    each level normalisation the penalty of every step is the one with the lowest validation
    MSE at that step, and the normalisation with the lowest MSE over all steps is kept. (One
    penalty for all steps is dominated by the far steps, where a short series prefers heavy
    shrinkage towards the mean -- which wrecks the near steps.)

    Parameters
    ----------
    net : ForecastingNet
        Its lookback, horizon and moving-average kernel define the linear model.
    train_series : array_like, (T,) or (T, C)
        The training series; the only data the linear model is fitted on. NaN is a missing
        sample: each channel is fitted between its first and last readings (gaps filled as
        :class:`~tssdpa.baselines.DLinearForecaster` fills them), and a channel with fewer
        than ``lookback + horizon`` samples there is left out (the weights are shared).
    val_pairs : tuple of array_like
        Validation windows ``(past (N, lookback, C), future (N, horizon, C))``; the
        configuration with the lowest MSE on them (NaN targets ignored) is kept. The past
        windows must be finite.
    grid : iterable of dict, optional
        ``{"ridge", "normalize"}`` configurations (default :data:`RIDGE_GRID`, the harness's
        DLinear search). Every one is a :class:`~tssdpa.baselines.DLinearForecaster` with
        weights shared by the channels.

    Returns
    -------
    dict
        ``{"ridge", "normalize", "val_mse", "scores"}``: the chosen penalty (a float when
        every step chose the same one, else a list with one per step), normalisation and
        validation MSE, and the score of every configuration (its MSE over all steps).
    """
    a = np.asarray(train_series, dtype=np.float64)
    a = a[:, None] if a.ndim == 1 else a
    # missing samples are no data: a late channel's head filled with 0 (its mean) was fitted
    # as readings, forecasts 0.077 off the fit on the readings alone
    n = net.lookback + net.horizon
    fitted = [c for c, (start, end) in enumerate(reading_spans(a)) if end - start >= n]
    if not fitted:
        raise ValueError(f"train_series: no channel has lookback + horizon = {n} samples "
                         "from its first reading to its last, the least a ridge start is "
                         "fitted on (linear_init='none' starts without one)")  # fmt: skip
    a = a[:, fitted]
    Xv, Yv = (np.asarray(t, dtype=np.float64) for t in val_pairs)
    ok_shapes = Xv.ndim == Yv.ndim == 3 and Xv.shape[1] == net.lookback
    if not (ok_shapes and Yv.shape == (Xv.shape[0], net.horizon, Xv.shape[2])):
        # broadcast or unnamed before: a one-channel past scored against two target channels
        raise ValueError(
            f"val_pairs must be (past (N, {net.lookback}, C), future (N, {net.horizon}, C)) "
            f"for this net, got {Xv.shape} and {Yv.shape}"
        )
    # a NaN past made every score NaN: the grid's first configuration was kept, unscored
    if not np.isfinite(Xv).all():
        raise ValueError("val_pairs: the past windows hold NaN or inf; fill missing inputs "
                         "first (the learned forecaster takes the training mean)")  # fmt: skip
    if np.isinf(Yv).any():
        raise ValueError("val_pairs: the future windows hold inf (NaN is a missing target)")
    ok = ~np.isnan(Yv)
    if not ok.any():
        raise ValueError("the validation windows have no finite target")
    n_ok = ok.sum(axis=(0, 2))  # (H,) finite targets per step
    grid = list(grid) if grid is not None else list(RIDGE_GRID)
    if not grid:  # it ended in "cannot unpack non-iterable NoneType object"
        raise ValueError("grid: no configuration to try; give {'ridge', 'normalize'} dicts "
                         "or None for RIDGE_GRID")  # fmt: skip
    fits: dict[str, list] = {}  # normalize -> [(ridge, W, b, per-step squared-error sums)]
    scores = []
    for cfg in grid:
        est = DLinearForecaster(
            lookback=net.lookback,
            horizon=net.horizon,
            moving_average=net.moving_average,
            individual=False,
            **cfg,
        ).fit(a)
        W, b = est.weights_[0]
        err = np.where(ok, _linear_predict(W, b, Xv, cfg["normalize"]) - Yv, 0.0)
        sse = (err**2).sum(axis=(0, 2))  # (H,)
        scores.append({**cfg, "val_mse": float(sse.sum() / ok.sum())})
        fits.setdefault(cfg["normalize"], []).append((float(cfg["ridge"]), W, b, sse))
    best = None
    for normalize, cands in fits.items():
        sse = np.stack([c[3] for c in cands])  # (n_ridges, H)
        pick = np.argmin(np.where(n_ok > 0, sse, 0.0), axis=0)  # per step; first on ties
        steps = np.arange(sse.shape[1])
        W = np.stack([cands[i][1][:, h] for h, i in zip(steps, pick)], axis=1)
        b = np.array([cands[i][2][h] for h, i in zip(steps, pick)])
        mse = float(sse[pick, steps].sum() / ok.sum())
        if best is None or mse < best[0]:
            ridges = [cands[i][0] for i in pick]
            best = (mse, normalize, ridges, W, b)
    mse, normalize, ridges, W, b = best
    net.set_linear(W, b, normalize)
    ridge = ridges[0] if len(set(ridges)) == 1 else ridges
    return {"ridge": ridge, "normalize": normalize, "val_mse": mse, "scores": scores}
