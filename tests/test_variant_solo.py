"""R12 variant ``solo``: setup, the player's grid takes, the automaton, the end and scoring."""

from __future__ import annotations

import pytest

from conftest import pass_turn, rejects, supply
from engine import Game, RuleSpec, observation
from engine.observation import game_from_observation
from variant_helpers import act, card_places, expected_piece_totals, listed_json, new, piece_totals, playout, solo

WHITES = [f"W{i:02d}" for i in range(1, 16)]   # W01-W08: 2 points, W09-W15: 1 point
BLACKS = [f"B{i:02d}" for i in range(1, 11)]
ZERO = ["W22", "W23", "W24", "W25", "W26", "W27", "W28", "W29", "W30"]  # 0 points each


def grid_ids(game):
    """The grid as card ids (None for an empty slot)."""
    return [game.rules.puzzles[c].id if c >= 0 else None for c in game.extra["grid"]]


def pile_ids(game):
    return [game.rules.puzzles[c].id for c in game.extra["automaton_pile"]]


def o1(game) -> int:
    return game.reserve[game.rules.level1_shape]


def set_locks(game, locks, automaton_supply):
    """Set-up helper, through the public attributes: put level-1 pieces above the columns
    and in the automaton's supply, moving them from or to the reserve (pieces conserved)."""
    extra = game.extra
    delta = sum(locks) + automaton_supply - sum(extra["locks"]) - extra["automaton_supply"]
    assert o1(game) >= delta
    game.reserve[game.rules.level1_shape] -= delta
    extra["locks"], extra["automaton_supply"] = list(locks), automaton_supply


# ---------------------------------------------------------------- R12.1 setup
@pytest.mark.parametrize("difficulty, automaton", [("standard", 6), ("challenging", 3), ("unbeatable", 0)])
def test_R12_1_setup_from_an_explicit_deal(difficulty, automaton):
    game = solo(WHITES, BLACKS, difficulty)
    assert grid_ids(game) == WHITES[:9]
    assert [game.rules.puzzles[c].id for c in game.decks[0]] == WHITES[9:] + BLACKS
    assert game.extra["locks"] == [1, 2, 1] and game.extra["automaton_supply"] == automaton
    assert o1(game) == 15 - 4 - automaton - 1
    assert supply(game, 0) == {"O1": 1, "I2": 1}
    assert game.reserve[game.rules.shape_index["I2"]] == 14
    assert all(game.reserve[s] == 15 for s in range(2, 9))
    assert piece_totals(game) == expected_piece_totals(game)
    assert game.rows == [[], []] and not game.end_triggered


@pytest.mark.parametrize("seed", range(4))
def test_R12_1_shuffled_deck_has_15_whites_on_top_of_10_blacks(seed):
    game = Game.new(RuleSpec.make(["solo"]), 1, seed)
    colors = [game.rules.puzzles[c].color for c in game.extra["grid"] + game.decks[0]]
    assert colors == ["white"] * 15 + ["black"] * 10
    assert len(set(card_places(game))) == 25


# ---------------------------------------------------------------- R12.2 the player's take
def test_R12_2_a_grid_take_moves_a_lock_piece_to_the_automaton_and_refills():
    game = solo(WHITES, BLACKS, actions_per_turn=4)
    act(game, {"type": "take_puzzle", "slot": 4})
    assert game.extra["locks"] == [1, 1, 1] and game.extra["automaton_supply"] == 7
    assert grid_ids(game)[4] == "W10" and len(game.decks[0]) == 15
    act(game, {"type": "take_puzzle", "slot": 7})
    assert game.extra["locks"] == [1, 0, 1] and game.extra["automaton_supply"] == 8
    act(game, {"type": "take_puzzle", "slot": 1})  # no lock left above column 1
    assert game.extra["locks"] == [1, 0, 1] and game.extra["automaton_supply"] == 8
    assert [game.rules.puzzles[pz.card].id for pz in game.players[0].unfinished] == ["W05", "W08", "W02"]
    assert piece_totals(game) == expected_piece_totals(game)


def test_R12_2_only_grid_takes_are_listed():
    game = solo(WHITES, BLACKS)
    takes = [a for a in listed_json(game) if a["type"] in ("take_puzzle", "recycle")]
    assert takes == [{"type": "take_puzzle", "slot": i} for i in range(9)]


