"""R13 Parameters: defaults, overrides, and a clear sentence for every impossible value."""

from __future__ import annotations

import pytest

from engine import Game, ParameterError, RuleSpec, compile_rules
from engine.rules import BASE_PARAMS


def _rules(players=2, **params):
    return compile_rules(RuleSpec.make((), params), players)


def test_R13_defaults_are_the_published_numbers():
    rs = _rules()
    assert rs.params == {**BASE_PARAMS, "black_deck_size": 12}
    assert BASE_PARAMS == {
        "actions_per_turn": 3, "max_unfinished": 4, "row_size": 4, "black_deck_size": {2: 12, 3: 14, 4: 16},
        "reserve_per_shape": 10, "starting_pieces": ["O1", "I2"], "finishing_touch_cost": 1, "max_rounds": 100,
        "master_action": True}
    assert _rules(3).params["black_deck_size"] == 14
    assert _rules(4).params["black_deck_size"] == 16


@pytest.mark.parametrize("name, value, expected", [
    ("actions_per_turn", 1, 1),
    ("max_unfinished", 8, 8),
    ("row_size", 2, 2),
    ("black_deck_size", 20, 20),
    ("black_deck_size", 0, 0),
    ("black_deck_size", {"2": 7, "3": 9}, 7),
    ("reserve_per_shape", 2, 2),
    ("starting_pieces", [], []),
    ("starting_pieces", ["L4", "L4"], ["L4", "L4"]),
    ("finishing_touch_cost", 0, 0),
    ("max_rounds", 1, 1),
    ("master_action", False, False),
])
def test_R13_valid_override_is_used(name, value, expected):
    rs = _rules(**{name: value})
    assert rs.params[name] == expected
    Game.new(rs, 2, 0)


@pytest.mark.parametrize("name, value, words", [
    ("actions_per_turn", 0, "'actions_per_turn' must be a whole number >= 1, got 0"),
    ("actions_per_turn", -2, "'actions_per_turn' must be a whole number >= 1"),
    ("actions_per_turn", 2.5, "'actions_per_turn' must be a whole number >= 1, got 2.5"),
    ("actions_per_turn", "3", "'actions_per_turn' must be a whole number >= 1, got '3'"),
    ("actions_per_turn", None, "'actions_per_turn' must be a whole number >= 1, got None"),
    ("max_unfinished", 0, "'max_unfinished' must be a whole number >= 1"),
    ("row_size", 0, "'row_size' must be a whole number >= 1"),
    ("row_size", [4], "'row_size' must be a whole number >= 1"),
    ("black_deck_size", -1, "'black_deck_size' must be a whole number >= 0"),
    ("black_deck_size", "12", "'black_deck_size' must be a whole number >= 0"),
    ("black_deck_size", 21, "'black_deck_size' is 21 but the game has only 20 black puzzles"),
    ("black_deck_size", {"3": 14}, "'black_deck_size' has no entry for 2 players"),
    ("black_deck_size", {"two": 12}, "'black_deck_size' keys must be player counts, got 'two'"),
    ("black_deck_size", {2: -3}, "'black_deck_size' must be a whole number >= 0, got -3"),
    ("reserve_per_shape", 0, "'reserve_per_shape' must be a whole number from 1 to 255"),
    ("reserve_per_shape", 256, "'reserve_per_shape' must be a whole number from 1 to 255"),
    ("reserve_per_shape", 1, "2 players need 2 O1 to start but reserve_per_shape is 1"),
    ("starting_pieces", "O1", "'starting_pieces' must be a list of piece names"),
    ("starting_pieces", ["O1", 2], "'starting_pieces' must be a list of piece names"),
    ("starting_pieces", ["Q9"], "'starting_pieces' names unknown piece 'Q9'"),
    ("starting_pieces", ["L4"] * 6, "2 players need 12 L4 to start but reserve_per_shape is 10"),
    ("finishing_touch_cost", -1, "'finishing_touch_cost' must be a whole number >= 0"),
    ("max_rounds", 0, "'max_rounds' must be a whole number >= 1"),
    ("master_action", "yes", "'master_action' must be true or false, got 'yes'"),
    ("master_action", "true", "'master_action' must be true or false, got 'true'"),
])
def test_R13_impossible_value_is_rejected_with_a_sentence(name, value, words):
    with pytest.raises(ParameterError) as info:
        _rules(**{name: value})
    message = str(info.value)
    assert message.startswith("R13: ")
    assert words in message


def test_R13_reserve_must_cover_the_starting_pieces_of_every_seat():
    _rules(4, reserve_per_shape=4)
    with pytest.raises(ParameterError, match="4 players need 4 O1 to start but reserve_per_shape is 3"):
        _rules(4, reserve_per_shape=3)


def test_R13_unknown_parameter_name_is_rejected_and_lists_the_known_ones():
    with pytest.raises(ParameterError) as info:
        _rules(actions_per_trun=4)
    message = str(info.value)
    assert message.startswith("R13: unknown parameter 'actions_per_trun' for rules base")
    for name in BASE_PARAMS:
        assert name in message


def test_R8_unknown_variant_is_rejected():
    with pytest.raises(ParameterError, match=r"^R8: unknown variant 'no-such-variant'"):
        compile_rules(RuleSpec.make(["no-such-variant"]), 2)


def test_R13_rule_spec_is_plain_data():
    spec = RuleSpec.make((), {"black_deck_size": {2: 5}, "starting_pieces": ["O1"], "max_rounds": 9})
    assert RuleSpec.from_json(spec.to_json()) == spec
    assert hash(spec) == hash(RuleSpec.from_json(spec.to_json()))
    assert spec.label() == "base[black_deck_size={'2': 5},max_rounds=9,starting_pieces=['O1']]"
    assert RuleSpec.from_json(None) == RuleSpec()
    assert RuleSpec.make().label() == "base"


@pytest.mark.parametrize("obj, words", [
    ([], "rules must be a mapping"),
    ({"variants": [], "params": {}, "seed": 1}, "unknown field 'seed'"),
    ({"variants": [1]}, "'variants' must be a list of variant names"),
    ({"params": [1, 2]}, "'params' must be a mapping"),
])
def test_R13_malformed_rule_spec_is_rejected(obj, words):
    with pytest.raises(ParameterError) as info:
        RuleSpec.from_json(obj)
    assert words in str(info.value)


def test_R13_overrides_change_the_game():
    game = Game.new(RuleSpec.make((), {"actions_per_turn": 2, "row_size": 3, "black_deck_size": 6}), 2, 1)
    assert game.actions_left == 2
    assert len(game.rows[0]) == 3 and len(game.decks[1]) == 3
