"""The rule hooks (``engine/hookspecs.py``): documented, validated, and enough for a user to
add a house rule without touching the engine.

The house rule below is written in this file only against the public hooks, the way a
third-party package would write it: ``discard`` returns an unfinished puzzle that has no
piece on it to the bottom of its deck, for one action, and each discard costs
``discard.penalty`` points at scoring. It implements every hookspec, so a hook added to
``engine/hookspecs.py`` without a test fails :func:`test_every_hookspec_is_exercised`.
"""

from __future__ import annotations

import inspect
import json
import random
import re
from typing import NamedTuple

import pluggy
import pytest

from engine import (Game, IllegalAction, ParameterError, RuleSpec, action_to_json, compile_rules, hookspecs,
                    make_replay, observation, resimulate, variants)
from engine.actions import ACTION, BLACK, WHITE
from engine.codec import check_fields
from engine.hookspecs import hookimpl
from engine.observation import game_from_observation
from engine.rules import ParamSpec
from engine.variants import Variant, plugin_manager
from variant_helpers import act, card_places, choose, expected_piece_totals, piece_totals

SPECS = {name: fn for name, fn in vars(hookspecs).items() if callable(fn) and hasattr(fn, "arena_spec")}


# ---------------------------------------------------------------- the house rule
class Discard(NamedTuple):
    """Return unfinished puzzle ``puzzle`` (a card index) to the bottom of its deck."""

    puzzle: int


def _penalty(value, players):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError(f"R13: parameter 'discard.penalty' must be a whole number >= 0, got {value!r}")
    return value


def _discards(player) -> int:
    return player.extra.get("discards", 0)


def apply_discard(game, a: Discard) -> None:
    """Validate, then move the puzzle under its deck and count the discard."""
    p = game.players[game.seat]
    found = [pz for pz in p.unfinished if pz.card == a.puzzle]
    if not found:
        raise IllegalAction("H1", "you may discard only one of your unfinished puzzles")
    if found[0].placed:
        raise IllegalAction("H1", "a puzzle with pieces on it cannot be discarded")
    p.unfinished.remove(found[0])
    game.decks[BLACK if game.rules.is_black[a.puzzle] else WHITE].append(a.puzzle)
    p.extra["discards"] = _discards(p) + 1
    game.action_done()


def decode_discard(rules, obj):
    """``{"type": "discard", "puzzle": "W09"}``."""
    check_fields(obj, ("type", "puzzle"), "discard")
    card = rules.puzzle_index.get(obj.get("puzzle"))
    if card is None:
        raise IllegalAction("R14", f"discard needs a puzzle id, got {obj.get('puzzle')!r}")
    return Discard(card)


def generate(game, out) -> None:
    """List a discard for each unfinished puzzle without pieces."""
    out.extend(Discard(pz.card) for pz in game.players[game.seat].unfinished if not pz.placed)


class HouseRule:
    """A third-party plugin: the ``discard`` house rule, recording which hooks were called."""

    def __init__(self):
        self.calls: list[str] = []

    @hookimpl
    def arena_rules_variants(self, register):
        """Declare ``discard`` and its parameter ``discard.penalty``."""
        self.calls.append("arena_rules_variants")
        register(Variant("discard", "house rule: discard an empty unfinished puzzle for one action",
                         params=(ParamSpec("discard.penalty", 1, "points lost per discard", _penalty),)))

    @hookimpl
    def arena_rules_card_sets(self, variant, ruleset_params):
        """No extra cards: the base pool is used."""
        if variant == "discard":
            self.calls.append("arena_rules_card_sets")
            return []
        return None

    @hookimpl
    def arena_rules_configure(self, variant, ruleset):
        """Install the action, its JSON, its listing, the penalty and the observation."""
        if variant != "discard":
            return
        self.calls.append("arena_rules_configure")
        rs = ruleset
        penalty = rs.params["discard.penalty"]
        rs.handlers[Discard] = (ACTION, apply_discard)
        rs.decoders["discard"] = decode_discard
        rs.encoders[Discard] = lambda rules, a: {"type": "discard", "puzzle": rules.puzzles[a.puzzle].id}
        rs.extra_generators.append(generate)
        rs.score_penalties.append(lambda game, seat: penalty * _discards(game.players[seat]))
        rs.observe_hooks.append(lambda game, seat, obs: [entry.__setitem__("discards", _discards(p))
                                                         for entry, p in zip(obs["seats"], game.players)])
        rs.restore_hooks.append(lambda game, obs: [p.extra.__setitem__("discards", entry["discards"])
                                                   for p, entry in zip(game.players, obs["seats"])])


def _refresh(pm) -> None:
    variants._collect(pm)
    compile_rules.cache_clear()


@pytest.fixture
def house_rule():
    """The house rule registered on the project's plugin manager, unregistered after."""
    pm = plugin_manager()
    plugin = HouseRule()
    pm.register(plugin, name="test-house-rule")
    _refresh(pm)
    try:
        yield plugin
    finally:
        pm.unregister(plugin)
        _refresh(pm)


# ---------------------------------------------------------------- meta-tests on the hookspecs
def test_the_rule_hookspecs_are_the_managers():
    assert SPECS, "no hookspec found in engine/hookspecs.py"
    pm = plugin_manager()
    for name in SPECS:
        assert getattr(pm.hook, name).spec is not None, f"{name} is not registered on the plugin manager"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_hookspec_has_the_prefix_and_documents_each_argument(name):
    fn = SPECS[name]
    assert name.startswith("arena_"), f"hookspec {name} lacks the arena_ prefix"
    doc = inspect.getdoc(fn)
    assert doc and len(doc.splitlines()[0]) > 10, f"hookspec {name} has no docstring"
    for arg in inspect.signature(fn).parameters:
        assert re.search(rf":param {arg}:\s*\S", doc), f"hookspec {name} does not document argument {arg!r}"


