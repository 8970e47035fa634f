"""Text rendering of games: puzzles as 5x5 grids with the pieces on them."""

from __future__ import annotations

import os
import sys

from engine.cards import GRID

# One letter per shape for the pieces on a puzzle; '#' is an empty recess cell.
_COLORS = {"O1": 33, "I2": 32, "I3": 36, "L3": 34, "I4": 35, "O4": 31, "T4": 93, "L4": 94, "Z4": 92,
           "P5": 95, "U5": 96, "X5": 97}


def use_color(stream=None) -> bool:
    """Colour when the stream is a terminal and ``NO_COLOR`` is not set."""
    stream = stream or sys.stdout
    return hasattr(stream, "isatty") and stream.isatty() and "NO_COLOR" not in os.environ


def puzzle_rows(rules, card: int, placed: list[int], color: bool = False) -> list[str]:
    """The puzzle ``card`` with ``placed`` placements, as GRID strings.

    ``.`` is the card surface, ``#`` an empty recess cell, and a piece's cells show the
    first letter of its shape (lower case for every other piece, to tell neighbours apart).
    """
    g = rules.geometry
    grid = [["." for _ in range(GRID)] for _ in range(GRID)]
    recess = rules.recess[card]
    for i in range(GRID * GRID):
        if recess >> i & 1:
            grid[i // GRID][i % GRID] = "#"
    for n, pid in enumerate(placed):
        name = rules.shapes[g.placement_shape[pid]].name
        ch = name[0] if n % 2 == 0 else name[0].lower()
        if color:
            ch = f"\x1b[{_COLORS.get(name, 37)}m{ch}\x1b[0m"
        m = g.placement_mask[pid]
        for i in range(GRID * GRID):
            if m >> i & 1:
                grid[i // GRID][i % GRID] = ch
    return ["".join(row) for row in grid]


def side_by_side(blocks: list[tuple[str, list[str]]], gap: int = 3) -> list[str]:
    """Lay titled blocks of equal height next to each other."""
    if not blocks:
        return []
    width = max(max(len(t) for t, _ in blocks), GRID)
    lines = ["".join(t.ljust(width + gap) for t, _ in blocks).rstrip()]
    for r in range(len(blocks[0][1])):
        lines.append("".join(b[r] + " " * (width + gap - GRID) for _, b in blocks).rstrip())
    return lines


def card_block(rules, card: int) -> tuple[str, list[str]]:
    p = rules.puzzles[card]
    return f"{p.id} {p.points}p>{p.reward}", puzzle_rows(rules, card, [])


def render_player(game, seat: int, color: bool = False) -> list[str]:
    """A seat's supply, score and unfinished puzzles with their pieces."""
    rules = game.rules
    p = game.players[seat]
    supply = " ".join(f"{rules.shapes[s].name}x{n}" for s, n in enumerate(p.supply) if n) or "-"
    head = (f"seat {seat}: score {game.score(seat)}, completed {len(p.completed)}"
            f"{' [forfeited]' if p.forfeited else ''}, supply {supply}")
    blocks = [(f"{rules.puzzles[pz.card].id} {rules.points[pz.card]}p", puzzle_rows(rules, pz.card, pz.placed, color))
              for pz in p.unfinished]
    return [head] + ["  " + line for line in side_by_side(blocks)]


def render_rows(game) -> list[str]:
    rules = game.rules
    out = []
    for c, name in ((0, "white"), (1, "black")):
        blocks = [card_block(rules, x) for x in game.rows[c] if x >= 0]
        out.append(f"{name} row ({len(game.decks[c])} in deck):")
        out.extend("  " + line for line in side_by_side(blocks))
    return out
