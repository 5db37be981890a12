"""Tables: published numbers, and the headline's winner (ties up to rounding)."""

import pandas as pd

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
