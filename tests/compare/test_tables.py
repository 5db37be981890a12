"""Tables: published numbers, and the headline's winner (ties up to rounding)."""

import numpy as np
import pandas as pd
import pytest

from tssdpa.compare.tables import _duel, published_results


def test_published_numbers_file():
    pub = published_results()
    row = pub[(pub["model"] == "DLinear") & (pub["dataset"] == "ETTh1") & (pub["horizon"] == 96)]
    assert float(row["mse"].iloc[0]) == 0.375
    assert set(pub["horizon"]) == {96, 192, 336, 720}
    assert pub["source"].str.len().min() > 5


def test_headline_calls_scores_equal_up_to_rounding_a_tie():
    fam = {"dlinear": "linear", "projection_residual": "projection"}
    same = pd.Series({"dlinear": 0.3327, "projection_residual": 0.3327 * (1 - 1e-12)})
    assert _duel("d", "forecast", "MSE", same, fam, higher=False)["winner"] == "tie"
    better = pd.Series({"dlinear": 0.3327, "projection_residual": 0.3300})
    assert _duel("d", "forecast", "MSE", better, fam, higher=False)["winner"] == "tssdpa"
    worse = pd.Series({"dlinear": 2.0, "projection_residual": 1.9})
    assert _duel("d", "denoise", "dB", worse, fam, higher=True)["winner"] == "classical"


def test_headline_calls_a_difference_inside_the_spread_over_seeds_a_tie():
    fam = {"autoreg": "classical", "projection": "projection"}
    s = pd.Series({"autoreg": 1.00, "projection": 0.95})

    def seeds(ours, theirs):
        idx = pd.MultiIndex.from_tuples(
            [("projection", k) for k in range(len(ours))]
            + [("autoreg", k) for k in range(len(theirs))]
        )
        return pd.Series([*ours, *theirs], index=idx)

    noisy = seeds([0.5, 1.4], [1.0, 1.0])  # paired differences -0.5, +0.4: noise
    assert _duel("d", "f", "MSE", s, fam, higher=False, seeds=noisy)["winner"] == "tie"
    steady = seeds([0.94, 0.95, 0.96], [0.99, 1.00, 1.01])  # -0.05 each time
    assert _duel("d", "f", "MSE", s, fam, higher=False, seeds=steady)["winner"] == "tssdpa"
    one = seeds([0.95], [1.00])
    assert _duel("d", "f", "MSE", s, fam, higher=False, seeds=one)["winner"] == "tssdpa (1 run)"


def _forecast_rows(scores: dict, dataset: str = "ar2") -> pd.DataFrame:
    """Result rows of one forecasting cell: method -> {seed: mse} (family from the name)."""
    rows = []
    for method, by_seed in scores.items():
        for seed, mse in by_seed.items():
            rows.append(dict(task="forecast", dataset=dataset, setting="univariate", horizon=10,
                             method=method, seed=seed, mse=mse, mae=mse,
                             family="learned" if "learned" in method else "projection"
                             if method == "projection" else "linear", note="", params="",
                             metric="step", fit_s=0.1, apply_s=0.1, error=""))  # fmt: skip
    return pd.DataFrame(rows)


def test_a_method_run_on_fewer_seeds_is_never_called_best():
    # learned (seed 0 only, 0.98) was named best tssdpa and bold over projection, whose mean
    # (0.94 + 1.03) / 2 = 0.98... lost only for its harder seed 1
    from tssdpa.compare.tables import markdown_tables, overview

    frame = _forecast_rows({
        "autoreg": {0: 0.95, 1: 1.04},
        "projection": {0: 0.94, 1: 1.03},
        "learned_projection": {0: 0.979},
    })  # fmt: skip
    row = overview(frame).iloc[0]
    assert row["best tssdpa"] == "projection"
    table = markdown_tables(frame, "forecast")
    learned = next(line for line in table.splitlines() if line.startswith("| learned_projection"))
    assert "**" not in learned and "1 seed(s)" in learned


