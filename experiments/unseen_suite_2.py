"""The second suite of unseen series for ``autofit_unseen.py --suite 2``.

Written down on 2026-12-06 (equations, parameters, sampling, horizons, real channels) before
the default fit ran on any of them, after the first suite had informed changes (the strong
ridge, 2026-12-05) and so stopped being unseen. Nothing is tuned on them. The horizons run
from 1 to about one Lyapunov time (``experiments/unseen_suite_2.py lyapunov`` prints the
estimates the notes quote: two trajectories 1e-8 apart, renormalised every sample, over
4,000 samples after the burn-in, seed 0), or over the period the note names.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from tssdpa.data.synthetic import _flow, _maps


def _thomas(s, b=0.208186):
    x, y, z = s
    return np.array([math.sin(y) - b * x, math.sin(z) - b * y, math.sin(x) - b * z])


def thomas(n: int, seed: int) -> np.ndarray:
    """Thomas' cyclically symmetric attractor (b = 0.208186), x every 1.0."""
    rng = np.random.default_rng(seed)
    return _flow(_thomas, [0.1, 0.0, -0.1] + rng.normal(0, 0.1, 3), n, 1.0, 1000,
                 max_step=0.05)[:, 0].copy()  # fmt: skip


def _hindmarsh_rose(s):
    x, y, z = s
    return np.array([y - x**3 + 3.0 * x * x - z + 3.25, 1.0 - 5.0 * x * x - y,
                     0.006 * (4.0 * (x + 1.6) - z)])  # fmt: skip


def hindmarsh_rose(n: int, seed: int) -> np.ndarray:
    """Hindmarsh-Rose neuron, chaotic bursting (I = 3.25, r = 0.006, s = 4), x every 1.0:
    spikes in bursts of irregular length (the class of neural and cardiac recordings)."""
    rng = np.random.default_rng(seed)
    return _flow(_hindmarsh_rose, [-1.0, -5.0, 3.0] + rng.normal(0, 0.1, 3), n, 1.0, 1000,
                 max_step=0.02)[:, 0].copy()  # fmt: skip


def _chen(s):
    x, y, z = s
    return np.array([35.0 * (y - x), -7.0 * x - x * z + 28.0 * y, x * y - 3.0 * z])


def chen(n: int, seed: int) -> np.ndarray:
    """Chen's system (a = 35, b = 3, c = 28), x every 0.02."""
    rng = np.random.default_rng(seed)
    return _flow(_chen, [-10.0, 0.0, 37.0] + rng.normal(0, 1.0, 3), n, 0.02, 2000,
                 max_step=0.002)[:, 0].copy()  # fmt: skip


def _tinkerbell(x, y):
    return x * x - y * y + 0.9 * x - 0.6013 * y, 2.0 * x * y + 2.0 * x + 0.5 * y


def tinkerbell(n: int, seed: int) -> np.ndarray:
    """Tinkerbell map (a = 0.9, b = -0.6013, c = 2, d = 0.5), x, one sample per iterate."""
    rng = np.random.default_rng(seed)
    return _maps(_tinkerbell, [-0.72, -0.64] + rng.uniform(-0.01, 0.01, 2), n, 1000)[:, 0].copy()


def ricker(n: int, seed: int) -> np.ndarray:
    """Stochastic Ricker population ``x' = x exp(3 (1 - x) + 0.1 e)``, ``e ~ N(0, 1)``: the
    chaotic population model of the nonlinear-forecasting literature, with process noise."""
    rng = np.random.default_rng(seed)
    x, out = 0.5, np.empty(n + 200)
    for t in range(n + 200):
        x = x * math.exp(3.0 * (1.0 - x) + 0.1 * rng.standard_normal())
        out[t] = x
    return out[200:]


def seasonal_ar(n: int, seed: int) -> np.ndarray:
    """``sin(2 pi t / 24) + 0.5 sin(2 pi t / 168 + phi) + u``, ``u = 0.9 u' + 0.3 e``: hourly
    daily and weekly cycles under AR(1) weather (a linear series)."""
    rng = np.random.default_rng(seed)
    e = 0.3 * rng.standard_normal(n + 200)
    u = np.empty(n + 200)
    u[0] = e[0]
    for t in range(1, n + 200):
        u[t] = 0.9 * u[t - 1] + e[t]
    t = np.arange(n)
    phi = rng.uniform(0, 2 * math.pi)
    return np.sin(2 * math.pi * t / 24) + 0.5 * np.sin(2 * math.pi * t / 168 + phi) + u[200:]


