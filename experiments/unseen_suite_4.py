"""The fourth suite of unseen series for ``autofit_unseen.py --suite 4``.

Written down on 2026-12-07 (equations, parameters, sampling, horizons, real channels) before
the default fit ran on any of them, after the first three suites had informed changes and so
stopped being unseen. Nothing is tuned on them. None is of a class of the earlier suites, of
the development benchmark (``bench_autofit.py``), of ``autofit_heldout.py`` or of the pyEDM
user's cases (``autofit_pyedm_user.py``), though some have kin there: the noisy
FitzHugh-Nagumo neuron spikes as the Hindmarsh-Rose neuron bursts (but it is excitable, not
oscillating: noise starts each spike); the epidemic's weekly cases are counts as the trap and
predator-prey counts are (but unforced, their cycle sustained by demographic noise alone);
the seasonal ARMA is linear as the AR(2), ARMA(2, 1) and the daily cycles under AR(1) weather
are (but its season is stochastic, with a moving-average part at the seasonal lag); the
telegraph's jumps are steps as the default comparison's steps and impacts are (but a
two-level Markov switching, 20-odd times per series); the wandering oscillator changes its
frequency as the default comparison's chirp does (but at random, back and forth). The horizons
of the chaotic systems run from 1 to about one Lyapunov time (``experiments/unseen_suite_4.py
lyapunov`` prints the estimates the notes quote, as ``unseen_suite_2.py lyapunov`` does: two
trajectories 1e-8 apart, renormalised every sample, over 4,000 samples after the burn-in,
from the generators' starts without their seeded perturbation), those of the oscillating ones
over the period the note names, those of the stochastic ones a few steps.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy.signal import lfilter
from unseen_suite_2 import _lyapunov_flow, _lyapunov_map

from tssdpa.data.synthetic import _flow, _maps


def _rabinovich_fabrikant(s, a=1.1, g=0.87):
    x, y, z = s
    return np.array([y * (z - 1.0 + x * x) + g * x, x * (3.0 * z + 1.0 - x * x) + g * y,
                     -2.0 * z * (a + x * y)])  # fmt: skip


def rabinovich_fabrikant(n: int, seed: int) -> np.ndarray:
    """Rabinovich-Fabrikant equations ``x' = y (z - 1 + x^2) + g x``, ``y' = x (3 z + 1 - x^2)
    + g y``, ``z' = -2 z (a + x y)`` with a = 1.1, g = 0.87 (the chaotic attractor from
    (-1, 0, 0.5)), x every 0.1. Orbits from some starts run off to infinity; a perturbation of
    0.01 around that start stays on the attractor (30 seeds checked)."""
    rng = np.random.default_rng(seed)
    return _flow(_rabinovich_fabrikant, [-1.0, 0.0, 0.5] + rng.normal(0, 0.01, 3), n, 0.1, 1000,
                 max_step=0.005)[:, 0].copy()  # fmt: skip


def noisy_fitzhugh_nagumo(n: int, seed: int) -> np.ndarray:
    """FitzHugh-Nagumo neuron in its excitable regime, driven by noise (Pikovsky and Kurths'
    coherence-resonance setting): ``dx = (x - x^3 / 3 - y) / 0.01 dt``, ``dy = (x + 1.05) dt +
    0.03 dW`` (Euler-Maruyama, dt 0.001), x every 0.05. At rest without noise; the noise
    starts each spike (12 samples up, then ~80 of recovery), ~94 samples apart on average,
    irregularly (their spread ~0.2 of the mean)."""
    rng = np.random.default_rng(seed)
    burn, per = 200, 50
    kicks = 0.03 * math.sqrt(0.001) * rng.standard_normal((n + burn) * per)
    x, y = -1.05, -1.05 + 1.05**3 / 3.0  # the resting state
    out = np.empty(n + burn)
    for i in range(n + burn):
        for e in kicks[per * i : per * (i + 1)]:
            x, y = x + (x - x**3 / 3.0 - y) * 0.1, y + (x + 1.05) * 0.001 + e
        out[i] = x
    return out[burn:]


def sir_demographic(n: int, seed: int) -> np.ndarray:
    """Weekly new cases of an endemic SIR epidemic with births and deaths and demographic
    noise: population 1e6, R0 = 10, infectious 14 days, lifetime 50 years; each day's
    infections, recoveries, births and deaths are Poisson draws at the rates of the moment
    (tau-leaping, one step a day), and one infective is kept whenever the infection would die
    out (an imported case: never needed in seeds 0 and 2-4, 33 times in seed 1, whose series
    has 75 weeks without a case). The deterministic model spirals into its equilibrium; the
    noise keeps it cycling, with a period of ~150 weeks (quasi-cycles, "stochastic
    amplification")."""
    rng = np.random.default_rng(seed)
    size, r0, gamma, mu = 1e6, 10.0, 1.0 / 14.0, 1.0 / (50.0 * 365.0)
    beta = r0 * (gamma + mu)
    i = round(mu * size * (r0 - 1.0) / beta)  # the endemic equilibrium
    s = round(size / r0)
    r = round(size) - s - i
    out = np.empty(n + 200)
    for week in range(n + 200):
        cases = 0
        for _ in range(7):
            new = min(rng.poisson(beta * s * i / size), s)
            recovered = min(rng.poisson(gamma * i), i + new)
            born = rng.poisson(mu * size)
            ds, di, dr = rng.poisson(mu * s), rng.poisson(mu * i), rng.poisson(mu * r)
            s = max(s - new - ds + born, 0)
            i = max(i + new - recovered - di, 1)  # one imported case if none is left
            r = max(r + recovered - dr, 0)
            cases += new
        out[week] = cases
    return out[200:]


def _circle(theta, k=2.0, omega=0.35):
    # theta is not reduced mod 1: the sine makes the map the same, and the Lyapunov estimate
    # never sees a jump from 1 to 0
    return (theta + omega - k / (2.0 * math.pi) * math.sin(2.0 * math.pi * theta),)


def circle_map(n: int, seed: int) -> np.ndarray:
    """Sine circle map ``theta' = theta + 0.35 - (2 / 2 pi) sin(2 pi theta)`` (K = 2 > 1: not
    invertible, chaotic at this Omega), observed as ``sin(2 pi theta)``, one sample per
    iterate."""
    t0 = np.random.default_rng(seed).uniform(0.0, 1.0)
    return np.sin(2.0 * math.pi * _maps(_circle, (t0,), n, 1000)[:, 0])


def seasonal_arma(n: int, seed: int) -> np.ndarray:
    """Multiplicative seasonal ARMA(1, 0)(1, 1) with a season of 24:
    ``(1 - 0.6 B)(1 - 0.9 B^24) x = (1 - 0.5 B^24) e``, ``e ~ N(0, 1)``: a linear series whose
    daily profile is itself random and changes slowly (the seasonal root 0.9 per day), with a
    moving-average part at the seasonal lag that an autoregression only approximates."""
    b = np.zeros(25)
    b[[0, 24]] = 1.0, -0.5
    a = np.zeros(26)
    a[[0, 1, 24, 25]] = 1.0, -0.6, -0.9, 0.54
    e = np.random.default_rng(seed).standard_normal(n + 1000)
    return lfilter(b, a, e)[1000:]


def _ou(rng, n: int, rho: float) -> np.ndarray:
    """A stationary AR(1) of unit variance and coefficient ``rho`` (a sampled
    Ornstein-Uhlenbeck process)."""
    e = math.sqrt(1.0 - rho * rho) * rng.standard_normal(n)
    e[0] = rng.standard_normal()
    return lfilter([1.0], [1.0, -rho], e)


def telegraph_drift(n: int, seed: int) -> np.ndarray:
    """A random telegraph signal (+-1, switching with probability 0.01 each sample: ~20
    switches in 2,000 samples) plus a slow drift ``0.5 u``, ``u`` an AR(1) of unit variance and
    coefficient 0.995 (~200 samples of memory): jumps at random times over a wandering
    baseline."""
    rng = np.random.default_rng(seed)
    switches = rng.random(n) < 0.01
    level = np.where(np.cumsum(switches) % 2 == 0, 1.0, -1.0) * rng.choice([-1.0, 1.0])
    return level + 0.5 * _ou(rng, n, 0.995)


def wandering_oscillator(n: int, seed: int) -> np.ndarray:
    """``a_t sin(phi_t)``, ``phi_(t+1) = phi_t + 2 pi f_t``: a frequency ``f_t = 0.05 exp(0.2
    u_t)`` (period 20 samples, mostly 13-30) and an amplitude ``a_t = exp(0.2 v_t)`` that
    wander, ``u`` and ``v`` AR(1)s of unit variance and coefficients 0.997 and 0.998 (~300 and
    ~500 samples of memory): an oscillator whose frequency drifts slowly back and forth."""
    rng = np.random.default_rng(seed)
    f = 0.05 * np.exp(0.2 * _ou(rng, n, 0.997))
    a = np.exp(0.2 * _ou(rng, n, 0.998))
    phase = rng.uniform(0, 2 * math.pi) + 2 * math.pi * np.concatenate([[0.0], np.cumsum(f[:-1])])
    return a * np.sin(phase)


#: name: (generator, horizons, note); written down before any run of ours on them
SYNTHETIC = {
    "rabinovich_fabrikant": (
        rabinovich_fabrikant,
        (1, 5, 20, 50),
        "x every 0.1; lambda ~0.020/sample: T_L ~49",
    ),
    "noisy_fitzhugh_nagumo": (
        noisy_fitzhugh_nagumo,
        (1, 5, 20),
        "stochastic: noise-started spikes ~94 samples apart",
    ),
    "sir_demographic": (
        sir_demographic,
        (1, 4, 13),
        "stochastic weekly cases: quasi-cycles of ~150 weeks",
    ),
    "circle_map": (circle_map, (1, 2, 3), "K = 2, Omega = 0.35; lambda ~0.48/step: T_L ~2"),
    "seasonal_arma": (seasonal_arma, (1, 2, 6, 24), "linear seasonal ARMA, season of 24"),
    "telegraph_drift": (telegraph_drift, (1, 5, 20), "stochastic: +-1 switching + slow drift"),
    "wandering_oscillator": (
        wandering_oscillator,
        (1, 5, 10, 20),
        "period ~20 samples, wandering 13-30",
    ),
}
#: real channels no script had scored or tuned on alone: (dataset, options, horizons, note)
REAL = {
    "imu_gait_ay": (
        "imu",
        {"name": "imu_gait", "col": "Accelerometer Y (g)", "start": 7000},
        (1, 4, 10, 40),
        "400 Hz accelerometer Y, samples 7000-10000: walking throughout",
    ),  # fmt: skip
    "ettm2_hufl": (
        "ett",
        {"name": "ETTm2", "col": "HUFL", "start": 21000},
        (1, 4, 16, 96),
        "15 min high useful load, 2017-02-04 to 03-07: a daily cycle (96 samples) over "
        "swings of the level; readings in steps of ~0.08",
    ),  # fmt: skip
}


def lyapunov() -> None:
    """Print the largest Lyapunov exponent per sample of the chaotic systems."""
    lam = _lyapunov_flow(_rabinovich_fabrikant, [-1.0, 0.0, 0.5], 0.1, 0.005)
    print(f"rabinovich_fabrikant: {lam:.4f} per sample, T_L ~ {1 / lam:.0f} samples")
    lam = _lyapunov_map(_circle, [0.3])
    print(f"circle_map: {lam:.4f} per step, T_L ~ {1 / lam:.1f} steps")


if __name__ == "__main__" and sys.argv[1:] == ["lyapunov"]:
    lyapunov()
