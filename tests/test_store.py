"""The results database: one transaction per game, unique keys, rollback, fingerprints."""

from __future__ import annotations

import sqlite3

import pytest

from arena.tournament.schedule import GameTask
from arena.tournament.store import Store, StoreError


def outcome(ranks=(1, 2), faults=()):
    return {"result": {"scores": [10, 5], "ranking": list(ranks), "completed": [3, 2], "rounds": 9,
                       "adjudicated": False, "forfeited": [False, False]},
            "seats": [{"name": "a", "faults": list(faults), "moves": 30, "wall_ms": 5.0, "cpu_ms": 4.0, "max_move_ms": 1.0},
                      {"name": "b", "faults": [], "moves": 30, "wall_ms": 6.0, "cpu_ms": 5.0, "max_move_ms": 1.5}],
            "duration_s": 0.25, "replay_path": None, "sandbox": {"tier": "none", "protections": []}, "rules": {}}


TASK = GameTask("t:0:0:5", 0, 0, 5, ("a", "b"))


def test_a_game_is_stored_once_with_its_seats_and_faults(tmp_path):
    store = Store.open(tmp_path, {"name": "t"})
    fault = {"verdict": "timeout", "detail": "took 1200 ms", "move": 4}
    assert store.record_game(TASK, outcome(faults=[fault]), "host:1")
    assert not store.record_game(TASK, outcome())  # the same key again: refused
    assert store.count() == 1 and store.keys() == {TASK.key}
    games = store.games()
    assert games[0]["seats"][0] == {"seat": 0, "bot": "a", "score": 10, "rank": 1, "forfeited": False, "faults": 1}
    assert store.fault_counts() == {"a": {"timeout": 1}}
    assert store.conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 2


def test_a_failure_inside_the_transaction_stores_nothing(tmp_path):
    store = Store.open(tmp_path, {"name": "t"})
    bad = outcome()
    bad["result"]["scores"] = [10]  # the second seat's score is missing: fails after the games row
    with pytest.raises(IndexError):
        store.record_game(TASK, bad)
    assert store.count() == 0 and store.conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 0
    assert store.record_game(TASK, outcome())


def test_the_database_is_in_wal_mode_and_readable_while_open(tmp_path):
    store = Store.open(tmp_path, {"name": "t"})
    store.record_game(TASK, outcome())
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reader = sqlite3.connect(tmp_path / "results.sqlite")
    assert reader.execute("SELECT key FROM games").fetchall() == [(TASK.key,)]


def test_another_tournament_in_the_same_folder_is_refused(tmp_path):
    Store.open(tmp_path, {"name": "t", "seed": 1}).close()
    Store.open(tmp_path, {"name": "t", "seed": 1}).close()
    with pytest.raises(StoreError, match="different tournament.*seed"):
        Store.open(tmp_path, {"name": "t", "seed": 2})


def test_events_are_recorded_in_order(tmp_path):
    store = Store.open(tmp_path, {})
    store.add_event("worker-died", "x")
    store.add_event("game-failed", "y")
    assert [e["kind"] for e in store.events()] == ["worker-died", "game-failed"]
    assert store.events("game-failed")[0]["detail"] == "y"


def test_opening_a_missing_folder_for_reading_is_a_usage_error(tmp_path):
    with pytest.raises(Exception, match="no tournament results here"):
        Store.open(tmp_path / "nothing", create=False)
