"""Deployment: a fitted causal :class:`~tssdpa.filters.ProjectionFilter` as an ONNX model of
one streaming step over a chunk, for control loops that cannot import Python
(``docs/deploy.md``).

``to_onnx(filter, path)`` is ``filter.to_onnx(path)``. The implementation, the torch twin
of the step and the model's input / output names live in :mod:`tssdpa.filters.onnx_export`
(in the filters unit, so that the method can reach it); this module is their public home.
Needs the optional extra ``tssdpa[deploy]`` (onnx, onnxruntime, onnxscript).
"""

from tssdpa.filters import onnx_export
from tssdpa.filters.onnx_export import *  # noqa: F403 -- the public names, listed once there

__all__ = onnx_export.__all__
