"""The library's own warnings, told to a command-line user as one-line notes.

A fit that warns -- "the median step is 333 times tau ... returns x unchanged" -- has done
something the user did not ask for; silenced, the command exited 0 with the columns unchanged.
Everything else warned while it runs is noise to a command-line user and stays silent:
deprecations, numpy's RuntimeWarnings, the tips of Lightning and torch (warned from their own
code, not the library's).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

__all__ = ["library_warnings"]

#: the package's folder: a warning is the library's where its ``warnings.warn`` is called here
_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
_WARNINGS_MODULE = os.path.splitext(warnings.__file__)[0]
#: categories that are never for a command-line user (deprecations of the Python API, float
#: overflows the library checks itself)
_NOISE = (DeprecationWarning, PendingDeprecationWarning, FutureWarning, RuntimeWarning,
          ImportWarning, ResourceWarning)  # fmt: skip


def _caller_of_warn(frame):
    """The frame that called ``warnings.warn``, from a frame inside :mod:`warnings`."""
    while frame is not None and frame.f_code.co_filename.startswith(_WARNINGS_MODULE):
        frame = frame.f_back
    return frame


@contextlib.contextmanager
def library_warnings():
    """A list of the library's warnings raised while the block runs, each as one line (in the
    order warned, each once); every other warning silenced."""
    said: list[str] = []

    def keep(message, category, *_args, **_kw):
        if issubclass(category, _NOISE):
            return
        caller = _caller_of_warn(sys._getframe(1))
        if caller is None or not caller.f_code.co_filename.startswith(_PACKAGE):
            return  # Lightning's, torch's, scikit-learn's own
        line = " ".join(str(message).split())
        if line not in said:
            said.append(line)

    with warnings.catch_warnings():
        warnings.simplefilter("always")  # each call site again: "once" kept one run's
        warnings.showwarning = keep
        yield said
