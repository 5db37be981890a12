"""The forecaster's search spreads its candidates over threads: the choice must not depend on
how many, and the process's BLAS thread limits must come back as they were."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from tssdpa.data.synthetic import make_signal
from tssdpa.filters import ProjectionForecaster, analogue_selection
from tssdpa.signal import neighbours


def _blas_threads():
    return [(lib["filepath"], lib["num_threads"]) for lib in threadpool_info()
            if lib["user_api"] == "blas"]  # fmt: skip


@pytest.fixture
def two_blas_threads():
    """A known starting point (a fit that leaked its one-thread limit would leave 1)."""
    with threadpool_limits(2, user_api="blas"):
        assert {n for _, n in _blas_threads()} == {2}
        yield


def _fit(y, threads, monkeypatch):
    monkeypatch.setattr(neighbours, "THREADS", threads)
    fc = ProjectionForecaster(horizon=3, max_embedding=5, max_fit_samples=300).fit(y)
    return fc, np.asarray(fc.forecast(y[-200:], 3))


@pytest.mark.parametrize("drift", [False, True], ids=["leave-one-out", "both-scorings"])
def test_the_fit_chooses_the_same_with_one_thread_as_with_several(drift, monkeypatch):
    y = make_signal("lorenz", 1500, 0)
    if drift:  # the last quarter changed regime: scored forward too
        y = np.concatenate([y[:1100], 3.0 * y[1100:]])
    one, pred_one = _fit(y, 1, monkeypatch)
    several, pred_several = _fit(y, 2, monkeypatch)
    assert (one.holdout_ is not None) == drift
    assert one.best_params_ == several.best_params_
    a, b = one.cv_results_, several.cv_results_
    structure = [c for c in a.columns if c != "mse"]
    assert a[structure].equals(b[structure])  # every candidate, in the same order
    # BLAS sums in another order with another thread count: equal up to rounding
    np.testing.assert_allclose(a["mse"], b["mse"], rtol=1e-6)
    np.testing.assert_allclose(pred_one, pred_several, rtol=1e-6, atol=1e-12)


def test_a_fit_leaves_the_blas_thread_limits_as_it_found_them(two_blas_threads, monkeypatch):
    before = _blas_threads()
    _fit(make_signal("henon", 800, 0), 2, monkeypatch)
    assert _blas_threads() == before


def test_concurrent_fits_leave_the_blas_thread_limits_as_they_found_them(
    two_blas_threads, monkeypatch
):
    monkeypatch.setattr(neighbours, "THREADS", 2)
    before = _blas_threads()
    y = make_signal("henon", 800, 0)
    errors = []

    def fit():
        try:
            for _ in range(2):
                ProjectionForecaster(horizon=2, max_embedding=4, max_fit_samples=200).fit(y)
        except Exception as err:  # reported below: a thread's exception is otherwise lost
            errors.append(err)

    workers = [threading.Thread(target=fit) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors
    assert _blas_threads() == before


def test_a_failing_task_leaves_the_blas_thread_limits_as_it_found_them(
    two_blas_threads, monkeypatch
):
    monkeypatch.setattr(neighbours, "THREADS", 2)
    before = _blas_threads()
    with pytest.raises(ZeroDivisionError):
        analogue_selection._map(lambda x: 1 / x, [1, 0, 2])
    assert _blas_threads() == before
    assert analogue_selection._map(lambda x: 2 * x, [1, 2, 3]) == [2, 4, 6]  # in order
