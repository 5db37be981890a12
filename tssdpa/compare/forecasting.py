"""Forecasting evaluation: rolling-origin errors, per-horizon choice on validation, test scores.

Every configuration of a method's search space is fitted on the training part; for each
horizon the configuration with the lowest validation MSE is kept, and that already fitted
forecaster is scored on the test origins. Each call hands the forecaster only the series up
to its last origin, so no value after an origin can reach the forecast from it.
"""

from __future__ import annotations

import time

import numpy as np

from tssdpa.compare.common import as_numpy, fitted_json, params_json
from tssdpa.compare.registry import DEFAULT_BUDGET, MethodSpec, search_space
from tssdpa.data.tasks import ForecastTask

__all__ = ["evaluate_forecaster", "rolling_errors"]

#: floats per forecast_path call: bounds the memory of long horizons on long series
_MAX_ELEMS = 16_000_000


def _origin_blocks(first: int, last: int, max_origins: int | None, n_blocks: int = 8):
    """Contiguous origin blocks covering [first, last], or a spread subset of them."""
    total = last - first + 1
    if max_origins is None or total <= max_origins:
        return [(first, last)], total
    n_blocks = min(n_blocks, max_origins)  # 8 blocks of 1 gave 8 origins for a cap of 3
    size = max_origins // n_blocks
    starts = np.linspace(first, last - size + 1, n_blocks).astype(int)
    return [(int(s), int(s) + size - 1) for s in starts], size * n_blocks


def _origins(first: int, last: int, max_origins: int | None) -> np.ndarray:
    """The origins :func:`rolling_errors` evaluates, in the order of its rows."""
    blocks, _ = _origin_blocks(first, last, max_origins)
    return np.concatenate([np.arange(a, b + 1) for a, b in blocks])