def drifting_logistic(n: int, seed: int) -> np.ndarray:
    """Logistic map whose ``r`` drifts from 3.7 to 3.95 over the series: the test part runs
    under parameters the training part never had (a slowly changing system)."""
    x0 = np.random.default_rng(seed).uniform(0.2, 0.8)
    x, out = x0, np.empty(n + 500)
    for t in range(n + 500):
        r = 3.7 if t < 500 else 3.7 + 0.25 * (t - 500) / max(n - 1, 1)
        x = r * x * (1.0 - x)
        out[t] = x
    return out[500:]


#: name: (generator, horizons, note); written down before any run of ours on them
SYNTHETIC = {
    "thomas": (thomas, (1, 10, 50, 100), "x every 1.0; lambda ~0.009/sample: T_L ~107"),
    "hindmarsh_rose": (
        hindmarsh_rose,
        (1, 5, 20, 60),
        "bursting neuron, x every 1.0; lambda ~0.016/sample: T_L ~63",
    ),
    "chen": (chen, (1, 5, 12, 24), "x every 0.02; lambda ~0.042/sample: T_L ~24"),
    "tinkerbell": (tinkerbell, (1, 2, 3, 5), "map; lambda ~0.21/step: T_L ~5"),
    "ricker": (ricker, (1, 2, 3), "stochastic chaotic population (r = 3)"),
    "seasonal_ar": (seasonal_ar, (1, 6, 24), "linear: daily and weekly cycles + AR(1)"),
    "drifting_logistic": (drifting_logistic, (1, 2, 3), "r drifts 3.7 -> 3.95: test unseen r"),
}
#: real channels no script had scored or tuned on: (dataset, options, horizons, note)
REAL = {
    "imu_gait_az": (
        "imu",
        {"name": "imu_gait", "col": "Accelerometer Z (g)", "start": 12000},
        (1, 4, 10, 40),
        "400 Hz accelerometer Z, walking",
    ),  # fmt: skip
    "ettm2_ot": (
        "ett",
        {"name": "ETTm2", "col": "OT", "start": 40000},
        (1, 4, 16),
        "15 min oil temperature",
    ),  # fmt: skip
}


def _lyapunov_map(f, state, steps=4000, burn=1000, eps=1e-8) -> float:
    a = np.array(_maps(f, state, 1, burn)[0])
    b = a + eps / math.sqrt(a.size)
    total = 0.0
    for _ in range(steps):
        a, b = np.array(f(*a)), np.array(f(*b))
        d = float(np.linalg.norm(b - a))
        total += math.log(d / eps)
        b = a + (b - a) * (eps / d)
    return total / steps


def _lyapunov_flow(f, y0, dt, max_step, steps=4000, burn=1000, eps=1e-8) -> float:
    a = _flow(f, y0, 1, dt, burn, max_step)[0]
    b = a + eps / math.sqrt(a.size)
    total = 0.0
    for _ in range(steps):
        a, b = _flow(f, a, 2, dt, 0, max_step)[1], _flow(f, b, 2, dt, 0, max_step)[1]
        d = float(np.linalg.norm(b - a))
        total += math.log(d / eps)
        b = a + (b - a) * (eps / d)
    return total / steps  # per sample


def lyapunov() -> None:
    """Print the largest Lyapunov exponent per sample of the deterministic systems."""
    flows = {"thomas": (_thomas, [0.1, 0.0, -0.1], 1.0, 0.05),
             "hindmarsh_rose": (_hindmarsh_rose, [-1.0, -5.0, 3.0], 1.0, 0.02),
             "chen": (_chen, [-10.0, 0.0, 37.0], 0.02, 0.002)}  # fmt: skip
    for name, (f, y0, dt, step) in flows.items():
        lam = _lyapunov_flow(f, y0, dt, step)
        print(f"{name}: {lam:.4f} per sample, T_L ~ {1 / lam:.0f} samples" if lam > 0 else
              f"{name}: {lam:.4f} per sample (not chaotic here)")  # fmt: skip
    lam = _lyapunov_map(_tinkerbell, [-0.72, -0.64])
    print(f"tinkerbell: {lam:.4f} per step, T_L ~ {1 / lam:.1f} steps")


if __name__ == "__main__" and sys.argv[1:] == ["lyapunov"]:
    lyapunov()
