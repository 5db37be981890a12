"""Refitting a running estimator, as docs/filters.md §3 ("Threads") advises: a fitted estimator
is read from several threads safely, but ``fit`` replaces its state piece by piece, so a
filter or forecast on the object being refitted gave outputs of neither model (or "not
fitted"). A ``clone()`` refitted in another thread leaves the original as it was until the
reference is swapped."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tssdpa.filters import ProjectionFilter, ProjectionForecaster
from tssdpa.filters.learned import LearnedProjectionFilter
from tssdpa.filters.residual_filter import ResidualProjectionFilter

pytestmark = pytest.mark.usefixtures("one_torch_thread", "quiet_warnings")

_t = np.arange(1200)
CLEAN = np.sign(np.sin(_t / 50))
NOISY = CLEAN + 0.3 * np.random.default_rng(0).standard_normal(1200)
OLD, NEW = slice(0, 600), slice(600, 1200)  # the refit learns from other data

# explicit settings: each fit is quick
CASES = {
    "ProjectionFilter": (
        lambda: ProjectionFilter(
            window=16, embedding=2, degree=0, sigma=0.5, base=None, local_window=None, mix=False
        ),  # fmt: skip
        lambda est, part: est.fit(NOISY[part]),
        lambda est: est.filter(NOISY[-200:]),
    ),
    "streaming": (
        lambda: ProjectionFilter(
            window=16, embedding=2, degree=0, sigma=0.5, base=None, local_window=None, mix=False
        ),  # fmt: skip
        lambda est, part: est.fit(NOISY[part]),
        lambda est: est.filter(NOISY[-200:], zi=est.initial_state())[0],
    ),
    "ResidualProjectionFilter": (
        lambda: ResidualProjectionFilter(window=8, embedding=4, sigma=[0.5]),
        lambda est, part: est.fit(NOISY[part], target=CLEAN[part]),
        lambda est: est.filter(NOISY[-200:]),
    ),
    "ProjectionForecaster": (
        lambda: ProjectionForecaster(
            horizon=2, embedding=3, n_neighbors=8, model="mean", bandwidth=1.0
        ),  # fmt: skip
        lambda est, part: est.fit(NOISY[part]),
        lambda est: est.forecast_path(NOISY[-200:], 2),
    ),
    "LearnedProjectionFilter": (
        lambda: LearnedProjectionFilter(
            window=4,
            seq_len=32,
            d_model=8,
            num_heads=2,
            num_layers=1,
            dim_feedforward=8,
            max_epochs=1,
            accelerator="cpu",
            enable_progress_bar=False,
            trainer_kwargs={"enable_checkpointing": False},
        ),  # fmt: skip
        lambda est, part: est.fit(NOISY[part], target=CLEAN[part]),
        lambda est: est.filter(NOISY[-200:]),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_clone_refitted_in_another_thread_leaves_the_originals_outputs_unchanged(case):
    make, fit, use = CASES[case]
    running = fit(make(), OLD)
    before = use(running)
    reading = threading.Event()
    refitted = {}

    def refit():
        reading.wait()  # the refit runs while the original is in use
        refitted["est"] = fit(running.clone(), NEW)

    worker = threading.Thread(target=refit)
    worker.start()
    reads = 0
    while worker.is_alive() or reads < 3:
        np.testing.assert_array_equal(use(running), before)
        reading.set()
        reads += 1
    worker.join()
    np.testing.assert_array_equal(use(running), before)
    running = refitted["est"]  # the swap: from now on the new model's outputs
    assert not np.array_equal(use(running), before, equal_nan=True)
