"""The base game's actions (R3), rewards (R4), setup (R1) and finishing touches (R6).

:func:`install` fills a fresh :class:`~engine.rules.Ruleset` with these; variants then
replace or extend what they change. Every handler validates first and raises
:class:`~engine.errors.IllegalAction` (citing the rule) before it mutates anything.

The legal-action enumerator is the engine's inner loop. It reuses precomputed action
tuples: takes per row slot, upgrades per (owned shapes, stocked shapes), and placements per
(puzzle, filled cells, owned shapes); a decision's listing is a handful of dict look-ups.
"""

from __future__ import annotations

import itertools

from . import codec
from .actions import (ACTION, BLACK, FINISH, OVER, PASS, TAKE_PIECE, WHITE, Finish, Master, Pass, Place, TakePiece,
                      TakePuzzle, Upgrade)
from .deal import check_deal
from .errors import IllegalAction
from .belongings import PuzzleInPlay

_CACHE_LIMIT = 400_000
_SHARED: dict = {}


def install(rs) -> None:
    """Give ``rs`` the base rules."""
    rs.handlers.update({
        TakePuzzle: (ACTION, apply_take_puzzle),
        TakePiece: (ACTION, apply_take_piece),
        Upgrade: (ACTION, apply_upgrade),
        Place: (ACTION, apply_place),
        Master: (ACTION, apply_master),
        Pass: (ACTION, apply_pass),
        Finish: (FINISH, apply_finish),
    })
    rs.decoders.update(codec.BASE_DECODERS)
    rs.encoders.update(codec.BASE_ENCODERS)
    rs.setup = setup
    rs.reward = give_reward
    rs.enumerate = legal_actions
    rs.enumerate_master = master_actions
    rs.enumerate_finish = finish_actions
    rs.decision_options[FINISH] = lambda game: [Finish(())]
    rs.decision_options[OVER] = lambda game: []
    o1 = [i for i, s in enumerate(rs.shapes) if s.level == 1]
    rs.level1_shape = o1[0] if o1 else -1
    rs.reward_shape = [rs.shape_index.get(p.reward, -1) for p in rs.puzzles]
    rs.take_actions = [[TakePuzzle(c, s) for s in range(rs.row_size)] for c in (WHITE, BLACK)]
    rs.all_takes = rs.take_actions[WHITE] + rs.take_actions[BLACK]
    rs.take_cards[TakePuzzle] = row_card


def row_card(game, a) -> int:
    """The card a row take would take (-1: none; the handler says why)."""
    if a.color not in (WHITE, BLACK) or not isinstance(a.slot, int) or not 0 <= a.slot < len(game.rows[a.color]):
        return -1
    return game.rows[a.color][a.slot]


def install_take_checks(rs) -> None:
    """The take seam, composed once per ruleset: every handler of an action in
    ``rs.take_cards`` runs ``rs.take_checks`` on the card it would take before it acts, and
    the checks not marked ``listed`` prune the legal-action listing. With no take checks
    nothing is wrapped: the base game's hot path is untouched."""
    checks = tuple(rs.take_checks)
    if not checks:
        return
    cards = dict(rs.take_cards)
    for kind, resolve in cards.items():
        entry = rs.handlers.get(kind)
        if entry is None:
            continue
        phase, handler = entry
        rs.handlers[kind] = (phase, _checked_take(handler, resolve, checks))
    unlisted = tuple(c for c in checks if not getattr(c, "listed", False))
    if unlisted:
        rs.action_filters.append(_take_filter(cards, unlisted))


def _checked_take(handler, resolve, checks):
    def take(game, a):
        card = resolve(game, a)
        if card >= 0:
            for check in checks:
                check(game, a, card)
        handler(game, a)
    take.__wrapped__ = handler
    return take


def _take_filter(cards, checks):
    def prune(game, actions):
        out = None
        for i, a in enumerate(actions):
            resolve = cards.get(type(a))
            keep = True
            if resolve is not None:
                card = resolve(game, a)
                if card >= 0:
                    try:
                        for check in checks:
                            check(game, a, card)
                    except IllegalAction:
                        keep = False
            if not keep:
                if out is None:
                    out = actions[:i]
            elif out is not None:
                out.append(a)
        return actions if out is None else out
    return prune


