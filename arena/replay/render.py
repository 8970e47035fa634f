"""Text rendering of games: puzzles as 5x5 grids with the pieces on them.

Pieces are coloured by shape when the output is a terminal that supports colour (see
:func:`use_color`). The palette :data:`PIECE_COLOURS` is shared with the HTML replay viewer
(:mod:`arena.replay.html`), so a piece looks the same in both.
"""

from __future__ import annotations

import json
import os
import sys

from engine.cards import GRID

#: One colour per shape (RGB hex), shared by the terminal and the HTML viewer.
PIECE_COLOURS = {"O1": "#f2c14e", "I2": "#5cb85c", "I3": "#3fb8c9", "L3": "#4a7bd0", "I4": "#b05cc9",
                 "O4": "#e05d4f", "T4": "#f08a3c", "L4": "#7f8fe0", "Z4": "#8fd16a",
                 "P5": "#e57fc0", "U5": "#6fd6d0", "X5": "#c7c7c7"}
# The same shapes in the 16 basic ANSI colours, for terminals without 24-bit colour.
_COLORS = {"O1": 33, "I2": 32, "I3": 36, "L3": 34, "I4": 35, "O4": 31, "T4": 93, "L4": 94, "Z4": 92,
           "P5": 95, "U5": 96, "X5": 97}


def use_color(stream=None) -> bool:
    """Colour when the stream is a terminal that supports it.

    ``NO_COLOR`` (any value) turns colour off and ``FORCE_COLOR`` (non-empty) turns it on,
    as https://no-color.org and https://force-color.org ask; otherwise colour needs a
    terminal whose ``TERM`` is not ``dumb``.
    """
    stream = stream or sys.stdout
    if "NO_COLOR" in os.environ:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def truecolor() -> bool:
    """Whether the terminal announces 24-bit colour (``COLORTERM=truecolor`` or ``24bit``)."""
    return os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit")


def paint(name: str, text: str) -> str:
    """``text`` in the colour of shape ``name`` (24-bit when the terminal has it, else ANSI)."""
    hexa = PIECE_COLOURS.get(name)
    if hexa and truecolor():
        r, g, b = (int(hexa[i:i + 2], 16) for i in (1, 3, 5))
        return f"\x1b[1;38;2;{r};{g};{b}m{text}\x1b[0m"
    return f"\x1b[{_COLORS.get(name, 37)}m{text}\x1b[0m"


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
            ch = paint(name, ch)
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
    """A row card as a titled block: id, points, reward and its empty recess."""
    p = rules.puzzles[card]
    return f"{p.id} {p.points}p>{p.reward}", puzzle_rows(rules, card, [])


def render_player(game, seat: int, color: bool = False) -> list[str]:
    """A seat's supply, score and unfinished puzzles with their pieces."""
    rules = game.rules
    p = game.players[seat]
    names = [(rules.shapes[s].name, n) for s, n in enumerate(p.supply) if n]
    supply = " ".join((paint(name, name) if color else name) + f"x{n}" for name, n in names) or "-"
    head = (f"seat {seat}: score {game.score(seat)}, completed {len(p.completed)}"
            f"{' [forfeited]' if p.forfeited else ''}, supply {supply}")
    blocks = [(f"{rules.puzzles[pz.card].id} {rules.points[pz.card]}p", puzzle_rows(rules, pz.card, pz.placed, color))
              for pz in p.unfinished]
    return [head] + ["  " + line for line in side_by_side(blocks)]


def render_rows(game) -> list[str]:
    """Both rows of face-up puzzles with the number of cards left in each deck."""
    rules = game.rules
    out = []
    for c, name in ((0, "white"), (1, "black")):
        blocks = [card_block(rules, x) for x in game.rows[c] if x >= 0]
        out.append(f"{name} row ({len(game.decks[c])} in deck):")
        out.extend("  " + line for line in side_by_side(blocks))
    return out


def describe(entry: dict) -> str:
    """One line for a recorded action: ``seat 1 places L3 on W07``."""
    seat = entry.get("seat")
    if entry.get("forfeit"):
        return f"seat {seat} is forfeited"
    a = entry.get("action") or {}
    kind = a.get("type")
    if kind == "place":
        return f"seat {seat} places {a['piece']} on {a['puzzle']}"
    if kind in ("master", "finish"):
        parts = ", ".join(f"{p['piece']} on {p['puzzle']}" for p in a.get("placements", [])) or "nothing"
        return f"seat {seat} {'master action' if kind == 'master' else 'finishing touches'}: {parts}"
    if kind == "take_puzzle":
        where = f"the top of the {a['color']} deck" if a.get("blind") else (
            f"{a['color']} slot {a['slot']}" if "color" in a else f"grid slot {a.get('slot')}")
        return f"seat {seat} takes a puzzle from {where}"
    if kind == "upgrade":
        return f"seat {seat} returns {a['give']} and takes {a['take']}"
    if kind == "take_piece":
        return f"seat {seat} takes an O1"
    if kind == "recycle":
        return f"seat {seat} recycles the {a['color']} row"
    if kind == "reward":
        return f"seat {seat} takes {a['take']} as reward"
    if kind == "level_up":
        steps_ = ", ".join(f"{s['give']} to {s['take']}" for s in a.get("steps", [])) or "declines"
        return f"seat {seat} levels up: {steps_}"
    if kind == "ghost":
        return f"seat {seat} trades ghost {a['give']} for {', '.join(a.get('take', []))}"
    if kind == "pass":
        return f"seat {seat} passes"
    rest = {k: v for k, v in a.items() if k != "type"}
    return f"seat {seat} {kind} {json.dumps(rest) if rest else ''}".rstrip()


def bot_label(bot: str, ready: dict | None) -> str:
    """How a bot is shown: with the name and version it sent in ``ready`` when known
    (``greedy 1.0``; ``rawbot (MyBot 2.1)`` when the two names differ)."""
    if not ready:
        return bot
    version = f" {ready['version']}" if ready.get("version") else ""
    return f"{bot}{version}" if ready["name"] == bot else f"{bot} ({ready['name']}{version})"
