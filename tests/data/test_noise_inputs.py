"""add_noise's hostile inputs: each one a ValueError naming the argument, never a silently
NaN / infinite / mis-scaled noisy copy."""

import numpy as np
import pytest

from tssdpa import data as D

CLEAN = np.sin(np.arange(500) / 10.0)


@pytest.mark.parametrize("snr", [float("nan"), -float("inf")])
def test_an_snr_of_nan_or_minus_infinity_is_refused_naming_snr_db(snr):
    with pytest.raises(ValueError, match="snr_db"):
        D.add_noise(CLEAN, "gaussian", snr)
    with pytest.raises(ValueError, match="snr_db"):
        D.noise_std_for_snr(CLEAN, snr)


def test_an_snr_of_infinity_gives_the_clean_signal_back():
    np.testing.assert_array_equal(D.add_noise(CLEAN, "gaussian", float("inf")), CLEAN)


@pytest.mark.parametrize(
    "kind, kwargs, name",
    [
        ("student_t", {"df": float("inf")}, "df"),
        ("student_t", {"df": float("nan")}, "df"),
        ("impulsive", {"outlier_rate": 1.5}, "outlier_rate"),
        ("impulsive", {"outlier_rate": -1.0}, "outlier_rate"),
        ("impulsive", {"outlier_rate": float("nan")}, "outlier_rate"),
        ("impulsive", {"outlier_scale": float("nan")}, "outlier_scale"),
        ("impulsive", {"outlier_scale": -5.0}, "outlier_scale"),
        ("dropout", {"dropout_rate": 1.5}, "dropout_rate"),
        ("dropout", {"dropout_rate": float("nan")}, "dropout_rate"),
        ("quantize", {"levels": 2.7}, "levels"),
        ("quantize", {"levels": 1}, "levels"),
    ],
)
def test_a_noise_model_parameter_out_of_its_range_is_refused_naming_it(kind, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        D.add_noise(CLEAN, kind, 10.0, **kwargs)


@pytest.mark.parametrize("bad", ["inf", "complex"])
def test_an_infinite_or_complex_clean_signal_is_refused_naming_clean(bad):
    x = np.r_[CLEAN, np.inf] if bad == "inf" else CLEAN + 1j
    with pytest.raises(ValueError, match="clean"):
        D.add_noise(x, "gaussian", 10.0)


def test_a_nan_reading_stays_nan_and_the_rest_gets_noise_at_the_snr():
    x = np.sin(np.arange(20000) / 10.0)
    x[100] = np.nan
    y = D.add_noise(x, "gaussian", 10.0)
    assert np.isnan(y[100]) and np.isfinite(np.delete(y, 100)).all()
    got = 10 * np.log10(np.nanvar(x) / np.nanvar(y - x))
    assert abs(got - 10.0) < 0.1


@pytest.mark.parametrize("seed", [None, 1.5, -1, True])
def test_a_seed_that_is_no_non_negative_integer_is_refused_naming_seed(seed):
    with pytest.raises((ValueError, TypeError), match="seed"):
        D.add_noise(CLEAN, "gaussian", 10.0, seed=seed)
    with pytest.raises((ValueError, TypeError), match="seed"):
        D.make_signal("ar2", 50, seed)


def test_a_constant_channel_is_refused_at_a_finite_snr_not_returned_noiseless():
    x = np.column_stack([CLEAN, np.full(len(CLEAN), 2.0)])
    with pytest.raises(ValueError, match=r"clean: channel\(s\) \[1\] are constant"):
        D.add_noise(x, "gaussian", 10.0)
    np.testing.assert_array_equal(D.add_noise(x, "gaussian", float("inf")), x)


def test_the_constant_channels_error_carries_the_channels_and_pickles_with_its_message():
    # its callers take the channels from it, not from its words (tssdpa compare rewrote the
    # message's text for its own advice); a worker process sends it pickled
    import pickle

    from tssdpa.data.noise import ConstantChannelsError

    x = np.column_stack([np.full(len(CLEAN), 1.0), CLEAN, np.full(len(CLEAN), 2.0)])
    with pytest.raises(ConstantChannelsError) as caught:
        D.add_noise(x, "gaussian", 10.0)
    assert caught.value.channels == [0, 2] and caught.value.snr_db == 10.0
    want = ("clean: channel(s) [0, 2] are constant, so no noise level gives an SNR of 10.0 dB; "
            "drop them or add noise of a set std")  # fmt: skip
    assert str(caught.value) == want == str(pickle.loads(pickle.dumps(caught.value)))


def test_a_reference_sets_the_noise_level_and_later_rows_leave_it_alone():
    clean = np.concatenate([CLEAN, 5 * CLEAN])  # the later half louder
    noisy = D.add_noise(clean, "gaussian", 10.0, seed=0, reference=clean[:500])
    louder = clean.copy()
    louder[500:] *= 3  # an edit after the reference: the noise is the same
    again = D.add_noise(louder, "gaussian", 10.0, seed=0, reference=louder[:500])
    np.testing.assert_allclose(noisy - clean, again - louder, rtol=0, atol=1e-12)
    snr = 10 * np.log10(np.var(CLEAN) / np.var(noisy[:500] - clean[:500]))
    assert snr == pytest.approx(10.0, abs=0.5)  # the reference's SNR, not the whole series'
