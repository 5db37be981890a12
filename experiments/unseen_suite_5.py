"""The fifth suite of unseen series for ``autofit_unseen.py --suite 5``.

Written down on 2026-12-08 (equations, parameters, sampling, horizons, real channels) before
the default fit ran on any of them, after the first four suites had informed changes and so
stopped being unseen. Nothing is tuned on them. None is of a class of the earlier suites, of
the development benchmark (``bench_autofit.py``), of ``autofit_heldout.py`` or of the pyEDM
user's cases (``autofit_pyedm_user.py``), though some have kin there: the Aizawa attractor
spirals about an axis as Rössler's does (but fast, ~18 samples a turn, while its height
rises and falls slowly and the radius with it); the Gauss map is one-humped as the logistic,
tent and Ricker maps are (but its hump is a Gaussian, flat at the top with flat tails); the
double pendulum swings as the forced pendulum does (but unforced and undamped: conservative
chaos, two links, energy fixed by the release); the stick-slip oscillator relaxes as the
forced Van der Pol oscillator does (but nonsmooth: straight ramps while the block sticks to
the belt, whose speed wanders); the AR-GARCH's mean is linear as the AR(2) and ARMAs are (but
its variance clusters, a nonlinearity in the second moment only); the gear's vibration is
quasi-periodic as the torus is (but a fast mesh carrier modulated in amplitude and phase at
the shaft's rate: sidebands); the Markov-switching AR switches as the telegraph does (but its
dynamics, a resonance against a slow drift, not its level). The horizons of the chaotic
systems run from 1 to about one Lyapunov time (``experiments/unseen_suite_5.py lyapunov``
prints the estimates the notes quote, as ``unseen_suite_2.py lyapunov`` does: two
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


def _aizawa(s, a=0.95, b=0.7, c=0.6, d=3.5, e=0.25, f=0.1):
    x, y, z = s
    dz = c + a * z - z**3 / 3.0 - (x * x + y * y) * (1.0 + e * z) + f * z * x**3
    return np.array([(z - b) * x - d * y, d * x + (z - b) * y, dz])


def aizawa(n: int, seed: int) -> np.ndarray:
    """Aizawa's attractor ``x' = (z - b) x - d y``, ``y' = d x + (z - b) y``, ``z' = c + a z -
    z^3 / 3 - (x^2 + y^2)(1 + e z) + f z x^3`` with a = 0.95, b = 0.7, c = 0.6, d = 3.5,
    e = 0.25, f = 0.1 (the usual chaotic set), x every 0.1: a turn about the z axis every
    ~1.8 (18 samples), its radius swelling and shrinking as z rises and falls."""
    rng = np.random.default_rng(seed)
    return _flow(_aizawa, [0.1, 0.0, 0.0] + rng.normal(0, 0.01, 3), n, 0.1, 1000,
                 max_step=0.01)[:, 0].copy()  # fmt: skip


def _gauss(x, a=6.2, b=-0.52):
    return (math.exp(-a * x * x) + b,)


def gauss_map(n: int, seed: int) -> np.ndarray:
    """Gauss ("mouse") map ``x' = exp(-6.2 x^2) - 0.52``, one sample per iterate: chaotic here
    and over b = -0.60 .. -0.47 around it (no periodic window at the steps of 0.01 checked)."""
    x0 = np.random.default_rng(seed).uniform(-0.5, 0.5)
    return _maps(_gauss, (x0,), n, 1000)[:, 0].copy()


def _double_pendulum(s):
    # two equal links (mass 1, length 1, g = 1; time in units of sqrt(l / g)), angles from
    # the downward vertical
    t1, t2, w1, w2 = s
    d = t1 - t2
    sd, cd = math.sin(d), math.cos(d)
    den = 3.0 - math.cos(2.0 * d)
    a1 = -3.0 * math.sin(t1) - math.sin(t1 - 2.0 * t2) - 2.0 * sd * (w2 * w2 + w1 * w1 * cd)
    a2 = 2.0 * sd * (2.0 * w1 * w1 + 2.0 * math.cos(t1) + w2 * w2 * cd)
    return np.array([w1, w2, a1 / den, a2 / den])


def double_pendulum(n: int, seed: int) -> np.ndarray:
    """Double pendulum of two equal point masses on equal massless links, no friction, no
    forcing, released from rest with both links horizontal (angles pi / 2 + N(0, 0.01)): the
    first link's angle (a joint encoder's reading) every 0.1. Its energy (that of the release)
    lets the second link go over the top (11-24 times in 2,000 samples, seeds 0-4) but not
    the first, whose angle stays within about +-2.1 rad; the RK4 steps keep the energy to
    ~1e-6."""
    rng = np.random.default_rng(seed)
    t0 = math.pi / 2 + rng.normal(0, 0.01, 2)
    return _flow(_double_pendulum, [*t0, 0.0, 0.0], n, 0.1, 1000, max_step=0.01)[:, 0].copy()


def _ou(rng, n: int, rho: float) -> np.ndarray:
    """A stationary AR(1) of unit variance and coefficient ``rho`` (a sampled
    Ornstein-Uhlenbeck process)."""
    e = math.sqrt(1.0 - rho * rho) * rng.standard_normal(n)
    e[0] = rng.standard_normal()
    return lfilter([1.0], [1.0, -rho], e)


def stick_slip(n: int, seed: int) -> np.ndarray:
    """A block on a spring dragged by a belt: ``x'' + 0.05 x' + x = F``, the friction ``F``
    with a Stribeck curve ``mu(v_r) = 0.3 + 0.2 exp(-|v_r| / 0.2)`` (static 0.5, kinetic 0.3)
    in the direction of the slip speed ``v_r = v_b - x'``; the block sticks (moves with the
    belt) from when it reaches the belt's speed until the spring and damper pull harder than
    0.5. The belt's speed ``v_b = 0.1 exp(0.3 u)``, ``u`` an AR(1) of unit variance and
    coefficient 0.995 per sample (~200 samples of memory): the drive's speed wanders. Fixed
    steps of 0.002 (semi-implicit Euler: the speed, then the position from it), x (the spring's
    extension: what a force sensor on it reads) every 0.1. Ramps at the belt's speed (~45% of
    the time sticking), then a slip back: a cycle every ~80 samples (70-104 in seeds 0-4)."""
    rng = np.random.default_rng(seed)
    burn, per, h = 500, 50, 0.002
    belt = 0.1 * np.exp(0.3 * _ou(rng, n + burn, 0.995))
    x, v, stuck = 0.0, belt[0], True
    out = np.empty(n + burn)
    for i in range(n + burn):
        vb = belt[i]
        for _ in range(per):
            f = -x - 0.05 * v  # the spring and the damper
            if stuck and abs(f) <= 0.5:
                v = vb  # static friction holds the block on the belt
            else:
                vr = vb - v
                s = math.copysign(1.0, vr) if vr != 0.0 else -math.copysign(1.0, f)
                vn = v + (f + (0.3 + 0.2 * math.exp(-abs(vr) / 0.2)) * s) * h
                stuck = (vb - vn) * s <= 0.0  # reached the belt's speed within the step
                v = vb if stuck else vn
            x += v * h
        out[i] = x
    return out[burn:]


def ar_garch(n: int, seed: int) -> np.ndarray:
    """AR(1)-GARCH(1, 1) returns ``x_t = 0.4 x_(t-1) + eps_t``, ``eps_t = sqrt(s_t) e_t``,
    ``s_t = 0.05 + 0.1 eps_(t-1)^2 + 0.85 s_(t-1)``, ``e ~ N(0, 1)``: a linear mean, a
    conditional variance that clusters (persistence 0.95: shocks to it halve in ~14 samples),
    unit unconditional variance of ``eps``, fat tails (kurtosis of ``eps`` ~3.8)."""
    rng = np.random.default_rng(seed)
    e = rng.standard_normal(n + 1000)
    x, eps, s = 0.0, 0.0, 1.0
    out = np.empty(n + 1000)
    for t in range(n + 1000):
        s = 0.05 + 0.1 * eps * eps + 0.85 * s
        eps = math.sqrt(s) * e[t]
        x = 0.4 * x + eps
        out[t] = x
    return out[1000:]


def gear_mesh(n: int, seed: int) -> np.ndarray:
    """The vibration of a 13-tooth gear on a shaft turning once every 64.37 samples (not a
    whole number: quasi-periodic in samples): the mesh tone (13 per turn, ~5 samples a cycle)
    and its second harmonic, each modulated in amplitude (``1 + 0.4 cos``) and phase (0.5 and
    1.0 rad) once per turn, plus the shaft's own line (an imbalance, 0.3)::

        x = (1 + 0.4 cos(p + a)) (cos(13 p + 0.5 sin(p + b) + c)
            + 0.4 cos(26 p + 1.0 sin(p + b) + d)) + 0.3 sin(p + e),  p = 2 pi t / 64.37

    with random phases ``a``-``e``: a carrier with sidebands at the shaft's rate."""
    a, b, c, d, e = np.random.default_rng(seed).uniform(0, 2 * math.pi, 5)
    p = 2 * math.pi * np.arange(n) / 64.37
    mesh = np.cos(13 * p + 0.5 * np.sin(p + b) + c) + 0.4 * np.cos(26 * p + np.sin(p + b) + d)
    return (1.0 + 0.4 * np.cos(p + a)) * mesh + 0.3 * np.sin(p + e)


