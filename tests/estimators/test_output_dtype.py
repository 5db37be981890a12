"""The output dtype docs/filters.md §6 states: numpy and pandas input of any real dtype comes
back in float64 (float32 input too: nothing said so, and a float32 user could not tell a
rounding from a policy); a tensor keeps its floating dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tssdpa import ProjectionFilter
from tssdpa.baselines import AutoRegForecaster, MovingAverageFilter

X = np.sin(np.arange(200) / 9) + 0.1 * np.random.default_rng(0).standard_normal(200)


@pytest.mark.parametrize("values", [
    X.astype(np.float32),
    np.round(X * 100).astype(np.int64),
    pd.Series(X.astype(np.float32)),
    pd.Series(pd.array(np.round(X * 100).astype(int), dtype="Int64")),
], ids=["float32", "int64", "float32-series", "nullable-Int64"])  # fmt: skip
def test_numpy_and_pandas_of_any_real_dtype_come_back_in_float64(values):
    for f in (ProjectionFilter(window=8), ProjectionFilter(window=8, dtype="float32"),
              MovingAverageFilter()):  # fmt: skip
        assert np.asarray(f.fit(values).filter(values)).dtype == np.float64
    fc = AutoRegForecaster().fit(values)
    assert np.asarray(fc.forecast(values)).dtype == np.float64
    assert np.asarray(fc.predict(3)).dtype == np.float64


def test_a_tensor_keeps_its_floating_dtype():
    torch = pytest.importorskip("torch")
    x = torch.tensor(X, dtype=torch.float32)
    assert MovingAverageFilter().filter(x).dtype == torch.float32
    assert (
        MovingAverageFilter().filter(torch.tensor(np.round(X * 100).astype(np.int64))).dtype
        == torch.float64
    )