@pytest.mark.parametrize("obj, rule", [
    ({"type": "take_puzzle", "slot": 9}, "R12.2"),
    ({"type": "take_puzzle", "slot": -1}, "R12.2"),
    ({"type": "take_puzzle", "color": "white", "slot": 0}, "R12.2"),
    ({"type": "take_puzzle", "color": "black", "blind": True}, "R12.2"),
    ({"type": "take_puzzle"}, "R14"),
    ({"type": "recycle", "color": "white"}, "R14"),
])
def test_R12_2_row_blind_and_out_of_grid_takes_are_rejected(obj, rule):
    rejects(solo(WHITES, BLACKS), obj, rule)


def test_R12_2_an_empty_slot_and_the_unfinished_limit():
    game = solo(WHITES[:9], max_unfinished=2)
    act(game, {"type": "take_puzzle", "slot": 0})
    assert grid_ids(game)[0] is None
    rejects(game, {"type": "take_puzzle", "slot": 0}, "R12.2")
    assert {"type": "take_puzzle", "slot": 0} not in listed_json(game)
    act(game, {"type": "take_puzzle", "slot": 1})
    rejects(game, {"type": "take_puzzle", "slot": 2}, "R3.1")
    assert not any(a["type"] == "take_puzzle" for a in listed_json(game))


# ---------------------------------------------------------------- R12.3 the automaton
@pytest.mark.parametrize("white, locks, auto, taken, slot, locks_after", [
    (WHITES[:9], [0, 2, 1], 6, "W01", 0, [8, 1, 0]),          # only column 0 unlocked, ties: lowest slot
    (WHITES[:9], [1, 0, 1], 6, "W02", 1, [0, 8, 0]),
    (WHITES[:9], [0, 0, 0], 3, "W01", 0, [3, 0, 0]),
    (ZERO[:5] + ["W01"] + ZERO[5:8], [0, 0, 0], 6, "W01", 5, [0, 0, 6]),  # most points wins
    (["W09", "W01"] + ZERO[:7], [0, 3, 0], 2, "W09", 0, [2 + 1, 2, 0]),     # W01 is locked
    (ZERO[:8] + ["W10"], [1, 1, 0], 0, "W10", 8, [0, 0, 2]),
])
def test_R12_3_the_automaton_takes_the_most_points_from_unlocked_columns(white, locks, auto, taken, slot, locks_after):
    game = solo(white + ["W15"], BLACKS)
    set_locks(game, locks, auto)
    pass_turn(game)
    assert pile_ids(game) == [taken]
    assert game.extra["locks"] == locks_after and game.extra["automaton_supply"] == 0
    assert grid_ids(game)[slot] == "W15"
    assert piece_totals(game) == expected_piece_totals(game)
    assert game.to_move() == 0 and game.round == 2


@pytest.mark.parametrize("locks, after", [([1, 2, 1], [0, 1, 0]), ([2, 3, 1], [1, 2, 0]), ([1, 1, 1], [0, 0, 0])])
def test_R12_3_all_columns_locked_one_piece_per_column_returns_to_the_reserve(locks, after):
    game = solo(WHITES, BLACKS)
    set_locks(game, locks, 6)
    reserve = o1(game)
    pass_turn(game)
    assert game.extra["locks"] == after and game.extra["automaton_supply"] == 6
    assert o1(game) == reserve + 3 and pile_ids(game) == [] and grid_ids(game) == WHITES[:9]


def test_R12_3_decision_no_unlocked_slot_holds_a_puzzle():
    game = solo(WHITES[:9])  # the whole deck is dealt at setup
    for slot in (0, 3, 6):
        act(game, {"type": "take_puzzle", "slot": slot})
    assert game.extra["locks"] == [0, 2, 1] and game.extra["automaton_supply"] == 7
    assert game.phase_name == "finish"  # the automaton has played its turn, taking nothing
    assert pile_ids(game) == [] and game.extra["locks"] == [0, 2, 1] and game.extra["automaton_supply"] == 7
    assert piece_totals(game) == expected_piece_totals(game)


