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
        warnings.warn(
            f"tssdpa.filters unavailable ({exc}); projection methods skipped", stacklevel=2
        )
        return []
    from tssdpa.compare.registry import MethodSpec

    names = []

    def get(attr):
        try:
            return getattr(F, attr)
        except Exception:  # lazy import of an unfinished module
            return None

    def add(spec):
        register(spec, overwrite=True)
        names.append(spec.name)

    denoisers = (
        ("projection", "ProjectionFilter", _proj_denoise_grid, "nonparametric projection filter"),
        (
            "projection_residual",
            "ResidualProjectionFilter",
            _residual_denoise_grid,
            "Wiener FIR + projection of its residual",
        ),
    )
    for name, cls, grid, what in denoisers:
        if get(cls) is None:
            continue
        for causal in (True, False):
            add(
                MethodSpec(
                    name + ("" if causal else "_zp"),
                    "denoise",
                    get(cls),
                    grid,
                    family="projection",
                    causal=causal,
                    fixed={"causal": causal},
                    description=f"{what} " + ("(causal)" if causal else "(two-sided)"),
                )
            )
    if get("LearnedProjectionFilter") is not None:
        add(
            MethodSpec(
                "learned_projection",
                "denoise",
                get("LearnedProjectionFilter"),
                _learned_denoise_grid,
                family="learned",
                causal=True,
                fixed=_QUIET,
                description="learned projection filter (Lightning, causal)",
                cost="high",
            )
        )
    if get("ProjectionForecaster") is not None:
        add(
            MethodSpec(
                "projection",
                "forecast",
                get("ProjectionForecaster"),
                _proj_forecast_grid,
                family="projection",
                description="nonparametric projection forecaster",
                cost="high",
            )
        )
    if get("ResidualProjectionForecaster") is not None:
        add(
            MethodSpec(
                "projection_residual",
                "forecast",
                get("ResidualProjectionForecaster"),
                _residual_forecast_grid,
                family="projection",
                description="linear forecaster (AutoReg / DLinear) + projection of its residual",
                cost="high",
            )
        )
    if get("LearnedProjectionForecaster") is not None:
        add(
            MethodSpec(
                "learned_projection",
                "forecast",
                get("LearnedProjectionForecaster"),
                _learned_forecast_grid,
                family="learned",
                fixed=_QUIET,
                description="learned DLinear + projection-attention (Lightning)",
                cost="high",
            )
        )
    return names


def _proj_denoise_grid(ctx):
    # sigma is chosen inside fit() on the training split (error on a held-out tail against
    # the clean target when given, SURE otherwise)
    return _prod(window=[8, 16, 32, 64], embedding=[1, 4])


def _residual_denoise_grid(ctx):
    # sigma and the shrinkage are chosen inside fit() on a held-out tail of the training split;
    # the Wiener FIR's taps span the range of the plain `wiener_fir` grid
    return _prod(taps=[16, 64], embedding=[8, 16])


def _residual_forecast_grid(ctx):
    lb = int(ctx.get("lookback", 32))
    if lb >= 336:  # ETT: the closed-form DLinear base, as in the `dlinear` grid
        return _prod(
            base=["dlinear"],
            base_params=[
                {"ridge": r, "normalize": n} for r in (1e-4, 1e-2) for n in ("none", "last")
            ],
            lags=[48],
        )
    cap = max(1, min(lb, int(ctx.get("n_train", 1000)) // 10))
    return _prod(
        base=["autoreg"],
        base_params=[{"lags": p} for p in sorted({min(4, cap), min(24, cap)})],
        lags=sorted({min(lb, 8), min(lb, 16)}),
    )


def _proj_forecast_grid(ctx):
    lb = int(ctx.get("lookback", 32))
    lags = sorted({min(lb, v) for v in (8, 16, 32)})
    return _prod(lags=lags, model=["analogue", "hybrid"])


_QUIET = {
    "accelerator": "cpu",
    "enable_progress_bar": False,
    "trainer_kwargs": {
        "enable_checkpointing": False,
        "logger": False,
        "enable_model_summary": False,
    },
}


def _learned_denoise_grid(ctx):
    if ctx.get("quick"):
        return [
            {
                "window": 8,
                "num_layers": 1,
                "d_model": 8,
                "dim_feedforward": 16,
                "seq_len": 32,
                "max_epochs": 3,
            }
        ]  # 32: sunspots' training part is 185 samples
    return _prod(window=[8, 16], num_layers=[1, 2], d_model=[16], max_epochs=[10])


def _learned_forecast_grid(ctx):
    if ctx.get("quick"):
        return [{"d_model": 8, "dim_feedforward": 16, "patch_len": 8, "max_epochs": 3}]
    return _prod(d_model=[16, 32], max_epochs=[10], patch_len=[8, 16])
