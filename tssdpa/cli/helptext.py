"""The help formatter of every ``tssdpa`` subcommand."""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata


class DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends ``(default: X)`` to an option's help only where it tells the reader something:
    not when the help already states its default, and not for an unset (None) or off flag."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def add_version(parser: argparse.ArgumentParser) -> None:
    """``tssdpa --version``: the installed distribution's version (the command had none)."""
    try:
        version = importlib.metadata.version("tssdpa")
    except importlib.metadata.PackageNotFoundError:  # a source tree on PYTHONPATH, uninstalled
        version = "unknown (not installed)"
    parser.add_argument("--version", action="version", version=f"tssdpa {version}")


def parse_args(parser: argparse.ArgumentParser, argv):
    """``parser.parse_args(argv)``, where an option the subcommand does not know is refused by
    that subcommand -- its usage, and the closest of its own options -- not by the top-level
    parser (``tssdpa filter log.csv --colums a`` printed ``tssdpa``'s usage and suggested
    nothing; Python 3.11's argparse has no ``suggest_on_error``)."""
    args, unknown = parser.parse_known_args(argv)
    if not unknown:
        return args
    commands = next(a.choices for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction))  # fmt: skip
    sub = commands[args.command]
    first = next((u for u in unknown if u.startswith("-")), unknown[0])
    options = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
    close = difflib.get_close_matches(first.split("=")[0], options, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    sub.error(f"unrecognized argument(s): {' '.join(unknown)}{hint}")
