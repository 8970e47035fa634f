"""R8/R13: which variants combine, and the parameter errors of the variants.

Every refusal is a :class:`ParameterError` whose message cites the rule and says what is
wrong in a sentence.
"""

from __future__ import annotations

import re

import pytest

from engine import Game, ParameterError, RuleSpec, compile_rules
from engine.variants import available
from variant_helpers import compatible_combinations

GHOST_RESERVE = r"R13: parameter 'ghost.reserve_per_shape' must be a whole number"


@pytest.mark.parametrize("variants, players", compatible_combinations(),
                         ids=lambda v: "+".join(v) if isinstance(v, tuple) else str(v))
def test_R8_every_compatible_combination_compiles_and_deals(variants, players):
    spec = RuleSpec.make(list(variants))
    game = Game.new(spec, players, 3)
    assert game.rules.spec == spec and RuleSpec.from_json(spec.to_json()) == spec
    assert spec.label() == "+".join(variants) or spec.label() == "base"
    assert game.legal_actions()


@pytest.mark.parametrize("variants", [("revised", "open-scores"), ("open-scores", "revised"),
                                      ("ghost", "revised", "no-master"), ("no-master", "ghost", "revised")])
def test_R8_variant_order_does_not_change_the_rules(variants):
    a = Game.new(RuleSpec.make(list(variants)), 2, 5)
    b = Game.new(RuleSpec.make(sorted(variants)), 2, 5)
    assert a.legal_actions() == b.legal_actions()
    assert a.rules.scores_visible == b.rules.scores_visible
    assert sorted(a.rules.handlers, key=lambda t: t.__name__) == sorted(b.rules.handlers, key=lambda t: t.__name__)


@pytest.mark.parametrize("variants, players", [(("ghost", "revised"), 3), (("solo", "ghost", "no-master"), 1)])
def test_R8_variant_order_does_not_change_a_game(variants, players):
    import random

    from arena.plugins import policy
    games = [Game.new(RuleSpec.make(list(order)), players, 9) for order in (variants, variants[::-1])]
    for game in games:
        rng = random.Random(9)
        while not game.is_over:
            game.apply(policy("greedy").choose(game, rng))
    assert games[0].history == games[1].history and games[0].result() == games[1].result()


def test_R8_the_built_in_variants_are_registered():
    assert {"revised", "open-scores", "ghost", "solo", "no-master"} <= set(available())
    for variant in available().values():
        assert variant.description and variant.plugin is not None