def finalize(rs) -> None:
    """After the variants: attach the enumeration caches. They are shared by every ruleset
    with the same cards, shapes and upgrade limit (so by every game of a tournament); their
    keys hold card and shape indices, which mean the same in all such rulesets."""
    install_take_checks(rs)
    key = (tuple(p.id for p in rs.puzzles), rs.shapes, rs.upgrade_max_level)
    rs.upgrade_cache, rs.place_cache, rs.card_placements, rs.owned_cache = _SHARED.setdefault(key, ({}, {}, {}, {}))
    rs.caches.extend((rs.upgrade_cache, rs.place_cache, rs.card_placements, rs.owned_cache))


# ---------------------------------------------------------------- setup (R1)
def setup(game, rng, deal) -> None:
    """R1: shuffle (or take the explicit deal), deal the rows, fill the reserve, give starting pieces."""
    rs = game.rules
    if deal is not None:
        game.decks = check_deal(rs, deal)
    else:
        whites = [i for i, p in enumerate(rs.puzzles) if p.color == "white"]
        blacks = [i for i, p in enumerate(rs.puzzles) if p.color == "black"]
        rng.shuffle(whites)
        rng.shuffle(blacks)
        game.decks = [whites, blacks[: rs.params["black_deck_size"]]]
    if not game.decks[BLACK]:
        game.trigger_end()
    for color in (WHITE, BLACK):
        game.rows[color] = [game.draw(color) for _ in range(rs.row_size)]
    fill_reserve(game)
    give_starting_pieces(game)


def fill_reserve(game) -> None:
    """R0: ``reserve_per_shape`` of every shape the rules put in the reserve."""
    rs = game.rules
    game.reserve = [rs.params["reserve_per_shape"] if i in rs.reserve_shapes else 0 for i in range(len(rs.shapes))]


def give_starting_pieces(game) -> None:
    """R1.3: every player takes the starting pieces from the reserve."""
    rs = game.rules
    for p in game.players:
        for name in rs.params["starting_pieces"]:
            s = rs.shape_index[name]
            game.reserve[s] -= 1
            p.supply[s] += 1


# ---------------------------------------------------------------- rewards (R4)
def give_reward(game, player, card) -> bool:
    """R4.1/R4.2: take the reward shape from the reserve; none in stock, no reward."""
    s = game.rules.reward_shape[card]
    if s >= 0 and game.reserve[s] > 0:
        game.reserve[s] -= 1
        player.supply[s] += 1
    return True


# ---------------------------------------------------------------- action handlers
def _player(game):
    return game.players[game.seat]


def check_take_room(game, p) -> None:
    if len(p.unfinished) >= game.rules.max_unfinished:
        raise IllegalAction("R3.1", f"you already have {game.rules.max_unfinished} unfinished puzzles")


def apply_take_puzzle(game, a: TakePuzzle) -> None:
    rs = game.rules
    p = _player(game)
    check_take_room(game, p)
    if a.color not in (WHITE, BLACK):
        raise IllegalAction("R14", "take_puzzle needs color white or black")
    if not 0 <= a.slot < rs.row_size:
        raise IllegalAction("R3.1", f"slot {a.slot} is not in the row (slots 0-{rs.row_size - 1})")
    row = game.rows[a.color]
    card = row[a.slot]
    if card < 0:
        raise IllegalAction("R3.1", f"slot {a.slot} of the {('white', 'black')[a.color]} row is empty")
    p.unfinished.append(PuzzleInPlay(card))
    row[a.slot] = game.draw(a.color)
    game.action_done()


def apply_take_piece(game, a) -> None:
    rs = game.rules
    s = rs.level1_shape
    if s < 0 or game.reserve[s] <= 0:
        raise IllegalAction("R3.2", "there is no level-1 piece left in the reserve")
    game.reserve[s] -= 1
    _player(game).supply[s] += 1
    game.action_done()


