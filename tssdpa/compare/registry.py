"""Methods by name: every denoiser and forecaster the harness can run, with its search grid.

A grid is a function of the task context (``period``, ``lookback``, ``max_horizon``,
``n_train``) returning a list of constructor-argument dicts. Hyperparameters are chosen on the
validation split only; every method gets at most ``budget`` configurations (see
:func:`search_space`), ours included.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tssdpa import baselines as B

__all__ = [
    "MethodSpec",
    "register",
    "get_method",
    "available_methods",
    "search_space",
    "DEFAULT_BUDGET",
]

DEFAULT_BUDGET = 8


@dataclass
class MethodSpec:
    """One named method: how to build it and which configurations to try."""

    name: str
    task: str  # "denoise" or "forecast"
    factory: Callable[..., Any]
    grid: Callable[[dict], list[dict]] = field(default=lambda ctx: [{}])
    family: str = "classical"  # "classical", "linear-optimal", "projection", "learned"
    causal: bool = True
    description: str = ""
    #: "low" | "high": high-cost methods may have their evaluation origins subsampled
    cost: str = "low"
    fixed: dict = field(default_factory=dict)

    def build(self, ctx: dict | None = None, seed: int | None = None, **params):
        """Instantiate with ``params``; ``lookback``, ``horizon`` and ``seed`` are filled from
        the task context when the constructor takes them and they are not given."""
        kw = dict(self.fixed)
        kw.update(params)
        ctx = ctx or {}
        for arg, key in (("lookback", "lookback"), ("horizon", "max_horizon")):
            if arg not in kw and key in ctx and _accepts(self.factory, arg):
                kw[arg] = ctx[key]
        if seed is not None and "seed" not in kw and _accepts(self.factory, "seed"):
            kw["seed"] = seed
        return self.factory(**kw)


_REGISTRY: dict[tuple[str, str], MethodSpec] = {}
_PLUGINS_LOADED = False


def register(spec: MethodSpec, overwrite: bool = False) -> MethodSpec:
    """Add ``spec`` to the registry (``overwrite`` to replace an existing name)."""
    if spec.task not in ("denoise", "forecast"):
        raise ValueError(f"spec.task must be 'denoise' or 'forecast'; got {spec.task!r}")
    key = (spec.task, spec.name)
    if key in _REGISTRY and not overwrite:
        raise ValueError(f"{spec.task} method name {spec.name!r} is already registered")
    _REGISTRY[key] = spec
    return spec


def _load_plugins():
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from tssdpa.compare import projection_methods

    projection_methods.register_all(register)


def get_method(name: str, task: str) -> MethodSpec:
    """The ``task`` method registered as ``name``; ValueError listing the known names."""
    _load_plugins()
    if task not in ("denoise", "forecast"):
        raise ValueError(f"task must be 'denoise' or 'forecast'; got {task!r}")
    if (task, name) not in _REGISTRY:
        raise ValueError(
            f"method must be one of {available_methods(task)} for {task}; got {name!r}"
        )
    return _REGISTRY[(task, name)]


def available_methods(task: str | None = None, family: str | None = None) -> list[str]:
    """Registered method names, optionally for one task and/or family."""
    _load_plugins()
    return [
        n
        for (t, n), s in _REGISTRY.items()
        if (task is None or t == task) and (family is None or s.family == family)
    ]


def search_space(
    spec: MethodSpec, ctx: dict, budget: int = DEFAULT_BUDGET, seed: int = 0
) -> list[dict]:
    """The configurations to try: the grid, randomly subsampled to ``budget`` when larger."""
    grid = list(spec.grid(ctx)) or [{}]
    if len(grid) > budget:
        rng = random.Random(seed)
        grid = rng.sample(grid, budget)
    return grid


def _prod(**axes):
    import itertools

    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(axes[k] for k in keys))]


def _accepts(cls, name):
    return name in inspect.signature(cls).parameters


# --------------------------------------------------------------------------- denoisers
_CUTS = [0.02, 0.05, 0.1, 0.2]

register(
    MethodSpec(
        "noisy",
        "denoise",
        B.IdentityFilter,
        causal=True,
        description="no filtering (the noisy input)",
    )
)
register(
    MethodSpec(
        "butterworth",
        "denoise",
        B.ButterworthFilter,
        lambda c: _prod(cutoff=_CUTS, order=[2, 4]),
        causal=True,
        fixed={"zero_phase": False},
        description="Butterworth low-pass, sosfilt",
    )
)
register(
    MethodSpec(
        "butterworth_zp",
        "denoise",
        B.ButterworthFilter,
        lambda c: _prod(cutoff=_CUTS, order=[2, 4]),
        causal=False,
        fixed={"zero_phase": True},
        description="Butterworth, sosfiltfilt",
    )
)
register(
    MethodSpec(
        "savgol",
        "denoise",
        B.SavitzkyGolayFilter,
        lambda c: _prod(window_length=[5, 11, 21, 41], polyorder=[1, 2]),
        causal=True,
        fixed={"zero_phase": False},
        description="Savitzky-Golay, trailing window",
    )
)
register(
    MethodSpec(
        "savgol_zp",
        "denoise",
        B.SavitzkyGolayFilter,
        lambda c: _prod(window_length=[5, 11, 21, 41], polyorder=[2, 3]),
        causal=False,
        fixed={"zero_phase": True},
        description="Savitzky-Golay, centred (savgol_filter)",
    )
)
register(
    MethodSpec(
        "median",
        "denoise",
        B.MedianFilter,
        lambda c: _prod(kernel_size=[3, 5, 9, 15, 25, 41]),
        causal=True,
        fixed={"causal": True},
        description="running median, trailing",
    )
)
register(
    MethodSpec(
        "median_zp",
        "denoise",
        B.MedianFilter,
        lambda c: _prod(kernel_size=[3, 5, 9, 15, 25, 41]),
        causal=False,
        fixed={"causal": False},
        description="running median, centred",
    )
)
register(
    MethodSpec(
        "moving_average",
        "denoise",
        B.MovingAverageFilter,
        lambda c: _prod(window=[2, 4, 8, 16, 32, 64]),
        causal=True,
        fixed={"causal": True},
        description="trailing boxcar mean",
    )
)
register(
    MethodSpec(
        "scipy_wiener",
        "denoise",
        B.ScipyWienerFilter,
        lambda c: _prod(mysize=[3, 5, 9, 15, 25, 41]),
        causal=False,
        description="scipy.signal.wiener local adaptive",
    )
)
register(
    MethodSpec(
        "wiener_fir",
        "denoise",
        B.WienerFIRFilter,
        lambda c: _prod(taps=[8, 16, 32, 64]),
        causal=True,
        family="linear-optimal",
        fixed={"causal": True},
        description="least-squares optimal causal FIR (fitted on train)",
    )
)
register(
    MethodSpec(
        "wiener_fir_zp",
        "denoise",
        B.WienerFIRFilter,
        lambda c: _prod(taps=[9, 17, 33, 65]),
        causal=False,
        family="linear-optimal",
        fixed={"causal": False},
        description="least-squares optimal two-sided FIR (fitted on train)",
    )
)
for _suffix, _smoother, _how in (("", False, "Kalman filter"), ("_zp", True, "RTS smoother")):
    for _short, _level in (("level", "local level"), ("trend", "local linear trend")):
        register(
            MethodSpec(
                f"kalman_{_short}{_suffix}",
                "denoise",
                B.KalmanSmoother,
                causal=not _smoother,
                fixed={"level": _level, "smoother": _smoother},
                description=f"UnobservedComponents {_level}, {_how}",
            )
        )
register(
    MethodSpec(
        "wavelet",
        "denoise",
        B.WaveletDenoiser,
        lambda c: _prod(wavelet=["db4", "sym8"], scale=[0.5, 1.0, 2.0], mode=["soft"]),
        causal=False,
        description="PyWavelets universal-threshold shrinkage",
    )
)


# --------------------------------------------------------------------------- forecasters
def _ar_lags(c):
    cap = max(1, min(c.get("lookback", 64), c.get("n_train", 1000) // 10))
    return [p for p in (1, 2, 4, 8, 16, 24, 48, 96) if p <= cap] or [1]


def _arima_orders(c):
    orders = [(1, 0, 0), (2, 0, 0), (2, 0, 1), (1, 1, 1), (2, 1, 2)]
    if c.get("quick"):
        orders = orders[:3]
    return [{"order": o, "trend": "c" if o[1] == 0 else None} for o in orders]


def _ets(c):
    g = [{"trend": False}, {"trend": True}, {"trend": True, "damped_trend": True}]
    p = c.get("period")
    if p and 2 <= p <= 48 and not c.get("quick"):
        g += [{"trend": False, "seasonal": p}, {"trend": True, "damped_trend": True, "seasonal": p}]
    return g


def _snaive(c):
    p = c.get("period") or 1
    return [{"period": max(1, int(p))}]


def _dlinear(c):
    return _prod(ridge=[1e-4, 1e-2, 1.0, 100.0], normalize=["none", "last"])


register(MethodSpec("naive", "forecast", B.NaiveForecaster, description="last value"))
register(
    MethodSpec(
        "seasonal_naive",
        "forecast",
        B.SeasonalNaiveForecaster,
        _snaive,
        description="value one period earlier",
    )
)
register(
    MethodSpec(
        "autoreg",
        "forecast",
        B.AutoRegForecaster,
        lambda c: _prod(lags=_ar_lags(c)),
        family="linear-optimal",
        description="statsmodels AutoReg (OLS), recursive",
    )
)
register(
    MethodSpec(
        "arima",
        "forecast",
        B.ARIMAForecaster,
        _arima_orders,
        cost="high",
        description="statsmodels SARIMAX, Kalman rolling forecasts (no refit)",
    )
)
register(
    MethodSpec(
        "ets",
        "forecast",
        B.ETSForecaster,
        _ets,
        cost="high",
        description="statsmodels state-space ExponentialSmoothing",
    )
)
register(
    MethodSpec(
        "dlinear",
        "forecast",
        B.DLinearForecaster,
        _dlinear,
        description="DLinear decomposition + ridge least squares",
    )
)