def markov_switching_ar(n: int, seed: int) -> np.ndarray:
    """A two-regime Markov-switching autoregression (Hamilton's kind): "running",
    ``x_t = 1.8 x_(t-1) - 0.95 x_(t-2) + 0.1 e_t`` (roots of modulus 0.97 at a period of ~16
    samples, standard deviation ~0.83), kept with probability 0.995 per sample (~200 samples
    on average), and "idle", ``x_t = 0.9 x_(t-1) + 0.1 e_t`` (standard deviation ~0.23), kept
    with probability 0.99 (~100 samples); ``e ~ N(0, 1)``: ~13 switches per 2,000 samples
    expected (12-17 in seeds 0-4), two thirds of the time running (0.46-0.75). The series
    carries on across a switch; only its dynamics change."""
    rng = np.random.default_rng(seed)
    e = 0.1 * rng.standard_normal(n + 500)
    u = rng.random(n + 500)
    running = rng.random() < 2.0 / 3.0  # the chain's stationary share of "running"
    x1 = x2 = 0.0
    out = np.empty(n + 500)
    for t in range(n + 500):
        if u[t] >= (0.995 if running else 0.99):
            running = not running
        x = (1.8 * x1 - 0.95 * x2 if running else 0.9 * x1) + e[t]
        x1, x2 = x, x1
        out[t] = x
    return out[500:]


