"""The rows whose forecasts score a forecaster's candidates: spread, distinct, never aliased."""

from __future__ import annotations

import numpy as np

from tssdpa.estimators.selection import query_rows


def test_n_distinct_rows_one_per_stratum_the_same_at_every_call():
    for lo, last, n in ((0, 1000, 999), (0, 2399, 1000), (37, 5000, 64)):
        rows = query_rows(lo, last, n)
        assert len(np.unique(rows)) == n and rows.min() >= lo and rows.max() <= last
        np.testing.assert_array_equal(rows, query_rows(lo, last, n))
    np.testing.assert_array_equal(query_rows(5, 10, 100), np.arange(5, 11))


def test_the_rows_cover_every_residue_of_a_period():
    """A regular grid of 1,000 of 2,400 rows falls on 7 residues of 12, none of them the row
    before a weekly spike of hourly data: the spike was never a scored target."""
    assert len(np.unique(query_rows(0, 2399, 1000) % 12)) == 12
