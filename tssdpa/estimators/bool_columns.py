"""A DataFrame given to ``fit`` or ``filter`` with a column of true / false values beside its
signals (:class:`BoolColumnWarning`): every column is a channel, so a flag column (``valid``,
``door_open``) was filtered or forecast as a 0/1 signal with the others without a word, while
``tssdpa filter`` skips such columns. Not refused: a 0/1 channel may be meant, and converting
it to numbers says so (``df.astype({'door_open': float})``)."""

from __future__ import annotations

from tssdpa.checks import LibraryWarning, warn
from tssdpa.estimators.input_notes import user_stacklevel

__all__ = ["BoolColumnWarning", "warn_bool_columns"]


class BoolColumnWarning(LibraryWarning):
    """A DataFrame given to ``fit`` or ``filter`` has columns of true / false values beside
    other columns: they are read as 0 and 1 and filtered as signals."""


def warn_bool_columns(name: str, meta) -> None:
    """A :class:`BoolColumnWarning` naming the true / false columns of the DataFrame ``name``
    (:class:`~tssdpa.estimators.arrays.ArrayMeta` ``meta``: its ``flags``, left as they
    are). Only beside another column: a lone column is the signal, whatever it holds. Once a
    call: by the one reader of its input that warns (a denoiser's
    :func:`~tssdpa.estimators.fit_input.denoiser_input`, a forecaster's ``check_fit_input``)."""
    if meta is None or meta.kind != "frame" or not meta.flags or len(meta.columns) < 2:
        return
    flags = list(meta.flags)
    as_float = ", ".join(f"{c!r}: float" for c in flags)
    warn(
        f"{name} column(s) {flags} hold true / false values: every column of a DataFrame is a "
        f"channel, so they are taken as 0/1 signals with the others (tssdpa filter skips such "
        f"columns); drop them ({name}.drop(columns={flags!r})), or convert them to numbers to "
        f"use them as 0/1 signals ({name}.astype({{{as_float}}}))",
        BoolColumnWarning,
        stacklevel=user_stacklevel(),
    )
