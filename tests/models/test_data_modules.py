"""The Lightning data modules of tssdpa.data.lightning: the windows they cut from each split."""

from __future__ import annotations

import warnings

import pytest

from tssdpa.data.lightning import DenoiseDataModule


def _set_up(dm) -> list[str]:
    """``dm.setup()``; the messages of the warnings it gave."""
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        dm.setup()
    return [str(w.message) for w in told]


def test_a_split_shorter_than_seq_len_is_warned_of_naming_seq_len_and_the_lengths_used():
    # 400 samples split 240 / 80 / 80: the validation and test windows were 80 samples where
    # seq_len=128 was asked, without a word. A setting's note: the CLI tells it
    from tssdpa.checks import SettingWarning

    dm = DenoiseDataModule(n=400, seq_len=128)
    with pytest.warns(SettingWarning) as told:
        dm.setup()
    assert [str(w.message) for w in told] == [
        "DenoiseDataModule: seq_len=128 is built as 80 in the validation part (80 samples), "
        "80 in the test part (80 samples) of lorenz (one window as long as the part); give a "
        "shorter seq_len or a longer series for windows of seq_len throughout"
    ]
    lengths = [s.tensors[0].shape[1] for s in (dm.train_set, dm.val_set, dm.test_set)]
    assert lengths == [128, 80, 80]
    assert _set_up(dm) == []  # set up once, told once


def test_a_series_whose_splits_all_hold_seq_len_gives_no_warning():
    dm = DenoiseDataModule(n=800, seq_len=128)
    assert _set_up(dm) == []
    assert {s.tensors[0].shape[1] for s in (dm.train_set, dm.val_set, dm.test_set)} == {128}


def test_the_training_stride_thins_the_training_windows_only():
    # the validation and test windows were thinned by the training stride too: 3 of the 33
    # windows of the validation part, its last 16 samples never scored
    dm = DenoiseDataModule(n=800, seq_len=128, stride=16)
    dm.setup()
    for part, name in ((dm.val_set, "val"), (dm.test_set, "test")):
        a, b = dm.task.split.bounds(name)
        noisy, clean = part.tensors
        assert noisy.shape[0] == clean.shape[0] == b - a - 128 + 1  # every window
        # consecutive windows one sample apart: the second starts where the first's second
        # sample is
        assert (noisy[1, :-1] == noisy[0, 1:]).all() and (clean[1, :-1] == clean[0, 1:]).all()
    a, b = dm.task.split.bounds("train")
    assert dm.train_set.tensors[0].shape[0] == len(range(0, b - a - 128 + 1, 16))
