"""What the public sees of a game in flight: the table as a spectator sees it, some moves behind.

While a game is played, its live page, its viewer and ``/api/games/live/G/R`` show what a
person watching the real table would see (:func:`engine.spectator.spectator_observation`):
the face-up rows, the sizes of the decks, the reserve, each seat's supply, puzzles in
progress and count of completed puzzles; a seat's completed puzzles and score only when the
rules show them to everyone (never under ``revised``); every finishing touch only once the
game is over. The seed, the deal and the order of the decks are never part of it: they
would tell the cards still face down. The operator may hold the public ``delay`` moves
behind the game (``arena serve --live-delay N``). A game that has ended shows everything,
at once: its stored record is public.
"""

from __future__ import annotations

import html

from engine import Game, RuleSpec
from engine.spectator import spectator_events, spectator_observation

from ..replay.html import PAGE_POLICY, SCRIPT_TEXT, STYLE_TEXT, cards_shown, json_for_script
from ..replay.render import PIECE_COLOURS, describe

#: Keys of an observation the viewer lays out itself; anything else a variant adds goes under ``extra``.
_SHOWN = {"seat", "players", "rules", "round", "phase", "to_move", "actions_left", "master_used", "end_triggered",
          "final_round", "reserve", "rows", "decks", "seats", "decision"}
_TABLE = ("round", "phase", "to_move", "actions_left", "end_triggered", "final_round", "reserve", "rows", "decks")


class Frozen:
    """A game in flight as it was read: its first line (rules, players, seed, deal, bots),
    its history, and each move's time (copied from a :class:`.live.LiveGame` under its lock)."""

    def __init__(self, head: dict, history: list, move_times: list):
        self.head, self.history, self.move_times = head, history, move_times


def shown_moves(total: int, over: bool, delay: int) -> int:
    """How many of ``total`` moves the public sees: all once the game is over, else ``delay`` fewer."""
    return total if over else max(0, total - max(0, int(delay)))


def _start(head: dict) -> Game:
    return Game.new(RuleSpec.from_json(head["rules"]), int(head["players"]), int(head["seed"]), head.get("deal"))


def _step(game: Game, entry: tuple) -> None:
    seat, action = entry
    if action is None:
        game.forfeit(seat)
    else:
        game.apply(action)


def snapshot(game: Game) -> dict:
    """The table now, as the replay viewer lays it out, seen by a spectator."""
    view = spectator_observation(game)
    snap = {k: view[k] for k in _TABLE if k in view}
    snap["seats"] = view.get("seats") or []
    extra = {k: v for k, v in view.items() if k not in _SHOWN}
    if extra:
        snap["extra"] = extra
    return snap


def at(frozen: Frozen, moves: int) -> Game:
    """The game after its first ``moves`` moves."""
    game = _start(frozen.head)
    for entry in frozen.history[:moves]:
        _step(game, entry)
    return game


def table(frozen: Frozen, delay: int) -> dict:
    """``{"moves", "over", "table"}``: the moves the public sees and the table after them."""
    over = at(frozen, len(frozen.history)).is_over
    shown = shown_moves(len(frozen.history), over, delay)
    game = at(frozen, shown)
    return {"moves": shown, "over": game.is_over, "table": spectator_observation(game)}


def _text(event: dict) -> str:
    action = event.get("action") or {}
    if action.get("hidden"):
        return f"seat {event.get('seat')} chooses its finishing touches (shown when the game ends)"
    return describe(event)


def viewer_data(frozen: Frozen, delay: int, name: str) -> dict:
    """What the replay viewer's script shows of the game so far, as a spectator sees it."""
    total = len(frozen.history)
    game = _start(frozen.head)
    final = at(frozen, total)
    shown = shown_moves(total, final.is_over, delay)
    snaps = [snapshot(game)]
    for entry in frozen.history[:shown]:
        _step(game, entry)
        snaps.append(snapshot(game))
    events = spectator_events(game)
    if len(events) != shown:  # a rule set hid whole events: the moves are listed by seat only
        events = [{"seat": s, "action": {"type": "move", "hidden": True}} for s, _ in frozen.history[:shown]]
    times = frozen.move_times
    actions = []
    for i, event in enumerate(events):
        t = times[i] if i < len(times) else None
        actions.append({"seat": event.get("seat"), "text": _text(event),
                        "action": None if (event.get("action") or {}).get("hidden") else event.get("action"),
                        "ms": t.get("wall_ms") if isinstance(t, dict) else None, "fallback": False, "faults": []})
    rules = game.rules
    cards = cards_shown(rules, snaps)
    bots = [str(b) for b in frozen.head.get("bots") or [f"seat {s}" for s in range(game.n)]]
    title = f"{' vs '.join(bots)} - {name}, {'ended' if game.is_over else 'in play'}, rules {rules.spec.label()}"
    return {"title": title, "bots": bots, "rules": rules.spec.label(),
            "result": game.result() if game.is_over else None, "cards": cards,
            "shapes": {s.name: {"cells": [list(c) for c in s.cells], "colour": PIECE_COLOURS.get(s.name, "#999999")}
                       for s in rules.shapes},
            "steps": snaps, "actions": actions, "faults": [], "timed": any(a["ms"] is not None for a in actions)}


def render(data: dict) -> str:
    """The replay viewer's page (its own style and script, allowed by hash) for ``data``."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{PAGE_POLICY}\">\n"
            f"<title>{html.escape(data['title'])}</title>\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<style>{STYLE_TEXT}</style></head>\n<body data-step=\"0\">\n"
            f"<script type=\"application/json\" id=\"replay-data\">{json_for_script(data)}</script>\n"
            f"<script>{SCRIPT_TEXT}</script>\n</body></html>\n")

