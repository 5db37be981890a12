"""PNG plots from a results folder: denoising traces, forecasts vs truth, error vs horizon."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.compare.common import safe_name
from tssdpa.compare.tables import aggregate
from tssdpa.data.tasks import RECORDED

__all__ = ["plot_traces", "plot_forecasts", "plot_error_vs_horizon", "write_plots"]


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _stem(*names) -> str:
    """The file name part of a cell's saved arrays (as the harness writes them)."""
    return "__".join(safe_name(n) for n in names)


def _truth(folder, kind: str, dataset: str, setting: str):
    """``(folder/kind, the saved truth of one cell or None)``: ``kind`` "traces" or "curves"."""
    d = Path(folder) / kind
    truth = d / f"{_stem(dataset, setting)}__truth.npz"
    return d, (np.load(truth) if truth.exists() else None)


def _column(truth, channel: int) -> str:
    """``", column NAME"``: the column of a multichannel series that a plot draws, from the
    names saved with its truth ('' for one column, or a folder written before they were
    saved). The plots drew one column of a file of several and did not say which."""
    names = truth["columns"] if "columns" in truth.files else ()
    return f", column {names[channel]}" if len(names) > 1 else ""


def _save(fig, dest: Path) -> Path:
    """Write ``fig`` to ``dest`` (a PNG, folders created) and close it."""
    fig.tight_layout()
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(dest, dpi=90)
    _plt().close(fig)
    return dest


def _best(frame, task, dataset, setting, metric, higher, causal=None, k=3):
    """The ``k`` methods of best mean ``metric`` over seeds, as the tables average it
    (:func:`~tssdpa.compare.tables.aggregate`: unknown where a seed has no score; a mean
    over the seeds that had one drew a method whose other seed failed among the best)."""
    a = aggregate(frame, task)
    if a.empty or f"{metric}_mean" not in a:
        return []
    a = a[(a["dataset"] == dataset) & (a["setting"] == setting)]
    if causal is not None and "causal" in a:
        a = a[a["causal"].astype(bool) == causal]
    s = a.set_index("method")[f"{metric}_mean"].astype(float).dropna()
    return list(s.sort_values(ascending=not higher).index[:k])


def _plot_finite(ax, x, y, **kw):
    """Plot ``y`` against ``x``. With gaps (forecasts scored at some horizons only) each point
    is a marker and no line joins them: the steps between were not computed, and a line
    would draw values nobody measured."""
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(y)
    if not ok.any():
        return
    if not ok.all():
        kw.setdefault("marker", "o")
        kw.setdefault("ms", 4)
        kw["ls"] = "none"
    ax.plot(np.asarray(x)[ok], y[ok], **kw)


def _table_means(frame, task, dataset, setting, metric):
    """(method x horizon) means and standard deviations over seeds of ``metric``: the tables'
    own (:func:`~tssdpa.compare.tables.aggregate`), NaN where a seed has no score. Averaged
    here over the seeds that had one, a failed seed left the other's score drawn as the
    method's mean, and named best, where the table shows '—'."""
    a = aggregate(frame, task)
    if a.empty:
        return pd.DataFrame(), pd.DataFrame()
    a = a[(a["dataset"] == dataset) & (a["setting"] == setting)]
    return (a.pivot(index="method", columns="horizon", values=f"{metric}_mean"),
            a.pivot(index="method", columns="horizon", values=f"{metric}_std"))  # fmt: skip


def _best_per_horizon(means: pd.DataFrame) -> list:
    """The method of lowest mean in each horizon column that has one (a column of unknown
    means only has none: idxmin raised on it)."""
    return [means[c].idxmin() for c in means.columns if means[c].notna().any()]


def plot_traces(
    folder: Path, frame: pd.DataFrame, dataset: str, setting: str, dest: Path, n: int = 300
) -> Path | None:
    """Clean, noisy and the best causal / zero-phase filters (plus ours) on the test part."""
    d, t = _truth(folder, "traces", dataset, setting)
    if t is None:
        return None
    plt = _plt()
    clean, noisy = t["clean"][:n, 0], t["noisy"][:n, 0]
    column = _column(t, 0)
    fig, axes = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for ax, causal, title in (
        (axes[0], True, "causal (real-time)"),
        (axes[1], False, "zero-phase (offline)"),
    ):
        ax.plot(noisy, color="0.75", lw=0.8, label="noisy")
        ax.plot(clean, color="k", lw=1.5, label="clean")
        names = _best(frame, "denoise", dataset, setting, "snr_gain_db", True, causal, k=3)
        fam = frame[frame["task"] == "denoise"].groupby("method")["family"].first()
        ours = [
            m
            for m in fam.index
            if fam[m] in ("projection", "learned")
            and m not in names
            and (
                frame[(frame["method"] == m) & (frame["task"] == "denoise")]["causal"].astype(bool)
                == causal
            ).any()
        ]
        for m in names + ours:
            f = d / f"{_stem(dataset, setting, m)}.npz"
            if f.exists():
                ax.plot(np.load(f)["out"][:n, 0], lw=1.0, label=m)
        ax.set_title(f"{dataset}, {setting}{column}: {title}")
        # the tasks z-score every series with its training part: not the data's own units
        ax.set_ylabel("value (z-scored, training statistics)")
        ax.legend(loc="upper right", fontsize=7, ncol=3)
    axes[1].set_xlabel("test sample")
    return _save(fig, dest)


