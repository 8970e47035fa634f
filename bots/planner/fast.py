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

#: what :mod:`.fast_policy` defines, found here as before (importing the planner's search then)
_POLICY_NAMES = ("PlannerFastPolicy", "FAST_NODES", "FAST_WIDTH", "FAST_DEPTH", "FAST_WEIGHTS")


def __getattr__(name: str):
    """``PlannerFastPolicy`` and its constants, their module imported now."""
    if name in _POLICY_NAMES:
        from . import fast_policy

        return getattr(fast_policy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``planner-fast`` (its search is imported when it plays)."""
    register_policy(register, "bots.planner.fast_policy:PlannerFastPolicy", __doc__, name="planner-fast")
