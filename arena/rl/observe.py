"""A seat's observation as one numpy array (float32), with a documented layout.

The array holds what :func:`engine.observation.observation` shows the seat, and no more:
deck orders are hidden (only sizes), and when the rules hide scores (R9.6/R10) another
seat's score is 0 with its ``score_visible`` flag 0 (its completed count stays visible).
:class:`Observer` computes the array straight from the game state for speed; given the
JSON observation as ``view`` (what a protocol bot receives), it reads the counts and
scores from there. Tests check that both give the same array on every variant, so the
fast path shows nothing the JSON hides.

Layout (``S`` shapes, ``R`` row slots, ``U`` unfinished puzzles, ``n`` seats; seats are
listed from this seat on: this seat first, then the others in seat order.
:meth:`Observer.layout` lists every block with its offset, size and bounds):

- ``phase`` (4): one-hot action, reward, level_up, finish (all 0 once the game is over);
- ``mode`` (5): one-hot of the index sequence under way (none, master, ghost, finish,
  level_up; see :mod:`arena.rl.spaces`);
- ``turn`` (6): actions left, master used, end triggered, round, final round (0 until the
  end is triggered), 1 if this seat is to move;
- ``decks`` (2): cards left in the white and black decks;
- ``reserve`` (S): pieces of each shape in the reserve;
- ``pending_supply`` (S): how the sequence under way would change this seat's supply;
- ``reward_options`` (S): shapes offered by a reward decision to this seat;
- ``level_up_steps`` (1): level-up steps this seat may still choose;
- ``solo`` (solo rules only, 5): the locks above the three columns, the automaton's
  supply and its score;
- ``seats`` (n × (S + 5)): per seat its supply (S), completed count, score, score
  visible, forfeited, black puzzles taken after the end (R9.4);
- ``cards`` (K × C): one card block for each white row slot, each black row slot, (solo:
  each grid slot,) then each seat's U unfinished puzzles in the order taken (empty: 0);
- ``covered`` (n × U × 25): the cells already covered on each of those puzzles;
- ``pending`` (U × 26): on this seat's puzzles, the cells covered by the sequence under
  way, and 1 if the master or ghost action under way already placed a piece there.

A *card block* (C = 30 + S values): present, black, points, reward shape one-hot (S),
reward ``+1``, reward ``+2``, the 25 recess cells. Cells are row-major on the 5x5 grid.
"""

from __future__ import annotations

import numpy as np

from engine.actions import OVER

from .spaces import GHOST, LEVELING, NONE, action_index

CELLS = 25


def _bits(masks) -> np.ndarray:
    """The 25 cells of each mask, as 0/1 bytes (one row per mask)."""
    raw = np.array(masks, dtype="<u4").view(np.uint8).reshape(-1, 4)
    return np.unpackbits(raw, axis=1, bitorder="little")[:, :CELLS]


