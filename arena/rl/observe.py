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

import struct
from array import array
from operator import attrgetter

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
        #: each card block (and the empty slot's, last) as float32 bytes; a puzzle's
        #: covered cells likewise, per cells mask (built on first use)
        self.card_bytes = [row.tobytes() for row in table]
        self.cell_bytes = _CellBytes()
        self.pack_shapes = struct.Struct(f"<{S}f").pack_into  # S float32 values into a buffer
        self.orders = [[(seat + j) % n for j in range(n)] for seat in range(n)]
        # for each seat, the seats in its order, with the byte offsets of their blocks:
        # (j, seat, supply, stats, card blocks, covered cells)
        o_seats = self.off["seats"]
        self.seat_rows = [
            [(j, s, 4 * (o_seats + j * (S + 5)), 4 * (o_seats + j * (S + 5) + S),
              4 * (self.off["cards"] + (self.slots + j * U) * C), 4 * (self.off["covered"] + j * U * CELLS))
             for j, s in enumerate(order)]
            for order in self.orders]
        self.pad = [[0] * (U - k) for k in range(U + 1)]
        self.holes = [[-1] * (U - k) for k in range(U + 1)]
        self.o_cards, self.o_covered, self.o_pending = self.off["cards"], self.off["covered"], self.off["pending"]
        #: the rows are the only inputs of their blocks (no solo grid or counts): compared in line
        self.plain_rows = not self.solo

    def clear_caches(self) -> None:
        """Empty the cells cache (for benchmarks; it only speeds things up)."""
        self.cell_bytes.clear()

    def layout(self) -> list[dict]:
        """Every block: name, offset, size, low, high."""
        return [{"name": n, "offset": a, "size": s, "low": lo, "high": hi} for n, a, s, lo, hi in self.blocks]

    def encode(self, game, seat: int, chooser=None, view: dict | None = None, memo: dict | None = None) -> np.ndarray:
        """The observation array of ``seat``; ``chooser`` adds the sequence under way,
        ``view`` (the seat's JSON observation) supplies counts and scores hidden from it.

        ``memo`` (a dict the caller keeps, one per game it follows; ignored with
        ``view``) holds each seat's last array and the inputs of its blocks: the blocks
        whose inputs did not change are not rebuilt. The result is always a new array
        equal to what the call without ``memo`` (built from scratch) returns: tests
        compare them."""
        if memo is None or view is not None:
            memo = {}  # from scratch
        return self._encode_delta(game, seat, chooser, memo, view)

    def _encode_delta(self, game, seat: int, chooser, memo: dict, view: dict | None = None,
                      fresh: bool = True) -> np.ndarray:
        """:meth:`encode` from the seat's last array in ``memo`` (an empty memo: from
        scratch): each block is rewritten only when its inputs differ from those it was
        built from (a step changes one or two of them), the counts packed with ``struct``,
        the card and cell blocks copied from prepared float32 bytes. ``fresh=False``
        returns the memo's own array (read it before the next call; do not write it)."""
        last = memo.get(seat)
        if last is None:
            last = memo[seat] = _Last(self.size, self.n)
        phase = game.phase
        me_to_move = game.seat == seat and phase != OVER
        mode = chooser.mode if (chooser is not None and me_to_move) else NONE
        # The blocks of a usual step are checked here, in line; the others are called only
        # when they have something to write (a method call costs as much as a check).
        hd = last.values
        if phase * 8 + mode != last.phase:
            self._delta_phase(last, phase, mode)
        _PACK8(hd, 36, game.actions_left, game.master_used, game.end_triggered, game.round, game.final_round or 0,
               me_to_move, len(game.decks[0]), len(game.decks[1]))
        reserve = game.reserve
        if reserve != last.reserve:
            self.pack_shapes(hd, 68, *reserve)
            last.reserve = reserve[:]
        if mode != NONE or last.extra or (me_to_move and game.decision is not None):
            self._delta_decision(game, chooser, last, mode, me_to_move)
        if not self.plain_rows or game.rows[0] + game.rows[1] != last.ids:
            self._delta_rows(game, last)
        self._delta_seats(game, seat, last, view, phase)
        if last.pending or (mode != NONE and (chooser.pending_cells or chooser.positions)):
            self._delta_pending(chooser, last, mode)
        return last.out.copy() if fresh else last.out

    @staticmethod
    def _delta_phase(last: "_Last", phase: int, mode: int) -> None:
        """The phase and the chooser's mode (one-hots)."""
        hd = last.values
        hd[:9] = _ZEROS9
        if phase != OVER:
            hd[phase] = 1.0
        hd[4 + mode] = 1.0
        last.phase = phase * 8 + mode

    def _delta_decision(self, game, chooser, last: "_Last", mode: int, me_to_move: bool) -> None:
        """The decision in hand: the chooser's pending supply, the options and steps left."""
        S, hd = self.S, last.values
        at = 17 + S
        decision = game.decision if me_to_move else None
        if mode != NONE or decision is not None:
            block = [0.0] * (2 * S + 1)
            if mode != NONE:
                block[:S] = _pending_supply(chooser)
            if decision is not None:
                if "options" in decision:
                    idx = self.rules.shape_index
                    for name in decision["options"]:
                        block[S + idx[name]] = 1.0
                if "steps" in decision:
                    block[2 * S] = decision["steps"] - (len(chooser.steps) if chooser is not None else 0)
            hd[at:at + 2 * S + 1] = array("f", block)
            last.extra = True
        elif last.extra:
            hd[at:at + 2 * S + 1] = array("f", [0.0] * (2 * S + 1))
            last.extra = False

    def _delta_rows(self, game, last: "_Last") -> None:
        """The rows of puzzles (and the solo automaton's counts and grid)."""
        hd, raw = last.values, last.raw
        at = 18 + 3 * self.S
        ids = game.rows[0] + game.rows[1]
        if len(ids) < 2 * self.R:
            ids += [-1] * (2 * self.R - len(ids))
        if self.solo:
            extra = game.extra
            hd[at:at + 5] = array("f", (*extra["locks"], extra["automaton_supply"],
                                     sum(self.rules.points[x] for x in extra["automaton_pile"])))
            ids += extra["grid"]
        if ids != last.ids:  # the rows (and the solo grid); -1, an empty slot, reads the empty last row
            o = self.o_cards * 4
            raw[o:o + self.slots * self.C * 4] = b"".join(map(self.card_bytes.__getitem__, ids))
            last.ids = ids

    def _delta_seats(self, game, seat: int, last: "_Last", view: dict | None, phase: int) -> None:
        """Each seat's supply, counts and score, its puzzles and their covered cells (the
        comparisons in line, the writing in the methods below: most seats change nothing)."""
        hd = last.values
        held, covered, supplies, stats = last.held, last.covered, last.supplies, last.stats
        rules = self.rules
        penalties = rules.score_penalties
        visible = rules.scores_visible or phase == OVER
        players = game.players
        for j, s, o_supply, o_stats, o_held, o_covered in self.seat_rows[seat]:
            p = players[s]
            supply = p.supply
            if supply != supplies[j]:
                self.pack_shapes(hd, o_supply, *supply)
                supplies[j] = supply[:]
            extra = p.extra.get("black_after_end", 0) if p.extra else 0
            if view is not None:  # counts and scores as the seat's JSON observation shows them
                entry = view["seats"][s]
                shown = "score" in entry
                _PACK5(hd, o_stats, entry["completed_count"], entry["score"] if shown else 0, shown, p.forfeited, extra)
            else:
                # R7.1 as Game.score computes it. A pile is only ever added to in a game
                # (one memo follows one game), so its length stands for its points.
                key = (len(p.completed), p.finish_pieces, p.forfeited, extra, j == 0 or visible)
                if penalties and key[4]:  # any state may move a penalty: each is asked at every step
                    key += ((penalties[0](game, s),) if len(penalties) == 1
                            else tuple([penalty(game, s) for penalty in penalties]))
                if key != stats[j]:
                    self._write_stats(game, s, hd, o_stats, key)
                    stats[j] = key
            unfinished = p.unfinished
            if unfinished != held[j]:  # the same puzzle objects hold the same cards
                self._write_held(last.raw, o_held, unfinished)
                held[j] = unfinished[:]
            cells = list(map(_FILLED, unfinished))
            if cells != covered[j]:
                covered[j] = cells
                self._write_covered(last.raw, o_covered, cells)

    def _write_stats(self, game, s: int, hd, at: int, key: tuple) -> None:
        """Seat ``s``'s completed count, score (R7.1, less the penalties of the rules, their
        values at the end of ``key``; 0 when hidden), score visible, forfeited and black
        puzzles taken after the end."""
        count, finish_pieces, forfeited, extra, shown, *penalties = key
        if shown:
            rules = self.rules
            points = rules.points
            score = sum(map(points.__getitem__, game.players[s].completed)) - finish_pieces * rules.finishing_touch_cost
            for value in penalties:
                score -= value
            _PACK5(hd, at, count, score, 1, forfeited, extra)
        else:
            _PACK5(hd, at, count, 0, 0, forfeited, extra)

    def _write_held(self, raw, at: int, unfinished: list) -> None:
        """The card blocks of a seat's unfinished puzzles (empty slots: zeros)."""
        cards = [pz.card for pz in unfinished]
        k = len(cards)
        if k < self.U:
            cards += self.holes[k]
        raw[at:at + 4 * self.U * self.C] = b"".join(map(self.card_bytes.__getitem__, cards))

    def _write_covered(self, raw, at: int, cells: list) -> None:
        """The covered cells of a seat's unfinished puzzles (empty slots: zeros)."""
        if len(cells) < self.U:
            cells = cells + self.pad[len(cells)]
        raw[at:at + 4 * self.U * CELLS] = b"".join(map(self.cell_bytes.__getitem__, cells))

    def _delta_pending(self, chooser, last: "_Last", mode: int) -> None:
        """The cells of the pieces the chooser has placed so far, and the puzzles it used."""
        pending = mode != NONE and (chooser.pending_cells or chooser.positions)
        if pending or last.pending:
            block = last.out[self.o_pending:].reshape(self.U, CELLS + 1)
            block[:] = 0.0
            if pending:
                for pos, cells in chooser.pending_cells.items():
                    block[pos, :CELLS] = _bits([cells])[0]
                for pos in chooser.positions:
                    block[pos, CELLS] = 1
            last.pending = bool(pending)


