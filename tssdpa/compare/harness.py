"""Run methods on tasks: validation-split selection, test scoring, timing, resumable output.

Protocol, for every method (classical or ours) alike:

1. each configuration of the method's search space (at most ``budget``) is fitted on the
   training part only;
2. the configuration with the lowest validation error is chosen (per horizon for forecasting);
3. the chosen, already fitted estimator is scored once on the test part.

The test part never reaches ``fit`` and never influences the choice.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.compare import metrics as M
from tssdpa.compare.protocols import DenoiseTask, ForecastTask
from tssdpa.compare.registry import DEFAULT_BUDGET, MethodSpec, get_method, search_space

__all__ = [
    "evaluate_denoiser",
    "evaluate_forecaster",
    "run_tasks",
    "ComparisonResults",
    "rolling_errors",
]

_MAX_ELEMS = 16_000_000  # floats per forecast_path call (memory bound for long horizons)
#: in quick runs, learned denoisers are trained on this noise setting only (and one seed)
QUICK_LEARNED_SETTING = "gaussian@10dB"


def _json(params: dict) -> str:
    def conv(v):
        if isinstance(v, tuple | list):
            return [conv(u) for u in v]
        if isinstance(v, np.generic):
            return v.item()
        return v

    return json.dumps({k: conv(v) for k, v in params.items()}, sort_keys=True)


def _as_np(a) -> np.ndarray:
    try:
        import torch

        if isinstance(a, torch.Tensor):
            a = a.detach().cpu().numpy()
    except ImportError:  # pragma: no cover
        pass
    return np.asarray(a, dtype=np.float64)


# ----------------------------------------------------------------------------- denoising
def _filter_part(est, task: DenoiseTask, part: str) -> np.ndarray:
    """Filter the noisy ``part`` with up to ``task.warmup`` earlier samples as filter state."""
    start, stop = task.split.bounds(part)
    w = min(start, task.warmup)
    out = _as_np(est.filter(task.noisy[start - w : stop].copy()))
    out = out.reshape(stop - start + w, -1)
    return out[w:]


def evaluate_denoiser(
    spec: MethodSpec, task: DenoiseTask, budget: int = DEFAULT_BUDGET, keep_trace: bool = False
) -> tuple[dict, np.ndarray | None]:
    """Choose ``spec``'s configuration on validation RMSE and score it on the test part."""
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
        "params": _json(params),
        "n_configs": len(configs),
        "val_rmse": score,
        "rmse": M.rmse(clean, out),
        "mae": M.mae(clean, out),
        "snr_in_db": M.snr_db(clean, noisy),
        "snr_out_db": M.snr_db(clean, out) if np.all(np.isfinite(out)) else np.nan,
        "snr_gain_db": M.snr_improvement_db(clean, noisy, out),
        "fit_s": fit_s,
        "apply_s": filt_s,
    }
    return row, (out if keep_trace else None)


