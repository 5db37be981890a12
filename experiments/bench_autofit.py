"""Default fit against tuned peers on series never used for tuning the defaults (issue 10).

The promise under test: ``ProjectionForecaster(horizon=h).fit(y)`` and
``ProjectionFilter(causal=False).fit(x)`` with their default ``fit`` are at or ahead of the best
tuned peer. Every series gets a chronological 60 / 20 / 20 split (train / validation / test) and
is z-scored with its training statistics.

Forecasting (error at step ``h`` only, on the test origins: every origin ``t`` whose target
``y[t + h]`` lies in the test part):

* peers are tuned on the validation part: each configuration is fitted on train, the one with
  the lowest validation RMSE at that horizon is refitted on train + validation and scored on
  test. Simplex (pyEDM, ``E`` 1..10), S-map (pyEDM, ``E`` 1..10 x ``theta`` in
  0, 0.5, 1, 2, 4, 8), AutoReg (``lags`` 1, 2, 4, 8, 16, 32, capped at a tenth of the training
  length). The EDM peers keep the series they were fitted on as their fixed library.
* ours: ``ProjectionForecaster(horizon=h).fit(train + validation)`` with no other argument,
  then ``forecast(series, h)`` on the whole series (it may take keys from the series' causal
  past besides its training series, so it gets the whole history; every forecast still uses
  ``y[:t + 1]`` only).
* times: ours = fit + forecast; a peer = fit of the chosen configuration on train + validation
  + its test forecasts ("fit+pred"), and separately its whole tuning run ("tune": every
  configuration fitted on train and forecast over validation).

Denoising (white Gaussian noise at 0, 10, 20 dB; RMSE against the clean series on the test
part): ours self-supervised ``ProjectionFilter(causal=False).fit(noisy)`` (the whole noisy
series, no clean data) and supervised ``.fit(noisy_train, target=clean_train)``; peers the best
centred moving average, zero-phase Savitzky-Golay and zero-phase Butterworth chosen with the
CLEAN signal on the validation part -- an oracle advantage ours does not get.

Speed: a 12,000-sample Lorenz series, fit on the first 8,000, forecasts of the last 4,000
origins at h=5: ours (fit, then ``forecast`` of the test part with ``CONTEXT`` samples of
history -- checked equal to forecasting the whole series) against one pyEDM S-map (E=8,
theta=4); peak traced memory of ours (tracemalloc, a separate run).

Series, horizons and the reason for each horizon set are in ``SERIES`` below; the synthetic
ones come from :mod:`tssdpa.data.synthetic` (seeded), the real ones from :mod:`tssdpa.data`
(IMU and ETT from the shared data folder, skipped with a note when absent; a fixed window of
``--real-len`` samples of one channel).

Usage::

    # full: 14 series, seed 0, 2 processes -- about 11 minutes on 2 cores
    .venv/bin/python experiments/bench_autofit.py \
        --data-dir ../shared/datasets --out docs/results/autofit.md
    # quick: henon, lorenz, sunspots, first and last horizon -- about 2 minutes
    .venv/bin/python experiments/bench_autofit.py --quick --out /tmp/autofit_quick.md

The S-map grid (60 configurations per series and horizon) is most of the run time.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tssdpa.baselines import (  # noqa: E402
    AutoRegForecaster,
    ButterworthFilter,
    MovingAverageFilter,
    SavitzkyGolayFilter,
)
from tssdpa.data import Split, add_noise, load_ett, load_imu, load_sunspots  # noqa: E402
from tssdpa.data.synthetic import make_signal  # noqa: E402
from tssdpa.filters import ProjectionFilter, ProjectionForecaster  # noqa: E402

# name: (source, options, horizons, what sets the horizons). Horizons run from 1 to about one
# Lyapunov time (1 / largest Lyapunov exponent, in samples) for the chaotic series.
SERIES = {
    "logistic": ("logistic", {}, (1, 2, 3), "r=3.9, lambda~0.49/step: T_L~2"),
    "henon": ("henon", {}, (1, 2, 3), "a=1.4 b=0.3, lambda~0.42/step: T_L~2.4"),
    "ikeda": ("ikeda", {}, (1, 2, 3), "u=0.9, lambda~0.5/step: T_L~2"),
    "lorenz": ("lorenz", {"dt": 0.02}, (1, 10, 25, 50), "dt=0.02, lambda~0.9/tu: T_L~55"),
    "lorenz_dt0.1": ("lorenz", {"dt": 0.1}, (1, 3, 6, 11), "dt=0.1: T_L~11"),
    "rossler": ("rossler", {"dt": 0.2}, (1, 10, 35, 70), "dt=0.2, lambda~0.07/tu: T_L~70"),
    "lorenz96": ("lorenz96", {}, (1, 4, 8, 17), "N=10 F=8 dt=0.05, lambda~1.2/tu: T_L~17"),
    "mackey_glass": ("mackey_glass", {}, (1, 17, 50, 170), "tau=17 dt=1, lambda~0.006: T_L~170"),
    "pulse_train": ("pulse_train", {}, (1, 5, 15, 50), "period 50, 3% spacing jitter"),
    "ar2": ("ar2", {}, (1, 2, 5, 10), "linear AR(2); envelope e-folds in ~9 samples"),
    "sunspots": ("sunspots", {}, (1, 2, 4, 8), "yearly, whole series (309), 11-year cycle"),
    "imu_fusion_gz": ("imu", {"name": "imu_fusion", "col": "Gyroscope Z (deg/s)", "start": 4000},
                      (1, 2, 5, 10), "100 Hz gyroscope, moving part: 10-100 ms ahead"),
    "imu_gait_gy": ("imu", {"name": "imu_gait", "col": "Gyroscope Y (deg/s)", "start": 7000},
                    (1, 4, 10, 40), "400 Hz gyroscope, walking: 2.5-100 ms ahead"),
    "etth1_ot": ("ett", {"name": "ETTh1", "col": "OT", "start": 0}, (1, 6, 24), "hourly: 1 h-1 d"),
}  # fmt: skip
QUICK_SERIES = ("henon", "lorenz", "sunspots")
SNRS = (0.0, 10.0, 20.0)
#: the noise the denoising cells add (``tssdpa.data.add_noise``'s kind; the scripts' --noise)
NOISE = "gaussian"


def add_noise_option(parser) -> None:
    """The ``--noise`` option of the scripts that run :func:`denoise_unit` (sets ``NOISE``)."""
    parser.add_argument(
        "--noise", default="gaussian", choices=["gaussian", "student_t"],
        help="the denoising cells' noise (student_t: 3 degrees of freedom)",
    )  # fmt: skip


SIMPLEX_GRID = [{"embedding": e} for e in range(1, 11)]
SMAP_GRID = [{"embedding": e, "theta": t} for e in range(1, 11) for t in (0, 0.5, 1, 2, 4, 8)]
AR_LAGS = (1, 2, 4, 8, 16, 32)
MA_GRID = [{"window": w, "causal": False} for w in (1, 3, 5, 7, 9, 11, 15, 21, 31, 41, 61, 81)]
SG_GRID = [
    {"window": w, "polyorder": p, "zero_phase": True}
    for w in (5, 7, 9, 11, 15, 21, 31, 41, 61, 81)
    for p in (2, 3, 4)
]
BW_GRID = [
    {"cutoff": float(c), "order": o, "zero_phase": True}
    for c in np.geomspace(0.005, 0.9, 24)
    for o in (2, 4)
]
#: samples per block of the batch-means standard error of a denoising verdict (longer than
#: any filter the peers or ours choose, so that blocks are nearly independent)
DENOISE_BLOCK = 50
CONTEXT = 64  # samples of history given with the validation / test origins (>= every peer's)
#: the speed case times ours and S-map in turn this many times each (the medians are compared)
SPEED_REPEATS = 3


class Skip(Exception):
    """A series that is not available here (missing shared data)."""


def load_series(name: str, seed: int, n: int, real_len: int, data_dir) -> np.ndarray:
    source, opts, _, _ = SERIES[name]
    opts = dict(opts)
    if source == "sunspots":
        return load_sunspots().to_numpy(dtype=np.float64)
    if source in ("imu", "ett"):
        col, start = opts.pop("col"), opts.pop("start")
        try:
            df = (
                load_imu(opts["name"], data_dir)
                if source == "imu"
                else load_ett(opts["name"], data_dir)
            )
        except FileNotFoundError as err:
            raise Skip(f"{name}: {opts['name']} not found ({err})") from None
        return df[col].to_numpy(dtype=np.float64)[start : start + real_len]
    return make_signal(source, n, seed, **opts)


def split_series(name: str, seed: int, n: int, real_len: int, data_dir):
    """The series z-scored with its training statistics, and its 60 / 20 / 20 split."""
    x = load_series(name, seed, n, real_len, data_dir)
    sp = Split.fractions(len(x), 0.6, 0.2)
    mu, sd = x[: sp.train].mean(), x[: sp.train].std()
    return (x - mu) / (sd if sd > 0 else 1.0), sp


def worker_split(name: str, seed: int, data_dir):
    """In a worker of a development script (two processes side by side, one BLAS thread
    each): :func:`split_series` at the default lengths; None where the data is absent."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    try:
        return split_series(name, seed, 2000, 3000, data_dir)
    except Skip:
        return None


