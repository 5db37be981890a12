"""What the default forecaster's choice leaves on the table in the benchmark's worst cells.

On the benchmark's split (``experiments/bench_autofit.py``, seed 0): ``--part cv`` prints, for
Lorenz-96 at h = 8 (the benchmark's one loss), the best leave-one-out MSE of each model in
the default fit's ``cv_results_`` and the structure kept; ``--part models`` the test RMSE of
the default fit restricted to each model (and to the hybrid at E = 10); ``--part neighbours``
the test RMSE of fits at a fixed pattern length with the default k = (1, 2, 4, 8) (D + 1)
and with k = (2, 4, 8, 16, 32) (D + 1), for the local-linear and hybrid models, on Lorenz-96
h = 8 and the gait gyroscope h = 1 / 4; ``--part smap`` S-map's own model on Lorenz-96 h = 8
(E = 10: weights ``exp(-theta d / mean d)`` over the keys used, a weighted least-squares
plane, as pyEDM), on test with every key (pyEDM's default leaves out the farthest: no
difference here) and with the nearest 512 / 256 / 128 only (pyEDM's ``knn``: the mean over
those), and its leave-one-out MSE on the fitted series
(keys within E + h samples of the query left out, 600 queries), beside the global linear
model's: what a fit on the fitted series alone would see of S-map's advantage on test. These
cells are test cells: the figures explain, they choose nothing (changes are judged on
``autofit_dev.py`` / ``autofit_heldout.py`` / ``autofit_unseen.py``).

    .venv/bin/python experiments/forecast_gap_probe.py --data-dir ../shared/datasets --part cv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_autofit import split_series  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402


def test_rmse(name, h, data_dir, **kw):
    z, sp = split_series(name, 0, 2000, 3000, data_dir)
    fc = ProjectionForecaster(horizon=h, **kw).fit(z[: sp.val])
    pred = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
    return float(np.sqrt(np.nanmean((pred - z[sp.val : sp.test]) ** 2))), fc


def smap_error(keys, targets, queries, truth, theta, k=None, exclude=None) -> float:
    """MSE over ``truth``'s variance of S-map (pyEDM's weights and plane) from the (N, E)
    ``keys`` and their ``targets`` at each of ``queries``: the nearest ``k`` keys (None: all),
    less those ``exclude`` (a (Q, N) bool, for leave-one-out) marks; each weight relative to
    the mean distance of the keys used, as pyEDM's ``knn``."""
    err = np.empty(len(queries))
    for i, q in enumerate(queries):
        d = np.sqrt(((keys - q) ** 2).sum(axis=1))
        usable = np.flatnonzero(np.ones(len(d), bool) if exclude is None else ~exclude[i])
        near = usable[np.argsort(d[usable], kind="stable")[:k]]
        w = np.exp(-theta * d[near] / d[near].mean())
        A = np.c_[np.ones(len(near)), keys[near]] * w[:, None]
        coef = np.linalg.lstsq(A, targets[near] * w, rcond=None)[0]
        err[i] = (coef[0] + q @ coef[1:] - truth[i]) ** 2
    return float(err.mean() / np.var(truth))


def smap_part(data_dir, E=10, h=8) -> None:
    z, sp = split_series("lorenz96", 0, 2000, 3000, data_dir)

    def patterns(t):  # (len(t), E): z_t, z_(t-1), ..., z_(t-E+1)
        return np.stack([z[t - i] for i in range(E)], axis=-1)

    fit_t, test_t = np.arange(E - 1, sp.val - h), np.arange(sp.val - h, sp.test - h)
    keys, targets = patterns(fit_t), z[fit_t + h]
    queries, truth = patterns(test_t), z[test_t + h]
    print(f"lorenz96 h={h} E={E}: MSE / variance (test RMSE in brackets)")
    for theta in (2, 4, 8):
        row = []
        for k in (None, 512, 256, 128):
            mse = smap_error(keys, targets, queries, truth, theta, k)
            row.append(
                f"{'all' if k is None else k} keys {mse:.4f} ({np.sqrt(mse * np.var(truth)):.4f})"
            )
        print(f"  test, theta={theta}: " + ", ".join(row), flush=True)
    A = np.c_[np.ones(len(keys)), keys]
    coef = np.linalg.lstsq(A, targets, rcond=None)[0]
    lin = np.mean((np.c_[np.ones(len(queries)), queries] @ coef - truth) ** 2) / np.var(truth)
    print(f"  test, global linear plane: {lin:.4f}")
    rows = np.sort(np.random.default_rng(0).choice(len(keys), 600, replace=False))
    exclude = np.abs(fit_t[rows, None] - fit_t[None, :]) <= E + h
    cases = [(0, None), (2, None), (4, None), (8, None), (2, 512), (2, 256), (4, 512), (4, 256)]
    loo = {c: smap_error(keys, targets, keys[rows], targets[rows], c[0], c[1], exclude)
           for c in cases}  # fmt: skip
    print("  leave-one-out on the fitted series: "
          + ", ".join(f"theta={th} {'all' if k is None else k} keys {v:.4f}"
                      for (th, k), v in loo.items())
          + " (theta=0: the global linear plane)")  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--part", choices=("cv", "models", "neighbours", "smap"), default="cv")
    args = p.parse_args(argv)
    if args.part == "smap":
        smap_part(args.data_dir)
    elif args.part == "cv":
        rmse, fc = test_rmse("lorenz96", 8, args.data_dir)
        cv = fc.cv_results_[fc.cv_results_.horizon == 8]
        best = cv.mse.min()
        for model in ("recursive_linear", "linear", "hybrid", "local_linear", "mean"):
            row = cv[cv.model == model].sort_values("mse").iloc[0]
            print(f"{model:17s} E={row.embedding:3d} k={row.n_neighbors:3d} loo MSE "
                  f"{row.mse:.4f} ({row.mse / best:.4f} of the best)")  # fmt: skip
        print(f"kept: {fc.best_params_[8]}; its test RMSE {rmse:.4f}")
    elif args.part == "models":
        models = ("recursive_linear", "linear", "hybrid", "local_linear")
        for kw in [{"model": m} for m in models] + [{"embedding": 10, "model": "hybrid"}]:
            rmse = test_rmse("lorenz96", 8, args.data_dir, **kw)[0]
            print(f"lorenz96 h=8 {kw}: test RMSE {rmse:.4f}")
    else:
        for name, h, E in [("lorenz96", 8, 10), ("lorenz96", 8, 6), ("imu_gait_gy", 1, 9),
                           ("imu_gait_gy", 1, 6), ("imu_gait_gy", 4, 9)]:  # fmt: skip
            for mults in ((1, 2, 4, 8), (2, 4, 8, 16, 32)):
                ks = [m * (E + 1) for m in mults]
                for model in ("local_linear", "hybrid"):
                    rmse, fc = test_rmse(name, h, args.data_dir, embedding=E, delay=1,
                                         n_neighbors=ks, model=model)  # fmt: skip
                    print(f"{name} h={h} E={E} k={ks} {model}: test RMSE {rmse:.4f} "
                          f"(k={fc.best_params_[h]['n_neighbors']})", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
