"""R9 variant ``revised``: recycle, blind takes, reward fallback, one black puzzle after the
end, the unfinished penalty, hidden piles (their visibility is in ``test_variant_open_scores.py``)."""

from __future__ import annotations

import pytest

from conftest import FIVE_BLACKS, SMALL_WHITES, give_pieces, is_listed, pass_turn, rejects, set_reserve, supply
from engine import observation
from engine.actions import Pass
from plugins.revised import Recycle, TakeBlind
from variant_helpers import act, listed_json, new

R = ("revised",)


def ids(game, cards):
    """Card ids of card indices (-1 -> None)."""
    return [game.rules.puzzles[c].id if c >= 0 else None for c in cards]


def revised(white=SMALL_WHITES, black=FIVE_BLACKS, players=2, **params):
    """A revised game with an explicit deal."""
    return new(R, players, white=white, black=black, **params)


# ---------------------------------------------------------------- R9.1 recycle
@pytest.mark.parametrize("color, white, black, row_after, deck_after", [
    ("white", SMALL_WHITES, FIVE_BLACKS,
     ["W24", "W31", "W23", "W11"], ["W09", "W22", "W10", "W27"]),
    ("black", SMALL_WHITES, FIVE_BLACKS + ["B18"],
     ["B17", "B18", "B13", "B14"], ["B15", "B16"]),
    ("white", ["W09", "W22", "W10", "W27", "W24"], FIVE_BLACKS,
     ["W24", "W09", "W22", "W10"], ["W27"]),
])
def test_R9_1_recycle_puts_the_row_under_the_deck_left_to_right_and_deals_a_fresh_row(
        color, white, black, row_after, deck_after):
    game = revised(white, black)
    c = ("white", "black").index(color)
    act(game, {"type": "recycle", "color": color})
    assert ids(game, game.rows[c]) == row_after
    assert ids(game, game.decks[c]) == deck_after
    assert game.actions_left == 2


def test_R9_1_recycle_a_row_with_one_card():
    game = revised(white=["W09", "W22", "W10", "W27"])
    for slot in range(3):
        act(game, {"type": "take_puzzle", "color": "white", "slot": slot})
    assert ids(game, game.rows[0]) == [None, None, None, "W27"]
    pass_turn(game)
    act(game, {"type": "recycle", "color": "white"})
    assert ids(game, game.rows[0]) == ["W27", None, None, None]
    assert game.decks[0] == []


@pytest.mark.parametrize("black", [FIVE_BLACKS, FIVE_BLACKS[:4], FIVE_BLACKS[:2]])
def test_R9_1_recycle_never_triggers_the_end(black):
    game = revised(black=black)
    triggered = game.end_triggered  # a deal of four or fewer triggers at setup (R5.1)
    deck = len(game.decks[1])
    act(game, {"type": "recycle", "color": "black"})
    act(game, {"type": "recycle", "color": "black"})
    assert game.end_triggered == triggered and len(game.decks[1]) == deck
    if not triggered:
        assert game.final_round == 0


def test_R9_1_recycle_is_illegal_on_an_empty_row_and_not_listed():
    game = revised(white=[])
    assert ids(game, game.rows[0]) == [None] * 4
    rejects(game, {"type": "recycle", "color": "white"}, "R9.1")
    assert not is_listed(game, Recycle(0)) and is_listed(game, Recycle(1))


# ---------------------------------------------------------------- R9.2 blind take
@pytest.mark.parametrize("color, card", [("white", "W24"), ("black", "B17")])
def test_R9_2_blind_take_takes_the_top_card_and_leaves_the_row(color, card):
    game = revised()
    rows = [r[:] for r in game.rows]
    act(game, {"type": "take_puzzle", "color": color, "blind": True})
    assert ids(game, [pz.card for pz in game.players[0].unfinished]) == [card]
    assert game.rows == rows and game.actions_left == 2


def test_R9_2_blind_take_has_the_same_unfinished_limit():
    game = revised(max_unfinished=1)
    act(game, {"type": "take_puzzle", "color": "white", "blind": True})
    rejects(game, {"type": "take_puzzle", "color": "black", "blind": True}, "R3.1")
    assert not any(type(a) is TakeBlind for a in game.legal_actions())


def test_R9_2_blind_take_from_an_empty_deck_is_illegal_and_not_listed():
    game = revised(white=["W09", "W22", "W10", "W27"])
    rejects(game, {"type": "take_puzzle", "color": "white", "blind": True}, "R9.2")
    assert not is_listed(game, TakeBlind(0)) and is_listed(game, TakeBlind(1))


def test_R9_2_emptying_the_black_deck_blind_triggers_the_end():
    game = revised()
    assert len(game.decks[1]) == 1 and not game.end_triggered
    act(game, {"type": "take_puzzle", "color": "black", "blind": True})
    assert game.end_triggered and game.final_round == 2


