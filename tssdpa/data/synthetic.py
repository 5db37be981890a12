"""Seeded synthetic signals with known ground truth.

Every generator takes ``n`` (samples) and ``seed`` and returns a float64 array of shape (n,)
(or (n, C) where stated); the same seed always gives the same signal.

:data:`SIGNALS` are the signals of the benchmark tasks (:mod:`tssdpa.data.tasks`);
:data:`BENCHMARK_SIGNALS` are further chaotic maps and flows, a pulse train, for benchmarks of
their own (``experiments/bench_autofit.py``). They are kept apart so that the task names
(``tssdpa.data.DATASETS``) and the default comparison stay as they are; :func:`make_signal`
accepts both. The Lyapunov times quoted in the docstrings are ``1 / lambda_max`` in samples.
"""

from __future__ import annotations

import math

import numpy as np

from tssdpa.checks import check_int, check_positive

__all__ = [
    "SIGNALS",
    "make_signal",
    "sinusoids",
    "chirp",
    "steps_and_impacts",
    "lorenz",
    "mackey_glass",
    "ar2",
    "BENCHMARK_SIGNALS",
    "logistic",
    "henon",
    "ikeda",
    "rossler",
    "lorenz96",
    "pulse_train",
]


def _check_n(n):
    if isinstance(n, bool) or int(n) != n or int(n) < 2:
        raise ValueError(f"n must be an integer >= 2; got {n!r}")
    return int(n)


def _check_component(component, size: int):
    """``component`` as an index in ``[0, size - 1]``, or None (every component): 5 of a
    3-component system raised a bare IndexError after the whole integration."""
    if component is None:
        return None
    component = check_int(component, "component", minimum=0)
    if component >= size:
        raise ValueError(f"component must be in [0, {size - 1}] or None; got {component!r}")
    return component


def sinusoids(n: int = 2000, seed: int = 0, *, n_components: int = 3, fs: float = 100.0):
    """Sum of ``n_components`` sinusoids with random frequencies (0.2–5 Hz), amplitudes, phases."""
    n = _check_n(n)
    fs = check_positive(fs, "fs")  # fs=0 gave an all-NaN signal
    n_components = check_int(n_components, "n_components")  # 0 gave zeros
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
    fs = check_positive(fs, "fs")  # fs=0 gave an all-NaN signal
    rng = np.random.default_rng(seed)
    t = np.arange(n) / fs
    return rng.uniform(0.8, 1.2) * _chirp(t, f0, t[-1], f1, phi=rng.uniform(0, 360))


def steps_and_impacts(n: int = 2000, seed: int = 0, *, n_steps: int = 6, n_impacts: int = 6):
    """Piecewise-constant levels plus decaying oscillatory impacts (robot contact-like)."""
    n = _check_n(n)
    n_steps = check_int(n_steps, "n_steps", minimum=0)  # -1 failed in numpy, naming neither
    n_impacts = check_int(n_impacts, "n_impacts", minimum=0)
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
    """Lorenz-63 system, integrated by :func:`_flow` (fixed-step RK4, steps of at most 0.005).

    A seeded initial condition is run for 1000 steps of burn-in onto the attractor. Returns the
    ``component`` (0 = x) as (n,), or all three as (n, 3) when ``component`` is None.
    Largest Lyapunov exponent ≈ 0.9 per time unit: a Lyapunov time of ≈ 1.1 time units, ≈ 55
    samples at the default ``dt=0.02`` and ≈ 11 samples at ``dt=0.1``.
    """
    n = _check_n(n)
    component = _check_component(component, 3)
    rng = np.random.default_rng(seed)
    y0 = rng.normal(0, 1, 3) + np.array([1.0, 1.0, 20.0])

    def f(s):
        x, y, z = s
        return np.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])

    out = _flow(f, y0, n, dt, 1000, max_step=0.005)
    return out if component is None else out[:, component].copy()


