"""Every method of the comparison, with its search grid: the one list the harness runs.

Classical baselines (:mod:`tssdpa.baselines`), the projection filters and forecasters, their
residual hybrids and the learned models (:mod:`tssdpa.filters`) are registered here, in the
order the tables list them. Importing :mod:`tssdpa.compare` imports this module, so every
caller of the registry sees all of them. The empirical-dynamic-modelling peers (pyEDM Simplex
and S-map) come last and only where pyEDM is installed (``pip install tssdpa[peers]``).

The values and the order of each grid are part of the published results: the harness
subsamples a grid larger than the budget with a seeded ``random.sample``, so reordering a grid
(or renaming nothing but a value) changes which configurations a run tries.
"""

from __future__ import annotations

import importlib.util
import itertools

from tssdpa.baselines import (
    ARIMAForecaster,
    AutoRegForecaster,
    ButterworthFilter,
    DLinearForecaster,
    ETSForecaster,
    IdentityFilter,
    KalmanSmoother,
    MedianFilter,
    MovingAverageFilter,
    NaiveForecaster,
    SavitzkyGolayFilter,
    ScipyWienerFilter,
    SeasonalNaiveForecaster,
    SimplexForecaster,
    SMapForecaster,
    WaveletDenoiser,
    WienerFIRFilter,
)
from tssdpa.compare.registry import MethodSpec, register
from tssdpa.data.tasks import season_search_limit
from tssdpa.filters import (
    ProjectionFilter,
    ProjectionForecaster,
    ResidualProjectionFilter,
    ResidualProjectionForecaster,
)

__all__: list[str] = []  # importing the module registers the methods; it exports nothing

#: the learned estimators by import path, imported where one is used (torch and Lightning)
_LEARNED = "tssdpa.filters.learned:"


def _prod(**axes) -> list[dict]:
    """Every combination of the axes' values, the last axis varying fastest."""
    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(axes[k] for k in keys))]


# ---------------------------------------------------------------- classical denoisers
_CUTS = [0.02, 0.05, 0.1, 0.2]
_WINDOWS = [3, 5, 9, 15, 25, 41]


def _denoiser(name, factory, grid, **kw):
    register(MethodSpec(name, "denoise", factory, grid, **kw))


def _fir_windows(*windows):
    """The Wiener FIR's windows that the training part can fit: one of as many taps as training
    samples has no solution, and it failed the whole method (a 100-sample series, 60 to train
    on: no wiener_fir row at all, though 8, 16 and 32 taps fit). The smallest where none fits,
    to fail naming the lengths."""

    def grid(ctx):
        n = ctx.get("n_train")
        return [{"window": w} for w in windows if n is None or w < n] or [{"window": windows[0]}]

    return grid


