"""Following a game in flight: the moves rebuilt from the protocol log a worker appends
(:mod:`arena.web.live`), checked against the replay the referee writes, and ``arena serve``'s
live viewer, its JSON state and the leaderboard's rating history on a real server."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from arena.referee import play_game
from arena.web import live, player
from proc_check import misbehaving

SHORT = {"variants": [], "params": {"max_rounds": 3}}


def _live_game(tmp_path: Path, seats: list[dict], **kw) -> tuple[dict, live.LiveGame]:
    """Play one game with its protocol log where ``arena serve``'s workers write it; the
    referee's replay and what :class:`LiveGame` rebuilt from the log."""
    league = tmp_path / "l.db"
    player.live_dir(league).mkdir()
    request = {"seats": seats, "seed": 5, "rules": SHORT, "players": len(seats), "deal": None,
               "time_control": {"move_ms": 400, "startup_ms": 10000}, "sandbox": "basic", "fault_policy": "forfeit",
               "replay_path": str(tmp_path / "0-0.json"), **kw}
    task = SimpleNamespace(group=0, rotation=0, bots=[s["name"] for s in seats])
    request["protocol_log"] = player._start_live(league, task, request)
    play_game(request)
    followed = live.follow(league, 0, 0)
    assert followed is not None
    return json.loads((tmp_path / "0-0.json").read_text()), followed


@pytest.mark.parametrize("first", ["good", "illegal", "hang", "garbage", "wrong_id"])
def test_the_moves_rebuilt_from_the_protocol_log_are_the_referees(tmp_path, first):
    replay, followed = _live_game(tmp_path, [{"name": "one", "cmd": misbehaving(first)},
                                             {"name": "two", "cmd": misbehaving("good")}])
    record = followed.record()
    assert record["actions"] == replay["actions"], "a fault is a forfeit, as the referee ruled"
    assert record["bots"] == ["one", "two"] and followed.state()["moves"] == len(replay["actions"])
    times = record["move_times"]
    assert len(times) == len(record["actions"]) and [t is None for t in times] == [t is None for t in replay["move_times"]]
    assert all(t["wall_ms"] >= 0 for t in times if t)
    if first != "good":
        assert replay["actions"][0] == {"seat": 0, "forfeit": True}