def test_two_methods_run_once_are_one_run_however_many_seeds_a_learned_one_ran():
    # a file's forecasters run once; the learned one on seeds 0-2: the single runs were copied
    # onto each seed, their differences had no spread, and a 0.2% gap was called a win
    from tssdpa.compare.tables import overview

    frame = _forecast_rows({
        "autoreg": {0: 0.25337},
        "projection": {0: 0.25389},
        "learned_projection": {0: 0.40, 1: 0.41, 2: 0.39},
    })  # fmt: skip
    frame["runs_once"] = frame["method"] != "learned_projection"
    row = overview(frame).iloc[0]
    assert (row["best classical"], row["best tssdpa"]) == ("autoreg", "projection")
    assert row["winner"] == "classical (1 run)"


def test_a_seed_without_a_score_leaves_the_mean_unknown():
    # the NaN seed was skipped: the other seed's score shown as the method's, in bold
    from tssdpa.compare.tables import aggregate

    frame = _forecast_rows({"autoreg": {0: 0.95, 1: 1.04}, "projection": {0: 0.5, 1: np.nan}})
    agg = aggregate(frame, "forecast").set_index("method")
    assert np.isnan(agg.loc["projection", "mse_mean"]) and agg.loc["projection", "n_seeds"] == 2
    assert agg.loc["autoreg", "mse_mean"] == pytest.approx(0.995)


def test_a_method_run_once_by_design_on_a_seed_independent_series_counts_as_complete():
    # sunspots is the same on every seed: run_tasks runs autoreg / naive once; the tables
    # counted them '1 seed(s)' against learned's 2 and dropped them from the headline
    from tssdpa.compare.tables import markdown_tables, overview

    scores = {"autoreg": {0: 0.352}, "naive": {0: 0.894}, "learned_projection": {0: 0.36, 1: 0.34}}
    frame = _forecast_rows(scores, dataset="sunspots")
    row = overview(frame).iloc[0]
    assert (row["best classical"], row["best tssdpa"]) == ("autoreg", "learned_projection")
    assert row["winner"] == "tie"  # paired on both seeds: -2.2% and +3.4%
    table = markdown_tables(frame, "forecast")
    assert "seed(s)" not in table and "**0.894**" not in table
    assert "**0.350 ± 0.014**" in table


def test_the_headline_says_when_the_two_methods_were_scored_on_other_origins():
    # --max-origins caps the costly methods only: their MSE over 40 origins was set against
    # the others' over 281 without a word
    from tssdpa.compare.tables import overview

    frame = _forecast_rows({"autoreg": {0: 1.0, 1: 1.0}, "projection": {0: 0.5, 1: 0.52}})
    frame["n_origins"] = np.where(frame["method"] == "projection", 40, 281)
    assert overview(frame).iloc[0]["winner"] == "tssdpa (on 281 vs 40 origins)"
    frame["n_origins"] = 281
    assert overview(frame).iloc[0]["winner"] == "tssdpa"


def _denoise_rows(gains: dict) -> pd.DataFrame:
    """Result rows of one denoising table, seed 0: method -> (family, {setting: SNR gain})."""
    return pd.DataFrame(
        dict(task="denoise", dataset="d", setting=st, method=m, seed=0, snr_gain_db=v, rmse=1.0,
             mae=1.0, family=fam, causal=True, fit_s=0.1, apply_s=0.1, params="", error="")
        for m, (fam, by_setting) in gains.items() for st, v in by_setting.items()
    )  # fmt: skip


DB3 = {"gaussian@0dB": 3.0, "gaussian@10dB": 9.0, "gaussian@20dB": 1.0}


def test_the_denoise_headline_compares_two_methods_on_the_settings_both_have():
    # quick runs train learned methods at 10 dB only, where gains are large: its mean over
    # 10 dB (8) was set against the classical filter's over 0 / 10 / 20 dB (13 / 3 = 4.33)
    from tssdpa.compare.tables import overview

    frame = _denoise_rows(
        {
            "butterworth": ("classical", DB3),
            "learned_projection": ("learned", {"gaussian@10dB": 8.0}),
        }
    )
    row = overview(frame).iloc[0]
    assert (row["classical"], row["tssdpa"]) == (9.0, 8.0)
    assert row["winner"].startswith("classical")
    assert row["metric"] == "mean SNR gain dB over gaussian@10dB (what both have)"


