"""What the workers of :func:`~tssdpa.estimators.parallel.parallel_map` warn of and tell reaches
the thread that called it: its :func:`library_warnings` capture (``tssdpa filter``'s notes)
and its :func:`collected` list. The captures are per thread, and a worker's went nowhere."""

import threading
import warnings

from tssdpa.checks import LibraryWarning
from tssdpa.estimators.input_notes import (
    SettingChangedWarning,
    collected,
    library_warnings,
    tell,
)
from tssdpa.estimators.parallel import parallel_map
from tssdpa.signal import neighbours


def _in_threads(monkeypatch, f, items):
    """``parallel_map(f, items)`` on two worker threads, and the threads it ran on."""
    monkeypatch.setattr(neighbours, "THREADS", 2)
    ran, barrier = set(), threading.Barrier(2, timeout=10)

    def task(x):
        ran.add(threading.get_ident())
        barrier.wait()  # both workers hold an item at once: two threads, neither the caller
        return f(x)

    return parallel_map(task, items), ran


def test_a_library_warning_raised_in_a_parallel_map_worker_reaches_the_callers_capture(
    monkeypatch,
):
    def odd(i):
        warnings.warn(f"item {i} is odd", LibraryWarning, stacklevel=1)
        return i

    with library_warnings() as said:
        got, ran = _in_threads(monkeypatch, odd, [0, 1])
    assert got == [0, 1]
    assert len(ran) == 2 and threading.get_ident() not in ran
    assert sorted(said) == ["item 0 is odd", "item 1 is odd"]


def test_a_note_told_in_a_parallel_map_worker_reaches_the_callers_collected_list(monkeypatch):
    def note(i):
        tell(SettingChangedWarning(f"setting {i} changed"))
        return i

    with library_warnings(), collected(quiet=True) as notes:
        _in_threads(monkeypatch, note, [0, 1])
    assert sorted(n.told() for n in notes) == ["setting 0 changed", "setting 1 changed"]
