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
        self.warm = 0  # cards whose multisets are known (see bots.planner.solver_for)
        self._budget = _COVER_NODES
        self.deadline = float("inf")  # set per decision: long searches stop at it

    # ---------------------------------------------------------------- completion now
    def complete(self, empty: int, counts) -> tuple[int, ...] | None:
        """Placement ids tiling ``empty`` within ``counts`` (fewest pieces first), or None."""
        if not empty:
            return ()
        cells = bin(empty).count("1")
        capped = tuple(min(n, cells // lv) if lv else 0 for n, lv in zip(counts, self.levels))
        key = (empty, capped)
        memo = self._complete
        if key in memo:
            return memo[key]
        if len(memo) > _LIMIT:
            memo.clear()
        self._budget = _COVER_NODES
        result = self._cover(empty, list(capped))
        memo[key] = result
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
        costs its level (a level-1 take, then upgrades)."""
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
