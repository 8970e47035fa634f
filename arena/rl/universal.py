"""One observation shape and one action index for every rule set and seat count.

The native arrays of :mod:`arena.rl.observe` and :mod:`arena.rl.spaces` fit one rule set:
their size changes with the shapes in play (9, or 12 with ghost), the solo block, the
number of seats, and their values go up to the hundreds. ``obs="universal"`` (both
environments, and policies that say ``observation = "universal"`` to the policy bot)
maps them into one layout that holds them all:

- the **observation** has :data:`OBS_SIZE` float32 values in [-1, 1], whatever the rules
  (base, revised, open scores, ghost, solo, no-master) and the seats (1-4). It is the
  native layout of :mod:`arena.rl.observe` built for the largest table — the 12 shapes
  of ``ghost`` (``O1 I2 I3 L3 I4 O4 T4 L4 Z4 P5 U5 X5``), 4 row slots per colour, 4
  unfinished puzzles, the solo block, 4 seats — with each native value placed at the
  position of the same quantity (same block, same shape by name, same seat from the
  observer, same slot and cell) and divided by its scale (:data:`SCALES`, then clipped to
  [-1, 1]). Positions the rules do not have (the ghost shapes under base rules, seats 3
  and 4 of a two-seat game, the solo block outside solo) stay 0. :func:`layout` lists
  the blocks with their offsets;
- the **action index** has :data:`ACTION_SIZE` indices: the segments of
  :mod:`arena.rl.spaces` for the same largest table (``upgrade`` 12 x 12, the 39 ghost
  actions, 4 x 540 placements...). An index names the same action under every rule set
  (shapes by name, placements by shape and cells), and the mask allows only what the
  rules allow now, so a policy moves between tables unchanged.

Rule parameters beyond the largest table (more than 4 row slots or unfinished puzzles)
have no universal layout: asking for it raises :class:`~engine.errors.ParameterError`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine import RuleSpec, compile_rules
from engine.errors import ParameterError

from .observe import CELLS, observer, per_rules
from .spaces import GRID_SLOTS, IllegalIndex, action_index

#: the largest table: its shapes come from the ghost rules
MAX_SEATS = 4
MAX_ROW = 4
MAX_UNFINISHED = 4

#: what one native unit is worth, per kind of value (the universal value is native / scale)
SCALES = {
    "actions_left": 4.0, "round": 32.0, "final_round": 32.0, "decks": 60.0, "reserve": 20.0,
    "pending_supply": 5.0, "level_up_steps": 2.0, "lock": 4.0, "automaton_supply": 20.0,
    "automaton_score": 50.0, "supply": 10.0, "completed": 10.0, "score": 50.0, "black_after_end": 4.0,
    "points": 5.0,
}

_TURN = ("actions_left", "master_used", "end_triggered", "round", "final_round", "to_move")
_SEAT = ("completed", "score", "score_visible", "forfeited", "black_after_end")


def _observation_keys(shapes, R, U, n, solo) -> list[tuple[tuple, float]]:
    """``(key, scale)`` of every position of the native layout with these sizes, in the
    order of :mod:`arena.rl.observe` (a key names the quantity, whatever the rules)."""
    out: list[tuple[tuple, float]] = []
    add = out.append
    for i in range(4):
        add((("phase", i), 1.0))
    for i in range(5):
        add((("mode", i), 1.0))
    for name in _TURN:
        add((("turn", name), SCALES.get(name, 1.0)))
    for i in range(2):
        add((("decks", i), SCALES["decks"]))
    for block, scale in (("reserve", SCALES["reserve"]), ("pending_supply", SCALES["pending_supply"]),
                         ("reward_options", 1.0)):
        for s in shapes:
            add(((block, s), scale))
    add((("level_up_steps",), SCALES["level_up_steps"]))
    if solo:
        for i in range(3):
            add((("solo", "lock", i), SCALES["lock"]))
        add((("solo", "automaton_supply"), SCALES["automaton_supply"]))
        add((("solo", "automaton_score"), SCALES["automaton_score"]))
    for j in range(n):
        for s in shapes:
            add((("seats", j, "supply", s), SCALES["supply"]))
        for name in _SEAT:
            add((("seats", j, name), SCALES.get(name, 1.0)))
    slots = [("row", k) for k in range(2 * R)] + ([("grid", k) for k in range(GRID_SLOTS)] if solo else [])
    slots += [("held", j, k) for j in range(n) for k in range(U)]
    for slot in slots:
        add((("cards", slot, "present"), 1.0))
        add((("cards", slot, "black"), 1.0))
        add((("cards", slot, "points"), SCALES["points"]))
        for s in shapes:
            add((("cards", slot, "reward", s), 1.0))
        add((("cards", slot, "+1"), 1.0))
        add((("cards", slot, "+2"), 1.0))
        for c in range(CELLS):
            add((("cards", slot, "cell", c), 1.0))
    for j in range(n):
        for k in range(U):
            for c in range(CELLS):
                add((("covered", j, k, c), 1.0))
    for k in range(U):
        for c in range(CELLS + 1):
            add((("pending", k, c), 1.0))
    return out


def _action_keys(space) -> list[tuple]:
    """The key of every index of a native :class:`~arena.rl.spaces.ActionIndex`."""
    names = [s.name for s in space.rules.shapes]
    g = space.rules.geometry
    S = space.shapes
    out: list[tuple] = []
    for seg, (start, size) in space.segments.items():
        for off in range(size):
            if seg == "upgrade" or seg == "level_up_step":
                out.append((seg, names[off // S], names[off % S]))
            elif seg == "reward":
                out.append((seg, names[off]))
            elif seg == "ghost":
                give, take = space.ghosts[off]
                out.append((seg, names[give], tuple(names[t] for t in take)))
            elif seg == "place":
                pos, pid = divmod(off, space.placements)
                out.append((seg, pos, names[g.placement_shape[pid]], g.placement_mask[pid]))
            elif seg == "take_puzzle":
                out.append((seg, off // space.row_size, off % space.row_size))
            else:
                out.append((seg, off))
    return out


class _Layout:
    """The universal layout: the keys of the largest table and their positions."""

    def __init__(self):
        largest = compile_rules(RuleSpec.make(["ghost"], {"max_unfinished": MAX_UNFINISHED, "row_size": MAX_ROW}),
                                MAX_SEATS)
        self.shapes = [s.name for s in largest.shapes]
        obs_keys = _observation_keys(self.shapes, MAX_ROW, MAX_UNFINISHED, MAX_SEATS, True)
        self.obs_at = {k: i for i, (k, _) in enumerate(obs_keys)}
        self.obs_size = len(obs_keys)
        self.blocks: list[dict] = []
        for i, (k, _) in enumerate(obs_keys):
            if not self.blocks or self.blocks[-1]["name"] != k[0]:
                self.blocks.append({"name": k[0], "offset": i, "size": 0})
            self.blocks[-1]["size"] += 1
        space = action_index(largest)
        act_keys = _action_keys(space)
        self.act_at = {k: i for i, k in enumerate(act_keys)}
        assert len(self.act_at) == len(act_keys)  # every index its own key
        self.act_size = len(act_keys)
        self.segments = dict(space.segments)


@lru_cache(maxsize=1)
def _layout() -> _Layout:
    return _Layout()


def layout() -> list[dict]:
    """The blocks of the universal observation: name, offset, size (see :mod:`arena.rl.observe`
    for what each holds; values are divided by :data:`SCALES` and clipped to [-1, 1])."""
    return [dict(b) for b in _layout().blocks]


def action_segments() -> dict[str, tuple[int, int]]:
    """The segments of the universal action index: name -> (first index, size)."""
    return dict(_layout().segments)


class Universal:
    """The maps between one ruleset's native arrays and the universal ones."""

    def __init__(self, rules):
        self.rules = rules
        lay = _layout()
        ob = observer(rules)
        space = action_index(rules)
        if rules.row_size > MAX_ROW or rules.max_unfinished > MAX_UNFINISHED or rules.players > MAX_SEATS:
            raise ParameterError(f"the universal observation holds at most {MAX_ROW} row slots, {MAX_UNFINISHED} "
                                 f"unfinished puzzles and {MAX_SEATS} seats; these rules have {rules.row_size}, "
                                 f"{rules.max_unfinished} and {rules.players}")
        keys = _observation_keys([s.name for s in rules.shapes], ob.R, ob.U, ob.n, ob.solo)
        assert len(keys) == ob.size, "the universal keys follow the native layout"
        try:
            self.obs_pos = np.array([lay.obs_at[k] for k, _ in keys], dtype=np.intp)
            self.act_pos = np.array([lay.act_at[k] for k in _action_keys(space)], dtype=np.intp)
        except KeyError as exc:
            raise ParameterError(f"the universal layout has no place for {exc.args[0]!r} of these rules") from None
        self.obs_scale = np.array([1.0 / s for _, s in keys], dtype=np.float32)
        self.obs_size = lay.obs_size
        self.act_size = lay.act_size
        self.native = np.full(lay.act_size, -1, dtype=np.int64)
        self.native[self.act_pos] = np.arange(space.size)
        self.native_list = self.native.tolist()
        self.low = np.full(lay.obs_size, -1.0, np.float32)
        self.high = np.full(lay.obs_size, 1.0, np.float32)
        self._low, self._high = self.low[:ob.size], self.high[:ob.size]  # the bounds, one per native value

    def observation(self, native: np.ndarray) -> np.ndarray:
        """The universal array of a native observation array (a new array; ``native`` is
        only read)."""
        scaled = native * self.obs_scale
        # clipped before it is spread (the zeros between stay zeros): the ufuncs with
        # bounds as arrays, where np.clip spent a microsecond converting its scalars
        np.minimum(scaled, self._high, out=scaled)
        np.maximum(scaled, self._low, out=scaled)
        out = np.zeros(self.obs_size, np.float32)
        out[self.obs_pos] = scaled
        return out

    def mask(self, native: np.ndarray) -> np.ndarray:
        """The universal mask of a native mask (int8)."""
        out = np.zeros(self.act_size, np.int8)
        # only the few nonzero entries are moved (found on a boolean view), not all of them
        legal = native.view(np.bool_).nonzero()[0]
        out[self.act_pos[legal]] = native[legal]
        return out

    def native_index(self, index: int) -> int:
        """The native index of a universal one; :class:`IllegalIndex` when these rules have none."""
        if not 0 <= index < self.act_size:
            raise IllegalIndex("R14", f"action index {index} is out of range 0-{self.act_size - 1}")
        native = self.native_list[index]
        if native < 0:
            raise IllegalIndex("R14", f"index {index} names an action these rules do not have")
        return native


_UNIVERSAL: dict = {}


def universal(rules) -> Universal:
    """The shared :class:`Universal` maps of a compiled ruleset."""
    return per_rules(_UNIVERSAL, Universal, rules)


def obs_size() -> int:
    """The size of every universal observation."""
    return _layout().obs_size


def action_size() -> int:
    """The size of every universal action index."""
    return _layout().act_size
