"""Lightning data modules over the comparison protocols (for ``experiments/*.py``).

Windows are cut from the same splits the harness uses (:mod:`tssdpa.data.tasks`), so a
model trained here is scored on exactly the harness's test windows.
"""

from __future__ import annotations

import lightning as L
import numpy as np
import torch
from numpy.lib.stride_tricks import sliding_window_view
from torch.utils.data import DataLoader, TensorDataset

from tssdpa.checks import SettingWarning, check_choice, check_int, check_number, warn
from tssdpa.data.noise import NOISES

__all__ = ["ForecastDataModule", "DenoiseDataModule"]


def _check_dataset(dataset) -> None:
    """A data module reads one dataset by name: refused when built, naming ``dataset``. It
    was refused by the task builders as the data was first read, as "dataset must be one of
    ... or 'default'" (the harness's set of datasets, which one module cannot hold)."""
    from tssdpa.data.tasks import DATASETS

    check_choice(dataset, "dataset", DATASETS)


def _windows(y: np.ndarray, start: int, stop: int, lookback: int, horizon: int, stride: int = 1):
    """(past, future) pairs whose first target row lies in [start, stop - horizon]."""
    seg = y[start - lookback : stop]
    w = sliding_window_view(seg, lookback + horizon, axis=0)[::stride]  # (N, C, L+H)
    w = np.ascontiguousarray(w.transpose(0, 2, 1), dtype=np.float32)
    return torch.from_numpy(w[:, :lookback]), torch.from_numpy(w[:, lookback:])


class _SplitDataModule(L.LightningDataModule):
    """Loaders over the ``train_set`` / ``val_set`` / ``test_set`` that ``setup`` builds."""

    @staticmethod
    def _check_common(batch_size, n, seed, num_workers) -> None:
        """The settings every data module has (errors name the argument)."""
        check_int(batch_size, "batch_size")
        check_int(n, "n", minimum=2)
        check_int(seed, "seed", minimum=0)
        check_int(num_workers, "num_workers", minimum=0)

    def _loader(self, ds, shuffle):
        return DataLoader(
            ds,
            batch_size=self.hparams.batch_size,
            shuffle=shuffle,
            num_workers=self.hparams.num_workers,
        )

    @property
    def n_channels(self) -> int:
        """Channels of the task's series (sets the module up to find out)."""
        self.setup()
        return self.task.n_channels

    def train_dataloader(self):
        return self._loader(self.train_set, True)

    def val_dataloader(self):
        return self._loader(self.val_set, False)

    def test_dataloader(self):
        return self._loader(self.test_set, False)

    def predict_dataloader(self):
        """The test windows, in order (``predict`` had no data: a traceback)."""
        return self._loader(self.test_set, False)