@pytest.mark.parametrize("obj", [
    {"type": "take_puzzle", "color": "white", "blind": False},
    {"type": "take_puzzle", "color": "white", "blind": True, "slot": 0},
    {"type": "take_puzzle", "color": "grey", "blind": True},
])
def test_R14_malformed_blind_take_is_rejected(obj):
    rejects(revised(), obj, "R14")


# ---------------------------------------------------------------- R9.3 reward fallback
def _complete_w09(game):
    """Seat 0 takes W09 (reward O1) and completes it with its I2."""
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})
    act(game, {"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]})


def _complete_w10(game):
    """Seat 0 takes W10 (reward I2) and completes it with its I2 and O1 (action 3)."""
    act(game, {"type": "take_puzzle", "color": "white", "slot": 2})
    act(game, {"type": "place", "puzzle": "W10", "piece": "I2", "cells": [[1, 2], [2, 2]]})
    act(game, {"type": "place", "puzzle": "W10", "piece": "O1", "cells": [[3, 2]]})


def test_R9_3_reward_in_stock_is_taken_as_usual():
    game = revised()
    _complete_w09(game)
    assert supply(game, 0) == {"O1": 2, "I2": 1} and game.phase_name == "action"


def test_R9_3_one_possible_fallback_shape_is_taken_without_asking():
    game = revised()
    set_reserve(game, {"O1": 0})
    _complete_w09(game)
    assert game.phase_name == "action" and supply(game, 0) == {"O1": 1, "I2": 2}


def test_R9_3_several_fallback_shapes_open_a_reward_decision():
    game = revised()
    set_reserve(game, {"I2": 0})
    _complete_w10(game)
    assert game.phase_name == "reward" and game.to_move() == 0
    assert sorted(o["take"] for o in listed_json(game)) == ["I3", "L3"]
    assert observation(game, 0)["decision"]["options"] == ["I3", "L3"]
    assert "decision" not in observation(game, 1)
    l3 = game.reserve[game.rules.shape_index["L3"]]
    act(game, {"type": "reward", "take": "L3"})
    assert supply(game, 0) == {"O1": 1, "I2": 1, "L3": 1}
    assert game.reserve[game.rules.shape_index["L3"]] == l3 - 1
    assert game.phase_name == "action" and game.to_move() == 1  # the third action ended the turn


def test_R9_3_the_fallback_skips_a_level_without_stock():
    game = revised()
    set_reserve(game, {"I2": 0, "I3": 0, "L3": 0, "I4": 0, "O4": 0, "T4": 0})
    _complete_w10(game)
    assert game.phase_name == "reward"
    assert sorted(o["take"] for o in listed_json(game)) == ["L4", "Z4"]


@pytest.mark.parametrize("choice, rule", [("I4", "R9.3"), ("I2", "R9.3"), ("X9", "R0")])
def test_R9_3_a_reward_choice_outside_the_options_is_rejected(choice, rule):
    game = revised()
    set_reserve(game, {"I2": 0})
    _complete_w10(game)
    rejects(game, {"type": "reward", "take": choice}, rule)
    rejects(game, Pass(), "R14")


def test_R9_3_no_higher_level_in_stock_means_no_reward():
    game = revised()
    set_reserve(game, {n: 0 for n in ("I2", "I3", "L3", "I4", "O4", "T4", "L4", "Z4")})
    _complete_w10(game)
    assert game.phase_name == "action" and supply(game, 0) == {"O1": 1, "I2": 1}


# ---------------------------------------------------------------- R9.4 one black puzzle after the end
def test_R9_4_one_black_take_after_the_trigger_the_triggering_take_not_counted():
    game = revised()
    act(game, {"type": "take_puzzle", "color": "black", "slot": 0})  # B17 refills slot 0, deck empty
    assert game.end_triggered
    act(game, {"type": "take_puzzle", "color": "black", "slot": 1})
    rejects(game, {"type": "take_puzzle", "color": "black", "slot": 2}, "R9.4")
    blacks = [a for a in listed_json(game) if a.get("color") == "black" and a["type"] == "take_puzzle"]
    assert blacks == []
    assert any(a.get("color") == "white" and a["type"] == "take_puzzle" for a in listed_json(game))
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})
    act(game, {"type": "take_puzzle", "color": "black", "slot": 2})  # seat 1's own black puzzle
    rejects(game, {"type": "take_puzzle", "color": "black", "slot": 3}, "R9.4")


def test_R9_4_a_blind_trigger_does_not_count_either():
    game = revised()
    act(game, {"type": "take_puzzle", "color": "black", "blind": True})
    act(game, {"type": "take_puzzle", "color": "black", "slot": 0})
    rejects(game, {"type": "take_puzzle", "color": "black", "slot": 1}, "R9.4")


def test_R9_4_blind_black_takes_count_and_are_no_longer_listed():
    """The end is triggered through ``Game.trigger_end`` (as the base flow would) so that
    the black deck still has cards for blind takes."""
    game = revised(black=FIVE_BLACKS + ["B18", "B19"])
    game.trigger_end()
    assert is_listed(game, TakeBlind(1))
    act(game, {"type": "take_puzzle", "color": "black", "blind": True})
    assert not is_listed(game, TakeBlind(1)) and is_listed(game, TakeBlind(0))
    rejects(game, {"type": "take_puzzle", "color": "black", "blind": True}, "R9.4")
    rejects(game, {"type": "take_puzzle", "color": "black", "slot": 0}, "R9.4")


