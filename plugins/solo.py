"""``solo`` — one player against the rulebook's automaton (R12).

Setup: a deck of ``solo.white_cards`` (15) random white puzzles on top of
``black_deck_size`` (10) random black ones; 9 are dealt face up into a 3×3 grid (slots
0–8, row-major). Level-1 pieces lie above the columns as locks (1, 2, 1), and the
automaton starts with 6, 3 or 0 of them in its supply (``difficulty``: ``standard``,
``challenging``, ``unbeatable``). ``reserve_per_shape`` defaults to 15 here (the setup
needs 11 level-1 pieces, R12.1).

The player's turn is a normal turn, but puzzles are taken from the grid only —
``{"type": "take_puzzle", "slot": 4}`` — which moves one lock piece (if any) from above
that column into the automaton's supply; the slot is refilled from the deck (R12.2).

After every player turn the automaton plays (R12.3): from the unlocked columns it takes
the puzzle with the most points (ties: lowest slot) into its pile; then its whole supply
and one lock piece from each other column move above the column it took from, and the
slot is refilled. If every column is locked it takes nothing and one piece above each
column returns to the reserve; if no unlocked slot holds a puzzle it does nothing.

The end (R12.4): once the last card of the deck is dealt, the player plays one more
complete turn that started after that moment, the automaton replies, and the player makes
the finishing touches. Scoring (R12.5): the player's unfinished puzzles cost their points;
the automaton scores its pile; a tie goes to the automaton. ``Game.result()`` adds
``automaton_score``, ``margin`` (player − automaton) and ``won``.

The observation's ``solo`` field shows the grid, the locks, the automaton's supply, pile
and score.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.actions import action, ACTION, TakePuzzle
from engine.base_rules import check_take_room, fill_reserve, give_starting_pieces
from engine.codec import check_fields, get_int
from engine.deal import check_deal
from engine.errors import IllegalAction, ParameterError
from engine.game import PuzzleInPlay
from engine.hookspecs import hookimpl
from engine.rules import ParamSpec
from engine.variants import Variant

NAME = "solo"
GRID_SLOTS = 9
COLUMNS = 3
START_LOCKS = (1, 2, 1)
DIFFICULTY = {"standard": 6, "challenging": 3, "unbeatable": 0}


@action
class GridTake(NamedTuple):
    """R12.2: take the puzzle in grid ``slot`` (0–8, row-major)."""

    slot: int


def _difficulty(value, players):
    if value not in DIFFICULTY:
        raise ParameterError(f"R12.1: parameter 'difficulty' must be one of {', '.join(DIFFICULTY)}, got {value!r}")
    return value


def _whites(value, players):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError(f"R13: parameter 'solo.white_cards' must be a whole number >= 0, got {value!r}")
    return value


@hookimpl
def arena_rules_variants(register):
    register(Variant(
        NAME, "one player against the rulebook's automaton on a 3x3 grid",
        params=(ParamSpec("difficulty", "standard", "the automaton's starting supply: standard 6, challenging 3, "
                                                    "unbeatable 0 level-1 pieces (R12.1)", _difficulty),
                ParamSpec("solo.white_cards", 15, "white puzzles in the solo deck (R12.1)", _whites)),
        overrides={"reserve_per_shape": 15, "black_deck_size": {1: 10}},
        incompatible=("revised",), players=(1, 1)))


@hookimpl
def arena_rules_configure(variant, ruleset):
    if variant != NAME:
        return
    rs = ruleset
    rs.min_players = rs.max_players = 1
    o1 = rs.level1_shape
    need = sum(START_LOCKS) + DIFFICULTY[rs.params["difficulty"]] + rs.params["starting_pieces"].count(rs.shapes[o1].name)
    if rs.params["reserve_per_shape"] < need:
        raise ParameterError(f"R12.1: the solo setup needs {need} level-1 pieces but reserve_per_shape is "
                             f"{rs.params['reserve_per_shape']}")
    whites = sum(1 for p in rs.puzzles if p.color == "white")
    if rs.params["solo.white_cards"] > whites:
        raise ParameterError(f"R13: parameter 'solo.white_cards' is {rs.params['solo.white_cards']} "
                             f"but the game has only {whites} white puzzles")
    rs.handlers.pop(TakePuzzle, None)
    rs.handlers[GridTake] = (ACTION, apply_grid_take)
    rs.take_cards.pop(TakePuzzle, None)
    rs.deck_sizes = (min(rs.params["solo.white_cards"], rs.deck_sizes[0]), rs.params["black_deck_size"])
    rs.take_cards[GridTake] = grid_card
    rs.take_actions = [[], []]
    rs.all_takes = []
    rs.grid_takes = tuple(GridTake(i) for i in range(GRID_SLOTS))
    rs.decoders["take_puzzle"] = decode_take
    rs.encoders[GridTake] = lambda rules, a: {"type": "take_puzzle", "slot": a.slot}
    rs.extra_generators.append(generate)
    rs.setup = setup
    rs.turn_end_hooks.append(automaton_turn)
    rs.score_penalties.append(unfinished_penalty)
    rs.observe_hooks.append(observe)
    rs.restore_hooks.append(restore)
    rs.result_hooks.append(result)


# ---------------------------------------------------------------- setup (R12.1)
def setup(game, rng, deal) -> None:
    rs = game.rules
    if deal is not None:
        white, black = check_deal(rs, deal)
    else:
        whites = [i for i, p in enumerate(rs.puzzles) if p.color == "white"]
        blacks = [i for i, p in enumerate(rs.puzzles) if p.color == "black"]
        rng.shuffle(whites)
        rng.shuffle(blacks)
        white, black = whites[: rs.params["solo.white_cards"]], blacks[: rs.params["black_deck_size"]]
    game.decks = [white + black, []]
    game.rows = [[], []]
    fill_reserve(game)
    o1 = rs.level1_shape
    grid = [_draw(game) for _ in range(GRID_SLOTS)]
    if not game.decks[0]:  # the whole deck was dealt at setup (or empty): the first turn is the last
        game.trigger_end()
        game.final_round = game.round
    game.reserve[o1] -= sum(START_LOCKS)
    auto = DIFFICULTY[rs.params["difficulty"]]
    game.reserve[o1] -= auto
    game.extra.update({"grid": grid, "locks": list(START_LOCKS), "automaton_supply": auto, "automaton_pile": []})
    give_starting_pieces(game)


def _draw(game) -> int:
    """Deal the top card; dealing the last one triggers the end (R12.4)."""
    deck = game.decks[0]
    if not deck:
        return -1
    card = deck.pop(0)
    if not deck:
        game.trigger_end()
    return card


# ---------------------------------------------------------------- the player's take (R12.2)
def decode_take(rules, obj):
    if "color" in obj or "blind" in obj:
        raise IllegalAction("R12.2", "in solo, puzzles are taken from the grid: give only 'slot' (0-8)")
    check_fields(obj, ("type", "slot"), "take_puzzle")
    return GridTake(get_int(obj, "slot", "take_puzzle"))


def grid_card(game, a: GridTake) -> int:
    """The card a grid take would take (-1: none; the handler says why)."""
    if not isinstance(a.slot, int) or not 0 <= a.slot < GRID_SLOTS:
        return -1
    return game.extra["grid"][a.slot]


def apply_grid_take(game, a: GridTake) -> None:
    p = game.players[game.seat]
    check_take_room(game, p)
    if not 0 <= a.slot < GRID_SLOTS:
        raise IllegalAction("R12.2", f"grid slot {a.slot} does not exist (slots 0-8)")
    grid = game.extra["grid"]
    card = grid[a.slot]
    if card < 0:
        raise IllegalAction("R12.2", f"grid slot {a.slot} is empty")
    p.unfinished.append(PuzzleInPlay(card))
    locks = game.extra["locks"]
    col = a.slot % COLUMNS
    if locks[col] > 0:
        locks[col] -= 1
        game.extra["automaton_supply"] += 1
    grid[a.slot] = _draw(game)
    game.action_done()


def generate(game, out) -> None:
    rs = game.rules
    if len(game.players[game.seat].unfinished) >= rs.max_unfinished:
        return
    grid = game.extra["grid"]
    out.extend(rs.grid_takes[i] for i in range(GRID_SLOTS) if grid[i] >= 0)


generate.keeps_places = True  # adds and prunes other actions, never a placement (see engine.rules)


# ---------------------------------------------------------------- the automaton (R12.3)
def automaton_turn(game) -> None:
    rs = game.rules
    grid = game.extra["grid"]
    locks = game.extra["locks"]
    unlocked = [c for c in range(COLUMNS) if locks[c] == 0]
    if not unlocked:
        for c in range(COLUMNS):
            locks[c] -= 1
            game.reserve[rs.level1_shape] += 1
        return
    slots = [i for i in range(GRID_SLOTS) if grid[i] >= 0 and locks[i % COLUMNS] == 0]
    if not slots:
        return
    best = max(slots, key=lambda i: (rs.points[grid[i]], -i))
    game.extra["automaton_pile"].append(grid[best])
    col = best % COLUMNS
    moved = game.extra["automaton_supply"]
    game.extra["automaton_supply"] = 0
    for c in range(COLUMNS):
        if c != col and locks[c] > 0:
            locks[c] -= 1
            moved += 1
    locks[col] += moved
    grid[best] = _draw(game)


# ---------------------------------------------------------------- scoring and views (R12.5)
def unfinished_penalty(game, seat: int) -> int:
    if not game.is_over:
        return 0
    return sum(game.rules.points[pz.card] for pz in game.players[seat].unfinished)


# the largest penalty: the max_unfinished most valuable puzzles held unfinished (R3.1)
unfinished_penalty.most = lambda rules: sum(sorted(rules.points, reverse=True)[:rules.max_unfinished])


def automaton_score(game) -> int:
    return sum(game.rules.points[c] for c in game.extra["automaton_pile"])


def result(game, res: dict) -> None:
    auto = automaton_score(game)
    res["automaton_score"] = auto
    res["margin"] = res["scores"][0] - auto
    res["won"] = game.is_over and not res["forfeited"][0] and res["scores"][0] > auto


def observe(game, seat: int, obs: dict) -> None:
    puzzles = game.rules.puzzles
    obs["solo"] = {
        "difficulty": game.rules.params["difficulty"],
        "grid": [puzzles[c].id if c >= 0 else None for c in game.extra["grid"]],
        "locks": list(game.extra["locks"]),
        "automaton_supply": game.extra["automaton_supply"],
        "automaton_pile": [puzzles[c].id for c in game.extra["automaton_pile"]],
        "automaton_score": automaton_score(game),
    }


def restore(game, obs: dict) -> None:
    rs = game.rules
    solo = obs["solo"]
    game.extra.update({
        "grid": [rs.puzzle_index[c] if c is not None else -1 for c in solo["grid"]],
        "locks": list(solo["locks"]),
        "automaton_supply": solo["automaton_supply"],
        "automaton_pile": [rs.puzzle_index[c] for c in solo["automaton_pile"]],
    })
