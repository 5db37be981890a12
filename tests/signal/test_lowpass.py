"""The zero-phase Butterworth low-pass of signal/lowpass.py (the projection filters' base)."""

import numpy as np
import pytest

from tssdpa.signal.lowpass import (
    _butterworth,
    _steady_state,
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


@pytest.mark.parametrize("past_padding", [1, 2, 25, 1000])
@pytest.mark.parametrize("order, cutoff", [(1, 0.3), (2, 0.005), (4, 0.05), (4, 0.9)])
def test_a_series_longer_than_the_edge_padding_is_scipys_sosfiltfilt_to_the_bit(
    past_padding, order, cutoff
):
    """The steady state is solved once per design (``_steady_state``), not on every call;
    the output is still scipy's, bit for bit, on each of several channels, down to one sample
    past the padding (where the odd extension reaches the series' far end)."""
    import scipy.signal

    sos = scipy.signal.butter(order, cutoff, output="sos")
    n = sosfiltfilt_padlen(sos) + past_padding
    x = 10.0 * np.random.default_rng(n).standard_normal((n, 3)) + 3.0
    np.testing.assert_array_equal(zero_phase_lowpass(x, cutoff, order),
                                  scipy.signal.sosfiltfilt(sos, x, axis=0))  # fmt: skip
    # along the last axis, without a cached steady state
    np.testing.assert_array_equal(sosfiltfilt_short(sos, x.T), scipy.signal.sosfiltfilt(sos, x.T))
    assert not _steady_state(order, cutoff).flags.writeable  # shared by every call


@pytest.mark.parametrize("shape, axis", [((40,), 0), ((2, 40, 3), 1), ((2, 3, 40), -1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex128])
def test_any_axis_and_dtype_is_scipys_sosfiltfilt_to_the_bit(shape, axis, dtype):
    import scipy.signal

    x = (100.0 * np.random.default_rng(1).standard_normal(shape)).astype(dtype)
    sos = scipy.signal.butter(4, 0.1, output="sos")
    got, want = sosfiltfilt_short(sos, x, axis=axis), scipy.signal.sosfiltfilt(sos, x, axis=axis)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_channels_filtered_together_are_each_filtered_alone():
    """``projection_fit``'s low-pass of a series and its probe is one call on both: no channel
    leaks into another, a gap or an empty channel included."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((300, 2)), rng.standard_normal((300, 2))
    a[40:60, 0] = np.nan
    b[:, 1] = np.nan
    both = zero_phase_lowpass(np.concatenate([a, b], axis=1), 0.1, 2)
    np.testing.assert_array_equal(both[:, :2], zero_phase_lowpass(a, 0.1, 2))
    np.testing.assert_array_equal(both[:, 2:], zero_phase_lowpass(b, 0.1, 2))


def test_a_steady_state_of_another_design_is_refused():
    sos = _butterworth(4, 0.05).copy()
    with pytest.raises(ValueError, match=r"zi must be sosfilt_zi\(sos\), of shape \(2, 2\)"):
        sosfiltfilt_short(sos, np.zeros(40), zi=_steady_state(2, 0.05))


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