class Observer:
    """Builds the observation array of a ruleset's games (one per ruleset and seat count)."""

    def __init__(self, rules):
        self.rules = rules
        self.space = action_index(rules)
        S = self.S = len(rules.shapes)
        self.R = rules.row_size
        U = self.U = rules.max_unfinished
        n = self.n = rules.players
        self.solo = any(a is not None for a in self.space.actions[slice(*_span(self.space, "take_grid"))])
        C = self.C = 30 + S
        self.seat_size = S + 5
        top_points = max(max(rules.points, default=1), 1)
        counts = 255.0
        rounds = float(rules.max_rounds + 2)
        self.slots = 2 * self.R + (9 if self.solo else 0)
        blocks: list[tuple[str, int, float, float]] = [
            ("phase", 4, 0, 1), ("mode", 5, 0, 1), ("turn", 6, 0, max(rounds, rules.actions_per_turn)),
            ("decks", 2, 0, len(rules.puzzles)), ("reserve", S, 0, counts), ("pending_supply", S, -counts, counts),
            ("reward_options", S, 0, 1), ("level_up_steps", 1, 0, 2)]
        if self.solo:
            blocks.append(("solo", 5, 0, 1000.0))
        blocks += [("seats", n * self.seat_size, -1000.0, 1000.0), ("cards", (self.slots + n * U) * C, 0, top_points),
                   ("covered", n * U * CELLS, 0, 1), ("pending", U * (CELLS + 1), 0, 1)]
        self.blocks = []
        at = 0
        for name, size, lo, hi in blocks:
            self.blocks.append((name, at, size, lo, hi))
            at += size
        self.size = at
        self.off = {name: at for name, at, *_ in self.blocks}
        self.head = self.off["cards"]
        low = np.zeros(self.size, np.float32)
        high = np.zeros(self.size, np.float32)
        for name, at, size, lo, hi in self.blocks:
            low[at:at + size] = lo
            high[at:at + size] = hi
        self.low, self.high = low, high
        # one card block per card
        table = np.zeros((len(rules.puzzles) + 1, C), np.float32)  # the last row: an empty slot (-1)
        for i, pz in enumerate(rules.puzzles):
            row = table[i]
            row[0] = 1
            row[1] = pz.color == "black"
            row[2] = pz.points
            r = rules.reward_shape[i] if hasattr(rules, "reward_shape") else -1
            if r >= 0:
                row[3 + r] = 1
            elif pz.reward in ("+1", "+2"):
                row[3 + S + int(pz.reward[1]) - 1] = 1
            row[5 + S:] = _bits([pz.recess])[0]
        self.cards = table
        self.orders = [[(seat + j) % n for j in range(n)] for seat in range(n)]
        self.pad = [[0] * (U - k) for k in range(U + 1)]
        self.holes = [[-1] * (U - k) for k in range(U + 1)]
        self.o_cards, self.o_covered, self.o_pending = self.off["cards"], self.off["covered"], self.off["pending"]
        self._card_cache: dict[tuple, np.ndarray] = {}
        self._cell_cache: dict[tuple, np.ndarray] = {}

    def clear_caches(self) -> None:
        """Empty the block caches (for benchmarks; they only speed things up)."""
        self._card_cache.clear()
        self._cell_cache.clear()

    def layout(self) -> list[dict]:
        """Every block: name, offset, size, low, high."""
        return [{"name": n, "offset": a, "size": s, "low": lo, "high": hi} for n, a, s, lo, hi in self.blocks]

    def encode(self, game, seat: int, chooser=None, view: dict | None = None) -> np.ndarray:
        """The observation array of ``seat``; ``chooser`` adds the sequence under way,
        ``view`` (the seat's JSON observation) supplies counts and scores hidden from it."""
        rules = self.rules
        S, U, n = self.S, self.U, self.n
        out = np.zeros(self.size, np.float32)
        phase = game.phase
        head = [0.0] * self.head
        if phase != OVER:
            head[phase] = 1.0
        me_to_move = game.seat == seat and phase != OVER
        mode = chooser.mode if (chooser is not None and me_to_move) else NONE
        head[4 + mode] = 1.0
        head[9:17] = (game.actions_left, game.master_used, game.end_triggered, game.round, game.final_round or 0,
                      me_to_move, len(game.decks[0]), len(game.decks[1]))
        at = 17
        head[at:at + S] = game.reserve
        at += S
        if mode != NONE:
            head[at:at + S] = _pending_supply(chooser)
        at += S
        if me_to_move and game.decision is not None:
            d = game.decision
            if "options" in d:
                idx = rules.shape_index
                for name in d["options"]:
                    head[at + idx[name]] = 1.0
            if "steps" in d:
                head[at + S] = d["steps"] - (len(chooser.steps) if chooser is not None else 0)
        at += S + 1
        ids = game.rows[0] + game.rows[1]  # card indices, -1 for an empty slot
        if len(ids) < 2 * self.R:
            ids += [-1] * (2 * self.R - len(ids))
        if self.solo:
            extra = game.extra
            head[at:at + 5] = (*extra["locks"], extra["automaton_supply"],
                               sum(rules.points[x] for x in extra["automaton_pile"]))
            at += 5
            ids += extra["grid"]
        visible = rules.scores_visible or phase == OVER
        filled = []
        points = rules.points
        cost = rules.finishing_touch_cost
        penalties = rules.score_penalties
        pad = self.pad
        holes = self.holes
        for j, s in enumerate(self.orders[seat]):
            p = game.players[s]
            head[at:at + S] = p.supply
            at += S
            if view is not None:
                entry = view["seats"][s]
                head[at] = entry["completed_count"]
                if "score" in entry:
                    head[at + 1] = entry["score"]
                    head[at + 2] = 1.0
            else:
                head[at] = len(p.completed)
                if j == 0 or visible:
                    # R7.1 as Game.score computes it
                    score = sum(map(points.__getitem__, p.completed)) - p.finish_pieces * cost
                    for penalty in penalties:
                        score -= penalty(game, s)
                    head[at + 1] = score
                    head[at + 2] = 1.0
            head[at + 3] = p.forfeited
            if p.extra:
                head[at + 4] = p.extra.get("black_after_end", 0)
            at += 5
            unfinished = p.unfinished
            if unfinished:
                ids += [pz.card for pz in unfinished]
                filled += [pz.filled for pz in unfinished]
                k = len(unfinished)
                if k < U:
                    ids += holes[k]
                    filled += pad[k]
            else:
                ids += holes[0]
                filled += pad[0]
        out[:self.head] = head
        # the card and cell blocks change only on takes and placements: cached by value
        key = tuple(ids)
        block = self._card_cache.get(key)
        if block is None:
            if len(self._card_cache) > 4096:
                self._card_cache.clear()
            block = self._card_cache[key] = self.cards[ids].ravel()
        out[self.o_cards:self.o_covered] = block
        key = tuple(filled)
        block = self._cell_cache.get(key)
        if block is None:
            if len(self._cell_cache) > 4096:
                self._cell_cache.clear()
            block = self._cell_cache[key] = _bits(filled).ravel()
        out[self.o_covered:self.o_pending] = block
        if mode != NONE and (chooser.pending_cells or chooser.positions):
            block = out[self.o_pending:].reshape(U, CELLS + 1)
            for pos, cells in chooser.pending_cells.items():
                block[pos, :CELLS] = _bits([cells])[0]
            for pos in chooser.positions:
                block[pos, CELLS] = 1
        return out


def _span(space, name):
    start, n = space.segments[name]
    return start, start + n


def _pending_supply(chooser) -> list[int]:
    delta = [-u for u in chooser.used]
    if chooser.mode == GHOST:
        delta[chooser.give] -= 1
        for s, t in enumerate(chooser.taken):
            delta[s] += t
    elif chooser.mode == LEVELING:
        for give, take in chooser.steps:
            delta[give] -= 1
            delta[take] += 1
    return delta


_OBSERVERS: dict = {}


def observer(rules) -> Observer:
    """The shared :class:`Observer` of a compiled ruleset."""
    obs = _OBSERVERS.get(id(rules))
    if obs is None or obs.rules is not rules:
        obs = _OBSERVERS[id(rules)] = Observer(rules)
    return obs


