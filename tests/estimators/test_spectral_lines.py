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


def detected(v):
    """The frequencies of ``v``'s spectral lines, before the steadiness test."""
    w, power, _ = periodogram(v)
    return w[spectral_lines(power)]


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
    # the lines as spectral_lines finds them (this draw's sine fails the steadiness test by
    # chance, p 0.006 at its 1% level: line_frequencies leaves it in; see the tests below)
    lines = detected(noisy)
    assert np.all(np.abs(lines - 2 * math.pi / 30.3) < 5 * 2 * math.pi / n)
    assert linear_noise.misfit_p(noisy, [0.9], 1.0, s2) < 1e-6
    assert linear_noise.misfit_p(noisy, [0.9], 1.0, s2, lines=lines) > 0.01
    # a strong sine leaks far into the plain periodogram's values: compared tapered, it fits
    strong = noisy + 7.0 * np.sin(2 * math.pi * np.arange(n) / 30.3)
    assert linear_noise.misfit_p(strong, [0.9], 1.0, s2, lines=detected(strong)) > 0.01
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


def test_steady_sines_over_ar_processes_pass_the_steadiness_test_at_about_its_level():
    # a sine of fixed amplitude and phase over an AR(1) of 0.9 plus noise: its run fails at
    # STEADY_ALPHA (1%) by chance; at most 5 of 100 allows for that
    failed = tested = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        ar = signal.lfilter([1.0], [1.0, -0.9], rng.normal(size=2500))[500:]
        t = np.arange(2000)
        v = ar / ar.std() + 0.5 * np.sin(2 * math.pi * t / 30.3 + rng.uniform(0, 6))
        v = v + 0.2 * rng.normal(size=2000)
        w, power, _ = periodogram(v)
        near = np.abs(w - 2 * math.pi / 30.3) < 3 * 2 * math.pi / 2000
        if spectral_lines(power)[near].any():
            tested += 1
            failed += not whittle.steady_lines(v - v.mean(), w, power)[near].any()
    assert tested >= 90 and failed <= 5


def wandering(n=2000, period=30.3, step=0.05, harmonics=(1.0,), seed=0):
    """A periodic waveform (``harmonics``: the amplitudes of its first harmonics) whose phase
    takes a random walk of ``step`` radians a sample, over white noise of 0.3."""
    rng = np.random.default_rng(seed)
    phase = 2 * math.pi * np.arange(n) / period + np.cumsum(step * rng.normal(size=n))
    x = sum(a * np.sin((k + 1) * phase) for k, a in enumerate(harmonics))
    return x + 0.3 * rng.normal(size=n)


def test_an_oscillation_whose_phase_wanders_is_no_line_though_its_peak_is_as_narrow():
    v = wandering()
    w, power, _ = periodogram(v)
    assert spectral_lines(power).any()  # a peak of a few values
    assert not whittle.steady_lines(v - v.mean(), w, power).any()
    assert line_frequencies(v).size == 0
    np.testing.assert_array_equal(periodogram(v, drop_lines=True)[1], power)


def test_the_harmonics_of_a_wandering_oscillation_are_no_lines_either():
    v = wandering(harmonics=(1.0, 0.4, 0.25), step=0.02)
    w, power, _ = periodogram(v)
    found = w[spectral_lines(power)]
    for k in (1, 2, 3):  # each harmonic has a run of line values
        assert np.any(np.abs(found - 2 * math.pi * k / 30.3) < 3 * 2 * math.pi / 2000)
    assert line_frequencies(v).size == 0


def test_a_chaotic_flows_quasi_period_is_no_line_and_keeps_the_floor_from_the_truth(monkeypatch):
    # Mackey-Glass at 10 dB: its quasi-period and harmonics make runs of line values; taken for
    # sines and left out, the ARMA(p, 1) fit put the floor at about half the noise added
    from tssdpa.data import add_noise
    from tssdpa.data.synthetic import mackey_glass

    x = mackey_glass(2000, seed=0)
    x = (x - x.mean()) / x.std()
    noisy = add_noise(x, "gaussian", 10.0, seed=0)
    truth = np.std(noisy - x)
    assert spectral_lines(periodogram(noisy)[1]).sum() >= 6
    assert line_frequencies(noisy).size == 0
    try:
        linear_noise._ANSWERS.clear()
        assert 0.9 * truth < noise_level(noisy[:, None])[0] < 1.1 * truth
        monkeypatch.setattr(whittle, "STEADY_ALPHA", 0.0)  # every run a sine: as before
        linear_noise._ANSWERS.clear()
        assert noise_level(noisy[:, None])[0] < 0.7 * truth
    finally:
        linear_noise._ANSWERS.clear()
