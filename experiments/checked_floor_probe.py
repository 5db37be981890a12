"""Where the default noise level's checked spectral floor acts, and what it does there.

``tssdpa.estimators.white_noise.noise_level`` lowers the residual estimators' upper bound to
the floor of a Whittle AR(p) + white-noise fit where the spectral option's conditions hold
(``noise_level="spectral"``) and two more: the fit rejects a floor of 0 (the floor is
identified) and its spectrum fits each quarter of the series (``linear_noise.misfit_p`` at
least ``MISFIT_ALPHA``). For every cell below where the unchecked floor differs from the bound
this prints the bound, the unchecked and the default level over the noise added, whether the
floor is identified and the misfit p-value, and the
RMSE of ``ProjectionFilter(causal=False)`` fitted with ``noise_level="spectral"`` (the
unchecked floor) and, where it differs from the bound, by default, each over the same fit
with the checked floor switched off (the default before 2026-12-06: the bound), on the
test part (the recordings: the whole stretch, against the recording). Then, per set: the
cells changed, the geometric mean of those RMSE ratios and the cells made worse, and (the
recordings) the default levels below 0.95 of the noise added, too low for certain (a
recording has noise of its own).

Sets (``--set``):

* ``cells``: every series of ``bench_autofit.py`` (the unseen systems and the held-out real
  channels included) at the benchmark's SNRs, Gaussian and Student-t noise (3 degrees of
  freedom), synthetic seeds 0-5 (the benchmark uses 0, the development scripts 1-2), real
  series once;
* ``fresh``: the linear processes of ``noise_level_probe.py --fresh`` (used for nothing else),
  seeds 5-8, 10 and 20 dB, both noises;
* ``recordings``: the stretches of ``noise_level_probe.py --scan`` (both IMU recordings, ETTh1,
  ETTh2, ETTm1; 1,500 and 3,000 samples), 10 and 20 dB;
* ``seasonal``: six seasonal linear processes (``SEASONAL``, written down after the seasonal
  term was decided and before it ran on them), as ``fresh``;
* ``seasonal2``: six more (``SEASONAL2``, written down after the seasonal model's own
  bound-share checks were decided on ``seasonal`` and before they ran on them), seeds 9-12;
* ``lines``: six linear processes under sines (``LINES``, written down after the second unseen
  suite's ``seasonal_ar`` showed spectral lines taken for noise, before they ran), seeds 13-16;
* ``lines2``: six more (``LINES2``, written down after ``lines`` and the recordings decided how
  the fit without the lines is taken, before it ran on them), seeds 17-20.

With ``--without-seasonal`` it prints instead, for every cell of the set where the default
level changes when the seasonal term of the Whittle fit is switched off (``linear_noise``
fits no seasonal factor: the default before 2026-12-07), both levels over the noise added, the
seasonal fit's period and coefficients, and the RMSE of the default fit over the same fit
without the seasonal term; then the cells changed, the geometric mean of the ratios and the
cells made worse. With ``--plain-bound-share`` the same, against the default where the
seasonal model has the plain model's checks of the bound's share of the variance
(``linear_noise.BOUND_SHARE``, ``LIMIT_BOUND_SHARE``: the default before 2026-12-07's second
change). With ``--lines-kept`` the same, against the default whose Whittle fits keep the
spectral lines (``whittle.LINE_ALPHA`` 0: the default before 2026-12-07's third change).

(``DATA``: ``../shared/datasets`` or wherever the datasets are.)

    .venv/bin/python experiments/checked_floor_probe.py --set fresh
    .venv/bin/python experiments/checked_floor_probe.py --set cells --data-dir DATA
    .venv/bin/python experiments/checked_floor_probe.py --set cells --data-dir DATA --after ricker
    .venv/bin/python experiments/checked_floor_probe.py --set recordings --data-dir DATA
    .venv/bin/python experiments/checked_floor_probe.py --set fresh --without-seasonal
    .venv/bin/python experiments/checked_floor_probe.py --set seasonal --without-seasonal
    .venv/bin/python experiments/checked_floor_probe.py --set seasonal --plain-bound-share
    .venv/bin/python experiments/checked_floor_probe.py --set lines --lines-kept
"""

