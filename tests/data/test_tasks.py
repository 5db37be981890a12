"""Benchmark tasks and their splits: what the harness and the Lightning datamodules share."""

import warnings

import numpy as np
import pytest

from tssdpa import data as D
from tssdpa.data.tasks import (
    DATASETS,
    DEFAULT_DATASETS,
    TableSeries,
    denoise_tasks,
    estimate_period,
    forecast_tasks,
    season_search_limit,
    zscore,
)


def test_split_validation_and_bounds():
    s = D.Split(6, 8, 10)
    assert s.bounds("val") == (6, 8)
    with pytest.raises(ValueError, match="boundaries"):
        D.Split(5, 5, 10)
    with pytest.raises(ValueError, match="part"):
        s.bounds("dev")
    assert D.Split.fractions(100) == D.Split(60, 80, 100)


def test_ett_split_is_the_dlinear_one():
    s = D.ett_split("ETTh1")
    assert (s.train, s.val, s.test, s.context) == (8640, 11520, 14400, 336)
    m = D.ett_split("ETTm2")
    assert (m.train, m.val, m.test) == (34560, 46080, 57600)


def test_default_datasets_are_known():
    for kind in ("denoise", "forecast"):
        assert set(DEFAULT_DATASETS[kind]) <= set(DATASETS)


