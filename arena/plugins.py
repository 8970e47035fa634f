"""The host's side of the plugin manager: bot registrations, collected and listed.

:func:`plugin_manager` is the project's one pluggy manager
(:func:`engine.variants.plugin_manager`, which loads every plugin of the ``arena``
entry-point group, built-in or installed) with the host's hook specifications
(:mod:`arena.hookspecs`) added. :func:`bots` calls ``arena_register_bots`` once and
validates every registration in one place; :func:`policy` makes an in-process policy of a
bot that registered one (the built-in bots do).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

import pluggy

from . import hookspecs
from .errors import ArenaError, UsageError

class BotRegistrationError(ArenaError):
    """A plugin registered a malformed or duplicate bot."""


class UnknownBot(UsageError):
    """A bot name that no plugin registered."""


@dataclass(frozen=True)
class BotEntry:
    """A registered bot: name, argv of its process, one-line description, its plugin, and
    (optionally) a factory of an in-process policy, for play without processes."""

    name: str
    command: tuple[str, ...]
    description: str
    plugin: str
    policy: Callable[[], Any] | None = None

    def to_json(self) -> dict:
        """Plain data for ``arena bots --json``."""
        return {"name": self.name, "command": list(self.command), "description": self.description,
                "plugin": self.plugin, "inprocess": self.policy is not None}


_PM: pluggy.PluginManager | None = None
_BOTS: dict[str, BotEntry] | None = None
_LOCK = threading.RLock()  # the threads of a Dask worker may ask at once


def plugin_manager() -> pluggy.PluginManager:
    """The project's plugin manager, with the host's hook specifications added."""
    global _PM
    if _PM is not None:
        return _PM
    with _LOCK:
        if _PM is None:
            from engine.variants import plugin_manager as engine_pm
            pm = engine_pm()
            pm.add_hookspecs(hookspecs)
            _PM = pm
        return _PM


def bots() -> dict[str, BotEntry]:
    """Every registered bot by name (hooks are called once, then cached)."""
    if _BOTS is not None:
        return _BOTS
    with _LOCK:
        return _BOTS if _BOTS is not None else _collect_bots()


def _collect_bots() -> dict[str, BotEntry]:
    global _BOTS
    pm = plugin_manager()
    found: dict[str, BotEntry] = {}
    for impl in pm.hook.arena_register_bots.get_hookimpls():
        plugin = pm.get_name(impl.plugin) or repr(impl.plugin)

        def register(name: str, command, description: str = "", policy=None, _plugin=plugin) -> None:
            if not isinstance(name, str) or not name or any(c.isspace() for c in name):
                raise BotRegistrationError(f"plugin {_plugin} registered a bot with the name {name!r}; names are one word")
            if isinstance(command, str) or not command or not all(isinstance(a, str) for a in command):
                raise BotRegistrationError(f"plugin {_plugin} registered bot {name!r} with command {command!r}; give a list of strings")
            if name in found:
                raise BotRegistrationError(f"bot {name!r} is registered twice ({found[name].plugin} and {_plugin})")
            if policy is not None and not callable(policy):
                raise BotRegistrationError(f"plugin {_plugin} registered bot {name!r} with policy {policy!r}; "
                                           f"give a class or a function that makes a policy")
            found[name] = BotEntry(name, tuple(command), str(description), _plugin, policy)

        impl.function(register=register)
    _BOTS = found
    return found


def bot_command(name: str) -> list[str]:
    """The argv of the registered bot ``name``; :class:`UnknownBot` names the known ones."""
    known = bots()
    if name not in known:
        raise UnknownBot(f"unknown bot {name!r} (registered bots: {', '.join(sorted(known)) or 'none'}; "
                         f"or give a command with --cmd)")
    return list(known[name].command)


def policy_names() -> list[str]:
    """The bots that can also play in-process (they registered a policy), sorted."""
    return sorted(name for name, entry in bots().items() if entry.policy is not None)


def policy(name: str):
    """A new in-process policy of the bot ``name``.

    Raises :class:`KeyError` with a sentence naming the bots that have one.
    """
    entry = bots().get(name)
    if entry is None or entry.policy is None:
        raise KeyError(f"no built-in policy named {name!r} (known: {', '.join(policy_names())})")
    return entry.policy()
