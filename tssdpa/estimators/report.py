"""What a fit chose, said with the channels' names: the CLI's report and the batch summary.

A fitted estimator may hold several chosen settings: one per horizon (a forecaster's
``best_params_`` is ``{h: {...}}``), one per channel (``channel_independent=True``: a list),
or a joint fit and the channels ``channel_independent="auto"`` filters alone
(``channel_models_``). :func:`chosen_settings` lists them all, each with where it applies.

Examples
--------
>>> import numpy as np
>>> from tssdpa.filters import ProjectionFilter
>>> x = np.sin(np.linspace(0, 20, 400))[:, None] * [1.0, 2.0]
>>> x += np.random.default_rng(0).normal(0, 0.1, x.shape)
>>> f = ProjectionFilter(causal=False, channel_independent=True).fit(x)
>>> [where for where, _ in chosen_settings(f, ["left", "right"])]
['channel left', 'channel right']
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "chosen_params",
    "chosen_settings",
    "fitted_models",
    "format_value",
    "heavy_tails_report",
    "horizon_settings",
    "settings_text",
]


def format_value(v) -> str:
    """A float to 4 significant digits, anything else as ``str``."""
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def settings_text(params: dict) -> str:
    """``params`` as ``k=v, ...`` (floats to 4 significant digits, a dict as ``(k=v, ...)``;
    None left out)."""
    return ", ".join(
        f"{k}=({settings_text(v)})" if isinstance(v, dict) else f"{k}={format_value(v)}"
        for k, v in params.items()
        if v is not None
    )


#: the settings a fitted ``ProjectionFilter`` keeps as ``<name>_`` (``best_params_``' keys)
_FILTER_SETTINGS = ("base", "base_params", "window", "embedding", "decay", "degree", "sigma")


def chosen_params(model):
    """``model.best_params_``, or for a ``ProjectionFilter`` loaded from a file (which keeps the
    chosen settings as ``window_``, ..., ``sigma_``, not ``best_params_``) those settings; None
    where it chose nothing (unfitted, or a method without a search)."""
    params, fitted = getattr(model, "best_params_", None), getattr(model, "__dict__", {})
    if params or not all(f"{name}_" in fitted for name in _FILTER_SETTINGS):
        return params or None  # an empty search's {} too
    return {name: getattr(model, f"{name}_", None) for name in _FILTER_SETTINGS}


def fitted_models(est, names=None) -> list[tuple[str, object]]:
    """``(where, model)`` for each fit inside the fitted ``est`` whose output is used: ``est``
    itself (``where`` ``""``, or ``"joint (<names>)"`` beside channels filtered alone, with
    the channels that keep its output) and each channel's own filter (``"channel <name>"``,
    from ``channel_models_``); ``names`` are the channels' names (default their indices)."""

    def name(c: int) -> str:
        return str(names[c]) if names is not None and c < len(names) else str(c)

    models = getattr(est, "channel_models_", None)
    if not models:
        return [("", est)]
    joint = [name(c) for c, m in enumerate(models) if m is None]
    out = [(f"joint ({', '.join(joint)})", est)] if joint else []
    return out + [(f"channel {name(c)}", m) for c, m in enumerate(models) if m is not None]


def horizon_settings(where: str, params: dict) -> list[tuple[str, dict]]:
    """``[(where, params)]``, or for a forecaster's ``{h: settings}`` one ``(where h=<h>,
    settings)`` per horizon."""
    if params and all(isinstance(v, dict) for v in params.values()):
        return [(f"{where} h={h}".strip(), p) for h, p in params.items()]
    return [(where, params)]


def chosen_settings(est, names=None) -> list[tuple[str, dict]]:
    """``(where, settings)`` for each set of settings the fitted ``est`` chose: one per fit of
    :func:`fitted_models`, per horizon for a forecaster (:func:`horizon_settings`). Empty
    before ``fit``."""
    models = fitted_models(est, names)
    if not any(chosen_params(model) for _, model in models):
        return []
    return [item for where, model in models
            for item in horizon_settings(where, chosen_params(model))]  # fmt: skip


def heavy_tails_report(heavy) -> list[str]:
    """The line ``fit(verbose=True)`` prints of the channels ``heavy`` ((C,) bools or None)
    marks, whose noise has heavy tails ([] for none)."""
    if heavy is None or not np.any(heavy):
        return []
    return [f"heavy-tailed noise in channel(s) {np.flatnonzero(heavy).tolist()}: its level "
            "counts the tails, SURE weighs each sample's divergence by its own squared noise, "
            "no local adaptation there"]  # fmt: skip
