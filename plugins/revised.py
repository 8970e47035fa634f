"""``revised`` — the updated English rules (R9).

What changes against the base game:

- **recycle** (new action, ``{"type": "recycle", "color": "white"}``): put all cards of a
  row that has at least one card, left to right, at the bottom of that deck, then deal
  ``row_size`` new cards from the top. It never triggers the end (R9.1).
- **blind take** (``{"type": "take_puzzle", "color": "black", "blind": true}``): take the
  top card of either deck instead of a row card, with the same limit of unfinished
  puzzles; emptying the black deck this way triggers the end (R9.2).
- **reward fallback**: a reward whose shape is out of stock becomes a piece of the lowest
  higher level in stock, the player choosing the shape (a ``reward`` decision; when only
  one shape is possible it is taken without asking); none in stock, no reward (R9.3).
- after the end is triggered, each player may take at most one black puzzle, row or
  blind; the take that triggered the end does not count (R9.4).
- at scoring, every puzzle still unfinished after the finishing touches costs its points
  (R9.5), and completed piles are face down: scores are hidden (R9.6, see ``open-scores``).

Parameters: none of its own; every base parameter (R13) applies.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.actions import action, ACTION, BLACK, REWARD, WHITE, Reward, TakePuzzle
from engine.base_rules import check_take_room
from engine.codec import check_fields, get_color
from engine.errors import IllegalAction
from engine.game import PuzzleInPlay
from engine.hookspecs import hookimpl
from engine.variants import Variant

NAME = "revised"
_COLOR = ("white", "black")


@action
class Recycle(NamedTuple):
    """R9.1: recycle the ``color`` row."""

    color: int


@action
class TakeBlind(NamedTuple):
    """R9.2: take the top card of the ``color`` deck."""

    color: int


@hookimpl
def arena_rules_variants(register):
    register(Variant(NAME, "the updated English rules: recycle, blind take, reward fallback, "
                           "one black puzzle after the end, unfinished puzzles cost their points, hidden scores",
                     incompatible=("solo",)))


@hookimpl
def arena_rules_configure(variant, ruleset):
    if variant != NAME:
        return
    rs = ruleset
    rs.handlers[Recycle] = (ACTION, apply_recycle)
    rs.handlers[TakeBlind] = (ACTION, apply_take_blind)
    rs.handlers[TakePuzzle] = (ACTION, _counting(rs.handlers[TakePuzzle][1]))
    rs.handlers[Reward] = (REWARD, apply_reward_choice)
    rs.decision_options[REWARD] = reward_options
    base_decoder = rs.decoders["take_puzzle"]

    def decode_take(rules, obj):
        if obj.get("blind") is not None:
            if obj.get("blind") is not True:
                raise IllegalAction("R14", "take_puzzle field 'blind' must be true when given")
            check_fields(obj, ("type", "color", "blind"), "blind take_puzzle")
            return TakeBlind(get_color(obj, "take_puzzle"))
        return base_decoder(rules, obj)

    rs.decoders["take_puzzle"] = decode_take
    rs.decoders["recycle"] = lambda rules, obj: (check_fields(obj, ("type", "color"), "recycle"),
                                                 Recycle(get_color(obj, "recycle")))[1]
    rs.encoders[Recycle] = lambda rules, a: {"type": "recycle", "color": _COLOR[a.color]}
    rs.encoders[TakeBlind] = lambda rules, a: {"type": "take_puzzle", "color": _COLOR[a.color], "blind": True}
    rs.extra_generators.append(generate)
    rs.take_checks.append(check_black_limit)
    rs.take_cards[TakeBlind] = deck_card
    previous_reward = rs.reward
    rs.reward = lambda game, player, card: reward_with_fallback(game, player, card, previous_reward)
    rs.score_penalties.append(unfinished_penalty)
    rs.observe_hooks.append(observe)
    rs.restore_hooks.append(restore)
    rs.scores_visible = False
    rs.recycle_actions = (Recycle(WHITE), Recycle(BLACK))
    rs.blind_actions = (TakeBlind(WHITE), TakeBlind(BLACK))
    rs.revised_actions = rs.recycle_actions + rs.blind_actions


# ---------------------------------------------------------------- actions
def apply_recycle(game, a: Recycle) -> None:
    """R9.1: the row's cards go under the deck, left to right; deal a fresh row from the top."""
    if a.color not in (WHITE, BLACK):
        raise IllegalAction("R14", "recycle needs color white or black")
    row = game.rows[a.color]
    cards = [c for c in row if c >= 0]
    if not cards:
        raise IllegalAction("R9.1", f"the {_COLOR[a.color]} row has no card to recycle")
    deck = game.decks[a.color]
    deck.extend(cards)
    for slot in range(len(row)):
        row[slot] = deck.pop(0) if deck else -1
    game.action_done()


def apply_take_blind(game, a: TakeBlind) -> None:
    """R9.2: take the top card of a deck (R9.4 limits black takes after the end)."""
    if a.color not in (WHITE, BLACK):
        raise IllegalAction("R14", "take_puzzle needs color white or black")
    p = game.players[game.seat]
    check_take_room(game, p)
    if not game.decks[a.color]:
        raise IllegalAction("R9.2", f"the {_COLOR[a.color]} deck is empty")
    triggered = game.end_triggered  # R9.4 and every house rule on takes ran already (the take seam)
    card = game.draw(a.color)
    p.unfinished.append(PuzzleInPlay(card))
    _count_black(game, p, card, triggered)
    game.action_done()


