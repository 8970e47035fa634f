"""The planner's puzzle solver: how a puzzle can be completed, and from which pieces.

Two questions, both answered by exact cover over a puzzle's empty recess cells (the lowest
empty cell is filled first, so every tiling is met once) and memoised per empty mask:

- :meth:`PuzzleSolver.complete`: can these supply counts complete it *now*, and with which
  placements? Bigger pieces are tried first, so the tiling found uses few pieces (few
  place actions). Successes and failures are memoised per (empty cells, counts).
- :meth:`PuzzleSolver.multisets`: which multisets of pieces complete it at all? A bounded
  search keeps a few dozen of the smallest multisets per empty mask; the planner prices
  each against its supply (:meth:`PuzzleSolver.cheapest`) to see what to build toward.

The memo is keyed by the empty mask only (the grid is the same on every card), so it is
shared by every card, every filled state and every game under the same shapes.
"""

from __future__ import annotations

import time

_LIMIT = 300_000
_MULTISET_CAP = 32
_NODE_LIMIT = 1200
_COVER_NODES = 4000


class PuzzleSolver:
    """Memoised exact cover for one :class:`engine.geometry.Geometry`."""

    def __init__(self, geometry, levels, max_level: int = 4):
        self.g = geometry
        self.levels = list(levels)
        self.max_level = max_level  # pieces above it come only as rewards (R11.2)
        # Shapes tried biggest first: a tiling with few pieces needs few place actions.
        self.order = sorted(range(len(levels)), key=lambda s: (-levels[s], s))
        self._complete: dict = {}
        self._multisets: dict = {}
        self._cheapest: dict = {}
        self.isolated = False  # see fork()
        self.warm = 0  # cards whose multisets are known (see bots.planner.solver_for)
        self._budget = _COVER_NODES
        self.deadline = float("inf")  # set per decision: long searches stop at it

    def fork(self) -> "PuzzleSolver":
        """A solver whose every answer depends only on the question: for reproducible play.

        :meth:`multisets` and :meth:`cheapest` answers depend only on their arguments (an
        answer cut short by the clock is not remembered), so the fork shares them. This
        solver's :meth:`complete` stops after a node budget and reuses what earlier calls
        remembered, so its answer to a hard question can depend on the questions asked
        before; the fork's answers each come from a search of their own (same budget, no
        earlier memo) and are remembered in a memo that all forks share.
        """
        other = PuzzleSolver.__new__(PuzzleSolver)
        other.__dict__.update(self.__dict__)
        if "_isolated_memo" not in self.__dict__:
            self._isolated_memo = {}
        other._complete = self._isolated_memo
        other.isolated = True
        other.deadline = float("inf")
        return other

    # ---------------------------------------------------------------- completion now
    def complete(self, empty: int, counts) -> tuple[int, ...] | None:
        """Placement ids tiling ``empty`` within ``counts`` (fewest pieces first), or None."""
        if not empty:
            return ()
        raw = (empty, tuple(counts))
        memo = self._complete
        hit = memo.get(raw, memo)
        if hit is not memo:
            return hit
        cells = bin(empty).count("1")
        capped = tuple(min(n, cells // lv) if lv else 0 for n, lv in zip(counts, self.levels))
        key = (empty, capped)
        if key in memo:
            result = memo[key]
        else:
            if len(memo) > _LIMIT:
                memo.clear()
            self._budget = _COVER_NODES
            if self.isolated:  # a search of its own: the answer depends on the question only
                self._complete = {}
                try:
                    result = self._cover(empty, list(capped))
                finally:
                    self._complete = memo
            else:
                result = self._cover(empty, list(capped))
            memo[key] = result
        memo[raw] = result  # the same answer for the uncapped counts
        return result

    def _cover(self, empty, counts):
        if not empty:
            return ()
        key = (empty, tuple(counts))
        memo = self._complete
        if key in memo:
            return memo[key]
        self._budget -= 1
        if self._budget < 0:
            return None  # too hard to decide in time: treated as not completable now
        cell = (empty & -empty).bit_length() - 1
        g = self.g
        masks = g.placement_mask
        result = None
        for s in self.order:
            if not counts[s]:
                continue
            for pid in g.anchor[s][cell]:
                m = masks[pid]
                if m & empty == m:
                    counts[s] -= 1
                    rest = self._cover(empty & ~m, counts)
                    counts[s] += 1
                    if rest is not None:
                        result = (pid,) + rest
                        break
            if result is not None:
                break
        memo[key] = result
        return result

    # ---------------------------------------------------------------- what to build toward
    def multisets(self, empty: int) -> tuple[tuple[int, ...], ...]:
        """Up to a few dozen distinct multisets (count per shape) that tile ``empty``,
        fewest pieces first."""
        hit = self._multisets.get(empty)
        if hit is not None:
            return hit
        if len(self._multisets) > _LIMIT // 10:
            self._multisets.clear()
        found: set = set()
        counts = [0] * len(self.levels)
        budget = [_NODE_LIMIT]
        cut = [False]
        deadline = self.deadline
        dead: set = set()
        g = self.g
        masks = g.placement_mask
        order = self.order

        def rec(rest):
            if not rest:
                found.add(tuple(counts))
                return True
            if budget[0] <= 0 or len(found) >= _MULTISET_CAP * 3 or rest in dead:
                return False
            budget[0] -= 1
            if not budget[0] & 63 and time.perf_counter() > deadline:
                budget[0] = 0  # out of time: use what was found, do not remember it
                cut[0] = True
            cell = (rest & -rest).bit_length() - 1
            ok = False
            for s in order:
                for pid in g.anchor[s][cell]:
                    m = masks[pid]
                    if m & rest == m:
                        counts[s] += 1
                        if rec(rest & ~m):
                            ok = True
                        counts[s] -= 1
            if not ok and budget[0] > 0:
                dead.add(rest)
            return ok

        rec(empty)
        out = tuple(sorted(found, key=lambda c: (sum(c), c))[:_MULTISET_CAP])
        if not cut[0]:
            self._multisets[empty] = out
        return out

    def cheapest(self, empty: int, supply) -> tuple[float, tuple[int, ...] | None, list | None]:
        """The multiset for ``empty`` that the ``supply`` reaches in the fewest actions,
        as ``(actions to acquire, multiset, supply left over)``; ``(inf, None, None)`` when
        none is known.

        Each needed piece the supply lacks is bought from the best unused piece: an
        exchange or upgrade costs ``max(1, level gap)`` actions, a piece from nothing
        costs its level (a level-1 take, then upgrades).

        Memoised per (empty cells, supply): the answer depends on nothing else."""
        key = (empty, tuple(supply))
        hit = self._cheapest.get(key)
        if hit is not None:
            return hit[0], hit[1], (list(hit[2]) if hit[2] is not None else None)
        cost, ms, left = self._price(empty, supply)
        if empty in self._multisets:  # not priced against a list cut short by the clock
            if len(self._cheapest) > _LIMIT:
                self._cheapest.clear()
            self._cheapest[key] = (cost, ms, tuple(left) if left is not None else None)
        return cost, ms, left

    def _price(self, empty: int, supply):
        best = (float("inf"), None, None)
        levels = self.levels
        order = self.order
        for ms in self.multisets(empty):
            left = list(supply)
            cost = 0
            # exact matches first, then buy the rest biggest first from leftovers
            need = []
            for s in order:
                n = ms[s]
                if not n:
                    continue
                use = min(n, left[s])
                left[s] -= use
                need.extend([s] * (n - use))
            for s in need:
                lv = levels[s]
                src = -1
                for t in order:
                    if left[t] and levels[t] <= lv:
                        src = t
                        break
                if lv > self.max_level:
                    cost = float("inf")  # cannot be bought, only won
                elif src < 0:
                    cost += lv
                else:
                    left[src] -= 1
                    cost += max(1, lv - levels[src])
                if cost >= best[0]:
                    break
            if cost < best[0]:
                best = (cost, ms, left)
                if cost == 0:
                    break
        return best
