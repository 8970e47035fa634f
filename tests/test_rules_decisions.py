"""The Decisions of R3.4, R9.6 and R11.5: points the rulebooks leave open, settled by the
rules contract. Each test is built so that it fails if the engine decided the point the
other way.
"""

from __future__ import annotations

import pytest

from conftest import SMALL_WHITES, give_pieces, rejects, set_reserve, supply
from variant_helpers import act, expected_piece_totals, listed_json, new, piece_totals

GHOSTS = ("P5", "U5", "X5")
LEVEL_3 = ("I3", "L3")
LEVEL_4 = ("I4", "O4", "T4", "L4", "Z4")
FOUR_BLACKS = ["B13", "B14", "B15", "B16"]  # the row empties the deck: the end is triggered at setup

GB01_FILL = [("I4", [[0, 0], [1, 0], [2, 0], [3, 0]]), ("I4", [[0, 1], [0, 2], [0, 3], [0, 4]]),
             ("I2", [[1, 4], [2, 4]])]
GB05_FILL = [("L3", [[0, 0], [1, 0], [1, 1]]), ("L3", [[0, 4], [1, 4], [1, 3]]),
             ("T4", [[2, 1], [2, 2], [2, 3], [3, 2]]), ("O1", [[4, 2]])]
W31 = [[2, 1], [2, 2], [3, 1], [3, 2]]
GW01_O4 = [[1, 1], [1, 2], [2, 1], [2, 2]]  # GW01 is a P5 recess: an O4 and an O1 fill it
GW01_O1 = [[3, 1]]


def ghost_game(variants=("ghost",), white=SMALL_WHITES, black=("GB01", "GB05", "B13", "B14", "B15"), **params):
    """A two-player game with an explicit deal and eight actions a turn, so that a test can
    take and fill puzzles in one turn (none of the rules tested depend on the count)."""
    params.setdefault("actions_per_turn", 8)
    return new(variants, 2, white=white, black=black, **params)


def place(game, puzzle, piece, cells):
    act(game, {"type": "place", "puzzle": puzzle, "piece": piece, "cells": cells})


def take(game, color, slot):
    act(game, {"type": "take_puzzle", "color": color, "slot": slot})


def steps_json(steps):
    return {"type": "level_up", "steps": [{"give": g, "take": t} for g, t in steps]}


def level_up_options(game) -> set[tuple[tuple[str, str], ...]]:
    return {tuple((s["give"], s["take"]) for s in a["steps"]) for a in listed_json(game)}


def upgrade_takes(game, give: str) -> set[str]:
    return {a["take"] for a in listed_json(game) if a["type"] == "upgrade" and a["give"] == give}


# ---------------------------------------------------------------- R3.4 no upgrade or exchange takes a ghost
@pytest.mark.parametrize("variants", [("ghost",), ("revised", "ghost")])
@pytest.mark.parametrize("give, empty, takes", [
    ("L4", (), {"O1", "I2", "I3", "L3", "I4", "O4", "T4", "Z4"}),  # exchanges within level 4 and below
    ("I3", LEVEL_4, {"O1", "I2", "L3"}),                           # level 4 empty: no skip to level 5
    ("O1", ("I2",) + LEVEL_3 + LEVEL_4, set()),                    # only ghosts above: nothing at all
    ("P5", (), {"O1", "I2", "I3", "L3", "I4", "O4", "T4", "L4", "Z4"}),  # a ghost goes down, never across
    ("X5", ("I2",) + LEVEL_3 + LEVEL_4, {"O1"}),
])
def test_R3_4_listed_upgrades_and_exchanges_never_take_a_ghost(variants, give, empty, takes):
    game = ghost_game(variants)
    give_pieces(game, 0, {give: 1})
    set_reserve(game, {n: 0 for n in empty})
    assert upgrade_takes(game, give) == takes


@pytest.mark.parametrize("give, take, empty", [
    ("L4", "P5", ()),                                # an upgrade to level 5
    ("I4", "X5", LEVEL_4),                           # even when no other level-4 shape is in stock
    ("I3", "U5", LEVEL_4),                           # the skip rule stops at level 4
    ("O1", "P5", ("I2",) + LEVEL_3 + LEVEL_4),
    ("P5", "U5", ()),                                # an exchange for another ghost
    ("X5", "P5", ("O1", "I2") + LEVEL_3 + LEVEL_4),  # even when nothing else is in stock
])
def test_R3_4_an_upgrade_or_exchange_that_takes_a_ghost_is_refused(give, take, empty):
    game = ghost_game()
    give_pieces(game, 0, {give: 1})
    set_reserve(game, {n: 0 for n in empty})
    err = rejects(game, {"type": "upgrade", "give": give, "take": take}, "R3.4")
    assert "level-5" in str(err)


@pytest.mark.parametrize("give, take", [("P5", "O1"), ("U5", "I2"), ("X5", "L3"), ("P5", "Z4"), ("U5", "O4")])
def test_R3_4_a_ghost_may_be_exchanged_down(give, take):
    game = ghost_game()
    give_pieces(game, 0, {give: 1})
    before = supply(game, 0)
    act(game, {"type": "upgrade", "give": give, "take": take})
    after = dict(before, **{give: before[give] - 1, take: before.get(take, 0) + 1})
    assert supply(game, 0) == {k: v for k, v in after.items() if v}
    assert piece_totals(game) == expected_piece_totals(game)
