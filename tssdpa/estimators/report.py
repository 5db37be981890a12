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

__all__ = ["chosen_settings", "format_value", "settings_text"]


def format_value(v) -> str:
    """A float to 4 significant digits, anything else as ``str``."""
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def settings_text(params: dict) -> str:
    """``params`` as ``k=v, ...`` (floats to 4 significant digits; None left out)."""
    return ", ".join(f"{k}={format_value(v)}" for k, v in params.items() if v is not None)


def chosen_settings(est, names=None) -> list[tuple[str, dict]]:
    """``(where, settings)`` for each set of settings the fitted ``est`` chose: ``where`` is
    ``""`` for a single model, ``"channel <name>"`` for a channel's own fit, ``"joint (<names>)"``
    for the joint fit of the channels that kept it, with ``" h=<h>"`` per horizon of a
    forecaster; ``names`` are the channels' names (default their indices). Empty before
    ``fit``."""
    best = getattr(est, "best_params_", None)
    if not best:
        return []

    def name(c: int) -> str:
        return str(names[c]) if names is not None and c < len(names) else str(c)

    models = getattr(est, "channel_models_", None)
    if isinstance(best, list):  # one fit per channel
        fits = [(f"channel {name(c)}", p) for c, p in enumerate(best)]
    elif models:  # the joint fit and the channels filtered alone
        joint = [name(c) for c, m in enumerate(models) if m is None]
        fits = [(f"joint ({', '.join(joint)})", best)] if joint else []
        fits += [(f"channel {name(c)}", m.best_params_) for c, m in enumerate(models) if m]
    else:
        fits = [("", best)]
    out = []
    for where, params in fits:
        if params and all(isinstance(v, dict) for v in params.values()):  # per horizon
            out += [(f"{where} h={h}".strip(), p) for h, p in params.items()]
        else:
            out.append((where, params))
    return out
