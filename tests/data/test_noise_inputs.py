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
