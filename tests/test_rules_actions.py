"""R3 Actions of the base game: take_puzzle, take_piece, upgrade/exchange, place, master."""

from __future__ import annotations

import pytest

from conftest import (W09, W22, W24, act, dealt, give_pieces, is_listed, pass_turn, place, rejects, reserve,
                      set_reserve, shape, supply, take)
from engine.actions import BLACK, WHITE, Finish, Master, Place, TakePiece, TakePuzzle, Upgrade

LEVEL4 = ("I4", "O4", "T4", "L4", "Z4")


def _ids(game, cards):
    return [game.rules.puzzles[c].id if c >= 0 else None for c in cards]


def _unfinished(game, seat=0):
    return [game.rules.puzzles[pz.card].id for pz in game.players[seat].unfinished]


def _card(game, cid):
    return game.rules.puzzle_index[cid]


# ---------------------------------------------------------------- R3.1 take_puzzle
def test_R3_1_take_puzzle_refills_slot_from_the_white_deck():
    game = dealt()
    take(game, "white", 1)
    assert _unfinished(game) == ["W22"]
    assert _ids(game, game.rows[WHITE]) == ["W09", "W24", "W10", "W27"]
    assert _ids(game, game.decks[WHITE]) == ["W31", "W23", "W11"]


def test_R3_1_take_puzzle_refills_slot_from_the_black_deck():
    game = dealt()
    take(game, "black", 2)
    assert _unfinished(game) == ["B15"]
    assert _ids(game, game.rows[BLACK]) == ["B13", "B14", "B17", "B16"]
    assert game.decks[BLACK] == []


def test_R3_1_empty_deck_leaves_the_slot_empty():
    game = dealt(white=["W09", "W22", "W10", "W27"])
    take(game, "white", 3)
    assert _ids(game, game.rows[WHITE]) == ["W09", "W22", "W10", None]
    assert not is_listed(game, TakePuzzle(WHITE, 3))
    rejects(game, {"type": "take_puzzle", "color": "white", "slot": 3}, "R3.1")


@pytest.mark.parametrize("action", [
    {"type": "take_puzzle", "color": "white", "slot": 4},
    {"type": "take_puzzle", "color": "black", "slot": -1},
    {"type": "take_puzzle", "color": "black", "slot": 99},
    TakePuzzle(WHITE, 4),
])
def test_R3_1_slot_outside_the_row_is_rejected(action):
    rejects(dealt(), action, "R3.1")


def test_R3_1_take_puzzle_unknown_colour_index_is_rejected():
    rejects(dealt(), TakePuzzle(2, 0), "R14")


def test_R3_1_fifth_unfinished_puzzle_is_rejected():
    game = dealt(actions_per_turn=5)
    for _ in range(4):
        take(game, "white", 0)
    assert len(game.players[0].unfinished) == 4
    err = rejects(game, {"type": "take_puzzle", "color": "black", "slot": 0}, "R3.1")
    assert "already have 4 unfinished puzzles" in str(err)
    assert not any(isinstance(a, TakePuzzle) for a in game.legal_actions())


def test_R3_1_max_unfinished_is_a_parameter():
    game = dealt(max_unfinished=1)
    take(game, "white", 0)
    rejects(game, {"type": "take_puzzle", "color": "white", "slot": 0}, "R3.1")


def test_R3_1_legal_takes_are_every_filled_slot():
    game = dealt(white=["W09", "W22"], black=["B13", "B14", "B15"])
    takes = {a for a in game.legal_actions() if isinstance(a, TakePuzzle)}
    assert takes == {TakePuzzle(WHITE, 0), TakePuzzle(WHITE, 1), TakePuzzle(BLACK, 0),
                     TakePuzzle(BLACK, 1), TakePuzzle(BLACK, 2)}


# ---------------------------------------------------------------- R3.2 take_piece
def test_R3_2_take_piece_moves_an_O1_from_the_reserve():
    game = dealt()
    act(game, {"type": "take_piece"})
    assert supply(game, 0) == {"O1": 2, "I2": 1}
    assert reserve(game, "O1") == 7


def test_R3_2_take_piece_with_no_O1_left_is_rejected():
    game = dealt()
    set_reserve(game, {"O1": 0})
    rejects(game, {"type": "take_piece"}, "R3.2")
    assert not is_listed(game, TakePiece())


