"""How far the white-noise level that self-supervised denoising uses is from the truth, and
what the error costs.

``ProjectionFilter().fit(x)`` scores candidates by SURE with the noise level of
``tssdpa.estimators.white_noise.noise_level``; a level too high makes SURE favour filters that
smooth too much. For each development series (the synthetic ones of ``bench_autofit.py`` at
seeds 1-2, the real channels of ``autofit_heldout.py``) and each of the benchmark's SNRs, this
prints the estimated level over the standard deviation of the noise added (the benchmark's
noise seeds). On a real recording the ratio also counts the recording's own noise.

``--fit`` also fits ``ProjectionFilter(causal=False)`` on the whole noisy series three times:
with the default estimate, with ``noise_level="spectral"`` and with the true level given, and
prints each one's test RMSE over the noisy series' (below 1: better than leaving the signal
alone). Its default
series are the rough ones, whose own white innovations the estimate takes for noise: the
benchmark's AR(2), two systems of ``autofit_unseen.py`` and an AR(1) (coefficient 0.5)
generated here.

``--tails`` prints what sets ``tssdpa.estimators.noise_tails.HEAVY_TAILS``: for Gaussian and
Student-t noise (3 degrees of freedom) on the same series (``student_t`` at the same SNRs and
seeds) and on the synthetic tasks of the default comparison (``tssdpa.data.denoise_tasks``,
seeds 0-2, the whole series and its training part), the ratio of the level with its tails
(``noise_tails.rms_off_slopes``, where ``noise_level`` would consider it) to the robust level:
1 where it is not considered (the interpolators are not the tightest bounds, or the series is
too short), and the quantiles of the others; and how many levels are raised, with the
estimate over the true level of the noise added, robust only and as ``noise_level`` has it.

``--spectrum`` prints, per series and SNR, the estimate over the true level, the floor of the
Whittle AR(p) + noise fit over the true level without the conditions ``noise_level="spectral"``
puts on it (``linear_noise.whittle_floor``), and the periodogram's means over 8 equal bands of
frequency from 0 to Nyquist over the estimate squared: bands near 1 at the top mean the
spectrum is flat there at the estimated level, the signal's own white innovations
indistinguishable from the noise by any second-order statistic.

    .venv/bin/python experiments/noise_level_probe.py
    .venv/bin/python experiments/noise_level_probe.py --fit
    .venv/bin/python experiments/noise_level_probe.py --tails
    .venv/bin/python experiments/noise_level_probe.py --spectrum --series growth ar1 ar2

``--stretches`` prints, for each channel of the fusion IMU recording and stretches of it
(samples 0-1,500, 0-3,000, 4,000-7,000, 9,000-12,000; each z-scored), the default and the
spectral estimate over the true level at each SNR (noise seeds 0, 1, 2): where the spectral
option would go wrong on real recordings.

    .venv/bin/python experiments/noise_level_probe.py --stretches --data-dir ../shared/datasets

``--fall``, ``--fresh`` and ``--scan`` measure a rule tried on 2026-12-03 and not kept (see
``docs/filters.md``, "Rough signals"): the spectral floor by default where the residual bound
is visibly loose, i.e. where the linear interpolator's bound (from x_(t-1), x_(t+1)) is at
least ``FALL_RULE`` (1.15) times the cubic's (from x_(t-2)..x_(t+2)) -- the signal still
leaking into the tighter one -- under the spectral option's own conditions. Here the rule is
:func:`rule_level`; the bound is ``noise_level(x, checked_floor=False)`` (the library's
default until 2026-12-06, when it took the checked floor of ``checked_floor_probe.py``).

``--fall`` prints, for every development series above (synthetic seeds 1-2, the real
channels, the systems of ``autofit_unseen.py``, the AR(1)) at each SNR, and for the fusion
IMU's stretches as ``--stretches``, the fall (linear over cubic bound) and the level over the
true one: the default (the bound), the rule's and ``spectral``'s; rows whose rule level
differs from the bound are marked ``*``.

``--fresh`` checks the rule on linear processes generated here and used for nothing else
(AR(1) of 0.7 and 0.9, three AR(2) other than the benchmark's, an AR(3), an ARMA(1,1), an
MA(2); unit variance, 2,000 samples, seeds 5 and 6, 10 and 20 dB): for each cell whose rule
level differs from the bound, the test RMSE over the noisy series' of
``ProjectionFilter(causal=False)`` fitted with the bound, with the rule's level and with the
true level (each given as ``noise_level``).

``--scan`` looks for the rule's false alarms on recordings: every channel of the two IMU
recordings and of ETTh1, ETTh2 and ETTm1, in stretches of 1,500 and 3,000 samples (starts
every 1,500, at most eight of each length per channel; the longer ones overlap the shorter),
each z-scored, with white noise at 10 and 20 dB added (noise seed: the stretch's number). A
recording has noise of its own, so a level below the noise added is too low for certain. It
prints the stretches whose fall is at least 1.1, with their levels over the noise added (the
bound, the rule's, ``spectral``), and counts (over stretches x SNRs) those the rule takes
below 0.95 of it. Where the rule's level is not the bound it also prints the RMSE against the
recording of ``ProjectionFilter(causal=False)`` fitted with the rule's level over that with
the bound, both on the whole noisy stretch.

    .venv/bin/python experiments/noise_level_probe.py --fall --data-dir ../shared/datasets
    .venv/bin/python experiments/noise_level_probe.py --fresh
    .venv/bin/python experiments/noise_level_probe.py --scan --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- registers its channels in bench_autofit.SERIES
import autofit_unseen  # noqa: E402 -- registers its systems in bench_autofit.SERIES
import bench_autofit as bench  # noqa: E402

from tssdpa.data import Split, add_noise  # noqa: E402
from tssdpa.data.tasks import denoise_tasks  # noqa: E402
from tssdpa.estimators import noise_tails, white_noise  # noqa: E402
from tssdpa.estimators.linear_noise import linear_noise_level, whittle_floor  # noqa: E402
from tssdpa.estimators.noise_tails import HEAVY_TAILS  # noqa: E402
from tssdpa.estimators.white_noise import noise_level  # noqa: E402
from tssdpa.estimators.whittle import periodogram  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402

#: the benchmark's synthetic series: importing autofit_unseen registers every unseen suite's
#: series in bench.SERIES too, and those are left out (the suites stay unseen; --fall names
#: the first suite's itself)
SYNTHETIC = [
    n
    for n, spec in bench.SERIES.items()
    if spec[0] not in ("imu", "ett", "sunspots")
    and not any(n in suite for suite in autofit_unseen.SUITES.values())
]
ROUGH = ["ar1", "ar2", "growth", "double_well"]


def series(name: str, seed: int, data_dir):
    """``(z, split)`` as the benchmark's; "ar1" is x_t = 0.5 x_(t-1) + e_t, 2000 samples."""
    if name != "ar1":
        return bench.split_series(name, seed, 2000, 3000, data_dir)
    z = lfilter([1.0], [1.0, -0.5], np.random.default_rng(seed).normal(size=2000))
    sp = Split.fractions(len(z), 0.6, 0.2)
    return (z - z[: sp.train].mean()) / z[: sp.train].std(), sp


