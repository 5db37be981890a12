"""ProjectionForecaster's candidate lists take any range or sequence of ints, and a refused
value says what is taken and, for a pyEDM user's value, what it means here."""

import numpy as np
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster

Y = np.sin(np.arange(400) * 0.3) + np.random.default_rng(0).normal(0, 0.05, 400)


@pytest.mark.parametrize("embedding", [range(1, 4), [1, 2, 3], (1, 2, 3), np.arange(1, 4)])
def test_embedding_candidates_may_be_a_range_as_a_list_or_array_are(embedding):
    f = ProjectionForecaster(horizon=1, embedding=embedding, model="mean").fit(Y)
    assert f.best_params_[1]["embedding"] in (1, 2, 3)


def test_a_forecaster_fitted_on_a_range_of_candidates_saves_and_loads(tmp_path):
    f = ProjectionForecaster(horizon=2, embedding=range(1, 4), model="mean").fit(Y)
    f.save(tmp_path / "m")
    g = ProjectionForecaster.load(tmp_path / "m")
    assert g.embedding == [1, 2, 3]
    np.testing.assert_allclose(g.predict(3), f.predict(3))


def test_a_projection_filter_takes_a_range_of_windows():
    assert ProjectionFilter(window=range(4, 20, 4)).fit(Y).window_ in (4, 8, 12, 16)
    with pytest.raises(ValueError, match="window is a list of candidates: call fit"):
        ProjectionFilter(window=range(4, 20, 4)).filter(Y)  # as a list's: not one value


@pytest.mark.parametrize("embedding", [2.5, {1, 2}])
def test_a_value_neither_an_int_nor_candidates_is_refused_saying_lists_are_taken(embedding):
    with pytest.raises(TypeError, match=r"embedding must be an int.*list, tuple, range or numpy"):
        ProjectionForecaster(embedding=embedding).fit(Y)


PYEDM_MODELS = [("simplex", "mean"), ("Simplex", "mean"), ("smap", "local_linear"),
                ("S-map", "local_linear")]  # fmt: skip


@pytest.mark.parametrize("model, ours", PYEDM_MODELS)
def test_pyedms_model_names_are_refused_naming_ours(model, ours):
    with pytest.raises(ValueError, match=rf"got '{model}' \(pyEDM's\): use model='{ours}'"):
        ProjectionForecaster(model=model).fit(Y)


def test_the_models_listed_leave_out_the_deprecated_analogue_alias():
    with pytest.raises(ValueError, match="model must be one of") as err:
        ProjectionForecaster(model="foo").fit(Y)
    assert "analogue" not in str(err.value) and "pyEDM" not in str(err.value)
    with pytest.warns(DeprecationWarning, match="analogue"):  # still taken
        ProjectionForecaster(horizon=1, embedding=2, model="analogue").fit(Y)


def test_a_negative_delay_says_pyedms_tau_is_a_positive_delay_here():
    with pytest.raises(ValueError, match=r"delay must be .* got -1: .*pyEDM's tau=-1 is delay=1"):
        ProjectionForecaster(delay=-1).fit(Y)


def test_zero_neighbours_says_pyedms_knn_0_is_n_neighbors_none_here():
    with pytest.raises(ValueError, match=r"got 0: pyEDM's knn=0 .* is n_neighbors=None"):
        ProjectionForecaster(n_neighbors=0, model="mean").fit(Y)