_KALMAN = {"level": "local level", "trend": "local linear trend"}
# name, class, grid (None: the defaults only), causal, fixed arguments, description; in the
# order the tables list them
_CLASSICAL_DENOISERS = [
    ("noisy", IdentityFilter, None, True, {}, "no filtering (the noisy input)"),
    ("butterworth", ButterworthFilter, _prod(cutoff=_CUTS, order=[2, 4]), True,
     {"zero_phase": False}, "Butterworth low-pass, sosfilt"),
    ("butterworth_zp", ButterworthFilter, _prod(cutoff=_CUTS, order=[2, 4]), False,
     {"zero_phase": True}, "Butterworth, sosfiltfilt"),
    ("savgol", SavitzkyGolayFilter, _prod(window=[5, 11, 21, 41], polyorder=[1, 2]), True,
     {"zero_phase": False}, "Savitzky-Golay, trailing window"),
    ("savgol_zp", SavitzkyGolayFilter, _prod(window=[5, 11, 21, 41], polyorder=[2, 3]), False,
     {"zero_phase": True}, "Savitzky-Golay, centred (savgol_filter)"),
    ("median", MedianFilter, _prod(window=_WINDOWS), True, {"causal": True},
     "running median, trailing"),
    ("median_zp", MedianFilter, _prod(window=_WINDOWS), False, {"causal": False},
     "running median, centred"),
    ("moving_average", MovingAverageFilter, _prod(window=[2, 4, 8, 16, 32, 64]), True,
     {"causal": True}, "trailing boxcar mean"),
    ("scipy_wiener", ScipyWienerFilter, _prod(window=_WINDOWS), False, {},
     "scipy.signal.wiener local adaptive"),
    ("wiener_fir", WienerFIRFilter, _fir_windows(8, 16, 32, 64), True, {"causal": True},
     "least-squares optimal causal FIR (fitted on train)"),
    # odd windows: window // 2 taps on each side of t
    ("wiener_fir_zp", WienerFIRFilter, _fir_windows(9, 17, 33, 65), False,
     {"causal": False}, "least-squares optimal two-sided FIR (fitted on train)"),
    *[(f"kalman_{short}{'_zp' if smoother else ''}", KalmanSmoother, None, not smoother,
       {"level": level, "smoother": smoother},
       f"UnobservedComponents {level}, {'RTS smoother' if smoother else 'Kalman filter'}")
      for smoother in (False, True) for short, level in _KALMAN.items()],
    ("wavelet", WaveletDenoiser,
     _prod(wavelet=["db4", "sym8"], scale=[0.5, 1.0, 2.0], mode=["soft"]), False, {},
     "PyWavelets universal-threshold shrinkage"),
]  # fmt: skip
for _name, _cls, _grid, _causal, _fixed, _what in _CLASSICAL_DENOISERS:
    _denoiser(
        _name,
        _cls,
        (lambda c: [{}]) if _grid is None else _grid if callable(_grid) else (lambda c, g=_grid: g),
        family="linear-optimal" if _cls is WienerFIRFilter else "classical",
        causal=_causal,
        fixed=_fixed,
        description=_what,
    )


# -------------------------------------------------------------- classical forecasters
def _ar_lags(c):
    # at most the lookback, and at least ten training samples per coefficient
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
    # two full seasons to fit on (ETSForecaster refuses fewer): a period of 48 on 90 training
    # samples failed the whole method, though its non-seasonal configurations fit
    if p and 2 <= p <= 48 and 2 * p <= c.get("n_train", 2 * p) and not c.get("quick"):
        g += [{"trend": False, "seasonal": p}, {"trend": True, "damped_trend": True, "seasonal": p}]
    return g


def _snaive(c):
    if not c.get("period"):  # the harness skips it there (_no_season), with a note
        raise ValueError(f"seasonal_naive: {_no_season(c)}")
    return [{"period": int(c["period"])}]


def _no_season(c):
    # without a season (none declared, none found: estimate_period) the method was run with
    # a period of 1, the naive forecaster under another name, or, before estimate_period
    # refused a peak red noise explains, with a period as long as the lookback (a 300-row
    # random walk: MSE 1.15 where the naive forecaster's was 0.05)
    if not c.get("period"):
        return (
            "no season in its training part (no periodogram peak of 2 to "
            f"{season_search_limit(c.get('n_train', 0))} samples above red noise in any "
            "channel), so no seasonal naive forecast"
        )
    return None


def _dlinear(c):
    return _prod(ridge=[1e-4, 1e-2, 1.0, 100.0], normalize=["none", "last"])


