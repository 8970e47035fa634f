"""A seat's observation as one numpy array (float32), with a documented layout.

The array holds what :func:`engine.observation.observation` shows the seat, and no more:
deck orders are hidden (only sizes), and when the rules hide scores (R9.6/R10) another
seat's score is 0 with its ``score_visible`` flag 0 (its completed count stays visible).
:class:`Observer` computes the array straight from the game state for speed; given the
JSON observation as ``view`` (what a protocol bot receives), it reads the counts and
scores from there. Tests check that both give the same array on every variant, so the
fast path shows nothing the JSON hides.

Layout (``S`` shapes, ``R`` row slots, ``U`` unfinished puzzles, ``n`` seats;
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
- ``rows`` (2·R·C): the white then black row, one card block each (empty slots are 0);
- ``solo`` (solo rules only, 9·C + 5): the grid, the locks above the three columns, the
  automaton's supply and score;
- ``seats`` (n blocks, this seat first, then the others in seat order): supply (S), U
  puzzle blocks, completed count, score, score visible, forfeited, black puzzles taken
  after the end (R9.4).

A *card block* (C = 30 + S values): present, black, points, reward shape one-hot (S),
reward ``+1``, reward ``+2``, the 25 recess cells (row-major). A *puzzle block* (C + 51):
the card block, the 25 cells already covered, the 25 cells covered by the sequence under
way, and 1 if the master or ghost action under way already placed a piece on it.
"""

from __future__ import annotations

import numpy as np

from engine.actions import OVER

from .spaces import GHOST, LEVELING, MASTER, FINISHING, NONE, action_index

CELLS = 25
_SHIFT = np.arange(CELLS, dtype=np.int64)


def _bits(masks) -> np.ndarray:
    return ((np.array(masks, dtype=np.int64)[:, None] >> _SHIFT) & 1).astype(np.float32)


class Observer:
    """Builds the observation array of a ruleset's games (one per ruleset and seat count)."""

    def __init__(self, rules):
        self.rules = rules
        self.space = action_index(rules)
        S = self.S = len(rules.shapes)
        self.R = rules.row_size
        self.U = rules.max_unfinished
        self.n = rules.players
        self.solo = any(a is not None for a in self.space.actions[slice(*_span(self.space, "take_grid"))])
        C = self.C = 30 + S
        self.D = C + 51
        top_points = max(rules.points) if rules.points else 1
        counts = 255.0
        rounds = float(rules.max_rounds + 2)
        blocks: list[tuple[str, int, float, float]] = [
            ("phase", 4, 0, 1), ("mode", 5, 0, 1), ("turn", 6, 0, max(rounds, rules.actions_per_turn)),
            ("decks", 2, 0, len(rules.puzzles)), ("reserve", S, 0, counts), ("pending_supply", S, -counts, counts),
            ("reward_options", S, 0, 1), ("level_up_steps", 1, 0, 2), ("rows", 2 * self.R * C, 0, max(top_points, 1)),
        ]
        if self.solo:
            blocks.append(("solo", 9 * C + 5, 0, 1000.0))
        self.seat_size = S + self.U * self.D + 5
        blocks.append(("seats", self.n * self.seat_size, -1000.0, 1000.0))
        self.blocks = []
        at = 0
        for name, size, lo, hi in blocks:
            self.blocks.append((name, at, size, lo, hi))
            at += size
        self.size = at
        self.off = {name: at for name, at, *_ in self.blocks}
        low = np.zeros(self.size, np.float32)
        high = np.zeros(self.size, np.float32)
        for name, at, size, lo, hi in self.blocks:
            low[at:at + size] = lo
            high[at:at + size] = hi
        self.low, self.high = low, high
        # one card block per card (row 0: an empty slot)
        table = np.zeros((len(rules.puzzles) + 1, C), np.float32)
        for i, pz in enumerate(rules.puzzles):
            row = table[i + 1]
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

    def layout(self) -> list[dict]:
        """Every block: name, offset, size, low, high."""
        return [{"name": n, "offset": a, "size": s, "low": lo, "high": hi} for n, a, s, lo, hi in self.blocks]

    def encode(self, game, seat: int, chooser=None, view: dict | None = None) -> np.ndarray:
        """The observation array of ``seat``; ``chooser`` adds the sequence under way,
        ``view`` (the seat's JSON observation) supplies counts and scores hidden from it."""
        rules = self.rules
        S, C, D, U = self.S, self.C, self.D, self.U
        out = np.zeros(self.size, np.float32)
        off = self.off
        phase = game.phase
        if phase != OVER:
            out[phase] = 1
        me_to_move = game.seat == seat and phase != OVER
        mode = chooser.mode if (chooser is not None and me_to_move) else NONE
        out[4 + mode] = 1
        t = off["turn"]
        out[t:t + 6] = (game.actions_left, game.master_used, game.end_triggered, game.round, game.final_round or 0,
                        me_to_move)
        out[off["decks"]] = len(game.decks[0])
        out[off["decks"] + 1] = len(game.decks[1])
        o = off["reserve"]
        out[o:o + S] = game.reserve
        if mode != NONE:
            o = off["pending_supply"]
            out[o:o + S] = _pending_supply(chooser)
        if me_to_move and game.decision is not None:
            d = game.decision
            if "options" in d:
                idx = rules.shape_index
                o = off["reward_options"]
                for name in d["options"]:
                    out[o + idx[name]] = 1
            if "steps" in d:
                out[off["level_up_steps"]] = d["steps"] - (len(chooser.steps) if chooser is not None else 0)
        o = off["rows"]
        R = self.R
        cards = self.cards
        for c in (0, 1):
            row = game.rows[c]
            if row:
                out[o + c * R * C:o + c * R * C + len(row) * C] = cards[[x + 1 for x in row]].ravel()
        if self.solo:
            o = off["solo"]
            extra = game.extra
            out[o:o + 9 * C] = cards[[x + 1 for x in extra["grid"]]].ravel()
            o += 9 * C
            out[o:o + 3] = extra["locks"]
            out[o + 3] = extra["automaton_supply"]
            out[o + 4] = sum(rules.points[x] for x in extra["automaton_pile"])
        o = off["seats"]
        n = self.n
        visible = rules.scores_visible or phase == OVER
        pending = chooser if mode != NONE else None
        for j in range(n):
            s = (seat + j) % n
            p = game.players[s]
            out[o:o + S] = p.supply
            k = len(p.unfinished)
            if k:
                block = out[o + S:o + S + U * D].reshape(U, D)
                block[:k, :C] = cards[[pz.card + 1 for pz in p.unfinished]]
                block[:k, C:C + CELLS] = _bits([pz.filled for pz in p.unfinished])
                if pending is not None and j == 0:
                    for pos, cells in pending.pending_cells.items():
                        block[pos, C + CELLS:C + 2 * CELLS] = _bits([cells])[0]
                    for pos in pending.positions:
                        block[pos, C + 2 * CELLS] = 1
            tail = o + S + U * D
            if view is not None:
                entry = view["seats"][s]
                out[tail] = entry["completed_count"]
                if "score" in entry:
                    out[tail + 1] = entry["score"]
                    out[tail + 2] = 1
            else:
                out[tail] = len(p.completed)
                if j == 0 or visible:
                    out[tail + 1] = game.score(s)
                    out[tail + 2] = 1
            out[tail + 3] = p.forfeited
            out[tail + 4] = p.extra.get("black_after_end", 0) if p.extra else 0
            o += self.seat_size
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


