"""The benchmark generators of tssdpa.data.synthetic: seeded, finite, on their attractors."""

import numpy as np
import pytest
from scipy.signal import find_peaks

from tssdpa import data as D
from tssdpa.data import synthetic as S

NEW = sorted(S.BENCHMARK_SIGNALS)


@pytest.mark.parametrize("name", NEW)
def test_benchmark_signals_are_seeded_finite_and_bounded(name):
    a = S.make_signal(name, 400, seed=1)
    b = S.BENCHMARK_SIGNALS[name](400, seed=1)
    c = S.make_signal(name, 400, seed=2)
    assert a.shape == (400,) and a.dtype == np.float64
    assert np.all(np.isfinite(a)) and np.abs(a).max() < 50
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert np.std(a) > 0.1


def test_benchmark_signals_leave_the_task_names_alone():
    # the default comparison and the task names are built from SIGNALS only
    assert not set(S.BENCHMARK_SIGNALS) & set(D.SIGNALS)
    assert not set(S.BENCHMARK_SIGNALS) & set(D.DATASETS)
    with pytest.raises(ValueError, match="name must be one of"):
        S.make_signal("nope")


@pytest.mark.parametrize("name", ["henon", "ikeda"])
def test_map_components(name):
    xy = S.BENCHMARK_SIGNALS[name](300, 0, component=None)
    assert xy.shape == (300, 2)
    np.testing.assert_array_equal(xy[:, 0], S.BENCHMARK_SIGNALS[name](300, 0))


def test_logistic_stays_in_its_invariant_interval():
    r = 3.9
    x = S.logistic(5000, seed=3, r=r)
    lo, hi = r * r * (4 - r) / 16, r / 4
    assert lo - 1e-12 <= x.min() and x.max() <= hi + 1e-12
    assert 0 < x.min() and x.max() < 1
    np.testing.assert_allclose(x[1:], r * x[:-1] * (1 - x[:-1]), rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="r must"):
        S.logistic(100, r=4.5)


