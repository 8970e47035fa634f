"""Errors of the host. The CLI catches :class:`ArenaError` (and the engine's errors) and
prints the message as a sentence with a non-zero exit code, never a traceback."""

from __future__ import annotations


class ArenaError(Exception):
    """Base class of every error the arena reports to the user."""

    exit_code = 1


class UsageError(ArenaError):
    """Bad input from the user: a file, a name, an option. Exit code 2."""

    exit_code = 2