def rmse_ratios(z, noisy, sp, levels=None) -> list[float]:
    """Test RMSE of the fit with each of ``levels`` as ``noise_level`` (default: the default
    estimate, the spectral one and the true noise level), over the noisy series' test RMSE."""
    test = slice(sp.val, sp.test)
    base = np.sqrt(np.mean((noisy[test] - z[test]) ** 2))
    out = []
    for level in levels or (None, "spectral", float(np.std(noisy - z))):
        y = ProjectionFilter(causal=False, noise_level=level).fit(noisy).filter(noisy)
        out.append(float(np.sqrt(np.mean((y[test] - z[test]) ** 2)) / base))
    return out


def tails_levels(x: np.ndarray, true: float) -> tuple[float, float, float]:
    """For the 1-D ``x`` with noise of standard deviation ``true``: the robust level and
    ``noise_level``'s over ``true``, and the level with its tails over the robust level (1
    where not considered): ``noise_level`` with ``HEAVY_TAILS`` out of reach (none raised),
    as it is, and at 0 (any tail level taken)."""
    try:
        noise_tails.HEAVY_TAILS = math.inf
        robust = noise_level(x[:, None], checked_floor=False)[0]
        noise_tails.HEAVY_TAILS = 0.0
        considered = noise_level(x[:, None], checked_floor=False)[0]
    finally:
        noise_tails.HEAVY_TAILS = HEAVY_TAILS
    level = noise_level(x[:, None], checked_floor=False)[0]
    return robust / true, level / true, considered / robust


