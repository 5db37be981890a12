"""Independent numpy tasks of a search over threads, with one BLAS thread meanwhile.

The candidate searches of :class:`~tssdpa.filters.ProjectionForecaster` and
:class:`~tssdpa.filters.ProjectionFilter` score many independent candidates whose work --
distances, small linear solves, eigendecompositions -- runs in numpy with the GIL released.
:func:`parallel_map` spreads such tasks over ``tssdpa.signal.neighbours.THREADS`` threads
(read at each call: ``neighbours.THREADS = 1`` runs them in turn).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext

from threadpoolctl import ThreadpoolController

from tssdpa.estimators.input_notes import notes_of, thread_notes
from tssdpa.signal import neighbours

__all__ = ["one_blas_thread", "parallel_map"]


def parallel_map(f, items: list) -> list:
    """``[f(x) for x in items]``, spread over ``neighbours.THREADS`` threads: for numpy work
    that releases the GIL (the linear solves and eigendecompositions above all). Called
    from inside one of its own workers it runs the items in turn: the pool already keeps the
    cores busy. The workers' notes and library warnings reach the calling thread's captures
    (:func:`~tssdpa.estimators.input_notes.collected`, ``library_warnings``)."""
    nested = getattr(neighbours._POOL, "threads", None) is not None
    if neighbours.THREADS > 1 and len(items) > 1 and not nested:
        workers = min(neighbours.THREADS, len(items))
        with one_blas_thread(), ThreadPoolExecutor(workers) as pool:
            worker = _as_worker(f, max(1, neighbours.THREADS // workers), thread_notes())
            return list(pool.map(worker, items))
    return [f(x) for x in items]


def _as_worker(f, threads: int, notes: tuple):
    """``f`` marked, while it runs, as a pool worker whose k-d tree queries take ``threads``
    threads (:func:`~tssdpa.signal.neighbours.search_threads`): the workers' share of
    ``neighbours.THREADS``; its notes and library warnings go where the calling thread's go
    (``notes``: :func:`~tssdpa.estimators.input_notes.thread_notes`)."""

    def run(x):
        neighbours._POOL.threads = threads
        try:
            with notes_of(notes):
                return f(x)
        finally:
            neighbours._POOL.threads = None

    return run


#: who holds the one-thread limit, and threadpoolctl's view of the loaded libraries (found
#: once: a scan costs about a millisecond, and a fit runs its tasks tens of times)
_blas = {"lock": threading.Lock(), "held": False, "controller": None}


def _blas_settings(controller) -> list:
    """(library, its thread count) for each BLAS library ``controller`` holds."""
    libs = getattr(controller, "lib_controllers", [])
    return [(lib, lib.num_threads) for lib in libs if lib.user_api == "blas"]


def _restore(settings: list) -> None:
    for lib, n in settings:
        try:
            lib.set_num_threads(n)
        except Exception:  # noqa: BLE001 -- restore what can be; the rest cannot be set
            continue


@contextmanager
def one_blas_thread(always: bool = False):
    """One BLAS thread while :func:`parallel_map` runs tasks over ``neighbours.THREADS`` threads:
    BLAS's own threads on top of theirs oversubscribe the cores (and spin), and the solves
    there are small (the search's sequential parts, such as the ladder of long linear
    patterns, keep BLAS's threads). ``always``: whatever ``neighbours.THREADS`` is, for
    sequential work made of BLAS calls too small to share (an optimiser's steps in a few
    parameters: with another process on the cores, BLAS's spinning threads made the Whittle
    fits of :mod:`~tssdpa.estimators.linear_noise` several times slower). The limit is
    process-wide: the first of concurrent searches sets it and restores it, from its own
    thread (as threadpoolctl requires); a search that finds it held leaves it alone, and one
    that cannot set it runs without it (libraries that took the limit before another refused
    it are set back).
    (An OpenBLAS built on OpenMP threads takes the limit per thread: the workers keep theirs.)
    """
    mine, limit = False, nullcontext()
    try:
        with _blas["lock"]:
            mine = (always or neighbours.THREADS > 1) and not _blas["held"]
            _blas["held"] = _blas["held"] or mine
        if mine:
            before = []
            try:
                if _blas["controller"] is None:
                    _blas["controller"] = ThreadpoolController()
                before = _blas_settings(_blas["controller"])
                limit = _blas["controller"].limit(limits=1, user_api="blas")
            except Exception:  # noqa: BLE001 -- no hold on BLAS's threads: slower, not wrong
                _restore(before)  # a library that refused after others took the limit
                limit = nullcontext()
        with limit:
            yield
    finally:
        if mine:
            with _blas["lock"]:
                _blas["held"] = False
