"""The take seam (``Ruleset.take_checks`` / ``take_cards``): one house rule on taking puzzles
holds for every way of taking one -- row takes (R3.1), blind takes (R9.2), grid takes
(R12.2) -- in the listing and when applied, under every built-in rule set.

The house rule played here is the example of ``docs/writing-a-variant.md``, read from the
page itself, so the documented example is the one that is tested.
"""

from __future__ import annotations

import random
import re
import types
from pathlib import Path

import pytest

from engine import Game, IllegalAction, RuleSpec, compile_rules, variants
from engine.base_rules import apply_take_puzzle
from engine.variants import plugin_manager

DOC = Path(__file__).resolve().parent.parent / "docs" / "writing-a-variant.md"

RULE_SETS = [
    ([], 2), (["revised"], 2), (["revised"], 4), (["ghost"], 2), (["open-scores"], 3), (["no-master"], 2),
    (["revised", "ghost"], 2), (["revised", "open-scores", "no-master"], 3), (["solo"], 1), (["solo", "ghost"], 1),
]


def documented_example() -> types.ModuleType:
    """The ``slow-black`` module exactly as the documentation prints it."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## An example"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "slow-black" in code and "take_checks" in code
    module = types.ModuleType("my_house_rules")
    exec(compile(code, "my_house_rules.py", "exec"), module.__dict__)
    return module


@pytest.fixture
def slow_black():
    pm = plugin_manager()
    module = documented_example()
    pm.register(module, name="doc-slow-black")
    variants._collect(pm)
    compile_rules.cache_clear()
    try:
        yield module
    finally:
        pm.unregister(module)
        variants._collect(pm)
        compile_rules.cache_clear()


def take_candidates(rules) -> list:
    """Every take the rule set knows of: row takes, blind takes (revised), grid takes (solo)."""
    return list(rules.all_takes) + list(getattr(rules, "blind_actions", ())) + list(getattr(rules, "grid_takes", ()))


def mixed_grid(rules, seed: int) -> dict:
    """A solo deal whose 3x3 grid holds black puzzles from the start (the shuffled solo deck
    puts its whites on top, so round 1 would never offer a black one)."""
    rng = random.Random(seed)
    whites = [p.id for p in rules.puzzles if p.color == "white"]
    blacks = [p.id for p in rules.puzzles if p.color == "black"]
    rng.shuffle(whites)
    rng.shuffle(blacks)
    return {"white": whites[:5], "black": blacks[:10]}


def taken_cards(before: Game, after: Game, seat: int) -> list[int]:
    had = [pz.card for pz in before.players[seat].unfinished]
    return [pz.card for pz in after.players[seat].unfinished if pz.card not in had]


@pytest.mark.parametrize("variants,players", RULE_SETS, ids=lambda v: "+".join(v) if isinstance(v, list) else str(v))
def test_the_documented_house_rule_holds_for_every_way_of_taking_a_puzzle(slow_black, variants, players):
    spec = RuleSpec.make(variants + ["slow-black"], {"max_rounds": 12})
    assert compile_rules(spec, players).actions_per_turn == 5  # the example's override is in force
    refused = blacks_later = whites_first = 0
    rules = compile_rules(spec, players)
    for seed in range(3):
        game = Game.new(rules, players, seed, deal=mixed_grid(rules, seed) if "solo" in variants else None)
        rng = random.Random(seed)
        while not game.is_over:
            if game.phase_name == "action" and game.round == 1:
                for a in game.legal_actions():  # nothing listed takes a black puzzle in round 1
                    resolve = rules.take_cards.get(type(a))
                    if resolve is not None:
                        assert not rules.is_black[resolve(game, a)], (variants, a)
                for a in take_candidates(rules):  # nor may any take be applied that would
                    trial = game.clone()
                    try:
                        trial.apply(a)
                    except IllegalAction as exc:
                        refused += exc.rule == "house"
                        continue
                    got = taken_cards(game, trial, game.seat)
                    assert not any(rules.is_black[c] for c in got), (variants, seed, a)
                    whites_first += bool(got)
            seat, round_ = game.seat, game.round
            before = game.clone()
            game.apply(rng.choice(game.legal_actions()))
            got = taken_cards(before, game, seat)
            assert round_ > 1 or not any(rules.is_black[c] for c in got)
            blacks_later += round_ > 1 and any(rules.is_black[c] for c in got)
    assert refused > 0, "a black take was tried in round 1 and refused by the house rule"
    assert whites_first > 0, "the rule leaves white takes in round 1 alone"
    if variants[:1] != ["solo"]:
        assert blacks_later > 0, "black puzzles may be taken after round 1"


def test_a_blind_black_take_in_round_one_is_neither_listed_nor_accepted(slow_black):
    from plugins.revised import TakeBlind

    game = Game.new(RuleSpec.make(["revised", "slow-black"]), 2, 1)
    assert TakeBlind(1) not in game.legal_actions() and TakeBlind(0) in game.legal_actions()
    with pytest.raises(IllegalAction, match="no black puzzle in the first round"):
        game.clone().apply(TakeBlind(1))


def test_without_take_checks_the_base_game_is_not_wrapped():
    # the seam is composed once per rule set, and costs the base game nothing
    rules = compile_rules(RuleSpec(), 2)
    assert rules.take_checks == [] and rules.action_filters == []
    assert rules.handlers[type(rules.all_takes[0])][1] is apply_take_puzzle
    revised = compile_rules(RuleSpec.make(["revised"]), 2)
    assert revised.action_filters == [], "R9.4 is listed by the variant itself (listed = True)"