# --------------------------------------------------------------------------- forecasting
def _origin_blocks(first: int, last: int, max_origins: int | None, n_blocks: int = 8):
    """Contiguous origin blocks covering [first, last], or a spread subset of them."""
    total = last - first + 1
    if max_origins is None or total <= max_origins:
        return [(first, last)], total
    size = max(1, max_origins // n_blocks)
    starts = np.linspace(first, last - size + 1, n_blocks).astype(int)
    return [(int(s), int(s) + size - 1) for s in starts], size * n_blocks


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
        Errors summed over channels (NaN where ``t + h`` is past the end of ``y``).
    n_used : int
        Origins evaluated (fewer than ``last - first + 1`` when subsampled).
    kept : ndarray (hmax, C) or None
        The forecast path from ``keep_origin`` when it was evaluated.
    """
    T, C = y.shape
    blocks, n_used = _origin_blocks(first, last, max_origins)
    se_all, ae_all, kept = [], [], None
    hist = history if history is not None else None
    for b0, b1 in blocks:
        step = b1 - b0 + 1
        if hist is not None:
            step = max(256, min(step, _MAX_ELEMS // max(1, hmax * C) - hist))
        for s0 in range(b0, b1 + 1, step):
            s1 = min(b1, s0 + step - 1)
            seg0 = 0 if hist is None else max(0, s0 - hist + 1)
            seg = y[seg0 : s1 + 1].copy()
            if steps is None:
                path = _as_np(est.forecast_path(seg, horizon=hmax)).reshape(len(seg), hmax, C)
            else:
                path = np.full((len(seg), hmax, C), np.nan)
                for h in steps:
                    path[:, h - 1] = _as_np(est.forecast(seg, horizon=h)).reshape(len(seg), C)
            pred = path[s0 - seg0 : s1 - seg0 + 1]  # (n, hmax, C)
            idx = np.arange(s0, s1 + 1)[:, None] + np.arange(1, hmax + 1)[None, :]
            ok = idx < T
            truth = np.full(pred.shape, np.nan)
            truth[ok] = y[idx[ok]]
            d = pred - truth
            se_all.append(np.sum(d**2, axis=2))
            ae_all.append(np.sum(np.abs(d), axis=2))
            if keep_origin is not None and s0 <= keep_origin <= s1:
                kept = pred[keep_origin - s0]
    return np.concatenate(se_all), np.concatenate(ae_all), n_used, kept


def _horizon_scores(se, ae, origins, last_origin_for_h, h, C, mode="path"):
    """MSE / MAE at horizon ``h``: averaged over steps 1..h (``"path"``, the DLinear
    protocol) or at step h only (``"step"``)."""
    ok = origins <= last_origin_for_h
    if not ok.any():
        return np.nan, np.nan
    cols = slice(0, h) if mode == "path" else slice(h - 1, h)
    return (float(np.mean(se[ok, cols]) / C), float(np.mean(ae[ok, cols]) / C))


def evaluate_forecaster(
    spec: MethodSpec, task: ForecastTask, budget: int = DEFAULT_BUDGET, keep_path: bool = False
) -> tuple[list[dict], dict]:
    """Choose ``spec``'s configuration per horizon on validation MSE; score on the test part.

    Returns the per-horizon rows and extras: the per-step test MSE curve of the configuration
    chosen for the largest horizon, and (``keep_path``) one test forecast path.
    """
    sp, y = task.split, task.y
    C = y.shape[1]
    hmax = max(task.horizons)
    tr1 = sp.train
    v0, v1 = sp.bounds("val")
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
        first, last = v0 - 1, v1 - 1 - min(task.horizons)
        se, ae, _, _ = rolling_errors(
            est, y[:v1], first, last, hmax, task.history, max_o, steps=steps
        )
        origins = np.arange(len(se)) + first if max_o is None else None
        scores = {}
        for h in task.horizons:
            if origins is None:  # subsampled: use rows whose h-step target is inside val
                cols = slice(0, h) if mode == "path" else slice(h - 1, h)
                good = np.all(np.isfinite(se[:, cols]), axis=1)
                scores[h] = float(np.mean(se[good, cols]) / C) if good.any() else np.inf
            else:
                scores[h] = _horizon_scores(se, ae, origins, v1 - 1 - h, h, C, mode)[0]
            if not np.isfinite(scores[h]):
                scores[h] = np.inf
        fitted.append((params, est, fit_s))
        val_scores.append(scores)
    rows, extras = [], {"curve": None, "path": None}
    chosen = {h: int(np.argmin([vs[h] for vs in val_scores])) for h in task.horizons}
    test_cache = {}
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
                est, y[:t1], first, last, hmax, task.history, max_o, keep_origin, steps
            )
            test_cache[k] = (se, ae, n_used, kept, time.perf_counter() - tic, first)
        se, ae, n_used, kept, pred_s, first = test_cache[k]
        if max_o is None:
            origins = np.arange(len(se)) + first
            mse_h, mae_h = _horizon_scores(se, ae, origins, t1 - 1 - h, h, C, mode)
            n_orig = int(np.sum(origins <= t1 - 1 - h))
            note = ""
        else:
            cols = slice(0, h) if mode == "path" else slice(h - 1, h)
            good = np.all(np.isfinite(se[:, cols]), axis=1)
            mse_h = float(np.mean(se[good, cols]) / C)
            mae_h = float(np.mean(ae[good, cols]) / C)
            n_orig = int(good.sum())
            note = f"subsampled: {n_orig} of {t1 - t0 - h + 1} origins"
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
                "params": _json(params),
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
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                extras["curve"] = np.nanmean(se, axis=0) / C
            extras["path"] = kept
            extras["keep_origin"] = keep_origin
    return rows, extras


# ------------------------------------------------------------------------------ runner
def _key(row) -> tuple:
    return (row["task"], row["dataset"], row["setting"], int(row["seed"]), row["method"])


def run_tasks(
    tasks: list,
    methods: list[str] | None = None,
    out: str | Path | None = None,
    budget: int = DEFAULT_BUDGET,
    progress: bool = True,
    trace_seed: int = 0,
    trace_settings: tuple = ("gaussian@10dB", "M", "univariate", "multivariate"),
    log=None,
) -> ComparisonResults:
    """Run every method on every task and return a :class:`ComparisonResults`.

    With ``out``, rows are appended to ``out/results.csv`` as each (task, method) cell finishes,
    and cells already there are skipped (resumable). Errors in one method are recorded in the
    ``error`` column and the run continues.
    """
    from tssdpa.compare.registry import available_methods

    if methods is not None:
        unknown = [m for m in methods if m not in available_methods()]
        if unknown:
            raise ValueError(
                f"methods: unknown name(s) {unknown}; known: {sorted(set(available_methods()))}"
            )
    out = Path(out) if out is not None else None
    done, old = set(), None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        f = out / "results.csv"
        if f.exists() and f.stat().st_size:
            old = pd.read_csv(f)
            done = {_key(r) for r in old.to_dict("records")}
    cells = []
    for task in tasks:
        kind = "denoise" if isinstance(task, DenoiseTask) else "forecast"
        known = available_methods(kind)
        names = known if methods is None else [m for m in methods if m in known]
        for name in names:
            spec = get_method(name, kind)
            first_seed = min(t.seed for t in tasks if t.dataset == task.dataset)
            if (
                kind == "forecast"
                and not task.seeded_data
                and spec.family != "learned"
                and task.seed != first_seed
            ):
                continue  # deterministic method on a seed-independent series: one run is enough
            if (
                task.quick
                and spec.family == "learned"
                and (
                    task.seed != first_seed
                    or (kind == "denoise" and task.setting != QUICK_LEARNED_SETTING)
                )
            ):
                continue  # quick runs: learned models on one seed and one noise setting only
            cells.append((task, spec))
    new_rows = []
    todo = [(t, s) for t, s in cells if _cell_key(t, s) not in done]
    if any(s.family == "learned" for _, s in todo):
        _quiet_lightning()
    bar = _progress(progress, len(todo))
    with bar as pb:
        tid = pb.add_task("comparing", total=len(todo)) if pb is not None else None
        for task, spec in todo:
            if pb is not None:
                pb.update(
                    tid, description=f"{task.dataset} {_setting(task)} s{task.seed} {spec.name}"
                )
            rows = _run_cell(task, spec, budget, out, trace_seed, trace_settings, log)
            new_rows += rows
            if out is not None:
                _append_csv(out / "results.csv", rows)
            if pb is not None:
                pb.advance(tid)
    frame = pd.DataFrame(new_rows)
    if old is not None:
        frame = pd.concat([old, frame], ignore_index=True) if len(frame) else old
    return ComparisonResults(frame, out)


def _quiet_lightning():
    """Silence Lightning's per-fit info messages (it sets its loggers' levels on import)."""
    try:
        import lightning.pytorch  # noqa: F401
    except ImportError:  # pragma: no cover
        return
    for name in list(logging.root.manager.loggerDict):
        if name.startswith(("lightning", "pytorch_lightning")):
            logging.getLogger(name).setLevel(logging.ERROR)


def _setting(task):
    return task.setting


def _cell_key(task, spec):
    kind = "denoise" if isinstance(task, DenoiseTask) else "forecast"
    return (kind, task.dataset, task.setting, int(task.seed), spec.name)


def _append_csv(path: Path, rows: list[dict]):
    if not rows:
        return
    df = pd.DataFrame(rows)
    if path.exists() and path.stat().st_size:
        old_cols = list(pd.read_csv(path, nrows=0).columns)
        if set(df.columns) <= set(old_cols):
            df.reindex(columns=old_cols).to_csv(path, mode="a", header=False, index=False)
            return
        if old_cols != list(df.columns):  # new columns: rewrite atomically
            full = pd.concat([pd.read_csv(path), df], ignore_index=True)
            tmp = path.with_suffix(".csv.tmp")
            full.to_csv(tmp, index=False)
            tmp.replace(path)
            return
        df.to_csv(path, mode="a", header=False, index=False)
    else:
        df.to_csv(path, index=False)


def _run_cell(task, spec, budget, out, trace_seed, trace_settings, log):
    want = (
        out is not None
        and task.shareable
        and task.seed == trace_seed
        and task.setting in trace_settings
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(task, DenoiseTask):
                row, trace = evaluate_denoiser(spec, task, budget, keep_trace=want)
                rows = [row]
                if want:
                    _save_trace(out, task, spec.name, trace)
            else:
                rows, extras = evaluate_forecaster(spec, task, budget, keep_path=want)
                if out is not None and task.seed == trace_seed:
                    _save_curve(out, task, spec.name, extras, save_path=want)
    except Exception as exc:  # keep going; record the failure
        msg = f"{type(exc).__name__}: {exc}"
        if log is not None:
            log(
                f"[error] {task.dataset} {task.setting} {spec.name}: {msg}\n"
                + traceback.format_exc(limit=3)
            )
        base = {
            "task": "denoise" if isinstance(task, DenoiseTask) else "forecast",
            "dataset": task.dataset,
            "setting": task.setting,
            "seed": task.seed,
            "method": spec.name,
            "family": spec.family,
            "error": msg,
        }
        if isinstance(task, DenoiseTask):
            base.update(noise=task.noise, snr_db=task.snr_db, causal=spec.causal)
            return [base]
        return [dict(base, horizon=int(h)) for h in task.horizons]
    for r in rows:
        r.setdefault("error", "")
    return rows


def _save_trace(out: Path, task: DenoiseTask, name: str, trace: np.ndarray):
    d = out / "traces"
    d.mkdir(exist_ok=True)
    t0, t1 = task.split.bounds("test")
    n = min(600, t1 - t0)
    stem = f"{task.dataset}__{task.setting}"
    base = d / f"{stem}__truth.npz"
    if not base.exists():
        np.savez_compressed(base, clean=task.clean[t0 : t0 + n], noisy=task.noisy[t0 : t0 + n])
    np.savez_compressed(d / f"{stem}__{name}.npz", out=trace[:n])


def _save_curve(out: Path, task: ForecastTask, name: str, extras: dict, save_path: bool):
    d = out / "curves"
    d.mkdir(exist_ok=True)
    stem = f"{task.dataset}__{task.setting}"
    if extras.get("curve") is not None:
        np.savez_compressed(d / f"{stem}__{name}.npz", curve=extras["curve"])
    if save_path and extras.get("path") is not None:
        o = extras["keep_origin"]
        hmax = extras["path"].shape[0]
        base = d / f"{stem}__truth.npz"
        if not base.exists():
            lo = max(0, o + 1 - 3 * hmax)
            np.savez_compressed(
                base, history=task.y[lo : o + 1], future=task.y[o + 1 : o + 1 + hmax], origin=o
            )
        np.savez_compressed(d / f"{stem}__{name}__path.npz", path=extras["path"])


class _NullBar:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def _progress(enabled: bool, total: int):
    if not enabled:
        return _NullBar()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description:<48}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=False,
    )


@dataclass
class ComparisonResults:
    """Results of a comparison (statsmodels-style results object).

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per (task, dataset, setting, seed, method[, horizon]).
    out : Path or None
        Folder the results were written to.
    """

    frame: pd.DataFrame
    out: Path | None = None

    def aggregate(self, task: str) -> pd.DataFrame:
        """Mean and std over seeds per (dataset, setting, method[, horizon])."""
        from tssdpa.compare.tables import aggregate

        return aggregate(self.frame, task)

    def chosen_params(self, task: str) -> pd.DataFrame:
        """The hyperparameters chosen on validation, per cell."""
        df = self.frame[self.frame["task"] == task]
        cols = [
            c
            for c in ("dataset", "setting", "horizon", "seed", "method", "params", "n_configs")
            if c in df
        ]
        return df[cols].reset_index(drop=True)

    def summary(self, task: str | None = None) -> str:
        """Markdown tables of methods × metrics per dataset (best in bold)."""
        from tssdpa.compare.tables import markdown_tables

        tasks = (
            [task]
            if task
            else [t for t in ("denoise", "forecast") if (self.frame.get("task") == t).any()]
        )
        return "\n\n".join(markdown_tables(self.frame, t) for t in tasks)

    def __str__(self) -> str:
        return self.summary()
