"""The website's matchmaking: each group is built around the entry whose rating is least certain
(new entries first, then those whose games told little), and the league replays folder is
reconciled with the stored games at start."""

from __future__ import annotations

import json
import math
import random

from engine import RuleSpec

from arena.league import League
from arena.league.matchmaking import pick_table, uncertainty
from arena.tournament.schedule import GameTask
from arena.web.player import pending_dir, reconcile_replays, replay_path


def game(a: str, b: str, winner: str) -> dict:
    return {"seats": [{"bot": a, "rank": 1 if winner == a else 2}, {"bot": b, "rank": 1 if winner == b else 2}]}


def test_a_new_entry_is_the_least_certain_and_goes_first():
    games = [game("a", "b", "a"), game("b", "c", "c"), game("a", "c", "a")] * 5
    doubt = uncertainty(games, {"a": 50.0, "b": -50.0, "c": 0.0}, ["a", "b", "c", "new"])
    assert doubt["new"] == math.inf
    for seed in range(20):
        table = pick_table(["a", "b", "c", "new"], {"a": 20, "b": 20, "c": 20}, {}, {}, 2, random.Random(seed), doubt)
        assert table[0] == "new"


def test_games_that_were_foregone_conclusions_leave_a_rating_uncertain():
    # "lucky" and "even" have as many games; lucky's were all against a far weaker bot
    games = [game("lucky", "weak", "lucky")] * 10 + [game("even", "peer", "even"), game("even", "peer", "peer")] * 5
    elo = {"lucky": 600.0, "weak": -600.0, "even": 0.0, "peer": 0.0}
    doubt = uncertainty(games, elo, list(elo))
    assert doubt["lucky"] > 2 * doubt["even"]
    counts = {n: 10 for n in elo}
    assert pick_table(list(elo), counts, elo, {}, 2, random.Random(0), doubt)[0] in ("lucky", "weak")


def test_reconcile_puts_committed_replays_in_place_and_removes_orphans(tmp_path):
    path = tmp_path / "l.db"
    with League.create(path, RuleSpec(), 2) as league:
        league.add("a", bot="greedy")
        league.add("b", bot="random")
        outcome = {"result": {"scores": [1, 0], "ranking": [1, 2], "rounds": 3}, "seats": [{}, {}]}
        for g in range(3):
            assert league.record_game(GameTask(f"k{g}", g, 0, g, ("a", "b")), outcome, "inprocess")
        pending_dir(path).mkdir(parents=True)
        replay_path(path, 0, 0).write_text(json.dumps({"game": 0}))           # in place already
        (pending_dir(path) / "1-0.json").write_text(json.dumps({"game": 1}))   # committed, not yet renamed
        (pending_dir(path) / "7-0.json").write_text("{}")                      # never stored
        (pending_dir(path) / ".7-1.json.123.tmp").write_text("{")              # half written
        replay_path(path, 9, 1).write_text("{}")                               # a replay without its game
        done = reconcile_replays(league)
    assert done == {"restored": 1, "removed": 3, "missing": [3]}
    assert json.loads(replay_path(path, 1, 0).read_text()) == {"game": 1}
    assert sorted(p.name for p in replay_path(path, 0, 0).parent.glob("*.json")) == ["0-0.json", "1-0.json"]
    assert list(pending_dir(path).iterdir()) == []


def test_a_second_player_of_the_same_league_serves_without_playing(tmp_path):
    from arena.web.player import Player

    path = tmp_path / "l.db"
    League.create(path, RuleSpec(), 2).close()
    first, second = Player(path), Player(path)
    first.start()
    try:
        second.start()
        assert not second.thread.is_alive() and second.status.startswith("not playing:")
        assert "an arena serve" in second.status and "holds its lock" in second.status
    finally:
        first.stop()
        second.stop()
    third = Player(path)  # the lock went with the first
    third.start()
    third.stop()
    assert third.status == "stopped"


def test_an_entry_whose_games_tell_little_does_not_take_every_group():
    elo = {"hopeless": -900.0, "a": 0.0, "b": 10.0, "c": -10.0}
    games = [game("hopeless", "a", "a")] * 40 + [game("a", "b", "a"), game("b", "c", "c")] * 5
    doubt = uncertainty(games, elo, list(elo))
    assert doubt["hopeless"] == max(doubt.values())
    counts = {"hopeless": 40, "a": 50, "b": 10, "c": 10}  # far ahead of the fewest: not an anchor now
    anchors = {pick_table(list(elo), counts, elo, {}, 2, random.Random(s), doubt)[0] for s in range(10)}
    assert "hopeless" not in anchors
