"""The kernel engine of the filters and forecasters (numpy).

- :mod:`~tssdpa.signal.embedding` — delay embeddings (the patterns compared);
- :mod:`~tssdpa.signal.lags` — the lag kernel (FIR / IIR / timestamps) and its one-row form;
- :mod:`~tssdpa.signal.lagfilter` — a filter's settings, state and causal / zero-phase passes;
- :mod:`~tssdpa.signal.library` — kernel regression over a fixed key library;
- :mod:`~tssdpa.signal.features` — the O(1)-state random-feature IIR recursion;
- :mod:`~tssdpa.signal.missing` — filling what cannot be computed (NaN);
- :mod:`~tssdpa.signal.autocorrelation` — a series' lagged products (its autocorrelation), by FFT;
- :mod:`~tssdpa.signal.reference` — explicit-loop references of the kernels, for the tests.

Each kernel equals :func:`tssdpa.ops.projection_sdpa` (math backend) on the same embeddings.
"""

from tssdpa.signal.embedding import centred_embedding, delay_embedding, standardise
from tssdpa.signal.lagfilter import FilterSpec, resolve_spec, run_causal, run_offline
from tssdpa.signal.lags import attend_lags, attend_newest, iir_truncation_lag
from tssdpa.signal.library import kernel_regression, nearest_distance
from tssdpa.signal.missing import fill_missing

__all__ = [
    "FilterSpec",
    "attend_lags",
    "attend_newest",
    "centred_embedding",
    "delay_embedding",
    "fill_missing",
    "iir_truncation_lag",
    "kernel_regression",
    "nearest_distance",
    "resolve_spec",
    "run_causal",
    "run_offline",
    "standardise",
]
