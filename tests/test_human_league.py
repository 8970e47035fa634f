"""A person against a league's bot on its site (``/play/BOT``): signed in by token, the bot
in the league's sandbox under its rules, the game stored apart with its replay, no rating
moved, one game at a time and a few an hour per author."""

from __future__ import annotations

import json
import time

import socket
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest
import uvicorn

from engine import RuleSpec
from arena.league.store import League, person_games
from arena.web import challenge, store
from arena.web.app import create_app
from arena.web.submissions import Settings


class Response:
    def __init__(self, status: int, headers, body: bytes):
        self.status_code, self.headers, self.text = status, {k.lower(): v for k, v in headers.items()}, body.decode()

    def json(self):
        return json.loads(self.text)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Client:
    """The app served by uvicorn on 127.0.0.1 in a thread, asked over HTTP without following redirects."""

    def __init__(self, app):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        self.opener = urllib.request.build_opener(_NoRedirect)

    def _call(self, method, path, params=None, data=None, content=None):
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        body = urllib.parse.urlencode(data).encode() if data is not None else content.encode() if content else None
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if data is not None else {}
        req = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with self.opener.open(req, timeout=60) as r:
                return Response(r.status, dict(r.headers), r.read())
        except urllib.error.HTTPError as exc:
            return Response(exc.code, dict(exc.headers), exc.read())

    def get(self, path, params=None):
        return self._call("GET", path, params)

    def post(self, path, params=None, data=None, content=None):
        return self._call("POST", path, params, data, content)

    def close(self):
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture()
def site(tmp_path):
    path = tmp_path / "league.db"
    with League.create(path, RuleSpec.make(["revised"]), 2, 0, {"move_ms": 2000}, "basic") as league:
        league.add("greedy", bot="greedy")
        league.add("random", bot="random")
        league.retire("random")
    with store.open_league(path) as league:
        token = store.new_token(league, "alice")
    client = Client(create_app(path, Settings(game_tier="basic"), play=False))
    yield path, client, token
    client.close()


def person_games_of(path):
    with League.open(path) as league:
        league.conn.execute("SELECT 1")
        return [dict(g, seed=seed) for g, (seed,) in zip(person_games(league), league.conn.execute(
            "SELECT seed FROM people_games ORDER BY id DESC"))]


def play_to_the_end(client, base: str, key: str, limit_s: float = 300) -> dict:
    view = client.get(f"{base}api/state", params={"token": key}).json()
    end = time.monotonic() + limit_s
    while not view["over"]:
        assert time.monotonic() < end, "the game did not end"
        if view["legal"]:
            r = client.post(f"{base}api/action", params={"token": key}, content=json.dumps(view["legal"][0]))
            assert r.status_code == 200, r.text
            view = client.get(f"{base}api/state", params={"token": key}).json()
        else:
            view = client.get(f"{base}api/state", params={"token": key, "turn": view["turn"],
                                                          "events": len(view["events"])}).json()
    return view


def test_an_author_plays_a_bot_of_the_league_and_no_rating_moves(site, monkeypatch):
    path, client, token = site
    assert client.get("/play/greedy").status_code == 200
    r = client.post("/play/greedy", data={"token": "wrong"})
    assert r.status_code == 401 and "Unknown token" in r.text
    r = client.post("/play/random", data={"token": token})
    assert r.status_code == 404 and "No active bot" in r.text  # retired
    r = client.post("/play/greedy", data={"token": token})
    assert r.status_code == 303, r.text
    where = r.headers["location"]
    base, key = where.split("?token=")
    assert base.startswith("/play/game/") and base.endswith("/")
    again = client.post("/play/greedy", data={"token": token})
    assert again.status_code == 429 and "in play already" in again.text
    assert client.get(base).status_code == 403  # the page answers only to its key
    page = client.get(base, params={"token": key})
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    assert client.get(f"{base}page.js").status_code == 200
    code = client.post(f"{base}api/action", params={"token": key}, content='{"type": "fly"}').status_code
    assert code in (400,)
    gid = base.split("/")[3]
    view = client.get(f"{base}api/state", params={"token": key}).json()
    while not view["legal"]:
        view = client.get(f"{base}api/state", params={"token": key, "turn": view["turn"],
                                                      "events": len(view["events"])}).json()
    public = client.get(f"/api/play/{gid}")  # what anyone may see of it: a spectator's view
    assert public.status_code == 200 and public.json()["bots"] == ["greedy", "alice"]
    text = public.text
    seed = person_games_of(path)[0]["seed"]
    assert str(seed) not in text and '"seed"' not in text and '"decision"' not in text
    assert all("score" not in s and "completed" not in s for s in public.json()["observation"]["seats"])
    last = play_to_the_end(client, base, key)
    assert last["over"] and last["names"][1] == "alice" and last["replay"]
    assert client.get(f"{base}{last['replay']}").status_code == 200
    with League.open(path) as league:
        assert league.games() == []  # the league's games (and so its ratings) are untouched
        games = person_games(league)
    assert len(games) == 1 and games[0]["author"] == "alice" and games[0]["bot"] == "greedy"
    assert games[0]["scores"] == last["result"]["scores"] and games[0]["replay"]
    replay = json.loads((path.parent / f"{path.name}.replays" / games[0]["replay"]).read_text())
    assert replay["seats"] == ["greedy", "alice"] and replay["sandbox"]["tier"] == "basic"
    assert replay["rules"]["variants"] == ["revised"]
    table = client.get("/play")
    assert table.status_code == 200 and "alice" in table.text and "greedy" in table.text
    monkeypatch.setattr(challenge, "PER_HOUR", 1)
    r = client.post("/play/greedy", data={"token": token})
    assert r.status_code == 429 and "last hour" in r.text
