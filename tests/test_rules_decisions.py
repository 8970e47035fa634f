"""The Decisions of R3.4, R9.6 and R11.5: points the rulebooks leave open, settled by the
rules contract. Each test is built so that it fails if the engine decided the point the
other way.
"""

from __future__ import annotations

import pytest

from conftest import SMALL_WHITES, give_pieces, pass_turn, rejects, set_player, set_reserve, supply
from engine import observation
from engine.actions import Place
from engine.events import events_since
from engine.observation import game_from_observation
from plugins.ghost import Ghost
from variant_helpers import act, cells_of, expected_piece_totals, listed_json, new, piece_totals

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


# ---------------------------------------------------------------- R9.6 piles are shown at the end
def _revised_game_to_the_end(variants, players):
    """Seat 0 completes W09 (1 point) and leaves W10 (1 point) unfinished; seat 1
    completes W22 (0 points); the end was triggered at setup, so two rounds are played."""
    game = new(variants, players, white=SMALL_WHITES, black=FOUR_BLACKS)
    take(game, "white", 0)  # W09; W24 refills slot 0
    place(game, "W09", "I2", [[2, 2], [3, 2]])
    take(game, "white", 2)  # W10
    take(game, "white", 1)  # seat 0 has used its three actions: seat 1 takes W22
    while game.phase_name == "action":
        if game.to_move() == 1 and game.players[1].unfinished:
            place(game, "W22", "I2", [[2, 2], [3, 2]])
        pass_turn(game)
    return game


@pytest.mark.parametrize("variants", [("revised",), ("revised", "ghost"), ("ghost", "revised"),
                                      ("revised", "no-master")])
@pytest.mark.parametrize("players", [2, 3])
def test_R9_6_every_pile_and_score_is_shown_to_everyone_once_the_game_is_over(variants, players):
    game = _revised_game_to_the_end(variants, players)
    assert game.phase_name == "finish"
    # hidden until the end: seat 1 does not see seat 0's pile or score
    theirs = observation(game, 1)["seats"][0]
    assert theirs["completed_count"] == 1 and "completed" not in theirs and "score" not in theirs
    while not game.is_over:
        act(game, {"type": "finish", "placements": []})
    assert game.scores()[:2] == [0, 0]  # seat 0: W09's point less W10's (R9.5)
    for viewer in range(players):
        obs = observation(game, viewer)
        for seat, entry in enumerate(obs["seats"]):
            assert entry["completed"] == [game.rules.puzzles[c].id for c in game.players[seat].completed]
            assert entry["score"] == game.scores()[seat]
        assert [entry["completed"] for entry in obs["seats"]][:2] == [["W09"], ["W22"]]
        rebuilt = game_from_observation(obs)
        assert rebuilt.is_over and rebuilt.scores() == game.scores()
        events, _ = events_since(game, viewer, 0)
        assert not any(e.get("action", {}).get("hidden") for e in events)


# ---------------------------------------------------------------- R11.5 the R9.3 fallback never gives a ghost
@pytest.mark.parametrize("variants", [("revised", "ghost"), ("ghost", "revised")])
@pytest.mark.parametrize("puzzle, piece, cells, empty, reward", [
    ("W24", "L3", [[2, 1], [3, 1], [3, 2]], ("L3",) + LEVEL_4, None),  # level 3: I3 is not higher, ghosts are out
    ("W31", "O4", W31, LEVEL_4, None),                                  # level 4: nothing up to level 4
    ("GW01", "P5", cells_of("GW01"), ("P5",), None),                    # a ghost: no other ghost instead
    ("W24", "L3", [[2, 1], [3, 1], [3, 2]], ("L3", "I4", "O4", "T4", "L4"), "Z4"),  # control: level 4 stocked
])
def test_R11_5_the_R9_3_fallback_never_gives_a_ghost(variants, puzzle, piece, cells, empty, reward):
    game = ghost_game(variants, white=["W24", "W31", "GW01", "W09", "W22", "W10", "W27"])
    give_pieces(game, 0, {piece: 1})
    set_reserve(game, {n: 0 for n in empty})
    ghosts = {g: game.reserve[game.rules.shape_index[g]] for g in GHOSTS}
    take(game, "white", ["W24", "W31", "GW01"].index(puzzle))
    before = supply(game, 0)
    place(game, puzzle, piece, cells)
    assert game.phase_name == "action" and game.decision is None
    expected = dict(before)  # the piece placed came back
    if reward:
        expected[reward] = expected.get(reward, 0) + 1
    assert supply(game, 0) == expected
    assert {g: game.reserve[game.rules.shape_index[g]] for g in GHOSTS} == ghosts


