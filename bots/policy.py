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

Loading the plugins imports every module an entry point names, in every command, worker
and bot process, so a bot whose code is costly to import (numpy, a search package)
registers where its policy class lives (``"bots.learned.policy:LearnedPolicy"``): its
module is imported when the bot first plays (:class:`PolicyFactory`), not when it is
listed.
"""

from __future__ import annotations

import importlib
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


class PolicyFactory:
    """Makes the policy class named by ``where`` (``"module:Class"``), importing its module
    at the first call: a registration that imports nothing of the bot."""

    def __init__(self, where: str):
        module, _, attr = where.partition(":")
        if not module or not attr:
            raise ValueError(f"a policy's place is 'module:Class', got {where!r}")
        self.module, self.attr = module, attr

    def load(self) -> type:
        """The policy class (its module imported now, if it was not yet)."""
        return getattr(importlib.import_module(self.module), self.attr)

    def __call__(self, *args, **kwargs):
        return self.load()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"PolicyFactory({self.module}:{self.attr})"


#: the modules of the built-in bots that register a policy, as ``pyproject.toml``'s entry
#: points name them (a test holds the two together)
BUILTIN_MODULES = ("bots.greedy", "bots.random_bot", "bots.planner", "bots.planner.fast", "bots.learned", "bots.run")


def builtin_policy(name: str):
    """The policy class (or :class:`PolicyFactory`) a built-in bot module registers as
    ``name``, or None: found by calling the built-in modules' own hooks, without the plugin
    manager, so that a built-in bot's process loads no plugin (reading every installed
    package's entry points and importing every plugin took half of its start-up). A name
    is registered once among all plugins (the host refuses a second), so this is the
    policy the plugin manager would give."""
    found: dict = {}

    def register(name: str, command=None, description: str = "", policy=None) -> None:
        found[name] = policy

    for module in BUILTIN_MODULES:
        importlib.import_module(module).arena_register_bots(register=register)
        if found.get(name) is not None:
            return found[name]
    return None


def register_policy(register, policy: type[Policy] | str, doc: str | None, name: str | None = None) -> None:
    """Register a policy as a bot: its process command, description and policy.

    ``policy`` is a :class:`Policy` class (the bot ``cls.name``), or where one lives,
    ``"module:Class"``, with the bot's ``name``: that module is imported when the bot first
    plays (:class:`PolicyFactory`)."""
    if isinstance(policy, str):
        if not name:
            raise ValueError(f"register_policy({policy!r}): a policy given by its place needs the bot's name")
        policy = PolicyFactory(policy)
    else:
        name = name or policy.name
    register(name=name, command=process_command(name), description=summary(doc), policy=policy)
