"""The zero-phase Butterworth low-pass of signal/lowpass.py (the projection filters' base)."""

import numpy as np
import pytest

from tssdpa.signal.lowpass import _butterworth, sosfiltfilt_padlen, zero_phase_lowpass


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 15])
def test_a_series_shorter_than_the_edge_padding_is_low_passed_not_returned_as_a_transient(n):
    # padded with its length less one, the slow filter started from the odd extension's far
    # end: a 2-sample ramp 0, 1 came back -0.999, -0.999, below both samples (order 4,
    # cutoff 0.05); its output now stays within the samples' range, channel by channel
    assert n <= sosfiltfilt_padlen(_butterworth(4, 0.05))
    x = np.stack([np.linspace(0, 1, n), np.full(n, 5.0)], axis=1)
    y = zero_phase_lowpass(x, cutoff=0.05, order=4)
    assert y.shape == x.shape
    assert (y[:, 0] >= -1e-9).all() and (y[:, 0] <= 1 + 1e-9).all()
    np.testing.assert_allclose(y[:, 1], 5.0, rtol=1e-12)  # a constant stays itself
    if n > 1:
        assert y[0, 0] <= y[-1, 0]  # a rising ramp still rises


def test_a_series_longer_than_the_edge_padding_is_scipys_sosfiltfilt():
    import scipy.signal

    x = np.random.default_rng(0).standard_normal((40, 2))
    sos = scipy.signal.butter(4, 0.05, output="sos")
    np.testing.assert_array_equal(zero_phase_lowpass(x, 0.05, 4),
                                  scipy.signal.sosfiltfilt(sos, x, axis=0))  # fmt: skip
