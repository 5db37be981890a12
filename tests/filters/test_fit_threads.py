"""The forecaster's and the filter's searches spread their candidates over threads, with one
BLAS thread meanwhile: the choice must not depend on how many, nor on the order they finish,
and the process's BLAS limits must come back as they were, whichever of several concurrent
searches ends first."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_info, threadpool_limits

from tssdpa.data.synthetic import make_signal
from tssdpa.estimators import parallel
from tssdpa.filters import (
    ProjectionFilter,
    ProjectionForecaster,
    analogue_selection,
    projection_fit,
)
from tssdpa.signal import neighbours


def _blas_threads():
    return [(lib["filepath"], lib["num_threads"]) for lib in threadpool_info()
            if lib["user_api"] == "blas"]  # fmt: skip


@pytest.fixture
def two_blas_threads():
    """A known starting point (a fit that leaked its one-thread limit would leave 1)."""
    if any(lib.get("threading_layer") == "openmp" for lib in threadpool_info()
           if lib["user_api"] == "blas"):  # fmt: skip
        pytest.skip("an OpenMP-threaded BLAS takes its limit per thread")
    with threadpool_limits(2, user_api="blas"):
        if {n for _, n in _blas_threads()} != {2}:  # one core, or a BLAS it cannot see
            pytest.skip("BLAS cannot run two threads here: there is no limit to check")
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
    # BLAS sums in another order with another thread count (two against one): equal up to
    # rounding, which the ridge solves of 1e-12 amplify on the worst candidates
    np.testing.assert_allclose(a["mse"], b["mse"], rtol=1e-4)
    np.testing.assert_allclose(pred_one, pred_several, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("target", [False, True], ids=["SURE", "target"])
def test_the_filter_fit_scores_the_same_with_one_thread_as_with_several(target, monkeypatch):
    """ProjectionFilter's search over its (window, embedding, decay) groups: the same rows,
    scores and mixture with one thread as with several."""
    clean = make_signal("lorenz", 1200, 1)
    noisy = clean + 0.3 * np.random.default_rng(2).normal(size=clean.shape)
    fits = []
    for threads in (1, 2):
        monkeypatch.setattr(neighbours, "THREADS", threads)
        f = ProjectionFilter(causal=False, max_fit_samples=600)
        fits.append(f.fit(noisy, target=clean) if target else f.fit(noisy))
    one, several = fits
    assert one.best_params_ == several.best_params_
    a, b = one.cv_results_, several.cv_results_
    structure = [c for c in a.columns if c not in ("mse", "weight")]
    assert len(a) > 100 and a[structure].equals(b[structure])
    np.testing.assert_allclose(a["mse"], b["mse"], rtol=1e-9)
    np.testing.assert_allclose(a["weight"], b["weight"], rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(one.filter(noisy), several.filter(noisy), rtol=1e-9, atol=1e-12)


def test_the_filter_fit_does_not_depend_on_the_order_its_groups_finish(monkeypatch):
    """Tasks run last to first give the same rows and scores: what a group scores (the uniform
    kernel at a window's first embedding) is decided before the tasks run."""
    noisy = make_signal("lorenz", 800, 3) + 0.3 * np.random.default_rng(4).normal(size=800)
    plain = ProjectionFilter(causal=False, max_fit_samples=400).fit(noisy).cv_results_

    def backwards(f, items):
        return [f(x) for x in items[::-1]][::-1]

    monkeypatch.setattr(projection_fit, "parallel_map", backwards)
    reversed_ = ProjectionFilter(causal=False, max_fit_samples=400).fit(noisy).cv_results_
    assert plain.drop(columns="weight").equals(reversed_.drop(columns="weight"))


def test_the_search_runs_on_one_blas_thread_and_restores_the_limit(two_blas_threads,
                                                                   monkeypatch):  # fmt: skip
    before, seen = _blas_threads(), []
    forecasts = analogue_selection.neighbour_forecasts

    def spy(*args):  # runs in the search's worker threads
        seen.append(_blas_threads())
        return forecasts(*args)

    monkeypatch.setattr(analogue_selection, "neighbour_forecasts", spy)
    _fit(make_signal("henon", 800, 0), 2, monkeypatch)
    assert seen and all(s == [(path, 1) for path, _ in before] for s in seen)
    assert _blas_threads() == before


def test_tree_queries_inside_the_search_share_its_threads(monkeypatch):
    monkeypatch.setattr(neighbours, "THREADS", 4)
    threads = lambda _: neighbours.search_threads()  # noqa: E731
    assert parallel.parallel_map(threads, [0, 1, 2, 3, 4]) == [1] * 5  # 4 workers, 1 each
    assert parallel.parallel_map(threads, [0, 1]) == [2, 2]  # 2 workers, 2 each
    assert neighbours.search_threads() == 4  # the caller's own queries keep every thread
    with pytest.raises(ZeroDivisionError):  # the caller's thread is never marked, even so
        parallel.parallel_map(lambda x: 1 / x, [0, 0])
    assert neighbours.search_threads() == 4


def test_a_parallel_map_inside_a_worker_runs_its_items_in_that_worker(monkeypatch):
    import threading

    monkeypatch.setattr(neighbours, "THREADS", 2)

    def inner(_):  # (the worker's thread, the threads its own items ran in)
        me = threading.get_ident()
        return me, set(parallel.parallel_map(lambda _: threading.get_ident(), [0, 1, 2]))

    outer = parallel.parallel_map(inner, [0, 1])
    assert all(ran == {me} for me, ran in outer)  # no pool inside the pool


def test_a_failing_search_restores_the_blas_limit(two_blas_threads, monkeypatch):
    monkeypatch.setattr(neighbours, "THREADS", 2)
    before = _blas_threads()
    with pytest.raises(ZeroDivisionError):
        parallel.parallel_map(lambda x: 1 / x, [1, 0, 2])
    assert _blas_threads() == before
    with pytest.raises(ZeroDivisionError), parallel.one_blas_thread():
        assert {n for _, n in _blas_threads()} == {1}
        raise ZeroDivisionError
    assert _blas_threads() == before
    with parallel.one_blas_thread():  # released: the next search limits again
        assert {n for _, n in _blas_threads()} == {1}
    assert _blas_threads() == before


def test_a_search_that_cannot_limit_blas_runs_without_it(two_blas_threads, monkeypatch):
    class Refusing:
        def limit(self, **kwargs):
            raise RuntimeError("no control over BLAS")

    before = _blas_threads()
    monkeypatch.setitem(parallel._blas, "controller", Refusing())
    fc, pred = _fit(make_signal("henon", 800, 0), 2, monkeypatch)
    assert np.isfinite(pred[-50:]).all()
    assert _blas_threads() == before
    monkeypatch.undo()
    monkeypatch.setattr(neighbours, "THREADS", 2)  # a search that limits (whatever the default)
    with parallel.one_blas_thread():  # not left held by the failed one
        assert {n for _, n in _blas_threads()} == {1}


def test_one_search_thread_leaves_the_blas_limit_alone(two_blas_threads, monkeypatch):
    monkeypatch.setattr(neighbours, "THREADS", 1)
    before = _blas_threads()
    with parallel.one_blas_thread():
        assert _blas_threads() == before


#: two searches in threads of their own: the first in sets the limit, the second finds it
#: held; the first ends first and restores it (from its own thread, as threadpoolctl needs)
_CONCURRENT = """
import threading
from threadpoolctl import threadpool_info
from tssdpa.estimators import parallel as a
from tssdpa.signal import neighbours
neighbours.THREADS = 2

def blas():
    return sorted(x["num_threads"] for x in threadpool_info() if x["user_api"] == "blas")

before, seen = blas(), {}
one = [1] * len(before)
if not before or before == one:  # one core, or a BLAS threadpoolctl cannot see
    raise SystemExit("skip: BLAS cannot run two threads here")
first_in, first_may_leave, first_left = threading.Event(), threading.Event(), threading.Event()

def first():
    with a.one_blas_thread():
        seen["first"] = a.parallel_map(lambda _: blas(), [0, 1])
        first_in.set()
        assert first_may_leave.wait(60)
    first_left.set()

def second():
    assert first_in.wait(60)
    with a.one_blas_thread():
        seen["second, first in"] = blas()
        first_may_leave.set()
        assert first_left.wait(60)
        seen["second, first left"] = blas()

threads = [threading.Thread(target=f) for f in (first, second)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert seen["first"] == [one, one], seen
assert seen["second, first in"] == one, seen
assert seen["second, first left"] == before, seen
assert blas() == before, (before, blas())
# and a search after them takes the limit again
with a.one_blas_thread():
    assert blas() == one
assert blas() == before
"""


def test_concurrent_searches_restore_the_blas_limit_whichever_ends_first():
    # a fresh process: which thread controls OpenBLAS's limits is threadpoolctl's state
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    result = subprocess.run([sys.executable, "-c", _CONCURRENT], capture_output=True,
                            text=True, env=env, timeout=300)  # fmt: skip
    if result.returncode == 1 and "skip:" in result.stderr:
        pytest.skip(result.stderr.strip())
    assert result.returncode == 0, result.stderr


def test_map_returns_in_order_and_raises_the_first_failure(monkeypatch):
    monkeypatch.setattr(neighbours, "THREADS", 2)
    assert parallel.parallel_map(lambda x: 2 * x, [1, 2, 3]) == [2, 4, 6]
    with pytest.raises(ZeroDivisionError):
        parallel.parallel_map(lambda x: 1 / x, [1, 0, 2])


@pytest.mark.parametrize("threads", [1, 2])
def test_the_long_linear_patterns_are_recorded_in_order_until_two_ladder_steps_fail(
    threads, monkeypatch
):
    """The lengths off the ladder run in threads; the record replays the plain loop: every
    length in order, a ladder length that improves nothing counts a miss (an improving one
    resets them), two misses in a row stop -- here with a length on both lists."""
    monkeypatch.setattr(neighbours, "THREADS", threads)
    mse = {1: 9.0, 3: 5.0, 4: 6.0, 5: 4.0, 6: 3.0, 7: 8.0, 8: 8.0, 9: 1.0}
    recorded = []

    def errors(data, queries, E, delay, anchors, cut=None, lin_q=None):
        s = analogue_selection.Structure(E, delay, 0, None, None, "linear", 1e-3)
        return [(s, np.full((len(queries), len(anchors)), mse[E]))]

    record = analogue_selection._Scores.record

    def spy(self, structure, sq, *mse):
        recorded.append(structure.embedding)
        return record(self, structure, sq, *mse)

    data = analogue_selection._data

    def no_rows_at_length_6(z, E, *args):  # a length without complete rows: no score, no miss
        return None if E == 6 else data(z, E, *args)

    monkeypatch.setattr(analogue_selection, "_linear_errors", errors)
    monkeypatch.setattr(analogue_selection, "_data", no_rows_at_length_6)
    monkeypatch.setattr(analogue_selection._Scores, "record", spy)
    cands = {"embedding": [1], "delay": [1], "n_neighbors": lambda D: [4], "width": [],
             "model": ["linear"], "ridge": [1e-3], "linear_embedding": [3, 5, 4, 1, 900],
             "linear_ladder": [5, 6, 7, 8, 9]}  # fmt: skip
    analogue_selection.choose_structures(make_signal("ar2", 400, 0)[:, None], 1, cands,
                                         max_queries=50)  # fmt: skip
    # 1 (not longer than the embeddings) and 900 (longer than the series) are not tried; 5
    # (again, a ladder step) improves nothing: one miss; 6 has no rows: neither; 7 misses
    # again: stop
    assert recorded == [1, 3, 5, 4, 5, 7]


def test_a_blas_limit_that_fails_half_way_is_rolled_back(two_blas_threads, monkeypatch):
    """Two BLAS libraries (numpy's and scipy's OpenBLAS): the second refusing the limit must
    not leave the first at one thread after the search."""
    controller = ThreadpoolController()
    libs = [lib for lib in controller.lib_controllers if lib.user_api == "blas"]
    if len(libs) < 2:
        pytest.skip("one BLAS library: no half-way failure to roll back")
    set_last = libs[-1].set_num_threads

    def refuse_one(n):
        if n == 1:
            raise RuntimeError("refused")
        return set_last(n)

    monkeypatch.setattr(libs[-1], "set_num_threads", refuse_one)
    monkeypatch.setitem(parallel._blas, "controller", controller)
    monkeypatch.setattr(neighbours, "THREADS", 2)
    before = _blas_threads()
    with parallel.one_blas_thread():  # runs without the limit
        pass
    assert _blas_threads() == before
