"""``greedy``: a one-ply player.

In order of preference, each turn's action is:

1. a placement that completes a puzzle (the most points first), folded into a master
   action together with progress on every other puzzle when that is allowed;
2. a master action when two or more puzzles can make progress;
3. progress on the most valuable unfinished puzzle: the biggest piece of a way to complete
   it with the supply it has now (it never locks pieces into a puzzle it cannot finish);
4. taking the most valuable row puzzle its supply can finish (or, with no puzzle at all,
   the row puzzle with the fewest cells);
5. an upgrade of its smallest piece, or a level-1 piece; otherwise pass.

Decisions: the highest-level reward; level-up steps on the biggest pieces; in the
finishing touches it completes every puzzle whose points outweigh the pieces it costs.
"""

from __future__ import annotations

from engine.actions import ACTION, FINISH, LEVEL_UP, REWARD, Finish, LevelUp, Master, Pass, Place, TakePiece, TakePuzzle, Upgrade
from engine.solver import solve

from arena.hookspecs import hookimpl

from .policy import Policy, register_policy

_KNOWN = {Place, Upgrade, TakePiece, Pass, Master}


class GreedyPolicy(Policy):
    name = "greedy"
    #: its only state is the solver memo, which depends on the rules' geometry alone: a
    #: bot process keeps the policy, memo and all, from one game to the next
    reusable = True

    def __init__(self):
        self._memos: dict[int, tuple] = {}
        self._geometry = None
        self.memo: dict = {}

    def _use_memo(self, geometry) -> None:
        """Point ``self.memo`` at the memo of ``geometry`` (kept per geometry: a memo
        entry says a region cannot be tiled with these pieces, which is a fact of the
        geometry, true in every game with the same one)."""
        if geometry is not self._geometry:
            entry = self._memos.get(id(geometry))
            if entry is None:
                entry = self._memos[id(geometry)] = (geometry, {})  # the geometry held: its id stays its own
            self._geometry, self.memo = entry

    def choose(self, game, rng):
        self._use_memo(game.rules.geometry)
        phase = game.phase
        if phase == ACTION:
            return self._act(game, rng)
        if phase == FINISH:
            return self._finish(game)
        options = game.legal_actions()
        if phase == LEVEL_UP:
            return max(options, key=lambda a: sum(game.rules.shape_level[t] for _, t in a.steps) if isinstance(a, LevelUp) else 0)
        if phase == REWARD:
            return max(options, key=lambda a: game.rules.shape_level[a.take])
        return options[0]

    # ------------------------------------------------------------------ helpers
    def _solvable(self, game, empty, counts) -> bool:
        if len(self.memo) > 200_000:
            self.memo.clear()
        return solve(game.rules.geometry, empty, counts, self.memo) is not None

    def _act(self, game, rng):
        rs = game.rules
        g = rs.geometry
        p = game.players[game.seat]
        legal = game.legal_actions()
        places = [a for a in legal if type(a) is Place]
        points = rs.points
        recess = rs.recess
        filled = {pz.card: pz.filled for pz in p.unfinished}

        def value(card):
            r = rs.reward_shape[card]
            return points[card] * 10 + (rs.shape_level[r] if r >= 0 else 3)

        completing = [a for a in places if filled[a.puzzle] | g.placement_mask[a.placement] == recess[a.puzzle]]
        plan = self._plan(game, p, places)
        can_master = rs.master_enabled and not game.master_used and Master in rs.handlers
        if completing:
            first = max(completing, key=lambda a: (value(a.puzzle), -a.placement))
            if can_master and len(plan) > 1:
                return self._master(game, p, plan, first)
            return first
        if can_master and len(plan) > 1:
            return self._master(game, p, plan, None)
        if plan:
            return plan[max(plan, key=value)]
        takes = self._takes(game, legal)
        if takes:
            finishable = [(a, card) for a, card in takes if self._solvable(game, recess[card], p.supply)]
            if finishable:
                return max(finishable, key=lambda t: value(t[1]))[0]
            if not p.unfinished:
                return min(takes, key=lambda t: (bin(recess[t[1]]).count("1"), -points[t[1]]))[0]
        ups = [a for a in legal if type(a) is Upgrade and rs.shape_level[a.take] > rs.shape_level[a.give]]
        if ups:
            return min(ups, key=lambda a: (rs.shape_level[a.give], -rs.shape_level[a.take], a.give, a.take))
        for a in legal:
            if type(a) is TakePiece:
                return a
        return legal[-1] if isinstance(legal[-1], Pass) else rng.choice(legal)

    def _takes(self, game, legal) -> list:
        """``(action, card)`` for every action that takes a visible puzzle: row takes, and
        any variant action (a grid take, say) found by trying it on a copy. Takes of a
        card not visible before (a blind take) are left out: the bot must not peek."""
        visible = {c for row in game.rows for c in row if c >= 0}
        visible.update(c for c in game.extra.get("grid", ()) if c >= 0)
        out = []
        seat = game.seat
        for a in legal:
            kind = type(a)
            if kind is TakePuzzle:
                out.append((a, game.rows[a.color][a.slot]))
            elif kind not in _KNOWN:
                trial = game.clone()
                before = {pz.card for pz in trial.players[seat].unfinished}
                trial.apply(a)
                new = [pz.card for pz in trial.players[seat].unfinished if pz.card not in before]
                if len(new) == 1 and new[0] in visible:
                    out.append((a, new[0]))
        return out

    def _plan(self, game, p, places) -> dict:
        """For each unfinished puzzle the supply can complete: the biggest piece of one
        way to complete it, as a legal placement."""
        rs = game.rules
        g = rs.geometry
        level = rs.shape_level
        legal = set(places)
        plan = {}
        for pz in p.unfinished:
            empty = rs.recess[pz.card] & ~pz.filled
            if len(self.memo) > 200_000:
                self.memo.clear()
            sol = solve(g, empty, p.supply, self.memo)
            if not sol:
                continue
            pid = max(sol, key=lambda x: (level[g.placement_shape[x]], -x))
            a = Place(pz.card, pid)
            if a in legal:
                plan[pz.card] = a
        return plan

    def _master(self, game, p, plan, first):
        rs = game.rules
        shape_of = rs.geometry.placement_shape
        left = p.supply[:]
        chosen = []
        order = list(plan.values())
        if first is not None:
            order = [first] + [a for a in order if a.puzzle != first.puzzle]
        for a in order:
            s = shape_of[a.placement]
            if left[s] > 0:
                left[s] -= 1
                chosen.append(a)
        if len(chosen) == 1:
            return chosen[0]
        return Master(tuple(chosen))

    def _finish(self, game):
        rs = game.rules
        p = game.players[game.seat]
        counts = p.supply[:]
        cost = rs.finishing_touch_cost
        placements = []
        for pz in sorted(p.unfinished, key=lambda pz: -rs.points[pz.card]):
            empty = rs.recess[pz.card] & ~pz.filled
            sol = solve(rs.geometry, empty, counts, {})
            if sol is None or rs.points[pz.card] - len(sol) * cost < 0 and not rs.score_penalties:
                continue
            if rs.points[pz.card] * (2 if rs.score_penalties else 1) - len(sol) * cost <= 0:
                continue
            for pid in sol:
                counts[rs.geometry.placement_shape[pid]] -= 1
                placements.append(Place(pz.card, pid))
        return Finish(tuple(placements))


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``greedy``."""
    register_policy(register, GreedyPolicy, __doc__)
