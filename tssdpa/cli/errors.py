"""The one error type of the command line."""

__all__ = ["UsageError"]


class UsageError(Exception):
    """A mistake in the user's files or arguments: ``main`` prints it in one line on stderr
    and exits with code 2 (never a traceback)."""
