"""Channels in their own units: the kernel of a fitted :class:`~tssdpa.filters.ProjectionFilter`
compares each channel in units of its spread (``channel_scale="std"``, the default).

One kernel width cannot suit channels in different units: on a gyroscope in deg/s beside an
accelerometer in g, distances in the units of x are the gyroscope's alone, and the fit's one
sigma is too wide or too narrow for every other channel. Divided by its standard deviation
(over every sample fitted, not the fit block alone, whose first samples may catch a channel at
rest: a gyroscope axis still through the first 4,000 of the fusion IMU's 8,056 training samples
had a spread there mostly of noise, which, scaled up 3-12x, drove every distance), each channel
counts alike whatever its units, as in the forecaster's
standardised embeddings. The scale is ``std / median(std)``, so one channel, or channels of
one spread, keep their units and sigma its meaning; the standard deviation is taken with rare
far outliers (glitches) clipped (:func:`channel_spread`).

Why not the noise level, which would make the distance the noise's Mahalanobis distance: a
channel with next to no noise (a clean reference, a setpoint beside a noisy sensor) would then
dominate every distance, and SURE would score in units of that tiny noise; the fit left the
noisy channel as it came (``experiments/channel_units_probe.py``, docs/filters.md §6).

The filter runs on ``x / channel_scale_`` and multiplies its output (and its state, which holds
samples and an output) back: a weighted mean and a weighted local polynomial are equivariant
to a per-channel scale, so only the kernel's distances change.
"""

from __future__ import annotations

import numpy as np

from tssdpa.estimators.persistence import require_floats
from tssdpa.estimators.tensor_input import state_arrays
from tssdpa.signal.lagfilter import step_newest

__all__ = ["CHANNEL_SCALES", "ChannelUnits", "channel_spread", "fitted_channel_scale"]

#: the values of ``ProjectionFilter(channel_scale=...)``
CHANNEL_SCALES = ("std", None)
#: :func:`channel_spread` clips a channel's values to its median plus or minus CLIP_REACH
#: times the CLIP_QUANTILE of their distances to it: fewer than 1 in 200 samples as far out
#: as twice the rest are taken for glitches
CLIP_QUANTILE, CLIP_REACH = 0.995, 2.0


def channel_spread(x2: np.ndarray) -> np.ndarray:
    """(C,) the standard deviation of each channel of (T, C) ``x2`` (NaN ignored), its values
    first clipped to ``median ± CLIP_REACH q`` (q the ``CLIP_QUANTILE`` of ``|x - median|``);
    unclipped where that leaves no spread (a channel off its median at fewer than 1 sample in
    200: events, a late step).

    One glitch of 1e4 among 4,000 samples of spread 1 would make the standard deviation 160,
    and the channel count for next to nothing in the kernel's distances; clipped, it counts
    as a value at the bound. Data without such outliers is not clipped (a Gaussian channel's
    bound is 5.6 standard deviations), nor is a channel whose large values are frequent (a
    pulse train's pulses, a gait's heel strikes in more than 1 sample in 200).

    >>> x = np.r_[np.sin(np.arange(4000) / 10.0), 1e4][:, None]
    >>> round(float(channel_spread(x)[0]), 3), round(float(np.std(x)), 1)
    (0.707, 158.1)
    """
    x2 = np.asarray(x2, dtype=float)
    out = np.full(x2.shape[1], np.nan)  # a channel unknown throughout (a fit block where it
    known = ~np.isnan(x2).all(axis=0)  # has not begun): NaN, which keeps the scale 1
    if not known.any():
        return out
    if not known.all():  # (a copy: its layout may move the sums' rounding, so only here)
        x2 = x2[:, known]
    centre = np.nanmedian(x2, axis=0)
    reach = CLIP_REACH * np.nanquantile(np.abs(x2 - centre), CLIP_QUANTILE, axis=0)
    clipped = np.nanstd(np.clip(x2, centre - reach, centre + reach), axis=0)
    # a channel off its median in fewer than 1 sample in 200 (events, a late step): as it is
    out[known] = np.where(clipped > 0, clipped, np.nanstd(x2, axis=0))
    # a constant channel has none: np.std's rounding gave 800 samples of 3.3 a spread of
    # 4.4e-16 (of 7.0, 0), which then set the median of a few channels
    constant = np.nanmax(x2, axis=0) == np.nanmin(x2, axis=0)
    out[np.flatnonzero(known)[constant]] = 0.0
    return out


