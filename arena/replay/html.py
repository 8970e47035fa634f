"""``arena replay FILE --html OUT.html``: one self-contained HTML file to look at a game.

The replay is re-simulated with the engine here, in Python: every step (the deal, then the
state after each action) is stored as a snapshot of what the table shows -- the rows, each
player's puzzles with the pieces on them, supplies, completed puzzles and scores -- taken
from :func:`engine.observation.observation` of every seat (each seat's own view of itself,
so the viewer sees everything). The snapshots, the cards' recesses, the piece colours
(:data:`arena.replay.render.PIECE_COLOURS`), each bot's time per move and its faults are embedded
as JSON next to inline CSS and JavaScript: the page needs no network and no server.

The page steps forward and back (buttons, arrow keys, a slider over all actions, a click
on the action list) and reads and writes the step in the URL fragment (``OUT.html#step=12``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path

from engine import observation
from engine.errors import ReplayMismatch
from engine.replay import state_digest, steps

from ..errors import ArenaError, UsageError
from .render import PIECE_COLOURS, bot_label, describe
from .html_assets import CSS, JS

#: The exact text of the page's ``<style>`` and ``<script>`` elements (a Content-Security-Policy
#: served with the page allows them by their hashes).
STYLE_TEXT = f"\n{CSS}"
SCRIPT_TEXT = f"\n{JS}"

_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_for_script(data) -> str:
    """``data`` as JSON to embed in a ``<script>`` element: ``<``, ``>``, ``&``, U+2028 and U+2029
    are written as ``\\uXXXX`` escapes, so nothing in it (``</script>``, ``<!--``, ``<script``)
    can end the element or change how the HTML parser reads it, and the text stays valid
    JavaScript. ``JSON.parse`` gives back exactly ``data``."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _SCRIPT_ESCAPES[m.group(0)], text)


