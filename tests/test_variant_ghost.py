"""R11 variant ``ghost``: components, ghost pieces, level-up rewards and the ghost action."""

from __future__ import annotations

import pytest

from conftest import SMALL_WHITES, give_pieces, is_listed, pass_turn, rejects, set_reserve, supply
from engine import Game, RuleSpec, action_to_json, observation
from engine.observation import game_from_observation
from engine.actions import Finish, Pass, Upgrade
from engine.cards import card_set
from plugins.ghost import Ghost
from variant_helpers import act, cells_of, expected_piece_totals, listed_json, new, piece_totals

G = ("ghost",)
GHOST_WHITES = {p.id for p in card_set("ghost").puzzles if p.color == "white"}
GHOST_BLACKS = {p.id for p in card_set("ghost").puzzles if p.color == "black"}
BASE_WHITES = {p.id for p in card_set("base").puzzles if p.color == "white"}

#: GB01 (+1, 3 points) and GB05 (+2, 3 points) filled piece by piece.
GB01_FILL = [("I4", [[0, 0], [1, 0], [2, 0], [3, 0]]), ("I4", [[0, 1], [0, 2], [0, 3], [0, 4]]),
             ("I2", [[1, 4], [2, 4]])]
GB05_FILL = [("L3", [[0, 0], [1, 0], [1, 1]]), ("L3", [[0, 4], [1, 4], [1, 3]]),
             ("T4", [[2, 1], [2, 2], [2, 3], [3, 2]]), ("O1", [[4, 2]])]


def ghost_game(white=SMALL_WHITES, black=("GB01", "GB05", "B13", "B14", "B15"), players=2, **params):
    """A ghost game with an explicit deal; eight actions a turn so a test can fill a big
    puzzle in one turn (the rules under test do not depend on the count)."""
    params.setdefault("actions_per_turn", 8)
    return new(G, players, white=white, black=black, **params)


def complete_black(game, slot, fill):
    """Seat to move takes the black card in ``slot`` and fills it with ``fill``; the pieces
    it lacks come from the reserve first (set-up through the public attributes)."""
    seat = game.to_move()
    card = game.rules.puzzles[game.rows[1][slot]].id
    need: dict[str, int] = {}
    for name, _ in fill:
        need[name] = need.get(name, 0) + 1
    have = supply(game, seat)
    give_pieces(game, seat, {n: k - have.get(n, 0) for n, k in need.items() if k > have.get(n, 0)})
    act(game, {"type": "take_puzzle", "color": "black", "slot": slot})
    for name, cells in fill:
        act(game, {"type": "place", "puzzle": card, "piece": name, "cells": cells})


def steps_json(steps):
    return {"type": "level_up", "steps": [{"give": g, "take": t} for g, t in steps]}


# ---------------------------------------------------------------- R11.1 components
@pytest.mark.parametrize("players, black_size", [(2, 12), (3, 14), (4, 16)])
def test_R11_1_expansion_whites_join_the_white_deck_and_blacks_the_pool(players, black_size):
    seen_blacks = set()
    for seed in range(6):
        game = Game.new(RuleSpec.make(G), players, seed)
        ids = lambda cards: {game.rules.puzzles[c].id for c in cards if c >= 0}  # noqa: E731
        whites = ids(game.decks[0]) | ids(game.rows[0])
        blacks = ids(game.decks[1]) | ids(game.rows[1])
        assert whites == BASE_WHITES | GHOST_WHITES
        assert len(blacks) == black_size
        seen_blacks |= blacks
    assert seen_blacks & GHOST_BLACKS and seen_blacks - GHOST_BLACKS


@pytest.mark.parametrize("params, ghosts", [({}, 10), ({"ghost.reserve_per_shape": 3}, 3),
                                             ({"ghost.reserve_per_shape": 0}, 0)])
def test_R11_1_reserve_of_ghost_pieces(params, ghosts):
    game = new(G, 2, **params)
    reserve = {game.rules.shapes[s].name: n for s, n in enumerate(game.reserve)}
    assert {k: reserve[k] for k in ("P5", "U5", "X5")} == {"P5": ghosts, "U5": ghosts, "X5": ghosts}
    assert reserve["L4"] == 10 and reserve["O1"] == 8
    assert piece_totals(game) == expected_piece_totals(game)


def test_R11_2_ghost_pieces_are_placed_like_any_piece_and_are_a_reward():
    game = ghost_game(white=["GW01"] + SMALL_WHITES)
    give_pieces(game, 0, {"P5": 1})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})
    act(game, {"type": "place", "puzzle": "GW01", "piece": "P5", "cells": cells_of("GW01")})
    assert game.players[0].completed == [game.rules.puzzle_index["GW01"]]
    assert supply(game, 0) == {"O1": 1, "I2": 1, "P5": 2}  # its own back, plus the reward


