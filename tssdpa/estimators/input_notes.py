"""What ``fit`` tells its user about their data: warnings of the :class:`InputNote` kind, each
able to say itself with the channels' names (the CLI ``tssdpa filter`` prints them as notes).

- :class:`HeldReadingsWarning`: channels that hold their readings between samples
  (:func:`~tssdpa.estimators.selection.repeating_channels`), whose shared noise SURE takes for
  signal;
- :class:`PartialRowsWarning`: a channel missing over a stretch where the others are known
  (:func:`partial_rows`). A key of the filter needs every channel of its sample, so where no
  complete sample is in reach the other channels are held or interpolated, not filtered;
- :class:`GlitchWarning`: samples a zero-phase filter treats as missing
  (:mod:`~tssdpa.estimators.glitches`).
"""

from __future__ import annotations

import numpy as np

from tssdpa.estimators.selection import held_message, longest_run

__all__ = [
    "GlitchWarning",
    "HeldReadingsWarning",
    "InputNote",
    "PartialRowsWarning",
    "partial_rows",
]


class InputNote(UserWarning):
    """A warning about the data a fit was given; :meth:`told` says it with channel names."""

    def told(self, names=None) -> str:
        raise NotImplementedError


class HeldReadingsWarning(InputNote):
    """A self-supervised fit on held readings; ``held`` is ``{channel: share of repeats}``."""

    def __init__(self, held: dict[int, float]):
        self.held = held
        super().__init__(self.told())

    def told(self, names=None) -> str:
        return held_message(self.held, names)


def partial_rows(x2: np.ndarray) -> dict[int, tuple[int, int, int]]:
    """``{channel: (count, longest, start)}`` for the channels of the (T, C) series ``x2`` that
    are missing (NaN) in rows where another channel is known: how many such rows, the longest
    run of them and where it starts."""
    x2 = np.asarray(x2, dtype=float)
    known = np.isfinite(x2)
    some = known.any(axis=1)
    out = {}
    for c in range(x2.shape[1]):
        rows = some & ~known[:, c]
        if rows.any():
            start, length = longest_run(rows)
            out[c] = (int(rows.sum()), length, start)
    return out


class PartialRowsWarning(InputNote):
    """Channels missing over stretches longer than the filter's reach while others are known;
    ``partial`` is ``{channel: (count, longest, start)}`` (:func:`partial_rows`), ``reach`` the
    samples a row's keys span (the fitted window; zero-phase, ``2 window - 1`` centred)."""

    def __init__(self, partial: dict[int, tuple[int, int, int]], reach: int):
        self.partial, self.reach = partial, reach
        super().__init__(self.told())

    def told(self, names=None) -> str:
        said = [f"{'x channel ' + str(c) if names is None else repr(names[c])} is missing at "
                f"{n:,} samples where other channels are known ({run:,} in a row from sample "
                f"{start:,})" for c, (n, run, start) in self.partial.items()]  # fmt: skip
        return ("; ".join(said) + f": a key needs every channel of its sample, so where none "
                f"is within the filter's reach ({self.reach} samples) the other channels are "
                "held or interpolated there, not filtered. Fit those channels on their own, or "
                "filter the stretch where every channel is known.")  # fmt: skip


class GlitchWarning(InputNote):
    """Glitches a zero-phase fit treats as missing; ``found`` is ``{channel: (count, first)}``
    (:func:`~tssdpa.estimators.glitches.glitch_mask`)."""

    def __init__(self, found: dict[int, tuple[int, int]]):
        self.found = found
        super().__init__(self.told())

    def told(self, names=None) -> str:
        said = [f"{'x channel ' + str(c) if names is None else repr(names[c])} has {n:,} "
                f"glitch{'es' if n > 1 else ''} (the first at sample {first:,})"
                for c, (n, first) in self.found.items()]  # fmt: skip
        return (
            "; ".join(said) + ": samples far out of line with those around them, treated "
            "as missing (never keys, filled from the others); glitches=None keeps them."
        )