# ---------------------------------------------------------------- R3.3 / R3.4 upgrade and exchange
@pytest.mark.parametrize("give, targets", [
    ("O1", {"I2"}),
    ("I2", {"I3", "L3", "O1"}),
    ("L3", {"I4", "O4", "T4", "L4", "Z4", "I3", "O1", "I2"}),
    ("L4", {"I4", "O4", "T4", "Z4", "O1", "I2", "I3", "L3"}),
])
def test_R3_3_legal_upgrades_with_a_full_reserve(give, targets):
    game = dealt()
    game.players[0].supply = [0] * len(game.rules.shapes)
    game.players[0].supply[shape(game, give)] = 1
    ups = {game.rules.shapes[a.take].name for a in game.legal_actions() if isinstance(a, Upgrade)}
    assert ups == targets


def test_R3_3_upgrade_O1_to_I2_returns_the_piece_to_the_reserve():
    game = dealt()
    act(game, {"type": "upgrade", "give": "O1", "take": "I2"})
    assert supply(game, 0) == {"I2": 2}
    assert reserve(game, "O1") == 9 and reserve(game, "I2") == 7


def test_R3_3_upgrade_must_take_the_next_level_when_it_has_stock():
    game = dealt()
    for target in ("I3", "L3", "O4"):
        rejects(game, {"type": "upgrade", "give": "O1", "take": target}, "R3.3")


def test_R3_3_upgrade_skips_empty_level():
    game = dealt()
    set_reserve(game, {"I2": 0})
    for target in ("I3", "L3"):
        copy = game.clone()
        act(copy, {"type": "upgrade", "give": "O1", "take": target})
        assert supply(copy, 0)[target] == 1
    rejects(game, {"type": "upgrade", "give": "O1", "take": "T4"}, "R3.3")


def test_R3_3_upgrade_skips_two_empty_levels():
    game = dealt()
    set_reserve(game, {"I2": 0, "I3": 0, "L3": 0})
    ups = {game.rules.shapes[a.take].name for a in game.legal_actions() if isinstance(a, Upgrade) and a.give == shape(game, "O1")}
    assert ups == set(LEVEL4)


def test_R3_3_upgrade_of_a_piece_not_in_the_supply_is_rejected():
    rejects(dealt(), {"type": "upgrade", "give": "L3", "take": "I4"}, "R3.3")


def test_R3_3_upgrade_to_a_shape_out_of_stock_is_rejected():
    game = dealt()
    set_reserve(game, {"I2": 0})
    err = rejects(game, {"type": "upgrade", "give": "O1", "take": "I2"}, "R3.3")
    assert "the reserve has no I2" in str(err)


def test_R3_3_upgrade_to_level_5_does_not_exist_in_the_base_game():
    game = dealt()
    give_pieces(game, 0, {"L4": 1})
    rejects(game, {"type": "upgrade", "give": "L4", "take": "X5"}, "R0")
    assert game.rules.upgrade_max_level == 4
    assert max(game.rules.shape_level) == 4


def test_R3_3_upgrade_with_unknown_shape_index_is_rejected():
    rejects(dealt(), Upgrade(0, 99), "R14")
    rejects(dealt(), Upgrade(-1, 0), "R14")


def test_R3_4_exchange_to_same_level_other_shape():
    game = dealt()
    give_pieces(game, 0, {"I3": 1})
    act(game, {"type": "upgrade", "give": "I3", "take": "L3"})
    assert supply(game, 0) == {"O1": 1, "I2": 1, "L3": 1}
    assert reserve(game, "I3") == 10 and reserve(game, "L3") == 9


def test_R3_4_exchange_to_a_lower_level():
    game = dealt()
    give_pieces(game, 0, {"T4": 1})
    act(game, {"type": "upgrade", "give": "T4", "take": "O1"})
    assert supply(game, 0) == {"O1": 2, "I2": 1}
    assert reserve(game, "T4") == 10


def test_R3_4_exchange_to_the_same_shape_is_rejected():
    err = rejects(dealt(), {"type": "upgrade", "give": "I2", "take": "I2"}, "R3.4")
    assert "same shape" in str(err)


