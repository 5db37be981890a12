"""Loaders for the real datasets and the standard ETT split.

ETT (CC BY-ND 4.0) is read from the original CSV and transformed in memory only; nothing derived
from it is written by these functions.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.checks import check_int
from tssdpa.data.paths import find_dataset

__all__ = [
    "ETT_NAMES",
    "ETT_COLUMNS",
    "IMU_FILES",
    "Split",
    "load_ett",
    "ett_split",
    "load_imu",
    "load_sunspots",
]

ETT_NAMES = ("ETTh1", "ETTh2", "ETTm1", "ETTm2")
ETT_COLUMNS = ("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT")
IMU_FILES = {
    "imu_fusion": "imu/xio-fusion/sensor_data.csv.gz",
    "imu_gait": "imu/xio-gait-tracking/short_walk.csv.gz",
}


@dataclass(frozen=True)
class Split:
    """Contiguous train / validation / test boundaries ``[0, train) [train, val) [val, test)``.

    ``context`` is how many samples before ``train``/``val`` a windowed model may read as input
    (the DLinear convention: the first target of a split is its first row).
    """

    train: int
    val: int
    test: int
    context: int = 0

    def __post_init__(self):
        # a float boundary (1.5) or a NaN context was stored, to fail later as a slice index
        for name in ("train", "val", "test", "context"):
            check_int(getattr(self, name), name, minimum=-(2**63))
        if not 0 < self.train < self.val < self.test:
            raise ValueError(
                f"split boundaries must satisfy 0 < train < val < test; got {self.train}, "
                f"{self.val}, {self.test}"
            )
        if self.context < 0:
            raise ValueError(f"context must be >= 0; got {self.context}")

    def bounds(self, part: str) -> tuple[int, int]:
        """``(start, stop)`` of ``part`` in {"train", "val", "test"}."""
        if part == "train":
            return 0, self.train
        if part == "val":
            return self.train, self.val
        if part == "test":
            return self.val, self.test
        raise ValueError(f"part must be 'train', 'val' or 'test'; got {part!r}")

    @classmethod
    def fractions(cls, n: int, train: float = 0.6, val: float = 0.2, context: int = 0) -> Split:
        """Chronological split of ``n`` samples by fractions (test = the rest)."""
        if not (0 < train < 1 and 0 < val < 1 and train + val < 1):
            raise ValueError(
                f"train and val must be fractions with train + val < 1; got {train}, {val}"
            )
        n = check_int(n, "n")  # n=10.7 was read as 10
        return cls(int(n * train), int(n * (train + val)), n, context)


def _read_dataset(path, relative: str, **kwargs) -> pd.DataFrame:
    """``pd.read_csv(path)``, or ``ValueError`` naming the file where it is damaged or not the
    dataset: a gzip error, a parse error, or contents whose sha256 is not the published
    file's (:data:`~tssdpa.data.download.MANIFEST`; a shortened or edited copy read without
    a word and moved a comparison's figures). The file is decompressed once, for both."""
    from tssdpa.data.download import MANIFEST

    try:
        data = Path(path).read_bytes()
        data = gzip.decompress(data) if str(path).endswith(".gz") else data
    except (OSError, EOFError, zlib.error) as exc:
        raise _damaged(path, relative, f"not a readable copy of the dataset ({exc})") from None
    got = hashlib.sha256(data).hexdigest()
    if relative in MANIFEST and got != MANIFEST[relative][1]:
        why = f"its contents' sha256 {got[:12]}... is not the published file's"
        raise _damaged(path, relative, why)
    try:
        return pd.read_csv(io.BytesIO(data), **kwargs)
    except (OSError, EOFError, zlib.error, ValueError, KeyError, pd.errors.ParserError) as exc:
        raise _damaged(path, relative, f"not a readable copy of the dataset ({exc})") from None


def _damaged(path, relative: str, why: str) -> ValueError:
    # the first folder holding the file is read: a fresh copy must go there
    root = Path(path).parents[len(Path(relative).parts) - 1]
    return ValueError(f"{path}: {why}; replace it with a good copy (`tssdpa download --force "
                      f"--cache-dir {root}` fetches one there)")  # fmt: skip


def load_ett(name: str = "ETTh1", data_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """Read an ETT CSV (``date`` index, columns HUFL ... OT) as float64; a copy that is not
    the published file (its sha256) is refused naming it."""
    if name not in ETT_NAMES:
        raise ValueError(f"name must be one of {ETT_NAMES}; got {name!r}")
    rel = f"ett/{name}.csv.gz"
    path = find_dataset(rel, data_dir)
    df = _read_dataset(path, rel, parse_dates=["date"], index_col="date")
    return df.astype(np.float64)  # the published file: columns ETT_COLUMNS, every row


def ett_split(name: str, lookback: int = 336) -> Split:
    """The DLinear / PatchTST / Informer split: 12 / 4 / 4 months of 30 days.

    ETTh: 8640 / 2880 / 2880 rows; ETTm (4 samples per hour): 34560 / 11520 / 11520 rows.
    Windows of the validation and test parts start ``lookback`` rows earlier, so the first target
    is the first row of the part.
    """
    if name not in ETT_NAMES:
        raise ValueError(f"name must be one of {ETT_NAMES}; got {name!r}")
    lookback = check_int(lookback, "lookback", minimum=0)  # -1 was "context must be >= 0"
    per_hour = 4 if name.startswith("ETTm") else 1
    month = 30 * 24 * per_hour
    return Split(12 * month, 16 * month, 20 * month, context=lookback)


def load_imu(
    name: str = "imu_fusion", data_dir: str | os.PathLike | None = None, resample: bool = True
) -> pd.DataFrame:
    """Read an x-io IMU recording; optionally resample it onto its median time step.

    With ``resample=False`` every row of the file is returned as recorded (repeated
    timestamps included), indexed by its time in seconds.

    The gait recording has repeated timestamps; with ``resample=True`` duplicate times are
    averaged and every channel is linearly interpolated onto a uniform grid at the median step,
    as PROVENANCE.md advises. The index is time in seconds.
    """
    if name not in IMU_FILES:
        raise ValueError(f"name must be one of {sorted(IMU_FILES)}; got {name!r}")
    path = find_dataset(IMU_FILES[name], data_dir)
    df = _read_dataset(path, IMU_FILES[name])  # the published file: time, then channels
    df.columns = [c.strip() for c in df.columns]
    tcol = df.columns[0]
    if not resample:  # the rows as recorded: they were averaged by time too, 16,539 gait
        return df.set_index(tcol).astype(np.float64)  # rows read as 16,334 without a word
    df = df.groupby(tcol, sort=True).mean()
    t = df.index.to_numpy(dtype=np.float64)
    step = float(np.median(np.diff(t)))
    grid = t[0] + step * np.arange(int(np.floor((t[-1] - t[0]) / step)) + 1)
    out = {c: np.interp(grid, t, df[c].to_numpy(dtype=np.float64)) for c in df.columns}
    res = pd.DataFrame(out, index=pd.Index(grid, name=tcol))
    res.attrs["step_s"] = step
    return res


def load_sunspots() -> pd.Series:
    """Yearly sunspot numbers 1700–2008 bundled with statsmodels (309 values)."""
    import statsmodels.api as sm

    df = sm.datasets.sunspots.load_pandas().data
    return pd.Series(
        df["SUNACTIVITY"].to_numpy(dtype=np.float64),
        index=df["YEAR"].astype(int).to_numpy(),
        name="SUNACTIVITY",
    )
