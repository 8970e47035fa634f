"""Explicit deals: both decks' orders given as card ids, instead of a seeded shuffle.

A deal is ``{"white": [ids, top first], "black": [ids, top first]}``. It serves tests, a
shared "deal of the week", and reproducing a reported game. Each id must be a puzzle of
this game's card pool, of the deck's colour, used once. The decks may be shorter than a
shuffled deal (a test may want a two-card black deck); the black deck's length replaces
``black_deck_size``. A deal must hold at least one puzzle: the rows are dealt from the
decks (R1.2) and the end is triggered by an empty black deck (R5.1), so with both decks
empty nothing could ever be taken and every game would end 0-0.

A *deal book* is a file of deals, one JSON object per line (blank lines and lines starting
with ``#`` are skipped); :func:`load_book` reads one, naming the line of any mistake. A
book is played as the rules deal (R1.1-R1.2), so each of its deals must hold the *full*
decks: every white puzzle of the card pool and ``black_deck_size`` black ones (solo: its
``solo.white_cards`` whites and ``black_deck_size`` blacks), as ``arena deals make`` writes
them. A book of short decks -- to test an end condition, or to replay a position -- says
so with a comment line ``# test-book`` (a note may follow: ``# test-book: a two-card black
deck for R5.1``) before its first deal; it is then read as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import DealError
from .jsonfile import read_json_file


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
    if not out[0] and not out[1]:
        raise DealError("deal: both decks are empty; a deal needs at least one puzzle (the rows are "
                        "dealt from the decks, R1.2, and the game ends when the black deck is empty, R5.1)")
    return out


#: the comment line, before a book's first deal, that marks a book of short decks
TEST_BOOK = "# test-book"
_TEST_BOOK = re.compile(r"^#\s*test-book\b", re.I)


def full_deck_sizes(rules) -> tuple[int, int]:
    """How many white and black puzzles the rules deal (R1.1; a variant may change it)."""
    return rules.deck_sizes


def check_full(rules, deal) -> None:
    """Refuse a (valid) deal whose decks are not the full decks the rules deal (R1.1-R1.2)."""
    white, black = full_deck_sizes(rules)
    have = (len(deal.get("white") or []), len(deal.get("black") or []))
    if have != (white, black):
        raise DealError(f"the decks are not full: white has {have[0]} of {white} puzzles and black {have[1]} of "
                        f"{black} for rules {rules.spec.label()} at {rules.players} seat"
                        f"{'s' if rules.players != 1 else ''} (R1.1-R1.2); a book of short decks says so with a "
                        f"'{TEST_BOOK}' line before its first deal")


def load_deal(path: str | Path) -> dict:
    """Read a deal file (JSON); errors name the file."""
    data = read_json_file(path, DealError, "deal file")
    if not isinstance(data, dict):
        raise DealError(f"{path}: a deal must be an object with 'white' and 'black' lists of card ids")
    return data


def is_test_book(text: str) -> bool:
    """Whether a book's text marks it as a test book (``# test-book`` before its first deal)."""
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.lstrip().startswith("#"):
            return False
        if _TEST_BOOK.match(line.strip()):
            return True
    return False


def load_book(path: str | Path, rules=None) -> list[dict]:
    """Read a deal book (JSON lines, one deal per line); errors name the file and the line.

    With compiled ``rules`` every deal is also checked against them (:func:`check_deal`)
    and, unless the book is a test book (:data:`TEST_BOOK`), must hold the full decks
    (:func:`check_full`); a mistake in a deal is reported before a short deck.
    """
    import json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise DealError(f"{path}: cannot read the deal book ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise DealError(f"{path}: the deal book is not UTF-8 text") from None
    deals = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            deal = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DealError(f"{path}, line {number}: not a JSON object ({exc.msg})") from None
        if not isinstance(deal, dict):
            raise DealError(f"{path}, line {number}: a deal must be an object with 'white' and 'black' "
                            "lists of card ids")
        if rules is not None:
            try:
                check_deal(rules, deal)
            except DealError as exc:
                raise DealError(f"{path}, line {number}: {exc}") from None
        deals.append((number, deal))
    if not deals:
        raise DealError(f"{path}: the deal book holds no deal")
    if rules is not None and not is_test_book(text):
        for number, deal in deals:
            try:
                check_full(rules, deal)
            except DealError as exc:
                raise DealError(f"{path}, line {number}: {exc}") from None
    return [deal for _, deal in deals]


def make_book(rules, count: int, seed: int) -> list[dict]:
    """``count`` deals shuffled as R1.1 shuffles them for compiled ``rules``: deal ``i`` is
    the deal the base setup shuffles from seed ``seed + i``."""
    import random

    whites = [i for i, p in enumerate(rules.puzzles) if p.color == "white"]
    blacks = [i for i, p in enumerate(rules.puzzles) if p.color == "black"]
    white_size, black_size = full_deck_sizes(rules)
    out = []
    for i in range(count):
        rng = random.Random(seed + i)
        w, b = whites[:], blacks[:]
        rng.shuffle(w)
        rng.shuffle(b)
        out.append({"white": [rules.puzzles[k].id for k in w[:white_size]],
                    "black": [rules.puzzles[k].id for k in b[:black_size]]})
    return out
