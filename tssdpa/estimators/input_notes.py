"""What ``fit`` tells its user about their data, and about the settings it used otherwise than
given: warnings of the :class:`InputNote` kind, each able to say itself with the channels'
names (the CLI ``tssdpa filter`` prints them as notes).

- :class:`HeldReadingsWarning`: channels that hold their readings between samples
  (:func:`~tssdpa.estimators.selection.repeating_channels`), whose shared noise SURE takes for
  signal;
- :class:`GlitchWarning`: samples a zero-phase filter treats as missing
  (:mod:`~tssdpa.estimators.glitches`);
- :class:`CausalGlitchWarning`: glitches a causal filter's fit leaves out (its output keeps
  them);
- :class:`SpikeWarning`: impulsive noise it treats as missing
  (:mod:`~tssdpa.estimators.spikes`);
- :class:`EmptyChannelWarning`: a channel with no finite value given to a forecaster whose
  forecasts each read every channel (all of them come back NaN);
- :class:`SettingChangedWarning`: a setting used otherwise than given (a learned model's
  ``patch_len`` built as its ``lookback``, a ``holdout`` raised to one validation window).

Each is warned through :func:`tell`, which also hands it to a collector of the thread that
told it (:func:`collected`): a caller that fits many tables at once in threads (the batch
filter on Dask's threads) gets each table's notes, where ``warnings.catch_warnings`` would mix
them across threads.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings

from tssdpa.checks import (
    LibraryWarning,
    SettingWarning,
    gather,
    gathered,
    warn,
)
from tssdpa.estimators.fit_guard import GUARD_NAME
from tssdpa.estimators.selection import held_message

__all__ = [
    "CausalGlitchWarning",
    "EmptyChannelWarning",
    "as_time_column",
    "library_warnings",
    "ForecastGlitchWarning",
    "GlitchWarning",
    "HeldReadingsWarning",
    "InputNote",
    "RecurringSpikesWarning",
    "SettingChangedWarning",
    "ShortHistoryWarning",
    "SpikeWarning",
    "as_channel",
    "collected",
    "notes_to_tell",
    "tell",
    "thread_notes",
    "notes_of",
    "within_channel",
]

_collector = threading.local()
_EVERY = object()  # as_channel's value outside its blocks: notes are of the series' channels


class InputNote(LibraryWarning):
    """A warning about the data (or settings) a fit was given; :meth:`told` says it with
    channel names."""

    def told(self, names=None) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        # the args are the note's data, not its text: ``type(w)(*w.args)`` and pickle rebuild
        # it (pytest-xdist and process pools send warnings that way)
        return self.told()

    def of_channel(self, channel: int) -> InputNote:
        """The note of a fit on one channel (its channel 0) said of ``channel`` of the
        series."""
        raise NotImplementedError


class HeldReadingsWarning(InputNote):
    """A self-supervised fit on held readings; ``held`` is ``{channel: share of repeats}``."""

    def __init__(self, held: dict[int, float]):
        self.held = held
        super().__init__(held)

    def told(self, names=None) -> str:
        return held_message(self.held, names)

    def of_channel(self, channel: int) -> HeldReadingsWarning:
        return HeldReadingsWarning({channel + c: share for c, share in self.held.items()})


class EmptyChannelWarning(InputNote):
    """Channels with no finite value in a forecasting call (``forecast``, ``forecast_path``)
    of ``who``, a forecaster whose every channel's forecast reads the past of all channels (a
    joint pattern): one dead sensor made every channel's forecast NaN without a word.
    ``found`` is ``{channel: column label, or None for a channel without one}``."""

    def __init__(self, found: dict, who: str):
        self.found, self.who = found, who
        super().__init__(found, who)

    def told(self, names=None) -> str:
        said = [f"column {(names[c] if names is not None else label)!r}"
                if names is not None or label is not None else f"channel {c}"
                for c, label in self.found.items()]  # fmt: skip
        return (f"y {', '.join(said)} has no finite value: {self.who} forecasts each channel "
                "from the past of every channel, so every forecast is NaN; give it its "
                "readings, or fit without it (or one model per channel, where the forecaster "
                "has channel_independent)")  # fmt: skip

    def of_channel(self, channel: int) -> EmptyChannelWarning:
        return EmptyChannelWarning({channel + c: n for c, n in self.found.items()}, self.who)


class ShortHistoryWarning(LibraryWarning):
    """A forecasting call's series shorter than the longest pattern the fitted forecaster
    reads: the forecasts of that pattern's horizons are NaN at every origin (a 100-row test
    frame after a fit that chose 169 hourly lags came back NaN without a word)."""


class SettingChangedWarning(InputNote, SettingWarning):
    """A :class:`~tssdpa.checks.SettingWarning` of a fit, told as a note (:func:`tell`):
    ``text`` names the argument, the value given and the value used."""

    def __init__(self, text: str):
        self.text = text
        super().__init__(text)

    def told(self, names=None) -> str:
        return self.text

    def of_channel(self, channel: int) -> SettingChangedWarning:
        return self  # a setting of the whole fit, whichever channel told it


class _MissingSamplesNote(InputNote):
    """Samples a zero-phase fit treats as missing; ``found`` is ``{channel: (count, detail)}``,
    each channel's part said by :meth:`_what` and the whole followed by ``_why``."""

    _why = ""
    _name = "x"  # the argument the channels are of

    def __init__(self, found: dict[int, tuple]):
        self.found = found
        super().__init__(found)

    def _what(self, n: int, detail) -> str:
        raise NotImplementedError

    def told(self, names=None) -> str:
        said = [f"{self._name + ' channel ' + str(c) if names is None else repr(names[c])} has "
                + self._what(n, detail) for c, (n, detail) in self.found.items()]  # fmt: skip
        return "; ".join(said) + self._why

    def of_channel(self, channel: int) -> _MissingSamplesNote:
        return type(self)({channel + c: found for c, found in self.found.items()})