# ---------------------------------------------------------------- R11.2 regular upgrades stop at level 4
def test_R11_2_a_regular_upgrade_never_takes_a_ghost():
    game = ghost_game()
    give_pieces(game, 0, {"L4": 1, "I3": 1})
    ups = [a for a in listed_json(game) if a["type"] == "upgrade"]
    assert ups and not any(a["take"] in ("P5", "U5", "X5") for a in ups)
    assert {"type": "upgrade", "give": "L4", "take": "O4"} in ups
    rejects(game, {"type": "upgrade", "give": "L4", "take": "P5"}, "R3.4")
    set_reserve(game, {n: 0 for n in ("I4", "O4", "T4", "L4", "Z4")})
    ups = [a for a in listed_json(game) if a["type"] == "upgrade" and a["give"] == "I3"]
    assert ups and all(a["take"] in ("O1", "I2", "L3") for a in ups)
    rejects(game, {"type": "upgrade", "give": "I3", "take": "X5"}, "R3.4")


def test_R11_2_a_ghost_may_be_exchanged_down_but_not_for_another_ghost():
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1})
    assert is_listed(game, Upgrade(game.rules.shape_index["P5"], game.rules.shape_index["O4"]))
    rejects(game, {"type": "upgrade", "give": "P5", "take": "U5"}, "R3.4")


# ---------------------------------------------------------------- R11.3 level-up rewards
def test_R11_3_plus_one_is_a_decision_listing_every_single_step():
    game = ghost_game()
    complete_black(game, 0, GB01_FILL)
    assert game.phase_name == "level_up" and game.to_move() == 0
    assert supply(game, 0) == {"O1": 1, "I2": 1, "I4": 2}  # the pieces just returned count
    options = [[(s["give"], s["take"]) for s in a["steps"]] for a in listed_json(game)]
    assert options[0] == []
    assert sorted(map(tuple, options[1:])) == sorted([
        (("O1", "I2"),), (("I2", "I3"),), (("I2", "L3"),), (("I4", "P5"),), (("I4", "U5"),), (("I4", "X5"),)])
    rejects(game, Pass(), "R14")
    act(game, steps_json([("I4", "X5")]))
    assert supply(game, 0) == {"O1": 1, "I2": 1, "I4": 1, "X5": 1}
    assert game.phase_name == "action" and game.to_move() == 0
    assert piece_totals(game) == expected_piece_totals(game)


@pytest.mark.parametrize("steps, after", [
    ([("O1", "I2"), ("I2", "L3")], {"I2": 1, "L3": 3, "T4": 1}),   # one piece twice
    ([("O1", "I2"), ("L3", "O4")], {"I2": 2, "L3": 1, "O4": 1, "T4": 1}),  # two pieces once each
    ([("T4", "U5"), ("L3", "I4")], {"O1": 1, "I2": 1, "L3": 1, "I4": 1, "U5": 1}),
    ([("L3", "Z4")], {"O1": 1, "I2": 1, "L3": 1, "Z4": 1, "T4": 1}),  # partial decline
    ([], {"O1": 1, "I2": 1, "L3": 2, "T4": 1}),                        # full decline
])
def test_R11_3_plus_two_steps(steps, after):
    game = ghost_game()
    complete_black(game, 1, GB05_FILL)
    assert game.decision["steps"] == 2 and supply(game, 0) == {"O1": 1, "I2": 1, "L3": 2, "T4": 1}
    listed = {tuple(sorted((s["give"], s["take"]) for s in a["steps"])) for a in listed_json(game)}
    assert tuple(sorted(steps)) in listed
    act(game, steps_json(steps))
    assert supply(game, 0) == after
    assert piece_totals(game) == expected_piece_totals(game)


@pytest.mark.parametrize("fill, slot, steps", [
    (GB01_FILL, 0, [("O1", "I2"), ("I2", "I3")]),   # +1 allows one step
    (GB05_FILL, 1, [("O1", "I2"), ("I2", "I3"), ("I3", "I4")]),
    (GB01_FILL, 0, [("O1", "I3")]),                 # level 2 is in stock
    (GB01_FILL, 0, [("O1", "P5")]),
    (GB01_FILL, 0, [("I2", "O1")]),                 # not a step up
    (GB01_FILL, 0, [("L4", "P5")]),                 # not in the supply
    (GB01_FILL, 0, [("I4", "P5"), ("I4", "U5"), ("I4", "X5")]),
])
def test_R11_3_an_illegal_level_up_is_rejected(fill, slot, steps):
    game = ghost_game()
    complete_black(game, slot, fill)
    rejects(game, steps_json(steps), "R11.3")


