"""Property tests: random playouts under every variant and every compatible combination.

At every decision of a playout (half greedy, half uniformly random) the invariants below
must hold; hypothesis draws the seed, the bots' mix and the round limit:

- pieces are conserved, shape by shape: reserve, supplies, pieces on puzzles, solo's locks
  and the automaton's supply (R0, R11.1, R12.1); at the end the count includes the pieces
  locked by the finishing touches;
- cards are conserved: decks, rows, the solo grid and the automaton's pile, unfinished and
  completed puzzles, each card once;
- scores add up (R7.1 with the R9.5/R12.5 penalties);
- every listed action is accepted; an action that is accepted was listed (for the kinds
  the listing enumerates); a rejected action cites a rule and leaves the state equal;
- actions, states and observations survive JSON round trips, and a game rebuilt from the
  observation of the seat to move lists the same actions;
- the same seed and the same choices give the same game (seeded determinism).
"""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Game, IllegalAction, RuleSpec, action_from_json, action_to_json, make_replay, observation, resimulate
from engine.actions import Finish, LevelUp, Master
from engine.events import events_since
from engine.observation import game_from_observation
from plugins.ghost import Ghost
from variant_helpers import (card_places, choose, compatible_combinations, expected_piece_totals, expected_score,
                             piece_count, piece_totals)

COMBOS = compatible_combinations()


def _key(action):
    """Compare listed and accepted actions: level-up steps are listed once per order-free set."""
    if type(action) is LevelUp:
        return (LevelUp, tuple(sorted(action.steps)))
    return (type(action), action)


def _enumerated(action) -> bool:
    """Whether the listing is meant to contain ``action`` when it is legal (master
    combinations, ghost actions with placements and finishing touches are validated when
    given, not listed)."""
    if type(action) in (Master, Finish):
        return False
    return not (type(action) is Ghost and action.placements)


class Checker:
    """Checks the invariants at every decision of one playout."""

    def __init__(self, game, rng):
        self.rng = rng
        self.expected_pieces = expected_piece_totals(game)
        self.cards = sorted(card_places(game))
        self.pool: list = []
        self.steps = 0

    def __call__(self, game, action):
        self.steps += 1
        self.invariants(game)
        listed = game.legal_actions()
        keys = {_key(a) for a in listed}
        assert _key(action) in keys or not _enumerated(action)
        rules = game.rules
        assert action_from_json(rules, json.loads(json.dumps(action_to_json(rules, action)))) == action
        if self.rng.random() < 0.15:
            for a in listed:
                clone = game.clone()
                clone.apply(a)
                self.invariants(clone)
        for a in self.rng.sample(self.pool, min(3, len(self.pool))):
            self.try_foreign(game, a, keys)
        self.pool.extend(self.rng.sample(listed, min(2, len(listed))))
        del self.pool[:-60]
        if self.rng.random() < 0.1:
            self.round_trip(game)

    def invariants(self, game):
        if game.is_over:
            assert piece_count(game) == sum(self.expected_pieces)
        else:
            assert piece_totals(game) == self.expected_pieces
        assert min(piece_totals(game)) >= 0
        assert sorted(card_places(game)) == self.cards
        assert game.scores() == [expected_score(game, s) for s in range(game.n)]

    def try_foreign(self, game, action, keys):
        """An action seen in another state: rejected with a rule and no change, or accepted
        and then listed here."""
        clone = game.clone()
        before = clone.to_json()
        try:
            clone.apply(action)
        except IllegalAction as exc:
            assert re.match(r"R\d+(\.\d+)?: \S", str(exc)), str(exc)
            assert clone.to_json() == before
            assert _key(action) not in keys or not _enumerated(action), f"listed {action} was rejected: {exc}"
        else:
            assert _key(action) in keys or not _enumerated(action), f"{action} was accepted but not listed"

    @staticmethod
    def round_trip(game):
        copy = Game.from_json(json.loads(json.dumps(game.to_json())))
        assert copy == game and copy.legal_actions() == game.legal_actions()
        for seat in range(game.n):
            json.dumps(observation(game, seat))
            json.dumps(events_since(game, seat, 0)[0])
        if game.phase_name != "finish":
            rebuilt = game_from_observation(observation(game, game.to_move()))
            assert rebuilt.legal_actions() == game.legal_actions()


def run(variants, players, seed, greedy_share, max_rounds, reserve=None, difficulty="standard"):
    """One checked playout; returns the game and the number of decisions. A small
    ``reserve`` (per shape) makes stock run out: reward fallbacks, skipped levels."""
    params = {"max_rounds": max_rounds}
    if "solo" in variants:
        params["difficulty"] = difficulty
        if reserve is not None:
            reserve = max(reserve, 5 + {"standard": 6, "challenging": 3, "unbeatable": 0}[difficulty])
    if reserve is not None:
        params["reserve_per_shape"] = max(reserve, players)
        if "ghost" in variants:
            params["ghost.reserve_per_shape"] = reserve // 2
    spec = RuleSpec.make(list(variants), params)
    game = Game.new(spec, players, seed)
    assert Game.new(spec, players, seed) == game  # seeded setup
    rng = random.Random(seed)
    check = Checker(game, random.Random(seed + 1))
    for _ in range(20_000):
        if game.is_over:
            break
        action = choose(game, rng, greedy_share)
        check(game, action)
        game.apply(action)
    assert game.is_over
    check.invariants(game)
    result = game.result()
    assert sorted(result["ranking"])[0] == 1 and len(result["scores"]) == players
    if "solo" in variants:
        assert result["margin"] == result["scores"][0] - result["automaton_score"]
        assert result["won"] == (result["scores"][0] > result["automaton_score"])
    record = json.loads(json.dumps(make_replay(game)))
    assert resimulate(record) == game
    return game, check.steps


def _id(v):
    return "+".join(v) or "base" if isinstance(v, tuple) else str(v)


@pytest.mark.parametrize("variants, players", COMBOS, ids=_id)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**20), greedy_share=st.sampled_from([0.5, 0.8, 1.0]), max_rounds=st.integers(6, 20),
       reserve=st.sampled_from([None, 3, 5]), difficulty=st.sampled_from(["standard", "challenging", "unbeatable"]))
def test_playouts_conserve_pieces_and_cards_and_scores_add_up(variants, players, seed, greedy_share, max_rounds,
                                                              reserve, difficulty):
    run(variants, players, seed, greedy_share, max_rounds, reserve, difficulty)


@pytest.mark.parametrize("variants, players", [(("revised", "ghost"), 3), (("ghost", "no-master"), 4),
                                               (("revised", "open-scores"), 4), (("solo", "ghost"), 1)], ids=_id)
def test_seeded_determinism(variants, players):
    first, _ = run(variants, players, 11, 0.7, 12)
    second, _ = run(variants, players, 11, 0.7, 12)
    assert first.history == second.history and first.result() == second.result()
    assert first.to_json() == second.to_json()


@pytest.mark.slow
@pytest.mark.parametrize("variants, players", COMBOS, ids=_id)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**30), greedy_share=st.sampled_from([0.3, 0.6, 0.9]), max_rounds=st.integers(10, 40),
       reserve=st.sampled_from([None, 2, 4, 6]), difficulty=st.sampled_from(["standard", "challenging", "unbeatable"]))
def test_playouts_sweep(variants, players, seed, greedy_share, max_rounds, reserve, difficulty):
    run(variants, players, seed, greedy_share, max_rounds, reserve, difficulty)