def fitted_channel_scale(setting, x2: np.ndarray) -> np.ndarray:
    """(C,) the divisor of each channel of (T, C) ``x2``: for ``"std"`` its
    :func:`channel_spread` over their median (a channel without spread, constant, keeps 1),
    else ones.

    >>> z = np.r_[-1.0, 1.0]
    >>> fitted_channel_scale("std", np.column_stack([0.5 * z, 0.001 * z, 2 * z, 0 * z])).tolist()
    [1.0, 0.002, 4.0, 1.0]
    """
    spread = channel_spread(x2)
    ok = np.isfinite(spread) & (spread > 0)
    if setting is None or spread.size < 2 or not ok.any():
        return np.ones(spread.size)
    return np.where(ok, spread / float(np.median(spread[ok])), 1.0)


class ChannelUnits:
    """Mixin of :class:`~tssdpa.filters.ProjectionFilter`: ``channel_scale_`` (set by ``fit``)
    applied to its inputs, outputs and streaming states."""

    def _unit_scale(self):
        """The fitted per-channel divisor, or None where there is none or it is all ones
        (remembered for the array it was read from: ``step`` asks for it every sample)."""
        u = self.__dict__.get("channel_scale_")
        cached = self.__dict__.get("_unit_scale_of")
        if cached is not None and cached[0] is u:
            return cached[1]
        out = None if u is None or bool(np.all(u == 1.0)) else u
        self._unit_scale_of = (u, out)
        return out

    def _set_state(self, fitted: dict, arrays: dict) -> None:
        """Loading: a fitted filter of several channels saved with a ``channel_scale`` has its
        ``channel_scale_``, float64, whose inverse is finite too (a file from before the
        parameter loads as ``channel_scale=None``, ``_saved_defaults``)."""
        super()._set_state(fitted, arrays)
        u = arrays.get("channel_scale_")
        if u is None and self.channel_scale is not None and fitted.get("n_channels_", 1) > 1:
            raise ValueError(f"channel_scale_ is missing, but the filter was saved with "
                             f"channel_scale={self.channel_scale!r}")  # fmt: skip
        if u is not None:
            require_floats(arrays, "channel_scale_")
            with np.errstate(over="ignore", divide="ignore"):
                inverse_finite = np.isfinite(1.0 / u).all()
            if not inverse_finite:
                raise ValueError(f"channel_scale_ must hold scales whose inverse is finite: {u}")

    def _to_units(self, x2: np.ndarray) -> np.ndarray:
        """(T, C) data in the units the kernel compares (a copy where scaled)."""
        u = self._unit_scale()
        return x2 if u is None else x2 / u

    def _from_units(self, y: np.ndarray) -> np.ndarray:
        u = self._unit_scale()
        return y if u is None else y * u

    def _state_units(self, state, inverse: bool):
        """A streaming state with its samples and outputs divided (``inverse``: multiplied) by
        the scale: the exact filters' (H + 1, C) array, alone or with its times, or the random
        features' (history, S, n, last time, last output), whose S sums outputs' units."""
        u = self._unit_scale()
        if u is None:
            return state
        if type(state) is np.ndarray and state.shape[-1:] == u.shape:  # the usual: one array
            return state * u if inverse else state / u
        f = u if inverse else 1.0 / u
        parts = list(state) if isinstance(state, tuple) else [state]
        scaled = (0, 1, 4) if len(parts) == 5 else (0,)  # the parts in the units of x
        arrays = {i: np.asarray(parts[i], dtype=float) for i in scaled}
        if any(a.shape[-1:] != (u.size,) for a in arrays.values()):
            if all(np.isnan(a).all() or not np.any(a) for a in arrays.values()):
                return state  # empty (no channel data; its channel count is set later)
            raise ValueError(
                f"state: its arrays do not hold the {u.size} channel(s) the filter was fitted "
                "on; start from initial_state()"
            )
        for i, a in arrays.items():
            parts[i] = a * f
        return tuple(parts) if isinstance(state, tuple) else parts[0]

    def _step_newest(self, spec, state, sample: np.ndarray, timestamp, finite=False):
        """:func:`~tssdpa.signal.lagfilter.step_newest` in the kernel's units: ``(y, state)`` in
        those of x, or None (the general path then runs, and names a wrong channel count);
        ``finite`` as there, of the state and sample in the units of x (a float64 array,
        else a tensor state is read as numpy here: np.asarray raised torch's errors)."""
        if not finite:
            state = state_arrays(state)
        u = self._unit_scale()
        if u is None:
            return step_newest(spec, state, sample, timestamp, self.min_step, finite)
        if sample.size != u.size:
            return None
        fast = step_newest(spec, self._state_units(state, False), sample / u, timestamp,
                           self.min_step)  # fmt: skip
        return None if fast is None else (fast[0] * u, self._state_units(fast[1], True))
