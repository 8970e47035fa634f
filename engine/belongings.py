"""What a seat holds during a game: its puzzles in play and its belongings.

These are the parts of a :class:`~engine.game.Game` that the rules' handlers
(:mod:`engine.base_rules`, the variants) and the state's JSON form (:mod:`engine.state_json`)
build and read. They live here, below all three, so that none of them imports another to get
them; :mod:`engine.game` re-exports both.
"""

from __future__ import annotations

from typing import Any


class PuzzleInPlay:
    """A puzzle a player has taken: the card index, filled cells and placements on it."""

    __slots__ = ("card", "filled", "placed")

    def __init__(self, card: int, filled: int = 0, placed: list[int] | None = None):
        self.card = card
        self.filled = filled
        self.placed = placed if placed is not None else []

    def copy(self) -> "PuzzleInPlay":
        return PuzzleInPlay(self.card, self.filled, self.placed[:])


class PlayerState:
    """One seat's belongings: supply counts per shape, unfinished and completed puzzles.

    ``completed`` holds card indices; ``locked`` counts pieces lying on puzzles completed
    in the finishing touches (R6.2: they do not return to the supply).
    """

    __slots__ = ("supply", "unfinished", "completed", "finish_pieces", "locked", "forfeited", "extra")

    def __init__(self, shapes: int):
        self.supply = [0] * shapes
        self.unfinished: list[PuzzleInPlay] = []
        self.completed: list[int] = []
        self.finish_pieces = 0
        self.locked = 0
        self.forfeited = False
        self.extra: dict[str, Any] = {}

    def copy(self) -> "PlayerState":
        c = PlayerState.__new__(PlayerState)
        c.supply = self.supply[:]
        c.unfinished = [pz.copy() for pz in self.unfinished]
        c.completed = self.completed[:]
        c.finish_pieces = self.finish_pieces
        c.locked = self.locked
        c.forfeited = self.forfeited
        c.extra = {k: (v[:] if isinstance(v, list) else v) for k, v in self.extra.items()}
        return c

    def pieces_owned(self, rules) -> int:
        """Supply plus pieces lying on any of the player's puzzles (R7.2 tie-break)."""
        return sum(self.supply) + sum(len(pz.placed) for pz in self.unfinished) + self.locked
