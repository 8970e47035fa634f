"""The ``learned`` bot's policy: candidates simulated, their positions described by
features and scored by the learned weights (see :mod:`bots.learned`, its documentation).
Imported when the bot first plays, not when the plugins are loaded: it imports numpy."""

from __future__ import annotations

import gc
import random

import numpy as np

from engine.actions import ACTION, FINISH

from ..policy import Policy

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
    from bots.planner.policy import solver_for

    key = (rules.shapes, rules.upgrade_max_level)
    solver = _FORKS.get(key)
    if solver is None:
        solver = _FORKS[key] = solver_for(rules).fork()
    return solver


def context(game, rng: random.Random):
    """``(root, ctx)``: a copy of ``game`` with the hidden decks shuffled from ``rng``, and
    the planner's per-decision :class:`~bots.planner.evaluate.Context` for the seat to move."""
    from bots.planner.evaluate import Context, Weights, _stalled
    from bots.planner.fast_policy import FAST_WEIGHTS
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