# ---------------------------------------------------------------- R12.4 the end
def test_R12_4_deck_runs_out_during_the_players_turn():
    game = solo(WHITES[:9], ["B01"])
    act(game, {"type": "take_puzzle", "slot": 0})  # deals B01, the last card, into slot 0
    assert game.end_triggered and grid_ids(game)[0] == "B01"
    pass_turn(game)  # the turn ends, the automaton plays
    assert pile_ids(game) == ["B01"] and game.phase_name == "action" and game.round == 2
    pass_turn(game)  # one more full turn, the automaton plays once more
    assert len(pile_ids(game)) == 2 and game.phase_name == "finish"


def test_R12_4_deck_runs_out_during_the_automatons_turn():
    game = solo(WHITES[:9], ["B01"])
    pass_turn(game)  # every column locked: the automaton takes nothing
    assert not game.end_triggered
    pass_turn(game)  # the automaton takes W01 and deals B01, the last card
    assert game.end_triggered and pile_ids(game) == ["W01"] and grid_ids(game)[0] == "B01"
    assert game.phase_name == "action" and game.round == 3
    act(game, {"type": "take_puzzle", "slot": 1})  # the player's complete turn after that moment
    pass_turn(game)
    assert len(pile_ids(game)) == 2 and game.phase_name == "finish"


def test_R12_4_a_deck_dealt_whole_at_setup_leaves_one_turn():
    game = solo(WHITES[:9])
    assert game.end_triggered
    pass_turn(game)
    assert game.phase_name == "finish" and game.round == 1


# ---------------------------------------------------------------- R12.5 scoring
@pytest.mark.parametrize("slot2, auto, margin, won", [("W24", 0, 1, True), ("W10", 1, 0, False), ("W01", 2, -1, False)])
def test_R12_5_automaton_scores_its_pile_and_wins_ties(slot2, auto, margin, won):
    white = ZERO[:2] + [slot2] + ZERO[3:8] + ["W09"]
    game = solo(white)
    act(game, {"type": "take_puzzle", "slot": 8})  # W09: 1 point, unlocks column 2
    act(game, {"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]})
    pass_turn(game)
    assert pile_ids(game) == [slot2]
    act(game, {"type": "finish", "placements": []})
    result = game.result()
    assert result["scores"] == [1] and result["automaton_score"] == auto
    assert result["margin"] == margin and result["won"] is won and result["ranking"] == [1]


def test_R12_5_unfinished_puzzles_cost_their_points():
    game = solo(WHITES[:9])
    act(game, {"type": "take_puzzle", "slot": 0})  # W01, 2 points
    act(game, {"type": "take_puzzle", "slot": 7})  # W08, 2 points
    assert game.scores() == [0]
    pass_turn(game)
    act(game, {"type": "finish", "placements": []})
    result = game.result()
    assert result["scores"] == [-4] and result["automaton_score"] == 2 and result["margin"] == -6
    assert result["won"] is False


def test_R12_5_result_before_the_end_is_not_won():
    game = solo(WHITES, BLACKS)
    result = game.result()
    assert result["won"] is False and result["automaton_score"] == 0 and result["margin"] == 0


# ---------------------------------------------------------------- observation
def test_R12_observation_solo_field():
    game = solo(WHITES, BLACKS, "challenging")
    act(game, {"type": "take_puzzle", "slot": 3})
    pass_turn(game)
    obs = observation(game, 0)
    assert obs["solo"] == {"difficulty": "challenging", "grid": grid_ids(game), "locks": game.extra["locks"],
                           "automaton_supply": game.extra["automaton_supply"], "automaton_pile": pile_ids(game),
                           "automaton_score": 2}
    assert obs["decks"] == {"white": 14, "black": 0}


@pytest.mark.parametrize("seed", range(3))
def test_R12_game_from_observation_lists_the_same_actions(seed):
    checked = []

    def check(game, action):
        if game.phase_name == "action":
            rebuilt = game_from_observation(observation(game, 0))
            assert rebuilt.legal_actions() == game.legal_actions()
            assert rebuilt.extra["grid"] == game.extra["grid"] and rebuilt.extra["locks"] == game.extra["locks"]
            rebuilt.apply(action)
            checked.append(action)

    game = playout(new(("solo",), 1, seed), seed=seed, each=check)
    assert checked and game.is_over
