import warnings

import pytest
import torch

from tssdpa.data import have_dataset


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models: one thread avoids oversubscribing the shared cores (restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def quiet_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker in item.iter_markers(name="data"):
            for rel in marker.args:
                if not have_dataset(rel):
                    item.add_marker(pytest.mark.skip(reason=f"shared dataset {rel} not found"))
