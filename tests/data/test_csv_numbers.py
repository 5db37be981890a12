"""Numbers as a spreadsheet writes them: one rule for the reader of a file and the note on a
column's stray cell."""

import numpy as np
import pandas as pd
import pytest

from tssdpa.data.csv_numbers import as_numbers, grouped_thousands


@pytest.mark.parametrize(
    ("decimal", "cells", "values"),
    [
        (",", ["1.234,5", "1\u00a0013,5", "-12 345 678,25", "980,5", "12"],
         [1234.5, 1013.5, -12345678.25, 980.5, 12.0]),
        (".", ["1,234.5", "-1,000,000.25", "3.5", "12"], [1234.5, -1000000.25, 3.5, 12.0]),
    ],
)  # fmt: skip
def test_a_column_read_by_the_file_reader_and_by_the_stray_cell_note_gives_the_same_numbers(
    decimal, cells, values
):
    # the two read grouped thousands each with its own rule; a stray cell is NaN to the note
    column = pd.DataFrame({"v": cells})
    read = grouped_thousands(column.copy(), decimal)["v"].to_numpy()
    told = as_numbers(pd.Series([*cells, "ERR"]), decimal).to_numpy()
    assert np.allclose(read, values) and np.allclose(told[:-1], values)
    assert np.isnan(told[-1])
