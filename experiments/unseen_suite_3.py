"""The third suite of unseen series for ``autofit_unseen.py --suite 3``.

Written down on 2026-12-07 (equations, parameters, sampling, horizons, real channels) before
the default fit ran on any of them, after the first and second suites had informed changes and
so stopped being unseen. Nothing is tuned on them. None is of a class of the first two suites
or of the development benchmark (``bench_autofit.py``), though two have kin there: the ECG is
a repeating waveform as the pulse train is (but five waves of both signs, an RR process and
baseline wander), and the ARMA(2, 1) is linear as the AR(2) is (but with a moving-average
part). The horizons of the chaotic systems run from 1 to about one Lyapunov time
(``experiments/unseen_suite_3.py lyapunov`` prints the estimates the notes quote, as
``unseen_suite_2.py lyapunov`` does: two trajectories 1e-8 apart, renormalised every sample,
over 4,000 samples after the burn-in, from the generators' starts without their seeded
perturbation), those of the periodic ones over the period the note names, those of the
stochastic ones a few steps.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from unseen_suite_2 import _lyapunov_flow, _lyapunov_map

from tssdpa.data.synthetic import _flow, _maps

#: P, Q, R, S, T waves of one beat: (seconds from the R peak, amplitude in mV, width in s)
ECG_WAVES = ((-0.2, 0.15, 0.025), (-0.03, -0.15, 0.01), (0.0, 1.0, 0.012),
             (0.03, -0.25, 0.01), (0.28, 0.3, 0.05))  # fmt: skip


def ecg(n: int, seed: int) -> np.ndarray:
    """A synthetic electrocardiogram at 125 Hz: Gaussian P, Q, R, S and T waves per beat
    (``ECG_WAVES``; the T wave's delay scales with sqrt(RR), as the QT interval does). RR
    intervals ``0.8 + 0.03 sin(2 pi 0.25 t_k) + u_k`` s with ``u_k = 0.7 u_(k-1) + 0.02 e``
    (respiratory sinus arrhythmia and slower heart-rate variability), and a respiratory
    baseline wander ``0.05 sin(2 pi 0.25 t + phi)`` mV: a repeating waveform whose beats come
    ~100 samples apart, never exactly so."""
    rng = np.random.default_rng(seed)
    fs, t0 = 125.0, 5.0  # the first 5 s of beats are dropped (the RR process's burn-in)
    beats, t, u = [], rng.uniform(0.0, 0.8), 0.0
    while t < t0 + n / fs + 2.0:
        u = 0.7 * u + 0.02 * rng.standard_normal()
        rr = 0.8 + 0.03 * math.sin(2 * math.pi * 0.25 * t) + u
        beats.append((t, rr))
        t += rr
    time = t0 + np.arange(n) / fs
    x = 0.05 * np.sin(2 * math.pi * 0.25 * time + rng.uniform(0, 2 * math.pi))
    for tk, rr in beats:
        near = np.abs(time - tk) < 1.0  # every wave lies within 0.5 s of its R peak
        for delay, amp, width in ECG_WAVES:
            at = tk + delay * (math.sqrt(rr / 0.8) if delay > 0.1 else 1.0)
            x[near] += amp * np.exp(-0.5 * ((time[near] - at) / width) ** 2)
    return x


def setar(n: int, seed: int) -> np.ndarray:
    """SETAR(2; 2, 2) with delay 2, of the kind Tong fitted to the log lynx cycle (these
    coefficients are set here, not a published fit):
    ``x_t = 0.62 + 1.25 x_(t-1) - 0.43 x_(t-2) + 0.2 e`` if ``x_(t-2) <= 3.25``, else
    ``x_t = 2.25 + 1.52 x_(t-1) - 1.24 x_(t-2) + 0.2 e``, ``e ~ N(0, 1)``: a noisy
    threshold cycle (nonlinear and stochastic)."""
    rng = np.random.default_rng(seed)
    e = 0.2 * rng.standard_normal(n + 500)
    x = np.full(n + 500, 3.0)
    for t in range(2, n + 500):
        if x[t - 2] <= 3.25:
            x[t] = 0.62 + 1.25 * x[t - 1] - 0.43 * x[t - 2] + e[t]
        else:
            x[t] = 2.25 + 1.52 * x[t - 1] - 1.24 * x[t - 2] + e[t]
    return x[500:]


def arma21(n: int, seed: int) -> np.ndarray:
    """ARMA(2, 1) ``x_t = 1.2 x_(t-1) - 0.6 x_(t-2) + e_t - 0.7 e_(t-1)``, ``e ~ N(0, 1)``:
    linear, roots of modulus 0.77 at a period of ~9 samples, and a moving-average part that an
    autoregression only approximates (its inverse decays as 0.7^k)."""
    from scipy.signal import lfilter

    e = np.random.default_rng(seed).standard_normal(n + 500)
    return lfilter([1.0, -0.7], [1.0, -1.2, 0.6], e)[500:]


def _halvorsen(s, a=1.27):
    x, y, z = s
    return np.array([-a * x - 4.0 * y - 4.0 * z - y * y, -a * y - 4.0 * z - 4.0 * x - z * z,
                     -a * z - 4.0 * x - 4.0 * y - x * x])  # fmt: skip


def halvorsen(n: int, seed: int) -> np.ndarray:
    """Halvorsen's cyclically symmetric attractor (a = 1.27, Sprott's), x every 0.05."""
    rng = np.random.default_rng(seed)
    return _flow(_halvorsen, [-5.0, 0.0, 0.0] + rng.normal(0, 0.1, 3), n, 0.05, 2000,
                 max_step=0.005)[:, 0].copy()  # fmt: skip


def _manneville(x):
    return ((x + x**1.5) % 1.0,)


def pomeau_manneville(n: int, seed: int) -> np.ndarray:
    """Pomeau-Manneville map ``x' = x + x^1.5 (mod 1)``, one sample per iterate: laminar
    stretches creeping away from 0, broken by chaotic bursts (type-I intermittency)."""
    x0 = np.random.default_rng(seed).uniform(0.1, 0.9)
    return _maps(_manneville, (x0,), n, 1000)[:, 0].copy()


def _pendulum(s):
    th, w, t = s
    return np.array([w, -0.5 * w - math.sin(th) + 1.5 * math.cos(2.0 * t / 3.0), 1.0])


def forced_pendulum(n: int, seed: int) -> np.ndarray:
    """Forced damped pendulum ``th'' + 0.5 th' + sin th = 1.5 cos(2 t / 3)`` (Baker and
    Gollub's chaotic case), the angular velocity every 0.3: the forcing's period 3 pi is ~31.4
    samples."""
    rng = np.random.default_rng(seed)
    return _flow(_pendulum, [*rng.normal(0, 0.5, 2), 0.0], n, 0.3, 1000, max_step=0.01)[:, 1].copy()


VANO_R = (1.0, 0.72, 1.53, 1.27)
VANO_A = ((1.0, 1.09, 1.52, 0.0), (0.0, 1.0, 0.44, 1.36), (2.33, 0.0, 1.0, 0.47),
          (1.21, 0.51, 0.35, 1.0))  # fmt: skip


def _vano(s):
    return np.array([VANO_R[i] * s[i] * (1.0 - sum(VANO_A[i][j] * s[j] for j in range(4)))
                     for i in range(4)])  # fmt: skip


def competition(n: int, seed: int) -> np.ndarray:
    """Four species in Lotka-Volterra competition, ``x_i' = r_i x_i (1 - sum_j a_ij x_j)``
    with Vano et al.'s (2006) chaotic ``r`` and ``a`` (``VANO_R``, ``VANO_A``), the first
    species every 1.0."""
    rng = np.random.default_rng(seed)
    return _flow(_vano, [0.3, 0.2, 0.3, 0.3] + rng.uniform(-0.02, 0.02, 4), n, 1.0, 2000,
                 max_step=0.05)[:, 0].copy()  # fmt: skip


#: name: (generator, horizons, note); written down before any run of ours on them
SYNTHETIC = {
    "ecg": (ecg, (1, 10, 50, 100), "125 Hz, beats ~100 samples apart with HRV; a beat ahead"),
    "setar": (setar, (1, 2, 5), "stochastic threshold AR, noisy cycle of ~9 samples"),
    "arma21": (arma21, (1, 2, 5), "linear ARMA(2, 1); MA root 0.7"),
    "halvorsen": (halvorsen, (1, 5, 12, 23), "x every 0.05; lambda ~0.043/sample: T_L ~23"),
    "pomeau_manneville": (
        pomeau_manneville,
        (1, 2, 3),
        "intermittent map; lambda ~0.57/step: T_L ~2",
    ),
    "forced_pendulum": (
        forced_pendulum,
        (1, 5, 15, 30),
        "velocity every 0.3; lambda ~0.033/sample: T_L ~31; forcing period 31.4",
    ),
    "competition": (
        competition,
        (1, 5, 20, 45),
        "4-species Lotka-Volterra every 1.0; lambda ~0.021/sample: T_L ~47",
    ),
}
#: real channels no script had scored or tuned on alone: (dataset, options, horizons, note)
REAL = {
    "imu_fusion_ay": (
        "imu",
        {"name": "imu_fusion", "col": "Accelerometer Y (g)", "start": 6400},
        (1, 2, 5, 10),
        "100 Hz accelerometer Y, samples 6400-9400: training holds two bouts of shaking, "
        "validation and test slower tilts and vibration (~16x the still recording's spread)",
    ),  # fmt: skip
    "imu_gait_ax": (
        "imu",
        {"name": "imu_gait", "col": "Accelerometer X (g)", "start": 10000},
        (1, 4, 10, 40),
        "400 Hz accelerometer X, samples 10000-13000: walking throughout",
    ),  # fmt: skip
}


def lyapunov() -> None:
    """Print the largest Lyapunov exponent per sample of the chaotic systems."""
    flows = {"halvorsen": (_halvorsen, [-5.0, 0.0, 0.0], 0.05, 0.005),
             "forced_pendulum": (_pendulum, [0.0, 0.0, 0.0], 0.3, 0.01),
             "competition": (_vano, [0.3, 0.2, 0.3, 0.3], 1.0, 0.05)}  # fmt: skip
    for name, (f, y0, dt, step) in flows.items():
        lam = _lyapunov_flow(f, y0, dt, step)
        print(f"{name}: {lam:.4f} per sample, T_L ~ {1 / lam:.0f} samples" if lam > 0 else
              f"{name}: {lam:.4f} per sample (not chaotic here)")  # fmt: skip
    lam = _lyapunov_map(_manneville, [0.3])
    print(f"pomeau_manneville: {lam:.4f} per step, T_L ~ {1 / lam:.1f} steps")


if __name__ == "__main__" and sys.argv[1:] == ["lyapunov"]:
    lyapunov()
