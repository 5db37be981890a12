"""Seeded synthetic signals with known ground truth.

Every generator takes ``n`` (samples) and ``seed`` and returns a float64 array of shape (n,)
(or (n, C) where stated); the same seed always gives the same signal.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

__all__ = [
    "SIGNALS",
    "make_signal",
    "sinusoids",
    "chirp",
    "steps_and_impacts",
    "lorenz",
    "mackey_glass",
    "ar2",
]


def _check_n(n):
    if isinstance(n, bool) or int(n) != n or int(n) < 2:
        raise ValueError(f"n must be an integer >= 2; got {n!r}")
    return int(n)


def sinusoids(n: int = 2000, seed: int = 0, *, n_components: int = 3, fs: float = 100.0):
    """Sum of ``n_components`` sinusoids with random frequencies (0.2–5 Hz), amplitudes, phases."""
    n = _check_n(n)
    rng = np.random.default_rng(seed)
    t = np.arange(n) / fs
    f = rng.uniform(0.2, 5.0, n_components)
    a = rng.uniform(0.5, 1.5, n_components)
    ph = rng.uniform(0, 2 * np.pi, n_components)
    return (a[:, None] * np.sin(2 * np.pi * f[:, None] * t + ph[:, None])).sum(0)


def chirp(n: int = 2000, seed: int = 0, *, f0: float = 0.2, f1: float = 8.0, fs: float = 100.0):
    """Linear chirp from ``f0`` to ``f1`` Hz with a seeded phase and amplitude."""
    from scipy.signal import chirp as _chirp

    n = _check_n(n)
    rng = np.random.default_rng(seed)
    t = np.arange(n) / fs
    return rng.uniform(0.8, 1.2) * _chirp(t, f0, t[-1], f1, phi=rng.uniform(0, 360))


def steps_and_impacts(n: int = 2000, seed: int = 0, *, n_steps: int = 6, n_impacts: int = 6):
    """Piecewise-constant levels plus decaying oscillatory impacts (robot contact-like)."""
    n = _check_n(n)
    rng = np.random.default_rng(seed)
    x = np.zeros(n)
    for pos in np.sort(rng.integers(0, n, n_steps)):
        x[pos:] += rng.normal(0, 1.0)
    t = np.arange(n)
    for pos in rng.integers(0, n, n_impacts):
        tt = t[pos:] - pos
        amp, tau, freq = rng.uniform(1, 3), rng.uniform(5, 30), rng.uniform(0.05, 0.2)
        x[pos:] += amp * np.exp(-tt / tau) * np.cos(2 * np.pi * freq * tt)
    return x


def lorenz(
    n: int = 2000, seed: int = 0, *, dt: float = 0.02, component: int | None = 0,
    sigma: float = 10.0, rho: float = 28.0, beta: float = 8.0 / 3.0,
):  # fmt: skip
    """Lorenz-63 system integrated with :func:`scipy.integrate.solve_ivp` (RK45, tight tol).

    A seeded initial condition is run for 1000 steps of burn-in onto the attractor. Returns the
    ``component`` (0 = x) as (n,), or all three as (n, 3) when ``component`` is None.
    """
    n = _check_n(n)
    rng = np.random.default_rng(seed)
    y0 = rng.normal(0, 1, 3) + np.array([1.0, 1.0, 20.0])

    def f(_, s):
        x, y, z = s
        return [sigma * (y - x), x * (rho - z) - y, x * y - beta * z]

    burn = 1000
    t = np.arange(n + burn) * dt
    sol = solve_ivp(f, (0, t[-1]), y0, t_eval=t, rtol=1e-9, atol=1e-9)
    out = sol.y.T[burn:]
    return out if component is None else out[:, component].copy()


def mackey_glass(
    n: int = 2000, seed: int = 0, *, tau: float = 17.0, beta: float = 0.2, gamma: float = 0.1,
    power: float = 10.0, dt: float = 1.0, substeps: int = 10,
):  # fmt: skip
    """Mackey–Glass delay equation ``dx/dt = beta x(t-tau)/(1+x(t-tau)^p) - gamma x``.

    Integrated with a fixed-step 4th-order Runge–Kutta scheme (``substeps`` per ``dt``, delayed
    values by linear interpolation of the stored history), seeded constant-history start, burn-in
    of 500 time units; sampled every ``dt``. ``tau=17`` is the classic chaotic regime.
    """
    n = _check_n(n)
    rng = np.random.default_rng(seed)
    h = dt / substeps
    lag = int(round(tau / h))
    burn = int(500 / h)
    total = burn + n * substeps
    x = np.empty(total + lag + 1)
    x[: lag + 1] = 1.2 + 0.1 * rng.standard_normal()

    def rhs(xt, xd):
        return beta * xd / (1.0 + xd**power) - gamma * xt

    for i in range(lag, lag + total):
        xd0, xd1 = x[i - lag], x[i - lag + 1]
        xdm = 0.5 * (xd0 + xd1)
        k1 = rhs(x[i], xd0)
        k2 = rhs(x[i] + 0.5 * h * k1, xdm)
        k3 = rhs(x[i] + 0.5 * h * k2, xdm)
        k4 = rhs(x[i] + h * k3, xd1)
        x[i + 1] = x[i] + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x[lag + 1 + burn :: substeps][:n].copy()


def ar2(
    n: int = 2000, seed: int = 0, *, phi1: float = 1.6, phi2: float = -0.8, noise_std: float = 1.0
):
    """Stationary AR(2) ``x[t] = phi1 x[t-1] + phi2 x[t-2] + e[t]`` (a resonance near f=0.07).

    For this process the optimal predictor is linear, so linear filters are the reference.
    """
    n = _check_n(n)
    if not abs(phi2) < 1 or not phi2 + abs(phi1) < 1:
        raise ValueError(f"(phi1, phi2) = ({phi1}, {phi2}) is not stationary")
    from scipy.signal import lfilter

    rng = np.random.default_rng(seed)
    e = rng.normal(0, noise_std, n + 500)
    return lfilter([1.0], [1.0, -phi1, -phi2], e)[500:]


SIGNALS = {
    "sinusoids": sinusoids,
    "chirp": chirp,
    "steps": steps_and_impacts,
    "lorenz": lorenz,
    "mackey_glass": mackey_glass,
    "ar2": ar2,
}


def make_signal(name: str, n: int = 2000, seed: int = 0, **kwargs) -> np.ndarray:
    """Generate the synthetic signal ``name`` (one of :data:`SIGNALS`)."""
    if name not in SIGNALS:
        raise ValueError(f"name must be one of {sorted(SIGNALS)}; got {name!r}")
    return SIGNALS[name](n, seed, **kwargs)
