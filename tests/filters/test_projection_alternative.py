"""The zero-phase fit's second choice (tssdpa.filters.projection_alternative): where a
waveform recurs in part of a recording only, the non-local filter adapted in time beats the
windowed filter the whole-block SURE picks."""

import contextlib
import io

import numpy as np
import pytest

from tssdpa.filters import ProjectionFilter
from tssdpa.signal.lowpass import zero_phase_lowpass

WINDOWED = [2, 4, 8, 16, 32, 64]  # the "auto" windows less the non-local "all"


def _recurs_then_wanders(seed=0, T=2000):
    rng = np.random.default_rng(seed)
    t = np.arange(T)
    pulse = 2.0 * np.exp(-0.5 * ((t % 40) - 20.0) ** 2 / 2.0)
    wander = zero_phase_lowpass(rng.normal(size=(T, 1)), cutoff=0.01, order=2)[:, 0]
    clean = np.where(t < 0.4 * T, pulse, 2 * wander / wander.std())
    return clean + rng.normal(size=T), clean


def _verbose_fit(noisy, **params):
    """The zero-phase fit of ``noisy`` with ``params``, and what ``verbose`` printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        f = ProjectionFilter(causal=False, **params).fit(noisy, verbose=True)
    return f, out.getvalue()


@pytest.fixture(scope="module")
def fitted_and_report():
    """The recording, its clean signal, the default zero-phase fit and its verbose report
    (one fit shared by the tests below: none of them changes it)."""
    noisy, clean = _recurs_then_wanders()
    return noisy, clean, *_verbose_fit(noisy)


@pytest.fixture(scope="module")
def fitted(fitted_and_report):
    return fitted_and_report[:3]


@pytest.fixture(scope="module")
def windowed_and_report(fitted):
    """The fit of the same recording among the windowed candidates alone, and its report."""
    return _verbose_fit(fitted[0], window=WINDOWED)


def _rmse(y, clean):
    return float(np.sqrt(np.mean((np.asarray(y) - clean) ** 2)))


def test_a_recording_that_recurs_in_part_is_handed_to_the_nonlocal_filter_adapted_in_time(
    fitted, windowed_and_report
):
    noisy, clean, f = fitted
    windowed = windowed_and_report[0]
    assert f.best_params_["window"] == "all" and f.window_ == "all"
    assert f.local_ is not None  # adapted: low-passes where nothing recurs
    weighed = f.cv_results_[f.cv_results_["weight"] > 0]
    assert (weighed["window"] == "all").all()
    assert f.cv_results_["weight"].sum() == pytest.approx(1.0)
    assert _rmse(f.filter(noisy), clean) < 0.97 * _rmse(windowed.filter(noisy), clean)


def test_the_switched_choice_saves_and_loads_as_any_fit(fitted, tmp_path):
    noisy, _, f = fitted
    f.save(tmp_path / "f")
    back = ProjectionFilter.load(tmp_path / "f")
    np.testing.assert_array_equal(back.filter(noisy), f.filter(noisy))


def test_verbose_fit_says_the_nonlocal_candidates_replaced_the_lowest_scoring_choice(
    fitted_and_report, windowed_and_report
):
    """The table of the best candidates lists windowed ones below the chosen non-local one,
    with weight 0: the report says why, rather than a choice that reads as out of order."""
    *_, f, out = fitted_and_report
    assert f.window_ == "all" and f.cv_results_["mse"].idxmin() != f.cv_results_["weight"].idxmax()
    assert "the non-local candidates alone" in out
    windowed, out = windowed_and_report
    assert windowed.window_ != "all"
    assert "the non-local candidates alone" not in out