def upgrade_targets(rs, reserve, give: int) -> list[int]:
    """R3.3/R3.4: shapes ``give`` may become: the lowest higher level in stock, or any
    other shape of the same or a lower level in stock — never above ``upgrade_max_level``
    (R3.4: neither an upgrade nor an exchange takes a ghost; a ghost may still be
    exchanged down, R11.2: ghosts come only from puzzles)."""
    level = rs.shape_level
    top = rs.upgrade_max_level
    lv = level[give]
    higher = [level[s] for s in range(len(level)) if reserve[s] > 0 and lv < level[s] <= top]
    target = min(higher) if higher else None
    return [s for s in range(len(level)) if reserve[s] > 0 and s != give and level[s] <= top
            and (level[s] <= lv or level[s] == target)]


def apply_upgrade(game, a: Upgrade) -> None:
    rs = game.rules
    p = _player(game)
    give, take = a.give, a.take
    n = len(rs.shapes)
    if not (0 <= give < n and 0 <= take < n):
        raise IllegalAction("R14", "upgrade names an unknown piece")
    if p.supply[give] <= 0:
        raise IllegalAction("R3.3", f"you have no {rs.shapes[give].name} in your supply")
    if take == give:
        raise IllegalAction("R3.4", "taking back the same shape changes nothing")
    if game.reserve[take] <= 0:
        raise IllegalAction("R3.3", f"the reserve has no {rs.shapes[take].name}")
    if take not in upgrade_targets(rs, game.reserve, give):
        lv, lt = rs.shape_level[give], rs.shape_level[take]
        if lt > rs.upgrade_max_level:
            raise IllegalAction("R3.4", f"neither an upgrade nor an exchange takes a level-{lt} piece "
                                        f"(ghosts come only from puzzles, R11.2)")
        raise IllegalAction("R3.3", f"an upgrade from level {lv} must take the lowest higher level in stock, not level {lt}")
    p.supply[give] -= 1
    game.reserve[give] += 1
    game.reserve[take] -= 1
    p.supply[take] += 1
    game.action_done()


def _find_puzzle(p, card, rs):
    for pz in p.unfinished:
        if pz.card == card:
            return pz
    name = rs.puzzles[card].id if 0 <= card < len(rs.puzzles) else str(card)
    raise IllegalAction("R3.5", f"puzzle {name} is not one of your unfinished puzzles")


def _check_placement(rs, p, pz, placement: int, used: int = 0) -> int:
    g = rs.geometry
    if not 0 <= placement < len(g.placement_mask):
        raise IllegalAction("R14", f"unknown placement {placement}")
    s = g.placement_shape[placement]
    if p.supply[s] <= used:
        raise IllegalAction("R3.5", f"you have no {'more ' if used else ''}{rs.shapes[s].name} in your supply")
    m = g.placement_mask[placement]
    if m & ~rs.recess[pz.card]:
        raise IllegalAction("R3.5", f"the piece must cover only recess cells of {rs.puzzles[pz.card].id}")
    if m & pz.filled:
        raise IllegalAction("R3.5", f"the piece overlaps a piece already on {rs.puzzles[pz.card].id}")
    return m


def apply_place(game, a: Place) -> None:
    rs = game.rules
    p = game.players[game.seat]
    card = a.puzzle
    for pz in p.unfinished:
        if pz.card == card:
            break
    else:
        _find_puzzle(p, card, rs)  # raises with the reason
    placement = a.placement
    g = rs.geometry
    try:
        s = g.placement_shape[placement]
        m = g.placement_mask[placement]
    except (IndexError, TypeError):
        raise IllegalAction("R14", f"unknown placement {placement!r}") from None
    recess = rs.recess[card]
    if p.supply[s] <= 0 or m & pz.filled or m & ~recess or placement < 0:
        _check_placement(rs, p, pz, placement)  # raises with the reason
    p.supply[s] -= 1
    pz.filled |= m
    pz.placed.append(placement)
    game.action_done(pz.filled == recess)


