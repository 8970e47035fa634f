"""``learned``: a learned afterstate evaluation — each candidate action is judged by the
position it leads to, scored by weights fitted to the choices of ``planner-fast``.

How it plays
------------
Every candidate action of the turn (the planner's candidates: takes, upgrades and
exchanges, the level-1 take, placements that follow a puzzle's plan, master actions built
from those plans, variant actions, pass; every option of a decision) is simulated on a
copy of the game whose hidden decks are shuffled (it reads only what its seat sees), and
the position it leads to is described by 21 features (:mod:`bots.learned.features`: the
terms of the planner's evaluation kept apart — completed points, turns left, the points,
cells and actions of the plans of its unfinished puzzles, abandoned puzzles, spare cells —
and the kind of action). The bot plays the candidate whose features score highest under
learned weights (:mod:`bots.learned.model`, ``weights.npz``, 21 numbers); inference is a
dot product in numpy, no torch. The finishing touches (R6) are the planner's exhaustive
choice, not learned.

How it was trained
------------------
Imitation (``python -m bots.learned.train``; ``docs/learning.md`` section 12 has the
command, its seed, compute and learning curve): 100 games of ``planner-fast`` against
``greedy`` are recorded, every decision of ``planner-fast``'s seat labelled with the
candidate it chose, and the weights fitted by a softmax (cross-entropy) ranking loss over
each decision's candidates, from zero: all it knows of good play comes from the labels.
``--dagger K`` adds rounds in which the bot itself plays and ``planner-fast`` labels the
positions it reaches (it did not help: the shipped weights have none). It won 186 of 200
games against ``greedy`` under the revised rules, and 72% of the points against
``planner-fast`` itself.

Time per decision is that of ``planner-fast`` or less (one simulated position per
candidate, never more than ``planner-fast``'s budget of 40). Moves are reproducible: the
same game and random stream give the same move.
"""

from __future__ import annotations

from arena.hookspecs import hookimpl

from ..policy import register_policy

#: what :mod:`.policy` defines, found here as before (importing it then: it needs numpy)
_POLICY_NAMES = ("LearnedPolicy", "MAX_CANDIDATES", "candidate_features", "context")


def __getattr__(name: str):
    if name in _POLICY_NAMES:
        from . import policy

        return getattr(policy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``learned`` (its policy's module, and numpy, are imported when it plays)."""
    register_policy(register, "bots.learned.policy:LearnedPolicy", __doc__, name="learned")