def test_the_house_rule_implements_every_hookspec():
    implemented = {n for n, m in inspect.getmembers(HouseRule) if hasattr(m, "arena_impl")}
    assert implemented == set(SPECS)


def test_every_hookspec_is_exercised(house_rule):
    Game.new(RuleSpec.make(["discard"]), 2, 0)
    assert set(house_rule.calls) == set(SPECS)


def test_the_plugin_manager_validates_the_house_rule(house_rule):
    from arena.plugins import plugin_manager as project_pm

    # the project's plugin manager knows the host's hooks too (the built-in bots implement
    # them), whichever test happened to load it first
    project_pm().check_pending()
    assert plugin_manager().get_plugin("test-house-rule") is house_rule


def test_a_misspelled_hook_is_caught_at_load():
    class Misspelled:
        @hookimpl
        def arena_rules_configur(self, variant, ruleset):
            pass

    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    pm.register(Misspelled())
    with pytest.raises(pluggy.PluginValidationError):
        pm.check_pending()


@pytest.mark.parametrize("bad, message", [
    ("not a variant", r"registered 'not a variant', not a Variant"),
    (Variant("revised", "a second revised"), r"variant 'revised' is registered twice"),
])
def test_a_bad_registration_is_refused_with_a_sentence(bad, message):
    class Bad:
        @hookimpl
        def arena_rules_variants(self, register):
            register(bad)

    pm = plugin_manager()
    plugin = Bad()
    pm.register(plugin, name="test-bad-variant")
    try:
        with pytest.raises(ParameterError, match=message):
            variants._collect(pm)
    finally:
        pm.unregister(plugin)
        _refresh(pm)
    assert "revised" in variants.available()


# ---------------------------------------------------------------- the house rule plays
def test_without_registration_the_house_rule_is_unknown():
    with pytest.raises(ParameterError, match=r"R8: unknown variant 'discard'"):
        compile_rules(RuleSpec.make(["discard"]), 2)


def test_a_registered_variant_changes_only_the_games_that_name_it(house_rule):
    base = Game.new(RuleSpec.make(), 2, 0)
    base.apply(base.legal_actions()[0])
    assert not any(type(a) is Discard for a in base.legal_actions())
    with pytest.raises(ParameterError, match="R13: unknown parameter 'discard.penalty'"):
        compile_rules(RuleSpec.make([], {"discard.penalty": 2}), 2)
    with pytest.raises(ParameterError, match="discard.penalty' must be a whole number"):
        compile_rules(RuleSpec.make(["discard"], {"discard.penalty": -2}), 2)


def test_the_house_rule_discards_and_scores(house_rule):
    game = Game.new(RuleSpec.make(["discard", "revised"], {"discard.penalty": 2}), 2, 0,
                    {"white": ["W09", "W22", "W10", "W27", "W24"], "black": ["B13", "B14", "B15", "B16", "B17"]})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})
    assert {"type": "discard", "puzzle": "W09"} in [action_to_json(game.rules, a) for a in game.legal_actions()]
    act(game, {"type": "discard", "puzzle": "W09"})
    assert [game.rules.puzzles[c].id for c in game.decks[WHITE]] == ["W09"]
    assert game.scores() == [-2, 0] and observation(game, 1)["seats"][0]["discards"] == 1
    rebuilt = game_from_observation(observation(game, 0))
    assert rebuilt.players[0].extra["discards"] == 1 and rebuilt.legal_actions() == game.legal_actions()
    with pytest.raises(IllegalAction, match="H1: you may discard only one of your unfinished puzzles"):
        act(game, {"type": "discard", "puzzle": "W10"})
    act(game, {"type": "take_puzzle", "color": "white", "slot": 2})  # W10, the third action
    act(game, {"type": "pass"})
    act(game, {"type": "place", "puzzle": "W10", "piece": "O1", "cells": [[1, 2]]})
    with pytest.raises(IllegalAction, match="H1: a puzzle with pieces on it cannot be discarded"):
        act(game, {"type": "discard", "puzzle": "W10"})


@pytest.mark.parametrize("seed", range(3))
def test_a_whole_game_under_the_house_rule(house_rule, seed):
    game = Game.new(RuleSpec.make(["discard"]), 3, seed)
    pieces, cards = expected_piece_totals(game), sorted(card_places(game))
    rng = random.Random(seed)
    discards = 0
    while not game.is_over:
        options = [a for a in game.legal_actions() if type(a) is Discard]
        action = rng.choice(options) if options and rng.random() < 0.1 else choose(game, rng, 0.9, 0.0)
        discards += type(action) is Discard
        game.apply(action)
        if not game.is_over:
            assert piece_totals(game) == pieces
        assert sorted(card_places(game)) == cards
    assert discards > 0
    result = game.result()
    for seat, p in enumerate(game.players):
        points = sum(game.rules.points[c] for c in p.completed)
        assert result["scores"][seat] == points - p.finish_pieces - _discards(p)
    record = json.loads(json.dumps(make_replay(game)))
    assert any(entry.get("action", {}).get("type") == "discard" for entry in record["actions"])
    assert resimulate(record) == game
    assert Game.from_json(game.to_json()) == game
