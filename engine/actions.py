"""Compact action and decision values.

Inside the engine an action is a small immutable tuple (a ``NamedTuple``) that refers to
cards and shapes by index and to placements by placement id; these values are hashable,
picklable and cheap to compare. They become R14's JSON only at the edges
(:mod:`engine.codec`). Variants define their own action classes the same way.
"""

from __future__ import annotations

from typing import NamedTuple

WHITE, BLACK = 0, 1
COLOR_NAMES = ("white", "black")

# Phases of the game: who is asked what.
ACTION, REWARD, LEVEL_UP, FINISH, OVER = range(5)
PHASE_NAMES = ("action", "reward", "level_up", "finish", "over")


class TakePuzzle(NamedTuple):
    """R3.1: take the card in ``slot`` of the ``color`` row."""

    color: int
    slot: int


class TakePiece(NamedTuple):
    """R3.2: take an ``O1`` from the reserve."""


class Upgrade(NamedTuple):
    """R3.3/R3.4: return shape ``give`` and take shape ``take`` (upgrade or exchange)."""

    give: int
    take: int


class Place(NamedTuple):
    """R3.5: put ``placement`` (an id of the ruleset's geometry) on puzzle card ``puzzle``."""

    puzzle: int
    placement: int


class Master(NamedTuple):
    """R3.6: up to one placement on each unfinished puzzle, all from the supply at the start."""

    placements: tuple[Place, ...]


class Pass(NamedTuple):
    """R2.2: end the turn at once."""


class Reward(NamedTuple):
    """Decision: the shape chosen for a reward with a choice (R9.3)."""

    take: int


class LevelUp(NamedTuple):
    """Decision: level-up steps ``((give, take), ...)`` of a ``+1``/``+2`` reward (R11.3)."""

    steps: tuple[tuple[int, int], ...]


class Finish(NamedTuple):
    """Decision: the finishing touches (R6): placements, any number per puzzle."""

    placements: tuple[Place, ...]


TAKE_PIECE = TakePiece()
PASS = Pass()