register(MethodSpec("naive", "forecast", NaiveForecaster, description="last value"))
register(
    MethodSpec(
        "seasonal_naive",
        "forecast",
        SeasonalNaiveForecaster,
        _snaive,
        description="value one period earlier",
        skip_if=_no_season,
    )
)
register(
    MethodSpec(
        "autoreg",
        "forecast",
        AutoRegForecaster,
        lambda c: _prod(lags=_ar_lags(c)),
        family="linear-optimal",
        description="statsmodels AutoReg (OLS), recursive",
    )
)
register(
    MethodSpec(
        "arima",
        "forecast",
        ARIMAForecaster,
        _arima_orders,
        cost="high",
        description="statsmodels SARIMAX, Kalman rolling forecasts (no refit)",
    )
)
register(
    MethodSpec(
        "ets",
        "forecast",
        ETSForecaster,
        _ets,
        cost="high",
        description="statsmodels state-space ExponentialSmoothing",
    )
)
register(
    MethodSpec(
        "dlinear",
        "forecast",
        DLinearForecaster,
        _dlinear,
        description="DLinear decomposition + ridge least squares",
    )
)


# ------------------------------------------------------------ projection denoisers
def _proj_denoise_grid(ctx):
    # the default fit() chooses everything (window, embedding, degree, sigma) on the training
    # split: the error on a held-out tail against the clean target when given, SURE otherwise
    return [{}]


def _residual_denoise_grid(ctx):
    # sigma and the shrinkage are chosen inside fit() on a held-out tail of the training
    # split; the Wiener FIR's window spans the range of the plain `wiener_fir` grid
    grid = _prod(window=[16, 64], embedding=[8, 16])
    n = ctx.get("n_train")
    if n is None:
        return grid
    # the part before that tail must exceed window + embedding (the fit refuses it else): on
    # 60 training samples the 64-sample window failed the whole method, though 16 fits
    head = n - max(round(ResidualProjectionFilter().holdout * n), 1)
    return [p for p in grid if head > p["window"] + p["embedding"]] or grid[:1]


for _name, _cls, _grid, _what in (
    ("projection", ProjectionFilter, _proj_denoise_grid, "nonparametric projection filter"),
    (
        "projection_residual",
        ResidualProjectionFilter,
        _residual_denoise_grid,
        "Wiener FIR + projection of its residual",
    ),
):
    for _causal in (True, False):
        _denoiser(
            _name + ("" if _causal else "_zp"),
            _cls,
            _grid,
            causal=_causal,
            family="projection",
            fixed={"causal": _causal},
            description=f"{_what} " + ("(causal)" if _causal else "(two-sided)"),
        )