from __future__ import annotations

import argparse
import math
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import noise_level_probe as probe  # noqa: E402 -- registers the unseen and held-out series

from tssdpa.data import Split, add_noise  # noqa: E402
from tssdpa.estimators import linear_noise, white_noise, whittle  # noqa: E402
from tssdpa.estimators.linear_noise import linear_noise_level, whittle_floor  # noqa: E402
from tssdpa.estimators.white_noise import noise_level  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402

bench = probe.bench
NOISES = ("gaussian", "student_t")


@contextmanager
def floor_unchecked():
    """The default noise level as it was before the checked floor: the residual bound."""
    original = white_noise.linear_noise_level
    white_noise.linear_noise_level = lambda v, upper, strict=True: (
        original(v, upper, strict) if not strict else upper
    )
    try:
        yield
    finally:
        white_noise.linear_noise_level = original


@contextmanager
def seasonal_off():
    """The default noise level as it was before the Whittle fit's seasonal term."""
    original = linear_noise.seasonal_period
    linear_noise.seasonal_period = lambda v: None
    linear_noise._ANSWERS.clear()  # answers are kept by series and bound, not by model
    try:
        yield
    finally:
        linear_noise.seasonal_period = original
        linear_noise._ANSWERS.clear()


@contextmanager
def plain_bound_share():
    """The default noise level as it was before the seasonal model got its own bound-share
    checks: the plain model's (``BOUND_SHARE``, ``LIMIT_BOUND_SHARE``)."""
    saved = linear_noise.SEASONAL_BOUND_SHARE, linear_noise.SEASONAL_LIMIT_BOUND_SHARE
    linear_noise.SEASONAL_BOUND_SHARE = linear_noise.BOUND_SHARE
    linear_noise.SEASONAL_LIMIT_BOUND_SHARE = linear_noise.LIMIT_BOUND_SHARE
    linear_noise._ANSWERS.clear()
    try:
        yield
    finally:
        linear_noise.SEASONAL_BOUND_SHARE, linear_noise.SEASONAL_LIMIT_BOUND_SHARE = saved
        linear_noise._ANSWERS.clear()


@contextmanager
def lines_kept():
    """The default noise level as it was before the Whittle fits left out spectral lines
    (``whittle.LINE_ALPHA`` 0: no value is a line)."""
    saved = whittle.LINE_ALPHA
    whittle.LINE_ALPHA = 0.0
    linear_noise._ANSWERS.clear()
    try:
        yield
    finally:
        whittle.LINE_ALPHA = saved
        linear_noise._ANSWERS.clear()


def seasonal_cell(label: str, noisy: np.ndarray, clean: np.ndarray, part: slice, out: list,
                  before=seasonal_off):  # fmt: skip
    """One cell's line where the default level differs from the default within ``before`` (by
    default: without the seasonal term); appends the default fit's RMSE over the fit ``before`` to
    ``out`` -- or, where the level is the same but BIC chose the seasonal model, the bound's share
    of the variance (a float in a tuple: above ``linear_noise.BOUND_SHARE`` the rule kept the bound
    before any fit until the seasonal model had its own checks)."""
    true = float(np.std(noisy - clean))
    level = float(noise_level(noisy[:, None])[0])
    with before():
        level_before = float(noise_level(noisy[:, None])[0])
    v = noisy[:4000]  # what noise_level reads
    bound = float(noise_level(noisy[:, None], checked_floor=False)[0])
    if level == level_before:
        if linear_noise.seasonal_period(v) is not None:
            if any(f[2].seasonal for f in linear_noise._whittle_fits(v, bound)):
                out.append((bound**2 / float(np.var(v)),))
        return
    fits = linear_noise._whittle_fits(v, bound)
    _, order, free, _ = next((f for f in fits if f[2].seasonal), fits[-1])
    with before():
        rmse_before = fit_rmse(noisy, clean, part)
    ratio = fit_rmse(noisy, clean, part) / rmse_before
    if before is lines_kept:  # the model whose answer the level is, and the values left out
        free = whittle_floor(v, bound)
        order = f"{whittle.line_frequencies(v).size} line values"
    season = "s {} Φ {:.2f} Θ {:.2f}".format(*free.seasonal) if free.seasonal else "plain"
    order = order if isinstance(order, str) else f"p {order}"
    print(f"{label:36s} before {level_before / true:.3f}  now {level / true:.3f}  ({season}, "
          f"{order})  RMSE over before: {ratio:.3f}", flush=True)  # fmt: skip
    out.append(ratio)


