"""The one error type of the command line, and the context that turns a reader's ValueError
into it."""

import contextlib

__all__ = ["UsageError", "usage_errors"]


class UsageError(Exception):
    """A mistake in the user's files or arguments: ``main`` prints it in one line on stderr
    and exits with code 2 (never a traceback)."""


@contextlib.contextmanager
def usage_errors(prefix: str):
    """A ValueError of the table readers becomes the user's one-line message, after
    ``prefix`` (the option or file it is about)."""
    try:
        yield
    except ValueError as exc:
        raise UsageError(f"{prefix}{exc}") from None
