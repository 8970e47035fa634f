"""R10 variant ``open-scores`` against R9.6's hidden piles: who sees whose completed puzzles
and score, in every variant order, in every phase."""

from __future__ import annotations

import random

import pytest

from arena.plugins import policy
from conftest import FIVE_BLACKS, SMALL_WHITES
from engine import Game, RuleSpec, observation
from engine.observation import game_from_observation
from variant_helpers import act, new


def one_completed(variants, players=2):
    """Seat 0 has completed W09 (1 point)."""
    game = new(variants, players, white=SMALL_WHITES, black=FIVE_BLACKS)
    act(game, {"type": "take_puzzle", "color": "white", "slot": 0})
    act(game, {"type": "place", "puzzle": "W09", "piece": "I2", "cells": [[2, 2], [3, 2]]})
    return game


@pytest.mark.parametrize("variants, hidden", [
    ((), False),
    (("revised",), True),
    (("open-scores",), False),
    (("revised", "open-scores"), False),
    (("open-scores", "revised"), False),
    (("revised", "ghost"), True),
    (("ghost", "open-scores", "revised", "no-master"), False),
])
@pytest.mark.parametrize("players", [2, 4])
def test_R9_6_R10_others_completed_piles_and_scores(variants, hidden, players):
    game = one_completed(variants, players)
    assert game.rules.scores_visible is not hidden
    mine = observation(game, 0)["seats"][0]
    assert mine["completed"] == ["W09"] and mine["score"] == 1
    for viewer in range(1, players):
        theirs = observation(game, viewer)["seats"][0]
        assert theirs["completed_count"] == 1
        if hidden:
            assert "completed" not in theirs and "score" not in theirs
        else:
            assert theirs["completed"] == ["W09"] and theirs["score"] == 1


@pytest.mark.parametrize("variants", [("revised",), ("revised", "open-scores")])
def test_R10_visibility_holds_in_every_phase(variants):
    game = Game.new(RuleSpec.make(list(variants)), 2, 3)
    rng = random.Random(3)
    phases = set()
    while True:
        shown = "open-scores" in variants or game.is_over  # piles are turned up at the end
        for viewer in range(2):
            other = observation(game, viewer)["seats"][1 - viewer]
            assert ("score" in other) == shown
            assert ("completed" in other) == shown
        phases.add(game.phase_name)
        if game.is_over:
            break
        game.apply(policy("greedy").choose(game, rng))
    assert {"action", "finish", "over"} <= phases


@pytest.mark.parametrize("variants, seen", [(("revised",), []), (("revised", "open-scores"), ["W09"])])
def test_R10_a_rebuilt_game_knows_only_what_the_seat_saw(variants, seen):
    game = one_completed(variants)
    rebuilt = game_from_observation(observation(game, 1))
    assert [rebuilt.rules.puzzles[c].id for c in rebuilt.players[0].completed] == seen
    assert rebuilt.legal_actions() == game.legal_actions()


def test_R10_open_scores_in_solo_shows_the_players_own_pile():
    game = new(("solo", "open-scores"), 1)
    obs = observation(game, 0)
    assert obs["seats"][0]["completed"] == [] and obs["seats"][0]["score"] == 0
    assert obs["solo"]["automaton_pile"] == [] and obs["solo"]["automaton_score"] == 0