class GlitchWarning(_MissingSamplesNote):
    """Glitches a zero-phase fit treats as missing; ``found`` is ``{channel: (count, first)}``
    (:func:`~tssdpa.estimators.glitches.glitch_mask`)."""

    _why = (
        ": samples far out of line with those around them, treated as missing (left out of "
        "their channel's keys, filled from the others); glitches=None keeps them."
    )

    def _what(self, n: int, first: int) -> str:
        return f"{n:,} glitch{'es' if n > 1 else ''} (the first at sample {first:,})"


class CausalGlitchWarning(_MissingSamplesNote):
    """Glitches a causal filter's fit leaves out of its noise level and scores; its output
    keeps them (it cannot look at the sample after). ``found`` as :class:`GlitchWarning`'s."""

    _why = (
        ": samples far out of line with those around them, left out of the fit; the causal "
        "filter cannot look at the sample after and passes them on (a zero-phase one treats "
        "them as missing): clean them first; glitches=None fits on them."
    )
    _what = GlitchWarning._what


class ForecastGlitchWarning(_MissingSamplesNote):
    """Glitches a forecaster's fit leaves out; ``found`` as :class:`GlitchWarning`'s (not one:
    no ``filter`` finds them again, :func:`notes_to_tell` keeps the fit's)."""

    _name = "y"
    _why = (
        ": samples far out of line with those around them, left out of the fit (no pattern "
        "or future holds them); a forecast whose own pattern holds one is off."
    )
    _what = GlitchWarning._what


class RecurringSpikesWarning(_MissingSamplesNote):
    """Samples a forecaster's fit keeps although the glitch rule flags them: they recur at one
    period (:mod:`~tssdpa.estimators.recurring`); ``found`` is ``{channel: (count, period)}``."""

    _name = "y"
    _why = (
        ": far out of line with the samples around them, but recurring at that period, so "
        "kept as signal to forecast (glitches=None keeps every sample)."
    )

    def _what(self, n: int, period: int) -> str:
        return f"{n:,} spikes recurring every {period:,} samples"


class SpikeWarning(_MissingSamplesNote):
    """Spikes (impulsive noise) a zero-phase fit treats as missing; ``found`` is ``{channel:
    (count, share of the channel's samples)}`` (:func:`~tssdpa.estimators.spikes.spike_mask`).
    """

    _why = (
        ": impulsive noise (single samples far off the curve through their neighbours), "
        "treated as missing and filled from the others; glitches=None keeps them."
    )

    def _what(self, n: int, share: float) -> str:
        return f"{n:,} spikes ({share:.1%} of its samples)"