#: name: (generator, horizons, note); written down before any run of ours on them
SYNTHETIC = {
    "aizawa": (aizawa, (1, 10, 50, 100), "x every 0.1; lambda ~0.010/sample: T_L ~99"),
    "gauss_map": (gauss_map, (1, 2, 3), "a = 6.2, b = -0.52; lambda ~0.40/step: T_L ~2.5"),
    "double_pendulum": (
        double_pendulum,
        (1, 5, 20, 40),
        "first link's angle every 0.1; lambda ~0.026/sample: T_L ~39",
    ),
    "stick_slip": (
        stick_slip,
        (1, 10, 40, 80),
        "stochastic: stick-slip cycles ~80 samples long, belt speed wandering",
    ),
    "ar_garch": (ar_garch, (1, 2, 5), "stochastic: AR(1) mean, GARCH(1, 1) volatility"),
    "gear_mesh": (
        gear_mesh,
        (1, 3, 16, 64),
        "quasi-periodic: mesh tone ~4.95 samples, shaft turn 64.37",
    ),
    "markov_switching_ar": (
        markov_switching_ar,
        (1, 4, 16),
        "stochastic: resonant AR(2) (period ~16) <-> AR(1), ~13 switches per 2,000",
    ),
}
#: real channels no script had scored against peers (the fusion magnetometer was only among
#: every column of the recording in noise_level_probe.py --scan and checked_floor_probe.py
#: --set recordings: noise levels, and our filter's change under the checked floor):
#: (dataset, options, horizons, note)
REAL = {
    "imu_fusion_mx": (
        "imu",
        {"name": "imu_fusion", "col": "Magnetometer X (uT)", "start": 4400},
        (1, 2, 5, 10),
        "100 Hz magnetometer X, samples 4400-7400: turns between held orientations in "
        "training, a steady rotation (~200 deg/s) starting in validation and ending in test; "
        "~60% of samples repeat the last (the magnetometer updates more slowly)",
    ),  # fmt: skip
    "ettm2_mufl": (
        "ett",
        {"name": "ETTm2", "col": "MUFL", "start": 36000},
        (1, 4, 16, 96),
        "15 min middle useful load, 2017-07-11 to 08-11: a daily cycle (96 samples) and a "
        "weekly one over a wandering level",
    ),  # fmt: skip
}


def lyapunov() -> None:
    """Print the largest Lyapunov exponent per sample of the chaotic systems."""
    flows = {"aizawa": (_aizawa, [0.1, 0.0, 0.0], 0.1, 0.01),
             "double_pendulum": (_double_pendulum, [math.pi / 2, math.pi / 2, 0.0, 0.0], 0.1,
                                 0.01)}  # fmt: skip
    for name, (f, y0, dt, step) in flows.items():
        lam = _lyapunov_flow(f, y0, dt, step)
        print(f"{name}: {lam:.4f} per sample, T_L ~ {1 / lam:.0f} samples" if lam > 0 else
              f"{name}: {lam:.4f} per sample (not chaotic here)")  # fmt: skip
    lam = _lyapunov_map(_gauss, [0.1])
    print(f"gauss_map: {lam:.4f} per step, T_L ~ {1 / lam:.1f} steps")


if __name__ == "__main__" and sys.argv[1:] == ["lyapunov"]:
    lyapunov()
