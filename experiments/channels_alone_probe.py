"""Each channel alone or with the others: a zero-phase ``ProjectionFilter`` on several channels,
fitted jointly (``channel_independent=False``), one filter per channel (``True``) and the choice
per channel by each fit's score (``"auto"``, the default).

Signals: the Lorenz coordinates in units of 1, 0.001 and 50, the fusion and walking IMUs'
gyroscope and accelerometer axes (first 3,000 samples, taken as clean;
``channel_units_probe.signals``), the first 3,000 hours of ETTh1's seven columns and five of
the ten Lorenz-96 coordinates. White noise at 0 / 10 / 20 dB of each channel's variance.
Measure: RMSE against the clean signal over the added noise, geometric mean over the channels;
then over every channel of every cell. The walking IMU's recording holds noise of its own, which
every fit removes and this measure counts as error (its 10 and 20 dB cells score above 1).

    .venv/bin/python experiments/channels_alone_probe.py --data-dir ../shared/datasets

``--causal``: the same for causal filters (a choice or one fit per channel streams as one:
``tssdpa.filters.channel_streams``).

``--ties`` (with ``--causal``): each cell's auto fit's per-channel scores (joint and alone) and
the errors of the joint and the one-per-channel filters, then the error over every channel of
the choice that takes a channel's own filter only where its score is lower by more than a
share (0 .. 0.2) of the joint one's (``projection_channels.CAUSAL_TIE``), with the number of
channels it filters alone.

``--held-out``: signals none of the cells above use, for checking the choice where it was not
made: the fusion IMU's gyroscope + accelerometer at samples 9,000-12,000 and the walking IMU's
at 10,000-13,000 (taken as clean, as above), the first 3,000 rows of ETTh2's and ETTm1's seven
columns, Lorenz-96 coordinates 5-9 of seed 1, and Rössler's three coordinates (seed 1) in
units of 1, 0.001 and 50.

``--adaptation``: for the joint fit of each cell, the local adaptation's SURE on the fit block
(mean over the channels, over each channel's noise variance) without and with it, next to the
error against the clean signal on the same block, without and with it -- how far the
adaptation's own score can be trusted (why the choice scores the output before it) -- and the
unadapted output's ``dy_t/dx_t`` (probed) where the adaptation hands it to the low-passes and
elsewhere, against the constant the adaptation takes (a probe sees the jumps of the non-local
filter's choice of neighbours: its figures are noisy where the output is non-local).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from channel_units_probe import SNRS, imu_axes, signals  # noqa: E402

from tssdpa.data.real import load_ett  # noqa: E402
from tssdpa.data.synthetic import lorenz96, rossler  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402
from tssdpa.filters.projection_local import width_scores  # noqa: E402

MODES = {"joint": False, "auto": "auto", "alone": True}


def all_signals(data_dir: str):
    yield from signals(data_dir)
    try:
        yield "etth1", load_ett("ETTh1", data_dir).iloc[:3000].to_numpy(dtype=float)
    except (FileNotFoundError, OSError) as err:
        print(f"etth1 skipped: {err}")
    yield "lorenz96", lorenz96(2000, seed=0, component=None)[:, :5]


def held_out_signals(data_dir: str):
    for name, start in (("imu_fusion", 9000), ("imu_gait", 10000)):
        x = imu_axes(name, data_dir, start)
        if x is not None:
            yield f"{name}@{start}", x
    for name in ("ETTh2", "ETTm1"):
        try:
            yield name.lower(), load_ett(name, data_dir).iloc[:3000].to_numpy(dtype=float)
        except (FileNotFoundError, OSError) as err:
            print(f"{name} skipped: {err}")
    yield "lorenz96_s1", lorenz96(2000, seed=1, component=None)[:, 5:]
    clean = rossler(2000, seed=1, component=None)
    yield "rossler_s1", (clean - clean.mean(0)) / clean.std(0) * np.array([1.0, 1e-3, 50.0])


TIES = (0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2)


def tie_rows(noisy, clean, noise) -> list[tuple]:
    """Per channel: (joint score, alone score, joint error, alone error) of the causal fits;
    the scores from auto's ``channel_choice_``, errors as RMSE over the added noise."""
    f = ProjectionFilter(causal=True, channel_independent="auto").fit(noisy)
    table = f.channel_choice_
    f.channel_models_ = None  # the joint filter's output on every channel
    joint = np.asarray(f.filter(noisy))
    alone = np.asarray(
        ProjectionFilter(causal=True, channel_independent=True).fit(noisy).filter(noisy)
    )
    err = [np.sqrt(np.mean((y - clean) ** 2, axis=0)) / noise for y in (joint, alone)]
    return list(zip(table["joint"], table["alone"], err[0], err[1]))


def tie_table(rows) -> None:
    J, A, ej, ea = (np.array(v, dtype=float) for v in zip(*rows))
    gm = lambda e: float(np.exp(np.mean(np.log(e))))  # noqa: E731
    print(f"{len(J)} channels: joint {gm(ej):.4f}, alone {gm(ea):.4f}, the better of the two "
          f"{gm(np.minimum(ej, ea)):.4f}")  # fmt: skip
    for tie in TIES:
        pick = A < J - tie * np.abs(J)  # projection_channels.choose_channels' bar
        e = np.where(pick, ea, ej)
        print(
            f"  tie {tie:.2f}: {gm(e):.4f}, {int(pick.sum())} channels alone, "
            f"{int((e / ej > 1.02).sum())} worse than joint by > 2% (worst {np.max(e / ej):.3f})"
        )


