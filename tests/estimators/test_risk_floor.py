"""SURE's floor (``selection.risk_floor``): no score below the least error an output can have.

Values on a lattice -- a sensor's counts mixed by its calibration, a hair of jitter -- made
SURE score a kernel narrower than the lattice's cells (which gives the input back) as a
perfect filter, and the default fit returned an IMU gyroscope as it came.
"""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa import ProjectionFilter
from tssdpa.estimators.selection import FLOOR_LEVEL_SHARE, risk_floor, sure_mse
from tssdpa.filters import projection_fit

STEP = 0.0616


def _sensor_axis(seed: int = 0, rounded: bool = True, n: int = 1000):
    """``(noisy, clean)``: one axis of a three-axis sensor with one step of noise, rounded to
    its counts (or not), mixed by a calibration near the identity, plus 1e-6 of jitter."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    raw = np.column_stack([0.3 * np.sin(2 * np.pi * t / 300 + k)
                           + 0.15 * np.sin(2 * np.pi * t / 71 + 2 * k)
                           for k in range(3)]) / STEP  # fmt: skip
    counts = raw + rng.standard_normal(raw.shape)
    counts = np.round(counts) if rounded else counts
    mix = np.eye(3) + 0.02 * rng.standard_normal((3, 3))
    noisy = (counts @ mix.T)[:, 0] * STEP + 1e-6 * rng.standard_normal(len(t))
    return noisy, (raw @ mix.T)[:, 0] * STEP


def _rmse(a, b) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)))


@pytest.mark.parametrize("causal", [True, False])
def test_a_calibrated_sensor_axis_on_a_lattice_is_filtered_not_given_back(causal):
    noisy, clean = _sensor_axis()
    y = ProjectionFilter(causal=causal).fit(noisy).filter(noisy)
    # without the floor the output was the input to 0.5% (RMSE ratio 0.99-1.0)
    assert _rmse(y, clean) < (0.75 if causal else 0.4) * _rmse(noisy, clean)


def test_the_floor_is_the_triangle_inequality_with_the_level():
    rng = np.random.default_rng(0)
    clean = np.sin(np.arange(4000) / 30)[:, None]
    noise = 0.2 * rng.standard_normal(clean.shape)
    x, ok = clean + noise, np.ones(clean.shape, bool)
    level = np.array([0.2])
    # the identity: the least error is the level (its share)
    assert risk_floor(x, x, level, ok) == pytest.approx((FLOOR_LEVEL_SHARE * 0.2) ** 2)
    # an output that removes the noise may have no error: no floor
    assert risk_floor(x, clean, level, ok) == 0.0
    # and the floor is below the error of anything in between
    for share in (0.1, 0.5, 0.8):
        y = x - share * noise
        assert risk_floor(x, y, level, ok) <= np.mean((y - clean) ** 2)


def test_sure_with_the_floor_is_sure_wherever_the_floor_is_0_or_below():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((500, 2))
    probe = rng.choice([-1.0, 1.0], size=x.shape)
    noise = np.array([1.0, 1.0])
    smooth = np.zeros_like(x)  # changes the data by the noise: no floor
    plain = sure_mse(x, smooth, smooth, noise, probe, 1e-3)
    assert sure_mse(x, smooth, smooth, noise, probe, 1e-3, floor=noise) == plain
    # the identity with a zero divergence scores -1 without the floor, the floor with it
    ident = sure_mse(x, x, x, noise, probe, 1e-3)
    assert ident == pytest.approx(-1.0)
    assert sure_mse(x, x, x, noise, probe, 1e-3, floor=noise) == pytest.approx(FLOOR_LEVEL_SHARE**2)
    # a level of 0 in a channel (noise not in every sample) leaves it without a floor
    assert sure_mse(x, x, x, noise, probe, 1e-3, floor=np.zeros(2)) == ident


def test_the_floor_raises_no_score_of_a_fit_on_a_continuous_series(monkeypatch):
    noisy, _ = _sensor_axis(rounded=False)
    raised = []
    original = projection_fit.sure_mse

    def sure(*args, floor=None, **kwargs):
        raised.append(original(*args, floor=floor, **kwargs) != original(*args, **kwargs))
        return original(*args, floor=floor, **kwargs)

    monkeypatch.setattr(projection_fit, "sure_mse", sure)
    ProjectionFilter(causal=True, window=[16, 64]).fit(noisy)
    assert raised and not any(raised)