def fit_rmse(noisy: np.ndarray, clean: np.ndarray, part: slice, level=None) -> float:
    y = ProjectionFilter(causal=False, noise_level=level).fit(noisy).filter(noisy)
    return float(np.sqrt(np.mean((y[part] - clean[part]) ** 2)))


def cell(label: str, noisy: np.ndarray, clean: np.ndarray, part: slice, out: list) -> None:
    """One cell's line, where the unchecked floor differs from the bound; appends
    ``(rmse ratio or None, default level / noise added, unchecked's rmse ratio)`` to ``out``:
    the default's and ``noise_level="spectral"``'s RMSE over the unchecked default's."""
    true = float(np.std(noisy - clean))
    bound = float(noise_level(noisy[:, None], checked_floor=False)[0])
    v = noisy[:4000]  # what noise_level reads
    unchecked = linear_noise_level(v, bound, strict=False)
    if unchecked == bound:
        return
    fit = whittle_floor(v, bound)
    level = float(noise_level(noisy[:, None])[0])
    line = (
        f"{label:36s} bound {bound / true:.3f}  unchecked {unchecked / true:.3f}  default "
        f"{level / true:.3f}  identified {'yes' if fit.identified else 'no '}  misfit p "
        f"{fit.misfit_p:.2g}"
    )
    with floor_unchecked():
        before = fit_rmse(noisy, clean, part)
    spectral = fit_rmse(noisy, clean, part, "spectral") / before
    line += f"  RMSE over before: spectral {spectral:.3f}"
    ratio = None
    if level != bound:
        ratio = fit_rmse(noisy, clean, part) / before
        line += f", default {ratio:.3f}"
    out.append((ratio, level / true, spectral))
    print(line, flush=True)


def geometric_mean(values: list) -> float:
    return math.exp(float(np.mean(np.log(values)))) if values else float("nan")


def summary(rows: list, recordings: bool) -> None:
    ratios = [r for r, _, _ in rows if r is not None]
    spectral = [s for _, _, s in rows]
    line = (
        f"{len(rows)} cells where the unchecked floor differs from the bound; RMSE over the "
        f'bound\'s fit: "spectral" geometric mean {geometric_mean(spectral):.3f}, worse in '
        f"{sum(s > 1.0 for s in spectral)} (largest {max(spectral, default=float('nan')):.3f});"
        f" the default changed {len(ratios)}: geometric mean {geometric_mean(ratios):.3f}, "
        f"worse in {sum(r > 1.0 for r in ratios)}"
    )
    if recordings:
        low = sum(r is not None and level < 0.95 for r, level, _ in rows)
        line += f"; default level below 0.95 of the noise added in {low}"
    print(line)


