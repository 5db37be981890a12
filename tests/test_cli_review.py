"""Findings of a new user's review of ``tssdpa filter`` / ``compare``: each test is one of them,
failing before its fix."""

import warnings

import numpy as np
import pandas as pd

from tssdpa.cli import main
from tssdpa.cli.said import library_warnings


def _noisy(n=300, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.sin(t / 15) + 0.2 * rng.standard_normal(n), np.cos(
        t / 25
    ) + 0.2 * rng.standard_normal(n)


def test_filter_tells_the_librarys_warning_that_it_returned_the_columns_unchanged(tmp_path, capsys):
    a, b = _noisy()
    p = tmp_path / "ms.csv"
    stamps = 1_700_000_000_000 + 100 * np.arange(len(a))  # epoch milliseconds, read as seconds
    pd.DataFrame({"timestamp": stamps, "a": a, "b": b}).to_csv(p, index=False)
    assert (
        main(["filter", str(p), "--params", '{"tau": 0.3}', "--out", str(tmp_path / "o.csv")]) == 0
    )
    err = capsys.readouterr().err
    told = [line for line in err.splitlines() if "returns x unchanged" in line]
    assert len(told) == 1 and told[0].startswith(
        "projection_zp on ['a', 'b']: note: time column 'timestamp'"
    )
    assert "Warning" not in err and "warnings.warn" not in err  # a note, not Python's warning


def test_library_warnings_keeps_the_librarys_own_and_drops_other_code_and_numpys():
    from tssdpa.estimators import spacing

    with library_warnings() as said:
        warnings.warn(
            "a tip from another package's code", stacklevel=1
        )  # this file is not the library's
        np.log(np.zeros(1))  # numpy's RuntimeWarning
        for _ in range(2):  # code of the package's file: told once
            exec(compile("warnings.warn('the library says so')", spacing.__file__, "exec"),
                 {"warnings": warnings})  # fmt: skip
        exec(compile("warnings.warn('old', DeprecationWarning)", spacing.__file__, "exec"),
             {"warnings": warnings})  # fmt: skip
    assert said == ["the library says so"]