def test_R9_4_after_a_trigger_at_setup_every_black_take_counts():
    game = revised(black=FIVE_BLACKS[:4])
    assert game.end_triggered
    act(game, {"type": "take_puzzle", "color": "black", "slot": 0})
    rejects(game, {"type": "take_puzzle", "color": "black", "slot": 1}, "R9.4")


def test_R9_4_black_takes_before_the_trigger_are_unlimited():
    game = revised(black=FIVE_BLACKS + ["B18", "B19", "B20"])
    for slot in range(3):
        act(game, {"type": "take_puzzle", "color": "black", "slot": slot})
    assert len(game.players[0].unfinished) == 3 and not game.end_triggered


# ---------------------------------------------------------------- R9.5 unfinished puzzles cost their points
def test_R9_5_unfinished_puzzles_cost_their_points_at_the_end_only():
    game = revised()
    act(game, {"type": "take_puzzle", "color": "white", "slot": 2})  # W10, 1 point
    act(game, {"type": "take_puzzle", "color": "black", "slot": 0})  # B13, 3 points; triggers
    assert game.scores() == [0, 0]
    while game.phase_name == "action":
        pass_turn(game)
    act(game, {"type": "finish", "placements": []})
    act(game, {"type": "finish", "placements": []})
    assert game.result()["scores"] == [-4, 0]
    assert game.result()["ranking"] == [2, 1]


def test_R9_5_a_puzzle_completed_in_the_finishing_touches_costs_nothing():
    game = revised(black=FIVE_BLACKS[:4])  # the end is triggered at setup
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})  # W09, 1 point
    while game.phase_name == "action":
        pass_turn(game)
    act(game, {"type": "finish", "placements": [{"puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]}]})
    act(game, {"type": "finish", "placements": []})
    assert game.result()["scores"] == [1 - 1, 0]


# ---------------------------------------------------------------- R9.6 hidden piles (R10: test_variant_open_scores.py)
def test_R9_6_the_other_seats_pieces_and_unfinished_puzzles_stay_visible():
    game = revised()
    give_pieces(game, 0, {"L3": 1})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 1})
    seat0 = observation(game, 1)["seats"][0]
    assert seat0["supply"] == {"O1": 1, "I2": 1, "L3": 1}
    assert seat0["unfinished"] == [{"puzzle": "W22", "pieces": []}]


def test_R4_1_R9_3_two_completions_in_one_action_ask_in_the_order_taken():
    game = revised()
    give_pieces(game, 0, {"I2": 1})
    set_reserve(game, {"I2": 0})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 1})  # W22, reward I2
    act(game, {"type": "take_puzzle", "color": "white", "slot": 2})  # W10, reward I2
    act(game, {"type": "place", "puzzle": "W10", "piece": "I2", "cells": [[1, 2], [2, 2]]})
    pass_turn(game)
    act(game, {"type": "master", "placements": [
        {"puzzle": "W10", "piece": "O1", "cells": [[3, 2]]},
        {"puzzle": "W22", "piece": "I2", "cells": [[2, 2], [3, 2]]}]})
    assert game.phase_name == "reward" and game.decision["puzzle"] == "W22"
    act(game, {"type": "reward", "take": "I3"})
    assert game.phase_name == "reward" and game.decision["puzzle"] == "W10"
    act(game, {"type": "reward", "take": "L3"})
    assert game.phase_name == "action" and game.to_move() == 0 and game.actions_left == 2
    assert supply(game, 0) == {"O1": 1, "I2": 2, "I3": 1, "L3": 1}


def test_R9_3_a_game_rebuilt_from_the_observation_lists_the_same_reward_options():
    from engine.observation import game_from_observation
    game = revised()
    set_reserve(game, {"I2": 0})
    _complete_w10(game)
    rebuilt = game_from_observation(observation(game, 0))
    assert rebuilt.phase_name == "reward" and rebuilt.legal_actions() == game.legal_actions()
    act(rebuilt, {"type": "reward", "take": "I3"})
    assert rebuilt.to_move() == 1


def test_R9_4_a_game_rebuilt_from_the_observation_keeps_the_black_limit():
    from engine.observation import game_from_observation
    game = revised()
    act(game, {"type": "take_puzzle", "color": "black", "slot": 0})  # triggers the end
    act(game, {"type": "take_puzzle", "color": "black", "slot": 1})  # the one black take allowed
    for seat in (0, 1):
        assert observation(game, seat)["seats"][0]["black_after_end"] == 1
    rebuilt = game_from_observation(observation(game, 0))
    assert rebuilt.legal_actions() == game.legal_actions()
    rejects(rebuilt, {"type": "take_puzzle", "color": "black", "slot": 2}, "R9.4")
