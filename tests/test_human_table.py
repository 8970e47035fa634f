"""A person at the table (``arena play ... --human``), played as a person or a script would.

Each test starts the real command with ``--no-browser`` and plays through the page's JSON
API (as the page does: ``GET /api/state`` waiting for a change, ``POST /api/action`` with
one item of ``legal``), or through Chromium by clicking and by the keyboard. The game is
then checked as a normal replay with the person's name in their seat.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from engine import Game, RuleSpec
from engine.replay import load_replay, steps

ARENA = [sys.executable, "-m", "arena.cli"]
SEED = 736251904  # a number no answer could hold by chance


class Table:
    """``arena play ... --human --no-browser`` as a subprocess, and its page's address."""

    def __init__(self, tmp_path: Path, *args: str):
        self.replay = tmp_path / "game.json"
        self.proc = subprocess.Popen([*ARENA, "play", *args, "--human", "--no-browser", "--replay", str(self.replay)],
                                     cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = None
        end = time.monotonic() + 120
        while self.url is None:
            assert time.monotonic() < end, "arena play --human printed no address"
            ready, _, _ = select.select([self.proc.stderr], [], [], 1)
            if ready:
                line = self.proc.stderr.readline()
                assert line, f"arena play --human ended: {self.proc.stdout.read()}"
                m = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
                if m:
                    self.url, self.token = m.group(1), m.group(2)
        self.answers: list[str] = []

    def get(self, path: str, **query) -> dict:
        q = "&".join(f"{k}={v}" for k, v in {**query, "token": self.token}.items())
        with urllib.request.urlopen(f"{self.url}{path}?{q}", timeout=60) as r:
            text = r.read().decode()
        self.answers.append(text)
        return json.loads(text)

    def post(self, path: str, body, token: str | None = None) -> tuple[int, dict]:
        req = urllib.request.Request(f"{self.url}{path}?token={token or self.token}", method="POST",
                                     data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text, code = r.read().decode(), r.status
        except urllib.error.HTTPError as exc:
            text, code = exc.read().decode(), exc.code
        self.answers.append(text)
        return code, json.loads(text)

    def finish(self) -> str:
        code, _ = self.post("/api/leave", {})
        assert code == 200
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        assert "Traceback" not in err
        return out

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def play_by_api(table: Table, limit_s: float = 400) -> list[dict]:
    """Play the first legal move each turn as the page does; every state answer, in order."""
    states, view = [], table.get("/api/state")
    end = time.monotonic() + limit_s
    while not view["over"]:
        assert time.monotonic() < end, "the game did not end"
        states.append(view)
        if view["legal"]:
            code, body = table.post("/api/action", view["legal"][0])
            assert code == 200, body
            view = table.get("/api/state")
        else:
            view = table.get("/api/state", turn=view["turn"], events=len(view["events"]))
    states.append(view)
    return states


def decks_by_history(replay: dict) -> list[list[str]]:
    """The ids in both decks after each number of history entries (0: the deal)."""
    game = Game.new(RuleSpec.from_json(replay["rules"]), replay["players"], replay["seed"], replay.get("deal"))
    ids = lambda g: [g.rules.puzzles[c].id for deck in g.decks for c in deck if c >= 0]  # noqa: E731
    out = [ids(game)]
    for _, _, g in steps(replay):
        out.append(ids(g))
    return out


def test_a_scripted_person_plays_the_revised_rules_and_sees_nothing_hidden(tmp_path):
    table = Table(tmp_path, "planner-fast", "random", "--rules", "revised", "--seat", "2", "--seed", str(SEED))
    try:
        first = table.get("/api/state")
        while not first["legal"]:
            first = table.get("/api/state", turn=first["turn"], events=len(first["events"]))
        # a hand-made illegal move, a malformed body and a wrong token change nothing
        code, body = table.post("/api/action", {"type": "take_puzzle", "color": "white", "slot": 9})
        assert code == 400 and "not one of the" in body["error"] and "nothing was played" in body["error"]
        code, body = table.post("/api/action", ["pass"])
        assert code == 400 and body["error"]
        code, body = table.post("/api/action", first["legal"][0], token="guess")
        assert code == 403
        again = table.get("/api/state")
        assert again["turn"] == first["turn"] and again["legal"] == first["legal"]
        states = play_by_api(table)
        out = table.finish()
    finally:
        table.kill()
    assert states[0]["seat"] == 2 and states[-1]["over"]
    assert states[-1]["replay"].startswith("replay?token=")  # beside the page
    replay = load_replay(table.replay)
    name = replay["seats"][2]
    assert replay["seats"][:2] == ["planner-fast", "random"] and name and name in out
    assert subprocess.run([*ARENA, "replay", str(table.replay), "-q"], capture_output=True).returncode == 0
    decks = decks_by_history(replay)
    during = [s for s in states if not s["over"]]
    assert len(during) > 10
    texts = [a for a in table.answers if '"over":true' not in a]
    assert texts and not any(str(SEED) in t or '"seed"' in t for t in texts)
    for view in during:
        text = json.dumps(view)
        hidden = decks[len(view["events"])]
        assert not [i for i in hidden if f'"{i}"' in text], "a card still in a deck was shown"
        for s in view["observation"]["seats"]:
            if s["seat"] != 2:  # revised rules: the others' scores and piles are hidden (R10)
                assert "score" not in s and "completed" not in s
    assert all("score" in s for s in states[-1]["observation"]["seats"])  # revealed at the end


def test_bad_options_are_one_sentence(tmp_path):
    for args, words in ((["greedy", "--human", "--seat", "5"], "--seat 5"),
                        (["greedy", "--seat", "1"], "--human"),
                        (["--human", "--players", "2"], "name at least one bot")):
        run = subprocess.run([*ARENA, "play", *args, "--no-browser"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
        assert run.returncode != 0 and words in run.stderr and "Traceback" not in run.stderr, run.stderr
