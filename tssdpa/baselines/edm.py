"""Empirical dynamic modelling peers: pyEDM's Simplex projection and S-map as forecasters.

Both forecasters call `pyEDM <https://github.com/SugiharaLab/pyEDM>`_ by default (the optional
extra ``pip install tssdpa[peers]``; imported only when a forecaster is fitted or used) and keep
its algorithms unchanged: pyEDM embeds, finds the neighbours and weights them. Names follow the
project's vocabulary:

========================  ==============================================================
tssdpa                    pyEDM
========================  ==============================================================
``embedding``             ``E``: the number of lagged samples in a state vector
``delay``                 ``-tau``: the spacing of those samples (pyEDM's ``tau < 0``)
``n_neighbors``           ``knn``; None keeps pyEDM's default (``E + 1`` for Simplex, every
                          library row but one for S-map)
``theta``                 ``theta``: S-map's localisation, weights ``exp(-theta d / mean d)``
horizon ``h`` of a call   ``Tp = h``
========================  ==============================================================

Protocol (the ``Forecaster`` contract, rolling origin, no refitting): ``fit(y)`` keeps the
training series as the fixed library, one univariate model per channel, each up to its last
reading (gaps before it carried forward; a missing tail is no data). ``forecast_path(y, H)``
puts the training series and ``y`` in one pyEDM data frame, training rows first, then
``(embedding - 1) * delay`` NaN rows so that no state vector of ``y`` reaches back into the
training series, then ``y`` (and one NaN row); ``lib`` is the training rows and ``pred`` the
rows of ``y``, and pyEDM runs once per step ``Tp = 1..H``. The library holds the training series
alone (pyEDM drops library rows whose target ``Tp`` steps ahead lies past its end), so the
forecast from origin ``t`` depends on ``y``'s state vector at ``t`` (``y[t], y[t - delay],
...``) only. Rows whose state vector is incomplete (``t < (embedding - 1) * delay``) are NaN;
missing samples of ``y`` are carried forward first. ``forecast(y, h)`` runs pyEDM for
``Tp = h`` alone.

Speed: pyEDM's S-map solves one weighted least-squares problem per origin and step. Because the
forecast from ``t`` depends on ``y[:t+1]`` alone, a call whose series starts with the previous
call's series (the harness forecasts the validation part, then the longer series up to the end
of the test part) gives pyEDM only the origins after their common prefix and reuses the others:
the same numbers as a fresh call, since pyEDM treats each prediction row on its own.

``engine="numpy"`` computes the same forecasts without pyEDM, every step of a path in one
pass (:mod:`tssdpa.baselines.edm_numpy`): Simplex exactly; S-map exactly at a single step,
and on a path with one library per group of steps (1, 2, 3-4, 5-8, ...: step ``h`` misses
fewer than ``h`` of the latest training rows; 1.0-1.4% higher RMSE than pyEDM over 96-step
paths on ETTh1 OT, ``docs/results/edm_engines.md``). The harness uses it; the tests compare it
with pyEDM.

pyEDM's ``exclusionRadius`` (leave out library rows close in time to the prediction row, for
in-sample cross-validation where library and prediction rows coincide) is not offered: here the
library and the forecast series are different rows, and a row distance between them means
nothing.
"""

from __future__ import annotations

import numpy as np

from tssdpa.baselines.edm_numpy import simplex_steps, smap_steps
from tssdpa.checks import check_choice, check_int, check_positive
from tssdpa.estimators.base import Forecaster
from tssdpa.signal.missing import fill_missing, reading_spans

__all__ = ["SimplexForecaster", "SMapForecaster"]

#: how to install the optional dependency, named in the ImportError
PEERS_EXTRA = "pip install tssdpa[peers]"

#: "pyedm" calls pyEDM once per step (the reference); "numpy" computes every step in one pass
#: (:mod:`tssdpa.baselines.edm_numpy`, checked against pyEDM in the tests)
ENGINES = ("pyedm", "numpy")


def _pyedm():
    """The pyEDM module, or an ImportError that names the extra to install."""
    try:
        import pyEDM
    except ImportError as err:
        raise ImportError(
            f"the EDM forecasters (Simplex, S-map) need pyEDM: {PEERS_EXTRA} (or pip install pyEDM)"
        ) from err
    return pyEDM


class _Memo:
    """Forecasts already made for the last series seen, per step ``h`` (see the module's
    "Speed"): the rows of a common prefix stay valid."""

    def __init__(self):
        self.params: dict | None = None
        self.y: np.ndarray | None = None
        self.rows: dict[int, tuple[int, np.ndarray]] = {}  # h -> (rows done, values)

    def align(self, a: np.ndarray, params: dict) -> _Memo:
        """Make ``a`` the series the rows refer to, keeping those that stay valid."""
        if params != self.params or self.y is None or self.y.shape[1:] != a.shape[1:]:
            self.params, self.y, self.rows = params, a.copy(), {}
            return self
        n = min(len(a), len(self.y))
        diff = np.flatnonzero(np.any(a[:n] != self.y[:n], axis=1))
        same = int(diff[0]) if len(diff) else n  # length of the common prefix
        if same == len(a):  # a is a prefix of the memo's series: every row done stays valid
            return self
        grown = np.full((len(a), a.shape[1]), np.nan)
        self.rows = {
            h: (min(done, same), _copy_rows(grown, values, min(done, same)))
            for h, (done, values) in self.rows.items()
        }
        self.y = a.copy()
        return self


