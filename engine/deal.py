"""Explicit deals: both decks' orders given as card ids, instead of a seeded shuffle.

A deal is ``{"white": [ids, top first], "black": [ids, top first]}``. It serves tests, a
shared "deal of the week", and reproducing a reported game. Each id must be a puzzle of
this game's card pool, of the deck's colour, used once. The decks may be shorter than a
shuffled deal (a test may want a two-card black deck); the black deck's length replaces
``black_deck_size``.
"""

from __future__ import annotations

from pathlib import Path

from .errors import DealError
from .rules import read_json_file


def check_deal(rules, deal) -> list[list[int]]:
    """Validate ``deal`` against ``rules``; return ``[white, black]`` as card indices."""
    if not isinstance(deal, dict):
        raise DealError("a deal must be an object with 'white' and 'black' lists of card ids")
    unknown = set(deal) - {"white", "black"}
    if unknown:
        raise DealError(f"a deal has only 'white' and 'black', not {sorted(unknown)[0]!r}")
    out = []
    seen = set()
    for color in ("white", "black"):
        ids = deal.get(color)
        if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
            raise DealError(f"deal: '{color}' must be a list of card ids")
        deck = []
        for cid in ids:
            idx = rules.puzzle_index.get(cid)
            if idx is None:
                raise DealError(f"deal: '{color}' names {cid!r}, which is not a puzzle of rules {rules.spec.label()}")
            if rules.puzzles[idx].color != color:
                raise DealError(f"deal: {cid} is a {rules.puzzles[idx].color} puzzle, not {color}")
            if cid in seen:
                raise DealError(f"deal: {cid} appears twice")
            seen.add(cid)
            deck.append(idx)
        out.append(deck)
    return out


def load_deal(path: str | Path) -> dict:
    """Read a deal file (JSON); errors name the file."""
    data = read_json_file(path, DealError, "deal file")
    if not isinstance(data, dict):
        raise DealError(f"{path}: a deal must be an object with 'white' and 'black' lists of card ids")
    return data
