"""tssdpa.checks: every argument check names the argument and normalises the value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from tssdpa.checks import (
    ISO_CELL,
    ISO_START,
    NUMBERED_DATE,
    TEXT_DATE,
    check_choice,
    check_decay,
    check_fraction,
    check_int,
    check_number,
    check_positive,
    check_tau,
)


def test_check_int_accepts_python_and_numpy_integers_only():
    assert check_int(3, "n") == 3 and check_int(np.int64(4), "n") == 4
    assert isinstance(check_int(np.int64(4), "n"), int)
    for bad in (2.0, 2.5, True, "3", None):
        with pytest.raises(TypeError, match="n must be an int"):
            check_int(bad, "n")
    with pytest.raises(ValueError, match="window must be an integer >= 2"):
        check_int(1, "window", minimum=2)


def test_check_number_accepts_scalars_and_zero_dimensional_arrays():
    for good in (1, 1.5, np.float32(1.5), np.array(1.5), torch.tensor(1.5)):
        assert isinstance(check_number(good, "sigma"), float)
    for bad in ("1", True, np.array([1.0]), 1 + 2j, torch.tensor(True), None):
        with pytest.raises(TypeError, match="sigma must be a number"):
            check_number(bad, "sigma")


@pytest.mark.parametrize(
    "check, good, bad",
    [
        (lambda v: check_positive(v, "sigma"), [1e-9, 3.0], [0.0, -1.0, np.inf, np.nan]),
        (lambda v: check_positive(v, "ridge", allow_zero=True), [0.0, 2.0], [-1e-9, np.nan]),
        (lambda v: check_fraction(v, "holdout"), [0.5], [0.0, 1.0, 1.5]),
        (lambda v: check_fraction(v, "holdout", closed_right=True), [1.0], [0.0, 1.01]),
        (check_decay, [0.5, 1.0], [0.0, 1.5, -0.1]),
        (check_tau, [1e-3, 1e6], [0.0, -2.0, np.inf]),
    ],
)
def test_range_checks_accept_the_range_and_name_the_argument(check, good, bad):
    for v in good:
        assert check(v) == float(v)
    for v in bad:
        with pytest.raises(ValueError, match="sigma|ridge|holdout|decay|tau"):
            check(v)


def test_check_choice_lists_the_choices():
    assert check_choice("a", "mode", ("a", "b")) == "a"
    with pytest.raises(ValueError, match=r"mode must be one of \('a', 'b'\)"):
        check_choice("c", "mode", ("a", "b"))


@pytest.mark.parametrize(
    "text, iso_start, iso_cell, numbered, text_date",
    [
        ("2016-07-01", True, True, False, True),
        ("2016-07-01T00:00:00", True, True, False, True),
        ("2016-07-01 13", True, False, False, True),  # no minutes: no time column's cell
        ("2016-07-01_run", True, False, False, True),  # sorts as its date does
        ("2016-7-1", False, False, False, True),  # unpadded: read, but does not sort
        (" 01/07/2016 00:00", False, False, True, True),
        ("1.7.16", False, False, True, True),
        ("1/7.16", False, False, False, False),  # two separators
        ("01/07/2016", False, False, True, True),
        ("20160701", False, False, False, False),
    ],
)
def test_the_four_patterns_of_dates_as_text_keep_their_own_meanings(
    text, iso_start, iso_cell, numbered, text_date
):
    # one home for the tiers that read dates as text (tables, text_dates, index_notes); each
    # pattern accepts what its one user did before they moved here
    got = [bool(p.match(text)) for p in (ISO_START, ISO_CELL, NUMBERED_DATE, TEXT_DATE)]
    assert got == [iso_start, iso_cell, numbered, text_date]


def test_check_choice_refuses_an_array_naming_the_argument():
    # numpy's "truth value of an array ... is ambiguous" named nothing: causal=mask.values,
    # or ProjectionForecaster().fit(train, test) with test taken for verbose
    with pytest.raises(ValueError, match=r"causal must be one of \(True, False\), got array"):
        check_choice(np.array([True, False]), "causal", (True, False))
    with pytest.raises(ValueError, match="normalize must be one of"):
        check_choice(pd.Series(["last", "none"]), "normalize", ("none", "last"))


@pytest.mark.parametrize(
    "value",
    [
        np.array(True),
        np.array([True]),
        np.array([True, False]),
        pd.Series([True]),
        pd.Series(True, index=[0, 1]),
        torch.tensor([True]),
    ],  # fmt: skip
    ids=["0-d", "1-element", "2-element", "Series", "2-row Series", "tensor"],
)
def test_check_choice_refuses_any_array_series_or_tensor_whatever_its_values(value):
    # `np.array([True]) in (True, False)` is True: a one-element or 0-d array passed, then
    # ProjectionFilter(causal=...) failed with "unhashable type" and ETSForecaster(trend=...)
    # or ProjectionForecaster().fit(y, np.array([1.0])) (verbose) ran with it without a word
    with pytest.raises(ValueError, match=r"causal must be one of \(True, False\), got"):
        check_choice(value, "causal", (True, False))


def test_check_choice_takes_a_numpy_scalar_for_its_value():
    assert check_choice(np.True_, "causal", (True, False)) is np.True_
    assert check_choice(np.str_("last"), "normalize", ("none", "last")) == "last"


def test_estimators_name_the_argument_given_a_one_element_array_for_a_choice():
    from tssdpa import ProjectionFilter, ProjectionForecaster

    x = np.sin(np.arange(120) / 7.0)
    with pytest.raises(ValueError, match="causal must be one of"):
        ProjectionFilter(causal=np.array([True])).fit(x)
    with pytest.raises(ValueError, match="verbose must be one of"):
        ProjectionForecaster().fit(x, np.array([1.0]))
