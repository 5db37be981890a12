"""Deprecated module path: the benchmark tasks live in :mod:`tssdpa.data.tasks` (removed in
the next release)."""

import warnings

from tssdpa.data.tasks import *  # noqa: F403
from tssdpa.data.tasks import __all__  # noqa: F401

warnings.warn(
    "tssdpa.compare.protocols is deprecated; import from tssdpa.data.tasks",
    DeprecationWarning,
    stacklevel=2,
)
