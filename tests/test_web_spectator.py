"""What a stranger sees of a game in flight: the table as a spectator sees it.

A revised game (hidden scores, R9.6) is written where ``arena serve``'s workers write a game
in flight, and every live answer of the site is read through the app: none names the seed,
a card still face down, a seat's completed pile or a score, nor the content of a finishing
touch; the operator's delay holds the public some moves behind; a game that has ended
shows everything. The spectator's observation itself is checked against every seat's.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine import FINISH, Game, RuleSpec, action_to_json, observation
from engine.spectator import spectator_events, spectator_observation

from arena.plugins import policy
from arena.web import player

SEED = 7340033
REVISED = {"variants": ["revised"]}


def _play(moves: int | None, seed: int = SEED, rules=REVISED) -> Game:
    """A two-seat game of the greedy bot, stopped after ``moves`` moves (None: to the end)."""
    game = Game.new(RuleSpec.from_json(rules), 2, seed)
    bots, rng = [policy("greedy"), policy("greedy")], random.Random(1)
    while not game.is_over and (moves is None or len(game.history) < moves):
        game.apply(bots[game.to_move()].choose(game, rng))
    return game


def test_the_spectator_sees_what_every_seat_sees_and_no_more():
    game = _play(40)
    assert all(len(p.completed) > 0 for p in game.players) and not game.is_over
    view = spectator_observation(game)
    seats = [observation(game, s) for s in range(game.n)]
    assert "seat" not in view and "decision" not in view
    assert view["rows"] == seats[0]["rows"] and view["decks"] == seats[1]["decks"]
    for entry, s in zip(view["seats"], range(game.n)):
        assert "completed" not in entry and "score" not in entry, "R9.6: piles are face down"
        assert entry["completed_count"] == len(game.players[s].completed)
        assert entry["unfinished"] == seats[1 - s]["seats"][s]["unfinished"]
    opened = _play(40, rules={"variants": ["open-scores"]})
    assert all("score" in e and "completed" in e for e in spectator_observation(opened)["seats"])
    ended = _play(None)
    assert [e["score"] for e in spectator_observation(ended)["seats"]] == ended.scores()


def test_the_spectator_never_sees_a_finishing_touch_before_the_end():
    game = _play(None)
    first = next(i for i in range(len(game.history)) if _replayed(game, i).phase == FINISH)
    during = _replayed(game, first + 1)
    assert not during.is_over
    hidden = [e for e in spectator_events(during) if e.get("action", {}).get("type") == "finish"]
    assert hidden and all(e["action"] == {"type": "finish", "hidden": True} for e in hidden)
    assert any(e["action"].get("placements") is not None for e in spectator_events(game)
               if e.get("action", {}).get("type") == "finish")


def _replayed(game: Game, moves: int) -> Game:
    out = Game.new(game.rules.spec, game.n, game.seed)
    for seat, action in game.history[:moves]:
        out.apply(action)
    return out


# ---------------------------------------------------------------- the site

pytest.importorskip("starlette")

from arena.league import League  # noqa: E402
from arena.web.app import create_app  # noqa: E402
from arena.web.submissions import Settings  # noqa: E402


def _write_live(league: Path, game: Game, group: int = 0, rotation: int = 0) -> None:
    """``game``'s moves as the protocol log a worker of ``arena serve`` appends while it plays."""
    player.live_dir(league).mkdir(exist_ok=True)
    head = {"group": group, "rotation": rotation, "bots": ["greedy", "random"], "rules": game.rules.spec.to_json(),
            "players": game.n, "seed": game.seed, "deal": None, "started": 1.0e9}
    lines = [json.dumps(head)]
    for i, (seat, action) in enumerate(game.history):
        stamp = f"2026-11-27T10:00:{i % 60:02d}.000000Z"
        lines.append(f"{stamp} {group}-{rotation} seat{seat} bot > " + json.dumps({"id": i + 1, "type": "action",
                                                                                    "observation": {}}))
        lines.append(f"{stamp} {group}-{rotation} seat{seat} bot < " + json.dumps(
            {"id": i + 1, "type": "action", "action": action_to_json(game.rules, action)}))
    player.live_path(league, group, rotation).write_text("\n".join(lines) + "\n")


def _app(tmp_path: Path, **settings):
    league = tmp_path / "league.db"
    with League.create(league, RuleSpec.from_json(REVISED), 2, 0, {"move_ms": 2000}, "basic") as lg:
        lg.add("greedy", bot="greedy")
        lg.add("random", bot="random")
    app = create_app(league, Settings(**settings), play=True)
    app.state.player._in_flight[(0, 0)] = {"group": 0, "rotation": 0, "seed": SEED, "bots": ["greedy", "random"],
                                           "started": 1.0e9}
    return league, app


def asgi_get(app, path: str) -> tuple[int, bytes]:
    """One GET through the app, without a server (its background work is not started)."""
    sent: list[dict] = []
    target, _, query = path.partition("?")

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": target, "raw_path": target.encode(),
             "query_string": query.encode(), "headers": [], "scheme": "http", "server": ("127.0.0.1", 80),
             "client": ("127.0.0.1", 1), "root_path": "", "http_version": "1.1", "asgi": {"version": "3.0"}}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


LIVE_ANSWERS = ("/api/games/live", "/live", "/live/0/0", "/live/0/0/replay", "/live/0/0/replay?n=3",
                "/api/games/live/0/0")