class _Last:
    """A seat's last array in :meth:`Observer.encode`'s memo, and what its blocks were
    built from (None or -1: not built yet)."""

    __slots__ = ("out", "values", "raw", "phase", "reserve", "extra", "ids", "supplies", "stats", "held", "covered", "pending")

    def __init__(self, size: int, seats: int):
        # the whole array, in one buffer seen three ways: values (the head's stores),
        # raw bytes (the blocks, copied from prepared float32 bytes), numpy (the result)
        self.values = array("f", bytes(4 * size))
        self.raw = memoryview(self.values).cast("B")
        self.out = np.frombuffer(self.values, dtype=np.float32)
        self.phase = None
        self.reserve = None
        self.extra = False
        self.ids = None
        self.supplies: list = [None] * seats
        self.stats: list = [None] * seats
        self.held: list = [None] * seats
        self.covered: list = [None] * seats
        self.pending = False


_ZEROS9 = array("f", [0.0] * 9)


_PACK8 = struct.Struct("<8f").pack_into
_FILLED = attrgetter("filled")
_PACK5 = struct.Struct("<5f").pack_into

#: the five cells of a 5-bit row chunk, as five float32 0/1 values
_FIVE = [array("f", [(x >> i) & 1 for i in range(5)]).tobytes() for x in range(32)]


class _CellBytes(dict):
    """Cells mask -> its 25 cells as float32 0/1 bytes (row-major, bit i = cell i)."""

    def __missing__(self, cells: int) -> bytes:
        if len(self) > 100_000:
            self.clear()
        five = _FIVE
        value = self[cells] = (five[cells & 31] + five[cells >> 5 & 31] + five[cells >> 10 & 31]
                               + five[cells >> 15 & 31] + five[cells >> 20 & 31])
        return value




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


def per_rules(cache: dict, make, rules):
    """The one ``make(rules)`` of a compiled ruleset kept in ``cache`` (by identity: an
    entry whose ``rules`` is another object with a recycled id is made anew)."""
    made = cache.get(id(rules))
    if made is None or made.rules is not rules:
        made = cache[id(rules)] = make(rules)
    return made


def observer(rules) -> Observer:
    """The shared :class:`Observer` of a compiled ruleset."""
    return per_rules(_OBSERVERS, Observer, rules)