def sq_err(pred, target) -> np.ndarray:
    """Squared errors, NaN where the prediction is missing (kept for the paired verdict)."""
    return ((np.asarray(pred, dtype=np.float64) - target) ** 2).astype(np.float32)


def verdict(se_ours, se_peer, block: int) -> str:
    """ "win" / "loss" when the mean paired difference of squared errors exceeds two standard
    errors, else "tie". Errors of neighbouring origins are correlated (h-step errors overlap
    by h - 1 steps; a filter's errors by its length), so the standard error comes from the
    means of consecutive blocks of ``block`` samples (batch means), not from single samples."""
    d = np.concatenate([np.asarray(o, float) - np.asarray(p, float)
                        for o, p in zip(se_ours, se_peer)])  # fmt: skip
    d = d[np.isfinite(d)]
    n_blocks = len(d) // block
    if n_blocks < 4:
        return "—"
    means = d[: n_blocks * block].reshape(n_blocks, block).mean(axis=1)
    se = means.std(ddof=1) / np.sqrt(n_blocks)
    if abs(d.mean()) <= 2.0 * se:
        return "tie"
    return "win" if d.mean() < 0 else "loss"


def rmse(pred, target) -> tuple[float, int]:
    """(RMSE over the finite predictions, number of missing ones); samples missing from the
    target (a series with gaps) are not scored and not counted as missing predictions."""
    pred, target = np.asarray(pred), np.asarray(target)
    have = np.isfinite(target)
    ok = np.isfinite(pred) & have
    if not ok.any():
        return np.nan, int(have.sum())
    return float(np.sqrt(np.mean((pred[ok] - target[ok]) ** 2))), int((have & ~ok).sum())


