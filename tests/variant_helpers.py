"""Helpers for the variant tests (R8-R13): games under variants, invariants, playouts.

Set-up helpers that reach into the game's public attributes say so in their docstrings;
everything else goes through ``Game.apply`` and R14 JSON like a bot would.
"""

from __future__ import annotations

import itertools
import random

from engine import Game, RuleSpec, action_from_json, action_to_json
from engine.actions import Finish

#: Variants that combine with 2-4 players, and those that combine with solo.
MULTI = ("revised", "open-scores", "ghost", "no-master")
SOLO_PARTNERS = ("open-scores", "ghost", "no-master")


def compatible_combinations() -> list[tuple[tuple[str, ...], int]]:
    """Every compatible variant set with a player count it is played with."""
    out = []
    for k in range(len(MULTI) + 1):
        for combo in itertools.combinations(MULTI, k):
            out.append((combo, 2))
    for k in range(len(SOLO_PARTNERS) + 1):
        for combo in itertools.combinations(SOLO_PARTNERS, k):
            out.append((("solo",) + combo, 1))
    return out


def new(variants=(), players=2, seed=0, white=None, black=None, **params) -> Game:
    """A game under ``variants`` with optional explicit decks (card ids, top first)."""
    deal = None if white is None and black is None else {"white": list(white or []), "black": list(black or [])}
    return Game.new(RuleSpec.make(list(variants), params), players, seed, deal)


def solo(white, black=(), difficulty="standard", seed=0, **params) -> Game:
    """A solo game with an explicit deal: the white list is dealt first, 9 into the grid."""
    return new(("solo",), 1, seed, white=white, black=list(black), difficulty=difficulty, **params)


def act(game, obj: dict) -> None:
    """Apply an action given as R14 JSON."""
    game.apply(action_from_json(game.rules, obj))


def listed_json(game) -> list[dict]:
    """The legal actions of the player to move, as R14 JSON."""
    return [action_to_json(game.rules, a) for a in game.legal_actions()]


def cells_of(card_id: str) -> list[list[int]]:
    """The recess cells of a card, row-major, from the card data."""
    from engine.cards import card_set
    for name in ("base", "ghost"):
        for p in card_set(name).puzzles:
            if p.id == card_id:
                return [[r, c] for r in range(5) for c in range(5) if p.recess >> (r * 5 + c) & 1]
    raise KeyError(card_id)


# ---------------------------------------------------------------- invariants
def piece_totals(game) -> list[int]:
    """Pieces per shape wherever they are: reserve, supplies, puzzles in play, and solo's
    locks and automaton supply (level-1 pieces). Pieces locked on puzzles completed in the
    finishing touches lose their shape (they are counted in ``piece_count``)."""
    rs = game.rules
    shape_of = rs.geometry.placement_shape
    totals = list(game.reserve)
    for p in game.players:
        for s, n in enumerate(p.supply):
            totals[s] += n
        for pz in p.unfinished:
            for pid in pz.placed:
                totals[shape_of[pid]] += 1
    if "locks" in game.extra:
        totals[rs.level1_shape] += sum(game.extra["locks"]) + game.extra["automaton_supply"]
    return totals


def expected_piece_totals(game) -> list[int]:
    """Pieces per shape the game was set up with (R0, R11.1, R12.1)."""
    rs = game.rules
    out = []
    for s in rs.shapes:
        if s.ghost:
            out.append(rs.params.get("ghost.reserve_per_shape", 0))
        else:
            out.append(rs.params["reserve_per_shape"])
    return out


def piece_count(game) -> int:
    """Every piece in the game, those locked by the finishing touches included."""
    return sum(piece_totals(game)) + sum(p.locked for p in game.players)


def card_places(game) -> list[int]:
    """Every card in the game: decks, rows, solo grid and automaton pile, unfinished and
    completed puzzles (a card in two places is counted twice)."""
    cards = [c for d in game.decks for c in d] + [c for r in game.rows for c in r if c >= 0]
    if "grid" in game.extra:
        cards += [c for c in game.extra["grid"] if c >= 0] + list(game.extra["automaton_pile"])
    for p in game.players:
        cards += [pz.card for pz in p.unfinished] + list(p.completed)
    return cards


def expected_score(game, seat: int) -> int:
    """R7.1 recomputed from the state: completed points − finishing pieces × cost − the
    R9.5/R12.5 penalty (unfinished points, once the game is over)."""
    rs = game.rules
    p = game.players[seat]
    score = sum(rs.points[c] for c in p.completed) - p.finish_pieces * rs.params["finishing_touch_cost"]
    if game.is_over and ("revised" in rs.spec.variants or "solo" in rs.spec.variants):
        score -= sum(rs.points[pz.card] for pz in p.unfinished)
    return score


# ---------------------------------------------------------------- playouts
def ghost_with_placements(game, ghost, rng):
    """``ghost`` (a listed ghost action) with some of the pieces it takes placed at once,
    at most one per unfinished puzzle, each where it fits (R11.4)."""
    from engine.actions import Place
    g = game.rules.geometry
    recess = game.rules.recess
    pieces = list(ghost.take)
    rng.shuffle(pieces)
    placements = []
    for pz in game.players[game.seat].unfinished:
        if not pieces or rng.random() < 0.3:
            continue
        s = pieces[-1]
        fits = list(g.fits(s, recess[pz.card] & ~pz.filled))
        if fits:
            placements.append(Place(pz.card, rng.choice(fits)))
            pieces.pop()
    return type(ghost)(ghost.give, ghost.take, tuple(placements))


def special(game, rng):
    """A rarely drawn kind of action, if one is possible: a ghost action (with placements
    half of the time), recycle, a blind take or a master action; else None."""
    if game.phase_name != "action":
        return None
    kinds = {"Ghost", "Recycle", "TakeBlind"}
    options = [a for a in game.legal_actions() if type(a).__name__ in kinds]
    masters = list(itertools.islice(game.master_actions(), 8))
    if masters and rng.random() < 0.5:
        return rng.choice(masters)
    if not options:
        return None
    action = rng.choice(options)
    if type(action).__name__ == "Ghost" and rng.random() < 0.5:
        action = ghost_with_placements(game, action, rng)
    return action


def choose(game, rng, greedy_share=0.5, special_share=0.1):
    """A legal action: greedy, a special one (:func:`special`) or uniformly random; in the
    finishing touches the greedy bot's choice or a random one of the first few enumerated."""
    from arena.plugins import policy
    if rng.random() < special_share:
        action = special(game, rng)
        if action is not None:
            return action
    if rng.random() < greedy_share:
        return policy("greedy").choose(game, rng)
    if game.phase_name == "finish":
        options = list(itertools.islice(game.finish_actions(), 20))
        return rng.choice(options) if options else Finish(())
    return rng.choice(game.legal_actions())


def playout(game, seed=0, greedy_share=0.5, limit=20_000, each=None):
    """Play ``game`` to the end with :func:`choose`; ``each(game, action)`` runs before
    every action is applied."""
    rng = random.Random(seed)
    for _ in range(limit):
        if game.is_over:
            return game
        action = choose(game, rng, greedy_share)
        if each is not None:
            each(game, action)
        game.apply(action)
    raise AssertionError("the game did not end")
