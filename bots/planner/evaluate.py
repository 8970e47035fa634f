"""The planner's evaluation: a position's worth to one seat, in points.

``value = completed points + Σ planned puzzles + capital``:

- **Capital**: every cell of the supply is worth ``cell`` points while the game has more
  than ``decay_turns`` turns to go, falling to 0 at the end (pieces are the engine: a cell
  is reused puzzle after puzzle, but only while there is time to use it). With ``usable``
  the capital (plans' pieces and rewards included) counts at most that share of a fair
  share of the cells of the cards left in the rows and decks: a supply no puzzle left can
  use is worth nothing, so it never makes ending the game look like a loss.
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
- **Solo**: the automaton's pile counts against the player (R12.5), and so do the
  columns it will be free to choose from (``solo_exposure``): lock pieces leave the game
  only when it finds every column locked (R12.3); with three or more in play the player
  can keep it to one open column a turn, with fewer it picks among more puzzles for the
  rest of the game. A turn it skips is a free turn for the player, but one that costs the
  last locks costs more than it gives.

With ``stall_tempo``, once two whole rounds have passed with only waiting actions (pass,
upgrade, level-1 take, recycle), each turn left costs that much instead: two copies of the
planner otherwise can sit on their supplies, each finding nothing better than waiting.

The horizon (own turns left) is exact once the end is triggered (R5.2) and estimated from
the black deck and the rate at which it has been taken before.
"""

from __future__ import annotations

import copy
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
    tempo_seats: float = 0.0  # ... plus this much per seat beyond two (more rivals, more points)
    solo_tempo: float = 0.0   # the automaton's pace is its own: no hurry in solo
    tempo_turns: float = 99.0  # ... counted over at most this many turns
    hoard: float = 0.6        # share of its points a hopeless puzzle costs without a penalty rule
    samples: int = 6          # unseen cards averaged over to value a card first seen in search
    usable: float = 0.0       # if > 0: capital counts at most this share of the cells left to take
    stall_tempo: float = 0.0  # if > 0: the tempo once two rounds pass without a puzzle taken or filled
    solo_exposure: float = 3.0  # solo: points per column the lock pieces leave open to the automaton


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
        # _plan's answers, by its arguments: most positions a search meets share their
        # owner's puzzles and supply with another (the automaton's reply, a refill, the
        # order of two actions change neither), so three in four plans are asked again
        self.plans: dict = {}
        self.tempo = weights.solo_tempo if solo else weights.tempo + weights.tempo_seats * max(0, game.n - 2)
        if weights.stall_tempo and not solo and _stalled(game):
            # nobody scores while everyone waits: the game is worth ending
            self.tempo = max(self.tempo, weights.stall_tempo)
        self.card_cells = [bin(m).count("1") for m in rs.recess]
        self.master = rs.master_enabled
        initial = rs.params.get("black_deck_size", 12)
        taken = max(0, initial - rs.row_size - len(game.decks[BLACK]))
        prior = weights.black_rate * game.n / 2
        self.rate = max(0.3, (taken + prior * 3) / (max(0, game.round - 1) + 3))
        if solo:
            self.rate = weights.solo_rate  # the player's grid takes plus the automaton's

    def at(self, game) -> "Context":
        """The same facts for planning the turn that starts in ``game``."""
        other = copy.copy(self)
        other.round0 = game.round
        return other

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


_WAITING = ("Pass", "Upgrade", "TakePiece", "Recycle")


def _stalled(game) -> bool:
    """Have the last two rounds' actions all been waiting ones (pass, upgrade, a level-1
    take, a recycle): no puzzle taken, filled or completed?"""
    k = 2 * game.n * game.rules.actions_per_turn
    recent = game.history[-k:]
    return len(recent) == k and all(a is not None and type(a).__name__ in _WAITING for _, a in recent)


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
    value += _solo_term(game, ctx, turns)
    # the others (or the automaton) score in every turn the game lasts: without this the
    # planner would never end a game it is winning, and it lets long plans drag on
    value -= ctx.tempo * min(turns, w.tempo_turns)
    puzzles = [(pz.card, pz.filled) for pz in p.unfinished]
    cap = usable_cap(game, ctx)
    trials = puzzle_samples(puzzles, ctx)
    return value + sum(_planned(t, p.supply, actions, ef, ctx, cap) for t in trials) / len(trials)