def channel(a, target: int | None):
    """``a``, or its channel ``target`` when ``a`` is multivariate (a series forecast for one
    of its channels); one-dimensional forecasts pass as they are."""
    a = np.asarray(a)
    return a if target is None or a.ndim == 1 else a[:, target]


def label(params: dict) -> str:
    short = {
        "embedding": "E",
        "theta": "θ",
        "lags": "p",
        "window": "w",
        "polyorder": "k",
        "cutoff": "fc",
        "order": "n",
    }
    return ",".join(
        f"{short.get(k, k)}={v:.3g}" if isinstance(v, float) else f"{short.get(k, k)}={v}"
        for k, v in params.items()
        if k not in ("causal", "zero_phase")
    )


def h_step(est, z: np.ndarray, lo: int, hi: int, h: int) -> np.ndarray:
    """Forecasts of ``z[t + h]`` for the origins ``t`` in ``[lo - h, hi - h)`` (``CONTEXT``
    samples of history before the first origin)."""
    start = max(lo - h - CONTEXT, 0)
    return np.asarray(est.forecast(z[start:hi], h))[lo - h - start : hi - h - start]


def improves(score: float, best) -> bool:
    """Whether a peer's validation ``score`` replaces the ``best`` (score, params) so far: by
    more than 1e-9 relative, so that equivalent settings -- Savitzky-Golay's orders 2 and 3 on
    a centred window -- keep the first of the grid instead of the one that rounding, which
    differs from one CPU to the next, favours."""
    return bool(np.isfinite(score) and (best is None or score < best[0] * (1 - 1e-9)))


def tune_forecaster(cls, grid, z, sp, h, target=None):
    """Tune on validation, refit the winner on train + validation, score on test (a
    multivariate ``z``: its channel ``target``)."""
    tic, best, y = time.perf_counter(), None, channel(z, target)
    for params in grid:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = cls(**params).fit(z[: sp.train])
                pred = channel(h_step(est, z, sp.train, sp.val, h), target)
                score, _ = rmse(pred, y[sp.train : sp.val])
        except (ValueError, np.linalg.LinAlgError):  # too little library / data for it
            continue
        if improves(score, best):
            best = (score, params)
    tune = time.perf_counter() - tic
    if best is None:
        return {"rmse": np.nan, "params": {}, "time": np.nan, "tune": tune, "missing": 0}
    tic = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**best[1]).fit(z[: sp.val])
        pred = channel(h_step(est, z, sp.val, sp.test, h), target)
    t = time.perf_counter() - tic
    err, missing = rmse(pred, y[sp.val : sp.test])
    return {"rmse": err, "params": best[1], "time": t, "tune": tune, "missing": missing,
            "se": sq_err(pred, y[sp.val : sp.test])}  # fmt: skip


