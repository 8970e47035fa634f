"""Rule hooks: how a variant plugin changes the game. Every hook is called by keyword.

Hooks run **once, when a ruleset is compiled** for a game (never per decision): a variant
fills the compiled :class:`~engine.rules.Ruleset`'s seams with plain callables, and the
engine's hot path calls those directly. Only the plugins of the variants a game names are
consulted (each variant is one plugin object), so an installed variant that a game does
not use cannot change it.

Lifecycle, in call order:

1. :func:`arena_rules_variants` — at plugin load: declare the variants a plugin provides.
2. :func:`arena_rules_card_sets` — at compile: extra card sets joining the card pool.
3. :func:`arena_rules_configure` — at compile: install handlers, generators, decoders,
   setup, reward, take-check (one check for every way of taking a puzzle), turn-end,
   end-check, scoring, ranking and observation seams.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("arena")
hookimpl = pluggy.HookimplMarker("arena")


@hookspec
def arena_rules_variants(register) -> None:
    """Declare variants.

    :param register: call ``register(variant)`` with an :class:`engine.variants.Variant`
        for each variant this plugin provides (name, description, parameters, defaults,
        compatibility).
    """


@hookspec
def arena_rules_card_sets(variant: str, ruleset_params: dict) -> list[str] | None:
    """Names of packaged card sets (``engine/cards/NAME.yaml``) that ``variant`` adds.

    :param variant: the variant being compiled (a plugin may provide several).
    :param ruleset_params: the validated parameters of the game.
    """


@hookspec
def arena_rules_configure(variant: str, ruleset) -> None:
    """Change the compiled ruleset for ``variant``: replace or extend its seams.

    :param variant: the variant being compiled.
    :param ruleset: the :class:`engine.rules.Ruleset`, with the base rules installed and
        the variants listed before this one already applied.
    """
