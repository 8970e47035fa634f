"""Regressions: engine defects found by the rule tests, each pinned by the test that found it."""

import pytest
from conftest import FIVE_BLACKS, SMALL_WHITES, act, dealt, start_finish, take
from engine import Game, IllegalAction, ParameterError, RuleSpec, compile_rules
from engine import observation
from engine.observation import game_from_observation
from engine.actions import Finish, Master, Pass, Place, TakePiece, TakePuzzle, Upgrade


def test_legal_actions_after_the_game_is_over_is_empty():
    game = dealt(black=["B13", "B14", "B15", "B16"])
    start_finish(game)
    act(game, {"type": "finish", "placements": []})
    act(game, {"type": "finish", "placements": []})
    assert game.is_over
    assert game.legal_actions() == []          # KeyError: 4 (decision_options has no OVER entry)


def test_R13_true_is_not_a_whole_number_even_after_1_was_compiled():
    compile_rules(RuleSpec.make((), {"actions_per_turn": 1}), 2)
    with pytest.raises(ParameterError):        # accepted: the lru_cache returns the ruleset of 1 (True == 1)
        compile_rules(RuleSpec.make((), {"actions_per_turn": True}), 2)


@pytest.mark.parametrize("make", [
    lambda g, c: Master((Place(c, 10**6),)),
])
def test_R14_master_with_unknown_placement_id_is_illegal(make):
    game = dealt()
    take(game, "white", 0)
    with pytest.raises(IllegalAction):         # IndexError from check_placement_set
        game.apply(make(game, game.rules.puzzle_index["W09"]))


def test_R14_finish_with_unknown_placement_id_is_illegal():
    game = dealt(black=["B13", "B14", "B15", "B16"])
    take(game, "white", 0)
    start_finish(game)
    with pytest.raises(IllegalAction):         # IndexError
        game.apply(Finish((Place(game.rules.puzzle_index["W09"], 10**6),)))


@pytest.mark.parametrize("action", [TakePuzzle(0, "x"), Upgrade("O1", "I2"), Place("W09", 3)])
def test_R14_compact_action_with_wrong_field_types_is_illegal(action):
    with pytest.raises(IllegalAction):         # TypeError: '<=' not supported between 'int' and 'str'
        dealt().apply(action)


def test_actions_of_different_types_are_different():
    assert TakePiece() != Pass()               # both equal () as NamedTuples without fields
    assert len({TakePuzzle(0, 1), Upgrade(0, 1), Place(0, 1)}) == 3


def test_R1_wrong_player_count_cites_R1():
    with pytest.raises(ParameterError, match=r"^R1: "):   # "R13: parameter 'black_deck_size' has no entry for 1 players"
        Game.new(RuleSpec.make(), 1, 0)


def test_card_reward_error_names_the_file(tmp_path):
    import yaml
    from engine import CardDataError
    from engine.cards import check_rewards, load_card_file
    path = tmp_path / "my_cards.yaml"
    path.write_text(yaml.safe_dump({"set": "mini", "pieces": {"O1": {"level": 1, "shape": ["#"]}},
        "puzzles": [{"id": "M01", "color": "white", "points": 1, "reward": "Q4",
                     "shape": [".....", "..#..", ".....", ".....", "....."]}]}))
    with pytest.raises(CardDataError, match=r"^my_cards\.yaml: puzzle M01"):   # says "mini.yaml: ..."
        check_rewards([load_card_file(path)])


def test_R14_unhashable_colour_is_illegal_not_a_type_error():
    from engine import action_from_json
    rules = dealt().rules
    with pytest.raises(IllegalAction):        # TypeError: unhashable type: 'list' (codec.get_color)
        action_from_json(rules, {"type": "take_puzzle", "color": ["white"], "slot": 0})


@pytest.mark.parametrize("change", [
    lambda r: {**r, "actions": [5] + r["actions"]},                                  # AttributeError
    lambda r: {**r, "actions": 5},                                                   # TypeError
    lambda r: {**r, "actions": [{"seat": "a", "forfeit": True}] + r["actions"]},     # TypeError in forfeit
    lambda r: {**r, "actions": [{"seat": 0, "action": {"type": "take_puzzle", "color": ["white"], "slot": 0}}]},
])
def test_corrupted_replay_is_a_sentence_not_a_traceback(tmp_path, change):
    import json
    from typer.testing import CliRunner
    from arena.cli import app
    good = tmp_path / "good.json"
    assert CliRunner().invoke(app, ["play", "greedy", "random", "--seed", "3", "--replay", str(good)]).exit_code == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(change(json.loads(good.read_text()))))
    result = CliRunner().invoke(app, ["replay", "--quiet", str(bad)])
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def test_R9_4_game_from_observation_keeps_the_black_limit():
    from variant_helpers import act, new
    game = new(("revised",), 2, white=SMALL_WHITES, black=FIVE_BLACKS)
    act(game, {"type": "take_puzzle", "color": "black", "slot": 0})  # triggers the end
    act(game, {"type": "take_puzzle", "color": "black", "slot": 1})  # the one black take allowed
    rebuilt = game_from_observation(observation(game, 0))
    assert rebuilt.legal_actions() == game.legal_actions()


@pytest.mark.parametrize("variants, players, params", [
    ([], 2, {"reserve_per_shape": 256}),
    (["solo"], 1, {"reserve_per_shape": 300}),
    (["ghost"], 2, {"ghost.reserve_per_shape": 256}),
])
def test_R13_a_reserve_over_255_is_refused_with_a_sentence(variants, players, params):
    with pytest.raises(ParameterError, match=r"^R13: parameter '.*reserve_per_shape' must be a whole number from"):
        Game.new(RuleSpec.make(variants, params), players, 0)


def test_R12_4_an_empty_solo_deck_triggers_the_end_at_setup():
    # a deal of fewer than the grid's 9 cards: all are dealt at setup and the deck is empty
    game = Game.new(RuleSpec.make(["solo"]), 1, 0, deal={"white": ["W01", "W02"], "black": ["B01"]})
    assert game.end_triggered and game.final_round == 1


def test_R9_6_piles_and_scores_are_revealed_when_the_game_is_over():
    from arena.plugins import policy
    from conftest import play_out
    game = play_out(Game.new(RuleSpec.make(["revised"]), 2, 3), [policy("greedy"), policy("greedy")])
    other = observation(game, 0)["seats"][1]
    assert other["score"] == game.result()["scores"][1]
    assert len(other["completed"]) == other["completed_count"]
