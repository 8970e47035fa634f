"""``open-scores`` — every seat sees every pile and score (R10).

Under the base rules completed piles are face up, so this changes nothing there; under
``revised`` (which hides them, R9.6) it opens them again. It is configured after every
other variant so that it has the last word on visibility.
"""

from __future__ import annotations

from engine.hookspecs import hookimpl
from engine.variants import Variant

NAME = "open-scores"


@hookimpl
def arena_rules_variants(register):
    register(Variant(NAME, "every player sees every completed pile and score", priority=100))


@hookimpl
def arena_rules_configure(variant, ruleset):
    if variant == NAME:
        ruleset.scores_visible = True
