"""The afterstate features of the ``learned`` bot: what a position is made of, for one seat.

A candidate action is judged by the position it leads to (its *afterstate*). That position
is described by the terms of the planner's evaluation (:mod:`bots.planner.evaluate`),
kept apart instead of summed with hand-set weights, plus the kind of action that led to
it; the bot's score of a position is a learned weighted sum of them
(:mod:`bots.learned.model`).

Each unfinished puzzle is planned as the planner plans it (most advanced first, sharing
the supply; a puzzle the supply completes now, else the cheapest multiset of pieces that
tiles it), and the plan's parts are counted by kind: the points it brings, the cells it
gives back (reward, pieces), the actions it needs, what an abandoned puzzle costs, the
cells left over. The planner's own constants decide which plans are pursued; how much
each part is worth is what is learned.
"""

from __future__ import annotations

from engine.actions import FINISH, OVER, Master, Pass, Place, TakePiece, TakePuzzle, Upgrade

from bots.planner.evaluate import _solo_term, pursuits, puzzle_samples, ready_plans, usable_cap

#: names of the features, in order (the weights file stores them and is checked against them)
NAMES = (
    "completed",        # points of completed puzzles minus finishing-touch costs paid
    "turns_left",       # own turns the game still lasts (estimated before the end is triggered)
    "stalled_turns",    # the same, when the last two rounds were all waiting actions
    "solo",             # solo: the automaton's pile and the columns left open to it
    "plan_points",      # points of the puzzles a plan completes in time (weighted by trust)
    "plan_reward",      # reward cells those puzzles bring, times the cell factor
    "plan_cells",       # cells placed and pieces allotted to them, given back on completion
    "plan_actions",     # actions those plans still need
    "abandon_points",   # what the puzzles no plan completes cost (penalty, hoard, touches)
    "abandon_cells",    # cells allotted to them
    "left_cells",       # supply cells no plan uses, times the cell factor
    "excess_cells",     # cells beyond what the puzzles left to take can use, times the factor
    "unfinished",       # unfinished puzzles held
    "actions_left",     # actions left in this turn after the candidate
    "is_pass", "is_take_piece", "is_upgrade", "is_take_puzzle", "is_place", "is_master", "is_other",
)
SIZE = len(NAMES)
_KINDS = {Pass: 14, TakePiece: 15, Upgrade: 16, TakePuzzle: 17, Place: 18, Master: 19}


def features(game, ctx, action=None) -> list:
    """The features of ``game`` (an afterstate) for ``ctx.me``, a list in the order of
    :data:`NAMES`; ``action`` the candidate that led to it (its kind is a feature; None
    for none). ``ctx`` is a :class:`bots.planner.evaluate.Context` of the decision."""
    w = ctx.w
    p = game.players[ctx.me]
    f = [0.0] * SIZE
    turns = ctx.turns_after(game)
    actions = turns * ctx.apt
    if game.seat == ctx.me and game.round == ctx.round0 and game.phase not in (FINISH, OVER):
        actions += game.actions_left
        f[13] = game.actions_left
    e = min(1.0, turns / w.decay_turns)
    f[0] = sum(ctx.points[c] for c in p.completed) - p.finish_pieces * ctx.ft_cost
    tt = min(turns, w.tempo_turns)
    f[1] = tt
    f[2] = tt if getattr(ctx, "stalled", False) else 0.0
    f[3] = _solo_term(game, ctx, turns)
    f[12] = len(p.unfinished)
    if action is not None:
        f[_KINDS.get(type(action), 20)] = 1.0
    puzzles = [(pz.card, pz.filled) for pz in p.unfinished]
    cap = usable_cap(game, ctx)
    trials = puzzle_samples(puzzles, ctx)
    total = [0.0] * 8
    for trial in trials:
        total = [a + b for a, b in zip(total, _planned(trial, p.supply, actions, e, ctx, cap))]
    f[4:12] = [x / len(trials) for x in total]
    return f


def _planned(puzzles, supply, actions, e, ctx, cap) -> list:
    key = ("features", tuple(puzzles), tuple(supply), actions, e, cap)
    memo = ctx.plans
    value = memo.get(key)
    if value is None:
        value = memo[key] = _plan(puzzles, supply, actions, e, ctx, cap)
    return value


def _plan(puzzles, supply, actions, e, ctx, cap) -> list:
    """The plan's parts (features 4-11) of the unfinished ``puzzles`` and the ``supply``;
    which plans are pursued is decided as :func:`bots.planner.evaluate._plan` decides."""
    points = ctx.points
    ef = ctx.w.cell * e
    ready, share, left = ready_plans(puzzles, list(supply), ctx)
    out = [0.0] * 8
    cells = 0.0
    for card, placed_cells, alloc, need, fail, done, _, _, pursued in pursuits(ready, share, actions, ef, ctx):
        if pursued:
            out[0] += done * points[card]
            out[1] += done * ctx.reward_cells[card] * e
            out[2] += done * (placed_cells + alloc) * e
            out[3] += done * need
            out[4] += (1 - done) * fail
            out[5] += (1 - done) * alloc * e
            cells += done * (ctx.reward_cells[card] + placed_cells + alloc) + (1 - done) * alloc
        else:
            out[4] += fail
            out[5] += alloc * e
            cells += alloc
    left_cells = sum(n * lv for n, lv in zip(left, ctx.levels))
    out[6] = left_cells * e
    if cap is not None and cells + left_cells > cap:
        out[7] = (cells + left_cells - cap) * e
    return out
