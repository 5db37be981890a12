"""What fit tells its user about their data (tssdpa.estimators.input_notes): notes that name
the channel and what to do, warned at the user's call and printed by the CLI."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.cli import main
from tssdpa.estimators.input_notes import PartialRowsWarning, partial_rows
from tssdpa.filters import ProjectionFilter


def _late_channel(n=2000, late=900, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    clean = np.column_stack([np.sin(2 * np.pi * t / 100), np.cos(2 * np.pi * t / 70)])
    x = clean + 0.2 * rng.normal(size=clean.shape)
    x[:late, 1] = np.nan  # a sensor that starts late
    return clean, x


def test_partial_rows_counts_a_channels_missing_samples_where_others_are_known():
    x = np.ones((12, 3))
    x[2:5, 0] = np.nan
    x[8, 0] = np.nan
    x[6, :] = np.nan  # nothing known: not partial
    x[9:11, 2] = np.nan
    assert partial_rows(x) == {0: (4, 3, 2), 2: (2, 2, 9)}
    assert partial_rows(np.ones((5, 2))) == {}


def test_a_channel_missing_longer_than_the_window_is_named_with_what_the_filter_does_there():
    clean, x = _late_channel()
    with pytest.warns(PartialRowsWarning, match=r"x channel 1 is missing at 900 samples") as rec:
        f = ProjectionFilter(window=[16, 32]).fit(x)
    assert rec[0].filename == __file__  # at the user's call
    assert f"reach ({f.window_} samples)" in str(rec[0].message)  # causal: the window
    # what it warns of: channel 0 is held there, not filtered (worse than the recording)
    y = f.filter(x)
    err = np.sqrt(np.mean((y[:900, 0] - clean[:900, 0]) ** 2))
    assert err > np.sqrt(np.mean((x[:900, 0] - clean[:900, 0]) ** 2))


def test_short_gaps_and_the_nonlocal_filter_get_no_note():
    clean, x = _late_channel(late=10)
    x[500:505, 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error", PartialRowsWarning)
        ProjectionFilter(window=[16, 32]).fit(x)  # gaps shorter than the window: imputed
        _, late = _late_channel()
        f = ProjectionFilter(causal=False, window="all", embedding=7, sigma=[1.0]).fit(late)
    y = f.filter(late)  # keys are patterns from anywhere: channel 0 is filtered there
    assert np.sqrt(np.mean((y[:900, 0] - clean[:900, 0]) ** 2)) < 0.2


def test_the_cli_prints_the_note_with_the_columns_name(tmp_path, capsys):
    _, x = _late_channel()
    p = tmp_path / "late.csv"
    pd.DataFrame({"gyro": x[:, 0], "mag": x[:, 1]}).to_csv(p, index=False)
    args = ["filter", str(p), "--method", "projection", "--out", str(tmp_path / "o.csv")]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "note: 'mag' is missing at 900 samples where other channels are known" in err


@pytest.mark.parametrize("causal, longest_quiet", [(True, 15), (False, 30)])
def test_the_note_starts_where_a_row_has_no_complete_sample_within_its_window(
    causal, longest_quiet
):
    # window 16: a causal row sees itself and 15 before; a zero-phase one 15 either side
    _, x = _late_channel(late=0)
    quiet, noted = x.copy(), x.copy()
    quiet[400 : 400 + longest_quiet, 1] = np.nan
    noted[400 : 400 + longest_quiet + 1, 1] = np.nan
    fit = dict(causal=causal, window=16, embedding=1, degree=0, sigma=[1.0], base=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PartialRowsWarning)
        f = ProjectionFilter(**fit).fit(quiet)
    assert np.isfinite(f.filter(quiet)).all()
    with pytest.warns(PartialRowsWarning, match=f"{longest_quiet + 1} in a row from sample 400"):
        ProjectionFilter(**fit).fit(noted)
