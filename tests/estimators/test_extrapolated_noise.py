"""The noise level of a signal rough in time but deterministic in state: the neighbour bound
extrapolated to no noise in its context (white_noise._extrapolated_level, SIMEX)."""

import math

import numpy as np
import pytest

from tssdpa.data.synthetic import make_signal
from tssdpa.estimators import white_noise
from tssdpa.estimators.white_noise import noise_level
from tssdpa.filters import ProjectionFilter


def noisy_signal(name, snr_db, n=2000, seed=0, noise="gaussian", **opts):
    """(clean, noisy): ``name`` z-scored, plus white noise at ``snr_db`` (of unit variance:
    Gaussian, or a Student-t of 3 degrees of freedom)."""
    clean = np.asarray(make_signal(name, n=n, seed=seed, **opts), dtype=float)
    clean = (clean - clean.mean()) / clean.std()
    rng = np.random.default_rng(seed + 100)
    e = rng.normal(size=n) if noise == "gaussian" else rng.standard_t(3, size=n) / np.sqrt(3)
    return clean, clean + 10 ** (-snr_db / 20) * e


def level(x, **kw):
    return noise_level(x[:, None], **kw)[0]


@pytest.mark.parametrize("name", ["ikeda", "henon"])
def test_a_chaotic_maps_level_is_its_magnified_neighbour_bound_brought_back_to_the_noise(name):
    clean, noisy = noisy_signal(name, 10.0)
    true = np.std(noisy - clean)
    bound = level(noisy, extrapolated=False)
    assert bound > 1.15 * true  # the context's noise, magnified
    assert 0.85 * true < level(noisy) < min(1.15 * true, 0.9 * bound)


def test_a_default_fit_on_a_chaotic_map_beats_the_fit_without_the_extrapolation(monkeypatch):
    clean, noisy = noisy_signal("ikeda", 10.0)

    def error():
        y = ProjectionFilter(causal=False).fit(noisy).filter(noisy)
        return np.mean((np.asarray(y) - clean) ** 2)

    extrapolated = error()
    monkeypatch.setattr(white_noise, "_extrapolated_level", lambda v, m, k, residual: math.inf)
    assert extrapolated < 0.8 * error()
    assert extrapolated < np.mean((noisy - clean) ** 2)  # and the map is denoised at all


@pytest.mark.parametrize("snr_db", [0.0, 10.0, 20.0])
def test_heavy_tailed_noise_on_a_chaotic_map_is_not_taken_for_its_core(snr_db):
    # the extrapolation measures the noise's core (MAD scale); a Student-t's is 0.65 of its
    # standard deviation, and SURE told that keeps noise: the residual's tails bring it back
    clean, noisy = noisy_signal("logistic", snr_db, noise="student_t")
    assert level(noisy) >= 0.95 * level(noisy, extrapolated=False)


@pytest.mark.parametrize(
    "name, opts", [("lorenz", {}), ("ar2", {}), ("pulse_train", {}), ("mackey_glass", {})]
)
def test_smooth_and_linear_signals_keep_their_level(name, opts):
    # an interpolator is about as tight as the neighbours there: nothing is magnified
    _, noisy = noisy_signal(name, 10.0, **opts)
    assert level(noisy) == level(noisy, extrapolated=False)


def test_the_extrapolation_never_exceeds_the_bound_it_is_given():
    rng = np.random.default_rng(0)
    v = 0.3 * rng.normal(size=2000)  # no magnification: the line lands near the bound
    residual = white_noise._neighbour_residual(v, 2, 8)
    bound = white_noise._neighbour_bound(v, 2, 8)
    assert white_noise._extrapolated_level(v, 2, 8, residual) <= bound
    # a residual half as large: its bound halves, and the line (from v's noise) lands above
    assert white_noise._extrapolated_level(v, 2, 8, 0.5 * residual) == 0.5 * bound


@pytest.mark.parametrize("scale", [1e-120, 1e90])
def test_the_extrapolation_is_the_same_at_any_scale_of_the_data(scale):
    # the line is fitted in units of the squared bound: squared twice, 1e-120 underflowed
    clean, noisy = noisy_signal("ikeda", 10.0)
    assert level(noisy * scale) == pytest.approx(scale * level(noisy), rel=1e-9)
    assert level(noisy) < level(noisy, extrapolated=False)


def test_a_series_with_gaps_keeps_its_bound():
    # the samples left after dropping NaN are not evenly spaced: a context across a gap is
    # not a state
    _, noisy = noisy_signal("ikeda", 10.0)
    gappy = noisy.copy()
    gappy[::97] = np.nan
    assert level(gappy) == level(gappy, extrapolated=False)


def test_the_extrapolated_level_is_the_same_on_every_call_and_leaves_the_series_alone():
    _, noisy = noisy_signal("logistic", 20.0)
    kept = noisy.copy()
    first = level(noisy)
    assert first < level(noisy, extrapolated=False)
    assert level(noisy) == first
    np.testing.assert_array_equal(noisy, kept)
