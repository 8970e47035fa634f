"""``arena match --games-out FILE`` (a JSON line per game that ``arena replay`` reads, as
cutechess-cli's -pgnout) and ``--log-protocol FILE`` (every line both ways, timed)."""

from __future__ import annotations

import json
import re

from arena.process.transport import LineTransport
from arena.replay.lines import load_game
from cli_helpers import run


def test_games_out_holds_every_game_as_a_replay(tmp_path):
    out, games = tmp_path / "m", tmp_path / "games.jsonl"
    run("match", "greedy", "random", "--games", 4, "-j", 1, "--inprocess", "--output", out, "--quiet",
        "--games-out", games)
    lines = [json.loads(x) for x in games.read_text().splitlines()]
    stored = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    assert [x["game"]["key"] for x in lines] == [x["key"] for x in stored]
    for line, game in zip(lines, stored):
        assert line["format"] and line["actions"] and line["game"]["ranking"] == game["ranking"]
        assert line["game"]["reason"] == game["reason"] and line["result"]["scores"] == game["scores"]
    # arena replay reads the first line; the library reads any
    r = run("replay", games, "-q")
    assert r.stdout.startswith(f"{games}, game 1 of 4: reproduces; scores {stored[0]['scores']}")
    record, label = load_game(games, 3)
    assert record["game"]["key"] == stored[2]["key"] and label.endswith("game 3 of 4")
    assert "viewer written" in run("replay", games, "--html", tmp_path / "g.html").stdout
    # a continued match appends the games it plays
    run("match", "greedy", "random", "--games", 6, "-j", 1, "--inprocess", "--output", out, "--quiet",
        "--games-out", games)
    assert len(games.read_text().splitlines()) == 6
    r = run("match", "greedy", "random", "--games", 2, "--inprocess", "--no-replays", "--output", tmp_path / "n",
            "--games-out", games, ok=False)
    assert "drop --no-replays" in r.stderr


def test_log_protocol_has_every_line_both_ways_with_its_time(tmp_path):
    assert LineTransport.trace is None  # off: one attribute test a line
    log = tmp_path / "proto.log"
    out = tmp_path / "p"
    run("match", "greedy", "random", "--games", 2, "-j", 1, "--sandbox", "none", "--output", out, "--quiet",
        "--no-replays", "--log-protocol", log)
    lines = log.read_text().splitlines()
    pattern = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z (\S+) seat(\d) (\S+) ([<>]) (\{.*\})$")
    parsed = [pattern.match(x) for x in lines]
    assert all(parsed), [x for x, m in zip(lines, parsed) if not m][:3]
    keys = [json.loads(x)["key"] for x in (out / "games.jsonl").read_text().splitlines()]
    for key in keys:  # the second game reuses the processes of the first: logged as well
        mine = [(m.group(2), m.group(3), m.group(4), json.loads(m.group(5))) for m in parsed if m.group(1) == key]
        for seat in ("0", "1"):
            sent = [msg.get("type") for s, _, d, msg in mine if s == seat and d == ">"]
            read = [msg.get("type") or "reply" for s, _, d, msg in mine if s == seat and d == "<"]
            assert sent[0] == "hello" and sent[-1] == "game_over" and "action" in sent
            assert read[0] == "ready" and len(read) == len(sent) - 1  # every request answered, one line each
    r = run("match", "greedy", "random", "--inprocess", "--output", tmp_path / "i", "--log-protocol", log, ok=False)
    assert "in-process play has none" in r.stderr