def test_R11_3_the_skip_rule_goes_up_to_level_5():
    game = ghost_game()
    give_pieces(game, 0, {"L3": 2, "T4": 1})
    set_reserve(game, {"I2": 0, "I4": 0, "O4": 0, "T4": 0, "L4": 0, "Z4": 0})
    complete_black(game, 1, GB05_FILL)
    options = {tuple((s["give"], s["take"]) for s in a["steps"]) for a in listed_json(game)}
    assert (("O1", "I3"),) in options and (("O1", "L3"), ("L3", "P5")) in options
    # a first step only reaches what is in stock now (a later step may reach a piece the
    # first one returned to the reserve)
    assert not any(opt[0][1] in ("I2", "I4", "O4") for opt in options if opt)
    assert (("I2", "L3"), ("O1", "I2")) in options
    act(game, steps_json([("O1", "L3"), ("L3", "P5")]))
    assert supply(game, 0) == {"I2": 1, "L3": 2, "T4": 1, "P5": 1}


def test_R11_3_no_possible_step_skips_the_reward_without_asking():
    game = ghost_game()
    give_pieces(game, 0, {"I4": 2})
    set_reserve(game, {n: 0 for n in ("I2", "I3", "L3", "I4", "O4", "T4", "L4", "Z4", "P5", "U5", "X5")})
    complete_black(game, 0, GB01_FILL)
    assert game.phase_name == "action" and game.decision is None
    assert supply(game, 0) == {"O1": 1, "I2": 1, "I4": 2}


# ---------------------------------------------------------------- R11.4 the ghost action
@pytest.mark.parametrize("take", [["O4", "O1"], ["L3", "I2"], ["I3", "I2"], ["T4", "O1"], ["I2", "I2", "O1"],
                                  ["O1"] * 5, ["L4", "O1"]])
def test_R11_4_a_tiling_of_the_ghost_is_accepted(take):
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1})
    before = supply(game, 0)
    act(game, {"type": "ghost", "give": "P5", "take": take})
    after = dict(before, P5=0)
    for name in take:
        after[name] = after.get(name, 0) + 1
    assert supply(game, 0) == {k: v for k, v in after.items() if v}
    assert game.actions_left == 7
    assert piece_totals(game) == expected_piece_totals(game)


@pytest.mark.parametrize("give, take", [
    ("P5", ["I4", "O1"]), ("P5", ["O4", "I2"]), ("P5", ["O1", "O1"]), ("P5", ["O4"]), ("P5", []),
    ("X5", ["L4", "O1"]), ("U5", ["O4", "O1"]), ("P5", ["P5"]),
])
def test_R11_4_a_take_that_does_not_tile_the_ghost_is_refused(give, take):
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1, "U5": 1, "X5": 1})
    rejects(game, {"type": "ghost", "give": give, "take": take}, "R11.4")


def test_R11_4_the_ghost_must_be_in_the_supply_and_a_ghost():
    game = ghost_game()
    give_pieces(game, 0, {"O4": 1})
    rejects(game, {"type": "ghost", "give": "P5", "take": ["O4", "O1"]}, "R11.4")
    rejects(game, {"type": "ghost", "give": "O4", "take": ["I2", "I2"]}, "R11.4")
    assert not any(type(a) is Ghost for a in game.legal_actions())


def test_R11_4_the_reserve_must_hold_the_pieces_taken():
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1})
    rs = game.rules
    assert is_listed(game, Ghost(rs.shape_index["P5"], tuple(sorted((rs.shape_index["O4"], rs.shape_index["O1"])))))
    set_reserve(game, {"O4": 0, "O1": 1})
    rejects(game, {"type": "ghost", "give": "P5", "take": ["O4", "O1"]}, "R11.4")
    rejects(game, {"type": "ghost", "give": "P5", "take": ["O1"] * 5}, "R11.4")
    takes = [a["take"] for a in listed_json(game) if a["type"] == "ghost"]
    assert takes and ["O1", "O4"] not in takes and all(t.count("O1") <= 1 for t in takes)


def test_R11_4_every_listed_ghost_action_is_accepted():
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1, "U5": 1, "X5": 1})
    ghosts = [a for a in game.legal_actions() if type(a) is Ghost]
    assert {game.rules.shapes[a.give].name for a in ghosts} == {"P5", "U5", "X5"}
    for a in ghosts:
        clone = game.clone()
        clone.apply(a)
        assert piece_totals(clone) == expected_piece_totals(clone)


