"""R2 Turns: the action budget, repeats, pass, and completions between actions."""

from __future__ import annotations

import pytest

from conftest import W09, W22, act, dealt, give_pieces, pass_turn, place, rejects, set_reserve, supply, take
from engine.actions import PASS, Pass, TakePiece


def test_R2_1_a_turn_is_three_actions_then_the_next_seat():
    game = dealt(3)
    for left in (3, 2, 1):
        assert game.to_move() == 0 and game.actions_left == left
        act(game, {"type": "take_piece"})
    assert game.to_move() == 1 and game.actions_left == 3
    assert supply(game, 0)["O1"] == 4


def test_R2_1_seats_go_in_order_and_rounds_count():
    game = dealt(3)
    seen = []
    for _ in range(7):
        seen.append((game.round, game.to_move()))
        pass_turn(game)
    assert seen == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (3, 0)]


@pytest.mark.parametrize("per_turn", [1, 2, 5])
def test_R2_1_actions_per_turn_is_a_parameter(per_turn):
    game = dealt(actions_per_turn=per_turn)
    for _ in range(per_turn):
        assert game.to_move() == 0
        act(game, {"type": "take_piece"})
    assert game.to_move() == 1 and game.actions_left == per_turn


def test_R2_1_the_same_action_may_be_repeated():
    game = dealt()
    take(game, "white", 0)
    take(game, "white", 0)
    take(game, "white", 0)
    ids = [game.rules.puzzles[pz.card].id for pz in game.players[0].unfinished]
    assert ids == ["W09", "W24", "W31"]  # slot 0 is refilled from the deck each time


def test_R2_1_master_action_at_most_once_per_turn():
    game = dealt()
    take(game, "white", 0)  # W09
    give_pieces(game, 0, {"I2": 1})
    act(game, {"type": "master", "placements": [{"puzzle": "W09", "piece": "O1", "cells": [[2, 2]]}]})
    second = {"type": "master", "placements": [{"puzzle": "W09", "piece": "O1", "cells": [[3, 2]]}]}
    give_pieces(game, 0, {"O1": 1})
    rejects(game, second, "R2.1")
    assert list(game.master_actions()) == []


def test_R2_1_master_action_is_available_again_next_turn():
    game = dealt()
    take(game, "white", 0)  # W09
    act(game, {"type": "master", "placements": [{"puzzle": "W09", "piece": "O1", "cells": [[2, 2]]}]})
    pass_turn(game)
    pass_turn(game)
    give_pieces(game, 0, {"O1": 1})
    act(game, {"type": "master", "placements": [{"puzzle": "W09", "piece": "O1", "cells": [[3, 2]]}]})
    assert [game.rules.puzzles[c].id for c in game.players[0].completed] == ["W09"]


def test_R2_2_pass_ends_the_turn_at_once():
    game = dealt()
    act(game, {"type": "take_piece"})
    pass_turn(game)
    assert game.to_move() == 1 and game.actions_left == 3
    assert supply(game, 0) == {"O1": 2, "I2": 1}


def test_R2_2_pass_is_always_legal_even_with_nothing_else_to_do():
    game = dealt(white=["W09", "W22", "W10", "W27"], black=["B13", "B14", "B15", "B16"], max_unfinished=1)
    take(game, "white", 0)
    game.players[0].supply = [0] * len(game.rules.shapes)
    set_reserve(game, {"O1": 0})
    legal = game.legal_actions()
    assert legal == [PASS]
    game.apply(Pass())
    assert game.to_move() == 1


def test_R2_3_completion_is_resolved_before_the_next_action():
    game = dealt()
    take(game, "white", 0)  # W09: I2 upright, reward O1
    place(game, "W09", "I2", W09)
    assert game.to_move() == 0 and game.actions_left == 1
    assert supply(game, 0) == {"O1": 2, "I2": 1}
    assert game.players[0].unfinished == []
    assert [game.rules.puzzles[c].id for c in game.players[0].completed] == ["W09"]


def test_R2_3_returned_piece_can_be_placed_by_the_next_action_of_the_turn():
    game = dealt(actions_per_turn=4)
    take(game, "white", 0)  # W09 (slot 0 is refilled with W24)
    take(game, "white", 1)  # W22
    place(game, "W09", "I2", W09)
    place(game, "W22", "I2", W22)
    assert [game.rules.puzzles[c].id for c in game.players[0].completed] == ["W09", "W22"]
    assert game.to_move() == 1


def test_R2_1_take_piece_is_just_one_action():
    game = dealt()
    game.apply(TakePiece())
    assert game.actions_left == 2 and game.to_move() == 0
