"""The policy interface shared by the built-in bots, and how a bot module registers one.

A policy sees the game through the engine's :class:`~engine.game.Game` (the player to move
is ``game.to_move()``) and returns one action or decision. It must not mutate the game.
How the policy is called — in-process by the bench, or behind the JSON protocol — is not
its business.

Each built-in bot module is a plugin of the ``arena`` entry-point group (see
``pyproject.toml``), exactly like a third-party bot package: its ``arena_register_bots``
hook registers the bot's process command and, for in-process play, its policy class.
:func:`register_policy` is that hook's body for a policy run by ``python -m bots.run``.
The host finds policies through its plugin manager (:func:`arena.plugins.policy`); this
module imports no bot.
"""

from __future__ import annotations

import random
import sys
from abc import ABC, abstractmethod


class Policy(ABC):
    """Base class: ``choose(game, rng)`` returns a legal action for the player to move."""

    name = "policy"

    @abstractmethod
    def choose(self, game, rng: random.Random):
        """The action or decision for ``game.to_move()``, in any phase."""


def summary(doc: str | None) -> str:
    """The one-line description of a bot module: its docstring's first sentence.

    A docstring opening with the bot's name (````greedy``: a one-ply player.``) gives
    what follows the name.
    """
    text = " ".join((doc or "").strip().split("\n\n", 1)[0].split())
    if text.startswith("``") and ":" in text:
        text = text.split(":", 1)[1].strip()
    return text


def process_command(name: str) -> list[str]:
    """The argv that runs the built-in policy ``name`` as a protocol bot process."""
    return [sys.executable, "-m", "bots.run", name]


def register_policy(register, cls: type[Policy], doc: str | None) -> None:
    """Register ``cls`` as the bot ``cls.name``: its process command, description and policy."""
    register(name=cls.name, command=process_command(cls.name), description=summary(doc), policy=cls)
