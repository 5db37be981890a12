"""Lightning's info messages held back while a fit runs without a progress bar.

A Trainer logs "GPU available: ...", "TPU available: ..." and "💡 Tip: ..." (litlogger,
litmodels) at level INFO through its rank-zero logger: ``enable_progress_bar=False`` asked for
a quiet fit and still printed them. The messages are dropped by a logging filter for the
fitting thread only, rather than by raising the logger's level: a level is process-wide, so
concurrent fits restoring it in another order left it raised (or lowered) for good, and a fit
with its progress bar on in another thread lost its messages meanwhile. Warnings still show;
a callback's own info lines (``ModelCheckpoint(verbose=True)``) are hidden too: keep the
progress bar on to see them.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

__all__ = ["lightning_info_hidden"]


class _HiddenThreads(logging.Filter):
    """Drops records below WARNING logged by the threads in ``threads``."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or record.thread not in self.threads


_HIDDEN = _HiddenThreads()


def _rank_zero_loggers() -> list[logging.Logger]:
    """The loggers Lightning's ``rank_zero_info`` writes to: the one its utilities module
    holds now (Lightning sets it on import) and those of the pytorch and fabric packages."""
    import lightning_utilities.core.rank_zero as rank_zero

    names = (
        "lightning.pytorch.utilities.rank_zero",
        "lightning.fabric.utilities.rank_zero",
        "lightning.pytorch.accelerators.cuda",
    )  # (its "LOCAL_RANK: 0 - CUDA_VISIBLE_...")
    loggers = [logging.getLogger(n) for n in names]
    current = getattr(rank_zero, "log", None)
    return loggers + [current] if isinstance(current, logging.Logger) else loggers


@contextlib.contextmanager
def lightning_info_hidden(hide: bool = True) -> Iterator[None]:
    """Within the block, Lightning's INFO messages logged by this thread are dropped (nothing
    changes where ``hide`` is False); the filter is left on the loggers, passing everything
    once no thread is hiding."""
    if not hide:
        yield
        return
    me = threading.get_ident()
    with _HIDDEN.lock:
        nested = me in _HIDDEN.threads
        _HIDDEN.threads.add(me)
        for logger in _rank_zero_loggers():
            if _HIDDEN not in logger.filters:
                logger.addFilter(_HIDDEN)
    try:
        yield
    finally:
        if not nested:
            with _HIDDEN.lock:
                _HIDDEN.threads.discard(me)
