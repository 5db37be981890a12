"""lattice_step: the step of a calibrated sensor's lattice, and the default fit on one."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tssdpa.estimators.selection import lattice_step, resolution
from tssdpa.estimators.white_noise import noise_level
from tssdpa.filters import ProjectionFilter

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments"))
from lattice_probe import STEP, sensor_axis  # noqa: E402 -- the probe's simulated sensor


def calibrated_axis(levels: float, seed: int, rounded: bool = True):
    """``(noisy, clean)``: 1,000 samples of one axis of the probe's calibrated three-axis
    sensor (counts with white noise of ``levels`` counts, rounded, mixed by a calibration near
    the identity, plus a hair of jitter)."""
    return sensor_axis(levels, seed, rounded, n=1000)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("levels", [0.5, 2.0])
def test_a_calibrated_axis_has_the_step_of_its_counts_where_resolution_sees_a_hair(levels, seed):
    x2 = calibrated_axis(levels, seed)[0][:, None]
    assert resolution(x2)[0] < 1e-3 * STEP  # the values' gaps: the calibration's hair
    step = lattice_step(x2, noise_level(x2))[0]
    assert abs(step / STEP - 1.0) < 0.1  # the calibration's gain is 1 +- a few percent


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_continuous_noise_and_a_noisy_staircase_have_no_lattice(seed):
    rng = np.random.default_rng(seed)
    smooth = calibrated_axis(1.0, seed, rounded=False)[0]
    stairs = np.repeat(np.arange(20.0), 50) + 0.05 * rng.standard_normal(1000)
    for x in (smooth, stairs, rng.standard_normal(1000)):
        x2 = x[:, None]
        assert lattice_step(x2, noise_level(x2))[0] == 0.0


# df 3 and 5 (lighter tails, ~6 s each, their noise level is slower to find) run with -m slow
@pytest.mark.parametrize(
    "df", [1.5, 2.0] + [pytest.param(d, marks=pytest.mark.slow) for d in (3.0, 5.0)]
)
def test_heavy_tailed_noise_is_no_lattice(df):
    """Its many small changes line up at any step far beyond them (the level its tails raise
    is several times their spread): without the peak test, Student-t noise passed for a
    lattice of about 3 noise levels in up to 12 of 15 series."""
    found = []
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        t = np.arange(2000)
        x2 = (np.sin(2 * np.pi * t / 200) + 0.1 * rng.standard_t(df, t.size))[:, None]
        found.append(lattice_step(x2, noise_level(x2))[0])
    assert not any(found)


def test_a_channel_without_noise_or_changes_has_none_and_whole_steps_are_one():
    walk = np.cumsum(np.random.default_rng(0).choice([-1.0, 0.0, 1.0], 200))  # counts
    x2 = np.column_stack([np.zeros(200), walk, walk])
    step = lattice_step(x2, np.array([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(step, [0.0, 0.0, 1.0])  # no level: no range to look in


@pytest.mark.parametrize("causal", [True, False])
def test_the_default_fit_filters_a_calibrated_axis_as_it_filters_the_same_values_unrounded(
    causal,
):
    """Kernels narrower than the lattice's cells weigh a sample's near-repeats, which share
    its rounding: SURE scored that near-identity below every real filter and the fit gave
    the recording back (0.99-1.01 of the noisy series' error). With the kernel kept to half
    a step or wider the rounded axis is filtered about as well as the unrounded one."""
    noisy, clean = calibrated_axis(1.0, 0)
    smooth, clean_s = calibrated_axis(1.0, 0, rounded=False)

    def ratio(x, c):
        y = ProjectionFilter(causal=causal).fit(x).filter(x)
        return np.sqrt(np.mean((y - c) ** 2) / np.mean((x - c) ** 2))

    lattice, continuous = ratio(noisy, clean), ratio(smooth, clean_s)
    assert lattice < 0.8
    assert lattice < 1.25 * continuous