def bench_cells(data_dir, after=None):
    """``(label, noisy, clean, scored part)`` of every cell of ``--set cells`` (with ``after``: of
    the series listed after that one, to finish a run that was stopped)."""
    names = list(bench.SERIES)
    if after is not None:
        names = names[names.index(after) + 1 :]
    for name in names:
        real = name in probe.autofit_heldout.HELDOUT or bench.SERIES[name][0] in (
            "imu", "ett", "sunspots")  # fmt: skip
        for seed in (0,) if real else range(6):
            try:
                z, sp = bench.split_series(name, seed, 2000, 3000, data_dir)
            except bench.Skip:
                continue
            for k, snr in enumerate(bench.SNRS):
                for kind in NOISES:
                    noisy = add_noise(z, kind, snr, seed=1000 * seed + k)
                    yield f"{name} {seed} {snr:g} dB {kind}", noisy, z, slice(sp.val, sp.test)


def recording_cells(data_dir):
    """``(label, noisy, recording, scored part)`` of every cell of ``--set recordings``."""
    for rec, col, start, n, i, x in probe.scan_stretches(data_dir):
        for snr in (10.0, 20.0):
            noisy = add_noise(x, "gaussian", snr, seed=i)
            yield f"{rec} {col[:12]} {start}+{n} {snr:g} dB", noisy, x, slice(None)


def lag_polynomial(*factors) -> np.ndarray:
    """The product of lag polynomials given as ``{lag: coefficient}`` (the 1 at lag 0 implied)."""
    out = np.ones(1)
    for factor in factors:
        poly = np.zeros(max(factor) + 1)
        poly[0] = 1.0
        for lag, c in factor.items():
            poly[lag] = c
        out = np.convolve(out, poly)
    return out


#: ``--set seasonal``: seasonal processes written down (2026-12-07) after the seasonal term was
#: decided on the fourth unseen suite's seasonal ARMA and before it ran on any of these;
#: (MA polynomial, AR polynomial) as lfilter takes them
SEASONAL = {
    "SAR(1)_12 0.8": (lag_polynomial(), lag_polynomial({12: -0.8})),
    "AR(1)xSARMA(1,1)_7": (lag_polynomial({7: -0.3}), lag_polynomial({1: -0.4}, {7: -0.85})),
    "AR(2)xSAR(1)_52": (lag_polynomial(), lag_polynomial({1: -1.2, 2: 0.5}, {52: -0.7})),
    "MA(1)xSARMA(1,1)_24": (lag_polynomial({1: -0.4}, {24: -0.6}), lag_polynomial({24: -0.95})),
    "AR(1) 0.9xSAR(1)_30": (lag_polynomial(), lag_polynomial({1: -0.9}, {30: -0.6})),
    "SMA(1)_10": (lag_polynomial({10: 0.8}), lag_polynomial()),
}


#: ``--set seasonal2``: seasonal processes written down (2026-12-07) after the seasonal model's
#: own bound-share checks were decided on ``--set seasonal`` and before they ran on these
SEASONAL2 = {
    "SAR(1)_4 0.7": (lag_polynomial(), lag_polynomial({4: -0.7})),
    "AR(1) -0.5xSAR(1)_20": (lag_polynomial(), lag_polynomial({1: 0.5}, {20: -0.85})),
    "ARMA(1,1)xSMA(1)_7": (lag_polynomial({1: 0.4}, {7: 0.6}), lag_polynomial({1: -0.7})),
    "SAR(2)_12": (lag_polynomial(), lag_polynomial({12: -0.5, 24: -0.3})),
    "MA(2)xSAR(1)_16": (lag_polynomial({1: 0.5, 2: 0.3}), lag_polynomial({16: -0.9})),
    "AR(1) 0.3xSARMA(1,1)_9": (lag_polynomial({9: -0.4}), lag_polynomial({1: -0.3}, {9: -0.8})),
}


