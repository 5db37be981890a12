"""A ProjectionFilter fitted zero-phase, then set ``causal=True``: where its fit chose a setting
only a zero-phase filter runs (the non-local ``window="all"``, the Butterworth base), every use
is refused naming ``causal``. It failed naming ``window='all'`` or ``base='butterworth'``, which
the default fit chooses unasked, and with the base its stream ran without it while ``filter``
refused."""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa import ProjectionFilter

X = np.sin(np.arange(300) / 10) + 0.3 * np.random.default_rng(0).standard_normal(300)
REFUSED = (
    r"fitted with causal=False: its (window_='all'|base_='butterworth') .*set causal=False back"
)


@pytest.mark.parametrize("settings", [
    dict(window="all", embedding=5),  # fit keeps the non-local filter
    dict(window=[8], embedding=3, mix=False),  # base "auto": fit chooses the low-pass base
], ids=["non-local", "butterworth-base"])  # fmt: skip
def test_a_zero_phase_fit_switched_to_causal_is_refused_naming_causal(settings):
    f = ProjectionFilter(causal=False, sigma=1.0, **settings).fit(X)
    assert f.window_ == "all" or f.base_ == "butterworth"  # what the filter is here to test
    before = f.filter(X)
    f.set_params(causal=True)
    # a causal filter's empty state of the fitted window: the base's stream took one
    state = ProjectionFilter(window=8, embedding=3, sigma=1.0).initial_state()
    for use in (
        lambda: f.filter(X),
        lambda: f.initial_state(),
        lambda: f.filter(X, zi=state),
        lambda: f.step(X[0], state),
    ):
        with pytest.raises(ValueError, match=REFUSED):
            use()
    f.set_params(causal=False)  # set back: the fitted filter as it was
    np.testing.assert_array_equal(f.filter(X), before)