# ---------------------------------------------------------------- R11.5 level-up steps up to a ghost, not from one
@pytest.mark.parametrize("empty, step", [
    (LEVEL_3 + LEVEL_4, ("I2", "P5")),             # levels 3 and 4 empty: I2 jumps to a ghost
    (LEVEL_3 + LEVEL_4, ("I2", "X5")),
    (("I2",) + LEVEL_3 + LEVEL_4, ("O1", "U5")),   # levels 2-4 empty: so does O1
    (LEVEL_4, ("I4", "U5")),
])
def test_R11_5_a_level_up_step_may_jump_straight_to_a_ghost(empty, step):
    game = ghost_game()
    give_pieces(game, 0, {"I4": 2})
    set_reserve(game, {n: 0 for n in empty})
    take(game, "black", 0)  # GB01, +1
    for name, cells in GB01_FILL:
        place(game, "GB01", name, cells)
    assert game.phase_name == "level_up"
    options = level_up_options(game)
    assert (step,) in options
    act(game, steps_json([step]))
    assert supply(game, 0).get(step[1]) == 1


@pytest.mark.parametrize("steps", [[("P5", "U5")], [("P5", "X5")], [("X5", "P5")], [("O1", "I2"), ("P5", "U5")]])
def test_R11_5_a_ghost_cannot_be_levelled_up(steps):
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1, "X5": 1})
    take(game, "black", 1)  # GB05, +2
    for name, cells in GB05_FILL:
        give_pieces(game, 0, {name: 1})
        place(game, "GB05", name, cells)
    assert game.phase_name == "level_up"
    assert not any(g in GHOSTS for opt in level_up_options(game) for g, _ in opt)
    rejects(game, steps_json(steps), "R11.3")


# ---------------------------------------------------------------- R11.5 "pieces just returned" in R4.1's order
def _two_completions(order):
    """Seat 0 takes GB01 (+1) and W31 (reward O4) in ``order`` and completes both with
    one master action; returns the game at the first open decision."""
    game = ghost_game(white=["W31", "W09", "W22", "W10", "W27"])
    give_pieces(game, 0, {"I4": 2, "O4": 1})
    for card in order:
        take(game, "black" if card == "GB01" else "white", 0)
    for name, cells in GB01_FILL[:2]:
        place(game, "GB01", name, cells)
    act(game, {"type": "master", "placements": [
        {"puzzle": "GB01", "piece": "I2", "cells": GB01_FILL[2][1]},
        {"puzzle": "W31", "piece": "O4", "cells": W31}]})
    assert game.phase_name == "level_up"
    return game


@pytest.mark.parametrize("order", [("GB01", "W31"), ("W31", "GB01")])
def test_R11_5_pieces_of_a_puzzle_resolved_later_do_not_count_yet(order):
    game = _two_completions(order)
    rs = game.rules
    done = [rs.puzzles[c].id for c in game.players[0].completed]
    gives = {g for opt in level_up_options(game) for g, _ in opt}
    if order[0] == "GB01":
        # W31 is resolved after the decision: its O4 is still on it
        assert done == ["GB01"] and "O4" not in supply(game, 0) and "O4" not in gives
        rejects(game, steps_json([("O4", "P5")]), "R11.3")
    else:
        # W31 came first: its O4 and its O4 reward are in the supply already
        assert done == ["W31", "GB01"] and supply(game, 0)["O4"] == 2 and "O4" in gives
    act(game, steps_json([("I4", "P5")]))
    assert [rs.puzzles[c].id for c in game.players[0].completed] == list(order)
    assert supply(game, 0) == {"O1": 1, "I2": 1, "I4": 1, "O4": 2, "P5": 1}
    assert game.players[0].unfinished == []
    assert piece_totals(game) == expected_piece_totals(game)


