"""Which entry of a fitted :class:`~tssdpa.filters.ProjectionForecaster`'s ``best_params_``
forecasts a horizon (:func:`params_at`): the fit chooses a structure at its anchor horizons
only, so ``best_params_[14]`` after ``horizon=20`` raised ``KeyError`` (horizon 14 is
forecast with the anchor 15's)."""

from __future__ import annotations

from tssdpa.checks import check_int
from tssdpa.filters.analogues import anchor_horizons, nearest_anchor

__all__ = ["params_at"]


def params_at(forecaster, h: int):
    """The structure the fitted ``forecaster`` forecasts horizon ``h`` (1 .. its ``horizon``)
    with: its ``best_params_`` entry of the anchor horizon nearest ``h`` in log scale (a tie:
    the shorter). The anchors are every horizon up to 12; beyond, 1, ``horizon`` and
    geometric steps between (``horizon=20``: 1, 2, 3, 4, 5, 7, 9, 12, 15, 20, so horizon 14
    uses ``best_params_[15]``). A list of them, one per channel, where the fit was
    ``channel_independent`` (its ``best_params_`` is such a list)."""
    forecaster._check_fitted()
    check_int(h, "h")
    if h > forecaster.horizon:
        raise ValueError(f"h must be <= the fitted horizon {forecaster.horizon}; got {h}")
    anchor = nearest_anchor(h, anchor_horizons(forecaster.horizon))
    best = forecaster.best_params_
    return [b[anchor] for b in best] if isinstance(best, list) else best[anchor]
