"""A learned fit with ``enable_progress_bar=False`` prints none of Lightning's own lines
("GPU available: ...", "TPU available: ...", "💡 Tip: ... litlogger"): they showed on every
fit of the learned estimators, progress bar off or not."""

from __future__ import annotations

import logging
import threading

import lightning.pytorch  # noqa: F401 -- sets the logger rank_zero_info writes to
import lightning_utilities.core.rank_zero as rank_zero
import numpy as np
import pytest

from tssdpa.filters.learned import LearnedProjectionFilter
from tssdpa.models.quiet import lightning_info_hidden

pytestmark = pytest.mark.usefixtures("one_torch_thread", "quiet_warnings")

LIGHTNING_LINES = ("GPU available", "TPU available", "Tip:")


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@pytest.fixture
def rank_zero_lines():
    """What Lightning's rank-zero logger passes on (its filters applied) during the test."""
    handler, logger = _Lines(), rank_zero.log
    logger.addHandler(handler)
    yield handler.lines
    logger.removeHandler(handler)


def _tiny_fit(progress_bar: bool):
    t = np.linspace(0, 20, 300)
    clean = np.sin(t)[:, None]
    noisy = clean + 0.2 * np.random.default_rng(0).standard_normal(clean.shape)
    est = LearnedProjectionFilter(window=4, seq_len=32, d_model=8, num_heads=2, num_layers=1,
                                  dim_feedforward=8, max_epochs=1, accelerator="cpu",
                                  enable_progress_bar=progress_bar,
                                  trainer_kwargs={"enable_checkpointing": False})  # fmt: skip
    est.fit(noisy, target=clean)


def _lightning_lines(text_lines):
    return [line for line in text_lines if any(s in line for s in LIGHTNING_LINES)]


def test_a_fit_without_a_progress_bar_prints_no_lightning_device_or_tip_lines(
    rank_zero_lines, capfd
):
    _tiny_fit(progress_bar=False)
    out, err = capfd.readouterr()
    assert _lightning_lines(rank_zero_lines) == []
    assert _lightning_lines((out + err).splitlines()) == []
    _tiny_fit(progress_bar=True)  # the one asking for output still gets Lightning's
    assert any("GPU available" in line for line in rank_zero_lines)


def test_hiding_lightning_info_holds_for_the_fitting_thread_only_and_ends_with_it(
    rank_zero_lines,
):
    def say(text):
        rank_zero.log.info(text)

    with lightning_info_hidden():
        say("hidden")
        rank_zero.log.warning("a warning still shows")
        other = threading.Thread(target=say, args=("from another thread",))
        other.start()
        other.join()
    say("after")
    assert rank_zero_lines == ["a warning still shows", "from another thread", "after"]
