"""The planner's policy, :class:`PlannerPolicy` (``planner``, documented in
:mod:`bots.planner`). Imported when a planner first plays, not when the plugins are loaded."""

from __future__ import annotations

import gc
import random
import time

from engine.actions import ACTION, FINISH

from ..policy import Policy
from .evaluate import Context, Weights, evaluate
from .search import (OutOfTime, TurnSearch, best_action, by_first_action, determinize, finish_touches, next_turn_value,
                     turn_ends, unseen_cards)
from .solver import PuzzleSolver

__all__ = ["PlannerPolicy", "Weights", "SAFETY", "solver_for"]

#: share of its move time the timed planner searches for; the rest is margin for the reply
SAFETY = 0.6

_SOLVERS: dict = {}
_FORKS: dict = {}  # deterministic budget: solvers whose answers depend on the question only


def solver_for(rules, deadline: float | None = None) -> PuzzleSolver:
    """One shared solver per set of shapes, warmed with every card's multisets while
    time allows (the rest are found when first needed)."""
    key = (rules.shapes, rules.upgrade_max_level)
    solver = _SOLVERS.get(key)
    if solver is None:
        solver = _SOLVERS[key] = PuzzleSolver(rules.geometry, rules.shape_level, rules.upgrade_max_level)
    if deadline is not None and getattr(solver, "warm", 0) < len(rules.recess):
        for i in range(getattr(solver, "warm", 0), len(rules.recess)):
            if time.perf_counter() > deadline:
                break
            solver.multisets(rules.recess[i])
            solver.warm = i + 1
    return solver


class PlannerPolicy(Policy):
    """The planner (see the module docstring).

    ``move_ms``: time per decision in ms (it stops at ``safety`` of it). ``nodes``: a
    deterministic budget instead: positions searched per decision (the clock is never
    read, and its puzzle solver's answers depend only on the question, not on what was
    asked before, so the same game, random stream and budget give the same moves on any
    machine and load, in any process, whatever it played before).
    ``max_width``: the widest beam the iterative widening tries (1, 3, 6, 12, ...).
    ``max_depth``: actions of the turn searched ahead (1: every candidate action is
    judged by the evaluation of the position it leads to).
    ``lookahead``: in solo, how many ends of this turn are searched one turn further
    (0: none; the budget is shared with the turn search).
    """

    name = "planner"

    def __init__(self, move_ms: float = 1000, weights: Weights | None = None, safety: float = SAFETY,
                 nodes: int | None = None, max_width: int = 48, max_depth: int = 12, lookahead: int = 12):
        if nodes is not None and int(nodes) < 1:
            raise ValueError(f"nodes must be a positive number of positions, not {nodes!r}")
        self.move_ms = move_ms
        self.weights = weights or Weights()
        self.safety = safety
        self.nodes = None if nodes is None else int(nodes)
        self.max_width = max_width
        self.max_depth = max_depth
        self.lookahead = lookahead

    def _solver(self, rules, start: float, deadline: float) -> PuzzleSolver:
        if self.nodes is None:
            solver = solver_for(rules, start + (deadline - start) / 3)
            solver.deadline = deadline
            return solver
        key = (rules.shapes, rules.upgrade_max_level)
        solver = _FORKS.get(key)
        if solver is None:
            solver = _FORKS[key] = solver_for(rules).fork()
        return solver

    def choose(self, game, rng: random.Random):
        """The action or decision for the player to move; never mutates ``game``.

        Python's cyclic garbage collector is paused while it searches: a search makes tens
        of thousands of short-lived copies that form no cycles (reference counting frees
        them), and the collector's full passes over the solver's long-lived memo took up
        to a third of a 600 ms decision. It is resumed (if it was on) before the answer
        returns."""
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._choose(game, rng)
        finally:
            if paused:
                gc.enable()

    def _choose(self, game, rng: random.Random):
        timed = self.nodes is None
        start = time.perf_counter() if timed else 0.0
        deadline = start + self.move_ms / 1000.0 * self.safety if timed else float("inf")
        me = game.to_move()
        solver = self._solver(game.rules, start, deadline)
        if game.phase == FINISH:
            return finish_touches(game, solver, deadline)
        legal = game.legal_actions()
        if len(legal) == 1:
            return legal[0]
        local = random.Random(rng.random())
        root = determinize(game, me, local)
        # an automaton's pile in the public state means a solo game (R12): play against it
        ctx = Context(root, me, solver, self.weights, solo="automaton_pile" in game.extra,
                      unseen=unseen_cards(game, me), rng=local)
        look_ahead = ctx.solo and self.lookahead > 0
        search = TurnSearch(ctx, deadline, self.nodes, keep_ends=look_ahead)
        try:
            for width in self._widths():
                search.run(root, width, self.max_depth)
                if game.phase != ACTION or not search.cut:
                    break  # a decision's options, or a beam that dropped nothing: no wider run
        except OutOfTime:
            pass
        action = search.answer()
        if look_ahead and search.complete:
            action = self._look_ahead(search, ctx, action)
        if action is None:
            action = max(legal, key=lambda a: _value_after(root, a, ctx)) if not timed or time.perf_counter() < deadline else legal[-1]
        return action

    def _widths(self):
        """The beam widths of iterative widening: 1 first (a greedy line, so a short clock
        still gets a whole turn searched), then 3, 6, 12, ... up to ``max_width``."""
        width = 1
        while True:
            yield width
            if width >= self.max_width:
                return
            width = min(self.max_width, 3 if width == 1 else width * 2)

    def _look_ahead(self, search, ctx, action):
        """Solo: weigh the best ends of this turn by the next turn too, widening while the
        budget lasts. Every end keeps the best line found for it at any width, so a sweep
        cut short still counts for the ends it reached (the most promising first); an end
        whose search dropped nothing is not searched again. Once every end has been
        searched at least once, the first action of the best two-turn line is the answer;
        before that, ``action``."""
        ends = turn_ends(search, self.lookahead)
        found: list = [None] * len(ends)
        exact = [False] * len(ends)
        try:
            for width in self._widths():
                order = sorted(range(len(ends)), key=lambda i: -(ends[i][0] if found[i] is None else found[i]))
                for i in order:
                    if exact[i]:
                        continue
                    value, exact[i] = next_turn_value(search, ctx, ends[i], width)
                    found[i] = value if found[i] is None else max(found[i], value)
                if all(exact):
                    break
        except OutOfTime:
            pass
        if not ends or None in found:
            return action
        return best_action(by_first_action(ends, found))


def _value_after(root, action, ctx) -> float:
    c = root.clone()
    try:
        c.apply(action)
    except Exception:  # noqa: BLE001 - an action the search cannot simulate is simply not preferred
        return float("-inf")
    return evaluate(c, ctx)