def check_placement_set(rs, p, placements, one_per_puzzle: bool, rule: str) -> None:
    """Validate several placements made at once from the supply as it is now."""
    g = rs.geometry
    used = [0] * len(rs.shapes)
    filled: dict[int, int] = {}
    for place in placements:
        if not isinstance(place, Place):
            raise IllegalAction("R14", f"{rule}: each placement must be a placement")
        pz = _find_puzzle(p, place.puzzle, rs)
        if one_per_puzzle and place.puzzle in filled:
            raise IllegalAction(rule, f"at most one piece per puzzle, {rs.puzzles[place.puzzle].id} is named twice")
        if not isinstance(place.placement, int) or not 0 <= place.placement < len(g.placement_mask):
            raise IllegalAction("R14", f"unknown placement {place.placement!r}")
        m = _check_placement(rs, p, pz, place.placement, used[g.placement_shape[place.placement]])
        prior = filled.get(place.puzzle, 0)
        if m & prior:
            raise IllegalAction("R3.5", f"two pieces overlap on {rs.puzzles[place.puzzle].id}")
        filled[place.puzzle] = prior | m
        used[g.placement_shape[place.placement]] += 1


def apply_master(game, a: Master) -> None:
    rs = game.rules
    if not rs.master_enabled:
        raise IllegalAction("R3.6", "the master action is not available under these rules")
    if game.master_used:
        raise IllegalAction("R2.1", "the master action may be taken only once per turn")
    if not a.placements:
        raise IllegalAction("R3.6", "the master action must place at least one piece")
    p = _player(game)
    check_placement_set(rs, p, a.placements, True, "R3.6")
    g = rs.geometry
    for place in a.placements:
        pz = _find_puzzle(p, place.puzzle, rs)
        p.supply[g.placement_shape[place.placement]] -= 1
        pz.filled |= g.placement_mask[place.placement]
        pz.placed.append(place.placement)
    game.master_used = True
    game.action_done(True)


def apply_pass(game, a) -> None:
    game.actions_left = 1
    game.action_done()


def apply_finish(game, a: Finish) -> None:
    rs = game.rules
    check_placement_set(rs, _player(game), a.placements, False, "R6.1")
    game.record_finish(a.placements)


# ---------------------------------------------------------------- enumeration
#: bytes.translate table: count -> 1 if any, so ``bytes(counts).translate(_ANY)`` is the
#: set of shapes present, as a hashable key built at C speed.
_ANY = bytes([0] + [1] * 255)


def _owned(counts) -> bytes:
    return bytes(counts).translate(_ANY)


def legal_actions(game, places: bool = True) -> list:
    """Every legal single action of the player to move (R3; master combos excluded).

    ``places=False`` leaves the placements out, and nothing else: for callers that number
    the placements from the geometry themselves (the action masks of
    :mod:`arena.rl.spaces`; tests compare the two on every variant)."""
    if game.phase != ACTION:
        return game.rules.decision_options[game.phase](game)
    rs = game.rules
    p = game.players[game.seat]
    if len(p.unfinished) < rs.max_unfinished:
        white, black = game.rows
        if -1 in white or -1 in black:
            out = [rs.take_actions[c][slot] for c in (WHITE, BLACK) for slot, card in enumerate(game.rows[c]) if card >= 0]
        else:
            out = rs.all_takes[:]
    else:
        out = []
    reserve = game.reserve
    if rs.level1_shape >= 0 and reserve[rs.level1_shape]:
        out.append(TAKE_PIECE)
    owned = bytes(p.supply).translate(_ANY)
    key = (owned, bytes(reserve).translate(_ANY))
    ups = rs.upgrade_cache.get(key)
    if ups is None:
        ups = _upgrades(rs, owned, reserve)
        if len(rs.upgrade_cache) > _CACHE_LIMIT:
            rs.upgrade_cache.clear()
        rs.upgrade_cache[key] = ups
    out.extend(ups)
    if p.unfinished and places:
        shapes = rs.owned_cache.get(owned)
        if shapes is None:
            shapes = rs.owned_cache[owned] = tuple(i for i, have in enumerate(owned) if have)
        cache = rs.place_cache
        for pz in p.unfinished:
            per_shape = cache.get((pz.card, pz.filled))
            if per_shape is None:
                per_shape = _per_shape(rs, pz.card, pz.filled)
            for s in shapes:
                acts = per_shape[s]
                if acts is None:
                    acts = _fill_shape(rs, per_shape, pz.card, pz.filled, s)
                out += acts
    if rs.extra_generators:
        for gen in rs.extra_generators:
            gen(game, out)
    out.append(PASS)
    if rs.action_filters:
        for filt in rs.action_filters:
            out = filt(game, out)
    return out


