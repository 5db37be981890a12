"""A DataFrame with a column of true / false values beside its signals (a ``valid`` flag) is
fitted and filtered with a BoolColumnWarning naming the column: it was taken as a 0/1 signal
without a word, while ``tssdpa filter`` skips such columns."""

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster
from tssdpa.baselines import MovingAverageFilter
from tssdpa.estimators.bool_columns import BoolColumnWarning

N = 200
X = np.sin(np.arange(N) * 0.3) + np.random.default_rng(0).normal(0, 0.1, N)
FLAGS = np.arange(N) % 7 < 3
FIXED = dict(window=[8], embedding=[1], degree=[0])


def _said(call, data) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call(data)
    return [str(w.message) for w in seen if w.category is BoolColumnWarning]


def _frame(flags) -> pd.DataFrame:
    return pd.DataFrame({"a": X, "valid": flags})


@pytest.mark.parametrize("flags", [
    FLAGS,
    pd.array(np.where(np.arange(N) == 5, None, FLAGS), dtype="boolean"),  # with a pd.NA
    pd.Series(list(FLAGS), dtype=object),  # Python's True / False kept as objects
])  # fmt: skip
@pytest.mark.parametrize("call", [
    lambda d: ProjectionFilter(**FIXED).fit(d),
    lambda d: ProjectionFilter(**FIXED).fit(d.astype({"valid": float})).filter(d),
    lambda d: MovingAverageFilter().filter(d),  # no fit: filter is its only call
    lambda d: MovingAverageFilter().fit(d),  # Denoiser.fit's reading and its checks
    lambda d: ProjectionForecaster(horizon=1, embedding=2).fit(d),
])  # fmt: skip
def test_a_true_false_column_warns_once_per_call_naming_it_and_how_to_drop_or_convert(call, flags):
    said = _said(call, _frame(flags))
    assert len(said) == 1
    assert "column(s) ['valid'] hold true / false values" in said[0]
    assert ".drop(columns=['valid'])" in said[0] and ".astype({'valid': float})" in said[0]


def test_it_is_filtered_as_a_zero_one_signal_all_the_same():
    df = _frame(FLAGS)
    with pytest.warns(BoolColumnWarning):
        y = MovingAverageFilter().filter(df)
    expected = MovingAverageFilter().filter(df.astype({"valid": float}))
    pd.testing.assert_frame_equal(y, expected)


def test_the_warning_points_at_the_users_call():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ProjectionFilter(**FIXED).fit(_frame(FLAGS))
    assert [w.filename for w in seen if w.category is BoolColumnWarning] == [__file__]


@pytest.mark.parametrize("data", [
    _frame(FLAGS).astype({"valid": float}),  # converted: a 0/1 signal meant
    _frame(FLAGS.astype(int)),
    pd.DataFrame({"valid": FLAGS}),  # a lone column is the signal
    pd.Series(FLAGS),
])  # fmt: skip
def test_numbers_and_a_lone_true_false_column_fit_without_the_warning(data):
    assert _said(MovingAverageFilter().fit, data) == []


def test_warning_of_true_false_columns_leaves_the_calls_input_description_as_it_was():
    # it emptied meta.flags so that a fit's second check kept quiet: a check after it saw no
    # true / false column where there was one
    from tssdpa.estimators.arrays import as_2d
    from tssdpa.estimators.bool_columns import warn_bool_columns

    _, meta = as_2d(_frame(FLAGS), "x")
    for _ in range(2):
        with pytest.warns(BoolColumnWarning, match=r"x column\(s\) \['valid'\]"):
            warn_bool_columns("x", meta)
    assert meta.flags == ("valid",)


def test_a_fit_warns_of_the_true_false_columns_of_x_and_of_its_target_once_each():
    df = _frame(FLAGS)
    said = _said(lambda d: ProjectionFilter(**FIXED).fit(d, target=d), df)
    assert [s.split(" column(s)")[0] for s in said] == ["x", "target"]
