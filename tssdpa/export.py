"""Deployment: a fitted causal :class:`~tssdpa.filters.ProjectionFilter` as an ONNX model of
one streaming step over a chunk, for control loops that cannot import Python
(``docs/deploy.md``).

``to_onnx(filter, path)`` is ``filter.to_onnx(path)``. The implementation, the torch twin
of the step and the model's input / output names live in :mod:`tssdpa.filters.onnx_export`
(in the filters unit, so that the method can reach it); this module is their public home.
Needs the optional extra ``tssdpa[deploy]`` (onnx, onnxruntime, onnxscript).
"""

from tssdpa.filters.onnx_export import (
    INPUT_NAMES,
    OPSET,
    OUTPUT_NAMES,
    TIMED_INPUT_NAMES,
    TIMED_OUTPUT_NAMES,
    StreamingStep,
    TimedStreamingStep,
    onnx_initial_state,
    onnx_step_spec,
    to_onnx,
)

__all__ = [
    "INPUT_NAMES",
    "OPSET",
    "OUTPUT_NAMES",
    "StreamingStep",
    "TIMED_INPUT_NAMES",
    "TIMED_OUTPUT_NAMES",
    "TimedStreamingStep",
    "onnx_initial_state",
    "onnx_step_spec",
    "to_onnx",
]
