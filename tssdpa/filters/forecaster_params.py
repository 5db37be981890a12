"""The checks of :class:`~tssdpa.filters.ProjectionForecaster`'s constructor arguments."""

from __future__ import annotations

from tssdpa.checks import check_choice, check_fraction, check_int, check_positive
from tssdpa.estimators.glitches import GLITCHES
from tssdpa.estimators.selection import candidates, check_no_empty_list
from tssdpa.filters.analogues import MODELS
from tssdpa.filters.channel_choice import check_channel_independent

__all__ = ["check_forecaster_params"]


def check_forecaster_params(est) -> None:
    """Check the constructor arguments of the :class:`~tssdpa.filters.ProjectionForecaster`
    ``est``; raise naming the argument (called by ``fit``)."""
    check_no_empty_list(est, ("embedding", "delay", "n_neighbors", "bandwidth", "sigma",
                               "model", "ridge"))  # fmt: skip
    check_int(est.horizon, "horizon")
    check_choice(est.glitches, "glitches", GLITCHES)
    check_channel_independent(est.channel_independent)
    check_int(est.max_embedding, "max_embedding")
    check_int(est.max_fit_samples, "max_fit_samples", minimum=10)
    if est.switch_half_life is not None:
        check_positive(est.switch_half_life, "switch_half_life")
    if not (est.holdout is None or (isinstance(est.holdout, str) and est.holdout == "auto")):
        check_fraction(est.holdout, "holdout (None, 'auto' or a fraction)")
    if est.library_size is not None:
        check_int(est.library_size, "library_size", minimum=10)
    # the global linear models (MODELS[2:4]) read no neighbours: best_params_ say 0 for them
    k0 = est.model is not None and all(m in MODELS[2:4] for m in candidates(est.model))
    for name, check in (("embedding", check_int), ("delay", check_int),
                        ("n_neighbors", lambda v, n: check_int(v, n, minimum=1 - k0)),
                        ("bandwidth", check_positive), ("sigma", check_positive)):  # fmt: skip
        for v in candidates(getattr(est, name)) if getattr(est, name) is not None else ():
            check(v, name)
    if est.model is not None:
        for m in candidates(est.model):
            check_choice(m, "model", (*MODELS, "analogue"))
        delays = candidates(1 if est.delay is None else est.delay)  # (no array truth)
        if "recursive_linear" in candidates(est.model) and 1 not in delays:  # unscored
            raise ValueError("delay must include 1 for model 'recursive_linear'")
    for v in candidates(est.ridge) if est.ridge is not None else ():
        check_positive(v, "ridge", allow_zero=True)