def deck_card(game, a: TakeBlind) -> int:
    """The card a blind take would take: the top of the deck (-1 if there is none)."""
    if a.color not in (WHITE, BLACK) or not game.decks[a.color]:
        return -1
    return game.decks[a.color][0]


def _counting(base_take):
    def take(game, a):
        triggered = game.end_triggered
        p = game.players[game.seat]
        card = game.rows[a.color][a.slot] if a.color in (WHITE, BLACK) and 0 <= a.slot < len(game.rows[a.color]) else -1
        base_take(game, a)
        _count_black(game, p, card, triggered)
    return take


def _count_black(game, p, card, triggered_before: bool) -> None:
    if triggered_before and card >= 0 and game.rules.is_black[card]:
        p.extra["black_after_end"] = p.extra.get("black_after_end", 0) + 1


def check_black_limit(game, action, card) -> None:
    """R9.4: after the end is triggered, at most one black puzzle per player."""
    if game.end_triggered and card >= 0 and game.rules.is_black[card]:
        if game.players[game.seat].extra.get("black_after_end", 0) >= 1:
            raise IllegalAction("R9.4", "after the end is triggered you may take only one black puzzle")


check_black_limit.listed = True  # generate() already leaves these takes out of the listing


def filter_black_takes(game, actions):
    """R9.4 in the listing: once a player has taken its black puzzle after the end, no
    black row take is listed (the blind one is left out by :func:`generate`)."""
    rows = game.rows
    is_black = game.rules.is_black
    return [a for a in actions if type(a) is not TakePuzzle or not is_black[rows[a.color][a.slot]]]


def generate(game, out) -> None:
    """Recycles and blind takes, and R9.4's pruning of black row takes (in the same pass,
    to keep the listing to one call per variant)."""
    rs = game.rules
    p = game.players[game.seat]
    white, black = game.rows
    if (not game.end_triggered and -1 not in white and -1 not in black and game.decks[WHITE]
            and game.decks[BLACK] and len(p.unfinished) < rs.max_unfinished):
        out += rs.revised_actions  # the usual case: both recycles and both blind takes
        return
    if game.end_triggered and p.extra.get("black_after_end"):
        out[:] = filter_black_takes(game, out)
    for c in (WHITE, BLACK):
        row = game.rows[c]
        if row.count(-1) < len(row):
            out.append(rs.recycle_actions[c])
    if len(p.unfinished) < rs.max_unfinished:
        if game.decks[WHITE]:
            out.append(rs.blind_actions[WHITE])
        if game.decks[BLACK] and not (game.end_triggered and p.extra.get("black_after_end", 0) >= 1):
            out.append(rs.blind_actions[BLACK])


generate.keeps_places = True  # adds and prunes other actions, never a placement (see engine.rules)


def observe(game, seat: int, obs: dict) -> None:
    """R9.4 is public: every seat sees who has taken a black puzzle since the trigger."""
    for entry, p in zip(obs["seats"], game.players):
        entry["black_after_end"] = p.extra.get("black_after_end", 0)


def restore(game, obs: dict) -> None:
    for entry, p in zip(obs["seats"], game.players):
        if entry.get("black_after_end"):
            p.extra["black_after_end"] = entry["black_after_end"]


# ---------------------------------------------------------------- rewards
def fallback_options(rs, reserve, shape: int) -> list[int]:
    """R9.3: shapes of the lowest higher level in stock (up to the upgrade limit)."""
    level = rs.shape_level
    higher = sorted({level[s] for s in range(len(level))
                     if reserve[s] > 0 and level[shape] < level[s] <= rs.upgrade_max_level})
    if not higher:
        return []
    return [s for s in range(len(level)) if reserve[s] > 0 and level[s] == higher[0]]


def reward_with_fallback(game, player, card, previous) -> bool:
    rs = game.rules
    s = rs.reward_shape[card]
    if s < 0 or game.reserve[s] > 0:
        return previous(game, player, card)
    options = fallback_options(rs, game.reserve, s)
    if not options:
        return True
    if len(options) == 1:
        game.reserve[options[0]] -= 1
        player.supply[options[0]] += 1
        return True
    game.phase = REWARD
    game.decision = {"type": "reward", "puzzle": rs.puzzles[card].id,
                     "options": [rs.shapes[o].name for o in options]}
    return False


def reward_options(game) -> list:
    rs = game.rules
    return [Reward(rs.shape_index[name]) for name in game.decision["options"]]


def apply_reward_choice(game, a: Reward) -> None:
    rs = game.rules
    names = game.decision["options"]
    if not (0 <= a.take < len(rs.shapes)) or rs.shapes[a.take].name not in names:
        raise IllegalAction("R9.3", f"the reward must be one of {', '.join(names)}")
    game.reserve[a.take] -= 1
    game.players[game.seat].supply[a.take] += 1
    game.decision_done()


# ---------------------------------------------------------------- scoring
def unfinished_penalty(game, seat: int) -> int:
    """R9.5: at scoring, unfinished puzzles cost their points."""
    if not game.is_over:
        return 0
    points = game.rules.points
    return sum(points[pz.card] for pz in game.players[seat].unfinished)


# the largest penalty: the max_unfinished most valuable puzzles held unfinished (R3.1)
unfinished_penalty.most = lambda rules: sum(sorted(rules.points, reverse=True)[:rules.max_unfinished])
