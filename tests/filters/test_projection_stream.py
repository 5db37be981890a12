"""ProjectionFilter's stream as a control loop drives it: step on pandas rows and other
per-sample inputs, against filter of the same data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tssdpa.filters import ProjectionFilter


def _imu_frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return pd.DataFrame({
        "gyro": np.sin(t / 10) + 0.1 * rng.normal(size=n),
        "enc": 1000 + 100 * np.cos(t / 20) + rng.normal(size=n),
    })  # fmt: skip


def test_a_pandas_row_with_other_labels_than_the_fit_is_refused_by_step():
    """df.iloc[i] is the natural sample of a loop over a DataFrame; its labels name the
    channels. filter refuses swapped or renamed columns (each channel keeps its fitted
    scale by position), and step took the same row by position, silently filtering each
    channel with the other's state and scale."""
    df = _imu_frame()
    f = ProjectionFilter(window=8, embedding=2, degree=0, sigma=[0.5, 1.0]).fit(df)
    state = f.initial_state()
    swapped = df[["enc", "gyro"]]
    with pytest.raises(ValueError, match=r"sample has the columns \['enc', 'gyro'\].*select"):
        f.step(swapped.iloc[0], state)
    with pytest.raises(ValueError, match=r"sample has the columns \['enc', 'gyro'\]"):
        f.step(swapped.iloc[[0]], state)  # a one-row DataFrame
    with pytest.raises(ValueError, match=r"\['gyro', 'x'\].*rename them"):
        f.step(df.rename(columns={"enc": "x"}).iloc[0], state)
    # the fitted order steps as filter does
    ys = []
    for i in range(50):
        y, state = f.step(df.iloc[i], state)
        ys.append(y)
    y_zi, _ = f.filter(df.iloc[:50], zi=f.initial_state())
    np.testing.assert_allclose(np.array(ys), y_zi.to_numpy(), rtol=1e-12, atol=1e-9)
