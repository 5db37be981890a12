"""Would a seasonal term in the Whittle fit find the noise floor of a seasonal linear signal?

``tssdpa.estimators.linear_noise`` fits an AR(p) or ARMA(p, 1) spectrum plus white noise to
tell the noise floor of a rough linear signal from the signal's own innovations. A seasonal
ARMA -- the fourth unseen suite's ``(1 - 0.6B)(1 - 0.9B^24) x = (1 - 0.5B^24) e`` -- lies
outside both, so the bound stays (its level 5.5-6x the truth at 20 dB on development seeds,
``noise_level_probe.py --fit --series seasonal_arma``). This probe (not the library) fits,
for each series, seed and SNR of the benchmark, both the ARMA(p, 1) + noise spectrum and the
same times a multiplicative seasonal factor ``|1 + Θ e^(-isw)|² / |1 - Φ e^(-isw)|²``, the
period ``s`` the lag of the series' largest autocorrelation past its first minimum
(:func:`period`; none below ``MIN_PEAK``: not tried), p = 1-4 by BIC
within each family, on the whole periodogram (no bins; numerical gradients, two starts).
It prints the residual bound, each family's fitted floor over the noise added, the BICs
(lower is better), and the seasonal fit's p, Φ and Θ.

It was the probe for the change that followed (the seasonal model in
``tssdpa.estimators.whittle`` / ``linear_noise``, 2026-12-07, with its own period rule,
coefficient limit and misfit test: docs/filters.md, "The seasonal spectrum"), not the rule:
none of ``linear_noise_level``'s conditions (the misfit test, the identification, the
interval's top) is applied here.

    .venv/bin/python experiments/seasonal_floor_probe.py --series seasonal_arma
    .venv/bin/python experiments/seasonal_floor_probe.py --series ar1 ar2 arma21 lorenz
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import scipy.optimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_autofit as bench  # noqa: E402
import noise_level_probe as probe  # noqa: E402 -- registers the unseen suites' series

from tssdpa.data import add_noise  # noqa: E402
from tssdpa.estimators.white_noise import noise_level  # noqa: E402
from tssdpa.estimators.whittle import _ar_from_partial, periodogram  # noqa: E402

ORDERS = (1, 2, 3, 4)


#: a period is a peak of the autocorrelation past its first minimum, at least this high
MIN_PEAK = 0.2


def period(v: np.ndarray, shortest: int = 3) -> int | None:
    """The lag of the largest autocorrelation of ``v`` in ``shortest`` .. n/4 past the first
    local minimum of the autocorrelation, where that is at least ``MIN_PEAK``; else None.
    (The largest value alone was the shortest lag on a smooth series -- the SIR epidemic:
    "period" 3 -- and the seasonal spectrum then won BIC as mere extra freedom.)"""
    v = v - v.mean()
    acf = np.fft.irfft(np.abs(np.fft.rfft(v, 2 * v.size)) ** 2)[: v.size // 4]
    acf = acf / acf[0]
    rising = np.flatnonzero(np.diff(acf[1:]) > 0)  # acf[l + 2] > acf[l + 1]
    if not rising.size:
        return None
    start = max(shortest, int(rising[0]) + 1)
    if start >= acf.size:
        return None
    lag = start + int(np.argmax(acf[start:]))
    return lag if acf[lag] >= MIN_PEAK else None


def whittle(w, power, p: int, s: int, seasonal: bool) -> tuple[float, float, tuple]:
    """``(nll, noise variance, (Φ, Θ))`` of the ARMA(p, 1) [x seasonal (1, 1)_s] + noise
    Whittle fit to ``(w, power)`` (partial autocorrelations and MA / seasonal coefficients
    through tanh, the variances through exp, in units of the periodogram's mean)."""
    E = np.exp(-1j * np.outer(w, np.arange(1, p + 1)))  # (F, p)
    e1, es = np.exp(-1j * w), np.exp(-1j * s * w)
    scale = float(np.mean(power))
    power = power / scale

    def unpack(th):
        a, _ = _ar_from_partial(np.tanh(th[:p]))
        b = math.tanh(th[p])
        phi, theta = (math.tanh(th[p + 1]), math.tanh(th[p + 2])) if seasonal else (0.0, 0.0)
        return a, b, phi, theta, math.exp(th[-2]), math.exp(th[-1])

    def nll(th):
        a, b, phi, theta, q, noise = unpack(th)
        shape = np.abs(1 + b * e1) ** 2 * np.abs(1 + theta * es) ** 2
        shape /= np.abs(1 - E @ a) ** 2 * np.abs(1 - phi * es) ** 2
        S = noise + q * shape
        return float(np.sum(np.log(S) + power / S))

    k = p + 1 + 2 * seasonal + 2
    bounds = [(-10.0, 10.0)] * (k - 2) + [(-30.0, 30.0)] * 2
    best = None
    for start in (0.0, 0.5):
        th0 = np.full(k, start)
        th0[-2:] = math.log(0.5)
        res = scipy.optimize.minimize(nll, th0, method="L-BFGS-B", bounds=bounds)
        if best is None or res.fun < best.fun:
            best = res
    _, _, phi, theta, _, noise = unpack(best.x)
    return best.fun + len(w) * math.log(scale), noise * scale, (phi, theta)


def best_by_bic(w, power, s: int, seasonal: bool) -> tuple[float, float, int, tuple]:
    """``(BIC, noise variance, p, (Φ, Θ))`` of the family's order of least BIC."""
    out = None
    for p in ORDERS:
        nll, noise, coef = whittle(w, power, p, s, seasonal)
        bic = 2.0 * nll + (p + 1 + 2 * seasonal + 2) * math.log(len(w))
        if out is None or bic < out[0]:
            out = (bic, noise, p, coef)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--series", nargs="+", default=["seasonal_arma"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    print("series seed (period): per SNR, bound / ARMA floor / seasonal floor over the noise "
          "added; BIC ARMA vs seasonal; seasonal p, Phi, Theta")  # fmt: skip
    for name in args.series:
        for seed in args.seeds:
            z, _ = probe.series(name, seed, args.data_dir)
            s = period(z)
            if s is None:
                print(f"{name} {seed}: no period (no autocorrelation peak of {MIN_PEAK} past "
                      "its first minimum): the seasonal spectrum is not tried")  # fmt: skip
                continue
            cells = []
            for k, snr in enumerate(bench.SNRS):
                noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
                true = float(np.std(noisy - z))
                bound = float(noise_level(noisy[:, None])[0])
                w, power, _ = periodogram(noisy)
                plain = best_by_bic(w, power, s, False)
                seas = best_by_bic(w, power, s, True)
                cells.append(
                    f"{snr:g} dB {bound / true:.2f} / {math.sqrt(plain[1]) / true:.2f} / "
                    f"{math.sqrt(seas[1]) / true:.2f}, BIC {plain[0]:.0f} vs {seas[0]:.0f}, "
                    f"p{seas[2]} {seas[3][0]:.2f} {seas[3][1]:.2f}"
                )
            print(f"{name} {seed} ({s}): " + " | ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
