"""The ``tssdpa`` command: filter round trip on a temporary CSV, compare, methods."""

import numpy as np
import pandas as pd
import pytest

from tssdpa.cli import main


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    t = np.arange(500)
    df = pd.DataFrame(
        {
            "time": t * 0.01,
            "a": np.sin(t / 20) + 0.3 * rng.standard_normal(500),
            "b": np.cos(t / 30),
            "label": ["x"] * 500,
        }
    )
    p = tmp_path / "in.csv"
    df.to_csv(p, index=False)
    return p, df


def test_filter_round_trip(csv, tmp_path):
    p, df = csv
    out = tmp_path / "out.csv"
    assert (
        main(
            [
                "filter",
                str(p),
                "--columns",
                "a",
                "--method",
                "butterworth_zp",
                "--params",
                '{"cutoff": 0.1}',
                "--out",
                str(out),
            ]
        )
        == 0
    )
    res = pd.read_csv(out)
    assert list(res.columns) == list(df.columns) and len(res) == 500
    np.testing.assert_array_equal(res["b"], df["b"])
    clean = np.sin(np.arange(500) / 20)
    assert np.mean((res["a"] - clean) ** 2) < np.mean((df["a"] - clean) ** 2)


def test_filter_forecast_mode(csv, tmp_path):
    p, _ = csv
    out = tmp_path / "fc.csv"
    assert (
        main(
            [
                "filter",
                str(p),
                "--columns",
                "a",
                "b",
                "--method",
                "autoreg",
                "--horizon",
                "2",
                "--fit-fraction",
                "0.5",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    res = pd.read_csv(out)
    assert {"a_forecast_h2", "b_forecast_h2"} <= set(res.columns)
    assert res["b_forecast_h2"].notna().sum() > 400


def test_filter_errors(csv):
    p, _ = csv
    with pytest.raises(SystemExit, match="method must be one of"):
        main(["filter", str(p), "--method", "nope"])
    with pytest.raises(SystemExit, match="--columns"):
        main(["filter", str(p), "--columns", "zzz"])
    with pytest.raises(SystemExit, match="--params"):
        main(["filter", str(p), "--params", "{bad"])


def test_compare_command_is_resumable(tmp_path, capsys):
    args = [
        "compare",
        "denoise",
        "--dataset",
        "ar2",
        "--methods",
        "noisy",
        "butterworth",
        "median_zp",
        "--seeds",
        "0",
        "--n",
        "300",
        "--out",
        str(tmp_path),
        "--no-progress",
        "--no-plots",
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "Headline" in text and "butterworth" in text
    n = len(pd.read_csv(tmp_path / "results.csv"))
    assert n == 6 * 3  # six default noise settings x three methods
    assert (tmp_path / "tables" / "denoise_ar2.md").exists()
    assert main(args) == 0
    assert len(pd.read_csv(tmp_path / "results.csv")) == n


def test_methods_lists_both_tasks(capsys):
    assert main(["methods"]) == 0
    text = capsys.readouterr().out
    assert "denoise:" in text and "forecast:" in text and "kalman_level" in text


def test_compare_rejects_unknown_dataset(tmp_path):
    with pytest.raises(SystemExit, match="dataset must be one of"):
        main(["compare", "denoise", "--dataset", "nope", "--out", str(tmp_path)])


def test_filter_defaults_to_the_fitted_projection_filter_and_reports_its_choice(
    csv, tmp_path, capsys
):
    p, df = csv
    out = tmp_path / "out.csv"
    assert main(["filter", str(p), "--columns", "a", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "projection_zp on ['a']: chose window=" in err and "degree=" in err
    clean = np.sin(np.arange(500) / 20)
    res = pd.read_csv(out)
    assert np.mean((res["a"] - clean) ** 2) < 0.5 * np.mean((df["a"] - clean) ** 2)


def test_filter_target_fits_against_a_clean_column(csv, tmp_path, capsys):
    p, df = csv
    df = df.assign(clean=np.sin(np.arange(500) / 20))
    df.to_csv(p, index=False)
    out = tmp_path / "out.csv"
    args = ["filter", str(p), "--columns", "a", "--target", "clean", "--out", str(out)]
    assert main(args) == 0
    assert "chose" in capsys.readouterr().err
    res = pd.read_csv(out)
    assert np.mean((res["a"] - df["clean"]) ** 2) < np.mean((df["a"] - df["clean"]) ** 2)
    with pytest.raises(SystemExit, match="--target: not in"):
        main(["filter", str(p), "--columns", "a", "--target", "nope"])
    with pytest.raises(SystemExit, match="one column per filtered column"):
        main(["filter", str(p), "--columns", "a", "b", "--target", "clean"])
