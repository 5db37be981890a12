"""ProjectionMultiheadAttention's kernel settings refused as the user gave them."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from tssdpa.nn import ProjectionMultiheadAttention


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        # the message showed the layer's float64 copy, one per head:
        # "sigma must lie in (0, inf) everywhere, got tensor([0., 0.], dtype=torch.float64)"
        ({"sigma": 0.0}, "sigma must lie in (0, inf), got 0.0"),
        ({"sigma": -1}, "sigma must lie in (0, inf), got -1"),
        ({"sigma": [1.0, float("nan")]}, "sigma must lie in (0, inf), got [1.0, nan]"),
        ({"sigma": torch.tensor([2.0, -3.0])}, "sigma must lie in (0, inf), got [2.0, -3.0]"),
        # a one-value tensor or numpy scalar read as a list: "got [0.0]"
        ({"sigma": torch.tensor(0.0)}, "sigma must lie in (0, inf), got 0.0"),
        ({"sigma": np.float32(0)}, "sigma must lie in (0, inf), got 0.0"),
        ({"decay": 1.5}, "decay must lie in (0, 1.0], got 1.5"),
        ({"tau": 0}, "tau must lie in (0, inf), got 0"),
    ],
)
def test_an_out_of_range_kernel_setting_is_refused_as_given(kwargs, said):
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        ProjectionMultiheadAttention(8, 2, **kwargs)


def test_a_kernel_setting_beyond_the_layers_dtype_is_still_refused_naming_it():
    with pytest.raises(ValueError, match=r"^sigma \[1e\+39, 1e\+39\] is out of the range of dtype"):
        ProjectionMultiheadAttention(8, 2, sigma=1e39)