@pytest.mark.parametrize("variants, params, players, message", [
    (["nope"], {}, 2, r"R8: unknown variant 'nope' \(variants: .*revised"),
    (["ghost", "ghost"], {}, 2, r"R8: variant 'ghost' is named twice"),
    (["solo", "revised"], {}, 1, r"R8: variant 'solo' cannot be combined with 'revised'"),
    (["revised", "solo"], {}, 1, r"R8: variant 'revised' cannot be combined with 'solo'"),
    ([], {"nope": 1}, 2, r"R13: unknown parameter 'nope'"),
    ([], {"ghost.reserve_per_shape": 3}, 2, r"R13: unknown parameter 'ghost.reserve_per_shape'"),
    ([], {"difficulty": "standard"}, 2, r"R13: unknown parameter 'difficulty'"),
    (["revised"], {"difficulty": "standard"}, 2, r"R13: unknown parameter 'difficulty'"),
    (["ghost"], {"ghost.reserve_per_shape": -1}, 2, GHOST_RESERVE),
    (["ghost"], {"ghost.reserve_per_shape": "3"}, 2, GHOST_RESERVE),
    (["ghost"], {"ghost.reserve_per_shape": True}, 2, GHOST_RESERVE),
    (["ghost"], {"ghost.reserve_per_shape": 2.5}, 2, GHOST_RESERVE),
    (["solo"], {"difficulty": "hard"}, 1,
     r"R12.1: parameter 'difficulty' must be one of standard, challenging, unbeatable, got 'hard'"),
    (["solo"], {"difficulty": None}, 1, r"R12.1: parameter 'difficulty' must be one of"),
    (["solo"], {"difficulty": 6}, 1, r"R12.1: parameter 'difficulty' must be one of"),
    (["solo"], {"reserve_per_shape": 10}, 1,
     r"R12.1: the solo setup needs 11 level-1 pieces but reserve_per_shape is 10"),
    (["solo"], {"reserve_per_shape": 7, "difficulty": "challenging"}, 1, r"R12.1: the solo setup needs 8 level-1"),
    (["solo"], {"reserve_per_shape": 4, "difficulty": "unbeatable"}, 1, r"R12.1: the solo setup needs 5 level-1"),
    (["solo"], {"starting_pieces": ["O1", "O1"], "reserve_per_shape": 11}, 1, r"R12.1: the solo setup needs 12"),
    (["solo"], {"solo.white_cards": 33}, 1, r"R13: parameter 'solo.white_cards' is 33 but the game has only 32"),
    (["solo", "ghost"], {"solo.white_cards": 45}, 1,
     r"R13: parameter 'solo.white_cards' is 45 but the game has only 44"),
    (["solo"], {"solo.white_cards": -1}, 1, r"R13: parameter 'solo.white_cards' must be a whole number"),
])
def test_R8_R13_impossible_rules_are_refused_with_a_sentence(variants, params, players, message):
    with pytest.raises(ParameterError) as info:
        compile_rules(RuleSpec.make(variants, params), players)
    assert re.match(message, str(info.value)), str(info.value)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_R12_solo_with_more_than_one_player_is_refused(players):
    with pytest.raises(ParameterError, match=rf"^R1: rules solo are for 1-1 players, not {players}$"):
        Game.new(RuleSpec.make(["solo"]), players, 0)


@pytest.mark.parametrize("variants", [["revised"], ["ghost"], ["open-scores"], ["no-master"]])
def test_R1_multiplayer_variants_refuse_one_player(variants):
    with pytest.raises(ParameterError, match=r"^R1: rules .* are for 2-4 players, not 1$"):
        Game.new(RuleSpec.make(variants), 1, 0)


@pytest.mark.parametrize("variants, params, players", [
    (["ghost"], {"ghost.reserve_per_shape": 0}, 2),
    (["ghost"], {"ghost.reserve_per_shape": 15}, 4),
    (["solo"], {"difficulty": "challenging"}, 1),
    (["solo"], {"difficulty": "unbeatable", "reserve_per_shape": 5}, 1),
    (["solo"], {"reserve_per_shape": 11}, 1),
    (["solo"], {"solo.white_cards": 5}, 1),
    (["solo", "ghost"], {"solo.white_cards": 44}, 1),
    (["revised", "ghost"], {"reserve_per_shape": 15, "max_unfinished": 2}, 3),
])
def test_R13_possible_variant_parameters_are_accepted(variants, params, players):
    game = Game.new(RuleSpec.make(variants, params), players, 1)
    for name, value in params.items():
        assert game.rules.params[name] == value


def test_R12_1_solo_reserve_defaults_to_15_and_can_be_overridden():
    assert compile_rules(RuleSpec.make(["solo"]), 1).params["reserve_per_shape"] == 15
    assert compile_rules(RuleSpec.make(["solo"], {"reserve_per_shape": 12}), 1).params["reserve_per_shape"] == 12
    assert compile_rules(RuleSpec.make(["ghost"]), 2).params["reserve_per_shape"] == 10


@pytest.mark.parametrize("obj, message", [
    ({"variants": "revised,ghost"}, None),
    ({"variants": ["revised"], "params": {"max_unfinished": 3}}, None),
    ({"variants": [1]}, "'variants' must be a list of variant names"),
    ({"params": [1]}, "'params' must be a mapping"),
    ({"variant": ["revised"]}, "unknown field 'variant'"),
])
def test_R13_rules_json(obj, message):
    if message is None:
        spec = RuleSpec.from_json(obj)
        assert RuleSpec.from_json(spec.to_json()) == spec
        compile_rules(spec, 2)
    else:
        with pytest.raises(ParameterError, match=message):
            RuleSpec.from_json(obj)
