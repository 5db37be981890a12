"""Registers the tssdpa projection filters / forecasters with the harness when available.

The classes live in :mod:`tssdpa.filters` (issue 3). This module only adapts them to the
harness's names and search grids; when they are missing (an older or partial install) nothing
is registered and the comparison runs with the classical baselines alone.
"""

from __future__ import annotations

import itertools
import warnings

__all__ = ["register_all"]


def _prod(**axes):
    keys = list(axes)
    return [dict(zip(keys, v)) for v in itertools.product(*(axes[k] for k in keys))]


def register_all(register) -> list[str]:
    """Register what :mod:`tssdpa.filters` provides; returns the names registered."""
    try:
        import tssdpa.filters as F
    except Exception as exc:  # pragma: no cover - depends on the parallel work
        warnings.warn(f"tssdpa.filters unavailable ({exc}); projection methods skipped",
                      stacklevel=2)
        return []
    from tssdpa.compare.registry import MethodSpec

    names = []

    def add(spec):
        register(spec, overwrite=True)
        names.append(spec.name)

    if hasattr(F, "ProjectionFilter"):
        add(MethodSpec("projection", "denoise", F.ProjectionFilter, _proj_denoise_grid,
                       family="projection", causal=True, fixed={"causal": True},
                       description="nonparametric projection filter (causal)"))
        add(MethodSpec("projection_zp", "denoise", F.ProjectionFilter, _proj_denoise_grid,
                       family="projection", causal=False, fixed={"causal": False},
                       description="nonparametric projection filter (two-sided)"))
    if hasattr(F, "LearnedProjectionFilter"):
        add(MethodSpec("learned_projection", "denoise", F.LearnedProjectionFilter,
                       _learned_grid, family="learned", causal=True, fixed={"causal": True},
                       description="learned projection filter (Lightning)", cost="high"))
    if hasattr(F, "ProjectionForecaster"):
        add(MethodSpec("projection", "forecast", F.ProjectionForecaster, _proj_forecast_grid,
                       family="projection", description="nonparametric projection forecaster",
                       cost="high"))
    if hasattr(F, "LearnedProjectionForecaster"):
        add(MethodSpec("learned_projection", "forecast", F.LearnedProjectionForecaster,
                       _learned_grid, family="learned",
                       description="learned projection forecaster (Lightning)", cost="high"))
    return names


def _proj_denoise_grid(ctx):
    return [{}]


def _proj_forecast_grid(ctx):
    return [{}]


def _learned_grid(ctx):
    return [{}]
