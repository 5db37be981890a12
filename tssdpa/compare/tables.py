"""Markdown and CSV tables from a results frame: methods × metrics, mean ± std over seeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.compare.common import safe_name, shown_params
from tssdpa.data.tasks import RECORDED, SYNTHETIC

__all__ = ["forecast_runs_once", "denoise_runs_once", "aggregate", "markdown_tables",
           "published_results", "write_tables", "overview", "overview_markdown"]  # fmt: skip

_DENOISE_METRICS = ("snr_gain_db", "rmse", "mae")
_FORECAST_METRICS = ("mse", "mae")
_PUBLISHED = Path(__file__).resolve().parents[2] / "datasets" / "published_ett.csv"


def published_results(path: str | Path | None = None) -> pd.DataFrame:
    """Published ETT numbers (``datasets/published_ett.csv``); empty frame when absent."""
    p = Path(path) if path is not None else _PUBLISHED
    cols = ["model", "dataset", "features", "horizon", "mse", "mae", "source"]
    return pd.read_csv(p, comment="#") if p.is_file() else pd.DataFrame(columns=cols)


#: the column where :func:`~tssdpa.compare.run_tasks` records whether it ran a row's method on
#: the first seed alone (by the task's ``seeded_data``), that run standing for every seed
RUNS_ONCE_COLUMN = "runs_once"


def forecast_runs_once(dataset: str, family: str) -> bool:
    """The harness's rule for forecast rows written without :data:`RUNS_ONCE_COLUMN`: a
    deterministic method on a dataset not named like a synthetic one ran on the first seed."""
    return dataset not in SYNTHETIC and family != "learned"


def denoise_runs_once(setting: str, family: str) -> bool:
    """The harness's rule for denoise rows written without :data:`RUNS_ONCE_COLUMN`: a
    deterministic method on a recorded pair (:data:`~tssdpa.data.tasks.RECORDED`) ran once."""
    return setting == RECORDED and family != "learned"


def _runs_once(df: pd.DataFrame, task: str) -> pd.Series:
    """Per row: whether its method was run once by design, as the harness recorded it; by the
    rule of its time for an older row. (The tables went by the name alone, and took a
    caller's own seeded series' one-seed rows for complete.)"""
    rule = forecast_runs_once if task == "forecast" else denoise_runs_once
    by = df["dataset"] if task == "forecast" else df["setting"]
    old = pd.Series([rule(b, f) for b, f in zip(by, df["family"])], index=df.index, dtype=bool)
    if RUNS_ONCE_COLUMN not in df:
        return old
    stored = df[RUNS_ONCE_COLUMN]  # True / False, NaN on an older row, "True" read as text
    return old.where(stored.isna(), stored.astype(str).str.lower().isin(("true", "1", "1.0")))


def _counted_denoise(a: pd.DataFrame) -> pd.DataFrame:
    """Denoise aggregate rows ``a`` with a method run once by design (:func:`denoise_runs_once`)
    counted as run on every seed of its dataset and setting: against a learned method's 2 seeds
    it was counted '1 seed(s)', left out of the bold marks and of the headline ('—')."""
    once = a["runs_once"].to_numpy(bool)
    if not once.any():
        return a
    full = a.groupby(["dataset", "setting"])["n_seeds"].transform("max")
    return a.assign(n_seeds=a["n_seeds"].where(~once, full))


def _counted_seeds(a: pd.DataFrame) -> pd.Series:
    """Per method of forecast aggregate rows ``a`` (one dataset), its seed count, a method run
    once by design (:func:`forecast_runs_once`) counting as run on every seed: it was counted
    '1 seed(s)' against a learned method's 2, and left out of the headline and the bold marks."""
    g = a.groupby("method", sort=False)
    n, once = g["n_seeds"].min(), g["runs_once"].all()
    return n.where(~once, n.max())


def _mode(s: pd.Series):
    s = s.dropna()
    return s.mode().iloc[0] if len(s) else ""