#: extra ProjectionForecaster arguments for "ours" (``--ours-holdout``); empty: the default
OURS_FORECASTER: dict = {}
OURS_FILTER: dict = {}  # extra ProjectionFilter parameters of ours in the denoising tables


def _ours_args() -> str:
    return "".join(f", {k}={v!r}" for k, v in OURS_FORECASTER.items())


def ours_forecast(z, sp, h, target=None):
    tic = time.perf_counter()
    try:
        fc = ProjectionForecaster(horizon=h, **OURS_FORECASTER).fit(z[: sp.val])
        pred = channel(fc.forecast(z[: sp.test], h), target)[sp.val - h : sp.test - h]
    except Exception as err:  # noqa: BLE001 -- the estimators change under this script
        return {"rmse": np.nan, "time": np.nan, "missing": 0, "error": repr(err)}
    t = time.perf_counter() - tic
    y = channel(z, target)
    err, missing = rmse(pred, y[sp.val : sp.test])
    return {"rmse": err, "time": t, "missing": missing, "se": sq_err(pred, y[sp.val : sp.test])}


def peers():
    out = {}
    try:
        import pyEDM  # noqa: F401 -- the optional dependency of the EDM peers

        from tssdpa.baselines.edm import SimplexForecaster, SMapForecaster

        out["Simplex"] = (SimplexForecaster, SIMPLEX_GRID)
        out["S-map"] = (SMapForecaster, SMAP_GRID)
    except ImportError as err:
        print(f"note: EDM peers unavailable ({err})", file=sys.stderr)
    out["AutoReg"] = (AutoRegForecaster, None)
    return out


