"""``planner-fast``: the planner on a fixed budget of 32 positions per decision, with
reproducible moves; the bot for experiments.

It is :class:`bots.planner.PlannerPolicy` with ``nodes=32, max_width=1``: every decision
simulates and evaluates at most 32 positions (enough for every candidate action of a
typical turn: the master actions, the placements its plans want, variant actions such as
a ghost, the takes, level-ups and exchanges) and, when the budget still allows, plays the
rest of the turn greedily before choosing. It never reads the clock, so the same deal,
seed and budget give the same moves on any machine under any load: an experiment played
with it can be replayed move for move. About 5 ms of CPU per decision on a 2020s core
(``docs/bots.md`` has the measured figures and the commands that reproduce them).
"""

from __future__ import annotations

from arena.hookspecs import hookimpl

from ..policy import register_policy
from . import PlannerPolicy, Weights

#: positions per decision and widest beam of ``planner-fast``
FAST_NODES = 32
FAST_WIDTH = 1


class PlannerFastPolicy(PlannerPolicy):
    """The planner with a deterministic budget of :data:`FAST_NODES` positions per decision."""

    name = "planner-fast"

    def __init__(self, nodes: int = FAST_NODES, weights: Weights | None = None, max_width: int = FAST_WIDTH):
        super().__init__(weights=weights, nodes=nodes, max_width=max_width)


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``planner-fast``."""
    register_policy(register, PlannerFastPolicy, __doc__)