#: Lightning quiet and on the CPU: the comparison trains many small models, where a GPU's
#: start-up costs more than it saves, and checkpoints or logs would only fill the disk
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
    # the filter splits what it is given into training windows, a gap of one window and a
    # validation tail of at least one (time_split): windows longer than a third of the
    # training part failed every configuration of a short series (a --file under 640 rows,
    # 160 quick; sunspots' 185 training samples outside --quick) with "x has 60 samples: too
    # short ...". Shorter windows fit; the network (window, layers) is the grid's own
    fit = max(1, int(ctx.get("n_train", 10**9)) // 3)
    if ctx.get("quick"):
        return [
            {
                "window": min(8, fit),  # the filter refuses a window beyond seq_len
                "num_layers": 1,
                "d_model": 8,
                "dim_feedforward": 16,
                "seq_len": min(32, fit),  # sunspots' training part is 185 samples
                "max_epochs": 3,
            }
        ]
    if fit >= 128:  # 128: the default seq_len
        return _prod(window=[8, 16], num_layers=[1, 2], d_model=[16], max_epochs=[10])
    # windows beyond seq_len are refused (they trained without their far lags, then used
    # them): a window of the whole sequence at most, each width once
    windows = sorted({min(w, fit) for w in (8, 16)})
    return _prod(window=windows, num_layers=[1, 2], d_model=[16], max_epochs=[10], seq_len=[fit])


_denoiser(
    "learned_projection",
    _LEARNED + "LearnedProjectionFilter",
    _learned_denoise_grid,
    family="learned",
    fixed=_QUIET,
    description="learned projection filter (Lightning, causal)",
    cost="high",
)


# ---------------------------------------------------------- projection forecasters
def _proj_forecast_grid(ctx):
    # fit() chooses the embedding, delay, neighbours, bandwidth and model itself, per horizon
    # (on the training part, leave-one-out or forward): nothing left for the harness to tune
    return [{}]


def _residual_forecast_grid(ctx):
    lb = int(ctx.get("lookback", 32))
    if lb >= 336:  # ETT: the closed-form DLinear base, as in the `dlinear` grid
        return _prod(
            base=["dlinear"],
            base_params=[
                {"ridge": r, "normalize": n} for r in (1e-4, 1e-2) for n in ("none", "last")
            ],
            embedding=[48],
        )
    cap = max(1, min(lb, int(ctx.get("n_train", 1000)) // 10))
    return _prod(
        base=["autoreg"],
        base_params=[{"lags": p} for p in sorted({min(4, cap), min(24, cap)})],  # AR orders
        embedding=sorted({min(lb, 8), min(lb, 16)}),
    )


def _learned_forecast_grid(ctx):
    if ctx.get("quick"):
        return [{"d_model": 8, "dim_feedforward": 16, "patch_len": 8, "max_epochs": 3}]
    return _prod(d_model=[16, 32], max_epochs=[10], patch_len=[8, 16])


register(
    MethodSpec(
        "projection",
        "forecast",
        ProjectionForecaster,
        _proj_forecast_grid,
        family="projection",
        description="nonparametric projection forecaster",
        cost="high",
    )
)
register(
    MethodSpec(
        "projection_residual",
        "forecast",
        ResidualProjectionForecaster,
        _residual_forecast_grid,
        family="projection",
        description="linear forecaster (AutoReg / DLinear) + projection of its residual",
        cost="high",
    )
)
register(
    MethodSpec(
        "learned_projection",
        "forecast",
        _LEARNED + "LearnedProjectionForecaster",
        _learned_forecast_grid,
        family="learned",
        fixed=_QUIET,
        description="learned DLinear + projection-attention (Lightning)",
        cost="high",
        # its own split: training windows, a gap of lookback + horizon, a validation tail as
        # long (time_split): a short --file with long --horizons failed every cell "too short"
        min_train=lambda c: 3 * (int(c["lookback"]) + int(c["max_horizon"])),
    )
)


# ------------------------------------------- empirical dynamic modelling peers (pyEDM)
# Registered last, so the order of every method above is unchanged, and only where pyEDM is
# installed (pip install tssdpa[peers]). Family "edm": peers, not ours, in every table. They
# run on the numpy engine: pyEDM's neighbours and weights for every step of a path in one pass
# (tests/baselines/test_edm.py compares it with pyEDM), where pyEDM takes one call per step.
if importlib.util.find_spec("pyEDM") is not None:
    _EDM_EMBEDDINGS = list(range(1, 11))
    # a forecast reads the state vector (at most 10 samples here; the harness gives more where
    # a configuration reads more) and the training library only: 32 samples of history give
    # every origin its forecast, without pyEDM forecasting from each earlier origin too
    _EDM_HISTORY = 32
    register(
        MethodSpec(
            "simplex",
            "forecast",
            SimplexForecaster,
            lambda c: _prod(embedding=_EDM_EMBEDDINGS),
            family="edm",
            description="pyEDM Simplex projection (E+1 nearest training states)",
            cost="high",
            fixed={"engine": "numpy"},
            history=_EDM_HISTORY,
        )
    )
    register(
        MethodSpec(
            "smap",
            "forecast",
            SMapForecaster,
            lambda c: _prod(embedding=_EDM_EMBEDDINGS, theta=[0.0, 0.5, 1.0, 2.0, 4.0, 8.0]),
            family="edm",
            description=(
                "pyEDM S-map (locally weighted linear map of the training states; the steps "
                "1, 2, 3-4, 5-8, ... of a path share their largest step's library)"
            ),
            cost="high",
            fixed={"engine": "numpy"},
            history=_EDM_HISTORY,
        )
    )