def tails(names, data_dir) -> int:
    """The ``--tails`` report (see the module's docstring)."""
    rows = {"gaussian": [], "student_t": []}
    for ds in ("steps", "lorenz", "sinusoids", "ar2", "mackey_glass", "sunspots"):
        for task in denoise_tasks(ds, seeds=(0, 1, 2)):
            if task.noise in rows:
                for part in (slice(None), slice(0, task.split.train)):
                    x = task.noisy[part, 0]
                    true = float(np.std(x - task.clean[part, 0]))
                    rows[task.noise].append(tails_levels(x, true))
    for name in names:
        real = name in autofit_heldout.HELDOUT
        for seed in (0,) if real else (1, 2):
            try:
                z, _ = series(name, seed, data_dir)
            except bench.Skip:
                continue
            for k, snr in enumerate(bench.SNRS):
                for kind, out in rows.items():
                    x = add_noise(z, kind, snr, seed=1000 * seed + k)
                    out.append(tails_levels(x, float(np.std(x - z))))
    for kind, values in rows.items():
        v = np.array(values)
        v = v[np.isfinite(v).all(axis=1)]
        ratio = v[:, 2]
        considered = ratio[ratio != 1.0]
        q = np.quantile(considered, [0.0, 0.05, 0.1, 0.25, 0.5, 0.95, 1.0])
        print(
            f"{kind}: {len(v)} series, considered in {len(considered)}; tail level over robust "
            "level, quantiles 0 / 5 / 10 / 25 / 50 / 95 / 100%: "
            + " / ".join(f"{r:.3f}" for r in q)
        )
        raised = v[:, 1] != v[:, 0]
        print(
            f"  raised at HEAVY_TAILS = {HEAVY_TAILS:g}: {int(raised.sum())}; estimate over "
            "the true level, median (range), robust -> now: "
            f"{np.median(v[:, 0]):.3f} ({v[:, 0].min():.3f}-{v[:, 0].max():.3f}) -> "
            f"{np.median(v[:, 1]):.3f} ({v[:, 1].min():.3f}-{v[:, 1].max():.3f})"
        )
    return 0


def spectrum(name: str, z: np.ndarray, seed: int) -> None:
    """The ``--spectrum`` lines of one series (see the module's docstring)."""
    for k, snr in enumerate(bench.SNRS):
        noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
        true = float(np.std(noisy - z))
        level = noise_level(noisy[:, None], checked_floor=False)[0]
        floor = whittle_floor(noisy[:4000], level).level  # noise_level's max_samples
        _, power, _ = periodogram(noisy[:4000])
        bands = [float(b.mean()) / level**2 for b in np.array_split(power, 8)]
        print(f"{name} {seed} {snr:g} dB: estimate {level / true:.3f}, Whittle floor "
              f"{floor / true:.3f}; bands / estimate^2 " + " ".join(f"{b:.2f}" for b in bands),
              flush=True)  # fmt: skip