def aggregate(frame: pd.DataFrame, task: str) -> pd.DataFrame:
    """Mean and std over seeds per (dataset, setting, method[, horizon])."""
    df = frame[frame["task"] == task].copy() if "task" in frame else frame.iloc[:0]  # no rows
    if df.empty:
        return df
    keys = ["dataset", "setting", "method"] + (["horizon"] if task == "forecast" else [])
    metrics = list(_DENOISE_METRICS if task == "denoise" else _FORECAST_METRICS)
    metrics += ["fit_s", "apply_s"]
    for m in metrics:
        if m not in df:
            df[m] = np.nan
    if "error" not in df:
        df["error"] = ""
    df["error"] = df["error"].astype(object).where(df["error"].notna(), "")
    df["runs_once"] = _runs_once(df, task)
    if "params" in df:  # with what an auto-fitted method's fit chose (its ``fitted`` column)
        df["params"] = shown_params(df["params"], df.get("fitted"))
    g = df.groupby(keys, sort=False)
    out = g[metrics].agg(["mean", "std"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    out["n_seeds"] = g.size()
    # a seed without a score (a failed run, NaN forecasts) makes the mean unknown: averaged
    # over the others it showed one seed's score as the method's, in bold, with no word
    short = g[metrics].count().lt(out["n_seeds"], axis=0)
    for m in metrics:
        out.loc[short[m], [f"{m}_mean", f"{m}_std"]] = np.nan
    out["family"] = g["family"].first()
    out["runs_once"] = g["runs_once"].all()  # the harness's fact, read by the seed counts
    if task == "denoise":
        out["causal"] = g["causal"].first()
    else:
        out["note"] = g["note"].agg(_mode) if "note" in df else ""
        out["metric"] = g["metric"].first() if "metric" in df else "path"
    out["params"] = g["params"].agg(_mode) if "params" in df else ""
    out["errors"] = g["error"].agg(lambda s: "; ".join(sorted({e for e in s if e})))
    return out.reset_index()


def _fmt(mean, std, digits=3):
    if not np.isfinite(mean):
        return "—"
    small = 0 < abs(mean) < 10 ** (-digits + 1) / 2
    f = (lambda v: f"{v:.2e}") if small else (lambda v: f"{v:.{digits}f}")
    if np.isfinite(std) and std > 0:
        return f"{f(mean)} ± {f(std)}"
    return f(mean)


def _bold_best(table: pd.DataFrame, values: pd.DataFrame, higher: bool, groups=None, seeds=None):
    """Bold the best entry of each column of ``table`` (within each row group if given),
    among the rows run on every seed (``seeds``: row -> seed count; a mean over fewer seeds
    is no match for the others')."""
    table = table.copy()
    if seeds is not None:
        values = values.copy()
        values.loc[np.asarray(seeds) < np.max(seeds)] = np.nan
    idx_groups = (
        [values.index] if groups is None else [values.index[groups == g] for g in pd.unique(groups)]
    )
    for col in values.columns:
        for ix in idx_groups:
            v = values.loc[ix, col].astype(float)
            v = v[np.isfinite(v)]
            if v.empty:
                continue
            best = v.max() if higher else v.min()
            for r in v.index[np.isclose(v, best, rtol=0, atol=1e-12)]:
                table.loc[r, col] = f"**{table.loc[r, col]}**"
    return table


def _md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = [
        "| " + " | ".join(str(c) for c in cols) + " |",
        "| " + " | ".join("---" for _ in cols) + " |",
    ]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(str(r[c]) for c in cols) + " |")
    return "\n".join(lines)


def _denoise_tables(agg: pd.DataFrame, dataset: str) -> str:
    a = _counted_denoise(agg[agg["dataset"] == dataset])
    settings = list(pd.unique(a["setting"]))
    methods = list(pd.unique(a["method"]))
    meta = a.groupby("method", sort=False).agg(
        causal=("causal", "first"),
        family=("family", "first"),
        fit_s=("fit_s_mean", "mean"),
        apply_s=("apply_s_mean", "mean"),
        params=("params", _mode),
        errors=("errors", lambda s: "; ".join(sorted({e for e in s if e}))),
        n_seeds=("n_seeds", "min"),
    )
    order = sorted(methods, key=lambda m: (not bool(meta.loc[m, "causal"]), methods.index(m)))
    parts = [f"### {dataset}: denoising"]
    for metric, title, higher in (
        ("snr_gain_db", "SNR improvement (dB, higher is better)", True),
        ("rmse", "test RMSE (z-scored units, lower is better)", False),
    ):
        vals = pd.DataFrame(index=order, columns=settings, dtype=float)
        txt = pd.DataFrame(index=order, columns=settings, dtype=object)
        for _, r in a.iterrows():
            vals.loc[r["method"], r["setting"]] = r[f"{metric}_mean"]
            txt.loc[r["method"], r["setting"]] = _fmt(
                r[f"{metric}_mean"], r[f"{metric}_std"], 2 if metric == "snr_gain_db" else 3
            )
        groups = np.array([bool(meta.loc[m, "causal"]) for m in order])
        seeds = np.array([int(meta.loc[m, "n_seeds"]) for m in order])
        txt = _bold_best(txt.fillna("—"), vals, higher, groups, seeds)
        txt.insert(0, "method", order)
        txt.insert(1, "type", ["causal" if g else "zero-phase" for g in groups])
        if metric == "rmse":
            txt["fit s"] = [f"{meta.loc[m, 'fit_s']:.3f}" for m in order]
            txt["apply s"] = [f"{meta.loc[m, 'apply_s']:.3f}" for m in order]
        if (seeds < seeds.max()).any():
            txt["note"] = [f"{n} seed(s)" if n < seeds.max() else "" for n in seeds]
        parts.append(
            f"**{title}** — mean ± std over seeds; best per column in bold within "
            "causal and within zero-phase methods.\n\n" + _md(txt)
        )
    prm = pd.DataFrame(
        {
            "method": order,
            "family": [meta.loc[m, "family"] for m in order],
            "chosen on validation (most frequent)": [f"`{meta.loc[m, 'params']}`" for m in order],
        }
    )
    errs = [f"- {m}: {meta.loc[m, 'errors']}" for m in order if meta.loc[m, "errors"]]
    parts.append(_md(prm))
    if errs:
        parts.append("Failures:\n" + "\n".join(errs))
    return "\n\n".join(parts)


def _forecast_tables(agg: pd.DataFrame, dataset: str, setting: str, published: pd.DataFrame) -> str:
    a = agg[(agg["dataset"] == dataset) & (agg["setting"] == setting)]
    horizons = sorted(int(h) for h in pd.unique(a["horizon"]))
    methods = list(pd.unique(a["method"]))
    cols = [f"{m.upper()} h={h}" for h in horizons for m in _FORECAST_METRICS]
    vals = pd.DataFrame(index=methods, columns=cols, dtype=float)
    txt = pd.DataFrame(index=methods, columns=cols, dtype=object)
    for _, r in a.iterrows():
        for m in _FORECAST_METRICS:
            c = f"{m.upper()} h={int(r['horizon'])}"
            vals.loc[r["method"], c] = r[f"{m}_mean"]
            txt.loc[r["method"], c] = _fmt(r[f"{m}_mean"], r[f"{m}_std"])
    seeds = _counted_seeds(a)
    txt = _bold_best(txt.fillna("—"), vals, False, seeds=seeds[methods].to_numpy())
    meta = a.groupby("method", sort=False).agg(
        fit_s=("fit_s_mean", "mean"),
        apply_s=("apply_s_mean", "mean"),
        family=("family", "first"),
        note=("note", _mode),
        params=("params", _mode),
        errors=("errors", lambda s: "; ".join(sorted({e for e in s if e}))),
    )
    txt.insert(0, "method", methods)
    txt["fit s"] = [f"{meta.loc[m, 'fit_s']:.2f}" for m in methods]
    txt["predict s"] = [f"{meta.loc[m, 'apply_s']:.2f}" for m in methods]
    full = int(seeds.max())
    txt["note"] = [
        "; ".join(
            x
            for x in (
                meta.loc[m, "note"] if isinstance(meta.loc[m, "note"], str) else "",
                f"{int(seeds[m])} seed(s)" if seeds[m] < full else "",
            )
            if x
        )
        for m in methods
    ]
    pub = published[(published["dataset"] == dataset) & (published["features"] == setting)]
    for model in pd.unique(pub["model"]):
        row = {
            "method": f"{model} (published)",
            "fit s": "",
            "predict s": "",
            "note": pub[pub["model"] == model]["source"].iloc[0],
        }
        for h in horizons:
            p = pub[(pub["model"] == model) & (pub["horizon"] == h)]
            for m in _FORECAST_METRICS:
                row[f"{m.upper()} h={h}"] = f"{float(p[m].iloc[0]):.3f}" if len(p) else "—"
        txt = pd.concat([txt, pd.DataFrame([row])], ignore_index=True)
    metric = str(a["metric"].iloc[0]) if "metric" in a and len(a) else "path"
    how = (
        "averaged over steps 1..h (the DLinear protocol)"
        if metric == "path"
        else "of the h-step-ahead forecast (step h only)"
    )
    parts = [
        f"### {dataset} ({setting}): forecasting",
        "Test MSE / MAE on the z-scored series (training statistics), over all rolling "
        f"origins and channels, {how}; mean ± std over seeds; best measured "
        "value per column in bold. Rows marked *published* are quoted from the papers, "
        "not re-run.\n\n" + _md(txt.fillna("—")),
    ]
    prm = pd.DataFrame(
        {
            "method": methods,
            "chosen on validation (most frequent over horizons/seeds)": [
                f"`{meta.loc[m, 'params']}`" for m in methods
            ],
        }
    )
    parts.append(_md(prm))
    errs = [f"- {m}: {meta.loc[m, 'errors']}" for m in methods if meta.loc[m, "errors"]]
    if errs:
        parts.append("Failures:\n" + "\n".join(errs))
    return "\n\n".join(parts)


def markdown_tables(frame: pd.DataFrame, task: str, dataset: str | None = None) -> str:
    """All tables for ``task`` (optionally one dataset) as Markdown."""
    agg = aggregate(frame, task)
    if agg.empty:
        return ""
    datasets = [dataset] if dataset else list(pd.unique(agg["dataset"]))
    out = []
    pub = published_results()
    for d in datasets:
        if task == "denoise":
            out.append(_denoise_tables(agg, d))
        else:
            for s in pd.unique(agg[agg["dataset"] == d]["setting"]):
                out.append(_forecast_tables(agg, d, s, pub))
    return "\n\n".join(out)


def write_tables(frame: pd.DataFrame, out: str | Path) -> list[Path]:
    """Write per-dataset Markdown tables and aggregated CSVs into ``out``; returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for task in ("denoise", "forecast"):
        if "task" not in frame or not (frame["task"] == task).any():
            continue
        agg = aggregate(frame, task)
        p = out / f"{task}_summary.csv"
        agg.to_csv(p, index=False, float_format="%.6g")
        written.append(p)
        for d in pd.unique(agg["dataset"]):
            p = out / f"{task}_{safe_name(d)}.md"
            p.write_text(markdown_tables(frame, task, d) + "\n")
            written.append(p)
    return written


_OURS = ("projection", "learned")
#: relative difference below which the headline calls two scores a tie
_TIE_RTOL = 1e-6


def overview(frame: pd.DataFrame) -> pd.DataFrame:
    """Headline: per dataset (and horizon), the best classical method vs the best tssdpa one.

    Denoising scores are the SNR improvement averaged over the noise settings, separately for
    causal and zero-phase methods; forecasting scores are the test MSE per horizon. The winner
    is called only beyond the noise: see :func:`_duel`.
    """
    rows = []
    # a run whose every cell failed has error rows only, without the score columns: the
    # headline raised "KeyError: 'Column not found: snr_gain_db'" after the tables were written
    frame = frame.assign(**{c: np.nan for c in ("snr_gain_db", "mse") if c not in frame})
    den = aggregate(frame, "denoise")
    if not den.empty:
        den = _counted_denoise(den[den["method"] != "noisy"])
        raw = frame[frame["task"] == "denoise"]
        for (ds, causal), g in den.groupby(["dataset", "causal"], sort=False):
            r = raw[(raw["dataset"] == ds) & (raw["causal"] == causal)]
            what = "denoise " + ("causal" if causal else "zero-phase")
            rows.append(_denoise_duel(ds, what, g, r))
    fc = aggregate(frame, "forecast")
    if not fc.empty:
        raw = frame[frame["task"] == "forecast"]
        for (ds, st, h), g in fc.groupby(["dataset", "setting", "horizon"], sort=False):
            s = _on_every_seed(g.set_index("method")["mse_mean"], _counted_seeds(g))
            fam = g.set_index("method")["family"]
            r = raw[(raw["dataset"] == ds) & (raw["setting"] == st) & (raw["horizon"] == h)]
            once = g.set_index("method")["runs_once"].get
            seeds = _on_each_seed(r.groupby(["method", "seed"])["mse"].mean(), once)
            what = f"forecast {st} h={int(h)}"
            rows.append(_duel(ds, what, "MSE", s, fam, higher=False, seeds=seeds, once=once))
            if "n_origins" in r:  # --max-origins caps the costly methods only: say so
                n = r.groupby("method")["n_origins"].max()
                pair = [n.get(rows[-1][k]) for k in ("best classical", "best tssdpa")]
                if pair[0] != pair[1] and all(pd.notna(pair)):
                    rows[-1]["winner"] += f" (on {pair[0]:.0f} vs {pair[1]:.0f} origins)"
    return pd.DataFrame(rows)


def _denoise_duel(ds: str, what: str, g: pd.DataFrame, raw: pd.DataFrame) -> dict:
    """:func:`_duel` of the denoise aggregate rows ``g`` (one dataset, causal or not; ``raw``
    its per-seed rows), each method's SNR gain averaged over noise settings both duellists
    have.

    A method's mean over its own settings is not comparable with another's over others (quick
    runs train learned methods at 10 dB only, where gains are large; a failed setting drops
    out of a mean). So each side picks its best among its methods that scored every setting
    of the table -- among all of them, over the settings they share, where none did -- and the
    two picks are compared over the settings both have, which the metric names when they are
    fewer than the table's.
    """
    n = g.groupby("method")["n_seeds"].min()
    g = g[g["method"].isin(n.index[n == n.max()])]  # run on every seed (_on_every_seed)
    g = g[np.isfinite(g["snr_gain_db_mean"].astype(float))]
    fam = g.groupby("method")["family"].first()
    have = {m: set(v) for m, v in g.groupby("method")["setting"]}
    table = set(pd.unique(g["setting"]))

    def mean_over(methods, settings) -> pd.Series:
        rows = g[g["method"].isin(methods) & g["setting"].isin(settings)]
        return rows.groupby("method")["snr_gain_db_mean"].mean()

    picks = []
    for ours in (True, False):
        side = [m for m in have if (fam[m] in _OURS) == ours]
        pool = [m for m in side if have[m] == table] or side
        if pool:
            common = set.intersection(*(have[m] for m in pool))
            means = mean_over(pool, common)
            picks += [means.idxmax()] if len(means) else []
    common = set.intersection(*(have[m] for m in picks)) if picks else set()
    s = mean_over(picks, common)
    r = raw[raw["method"].isin(picks) & raw["setting"].isin(common)]
    ran_once = g[g["setting"].isin(common)].groupby("method")["runs_once"].all()
    once = lambda m: bool(ran_once.get(m, False))  # noqa: E731
    seeds = _on_each_seed(r.groupby(["method", "seed"])["snr_gain_db"].mean(), once)
    metric = "mean SNR gain dB"
    if len(picks) == 2 and common != table:
        over = [x for x in pd.unique(g["setting"]) if x in common]
        metric += f" over {', '.join(over)} (what both have)"
    return _duel(ds, what, metric, s, fam, higher=True, seeds=seeds, once=once)


def _on_every_seed(scores: pd.Series, n_seeds: pd.Series) -> pd.Series:
    """The scores of the methods run on every seed: a mean over fewer (a quick-mode learned
    method's seed 0) named a method best over one that lost only on the harder seed."""
    return scores[n_seeds.reindex(scores.index) == n_seeds.max()]


def _on_each_seed(seeds: pd.Series, once) -> pd.Series:
    """Per-seed scores (method, seed) with the one run of a method run once by design
    (``once(method)``: :func:`forecast_runs_once`, :func:`denoise_runs_once`) standing for
    every seed, so that it pairs with the others'."""
    every = sorted(pd.unique(seeds.index.get_level_values("seed")))
    parts = {
        m: pd.Series(v.iloc[0], index=every) if once(m) and len(v) == 1 else v.droplevel("method")
        for m, v in seeds.groupby(level="method", sort=False)
    }
    return pd.concat(parts, names=["method", "seed"]) if parts else seeds


def _duel(ds, what, metric, s, fam, higher, seeds=None, z: float = 2.0, once=None):
    """The best classical and the best tssdpa method of ``s`` (method -> mean score), and the
    winner: ``"tie"`` when the scores are equal up to rounding (a hybrid whose correction is
    off is its linear base), or when the paired difference over the seeds both were run on
    is within ``z`` standard errors of zero (log ratios for errors, differences for dB gains);
    a difference seen on one seed only is marked ``"(1 run)"``. ``seeds``: the per-seed
    scores, indexed by (method, seed); two methods that ran once (``once(method)``) are one run
    whatever others ran on (copied onto each seed, their differences had no spread)."""
    s = s.dropna()
    ours = s[[fam.get(m) in _OURS for m in s.index]]
    theirs = s[[fam.get(m) not in _OURS for m in s.index]]

    def pick(v):
        if v.empty:
            return "—", np.nan
        m = v.idxmax() if higher else v.idxmin()
        return m, float(v[m])

    cm, cv = pick(theirs)
    om, ov = pick(ours)
    if not (np.isfinite(cv) and np.isfinite(ov)):
        win = "—"
    elif abs(ov - cv) <= _TIE_RTOL * max(abs(cv), abs(ov)):
        win = "tie"  # e.g. a hybrid whose correction is off: its linear base, up to rounding
    else:
        win = "tssdpa" if (ov > cv if higher else ov < cv) else "classical"
        if seeds is not None:
            paired = pd.concat([seeds.xs(om), seeds.xs(cm)], axis=1, join="inner").dropna()
            a, b = paired.iloc[:, 0].to_numpy(), paired.iloc[:, 1].to_numpy()
            # errors span orders of magnitude over seeds: compare them as log ratios (dB
            # gains are logarithmic already)
            d = a - b if higher else np.log(np.maximum(a, 1e-300) / np.maximum(b, 1e-300))
            if len(d) < 2 or (once is not None and once(om) and once(cm)):
                win += " (1 run)"
            elif abs(d.mean()) <= z * d.std(ddof=1) / np.sqrt(len(d)):
                win = "tie"  # inside the spread over seeds
    return {
        "dataset": ds,
        "comparison": what,
        "metric": metric,
        "best classical": cm,
        "classical": cv,
        "best tssdpa": om,
        "tssdpa": ov,
        "winner": win,
    }


def overview_markdown(frame: pd.DataFrame) -> str:
    """:func:`overview` as a Markdown table."""
    ov = overview(frame)
    if ov.empty:
        return ""
    ov = ov.copy()
    for c in ("classical", "tssdpa"):
        ov[c] = [f"{v:.4g}" if np.isfinite(v) else "—" for v in ov[c]]
    return _md(ov)