def test_zscore_uses_training_statistics_only():
    y = np.concatenate([np.zeros(50), np.ones(50) * 100])[:, None] + np.arange(100)[:, None] % 2
    z, mu, sd = zscore(y, 50)
    np.testing.assert_allclose(z[:50].mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(z[:50].std(0), 1)
    assert mu[0] == pytest.approx(0.5) and z[-1, 0] > 100


def test_estimate_period_finds_a_sinusoid():
    t = np.arange(600)
    assert estimate_period(np.sin(2 * np.pi * t / 25), max_period=64) == 25
    assert estimate_period(np.ones(8), max_period=64) is None  # too short


def test_estimate_period_finds_no_season_in_red_noise_and_the_season_under_it():
    # a random walk's power rises towards the lowest frequency: its highest peak in the band
    # was the band's edge (16 to 62 samples, near the lookback), taken for a season
    walks = [np.cumsum(np.random.default_rng(s).standard_normal(n)) for s in range(5)
             for n in (180, 1800)]  # fmt: skip
    assert [estimate_period(w, max_period=64) for w in walks] == [None] * 10
    # nor searched up to half the series (forecast_tasks' band), one channel or several
    assert [estimate_period(w, max_period=season_search_limit(len(w))) for w in walks] == [
        None
    ] * 10
    pairs = [np.c_[w, w[::-1]] for w in walks]
    assert [estimate_period(p, max_period=season_search_limit(len(p))) for p in pairs] == [
        None
    ] * 10
    t = np.arange(1800)
    for s in range(3):  # a daily season under the same kind of walk is still found
        walk = 0.2 * np.cumsum(np.random.default_rng(s).standard_normal(1800))
        assert estimate_period(np.sin(2 * np.pi * t / 24) + walk, max_period=64) == 24


def _hourly(n: int, seed: int = 0, noise: float = 0.3) -> np.ndarray:
    """A 24-sample season under white noise."""
    t = np.arange(n)
    return np.sin(2 * np.pi * t / 24) + noise * np.random.default_rng(seed).standard_normal(n)


def test_the_period_is_that_of_any_channel_with_a_season_not_of_the_last_channel_alone():
    # the last channel alone was searched: a file whose last channel is noise got no season,
    # though another had a clear daily one
    rng = np.random.default_rng(1)
    y = np.c_[_hourly(1200), rng.standard_normal(1200), rng.standard_normal(1200)]
    assert estimate_period(y, max_period=64) == 24
    assert estimate_period(y[:, ::-1], max_period=64) == 24
    [t] = forecast_tasks(TableSeries("mine", y, ("a", "b", "c"), "sha256:0"), seeds=(0,))
    assert t.period == 24


def test_a_constant_or_empty_channel_adds_no_season_and_no_warning():
    # a constant channel's peak was tested as 0 / 0 (a RuntimeWarning)
    y = np.c_[np.ones(600), np.full(600, np.nan), _hourly(600)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert estimate_period(y, max_period=64) == 24
        assert estimate_period(y[:, :2], max_period=64) is None
    with pytest.raises(ValueError, match=r"^x must be \(T,\) or \(T, C\)"):
        estimate_period(y[:, :, None], max_period=64)


def test_a_300_row_hourly_file_finds_its_24_hour_season_past_a_shorter_lookback():
    # periods were searched up to the lookback only (22 for a 300-row file): the daily
    # season of 24 samples could not be found; the training part (180 rows) holds 7 of it
    y = _hourly(300, noise=0.2)[:, None]
    series = TableSeries("hourly", y, ("load",), "sha256:0")
    for lookback in (None, 16):
        [t] = forecast_tasks(series, seeds=(0,), lookback=lookback)
        assert t.lookback < 24 and t.period == 24


def test_denoise_tasks_are_seeded_and_split():
    tasks = denoise_tasks(
        "ar2", seeds=(0, 1), settings=[("gaussian", 10.0), ("dropout", 10)], n=300
    )
    assert [(t.seed, t.setting) for t in tasks] == [
        (0, "gaussian@10dB"),
        (0, "dropout@10dB"),
        (1, "gaussian@10dB"),
        (1, "dropout@10dB"),
    ]
    a, b = tasks[0], tasks[2]
    assert a.clean.shape == (300, 1) and a.split == D.Split(180, 240, 300)
    assert not np.allclose(a.clean, b.clean)  # a fresh realisation per seed
    np.testing.assert_allclose(a.clean[: a.split.train].mean(0), 0, atol=1e-9)
    assert np.isnan(tasks[1].noisy).any() and not np.isnan(a.noisy).any()
    assert a.ctx == {"n_train": 180, "n_channels": 1, "quick": False}
    again = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=300)[0]
    np.testing.assert_array_equal(again.noisy, a.noisy)


def test_forecast_tasks_protocol():
    [t] = forecast_tasks("ar2", seeds=(0,), n=400)
    assert (t.lookback, t.horizons, t.metric, t.setting) == (
        32,
        (1, 2, 5, 10),
        "step",
        "univariate",
    )
    assert t.split.context == 32 and t.seeded_data
    assert t.ctx["max_horizon"] == 10 and t.ctx["lookback"] == 32
    [s] = forecast_tasks("sunspots", seeds=(3,), horizons=(1, 2), lookback=12)
    assert (s.period, s.lookback, s.horizons, s.seeded_data) == (11, 12, (1, 2), False)
    with pytest.raises(ValueError, match="features"):
        forecast_tasks("ar2", features="X")
    with pytest.raises(ValueError, match="dataset must be one of"):
        forecast_tasks("nope")


@pytest.mark.data("ett/ETTh1.csv.gz")
def test_ett_forecast_protocol_shapes():
    [t] = forecast_tasks("ETTh1", seeds=(0,), features="M")
    assert t.y.shape == (14400, 7) and t.metric == "path" and t.lookback == 336
    np.testing.assert_allclose(t.y[:8640].mean(0), 0, atol=1e-9)
    np.testing.assert_allclose(t.y[:8640].std(0), 1, atol=1e-9)
    [s] = forecast_tasks("ETTh1", seeds=(0,), features="S")
    assert s.y.shape == (14400, 1)


def test_lightning_forecast_windows_follow_the_protocol():
    from tssdpa.data.lightning import ForecastDataModule

    dm = ForecastDataModule("ar2", lookback=16, horizon=4, n=500, batch_size=8)
    dm.setup()
    sp = dm.task.split
    x, y = dm.test_set.tensors
    assert x.shape == (sp.test - sp.val - 4 + 1, 16, 1) and y.shape[1:] == (4, 1)
    # the first test target is the first test row; inputs end just before it
    np.testing.assert_allclose(y[0, 0, 0], dm.task.y[sp.val, 0], rtol=1e-6)
    np.testing.assert_allclose(x[0, -1, 0], dm.task.y[sp.val - 1, 0], rtol=1e-6)
    # no training window reaches into validation
    xt, yt = dm.train_set.tensors
    assert len(xt) == sp.train - 16 - 4 + 1
    assert dm.n_channels == 1


@pytest.mark.parametrize("columns", [["x"], "ar", []])
def test_denoise_columns_that_are_missing_or_empty_are_refused_naming_columns(columns):
    with pytest.raises(ValueError, match="columns") as err:
        denoise_tasks("ar2", seeds=(0,), n=200, columns=columns)
    assert "tuple.index" not in str(err.value)


def test_a_string_for_denoise_columns_is_one_column_name_as_numeric_columns_takes_it():
    # a synthetic series' one column is named after it
    [one] = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=200, columns="ar2")
    [listed] = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=200,
                             columns=["ar2"])  # fmt: skip
    assert one.columns == listed.columns == ("ar2",)
    np.testing.assert_array_equal(one.noisy, listed.noisy)
    with pytest.raises(ValueError, match=r"columns: no column \['ar'\] in ar2"):
        denoise_tasks("ar2", seeds=(0,), n=200, columns="ar")  # the name, not its letters


