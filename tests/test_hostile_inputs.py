"""Hostile input, every estimator: each case ends in a clear error naming the argument or in
a documented result; nothing the caller passed is changed.

One table of estimators (every denoiser and forecaster the package exports, at settings that
fit in well under a second) against one table of awkward inputs. The rules are those of
``docs/filters.md`` section 12.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tssdpa.baselines as B
import tssdpa.filters as F
from tssdpa.estimators.base import Denoiser, Forecaster

rng = np.random.default_rng(0)
N = 400
X = np.sin(np.arange(N) * 0.07) + 0.1 * rng.standard_normal(N)
X2 = np.column_stack([X, np.cos(np.arange(N) * 0.05)])

#: every exported estimator, small and fast
ESTIMATORS = {
    "IdentityFilter": B.IdentityFilter,
    "ButterworthFilter": B.ButterworthFilter,
    "SavitzkyGolayFilter": B.SavitzkyGolayFilter,
    "ScipyWienerFilter": B.ScipyWienerFilter,
    "MedianFilter": B.MedianFilter,
    "MovingAverageFilter": B.MovingAverageFilter,
    "WienerFIRFilter": lambda: B.WienerFIRFilter(window=4),
    "KalmanSmoother": B.KalmanSmoother,
    "WaveletDenoiser": B.WaveletDenoiser,
    "NaiveForecaster": B.NaiveForecaster,
    "SeasonalNaiveForecaster": lambda: B.SeasonalNaiveForecaster(period=12),
    "AutoRegForecaster": B.AutoRegForecaster,
    "ARIMAForecaster": B.ARIMAForecaster,
    "ETSForecaster": B.ETSForecaster,
    "DLinearForecaster": lambda: B.DLinearForecaster(lookback=16, horizon=2),
    "ProjectionFilter": lambda: F.ProjectionFilter(sigma=0.5, window=8),
    "ProjectionFilter_fit": lambda: F.ProjectionFilter(window=[8, 16]),
    "ProjectionForecaster": lambda: F.ProjectionForecaster(
        horizon=2, embedding=2, n_neighbors=4, model="mean"
    ),
    "ResidualProjectionFilter": lambda: F.ResidualProjectionFilter(window=4, embedding=4),
    "ResidualProjectionForecaster": lambda: F.ResidualProjectionForecaster(
        base_params={"lags": 2}, embedding=2, horizon=2
    ),
}


def _name(est) -> str:
    return "y" if isinstance(est, Forecaster) else "x"


def _fit(est, x):
    if isinstance(est, Forecaster):
        return est.fit(x)
    if getattr(est, "requires_target", False):
        return est.fit(x, target=X2 if np.ndim(x) == 2 and np.shape(x)[1] == 2 else X)
    return est.fit(x)


def _use(est, x):
    """The estimator's main call on ``x``."""
    return est.forecast(x, horizon=1) if isinstance(est, Forecaster) else est.filter(x)


def test_the_table_covers_every_exported_estimator():
    exported = {
        n
        for mod in (B, F)
        for n in mod.__all__
        if isinstance(getattr(mod, n), type) and issubclass(getattr(mod, n), Denoiser | Forecaster)
    }
    learned = {"LearnedProjectionFilter", "LearnedProjectionForecaster"}  # tests/filters/
    peers = {"SimplexForecaster", "SMapForecaster", "UnobservedComponentsForecaster"}
    assert exported - learned - peers <= {k.split("_")[0] for k in ESTIMATORS}


def _with_inf(x):
    x = x.copy()
    x[50] = np.inf
    return x


def _with_neg_inf(x):
    x = x.copy()
    x[7] = -np.inf
    return x


