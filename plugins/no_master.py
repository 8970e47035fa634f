"""``no-master`` — a house rule: there is no master action.

An example of a variant written only against the public rule hooks, without touching the
engine: it removes the master action's handler and JSON form, so it is neither listed nor
accepted (``{"type": "master"}`` is an unknown action type under these rules). Copy it
to start a house rule of your own; see ``docs/writing-a-variant.md``.
"""

from __future__ import annotations

from engine.actions import Master
from engine.hookspecs import hookimpl
from engine.variants import Variant

NAME = "no-master"


@hookimpl
def arena_rules_variants(register):
    register(Variant(NAME, "house rule: the master action is not available"))


@hookimpl
def arena_rules_configure(variant, ruleset):
    if variant != NAME:
        return
    ruleset.handlers.pop(Master, None)
    ruleset.decoders.pop("master", None)
    ruleset.master_enabled = False
