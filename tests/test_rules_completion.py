"""R4 Completing a puzzle: pieces back to the supply, card to the pile, reward from the reserve."""

from __future__ import annotations

import pytest

from conftest import W09, W22, W31, act, dealt, give_pieces, place, reserve, set_reserve, supply, take


def _completed(game, seat=0):
    return [game.rules.puzzles[c].id for c in game.players[seat].completed]


def test_R4_1_completed_puzzle_returns_pieces_and_gives_the_reward():
    game = dealt()
    take(game, "white", 2)  # W10: I3 upright, 1 point, reward I2
    place(game, "W10", "O1", [[1, 2]])
    assert supply(game, 0) == {"I2": 1}
    place(game, "W10", "I2", [[2, 2], [3, 2]])
    assert game.players[0].unfinished == []
    assert _completed(game) == ["W10"]
    assert supply(game, 0) == {"O1": 1, "I2": 2}
    assert reserve(game, "I2") == 7
    assert game.score(0) == 1


@pytest.mark.parametrize("card, cells, piece, reward", [
    ("W09", W09, "I2", "O1"),
    ("W22", W22, "I2", "I2"),
    ("W31", W31, "O4", "O4"),
])
def test_R4_1_reward_is_the_cards_shape(card, cells, piece, reward):
    game = dealt(white=[card, "W24", "W27", "W11"])
    give_pieces(game, 0, {piece: 1})
    take(game, "white", 0)
    before = dict(supply(game, 0))
    place(game, card, piece, cells)
    after = supply(game, 0)
    assert after.get(reward, 0) == before.get(reward, 0) + 1
    assert sum(after.values()) == sum(before.values()) + 1


def test_R4_1_completions_settle_in_the_order_the_puzzles_were_taken():
    game = dealt()
    take(game, "white", 1)  # W22 first
    take(game, "white", 0)  # then W09
    give_pieces(game, 0, {"I2": 1})
    act(game, {"type": "master", "placements": [
        {"puzzle": "W09", "piece": "I2", "cells": W09},
        {"puzzle": "W22", "piece": "I2", "cells": W22},
    ]})
    assert _completed(game) == ["W22", "W09"]
    assert supply(game, 0) == {"O1": 2, "I2": 3}


def test_R4_1_a_completed_puzzle_frees_an_unfinished_place():
    game = dealt(max_unfinished=1)
    take(game, "white", 0)  # W09
    place(game, "W09", "I2", W09)
    take(game, "white", 0)
    assert len(game.players[0].unfinished) == 1


def test_R4_1_an_unfinished_puzzle_gives_nothing_yet():
    game = dealt()
    take(game, "white", 2)  # W10
    place(game, "W10", "I2", [[1, 2], [2, 2]])
    assert _completed(game) == [] and supply(game, 0) == {"O1": 1}
    assert game.score(0) == 0


def test_R4_2_reward_out_of_stock_gives_nothing():
    game = dealt()
    set_reserve(game, {"O1": 0})
    take(game, "white", 0)  # W09, reward O1
    place(game, "W09", "I2", W09)
    assert _completed(game) == ["W09"]
    assert supply(game, 0) == {"O1": 1, "I2": 1}
    assert reserve(game, "O1") == 0
    assert game.phase_name == "action" and game.actions_left == 1
