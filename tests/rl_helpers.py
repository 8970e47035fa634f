"""States from random and greedy games of every variant, for the reinforcement-learning tests."""

from __future__ import annotations

import random
from functools import lru_cache

from engine import Game, RuleSpec

from arena.rl.spaces import accepted  # noqa: F401  (whether the engine accepts an action now, tried on a copy)

#: (label, variants, players): every variant, and combinations
CONFIGS = [
    ("base", (), 2),
    ("revised", ("revised",), 3),
    ("open_scores", ("revised", "open-scores"), 2),
    ("ghost", ("ghost",), 2),
    ("solo", ("solo",), 1),
    ("revised+ghost", ("revised", "ghost"), 4),
    ("no_master", ("no-master",), 2),
]


@lru_cache(maxsize=None)
def sample_states(variants: tuple, players: int, games: int = 2, per_game: int = 8) -> tuple:
    """Copies of states met in ``games`` random and ``games`` greedy games: ``per_game``
    ordinary decisions spread over each game, and every decision of another kind
    (rewards, level-ups, finishing touches)."""
    from arena.plugins import policy

    out = []
    for kind in ("random", "greedy"):
        for seed in range(games):
            game = Game.new(RuleSpec.make(variants), players, seed)
            bots = [policy(kind) for _ in range(players)]
            rng = random.Random(seed)
            ordinary, other = [], []
            while not game.is_over:
                (ordinary if game.phase == 0 else other).append(game.clone())
                game.apply(bots[game.to_move()].choose(game, rng))
            step = max(1, len(ordinary) // per_game)
            out += ordinary[::step][:per_game] + other
    return tuple(out)