def source_hash(text: str) -> str:
    """The Content-Security-Policy source allowing one inline ``<script>`` or ``<style>`` with this text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


#: The page's own policy (a ``<meta>`` in it, so a viewer saved to a file keeps it): its style
#: and script by hash, nothing else loaded, no form, no base URL.
PAGE_POLICY = (f"default-src 'none'; style-src {source_hash(STYLE_TEXT)}; script-src {source_hash(SCRIPT_TEXT)}; "
               "img-src data:; base-uri 'none'; form-action 'none'")


class ViewerError(ArenaError):
    """The replay cannot be turned into a viewer (it does not reproduce, or cannot be read)."""

    exit_code = 3


#: Keys of an observation the page lays out itself; anything else a variant adds is shown as is.
_SHOWN = {"seat", "players", "rules", "round", "phase", "to_move", "actions_left", "master_used", "end_triggered",
          "final_round", "reserve", "rows", "decks", "seats", "decision"}


def snapshot(game) -> dict:
    """What the table shows now: the public state, and each seat's full view of itself.

    What a variant adds to the observation (the solo grid and automaton, for instance)
    is kept under ``extra``.
    """
    views = [observation(game, s) for s in range(game.n)]
    top = views[0]
    snap = {k: top[k] for k in ("round", "phase", "to_move", "actions_left", "end_triggered", "final_round",
                                "reserve", "rows", "decks") if k in top}
    snap["seats"] = [views[s]["seats"][s] for s in range(game.n)]
    extra = {k: v for k, v in top.items() if k not in _SHOWN}
    if extra:
        snap["extra"] = extra
    return snap


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def cards_shown(rules, snaps: list[dict]) -> dict:
    """The puzzle cards the viewer's steps ``snaps`` name (rows, puzzles in progress, completed
    ones, a variant's extra fields), as the page draws them: colour, points, reward, recess."""
    used = {pid for s in snaps for row in s["rows"].values() for pid in row if pid}
    used |= {u["puzzle"] for s in snaps for seat in s["seats"] for u in seat.get("unfinished", [])}
    used |= {c for s in snaps for seat in s["seats"] for c in seat.get("completed", [])}
    used |= {x for s in snaps for x in _strings(s.get("extra", {})) if x in rules.puzzle_index}
    return {p.id: {"color": p.color, "points": p.points, "reward": p.reward,
                   "recess": [[i // 5, i % 5] for i in range(25) if p.recess >> i & 1]}
            for p in rules.puzzles if p.id in used}


def viewer_data(record: dict) -> dict:
    """Re-simulate ``record`` and collect everything the page shows; raises :class:`ViewerError`."""
    from engine import Game, RuleSpec
    from engine.errors import EngineError

    try:
        start = Game.new(RuleSpec.from_json(record["rules"]), record["players"], record["seed"], record.get("deal"))
    except EngineError as exc:
        raise ViewerError(f"cannot start the recorded game: {exc}") from None
    snaps, actions, game = [snapshot(start)], [], start
    try:
        for _, entry, game in steps(record):
            snaps.append(snapshot(game))
            actions.append({"seat": entry.get("seat"), "text": describe(entry), "action": entry.get("action")})
    except ReplayMismatch as exc:
        raise ViewerError(f"the replay does not reproduce: {exc}") from None
    if record.get("result") is not None and game.result() != record["result"]:
        raise ViewerError(f"the replay does not reproduce: result recorded {record['result']}, "
                          f"re-simulated {game.result()}")
    digest = record.get("final_digest")
    if digest is not None and digest != state_digest(game):
        raise ViewerError("the replay does not reproduce: the final state differs from the recorded one")
    times = record.get("move_times") or []
    for i, a in enumerate(actions):
        t = times[i] if i < len(times) else None
        a["ms"] = t.get("wall_ms") if isinstance(t, dict) else None
        a["fallback"] = bool(isinstance(t, dict) and t.get("fallback"))
        a["faults"] = []
    faults = record.get("faults") or []
    for seat, items in enumerate(faults):
        for f in items or []:
            move = f.get("move")
            where = min(move, len(actions) - 1) if isinstance(move, int) and actions else None
            item = {"seat": seat, "verdict": f.get("verdict"), "detail": f.get("detail"), "move": move}
            if where is not None and where >= 0:
                actions[where]["faults"].append(item)
    rules = start.rules
    cards = cards_shown(rules, snaps)
    bots = record.get("bots") or record.get("seats") or [f"seat {s}" for s in range(record["players"])]
    ready = record.get("ready") or []
    if len(ready) == len(bots):  # the name and version each bot sent in `ready`
        bots = [bot_label(str(b), r if isinstance(r, dict) and isinstance(r.get("name"), str) else None)
                for b, r in zip(bots, ready)]
    return {"title": f"{' vs '.join(map(str, bots))} - seed {record['seed']}, rules {rules.spec.label()}",
            "bots": bots, "seed": record["seed"], "rules": rules.spec.label(), "result": game.result(),
            "cards": cards, "shapes": {s.name: {"cells": [list(c) for c in s.cells],
                                                "colour": PIECE_COLOURS.get(s.name, "#999999")} for s in rules.shapes},
            "steps": snaps, "actions": actions, "faults": faults, "timed": bool(times)}


def render_html(record: dict) -> str:
    """The viewer page for ``record`` as one string."""
    data = viewer_data(record)
    payload = json_for_script(data)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{PAGE_POLICY}\">\n"
            f"<title>{html.escape(data['title'])}</title>\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<style>{STYLE_TEXT}</style></head>\n<body data-step=\"0\">\n"
            f"<script type=\"application/json\" id=\"replay-data\">{payload}</script>\n"
            f"<script>{SCRIPT_TEXT}</script>\n</body></html>\n")


def write_html(replay_path, out_path, game_number: int | None = None) -> Path:
    """Read the replay file ``replay_path`` (or game ``game_number``, default the first, of a
    JSON-lines file of games) and write its viewer to ``out_path``."""
    from .lines import load_game

    try:
        record, _ = load_game(replay_path, game_number)
    except ReplayMismatch as exc:
        raise ViewerError(str(exc)) from None
    try:
        page = render_html(record)
    except ViewerError as exc:
        raise ViewerError(f"{replay_path}: {exc}") from None
    out = Path(out_path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror}") from None
    return out
