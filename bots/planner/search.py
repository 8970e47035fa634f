"""The planner's search: candidate actions, a beam search over the rest of the turn, the
finishing touches, and the determinization of hidden decks.

Everything is simulated on clones of a determinized copy of the game (deck contents the
seat cannot see are replaced by a random order of the cards it has not seen), so the
search never learns a hidden card.
"""

from __future__ import annotations

import itertools
import time

from engine.actions import ACTION, BLACK, FINISH, OVER, WHITE, Finish, Master, Pass, Place, TakePiece, TakePuzzle, Upgrade
from engine.errors import EngineError

from .evaluate import evaluate

_KNOWN = (TakePuzzle, TakePiece, Upgrade, Place, Master, Pass)
_OTHER_LIMIT = 16


class OutOfTime(Exception):
    """The clock or the node budget ran out in the middle of a search."""


def unseen_cards(game, seat) -> set:
    """Cards ``seat`` has not seen: not in a row, on any player's unfinished puzzles, in a
    visible completed pile, nor in public variant state (a grid, an automaton's pile)."""
    rs = game.rules
    return set(range(len(rs.puzzles))) - _seen(game, seat)


def _seen(game, seat) -> set:
    rs = game.rules
    seen = set()
    for row in game.rows:
        seen.update(x for x in row if x >= 0)
    for s, p in enumerate(game.players):
        seen.update(pz.card for pz in p.unfinished)
        if s == seat or rs.scores_visible:
            seen.update(p.completed)
    for value in game.extra.values():
        if isinstance(value, list):
            seen.update(x for x in value if isinstance(x, int) and 0 <= x < len(rs.puzzles))
    return seen


def determinize(game, seat, rng):
    """A clone of ``game`` whose decks hold a random order of the cards ``seat`` has not
    seen, of each deck's colour (same lengths). Nothing hidden is read."""
    c = game.clone()
    rs = game.rules
    seen = _seen(game, seat)
    pools = [[i for i, black in enumerate(rs.is_black) if black == bool(color) and i not in seen]
             for color in (WHITE, BLACK)]
    for pool in pools:
        rng.shuffle(pool)
    if "solo.white_cards" in rs.params:
        # one deck, whites on top (R12.1): the unseen whites still in it, then blacks
        whites_left = max(0, rs.params["solo.white_cards"] - sum(1 for i in seen if not rs.is_black[i]))
        n = len(game.decks[0])
        top = pools[WHITE][: min(whites_left, n)]
        c.decks[0] = top + pools[BLACK][: n - len(top)]
        c.decks[0] += pools[WHITE][len(top): len(top) + n - len(c.decks[0])]
        return c
    for d, deck in enumerate(game.decks):
        n = len(deck)
        pool = pools[d] if d < 2 else pools[WHITE] + pools[BLACK]
        cards = pool[:n]
        if len(cards) < n:  # hidden piles: fewer unseen cards than places; pad with any
            cards += [i for i in range(len(rs.puzzles)) if i not in cards][: n - len(cards)]
        c.decks[d] = cards
    return c


def finish_touches(game, solver, deadline: float = float("inf")) -> Finish:
    """R6: the subset and order of completions that scores the most (pieces cost points);
    orders are tried most valuable first until the ``deadline``."""
    rs = game.rules
    p = game.players[game.seat]
    cost = rs.finishing_touch_cost
    penalty = bool(rs.score_penalties)
    g = rs.geometry
    puzzles = [(pz.card, rs.recess[pz.card] & ~pz.filled) for pz in p.unfinished]
    best = (0.0, ())
    first = sorted(range(len(puzzles)), key=lambda i: -rs.points[puzzles[i][0]])
    for n, order in enumerate(itertools.chain([first], itertools.permutations(range(len(puzzles))))):
        if n and time.perf_counter() > deadline:
            break
        left = p.supply[:]
        total = 0.0
        chosen = []
        for i in order:
            card, empty = puzzles[i]
            sol = solver.complete(empty, left)
            if sol is None:
                continue
            gain = rs.points[card] * (2 if penalty else 1) - len(sol) * cost
            if gain <= 0 and not (gain == 0 and rs.points[card] > 0):
                continue
            for pid in sol:
                left[g.placement_shape[pid]] -= 1
                chosen.append(Place(card, pid))
            total += gain + 0.01  # more completed puzzles break ties (R7.2)
        if total > best[0]:
            best = (total, tuple(chosen))
    return Finish(best[1])


