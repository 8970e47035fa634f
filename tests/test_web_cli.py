"""``arena league token``, ``arena submit`` and ``arena serve`` on bad input, and the bot page's
data (versions, faults with their details, rating over time) read from a league file."""

from __future__ import annotations

import json
import re
import socket

from typer.testing import CliRunner

from engine import RuleSpec

from arena.cli import app
from arena.league import League
from arena.tournament.schedule import GameTask
from arena.web import store, views
from arena.web.player import replay_path

runner = CliRunner()


def league_file(tmp_path):
    path = tmp_path / "l.db"
    with League.create(path, RuleSpec(), 2, 0, {"move_ms": 100}, "basic") as league:
        league.add("a@1", bot="random")
        league.add("b", bot="greedy")
    return path


def test_token_new_prints_a_token_once_and_stores_only_its_hash(tmp_path):
    path = league_file(tmp_path)
    res = runner.invoke(app, ["league", "token", "new", str(path), "alice"])
    assert res.exit_code == 0, res.output
    token = res.stdout.strip().splitlines()[0]
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    with store.open_league(path) as league:
        assert store.author_of(league, token) == "alice"
        assert store.author_of(league, token + "x") is None
        assert token not in json.dumps(league.conn.execute("SELECT * FROM web_authors").fetchall())
        again = store.new_token(league, "alice")  # a new token replaces the old one
        assert store.author_of(league, token) is None and store.author_of(league, again) == "alice"
    res = runner.invoke(app, ["league", "token", "list", str(path)])
    assert res.stdout.strip() == "alice"


def test_bad_input_gets_one_sentence_and_no_traceback(tmp_path):
    res = runner.invoke(app, ["league", "token", "new", str(tmp_path / "none.db"), "alice"])
    assert res.exit_code == 2 and "no such league" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["league", "token", "new", str(league_file(tmp_path)), "bad name"])
    assert res.exit_code == 2 and "not a valid author name" in res.output
    res = runner.invoke(app, ["submit", str(tmp_path), "--server", "http://127.0.0.1:9", "--token", "t"])
    assert res.exit_code == 2 and "no bot.toml in this folder" in res.output
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bot.toml").write_text('name = "x"\nversion = "1"\nauthor = "a"\nrun = "python3 bot.py"\n')
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = runner.invoke(app, ["submit", str(tmp_path / "pkg"), "--server", f"http://127.0.0.1:{port}", "--token", "t"])
    assert res.exit_code == 2 and "cannot reach" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["submit", str(tmp_path / "pkg"), "--server", f"http://127.0.0.1:{port}"], env={"ARENA_TOKEN": ""})
    assert res.exit_code == 2 and "give --token" in res.output
    res = runner.invoke(app, ["serve", str(tmp_path / "none.db")])
    assert res.exit_code == 2 and "no such league" in res.output


def test_bot_data_has_versions_faults_with_details_and_rating_history(tmp_path):
    path = league_file(tmp_path)
    replay_path(path, 0, 0).parent.mkdir()
    with store.open_league(path) as league:
        league.add("a@2", bot="random")
        for i in range(6):
            task = GameTask(f"k{i}", i, 0, 100 + i, ("a@1", "b") if i % 2 else ("b", "a@2"))
            fault = {"verdict": "timeout", "move": 3, "detail": "no reply within 100 ms"}
            faults = [[fault] if name.startswith("a@") and i == 5 else [] for name in task.bots]
            outcome = {"result": {"scores": [3, 9], "ranking": [2, 1], "rounds": 10},
                       "seats": [{"faults": f} for f in faults]}
            assert league.record_game(task, outcome, "bots")
            replay_path(path, i, 0).write_text(json.dumps({"seed": 100 + i, "faults": faults}))
        data = views.bot(league, "a")
    assert [v["entry"] for v in data["versions"]] == ["a@2", "a@1"]
    assert data["faults"] == [{"game": 6, "entry": "a@1", "verdict": "timeout", "move": 3,
                               "detail": "no reply within 100 ms"}]
    assert set(data["history"]) == {"a@1", "a@2"}
    assert all(len(points) >= 2 for points in data["history"].values())
    assert [g["id"] for g in data["games"]] == [6, 5, 4, 3, 2, 1]


def test_the_leaderboard_shows_a_retirement_at_once(tmp_path):
    path = league_file(tmp_path)
    with store.open_league(path) as league:
        assert {r["name"]: r["status"] for r in views.leaderboard(league)["table"]}["a@1"] == "active"
        league.retire("a@1")
        assert {r["name"]: r["status"] for r in views.leaderboard(league)["table"]}["a@1"] == "retired"
