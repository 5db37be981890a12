"""The zero-phase Butterworth low-pass of signal/lowpass.py (the projection filters' base)."""

import numpy as np
import pytest

from tssdpa.signal.lowpass import (
    _butterworth,
    sosfiltfilt_padlen,
    sosfiltfilt_short,
    zero_phase_lowpass,
)


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


@pytest.mark.parametrize("n", [16, 17, 40, 1000])
@pytest.mark.parametrize("order, cutoff", [(1, 0.3), (2, 0.005), (4, 0.05), (4, 0.9)])
def test_a_series_longer_than_the_edge_padding_is_scipys_sosfiltfilt_to_the_bit(n, order, cutoff):
    """The steady state is solved once per design (``_steady_state``), not on every call;
    the output is still scipy's, bit for bit, on each of several channels."""
    import scipy.signal

    x = 10.0 * np.random.default_rng(n).standard_normal((n, 3)) + 3.0
    sos = scipy.signal.butter(order, cutoff, output="sos")
    assert n > sosfiltfilt_padlen(sos)  # 16: one past the longest padding here, 15
    np.testing.assert_array_equal(zero_phase_lowpass(x, cutoff, order),
                                  scipy.signal.sosfiltfilt(sos, x, axis=0))  # fmt: skip
    # along the last axis, without a cached steady state
    np.testing.assert_array_equal(sosfiltfilt_short(sos, x.T), scipy.signal.sosfiltfilt(sos, x.T))


@pytest.mark.parametrize("n", [1, 2, 15])
def test_a_short_series_is_scipys_sosfiltfilt_of_it_with_its_ends_held(n):
    import scipy.signal

    x = np.random.default_rng(n).standard_normal((n, 2))
    sos = scipy.signal.butter(4, 0.05, output="sos")
    extra = sosfiltfilt_padlen(sos) + 1 - n
    held = np.pad(x, [(extra, extra), (0, 0)], mode="edge")
    want = scipy.signal.sosfiltfilt(sos, held, axis=0)[extra : extra + n]
    np.testing.assert_array_equal(zero_phase_lowpass(x, 0.05, 4), want)


def test_an_empty_series_low_passes_to_an_empty_one():
    assert zero_phase_lowpass(np.zeros((0, 2)), 0.1, 4).shape == (0, 2)
