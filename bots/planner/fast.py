"""``planner-fast``: the planner on a fixed budget of positions per decision, with
reproducible moves; the bot for experiments.

It is :class:`bots.planner.PlannerPolicy` with ``nodes=40, max_width=1, max_depth=1``:
every candidate action of the turn (the master actions, the placements its plans want,
variant actions such as a ghost, the takes, level-ups and exchanges; rarely more than 40)
is simulated and judged by the planner's evaluation, and decisions (a reward, a level-up)
are judged the same way. Its evaluation counts the turns the game still lasts a little
dearer than the clocked planner's, and dearer with more rivals (``tempo=2.5``,
``tempo_seats=1.25``): without a look ahead in the turn it otherwise lets 4-seat games
drag on; and its capital counts only the pieces it has actions left to place
(``usable=1``), so two copies never sit on big supplies passing until the round limit. It never reads the clock, so the same deal, seed and budget give the same moves
on any machine under any load: an experiment played with it replays move for move.
``docs/bots.md`` has its measured strength and speed and the commands that reproduce them.
"""

from __future__ import annotations

from arena.hookspecs import hookimpl

from ..policy import register_policy
from . import PlannerPolicy, Weights

#: positions per decision, widest beam and depth of ``planner-fast``
FAST_NODES = 40
FAST_WIDTH = 1
FAST_DEPTH = 1
#: its evaluation constants that differ from :class:`Weights`' defaults
FAST_WEIGHTS = {"tempo": 2.5, "tempo_seats": 1.25, "usable": 0.5, "stall_tempo": 8.0}


class PlannerFastPolicy(PlannerPolicy):
    """The planner with a deterministic budget of :data:`FAST_NODES` positions per decision."""

    name = "planner-fast"

    def __init__(self, nodes: int = FAST_NODES, weights: Weights | None = None, max_width: int = FAST_WIDTH,
                 max_depth: int = FAST_DEPTH):
        super().__init__(weights=weights or Weights(**FAST_WEIGHTS), nodes=nodes, max_width=max_width,
                         max_depth=max_depth)


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``planner-fast``."""
    register_policy(register, PlannerFastPolicy, __doc__)