def _viewer(page: bytes) -> dict:
    return json.loads(re.search(rb'<script type="application/json" id="replay-data">(.*?)</script>', page,
                                re.S).group(1))


def _seat_entries(value):
    """Every object of ``value`` that is a seat of the table (it has ``completed_count``)."""
    if isinstance(value, dict):
        if "completed_count" in value:
            yield value
        for v in value.values():
            yield from _seat_entries(v)
    elif isinstance(value, list):
        for v in value:
            yield from _seat_entries(v)


def test_no_live_answer_of_a_revised_game_in_play_tells_what_a_player_may_not_know(tmp_path):
    game = _play(40)
    league, app = _app(tmp_path)
    _write_live(league, game)
    face_up = set()  # every card that has been on the table, face up
    for moves in range(len(game.history) + 1):
        seen = _replayed(game, moves)
        face_up |= {game.rules.puzzles[c].id for row in seen.rows for c in row if c >= 0}
        face_up |= {game.rules.puzzles[u.card].id for p in seen.players for u in p.unfinished}
    face_down = {game.rules.puzzles[c].id for deck in game.decks for c in deck} - face_up
    assert face_down
    for path in LIVE_ANSWERS:
        status, body = asgi_get(app, path)
        assert status == 200, (path, body[:300])
        text = body.decode()
        assert str(SEED) not in text and '"seed"' not in text and "seed " not in text, path
        assert not [c for c in face_down if f'"{c}"' in text or f">{c}<" in text], f"{path} shows a face-down card"
        data = json.loads(body) if path.startswith("/api") else _viewer(body) if "replay" in path else None
        if data is None:
            continue
        entries = list(_seat_entries(data))
        if path != "/api/games/live":
            assert entries, f"{path} shows the seats"
        for entry in entries:
            assert "completed" not in entry and "score" not in entry, f"{path} shows a hidden pile or score"
        if "replay" in path:
            assert data["result"] is None and len(data["actions"]) == len(game.history)
    state = json.loads(asgi_get(app, "/api/games/live/0/0")[1])
    assert state["moves"] == len(game.history) and state["delay"] == 0
    assert state["table"]["rows"] == spectator_observation(game)["rows"]


def test_the_operator_holds_the_public_some_moves_behind(tmp_path):
    game = _play(40)
    league, app = _app(tmp_path, live_delay=5)
    _write_live(league, game)
    state = json.loads(asgi_get(app, "/api/games/live/0/0")[1])
    assert state["moves"] == 35 and state["delay"] == 5
    assert state["table"] == json.loads(json.dumps(spectator_observation(_replayed(game, 35))))
    data = _viewer(asgi_get(app, "/live/0/0/replay")[1])
    assert len(data["actions"]) == 35 and len(data["steps"]) == 36
    page = asgi_get(app, "/live/0/0")[1]
    assert b"<b id=\"live-moves\">35</b>" in page and b"shown 5 moves behind the play" in page


def test_a_game_that_has_ended_shows_everything(tmp_path):
    game = _play(None)
    league, app = _app(tmp_path, live_delay=5)
    _write_live(league, game)
    data = _viewer(asgi_get(app, "/live/0/0/replay")[1])
    assert len(data["actions"]) == len(game.history), "no delay once the game is over"
    assert data["result"]["scores"] == game.scores()
    assert [e["score"] for e in data["steps"][-1]["seats"]] == game.scores()
    assert any(a["action"] and a["action"]["type"] == "finish" for a in data["actions"])


@pytest.mark.slow
def test_arena_serve_live_delay_holds_its_strangers_behind(tmp_path):
    from web_data_server import Serve

    league = tmp_path / "league.db"
    with League.create(league, RuleSpec.from_json(REVISED), 2, 0, {"move_ms": 2000}, "basic") as lg:
        lg.add("greedy", bot="greedy")
    game = _play(30)
    _write_live(league, game, 4, 1)
    server = Serve(league, "--no-play", "--live-delay", "7", "--unsafe-sandbox", "basic",
                   "--unsafe-build-sandbox", "basic").start()
    try:
        status, state = server.api("GET", "/api/games/live/4/1")
        assert status == 200 and state["delay"] == 7 and state["moves"] == 23, state
        assert "completed" not in json.dumps(state["table"]["seats"]).replace("completed_count", "")
    finally:
        assert server.stop() == 0, server.output()[-2000:]
    out = subprocess.run([sys.executable, "-m", "arena.cli", "serve", str(league), "--live-delay", "-1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "Traceback" not in out.stderr and "--live-delay" in out.stderr


@pytest.mark.slow
def test_chromium_draws_the_spectators_viewer_of_a_game_in_play(tmp_path):
    from test_web_site import chromium_dom

    game = _play(40)
    league, app = _app(tmp_path)
    _write_live(league, game)
    page = tmp_path / "live.html"  # the page holds its own policy, data and script
    page.write_bytes(asgi_get(app, "/live/0/0/replay")[1])
    dom = chromium_dom(page.as_uri() + "#step=40")
    assert re.search(r'id="result">in play; 40 actions so far<', dom), dom[-2000:]
    assert "score ?" in dom, "a hidden score is drawn as unknown"
    assert "completed " in dom and str(SEED) not in dom
