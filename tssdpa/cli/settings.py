"""Checks of ``--params`` against ``--method`` shared by the one-file and many-file filter."""

from __future__ import annotations

import json

from tssdpa.cli.errors import UsageError

__all__ = ["check_causal", "check_horizon"]


def check_causal(spec, params: dict, method: str) -> None:
    """``UsageError`` where ``--params`` sets ``causal`` against what ``--method`` fixes it to:
    projection_zp with causal=true ran the causal filter under the zero-phase name (and
    projection with causal=false the zero-phase one)."""
    fixed = spec.fixed.get("causal")
    if "causal" not in params or fixed is None or bool(params["causal"]) == fixed:
        return
    kind = "causal" if fixed else "zero-phase"
    other = method.removesuffix("_zp") if method.endswith("_zp") else f"{method}_zp"
    given = json.dumps(params["causal"])
    raise UsageError(f"--params: causal={given} contradicts --method {method}, a {kind} "
                     f"filter; drop causal, or give --method {other}")  # fmt: skip


def check_horizon(params: dict, horizon: int) -> None:
    """``UsageError`` where ``--params`` fits a forecaster for a horizon below ``--horizon``:
    it was fitted, then failed 'horizon must be <= the fitted horizon', naming neither flag. A
    larger one is kept (a model saved for horizons up to it, ``--save-model``)."""
    given = params.get("horizon")
    if isinstance(given, bool) or not isinstance(given, int) or given >= horizon:
        return  # not an integer: the forecaster's own check names it
    raise UsageError(f"--params: horizon={given} is below --horizon {horizon}: a forecaster "
                     f"fitted for horizons up to {given} forecasts no further; drop horizon "
                     f"(--horizon sets it), or give one of {horizon} or more")  # fmt: skip
