"""``planner-fast``'s policy (documented in :mod:`bots.planner.fast`): the planner on a
fixed budget of positions. Imported when it first plays, not when the plugins are loaded."""

from __future__ import annotations

from .evaluate import Weights
from .policy import PlannerPolicy

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
