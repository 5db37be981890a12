"""How much SURE the local adaptation in time gains on development series, against what it does
to the error -- the evidence for the rule of ``projection_local.fit_local``.

For every development denoising cell (the real channels of ``autofit_heldout.py``, seed 0; the
synthetic series of ``bench_autofit.py``, seeds 1 and 2; 0, 10 and 20 dB) it fits
``ProjectionFilter(causal=False, local_window=None)`` and scores the adaptation over each width
of ``projection_local.LOCAL_WIDTHS``: its SURE gain on the fit block in units of the noise
variance (as ``fit`` computes it, with the weights' own divergence), the gain's standard error
(``gain_standard_errors``) in the same units, and the RMSE ratio adapted / not adapted on the
test part and on the whole series, each width adapted by force. It prints the width of largest
gain per cell. Then, for a few margins, the geometric mean and worst ratio if each cell adapted
as ``fit`` does -- over the width of largest gain among those whose gain passes the rule --
under the margin alone (``LOCAL_MARGIN`` set to it) and under the margin and the standard
error together (``fit``'s rule). The benchmark's own series (its test cells) are left out.
Last, the same for the stationary two-tone sines of ``tests/filters/test_projection_local.py``.

Usage::

    .venv/bin/python experiments/local_margin_probe.py --data-dir ../shared/datasets
    # one benchmark cell's figures, for reporting (its margin tables count it as "real")
    .venv/bin/python experiments/local_margin_probe.py --series imu_fusion_gz
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- registers the real development series
import bench_autofit as bench  # noqa: E402

from tssdpa.filters import ProjectionFilter  # noqa: E402
from tssdpa.filters.projection_local import LOCAL_WIDTHS, width_scores  # noqa: E402

MARGINS = (0.0, 0.0025, 0.005, 0.01, 0.02)


def _widths(noisy, clean, test) -> list[dict]:
    """Per width of LOCAL_WIDTHS: the SURE gain and its standard error over s^2 as ``fit``
    computes them, and the RMSE ratio adapted / not on ``test`` and on the whole series."""
    f = ProjectionFilter(causal=False, local_window=None).fit(noisy)
    plain = np.asarray(f.filter(noisy))
    xs, noise = noisy[: f.max_fit_samples, None], f.noise_level_
    s2 = float(np.mean(noise**2))
    div, before, after, _, nonlocal_part, errors = width_scores(f, xs, None, noise, LOCAL_WIDTHS)
    rows = []

    def ratio(adapted, part):
        return bench.rmse(adapted[part], clean[part])[0] / bench.rmse(plain[part], clean[part])[0]

    for i, width in enumerate(LOCAL_WIDTHS):
        f.local_window = width
        f.local_ = {"window": width, "divergence": div, "nonlocal_divergence": nonlocal_part,
                    "noise": list(map(float, noise)), "channels": [True]}  # fmt: skip
        adapted = np.asarray(f.filter(noisy))
        rows.append({
            "width": width, "gain": float(before[0] - after[i, 0]) / s2,
            "error": float(errors[i, 0]) / s2,
            "test": ratio(adapted, test), "whole": ratio(adapted, slice(None)),
        })  # fmt: skip
    return rows


def _kept(widths: list[dict], margin: float, with_error: bool) -> dict | None:
    """The width ``fit`` keeps under the rule: of those whose gain passes it, the largest gain."""
    ok = [w for w in widths if w["gain"] > max(margin, w["error"] if with_error else 0.0)]
    return max(ok, key=lambda w: w["gain"]) if ok else None


def _line(r: dict) -> str:
    w = max(r["widths"], key=lambda w: w["gain"])
    snr = "-" if r["snr"] is None else f"{r['snr']:g}"  # the two-tone sines: noise 0.3
    return (f"{r['series']:>20} {r['seed']:>2} {snr:>3} {w['width']} | {w['gain']:+.4f} "
            f"{w['error']:.4f} | {w['test']:.3f} {w['whole']:.3f}")  # fmt: skip


def _tones() -> list[dict]:
    """The noisy two-tone sines of ``test_a_stationary_signal_keeps_the_fitted_output``
    (stationary: the adaptation has nothing to gain there)."""
    t, rows = np.arange(2000), []
    for tones, seed in (((1.0, 0.0), 1), *(((1.0, 0.5), s) for s in (11, 12, 13, 14))):
        clean = tones[0] * np.sin(2 * np.pi * t / 50) + tones[1] * np.sin(2 * np.pi * t / 17)
        noisy = clean + 0.3 * np.random.default_rng(seed).normal(size=t.size)
        widths = _widths(noisy, clean, slice(None))
        rows.append({"series": f"tones {tones}", "seed": seed, "snr": None, "widths": widths})
    return rows


def _unit(args) -> list:
    name, seed, data_dir = args
    split = bench.worker_split(name, seed, data_dir)
    if split is None:
        return []
    z, sp = split
    test, rows = slice(sp.val, sp.test), []
    for k, snr in enumerate(bench.SNRS):
        noisy = bench.add_noise(z, "gaussian", snr, seed=1000 * seed + k)
        rows.append({"series": name, "seed": seed, "snr": snr,
                     "widths": _widths(noisy, z, test)})  # fmt: skip
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--series", nargs="+", default=None,
                   help="score these series of bench_autofit / autofit_heldout instead, seed 0 "
                   "(a benchmark cell: for reporting, not for setting the rule)")  # fmt: skip
    args = p.parse_args(argv)
    synthetic = [n for n, v in bench.SERIES.items() if v[0] not in ("sunspots", "imu", "ett")]
    units = [(n, 0, args.data_dir) for n in autofit_heldout.HELDOUT]
    units += [(n, s, args.data_dir) for s in (1, 2) for n in synthetic]
    if args.series:
        units = [(n, 0, args.data_dir) for n in args.series]
    with ProcessPoolExecutor(2) as pool:
        rows = [r for rs in pool.map(_unit, units) for r in rs]
    rows.sort(key=lambda r: max(w["gain"] for w in r["widths"]))
    print("series seed dB width of largest gain | its SURE gain / s^2, standard error / s^2 | "
          "RMSE adapted / not: test, whole series")  # fmt: skip
    for r in rows:
        print(_line(r))
    tones = _tones()
    groups = {"real": [r for r in rows if r["seed"] == 0],
              "synthetic": [r for r in rows if r["seed"] != 0], "two-tone": tones}  # fmt: skip
    for margin in MARGINS:
        for with_error in (False, True):
            rule = "margin and standard error" if with_error else "margin alone"
            for group, picked in groups.items():
                if not picked:
                    continue
                for part in ("test", "whole"):
                    kept = [_kept(r["widths"], margin, with_error) for r in picked]
                    v = [w[part] if w else 1.0 for w in kept]
                    n = sum(w is not None for w in kept)
                    print(f"margin {margin:.4f}, {rule:>25}, {group:>9} {part:>5}: geometric "
                          f"mean {np.exp(np.mean(np.log(v))):.3f}, worst {max(v):.3f}, "
                          f"{n} of {len(v)} adapt")  # fmt: skip
    for r in tones:
        print(_line(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