def rolling_errors(
    est,
    y: np.ndarray,
    first: int,
    last: int,
    hmax: int,
    history: int | None = None,
    max_origins: int | None = None,
    keep_origin: int | None = None,
    steps: tuple | None = None,
):
    """Squared and absolute errors of ``est.forecast_path`` from origins ``first..last``.

    Each call passes the forecaster only ``y`` up to the last origin of the block (so no value
    after an origin can be used for it, even by a non-conforming method) and at most
    ``history`` earlier samples (None = from the series start).

    With ``steps`` (a tuple of horizons) only ``est.forecast(y, horizon=h)`` for those ``h``
    is called and the other columns stay NaN (for direct per-horizon methods whose full path is
    expensive).

    Returns
    -------
    se, ae : ndarray (n_origins, hmax)
        Errors summed over the channels whose target ``y[t + h]`` is known (a missing one,
        a gap in the series, adds nothing; NaN where ``t + h`` is past the end of ``y``).
    n_used : int
        Origins evaluated (fewer than ``last - first + 1`` when subsampled).
    kept : ndarray (hmax, C) or None
        The forecast path from ``keep_origin`` when it was evaluated.
    """
    T, C = y.shape
    blocks, n_used = _origin_blocks(first, last, max_origins)
    se_all, ae_all, kept = [], [], None
    for b0, b1 in blocks:
        step = b1 - b0 + 1
        if history is not None:
            step = max(256, min(step, _MAX_ELEMS // max(1, hmax * C) - history))
        for s0 in range(b0, b1 + 1, step):
            s1 = min(b1, s0 + step - 1)
            seg0 = 0 if history is None else max(0, s0 - history + 1)
            seg = y[seg0 : s1 + 1].copy()
            if steps is None:
                path = as_numpy(est.forecast_path(seg, horizon=hmax)).reshape(len(seg), hmax, C)
            else:
                path = np.full((len(seg), hmax, C), np.nan)
                for h in steps:
                    path[:, h - 1] = as_numpy(est.forecast(seg, horizon=h)).reshape(len(seg), C)
            pred = path[s0 - seg0 : s1 - seg0 + 1]  # (n, hmax, C)
            idx = np.arange(s0, s1 + 1)[:, None] + np.arange(1, hmax + 1)[None, :]
            ok = idx < T
            truth = np.full(pred.shape, np.nan)
            truth[ok] = y[idx[ok]]
            d = pred - truth
            d[ok[:, :, None] & np.isnan(truth)] = 0.0  # no target: nothing to score there
            se_all.append(np.sum(d**2, axis=2))
            ae_all.append(np.sum(np.abs(d), axis=2))
            if keep_origin is not None and s0 <= keep_origin <= s1:
                kept = pred[keep_origin - s0]
    return np.concatenate(se_all), np.concatenate(ae_all), n_used, kept


def _cols(h: int, mode: str) -> slice:
    """The error columns horizon ``h`` averages: steps 1..h (``"path"``) or step h (``"step"``)."""
    return slice(0, h) if mode == "path" else slice(h - 1, h)


def _known_targets(y: np.ndarray, origins: np.ndarray, hmax: int) -> np.ndarray:
    """(n_origins, hmax) how many channels of ``y[t + h]`` are known for each origin ``t``
    (0 past the end of ``y``): what the errors of :func:`rolling_errors` are averaged over."""
    idx = origins[:, None] + np.arange(1, hmax + 1)[None, :]
    inside = idx < len(y)
    known = np.zeros(idx.shape, dtype=np.int64)
    known[inside] = np.isfinite(y[idx[inside]]).sum(axis=-1)
    return known


def _horizon_scores(se, ae, origins, last_origin_for_h, h, known, mode="path"):
    """MSE / MAE at horizon ``h`` over the origins whose ``h``-step target is in the part:
    averaged over steps 1..h (``"path"``, the DLinear protocol) or at step h only
    (``"step"``), per known target (``known``: :func:`_known_targets`; a missing target made
    every configuration's score NaN, and the first was chosen whatever the others did)."""
    ok = origins <= last_origin_for_h
    cols = _cols(h, mode)
    n = known[ok, cols].sum() if ok.any() else 0
    if not n:
        return np.nan, np.nan
    return (float(np.sum(se[ok, cols]) / n), float(np.sum(ae[ok, cols]) / n))


def _history(spec: MethodSpec, task: ForecastTask, est) -> int | None:
    """The history given with each block of origins: the task's (raised to what the fitted
    ``est`` reads from one origin where that is longer), or less where ``spec`` needs less
    (:class:`~tssdpa.compare.registry.MethodSpec` ``history``, raised to what ``est`` reads
    from one origin where that is longer)."""
    if spec.history is None:
        # never less than one origin reads: a seasonal naive period beyond the IMU's history
        # of 1064 samples (periods are searched up to half the training part) left the first
        # period's origins of every block without a value one period earlier (NaN forecasts)
        reads = getattr(est, "_predict_context", lambda: None)()  # None: it does not say
        if task.history is None or reads is None:
            return task.history
        return max(task.history, int(reads))
    need = max(spec.history, int(est._predict_context()))
    return need if task.history is None else min(need, task.history)


def _validation_scores(est, task: ForecastTask, max_o, steps, history) -> dict:
    """Validation MSE per horizon of a fitted forecaster (inf where not finite)."""
    y, sp = task.y, task.split
    hmax = max(task.horizons)
    v0, v1 = sp.bounds("val")
    first, last = v0 - 1, v1 - 1 - min(task.horizons)
    se, ae, _, _ = rolling_errors(est, y[:v1], first, last, hmax, history, max_o, steps=steps)
    # the rows whose h-step target is inside the part; a NaN forecast among them is counted
    # (subsampled, the rows with finite errors were kept: NaN forecasts went unseen)
    origins = _origins(first, last, max_o)
    known = _known_targets(y[:v1], origins, hmax)
    scores = {}
    for h in task.horizons:
        s = _horizon_scores(se, ae, origins, v1 - 1 - h, h, known, task.metric)[0]
        scores[h] = s if np.isfinite(s) else np.inf
    return scores


def evaluate_forecaster(
    spec: MethodSpec, task: ForecastTask, budget: int = DEFAULT_BUDGET, keep_path: bool = False
) -> tuple[list[dict], dict]:
    """Choose ``spec``'s configuration per horizon on validation MSE; score on the test part.

    High-cost methods (``spec.cost == "high"``) are scored on at most ``task.max_origins``
    origins, spread over the part in blocks.

    Parameters
    ----------
    spec : MethodSpec
        A ``"forecast"`` method.
    task : ForecastTask
    budget : int
        At most this many configurations are tried (:func:`~tssdpa.compare.search_space`).
    keep_path : bool
        Also return one test forecast path (from an origin in the middle of the test part).

    Returns
    -------
    rows : list of dict
        One results row per horizon: the chosen ``params``, validation and test MSE, test MAE,
        the number of origins scored, fit and prediction times.
    extras : dict
        ``"path"`` and ``"keep_origin"``: the kept test forecast path of the configuration
        chosen for the largest horizon (or None).
    """
    sp, y = task.split, task.y
    hmax = max(task.horizons)
    tr1 = sp.train
    t0, t1 = sp.bounds("test")
    max_o = task.max_origins if spec.cost == "high" else None
    mode = task.metric
    steps = tuple(task.horizons) if mode == "step" else None
    configs = search_space(spec, task.ctx, budget, seed=task.seed)
    fitted, val_scores = [], []
    for params in configs:
        est = spec.build(task.ctx, seed=task.seed, **params)
        tic = time.perf_counter()
        est.fit(y[:tr1].copy())
        fit_s = time.perf_counter() - tic
        val_scores.append(_validation_scores(est, task, max_o, steps, _history(spec, task, est)))
        fitted.append((params, est, fit_s))
    rows, extras = [], {"path": None}
    chosen = {h: int(np.argmin([vs[h] for vs in val_scores])) for h in task.horizons}
    test_cache = {}  # configuration index -> its test errors (one evaluation per configuration)
    keep_origin = t0 - 1 + (t1 - t0) // 2 - hmax // 2 if keep_path else None
    if keep_origin is not None:
        keep_origin = max(t0 - 1, keep_origin)
    for h in sorted(task.horizons):
        k = chosen[h]
        params, est, fit_s = fitted[k]
        if k not in test_cache:
            tic = time.perf_counter()
            first, last = t0 - 1, t1 - 1 - min(task.horizons)
            se, ae, n_used, kept = rolling_errors(
                est, y[:t1], first, last, hmax, _history(spec, task, est), max_o, keep_origin, steps
            )
            test_cache[k] = (se, ae, n_used, kept, time.perf_counter() - tic, first)
        se, ae, n_used, kept, pred_s, first = test_cache[k]
        origins = _origins(first, last, max_o)  # as in _validation_scores
        known = _known_targets(y[:t1], origins, hmax)
        mse_h, mae_h = _horizon_scores(se, ae, origins, t1 - 1 - h, h, known, mode)
        n_orig, n_all = int(np.sum(origins <= t1 - 1 - h)), t1 - t0 - h + 1
        note = f"subsampled: {n_orig} of {n_all} origins" if n_orig < n_all else ""
        rows.append(
            {
                "task": "forecast",
                "dataset": task.dataset,
                "setting": task.setting,
                "horizon": int(h),
                "metric": mode,
                "seed": task.seed,
                "method": spec.name,
                "family": spec.family,
                "params": params_json(params),
                "fitted": fitted_json(est, h),
                "n_configs": len(configs),
                "val_mse": val_scores[k][h],
                "mse": mse_h,
                "mae": mae_h,
                "n_origins": n_orig,
                "note": note,
                "fit_s": fit_s,
                "apply_s": pred_s,
            }
        )
        if h == hmax:
            extras["path"] = kept
            extras["keep_origin"] = keep_origin
    return rows, extras