class ForecastDataModule(_SplitDataModule):
    """Rolling windows of a forecasting task (ETT: the DLinear / PatchTST protocol).

    Parameters
    ----------
    dataset : str
        Any name :func:`tssdpa.data.tasks.forecast_tasks` accepts.
    features : {"M", "S"}
        ETT: all channels or ``OT`` only.
    lookback, horizon : int
    batch_size : int
    n : int
        Length of synthetic series.
    seed : int
    data_dir : str or None
    num_workers : int
        DataLoader workers.

    :meth:`train_series` and :meth:`val_pairs` give what a closed-form start of a model needs
    (``ForecastingSystem.init_linear_ridge(dm.train_series(), dm.val_pairs())``).
    """

    def __init__(
        self, dataset: str = "ETTh1", features: str = "M", lookback: int = 336, horizon: int = 96,
        batch_size: int = 32, n: int = 4000, seed: int = 0, data_dir: str | None = None,
        num_workers: int = 0,
    ):  # fmt: skip
        super().__init__()
        _check_dataset(dataset)
        check_choice(features, "features", ("M", "S"))
        check_int(lookback, "lookback")
        check_int(horizon, "horizon")
        self._check_common(batch_size, n, seed, num_workers)
        self.save_hyperparameters()

    def train_series(self) -> np.ndarray:
        """The training part of the (z-scored) series, (T_train, C) float64: the data a
        closed-form start such as ``ForecastingSystem.init_linear_ridge`` is fitted on."""
        self.setup()
        return self.task.y[: self.task.split.train]

    def val_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The validation windows as numpy arrays: (past (N, lookback, C), future
        (N, horizon, C)), float32, the same windows as :meth:`val_dataloader`."""
        self.setup()
        past, future = self.val_set.tensors
        return past.numpy(), future.numpy()

    def setup(self, stage: str | None = None):
        if getattr(self, "task", None) is not None:
            return
        from tssdpa.data.tasks import HorizonTooLong, forecast_tasks

        h = self.hparams
        try:
            [self.task] = forecast_tasks(
                h.dataset,
                seeds=(h.seed,),
                n=h.n,
                data_dir=h.data_dir,
                features=h.features,
                horizons=(h.horizon,),
                lookback=h.lookback,
            )
        except HorizonTooLong as exc:  # its one horizon is this module's `horizon`
            raise ValueError(exc.said_as("horizon")) from None
        y, sp = self.task.y, self.task.split
        L_, H = h.lookback, h.horizon
        if sp.train < L_ + H:  # not one training window: numpy's "window shape cannot be
            # larger than input array shape" was all the scripts said
            raise ValueError(
                f"lookback + horizon ({L_} + {H}) is longer than the training part of "
                f"{h.dataset} ({sp.train} samples): no training window; give a shorter "
                "lookback or a longer series"
            )
        self.train_set = TensorDataset(*_windows(y, L_, sp.train, L_, H))
        self.val_set = TensorDataset(*_windows(y, sp.train, sp.val, L_, H))
        self.test_set = TensorDataset(*_windows(y, sp.val, sp.test, L_, H))


class DenoiseDataModule(_SplitDataModule):
    """(noisy, clean) windows of a denoising task (one noise setting and seed).

    Parameters
    ----------
    dataset : str
        Any name :func:`tssdpa.data.tasks.denoise_tasks` accepts.
    noise : str
        One of :data:`tssdpa.data.noise.NOISES`.
    snr_db : float
        Signal-to-noise ratio of the noisy copy.
    seq_len : int
        Window length. A part of the split shorter than it (a short series) gets one window
        as long as the part, warned of once (:class:`~tssdpa.checks.SettingWarning`: the
        value given and the values used); the window tensors of ``train_set`` / ``val_set`` /
        ``test_set`` hold the lengths used.
    stride : int
        Step between training windows. The validation and test windows are every window
        (step 1): their scores do not depend on a training setting, and no sample at the end
        of a part is left unscored.
    batch_size : int
    n : int
        Length of synthetic series.
    seed : int
    data_dir : str or None
    num_workers : int
        DataLoader workers.
    """

    def __init__(
        self, dataset: str = "lorenz", noise: str = "gaussian", snr_db: float = 10.0,
        seq_len: int = 128, stride: int = 16, batch_size: int = 32, n: int = 4000, seed: int = 0,
        data_dir: str | None = None, num_workers: int = 0,
    ):  # fmt: skip
        super().__init__()
        _check_dataset(dataset)
        check_choice(noise, "noise", NOISES)
        check_number(snr_db, "snr_db")
        check_int(seq_len, "seq_len")
        check_int(stride, "stride")
        self._check_common(batch_size, n, seed, num_workers)
        self.save_hyperparameters()

    def setup(self, stage: str | None = None):
        if getattr(self, "task", None) is not None:
            return
        from tssdpa.data.tasks import denoise_tasks
        from tssdpa.signal.missing import fill_missing

        h = self.hparams
        [self.task] = denoise_tasks(
            h.dataset, seeds=(h.seed,), settings=[(h.noise, h.snr_db)], n=h.n, data_dir=h.data_dir
        )
        t = self.task
        noisy = fill_missing(t.noisy, causal=True)
        sets, shortened = [], []
        for part, said in (("train", "training"), ("val", "validation"), ("test", "test")):
            a, b = t.split.bounds(part)
            L_ = min(h.seq_len, b - a)
            if L_ < h.seq_len:  # shortened without a word, the windows of 80 said seq_len=128
                shortened.append(f"{L_} in the {said} part ({b - a} samples)")
            # validation and test windows at every step: thinned by the training stride, the
            # scores changed with it, and up to stride - 1 samples at a part's end were unscored
            step = h.stride if part == "train" else 1
            xs = sliding_window_view(noisy[a:b], L_, axis=0)[::step].transpose(0, 2, 1)
            ys = sliding_window_view(t.clean[a:b], L_, axis=0)[::step].transpose(0, 2, 1)
            sets.append(
                TensorDataset(
                    torch.tensor(xs.copy(), dtype=torch.float32),
                    torch.tensor(ys.copy(), dtype=torch.float32),
                )
            )
        self.train_set, self.val_set, self.test_set = sets
        if shortened:
            warn(SettingWarning(
                f"DenoiseDataModule: seq_len={h.seq_len} is built as {', '.join(shortened)} "
                f"of {h.dataset} (one window as long as the part); give a shorter seq_len or a "
                "longer series for windows of seq_len throughout"
            ), stacklevel=2)  # fmt: skip