@pytest.mark.parametrize(
    "kwargs, name",
    [({"lookback": 0}, "lookback"), ({"lookback": -5}, "lookback"), ({"lookback": 2.5}, "lookback"),
     ({"horizons": [0]}, "horizons"), ({"horizons": [-1, 2]}, "horizons"),
     ({"horizons": [2.5]}, "horizons")],
)  # fmt: skip
def test_a_lookback_or_horizon_that_is_no_positive_integer_is_refused_naming_it(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        forecast_tasks("ar2", seeds=(0,), n=400, **kwargs)


@pytest.mark.parametrize(
    "make, name",
    [(lambda: D.Split(1.5, 2.5, 3.5), "train"), (lambda: D.Split(1, 2, 3, context=float("nan")),
     "context"), (lambda: D.Split.fractions(10.7), "n")],
)  # fmt: skip
def test_a_split_boundary_or_length_that_is_no_integer_is_refused_naming_it(make, name):
    with pytest.raises(TypeError, match=name):
        make()


@pytest.mark.parametrize("n_train", [0, -3, 11])
def test_zscore_with_a_training_length_outside_the_series_is_refused_naming_n_train(n_train):
    with pytest.raises(ValueError, match="n_train"):
        zscore(np.arange(10.0)[:, None], n_train)


@pytest.mark.parametrize("lookback", [-1, 2.5])
def test_ett_split_with_a_bad_lookback_says_lookback(lookback):
    with pytest.raises((ValueError, TypeError), match="lookback"):
        D.ett_split("ETTh1", lookback)


@pytest.mark.parametrize("seeds", [0, (0, 0), (1.5,), (-1,)])
@pytest.mark.parametrize("make", [denoise_tasks, forecast_tasks])
def test_seeds_that_are_not_a_list_of_distinct_non_negative_ints_are_refused_naming_seeds(
    make, seeds
):
    with pytest.raises((ValueError, TypeError), match="seeds"):
        make("ar2", seeds=seeds, n=400)


@pytest.mark.parametrize("make", [forecast_tasks, denoise_tasks])
def test_an_array_or_frame_given_as_the_dataset_is_refused_naming_tableseries(make):
    # forecast_tasks(my_array) raised numpy's 'truth value of an array is ambiguous'
    y = np.sin(np.arange(300) / 6.0)[:, None]
    import pandas as pd

    for given in (y, pd.DataFrame(y, columns=["a"])):
        with pytest.raises(TypeError, match=r"^dataset must be .*TableSeries"):
            make(given, seeds=(0,))


def test_a_table_series_of_one_column_as_a_1d_array_or_a_list_is_that_column():
    # a 1-D array was IndexError 'tuple index out of range' to forecast_tasks and a 1-D
    # clean signal to denoise_tasks; a list, AttributeError: 'list' object has no 'shape'
    y = np.sin(np.arange(300) / 6.0)
    for values in (y, y.tolist()):
        series = TableSeries("mine", values, ("a",), "sha256:0")
        [f] = forecast_tasks(series, seeds=(0,))
        [d] = denoise_tasks(series, seeds=(0,), settings=[("gaussian", 10.0)])
        assert f.y.shape == d.clean.shape == d.noisy.shape == (300, 1)


def test_a_table_series_whose_columns_are_not_its_values_is_refused_naming_them():
    with pytest.raises(ValueError, match=r"^columns: 1 name\(s\) for the 2 columns of values"):
        TableSeries("mine", np.zeros((300, 2)), ("a",), "sha256:0")
    with pytest.raises(ValueError, match=r"^values must be"):
        TableSeries("mine", np.zeros((300, 2, 1)), ("a", "b"), "sha256:0")


def test_a_horizon_too_long_is_named_by_the_callers_own_argument_and_pickles():
    # a data module with one `horizon` rewrote the message's "horizons: " by string
    import pickle

    from tssdpa.data.tasks import HorizonTooLong

    with pytest.raises(HorizonTooLong) as err:
        forecast_tasks("lorenz", seeds=(0,), n=400, horizons=(500,))
    assert str(err.value).startswith("horizons: 500 is longer than lorenz's validation")
    assert err.value.said_as("horizon").startswith("horizon 500 is longer than lorenz's")
    back = pickle.loads(pickle.dumps(err.value))
    assert str(back) == str(err.value) and back.horizon == 500
