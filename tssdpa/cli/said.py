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

__all__ = ["DroppedWhenClosed", "library_warnings"]

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


class DroppedWhenClosed:
    """``stream`` (the command's stderr) whose text is dropped once its reader has gone: with
    ``--out x.csv 2>&1 | head -1`` the second note ended the run in a BrokenPipeError, exit 141
    and no output file. The notes are the run's commentary; the output is still written."""

    def __init__(self, stream):
        self._stream, self._closed = stream, False

    def write(self, text: str) -> int:
        if not self._closed:
            try:
                self._stream.write(text)
                self._stream.flush()  # now, not at exit: a closed pipe is found here
            except BrokenPipeError:
                self._close()
        return len(text)

    def flush(self) -> None:
        if not self._closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._close()

    def _close(self) -> None:
        self._closed = True
        try:  # the text still buffered: to devnull, or Python's flush at exit fails on it
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # no file descriptor (a test's capture)
            pass

    def __getattr__(self, name):  # fileno, isatty, encoding: the stream's
        return getattr(self._stream, name)
