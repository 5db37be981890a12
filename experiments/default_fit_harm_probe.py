"""Where does the default self-supervised fit harm a signal? ``ProjectionFilter(causal=c).fit(x)``
(nothing else given) on a battery of realistic and pathological sensor signals.

For each case (a clean signal and the recording given to ``fit``) and each of ``causal=False``
and ``causal=True``: the RMSE against the clean signal of the recording itself (``ident``), of
the fitted filter's output on it (``ours``) and of the best simple smoother chosen with the
clean signal (``oracle``: centred moving averages of odd widths 1..101 and Savitzky-Golay
windows 5..101 of order 2..4 for the zero-phase fit; trailing moving averages of widths
1..100 for the causal fit; NaNs are interpolated linearly for the oracles). RMSEs are taken
over the samples where the recording is finite; multichannel cases in units of each channel's
range, then averaged. Also printed: the estimated noise level (first channel), the chosen
window / embedding / degree / sigma, the seconds the fit + filter took, and flags:

    D  damaged: ours > 1.05 * ident (noisy cases)
    C  clean signal changed: RMS change > 1% of its range (noise-0 cases)
    O  ours > 2 * oracle (and above 1% of the range)
    N  NaN or inf in the output;  M  the input was mutated;  X  crashed
    W  warnings raised (their text with --warnings);  S  slow: > 2e-3 s per sample

Run (about four minutes on two cores; ``--only`` takes substrings of case names):

    PYTHONPATH=. python experiments/default_fit_harm_probe.py
    PYTHONPATH=. python experiments/default_fit_harm_probe.py --only square,held --warnings
    PYTHONPATH=. python experiments/default_fit_harm_probe.py --long   # adds a 100k-sample case
    PYTHONPATH=. python experiments/default_fit_harm_probe.py --setpoint-seeds 40
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.signal import chirp, savgol_filter, sawtooth

from tssdpa.filters import ProjectionFilter
from tssdpa.signal.missing import fill_missing


def snr_noise(clean: np.ndarray, db: float) -> float:
    """Noise standard deviation giving ``db`` dB of SNR on ``clean``."""
    return float(np.std(clean) / 10 ** (db / 20))


def pulses(n: int, rng) -> np.ndarray:
    """0/1 digital pulses of random lengths (10-60 samples) and gaps."""
    out, i, level = np.zeros(n), 0, 0.0
    while i < n:
        k = int(rng.integers(10, 60))
        out[i : i + k] = level
        i, level = i + k, 1.0 - level
    return out


def setpoint(n: int, mean_len: int, rng) -> np.ndarray:
    """A clean piecewise-constant signal (a setpoint, a state): levels a random walk of N(0, 1)
    steps, each held for mean_len / 2 .. 3 mean_len / 2 samples."""
    out, i, level = np.zeros(n), 0, 0.0
    while i < n:
        k = int(rng.integers(mean_len // 2, 3 * mean_len // 2))
        out[i : i + k] = level
        i, level = i + k, level + rng.normal()
    return out


def build_cases(n: int, seed: int, long: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, clean (T,) or (T, C), recording) for every case."""
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=float)
    sig = {
        "pulse01": pulses(n, rng),
        "square": np.sign(np.sin(2 * np.pi * t / 100 + 0.1)),
        "sawtooth": sawtooth(2 * np.pi * t / 150),
        "staircase": np.floor(t / 50.0),
        "adc_ramp": np.round(20 * t / n + 5 * np.sin(2 * np.pi * t / 400)),
        "clipped_sine": np.clip(1.5 * np.sin(2 * np.pi * t / 120), -1, 1),
        "one_step": np.where(t < n // 2, 0.0, 1.0),
        "chirp": chirp(t, f0=0.002, f1=0.08, t1=n),
        "sines": np.sin(2 * np.pi * t / 60) + 0.5 * np.sin(2 * np.pi * t / 17 + 1),
        "pw_linear": np.interp(t, np.linspace(0, n, 9), rng.normal(0, 1, 9)),
    }
    flags = np.zeros(n)
    for st in rng.choice(n - 5, 8, replace=False):
        flags[st : st + int(rng.integers(1, 4))] = 1.0  # an event flag: pulses of 1-3 samples
    sig |= {"event_flags": flags, "clip_int": np.clip(np.round(10 * sig["sines"]), -8, 8)}
    sig |= {"held4": np.repeat(sig["sines"][::4], 4)[:n], "setpoint4n": setpoint(4 * n, 20, rng)}
    sig["staircase4n"] = np.floor(np.arange(4 * n) / 50.0)  # integer counts, 80 steps
    cases = [(f"clean:{k}", v, v.copy()) for k, v in sig.items()]
    for k in ("square", "sines", "chirp", "pw_linear", "pulse01", "sawtooth"):
        for db in (20, 5):
            s = snr_noise(sig[k], db)
            cases.append((f"gauss{db}dB:{k}", sig[k], sig[k] + s * rng.normal(size=n)))
    for k in ("sines", "square"):
        s = snr_noise(sig[k], 10)
        cases.append((f"t3_10dB:{k}", sig[k], sig[k] + s * rng.standard_t(3, n) / np.sqrt(3)))
        cases.append((f"unif10dB:{k}", sig[k], sig[k] + s * np.sqrt(12) * (rng.random(n) - 0.5)))
        q = 4 * s  # quantisation only: rounding to a grid, no other noise
        cases.append((f"quantised:{k}", sig[k], q * np.round(sig[k] / q)))
    ramp = 20 * t / n + 5 * np.sin(2 * np.pi * t / 400)  # adc_ramp before rounding
    cases.append(("rounded:adc_ramp", ramp, np.round(ramp)))
    cases.append(("rounded:clip_int", np.clip(10 * sig["sines"], -8, 8), sig["clip_int"]))
    sp = sig["setpoint4n"]
    cases.append(("gauss20dB:setpoint4n", sp, sp + snr_noise(sp, 20) * rng.normal(size=sp.size)))
    ar = np.zeros(n)
    for i in range(1, n):  # AR(1), phi 0.95: its white innovations look like noise (known)
        ar[i] = 0.95 * ar[i - 1] + rng.normal()
    cases.append(("gauss10dB:ar1", ar, ar + snr_noise(ar, 10) * rng.normal(size=n)))
    base, s = sig["sines"], snr_noise(sig["sines"], 10)
    noisy = base + s * rng.normal(size=n)
    cases.append(("offset1e6:sines", 1e6 + base, 1e6 + noisy))
    cases.append(("scale1e-9:sines", 1e-9 * base, 1e-9 * noisy))
    cases.append(("float32:sines", base, noisy.astype(np.float32)))
    adc = np.round(100 * base + 500)
    cases.append(
        ("int16:adc", 100 * base + 500, (adc + np.round(10 * rng.normal(size=n))).astype(np.int16))
    )
    drop = noisy.copy()
    drop[rng.choice(n, n // 50, replace=False)] = np.nan
    cases.append(("nan_single:sines", base, drop))
    runs = noisy.copy()
    for st in rng.choice(n - 40, 5, replace=False):
        runs[st : st + int(rng.integers(5, 40))] = np.nan
    cases.append(("nan_runs:sines", base, runs))
    spk = noisy.copy()
    idx = rng.choice(n, n // 100, replace=False)
    spk[idx] += rng.choice([-1, 1], len(idx)) * 8 * np.std(base)
    cases.append(("spikes:sines", base, spk))
    for k in (4, 10):
        held = np.repeat(noisy[::k], k)[:n]
        cases.append((f"held{k}:sines", base, held))
    drift = 2 * t / n + 0.3 * np.sin(2 * np.pi * t / n * 3)
    cases.append(("drift+noise", drift, drift + 0.1 * rng.normal(size=n)))
    mc = np.column_stack([1e-3 * base, sig["square"], 1e4 * sig["pw_linear"]])
    mc_noise = rng.normal(size=mc.shape) * np.array([1e-3 * s, 0.3, 1e4 * 0.1])
    cases.append(("multichannel_scales", mc, mc + mc_noise))
    for m in (20, 50, 100):
        cases.append((f"short{m}:sines", base[:m], noisy[:m]))
        cases.append((f"short{m}:clean_sq", sig["square"][:m], sig["square"][:m].copy()))
    if long:
        tl = np.arange(100_000, dtype=float)
        cl = np.sin(2 * np.pi * tl / 60) + 0.5 * np.sin(2 * np.pi * tl / 17 + 1)
        cases.append(("long100k:sines", cl, cl + s * rng.normal(size=len(tl))))
    return cases


def rmse(y: np.ndarray, clean: np.ndarray, mask: np.ndarray) -> float:
    """RMSE over ``mask``, per channel in units of the clean channel's range, averaged."""
    y, clean = (np.asarray(a, dtype=float).reshape(len(clean), -1) for a in (y, clean))
    mask = np.asarray(mask, dtype=bool).reshape(len(clean), -1)
    rng = np.ptp(clean, axis=0)
    scale = np.where(rng > 0, rng, 1.0) if clean.shape[1] > 1 else np.ones(1)
    return float(np.mean([np.sqrt(np.mean(((y[:, c] - clean[:, c]) / scale[c])[mask[:, c]] ** 2))
                          for c in range(clean.shape[1])]))  # fmt: skip


def oracle(x: np.ndarray, clean: np.ndarray, mask: np.ndarray, causal: bool) -> float:
    """Best simple smoother chosen with the clean signal, channel by channel."""
    x2, c2 = (np.asarray(a, dtype=float).reshape(len(clean), -1) for a in (x, clean))
    m2 = np.asarray(mask, dtype=bool).reshape(len(clean), -1)
    best = np.zeros_like(x2)
    for c in range(x2.shape[1]):
        v, cands = fill_missing(x2[:, [c]], causal=False)[:, 0], []  # interpolated
        n = len(v)
        if causal:
            cs = np.cumsum(np.r_[0.0, v])
            for w in range(1, min(101, n + 1)):
                cands.append((cs[1:] - cs[np.maximum(np.arange(1, n + 1) - w, 0)])
                             / np.minimum(np.arange(1, n + 1), w))  # fmt: skip
        else:
            for w in range(1, min(102, n + 1), 2):
                cands.append(savgol_filter(v, w, 0, mode="interp") if w > 1 else v)
                for p in (2, 3, 4):
                    if 5 <= w and p < w:
                        cands.append(savgol_filter(v, w, p, mode="interp"))
        errs = [np.mean((y - c2[:, c])[m2[:, c]] ** 2) for y in cands]
        best[:, c] = cands[int(np.argmin(errs))]
    return rmse(best, clean, mask)


def run_case(name, clean, x, causal, show_warnings):
    before = np.array(x, copy=True)
    mask = np.isfinite(np.asarray(x, dtype=float))
    row = {"case": name, "mode": "causal" if causal else "zero", "flags": ""}
    row["ident"] = rmse(np.where(mask, x, 0.0), clean, mask)
    row["oracle"] = oracle(x, clean, mask, causal)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            f = ProjectionFilter(causal=causal).fit(x)
            y = np.asarray(f.filter(x), dtype=float)
        except Exception as exc:  # noqa: BLE001 - a crash is a finding
            row.update(flags="X", ours=np.nan, err=f"{type(exc).__name__}: {exc}"[:160])
            return row
    row["sec"] = time.perf_counter() - t0
    row["ours"] = rmse(y, clean, mask)
    p = f.best_params_
    row["params"] = f"w={p['window']} m={p['embedding']} p={p['degree']} s={p['sigma']:.3g}"
    if p.get("base"):
        row["params"] += " +bw"
    row["noise"] = float(np.ravel(f.noise_level_)[0])
    noise0 = name.startswith(("clean", "short")) and "clean" in name
    if not np.isfinite(y).all():
        row["flags"] += "N"
    if (
        not np.array_equal(before, np.asarray(x), equal_nan=True)
        or before.dtype != np.asarray(x).dtype
    ):
        row["flags"] += "M"
    span = float(np.ptp(clean)) or max(float(np.abs(clean).max()), 1.0)  # a constant: its size
    rel = row["ours"] if np.ndim(clean) > 1 else row["ours"] / span
    if noise0 and rel > 0.01:
        row["flags"] += "C"
    if not noise0 and row["ours"] > 1.05 * row["ident"]:
        row["flags"] += "D"
    if row["ours"] > 2 * row["oracle"] and rel > 0.01:
        row["flags"] += "O"
    if caught:
        row["flags"] += "W"
        if show_warnings:
            row["err"] = " | ".join(
                f"{w.category.__name__}: {str(w.message)[:120]}" for w in caught
            )
    if row["sec"] > 2e-3 * len(clean) and row["sec"] > 5:
        row["flags"] += "S"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="samples per case")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated substrings of case names")
    ap.add_argument("--mode", choices=("both", "zero", "causal"), default="both")
    ap.add_argument("--long", action="store_true", help="add a 100k-sample case (timed)")
    ap.add_argument("--warnings", action="store_true", help="print the warnings' text")
    ap.add_argument("--flagged", action="store_true", help="print flagged rows only")
    held_help = "only count the seeds whose clean setpoint (n, 4n) repeating_channels takes as held"
    ap.add_argument("--setpoint-seeds", type=int, default=0, help=held_help)
    args = ap.parse_args()
    if args.setpoint_seeds:
        from tssdpa.estimators.selection import repeating_channels

        for m in (args.n, 4 * args.n):
            hits = sum(bool(repeating_channels(setpoint(m, 20, np.random.default_rng(s))[:, None]))
                       for s in range(args.setpoint_seeds))  # fmt: skip
            print(
                f"setpoint of {m} samples: held readings in {hits} of {args.setpoint_seeds} seeds"
            )
        return
    keys = [k for k in args.only.split(",") if k]
    modes = {"both": (False, True), "zero": (False,), "causal": (True,)}[args.mode]
    print(f"{'case':24s} {'mode':6s} {'ident':>9s} {'ours':>9s} {'oracle':>9s} {'noise':>9s} "
          f"{'sec':>6s} {'flags':6s} params")  # fmt: skip
    for name, clean, x in build_cases(args.n, args.seed, args.long):
        if keys and not any(k in name for k in keys):
            continue
        for causal in modes:
            r = run_case(name, clean, x, causal, args.warnings)
            if args.flagged and not r["flags"]:
                continue
            print(f"{name:24s} {r['mode']:6s} {r['ident']:9.3g} {r['ours']:9.3g} "
                  f"{r['oracle']:9.3g} {r.get('noise', np.nan):9.3g} {r.get('sec', np.nan):6.2f} "
                  f"{r['flags']:6s} {r.get('params', '')}", flush=True)  # fmt: skip
            if r.get("err"):
                print(f"    {r['err']}")


if __name__ == "__main__":
    main()
