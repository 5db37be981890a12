"""Error metrics: NaN in an estimate is counted, never hidden."""

import numpy as np
import pytest

from tssdpa.compare import metrics


def test_metrics():
    t = np.array([0.0, 1.0, 2.0])
    assert metrics.mse(t, t + 1) == 1.0 and metrics.mae(t, t - 2) == 2.0
    assert metrics.rmse(t, t) == 0.0
    s = np.sin(np.linspace(0, 20, 1000))
    n = s + 0.1
    assert metrics.snr_db(s, n) == pytest.approx(10 * np.log10(np.var(s) / 0.01))
    assert metrics.snr_improvement_db(s, n, s + 0.01) == pytest.approx(20.0)
    assert np.isnan(metrics.snr_improvement_db(s, n, np.full_like(s, np.nan)))
    with pytest.raises(ValueError, match="shape"):
        metrics.mse(t, t[:2])
    m, a = metrics.horizon_errors(np.zeros((5, 3, 2)), np.ones((5, 3, 2)))
    np.testing.assert_array_equal(m, [1, 1, 1])


def test_a_missing_truth_is_left_out_while_a_missing_estimate_is_counted():
    # a NaN in the truth (a gap in the user's recording) made every score NaN
    t = np.array([0.0, np.nan, 2.0, 3.0])
    e = np.array([1.0, 5.0, 2.0, 1.0])
    assert metrics.mse(t, e) == pytest.approx(5 / 3) and metrics.mae(t, e) == pytest.approx(1.0)
    assert np.isnan(metrics.mse(t, np.array([np.nan, 0.0, 2.0, 3.0])))
    assert metrics.mse(t, np.array([0.0, np.nan, 2.0, 3.0])) == 0.0  # no truth to miss there
    s = np.sin(np.linspace(0, 20, 1000))
    gap = s.copy()
    gap[100] = np.nan
    assert metrics.snr_improvement_db(gap, s + 0.1, s + 0.01) == pytest.approx(20.0)
    assert np.isnan(metrics.mse(np.full(3, np.nan), np.zeros(3)))
