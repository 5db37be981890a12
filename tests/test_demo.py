"""The operator demo runs on embedded data and says what it did."""

import pytest
import torch

from tssdpa import demo


def test_main_job_prints_a_table_where_projection_beats_the_moving_average(capsys):
    demo.main([])
    out = capsys.readouterr().out
    rows = {
        line[:36].strip(): float(line[36:46])
        for line in out.splitlines()
        if line[:36].strip().startswith(("noisy", "moving", "projection"))
    }
    best_projection = max(v for k, v in rows.items() if k.startswith("projection"))
    assert best_projection > rows["moving average (W=32)"] > rows["noisy input"]


def test_delay_embedding_rows_are_lagged_samples():
    x = torch.arange(5.0)
    e = demo.delay_embedding(x, 3)
    assert e.tolist()[0] == [0.0, 0.0, 0.0]
    assert e.tolist()[4] == [4.0, 3.0, 2.0]


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["--window", "0"], "--window"),
        (["--window", "-3"], "--window"),
        (["--embedding", "0"], "--embedding"),
    ],  # fmt: skip
)
def test_window_and_embedding_below_one_are_one_line_and_exit_code_2(argv, name, capsys):
    with pytest.raises(SystemExit) as exit_:
        demo.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and name in err[0] and "must be an integer >= 1" in err[0]


@pytest.mark.parametrize("seed", ["-1", "18446744073709551616", "99999999999999999999"])
def test_a_seed_outside_0_to_2_64_minus_1_is_one_line_naming_seed_and_exit_code_2(seed, capsys):
    """-1 was the noise of seed 2**64 - 1 unsaid; a seed past 64 bits was a traceback."""
    with pytest.raises(SystemExit) as exit_:
        demo.main(["--seed", seed])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seed must be an integer from 0 to 18446744073709551615" in err[0]


def test_a_non_integer_seed_is_refused_by_argparse_naming_seed(capsys):
    with pytest.raises(SystemExit) as exit_:
        demo.main(["--seed", "1.5"])
    assert exit_.value.code == 2
    assert "argument --seed: invalid int value" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["--window", "--embedding"])
@pytest.mark.parametrize("value", ["2001", "99999999999999999999"])
def test_a_window_or_embedding_past_the_signal_is_one_line_and_exit_code_2(name, value, capsys):
    """A 64-bit overflow or an allocation of terabytes was a traceback."""
    with pytest.raises(SystemExit) as exit_:
        demo.main([name, value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{name} must be at most the signal's 2000 samples" in err[0]


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5])
def test_the_embedded_signal_refuses_a_seed_torch_would_wrap_or_reject_naming_seed(seed):
    with pytest.raises((ValueError, TypeError), match="seed"):
        demo.embedded_signal(seed=seed)
