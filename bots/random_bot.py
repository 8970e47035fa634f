"""``random``: uniformly random over the legal single actions.

Decisions: a random option; the finishing touches: none. A baseline that anything should
beat, and a fuzzer for the engine.
"""

from __future__ import annotations

from arena.hookspecs import hookimpl

from .policy import Policy, register_policy


class RandomPolicy(Policy):
    name = "random"

    def choose(self, game, rng):
        return rng.choice(game.legal_actions())


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``random``."""
    register_policy(register, RandomPolicy, __doc__)