#: the package's folder: a note is warned at the innermost call from outside it (the user's)
_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")


#: where a thread's target is called from: a fit run in a thread has no user's line above it
_THREAD_CALLERS = (threading.__file__, os.path.join(os.path.dirname(threading.__file__),
                                                    "concurrent", ""))  # fmt: skip


def _outside(frame, level: int):
    """``(frame, level, inside)``: the innermost frame outside the package from ``frame`` (at
    stack ``level``) up, its level, and the names of the package's frames passed, innermost
    first."""
    inside = []
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        inside.append(frame.f_code.co_name)
        frame, level = frame.f_back, level + 1
    return frame, level, inside


def user_stacklevel() -> int:
    """The ``stacklevel`` for a :func:`warnings.warn` in the calling function that points at
    the innermost frame outside the package (a fixed level counted the frames of one call
    path; the fit guard added one, and the warning named the guard's line)."""
    return _outside(sys._getframe(1), 1)[1]


def _user_stacklevel() -> int:
    """The ``stacklevel`` of :func:`warnings.warn`, called from :func:`tell`, that points at
    the innermost frame outside the package: a note told three calls deep in a fit of one
    channel still names the user's line. Where that frame is a thread's machinery (a fit run
    by ``threading`` or ``concurrent.futures``) there is no user's line on the stack, and it
    names the outermost call inside the package (the ``fit``); where every frame is inside
    it, the outermost."""
    frame, level, inside = _outside(sys._getframe(2), 2)  # from the caller of tell
    if frame.f_code.co_filename.startswith(_THREAD_CALLERS):
        level -= 1
        while inside and inside.pop() == GUARD_NAME:  # the fit itself, not its guard
            level -= 1
    return level


def tell(note: InputNote) -> None:
    """Warn of ``note`` (at the user's call: :func:`_user_stacklevel`) and add it to this
    thread's :func:`collected` list, if one is open (and then, if it is quiet, only that);
    inside :func:`as_channel` said of that channel, or not at all."""
    channel = getattr(_collector, "channel", _EVERY)
    if channel is None:
        return
    if channel is not _EVERY:
        note = note.of_channel(channel)
    notes = getattr(_collector, "notes", None)
    if notes is not None:
        notes.append(note)
        if _collector.quiet:
            return
    warn(note, stacklevel=_user_stacklevel())


@contextlib.contextmanager
def collected(quiet: bool = False):
    """A list of the notes told in this thread (or a worker of its ``parallel_map``) while
    the block runs (:func:`tell`); in nested blocks only the innermost list gets them.

    ``quiet``: the notes are collected and not warned of, for a caller that tells them
    itself. Silencing them with :func:`warnings.catch_warnings` instead is not safe where
    files are filtered in threads (the batch's default cluster): the warnings filters are
    the process's, and a thread leaving its block restores them while another still fits.
    """
    outer = getattr(_collector, "notes", None), getattr(_collector, "quiet", False)
    notes = []
    _collector.notes, _collector.quiet = notes, quiet
    try:
        yield notes
    finally:
        _collector.notes, _collector.quiet = outer


@contextlib.contextmanager
def as_channel(channel: int | None):
    """Notes told in this thread while the block runs come from a fit (or filter) of one
    channel of a larger series: :func:`tell` says them of ``channel``, or with None not at all
    (the caller tells them for the whole series). Nested blocks compose: inside a silenced
    block nothing is told, and channel ``c`` of a block for channel ``k`` is channel ``k + c``
    of the series."""
    outer = getattr(_collector, "channel", _EVERY)
    if outer is None or channel is None:
        _collector.channel = None
    else:
        _collector.channel = channel if outer is _EVERY else outer + channel
    try:
        yield
    finally:
        _collector.channel = outer


def within_channel() -> bool:
    """Whether this thread runs inside :func:`as_channel`: a fit or filter of one channel of a
    larger series, whose caller tells what concerns the whole series (its sample times)."""
    return getattr(_collector, "channel", _EVERY) is not _EVERY