def test_the_denoise_headline_prefers_methods_that_scored_every_setting():
    # the projection filter has all three settings: it stands for tssdpa over all of them, a
    # like-for-like mean, however high the learned filter's one 10 dB gain
    from tssdpa.compare.tables import overview

    projection = {"gaussian@0dB": 4.0, "gaussian@10dB": 9.5, "gaussian@20dB": 1.5}
    frame = _denoise_rows({
        "butterworth": ("classical", DB3),
        "projection": ("projection", projection),
        "learned_projection": ("learned", {"gaussian@10dB": 12.0}),
    })  # fmt: skip
    row = overview(frame).iloc[0]
    assert (row["best classical"], row["best tssdpa"]) == ("butterworth", "projection")
    assert (row["classical"], row["tssdpa"]) == (13 / 3, 5.0)
    assert row["metric"] == "mean SNR gain dB" and row["winner"].startswith("tssdpa")


def test_a_method_run_once_on_a_recorded_pair_counts_as_complete():
    # compare denoise --file --target: the recorded pair is the same on every seed, so
    # run_tasks runs savgol / projection once; the tables counted them '1 seed(s)' against
    # learned's 2, dropped them from the bold marks and the headline ('—' for classical)
    from tssdpa.compare.tables import markdown_tables, overview

    seeds = {"savgol": ("classical", {0: 3.0}), "projection": ("projection", {0: 2.0}),
             "learned_projection": ("learned", {0: 2.4, 1: 2.6})}  # fmt: skip
    frame = pd.concat(
        [_denoise_rows({m: (fam, {"recorded": v})}).assign(seed=s)
         for m, (fam, by_seed) in seeds.items() for s, v in by_seed.items()]
    )  # fmt: skip
    row = overview(frame).iloc[0]
    assert (row["best classical"], row["best tssdpa"]) == ("savgol", "learned_projection")
    assert (row["classical"], row["tssdpa"]) == (3.0, 2.5)
    assert row["winner"] == "classical"  # paired on both seeds: 0.6 and 0.4 dB
    table = markdown_tables(frame, "denoise")
    assert "seed(s)" not in table and "**3.00**" in table


def test_the_headline_of_a_run_whose_every_cell_failed_names_no_winner():
    # learned_projection alone on a short series: every row an error row, no score columns;
    # the headline raised "KeyError: 'Column not found: snr_gain_db'"
    from tssdpa.compare.tables import overview

    base = dict(dataset="d", seed=0, method="learned_projection", family="learned",
                error="ValueError: x has 180 samples: too short")  # fmt: skip
    den = pd.DataFrame([dict(base, task="denoise", setting="gaussian@10dB", noise="gaussian",
                             snr_db=10.0, causal=True)])  # fmt: skip
    fc = pd.DataFrame([dict(base, task="forecast", setting="univariate", horizon=1)])
    for frame in (den, fc, pd.concat([den, fc])):
        rows = overview(frame)
        assert len(rows) == (2 if len(frame) == 2 else 1)
        assert set(rows["winner"]) == {"—"} and set(rows["best tssdpa"]) == {"—"}


def test_a_denoise_method_the_harness_ran_once_counts_as_complete_whatever_the_setting():
    # a caller's own fixed noisy copy (seeded_data=False) under a noise setting's name: the
    # harness ran savgol once, and recorded so; the tables went by the setting ('recorded'
    # only) and counted it '1 seed(s)' against learned's 2
    from tssdpa.compare.tables import markdown_tables

    frame = pd.concat([
        _denoise_rows({"savgol": ("classical", {"gaussian@10dB": 3.0})}).assign(runs_once=True),
        *(_denoise_rows({"learned_projection": ("learned", {"gaussian@10dB": v})})
          .assign(seed=s, runs_once=False) for s, v in ((0, 2.4), (1, 2.6))),
    ])  # fmt: skip
    table = markdown_tables(frame, "denoise")
    assert "seed(s)" not in table and "**3.00**" in table
