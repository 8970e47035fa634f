"""R5 Game end (trigger, last rounds, max_rounds) and R6 finishing touches."""

from __future__ import annotations

import re

import pytest

from conftest import (FIVE_BLACKS, W09, W22, act, dealt, give_pieces, pass_turn, rejects, reserve, start_finish,
                      supply, take)
from engine import observation
from engine.actions import Finish, Master, Pass, TakePiece, TakePuzzle, Upgrade
from engine.events import events_since

FOUR_BLACKS = FIVE_BLACKS[:4]


def _turns_until_finish(game):
    """(round, seat) of every turn until the finishing touches, everyone passing."""
    turns = []
    while game.phase_name == "action":
        turns.append((game.round, game.to_move()))
        pass_turn(game)
    return turns


# ---------------------------------------------------------------- R5 game end
@pytest.mark.parametrize("players, trigger_seat, expected", [
    (2, 0, [(1, 1), (2, 0), (2, 1)]),
    (2, 1, [(2, 0), (2, 1)]),
    (3, 1, [(1, 2), (2, 0), (2, 1), (2, 2)]),
    (4, 0, [(1, 1), (1, 2), (1, 3), (2, 0), (2, 1), (2, 2), (2, 3)]),
    (4, 3, [(2, 0), (2, 1), (2, 2), (2, 3)]),
])
def test_R5_2_trigger_mid_round_finishes_the_round_then_one_more(players, trigger_seat, expected):
    game = dealt(players)
    for _ in range(trigger_seat):
        pass_turn(game)
    take(game, "black", 0)  # the fifth black card leaves the deck empty
    assert game.end_triggered and game.final_round == 2
    pass_turn(game)
    assert _turns_until_finish(game) == expected
    assert game.phase_name == "finish" and game.to_move() == 0


def test_R5_1_trigger_in_a_later_round():
    game = dealt(3)
    for _ in range(4):  # round 1, then seat 0 of round 2
        pass_turn(game)
    take(game, "black", 3)
    assert game.end_triggered and game.final_round == 3
    pass_turn(game)
    assert _turns_until_finish(game) == [(2, 2), (3, 0), (3, 1), (3, 2)]


def test_R5_1_taking_a_row_card_with_cards_left_does_not_trigger():
    game = dealt(black=FIVE_BLACKS + ["B18"])
    take(game, "black", 0)
    assert not game.end_triggered


def test_R5_1_emptying_the_white_deck_does_not_trigger():
    game = dealt(white=["W09", "W22", "W10", "W27", "W24"])
    take(game, "white", 0)
    assert game.decks[0] == [] and not game.end_triggered


def test_R5_1_taking_from_the_black_row_after_the_trigger_changes_nothing():
    game = dealt()
    take(game, "black", 0)
    take(game, "black", 0)
    assert game.rows[1][0] == -1 and game.final_round == 2


@pytest.mark.parametrize("black", [FOUR_BLACKS, FIVE_BLACKS[:2], []])
def test_R5_1_trigger_at_setup_when_dealing_the_row_empties_the_black_deck(black):
    game = dealt(black=black)
    assert game.end_triggered and game.final_round == 2
    assert _turns_until_finish(game) == [(1, 0), (1, 1), (2, 0), (2, 1)]


def test_R5_1_trigger_at_setup_with_a_shuffled_small_black_deck(new_game):
    game = new_game(black_deck_size={2: 4})
    assert game.end_triggered and game.final_round == 2


def test_R5_3_max_rounds_adjudicates_an_untriggered_game():
    game = dealt(max_rounds=3)
    assert _turns_until_finish(game) == [(r, s) for r in (1, 2, 3) for s in (0, 1)]
    assert game.adjudicated and game.phase_name == "finish"
    start_finish(game)
    for _ in range(2):
        act(game, {"type": "finish", "placements": []})
    assert game.is_over and game.result()["adjudicated"] and game.result()["rounds"] == 3