@pytest.mark.parametrize("order", [("GB01", "W31"), ("W31", "GB01")])
def test_R11_5_a_game_rebuilt_during_the_decision_resolves_the_later_puzzles_too(order):
    game = _two_completions(order)
    rebuilt = game_from_observation(observation(game, 0))
    step = steps_json([("I4", "P5")])
    act(game, step)
    act(rebuilt, step)
    for g in (game, rebuilt):
        assert g.players[0].supply == game.players[0].supply and g.reserve == game.reserve
        assert g.players[0].unfinished == [] and g.players[0].completed == game.players[0].completed
        assert g.phase_name == "action" and g.to_move() == 0 and g.actions_left == game.actions_left


# ---------------------------------------------------------------- R11.5 the ghost is back before completions
@pytest.mark.parametrize("variants", [("ghost",), ("revised", "ghost")])
def test_R11_5_a_ghost_action_completion_may_be_rewarded_with_the_ghost_just_returned(variants):
    game = ghost_game(variants, white=["GW01"] + SMALL_WHITES)
    give_pieces(game, 0, {"P5": 1, "O4": 1})
    set_reserve(game, {"P5": 0, "U5": 0, "X5": 0})
    take(game, "white", 0)  # GW01: a P5 recess, reward P5
    place(game, "GW01", "O4", GW01_O4)
    act(game, {"type": "ghost", "give": "P5", "take": ["O4", "O1"],
               "placements": [{"puzzle": "GW01", "piece": "O1", "cells": GW01_O1}]})
    assert game.players[0].completed == [game.rules.puzzle_index["GW01"]]
    assert game.phase_name == "action"
    assert supply(game, 0) == {"O1": 2, "I2": 1, "O4": 2, "P5": 1}
    assert game.reserve[game.rules.shape_index["P5"]] == 0


def test_R11_5_a_ghost_action_completion_may_level_up_to_the_ghost_just_returned():
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1, "I4": 2})
    set_reserve(game, {n: 0 for n in LEVEL_4 + GHOSTS})
    take(game, "black", 0)  # GB01, +1
    for name, cells in GB01_FILL[:2]:
        place(game, "GB01", name, cells)
    act(game, {"type": "ghost", "give": "P5", "take": ["L3", "I2"],
               "placements": [{"puzzle": "GB01", "piece": "I2", "cells": GB01_FILL[2][1]}]})
    assert game.phase_name == "level_up"
    assert (("I4", "P5"),) in level_up_options(game)
    act(game, steps_json([("I4", "P5")]))
    assert supply(game, 0) == {"O1": 1, "I2": 2, "L3": 1, "I4": 1, "P5": 1}


# ---------------------------------------------------------------- R11.5 the ghost action's take and placements
@pytest.mark.parametrize("give, take", [
    ("P5", ["O1", "O4"]), ("P5", ["O4", "O1"]), ("P5", ["I2", "O1", "I2"]), ("P5", ["O1", "I2", "I2"]),
    ("X5", ["O1", "T4"]), ("X5", ["O1", "I3", "O1"]), ("U5", ["I3", "O1", "O1"]), ("U5", ["O1", "I3", "O1"]),
])
def test_R11_5_the_ghost_take_is_an_unordered_multiset(give, take):
    game = ghost_game()
    give_pieces(game, 0, {give: 1})
    other = game.clone()
    rs = game.rules
    game.apply(Ghost(rs.shape_index[give], tuple(rs.shape_index[t] for t in take)))  # in the order given
    act(other, {"type": "ghost", "give": give, "take": sorted(take)})
    assert game.players[0].supply == other.players[0].supply and game.reserve == other.reserve
    expected = {"O1": 1, "I2": 1}
    for t in take:
        expected[t] = expected.get(t, 0) + 1
    assert supply(game, 0) == expected