def forecast_unit(name, seed, z, sp, horizons, peer_set, target=None):
    """One series' forecasting rows (a multivariate ``z``: its channel ``target`` scored)."""
    rows = []
    for h in horizons:
        row = {"series": name, "seed": seed, "h": h, "ours": ours_forecast(z, sp, h, target)}
        for peer, (cls, grid) in peer_set.items():
            if grid is None:  # AutoReg: lags capped at a tenth of the training length
                grid = [{"lags": p} for p in AR_LAGS if p <= sp.train // 10]
            row[peer] = tune_forecaster(cls, grid, z, sp, h, target)
        rows.append(row)
        print(
            f"  forecast {name} seed={seed} h={h}: "
            + ", ".join(f"{k}={v['rmse']:.4f}" for k, v in row.items() if isinstance(v, dict)),
            flush=True,
        )
    return rows


def denoise_unit(name, seed, z, sp):
    rows = []
    families = {
        "moving avg": (MovingAverageFilter, MA_GRID),
        "Savitzky-Golay": (SavitzkyGolayFilter, SG_GRID),
        "Butterworth": (ButterworthFilter, BW_GRID),
    }
    val, test = slice(sp.train, sp.val), slice(sp.val, sp.test)
    for k, snr in enumerate(SNRS):
        noisy = add_noise(z, NOISE, snr, seed=1000 * seed + k)
        row = {"series": name, "seed": seed, "snr": snr, "noise": NOISE,
               "noisy": rmse(noisy[test], z[test])[0]}  # fmt: skip
        for tag, target in (("ours (self)", None), ("ours (sup)", z[: sp.train])):
            tic = time.perf_counter()
            try:
                f = ProjectionFilter(causal=False, **OURS_FILTER)
                f = f.fit(noisy) if target is None else f.fit(noisy[: sp.train], target=target)
                y = np.asarray(f.filter(noisy))
                row[tag] = {"rmse": rmse(y[test], z[test])[0], "time": time.perf_counter() - tic,
                            "se": sq_err(y[test], z[test])}  # fmt: skip
            except Exception as err:  # noqa: BLE001
                row[tag] = {"rmse": np.nan, "time": np.nan, "error": repr(err)}
        for fam, (cls, grid) in families.items():
            tic, best = time.perf_counter(), None
            for params in grid:
                try:
                    y = np.asarray(cls(**params).fit(noisy).filter(noisy))
                except ValueError:
                    continue
                score = rmse(y[val], z[val])[0]  # the oracle: the clean validation part
                if improves(score, best):
                    best = (score, params, rmse(y[test], z[test])[0], sq_err(y[test], z[test]))
            row[fam] = {"rmse": best[2], "params": best[1], "tune": time.perf_counter() - tic,
                        "se": best[3]}  # fmt: skip
        rows.append(row)
        print(
            f"  denoise {name} seed={seed} {snr:g} dB: "
            + ", ".join(f"{k}={v['rmse']:.4f}" for k, v in row.items() if isinstance(v, dict)),
            flush=True,
        )
    return rows


def run_unit(args_tuple):
    name, seed, n, real_len, data_dir, horizons, do_forecast, do_denoise, threads = args_tuple
    if threads:  # parallel processes: one BLAS / OpenMP thread and one search thread each
        from threadpoolctl import threadpool_limits

        from tssdpa.signal import neighbours

        threadpool_limits(threads)
        neighbours.THREADS = threads
    try:
        z, sp = split_series(name, seed, n, real_len, data_dir)
    except Skip as err:
        return {"skip": str(err)}
    out = {"forecast": [], "denoise": [], "length": len(z)}
    if do_forecast:
        out["forecast"] = forecast_unit(name, seed, z, sp, horizons, peers())
    if do_denoise:
        out["denoise"] = denoise_unit(name, seed, z, sp)
    return out


def _peak_mb(z, tr, h) -> float:
    """Peak traced memory (MiB, numpy and Python allocations) of the default fit on
    ``z[:tr]`` and the forecasts of the rest."""
    tracemalloc.start()
    np.asarray(ProjectionForecaster(horizon=h).fit(z[:tr]).forecast(z[tr - CONTEXT :], h))
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def speed_case(n=12000, n_test=4000, h=5, repeats=SPEED_REPEATS):
    """Ours vs one pyEDM S-map call (E=8, theta=4) on a long Lorenz series, timed in turn
    ``repeats`` times each (this machine's speed drifts by tens of percent between runs: the
    medians, and the ratio of the medians, are what the table reports)."""
    x = make_signal("lorenz", n, 0)
    tr = n - n_test
    z = (x - x[:tr].mean()) / x[:tr].std()
    target = z[tr:]
    out = {"n": n, "n_test": n_test, "h": h, "ours_s": [], "smap_s": []}
    from tssdpa.baselines.edm import SMapForecaster

    for _ in range(repeats):
        tic = time.perf_counter()
        fc = ProjectionForecaster(horizon=h).fit(z[:tr])
        # the test origins only: a chunk that starts inside the fitted series forecasts
        # exactly as the whole series does (its rows that repeat the fitted ones are not
        # counted twice)
        pred = np.asarray(fc.forecast(z[tr - CONTEXT :], h))[CONTEXT - h : CONTEXT - h + n_test]
        out["ours_s"].append(time.perf_counter() - tic)
        out["ours_rmse"] = rmse(pred, target)[0]
        if "smap_error" not in out:
            tic = time.perf_counter()
            try:  # pyEDM is imported by the fit: an optional extra (``tssdpa[peers]``)
                est = SMapForecaster(embedding=8, theta=4.0).fit(z[:tr])
            except ImportError as err:
                out["smap_error"] = str(err)
                continue
            smap_pred = h_step(est, z, tr, n, h)
            out["smap_s"].append(time.perf_counter() - tic)
            out["smap_rmse"] = rmse(smap_pred, target)[0]
    whole = np.asarray(fc.forecast(z, h))[tr - h : n - h]
    # equal up to rounding: the two runs batch their queries differently, and a local-linear
    # fit with a ridge of 1e-12 carries last-bit differences up to about 1e-8 here -- far
    # below the forecast error, which is what the check bounds the difference by
    if not np.allclose(pred, whole, rtol=0.0, atol=1e-3 * out["ours_rmse"], equal_nan=True):
        raise AssertionError("the chunk's forecasts differ from the whole series' forecasts")
    out["ours_peak_mb"] = _peak_mb(z, tr, h)
    # memory against length: the same task on a half and a double series
    out["memory"] = []
    for m in (n // 2, n, 2 * n):
        xm = make_signal("lorenz", m, 0)
        trm = m - m // 3
        zm = (xm - xm[:trm].mean()) / xm[:trm].std()
        out["memory"].append((m, _peak_mb(zm, trm, h)))
    return out


# ---------------------------------------------------------------------------------- tables
def fmt(v, d=None):
    """``d`` decimals, or 4 significant digits when ``d`` is None."""
    if v is None or not np.isfinite(v):
        return "—"
    return f"{v:.4g}" if d is None else f"{v:.{d}f}"


def _groups(rows, *keys) -> dict:
    """Rows grouped by ``keys`` (over the seeds), in order of first appearance."""
    out = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


def _mean(group, key, field="rmse") -> float:
    return float(np.mean([r[key][field] for r in group]))


def _verdict(group, ours: str, peer: str, block: int) -> str:
    if any("se" not in r[ours] or "se" not in r[peer] for r in group):
        return "—"
    return verdict([r[ours]["se"] for r in group], [r[peer]["se"] for r in group], block)


def _chosen(group, key) -> str:
    return "/".join(label(r[key]["params"]) for r in group)


def forecast_tables(rows, peer_names):
    acc_head = ["series", "h", "ours"] + peer_names + ["best peer", "ours / best", "verdict"]
    time_head = (
        ["series", "h", "ours fit+pred s"]
        + [f"{p} fit+pred s (tune s)" for p in peer_names]
        + ["ours / best peer fit+pred"]
    )
    acc, tim, ratios, verdicts, notes = [], [], [], [], []
    for (series, h), group in _groups(rows, "series", "h").items():
        ours = _mean(group, "ours")
        peer_err = {p: _mean(group, p) for p in peer_names}
        finite = {p: e for p, e in peer_err.items() if np.isfinite(e)}
        best = min(finite, key=finite.get) if finite else None
        ratio = ours / finite[best] if best else np.nan
        ratios.append(ratio)
        v = _verdict(group, "ours", best, max(int(h), 10)) if best else "—"
        verdicts.append(v)
        acc.append(
            [series, h, fmt(ours)]
            + [f"{fmt(peer_err[p])} ({_chosen(group, p)})" for p in peer_names]
            + [best or "—", fmt(ratio, 3), v]
        )
        t_ours = _mean(group, "ours", "time")
        t_best = _mean(group, best, "time") if best else np.nan
        tim.append(
            [series, h, fmt(t_ours, 2)]
            + [
                f"{fmt(_mean(group, p, 'time'), 2)} ({fmt(_mean(group, p, 'tune'), 1)})"
                for p in peer_names
            ]
            + [fmt(t_ours / t_best, 2)]
        )
        for r in group:
            for k in ["ours"] + peer_names:
                if r[k].get("missing"):
                    notes.append(
                        f"{series} h={h} seed={r['seed']}: {k} left {r[k]['missing']} "
                        "test origins without a forecast (scored on the rest)"
                    )
                if r[k].get("error"):
                    notes.append(f"{series} h={h} seed={r['seed']}: {k} failed: {r[k]['error']}")
    return acc_head, acc, time_head, tim, (ratios, verdicts), notes


def denoise_tables(rows):
    fams = ["moving avg", "Savitzky-Golay", "Butterworth"]
    head = (
        ["series", "SNR dB", "noisy", "ours (self)", "ours (sup)"]
        + [f"{f} (oracle)" for f in fams]
        + ["best peer", "self / best", "sup / best", "verdict self / sup", "ours (self) s"]
        + ["peers' tuning s"]
    )
    out, ratios, notes = [], {"self": ([], []), "sup": ([], [])}, []
    for (series, snr), group in _groups(rows, "series", "snr").items():
        peer = {f: _mean(group, f) for f in fams}
        best = min(peer, key=peer.get)
        self_, sup = _mean(group, "ours (self)"), _mean(group, "ours (sup)")
        rs, rp = self_ / peer[best], sup / peer[best]
        vs = _verdict(group, "ours (self)", best, DENOISE_BLOCK)
        vp = _verdict(group, "ours (sup)", best, DENOISE_BLOCK)
        for key, r, v in (("self", rs, vs), ("sup", rp, vp)):
            ratios[key][0].append(r)
            ratios[key][1].append(v)
        tune = sum(_mean(group, f, "tune") for f in fams)
        out.append(
            [
                series,
                f"{snr:g}",
                fmt(float(np.mean([r["noisy"] for r in group]))),
                fmt(self_),
                fmt(sup),
            ]
            + [f"{fmt(peer[f])} ({_chosen(group, f)})" for f in fams]
            + [best, fmt(rs, 3), fmt(rp, 3), f"{vs} / {vp}"]
            + [fmt(_mean(group, "ours (self)", "time"), 2)]
            + [fmt(tune, 2)]
        )
        for r in group:
            for k in ("ours (self)", "ours (sup)"):
                if r[k].get("error"):
                    notes.append(
                        f"{series} {snr:g} dB seed={r['seed']}: {k} failed: {r[k]['error']}"
                    )
    return head, out, ratios, notes


def md_table(head, rows):
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def summary(ratios_verdicts) -> str:
    ratios, verdicts = ratios_verdicts
    r = np.asarray([x for x in ratios if np.isfinite(x)])
    if not len(r):
        return "no finite ratio"
    count = {v: verdicts.count(v) for v in ("win", "tie", "loss")}
    return (
        f"{int((r <= 1).sum())} of {len(r)} cells at or ahead of the best peer (ratio <= 1); "
        f"paired verdict: {count['win']} wins, {count['tie']} ties, {count['loss']} losses; "
        f"geometric mean ratio {np.exp(np.log(r).mean()):.3f}, worst {r.max():.3f}"
    )


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpu}, {cores} cores available ({os.cpu_count()} logical), {platform.platform()}"


def versions() -> str:
    import scipy

    out = [
        f"python {platform.python_version()}",
        f"numpy {np.__version__}",
        f"scipy {scipy.__version__}",
    ]
    try:
        import pyEDM

        out.append(f"pyEDM {getattr(pyEDM, '__version__', '?')}")
    except ImportError:
        out.append("pyEDM absent")
    try:
        rev = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        out.append(f"tssdpa at {rev}{' + uncommitted changes' if dirty else ''}")
    except (OSError, subprocess.CalledProcessError):
        pass
    return ", ".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"{', '.join(QUICK_SERIES)}; first and last horizon; seed 0",
    )
    p.add_argument(
        "--out", default=None, help="Markdown file to write (e.g. docs/results/autofit.md)"
    )
    p.add_argument("--data-dir", default=None, help="shared data folder (IMU, ETT)")
    p.add_argument("--series", nargs="+", default=None, choices=sorted(SERIES))
    p.add_argument(
        "--seeds", nargs="+", type=int, default=None, help="default: 0 (synthetic series)"
    )
    p.add_argument("--n", type=int, default=2000, help="samples per synthetic series")
    p.add_argument("--real-len", type=int, default=3000, help="samples kept of IMU / ETT series")
    p.add_argument(
        "--jobs",
        type=int,
        default=2,
        help="series run in parallel processes (one BLAS thread and one search thread each "
        "when > 1; default 2)",
    )
    p.add_argument("--skip", nargs="*", default=(), choices=("forecast", "denoise", "speed"))
    p.add_argument(
        "--ours-holdout",
        default=None,
        help="ProjectionForecaster(holdout=...) for ours: a fraction (forward validation on "
        "it), 'none' (leave-one-out) or 'auto' (default: its default, 'auto')",
    )
    p.add_argument(
        "--ours-mix-temperature",
        default=None,
        help="ProjectionFilter(mix_temperature=...) for ours, a number, or 'none' for mix=False "
        "(one setting instead of a mixture); default: its defaults",
    )
    args = p.parse_args(argv)
    if args.ours_holdout is not None:  # module state, inherited by the forked workers
        h = args.ours_holdout.lower()
        OURS_FORECASTER["holdout"] = None if h == "none" else h if h == "auto" else float(h)
    if args.ours_mix_temperature is not None:
        t = args.ours_mix_temperature
        OURS_FILTER.update({"mix": False} if t.lower() == "none" else {"mix_temperature": float(t)})
    tic = time.perf_counter()
    names = args.series or (list(QUICK_SERIES) if args.quick else list(SERIES))
    seeds = tuple(args.seeds or (0,))
    units, horizons = [], {}
    for name in names:
        hz = SERIES[name][2]
        hz = horizons[name] = (hz[0], hz[-1]) if args.quick else hz
        real = SERIES[name][0] in ("sunspots", "imu", "ett")
        for seed in seeds[:1] if real else seeds:  # a real series does not depend on the seed
            units.append(
                (
                    name,
                    seed,
                    args.n,
                    args.real_len,
                    args.data_dir,
                    hz,
                    "forecast" not in args.skip,
                    "denoise" not in args.skip,
                    1 if args.jobs > 1 else None,
                )
            )
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(run_unit, units))
    else:
        results = [run_unit(u) for u in units]
    skipped = [r["skip"] for r in results if "skip" in r]
    f_rows = [row for r in results for row in r.get("forecast", [])]
    d_rows = [row for r in results for row in r.get("denoise", [])]
    lengths = {u[0]: r["length"] for u, r in zip(units, results) if "length" in r}
    peer_names = list(peers())
    speed = None if "speed" in args.skip else speed_case()
    elapsed = time.perf_counter() - tic

    cmd = " ".join([".venv/bin/python", "experiments/bench_autofit.py", *(argv or sys.argv[1:])])
    md = [
        "# Default fit vs tuned peers (issue 10)",
        "",
        "Written by `experiments/bench_autofit.py`; every number below comes from that run.",
        "",
        f"- command: `{cmd}`",
        f"- machine: {machine()}",
        f"- software: {versions()}",
        f"- seeds: {list(seeds)} (synthetic series; the real ones do not depend on the seed); "
        f"noise seed 1000 * seed + k for the k-th SNR",
        f"- processes: {args.jobs} (series side by side"
        + (", one BLAS thread and one search thread each" if args.jobs > 1 else "")
        + f"; the speed case alone); run time {elapsed:.0f} s",
        "- split: chronological 60 / 20 / 20 (train / validation / test), "
        "z-scored with the training statistics",
        "",
    ]
    md += [
        "## Series",
        "",
        md_table(
            ["series", "samples", "horizons", "note"],
            [
                [k, lengths.get(k, "—"), ", ".join(map(str, horizons[k])), SERIES[k][3]]
                for k in names
            ],
        ),
    ]
    if skipped:
        md += ["", "Skipped: " + "; ".join(skipped)]
    if f_rows:
        ah, acc, th, tim, ratios, notes = forecast_tables(f_rows, peer_names)
        md += [
            "",
            "## Forecasting: test RMSE at step h (z-scored units)",
            "",
            "Peers tuned on validation (chosen configuration in brackets), refitted on train + "
            "validation, their library fixed at train + validation; ours: "
            f"`ProjectionForecaster(horizon=h{_ours_args()}).fit(train + validation)`, then "
            "`forecast` over "
            "the whole series, so that it may use the causal past of the series as keys besides "
            "what it was fitted on (every forecast uses y[:t+1] only). Times: ours = fit + "
            "forecast of the whole series; "
            "peers = fit of the chosen configuration + its test forecasts (tuning in brackets). "
            "Verdict: the mean paired difference of squared errors against the best peer over "
            "the test origins, a win or a loss only beyond two standard errors (batch means "
            "over blocks of max(h, 10) origins, as h-step errors overlap), else a tie.",
            "",
            md_table(ah, acc),
            "",
            f"**Summary:** {summary(ratios)}.",
            "",
            "### Forecasting: seconds",
            "",
            md_table(th, tim),
        ]
        md += [""] + [f"- {n}" for n in notes] if notes else []
    if d_rows:
        dh, drows, dr, notes = denoise_tables(d_rows)
        md += [
            "",
            "## Denoising: test RMSE against the clean series (white Gaussian noise)",
            "",
            "Peers are chosen with the clean signal on the validation part (an oracle "
            "advantage); ours (self) sees only the noisy series, ours (sup) the clean "
            "training part. Verdict against the best peer as for forecasting, with blocks of "
            f"{DENOISE_BLOCK} samples.",
            "",
            md_table(dh, drows),
            "",
            f"**Summary, self-supervised:** {summary(dr['self'])}.",
            "",
            f"**Summary, supervised:** {summary(dr['sup'])}.",
        ]
        md += [""] + [f"- {n}" for n in notes] if notes else []
    if speed:

        def seconds(ts):
            return f"{np.median(ts):.2f} ({', '.join(f'{t:.2f}' for t in ts)})"

        rows = [["ours (ProjectionForecaster, default fit)", seconds(speed["ours_s"]),
                 fmt(speed["ours_rmse"]), f"{speed['ours_peak_mb']:.1f}"]]  # fmt: skip
        if speed["smap_s"]:
            ratio = np.median(speed["ours_s"]) / np.median(speed["smap_s"])
            rows += [
                ["pyEDM S-map (E=8, θ=4), one call", seconds(speed["smap_s"]),
                 fmt(speed["smap_rmse"]), "—"],
                ["ratio ours / S-map", fmt(ratio, 3),
                 fmt(speed["ours_rmse"] / speed["smap_rmse"], 3), ""],
            ]  # fmt: skip
        md += [
            "",
            f"## Speed: Lorenz, {speed['n']} samples, fit on {speed['n'] - speed['n_test']}, "
            f"{speed['n_test']} test origins at h={speed['h']}",
            "",
            f"Each method timed {len(speed['ours_s'])} times, in turn: the median (each run).",
            "",
            md_table(["method", "fit + forecast s", "test RMSE", "peak traced MiB"], rows),
        ]
        if "smap_error" in speed:
            md += ["", f"S-map not run: {speed['smap_error']}"]
        mem = speed["memory"]
        md += [
            "",
            "Memory against length (the same task, fit on two thirds, forecast the rest; peak "
            "traced memory of numpy and Python allocations):",
            "",
            md_table(
                ["samples", "peak traced MiB", "ratio to the previous length"],
                [
                    [m, f"{mb:.1f}", "—" if i == 0 else f"{mb / mem[i - 1][1]:.2f}"]
                    for i, (m, mb) in enumerate(mem)
                ],
            ),
        ]
    publish("\n".join(md) + "\n", args.out)
    return 0


def publish(text: str, path) -> None:
    """Print the markdown report ``text``, and write it to ``path`` where one is given."""
    print("\n" + text)
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    raise SystemExit(main())
