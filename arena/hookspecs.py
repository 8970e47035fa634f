"""The host's hooks: how plugins add bots to the arena. Every hook is called by keyword.

The rule hooks (``arena_rules_*``) are the engine's, in :mod:`engine.hookspecs`; these are
added to the same plugin manager (:func:`arena.plugins.plugin_manager`). Built-in bots
(:mod:`bots.registry`) register through these hooks exactly as third-party packages do
through the ``arena`` entry-point group.

Lifecycle, in call order:

1. :func:`arena_register_bots` — once, when the bot list is first needed (``arena bots``,
   ``arena play``, the referee resolving a seat's bot name).
"""

from __future__ import annotations

from typing import Callable

import pluggy

hookspec = pluggy.HookspecMarker("arena")
hookimpl = pluggy.HookimplMarker("arena")


@hookspec
def arena_register_bots(register: Callable[..., None]) -> None:
    """Declare bots that the arena can start as processes.

    :param register: call ``register(name=..., command=[argv...], description=...)`` once
        per bot. ``name`` is what users type (``arena play NAME``); ``command`` is the
        argv of the process that speaks the protocol of ``docs/protocol.md``;
        ``description`` is one line for ``arena bots``. A name registered twice is an
        error naming both plugins.
    """