def fusion_stretches(data_dir):
    """``(channel, start, length, x)``: the ``--stretches`` stretches of the fusion IMU
    recording's sensor channels, each z-scored."""
    df = bench.load_imu("imu_fusion", data_dir)
    for col in [c for c in df.columns if "(" in c]:  # the sensor channels, not the time
        for start, n in ((0, 1500), (0, 3000), (4000, 3000), (9000, 3000)):
            x = df[col].to_numpy(dtype=np.float64)[start : start + n]
            yield col, start, n, (x - x.mean()) / x.std()


def stretches(data_dir) -> int:
    """The ``--stretches`` report (see the module's docstring)."""
    print("channel start length: default / spectral estimate over the true level at "
          + " / ".join(f"{s:g}" for s in bench.SNRS) + " dB")  # fmt: skip
    for col, start, n, x in fusion_stretches(data_dir):
        cells = []
        for k, snr in enumerate(bench.SNRS):
            noisy = add_noise(x, "gaussian", snr, seed=k)
            true = float(np.std(noisy - x))
            default = noise_level(noisy[:, None])[0] / true
            cells.append(
                f"{default:.3f}/{noise_level(noisy[:, None], spectral=True)[0] / true:.3f}"
            )
        print(f"{col:22s} {start:5d} {n:5d}  " + "  ".join(cells), flush=True)
    return 0


#: the rule's threshold on :func:`interpolator_fall` (see the module's docstring)
FALL_RULE = 1.15


def interpolator_fall(v: np.ndarray) -> float:
    """The linear interpolator's bound over the cubic's on the 1-D ``v`` (1.0 where the cubic's
    is 0)."""
    linear = white_noise._interpolator_bound(v, *white_noise._INTERPOLATORS[1])[0]
    cubic = white_noise._interpolator_bound(v, *white_noise._INTERPOLATORS[2])[0]
    return linear / cubic if cubic > 0 else 1.0


def rule_level(x: np.ndarray, bound: float) -> float:
    """The rule's level of the 1-D ``x`` without NaN, whose ``noise_level`` is ``bound``: the
    spectral floor where the fall of its first 4,000 samples (what ``noise_level`` reads) is at
    least ``FALL_RULE``, else the bound (as ``noise_level(spectral=True)`` computes it, for one
    channel that does not repeat its readings)."""
    v = x[:4000]
    return linear_noise_level(v, bound) if interpolator_fall(v) >= FALL_RULE else bound


def fall_line(label: str, noisy: np.ndarray, clean: np.ndarray) -> None:
    true = float(np.std(noisy - clean))
    level = float(noise_level(noisy[:, None], checked_floor=False)[0])
    bound, rule = level / true, rule_level(noisy, level) / true
    spectral = noise_level(noisy[:, None], spectral=True)[0] / true
    ratio = interpolator_fall(noisy[:4000])  # noise_level's first 4,000 samples
    print(f"{label:36s} fall {ratio:.3f}  bound {bound:.3f}  rule {rule:.3f}  spectral "
          f"{spectral:.3f}{'  *' if rule != bound else ''}", flush=True)  # fmt: skip


def fall(data_dir) -> int:
    """The ``--fall`` report (see the module's docstring)."""
    names = SYNTHETIC + ["ar1"] + list(autofit_heldout.HELDOUT) + list(autofit_unseen.UNSEEN)
    for name in names:
        for seed in (0,) if name in autofit_heldout.HELDOUT else (1, 2):
            try:
                z, _ = series(name, seed, data_dir)
            except bench.Skip:
                continue
            for k, snr in enumerate(bench.SNRS):
                fall_line(f"{name} {seed} {snr:g} dB",
                          add_noise(z, "gaussian", snr, seed=1000 * seed + k), z)  # fmt: skip
    for col, start, n, x in fusion_stretches(data_dir):
        for k, snr in enumerate(bench.SNRS):
            fall_line(f"{col[:15]} {start}+{n} {snr:g} dB",
                      add_noise(x, "gaussian", snr, seed=k), x)  # fmt: skip
    return 0


