"""Spikes (impulsive noise) treated as missing: what the rule finds, and what the fit gains.

``tssdpa.estimators.spikes.spike_mask`` marks single samples far off a robust leave-one-out
local quadratic through their neighbours, in the channels a fit finds impulsive noise in; a
zero-phase ``ProjectionFilter`` (``glitches="missing"``, the default) then treats
them as missing. Two parts:

``--part detect``: on the bench's series (``experiments/bench_autofit.py``, 3,000 samples,
z-scored; seed 0) under Gaussian noise, Student-t noise of 3 degrees of freedom and Gaussian
noise with 2% of its samples hit by outliers of 10x (``tssdpa.data.add_noise``) at 0, 10 and
20 dB: the share of the samples marked, how many of the large noise samples (more than 4 MAD
scales) it marks, and how many others (false marks; any under Gaussian noise are).

``--part recordings``: the shared recordings as they are (the two IMUs, the four ETT tables):
per channel, the samples in 1,000 beyond ``IMPULSIVE_REACH`` typical distances (what decides
whether a channel has impulsive noise), its share of exact repeats, and the spikes marked.

``--part bench``: the denoising cells of ``experiments/bench_autofit.py`` as it runs them (seed
0, Gaussian noise at 0 / 10 / 20 dB, its series lengths): the channels a self-supervised fit
(the whole series) and a supervised one (the training part) find impulsive noise in -- none,
so the benchmark's figures do not depend on the rule.

``--part screen``: every channel of the detect cells (their first 600, 2,000 and 3,000
samples), of the fusion IMU's six axes under the same noises, and of the four ETT tables as
recorded: the decision of ``spike_channels`` with its cheap screen against the rule's own
(``channel_spikes``); it prints the channels where they differ (none).

``--part foretold``: ``spikes.foretold_shares`` (how often the patterns nearest to those before
the spikes' first samples are followed by one too, and their own share) under
impulsive noise on the series, under one-sided hits at random times, and for spikes of the
signal: a Hindmarsh-Rose neuron (``experiments/unseen_suite_2.py``) under Gaussian noise, an
uneven train of 2-sample pulses and bursts of spikes.

``--part filter``: the self-supervised ``ProjectionFilter(causal=False).fit(x)`` with and
without the rule (``glitches=None``; the glitch rule finds nothing in these cells: its
outliers recur in more than 1 sample in 100), test RMSE (the last 20%) against the clean
series, beside the best centred median filter and moving average chosen on the test part
(oracles). ``--series imu6`` takes the fusion IMU's six axes at 10 dB (first 6,000 samples,
z-scored), the setting of ``experiments/local_target_noise_probe.py --self-supervised``.

    .venv/bin/python experiments/spikes_probe.py --part detect
    .venv/bin/python experiments/spikes_probe.py --part recordings
    .venv/bin/python experiments/spikes_probe.py --part bench
    .venv/bin/python experiments/spikes_probe.py --part screen
    .venv/bin/python experiments/spikes_probe.py --part filter --series lorenz pulse_train
    .venv/bin/python experiments/spikes_probe.py --part filter --series imu6 --snrs 10
    .venv/bin/python experiments/spikes_probe.py --part foretold
    .venv/bin/python experiments/spikes_probe.py --part pulses

``--part pulses``: trains of narrow pulses (amplitude 5, white Gaussian noise 0.2, 3,000
samples, seed 0) -- Gaussian peaks of 1 to 3 samples' standard deviation every 50 or 47.3
samples, denser trains, a 2-sample flat pulse, a 2-sample peak half a sample off centre, a
one-sided decay, 2-sample pulses at uneven spacing, bursts of spikes on a plateau -- and
whether the rule takes them for impulsive noise: the self-supervised
fit's RMSE against the clean train, with the rule and without it (``glitches=None``), beside
the noisy series'.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy.ndimage import uniform_filter1d
from scipy.signal import medfilt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_autofit import split_series  # noqa: E402

from tssdpa.data import add_noise, load_imu  # noqa: E402
from tssdpa.estimators.spikes import spike_mask  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402

KINDS = ("gaussian", "student_t", "impulsive")
SERIES = ("lorenz", "rossler", "mackey_glass", "pulse_train", "ar2", "henon", "sunspots",
          "imu_fusion_gz")  # fmt: skip
WIDTHS = (3, 5, 7, 9, 11, 15, 21, 31, 41)
#: the noise's seed at each SNR, as the default run has it (``--snrs 10`` alone is that cell)
SEEDS = {0.0: 0, 10.0: 1, 20.0: 2}


def load(name: str, data_dir: str):
    """(clean (T, C), first test row)."""
    if name == "imu6":
        df = load_imu("imu_fusion", data_dir)
        cols = [c for c in df.columns if c.startswith(("Gyroscope", "Accelerometer"))]
        clean = df[cols].to_numpy(dtype=float)[:6000]
        tr = int(0.6 * len(clean))
        return (clean - clean[:tr].mean(0)) / clean[:tr].std(0), int(0.8 * len(clean))
    z, sp = split_series(name, 0, 3000, 3000, data_dir)
    return z[:, None], sp.val


def detect(args) -> int:
    from tssdpa.estimators.spikes import channel_spikes

    print(f"{'series':14s} {'dB':>3s} {'noise':10s} {'marked':>7s} {'large':>9s} {'false':>5s} "
          "per 1000")  # fmt: skip
    for name in args.series:
        clean, _ = load(name, args.data_dir)
        for k, snr in enumerate(args.snrs):
            for kind in args.kinds:
                noisy = add_noise(clean, kind, snr, seed=SEEDS.get(snr, k))
                found = spike_mask(noisy)
                n = len(noisy)
                e = noisy - clean
                large = np.abs(e) > 4 * 1.4826 * np.median(np.abs(e), axis=0)
                print(f"{name:14s} {snr:3.0f} {kind:10s} {found.mean():7.2%} "
                      f"{int((found & large).sum()):4d}/{int(large.sum()):<4d} "
                      f"{int((found & ~large).sum()):5d} "
                      f"{1000 * np.count_nonzero(channel_spikes(noisy[:, 0])[1]) / n:8.2f}",
                      flush=True)  # fmt: skip
    return 0


def recordings(args) -> int:
    from tssdpa.data import load_ett
    from tssdpa.estimators.spikes import channel_spikes

    print(f"{'recording':10s} {'channel':24s} {'per 1000':>8s} {'repeats':>7s} {'marked':>6s}")
    tables = [(n, load_imu(n, args.data_dir)) for n in ("imu_fusion", "imu_gait")]
    tables += [(n, load_ett(n, args.data_dir)) for n in ("ETTh1", "ETTh2", "ETTm1", "ETTm2")]
    for name, df in tables:
        cols = [c for c in df.columns if df[c].dtype.kind == "f"]
        x2 = df[cols].to_numpy(dtype=np.float64)
        marked = spike_mask(x2).sum(axis=0)
        for c, col in enumerate(cols):
            _, strong, known = channel_spikes(x2[:, c])
            repeats = np.mean(x2[1:, c] == x2[:-1, c])
            far = np.count_nonzero(strong)
            print(f"{name:10s} {col:24s} {1000 * far / max(known, 1):8.2f} {repeats:7.1%} "
                  f"{int(marked[c]):6d}", flush=True)  # fmt: skip
    return 0


def bench(args) -> int:
    from bench_autofit import SERIES as BENCH
    from bench_autofit import SNRS, Skip

    from tssdpa.estimators.spikes import spike_channels

    found = 0
    for name in sorted(BENCH):
        try:
            z, sp = split_series(name, 0, 2000, 3000, args.data_dir)
        except Skip as why:
            print(f"{name}: skipped ({why})")
            continue
        for k, snr in enumerate(SNRS):
            noisy = add_noise(z, "gaussian", snr, seed=k)[:, None]  # the bench's 1000 seed + k
            cells = (
                bool(spike_channels(noisy[:4000])[0]),
                bool(spike_channels(noisy[: sp.train])[0]),
            )
            found += sum(cells)
            print(f"{name:14s} {snr:3.0f} dB  self-supervised {cells[0]}  supervised {cells[1]}")
    print(f"cells with impulsive noise found: {found}")
    return 0


def screen(args) -> int:
    from tssdpa.data import load_ett
    from tssdpa.estimators import spikes

    def unscreened(v) -> bool:
        _, strong, known = spikes.channel_spikes(v)
        far = np.count_nonzero(strong)
        many = far >= spikes.MIN_SPIKES and far > spikes.MIN_SPIKE_SHARE * known
        return many and not spikes._a_pulse_train(strong)

    channels = []
    for name in [*args.series, "imu6"]:
        clean, _ = load(name, args.data_dir)
        for k, snr in enumerate(args.snrs):
            for kind in args.kinds:
                noisy = add_noise(clean, kind, snr, seed=SEEDS.get(snr, k))
                for c in range(noisy.shape[1]):
                    channels += [(f"{name} {snr:g} dB {kind} {c} [:{n}]", noisy[:n, c])
                                 for n in (600, 2000, 3000)]  # fmt: skip
    for name in ("ETTh1", "ETTh2", "ETTm1", "ETTm2"):
        df = load_ett(name, args.data_dir)
        channels += [(f"{name} {c}", df[c].to_numpy(dtype=np.float64))
                     for c in df.columns if df[c].dtype.kind == "f"]  # fmt: skip
    differ = 0
    for label, v in channels:
        if unscreened(v) != bool(spikes.spike_channels(v[:, None])[0]):
            differ += 1
            print("differs:", label)
    print(f"channels checked {len(channels)}, decisions that differ {differ}")
    return 0


def filtered(clean, noisy, te) -> list[float]:
    def rmse(y):  # geometric mean over the channels
        return float(np.exp(np.mean(np.log(np.sqrt(np.mean((y - clean)[te:] ** 2, 0))))))

    cells = [rmse(noisy)]
    for glitches in (None, "missing"):
        f = ProjectionFilter(causal=False, glitches=glitches)
        cells.append(rmse(np.asarray(f.fit(noisy).filter(noisy))))
    C = noisy.shape[1]
    cells.append(min(rmse(np.column_stack([medfilt(noisy[:, c], w) for c in range(C)]))
                     for w in WIDTHS))  # fmt: skip
    cells.append(min(rmse(uniform_filter1d(noisy, w, axis=0, mode="nearest")) for w in WIDTHS))
    return cells


def filter_part(args) -> int:
    print("test RMSE (geometric mean over channels); oracles chosen on the test part")
    print(f"{'series':14s} {'dB':>3s} {'noise':10s} {'noisy':>7s} {'without':>7s} "
          f"{'with':>7s} {'median':>7s} {'mov.avg':>7s}  ratio with/without")  # fmt: skip
    for name in args.series:
        clean, te = load(name, args.data_dir)
        for k, snr in enumerate(args.snrs):
            for kind in args.kinds:
                cells = filtered(clean, add_noise(clean, kind, snr, seed=SEEDS.get(snr, k)), te)
                print(f"{name:14s} {snr:3.0f} {kind:10s} "
                      + " ".join(f"{v:7.4f}" for v in cells)
                      + f"  {cells[2] / cells[1]:.3f}", flush=True)  # fmt: skip
    return 0


def _pulse_trains() -> dict:
    """name: the clean (3000,) train of ``--part pulses``."""
    t = np.arange(3000.0)

    def gaussian(sd, period, centre=25.0):
        return 5.0 * np.exp(-(((t % period) - centre) ** 2) / (2.0 * sd**2))

    phase = t % 50
    return {
        **{f"gaussian sd {sd:g}, every {p:g}": gaussian(sd, p) for sd in (1.0, 1.5, 2.0, 3.0)
           for p in (50, 47.3)},  # fmt: skip
        **{f"gaussian sd 1, every {p:g}": gaussian(1.0, p, p / 2) for p in (12, 10)},
        "flat, 2 samples, every 50": np.where((phase >= 25) & (phase < 27), 5.0, 0.0),
        "gaussian sd 0.8 half a sample off, every 50": gaussian(0.8, 50, 25.5),
        "one-sided decay tau 1.5, every 50": np.where(phase >= 25, 5.0 * np.exp(-(phase - 25)
                                                                              / 1.5), 0.0),
        "flat, 2 samples (5, 2), every 35-65 (uneven)": _uneven_train(),
        "bursts: 4 spikes every 3 on a plateau of 1": _bursts(),
    }  # fmt: skip


def _uneven_train() -> np.ndarray:
    """Pulses of 2 samples (5, then 2) at gaps drawn from 35-65 samples (a varying rate)."""
    clean = np.zeros(3000)
    beats = np.cumsum(np.random.default_rng(0).integers(35, 66, 100))
    beats = beats[beats < 2998]
    clean[beats], clean[beats + 1] = 5.0, 2.0
    return clean


def _bursts() -> np.ndarray:
    """Bursts every 60-140 samples: a plateau of 1 for 14 samples carrying 4 spikes of 5 every
    3 samples (a neuron's burst sampled at its spikes' width)."""
    rng, clean, start = np.random.default_rng(0), np.zeros(3000), 30
    while start + 14 < 3000:
        clean[start : start + 14] = 1.0
        clean[start + 2 : start + 14 : 3] = 5.0
        start += int(rng.integers(60, 141))
    return clean


def foretold(args) -> int:
    """The shares of :func:`tssdpa.estimators.spikes.foretold_shares` (followed, and the far
    samples' own) where impulsive noise is, and where spikes of the signal are."""
    import unseen_suite_2

    from tssdpa.estimators.spikes import channel_spikes, foretold_shares

    def row(name, x):
        shares = foretold_shares(x, channel_spikes(x)[1])
        said = (
            "fewer far samples than asked"
            if shares is None
            else (
                f"followed {shares[0]:.3f}  own {shares[1]:.4f}  ratio {shares[0] / shares[1]:5.1f}"
            )
        )
        print(f"{name:58s} {said}", flush=True)

    for name in args.series:  # impulsive noise: 2% outliers of 10x, either sign
        clean, _ = load(name, args.data_dir)
        for k, snr in enumerate(args.snrs):
            row(
                f"{name} {snr:g} dB impulsive",
                add_noise(clean, "impulsive", snr, seed=SEEDS.get(snr, k))[:, 0],
            )
    clean, _ = load("mackey_glass", args.data_dir)
    rng = np.random.default_rng(5)  # one-sided hits at random times (the tests' case)
    x = add_noise(clean[:, 0], "gaussian", 20.0, seed=5)
    x[rng.random(len(x)) < 0.02] += 10.0 * np.std(x - clean[:, 0])
    row("mackey_glass 20 dB + one-sided hits at random times", x)
    hr = unseen_suite_2.hindmarsh_rose(3000, 0)
    hr = (hr - hr[:1800].mean()) / hr[:1800].std()
    for k, snr in enumerate(args.snrs):
        row(f"hindmarsh_rose {snr:g} dB gaussian", add_noise(hr, "gaussian", snr, seed=k))
    for name, clean in (("uneven 2-sample train", _uneven_train()), ("bursts", _bursts())):
        row(
            f"{name} + 0.2 white noise",
            clean + 0.2 * np.random.default_rng(0).normal(size=clean.size),
        )
    return 0


def pulses(args) -> int:
    print(f"{'train':46s} {'noisy':>7s} {'fit':>7s} {'no rule':>7s}  spike channel")
    for name, clean in _pulse_trains().items():
        x = clean + 0.2 * np.random.default_rng(0).normal(size=clean.size)
        fits = [ProjectionFilter(causal=False, **kw).fit(x) for kw in ({}, {"glitches": None})]
        errors = [np.sqrt(np.mean((np.asarray(f.filter(x)) - clean) ** 2)) for f in fits]
        noisy = np.sqrt(np.mean((x - clean) ** 2))
        print(
            f"{name:46s} {noisy:7.3f} {errors[0]:7.3f} {errors[1]:7.3f}  "
            f"{bool(fits[0].spike_channels_ and fits[0].spike_channels_[0])}",
            flush=True,
        )
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parts = ("detect", "recordings", "bench", "screen", "filter", "pulses", "foretold")
    p.add_argument("--part", choices=parts, default="detect")
    p.add_argument("--series", nargs="+", default=list(SERIES))
    p.add_argument("--snrs", type=float, nargs="+", default=[0.0, 10.0, 20.0])
    p.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")  # the notes on the data (the spikes found): counted here
    run = {"detect": detect, "recordings": recordings, "bench": bench, "screen": screen,
           "filter": filter_part, "pulses": pulses, "foretold": foretold}  # fmt: skip
    return run[args.part](args)


if __name__ == "__main__":
    sys.exit(main())
