"""The checks of :class:`~tssdpa.filters.ProjectionForecaster`'s constructor arguments."""

from __future__ import annotations

from tssdpa.checks import check_choice, check_fraction, check_int, check_positive
from tssdpa.estimators.glitches import GLITCHES
from tssdpa.estimators.selection import candidates, check_no_empty_list
from tssdpa.filters.analogues import MODELS
from tssdpa.filters.channel_choice import check_channel_independent

__all__ = ["check_forecaster_params"]

#: what a pyEDM user's value means here, said where it is refused: pyEDM's tau is negative
#: (samples back) and its knn=0 asks for E + 1 neighbours
_PYEDM_MEANING = {
    "delay": "delay counts samples back, so it is positive: pyEDM's tau=-1 is delay=1 "
    "(tau=-2: delay=2)",
    "n_neighbors": "pyEDM's knn=0 (E + 1 neighbours) is n_neighbors=None here: fit chooses k",
}
#: pyEDM's models by name (lowercase, without '-' and '_'), as this forecaster's
_PYEDM_MODELS = {"simplex": "mean", "smap": "local_linear"}


def _check_candidate(check, value, name: str) -> None:
    """``check(value, name)``, its message saying that a list of candidates is taken too (a
    set or a float said only "must be an int") and, for a value pyEDM reads otherwise, what
    that value means there (:data:`_PYEDM_MEANING`)."""
    try:
        check(value, name)
    except TypeError as exc:
        raise TypeError(f"{exc}; or candidates to choose from: a list, tuple, range or numpy "
                        f"array of them ({name}=[a, b, ...])") from None  # fmt: skip
    except ValueError as exc:
        if name not in _PYEDM_MEANING:
            raise
        raise ValueError(f"{exc}: {_PYEDM_MEANING[name]}") from None


def _check_model(m) -> None:
    """``ValueError`` listing the models (not the deprecated alias 'analogue', still taken)
    where ``m`` is none of them, naming this forecaster's for pyEDM's 'simplex' / 'smap'."""
    if m == "analogue" or m in MODELS:
        return
    said = f"model must be one of {MODELS}, got {m!r}"
    mine = _PYEDM_MODELS.get(str(m).lower().replace("-", "").replace("_", ""))
    if mine is not None:
        said += (f" (pyEDM's): use model={mine!r}; pyEDM's Simplex is model='mean' (a weighted "
                 "mean of the neighbours' futures), its S-map model='local_linear' (a weighted "
                 "local linear fit, bandwidth in theta's place)")  # fmt: skip
    raise ValueError(said)


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
            _check_candidate(check, v, name)
    if est.model is not None:
        for m in candidates(est.model):
            _check_model(m)
        delays = candidates(1 if est.delay is None else est.delay)  # (no array truth)
        if "recursive_linear" in candidates(est.model) and 1 not in delays:  # unscored
            raise ValueError("delay must include 1 for model 'recursive_linear'")
    for v in candidates(est.ridge) if est.ridge is not None else ():
        _check_candidate(lambda r, n: check_positive(r, n, allow_zero=True), v, "ridge")
