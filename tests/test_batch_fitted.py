"""filter_files(fitted=...) with a filter fitted (or loaded) from Python: it is applied to the
columns it was fitted on, by name, as ``tssdpa filter --model`` applies it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tssdpa.batch import filter_files, read_table
from tssdpa.filters import ProjectionFilter


@pytest.fixture(scope="module")
def fitted_on_frame(tmp_path_factory):
    """A filter fitted on the columns gyro, acc of a DataFrame (their scales differ 10-fold),
    saved and loaded back, and the frame it was fitted on."""
    rng = np.random.default_rng(0)
    t = np.arange(300) * 0.05
    df = pd.DataFrame({"gyro": np.sin(t) + 0.2 * rng.normal(size=300),
                       "acc": 10 * np.cos(2 * t) + 2 * rng.normal(size=300)})  # fmt: skip
    f = ProjectionFilter(window=[16], embedding=[1], degree=[0]).fit(df)
    folder = tmp_path_factory.mktemp("model") / "m"
    f.save(folder)
    return ProjectionFilter.load(folder), df


def test_a_fitted_filter_is_applied_to_its_columns_by_name(fitted_on_frame, tmp_path):
    est, df = fitted_on_frame
    logs = tmp_path / "logs"
    logs.mkdir()
    time = np.arange(len(df)) * 0.05
    # by position, each channel was filtered with the other's scale: gyro off by 0.41
    df[["acc", "gyro"]].assign(time=time).to_csv(logs / "swapped.csv", index=False)
    df.assign(time=time, other=1.0).to_csv(logs / "wider.csv", index=False)  # was refused
    summary = filter_files(str(logs / "*.csv"), tmp_path, fitted=est, progress=False)
    assert summary["status"].tolist() == ["ok", "ok"], summary["error"].tolist()
    want = est.filter(df[["gyro", "acc"]].to_numpy())
    for name in ("swapped.csv", "wider.csv"):
        got = read_table(tmp_path / name)
        np.testing.assert_allclose(got[["gyro_filtered", "acc_filtered"]], want, rtol=1e-12)
        assert "other_filtered" not in got.columns
    # columns= naming them in another order still goes by name
    summary = filter_files(str(logs / "*.csv"), tmp_path, fitted=est, progress=False,
                           columns=["acc", "gyro"])  # fmt: skip
    got = read_table(tmp_path / "swapped.csv")
    np.testing.assert_allclose(got[["gyro_filtered", "acc_filtered"]], want, rtol=1e-12)


def test_columns_other_than_the_fitted_ones_are_refused(fitted_on_frame, tmp_path):
    est, _ = fitted_on_frame
    (tmp_path / "out").mkdir()
    with pytest.raises(ValueError, match=r"columns.*fitted on the columns \['gyro', 'acc'\]"):
        filter_files(str(tmp_path / "log.csv"), tmp_path / "out", fitted=est,
                     columns=["gyro", "other"], progress=False)  # fmt: skip


@pytest.mark.parametrize(
    "given, applied",
    [(None, ["gyro", "acc"]), (["acc", "gyro"], ["gyro", "acc"]), (["gyro", "other"], None),
     (["gyro"], None), ("gyro", None), (["gyro", "acc", "x"], None)],
)  # fmt: skip
def test_filter_files_and_the_command_apply_a_fitted_filter_to_the_same_columns(
    fitted_on_frame, given, applied
):
    """One rule (batch.fitted_columns) for filter_files(fitted=...) and ``tssdpa filter
    --model``: each had its own copy, its message naming its own argument."""
    from tssdpa.batch import fitted_columns
    from tssdpa.cli.errors import UsageError
    from tssdpa.cli.saved_model import Saved, applied_columns

    est, _ = fitted_on_frame
    saved = Saved(est, "denoise", "projection", list(est.feature_names_in_), None, "m")
    if applied is not None:
        assert fitted_columns(est, given) == applied == applied_columns(saved, given)
        return
    fitted = r" was fitted on the columns \['gyro', 'acc'\]; give those \(or leave out "
    with pytest.raises(ValueError, match=rf"^columns \[.*\]: the fitted filter{fitted}columns"):
        fitted_columns(est, given)
    with pytest.raises(UsageError, match=rf"^--columns \[.*\]: --model m{fitted}--columns\)$"):
        applied_columns(saved, [given] if isinstance(given, str) else given)
