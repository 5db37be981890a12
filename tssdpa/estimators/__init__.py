"""The estimator tier: one base for every filter and forecaster, input conversion, persistence
and hyperparameter selection.

- :mod:`~tssdpa.estimators.base` — :class:`Estimator`, :class:`Denoiser`, :class:`Forecaster`;
- :mod:`~tssdpa.estimators.arrays` — numpy / pandas / torch in, the same type out;
- :mod:`~tssdpa.estimators.pandas_out` — a forecaster's ``predict`` / ``forecast_path`` as
  pandas after pandas in; :mod:`~tssdpa.estimators.labels` — their labels in a saved file;
- :mod:`~tssdpa.estimators.persistence` — ``save`` / ``load`` with a strict schema;
- :mod:`~tssdpa.estimators.selection` — sigma grids, SURE, held-out scores, time splits;
- :mod:`~tssdpa.estimators.white_noise` — the noise level, estimated or given;
- :mod:`~tssdpa.estimators.noise_tails` — Gaussian tails or heavy ones, and what SURE does
  then;
- :mod:`~tssdpa.estimators.input_notes` — what ``fit`` warns its user of in their data;
- :mod:`~tssdpa.estimators.glitches`, :mod:`~tssdpa.estimators.spikes` — samples a zero-phase
  filter treats as missing: rare ones far out of line, and impulsive noise;
- :mod:`~tssdpa.estimators.linear_noise` — the noise level of a linear signal from the floor
  of its spectrum (what the residual estimates of ``white_noise.noise_level`` cannot see);
  :mod:`~tssdpa.estimators.whittle` — the Whittle fits of ARMA (and seasonal) plus noise
  spectra it uses;
- :mod:`~tssdpa.estimators.parallel` — a search's independent tasks over threads, with one
  BLAS thread meanwhile.
"""

from tssdpa.estimators.arrays import ArrayMeta, as_2d, restore
from tssdpa.estimators.base import Denoiser, Estimator, Forecaster

__all__ = ["ArrayMeta", "Denoiser", "Estimator", "Forecaster", "as_2d", "restore"]