def notes_to_tell(fit_notes, filter_notes, names=None) -> list[str]:
    """What to tell a user who fitted and then filtered a series, with the channels' names:
    the fit's own notes, and the glitches and spikes as ``filter`` found them in the whole
    series (the fit saw only its block)."""
    found = (GlitchWarning, SpikeWarning)
    kept = [n for n in fit_notes if not isinstance(n, found)]
    kept += [n for n in filter_notes if isinstance(n, found)]
    return [n.told(names) for n in kept]


#: the warnings filters and hook shared by every table in progress in this process, and how many
_hook_lock = threading.Lock()
_hook: dict = {"tables": 0, "block": None}


def _keep(message, category, *_args, **_kw) -> None:
    """``warnings.showwarning`` while tables are filtered: a warning of the library's category
    raised without :func:`~tssdpa.checks.warn` goes to the list of the thread that raised it
    (or that a worker thread works for: :func:`notes_of`); every other is dropped."""
    if getattr(gathered, "said", None) is None or not issubclass(category, LibraryWarning):
        return  # deprecations, numpy's, torch's; or a thread filtering no table
    gather(message)


def thread_notes() -> tuple:
    """Where this thread's notes and library warnings go (:func:`collected`,
    :func:`as_channel`, :func:`library_warnings`), for threads working for it
    (:func:`notes_of`)."""
    return (getattr(_collector, "notes", None), getattr(_collector, "quiet", False),
            getattr(_collector, "channel", _EVERY), getattr(gathered, "said", None),
            getattr(gathered, "time_column", None))  # fmt: skip


@contextlib.contextmanager
def notes_of(state: tuple):
    """This thread's notes and library warnings go, while the block runs, where those of the
    thread whose :func:`thread_notes` gave ``state`` go: the workers of
    :func:`~tssdpa.estimators.parallel.parallel_map` (the collectors are per thread, and a
    worker's warnings reached no capture: ``tssdpa filter`` lost them)."""
    outer = thread_notes()
    (_collector.notes, _collector.quiet, _collector.channel, gathered.said,
     gathered.time_column) = state  # fmt: skip
    try:
        yield
    finally:
        (_collector.notes, _collector.quiet, _collector.channel, gathered.said,
         gathered.time_column) = outer  # fmt: skip


@contextlib.contextmanager
def library_warnings():
    """A list of the library's warnings (:class:`~tssdpa.checks.LibraryWarning`, one line each,
    once) raised in this thread (or a worker of its ``parallel_map``: :func:`notes_of`) while
    the block runs, every other warning silenced: what
    ``tssdpa filter`` tells as notes (one file, or each of many side by side) -- a tau filter
    on epoch-millisecond times returned the columns unchanged, silenced.

    The library's warnings (:func:`~tssdpa.checks.warn`) go to the list of the thread that
    raised them (a Dask task runs on one thread; in worker processes alike, each its own)
    without the warnings filters, which are the process's (Python 3.11): a
    ``warnings.catch_warnings`` on another thread swaps them. For the other warnings, the
    first table in progress in this process sets one hook for all (under a lock) that drops
    them, and the last one restores the filters (best effort: another thread's
    ``catch_warnings`` can restore what it found)."""
    said: list[str] = []
    outer = getattr(gathered, "said", None), getattr(gathered, "time_column", None)
    gathered.said, gathered.time_column = said, None  # a table's own (checks.times_of_column)
    with _hook_lock:
        if _hook["tables"] == 0:
            block = warnings.catch_warnings()
            block.__enter__()
            warnings.simplefilter("ignore")  # deprecations and tips are not for a summary
            warnings.simplefilter("always", LibraryWarning)  # each table's, each call site
            warnings.showwarning = _keep
            _hook["block"] = block
        _hook["tables"] += 1
    try:
        yield said
    finally:
        gathered.said, gathered.time_column = outer
        with _hook_lock:
            _hook["tables"] -= 1
            if _hook["tables"] == 0:
                _hook["block"].__exit__(None, None, None)
                _hook["block"] = None


def as_time_column(lines: list[str], time_column) -> list[str]:
    """``lines`` (:func:`library_warnings`') with ``timestamps: ...`` said of the command's
    ``time_column``, which the user gave instead of timestamps."""
    prefix = "timestamps: "
    if time_column is None:
        return list(lines)
    return [f"time column {time_column!r}: {x.removeprefix(prefix)}" if x.startswith(prefix)
            else x for x in lines]  # fmt: skip
