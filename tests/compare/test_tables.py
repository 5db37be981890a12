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
