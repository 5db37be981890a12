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
