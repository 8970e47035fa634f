"""R1 Setup: decks, rows, starting pieces, first player, one seed for all randomness."""

from __future__ import annotations

import pytest

from conftest import FIVE_BLACKS, SMALL_WHITES, dealt, reserve, supply
from engine import DealError, Game, ParameterError, RuleSpec
from engine.actions import BLACK, WHITE


def _ids(game, cards):
    return [game.rules.puzzles[c].id if c >= 0 else None for c in cards]


def _color(game, card):
    return game.rules.puzzles[card].color


@pytest.mark.parametrize("players, black_deck", [(2, 12), (3, 14), (4, 16)])
def test_R1_1_black_deck_size_per_player_count(new_game, players, black_deck):
    game = new_game(players=players, seed=3)
    in_play = game.decks[BLACK] + game.rows[BLACK]
    assert len(in_play) == black_deck
    assert all(_color(game, c) == "black" for c in in_play)
    assert len(set(in_play)) == black_deck


def test_R1_1_white_deck_holds_every_white_puzzle(new_game):
    game = new_game(seed=5)
    whites = {i for i, p in enumerate(game.rules.puzzles) if p.color == "white"}
    assert len(whites) == 32
    assert set(game.decks[WHITE] + game.rows[WHITE]) == whites
    assert len(game.decks[WHITE]) == 32 - 4


def test_R1_1_decks_are_shuffled_by_the_seed(new_game):
    orders = {tuple(new_game(seed=s).decks[WHITE]) for s in range(5)}
    assert len(orders) == 5
    blacks = {frozenset(new_game(seed=s).decks[BLACK] + new_game(seed=s).rows[BLACK]) for s in range(8)}
    assert len(blacks) > 1, "the black cards left out of the game should depend on the seed"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_R1_2_rows_are_the_top_cards_of_each_deck(players):
    game = dealt(players)
    assert _ids(game, game.rows[WHITE]) == SMALL_WHITES[:4]
    assert _ids(game, game.rows[BLACK]) == FIVE_BLACKS[:4]
    assert _ids(game, game.decks[WHITE]) == SMALL_WHITES[4:]
    assert _ids(game, game.decks[BLACK]) == FIVE_BLACKS[4:]


def test_R1_2_row_size_parameter_sets_the_slots():
    game = dealt(row_size=2)
    assert _ids(game, game.rows[WHITE]) == SMALL_WHITES[:2]
    assert _ids(game, game.rows[BLACK]) == FIVE_BLACKS[:2]


def test_R1_2_a_short_deck_leaves_row_slots_empty():
    game = dealt(white=["W09", "W22"], black=FIVE_BLACKS)
    assert _ids(game, game.rows[WHITE]) == ["W09", "W22", None, None]
    assert game.decks[WHITE] == []


@pytest.mark.parametrize("players", [2, 3, 4])
def test_R1_3_each_player_starts_with_O1_and_I2_from_the_reserve(new_game, players):
    game = new_game(players=players)
    for seat in range(players):
        assert supply(game, seat) == {"O1": 1, "I2": 1}
        assert game.players[seat].unfinished == [] and game.players[seat].completed == []
    assert reserve(game, "O1") == 10 - players
    assert reserve(game, "I2") == 10 - players
    for name in ("I3", "L3", "I4", "O4", "T4", "L4", "Z4"):
        assert reserve(game, name) == 10


def test_R1_3_starting_pieces_and_reserve_are_parameters(new_game):
    game = new_game(players=3, starting_pieces=["O1", "O1", "L3"], reserve_per_shape=15)
    assert supply(game, 2) == {"O1": 2, "L3": 1}
    assert reserve(game, "O1") == 15 - 6
    assert reserve(game, "L3") == 15 - 3
    assert reserve(game, "I2") == 15


@pytest.mark.parametrize("players", [2, 3, 4])
def test_R1_4_seat_0_moves_first_with_a_full_turn(new_game, players):
    game = new_game(players=players)
    assert game.to_move() == 0
    assert game.phase_name == "action"
    assert game.round == 1
    assert game.actions_left == 3
    assert not game.end_triggered


@pytest.mark.parametrize("players", [1, 5, 0])
def test_R1_player_count_outside_2_to_4_is_rejected(players):
    with pytest.raises(ParameterError, match=r"^R1(3)?: "):
        Game.new(RuleSpec.make(), players, 0)
    table = {str(n): 3 for n in range(6)}
    with pytest.raises(ParameterError, match=r"^R1: rules base\[.*\] are for 2-4 players, not " + str(players)):
        Game.new(RuleSpec.make((), {"black_deck_size": table}), players, 0)


def test_R1_player_count_must_be_a_whole_number():
    with pytest.raises(ParameterError, match=r"^R1: the number of players must be a whole number"):
        Game.new(RuleSpec.make(), "2", 0)


def test_R1_5_same_seed_same_game(new_game):
    a, b = new_game(players=3, seed=42), new_game(players=3, seed=42)
    assert a.to_json() == b.to_json()
    assert a.to_json() != new_game(players=3, seed=43).to_json()


def test_R1_5_explicit_deal_overrides_the_shuffle():
    a = dealt(seed=1)
    b = dealt(seed=999)
    a_json, b_json = a.to_json(), b.to_json()
    a_json.pop("seed"), b_json.pop("seed")
    assert a_json == b_json


def test_R1_1_explicit_deal_black_length_replaces_black_deck_size():
    game = dealt(black=["B01", "B02", "B03", "B04", "B05", "B06"])
    assert len(game.decks[BLACK]) + len(game.rows[BLACK]) == 6


@pytest.mark.parametrize("deal, message", [
    (["W01"], "a deal must be an object"),
    ({"white": ["W01"], "black": ["B01"], "grey": []}, "a deal has only 'white' and 'black', not 'grey'"),
    ({"white": "W01", "black": []}, "'white' must be a list of card ids"),
    ({"white": [], "black": [1, 2]}, "'black' must be a list of card ids"),
    ({"black": []}, "'white' must be a list of card ids"),
    ({"white": ["W99"], "black": []}, "'white' names 'W99', which is not a puzzle of rules base"),
    ({"white": ["B01"], "black": []}, "B01 is a black puzzle, not white"),
    ({"white": [], "black": ["W01"]}, "W01 is a white puzzle, not black"),
    ({"white": ["W01", "W02", "W01"], "black": []}, "W01 appears twice"),
])
def test_R1_5_malformed_deal_is_rejected_with_a_sentence(deal, message):
    with pytest.raises(DealError) as info:
        Game.new(RuleSpec.make(), 2, 0, deal)
    assert message in str(info.value)
