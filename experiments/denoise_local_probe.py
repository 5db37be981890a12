"""Would a locally weighted aggregate beat the self-supervised fit's global mixture? (a probe)

``ProjectionFilter(causal=False).fit(x)`` averages its best candidates with weights from their
SURE over the whole series. On a recording that changes regime (a gyroscope at rest after a
stretch of motion) the best smoothing differs along the series. This probe replaces the global
weights by local ones: the candidates are the fitted mixture ``M`` itself plus, for every
(base, window), the windowed candidate with the lowest SURE and the best uniform one; each
gets a per-sample SURE term ``(x - y_c)^2 + 2 s^2 dy_c/dx - s^2`` (divergence from one random
probe; exact, the own-sample weights, for the non-local components of ``M``), averaged over a
centred window of ``L`` samples, and weights ``exp(-L (R_c - min R) / (T s^2))`` per sample.
Nothing is chosen on the clean signal; the clean test part only scores.

Usage::

    # real development channels (experiments/autofit_heldout.py), then synthetic seed 1
    .venv/bin/python experiments/denoise_local_probe.py --series imu_fusion_gx imu_gait_gz
    .venv/bin/python experiments/denoise_local_probe.py --seed 1 --series lorenz pulse_train

Prints the test RMSE ratio local / default per cell and (L, T), and their geometric means.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy.ndimage import uniform_filter1d

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402, F401 -- registers the real development series
import bench_autofit as bench  # noqa: E402

from tssdpa.data import add_noise  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402
from tssdpa.filters.projection_mixture import component_outputs, settings_of  # noqa: E402
from tssdpa.signal.missing import fill_between  # noqa: E402
from tssdpa.signal.nonlocal_filter import run_nonlocal  # noqa: E402

SETTINGS = ("base", "base_params", "window", "embedding", "decay", "degree", "sigma")
LOCAL = [(L, T) for L in (512, 256, 128) for T in (16.0, 4.0)]  # (window L, temperature T)
EPS = 1e-4  # the probe's step, in noise levels (as the fit's SURE)


def _setting(row) -> dict:
    d = {k: row[k] for k in SETTINGS}
    d["base"] = d["base"] if isinstance(d["base"], str) else None
    d["base_params"] = d["base_params"] if isinstance(d["base_params"], dict) else None
    d["decay"] = None  # zero-phase fits search no decay
    d["window"] = d["window"] if d["window"] == "all" else int(d["window"])
    d["embedding"], d["degree"] = int(d["embedding"]), int(d["degree"])
    d["sigma"] = float(d["sigma"])
    return d


def diverse_candidates(f) -> list[dict]:
    """Per (base, window): the windowed candidate of lowest SURE and the best uniform one."""
    cv = f.cv_results_.reset_index(drop=True).sort_values("mse", kind="stable")
    seen, out = set(), []
    for _, row in cv.iterrows():
        if row["window"] == "all":
            continue
        for key in ((str(row["base"]), row["window"]),
                    (str(row["base"]), row["window"], np.isinf(row["sigma"]))):  # fmt: skip
            if key not in seen:
                seen.add(key)
                out.append(_setting(row))
                break
    return out


def outputs_and_divergence(f, x2, settings, probe, s):
    """(K, T) outputs and s^2 * dy/dx per sample of each setting on single-channel ``x2``."""
    ys, divs = [], []
    for c in settings:
        if c["window"] == "all":  # exact: the own-sample weight
            spec = f._spec(**{**c, "sigma": 1.0, "degree": 0})
            out, own = run_nonlocal(x2, c["embedding"], spec.n_neighbors, [c["sigma"]],
                                    spec.exclude_self)  # fmt: skip
            ys.append(np.asarray(fill_between(out[0]))[:, 0])
            divs.append(s * s * own[0])
            continue
        y = np.asarray(component_outputs(f, x2, None, [c])[0])[:, 0]
        yp = np.asarray(component_outputs(f, x2 + EPS * s * probe, None, [c])[0])[:, 0]
        ys.append(y)
        divs.append(s * probe[:, 0] * (yp - y) / EPS)
    return np.array(ys), np.array(divs)


def local_aggregate(x, ys, divs, s2, L, T):
    risk = uniform_filter1d((ys - x) ** 2 + 2 * divs - s2, L, axis=1, mode="nearest")
    w = np.exp(-L * (risk - risk.min(axis=0)) / (T * s2))
    return (w * ys).sum(axis=0) / w.sum(axis=0)


def cell(args) -> tuple:
    name, snr, seed, data_dir = args
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    z, sp = bench.split_series(name, seed, 2000, 3000, data_dir)
    noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + list(bench.SNRS).index(snr))
    f = ProjectionFilter(causal=False).fit(noisy)
    test = slice(sp.val, sp.test)

    def rmse(y):
        return float(np.sqrt(np.mean((y[test] - z[test]) ** 2)))

    s = float(f.noise_level_[0])
    x2 = noisy[:, None]
    probe = np.random.default_rng(0).choice([-1.0, 1.0], x2.shape)
    mix = f.mixture_ or [{**f.best_params_, "weight": 1.0}]
    ym, dm = outputs_and_divergence(f, x2, [settings_of(c) for c in mix], probe, s)
    w = np.array([c["weight"] for c in mix])[:, None]
    yc, dc = outputs_and_divergence(f, x2, diverse_candidates(f), probe, s)
    ys = np.vstack([(w * ym).sum(axis=0)[None], yc])
    divs = np.vstack([(w * dm).sum(axis=0)[None], dc])
    default = rmse(np.asarray(f.filter(noisy)))
    ratios = {lt: rmse(local_aggregate(noisy, ys, divs, s * s, *lt)) / default for lt in LOCAL}
    return name, snr, default, ratios


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--series", nargs="+", required=True, choices=sorted(bench.SERIES))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    cells = [(n, snr, args.seed, args.data_dir) for n in args.series for snr in bench.SNRS]
    logs = {lt: [] for lt in LOCAL}
    with ProcessPoolExecutor(2) as pool:
        for name, snr, default, ratios in pool.map(cell, cells):
            print(f"{name:>18} {snr:>4g} dB default {default:.4f}  "
                  + "  ".join(f"L={L},T={T:g}: {r:.3f}" for (L, T), r in ratios.items()),
                  flush=True)  # fmt: skip
            for lt, r in ratios.items():
                logs[lt].append(np.log(r))
    for (L, T), lg in logs.items():
        print(f"L={L}, T={T:g}: geometric mean {np.exp(np.mean(lg)):.3f}, "
              f"worst {np.exp(np.max(lg)):.3f}, best {np.exp(np.min(lg)):.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
