"""The operator demo runs on embedded data and says what it did."""

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
