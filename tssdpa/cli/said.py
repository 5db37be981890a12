"""The library's own warnings, told to a command-line user as one-line notes.

A fit that warns -- "the median step is 333 times tau ... returns x unchanged" -- has done
something the user did not ask for; silenced, the command exited 0 with the columns unchanged.
The library's warnings are those of its category, :class:`~tssdpa.checks.LibraryWarning`
(notes on the data, settings used otherwise than given, sample times). Everything else warned
while it runs is noise to a command-line user and stays silent: deprecations, numpy's
RuntimeWarnings, the tips of Lightning and torch -- also those raised in C under a call from
the library's code (torch's "The given NumPy array is not writable"), which no file of the
caller tells apart.
"""

from __future__ import annotations

import os

from tssdpa.estimators.input_notes import library_warnings

__all__ = ["DroppedWhenClosed", "library_warnings"]


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