class TurnSearch:
    """Beam search over the actions left in the current turn of ``ctx.me``.

    It stops at the ``deadline`` (``time.perf_counter()``) or after ``nodes`` positions
    (one position = one action simulated on a clone and evaluated), whichever comes first;
    with ``deadline=inf`` and a node budget it never reads the clock, so the same position
    and budget give the same answer on any machine.
    """

    def __init__(self, ctx, deadline: float, nodes: int | None = None, keep_ends: bool = False):
        self.ctx = ctx
        self.keep_ends = keep_ends  # keep the positions that end the turn (for turn_ends)
        self.deadline = deadline
        self.timed = deadline != float("inf")
        self.nodes_left = nodes
        self.nodes = 0  # positions searched so far
        self.best: dict = {}
        self.fallback: dict = {}
        self.complete: dict = {}
        self.ends: list = []  # (value, position, first action) of the lines that ended the turn
        self.complete_ends: list = []  # ... in the last finished run

    def _check(self):
        if self.nodes_left is not None:
            if self.nodes >= self.nodes_left:
                raise OutOfTime
        self.nodes += 1
        if self.timed and time.perf_counter() > self.deadline:
            raise OutOfTime

    def terminal(self, game) -> bool:
        """Has the planned turn ended (another seat, a new round, or the end)?"""
        return game.phase in (FINISH, OVER) or game.seat != self.ctx.me or game.round != self.ctx.round0

    def run(self, root, width: int, depth: int = 12):
        """Search with beam ``width`` over at most ``depth`` actions; record the best value
        per first action (of a line that ends the turn, or is cut by ``depth``)."""
        self.best = {}
        self.ends = []
        self.cut = False  # did the beam drop a line? (if not, a wider run finds the same)
        frontier = [(0.0, root, None)]
        for step in range(depth):
            children = []
            for _, node, first in frontier:
                for a in candidates(node, self.ctx):
                    self._check()
                    c = node.clone()
                    try:
                        c.apply(a)
                    except EngineError:
                        continue
                    v = evaluate(c, self.ctx)
                    # keyed with the type: action tuples of different types compare equal
                    f = first if first is not None else (type(a), a)
                    if first is None and f not in self.fallback:
                        self.fallback[f] = v  # an answer even if time runs out
                    if self.terminal(c):
                        if self.keep_ends:
                            self.ends.append((v, c, f))
                        if v > self.best.get(f, float("-inf")):
                            self.best[f] = v
                    else:
                        children.append((v, c, f))
            if not children:
                break
            if step >= depth - 1:
                # the horizon: a line still in the turn is worth its evaluation, unless a
                # decision of its own is pending (a reward, a level-up): that is resolved
                # first, or completing a puzzle would look like losing its pieces
                pending = []
                for t in children:
                    if t[1].phase != ACTION:
                        pending.append(t)
                    elif t[0] > self.best.get(t[2], float("-inf")):
                        self.best[t[2]] = t[0]
                if not pending:
                    break
                frontier = pending
                continue
            children.sort(key=lambda t: -t[0])
            # the best line of every first action survives, so one cannot crowd out all
            frontier = []
            seen = set()
            for v, c, f in children:
                if f not in seen:
                    seen.add(f)
                    frontier.append((v, c, f))
            if len(children) > width:
                self.cut = True
            frontier = frontier[:width]
            kept = {id(t[1]) for t in frontier}
            rest = [t for t in children if id(t[1]) not in kept]
            frontier += rest[: max(0, width - len(frontier))]
        self.complete = self.best  # only a finished run's values are compared
        self.complete_ends = self.ends

    def answer(self):
        """The first action with the best value found."""
        return best_action(self.complete or self.fallback)


def best_action(table: dict):
    """The action of the best value in ``table`` ((type, action) keys, as the searches
    record first actions), or None when it is empty."""
    return max(table.items(), key=lambda kv: kv[1])[0][1] if table else None


def by_first_action(ends, values) -> dict:
    """Each first action of ``ends`` (:func:`turn_ends`) at the best of its ends'
    ``values`` (one per end, in order)."""
    best: dict = {}
    for (_, _, f), value in zip(ends, values):
        if value > best.get(f, float("-inf")):
            best[f] = value
    return best