def test_R5_3_a_triggered_game_is_not_cut_by_max_rounds():
    game = dealt(max_rounds=2)
    pass_turn(game)
    pass_turn(game)
    take(game, "black", 0)  # triggered in round 2 = max_rounds
    assert _turns_until_finish(game) == [(2, 0), (2, 1), (3, 0), (3, 1)]
    assert not game.adjudicated and game.round == 3


def test_R5_3_default_max_rounds_is_100():
    game = dealt()
    assert game.rules.max_rounds == 100
    turns = _turns_until_finish(game)
    assert turns[-1] == (100, 1) and game.adjudicated


# ---------------------------------------------------------------- R6 finishing touches
def _finish_with(white=("W09", "W22", "W10", "W27"), takes=(0,), players=2, **params):
    """A game at its finishing touches where seat 0 took the given white slots in round 1."""
    game = dealt(players, white=list(white), black=FOUR_BLACKS, **params)
    for slot in takes:
        take(game, "white", slot)
    start_finish(game)
    assert game.phase_name == "finish" and game.to_move() == 0
    return game


def _finish(game, *placements):
    act(game, {"type": "finish", "placements": [{"puzzle": c, "piece": p, "cells": cells} for c, p, cells in placements]})


def _completed(game, seat=0):
    return [game.rules.puzzles[c].id for c in game.players[seat].completed]


def test_R6_1_seats_choose_in_seat_order_then_the_game_is_over():
    game = _finish_with(players=3)
    order = []
    while not game.is_over:
        order.append(game.to_move())
        assert game.legal_actions() == [Finish(())]
        _finish(game)
    assert order == [0, 1, 2] and game.to_move() == -1


@pytest.mark.parametrize("cost, score", [(1, -1), (0, 1), (3, -5)])
def test_R6_1_each_piece_placed_costs_finishing_touch_cost(cost, score):
    game = _finish_with(takes=(2,), finishing_touch_cost=cost)  # W10, 1 point, I3 upright
    _finish(game, ("W10", "O1", [[1, 2]]), ("W10", "I2", [[2, 2], [3, 2]]))
    _finish(game)
    assert _completed(game) == ["W10"]
    assert game.players[0].finish_pieces == 2
    assert game.score(0) == score


def test_R6_1_pieces_placed_on_a_puzzle_left_unfinished_still_cost():
    game = _finish_with(takes=(2,))  # W10
    _finish(game, ("W10", "O1", [[1, 2]]))
    _finish(game)
    assert _completed(game) == [] and game.score(0) == -1


def test_R6_1_no_limit_per_puzzle_and_several_puzzles():
    game = _finish_with(takes=(0, 2))  # W09 and W10 (the white deck is empty: no refills)
    give_pieces(game, 0, {"O1": 2})
    _finish(game, ("W10", "O1", [[1, 2]]), ("W10", "O1", [[2, 2]]), ("W10", "O1", [[3, 2]]),
            ("W09", "I2", W09))
    _finish(game)
    assert sorted(_completed(game)) == ["W09", "W10"]
    assert game.score(0) == 1 + 1 - 4


@pytest.mark.parametrize("placements, rule, words", [
    ([("W09", "I2", W09), ("W09", "O1", [[2, 2]])], "R3.5", "overlap"),
    ([("W09", "O1", [[2, 2]]), ("W09", "O1", [[3, 2]])], "R3.5", "no more O1"),
    ([("W09", "L3", [[2, 2], [3, 2], [3, 3]])], "R3.5", "not a L3|no L3"),
    ([("W09", "I2", [[1, 2], [2, 2]])], "R3.5", "only recess cells"),
    ([("W22", "I2", W22)], "R3.5", "not one of your unfinished puzzles"),
])
def test_R6_1_finishing_touches_follow_the_placement_rules(placements, rule, words):
    game = _finish_with(takes=(0,))  # W09
    obj = {"type": "finish", "placements": [{"puzzle": c, "piece": p, "cells": cells} for c, p, cells in placements]}
    err = rejects(game, obj, rule)
    assert re.search(words, str(err))


