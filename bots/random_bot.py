"""``random``: uniformly random over the legal single actions.

Decisions: a random option; the finishing touches: none. A baseline that anything should
beat, and a fuzzer for the engine.
"""

from __future__ import annotations

from .policy import Policy, register


@register
class RandomPolicy(Policy):
    name = "random"

    def choose(self, game, rng):
        return rng.choice(game.legal_actions())