#: ``--set lines``: linear processes under sinusoids (deterministic spectral lines), written down
#: (2026-12-07) after the seasonal ARMA of the second unseen suite (``seasonal_ar``: a daily and a
#: weekly sine over an AR(1)) showed the Whittle fits taking the lines' shoulders for noise, and
#: before anything of ours ran on these: (MA polynomial, AR polynomial, ((period, amplitude), ...)),
#: the process scaled to unit variance before the sines (random phases) are added
LINES = {
    "AR(1) 0.7 + sin 12.5": (lag_polynomial(), lag_polynomial({1: -0.7}), ((12.5, 1.0),)),
    "AR(2) + sin 7.3, 50": (
        lag_polynomial(),
        lag_polynomial({1: -1.2, 2: 0.5}),
        ((7.3, 0.7), (50.0, 0.5)),
    ),
    "ARMA(1,1) + sin 30 and 15": (
        lag_polynomial({1: 0.4}),
        lag_polynomial({1: -0.8}),
        ((30.0, 1.5), (15.0, 0.5)),
    ),
    "MA(1) 0.6 + sin 5.5": (lag_polynomial({1: 0.6}), lag_polynomial(), ((5.5, 0.4),)),
    "AR(1) 0.95 + sin 100, 9": (
        lag_polynomial(),
        lag_polynomial({1: -0.95}),
        ((100.0, 1.0), (9.0, 0.3)),
    ),
    "AR(1) 0.5 + harmonics of 20": (
        lag_polynomial(),
        lag_polynomial({1: -0.5}),
        ((20.0, 1.0), (10.0, 0.5), (20.0 / 3.0, 0.25)),
    ),
}


#: ``--set lines2``: six more, written down (2026-12-07) after ``--set lines`` and the recordings
#: decided that the plain model's fit without the lines is taken only where its answer is lower
#: (the first version replaced the fit with the lines), before that rule ran on these
LINES2 = {
    "AR(2) 0.5, 0.3 + sin 16.7": (
        lag_polynomial(),
        lag_polynomial({1: -0.5, 2: -0.3}),
        ((16.7, 0.8),),
    ),
    "AR(1) 0.8 + sin 40, 8.1": (
        lag_polynomial(),
        lag_polynomial({1: -0.8}),
        ((40.0, 1.2), (8.1, 0.4)),
    ),
    "ARMA(2,1) + sin 11": (
        lag_polynomial({1: 0.5}),
        lag_polynomial({1: -1.0, 2: 0.3}),
        ((11.0, 1.0),),
    ),
    "AR(1) 0.6 + square wave 25": (
        lag_polynomial(),
        lag_polynomial({1: -0.6}),
        ((25.0, 1.0), (25.0 / 3, 1.0 / 3), (5.0, 0.2)),
    ),
    "MA(2) + sin 64": (lag_polynomial({1: 0.7, 2: 0.3}), lag_polynomial(), ((64.0, 1.0),)),
    "AR(1) 0.9 + sin 6.2 small": (lag_polynomial(), lag_polynomial({1: -0.9}), ((6.2, 0.25),)),
}


def line_cells(processes=None, seeds=range(13, 17), burn_in: int = 500):
    """``(label, noisy, clean, scored part)`` of every cell of ``--set lines`` (``processes``
    None: ``LINES``): each process under its sines, one series per seed of ``seeds``, 10 and
    20 dB, both noises."""
    for name, (b, a, sines) in (LINES if processes is None else processes).items():
        for seed in seeds:
            rng = np.random.default_rng(seed)
            x = lfilter(b, a, rng.normal(size=2000 + burn_in))[burn_in:]
            x = x / x.std()
            t = np.arange(x.size)
            for period, amplitude in sines:
                x = x + amplitude * np.sin(2 * math.pi * t / period + rng.uniform(0, 2 * math.pi))
            yield from noisy_cells(f"{name} {seed}", x, seed)


def fresh_cells(processes=None, burn_in: int = 500, seeds=(5, 6, 7, 8)):
    """``(label, noisy, clean, scored part)`` of every cell of ``--set fresh`` (``processes``
    None: ``noise_level_probe.FRESH``) or of another set of linear processes, one series per
    seed of ``seeds``."""
    for name, (b, a) in (probe.FRESH if processes is None else processes).items():
        for seed in seeds:
            e = np.random.default_rng(seed).normal(size=2000 + burn_in)
            yield from noisy_cells(f"{name} {seed}", lfilter(b, a, e)[burn_in:], seed)


