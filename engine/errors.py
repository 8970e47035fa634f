"""Errors the rules engine raises. Each names what went wrong in a sentence."""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class CardDataError(EngineError):
    """A card file is malformed; the message names the file, the card and the field."""


class ParameterError(EngineError):
    """A rule parameter (R13) has an impossible value or an unknown name."""


class DealError(EngineError):
    """An explicit deal (deck orders given as card ids) does not fit the game."""


class IllegalAction(EngineError):
    """An action or decision breaks a rule; ``rule`` is the rule number it breaks.

    The state is left untouched when this is raised.
    """

    def __init__(self, rule: str, message: str):
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.reason = message


class ReplayMismatch(EngineError):
    """Re-simulating a replay did not reproduce the recorded game."""
