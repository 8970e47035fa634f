"""Leagues: the commands, the file, fair matchmaking, and ratings refitted on all games."""

from __future__ import annotations

import itertools
import json
import random
import sys

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.league import League, LeagueError
from arena.league.matchmaking import pick_table
from arena.league.table import league_table
from arena.tournament.ratings import fit_ratings
from engine import RuleSpec

runner = CliRunner()


def arena(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def league_file(tmp_path):
    path = tmp_path / "ladder.db"
    assert arena("league", "new", path, "--rules", "revised", "--seed", 5).exit_code == 0
    for name, bot in (("greedy", "greedy"), ("random", "random"), ("greedy@2", "greedy")):
        result = arena("league", "add", path, name, "--bot", bot)
        assert result.exit_code == 0, result.output
    return path


def test_league_commands_new_add_play_table_retire(league_file):
    result = arena("league", "play", league_file, "--games", 12, "-q")
    assert result.exit_code == 0, result.output
    assert "12 games played" in result.output
    result = arena("league", "table", league_file, "--json")
    tab = json.loads(result.stdout)
    assert tab["games"] == 12 and tab["seats"] == 2
    rows = {r["name"]: r for r in tab["table"]}
    assert sum(r["games"] for r in rows.values()) == 24
    assert rows["random"]["elo"] < rows["greedy"]["elo"]
    assert all(len(r["form"]) == min(5, r["games"]) and set(r["form"]) <= set("WDL") for r in rows.values())
    text = arena("league", "table", league_file).output
    assert "95% interval" in text and "greedy@2" in text
    import csv
    import io
    rows = list(csv.DictReader(io.StringIO(arena("league", "table", league_file, "--csv").output)))
    assert [r["name"] for r in rows] == [r["name"] for r in tab["table"]] and rows[0]["elo_low"]
    assert arena("league", "retire", league_file, "random").exit_code == 0
    result = arena("league", "play", league_file, "--games", 4, "-q")
    assert result.exit_code == 0
    with League.open(league_file) as league:
        last = league.games()[-4:]
    assert all("random" not in [x["bot"] for x in g["seats"]] for g in last)
    assert "random (retired)" in arena("league", "table", league_file).output


def test_a_new_version_is_a_new_entry_and_names_are_never_reused(league_file):
    result = arena("league", "add", league_file, "greedy", "--bot", "greedy")
    assert result.exit_code == 2
    assert "a new version is a new entry" in result.output and "greedy@2" in result.output
    result = arena("league", "add", league_file, "greedy@3", "--bot", "greedy")
    assert result.exit_code == 0 and "still playing" in result.output
    assert arena("league", "retire", league_file, "random").exit_code == 0
    assert arena("league", "add", league_file, "random", "--bot", "random").exit_code == 2


@pytest.mark.parametrize("args, message", [
    (["league", "add", "{f}", "x", "--bot", "nobody"], "unknown bot 'nobody'"),
    (["league", "add", "{f}", "x"], "exactly one of --bot"),
    (["league", "add", "{f}", "bad name", "--bot", "greedy"], "not a valid entry name"),
    (["league", "add", "{f}", "x", "--cmd", "/no/such/bot"], "'/no/such/bot' was not found"),
    (["league", "retire", "{f}", "nobody"], "no entry 'nobody'"),
    (["league", "new", "{f}"], "already exists"),
    (["league", "table", "{f}.missing"], "no such league"),
])
def test_league_mistakes_are_sentences(league_file, args, message):
    result = arena(*[a.replace("{f}", str(league_file)) for a in args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_play_needs_enough_active_entries(tmp_path):
    path = tmp_path / "l.db"
    arena("league", "new", path, "--seats", 3)
    arena("league", "add", path, "a", "--bot", "greedy")
    arena("league", "add", path, "b", "--bot", "random")
    result = arena("league", "play", path, "--games", 3)
    assert result.exit_code == 2 and "3 seats need at least 3 active entries" in result.output


def test_not_a_league_file(tmp_path):
    path = tmp_path / "other.db"
    path.write_bytes(b"not sqlite at all" * 10)
    with pytest.raises(LeagueError, match="not a league file"):
        League.open(path)


def simulate(entries, groups, seats=2, elo=None, start=None, seed=0):
    counts = dict(start or {})
    met = {}
    tables = []
    for g in range(groups):
        table = pick_table(entries, counts, elo or {}, met, seats, random.Random(f"{seed}:{g}"))
        tables.append(table)
        for e in table:
            counts[e] = counts.get(e, 0) + seats
        for a, b in itertools.combinations(table, 2):
            met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + seats
    return counts, met, tables


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_matchmaking_keeps_game_counts_even(seats):
    entries = [f"bot{i}" for i in range(7)]
    elo = {e: 150.0 * i for i, e in enumerate(entries)}  # a wide field: ratings pull against evenness
    counts, _, _ = simulate(entries, 210, seats, elo)
    assert max(counts.values()) - min(counts.values()) <= 3 * seats  # at most three groups apart


def test_matchmaking_lets_a_newcomer_catch_up_first():
    entries = ["a", "b", "c", "d"]
    start, _, _ = simulate(entries, 40)
    assert max(start.values()) - min(start.values()) <= 4
    counts, _, tables = simulate(entries + ["new"], 40, start=start)
    # The newcomer gains 2 games a group, the others 2 between four: level after ~27 groups.
    assert all("new" in t for t in tables[:26])
    assert max(counts.values()) - min(counts.values()) <= 4


def test_matchmaking_prefers_close_ratings():
    entries = ["a", "b", "c", "d"]
    elo = {"a": 0.0, "b": 20.0, "c": 600.0, "d": 620.0}
    _, met, _ = simulate(entries, 100, elo=elo)
    close = met.get(frozenset(("a", "b")), 0) + met.get(frozenset(("c", "d")), 0)
    far = sum(met.get(frozenset(p), 0) for p in (("a", "c"), ("a", "d"), ("b", "c"), ("b", "d")))
    assert close > 2 * far
    assert far > 0  # repeated pairings are still spread a little


def test_matchmaking_is_deterministic_for_a_seed():
    entries = ["a", "b", "c", "d", "e"]
    assert simulate(entries, 30, seed=4)[2] == simulate(entries, 30, seed=4)[2]


def test_ratings_are_refitted_on_all_games(tmp_path):
    path = tmp_path / "l.db"
    with League.create(path, RuleSpec.make(["revised"]), seats=2, seed=1) as league:
        league.add("greedy", bot="greedy")
        league.add("random", bot="random")
        league.add("greedy@2", bot="greedy")
    assert arena("league", "play", path, "--games", 10, "-q").exit_code == 0
    with League.open(path) as league:
        games = league.games()
        tab = league_table(league)
    refit = fit_ratings(list(reversed(games)), anchor="greedy")
    for row in tab["table"]:
        assert row["elo"] == pytest.approx(refit.elo[row["name"]], abs=1e-3)
    groups = {}
    for g in games:
        groups.setdefault(g["group"], []).append(g)
    for gs in groups.values():  # seat-rotated: each group is both seat orders of one deal
        assert len(gs) == 2 and len({g["seed"] for g in gs}) == 1
        assert [x["bot"] for x in gs[0]["seats"]] == [x["bot"] for x in gs[1]["seats"]][::-1]


def test_three_seat_league_plays_rotated_groups(tmp_path):
    path = tmp_path / "l3.db"
    arena("league", "new", path, "--seats", 3, "--rules", "revised")
    for name in ("a", "b", "c", "d"):
        arena("league", "add", path, name, "--bot", "greedy" if name != "d" else "random")
    assert arena("league", "play", path, "--games", 6, "-q").exit_code == 0
    result = arena("league", "table", path, "--json", "--bootstrap", "10")
    tab = json.loads(result.stdout)
    assert tab["games"] == 6 and "plackett-luce" in tab["ratings"]["method"]
    assert all(set(r["form"]) <= set("123=") for r in tab["table"])


def test_a_command_line_bot_plays_through_the_referee(tmp_path):
    path = tmp_path / "l.db"
    arena("league", "new", path, "--rules", "revised", "--move-ms", 5000)
    arena("league", "add", path, "greedy", "--bot", "greedy")
    result = arena("league", "add", path, "proc", "--cmd", f"{sys.executable} -m bots.run greedy")
    assert result.exit_code == 0, result.output
    result = arena("league", "play", path, "--games", 2, "-q")
    assert result.exit_code == 0, result.output
    with League.open(path) as league:
        assert league.conn.execute("SELECT DISTINCT play FROM games").fetchall() == [("bots",)]
        assert all(x["faults"] == 0 for g in league.games() for x in g["seats"])


def test_games_that_cannot_be_played_are_reported_and_not_stored(tmp_path):
    bot = tmp_path / "bot.sh"
    bot.write_text("#!/bin/sh\nexit 1\n")
    bot.chmod(0o755)
    path = tmp_path / "l.db"
    arena("league", "new", path)
    arena("league", "add", path, "a", "--bot", "greedy")
    assert arena("league", "add", path, "b", "--cmd", bot, "--no-check").exit_code == 0
    bot.unlink()  # the program is gone by the time the league plays
    result = arena("league", "play", path, "--games", 2)
    assert result.exit_code == 1
    assert "no game could be played" in result.output and "was not found" in result.output
    with League.open(path) as league:
        assert league.games() == []


def test_a_league_plays_its_deal_book_in_order(tmp_path):
    from arena.league.play import play_league
    from arena.execution.local import LocalExecutor
    from engine import compile_rules
    from engine.deal import make_book

    book = tmp_path / "book.jsonl"
    deals = make_book(compile_rules(RuleSpec.make(["revised"]), 2), 3, 70)
    book.write_text("".join(json.dumps(d) + "\n" for d in deals))
    path = tmp_path / "l.db"
    assert arena("league", "new", path, "--rules", "revised", "--deals", book).exit_code == 0
    for name in ("greedy", "random"):
        assert arena("league", "add", path, name, "--bot", name).exit_code == 0
    seen = {}

    class Recording:
        def run(self, tasks, payload, stop, on_death):
            def spy(task):
                p = payload(task)
                seen[task.key] = (task.group, p["request"]["deal"])
                return p
            return LocalExecutor(1).run(tasks, spy, stop, on_death)

    with League.open(path) as league:
        assert play_league(league, 8, executor=Recording())["played"] == 8
    assert len(seen) == 8 and all(deal == deals[group % 3] for group, deal in seen.values())
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"white": ["W01"], "black": ["B01"]}\n{"white": [], "black": []}\n')
    result = arena("league", "new", tmp_path / "l2.db", "--deals", bad)
    assert result.exit_code == 2 and "bad.jsonl, line 2: deal: both decks are empty" in result.output


@pytest.mark.slow
def test_kill_9_then_play_again_completes_the_unfinished_groups(tmp_path):
    from killing import kill_when_stored

    path = tmp_path / "l.db"
    arena("league", "new", path, "--rules", "revised", "--seats", 3)
    for name in ("a", "b", "c", "d"):
        assert arena("league", "add", path, name, "--bot", "greedy" if name != "d" else "random").exit_code == 0
    # bot processes: a game takes far longer than the 20 ms between looks, so the kill lands
    # inside the second group (in-process games can finish a whole group between two looks)
    kill_when_stored(["league", "play", str(path), "--games", 300, "-j", 1, "--processes", "--no-progress", "-q"],
                     path, "games", 4)
    with League.open(path) as league:
        before = league.games()
    groups = {}
    for g in before:
        groups.setdefault(g["group"], set()).add(g["rotation"])
    # a copy, played through the API with no echo: the stopped run's groups come first there too
    import sqlite3
    copy = tmp_path / "copy.db"
    with sqlite3.connect(path) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    from arena.league.play import play_league
    with League.open(copy) as league:
        play_league(league, 3, concurrency=1, play="inprocess")
        assert {(g["group"], g["rotation"]) for g in before} < {(g["group"], g["rotation"]) for g in league.games()}
    result = arena("league", "play", path, "--games", 6, "-j", 1, "--no-progress", "-q")
    assert result.exit_code == 0, result.output
    with League.open(path) as league:
        after = league.games()
    keys = [(g["group"], g["rotation"]) for g in after]
    assert len(keys) == len(set(keys))  # no game twice
    assert after[:len(before)] == before  # nothing stored was touched
    by_group = {}
    for g in after:
        by_group.setdefault(g["group"], []).append(g)
    for gs in by_group.values():  # every group complete: each bot of the table in every seat once
        assert sorted(g["rotation"] for g in gs) == [0, 1, 2]
        assert len({tuple(sorted(x["bot"] for x in g["seats"])) for g in gs}) == 1
        assert all(len({g["seats"][s]["bot"] for g in gs}) == 3 for s in range(3))
    # killed after the 4th game, the second group had one of its three games (-j 1 plays
    # them one at a time; a game takes far longer than the 20 ms between looks)
    assert any(len(r) < 3 for r in groups.values()), groups
    assert "first completing 1 group a stopped run left unfinished" in result.stderr
    assert "played" in result.stderr  # the line of --no-progress


def test_a_command_that_does_not_speak_the_protocol_is_refused(tmp_path):
    path = tmp_path / "l.db"
    arena("league", "new", path)
    result = arena("league", "add", path, "printer", "--cmd", f"{sys.executable} -c 'print(1)'")
    assert result.exit_code == 2, result.output
    assert "printer (" in result.output and "failed the conformance check, handshake" in result.output, result.output
    with League.open(path) as league:
        assert [e.name for e in league.entries()] == []  # the league is unchanged
    # --no-check adds it anyway (the author's responsibility)
    assert arena("league", "add", path, "printer", "--cmd", f"{sys.executable} -c 'print(1)'", "--no-check").exit_code == 0
