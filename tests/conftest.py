"""Shared fixtures."""

from __future__ import annotations

import random

import pytest

from engine import Game, RuleSpec


@pytest.fixture
def new_game():
    """``new_game(players=2, seed=0, rules=None, deal=None, **params)`` -> Game."""

    def make(players=2, seed=0, variants=(), deal=None, **params):
        return Game.new(RuleSpec.make(variants, params), players, seed, deal)

    return make


def play_out(game, policies, seed=0, limit=100_000):
    """Play ``game`` to the end with in-process ``policies`` (one per seat)."""
    rng = random.Random(seed)
    for _ in range(limit):
        if game.is_over:
            return game
        s = game.to_move()
        game.apply(policies[s].choose(game, rng))
    raise AssertionError("game did not end")