#: input -> (exception type, words the message must hold); ``{x}`` is the argument's name
BAD = {
    "inf": (_with_inf, ValueError, "{x} contains inf"),
    "-inf": (_with_neg_inf, ValueError, "{x} contains inf"),
    "all NaN": (lambda x: np.full_like(x, np.nan), ValueError, "{x} (channel 0 )?is all NaN"),
    "complex": (lambda x: x + 1j, TypeError, "{x} must be a real"),
    "complex pandas": (lambda x: pd.Series(x + 1j), TypeError, "{x} must be real"),
    "text": (lambda x: np.array(["a"] * len(x), dtype=object), TypeError, "{x} must be a real"),
    "text cell": (
        lambda x: pd.Series([*x[:-1].tolist(), "glitch"]),
        TypeError,
        "{x} must be a real",
    ),
    # numpy reads "0.5" as 0.5 when asked for floats: these were fitted and filtered
    "numbers as text": (lambda x: x.astype(str), TypeError, "{x} must be a real.*got text"),
    "numbers as text pandas": (
        lambda x: pd.Series(x.astype(str), dtype="string"),
        TypeError,
        "{x} must be a real.*got text",
    ),
    "3-D": (lambda x: x.reshape(-1, 1, 1), ValueError, "{x} must be 1-D"),
    "empty": (lambda x: x[:0], ValueError, "{x} is empty"),
    "no channels": (lambda x: np.empty((len(x), 0)), ValueError, "{x} has 0 channels"),
    "None": (lambda x: None, TypeError, "{x} must be a real"),
    # squares of these overflow / underflow in float64: distances and variances would be wrong
    "huge": (lambda x: x * 1e160, ValueError, "{x} channel 0 reaches magnitude"),
    "tiny": (lambda x: x * 1e-160, ValueError, "{x} channel 0 is at most"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("make", sorted(ESTIMATORS))
def test_fit_refuses_bad_input_naming_the_argument(make, case):
    est = ESTIMATORS[make]()
    transform, exc, words = BAD[case]
    bad = transform(X)
    with pytest.raises(exc, match=words.format(x=_name(est))):
        _fit(est, bad)


#: "all NaN": ProjectionForecaster gave NaN without a word, the others named no argument
#: ("channel 0 is all NaN: nothing to fill it from")
@pytest.mark.parametrize(
    "case", ["inf", "complex", "text", "numbers as text", "3-D", "empty", "all NaN"]
)
@pytest.mark.parametrize("make", sorted(ESTIMATORS))
def test_a_fitted_estimator_refuses_bad_input_naming_the_argument(make, case):
    est = _fit(ESTIMATORS[make](), X)
    transform, exc, words = BAD[case]
    with pytest.raises(exc, match=words.format(x=_name(est))):
        _use(est, transform(X))


@pytest.mark.parametrize("make", sorted(ESTIMATORS))
def test_the_wrong_number_of_channels_is_refused_naming_them(make):
    est = _fit(ESTIMATORS[make](), X2)
    if not getattr(est, "trainable", True):
        pytest.skip("a design-only filter is redone for whatever it is given")
    with pytest.raises(ValueError, match="channel"):
        _use(est, np.column_stack([X2, X]))


@pytest.mark.parametrize("make", sorted(ESTIMATORS))
def test_nothing_the_caller_passed_is_changed(make):
    x = X2.copy()
    x[[5, 60, 61], 0] = np.nan  # gaps, which many estimators fill internally
    frame = pd.DataFrame(x, columns=["a", "b"])
    before_x, before_frame = x.copy(), frame.copy()
    est = _fit(ESTIMATORS[make](), x)
    _use(est, x)
    _use(est, frame)
    np.testing.assert_array_equal(x, before_x)
    pd.testing.assert_frame_equal(frame, before_frame)


@pytest.mark.parametrize("make", sorted(ESTIMATORS))
def test_missing_samples_give_a_finite_output_of_the_input_shape(make):
    x = X.copy()
    x[[100, 101, 102, 250]] = np.nan
    est = _fit(ESTIMATORS[make](), x)
    out = _use(est, x)
    assert np.shape(out) == x.shape
    # forecasts are NaN only where the history is too short, at the start
    assert np.isfinite(out[60:]).all()


@pytest.mark.parametrize("make", [m for m in sorted(ESTIMATORS) if m.endswith("Forecaster")])
@pytest.mark.parametrize("steps", [0, -3, 1.5, "2", None])
def test_predict_refuses_steps_that_are_not_a_positive_integer(make, steps):
    est = _fit(ESTIMATORS[make](), X)
    with pytest.raises((ValueError, TypeError), match="steps"):
        est.predict(steps)


@pytest.mark.parametrize("make", sorted(ESTIMATORS))
def test_using_an_unfitted_trainable_estimator_says_fit_first(make):
    est = ESTIMATORS[make]()
    if not getattr(est, "trainable", True):
        pytest.skip("a design-only filter needs no fit")
    with pytest.raises(ValueError, match="fit"):
        _use(est, X)


def _fit_with(cls, name, **settings):
    """``value -> cls(name=value, **settings)`` fitted on ``X``."""
    return lambda value: _fit(cls(**(settings | {name: value})), X)


def _build(path, name, *args, **settings):
    """``value -> path's class(*args, name=value, **settings)``: the torch tier checks its
    settings when it is built (imported here: torch and Lightning load only for these)."""

    def build(value):
        module, _, cls = path.rpartition(".")
        return getattr(__import__(module, fromlist=[cls]), cls)(*args, **(settings | {name: value}))

    return build


_LEARNED = {"max_epochs": 1, "enable_progress_bar": False}
#: every on/off setting: each was read by truthiness ("False" switched it on, ETS's
#: trend="mul" gave an additive trend)
SWITCHES = {
    "IdentityFilter.causal": _fit_with(B.IdentityFilter, "causal"),
    "MovingAverageFilter.causal": _fit_with(B.MovingAverageFilter, "causal"),
    "MedianFilter.causal": _fit_with(B.MedianFilter, "causal"),
    "WienerFIRFilter.causal": _fit_with(B.WienerFIRFilter, "causal", window=4),
    "ButterworthFilter.zero_phase": _fit_with(B.ButterworthFilter, "zero_phase"),
    "SavitzkyGolayFilter.zero_phase": _fit_with(B.SavitzkyGolayFilter, "zero_phase"),
    "KalmanSmoother.smoother": _fit_with(B.KalmanSmoother, "smoother"),
    "ETSForecaster.trend": _fit_with(B.ETSForecaster, "trend"),
    "ETSForecaster.damped_trend": _fit_with(B.ETSForecaster, "damped_trend", trend=True),
    "DLinearForecaster.individual": _fit_with(
        B.DLinearForecaster, "individual", lookback=16, horizon=2
    ),
    "ResidualProjectionFilter.causal": _fit_with(F.ResidualProjectionFilter, "causal", window=4),
    "ResidualProjectionForecaster.channel_independent": _fit_with(
        F.ResidualProjectionForecaster, "channel_independent", base_params={"lags": 2}
    ),
    **{
        f"LearnedProjectionForecaster.{name}": _fit_with(
            F.LearnedProjectionForecaster, name, lookback=16, horizon=2, **_LEARNED
        )
        for name in ("channel_independent", "attention", "enable_progress_bar")
    },
    "LearnedProjectionFilter.enable_progress_bar": _fit_with(
        F.LearnedProjectionFilter, "enable_progress_bar", max_epochs=1
    ),
    **{
        f"ProjectionMultiheadAttention.{name}": _build(
            "tssdpa.nn.ProjectionMultiheadAttention", name, 8, 2
        )
        for name in (
            "bias",
            "add_bias_kv",
            "add_zero_attn",
            "batch_first",
            "learn_sigma",
            "learn_decay",
            "normalize_qk",
        )  # fmt: skip
    },
    "EncoderBlock.norm_first": _build("tssdpa.nn.EncoderBlock", "norm_first", 8, 2),
    "DecoderBlock.norm_first": _build("tssdpa.nn.DecoderBlock", "norm_first", 8, 2),
    "DenoisingNet.learn_decay": _build("tssdpa.models.DenoisingNet", "learn_decay", 1),
    **{
        f"ForecastingNet.{name}": _build("tssdpa.models.ForecastingNet", name, 16, 2, 1)
        for name in ("channel_independent", "attention", "learn_decay")
    },
    **{
        f"TranslationTransformer.{name}": _build("tssdpa.translation.TranslationTransformer", name)
        for name in ("padding_mask", "full_precision_attention", "keras_init")
    },
    "TranslationDataModule.pin_memory": _build(
        "tssdpa.translation.TranslationDataModule", "pin_memory"
    ),
    **{
        f"TranslationSystem.{name}": _build("tssdpa.translation.TranslationSystem", name, None)
        for name in ("loss_counts_padding", "bleu", "compile")
    },
}


@pytest.mark.parametrize("bad", ["False", "mul", None, 2])
@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_an_on_off_setting_refuses_anything_but_true_or_false_naming_it(switch, bad):
    name = switch.rpartition(".")[2]
    with pytest.raises(ValueError, match=rf"{name} must be one of \(True, False\), got"):
        SWITCHES[switch](bad)


def test_a_half_precision_tensor_whose_output_overflows_its_dtype_is_refused_not_inf():
    # the output comes back in the tensor's dtype: forecasts of a float16 ramp near 65504
    # came back as inf without a word
    torch = pytest.importorskip("torch")
    y = torch.tensor(np.arange(100.0) * 650, dtype=torch.float16)  # up to 64350
    fc = B.AutoRegForecaster(lags=2).fit(y)
    for use in (
        lambda: fc.forecast(y, 3),
        lambda: fc.forecast_path(y, 3),
        lambda: fc.predict(5, y),
    ):
        with pytest.raises(ValueError, match=r"reaches 6\.\d+e\+04, beyond torch\.float16's"):
            use()
    assert torch.isfinite(fc.forecast(y.float(), 3)[-1])  # as float32: the same forecasts


def test_a_series_constant_but_for_one_sample_fits_a_forecaster_without_a_runtime_warning():
    # a perfect best score (0) at an anchor: the regret of every other candidate over it is
    # inf as meant, but the float32 division overflowed with a RuntimeWarning to the user
    import warnings

    y = np.r_[np.full(15, 3.0), 4.0, np.full(14, 3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fc = F.ProjectionForecaster(horizon=1).fit(y)
    assert np.isfinite(fc.forecast(y, 1)[-1])


def test_a_searched_setting_changed_after_fit_takes_effect_at_the_next_fit():
    # documented (docs/architecture.md): the fitted settings are used until a refit; a
    # structural parameter (the forecaster's horizon) is refused instead
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(600) / 10.0) + 0.1 * rng.normal(size=600)
    f = F.ProjectionFilter(window=[8, 16], embedding=[1, 3]).fit(x)  # searched, quickly
    before = f.filter(x)
    window = f.window_
    f.set_params(window=4)
    np.testing.assert_array_equal(f.filter(x), before)
    assert f.window_ == window
    assert f.fit(x).window_ == 4
    fc = F.ProjectionForecaster(horizon=2, embedding=[2, 5]).fit(x)  # searched, quickly
    path = fc.forecast_path(x)
    fc.set_params(embedding=3)
    np.testing.assert_array_equal(fc.forecast_path(x), path)
    assert fc.fit(x).best_params_[1]["embedding"] == 3
    fc.set_params(horizon=1)
    with pytest.raises(ValueError, match=r"horizon=1 \(fitted with 2\) changed after fit"):
        fc.forecast(x, 1)