def test_R6_2_completed_in_finishing_touches_gives_no_reward_and_keeps_its_pieces():
    game = _finish_with(takes=(0,))  # W09: reward O1
    o1_reserve = reserve(game, "O1")
    _finish(game, ("W09", "I2", W09))
    _finish(game)
    p = game.players[0]
    assert _completed(game) == ["W09"] and p.unfinished == []
    assert supply(game, 0) == {"O1": 1}
    assert reserve(game, "O1") == o1_reserve
    assert p.locked == 1
    assert game.score(0) == 1 - 1


def test_R6_2_pieces_of_a_puzzle_completed_in_finishing_touches_cannot_be_reused():
    game = _finish_with(takes=(0, 1))  # W09 and W22, both I2 upright; one I2 in the supply
    rejects(game, {"type": "finish", "placements": [
        {"puzzle": "W09", "piece": "I2", "cells": W09},
        {"puzzle": "W22", "piece": "I2", "cells": W22}]}, "R3.5")


def test_R6_2_locked_pieces_include_those_placed_before():
    game = dealt(white=["W10", "W09", "W22", "W27"], black=FOUR_BLACKS)
    take(game, "white", 0)  # W10
    act(game, {"type": "place", "puzzle": "W10", "piece": "O1", "cells": [[1, 2]]})
    start_finish(game)
    _finish(game, ("W10", "I2", [[2, 2], [3, 2]]))
    _finish(game)
    assert game.players[0].locked == 2 and game.players[0].finish_pieces == 1
    assert game.players[0].pieces_owned(game.rules) == 2
    assert game.score(0) == 1 - 1


@pytest.mark.parametrize("action", [TakePiece(), Pass(), TakePuzzle(1, 0), Upgrade(0, 1), Master(())])
def test_R6_3_no_other_action_during_finishing_touches(action):
    game = _finish_with()
    rejects(game, action, "R6.3")


@pytest.mark.parametrize("action", [TakePiece(), Pass(), Finish(()), TakePuzzle(0, 0)])
def test_R6_no_action_after_the_game_is_over(action):
    game = _finish_with()
    _finish(game)
    _finish(game)
    assert game.is_over and game.to_move() == -1
    err = rejects(game, action, "R6")
    assert "the game is over" in str(err)


def test_R6_1_no_one_sees_another_seats_finishing_touches_before_the_end():
    game = dealt(white=["W09", "W22", "W10", "W27"], black=FOUR_BLACKS)
    take(game, "white", 0)
    start_finish(game)
    start = len(game.history)
    before = observation(game, 1)
    _finish(game, ("W09", "I2", W09))
    after = observation(game, 1)
    for obs in (before, after):
        obs.pop("to_move"), obs.pop("seat")
    assert after["seats"][0] == before["seats"][0]
    events, nxt = events_since(game, 1, start)
    assert events == [{"seat": 0, "action": {"type": "finish", "hidden": True}}]
    mine, _ = events_since(game, 0, start)
    assert mine[0]["action"]["placements"][0]["puzzle"] == "W09"
    _finish(game)
    events, _ = events_since(game, 1, start)
    assert events[0]["action"]["placements"][0]["cells"] == W09
    assert events[1] == {"seat": 1, "action": {"type": "finish", "placements": []}}


def test_R6_1_finish_actions_enumerates_legal_choices():
    game = _finish_with(takes=(0,))  # W09; supply O1, I2
    choices = list(game.finish_actions())
    assert choices[0] == Finish(())
    # nothing; I2; O1 top; O1 bottom (O1 twice would need two O1)
    assert len(choices) == 4 and len(set(choices)) == 4
    for c in choices:
        game.clone().apply(c)
