"""Glitches (tssdpa.estimators.glitches): rare samples far out of line with those around them,
which a zero-phase ProjectionFilter treats as missing (``glitches="missing"``, the default)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

from tssdpa.data import load_ett, load_imu
from tssdpa.data.synthetic import make_signal
from tssdpa.estimators.glitches import glitch_mask
from tssdpa.estimators.input_notes import GlitchWarning, HeldReadingsWarning, SpikeWarning
from tssdpa.filters import ProjectionFilter


def _noisy(name="mackey_glass", n=1500, noise=0.316, seed=1):
    clean = np.asarray(make_signal(name, n, 0), dtype=float)
    clean = (clean - clean.mean()) / clean.std()
    return clean, clean + noise * np.random.default_rng(seed).normal(size=n)


def test_a_glitch_is_found_and_nothing_else_on_noisy_smooth_signals():
    for name in ("lorenz", "mackey_glass", "pulse_train", "sinusoids"):
        for noise in (0.03, 0.3, 1.0):
            _, x = _noisy(name, noise=noise)
            assert not glitch_mask(x[:, None]).any(), (name, noise)
            x[[300, 301, 900]] += 300.0  # two in a row and one alone
            np.testing.assert_array_equal(np.flatnonzero(glitch_mask(x[:, None])), [300, 301, 900])


def test_frequent_spikes_steps_held_readings_and_events_are_not_glitches():
    rng = np.random.default_rng(2)
    t = np.arange(4000)
    impulsive = 0.1 * rng.normal(size=t.size) + (rng.random(t.size) < 0.02) * 10.0
    steps = np.repeat(rng.normal(size=40), 100)
    events = (t % 700 == 0).astype(float)  # 6 events in a channel of zeros
    x = np.column_stack([impulsive, steps, events, np.full(t.size, np.nan)])
    assert not glitch_mask(x).any()


# slow-only: 3 default zero-phase fits of 1500 samples (~11 s; on 1000 the margin of 1.1 goes);
# test_spikes.py's self-supervised fit checks the default fit treating samples as missing
@pytest.mark.slow
def test_the_zero_phase_fit_filters_as_if_the_glitch_were_not_there():
    """One glitch of 300 standard deviations made the non-local filter average it into every
    row that took its row as a key, and the fit fell back on windowed filters: the error
    away from the glitch rose by a quarter. Missing, it changes next to nothing, and its own
    sample gets an estimate near the clean value."""
    clean, x = _noisy()
    glitched = x.copy()
    glitched[700] += 300.0
    away = np.abs(np.arange(len(x)) - 700) > 200

    def error(y):
        return np.sqrt(np.mean((y - clean)[away] ** 2))

    base = error(ProjectionFilter(causal=False).fit(x).filter(x))
    with pytest.warns(GlitchWarning, match="x channel 0 has 1 glitch .the first at sample 700"):
        f = ProjectionFilter(causal=False).fit(glitched)
    with pytest.warns(GlitchWarning):
        y = f.filter(glitched)
    kept = ProjectionFilter(causal=False, glitches=None).fit(glitched).filter(glitched)
    assert error(y) < 1.05 * base < error(kept) / 1.1
    assert abs(y[700] - clean[700]) < 1.0 < abs(kept[700] - clean[700])
    assert glitched[700] == x[700] + 300.0  # the input is not changed


def test_the_warnings_count_samples_in_the_series_given_and_filter_tells_them_all():
    _, x = _noisy(n=6000)
    x2 = np.column_stack([x, x])
    x2[:4500, 1] = np.nan  # the fit block is then rows 2000-5999
    x2[[3000, 5500], 0] += 300.0
    # the settings given: the warnings, not the search, are checked
    f = ProjectionFilter(causal=False, window=[4, 8], embedding=1, degree=0, local_window=None)
    with pytest.warns(GlitchWarning, match="has 2 glitches .the first at sample 3,000"):
        f.fit(x2)
    later = x2.copy()
    later[[100, 3000, 5500], 0] = x2[[100, 3000, 5500], 0] + [300.0, 0.0, 0.0]
    with pytest.warns(GlitchWarning, match="has 3 glitches .the first at sample 100"):
        f.filter(later)


def test_the_mask_in_blocks_of_rows_is_the_mask_in_one(monkeypatch):
    from tssdpa.estimators import glitches

    _, x = _noisy(n=3000)
    x2 = np.column_stack([x, -x])
    x2[[0, 1, 1500, 2999], 0] += 300.0
    x2[[63, 64, 65], 1] -= 300.0
    whole = glitch_mask(x2)
    monkeypatch.setattr(glitches, "_ROWS", 64)
    np.testing.assert_array_equal(glitch_mask(x2), whole)
    assert whole.sum() == 7


def test_a_causal_filter_keeps_glitches_as_its_stream_does():
    # it cannot look at the sample after, and its offline output equals its streaming one
    _, x = _noisy(n=600)
    x[300] += 300.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", GlitchWarning)
        f = ProjectionFilter(causal=True).fit(x)
    y_kept = ProjectionFilter(causal=True, glitches=None, **f.best_params_).filter(x)
    np.testing.assert_array_equal(f.filter(x), y_kept)
    y_stream, _ = f.filter(x, zi=f.initial_state())
    np.testing.assert_allclose(y_stream[50:], f.filter(x)[50:], rtol=0, atol=1e-12)


def test_a_saved_zero_phase_filter_keeps_the_setting_and_an_older_file_keeps_glitches(
    tmp_path, edit_config
):
    _, x = _noisy(n=600)
    x[300] += 300.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GlitchWarning)
        f = ProjectionFilter(causal=False, window=[4, 8], local_window=None).fit(x)
    f.save(tmp_path / "f")
    g = ProjectionFilter.load(tmp_path / "f")
    assert g.glitches == "missing"
    with pytest.warns(GlitchWarning, match="sample 300"):  # the loaded filter finds it too
        np.testing.assert_array_equal(g.filter(x), f.filter(x))
    edit_config(tmp_path / "f", lambda cfg: cfg["params"].pop("glitches"))
    old = ProjectionFilter.load(tmp_path / "f")  # saved before the parameter: as it filtered
    assert old.glitches is None
    f.glitches = None
    np.testing.assert_array_equal(old.filter(x), f.filter(x))


def test_a_bad_glitches_value_is_refused_naming_it():
    with pytest.raises(ValueError, match="glitches"):
        ProjectionFilter(glitches="drop").fit(np.sin(np.arange(200) / 5.0))


@pytest.mark.data("ett/ETTm2.csv.gz")
def test_on_the_shared_recordings_the_glitches_are_ettm2_ots_four_dropouts():
    found = {}
    for name in ("ETTh1", "ETTh2", "ETTm1", "ETTm2"):
        df = load_ett(name)
        mask = glitch_mask(df.to_numpy())
        found.update({(name, df.columns[c]): np.flatnonzero(mask[:, c]).tolist()
                      for c in np.flatnonzero(mask.any(axis=0))})  # fmt: skip
    for name in ("imu_fusion", "imu_gait"):
        try:
            assert not glitch_mask(load_imu(name).to_numpy()).any(), name
        except FileNotFoundError:
            pass
    assert found == {("ETTm2", "OT"): [24532, 30100, 31648, 31746]}
    ot = load_ett("ETTm2")["OT"].to_numpy()
    assert ot[24532] == 0.0 and ot[24531] > 13  # a reading of 0 among 13.3s


def test_a_steep_nearly_noise_free_trend_has_no_glitch_and_its_glitches_are_found():
    """On an accelerating, nearly noise-free ramp (an encoder's position) a step of the trend
    is up to 120 noise levels. At the ends, where the window is cut to one side, the plain
    running median lay 2 steps off the sample: the last samples were taken for glitches and
    filled off the trace, and they set the typical distance so high that a glitch of 1000
    noise levels inside went unseen. A cut window on a trend now takes its values carried to
    its centre along its median step, and the typical distance is at least the typical step
    (a glitch is 30 of them off: on a clean ramp the distances are all 0). A glitch moves the
    median of its neighbours' windows a rank, a step of the trend: up to 4 of them on one side
    went with it; each is judged again without the glitch now, and is on the trend."""
    t = np.arange(600.0)
    clean = (t / 100) ** 2
    ramp = clean + 0.001 * np.random.default_rng(0).normal(size=t.size)

    def found(x):
        return np.flatnonzero(glitch_mask(x[:, None])).tolist()

    assert found(ramp) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error", GlitchWarning)
        y = ProjectionFilter(causal=False).fit(ramp).filter(ramp)
    assert np.abs(y - clean).max() < 0.005  # it was 0.028 at the last sample
    inside, start, last = ramp.copy(), ramp.copy(), ramp.copy()
    inside[300] += 3.0  # 3000 noise levels, 50 steps of the trend there
    start[[0, 1]] = 3.0  # two in a row at the start (0 to 0.0001 there)
    last[-1] = 0.0  # a dropout of the last sample
    assert found(start) == [0, 1]
    assert found(inside) == [300]  # [300, 301, 302, 303, 304] before
    assert found(last) == [599]  # [596, 597, 598, 599] before
    pair = ramp.copy()
    pair[[300, 301]] += 3.0  # a run of two stays whole, either judged first
    assert found(pair) == [300, 301]


def test_the_mask_is_its_plain_running_median_reference_with_gaps():
    """The fast running median (a partition; at the ends the 9 nearest samples; where a window
    holds NaN or is not centred, the median of its
    values carried to its centre along the median of its steps) gives the mask of the obvious
    loop over every window."""
    from tssdpa.estimators.glitches import GLITCH_HALF, GLITCH_REACH

    _, x = _noisy(n=800)
    x2 = np.column_stack([x, x[::-1]])
    x2[[10, 400, 795], 0] += 300.0
    x2[[3, 500], 1] -= 300.0
    x2[200:203, 0] = np.nan  # a gap beside which windows hold NaN
    x2[401, 1] = np.nan
    T = len(x2)
    distance = np.full(x2.shape, np.nan)
    for t in range(T):
        # the window's positions: centred, at the ends the 9 nearest
        at = min(max(t - GLITCH_HALF, 0), T - 2 * GLITCH_HALF - 1) + np.arange(2 * GLITCH_HALF + 1)
        inside = (at >= 0) & (at < T)
        for c in range(2):
            window = np.full(at.size, np.nan)
            window[inside] = x2[at[inside], c]
            if not np.isfinite(window).any():
                continue
            if np.isnan(window).any() or at[0] != t - GLITCH_HALF:  # carried to t along the
                # median step
                steps = [b - a for a, b in zip(window[:-1], window[1:]) if np.isfinite(a - b)]
                slope = np.median(steps) if steps else 0.0
                window = window + slope * (t - at)
            distance[t, c] = abs(x2[t, c] - np.nanmedian(window))
    typical = np.nanquantile(distance, 0.99, axis=0)
    with np.errstate(invalid="ignore"):
        expected = (distance > GLITCH_REACH * typical) & (typical > 0)
    np.testing.assert_array_equal(glitch_mask(x2), expected)
    assert expected.sum() == 5


def test_each_thread_collects_the_notes_it_told():
    from concurrent.futures import ThreadPoolExecutor

    from tssdpa.estimators.input_notes import collected

    def fit(spike_at):
        _, x = _noisy(seed=spike_at)
        x[spike_at] += 300.0
        with warnings.catch_warnings(), collected() as notes:
            warnings.simplefilter("ignore")
            ProjectionFilter(causal=False, window=[16], embedding=[1], degree=[0]).fit(x)
        return [n.found for n in notes]

    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(fit, [300, 500, 700, 900] * 2))
    assert found == [[{0: (1, at)}] for at in [300, 500, 700, 900] * 2]


def test_a_quiet_collection_warns_of_nothing_even_while_other_threads_restore_the_filters():
    """The batch filters files in threads; each thread's ``catch_warnings`` block restores the
    process's filters when it ends, while another thread may still be fitting. A quiet
    collection keeps its notes out of the warnings machinery, so none reaches stderr."""
    from tssdpa.estimators.input_notes import collected, tell

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")  # what another thread's block may have restored
        with collected(quiet=True) as notes:
            tell(GlitchWarning({0: (1, 5)}))
            with collected() as inner:  # a loud block nested inside warns again
                tell(GlitchWarning({0: (1, 7)}))
            tell(GlitchWarning({0: (1, 9)}))
    assert [n.found for n in notes] == [{0: (1, 5)}, {0: (1, 9)}]
    assert [n.found for n in inner] == [{0: (1, 7)}]
    assert [w.message.found for w in shown] == [{0: (1, 7)}]


def test_finding_glitches_in_threads_leaves_the_processs_warning_filters_as_they_were():
    """Gaps and an empty channel give NaN without a warning to silence: a catch_warnings
    block run in threads (the batch's fits) had left RuntimeWarning ignored for good."""
    from concurrent.futures import ThreadPoolExecutor

    x = np.random.default_rng(0).normal(size=(5000, 3))
    x[::50, 1] = np.nan
    x[:, 2] = np.nan
    x[700, 0] += 500.0
    before = list(warnings.filters)
    with ThreadPoolExecutor(4) as pool:
        masks = list(pool.map(lambda _: [glitch_mask(x) for _ in range(10)], range(8)))
    assert warnings.filters == before
    for mask in (m for ms in masks for m in ms):
        np.testing.assert_array_equal(np.argwhere(mask), [[700, 0]])


def test_a_note_points_at_the_users_line_however_deep_the_fit_told_it():
    _, x = _noisy(n=600)
    x2 = np.column_stack([x, np.sin(np.arange(600) / 3.0)])
    x2[300, 0] += 300.0
    for independent in (False, True):  # told by the joint fit, and by a fit of one channel
        with pytest.warns(GlitchWarning) as told:
            ProjectionFilter(causal=False, window=[4], channel_independent=independent).fit(x2)
        assert {w.filename for w in told if issubclass(w.category, GlitchWarning)} == {__file__}


def test_nested_channel_blocks_compose_and_a_silenced_block_stays_silent():
    from tssdpa.estimators.input_notes import as_channel, collected, tell

    with warnings.catch_warnings(), collected() as notes:
        warnings.simplefilter("ignore")
        with as_channel(2), as_channel(0):
            tell(GlitchWarning({0: (1, 5)}))
        with as_channel(None), as_channel(1):
            tell(GlitchWarning({0: (1, 5)}))
        with as_channel(1), as_channel(None):
            tell(GlitchWarning({0: (1, 5)}))
    assert [n.found for n in notes] == [{2: (1, 5)}]


def test_a_note_from_a_fit_run_in_a_thread_points_at_the_fit_not_the_thread_machinery():
    from concurrent.futures import ThreadPoolExecutor

    _, x = _noisy(n=600)
    x[300] += 300.0
    f = ProjectionFilter(causal=False, window=[4])
    with pytest.warns(GlitchWarning) as told, ThreadPoolExecutor(1) as pool:
        pool.submit(f.fit, x).result()
    files = {w.filename for w in told if issubclass(w.category, GlitchWarning)}
    assert len(files) == 1 and files.pop().endswith("projection.py")


@pytest.mark.parametrize(
    "note",
    [
        GlitchWarning({0: (1, 5), 2: (3, 40)}),
        SpikeWarning({1: (4, 0.02)}),
        HeldReadingsWarning({0: 0.9}),
    ],  # fmt: skip
    ids=lambda n: type(n).__name__,
)
def test_a_note_is_rebuilt_from_its_args_and_by_pickle(note):
    """Process pools and pytest-xdist send a warning as its class and args, or pickled: both
    give back the same note, saying the same thing."""
    for rebuilt in (type(note)(*note.args), pickle.loads(pickle.dumps(note))):
        assert type(rebuilt) is type(note)
        assert str(rebuilt) == str(note) == note.told()
        assert rebuilt.told(["a", "b", "c"]) == note.told(["a", "b", "c"])


@pytest.mark.parametrize("ramp", ["linspace(0, 1)", "0.1 t", "t + 0.5"])
def test_on_a_clean_ramp_a_glitch_is_found_and_a_reading_between_gaps_is_not_one(ramp):
    """A noise-free ramp sits on its running median: every distance is 0, and so was the
    typical distance (no glitch could be found) but for the cut windows at the ends, which
    the trend rule made 0 too; the typical step is its floor. A smooth sine with gaps: the
    readings between gaps, whose cut windows are no trend, are not glitches."""
    t = np.arange(600.0)
    x = {"linspace(0, 1)": t / 599, "0.1 t": 0.1 * t, "t + 0.5": t + 0.5}[ramp]
    assert not glitch_mask(x[:, None]).any()
    x[300] += 100 * (x[1] - x[0])
    assert np.flatnonzero(glitch_mask(x[:, None])).tolist() == [300]
    for seed in (35, 39):  # two draws whose isolated readings were taken for glitches
        rng = np.random.default_rng(seed)
        t = np.arange(2000.0)
        sine = 10 * np.sin(t / 50) + 0.001 * rng.normal(size=t.size)
        for _ in range(30):
            a = rng.integers(0, 1990)
            sine[a : a + rng.integers(1, 20)] = np.nan
        assert not glitch_mask(sine[:, None]).any()
    # a floor of 30 steps instead of one hid glitches of 1,400 noise levels on a smooth,
    # finely sampled sine (84 before the floor)
    t = np.arange(3000.0)
    smooth = np.sin(2 * np.pi * t / 1000) + 1e-4 * np.random.default_rng(0).normal(size=t.size)
    smooth[1234] += 0.02  # 200 noise levels, 3 steps of the sine
    assert np.flatnonzero(glitch_mask(smooth[:, None])).tolist() == [1234]
    # an encoder at constant speed, stopping, turning back: its turns are on the line of the
    # counts on one side (the step floor alone took them for glitches); a glitch is on neither
    counts = np.cumsum(np.repeat([3, 0, -2, 5], 500)).astype(float)
    assert not glitch_mask(counts[:, None]).any()
    counts[1250] += 100.0
    assert np.flatnonzero(glitch_mask(counts[:, None])).tolist() == [1250]
    # lines through samples whose window a gap cuts clear nothing: the run of three after the
    # gap passed the cut windows' medians as unflagged, and its last was on their line
    ramp = 0.5 * np.arange(300.0)
    ramp[55:60], ramp[60:63] = np.nan, ramp[60:63] + 50
    assert 62 in np.flatnonzero(glitch_mask(ramp[:, None]))


@pytest.mark.parametrize("start", [0, 1, 2])
def test_a_run_of_three_or_four_glitches_at_an_end_is_found_and_nothing_beside_it(start):
    """At the ends the window was cut to 5-7 samples, and a run of 3 glitches among them set
    their median: a logger's first 3 readings at 0 on a signal at 5 flagged the clean sample
    before them or missed the first. The window there is the 9 samples nearest."""
    t = np.arange(600.0)
    x = 5 + np.sin(t / 20) + 0.01 * np.random.default_rng(1).normal(size=t.size)
    for run in (3, 4):
        for y, where in ((x.copy(), slice(start, start + run)), (x[::-1].copy(), None)):
            at = (
                np.arange(start, start + run)
                if where
                else np.arange(599 - start - run + 1, 600 - start)
            )
            y[at] = 0.0
            assert np.flatnonzero(glitch_mask(y[:, None])).tolist() == at.tolist(), (run, start)


@pytest.mark.parametrize("n", [100, 150, 200, 1000])
def test_a_clean_steps_or_events_last_samples_are_no_glitches_however_short_the_series(n):
    """A channel on its running median but for 1 or 2 samples in 100 has a typical distance
    of 0 at every length: interpolated, the 99th percentile of 100-200 samples was a share of
    its largest distances, and a clean square wave's last sample (a new level starting) or a
    2-sample event among 200 zeros were taken for glitches, and the zero-phase fit of the
    clean square changed its last sample by the whole step."""
    for k in (1, 2):
        end, event = np.zeros(n), np.zeros(n)
        end[n - k :], event[n // 2 : n // 2 + k] = 1.0, 1.0
        assert not glitch_mask(np.column_stack([end, event])).any(), k


def test_the_zero_phase_fit_gives_a_short_clean_square_wave_back_with_its_last_step():
    """Its last sample, +1 after 50 samples at -1, was taken for a glitch and filled in."""
    square = np.sign(np.sin(2 * np.pi * np.arange(100) / 100 + 0.1))  # its last sample: +1
    with warnings.catch_warnings():
        warnings.simplefilter("error", GlitchWarning)
        f = ProjectionFilter(causal=False).fit(square)
        np.testing.assert_allclose(f.filter(square), square, atol=1e-6)


def test_a_causal_fit_leaves_rare_glitches_out_of_its_noise_level_and_scores_and_says_so():
    # three glitches of 1e4 in 1000 samples of a unit sine (0.3%) raised the causal fit's noise
    # level from 0.05 to 516 (heavy tails): it chose a 128-sample moving average, which erased
    # the sine and spread each glitch as a plateau of 78 over the 128 samples after it, unsaid
    from tssdpa.estimators.input_notes import CausalGlitchWarning

    t = np.arange(1000)
    clean = np.sin(t * 0.05)
    x = clean + 0.05 * np.random.default_rng(7).normal(size=1000)
    glitches = [367, 663, 960]
    x[glitches] = 1e4
    told = r"x channel 0 has 3 glitches \(the first at sample 367\).*left out of the fit"
    with pytest.warns(CausalGlitchWarning, match=told):
        f = ProjectionFilter(causal=True).fit(x)
    assert f.noise_level_[0] < 0.1
    y = f.filter(x)
    assert (y[glitches] == x[glitches]).all()  # kept, as the stream keeps them
    off = np.ones(1000, dtype=bool)  # the glitch and the patterns that hold it: passed on
    for g in glitches:
        off[g : g + f.embedding_] = False
    assert np.sqrt(np.mean((y[off] - clean[off]) ** 2)) < 0.05
    y_stream, _ = f.filter(x, zi=f.initial_state())
    np.testing.assert_allclose(y_stream[50:], y[50:], rtol=0, atol=1e-12)