#: ``--fresh``'s processes: (numerator, denominator) of the filter applied to white noise
FRESH = {
    "AR(1) 0.9": ([1.0], [1.0, -0.9]),
    "AR(1) 0.7": ([1.0], [1.0, -0.7]),
    "AR(2) 1.2 -0.5": ([1.0], [1.0, -1.2, 0.5]),
    "AR(2) 0.6 -0.3": ([1.0], [1.0, -0.6, 0.3]),
    "AR(2) 1.8 -0.9": ([1.0], [1.0, -1.8, 0.9]),
    "AR(3)": ([1.0], [1.0, -1.2, 0.5, -0.1]),
    "ARMA(1,1)": ([1.0, 0.6], [1.0, -0.8]),
    "MA(2)": ([1.0, 1.0, 0.5], [1.0]),
}


def fresh() -> int:
    """The ``--fresh`` report (see the module's docstring)."""
    print("process seed SNR: level over the truth, bound -> rule; test RMSE over the noisy "
          "series': bound | rule | true level")  # fmt: skip
    changed = []
    for name, (b, a) in FRESH.items():
        for seed in (5, 6):
            z = lfilter(b, a, np.random.default_rng(seed).normal(size=2500))[500:]
            sp = Split.fractions(len(z), 0.6, 0.2)
            z = (z - z[: sp.train].mean()) / z[: sp.train].std()
            for k, snr in enumerate((10.0, 20.0)):
                noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
                true = float(np.std(noisy - z))
                bound = float(noise_level(noisy[:, None], checked_floor=False)[0])
                rule = rule_level(noisy, bound)
                if bound == rule:
                    print(f"{name} {seed} {snr:g} dB: unchanged", flush=True)
                    continue
                ratios = rmse_ratios(z, noisy, sp, (bound, rule, true))
                changed.append(ratios)
                print(f"{name} {seed} {snr:g} dB: {bound / true:.3f} -> {rule / true:.3f}; "
                      + " | ".join(f"{r:.3f}" for r in ratios), flush=True)  # fmt: skip
    if changed:
        r = np.array(changed)
        print(f"{len(r)} changed of {len(FRESH) * 4}: geometric mean RMSE rule / bound "
              f"{np.exp(np.mean(np.log(r[:, 1] / r[:, 0]))):.3f}, worse in "
              f"{int((r[:, 1] > r[:, 0]).sum())}")  # fmt: skip
    return 0


def scan_stretches(data_dir):
    """``(recording, channel, start, length, number, x)``: the ``--scan`` stretches, each
    z-scored (those of zero spread left out); ``number`` counts the stretch's starts."""
    from tssdpa.data import load_ett, load_imu

    recordings = {name: load_imu(name, data_dir) for name in ("imu_fusion", "imu_gait")}
    recordings.update({name: load_ett(name, data_dir) for name in ("ETTh1", "ETTh2", "ETTm1")})
    for rec, df in recordings.items():
        for col in df.columns:
            values = df[col].to_numpy(dtype=np.float64)
            for n in (1500, 3000):
                for i, start in enumerate(range(0, min(values.size - n, 7 * 1500) + 1, 1500)):
                    x = values[start : start + n]
                    if np.std(x) > 0:
                        yield rec, col, start, n, i, (x - x.mean()) / x.std()


