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

import gc
import random

import numpy as np

from engine.actions import ACTION, FINISH

from arena.hookspecs import hookimpl

from ..policy import Policy, register_policy

#: candidates judged per decision at most (``planner-fast``'s budget of positions)
MAX_CANDIDATES = 40


class LearnedPolicy(Policy):
    """The learned afterstate policy; ``model`` a :class:`bots.learned.model.Model` or a
    path to a weights file (default: the shipped ``weights.npz``)."""

    name = "learned"
    reusable = True

    def __init__(self, model=None):
        from .model import Model

        self.model = model if isinstance(model, Model) else Model.load(*(() if model is None else (model,)))

    def choose(self, game, rng: random.Random):
        """The candidate of the highest score (see the module docstring)."""
        paused = gc.isenabled()
        gc.disable()
        try:
            if game.phase == FINISH:
                from bots.planner.search import finish_touches

                return finish_touches(game, _solver(game.rules))
            legal = game.legal_actions()
            if len(legal) == 1:
                return legal[0]
            actions, feats = candidate_features(game, rng)
            if not actions:
                return legal[-1]
            return actions[int(np.argmax(self.model.score(feats)))]
        finally:
            if paused:
                gc.enable()


_FORKS: dict = {}


def _solver(rules):
    """A puzzle solver whose answers depend on the question only (as ``planner-fast``'s)."""
    from bots.planner import solver_for

    key = (rules.shapes, rules.upgrade_max_level)
    solver = _FORKS.get(key)
    if solver is None:
        solver = _FORKS[key] = solver_for(rules).fork()
    return solver


def context(game, rng: random.Random):
    """``(root, ctx)``: a copy of ``game`` with the hidden decks shuffled from ``rng``, and
    the planner's per-decision :class:`~bots.planner.evaluate.Context` for the seat to move."""
    from bots.planner.evaluate import Context, Weights, _stalled
    from bots.planner.fast import FAST_WEIGHTS
    from bots.planner.search import determinize, unseen_cards

    me = game.to_move()
    local = random.Random(rng.random())
    root = determinize(game, me, local)
    ctx = Context(root, me, _solver(game.rules), Weights(**FAST_WEIGHTS), solo="automaton_pile" in game.extra,
                  unseen=unseen_cards(game, me), rng=local)
    ctx.stalled = _stalled(game)
    return root, ctx


def candidate_features(game, rng: random.Random):
    """``(actions, features)``: the candidates of the decision of ``game.to_move()`` (at
    most :data:`MAX_CANDIDATES`) and a row of :data:`bots.learned.features.NAMES` per
    candidate, of the position it leads to. Candidates the engine refuses are left out."""
    from engine.errors import EngineError

    from bots.planner.search import candidates

    from .features import features

    root, ctx = context(game, rng)
    options = candidates(root, ctx) if game.phase == ACTION else root.legal_actions()
    actions = []
    rows = []
    for a in options[:MAX_CANDIDATES]:
        c = root.clone()
        try:
            c.apply(a)
        except EngineError:
            continue
        actions.append(a)
        rows.append(features(c, ctx, a))
    return actions, (np.array(rows) if rows else np.zeros((0, 0)))


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``learned``."""
    register_policy(register, LearnedPolicy, __doc__)
