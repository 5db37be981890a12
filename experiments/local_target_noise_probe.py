"""With a target, which noise level should the local adaptation use under heavy-tailed noise?

``projection_local.fit_local`` takes the noise level of a fit with ``target`` as the RMS of
``x - target``. Under heavy-tailed noise that RMS is dominated by a few large errors, and the
IMU table's Student-t setting once lost 2.3 dB with the adaptation (``docs/results.md``, known
gaps). This fits ``ProjectionFilter(causal=False)`` on the first 60% of the fusion IMU's six
gyroscope and accelerometer axes (first 6,000 samples, z-scored with the training part, taken
as clean) with the clean training part as the target, noise at 10 dB as
``tssdpa.data.add_noise`` draws it (``gaussian``, ``student_t`` with 3 degrees of freedom,
``impulsive``), and scores the last 20% against the clean recording (RMSE, geometric mean over
the axes) four ways: without the adaptation (``local_window=None``); with it as ``fit`` had it
before 2026-11-29 -- the RMS as the level, each width of ``LOCAL_WIDTHS``, a channel adapts
where its error against the target drops, the width whose kept channels score lowest; the
same on a robust level (1.4826 times the MAD of ``x - target``); and as ``fit`` has it now,
which also asks the noise ``x - target`` of a channel for Gaussian tails
(``tssdpa.estimators.noise_tails``; its tail ratio is printed per axis).

    .venv/bin/python experiments/local_target_noise_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from tssdpa.data import add_noise, load_imu
from tssdpa.estimators.noise_tails import tail_ratio
from tssdpa.filters import ProjectionFilter
from tssdpa.filters.projection_local import LOCAL_WIDTHS, width_scores

KINDS = ("gaussian", "student_t", "impulsive")


def local_with(f, xs, target, robust: bool):
    """``local_`` as ``fit_local`` fitted it with a target before its test of the noise's
    tails (every channel may adapt): the noise level the RMS of ``xs - target``, or with
    ``robust`` 1.4826 times its MAD."""
    r = xs - target
    noise = np.sqrt(np.mean(r**2, axis=0))
    if robust:
        noise = 1.4826 * np.median(np.abs(r - np.median(r, axis=0)), axis=0)
    div, before, afters, _, nonlocal_part, _ = width_scores(
        f, xs, None, noise, LOCAL_WIDTHS, target
    )
    best = None
    for width, after in zip(LOCAL_WIDTHS, afters):
        channels = after < before
        kept = float(np.mean(np.where(channels, after, before)))
        if best is None or kept < best[0]:
            best = (kept, width, channels)
    _, width, channels = best
    if not channels.any():
        return None
    return {"window": width, "divergence": float(div), "nonlocal_divergence": float(nonlocal_part),
            "noise": noise.tolist(), "channels": channels.tolist()}  # fmt: skip


def self_supervised(clean, tr, te, seeds, kinds) -> int:
    """The fits without a target, on the whole noisy series: test RMSE of the noisy series,
    of the fit without and with the adaptation (as ``fit`` keeps it), and of a centred median
    filter of the width (3 to 31) best on the test part (an oracle); the channels the fit
    adapts, and the tail ratio per axis of ``x`` minus the unadapted output (the only trace of
    the noise a self-supervised fit has)."""
    from scipy.signal import medfilt

    print("self-supervised: test RMSE, geometric mean over the six axes, 10 dB")
    print(f"{'noise':10s} {'seed':>4s} {'noisy':>8s} {'without':>8s} {'fit':>8s} {'median':>8s}"
          "  channels adapted, tail ratio of x - y per axis")  # fmt: skip

    def rmse(y):
        return float(np.exp(np.mean(np.log(np.sqrt(np.mean((y - clean)[te:] ** 2, 0))))))

    for kind in kinds:
        for seed in seeds:
            noisy = add_noise(clean, kind, 10.0, seed=seed)
            cells = [rmse(noisy)]
            for window in (None, "auto"):
                f = ProjectionFilter(causal=False, channel_independent=False, local_window=window)
                y = np.asarray(f.fit(noisy).filter(noisy))
                cells.append(rmse(y))
                if window is None:
                    ratios = " ".join(f"{v:.2f}" for v in tail_ratio(noisy - y))
            cells.append(min(rmse(np.column_stack([medfilt(noisy[:, c], k) for c in range(6)]))
                             for k in (3, 5, 7, 9, 15, 21, 31)))  # fmt: skip
            kept = 0 if f.local_ is None else sum(f.local_["channels"])
            print(f"{kind:10s} {seed:4d} " + " ".join(f"{v:8.4f}" for v in cells)
                  + f"  {kept:4d}   {ratios}", flush=True)  # fmt: skip
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    what = "fits without the target: the adaptation against none (self_supervised)"
    p.add_argument("--self-supervised", action="store_true", help=what)
    p.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")  # notes on the data: not this probe's subject
    df = load_imu("imu_fusion", args.data_dir)
    cols = [c for c in df.columns if c.startswith(("Gyroscope", "Accelerometer"))]
    clean = df[cols].to_numpy(dtype=float)[:6000]
    tr, te = int(0.6 * len(clean)), int(0.8 * len(clean))
    clean = (clean - clean[:tr].mean(0)) / clean[:tr].std(0)
    if args.self_supervised:
        return self_supervised(clean, tr, te, args.seeds, args.kinds)
    print("test RMSE, geometric mean over the six axes, 10 dB")
    print(f"{'noise':10s} {'seed':>4s} {'without':>8s} {'RMS':>8s} {'MAD':>8s} {'fit':>8s}  "
          "windows (RMS, MAD), channels fit adapts, tail ratio per axis")  # fmt: skip
    for kind in args.kinds:
        for seed in args.seeds:
            noisy = add_noise(clean, kind, 10.0, seed=seed)

            def score(f, noisy=noisy):
                y = np.asarray(f.filter(noisy))
                return float(np.exp(np.mean(np.log(np.sqrt(np.mean((y - clean)[te:] ** 2, 0))))))

            plain = ProjectionFilter(causal=False, channel_independent=False, local_window=None)
            plain.fit(noisy[:tr], target=clean[:tr])
            f = ProjectionFilter(causal=False, channel_independent=False)
            f.fit(noisy[:tr], target=clean[:tr])
            fitted, fitted_local = score(f), f.local_
            n = min(tr, f.max_fit_samples)  # the fit block (no gaps here)
            xs, tgt = f._to_units(noisy[:n]), f._to_units(clean[:n])
            cells, said = [score(plain)], []
            for robust in (False, True):
                f.local_ = local_with(f, xs, tgt, robust)
                cells.append(score(f))
                said.append(None if f.local_ is None else f.local_["window"])
            kept = 0 if fitted_local is None else sum(fitted_local["channels"])
            ratios = " ".join(f"{v:.2f}" for v in tail_ratio(noisy[:n] - clean[:n]))
            print(f"{kind:10s} {seed:4d} " + " ".join(f"{v:8.4f}" for v in cells)
                  + f" {fitted:8.4f}  {said} {kept:4d}   {ratios}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
