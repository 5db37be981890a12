"""Sines in a series whose noise level is read from its spectrum (tssdpa.estimators.whittle's
spectral lines): left out of the Whittle fits and of the quarters' misfit test, whose ARMA
spectra cannot describe them."""

import math

import numpy as np
import pytest
from scipy import signal

from tssdpa.estimators import linear_noise, whittle
from tssdpa.estimators.white_noise import noise_level
from tssdpa.estimators.whittle import line_frequencies, periodogram, spectral_lines


def sine_over_ar(snr_db, a=0.9, period=24.7, amplitude=1.0, n=2000, seed=0):
    """(clean, noisy): a unit-variance AR(1) of coefficient ``a`` plus a sine of ``period``
    samples (between two Fourier frequencies), plus white noise at ``snr_db``."""
    rng = np.random.default_rng(seed)
    ar = signal.lfilter([1.0], [1.0, -a], rng.normal(size=n + 500))[500:]
    t = np.arange(n)
    clean = ar / ar.std() + amplitude * np.sin(2 * math.pi * t / period + rng.uniform(0, 6))
    clean = (clean - clean.mean()) / clean.std()
    return clean, clean + 10 ** (-snr_db / 20) * rng.normal(size=n)


def test_a_sine_between_two_fourier_frequencies_is_a_line_with_the_values_beside_it():
    n, period = 2000, 24.7
    v = np.sin(2 * math.pi * np.arange(n) / period) + 0.3 * np.random.default_rng(0).normal(size=n)
    w, power, _ = periodogram(v)
    lines = np.flatnonzero(spectral_lines(power))
    at = int(np.argmin(np.abs(w - 2 * math.pi / period)))
    assert at in lines and at + 1 in lines  # the sine's frequency lies between these two
    assert np.all(np.abs(lines - at) <= 4)  # its leakage, nothing elsewhere
    np.testing.assert_array_equal(line_frequencies(v), w[lines])


@pytest.mark.parametrize("n, a", [(2000, 0.0), (2000, 0.9), (300, 0.0), (300, 0.95), (300, 0.99)])
def test_smooth_spectra_have_lines_only_by_chance_at_the_level_set(n, a):
    # white noise and steep AR(1) spectra, long and short: a line anywhere in at most 1% of the
    # series (LINE_ALPHA) on average; at most 5 of 100 allows for chance. (Windows taken from
    # further in for the lowest frequencies found "lines" there in most short steep series.)
    found = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        v = signal.lfilter([1.0], [1.0, -a], rng.normal(size=n + 500))[500:]
        found += bool(spectral_lines(periodogram(v)[1]).any())
    assert found <= 5


def test_the_periodogram_without_lines_leaves_out_exactly_the_lines_before_its_runs():
    _, noisy = sine_over_ar(20.0)
    w, power, _ = periodogram(noisy)
    keep = ~spectral_lines(power)
    assert 0 < (~keep).sum() < 10
    kept = periodogram(noisy, drop_lines=True)
    np.testing.assert_array_equal(kept[0], w[keep])
    np.testing.assert_array_equal(kept[1], power[keep])
    wb, pb, counts = periodogram(noisy, bins=64, drop_lines=True)
    assert counts.sum() == keep.sum()
    np.testing.assert_allclose((pb * counts).sum(), power[keep].sum())


def test_a_sine_over_an_ar_process_gets_the_noise_level_between_its_lines(monkeypatch):
    # fitted with the sine's values an AR(p) plus noise bends to the peak and takes the
    # spectrum beside it for noise: the level stays the residual bound, near twice the truth
    clean, noisy = sine_over_ar(20.0)
    truth = np.std(noisy - clean)
    bound = noise_level(noisy[:, None], checked_floor=False)[0]
    assert bound > 1.5 * truth
    try:
        linear_noise._ANSWERS.clear()  # answers are kept by series and bound, not the rule
        assert 0.7 * truth < noise_level(noisy[:, None])[0] < 1.3 * truth
        monkeypatch.setattr(whittle, "LINE_ALPHA", 0.0)  # no value is a line: as before
        linear_noise._ANSWERS.clear()
        assert noise_level(noisy[:, None])[0] == bound
    finally:
        linear_noise._ANSWERS.clear()


def test_the_misfit_test_leaves_out_each_stretchs_values_at_the_lines():
    # an AR(1) of innovation variance 1 under a sine, plus noise: the spectrum of the AR(1)
    # plus noise fits every quarter once the values at the sine's frequency are left out
    rng = np.random.default_rng(0)
    n, s2 = 2000, 0.05
    ar = signal.lfilter([1.0], [1.0, -0.9], rng.normal(size=n + 500))[500:]
    noisy = (
        ar + 3.0 * np.sin(2 * math.pi * np.arange(n) / 30.3) + math.sqrt(s2) * rng.normal(size=n)
    )
    lines = line_frequencies(noisy)
    assert np.all(np.abs(lines - 2 * math.pi / 30.3) < 5 * 2 * math.pi / n)
    assert linear_noise.misfit_p(noisy, [0.9], 1.0, s2) < 1e-6
    assert linear_noise.misfit_p(noisy, [0.9], 1.0, s2, lines=lines) > 0.01
    # a strong sine leaks far into the plain periodogram's values: compared tapered, it fits
    strong = noisy + 7.0 * np.sin(2 * math.pi * np.arange(n) / 30.3)
    assert linear_noise.misfit_p(strong, [0.9], 1.0, s2, lines=line_frequencies(strong)) > 0.01
    # and so does the seasonal path's tapered periodogram (a factor of Φ 0 changes nothing)
    assert linear_noise.misfit_p(noisy, [0.9], 1.0, s2, (), (12, 0.0, 0.0)) < 1e-6
    assert linear_noise.misfit_p(noisy, [0.9], 1.0, s2, (), (12, 0.0, 0.0), lines=lines) > 0.01


def test_a_fit_with_too_little_left_beside_the_lines_is_refused_not_an_error():
    # five lines in 200 samples leave fewer values in a quarter than the test's runs: the fit
    # without them cannot be judged (p 0: its answer is the bound), where it raised
    v = np.random.default_rng(0).normal(size=200)
    lines = 2 * math.pi * np.array([0.06, 0.16, 0.26, 0.36, 0.46])
    assert linear_noise.misfit_p(v, [0.0], 1.0, 0.1, lines=lines) == 0.0
    assert 0.0 < linear_noise.misfit_p(v, [0.0], 1.0, 0.1) <= 1.0


def test_a_short_series_under_many_sines_gets_a_level_within_its_bound():
    rng = np.random.default_rng(14)
    n, t = 200, np.arange(200)
    v = signal.lfilter([1.0], [1.0, -0.8], rng.normal(size=n + 100))[100:]
    for f in (0.1, 0.16, 0.22, 0.28, 0.34, 0.40, 0.46):
        v = v + 0.6 * np.sin(2 * math.pi * f * t + rng.uniform(0, 6))
    v = (v - v.mean()) / v.std() + 0.1 * rng.normal(size=n)
    assert line_frequencies(v).size >= 12
    bound = noise_level(v[:, None], checked_floor=False)[0]
    assert 0.1 * bound <= noise_level(v[:, None])[0] <= bound