def test_R11_4_placements_complete_puzzles_which_are_rewarded():
    game = ghost_game(actions_per_turn=3)
    give_pieces(game, 0, {"P5": 1})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})  # W09: I2, 1 point, reward O1
    act(game, {"type": "take_puzzle", "color": "white", "slot": 2})  # W10: I3, 1 point, reward I2
    act(game, {"type": "ghost", "give": "P5", "take": ["I3", "I2"], "placements": [
        {"puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]},
        {"puzzle": "W10", "piece": "I3", "cells": [[1, 2], [2, 2], [3, 2]]}]})
    rs = game.rules
    assert [rs.puzzles[c].id for c in game.players[0].completed] == ["W09", "W10"]
    assert supply(game, 0) == {"O1": 2, "I2": 3, "I3": 1}
    assert game.to_move() == 1 and game.scores() == [2, 0]
    assert piece_totals(game) == expected_piece_totals(game)


def test_R11_4_some_pieces_placed_the_rest_go_to_the_supply():
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})  # W09
    act(game, {"type": "ghost", "give": "P5", "take": ["O4", "O1"],
               "placements": [{"puzzle": "W09", "piece": "O1", "cells": [[2, 2]]}]})
    assert supply(game, 0) == {"O1": 1, "I2": 1, "O4": 1}
    assert game.players[0].unfinished[0].placed


@pytest.mark.parametrize("take, placements, rule", [
    (["I3", "I2"], [("W09", "O1", [[2, 2]])], "R11.4"),                       # O1 was not taken
    (["I2", "I2", "O1"], [("W31", "I2", [[2, 1], [2, 2]]), ("W31", "I2", [[3, 1], [3, 2]])], "R11.4"),
    (["I3", "I2"], [("W09", "I2", [[2, 2], [3, 2]]), ("W31", "I2", [[2, 1], [2, 2]])], "R11.4"),
    (["I3", "I2"], [("W09", "I3", [[1, 2], [2, 2], [3, 2]])], "R3.5"),       # off the recess
    (["I3", "I2"], [("W10", "I2", [[1, 2], [2, 2]])], "R3.5"),                # not one of mine
])
def test_R11_4_placements_at_most_one_per_puzzle_and_only_pieces_just_taken(take, placements, rule):
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})  # W09
    act(game, {"type": "take_puzzle", "color": "white", "slot": 3})  # W27 -> slot 3 refilled by W31
    act(game, {"type": "take_puzzle", "color": "white", "slot": 3})  # W31
    rejects(game, {"type": "ghost", "give": "P5", "take": take,
                   "placements": [{"puzzle": p, "piece": s, "cells": c} for p, s, c in placements]}, rule)


def test_R11_4_no_ghost_action_in_the_finishing_touches():
    game = ghost_game(black=["GB01", "GB05", "B13", "B14"])  # the end is triggered at setup
    give_pieces(game, 0, {"P5": 1})
    while game.phase_name == "action":
        pass_turn(game)
    assert game.phase_name == "finish" and game.to_move() == 0
    assert game.legal_actions() == [Finish(())]
    rejects(game, {"type": "ghost", "give": "P5", "take": ["O4", "O1"]}, "R6.3")


def test_R14_ghost_json_round_trip():
    game = ghost_game()
    give_pieces(game, 0, {"X5": 1})
    for a in game.legal_actions():
        if type(a) is Ghost:
            obj = action_to_json(game.rules, a)
            assert obj["give"] == "X5" and obj["placements"] == []
            assert game.rules.decoders["ghost"](game.rules, obj) == a
    rejects(game, {"type": "ghost", "give": "X5", "take": "O4"}, "R14")
    rejects(game, {"type": "ghost", "give": "X5", "take": ["Q9"]}, "R0")


def test_R11_3_the_decision_at_the_end_of_a_turn_hands_over_after_it():
    game = ghost_game(actions_per_turn=3)
    give_pieces(game, 0, {"I4": 2})
    act(game, {"type": "take_puzzle", "color": "black", "slot": 0})
    for name, cells in GB01_FILL[:2]:
        act(game, {"type": "place", "puzzle": "GB01", "piece": name, "cells": cells})
    pass_turn(game)
    act(game, {"type": "take_piece"})
    act(game, {"type": "take_piece"})
    act(game, {"type": "place", "puzzle": "GB01", "piece": "I2", "cells": GB01_FILL[2][1]})
    assert game.phase_name == "level_up" and game.to_move() == 0 and game.actions_left == 0
    obs = observation(game, 0)
    assert obs["decision"] == {"type": "level_up", "puzzle": "GB01", "steps": 1}
    assert "decision" not in observation(game, 1)
    rebuilt = game_from_observation(obs)
    assert rebuilt.legal_actions() == game.legal_actions()
    act(game, steps_json([("I2", "L3")]))
    assert game.phase_name == "action" and game.to_move() == 1