def test_R3_4_exchange_to_a_lower_shape_out_of_stock_is_rejected():
    game = dealt()
    give_pieces(game, 0, {"L3": 1})
    set_reserve(game, {"I2": 0})
    rejects(game, {"type": "upgrade", "give": "L3", "take": "I2"}, "R3.3")


def test_R3_4_with_no_higher_level_in_stock_only_exchanges_remain():
    game = dealt()
    give_pieces(game, 0, {"I3": 1})
    set_reserve(game, {name: 0 for name in LEVEL4})
    ups = {game.rules.shapes[a.take].name for a in game.legal_actions() if isinstance(a, Upgrade) and a.give == shape(game, "I3")}
    assert ups == {"L3", "O1", "I2"}
    rejects(game, {"type": "upgrade", "give": "I3", "take": "T4"}, "R3.3")


# ---------------------------------------------------------------- R3.5 place
def test_R3_5_place_covers_recess_cells_and_stays():
    game = dealt()
    take(game, "white", 0)  # W09
    place(game, "W09", "O1", [[3, 2]])
    pz = game.players[0].unfinished[0]
    assert len(pz.placed) == 1 and supply(game, 0) == {"I2": 1}
    pass_turn(game)
    pass_turn(game)
    assert game.players[0].unfinished[0].placed == pz.placed
    rejects(game, {"type": "place", "puzzle": "W09", "piece": "I2", "cells": W09}, "R3.5")


@pytest.mark.parametrize("card, cells", [
    ("W24", W24),                           # L3 as printed
    ("W11", [[2, 3], [3, 2], [3, 3]]),      # L3 rotated
    ("W26", [[2, 1], [2, 2], [3, 2]]),      # L3 reflected
])
def test_R3_5_rotated_or_flipped_pieces_fit(card, cells):
    game = dealt(white=[card, "W09", "W22", "W10"])
    give_pieces(game, 0, {"L3": 1})
    take(game, "white", 0)
    place(game, card, "L3", cells)
    assert [game.rules.puzzles[c].id for c in game.players[0].completed] == [card]


@pytest.mark.parametrize("piece, cells, rule, words", [
    ("I2", [[1, 2], [2, 2]], "R3.5", "only recess cells"),       # half outside the recess
    ("I2", [[4, 2], [5, 2]], "R3.5", "off the 5x5 grid"),
    ("I2", [[-1, 2], [0, 2]], "R3.5", "off the 5x5 grid"),
    ("I2", [[2, 2], [3, 3]], "R3.5", "not a I2"),                # diagonal: not that shape
    ("I2", [[2, 2]], "R3.5", "not a I2"),
    ("L3", [[2, 2], [3, 2], [3, 3]], "R3.5", "no L3"),           # piece not owned
    ("Q7", [[2, 2]], "R0", "unknown piece"),
])
def test_R3_5_bad_placement_is_rejected(piece, cells, rule, words):
    game = dealt()
    take(game, "white", 0)  # W09
    err = rejects(game, {"type": "place", "puzzle": "W09", "piece": piece, "cells": cells}, rule)
    assert words in str(err)


def test_R3_5_overlapping_piece_is_rejected():
    game = dealt()
    take(game, "white", 0)  # W09
    place(game, "W09", "O1", [[2, 2]])
    err = rejects(game, {"type": "place", "puzzle": "W09", "piece": "I2", "cells": W09}, "R3.5")
    assert "overlaps" in str(err)


def test_R3_5_place_on_a_puzzle_that_is_not_yours_is_rejected():
    game = dealt()
    take(game, "white", 0)  # seat 0 takes W09
    pass_turn(game)
    for cid in ("W09", "W22", "B13"):  # another's, in the row, in the row
        err = rejects(game, {"type": "place", "puzzle": cid, "piece": "I2", "cells": W09}, "R3.5")
        assert "not one of your unfinished puzzles" in str(err)
    rejects(game, {"type": "place", "puzzle": "Z01", "piece": "I2", "cells": W09}, "R3.5")


@pytest.mark.parametrize("placement", [10**6, -1, -10**6])
def test_R3_5_unknown_placement_id_is_rejected(placement):
    game = dealt()
    take(game, "white", 0)
    rejects(game, Place(_card(game, "W09"), placement), "R14")