@pytest.mark.parametrize("pieces, placements", [
    (["I3", "I2"], [("W09", "I2", [[2, 2], [3, 2]])]),
    (["I3", "I2"], [("W10", "I2", [[1, 2], [2, 2]])]),                         # any cells of the recess
    (["I3", "I2"], [("W10", "I2", [[2, 2], [3, 2]])]),
    (["I3", "I2"], [("W09", "I2", [[2, 2], [3, 2]]), ("W10", "I3", [[1, 2], [2, 2], [3, 2]])]),
    (["L3", "I2"], [("W31", "L3", [[2, 1], [3, 1], [3, 2]]), ("W09", "I2", [[2, 2], [3, 2]])]),  # rotated
    (["L3", "I2"], [("W31", "L3", [[2, 2], [3, 2], [3, 1]])]),                  # flipped
])
def test_R11_5_ghost_placements_go_anywhere_one_per_puzzle(pieces, placements):
    game = ghost_game(white=["W09", "W10", "W31", "W22", "W27", "W24"])
    give_pieces(game, 0, {"P5": 1})
    for slot in range(3):
        take(game, "white", slot)  # W09, W10, W31
    act(game, {"type": "ghost", "give": "P5", "take": pieces,
               "placements": [{"puzzle": p, "piece": s, "cells": c} for p, s, c in placements]})
    rs = game.rules
    on = {rs.puzzles[pz.card].id: len(pz.placed) for pz in game.players[0].unfinished}
    done = {rs.puzzles[c].id for c in game.players[0].completed}
    for p, _, _ in placements:
        assert on.get(p) == 1 or p in done
    assert piece_totals(game) == expected_piece_totals(game)


@pytest.mark.parametrize("placement, rule", [(-1, "R14"), (10 ** 6, "R14"), ("x", "R14")])
def test_R11_5_a_ghost_placement_must_be_a_real_placement(placement, rule):
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1})
    take(game, "white", 0)  # W09
    rs = game.rules
    card = rs.puzzle_index["W09"]
    ghost = Ghost(rs.shape_index["P5"], (rs.shape_index["O1"], rs.shape_index["O4"]), (Place(card, placement),))
    rejects(game, ghost, rule)


@pytest.mark.parametrize("first, then, rule", [
    (("I2", [[2, 2], [3, 2]]), ("O1", [[2, 2]]), "R3.5"),    # overlaps a piece already there
    (None, ("O1", [[1, 2]]), "R3.5"),                          # off the recess
])
def test_R11_5_ghost_placements_follow_R3_5(first, then, rule):
    game = ghost_game()
    give_pieces(game, 0, {"P5": 1})
    take(game, "white", 0)  # W09
    if first:
        place(game, "W09", *first)
    rejects(game, {"type": "ghost", "give": "P5", "take": ["O4", "O1"],
                   "placements": [{"puzzle": "W09", "piece": then[0], "cells": then[1]}]}, rule)


# ---------------------------------------------------------------- R11.5 level-up decision forms
def _plus_two(**reserve):
    """Seat 0 completes GB05 (+2) and holds O1, I2, L3 x2, T4 (pieces just returned)."""
    game = ghost_game()
    take(game, "black", 1)
    for name, cells in GB05_FILL:
        if not supply(game, 0).get(name):
            give_pieces(game, 0, {name: 1})
        if name == "O1" and reserve:
            set_reserve(game, reserve)
        place(game, "GB05", name, cells)
    assert game.phase_name == "level_up" and game.decision["steps"] == 2
    return game


@pytest.mark.parametrize("steps, changed", [
    ([], {}),
    ([("O1", "I2")], {"O1": -1, "I2": 1}),
    ([("T4", "X5")], {"T4": -1, "X5": 1}),
    ([("O1", "I2"), ("L3", "O4")], {"O1": -1, "I2": 1, "L3": -1, "O4": 1}),
    ([("L3", "O4"), ("O1", "I2")], {"O1": -1, "I2": 1, "L3": -1, "O4": 1}),
    ([("T4", "U5"), ("I2", "I3")], {"T4": -1, "U5": 1, "I2": -1, "I3": 1}),
    ([("I2", "I3"), ("T4", "U5")], {"T4": -1, "U5": 1, "I2": -1, "I3": 1}),
])
def test_R11_5_level_up_decline_partial_and_either_order(steps, changed):
    game = _plus_two()
    before = supply(game, 0)
    listed = {tuple(sorted(opt)) for opt in level_up_options(game)}
    assert tuple(sorted(steps)) in listed
    act(game, steps_json(steps))
    after = dict(before)
    for name, d in changed.items():
        after[name] = after.get(name, 0) + d
    assert supply(game, 0) == {k: v for k, v in after.items() if v}
    assert game.phase_name == "action" and game.decision is None