def noisy_cells(label: str, x: np.ndarray, seed: int):
    """The four cells of the clean series ``x`` (standardised with its training part's
    statistics): 10 and 20 dB, Gaussian and Student-t noise of seeds ``1000 * seed + k``."""
    sp = Split.fractions(len(x), 0.6, 0.2)
    z = (x - x[: sp.train].mean()) / x[: sp.train].std()
    for k, snr in enumerate((10.0, 20.0)):
        for kind in NOISES:
            noisy = add_noise(z, kind, snr, seed=1000 * seed + k)
            yield f"{label} {snr:g} dB {kind}", noisy, z, slice(sp.val, sp.test)


def seasonal_summary(rows: list, n_cells: int, change: str = "the seasonal term") -> None:
    ratios = [r for r in rows if not isinstance(r, tuple)]
    shares = [r[0] for r in rows if isinstance(r, tuple)]
    high = [x for x in shares if x > linear_noise.BOUND_SHARE]
    print(
        f"{n_cells} cells; {change} changed the default level in {len(ratios)}: RMSE "
        f"over the fit before, geometric mean {geometric_mean(ratios):.3f}, worse in "
        f"{sum(r > 1.0 for r in ratios)} (largest {max(ratios, default=float('nan')):.3f}); "
        f"unchanged though BIC chose the seasonal model: {len(shares)}, the bound above "
        f"{linear_noise.BOUND_SHARE} of the variance in {len(high)} of them"
        + (f" ({min(high):.2f}-{max(high):.2f})" if high else "")
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    set_names = ("cells", "fresh", "recordings", "seasonal", "seasonal2", "lines", "lines2")
    p.add_argument("--set", choices=set_names, required=True)
    p.add_argument("--data-dir", default=None)
    p.add_argument(
        "--after",
        choices=list(bench.SERIES),
        default=None,
        help="--set cells: only the series listed after this one (to finish a stopped run)",
    )
    against = p.add_mutually_exclusive_group()
    against.add_argument(
        "--without-seasonal",
        action="store_true",
        help="compare with the default without the seasonal term instead",
    )
    against.add_argument(
        "--lines-kept",
        action="store_true",
        help="compare with the default whose Whittle fits keep the spectral lines instead",
    )
    against.add_argument(
        "--plain-bound-share",
        action="store_true",
        help="compare with the default where the seasonal model has the plain one's bound-share "
        "checks instead",
    )
    args = p.parse_args(argv)
    later = range(9, 13)  # seeds no other set uses
    sets = {"cells": lambda: bench_cells(args.data_dir, args.after), "fresh": fresh_cells,
            "recordings": lambda: recording_cells(args.data_dir),
            "seasonal": lambda: fresh_cells(SEASONAL, burn_in=3000),
            "seasonal2": lambda: fresh_cells(SEASONAL2, burn_in=3000, seeds=later),
            "lines": line_cells,
            "lines2": lambda: line_cells(LINES2, seeds=range(17, 21))}  # fmt: skip
    rows, n_cells = [], 0
    for one in sets[args.set]():
        n_cells += 1
        if args.plain_bound_share or args.lines_kept:
            before = plain_bound_share if args.plain_bound_share else lines_kept
            seasonal_cell(*one, rows, before=before)
        else:
            (seasonal_cell if args.without_seasonal else cell)(*one, rows)
    if args.plain_bound_share:
        seasonal_summary(rows, n_cells, "exempting the seasonal model from the bound-share checks")
        return 0
    if args.lines_kept:
        seasonal_summary(rows, n_cells, "leaving out the spectral lines")
        return 0
    if args.without_seasonal:
        seasonal_summary(rows, n_cells)
        return 0
    if args.set == "recordings":
        print(f"{n_cells} stretches x SNRs")
    summary(rows, args.set == "recordings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