def test_a_game_half_written_shows_its_moves_so_far(tmp_path):
    replay, followed = _live_game(tmp_path, [{"name": "one", "cmd": misbehaving("good")},
                                             {"name": "two", "cmd": misbehaving("good")}])
    text = player.live_path(tmp_path / "l.db", 0, 0).read_bytes()
    cut = tmp_path / "cut.log"
    cut.write_bytes(text[:len(text) // 2] + b"2026-11-27T10:00:00.000000Z 0-0 seat0 one < {\"id\"")  # a line in flight
    partial = live.LiveGame(cut)
    assert partial.update()
    record = partial.record()
    n = len(record["actions"])
    assert 0 < n < len(replay["actions"]) and record["actions"] == replay["actions"][:n]
    assert record["result"] is None
    from arena.replay.html import render_html
    assert "replay-data" in render_html(record)  # the viewer shows the game so far
    cut.unlink()
    assert not partial.update()


def test_a_file_that_is_not_a_live_game_is_said_so(tmp_path):
    path = player.live_path(tmp_path / "l.db", 3, 1)
    path.parent.mkdir()
    path.write_text("not json\n")
    followed = live.follow(tmp_path / "l.db", 3, 1)
    assert followed.record() is None and "cannot be followed" in followed.state()["error"]
    assert live.follow(tmp_path / "l.db", 4, 0) is None


# ---------------------------------------------------------------- a real server

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402
from arena.web import store  # noqa: E402
from test_web_author import SLOW_BOT, browse, package  # noqa: E402
from web_data_server import Serve  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("live")
    server = Serve(root / "league.db", "--concurrency", "1", "--pace", "0", "--unsafe-sandbox", "basic",
                   "--unsafe-build-sandbox", "basic", "--check-timeout", "120")
    with League.create(server.league, RuleSpec(), 2, 0, {"move_ms": 2000}, "basic") as league:
        league.add("greedy", bot="greedy")
        league.add("random", bot="random")
    with store.open_league(server.league) as league:
        token = store.new_token(league, "alice")
    server.start()
    status, sub = server.api("POST", "/api/submissions", package("slowpy", "1", SLOW_BOT, delay="0.02"), token)
    assert status == 202, sub
    assert server.wait_submission(sub["id"])["status"] == "accepted", server.output()[-3000:]
    yield server
    assert server.stop() == 0, server.output()[-3000:]


def _a_followed_game(server: Serve, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for g in server.api("GET", "/api/games/live")[1]["games"]:
            if any(b.startswith("slowpy@") for b in g["bots"]):
                status, state = server.api("GET", f"/api/games/live/{g['group']}/{g['rotation']}")
                if status == 200 and state["state"] == "playing" and state.get("followed") and state["moves"] > 3:
                    return state
        time.sleep(0.2)
    raise AssertionError(f"no game of slowpy was followed: {server.output()[-3000:]}")


def _viewer_actions(page: bytes) -> list[dict]:
    data = re.search(rb'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S).group(1)
    return [{k: a[k] for k in ("seat", "action") if a.get(k) is not None} for a in json.loads(data)["actions"]]


@pytest.mark.slow
def test_a_game_in_flight_is_followed_move_by_move_then_shows_its_replay(served):
    state = _a_followed_game(served)
    g, r = state["group"], state["rotation"]
    status, page, headers = served.exchange("GET", f"/live/{g}/{r}")
    if status == 303:
        pytest.skip("the game ended between two requests")
    text = page.decode()
    assert status == 200 and 'id="live-frame"' in text and f'data-poll="/api/games/live/{g}/{r}"' in text
    assert headers["Cache-Control"] == "no-store" and "connect-src 'self'" in headers["Content-Security-Policy"]
    assert "script-src 'sha256-" in headers["Content-Security-Policy"]
    first = served.exchange("GET", f"/live/{g}/{r}/replay?n=1")
    time.sleep(1.2)
    later = served.exchange("GET", f"/live/{g}/{r}/replay?n=2")
    seen = [_viewer_actions(p[1]) for p in (first, later) if p[0] == 200]
    assert seen and len(seen[-1]) >= len(seen[0]) > 0
    if len(seen) == 2:
        assert seen[1][:len(seen[0])] == seen[0] and len(seen[1]) > len(seen[0]), "the moves grow as they are played"
    assert first[2]["Cache-Control"] == "no-store"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        status, now = served.api("GET", f"/api/games/live/{g}/{r}")
        if now["state"] == "finished":
            break
        time.sleep(0.3)
    assert now["game_url"] == f"/game/{now['game']}"
    status, stored = served.api("GET", f"/game/{now['game']}/replay.json")
    assert status == 200 and stored["actions"][:len(seen[-1])] == seen[-1], "what was shown live is what was played"
    status, page, _ = served.exchange("GET", f"/live/{g}/{r}")  # the page of a stored game is the game's own
    assert status == 200 and f"Game #{now['game']}".encode() in page and b'id="live-frame"' not in page
    assert not player.live_path(served.league, g, r).exists()
    assert served.api("GET", "/api/games/live/99999/0")[0] == 404
    assert served.exchange("GET", "/live/99999/0")[0] == 404


@pytest.mark.slow
def test_chromium_follows_a_live_game_and_draws_the_rating_history(served, tmp_path):
    state = _a_followed_game(served)
    dom = browse(f"{served.url}/live/{state['group']}/{state['rotation']}", "--dump-dom")
    if 'id="live-state"' in dom:  # the page's script asked for the game's state and showed the new moves
        first = int(re.search(r'data-moves="(\d+)"', dom).group(1))
        assert int(re.search(r'id="live-moves">(\d+)<', dom).group(1)) > first and 'id="live-frame"' in dom
    else:  # the game ended meanwhile: the script opened its page
        assert re.search(r"<h1>Game #\d+</h1>", dom), dom[-2000:]
    shot = tmp_path / "live.png"
    browse(f"{served.url}/live/{state['group']}/{state['rotation']}", f"--screenshot={shot}",
           "--window-size=1200,1000")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    # the leaderboard's rating over time: a point per background fit, kept in the league file
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        board = served.api("GET", "/api/leaderboard")[1]
        if all(len(r["trend"]) >= 2 for r in board["table"]):
            break
        time.sleep(1)
    rows = {r["name"]: r for r in board["table"]}
    assert len(rows["slowpy@1"]["trend"]) >= 2 and all(isinstance(p[1], float) for p in rows["slowpy@1"]["trend"])
    page = browse(served.url + "/", "--dump-dom")
    assert page.count('<svg class="spark"') >= 2 and "<polyline" in page
    shot = tmp_path / "board.png"
    browse(served.url + "/", f"--screenshot={shot}", "--window-size=1200,800")
    assert shot.stat().st_size > 10_000
