"""A fit that raises leaves its estimator as it was, and one that succeeds records the
columns of a DataFrame it was given and, for a forecaster, what pandas ``predict`` returns
(applied to every ``Estimator``'s ``fit`` by :class:`~tssdpa.estimators.base.Estimator`)."""

from __future__ import annotations

import functools

from tssdpa.estimators.arrays import STREAM_TOLD, record_columns
from tssdpa.estimators.pandas_out import record_output

__all__ = ["GUARD_NAME", "keeps_the_last_fit_on_failure"]

#: the name of the wrapper's frame, which notes told in a fit skip (:mod:`.input_notes`)
GUARD_NAME = "fit_guarded"


def keeps_the_last_fit_on_failure(fit):
    """``fit`` that, where it raises, leaves the estimator as it was: a refit refused part way
    (a series too short, after the training series and scales were replaced) left a model
    that still read as fitted and forecast from the rejected data (``predict`` 107 instead of
    -1.5). Nested calls (a subclass's fit through ``super().fit``) are one fit."""

    @functools.wraps(fit)
    def fit_guarded(self, *args, **kwargs):
        if self.__dict__.get("_fitting_"):
            return fit(self, *args, **kwargs)
        before = dict(self.__dict__)
        self.__dict__["_fitting_"] = True
        try:
            fitted = fit(self, *args, **kwargs)
            series = args[0] if args else kwargs.get("x", kwargs.get("y"))
            record_columns(self, series)  # a DataFrame's: later ones are checked against them
            record_output(self, series)  # a forecaster's on pandas: predict returns pandas
            # a stream of the refitted filter is another stream: it warns of its own uneven
            # index (kept, the flag silenced every stream after the first)
            self.__dict__.pop(STREAM_TOLD, None)
            return fitted
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        finally:
            self.__dict__.pop("_fitting_", None)

    return fit_guarded
