"""experiments/compare_runs.py: are two comparison runs' results.csv the same, row by row."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "compare_runs.py"


def _script():
    spec = importlib.util.spec_from_file_location("_compare_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _denoise_rows(rmse=0.5) -> pd.DataFrame:
    # what `tssdpa compare denoise` writes: no horizon column
    return pd.DataFrame(
        {"task": ["denoise"] * 2, "dataset": "ab", "setting": ["gaussian@0dB", "gaussian@10dB"],
         "seed": 0, "method": "savgol", "params": '{"window": 5}', "rmse": [rmse, 0.25],
         "fit_s": [0.1, 0.2]}
    )  # fmt: skip


def _forecast_rows(methods=("naive", "autoreg")) -> pd.DataFrame:
    return pd.DataFrame(
        [{"task": "forecast", "dataset": "ab", "setting": "multivariate", "seed": 0,
          "method": m, "horizon": h, "params": "{}", "mse": 0.1 * h}
         for m in methods for h in (1, 2)]
    )  # fmt: skip


def _run(tmp_path, a, b, capsys):
    for name, frame in (("a.csv", a), ("b.csv", b)):
        frame.to_csv(tmp_path / name, index=False)
    code = _script().main([str(tmp_path / "a.csv"), str(tmp_path / "b.csv")])
    return code, capsys.readouterr()


def test_two_denoise_runs_without_a_horizon_column_are_compared(tmp_path, capsys):
    # a denoise-only results.csv has no horizon column: sorting by it was KeyError: 'horizon'
    code, out = _run(tmp_path, _denoise_rows(), _denoise_rows(), capsys)
    assert code == 0
    assert "same: 2 rows" in out.out
    code, out = _run(tmp_path, _denoise_rows(), _denoise_rows(rmse=0.6), capsys)
    assert code == 1
    assert "rmse" in out.out and "gaussian@0dB" in out.out


def test_rows_in_one_run_only_are_named_and_the_shared_rows_still_compared(tmp_path, capsys):
    # it said "different rows: 4 vs 4" (the same count, other methods) and compared nothing
    a = _forecast_rows(("naive", "autoreg"))
    b = _forecast_rows(("naive", "dlinear"))
    b.loc[b["method"] == "naive", "mse"] *= 2
    code, out = _run(tmp_path, a, b, capsys)
    assert code == 1
    assert "only in the first" in out.out and "autoreg" in out.out
    assert "only in the second" in out.out and "dlinear" in out.out
    assert "mse: ['forecast', 'ab', 'multivariate', 0, 'naive', 1]" in out.out


def test_a_file_that_is_missing_or_no_csv_is_one_line_and_exit_code_2(tmp_path, capsys):
    _denoise_rows().to_csv(tmp_path / "a.csv", index=False)
    (tmp_path / "folder").mkdir()
    for other in ("missing.csv", "folder"):
        with pytest.raises(SystemExit) as stop:
            _script().main([str(tmp_path / "a.csv"), str(tmp_path / other)])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert other in err and "Traceback" not in err