def test_R3_5_legal_places_are_exactly_the_fitting_placements():
    game = dealt()
    take(game, "white", 0)  # W09: I2 upright; supply O1, I2
    places = {a for a in game.legal_actions() if isinstance(a, Place)}
    cells = sorted(sorted(map(tuple, _cells(game, a))) for a in places)
    assert cells == [[(2, 2)], [(2, 2), (3, 2)], [(3, 2)]]


def _cells(game, a):
    from engine.geometry import mask_to_cells
    return mask_to_cells(game.rules.geometry.placement_mask[a.placement])


# ---------------------------------------------------------------- R3.6 master
def _pl(cid, piece, cells):
    return {"puzzle": cid, "piece": piece, "cells": cells}


def test_R3_6_master_places_one_piece_on_each_puzzle_as_one_action():
    game = dealt()
    take(game, "white", 0)  # W09
    take(game, "white", 1)  # W22
    act(game, {"type": "master", "placements": [_pl("W09", "O1", [[2, 2]]), _pl("W22", "I2", W22)]})
    assert game.to_move() == 1
    assert _unfinished(game) == ["W09"]
    assert [game.rules.puzzles[c].id for c in game.players[0].completed] == ["W22"]
    assert supply(game, 0) == {"I2": 2}  # the I2 came back, plus W22's reward


def test_R3_6_master_counts_as_one_action_of_the_budget():
    game = dealt()
    take(game, "white", 0)
    act(game, {"type": "master", "placements": [_pl("W09", "O1", [[2, 2]])]})
    assert game.to_move() == 0 and game.actions_left == 1 and game.master_used


def test_R3_6_master_with_two_pieces_on_one_puzzle_is_rejected():
    game = dealt()
    take(game, "white", 0)
    rejects(game, {"type": "master", "placements": [_pl("W09", "O1", [[2, 2]]), _pl("W09", "O1", [[3, 2]])]}, "R3.6")


def test_R3_6_empty_master_is_rejected():
    game = dealt()
    take(game, "white", 0)
    err = rejects(game, {"type": "master", "placements": []}, "R3.6")
    assert "at least one piece" in str(err)


def test_R3_6_master_action_off_by_parameter():
    game = dealt(master_action=False)
    take(game, "white", 0)
    rejects(game, {"type": "master", "placements": [_pl("W09", "O1", [[2, 2]])]}, "R3.6")
    assert list(game.master_actions()) == []


def test_R3_6_pieces_returned_by_a_completion_cannot_be_used_in_the_same_master():
    game = dealt()
    take(game, "white", 0)  # W09
    take(game, "white", 1)  # W22; supply is one O1 and one I2
    rejects(game, {"type": "master", "placements": [_pl("W09", "I2", W09), _pl("W22", "I2", W22)]}, r"R3\.[56]")


def test_R3_6_master_with_an_illegal_placement_is_rejected_whole():
    game = dealt()
    take(game, "white", 0)
    take(game, "white", 1)
    rejects(game, {"type": "master", "placements": [_pl("W09", "O1", [[2, 2]]), _pl("W22", "I2", [[1, 2], [2, 2]])]}, "R3.5")
    rejects(game, {"type": "master", "placements": [_pl("W09", "O1", [[2, 2]]), _pl("W10", "I2", [[1, 2], [2, 2]])]}, "R3.5")


def test_R3_6_master_with_a_non_placement_is_rejected():
    game = dealt()
    take(game, "white", 0)
    rejects(game, Master((TakePiece(),)), "R14")


def test_R3_6_master_actions_enumerates_every_legal_combination():
    game = dealt()
    take(game, "white", 0)  # W09
    take(game, "white", 1)  # W22; supply O1, I2
    combos = list(game.master_actions())
    # per puzzle: nothing, I2, O1 top, O1 bottom; both I2 or both O1 exceed the supply
    assert len(combos) == 4 * 4 - 1 - 1 - 4
    assert len(set(combos)) == len(combos)
    for m in combos:
        game.clone().apply(m)


def test_R3_decision_out_of_phase_is_rejected():
    game = dealt()
    rejects(game, Finish(()), "R14")
    rejects(game, {"type": "finish", "placements": []}, "R14")
    rejects(game, {"type": "reward", "take": "I2"}, "R14")
    rejects(game, {"type": "level_up", "steps": []}, "R14")