def mackey_glass(
    n: int = 2000, seed: int = 0, *, tau: float = 17.0, beta: float = 0.2, gamma: float = 0.1,
    power: float = 10.0, dt: float = 1.0, substeps: int = 10,
):  # fmt: skip
    """Mackey–Glass delay equation ``dx/dt = beta x(t-tau)/(1+x(t-tau)^p) - gamma x``.

    Integrated with a fixed-step 4th-order Runge–Kutta scheme (``substeps`` per ``dt``, delayed
    values by linear interpolation of the stored history), seeded constant-history start, burn-in
    of 500 time units; sampled every ``dt``. ``tau=17`` is the classic chaotic regime, largest
    Lyapunov exponent ≈ 0.006 per time unit: a Lyapunov time of ≈ 170 samples at ``dt=1``.
    """
    n = _check_n(n)
    h = check_positive(dt, "dt") / check_int(substeps, "substeps")
    if check_positive(tau, "tau") <= h / 2:  # a delay of 0 steps: read before integrated
        raise ValueError(f"tau must be > dt / substeps / 2 = {h / 2:g}; got {tau!r}")
    lag = int(round(tau / h))
    rng = np.random.default_rng(seed)
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


def _maps(f, state, n: int, burn: int) -> np.ndarray:
    """Iterate the map ``f`` from ``state``: ``burn`` iterates dropped, then ``n`` states kept."""
    burn = check_int(burn, "burn", minimum=0)
    out = np.empty((n, len(state)))
    for i in range(burn + n):
        state = f(*state)
        if i >= burn:
            out[i - burn] = state
    return out


def logistic(n: int = 2000, seed: int = 0, *, r: float = 3.9, burn: int = 1000):
    """Logistic map ``x[k+1] = r x[k] (1 - x[k])``, one sample per iterate.

    Seeded start ``x0 ~ U(0.1, 0.9)``, ``burn`` iterates of burn-in. With ``r=3.9`` the orbit is
    chaotic on ``[r^2 (4 - r) / 16, r / 4] ≈ [0.095, 0.975]``; largest Lyapunov exponent ≈ 0.49
    per step: a Lyapunov time of ≈ 2 samples.
    """
    n = _check_n(n)
    if not 0 < r <= 4:
        raise ValueError(f"r must be in (0, 4]; got {r!r}")
    x0 = np.random.default_rng(seed).uniform(0.1, 0.9)
    return _maps(lambda x: (r * x * (1.0 - x),), (x0,), n, burn)[:, 0]


def henon(
    n: int = 2000, seed: int = 0, *, a: float = 1.4, b: float = 0.3, component: int | None = 0,
    burn: int = 1000,
):  # fmt: skip
    """Hénon map ``x' = 1 - a x^2 + y``, ``y' = b x``, one sample per iterate.

    Seeded start ``(x0, y0) ~ U(-0.1, 0.1)^2`` (in the attractor's basin), ``burn`` iterates of
    burn-in. With the classic ``a=1.4, b=0.3`` the attractor lies in ``|x| < 1.29``,
    ``|y| < 0.39``; largest Lyapunov exponent ≈ 0.42 per step: a Lyapunov time of ≈ 2.4 samples.
    Returns ``component`` (0 = x) as (n,), or (x, y) as (n, 2) when ``component`` is None.
    """
    n = _check_n(n)
    component = _check_component(component, 2)
    start = np.random.default_rng(seed).uniform(-0.1, 0.1, 2)
    out = _maps(lambda x, y: (1.0 - a * x * x + y, b * x), tuple(start), n, burn)
    return out if component is None else out[:, component].copy()


def ikeda(
    n: int = 2000, seed: int = 0, *, u: float = 0.9, component: int | None = 0, burn: int = 1000
):
    """Ikeda map ``t = 0.4 - 6 / (1 + x^2 + y^2)``, ``x' = 1 + u (x cos t - y sin t)``,
    ``y' = u (x sin t + y cos t)``, one sample per iterate.

    Seeded start ``(x0, y0) ~ U(-0.5, 0.5)^2`` -- inside the basin of the chaotic attractor (at
    ``u=0.9`` much of the plane further out goes to a coexisting periodic orbit) -- and ``burn``
    iterates of burn-in. With ``u=0.9`` the attractor lies in ``-0.4 < x < 1.8``; largest
    Lyapunov exponent ≈ 0.5 per step: a Lyapunov time of ≈ 2 samples. Returns ``component``
    (0 = x) as (n,), or (x, y) as (n, 2) when ``component`` is None.
    """
    n = _check_n(n)
    component = _check_component(component, 2)
    start = np.random.default_rng(seed).uniform(-0.5, 0.5, 2)

    def f(x, y):
        t = 0.4 - 6.0 / (1.0 + x * x + y * y)
        c, s = math.cos(t), math.sin(t)  # numpy's SIMD sin / cos round differently per CPU
        return 1.0 + u * (x * c - y * s), u * (x * s + y * c)

    out = _maps(f, tuple(start), n, burn)
    return out if component is None else out[:, component].copy()