def turn_ends(search, keep: int = 12, per_first: int = 2) -> list:
    """The ``keep`` best lines of ``search``'s last run that ended the turn, best first,
    at most ``per_first`` per first action: (value, position, first action). In solo the
    automaton's reply is part of each (it is deterministic; only the refills are
    sampled), so the planner looks one own turn further from them
    (:func:`next_turn_value`; ``search`` must have been made with ``keep_ends``)."""
    chosen = []
    count: dict = {}
    for end in sorted(search.complete_ends, key=lambda t: -t[0]):
        f = end[2]
        if count.get(f, 0) < per_first:
            count[f] = count.get(f, 0) + 1
            chosen.append(end)
            if len(chosen) >= keep:
                break
    return chosen


def next_turn_value(search, ctx, end, width: int, depth: int = 12) -> tuple[float, bool]:
    """The best value a beam search of ``width`` finds over the turn that follows ``end``
    (a line after which the game is over, or another seat moves, keeps its own value),
    and whether that search was exact (no beam cut: a wider one finds the same).
    Shares ``search``'s clock and node budget."""
    v, c, _ = end
    if c.phase in (FINISH, OVER) or c.to_move() != ctx.me:
        return v, True
    sub = TurnSearch(ctx.at(c), search.deadline,
                     None if search.nodes_left is None else search.nodes_left - search.nodes)
    try:
        sub.run(c, width, depth)
    finally:
        search.nodes += sub.nodes
    return max(sub.best.values(), default=v), not sub.cut


def candidates(game, ctx) -> list:
    """The actions worth searching: takes, upgrades, the level-1 take, placements that
    follow a plan, master actions built from those plans, variant actions, pass."""
    legal = game.legal_actions()
    if game.phase != ACTION:
        return legal
    rs = game.rules
    p = game.players[game.seat]
    solver = ctx.solver
    g = rs.geometry
    out = []
    simple = []
    others = []
    legal_places = set()
    upgrades = []
    for a in legal:
        t = type(a)
        if t is Place:
            legal_places.add(a)
        elif t is Upgrade:
            upgrades.append(a)
        elif t in _KNOWN:
            simple.append(a)
        else:
            others.append(a)
    wanted = set()
    plans = []  # per puzzle: placements worth making, biggest first
    for pz in p.unfinished:
        if pz.card in ctx.unseen:
            continue  # a sampled card: its placements would plan on a guess
        empty = rs.recess[pz.card] & ~pz.filled
        sol = solver.complete(empty, p.supply)
        opts = []
        if sol is not None:
            opts = [Place(pz.card, pid) for pid in sol]
        else:
            _, ms, _ = solver.cheapest(empty, p.supply)
            if ms is not None:
                wanted.update(i for i, n in enumerate(ms) if n)
                cell = (empty & -empty).bit_length() - 1
                for s in solver.order:
                    if not (p.supply[s] and ms[s]):
                        continue
                    for pid in g.anchor[s][cell]:
                        m = g.placement_mask[pid]
                        if m & empty == m and solver.multisets(empty & ~m):
                            opts.append(Place(pz.card, pid))
                            if len(opts) >= 3:
                                break
        opts = [a for a in opts if a in legal_places]
        opts.sort(key=lambda a: -rs.shape_level[g.placement_shape[a.placement]])
        out.extend(dict.fromkeys(opts))  # all Place: equal tuples are equal actions
        if opts:
            plans.append((sol is not None, pz, opts))
    if rs.master_enabled and not game.master_used and Master in rs.handlers and len(plans) >= 2:
        # progress first: when the clock is short, the first candidates are all it sees
        out[:0] = _masters(game, p, plans)
    # variant actions (a ghost) before the takes: a small budget still weighs them
    out.extend(others[:_OTHER_LIMIT])
    out.extend(simple)
    level = rs.shape_level
    # level-ups always; exchanges and downgrades only toward a shape some plan needs
    out.extend(a for a in upgrades if level[a.take] > level[a.give] or a.take in wanted)
    return out


def _masters(game, p, plans) -> list:
    shape_of = game.rules.geometry.placement_shape
    combos = []
    for include_partial in (False, True):
        for skip in [None] + [pz.card for _, pz, _ in plans]:
            left = p.supply[:]
            chosen = []
            for ok, pz, opts in plans:
                if pz.card == skip or not ok and not include_partial:
                    continue
                for a in opts:
                    s = shape_of[a.placement]
                    if left[s]:
                        left[s] -= 1
                        chosen.append(a)
                        break
            if len(chosen) >= 2:
                m = Master(tuple(chosen))
                if m not in combos:
                    combos.append(m)
    return combos
