"""The planner's evaluation: a position's worth to one seat, in points.

``value = completed points + Σ planned puzzles + capital``:

- **Capital**: every cell of the supply is worth ``cell`` points while the game has more
  than ``decay_turns`` turns to go, falling to 0 at the end (pieces are the engine: a cell
  is reused puzzle after puzzle, but only while there is time to use it).
- **Planned puzzles**: the unfinished puzzles are planned in turn (most advanced first),
  sharing the supply: a puzzle the remaining supply completes now needs one place action
  per piece of its tiling; any other needs the actions to acquire the cheapest multiset
  that tiles it (:meth:`PuzzleSolver.cheapest`) and then the place actions. Each action
  costs ``action`` points (what an action earns elsewhere). A plan that fits into the
  actions left in the game earns the puzzle's points, its reward (as capital) and its
  pieces back; one that does not is worth what the finishing touches can still make of it
  (R6), and under rules with unfinished-puzzle penalties (R9.5, R12.5) it costs them
  (elsewhere a share of them, ``hoard``: a hopeless puzzle still blocks a slot).
- **Tempo**: every own turn the game still lasts is a turn the others score in too, so
  it costs ``tempo`` points. This is what makes the planner take the black puzzles that
  bring the end closer while it leads, instead of drawing the game out.
- **Solo**: the automaton's pile counts against the player (R12.5).

The horizon (own turns left) is exact once the end is triggered (R5.2) and estimated from
the black deck and the rate at which it has been taken before.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.actions import BLACK, FINISH, OVER


@dataclass(frozen=True)
class Weights:
    """Tunable constants of the evaluation (points)."""

    action: float = 0.7       # what one action is worth
    cell: float = 0.45        # a supply cell while the game is young
    decay_turns: float = 5.0  # capital loses its value over the last turns
    unsure: float = 0.75      # trust in a plan that still has to buy pieces
    master: float = 0.5       # share of place actions the master action saves on parallel plans
    black_rate: float = 0.8   # prior black takes per round (2 seats), scaled by seats
    solo_rate: float = 2.2    # solo: cards dealt from the deck per round
    tempo: float = 2.0        # points the best opponent makes per own turn left ...
    solo_tempo: float = 0.0   # the automaton's pace is its own: no hurry in solo
    tempo_turns: float = 99.0  # ... counted over at most this many turns
    hoard: float = 0.6        # share of its points a hopeless puzzle costs without a penalty rule
    samples: int = 6          # unseen cards averaged over to value a card first seen in search


class Context:
    """Per-decision facts: who plans, when the turn started, and the rule constants."""

    def __init__(self, game, me, solver, weights: Weights, solo: bool = False, unseen=(), rng=None):
        rs = game.rules
        self.is_black = rs.is_black
        self.unseen = frozenset(unseen)
        pools = [sorted(c for c in self.unseen if rs.is_black[c] == bool(color)) for color in (0, 1)]
        for pool in pools:
            if rng is not None:
                rng.shuffle(pool)
        k = weights.samples
        self.samples = [(pool or pools[0] or pools[1] or [0])[:k] for pool in pools]
        k = min(len(x) for x in self.samples)
        self.samples = [x[:k] for x in self.samples]
        self.me = me
        self.solver = solver
        self.w = weights
        self.round0 = game.round
        self.apt = rs.actions_per_turn
        self.ft_cost = rs.finishing_touch_cost
        self.penalty = bool(rs.score_penalties)
        self.points = rs.points
        self.recess = rs.recess
        self.levels = rs.shape_level
        self.reward_cells = [rs.shape_level[s] if s >= 0 else _level_up_cells(p.reward)
                             for s, p in zip(rs.reward_shape, rs.puzzles)]
        self.shape_of = rs.geometry.placement_shape
        self.solo = solo
        self.master = rs.master_enabled
        initial = rs.params.get("black_deck_size", 12)
        taken = max(0, initial - rs.row_size - len(game.decks[BLACK]))
        prior = weights.black_rate * game.n / 2
        self.rate = max(0.3, (taken + prior * 3) / (max(0, game.round - 1) + 3))
        if solo:
            self.rate = weights.solo_rate  # the player's grid takes plus the automaton's

    def turns_after(self, game) -> float:
        """Own turns left after the turn being planned."""
        if game.phase in (FINISH, OVER):
            return 0.0
        if game.end_triggered:
            return max(0, game.final_round - self.round0)
        if self.solo:
            deck = sum(len(d) for d in game.decks)
            return deck / self.rate + 1
        return len(game.decks[BLACK]) / self.rate + 1


def _level_up_cells(reward: str) -> int:
    return {"+1": 1, "+2": 2}.get(reward, 0)


def evaluate(game, ctx: Context) -> float:
    """Worth of ``game`` to ``ctx.me`` (see the module docstring)."""
    w = ctx.w
    p = game.players[ctx.me]
    points = ctx.points
    turns = ctx.turns_after(game)
    actions = turns * ctx.apt
    if game.seat == ctx.me and game.round == ctx.round0 and game.phase not in (FINISH, OVER):
        actions += game.actions_left
    ef = w.cell * min(1.0, turns / w.decay_turns)
    value = sum(points[c] for c in p.completed) - p.finish_pieces * ctx.ft_cost
    value += _solo_term(game, ctx)
    # the others (or the automaton) score in every turn the game lasts: without this the
    # planner would never end a game it is winning, and it lets long plans drag on
    value -= (w.solo_tempo if ctx.solo else w.tempo) * min(turns, w.tempo_turns)
    puzzles = [(pz.card, pz.filled) for pz in p.unfinished]
    hidden = [i for i, (card, _) in enumerate(puzzles) if card in ctx.unseen]
    if not hidden:
        return value + _plan(puzzles, p.supply, actions, ef, ctx)
    # a card first seen in the search (a blind take, a refilled slot) is a sample of the
    # unseen cards: value it as their average, not as the lucky or unlucky sample
    total = 0.0
    samples = ctx.samples
    for k in range(len(samples[0])):
        trial = puzzles[:]
        for i in hidden:
            card = trial[i][0]
            trial[i] = (samples[1 if ctx.is_black[card] else 0][k], 0)
        total += _plan(trial, p.supply, actions, ef, ctx)
    return value + total / len(samples[0])


def _plan(puzzles, supply, actions, ef, ctx) -> float:
    """Worth of the unfinished ``puzzles`` ((card, filled) pairs) and the ``supply``."""
    w = ctx.w
    points = ctx.points
    recess = ctx.recess
    levels = ctx.levels
    value = 0.0
    left = supply[:]
    solver = ctx.solver
    shape_of = ctx.shape_of
    plans = []
    for card, filled in puzzles:
        empty = recess[card] & ~filled
        plans.append((bin(empty).count("1"), -points[card], card, filled, empty))
    plans.sort(key=lambda t: (t[0], t[1]))
    # puzzles the supply completes now are served first, then the rest are priced
    ready = []
    later = []
    for item in plans:
        sol = solver.complete(item[4], left)
        if sol is not None:
            for pid in sol:
                left[shape_of[pid]] -= 1
            ready.append((item, len(sol), item[0], 1.0))
        else:
            later.append(item)
    for item in later:
        acq, ms, rest = solver.cheapest(item[4], left)
        if ms is None:
            ready.append((item, 99, 0, 0.0))
            continue
        alloc = sum((a - b) * lv for a, b, lv in zip(left, rest, levels))
        left = rest
        ready.append((item, acq + sum(ms), alloc, w.unsure))
    # the master action places on several puzzles at once: parallel plans cost less
    feasible = sum(1 for r in ready if r[3] == 1.0)
    share = 1.0 - w.master * (feasible - 1) / feasible if feasible > 1 and ctx.master else 1.0
    used = 0.0
    for (cells, _, card, filled, empty), need, alloc, trust in ready:
        placed_cells = bin(filled).count("1")
        # unfinished puzzles cost their points under some rules (R9.5, R12.5); elsewhere a
        # hopeless puzzle still blocks a slot, and holding it must not pay for itself
        fail = -points[card] * (1.0 if ctx.penalty else w.hoard)
        if trust == 1.0:
            # the finishing touches can still complete it, one point per piece
            fail = max(fail, points[card] - need * ctx.ft_cost)
            need *= share
        abandon = fail + alloc * ef
        gain = points[card] + ctx.reward_cells[card] * ef + (placed_cells + alloc) * ef - w.action * need
        if used + need <= actions:
            done = trust
        elif used < actions:
            done = trust * (actions - used) / need
        else:
            done = 0.0
        pursue = done * gain + (1 - done) * abandon
        if pursue > abandon:
            used += need
            value += pursue
        else:
            value += abandon
    value += sum(n * lv for n, lv in zip(left, levels)) * ef
    return value


def _solo_term(game, ctx) -> float:
    if not ctx.solo:
        return 0.0
    # solo is won against the automaton's pile (R12.5): what it takes counts against
    return -sum(ctx.points[c] for c in game.extra.get("automaton_pile", ()))
