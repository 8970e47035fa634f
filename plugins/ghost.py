"""``ghost`` — the Ghost Piece expansion (R11).

- **Components**: three ghost shapes of level 5 (``P5 U5 X5``), ``ghost.reserve_per_shape``
  of each (default 10); the expansion's 12 white puzzles join the white deck and its 12
  black puzzles join the pool the black deck is drawn from (the deck size per player
  count is unchanged). The card data (``engine/cards/ghost.yaml``) is a stand-in set: the
  retail cards' shapes and points are not published.
- **Getting a ghost** only from the expansion's puzzles: as a piece reward, or by a
  level-up reward. Neither a regular upgrade nor an exchange ever takes a level-5 piece;
  a ghost may still be exchanged down for a piece of a lower level (R3.4).
- **Level-up rewards** ``+1`` / ``+2`` (R11.3): a ``level_up`` decision. Each step upgrades
  one piece of the supply to the lowest higher level in stock, up to level 5 (so a level-4
  piece may become a ghost); ``+2`` is two steps, on one piece twice or on two pieces once
  each; pieces just returned from the completed puzzle count as supply; any step may be
  declined (``{"type": "level_up", "steps": []}``). When no step is possible the reward
  is skipped without asking.
- **ghost** (new action, R11.4): ``{"type": "ghost", "give": "P5", "take": ["O4", "O1"],
  "placements": [...]}`` — return a ghost from the supply and take two or more pieces of
  levels 1–4 that together tile exactly the ghost's shape; any of them may be placed at
  once on the unfinished puzzles, at most one per puzzle; the rest go to the supply. The
  tiling check is an exact cover of the ghost's cells. ``legal_actions()`` lists the ghost
  actions without placements (like the master action, the ones with placements are
  validated when given). Not possible in the finishing touches.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.actions import action, ACTION, LEVEL_UP, LevelUp, Place
from engine.base_rules import _find_puzzle
from engine.codec import check_fields, get_list, get_shape, parse_placements, placement_json
from engine.errors import IllegalAction, ParameterError
from engine.geometry import cells_to_mask
from engine.hookspecs import hookimpl
from engine.rules import MAX_RESERVE, ParamSpec
from engine.variants import Variant

NAME = "ghost"
GHOST_LEVEL = 5
#: reserve counts above 5 never change which tilings are in stock (a ghost has 5 cells)
_CLIP = bytes(min(i, 5) for i in range(256))


@action
class Ghost(NamedTuple):
    """R11.4: return ghost ``give``, take the shapes ``take`` (sorted), place some at once."""

    give: int
    take: tuple[int, ...]
    placements: tuple[Place, ...] = ()


def _reserve_param(value, players):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RESERVE:
        raise ParameterError(f"R13: parameter 'ghost.reserve_per_shape' must be a whole number from 0 to {MAX_RESERVE}, "
                             f"got {value!r}")
    return value


@hookimpl
def arena_rules_variants(register):
    register(Variant(NAME, "Ghost Piece expansion: level-5 ghost pieces, level-up rewards, the ghost action",
                     params=(ParamSpec("ghost.reserve_per_shape", 10, "ghost pieces of each shape in the reserve (R11.1)",
                                       _reserve_param),)))


@hookimpl
def arena_rules_card_sets(variant, ruleset_params):
    return ["ghost"] if variant == NAME else None


@hookimpl
def arena_rules_configure(variant, ruleset):
    if variant != NAME:
        return
    rs = ruleset
    rs.ghost_shapes = tuple(i for i, s in enumerate(rs.shapes) if s.ghost)
    rs.ghost_tilings = {g: tilings(rs.geometry, rs.shapes, g) for g in rs.ghost_shapes}
    rs.ghost_cache = {}
    rs.step_cache = {}
    rs.level_up_cache = {}
    rs.caches.extend((rs.ghost_cache, rs.step_cache, rs.level_up_cache))
    rs.handlers[Ghost] = (ACTION, apply_ghost)
    rs.handlers[LevelUp] = (LEVEL_UP, apply_level_up)
    rs.decision_options[LEVEL_UP] = level_up_options
    rs.decoders["ghost"] = decode_ghost
    rs.encoders[Ghost] = lambda rules, a: {
        "type": "ghost", "give": rules.shapes[a.give].name, "take": [rules.shapes[t].name for t in a.take],
        "placements": [placement_json(rules, p) for p in a.placements]}
    rs.extra_generators.append(generate)
    rs.setup_hooks.append(setup_reserve)
    rs.level_up_steps = {card: int(p.reward[1]) for card, p in enumerate(rs.puzzles) if p.reward in ("+1", "+2")}
    previous = rs.reward
    rs.reward = lambda game, player, card: level_up_reward(game, player, card, previous)


def setup_reserve(game, rng) -> None:
    n = game.rules.params["ghost.reserve_per_shape"]
    for g in game.rules.ghost_shapes:
        game.reserve[g] = n


def tilings(geometry, shapes, ghost: int) -> frozenset[tuple[int, ...]]:
    """Every multiset (sorted tuple) of level 1-4 shapes, two or more, that tiles ``ghost``."""
    target = cells_to_mask(shapes[ghost].cells)
    usable = [s for s, sh in enumerate(shapes) if sh.level <= 4]
    masks = geometry.placement_mask
    found: set[tuple[int, ...]] = set()

    def rec(empty, chosen):
        if not empty:
            if len(chosen) >= 2:
                found.add(tuple(sorted(chosen)))
            return
        cell = (empty & -empty).bit_length() - 1
        for s in usable:
            for pid in geometry.anchor[s][cell]:
                m = masks[pid]
                if m & empty == m:
                    chosen.append(s)
                    rec(empty & ~m, chosen)
                    chosen.pop()

    rec(target, [])
    return frozenset(found)


# ---------------------------------------------------------------- the ghost action
def decode_ghost(rules, obj):
    check_fields(obj, ("type", "give", "take", "placements"), "ghost")
    give = get_shape(rules, obj, "give", "ghost")
    take = []
    for i, name in enumerate(get_list(obj, "take", "ghost")):
        take.append(get_shape(rules, {"take": name}, "take", f"ghost take {i}"))
    placements = parse_placements(rules, obj, "ghost") if "placements" in obj else ()
    return Ghost(give, tuple(sorted(take)), placements)


def apply_ghost(game, a: Ghost) -> None:
    rs = game.rules
    p = game.players[game.seat]
    if a.give not in rs.ghost_shapes:
        raise IllegalAction("R11.4", f"{rs.shapes[a.give].name} is not a ghost piece")
    if p.supply[a.give] <= 0:
        raise IllegalAction("R11.4", f"you have no {rs.shapes[a.give].name} in your supply")
    take = tuple(sorted(a.take))
    if take not in rs.ghost_tilings[a.give]:
        names = " ".join(rs.shapes[t].name for t in take) or "nothing"
        raise IllegalAction("R11.4", f"{names} do not tile the shape of {rs.shapes[a.give].name} "
                                     f"(two or more pieces of levels 1-4 are needed)")
    need: dict[int, int] = {}
    for t in take:
        need[t] = need.get(t, 0) + 1
    for t, n in need.items():
        if game.reserve[t] < n:
            raise IllegalAction("R11.4", f"the reserve has only {game.reserve[t]} {rs.shapes[t].name}")
    g = rs.geometry
    used: dict[int, int] = {}
    seen = set()
    targets = []
    known = len(g.placement_mask)
    for place in a.placements:
        if not isinstance(place, Place):
            raise IllegalAction("R14", "each placement of a ghost action must be a placement")
        pz = _find_puzzle(p, place.puzzle, rs)
        # a negative index would silently name another placement (R11.5: ordinary placements)
        if type(place.placement) is not int or not 0 <= place.placement < known:
            raise IllegalAction("R14", f"unknown placement {place.placement!r}")
        if place.puzzle in seen:
            raise IllegalAction("R11.4", f"at most one piece per puzzle, {rs.puzzles[place.puzzle].id} is named twice")
        seen.add(place.puzzle)
        s = g.placement_shape[place.placement]
        used[s] = used.get(s, 0) + 1
        if used[s] > need.get(s, 0):
            raise IllegalAction("R11.4", f"only the pieces just taken may be placed; {rs.shapes[s].name} is not among them")
        m = g.placement_mask[place.placement]
        if m & ~rs.recess[pz.card] or m & pz.filled:
            raise IllegalAction("R3.5", f"the piece must cover only empty recess cells of {rs.puzzles[pz.card].id}")
        targets.append((pz, place.placement, m, s))
    p.supply[a.give] -= 1
    game.reserve[a.give] += 1
    for t in take:
        game.reserve[t] -= 1
        p.supply[t] += 1
    for pz, pid, m, s in targets:
        p.supply[s] -= 1
        pz.filled |= m
        pz.placed.append(pid)
    game.action_done(bool(targets))


def generate(game, out) -> None:
    rs = game.rules
    supply = game.players[game.seat].supply
    for gshape in rs.ghost_shapes:
        if supply[gshape]:
            key = (gshape, bytes(game.reserve).translate(_CLIP))
            acts = rs.ghost_cache.get(key)
            if acts is None:
                reserve = game.reserve
                acts = tuple(Ghost(gshape, take, ()) for take in sorted(rs.ghost_tilings[gshape])
                             if all(reserve[t] >= take.count(t) for t in set(take)))
                if len(rs.ghost_cache) > 100_000:
                    rs.ghost_cache.clear()
                rs.ghost_cache[key] = acts
            out.extend(acts)


generate.keeps_places = True  # adds and prunes other actions, never a placement (see engine.rules)


# ---------------------------------------------------------------- level-up rewards
def step_targets(rs, reserve, give: int) -> tuple[int, ...]:
    """One level-up step from ``give``: shapes of the lowest higher level in stock, up to 5."""
    key = (give, bytes(reserve))
    hit = rs.step_cache.get(key)
    if hit is None:
        level = rs.shape_level
        higher = [level[s] for s in range(len(level)) if reserve[s] > 0 and level[give] < level[s] <= GHOST_LEVEL]
        hit = () if not higher else tuple(s for s in range(len(level)) if reserve[s] > 0 and level[s] == min(higher))
        if len(rs.step_cache) > 100_000:
            rs.step_cache.clear()
        rs.step_cache[key] = hit
    return hit


def level_up_reward(game, player, card, previous) -> bool:
    rs = game.rules
    steps = rs.level_up_steps.get(card)
    if steps is None:
        return previous(game, player, card)
    reserve = game.reserve
    if not any(n and step_targets(rs, reserve, s) for s, n in enumerate(player.supply)):
        return True  # no step is possible: nothing to decide
    game.decision = {"type": "level_up", "puzzle": rs.puzzles[card].id, "steps": steps}
    game.phase = LEVEL_UP
    return False


def level_up_options(game) -> list:
    """Every sequence of up to ``steps`` level-up steps, the empty one first."""
    rs = game.rules
    n = game.decision["steps"]
    key = (n, bytes(game.players[game.seat].supply), bytes(game.reserve))
    hit = rs.level_up_cache.get(key)
    if hit is None:
        hit = _level_up_options(rs, n, game.players[game.seat].supply[:], game.reserve[:])
        if len(rs.level_up_cache) > 20_000:
            rs.level_up_cache.clear()
        rs.level_up_cache[key] = hit
    return list(hit)


def _targets_by_level(rs, reserve) -> dict[int, tuple[int, ...]]:
    """For each level, the shapes one level-up step reaches with this stock (R11.3)."""
    level = rs.shape_level
    stock: dict[int, list[int]] = {}
    for s, count in enumerate(reserve):
        if count > 0 and level[s] <= GHOST_LEVEL:
            stock.setdefault(level[s], []).append(s)
    levels = sorted(stock)
    table = {}
    for lv in range(1, GHOST_LEVEL + 1):
        nxt = next((x for x in levels if x > lv), None)
        table[lv] = tuple(stock[nxt]) if nxt is not None else ()
    return table


def _level_up_options(rs, n, supply, reserve) -> tuple:
    level = rs.shape_level
    out = [LevelUp(())]
    seen = {()}

    def rec(prefix):
        if len(prefix) == n:
            return
        table = _targets_by_level(rs, reserve)
        for give in range(len(supply)):
            if supply[give] <= 0:
                continue
            for take in table[level[give]]:
                steps = prefix + ((give, take),)
                key = tuple(sorted(steps))
                if key in seen:
                    continue
                seen.add(key)
                out.append(LevelUp(steps))
                supply[give] -= 1; reserve[give] += 1; reserve[take] -= 1; supply[take] += 1
                rec(steps)
                supply[give] += 1; reserve[give] -= 1; reserve[take] += 1; supply[take] -= 1

    rec(())
    return tuple(out)


def apply_level_up(game, a: LevelUp) -> None:
    rs = game.rules
    n = game.decision["steps"]
    if len(a.steps) > n:
        raise IllegalAction("R11.3", f"this reward allows at most {n} step{'s' if n > 1 else ''}")
    p = game.players[game.seat]
    supply = p.supply[:]
    reserve = game.reserve[:]
    for give, take in a.steps:
        if not (0 <= give < len(supply) and 0 <= take < len(supply)):
            raise IllegalAction("R14", "level_up names an unknown piece")
        if supply[give] <= 0:
            raise IllegalAction("R11.3", f"you have no {rs.shapes[give].name} to upgrade")
        if take not in step_targets(rs, reserve, give):
            raise IllegalAction("R11.3", f"a level-up step from {rs.shapes[give].name} must take a piece of the "
                                         f"lowest higher level in stock (up to level 5), not {rs.shapes[take].name}")
        supply[give] -= 1; reserve[give] += 1; reserve[take] -= 1; supply[take] += 1
    p.supply[:] = supply
    game.reserve[:] = reserve
    game.decision_done()
