"""Benchmark tasks: which series, which split, which noise / horizons, per dataset name.

A *denoising task* is a clean series, a chronological split and one noise setting (model, SNR,
seed); a *forecasting task* is a (scaled) series, a split, a lookback and a list of horizons.
Every series is transformed in memory only (ETT is CC BY-ND).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tssdpa.checks import check_int
from tssdpa.data import real
from tssdpa.data.noise import add_noise
from tssdpa.data.real import ETT_NAMES, IMU_FILES, Split
from tssdpa.data.synthetic import SIGNALS, make_signal

__all__ = [
    "DenoiseTask",
    "ForecastTask",
    "HorizonTooLong",
    "RECORDED",
    "TableSeries",
    "recorded_denoise_tasks",
    "DATASETS",
    "DEFAULT_DATASETS",
    "denoise_tasks",
    "forecast_tasks",
    "zscore",
    "estimate_period",
    "season_search_limit",
]

SYNTHETIC = tuple(SIGNALS)
#: the embedded default comparison: no shared data needed
DEFAULT_DATASETS = {
    "denoise": ("sinusoids", "steps", "lorenz", "mackey_glass", "ar2", "sunspots"),
    "forecast": ("lorenz", "mackey_glass", "ar2", "sunspots"),
}
DATASETS = SYNTHETIC + ("sunspots",) + ETT_NAMES + tuple(IMU_FILES)
#: the setting of a denoising task whose noisy series was recorded, not made here
RECORDED = "recorded"


@dataclass(eq=False)
class TableSeries:
    """A caller's own series (the columns of a CSV / Parquet file, ``tssdpa compare --file``),
    given to :func:`denoise_tasks` / :func:`forecast_tasks` in place of a dataset name: split
    60/20/20 in time order and z-scored with its training part, as the real recordings are.

    ``fingerprint`` (of the values) goes into every row's ``cell_settings``, so that a resumed
    run never mixes in the rows of another file or another version of it with the same name.
    """

    name: str
    values: np.ndarray  # (T, C)
    columns: tuple
    fingerprint: str

    def __post_init__(self):
        # a 1-D array (one column) was IndexError 'tuple index out of range' to forecast_tasks
        # and a 1-D clean signal to denoise_tasks; a list had no .shape
        values = np.asarray(self.values, dtype=np.float64)
        values = values[:, None] if values.ndim == 1 else values
        if values.ndim != 2:
            raise ValueError(f"values must be (T,) or (T, C), got shape {values.shape}")
        columns = (self.columns,) if isinstance(self.columns, str) else tuple(self.columns)
        if len(columns) != values.shape[1]:
            raise ValueError(f"columns: {len(columns)} name(s) for the {values.shape[1]} "
                             f"columns of values, got {columns}")  # fmt: skip
        self.values, self.columns = values, columns


@dataclass
class DenoiseTask:
    """One denoising cell: recover ``clean`` from ``noisy`` on the test part of ``split``."""

    dataset: str
    clean: np.ndarray  # (T, C)
    noisy: np.ndarray  # (T, C)
    split: Split
    noise: str
    snr_db: float | None  # None: the noise was recorded (RECORDED), not added at an SNR
    seed: int
    columns: tuple = ()
    shareable: bool = True  # False for CC BY-ND data: no traces written
    warmup: int = 256
    quick: bool = False  # smaller search grids for expensive (learned) methods
    seeded_data: bool = True  # False: clean and noisy do not depend on the seed
    fingerprint: str | None = None  # of a caller's own data (TableSeries)
    #: the setting's place in denoise_tasks' list: its noise is drawn with the seed
    #: ``1000 * seed + noise_index``, so one setting draws other noise in another list
    noise_index: int | None = None

    @property
    def setting(self) -> str:
        return self.noise if self.snr_db is None else f"{self.noise}@{self.snr_db:g}dB"

    @property
    def n_channels(self) -> int:
        return self.clean.shape[1]

    @property
    def ctx(self) -> dict:
        return {"n_train": self.split.train, "n_channels": self.clean.shape[1], "quick": self.quick}


@dataclass
class ForecastTask:
    """One forecasting cell: rolling-origin forecasts of the scaled series ``y``."""

    dataset: str
    y: np.ndarray  # (T, C), scaled with training statistics
    split: Split
    horizons: tuple
    lookback: int
    seed: int
    setting: str = "univariate"
    period: int | None = None
    columns: tuple = ()
    #: history length passed with each block of origins (None = from the series start)
    history: int | None = None
    seeded_data: bool = True  # False: the series does not depend on the seed
    shareable: bool = True
    max_origins: int | None = None  # cap on evaluated origins for cost="high" methods
    #: "path": error averaged over steps 1..h (DLinear protocol, ETT); "step": at step h only
    metric: str = "step"
    quick: bool = False  # smaller search grids for expensive (learned) methods
    extra: dict = field(default_factory=dict)
    fingerprint: str | None = None  # of a caller's own data (TableSeries)

    @property
    def n_channels(self) -> int:
        return self.y.shape[1]

    @property
    def ctx(self) -> dict:
        return {
            "n_train": self.split.train,
            "period": self.period,
            "lookback": self.lookback,
            "max_horizon": max(self.horizons),
            "n_channels": self.y.shape[1],
            "quick": self.quick,
        }


def season_search_limit(n_train: int) -> int:
    """The longest period :func:`forecast_tasks` searches a training part of ``n_train``
    samples for: one of which two full cycles fit there. (It searched up to the lookback: a
    300-row hourly file, lookback 22, could not find its 24-hour season.)"""
    return max(2, int(n_train) // 2)


def estimate_period(x: np.ndarray, max_period: int, alpha: float = 0.05) -> int | None:
    """Dominant period (samples) of the training series from its periodogram, or None where
    no period of 2 to ``max_period`` samples stands out.

    The highest peak of the band counts as a season only where it stands above the spectrum
    of red noise (an AR(1) of the series' lag-one autocorrelation, scaled to its mean power)
    by more than chance over the band's frequencies gives (an exponential tail at level
    ``alpha``, Bonferroni over the band): a random walk's or a trend's power rises towards
    the lowest frequency, so its highest peak in the band was the band's edge, the lookback,
    and the seasonal naive forecaster copied values from a lookback ago (a 300-row random
    walk: MSE 1.15 where the naive one's was 0.05).

    ``x`` (T,) or (T, C): each channel is tested on its own (Bonferroni over the channels
    too), and the period is that of the channel whose peak stands highest above its
    threshold (the last channel alone was tested: a file whose last channel had no season
    got none, whatever its other channels had). The peak's frequency bin is refined to the
    whole period of highest power between its neighbour bins (a 24-sample season in 180
    samples lies between the bins of 22.5 and 25.7 samples).
    """
    x = np.asarray(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    if x.ndim != 2:
        raise ValueError(f"x must be (T,) or (T, C); got shape {x.shape}")
    best, best_excess = None, 1.0
    for col in x.T:
        found = _channel_period(col[np.isfinite(col)], max_period, alpha / x.shape[1])
        if found is not None and found[1] > best_excess:
            best, best_excess = found
    return best


def _channel_period(x: np.ndarray, max_period: int, alpha: float):
    """(period, peak power over its threshold) of one channel's finite values, or None: the
    test of :func:`estimate_period`."""
    from scipy.signal import periodogram

    if len(x) < 16:
        return None
    f, p = periodogram(x - x.mean(), detrend="linear")
    periods = 1.0 / np.maximum(f, 1e-12)
    ok = (f > 0) & (periods <= max_period) & (periods >= 2)
    if not ok.any():
        return None
    k = np.flatnonzero(ok)[np.argmax(p[ok])]
    t = np.arange(len(x))
    d = x - np.polyval(np.polyfit(t, x, 1), t)
    r = float(np.clip(d[1:] @ d[:-1] / max(d @ d, 1e-300), -0.99, 0.99))
    red = (1 - r * r) / (1 - 2 * r * np.cos(2 * np.pi * f) + r * r)
    red *= p[1:].mean() / red[1:].mean()
    threshold = red[k] * np.log(ok.sum() / alpha)
    if not p[k] > threshold:  # (a constant channel: no power, and no 0 / 0 either)
        return None
    excess = p[k] / threshold
    # whole periods between the neighbour bins, scored by the detrended series' power there
    lo = max(2, int(np.ceil(periods[k + 1])) if k + 1 < len(f) else 2)
    hi = min(int(max_period), int(np.floor(periods[k - 1])))
    # (at most 64 of them: at the lowest bins of a long series there are thousands)
    whole = np.unique(np.linspace(lo, max(lo, hi), 64).round().astype(int))
    power = np.abs(np.exp(-2j * np.pi * np.outer(1.0 / whole, t)) @ d)
    return int(whole[np.argmax(power)]), float(excess)


def zscore(y: np.ndarray, n_train: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scale columns with the mean and std of the first ``n_train`` rows only."""
    # n_train=0 gave all-NaN columns and a negative one the statistics of all rows but its
    # last few (the test part's among them): the scaling leaked what it must not see
    n_train = check_int(n_train, "n_train")
    if n_train > len(y):
        raise ValueError(f"n_train must be at most the {len(y)} rows of y, got {n_train}")
    mu = np.nanmean(y[:n_train], axis=0)
    sd = np.nanstd(y[:n_train], axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (y - mu) / sd, mu, sd


def _series(name: str, seed: int, n: int, data_dir=None):
    """(values (T, C), split, columns, shareable, period) for a dataset name or a
    :class:`TableSeries` (split as the real recordings are)."""
    if isinstance(name, TableSeries):
        x = name.values
        return x, Split.fractions(len(x), 0.6, 0.2), tuple(name.columns), True, None
    if name in SYNTHETIC:
        x = make_signal(name, n, seed)[:, None]
        period = None
        return x, Split.fractions(len(x), 0.6, 0.2), (name,), True, period
    if name == "sunspots":
        s = real.load_sunspots()
        return s.to_numpy()[:, None], Split.fractions(len(s), 0.6, 0.2), ("SUNACTIVITY",), True, 11
    if name in ETT_NAMES:
        df = real.load_ett(name, data_dir)
        sp = real.ett_split(name)
        period = 96 if name.startswith("ETTm") else 24
        return df.to_numpy()[: sp.test], sp, tuple(df.columns), False, period
    if name in IMU_FILES:
        df = real.load_imu(name, data_dir)
        cols = [c for c in df.columns if c.startswith(("Gyroscope", "Accelerometer"))]
        x = df[cols].to_numpy()
        return x, Split.fractions(len(x), 0.6, 0.2), tuple(cols), True, None
    raise ValueError(f"dataset must be one of {DATASETS} or 'default'; got {name!r}")


def denoise_tasks(
    dataset: str,
    seeds=(0, 1, 2),
    settings=None,
    n: int = 2000,
    data_dir=None,
    columns=None,
    quick: bool = False,
) -> list[DenoiseTask]:
    """Denoising tasks for ``dataset`` over ``settings`` [(noise, snr_db), ...] and ``seeds``.

    ``dataset`` is a name of :data:`DATASETS` or a :class:`TableSeries`, taken as the clean
    signal. Synthetic signals get a fresh realisation per seed; real recordings (and a
    TableSeries) are z-scored with their training statistics and only the noise changes with
    the seed. ETT uses the ``OT`` column unless ``columns`` is given: a list of column names,
    or a string, one column's name (as :func:`~tssdpa.data.tables.numeric_columns` takes it).
    """
    if settings is None:
        settings = [
            ("gaussian", 0.0),
            ("gaussian", 10.0),
            ("gaussian", 20.0),
            ("student_t", 10.0),
            ("impulsive", 10.0),
            ("dropout", 10.0),
        ]
    tasks = []
    name, fingerprint = _name(dataset)
    for seed in _seeds(seeds):
        x, sp, cols, share, _ = _series(dataset, seed, n, data_dir)
        if fingerprint is None and name in ETT_NAMES:
            keep = _columns(name, ["OT"] if columns is None else columns, cols)
            idx = [cols.index(c) for c in keep]
            x, cols = x[:, idx], tuple(keep)
            sp = Split(sp.train, sp.val, sp.test)
        elif columns is not None:
            keep = _columns(name, columns, cols)
            idx = [cols.index(c) for c in keep]
            x, cols = x[:, idx], tuple(keep)
        x, _, _ = zscore(x, sp.train)
        for k, (noise, snr) in enumerate(settings):
            # a caller's own series: the noise level from the training part, so that editing
            # the test rows changes nothing before them (the named datasets keep the level of
            # their whole series, which their published figures were made with)
            ref = None if fingerprint is None else x[: sp.train]
            noisy = add_noise(x, noise, snr, seed=1000 * seed + k, reference=ref)
            tasks.append(
                DenoiseTask(name, x, noisy, sp, noise, float(snr), int(seed), cols, share,
                            quick=quick, fingerprint=fingerprint, noise_index=k)
            )  # fmt: skip
    return tasks


def recorded_denoise_tasks(
    series: TableSeries, clean, seeds=(0,), quick: bool = False
) -> list[DenoiseTask]:
    """Denoising tasks of a recorded pair: ``series`` the noisy columns, ``clean`` (T, C) their
    clean references, column for column (setting :data:`RECORDED`, no noise added). Both are
    scaled with the clean columns' training mean and std, so that noisy and clean stay in one
    scale. The data do not change with the seed: the harness runs a deterministic method on
    the first seed only, as it does for a real recording's forecasting."""
    noisy = np.asarray(series.values, dtype=np.float64)
    clean = np.asarray(clean, dtype=np.float64)
    if clean.shape != noisy.shape:
        raise ValueError(f"clean must have the shape {noisy.shape} of the noisy columns, one "
                         f"reference per column; got {clean.shape}")  # fmt: skip
    sp = Split.fractions(len(noisy), 0.6, 0.2)
    clean, mu, sd = zscore(clean, sp.train)
    noisy = (noisy - mu) / sd
    return [
        DenoiseTask(
            series.name,
            clean,
            noisy,
            sp,
            RECORDED,
            None,
            int(seed),
            tuple(series.columns),
            quick=quick,
            seeded_data=False,
            fingerprint=series.fingerprint,
        )  # fmt: skip
        for seed in _seeds(seeds)
    ]


def _name(dataset) -> tuple[str, str | None]:
    """The name and fingerprint of a dataset name or :class:`TableSeries`."""
    if isinstance(dataset, TableSeries):
        return dataset.name, dataset.fingerprint
    if not isinstance(dataset, str):  # an array was numpy's 'truth value ... is ambiguous'
        raise TypeError(
            "dataset must be a name of DATASETS, or your own values as a TableSeries(name, "
            f"values (T, C), columns, fingerprint); got {type(dataset).__name__}"
        )
    return dataset, None


def _seeds(seeds) -> list[int]:
    # seeds=0 failed with "'int' object is not iterable"; (0, 0) made every cell twice, to
    # be averaged as two seeds; 1.5 or -1 failed inside numpy, naming nothing
    if not isinstance(seeds, (list, tuple, range)):
        raise TypeError(f"seeds must be a list of seeds, e.g. (0, 1, 2); got {seeds!r}")
    out = [check_int(s, "seeds", minimum=0) for s in seeds]
    if len(set(out)) < len(out):
        raise ValueError(f"seeds must differ from each other; got {list(seeds)}")
    return out


def _columns(dataset: str, columns, known: tuple) -> list:
    # a missing name raised "tuple.index(x): x not in tuple", naming neither; a string was
    # split into letters, then refused; it is one column's name, as numeric_columns takes it;
    # [] meant OT for ETT but a task of no channel for the IMU
    keep = [columns] if isinstance(columns, str) else list(columns)
    missing = [c for c in keep if c not in known]
    if missing or not keep:
        why = f"no column {missing}" if missing else "no column named"
        raise ValueError(f"columns: {why} in {dataset}; it has {list(known)}")
    return keep


_FORECAST = {
    # name: (lookback, horizons)
    "lorenz": (64, (1, 5, 10, 25)),
    "mackey_glass": (64, (1, 6, 17, 50)),
    "ar2": (32, (1, 2, 5, 10)),
    "sinusoids": (64, (1, 10, 25, 50)),
    "chirp": (64, (1, 5, 10, 25)),
    "steps": (64, (1, 5, 10, 25)),
    "sunspots": (24, (1, 2, 4, 8)),
    "imu_fusion": (64, (1, 2, 5, 10)),  # 100 Hz: 10-100 ms ahead
    "imu_gait": (128, (4, 8, 20, 40)),  # 400 Hz: 10-100 ms ahead
}


class HorizonTooLong(ValueError):
    """:func:`forecast_tasks`' error for a ``horizon`` longer than ``part`` (its validation and
    test parts): the message names ``horizons``; a caller with one horizon of its own (a data
    module's ``horizon``) names it with :meth:`said_as`."""

    def __init__(self, horizon: int, part: str):
        super().__init__(horizon, part)  # the args pickle and rebuild it
        self.horizon, self.part = horizon, part

    def said_as(self, name: str) -> str:
        return f"{name} {self.horizon} is longer than {self.part}"

    def __str__(self) -> str:
        return f"horizons: {self.horizon} is longer than {self.part}; give shorter ones"


def forecast_tasks(
    dataset: str,
    seeds=(0, 1, 2),
    n: int = 3000,
    data_dir=None,
    features: str = "M",
    horizons=None,
    lookback=None,
    max_origins: int | None = None,
    quick: bool = False,
) -> list[ForecastTask]:
    """Forecasting tasks for ``dataset``.

    ETT follows the DLinear / PatchTST protocol: 12/4/4-month split, z-score with training
    statistics, lookback 336, horizons 96/192/336/720, metrics on the scaled data averaged over
    steps 1..h; ``features`` ``"M"`` (all seven channels) or ``"S"`` (``OT`` only). Other series
    are z-scored with their training statistics, synthetic ones get a fresh realisation per
    seed, and the error is the h-step-ahead error (step h only). A series without a known
    season (ETT's daily one, sunspots' 11 years) gets the one :func:`estimate_period` finds
    in the training part, in any channel, among periods of 2 to
    :func:`season_search_limit` samples (None where none stands above red noise): the
    ``period`` of the seasonal naive and seasonal ETS forecasters.
    """
    if features not in ("M", "S"):
        raise ValueError(f"features must be 'M' or 'S'; got {features!r}")
    tasks = []
    dataset, fingerprint = _name(source := dataset)
    named = dataset if fingerprint is None else None  # a file named ETTh1.csv is no ETT
    for seed in _seeds(seeds):
        x, sp, cols, share, period = _series(source, seed, n, data_dir)
        if named in ETT_NAMES:
            lb, hz = 336, (96, 192, 336, 720)
            setting = features
            if features == "S":
                x, cols = x[:, [cols.index("OT")]], ("OT",)
            history = lb + 720
        else:
            lb, hz = _FORECAST[named] if named else table_forecast_setup(sp)
            setting = "univariate" if x.shape[1] == 1 else "multivariate"
            history = None if len(x) <= 20000 else lb + 1000
            if named in IMU_FILES:
                history = lb + 1000
        # lookback=0 fell back to the default, -5 failed naming Split's context, and
        # horizons of 0, -1 or 2.5 (read as 2) were kept: each is refused naming it
        lb = lb if lookback is None else check_int(lookback, "lookback")
        if horizons is not None:
            horizons = [check_int(h, "horizons") for h in horizons]
        hz = tuple(sorted({int(h) for h in (horizons or hz)}))  # 5 5 scored h=5 twice
        shortest = min(sp.val - sp.train, sp.test - sp.val)  # of the validation / test parts
        if max(hz) > shortest:  # no origin would be scored: the comparison ran, then failed
            raise HorizonTooLong(max(hz), f"{dataset}'s validation and test parts ({shortest} "
                                 "samples)")  # fmt: skip
        y, _, _ = zscore(x, sp.train)
        sp = Split(sp.train, sp.val, sp.test, context=lb)
        if period is None:
            period = estimate_period(y[: sp.train], max_period=season_search_limit(sp.train))
        seeded = named in SYNTHETIC
        metric = "path" if named in ETT_NAMES else "step"
        tasks.append(
            ForecastTask(
                dataset,
                y,
                sp,
                hz,
                lb,
                int(seed),
                setting,
                period,
                cols,
                history,
                seeded,
                share,
                max_origins,
                metric,
                quick,
                fingerprint=fingerprint,
            )
        )
    return tasks


def table_forecast_setup(sp: Split) -> tuple[int, tuple]:
    """(lookback, horizons) for a :class:`TableSeries` split as ``sp``: lookback 64 (as the
    100 Hz IMU recording's), at most an eighth of the training part; horizons 1, 2, 5, 10 up to
    a quarter of the validation / test parts (at least 1)."""
    lookback = max(4, min(64, sp.train // 8))
    shortest = min(sp.val - sp.train, sp.test - sp.val)
    return lookback, tuple(h for h in (1, 2, 5, 10) if h <= max(1, shortest // 4))