def _copy_rows(empty: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    out = empty.copy()
    out[:n] = values[:n]
    return out


class _EDMForecaster(Forecaster):
    """Shared by :class:`SimplexForecaster` and :class:`SMapForecaster`: the data frame given
    to pyEDM, the library checks and the per-step calls."""

    def _validate_params(self) -> None:
        check_int(self.embedding, "embedding")
        check_int(self.delay, "delay")
        if self.n_neighbors is not None:
            check_int(self.n_neighbors, "n_neighbors")
        check_choice(self.engine, "engine", ENGINES)

    @property
    def _shift(self) -> int:
        """How far back a state vector reaches: ``(embedding - 1) * delay`` samples."""
        return (int(self.embedding) - 1) * int(self.delay)

    def _min_library(self) -> int:  # pragma: no cover
        raise NotImplementedError

    def _check_library(self, h: int, name: str) -> None:
        lengths = [len(lib) for lib in self.library_]
        c = int(np.argmin(lengths))
        n_train = lengths[c]
        where = "the training series" if n_train == max(lengths) else f"y channel {c}'s readings"
        rows = n_train - self._shift - h  # library rows with a complete state vector and target
        # pyEDM also wants the library to span a state vector and its target
        need = max(self._min_library(), self._shift + h + 1)
        if rows < need:
            raise ValueError(
                f"{name}={h} leaves {max(rows, 0)} library rows in {where} of "
                f"{n_train} samples (embedding={self.embedding}, delay={self.delay}); "
                f"{type(self).__name__} needs at least {need}"
                + (f" (n_neighbors={self.n_neighbors})" if need == self.n_neighbors else "")
            )

    def _fit(self, a: np.ndarray) -> None:
        if self.engine == "pyedm":
            _pyedm()  # fail at fit, naming the extra, when pyEDM is missing
        filled = fill_missing(a, True)
        # each channel's library lies between its first and last readings: a missing head
        # filled back, or a tail filled forward, was a run of made-up constant states that the
        # forecasts took as neighbours
        self.library_ = [filled[s:e, c] for c, (s, e) in enumerate(reading_spans(a))]
        self._check_library(1, "horizon")
        self._memo = _Memo()

    def _predict_context(self) -> int:
        return self._shift + 1

    def _path(self, a: np.ndarray, horizon: int) -> np.ndarray:
        return self._steps(a, range(1, horizon + 1))

    def _forecast_h(self, a: np.ndarray, h: int) -> np.ndarray:
        return self._steps(a, (h,))[:, 0]

    def _steps(self, a: np.ndarray, steps) -> np.ndarray:
        """(T, len(steps), C): column ``j`` holds the forecasts ``steps[j]`` ahead."""
        steps = list(steps)
        self._check_library(max(steps), "horizon")
        # both models are equivariant to a level added to the series (distances, a weighted
        # mean, a local fit with intercept): computed about each library's mean level, as on
        # a unit signal on an offset of 1e9 its S-map fits lost it to rounding (0.98 off)
        level = np.array([np.mean(lib) for lib in self.library_])
        if self.engine == "numpy":
            about = [(lib - v, a[:, c] - v) for c, (lib, v) in enumerate(zip(self.library_, level))]
            return level + np.stack([self._numpy_steps(*pair, steps) for pair in about], axis=-1)
        pyEDM = _pyedm()
        T, C = a.shape
        out = np.full((T, len(steps), C), np.nan)
        if T <= self._shift:  # no complete state vector in y
            return out
        memo = self._memo.align(a, self.get_params())
        frames = [self._frame(self.library_[c] - level[c], a[:, c] - level[c]) for c in range(C)]
        for j, h in enumerate(steps):
            done, values = memo.rows.get(h, (0, np.full((len(memo.y), C), np.nan)))
            if done < T:  # forecasts from origins done..T-1 are new
                for c, (frame, lib, first) in enumerate(frames):
                    # one more row (the NaN after y) when a single origin is new: pyEDM
                    # wants pred start < end, and drops the row as incomplete
                    pred = [first + done + 1, first + T + (done == T - 1)]
                    try:
                        obj = self._call(pyEDM, frame, lib, pred, h)
                    except np.linalg.LinAlgError as exc:  # it escaped pyEDM's S-map as is
                        raise ValueError(
                            f"y channel {c}: pyEDM could not solve the local fit ({exc}): "
                            "its library states may coincide (a constant channel: mean distance "
                            "0, weights 0/0); engine='numpy' forecasts it"
                        ) from None
                    rows = np.asarray(obj.pred_i, dtype=int) - first  # rows of y
                    values[rows, c] = np.asarray(obj.projection, dtype=float) + level[c]
                memo.rows[h] = (max(done, T), values)
            out[:, j] = values[:T]
        return out

    def _frame(self, train: np.ndarray, y: np.ndarray):
        """(pyEDM data frame, lib, the frame row of ``y[0]``) for one channel: the training
        series, ``(embedding - 1) * delay`` NaN rows, ``y``, one NaN row."""
        import pandas as pd

        gap = np.full(self._shift, np.nan)
        x = np.concatenate([train, gap, y, [np.nan]])
        frame = pd.DataFrame({"Time": np.arange(1, len(x) + 1), "x": x})
        lib = [1, len(train)]  # 1-based, inclusive
        return frame, lib, len(train) + len(gap)

    def _call(self, pyEDM, frame, lib, pred, h):  # pragma: no cover
        raise NotImplementedError

    def _numpy_steps(self, train: np.ndarray, y: np.ndarray, steps) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover


class SimplexForecaster(_EDMForecaster):
    """pyEDM Simplex projection (Sugihara & May 1990) as a rolling-origin forecaster.

    The forecast ``h`` steps ahead from origin ``t`` is the average of the values ``h`` steps
    after the ``n_neighbors`` training states nearest to ``y``'s state at ``t``, weighted by
    ``exp(-d / d_min)``.

    Parameters
    ----------
    embedding : int
        Samples in a state vector (pyEDM's ``E``).
    delay : int
        Spacing of those samples (pyEDM's ``tau = -delay``).
    n_neighbors : int or None
        Neighbours averaged (pyEDM's ``knn``); None: ``embedding + 1``, pyEDM's default.
    engine : {"pyedm", "numpy"}
        ``"pyedm"`` calls pyEDM once per step; ``"numpy"`` computes every step of a path in
        one pass, with the same neighbours and weights (pyEDM not needed).
    """

    def __init__(
        self,
        embedding: int = 3,
        delay: int = 1,
        n_neighbors: int | None = None,
        engine: str = "pyedm",
    ):
        self._store(locals())

    def _min_library(self) -> int:
        return int(self.n_neighbors or self.embedding + 1)

    def _call(self, pyEDM, frame, lib, pred, h):
        return pyEDM.Simplex(
            dataFrame=frame,
            columns="x",
            target="x",
            lib=lib,
            pred=pred,
            E=int(self.embedding),
            Tp=h,
            knn=int(self.n_neighbors or 0),
            tau=-int(self.delay),
            returnObject=True,
        )

    def _numpy_steps(self, train, y, steps):
        k = int(self.n_neighbors or self.embedding + 1)
        return simplex_steps(train, y, int(self.embedding), int(self.delay), k, steps)


class SMapForecaster(_EDMForecaster):
    """pyEDM S-map (Sugihara 1994) as a rolling-origin forecaster.

    The forecast ``h`` steps ahead from origin ``t`` is a linear model of the state vector
    (with intercept), fitted by least squares to the training states and their values ``h``
    steps later, each weighted by ``exp(-theta d / mean d)`` (``d``: its distance to ``y``'s
    state at ``t``); ``theta = 0`` weights them all alike: a linear AR model of order
    ``embedding`` fitted to the neighbours.

    Parameters
    ----------
    embedding : int
        Samples in a state vector (pyEDM's ``E``).
    delay : int
        Spacing of those samples (pyEDM's ``tau = -delay``).
    theta : float
        Localisation (>= 0).
    n_neighbors : int or None
        Library states in each local fit (pyEDM's ``knn``); None: all library rows but one,
        pyEDM's default.
    engine : {"pyedm", "numpy"}
        ``"pyedm"`` calls pyEDM once per step; ``"numpy"`` fits once per origin and group
        of steps (1, 2, 3-4, 5-8, ...) on the library of the group's largest step (a single
        step is pyEDM's; see :mod:`tssdpa.baselines.edm_numpy`).
    """

    def __init__(
        self,
        embedding: int = 3,
        delay: int = 1,
        theta: float = 2.0,
        n_neighbors: int | None = None,
        engine: str = "pyedm",
    ):
        self._store(locals())

    def _validate_params(self) -> None:
        super()._validate_params()
        check_positive(self.theta, "theta", allow_zero=True)

    def _min_library(self) -> int:
        return int(self.n_neighbors or self.embedding + 2)

    def _call(self, pyEDM, frame, lib, pred, h):
        return pyEDM.SMap(
            dataFrame=frame,
            columns="x",
            target="x",
            lib=lib,
            pred=pred,
            E=int(self.embedding),
            Tp=h,
            knn=int(self.n_neighbors or 0),
            tau=-int(self.delay),
            theta=float(self.theta),
            returnObject=True,
        )

    def _numpy_steps(self, train, y, steps):
        n = None if self.n_neighbors is None else int(self.n_neighbors)
        return smap_steps(
            train, y, int(self.embedding), int(self.delay), float(self.theta), n, steps
        )
