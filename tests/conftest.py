import pytest

from tssdpa.data import have_dataset


def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker in item.iter_markers(name="data"):
            for rel in marker.args:
                if not have_dataset(rel):
                    item.add_marker(pytest.mark.skip(reason=f"shared dataset {rel} not found"))
