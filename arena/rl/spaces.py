"""The action space of a rule set: one fixed-size index for every action and decision.

An :class:`ActionIndex` numbers, once per compiled ruleset, every single action and
decision the rules can ask for. The layout, in this order (``S`` shapes in play, ``R`` =
``row_size``, ``U`` = ``max_unfinished``, ``P`` = placements of the geometry):

==================  ===========  ==============================================================
segment             size         index meaning
==================  ===========  ==============================================================
``pass``            1            ``{"type": "pass"}``
``take_piece``      1            ``{"type": "take_piece"}``
``take_puzzle``     2·R          row take: white slots 0..R-1, then black slots
``take_blind``      2            blind take (revised): white, black
``recycle``         2            recycle (revised): white, black
``take_grid``       9            solo grid take, slots 0-8
``upgrade``         S·S          ``give * S + take`` (upgrades and exchanges)
``reward``          S            reward decision: the shape taken (R9.3)
``level_up_step``   S·S          one level-up step ``give * S + take`` (R11.3)
``done``            1            end the sequence under way (see below)
``master``          1            start a master action (R3.6)
``ghost``           G            a ghost action: (ghost shape, multiset of pieces taken)
``place``           U·P          ``position * P + placement``
==================  ===========  ==============================================================

A placement index names the unfinished puzzle by its *position* (0 = the first puzzle the
player took that is still unfinished) and the geometry's placement id, which encodes the
shape, its orientation and its anchor on the 5x5 grid (:mod:`engine.geometry`: ids are
numbered shape by shape, then orientation, then anchor row-major). Every segment is there
under every rule set (an index the rules cannot use is simply never legal), so the index
of an action depends only on ``row_size``, ``max_unfinished`` and the shapes in play: base,
revised, open scores, solo and no-master share one layout; ghost adds three shapes.

**Sequences.** R14's compound moves are played as several indices, so that every legal
move stays reachable with one fixed-size space (:class:`Chooser` keeps the sequence):

- master action: ``master``, then one ``place`` per chosen puzzle (at most one each,
  pieces from the supply as it was), then ``done``;
- ghost action: the ``ghost`` index, then the pieces just taken that are placed at once
  (``place``, at most one per puzzle), then ``done``;
- level-up reward: ``level_up_step`` indices, then ``done`` (``done`` alone declines);
- finishing touches: any number of ``place``, then ``done``.

When ``done`` is the only legal index the sequence is committed without asking (a master
action on the last free puzzle, the second level-up step, finishing touches with nothing
left to place): :meth:`Chooser.forced` gives that action. Nothing reaches the engine
before the sequence is complete, so a sequence never leaves the state half-changed.

The mask of a single action is the engine's own list (:meth:`engine.game.Game.legal_actions`)
mapped to indices; the masks inside a sequence apply the same checks the engine makes
when the whole move is given (tests check that every masked index is accepted and every
other rejected).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.actions import (ACTION, FINISH, LEVEL_UP, REWARD, Finish, LevelUp, Master, Pass, Place, TakePiece, TakePuzzle,
                            Upgrade)
from engine.base_rules import legal_actions
from engine.codec import from_json, to_json
from engine.errors import IllegalAction

#: modes of a :class:`Chooser`: what the next index continues
NONE, MASTER, GHOST, FINISHING, LEVELING = range(5)
MODE_NAMES = ("none", "master", "ghost", "finish", "level_up")
GRID_SLOTS = 9
_COLORS = ("white", "black")


#: bytes.translate table: a count -> 1 if any (``bytes(supply).translate(_ANY)``: the shapes held)
_ANY = bytes([0] + [1] * 255)
#: positional, and a dtype: numpy's keyword parsing and type lookup cost more than the copy
_frombuffer, _INT8 = np.frombuffer, np.dtype(np.int8)


class IllegalIndex(IllegalAction):
    """An index that the mask does not allow now."""


class ActionIndex:
    """The fixed action index of one compiled ruleset (see the module docstring)."""

    def __init__(self, rules):
        self.rules = rules
        g = rules.geometry
        S = self.shapes = len(rules.shapes)
        R = self.row_size = rules.row_size
        U = self.max_unfinished = rules.max_unfinished
        P = self.placements = len(g.placement_mask)
        self.ghosts: list[tuple[int, tuple[int, ...]]] = [
            (gs, take) for gs, tilings in sorted(getattr(rules, "ghost_tilings", {}).items()) for take in sorted(tilings)]
        sizes = [("pass", 1), ("take_piece", 1), ("take_puzzle", 2 * R), ("take_blind", 2), ("recycle", 2),
                 ("take_grid", GRID_SLOTS), ("upgrade", S * S), ("reward", S), ("level_up_step", S * S), ("done", 1),
                 ("master", 1), ("ghost", len(self.ghosts)), ("place", U * P)]
        self.segments: dict[str, tuple[int, int]] = {}
        at = 0
        for name, n in sizes:
            self.segments[name] = (at, n)
            at += n
        self.size = at
        self.DONE = self.segments["done"][0]
        self.MASTER = self.segments["master"][0]
        self.PLACE = self.segments["place"][0]
        self.STEP = self.segments["level_up_step"][0]
        self.GHOST = self.segments["ghost"][0]
        self.UPGRADE = self.segments["upgrade"][0]
        self.TAKE = self.segments["take_puzzle"][0]
        # Single actions: each index's engine action, decoded from its R14 JSON by the
        # ruleset's own decoders (None where these rules have no such action).
        self.actions: list = [None] * self.PLACE
        for index in range(self.PLACE):
            obj = self._simple_json(index)
            if obj is not None:
                try:
                    self.actions[index] = from_json(rules, obj)
                except IllegalAction:
                    pass
        self.simple: dict = {a: i for i, a in enumerate(self.actions) if a is not None}
        self._ghost_index = {(gs, take): self.GHOST + k for k, (gs, take) in enumerate(self.ghosts)}
        #: shapes held (one byte per shape) -> {card << CELL_BITS | filled cells: the mask
        #: bytes of that puzzle's placements (P bytes, or b"" when none fits)}; see
        #: :meth:`placement_run` (one int key per puzzle: no tuple to build and hash)
        self.CELL_BITS = max(max(rules.recess, default=1).bit_length(), 1)
        self.placement_runs = _Runs(self)
        #: the ids of a list of single actions -> (the actions, their mask bytes); see
        #: :meth:`simple_flags`
        self._lists: dict[tuple, tuple] = {}
        self._card_fits: dict[int, list] = {}
        #: whether masks may number the placements themselves: the rules list their
        #: actions with the base enumeration (which can leave the placements out), no
        #: filter prunes the list, and every variant generator declares that it leaves
        #: placements alone (``keeps_places``); otherwise the engine's full list is mapped
        self.own_placements = (rules.enumerate is legal_actions and not rules.action_filters
                               and all(getattr(g, "keeps_places", False) for g in rules.extra_generators))
        self._places: dict[tuple[int, int], Place] = {}  # (card, placement id) -> its Place, made once
        self.master_possible = Master in rules.handlers and rules.master_enabled

    # ------------------------------------------------------------------ layout
    def _simple_json(self, index: int) -> dict | None:
        seg, off = self.segment_of(index)
        S = self.shapes
        names = [s.name for s in self.rules.shapes]
        if seg == "pass":
            return {"type": "pass"}
        if seg == "take_piece":
            return {"type": "take_piece"}
        if seg == "take_puzzle":
            return {"type": "take_puzzle", "color": _COLORS[off // self.row_size], "slot": off % self.row_size}
        if seg == "take_blind":
            return {"type": "take_puzzle", "color": _COLORS[off], "blind": True}
        if seg == "recycle":
            return {"type": "recycle", "color": _COLORS[off]}
        if seg == "take_grid":
            return {"type": "take_puzzle", "slot": off}
        if seg == "upgrade":
            return {"type": "upgrade", "give": names[off // S], "take": names[off % S]}
        if seg == "reward":
            return {"type": "reward", "take": names[off]}
        if seg == "ghost":
            give, take = self.ghosts[off]
            return {"type": "ghost", "give": names[give], "take": [names[t] for t in take], "placements": []}
        return None

    def segment_of(self, index: int) -> tuple[str, int]:
        """``(segment name, offset in it)`` of ``index``; raises IndexError when out of range."""
        if not 0 <= index < self.size:
            raise IndexError(f"action index {index} is out of range 0-{self.size - 1}")
        for name, (start, n) in self.segments.items():
            if start <= index < start + n:
                return name, index - start
        raise IndexError(index)  # pragma: no cover - the segments cover the range

    def describe(self, index: int) -> str:
        """A short text for ``index``, every field named: ``take_puzzle color=white slot=0``,
        ``take_puzzle color=black blind``, ``take_puzzle grid slot=4``, ``upgrade give=O1
        take=I2``, ``place pos 1 L3 cells [[2,0],[3,0],[3,1]]``, ``done``."""
        seg, off = self.segment_of(index)
        names = [s.name for s in self.rules.shapes]
        if seg == "place":
            from engine.geometry import mask_to_cells
            pos, pid = divmod(off, self.placements)
            g = self.rules.geometry
            return f"place pos {pos} {names[g.placement_shape[pid]]} cells {mask_to_cells(g.placement_mask[pid])}"
        if seg == "level_up_step":
            return f"level_up_step {names[off // self.shapes]}->{names[off % self.shapes]}"
        if seg in ("done", "master"):
            return seg
        obj = self._simple_json(index)
        if not obj:
            return seg
        words = [obj["type"]] + (["grid"] if seg == "take_grid" else [])
        for key, value in obj.items():
            if key == "type" or value == []:
                continue
            if value is True:
                words.append(key)
            elif isinstance(value, list):
                words.append(f"{key}=[{','.join(str(v) for v in value)}]")
            else:
                words.append(f"{key}={value}")
        return " ".join(words)

    # ------------------------------------------------------------------ single actions
    def index_of(self, action, game) -> int:
        """The index of a single action or decision for the player to move in ``game``
        (a :class:`Place` is numbered by the position of its puzzle)."""
        if type(action) is Place:
            for k, pz in enumerate(game.players[game.seat].unfinished):
                if pz.card == action.puzzle:
                    return self.PLACE + k * self.placements + action.placement
            raise IllegalIndex("R3.5", "the placement names a puzzle the player does not hold")
        try:
            return self.simple[action]
        except KeyError:
            raise IllegalIndex("R14", f"the action space of rules {self.rules.spec.label()} has no index for "
                                      f"{type(action).__name__}") from None

    def flags(self, game, actions) -> bytearray:
        """The mask of the engine's single ``actions`` for the player to move, as one
        byte per index (the common action types are numbered from their fields, the
        others looked up). ``game`` may be None when no action is a placement."""
        P = self.placements
        base = ({pz.card: self.PLACE + k * P for k, pz in enumerate(game.players[game.seat].unfinished)}
                if game is not None else {})
        UP, S, TP, R = self.UPGRADE, self.shapes, self.TAKE, self.row_size
        simple = self.simple
        out = bytearray(self.size)
        try:
            for a in actions:
                t = type(a)
                if t is Place:
                    card, i = a
                    out[base[card] + i] = 1
                elif t is Upgrade:
                    give, i = a
                    out[UP + give * S + i] = 1
                elif t is TakePuzzle:
                    color, i = a
                    out[TP + color * R + i] = 1
                elif t is Pass:
                    out[0] = 1
                elif t is TakePiece:
                    out[1] = 1
                else:
                    out[simple[a]] = 1
        except KeyError:
            raise IllegalIndex("R14", f"the action space of rules {self.rules.spec.label()} has no index for "
                                      f"{type(a).__name__}") from None
        return out

    def simple_flags(self, actions) -> bytearray:
        """:meth:`flags` of a list with no placement (the listing of
        ``legal_actions(game, False)``), looked up by the identity of its actions: the
        rules list the same action objects (the takes, the upgrades of a supply, pass) again
        and again, and an entry holds its actions, so that while it is there no other
        object can have their ids. A list of new objects is numbered as :meth:`flags` does."""
        key = tuple(map(id, actions))
        known = self._lists.get(key)
        if known is not None:
            return bytearray(known[1])
        out = self.flags(None, actions)
        if len(self._lists) > 20_000:  # a few hundred in long random runs
            self._lists.clear()
        self._lists[key] = (tuple(actions), bytes(out))
        return out

    def place_of(self, index: int, game) -> Place | None:
        """The :class:`Place` a placement index names in ``game`` (None: no puzzle there)."""
        pos, pid = divmod(index - self.PLACE, self.placements)
        unfinished = game.players[game.seat].unfinished
        if pos >= len(unfinished):
            return None
        key = (unfinished[pos].card, pid)
        place = self._places.get(key)
        if place is None:
            place = self._places[key] = Place(*key)
        return place

    def indices(self, game, actions) -> list[int]:
        """The indices of the engine's single ``actions`` for the player to move (the
        hot path of every mask: the common action types by their fields, the rest by
        look-up)."""
        P = self.placements
        base = {pz.card: self.PLACE + k * P for k, pz in enumerate(game.players[game.seat].unfinished)}
        UP, S, TP, R = self.UPGRADE, self.shapes, self.TAKE, self.row_size
        simple = self.simple
        out = []
        append = out.append
        try:
            for a in actions:
                t = type(a)
                if t is Place:
                    append(base[a[0]] + a[1])
                elif t is Upgrade:
                    append(UP + a[0] * S + a[1])
                elif t is TakePuzzle:
                    append(TP + a[0] * R + a[1])
                elif t is Pass:
                    append(0)
                elif t is TakePiece:
                    append(1)
                else:
                    append(simple[a])
        except KeyError:
            raise IllegalIndex("R14", f"the action space of rules {self.rules.spec.label()} has no index for "
                                      f"{type(a).__name__}") from None
        return out

    def clear_caches(self) -> None:
        """Empty the caches (for benchmarks; they only speed things up)."""
        self.placement_runs.clear()
        self._card_fits.clear()
        self._lists.clear()

    def placement_run(self, card: int, filled: int, owned: bytes) -> bytes:
        """The ``P`` mask bytes of the placements on ``card`` with ``filled`` cells of the
        shapes flagged in ``owned`` (one byte per shape), b"" when none fits."""
        per_card = self._card_fits.get(card)
        if per_card is None:
            g = self.rules.geometry
            recess = self.rules.recess[card]
            per_card = self._card_fits[card] = [[(g.placement_mask[pid], pid) for pid in g.fits(s, recess)]
                                                for s in range(self.shapes)]
        run = bytearray(self.placements)
        found = False
        for s, have in enumerate(owned):
            if have:
                for mask, pid in per_card[s]:
                    if not mask & filled:
                        run[pid] = 1
                        found = True
        return bytes(run) if found else b""


class _Runs(dict):
    """Shapes held -> :class:`_RunsOf` those shapes, made on first use (bounded: all are
    emptied when their runs number more than 200,000)."""

    def __init__(self, space: ActionIndex):
        super().__init__()
        self.space = space
        self.runs = 0

    def __missing__(self, owned: bytes) -> "_RunsOf":
        runs = self[owned] = _RunsOf(self, owned)
        return runs

    def clear(self) -> None:
        super().clear()
        self.runs = 0


class _RunsOf(dict):
    """``card << CELL_BITS | filled cells`` -> :meth:`ActionIndex.placement_run` with the
    shapes ``owned``, made on first use."""

    def __init__(self, every: _Runs, owned: bytes):
        super().__init__()
        self.every, self.owned = every, owned

    def __missing__(self, key: int) -> bytes:
        every = self.every
        if every.runs > 200_000:
            every.clear()  # this dict too is dropped; the shapes' runs are made again when met
        every.runs += 1
        space = every.space
        bits = space.CELL_BITS
        run = self[key] = space.placement_run(key >> bits, key & ((1 << bits) - 1), self.owned)
        return run


@lru_cache(maxsize=64)
def action_index(rules) -> ActionIndex:
    """The shared :class:`ActionIndex` of a compiled ruleset."""
    return ActionIndex(rules)


class Chooser:
    """The index-level view of one game for the player to move: the mask, and the sequence
    under way (master action, ghost placements, level-up steps, finishing touches).

    :meth:`play` takes an index and returns the engine action once a move is complete
    (None while a sequence goes on); the caller applies it with ``game.apply`` and calls
    :meth:`reset`. :meth:`forced` gives a move that needs no choice.
    """

    def __init__(self, game, space: ActionIndex | None = None):
        self.game = game
        self.space = space or action_index(game.rules)
        self._dirty = True
        self.reset()

    def reset(self) -> None:
        """Forget the sequence under way (after the engine applied a move)."""
        phase = self.game.phase
        self.mode = FINISHING if phase == FINISH else LEVELING if phase == LEVEL_UP else NONE
        self._mask = None
        self._only_done = False
        if not self._dirty:
            return
        self._dirty = False
        self.chosen: list[Place] = []
        self.used = [0] * self.space.shapes
        self.taken = [0] * self.space.shapes      # ghost: pieces just taken
        self.give = -1                            # ghost: the ghost returned
        self.ghost_take: tuple[int, ...] = ()
        self.steps: list[tuple[int, int]] = []    # level-up steps so far
        self.positions: set[int] = set()          # puzzles used by this master/ghost action
        self.pending_cells: dict[int, int] = {}   # position -> cells placed in this sequence
        self._mask: bytearray | None = None
        self._only_done = False

    def clone(self, game) -> "Chooser":
        """A copy of this chooser, sequence under way included, that follows ``game`` (a
        clone of this chooser's game, in the same state)."""
        other = object.__new__(Chooser)
        other.__dict__.update(self.__dict__)
        other.game = game
        other.chosen = list(self.chosen)
        other.used = list(self.used)
        other.taken = list(self.taken)
        other.steps = list(self.steps)
        other.positions = set(self.positions)
        other.pending_cells = dict(self.pending_cells)
        other._mask = None if self._mask is None else bytearray(self._mask)
        return other

    # ------------------------------------------------------------------ masks
    def _state(self) -> bytearray:
        if self._mask is None:
            self._mask, self._only_done = self._compute()
        return self._mask

    def legal_indices(self) -> np.ndarray:
        """The legal indices now, sorted."""
        return np.frombuffer(self._state(), dtype=np.bool_).nonzero()[0]  # bytes are 0 or 1

    def mask(self) -> np.ndarray:
        """The legal-action mask now: int8, 1 where the index is legal (a new array)."""
        flags = self._mask
        if flags is None:
            flags = self._state()
        return _frombuffer(flags[:], _INT8)  # a copy of the bytes, seen by numpy as they are (writable)

    def mask_view(self) -> np.ndarray:
        """The mask now as the chooser's own bytes, not copied: read it before the next
        index is played, and never write it."""
        return _frombuffer(self._state(), _INT8)

    def _compute(self) -> tuple[bytearray, bool]:
        """The mask (one byte per index), and whether ``done`` is the only legal index."""
        game = self.game
        space = self.space
        mode = self.mode
        if game.phase == ACTION and mode == NONE:
            if not space.own_placements:
                flags = space.flags(game, game.rules.enumerate(game))
                if space.master_possible and not game.master_used and flags.find(1, space.PLACE) >= 0:
                    flags[space.MASTER] = 1
                return flags, False
            # The engine lists everything but the placements; each puzzle's placements
            # come as one prepared run of bytes, per (card, filled cells, shapes held).
            actions = legal_actions(game, False)
            known = space._lists.get(tuple(map(id, actions)))  # simple_flags' look-up, in line
            flags = bytearray(known[1]) if known is not None else space.simple_flags(actions)
            p = game.players[game.seat]
            if p.unfinished:  # _mark_placements with no sequence under way, in line
                runs, P, bits = space.placement_runs[bytes(p.supply).translate(_ANY)], space.placements, space.CELL_BITS
                at = space.PLACE
                found = False
                for pz in p.unfinished:
                    run = runs[pz.card << bits | pz.filled]
                    if run:  # b"" when nothing fits
                        flags[at:at + P] = run
                        found = True
                    at += P
                if found and space.master_possible and not game.master_used:
                    flags[space.MASTER] = 1
            return flags, False
        flags = bytearray(space.size)
        if game.phase == REWARD:
            for a in game.legal_actions():
                flags[space.simple[a]] = 1
            return flags, False
        if mode == LEVELING:
            idx = self._level_up_indices()
            for i in idx:
                flags[i] = 1
            return flags, idx == [space.DONE]
        if game.phase not in (ACTION, FINISH):
            return flags, False
        p = game.players[game.seat]
        avail = ([t - u for t, u in zip(self.taken, self.used)] if mode == GHOST
                 else [s - u for s, u in zip(p.supply, self.used)])
        placed = self._mark_placements(flags, bytes(n > 0 for n in avail))
        done = mode in (FINISHING, GHOST) or bool(self.chosen)
        if done:
            flags[space.DONE] = 1
        return flags, done and not placed

    def _mark_placements(self, flags: bytearray, owned: bytes) -> bool:
        """Mark in ``flags`` the placements of the shapes flagged in ``owned`` on the
        mover's unfinished puzzles, less the cells and puzzles the sequence under way has
        used; True if there is any."""
        space = self.space
        runs, P, bits = space.placement_runs[owned], space.placements, space.CELL_BITS
        pending, used = self.pending_cells, self.positions
        at = space.PLACE
        found = False
        for k, pz in enumerate(self.game.players[self.game.seat].unfinished):
            if k not in used:
                run = runs[pz.card << bits | pz.filled | pending.get(k, 0)]
                if run:  # b"" when nothing fits
                    flags[at:at + P] = run
                    found = True
            at += P
        return found

    def _level_up_indices(self) -> list[int]:
        """Steps that the engine accepts after the steps so far (tried on a copy of the
        game: level-up decisions are rare), then ``done``."""
        game = self.game
        space = self.space
        S = space.shapes
        limit = game.decision["steps"]
        out = []
        if len(self.steps) < limit:
            supply = game.players[game.seat].supply[:]
            for give, take in self.steps:
                supply[give] -= 1
                supply[take] += 1
            for give in range(S):
                if supply[give] <= 0:
                    continue
                for take in range(S):
                    if take != give and accepted(game, LevelUp(tuple(self.steps) + ((give, take),))):
                        out.append(space.STEP + give * S + take)
        out.append(space.DONE)
        return sorted(out)

    # ------------------------------------------------------------------ playing
    def is_legal(self, index) -> bool:
        """Whether ``index`` is legal now."""
        return 0 <= index < self.space.size and self._state()[index] == 1

    def play(self, index):
        """Take ``index``: the engine action when a move is complete, else None.

        Raises :class:`IllegalIndex` (with a sentence) if the mask does not allow it.
        """
        if type(index) is not int:
            index = int(index)
        flags = self._mask if self._mask is not None else self._state()
        if not (0 <= index < len(flags) and flags[index] == 1):
            try:
                what = self.space.describe(index)
            except IndexError as exc:
                raise IllegalIndex("R14", str(exc)) from None
            raise IllegalIndex("R14", f"index {index} ({what}) is not legal now")
        space = self.space
        game = self.game
        self._mask = None
        if self.mode == NONE:
            if index < space.DONE:
                return space.actions[index]
            if index >= space.PLACE:  # space.place_of, in line (the index is legal: its puzzle is there)
                pos, pid = divmod(index - space.PLACE, space.placements)
                key = (game.players[game.seat].unfinished[pos].card, pid)
                place = space._places.get(key)
                return place if place is not None else space.place_of(index, game)
        self._dirty = True
        if self.mode == NONE:
            if index == space.MASTER:
                self.mode = MASTER
                return None
            if space.GHOST <= index < space.PLACE:
                give, take = space.ghosts[index - space.GHOST]
                self.mode, self.give, self.ghost_take = GHOST, give, take
                for t in take:
                    self.taken[t] += 1
                return self._commit_if_forced()
        if index == space.DONE:
            return self._commit()
        if self.mode == LEVELING:
            S = space.shapes
            off = index - space.STEP
            self.steps.append(divmod(off, S))
            return self._commit_if_forced()
        place = space.place_of(index, game)
        pos = (index - space.PLACE) // space.placements
        g = game.rules.geometry
        self.chosen.append(place)
        self.used[g.placement_shape[place.placement]] += 1
        self.pending_cells[pos] = self.pending_cells.get(pos, 0) | g.placement_mask[place.placement]
        if self.mode in (MASTER, GHOST):
            self.positions.add(pos)
        return self._commit_if_forced()

    def _commit_if_forced(self):
        self._state()
        return self._commit() if self._only_done else None

    def _commit(self):
        chosen = tuple(self.chosen)
        if self.mode == MASTER:
            return Master(chosen)
        if self.mode == FINISHING:
            return Finish(chosen)
        if self.mode == LEVELING:
            return LevelUp(tuple(self.steps))
        if self.mode == GHOST:
            ghost = self.space.actions[self.space._ghost_index[(self.give, self.ghost_take)]]
            return ghost._replace(placements=chosen)
        raise IllegalIndex("R14", "done ends a sequence, and none is under way")  # pragma: no cover

    def forced(self):
        """The move to make without asking (only ``done`` is legal), or None."""
        if self.game.is_over:
            return None
        self._state()
        return self._commit() if self._only_done else None

    # ------------------------------------------------------------------ JSON
    def indices_of(self, action) -> list[int]:
        """The index sequence that plays the engine ``action`` from the current state
        (single actions: one index; master, ghost, level-up and finish: a sequence, the
        final ``done`` left out when it is implied). Leaves the chooser reset."""
        space = self.space
        self.reset()
        kind = type(action)
        out: list[int] = []
        try:
            if kind is Master:
                out.append(space.MASTER)
                out += self._feed(space.MASTER, action.placements)
            elif kind is Finish:
                out += self._feed(None, action.placements)
            elif kind is LevelUp:
                S = space.shapes
                seq = [space.STEP + g * S + t for g, t in action.steps]
                out += self._feed_indices(seq)
            elif hasattr(action, "placements") and hasattr(action, "give"):  # the ghost action
                first = space._ghost_index.get((action.give, tuple(sorted(action.take))))
                if first is None:
                    raise IllegalIndex("R11.4", "no index for this ghost action")
                out.append(first)
                out += self._feed(first, action.placements)
            else:
                return [space.index_of(action, self.game)]
        finally:
            self.reset()
        return out

    def _feed(self, first, placements) -> list[int]:
        if first is not None and self.play(first) is not None:
            return []
        seq = [self.space.index_of(p, self.game) for p in placements]
        return self._feed_indices(seq)

    def _feed_indices(self, seq: list[int]) -> list[int]:
        out = []
        for i in seq:
            out.append(i)
            if self.play(i) is not None:
                return out
        out.append(self.space.DONE)
        return out

    def to_json(self, action) -> dict:
        """R14 JSON of an engine action under these rules."""
        return to_json(self.game.rules, action)


def accepted(game, action) -> bool:
    """Whether the engine accepts ``action`` now (tried on a copy of ``game``)."""
    trial = game.clone()
    try:
        trial.apply(action)
    except IllegalAction:
        return False
    return True