@pytest.mark.parametrize("steps, ok", [
    ([("I2", "I3"), ("O1", "I2")], True),    # the I2 returned by the first step is in stock for the second
    ([("O1", "I2"), ("I2", "I3")], False),   # no I2 in stock for the first step
])
def test_R11_5_the_order_of_steps_matters_only_where_stock_does(steps, ok):
    game = _plus_two(I2=0)
    if ok:
        act(game, steps_json(steps))
        assert supply(game, 0) == {"I2": 1, "I3": 1, "L3": 2, "T4": 1}
    else:
        rejects(game, steps_json(steps), "R11.3")


# ---------------------------------------------------------------- R11.5 ghosts in the finishing touches and R7.2
@pytest.mark.parametrize("puzzle, placements, score", [
    ("GW01", [("P5", cells_of("GW01"))], -1),
    ("GW04", [("P5", [[1, 1], [1, 2], [2, 1], [2, 2], [3, 1]]), ("I2", [[1, 3], [2, 3]])], -1),
    ("GW04", [("P5", [[1, 1], [1, 2], [2, 1], [2, 2], [3, 1]])], -2),  # revised: GW04's point is lost too
])
def test_R11_5_ghost_pieces_in_the_finishing_touches_cost_one_point_each(puzzle, placements, score):
    variants = ("revised", "ghost") if score == -2 else ("ghost",)
    game = ghost_game(variants, white=[puzzle] + SMALL_WHITES, black=FOUR_BLACKS, actions_per_turn=3)
    give_pieces(game, 0, {"P5": 1})
    take(game, "white", 0)
    while game.phase_name == "action":
        pass_turn(game)
    finish = {"type": "finish", "placements": [{"puzzle": puzzle, "piece": s, "cells": c} for s, c in placements]}
    rs = game.rules
    listed = {tuple((rs.shapes[rs.geometry.placement_shape[p.placement]].name) for p in f.placements)
              for f in game.finish_actions()}
    assert ("P5",) in listed
    act(game, finish)
    act(game, {"type": "finish", "placements": []})
    assert game.is_over and game.scores()[0] == score
    assert game.players[0].finish_pieces == len(placements)


@pytest.mark.parametrize("seat0, seat1, ranking", [
    ({"P5": 1}, {"O1": 1}, [1, 1]),                   # a ghost is one piece, not five cells or level 5
    ({"P5": 1}, {"O1": 1, "I2": 1}, [2, 1]),
    ({"P5": 2}, {"L4": 1, "I3": 1}, [1, 1]),
    ({"P5": 1, "O1": 1}, {"I4": 1}, [1, 2]),
    ({"X5": 3}, {"O1": 2}, [1, 2]),
])
def test_R11_5_R7_2_a_ghost_counts_as_one_piece_in_the_tie_break(seat0, seat1, ranking):
    game = ghost_game()
    set_player(game, 0, completed=["W09"], supply_counts=seat0)
    set_player(game, 1, completed=["W10"], supply_counts=seat1)
    assert game.scores() == [1, 1]
    assert game.ranking() == ranking


def test_R11_5_R7_2_a_ghost_locked_by_the_finishing_touches_counts_as_one_piece():
    game = ghost_game(white=["GW01"] + SMALL_WHITES, black=FOUR_BLACKS, actions_per_turn=3)
    give_pieces(game, 0, {"P5": 1})
    take(game, "white", 0)
    while game.phase_name == "action":
        pass_turn(game)
    act(game, {"type": "finish", "placements": [{"puzzle": "GW01", "piece": "P5", "cells": cells_of("GW01")}]})
    act(game, {"type": "finish", "placements": []})
    assert game.players[0].locked == 1
    assert game.players[0].pieces_owned(game.rules) == 3  # O1, I2 and the ghost on GW01
    assert game.scores() == [-1, 0] and game.ranking() == [2, 1]
