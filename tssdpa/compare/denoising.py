"""Denoising evaluation: choose a configuration on the validation part, score it on the test part.

Every configuration of a method's search space is fitted on the training part (noisy input and
clean target), the one with the lowest validation RMSE is kept, and that already fitted
estimator filters the test part once. The test part never reaches ``fit`` nor the choice.
"""

from __future__ import annotations

import time

import numpy as np

from tssdpa.compare import metrics as M
from tssdpa.compare.common import as_numpy, fitted_json, params_json
from tssdpa.compare.registry import DEFAULT_BUDGET, MethodSpec, search_space
from tssdpa.data.tasks import DenoiseTask

__all__ = ["evaluate_denoiser"]


def _filter_part(est, task: DenoiseTask, part: str) -> np.ndarray:
    """Filter the noisy ``part`` with up to ``task.warmup`` earlier samples as filter state."""
    start, stop = task.split.bounds(part)
    w = min(start, task.warmup)
    out = as_numpy(est.filter(task.noisy[start - w : stop].copy()))
    out = out.reshape(stop - start + w, -1)
    return out[w:]


def evaluate_denoiser(
    spec: MethodSpec, task: DenoiseTask, budget: int = DEFAULT_BUDGET, keep_trace: bool = False
) -> tuple[dict, np.ndarray | None]:
    """Choose ``spec``'s configuration on validation RMSE and score it on the test part.

    Parameters
    ----------
    spec : MethodSpec
        A ``"denoise"`` method.
    task : DenoiseTask
    budget : int
        At most this many configurations are tried (:func:`~tssdpa.compare.search_space`).
    keep_trace : bool
        Also return the filtered test part.

    Returns
    -------
    row : dict
        One results row: the chosen ``params``, validation RMSE, test RMSE / MAE, SNR in and
        out and its gain (dB), fit and filtering times.
    trace : ndarray (n_test, C) or None
        The filtered test part when ``keep_trace``.
    """
    sp = task.split
    tr0, tr1 = sp.bounds("train")
    v0, v1 = sp.bounds("val")
    t0, t1 = sp.bounds("test")
    best = None
    configs = search_space(spec, task.ctx, budget, seed=task.seed)
    for params in configs:
        est = spec.build(task.ctx, seed=task.seed, **params)
        tic = time.perf_counter()
        est.fit(task.noisy[tr0:tr1].copy(), target=task.clean[tr0:tr1].copy())
        fit_s = time.perf_counter() - tic
        val = _filter_part(est, task, "val")
        score = M.rmse(task.clean[v0:v1], val)
        if not np.isfinite(score):
            score = np.inf
        if best is None or score < best[0]:
            best = (score, params, est, fit_s)
    score, params, est, fit_s = best
    tic = time.perf_counter()
    out = _filter_part(est, task, "test")
    filt_s = time.perf_counter() - tic
    clean, noisy = task.clean[t0:t1], task.noisy[t0:t1]
    row = {
        "task": "denoise",
        "dataset": task.dataset,
        "setting": task.setting,
        "noise": task.noise,
        "snr_db": task.snr_db,
        "seed": task.seed,
        "method": spec.name,
        "family": spec.family,
        "causal": bool(getattr(est, "causal", spec.causal)),
        "params": params_json(params),
        "fitted": fitted_json(est),
        "n_configs": len(configs),
        "val_rmse": score,
        "rmse": M.rmse(clean, out),
        "mae": M.mae(clean, out),
        "snr_in_db": M.snr_db(clean, noisy),
        # where the truth is known (M.snr_improvement_db's condition)
        "snr_out_db": M.snr_db(clean, out) if np.isfinite(out[~np.isnan(clean)]).all() else np.nan,
        "snr_gain_db": M.snr_improvement_db(clean, noisy, out),
        "fit_s": fit_s,
        "apply_s": filt_s,
    }
    return row, (out if keep_trace else None)
