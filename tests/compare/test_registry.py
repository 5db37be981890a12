"""The registry, and the one list of methods with their grids."""

import ast
import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import tssdpa.filters
from tssdpa.baselines import MovingAverageFilter
from tssdpa.compare import (
    MethodSpec,
    available_methods,
    get_method,
    register,
    search_space,
)
from tssdpa.compare.registry import _REGISTRY
from tssdpa.estimators.base import Denoiser

PACKAGE = Path(__file__).resolve().parents[2] / "tssdpa"

#: a context like the default comparison's (sunspots: short training part, a period)
CTXS = [
    {"n_train": 1200, "period": None, "lookback": 64, "max_horizon": 25, "quick": False},
    {"n_train": 185, "period": 11, "lookback": 24, "max_horizon": 8, "quick": True},
    {"n_train": 8640, "period": 24, "lookback": 336, "max_horizon": 720, "quick": False},
]


def test_registry_imports_no_method():
    """The registry holds the registry alone; every method lives in compare/methods.py."""
    tree = ast.parse((PACKAGE / "compare" / "registry.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert not [m for m in imported if m.startswith("tssdpa")]
    assert importlib.util.find_spec("tssdpa.compare.projection_methods") is None


def test_every_method_is_registered_on_import():
    denoise = available_methods("denoise")
    forecast = available_methods("forecast")
    for name in ("noisy", "butterworth", "kalman_level_zp", "wavelet", "projection"):
        assert name in denoise
    for name in ("projection_zp", "projection_residual", "projection_residual_zp"):
        assert name in denoise
    assert "learned_projection" in denoise
    for name in ("naive", "autoreg", "dlinear", "projection", "projection_residual"):
        assert name in forecast
    assert "learned_projection" in forecast
    assert set(available_methods(family="learned")) == {"learned_projection"}
    assert available_methods("denoise", family="projection") == [
        "projection",
        "projection_zp",
        "projection_residual",
        "projection_residual_zp",
    ]


@pytest.mark.parametrize(
    "task,name", [(t, n) for t in ("denoise", "forecast") for n in available_methods(t)]
)
def test_every_grid_uses_the_current_parameter_names(task, name):
    """Every configuration builds without a deprecated name (DeprecationWarning = error)."""
    spec = get_method(name, task)
    spec.resolve_factory()  # its first import is not what this test checks
    for ctx in CTXS:
        if spec.why_skipped(ctx) is not None:  # the harness never builds it there
            continue
        for params in spec.grid(ctx):
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                est = spec.build(ctx, seed=1, **params)
            got = est.get_params()
            assert all(got[k] == v for k, v in params.items()), (name, params)


def test_grids_keep_their_values_and_order():
    """The published results depend on the grids' values and order (seeded subsampling)."""
    ctx = CTXS[0]

    def grid(task, name):
        return get_method(name, task).grid(ctx)

    assert grid("denoise", "savgol")[:3] == [
        {"window": 5, "polyorder": 1},
        {"window": 5, "polyorder": 2},
        {"window": 11, "polyorder": 1},
    ]
    assert [g["window"] for g in grid("denoise", "median_zp")] == [3, 5, 9, 15, 25, 41]
    assert [g["window"] for g in grid("denoise", "scipy_wiener")] == [3, 5, 9, 15, 25, 41]
    assert [g["window"] for g in grid("denoise", "wiener_fir")] == [8, 16, 32, 64]
    assert [g["window"] for g in grid("denoise", "wiener_fir_zp")] == [9, 17, 33, 65]
    assert grid("denoise", "projection_residual") == [
        {"window": 16, "embedding": 8},
        {"window": 16, "embedding": 16},
        {"window": 64, "embedding": 8},
        {"window": 64, "embedding": 16},
    ]
    assert grid("forecast", "projection") == [{}]  # fit() chooses every structure itself
    assert grid("forecast", "projection_residual") == [
        {"base": "autoreg", "base_params": {"lags": p}, "embedding": e}
        for p in (4, 24)
        for e in (8, 16)
    ]
    ett = get_method("projection_residual", "forecast").grid(CTXS[2])  # lookback 336
    assert [(g["base"], g["embedding"]) for g in ett] == [("dlinear", 48)] * 4
    assert [g["lags"] for g in grid("forecast", "autoreg")] == [1, 2, 4, 8, 16, 24, 48]


def test_edm_peers_come_last_and_only_with_pyedm():
    """pyEDM Simplex / S-map: registered after every other forecaster (so no existing order
    changes), as peers (family "edm", not ours), only where pyEDM is installed."""
    forecast = available_methods("forecast")
    if importlib.util.find_spec("pyEDM") is None:
        assert not {"simplex", "smap"} & set(forecast)
        return
    assert forecast[-2:] == ["simplex", "smap"]
    assert available_methods(family="edm") == ["simplex", "smap"]
    simplex, smap = get_method("simplex", "forecast"), get_method("smap", "forecast")
    assert simplex.cost == smap.cost == "high"
    assert simplex.grid(CTXS[0]) == [{"embedding": e} for e in range(1, 11)]
    assert smap.grid(CTXS[0]) == [
        {"embedding": e, "theta": t} for e in range(1, 11) for t in (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
    ]
    assert len(search_space(smap, CTXS[0], budget=4, seed=0)) == 4


def test_search_space_respects_budget():
    spec = get_method("butterworth", "denoise")
    assert len(search_space(spec, {}, budget=3)) == 3
    assert search_space(spec, {}, budget=3, seed=1) == search_space(spec, {}, budget=3, seed=1)
    assert search_space(spec, {}, budget=100) == spec.grid({})  # the whole grid, in order
    with pytest.raises(ValueError, match="method"):
        get_method("nope", "denoise")
    with pytest.raises(ValueError, match="task"):
        get_method("noisy", "smooth")


class _Seeded(Denoiser):
    def __init__(self, lookback=1, horizon=1, random_state=0):
        self._store(locals())


class _Unseeded(Denoiser):
    def __init__(self, k=1):
        self._store(locals())


def test_build_fills_random_state_lookback_and_horizon():
    spec = MethodSpec("seeded", "denoise", _Seeded, fixed={"horizon": 2})
    est = spec.build({"lookback": 16, "max_horizon": 5}, seed=3)
    assert est.get_params() == {"lookback": 16, "horizon": 2, "random_state": 3}
    assert spec.build(seed=3, random_state=7).random_state == 7  # given wins
    assert spec.build().random_state == 0  # no seed: the constructor's default
    assert MethodSpec("plain", "denoise", _Unseeded).build({"lookback": 4}, seed=3).k == 1
    # learned models are seeded by the harness through random_state
    assert get_method("learned_projection", "denoise").build(seed=5).random_state == 5
    assert get_method("learned_projection", "forecast").build(seed=5).random_state == 5


def test_build_seeds_a_third_party_factory_that_still_calls_it_seed():
    def factory(seed=0, scale=1.0):
        return {"seed": seed, "scale": scale}

    assert MethodSpec("old", "denoise", factory).build(seed=7) == {"seed": 7, "scale": 1.0}


def test_a_factory_given_by_import_path_is_imported_when_first_built():
    spec = MethodSpec("by_path", "denoise", "tssdpa.baselines:MovingAverageFilter")
    same = MethodSpec("by_path", "denoise", "tssdpa.baselines:MovingAverageFilter")
    est = spec.build(window=5)
    assert type(est) is MovingAverageFilter and est.window == 5
    assert spec.resolve_factory() is MovingAverageFilter
    assert spec.factory == "tssdpa.baselines:MovingAverageFilter" and spec == same  # as given
    learned = get_method("learned_projection", "denoise").resolve_factory()
    assert learned is tssdpa.filters.LearnedProjectionFilter


def test_requires_target_is_read_from_a_class_and_checked_against_an_import_path():
    from tssdpa.filters.residual_filter import ResidualProjectionFilter

    assert MethodSpec("given", "denoise", ResidualProjectionFilter).requires_target
    assert not MethodSpec("plain", "denoise", MovingAverageFilter).requires_target
    path = "tssdpa.filters.residual_filter:ResidualProjectionFilter"
    assert MethodSpec("declared", "denoise", path, requires_target=True).build().requires_target
    with pytest.raises(ValueError, match="method 'undeclared': requires_target=False but"):
        MethodSpec("undeclared", "denoise", path).resolve_factory()
    with pytest.raises(ValueError, match="method 'wrong': requires_target=True but"):
        MethodSpec("wrong", "denoise", MovingAverageFilter, requires_target=True)
    plain = "tssdpa.baselines:MovingAverageFilter"
    with pytest.raises(ValueError, match="declare requires_target=False in its MethodSpec"):
        MethodSpec("wrong_path", "denoise", plain, requires_target=True).resolve_factory()
    # a function that does not say keeps the declaration
    assert MethodSpec("f", "denoise", lambda: None, requires_target=True).requires_target


def test_listing_the_methods_imports_no_factory_given_by_path():
    """``tssdpa methods`` says which need a target without importing torch for the learned
    methods (seconds per call)."""
    code = ("import sys, contextlib, io; from tssdpa.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out: main(['methods'])\n"
            "print('tssdpa.filters.learned' in sys.modules, 'torch' in sys.modules,"
            " 'needs --target' in out.getvalue())")  # fmt: skip
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split() == ["False", "False", "True"]


@pytest.mark.parametrize(
    "bad", ["tssdpa.baselines.MovingAverageFilter", "a:b:c", ":Name", ".rel:Name", "a..b:C"]
)
def test_a_factory_path_without_module_and_name_is_refused_naming_the_method(bad):
    with pytest.raises(ValueError, match="method 'bad_path': factory must be a callable or"):
        MethodSpec("bad_path", "denoise", bad)
    with pytest.raises(TypeError, match="method 'bad_path': factory must be a callable or"):
        MethodSpec("bad_path", "denoise", None)


def test_a_factory_path_that_leads_nowhere_fails_on_use_naming_the_method():
    spec = MethodSpec("nowhere", "denoise", "tssdpa.baselines:NoSuchFilter")
    with pytest.raises(ImportError, match="method 'nowhere': factory 'tssdpa.baselines:NoSuch"):
        spec.build()


def test_register_refuses_duplicates_and_unknown_tasks():
    spec = MethodSpec("dup_test", "denoise", _Unseeded)
    register(spec)
    try:
        with pytest.raises(ValueError, match="already registered"):
            register(spec)
        assert register(spec, overwrite=True) is spec
    finally:
        _REGISTRY.pop(("denoise", "dup_test"), None)
    with pytest.raises(ValueError, match="spec.task"):
        register(MethodSpec("x", "smooth", _Unseeded))


@pytest.mark.parametrize("quick", [False, True])
@pytest.mark.parametrize("n_train", [20, 30, 45, 60, 200, 600])
def test_the_learned_denoise_grid_never_asks_for_a_window_beyond_its_sequences(quick, n_train):
    """The filter refuses a window longer than ``seq_len`` (it trained without the far lags,
    then used them): on a short training part the grid's windows shrink with its sequences
    rather than fail every cell."""
    ctx = {"n_train": n_train, "quick": quick}
    grid = get_method("learned_projection", "denoise").grid(ctx)
    assert grid
    for params in grid:
        assert params["window"] <= params.get("seq_len", 128)
    assert len({tuple(sorted(p.items())) for p in grid}) == len(grid)  # no duplicate
