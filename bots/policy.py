"""The policy interface shared by the built-in bots.

A policy sees the game through the engine's :class:`~engine.game.Game` (the player to move
is ``game.to_move()``) and returns one action or decision. It must not mutate the game.
How the policy is called — in-process by the bench, or behind the JSON protocol — is not
its business.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod


class Policy(ABC):
    """Base class: ``choose(game, rng)`` returns a legal action for the player to move."""

    name = "policy"

    @abstractmethod
    def choose(self, game, rng: random.Random):
        """The action or decision for ``game.to_move()``, in any phase."""


_REGISTRY: dict[str, type[Policy]] = {}


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator: make ``cls`` available by its ``name``."""
    _REGISTRY[cls.name] = cls
    return cls


def policy(name: str) -> Policy:
    """A new instance of the built-in policy ``name``."""
    from . import greedy, planner, random_bot  # noqa: F401  (registration)
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise KeyError(f"no built-in policy named {name!r} (known: {', '.join(sorted(_REGISTRY))})") from None


def names() -> list[str]:
    from . import greedy, planner, random_bot  # noqa: F401
    return sorted(_REGISTRY)