def usable_cap(game, ctx) -> float | None:
    """How many capital cells the supply can still use, or None without that weight:
    pieces are worth something only while puzzles are left to fill with them, a share of
    the cells of the cards still in the rows and decks (own puzzles are not counted, so
    completing one never shrinks what the supply is worth)."""
    w = ctx.w
    if w.usable <= 0:
        return None
    cc = ctx.card_cells
    cap = sum(cc[c] for row in game.rows for c in row if c >= 0) + sum(cc[c] for d in game.decks for c in d)
    return w.usable * cap / game.n


def puzzle_samples(puzzles, ctx) -> list[list]:
    """The unfinished ``puzzles`` as the plans see them: themselves, or, where a card first
    seen in the search (a blind take, a refilled slot) is among them, one list per sample
    of the unseen cards, to be averaged over (not valued as the lucky or unlucky sample)."""
    hidden = [i for i, (card, _) in enumerate(puzzles) if card in ctx.unseen]
    if not hidden:
        return [puzzles]
    samples = ctx.samples
    trials = []
    for k in range(len(samples[0])):
        trial = puzzles[:]
        for i in hidden:
            card = trial[i][0]
            trial[i] = (samples[1 if ctx.is_black[card] else 0][k], 0)
        trials.append(trial)
    return trials


def _planned(puzzles, supply, actions, ef, ctx, cap) -> float:
    """:func:`_plan`, remembered per decision (its answer depends on its arguments and
    the rules only)."""
    key = (tuple(puzzles), tuple(supply), actions, ef, cap)
    memo = ctx.plans
    value = memo.get(key)
    if value is None:
        value = memo[key] = _plan(puzzles, supply, actions, ef, ctx, cap)
    return value


def ready_plans(puzzles, supply, ctx) -> tuple[list, float, list]:
    """Which plans are pursued, and at what cost: ``(ready, share, left)``, where each of
    ``ready`` is ``((empty cells, -points, card, filled, empty), pieces needed, capital
    allocated, trust)``: puzzles the supply completes now first (trust 1), then the rest
    priced by the cheapest acquisitions, each taking from what the earlier left; ``share``
    is what the master action saves when several plans run in parallel, and ``left`` the
    supply no plan takes."""
    w = ctx.w
    points = ctx.points
    recess = ctx.recess
    levels = ctx.levels
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
    return ready, share, left


def pursuits(ready, share, actions, ef, ctx):
    """Each plan of ``ready`` (see :func:`ready_plans`) as pursued within ``actions`` or
    abandoned: ``(card, placed cells, allocated, pieces needed, fail, done, pursue,
    abandon, pursued)``, where ``done`` is the share of the plan the actions complete and
    ``pursued`` whether pursuing is worth more than abandoning."""
    w = ctx.w
    points = ctx.points
    used = 0.0
    for (_, _, card, filled, empty), need, alloc, trust in ready:
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
        pursued = pursue > abandon
        if pursued:
            used += need
        yield card, placed_cells, alloc, need, fail, done, pursue, abandon, pursued


def _plan(puzzles, supply, actions, ef, ctx, cap=None) -> float:
    """Worth of the unfinished ``puzzles`` ((card, filled) pairs) and the ``supply``."""
    value = 0.0
    ready, share, left = ready_plans(puzzles, supply, ctx)
    cells = 0.0  # capital cells counted by the plans (pieces back, rewards, allocations)
    for card, placed_cells, alloc, _, _, done, pursue, abandon, pursued in pursuits(ready, share, actions, ef, ctx):
        if pursued:
            value += pursue
            cells += done * (ctx.reward_cells[card] + placed_cells + alloc) + (1 - done) * alloc
        else:
            value += abandon
            cells += alloc
    left_cells = sum(n * lv for n, lv in zip(left, ctx.levels))
    value += left_cells * ef
    if cap is not None and cells + left_cells > cap:
        # capital beyond what the puzzles left can use is worth nothing (Weights.usable)
        value -= (cells + left_cells - cap) * ef
    return value


def _solo_term(game, ctx, turns: float) -> float:
    if not ctx.solo:
        return 0.0
    # solo is won against the automaton's pile (R12.5): what it takes counts against
    extra = game.extra
    value = -sum(ctx.points[c] for c in extra["automaton_pile"])
    if turns > 0:  # no turns left (the finishing touches, the end): no columns to choose
        # lock pieces only leave the game when the automaton finds every column locked
        # (R12.3); with 3 or more it can be kept to one open column a turn, with fewer it
        # chooses among more puzzles for the rest of the game
        locks = sum(extra["locks"]) + extra["automaton_supply"]
        value -= ctx.w.solo_exposure * _EXPOSED[min(locks, 3)] * min(1.0, turns / 4)
    return value


_EXPOSED = (3.0, 2.0, 1.5, 1.0)  # open columns a turn, on average, by lock pieces in play