def plot_forecasts(
    folder: Path, frame: pd.DataFrame, dataset: str, setting: str, dest: Path, channel: int = -1
) -> Path | None:
    """Forecast paths from one test origin vs the truth (best methods by MSE at max horizon)."""
    d, t = _truth(folder, "curves", dataset, setting)
    if t is None:
        return None
    plt = _plt()
    hist, fut = t["history"][:, channel], t["future"][:, channel]
    df = frame[
        (frame["task"] == "forecast")
        & (frame["dataset"] == dataset)
        & (frame["setting"] == setting)
    ]
    means, _ = _table_means(frame, "forecast", dataset, setting, "mse")
    # the best method of every horizon column of the table, then the next best at the largest
    names = list(dict.fromkeys(_best_per_horizon(means)))
    names += [m for m in means[means.columns.max()].sort_values().index if m not in names]
    names = names[: max(4, len(set(_best_per_horizon(means))))]
    fam = df.groupby("method")["family"].first()
    names += [m for m in fam.index if fam[m] in ("projection", "learned") and m not in names]
    fig, ax = plt.subplots(figsize=(10, 4))
    x0 = -len(hist) + 1
    ax.plot(np.arange(x0, 1), hist, color="k", lw=1.2, label="history")
    ax.plot(np.arange(1, len(fut) + 1), fut, color="k", lw=1.2, ls="--", label="truth")
    for m in names:
        f = d / f"{_stem(dataset, setting, m)}__path.npz"
        if f.exists():
            p = np.load(f)["path"][:, channel]
            _plot_finite(ax, np.arange(1, len(p) + 1), p, lw=1.0, label=m)
    ax.axvline(0.5, color="0.6", lw=0.8)
    ax.set_xlabel("steps from the forecast origin")
    ax.set_ylabel("value (z-scored, training statistics)")
    # the truth's seed (0 in a folder written before it was stored): a run whose traces were
    # of seed 1 was titled seed 0
    seed = int(t["seed"]) if "seed" in t.files else 0
    ax.set_title(
        f"{dataset} ({setting}{_column(t, channel)}): forecast from one test origin (seed {seed})"
    )
    ax.legend(fontsize=7, ncol=3)
    return _save(fig, dest)


def plot_error_vs_horizon(
    folder: Path, frame: pd.DataFrame, dataset: str, setting: str, dest: Path
) -> Path | None:
    """The table's test MSE at each horizon it scores: mean over seeds, with the standard
    deviation as an error bar; one marker per measured horizon, nothing drawn between."""
    means, stds = _table_means(frame, "forecast", dataset, setting, "mse")
    if means.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    hs = np.asarray(means.columns, dtype=float)
    best = set(_best_per_horizon(means))
    # a small horizontal offset per method keeps the error bars of one horizon apart
    offsets = np.linspace(-0.15, 0.15, len(means)) if len(means) > 1 else [0.0]
    for off, (m, row) in zip(offsets, means.iterrows()):
        ok = np.isfinite(row.to_numpy(dtype=float))
        err = stds.loc[m].to_numpy(dtype=float)[ok]
        ax.errorbar(
            hs[ok] * (1 + off / 4), row.to_numpy(dtype=float)[ok],
            yerr=np.where(np.isfinite(err), err, 0.0), ls="none", marker="o", ms=5 if m in best
            else 3.5, capsize=2, lw=0.8, label=f"{m} (best at some h)" if m in best else m,
        )  # fmt: skip
    ax.set_xscale("log")
    ax.set_xticks(hs, [str(int(h)) for h in hs])
    ax.set_xticks([], minor=True)  # only the horizons the table scores
    ax.set_xlabel("horizon h (steps ahead)")
    ax.set_ylabel("test MSE, z-scored (mean over seeds)")
    ax.set_yscale("log")
    ax.set_title(f"{dataset} ({setting}): test MSE at each horizon of the table", fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return _save(fig, dest)


def write_plots(
    folder: str | Path,
    frame: pd.DataFrame,
    dest: str | Path | None = None,
    trace_setting: str = "gaussian@10dB",
) -> list[Path]:
    """All plots for a results folder (into ``dest``, default ``folder/plots``)."""
    folder = Path(folder)
    dest = Path(dest) if dest is not None else folder / "plots"
    made = []
    if "task" not in frame:
        return made
    den = frame[frame["task"] == "denoise"]
    for ds in pd.unique(den["dataset"]):
        settings = set(den.loc[den["dataset"] == ds, "setting"])
        # a recorded noisy / clean pair (compare --file --target) has no noise setting
        st = RECORDED if trace_setting not in settings and RECORDED in settings else trace_setting
        p = plot_traces(folder, frame, ds, st, dest / f"denoise_{safe_name(ds)}_trace.png")
        made += [p] if p else []
    fc = frame[frame["task"] == "forecast"]
    for (ds, st), _ in fc.groupby(["dataset", "setting"], sort=False):
        p = plot_forecasts(
            folder, frame, ds, st, dest / f"forecast_{safe_name(ds)}_{safe_name(st)}_paths.png"
        )
        made += [p] if p else []
        p = plot_error_vs_horizon(
            folder, frame, ds, st, dest / f"forecast_{safe_name(ds)}_{safe_name(st)}_error.png"
        )
        made += [p] if p else []
    return made