def _flow(f, y0, n: int, dt: float, burn: int, max_step: float) -> np.ndarray:
    """(n, d) samples every ``dt`` of the ODE ``y' = f(y)`` from ``y0`` after ``burn`` samples.

    Classic fixed-step 4th-order Runge–Kutta, ``ceil(dt / max_step)`` steps per sample, in
    elementwise arithmetic only. A chaotic flow turns the last bit of any rounding into another
    trajectory, and BLAS kernels round differently on different CPUs (scipy's ``solve_ivp``
    goes through them: the same seed gave another Lorenz series on an AVX-512 machine than on
    an AVX2 one); elementwise IEEE arithmetic (+, -, *, /, correctly rounded) gives the same
    series on every machine.
    """
    if not dt > 0:
        raise ValueError(f"dt must be > 0; got {dt!r}")
    steps = max(1, math.ceil(dt / max_step - 1e-9))
    h = dt / steps
    y = np.array(y0, dtype=np.float64)
    out = np.empty((n, y.size))
    for i in range(burn + n):  # sample i is y(i dt)
        if i >= burn:
            out[i - burn] = y
        for _ in range(steps if i + 1 < burn + n else 0):
            k1 = f(y)
            k2 = f(y + (0.5 * h) * k1)
            k3 = f(y + (0.5 * h) * k2)
            k4 = f(y + h * k3)
            y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return out


def rossler(
    n: int = 2000, seed: int = 0, *, dt: float = 0.2, component: int | None = 0,
    a: float = 0.2, b: float = 0.2, c: float = 5.7,
):  # fmt: skip
    """Rössler system ``x' = -y - z``, ``y' = x + a y``, ``z' = b + z (x - c)`` (:func:`_flow`,
    RK4 steps of at most 0.02), sampled every ``dt``.

    Seeded start near the origin (``x0, y0 ~ N(0, 1)``, ``z0 ~ U(0, 0.5)``), 1000 samples of
    burn-in. With ``a=b=0.2, c=5.7`` the mean rotation period is ≈ 6 time units (≈ 30 samples at
    ``dt=0.2``); largest Lyapunov exponent ≈ 0.07 per time unit: a Lyapunov time of ≈ 14 time
    units, ≈ 70 samples at ``dt=0.2``. Returns ``component`` (0 = x) as (n,), or (n, 3).
    """
    n = _check_n(n)
    component = _check_component(component, 3)
    rng = np.random.default_rng(seed)
    y0 = np.array([*rng.normal(0, 1, 2), rng.uniform(0, 0.5)])

    def f(s):
        x, y, z = s
        return np.array([-y - z, x + a * y, b + z * (x - c)])

    out = _flow(f, y0, n, dt, 1000, max_step=0.02)
    return out if component is None else out[:, component].copy()


def lorenz96(
    n: int = 2000, seed: int = 0, *, dims: int = 10, forcing: float = 8.0, dt: float = 0.05,
    component: int | None = 0,
):  # fmt: skip
    """Lorenz-96 ring ``x_i' = (x_(i+1) - x_(i-2)) x_(i-1) - x_i + F`` with ``dims`` sites
    (:func:`_flow`, RK4 steps of at most 0.005), sampled every ``dt`` (0.05 is the customary
    "6 hours").

    Seeded start ``F + N(0, 1)`` per site, 1000 samples of burn-in. With ``dims=10, F=8`` the
    largest Lyapunov exponent is ≈ 1.2 per time unit (≈ 1.6 for ``dims=8``; estimated with two
    nearby trajectories): a Lyapunov time of ≈ 0.85 time units, ≈ 17 samples at ``dt=0.05``.
    Returns site ``component`` as (n,), or all sites as (n, dims) when ``component`` is None.
    """
    n = _check_n(n)
    if isinstance(dims, bool) or int(dims) != dims or dims < 4:
        raise ValueError(f"dims must be an integer >= 4; got {dims!r}")
    component = _check_component(component, int(dims))
    y0 = forcing + np.random.default_rng(seed).normal(0, 1, int(dims))
    i = np.arange(int(dims))
    ip1, im1, im2 = (i + 1) % dims, i - 1, i - 2  # negative indices wrap around

    def f(x):
        return (x[ip1] - x[im2]) * x[im1] - x + forcing

    out = _flow(f, y0, n, dt, 1000, max_step=0.005)
    return out if component is None else out[:, component].copy()