def _upgrades(rs, owned: bytes, reserve) -> tuple:
    """Every upgrade/exchange of an owned shape (R3.3/R3.4), for the reserve's stock."""
    level = rs.shape_level
    top = rs.upgrade_max_level
    stocked = [s for s in range(len(level)) if reserve[s] > 0 and level[s] <= top]
    levels = sorted({level[s] for s in stocked})
    out = []
    for give, have in enumerate(owned):
        if have:
            lv = level[give]
            higher = next((x for x in levels if x > lv), None)
            out.extend(Upgrade(give, t) for t in stocked if t != give and (level[t] <= lv or level[t] == higher))
    return tuple(out)


def _per_shape(rs, card: int, filled: int) -> list:
    """The cache entry of ``card`` with ``filled`` cells: one slot per shape, each filled
    in on first use by :func:`_fill_shape` (shapes nobody holds are never computed)."""
    cache = rs.place_cache
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    entry = cache[(card, filled)] = [None] * len(rs.shapes)
    return entry


def _fill_shape(rs, entry: list, card: int, filled: int, shape: int) -> tuple:
    """Place actions of ``shape`` on ``card`` with ``filled`` cells.

    Built from the card's own placements (those inside its recess, found once per card),
    keeping those clear of the filled cells; the Place tuples are made once per card."""
    per_card = rs.card_placements.get(card)
    if per_card is None:
        g = rs.geometry
        recess = rs.recess[card]
        pm = g.placement_mask
        per_card = rs.card_placements[card] = tuple(
            tuple((pm[pid], Place(card, pid)) for pid in g.fits(s, recess)) for s in range(len(rs.shapes)))
    acts = entry[shape] = tuple(a for m, a in per_card[shape] if not m & filled)
    return acts


def _places(rs, card: int, filled: int, owned: bytes) -> tuple:
    """Place actions on ``card`` with ``filled`` cells for the ``owned`` shapes."""
    entry = rs.place_cache.get((card, filled)) or _per_shape(rs, card, filled)
    out = []
    for s, have in enumerate(owned):
        if have:
            acts = entry[s]
            out.extend(acts if acts is not None else _fill_shape(rs, entry, card, filled, s))
    return tuple(out)


def master_actions(game):
    """Lazily yield every legal master action: for each subset of the unfinished puzzles
    (at least one), one fitting placement each, within the supply counts (R3.6)."""
    rs = game.rules
    if game.phase != ACTION or not rs.master_enabled or game.master_used:
        return
    p = game.players[game.seat]
    owned = _owned(p.supply)
    options = [(None,) + _places(rs, pz.card, pz.filled, owned) for pz in p.unfinished]
    shape_of = rs.geometry.placement_shape
    for combo in itertools.product(*options):
        chosen = tuple(c for c in combo if c is not None)
        if not chosen:
            continue
        used: dict[int, int] = {}
        ok = True
        for c in chosen:
            s = shape_of[c.placement]
            used[s] = used.get(s, 0) + 1
            if used[s] > p.supply[s]:
                ok = False
                break
        if ok:
            yield Master(chosen)


def finish_actions(game):
    """Lazily yield finishing-touch decisions (R6): every multiset of placements on the
    unfinished puzzles, pieces from the supply, no overlaps. Starts with the empty one."""
    rs = game.rules
    if game.phase != FINISH:
        return
    p = game.players[game.seat]
    g = rs.geometry
    supply = p.supply[:]
    puzzles = [(pz.card, rs.recess[pz.card] & ~pz.filled) for pz in p.unfinished]

    def rec(i, chosen, floor):
        yield Finish(tuple(chosen))
        for j in range(i, len(puzzles)):
            card, empty = puzzles[j]
            for s in range(len(supply)):
                if not supply[s]:
                    continue
                for pid in g.fits(s, empty):
                    if j == i and pid <= floor:
                        continue
                    supply[s] -= 1
                    puzzles[j] = (card, empty & ~g.placement_mask[pid])
                    chosen.append(Place(card, pid))
                    yield from rec(j, chosen, pid)
                    chosen.pop()
                    puzzles[j] = (card, empty)
                    supply[s] += 1

    yield from rec(0, [], -1)
