"""cutechess-cli's ``-each``, ``-seeds`` and ``-wait`` on ``arena match``: what every bot
gets, a gauntlet of several heroes, and a pause between a worker's games."""

from __future__ import annotations

import json

import yaml

from cli_helpers import run


def test_each_gives_every_bot_its_options_and_time_control_under_their_own(tmp_path):
    out = tmp_path / "m.yaml"
    (tmp_path / "engines").mkdir()
    (tmp_path / "engines" / "bot.py").write_text("print('hi')\n")
    run("match", "greedy", "--engine", "cmd='python3 bot.py' option.depth=5", "--each", "option.depth=3",
        "--each", "move-ms=700", "--each", f"dir={tmp_path / 'engines'}", "--no-check", "--write-yaml", out)
    doc = yaml.safe_load(out.read_text())
    greedy, mine = doc["bots"]
    assert greedy == {"bot": "greedy", "options": {"depth": 3}, "time_control": {"move_ms": 700}}
    assert mine["options"] == {"depth": 5} and mine["time_control"] == {"move_ms": 700}
    assert mine["workdir"] == str(tmp_path / "engines") and str(tmp_path / "engines" / "bot.py") in mine["cmd"]


def test_each_refuses_what_belongs_to_one_bot(tmp_path):
    r = run("match", "greedy", "random", "--each", "name=x", ok=False, one_line=True)
    assert "--each 'name=x': name belongs to one bot" in r.stderr
    r = run("match", "greedy", "random", "--each", "hash=16", ok=False, one_line=True)
    assert "--each 'hash=16': unknown key 'hash'" in r.stderr


def test_seeds_make_the_first_bots_a_gauntlets_heroes(tmp_path):
    out = tmp_path / "g"
    run("match", "greedy", "planner-fast", "random", "pass", "--gauntlet", "--seeds", 2, "--games", 8,
        "--inprocess", "--no-replays", "-o", out)
    pairs = {frozenset(json.loads(x)["bots"]) for x in (out / "games.jsonl").read_text().splitlines()}
    assert pairs == {frozenset(p) for p in [("greedy", "random"), ("greedy", "pass"), ("planner-fast", "random"),
                                            ("planner-fast", "pass")]}
    r = run("match", "greedy", "random", "--seeds", 1, ok=False, one_line=True)
    assert "--seeds N makes the first N bots a gauntlet's heroes: give --gauntlet too" in r.stderr


def test_wait_pauses_between_a_workers_games(tmp_path):
    r = run("match", "greedy", "random", "--games", 4, "-j", 1, "--inprocess", "--no-replays", "--wait", 400,
            "-o", tmp_path / "m", "--json")
    summary = json.loads(r.stdout)["summary"]
    assert summary["played"] == 4 and summary["elapsed_s"] >= 3 * 0.4  # three pauses, however fast the games


def _deals_by_group(out):
    by: dict = {}
    for line in (out / "games.jsonl").read_text().splitlines():
        g = json.loads(line)
        replay = json.loads(open(g["replay"]).read())
        by.setdefault(g["group"], set()).add(json.dumps(replay["deal"], sort_keys=True))
    return by


def test_deals_policy_round_gives_every_pair_of_a_round_the_same_deal(tmp_path):
    book = tmp_path / "book.jsonl"
    run("deals", "make", "--count", 3, "--seed", 1, "--out", book)
    out, plain = tmp_path / "r", tmp_path / "d"
    run("match", "greedy", "random", "pass", "--games", 12, "--deals", book, "--deals-policy", "round",
        "--inprocess", "-o", out, "--quiet")
    by = _deals_by_group(out)
    assert all(len(v) == 1 for v in by.values())  # both games of a pair: one deal
    assert by[0] == by[1] == by[2] and by[3] == by[4] == by[5] and by[0] != by[3]  # round 1, round 2
    run("match", "greedy", "random", "pass", "--games", 12, "--deals", book, "--inprocess", "-o", plain, "--quiet")
    default = _deals_by_group(plain)
    assert default[0] != default[1] != default[2]  # the default: a new deal for each pair
    r = run("match", "greedy", "random", "--deals-policy", "round", ok=False, one_line=True)
    assert "give it with --deals BOOK" in r.stderr
