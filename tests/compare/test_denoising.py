"""Denoising evaluation: every denoiser through the harness, and no test data in the choice."""

import numpy as np
import pytest

from tssdpa.compare import MethodSpec, available_methods, evaluate_denoiser, get_method
from tssdpa.data import Split
from tssdpa.data.tasks import DenoiseTask

CLASSICAL = [
    m
    for m in available_methods("denoise")
    if get_method(m, "denoise").family not in ("projection", "learned")
]


@pytest.mark.parametrize("name", CLASSICAL)
def test_every_classical_denoiser_runs_through_the_harness(name, small_denoise):
    row, trace = evaluate_denoiser(
        get_method(name, "denoise"), small_denoise, budget=2, keep_trace=True
    )
    assert np.isfinite(row["rmse"]) and np.isfinite(row["snr_gain_db"])
    assert trace.shape == (80, 1)
    assert row["n_configs"] <= 2 and row["params"].startswith("{")
    assert row["snr_in_db"] == pytest.approx(10.0, abs=1.0)
    assert row["causal"] == get_method(name, "denoise").causal


@pytest.mark.parametrize("name", ["projection", "projection_zp"])
def test_projection_denoiser_plugs_into_the_harness(name, small_denoise):
    spec = get_method(name, "denoise")
    assert spec.family == "projection"
    row, _ = evaluate_denoiser(spec, small_denoise, budget=1)
    assert np.isfinite(row["rmse"]) and row["causal"] == spec.causal


class _Spy:
    """Records every array passed to fit / filter."""

    log: list = []

    def __init__(self, k=1):
        self.k = k
        self.causal = True

    def fit(self, x, target=None):
        _Spy.log.append(("fit", np.array(x, copy=True)))
        return self

    def filter(self, x):
        _Spy.log.append(("filter", np.array(x, copy=True)))
        return np.asarray(x) * 0.0 + np.nanmean(x) / self.k


def test_denoise_split_never_leaks_test_into_fit_or_selection():
    rng = np.random.default_rng(0)
    clean = rng.standard_normal((300, 1))
    noisy = clean + 0.1
    sp = Split(180, 240, 300)
    task = DenoiseTask("spy", clean, noisy, sp, "gaussian", 10.0, 0, warmup=0)
    spec = MethodSpec("spy", "denoise", _Spy, lambda c: [{"k": 1}, {"k": 2}])
    _Spy.log = []
    evaluate_denoiser(spec, task)
    fits = [a for k, a in _Spy.log if k == "fit"]
    assert len(fits) == 2 and all(np.array_equal(a, noisy[:180]) for a in fits)
    filt = [a for k, a in _Spy.log if k == "filter"]
    # selection only ever filtered validation data; the test part is filtered once at the end
    assert all(np.array_equal(a, noisy[180:240]) for a in filt[:-1])
    assert np.array_equal(filt[-1], noisy[240:])


def test_denoise_warmup_feeds_earlier_samples_as_state_only():
    clean = np.arange(300, dtype=float)[:, None]
    sp = Split(180, 240, 300)
    task = DenoiseTask("spy", clean, clean.copy(), sp, "gaussian", 10.0, 0, warmup=16)
    _Spy.log = []
    row, trace = evaluate_denoiser(MethodSpec("spy", "denoise", _Spy), task, keep_trace=True)
    filt = [a for k, a in _Spy.log if k == "filter"]
    assert np.array_equal(filt[-1], clean[240 - 16 :])  # 16 samples of state before the test
    assert trace.shape == (60, 1)  # scored on the test part only


def test_a_gap_in_the_clean_series_is_no_sample_to_score_and_the_choice_is_still_made():
    # one missing clean value in the validation part made every configuration's validation
    # RMSE NaN (inf): the first configuration was kept, and the test scores were NaN
    from dataclasses import replace

    from tssdpa.data.tasks import denoise_tasks

    task = denoise_tasks("sinusoids", seeds=(0,), settings=[("gaussian", 10.0)], n=400)[0]
    clean, noisy = task.clean.copy(), task.noisy.copy()
    clean[[250, 300, 350]] = noisy[[250, 300, 350]] = np.nan  # validation 240..320, test ..400
    gappy = replace(task, clean=clean, noisy=noisy)
    spec = get_method("savgol_zp", "denoise")
    row, trace = evaluate_denoiser(spec, gappy, budget=8, keep_trace=True)
    full, _ = evaluate_denoiser(spec, task, budget=8)
    assert row["params"] == full["params"]
    assert all(np.isfinite(row[k]) for k in ("val_rmse", "rmse", "mae", "snr_gain_db"))
    known = ~np.isnan(clean[320:])
    want = np.sqrt(np.mean((trace[known] - clean[320:][known]) ** 2))
    assert row["rmse"] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    "name, n_configs",
    [("wiener_fir", 3), ("wiener_fir_zp", 3), ("projection_residual", 2),
     ("projection_residual_zp", 2)],
)  # fmt: skip
def test_a_short_series_keeps_the_wiener_fir_windows_it_can_fit(name, n_configs):
    # 60 training samples: the 64 (65) tap window could not be fitted and failed the whole
    # method, though 8, 16 and 32 taps fit (16 under a residual projection); the grid of a
    # long series is unchanged
    c = np.sin(np.arange(100) / 6.0)[:, None]
    noisy = c + 0.3 * np.random.default_rng(0).standard_normal(c.shape)
    task = DenoiseTask("short", c, noisy, Split(60, 80, 100), "gaussian", 10.0, 0)
    spec = get_method(name, "denoise")
    row, _ = evaluate_denoiser(spec, task, budget=8)
    assert np.isfinite(row["rmse"]) and row["n_configs"] == n_configs
    assert len(spec.grid({"n_train": 600})) == 4


@pytest.mark.parametrize("quick", [True, False])
def test_a_short_series_sizes_the_learned_filters_training_windows_to_fit(quick):
    # 60 training samples (a 100-row --file): windows of 32 (quick) or 128 samples left no
    # room for the filter's training part, gap and validation tail -- every cell an [error]
    # "x has 60 samples: too short ..."; a series long enough keeps its grid as it was
    c = np.sin(np.arange(100) / 6.0)[:, None]
    noisy = c + 0.3 * np.random.default_rng(0).standard_normal(c.shape)
    task = DenoiseTask("short", c, noisy, Split(60, 80, 100), "gaussian", 10.0, 0, quick=quick)
    spec = get_method("learned_projection", "denoise")
    row, _ = evaluate_denoiser(spec, task, budget=1)
    assert np.isfinite(row["rmse"]) and '"seq_len": 20' in row["params"]
    long = {"n_train": 600, "quick": quick}
    assert [g.get("seq_len") for g in spec.grid(long)] == ([32] if quick else [None] * 4)
