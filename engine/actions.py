"""Compact action and decision values.

Inside the engine an action is a small immutable tuple (a ``NamedTuple``) that refers to
cards and shapes by index and to placements by placement id; these values are hashable,
picklable and cheap to compare. They become R14's JSON only at the edges
(:mod:`engine.codec`). Variants define their own action classes the same way.
"""

from __future__ import annotations

from typing import NamedTuple


def _eq(self, other):
    return type(self) is type(other) and tuple.__eq__(self, other)


def _ne(self, other):
    return not _eq(self, other)


def _hash(self):
    return hash((type(self).__name__, tuple(self)))


def action(cls):
    """Class decorator for action and decision tuples: values of different classes are
    never equal and hash apart (plain NamedTuples compare as tuples, so ``TakePiece()``
    would equal ``Pass()``). Every action class, variants' included, should use it."""
    cls.__eq__ = _eq
    cls.__ne__ = _ne
    cls.__hash__ = _hash
    return cls


def well_typed(value) -> bool:
    """True if every field of an action is an int or a tuple of well-typed values."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, tuple):
        return all(well_typed(v) for v in value)
    return False

WHITE, BLACK = 0, 1
COLOR_NAMES = ("white", "black")

# Phases of the game: who is asked what.
ACTION, REWARD, LEVEL_UP, FINISH, OVER = range(5)
PHASE_NAMES = ("action", "reward", "level_up", "finish", "over")


@action
class TakePuzzle(NamedTuple):
    """R3.1: take the card in ``slot`` of the ``color`` row."""

    color: int
    slot: int


@action
class TakePiece(NamedTuple):
    """R3.2: take an ``O1`` from the reserve."""


@action
class Upgrade(NamedTuple):
    """R3.3/R3.4: return shape ``give`` and take shape ``take`` (upgrade or exchange)."""

    give: int
    take: int


@action
class Place(NamedTuple):
    """R3.5: put ``placement`` (an id of the ruleset's geometry) on puzzle card ``puzzle``."""

    puzzle: int
    placement: int


@action
class Master(NamedTuple):
    """R3.6: up to one placement on each unfinished puzzle, all from the supply at the start."""

    placements: tuple[Place, ...]


@action
class Pass(NamedTuple):
    """R2.2: end the turn at once."""


@action
class Reward(NamedTuple):
    """Decision: the shape chosen for a reward with a choice (R9.3)."""

    take: int


@action
class LevelUp(NamedTuple):
    """Decision: level-up steps ``((give, take), ...)`` of a ``+1``/``+2`` reward (R11.3)."""

    steps: tuple[tuple[int, int], ...]


@action
class Finish(NamedTuple):
    """Decision: the finishing touches (R6): placements, any number per puzzle."""

    placements: tuple[Place, ...]


TAKE_PIECE = TakePiece()
PASS = Pass()