def test_henon_stays_in_its_attractor_box_and_obeys_the_map():
    xy = S.henon(5000, seed=4, component=None)
    x, y = xy.T
    assert np.abs(x).max() < 1.29 and np.abs(y).max() < 0.39
    assert x.min() < -1.2 and x.max() > 1.2  # fills the attractor, not a periodic orbit
    np.testing.assert_allclose(x[1:], 1 - 1.4 * x[:-1] ** 2 + y[:-1], atol=1e-12)
    np.testing.assert_allclose(y[1:], 0.3 * x[:-1], atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_ikeda_is_on_the_chaotic_attractor(seed):
    x = S.ikeda(3000, seed=seed)
    assert -0.45 < x.min() and x.max() < 1.8
    # the chaotic attractor, not the coexisting periodic orbit
    assert len(np.unique(np.round(x, 8))) > 2900 and x.std() > 0.4


def test_largest_lyapunov_exponent_of_the_logistic_map():
    x = S.logistic(20000, seed=0)
    lam = np.mean(np.log(np.abs(3.9 * (1 - 2 * x))))
    assert 0.45 < lam < 0.53


def test_rossler_is_on_the_attractor():
    xyz = S.rossler(1500, seed=0, component=None)
    assert xyz.shape == (1500, 3)
    x, _, z = xyz.T
    assert -12 < x.min() < -6 and 8 < x.max() < 13 and z.min() > 0 and z.max() < 30
    # mean rotation period ≈ 6 time units = 30 samples at dt=0.2: count upward zero crossings
    ups = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    assert 27 < np.diff(ups).mean() < 34


def test_lorenz96_sites_and_statistics():
    X = S.lorenz96(1000, seed=0, component=None)
    assert X.shape == (1000, 10)
    np.testing.assert_array_equal(X[:, 3], S.lorenz96(1000, seed=0, component=3))
    assert 1.5 < X.mean() < 3.5 and 3 < X.std() < 4.5  # F=8: mean ≈ 2.3, std ≈ 3.6
    assert S.lorenz96(200, seed=0, dims=8).shape == (200,)
    with pytest.raises(ValueError, match="dims"):
        S.lorenz96(100, dims=3)


def test_coarse_lorenz_is_the_same_system():
    x = D.make_signal("lorenz", 400, seed=0, dt=0.1)
    assert x.shape == (400,) and np.abs(x).max() < 25 and x.std() > 5


@pytest.mark.parametrize("seed", [0, 7])
def test_pulse_train_period_stays_within_the_jitter(seed):
    period, jitter = 40.0, 0.04
    x = S.pulse_train(8000, seed=seed, period=period, jitter=jitter)
    # a sharp pulse is at most 1 + 3 * 0.05 tall, plus the tail of its own broad wave
    assert x.min() >= 0 and x.max() < 1.25
    peaks, _ = find_peaks(x, height=0.6)  # the sharp pulses (the broad wave stays below 0.45)
    gaps = np.diff(peaks)
    # the spacing is clipped to period (1 +- 3 jitter); a peak is within half a sample of its
    # beat (the neighbouring pulses' tails are negligible)
    assert (
        period * (1 - 3 * jitter) - 1 <= gaps.min() and gaps.max() <= period * (1 + 3 * jitter) + 1
    )
    assert abs(gaps.mean() - period) < 1.0 and gaps.std() > 0.5  # jittered, not periodic
    assert len(peaks) == pytest.approx(8000 / period, abs=3)
    widths = np.array([np.sum(x[p - 10 : p + 11] > 0.5 * x[p]) for p in peaks[1:-1]])
    assert widths.std() > 0  # the shape varies too


def test_pulse_train_without_jitter_is_periodic():
    x = S.pulse_train(1000, seed=0, period=25.0, jitter=0.0, shape_jitter=0.0)
    np.testing.assert_allclose(x[100:900], x[125:925], atol=1e-12)
    with pytest.raises(ValueError, match="jitter"):
        S.pulse_train(100, jitter=0.5)
    with pytest.raises(ValueError, match="period"):
        S.pulse_train(100, period=0)


def test_flow_samples_follow_the_exact_solution_from_the_first_sample():
    # sample i is y(i dt): against a tight adaptive solver over the first two time units
    from scipy.integrate import solve_ivp

    def f(s):
        x, y, z = s
        return np.array([10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z])

    y0 = np.array([1.0, 1.0, 20.0])
    t = np.arange(100) * 0.02
    exact = solve_ivp(lambda _, s: f(s), (0, t[-1]), y0, t_eval=t, rtol=1e-12, atol=1e-12).y.T
    got = S._flow(f, y0, 100, 0.02, 0, max_step=0.005)
    np.testing.assert_array_equal(got[0], y0)
    np.testing.assert_allclose(got, exact, atol=1e-4)


def test_chaotic_series_do_not_depend_on_the_blas_kernel():
    # A chaotic trajectory turns the last bit of any rounding into another series: the flows
    # must not go through BLAS, whose kernel (picked per CPU) rounds differently.
    import os
    import subprocess
    import sys

    code = (
        "import hashlib; from threadpoolctl import threadpool_info; "
        "from tssdpa.data import synthetic as S; h = hashlib.sha256(); "
        "[h.update(S.make_signal(n, 300, 0).tobytes()) "
        "for n in ('lorenz', 'rossler', 'lorenz96', 'ikeda')]; "
        "print(h.hexdigest(), sorted(str(i.get('architecture')) for i in threadpool_info() "
        "if i.get('internal_api') == 'openblas'))"
    )
    digests, kernels = set(), set()
    for kernel in (None, "Haswell", "Sandybridge"):
        env = dict(os.environ)
        if kernel:
            env["OPENBLAS_CORETYPE"] = kernel
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        digest, arch = out.stdout.strip().split(" ", 1)
        digests.add(digest)
        kernels.add(arch)
    if len(kernels) < 2:  # not OpenBLAS, or one that ignores OPENBLAS_CORETYPE
        pytest.skip(f"the BLAS kernel could not be changed here ({kernels})")
    assert len(digests) == 1


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: S.logistic(10, burn=-5), "burn"),
        (lambda: S.henon(10, burn=2.5), "burn"),
        (lambda: S.mackey_glass(10, tau=0.01), "tau"),
        (lambda: S.mackey_glass(10, tau=-17.0), "tau"),
        (lambda: S.mackey_glass(10, substeps=0), "substeps"),
        (lambda: S.mackey_glass(10, dt=0.0), "dt"),
    ],
)
def test_settings_that_would_leave_samples_unset_are_refused_naming_them(call, match):
    """A negative burn-in would return rows never iterated; a delay under half a substep
    would read the delayed value before it is integrated."""
    with pytest.raises((ValueError, TypeError), match=match):
        call()


@pytest.mark.parametrize(
    "name, kwargs, match",
    [
        ("sinusoids", {"fs": 0.0}, "fs"),
        ("chirp", {"fs": 0.0}, "fs"),
        ("sinusoids", {"n_components": 0}, "n_components"),
        ("steps", {"n_steps": -1}, "n_steps"),
        ("mackey_glass", {"power": float("nan")}, "power"),
        ("lorenz", {"rho": float("nan")}, "rho"),
        ("rossler", {"c": float("inf")}, "'c'"),
    ],
)
def test_a_setting_that_gives_no_finite_signal_is_refused_naming_it(name, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        S.make_signal(name, 50, 0, **kwargs)


@pytest.mark.parametrize(
    "name, kwargs, valid",
    [
        ("lorenz", {}, r"\[0, 2\]"),
        ("henon", {}, r"\[0, 1\]"),
        ("ikeda", {}, r"\[0, 1\]"),
        ("rossler", {}, r"\[0, 2\]"),
        ("lorenz96", {"dims": 5}, r"\[0, 4\]"),
    ],
)
def test_a_component_the_system_lacks_is_refused_naming_component_and_the_valid_range(
    name, kwargs, valid
):
    with pytest.raises(ValueError, match=rf"component must be in {valid}"):
        S.make_signal(name, 50, 0, component=5, **kwargs)
    with pytest.raises(ValueError, match="component"):
        S.make_signal(name, 50, 0, component=-1, **kwargs)
    assert S.make_signal(name, 50, 0, component=None, **kwargs).ndim == 2