def pulse_train(
    n: int = 2000, seed: int = 0, *, period: float = 50.0, jitter: float = 0.03,
    width: float = 2.0, shape_jitter: float = 0.05, secondary: float = 0.35,
):  # fmt: skip
    """Quasi-periodic pulse train (heartbeat- or gait-like): one sharp and one broad Gaussian
    pulse per beat, beat spacing and pulse shape jittered by a few percent.

    Beat ``k`` comes ``d_k = period (1 + jitter e_k)`` samples after beat ``k - 1``; it adds
    ``a_k exp(-(t - t_k)^2 / (2 w_k^2))`` and a broad wave ``secondary a_k exp(-(t - t_k -
    0.3 d_k)^2 / (2 (3 w_k)^2))``, with ``a_k = 1 + shape_jitter e'_k`` and ``w_k = width (1 +
    shape_jitter e''_k)``. Every ``e`` is an independent standard normal draw clipped to
    [-3, 3], so the beat spacing stays within ``period (1 ± 3 jitter)``. The first beat falls at
    a seeded phase; ``period`` and ``width`` are in samples. Not chaotic: the only
    unpredictability is the jitter, which accumulates over beats like a random walk.
    """
    n = _check_n(n)
    if not period > 0 or not width > 0:
        raise ValueError(f"period and width must be > 0; got {period!r}, {width!r}")
    if not 0 <= jitter < 1 / 3 or not 0 <= shape_jitter < 1 / 3:
        raise ValueError(
            f"jitter and shape_jitter must be in [0, 1/3); got {jitter}, {shape_jitter}"
        )
    rng = np.random.default_rng(seed)
    reach = 3.0 * width * (1 + 3 * shape_jitter) * 6  # the broad wave's +-6 std
    t = -(1.0 + rng.uniform()) * period - reach
    x = np.zeros(n)
    while t < n + reach:
        e = np.clip(rng.standard_normal(3), -3, 3)
        d = period * (1 + jitter * e[0])
        amp, w = 1 + shape_jitter * e[1], width * (1 + shape_jitter * e[2])
        for centre, a, s in ((t, amp, w), (t + 0.3 * d, secondary * amp, 3 * w)):
            lo, hi = max(int(np.floor(centre - 6 * s)), 0), min(int(np.ceil(centre + 6 * s)), n)
            if lo < hi:
                k = np.arange(lo, hi)
                x[lo:hi] += a * np.exp(-0.5 * ((k - centre) / s) ** 2)
        t += d
    return x


SIGNALS = {
    "sinusoids": sinusoids,
    "chirp": chirp,
    "steps": steps_and_impacts,
    "lorenz": lorenz,
    "mackey_glass": mackey_glass,
    "ar2": ar2,
}


#: generators for benchmarks of their own; not benchmark task names (see the module docstring)
BENCHMARK_SIGNALS = {
    "logistic": logistic,
    "henon": henon,
    "ikeda": ikeda,
    "rossler": rossler,
    "lorenz96": lorenz96,
    "pulse_train": pulse_train,
}


def make_signal(name: str, n: int = 2000, seed: int = 0, **kwargs) -> np.ndarray:
    """Generate the synthetic signal ``name`` (one of :data:`SIGNALS` or
    :data:`BENCHMARK_SIGNALS`)."""
    known = {**SIGNALS, **BENCHMARK_SIGNALS}
    if name not in known:
        raise ValueError(f"name must be one of {sorted(known)}; got {name!r}")
    # seed=None gave another signal on every call: "the same seed, the same signal" needs one
    x = known[name](n, check_int(seed, "seed", minimum=0), **kwargs)
    # a NaN or infinite setting (rho=nan, power=nan, f1=inf...) gave a NaN series unsaid
    if not np.isfinite(x).all():
        raise ValueError(f"{name} with {kwargs or 'its defaults'} is not finite: check them")
    return x
