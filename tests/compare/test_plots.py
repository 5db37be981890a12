"""The plots say what the tables say: labelled axes, only measured points, the best shown."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tssdpa.compare import plots


def _frame():
    rows = []
    for seed in (0, 1):
        for h, (a, b) in {1: (0.1, 0.2), 5: (0.5, 0.3), 10: (0.9, 0.8)}.items():
            for m, v, fam in (("alpha", a, "classical"), ("beta", b, "projection")):
                rows.append(
                    dict(task="forecast", dataset="d", setting="s", horizon=h, seed=seed,
                         method=m, family=fam, mse=v * (1 + 0.1 * seed))
                )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture
def figures(monkeypatch):
    """The figures the plot functions make, kept open instead of written."""
    made = []
    monkeypatch.setattr(plots, "_save", lambda fig, dest: made.append(fig) or dest)
    yield made
    plots._plt().close("all")


def test_error_vs_horizon_shows_the_table_means_at_measured_horizons_only(figures, tmp_path):
    frame = _frame()
    assert plots.plot_error_vs_horizon(tmp_path, frame, "d", "s", tmp_path / "e.png")
    (fig,) = figures
    ax = fig.axes[0]
    assert ax.get_ylabel() and ax.get_xlabel()
    expected = frame.groupby(["method", "horizon"])["mse"].mean()
    series = {}
    for bars in ax.containers:  # one error-bar container per method
        line = bars.lines[0]
        assert line.get_linestyle() in ("None", "none", "")  # no line joins two horizons
        series[bars.get_label().split(" ")[0]] = line.get_ydata()
    assert set(series) == {"alpha", "beta"}
    for m, y in series.items():
        np.testing.assert_allclose(y, expected[m].to_numpy())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "alpha (best at some h)" in legend and "beta (best at some h)" in legend


def test_gapped_forecasts_are_markers_not_lines(figures):
    fig, ax = plots._plt().subplots()
    plots._plot_finite(ax, np.arange(5), [1.0, np.nan, np.nan, 2.0, np.nan])
    (line,) = ax.get_lines()
    assert line.get_linestyle() == "None" and line.get_marker() == "o"
    plots._plot_finite(ax, np.arange(3), [1.0, 2.0, 3.0])
    assert ax.get_lines()[1].get_linestyle() == "-"


def test_forecast_paths_show_the_best_method_of_every_horizon(figures, tmp_path):
    frame = _frame()
    d = tmp_path / "curves"
    d.mkdir()
    np.savez(d / "d__s__truth.npz", history=np.zeros((30, 1)), future=np.ones((10, 1)), origin=29)
    for m in ("alpha", "beta"):
        np.savez(d / f"d__s__{m}__path.npz", path=np.full((10, 1), 0.5))
    assert plots.plot_forecasts(tmp_path, frame, "d", "s", tmp_path / "p.png")
    ax = figures[0].axes[0]
    labels = {line.get_label() for line in ax.get_lines()}
    assert {"alpha", "beta", "history", "truth"} <= labels  # alpha best at h=1, beta at h=5, 10
    assert ax.get_ylabel()


def test_error_vs_horizon_leaves_out_a_mean_the_table_calls_unknown(figures, tmp_path):
    # beta's seed 1 has no score at h=5 and h=10 (a failed run, NaN forecasts): the table
    # shows '—' there, the plot drew seed 0's 0.3 and 0.8 as beta's means and named beta
    # "best at some h" on them
    frame = _frame()
    frame.loc[(frame["method"] == "beta") & (frame["seed"] == 1) & (frame["horizon"] > 1),
              "mse"] = np.nan  # fmt: skip
    assert plots.plot_error_vs_horizon(tmp_path, frame, "d", "s", tmp_path / "e.png")
    ax = figures[0].axes[0]
    series = {b.get_label().split(" ")[0]: b.lines[0].get_ydata() for b in ax.containers}
    np.testing.assert_allclose(series["beta"], [0.2 * 1.05])  # h=1 alone
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "beta" in legend and "alpha (best at some h)" in legend


def test_the_traces_drawn_are_the_best_by_the_tables_means():
    # x's seed 1 failed (no score): its seed 0's 20 dB made it 'best', drawn first, where the
    # table shows '—' for it
    rows = [dict(task="denoise", dataset="d", setting="s", seed=seed, method=m, causal=True,
                 family="classical", snr_gain_db=v)
            for m, gains in {"x": (20.0, np.nan), "y": (5.0, 5.0), "z": (3.0, 4.0)}.items()
            for seed, v in enumerate(gains)]  # fmt: skip
    assert plots._best(pd.DataFrame(rows), "denoise", "d", "s", "snr_gain_db", True, True) == [
        "y",
        "z",
    ]


def test_forecast_paths_are_titled_with_the_seed_of_the_saved_truth(figures, tmp_path):
    # the title said seed 0 whatever seed the paths were saved for
    d = tmp_path / "curves"
    d.mkdir()
    truth = dict(history=np.zeros((30, 1)), future=np.ones((10, 1)), origin=29)
    np.savez(d / "d__s__truth.npz", **truth, seed=2)
    np.savez(d / "d__s__alpha__path.npz", path=np.full((10, 1), 0.5))
    assert plots.plot_forecasts(tmp_path, _frame(), "d", "s", tmp_path / "p.png")
    assert figures[0].axes[0].get_title().endswith("(seed 2)")
    np.savez(d / "d__s__truth.npz", **truth)  # written before the seed was stored: seed 0
    assert plots.plot_forecasts(tmp_path, _frame(), "d", "s", tmp_path / "p.png")
    assert figures[1].axes[0].get_title().endswith("(seed 0)")


def test_plots_of_a_multichannel_series_name_the_column_drawn_and_its_z_scored_units(
    figures, tmp_path
):
    # the traces of a two-column file drew its first column, the forecast paths its last, and
    # neither said which; the traces' axis said "units of the data" of z-scored values
    from tssdpa.compare import run_tasks
    from tssdpa.data import Split
    from tssdpa.data.tasks import DenoiseTask, ForecastTask

    t = np.arange(300)
    c = np.stack([np.sin(t / 6.0), np.cos(t / 9.0)], axis=1)
    noisy = c + 0.3 * np.random.default_rng(0).standard_normal(c.shape)
    tasks = [DenoiseTask("mine", c, noisy, Split(180, 240, 300), "gaussian", 10.0, 0,
                         columns=("a", "b")),
             ForecastTask("mine", c, Split(180, 240, 300, context=8), (1, 2), 8, 0,
                          setting="multivariate", columns=("a", "b"))]  # fmt: skip
    res = run_tasks(tasks, methods=["moving_average", "naive"], out=tmp_path, progress=False)
    assert plots.plot_traces(tmp_path, res.frame, "mine", "gaussian@10dB", tmp_path / "t.png")
    assert plots.plot_forecasts(tmp_path, res.frame, "mine", "multivariate", tmp_path / "p.png")
    traces, paths = (fig.axes for fig in figures)
    for ax in traces:
        assert "column a" in ax.get_title()
        assert "z-scored" in ax.get_ylabel()
    assert "column b" in paths[0].get_title()
    assert "z-scored" in paths[0].get_ylabel()


def test_a_cell_run_again_on_another_series_saves_that_series_truth_for_its_plot(tmp_path):
    # rows of an edited file refused, the user removed them as told and ran again: the traces
    # and forecast paths were of the new series, the truth (kept: it existed) of the old one,
    # and the plots drew the filters against a signal they never saw
    from tssdpa.compare import run_tasks
    from tssdpa.data import Split
    from tssdpa.data.tasks import DenoiseTask, ForecastTask

    def tasks(scale):
        c = scale * np.sin(np.arange(300) / 6.0)[:, None]
        noisy = c + 0.3 * np.random.default_rng(0).standard_normal(c.shape)
        return [DenoiseTask("mine", c, noisy, Split(180, 240, 300), "gaussian", 10.0, 0),
                ForecastTask("mine", c, Split(180, 240, 300, context=8), (1, 2), 8, 0)]  # fmt: skip

    run_tasks(tasks(1.0), methods=["moving_average", "naive"], out=tmp_path, progress=False)
    (tmp_path / "results.csv").unlink()  # the rows removed
    new = tasks(2.0)
    run_tasks(new, methods=["moving_average", "naive"], out=tmp_path, progress=False)
    with np.load(tmp_path / "traces" / "mine__gaussian@10dB__truth.npz") as t:
        np.testing.assert_array_equal(t["clean"], new[0].clean[240:300])
    with np.load(tmp_path / "curves" / "mine__univariate__truth.npz") as t:
        np.testing.assert_array_equal(t["future"], new[1].y[int(t["origin"]) + 1 :][:2])


def test_a_saved_truth_a_stopped_run_cut_short_is_written_again(tmp_path):
    from tssdpa.compare import run_tasks
    from tssdpa.data import Split
    from tssdpa.data.tasks import DenoiseTask

    c = np.sin(np.arange(300) / 6.0)[:, None]
    noisy = c + 0.3 * np.random.default_rng(0).standard_normal(c.shape)
    task = DenoiseTask("mine", c, noisy, Split(180, 240, 300), "gaussian", 10.0, 0)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "mine__gaussian@10dB__truth.npz").write_bytes(b"PK\x03\x04cut")
    res = run_tasks([task], methods=["moving_average"], out=tmp_path, progress=False)
    assert (res.frame["error"] == "").all()
    with np.load(tmp_path / "traces" / "mine__gaussian@10dB__truth.npz") as t:
        np.testing.assert_array_equal(t["clean"], c[240:300])