def scan(data_dir) -> int:
    """The ``--scan`` report (see the module's docstring)."""
    counts = {"cells": 0, "loose": 0, "too low": 0}
    for rec, col, start, n, i, x in scan_stretches(data_dir):
        for snr in (10.0, 20.0):
            noisy = add_noise(x, "gaussian", snr, seed=i)
            true = float(np.std(noisy - x))
            ratio = interpolator_fall(noisy[:4000])
            counts["cells"] += 1
            if ratio < 1.1:
                continue
            level = float(noise_level(noisy[:, None], checked_floor=False)[0])
            bound, rule = level / true, rule_level(noisy, level) / true
            counts["loose"] += ratio >= FALL_RULE
            counts["too low"] += rule != bound and rule < 0.95
            spectral = noise_level(noisy[:, None], spectral=True)[0] / true
            cost = ""
            if rule != bound:
                errors = []
                for level in (rule * true, bound * true):
                    f = ProjectionFilter(causal=False, noise_level=level).fit(noisy)
                    errors.append(np.sqrt(np.mean((f.filter(noisy) - x) ** 2)))
                cost = f"; RMSE rule / bound {errors[0] / errors[1]:.3f}"
            print(f"{rec} {col[:15]:15s} {start}+{n} {snr:g} dB: fall {ratio:.3f}, "
                  f"bound {bound:.3f}, rule {rule:.3f}, spectral "
                  f"{spectral:.3f}{cost}", flush=True)  # fmt: skip
    print(
        f"{counts['cells']} stretches x SNRs; fall >= FALL_RULE ({FALL_RULE}) in "
        f"{counts['loose']}; the rule below 0.95 of the noise added in {counts['too low']}"
    )
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--series", nargs="+", default=None)
    p.add_argument("--fit", action="store_true", help="also the fits' test RMSE (see above)")
    p.add_argument("--tails", action="store_true", help="the heavy-tails threshold's figures")
    p.add_argument("--spectrum", action="store_true", help="the spectra's floors and bands")
    p.add_argument("--stretches", action="store_true", help="the fusion IMU's stretches")
    p.add_argument("--fall", action="store_true", help="the interpolators' fall (FALL_RULE)")
    p.add_argument("--fresh", action="store_true", help="the rule on fresh linear processes")
    p.add_argument("--scan", action="store_true", help="the rule's false alarms on recordings")
    args = p.parse_args(argv)
    if args.scan:
        return scan(args.data_dir)
    if args.fall:
        return fall(args.data_dir)
    if args.fresh:
        return fresh()
    if args.stretches:
        return stretches(args.data_dir)
    if args.tails:
        return tails(args.series or SYNTHETIC + list(autofit_heldout.HELDOUT), args.data_dir)
    names = args.series or (ROUGH if args.fit else SYNTHETIC + list(autofit_heldout.HELDOUT))
    snrs = " / ".join(f"{s:g}" for s in bench.SNRS)
    if not args.spectrum:
        print(f"series seed: estimated / true noise level at {snrs} dB")
    if args.fit:
        print("  then, per SNR, test RMSE over the noisy series': default | spectral | true level")
    for name in names:
        real = name in autofit_heldout.HELDOUT or bench.SERIES.get(name, ("",))[0] in (
            "imu", "ett", "sunspots")  # fmt: skip
        for seed in (0,) if real else (1, 2):
            try:
                z, sp = series(name, seed, args.data_dir)
            except bench.Skip:
                continue
            if args.spectrum:
                spectrum(name, z, seed)
                continue
            ratios, fits, spectral = [], [], []
            for k, snr in enumerate(bench.SNRS):
                noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
                ratios.append(noise_level(noisy[:, None])[0] / np.std(noisy - z))
                spectral.append(noise_level(noisy[:, None], spectral=True)[0] / np.std(noisy - z))
                if args.fit:
                    fits.append("{:.3f} | {:.3f} | {:.3f}".format(*rmse_ratios(z, noisy, sp)))
            line = f"{name} {seed}: " + " / ".join(f"{r:.3f}" for r in ratios)
            if args.fit:
                line += " (spectral " + " / ".join(f"{r:.3f}" for r in spectral) + ")"
            print(line + ("" if not fits else "   " + " / ".join(fits)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