def adaptation(name, snr, noisy, clean) -> None:
    f = ProjectionFilter(causal=False, channel_independent=False).fit(noisy)
    if not f.local_:
        print(f"{name:10s} {snr:4.0f}  no adaptation kept")
        return
    n = min(len(noisy), f.max_fit_samples)  # the fit block: these series have no gap
    xs = f._to_units(noisy[:n])
    unit_noise = f.noise_level_ / f.channel_scale_
    width = f.local_["window"]
    _, before, afters, *_ = width_scores(f, xs, None, unit_noise, (width,))
    kept = np.where(f.local_["channels"], afters[0], before)
    with_it = np.asarray(f.filter(noisy[:n]))
    local, f.local_ = f.local_, None
    without = np.asarray(f.filter(noisy[:n]))
    s2 = f.noise_level_**2
    measured = [np.mean(np.mean((y - clean[:n]) ** 2, axis=0) / s2) for y in (without, with_it)]
    u2 = unit_noise**2
    print(f"{name:10s} {snr:4.0f}  SURE without {np.mean(before / u2):.3f}, with "
          f"{np.mean(kept / u2):.3f};  measured without {measured[0]:.3f}, with "
          f"{measured[1]:.3f}  ({sum(local['channels'])} of {len(s2)} channels adapt over "
          f"{width})", flush=True)  # fmt: skip
    # the unadapted output's dy_t/dx_t, 8 probes, averaged over the adaptation's window: where
    # the adaptation hands the output to the low-passes (it changes the output by more than
    # half its mean change) and elsewhere, against the constant it takes
    d = np.zeros(without.shape)
    scale = np.sqrt(s2) * 1e-3
    for k in range(8):
        probe = np.random.default_rng(100 + k).choice([-1.0, 1.0], without.shape)
        d += probe * (np.asarray(f.filter(noisy[:n] + scale * probe)) - without) / scale / 8
    f.local_ = local
    d = np.column_stack([np.convolve(col, np.ones(width) / width, "same") for col in d.T])
    change = np.abs(with_it - without)
    handed = (change > 0.5 * change.mean(axis=0)) & np.asarray(local["channels"])
    print(f"{'':16s}dy/dx taken as {local['divergence']:.3f}; probed "
          f"{d[handed].mean():.3f} where handed to the low-passes ({handed.mean():.0%} of the "
          f"entries), {d[~handed].mean():.3f} elsewhere", flush=True)  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--adaptation", action="store_true", help="the adaptation's scores only")
    p.add_argument("--causal", action="store_true", help="causal filters (default zero-phase)")
    p.add_argument("--held-out", action="store_true", help="the signals of held_out_signals")
    p.add_argument("--ties", action="store_true", help="the causal choice's tie, swept")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")  # held-readings notes: not this probe's subject
    if args.adaptation:
        print("the joint fit's local adaptation on its fit block: scores over the noise "
              "variance, mean over the channels")  # fmt: skip
    else:
        print(
            "RMSE / added noise, geometric mean over channels; fit + filter seconds; "
            "auto's choice per channel (j joint, A alone)"
        )
    logs, ties = {m: [] for m in MODES}, []
    source = held_out_signals if args.held_out else all_signals
    for name, clean in source(args.data_dir):
        for k, snr in enumerate(SNRS):
            rng = np.random.default_rng(1000 * args.seed + k)
            noise = clean.std(0) * 10 ** (-snr / 20)
            noisy = clean + noise * rng.normal(size=clean.shape)
            if args.adaptation:
                adaptation(name, snr, noisy, clean)
                continue
            if args.ties:
                ties += tie_rows(noisy, clean, noise)
                print(f"{name:10s} {snr:4.0f}  " + "  ".join(
                    f"{j:.3f}/{a:.3f} -> {e:.3f}/{ea:.3f}" for j, a, e, ea in ties[-clean.shape[1]:]
                ), flush=True)  # fmt: skip
                continue
            cells = []
            for mode, value in MODES.items():
                t0 = time.perf_counter()
                f = ProjectionFilter(causal=args.causal, channel_independent=value).fit(noisy)
                y = np.asarray(f.filter(noisy))
                seconds = time.perf_counter() - t0
                ratio = np.sqrt(np.mean((y - clean) ** 2, axis=0)) / noise
                logs[mode].append(np.log(ratio))
                cells.append(f"{mode} {np.exp(np.mean(np.log(ratio))):.3f} {seconds:5.1f}s")
                if mode == "auto":
                    chosen = "".join("A" if c == "alone" else "j" for c in f.channel_choice_.chosen)
                    cells[-1] += f" {chosen}"
            print(f"{name:10s} {snr:4.0f}  " + "   ".join(cells), flush=True)
    if args.ties:
        tie_table(ties)
    if args.adaptation or args.ties:
        return 0
    print("geometric mean over every channel of every cell: " + ", ".join(
        f"{m} {np.exp(np.mean(np.concatenate(v))):.3f}" for m, v in logs.items()))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
