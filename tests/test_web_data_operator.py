"""An operator at work while ``arena serve`` plays: new tokens, ``league add``, ``sqlite3 .backup``,
``VACUUM INTO``, ``league table`` and Python's backup API, again and again, from other
processes. The server's write-ahead log is never removed, no page answers 500, play goes
on into the real file, and every stored game has its replay and every replay its game."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402

from web_data_server import Serve, require  # noqa: E402

pytestmark = pytest.mark.slow
PAGES = ("/", "/api/leaderboard", "/rules", "/api/rules", "/live", "/api", "/api/games/live", "/bot/greedy")


def stored_keys(db: Path) -> set[tuple[int, int]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return set(conn.execute("SELECT grp, rotation FROM games").fetchall())
    finally:
        conn.close()


def replay_keys(db: Path) -> set[tuple[int, int]]:
    folder = Path(f"{db}.replays")
    out = set()
    for name in os.listdir(folder):
        m = re.fullmatch(r"(\d+)-(\d+)\.json", name)
        if m:
            out.add((int(m[1]), int(m[2])))
    return out


def wait_games(db: Path, n: int, server: Serve, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.proc.poll() is None, server.output()[-3000:]
        have = len(stored_keys(db))
        if have >= n:
            return have
        time.sleep(0.2)
    raise AssertionError(f"fewer than {n} games after {timeout} s: {server.output()[-3000:]}")


def arena(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_operator_actions_while_the_server_plays_lose_nothing(tmp_path):
    sqlite_cli = require("sqlite3")
    db = tmp_path / "ladder.db"
    with League.create(db, RuleSpec(), 2, 0, {"move_ms": 500}, "basic") as league:
        league.add("greedy", bot="greedy")
        league.add("random", bot="random")
    server = Serve(db, "--pace", "0", "--concurrency", "1").start()
    statuses: list[tuple[str, int]] = []
    stop = threading.Event()

    def browse() -> None:  # a visitor reading pages the whole time
        while not stop.is_set():
            for page in PAGES:
                statuses.append((page, server.request("GET", page)[0]))
            games = stored_keys(db)
            if games:
                statuses.append(("/game/1", server.request("GET", "/game/1")[0]))
                statuses.append(("/game/1/replay", server.request("GET", "/game/1/replay")[0]))

    visitor = threading.Thread(target=browse, daemon=True)
    try:
        wait_games(db, 10, server)
        wal = Path(f"{db}-wal")
        assert wal.exists()
        wal_inode = wal.stat().st_ino
        visitor.start()
        for i in range(3):
            steps = {
                "token new": lambda: arena("league", "token", "new", db, f"carol{i}"),
                "league add": lambda: arena("league", "add", db, f"house{i}", "--bot", "random"),
                ".backup": lambda: subprocess.run([sqlite_cli, str(db), f".backup {tmp_path / f'b{i}.db'}"],
                                                  capture_output=True, text=True, timeout=120),
                "VACUUM INTO": lambda: subprocess.run([sqlite_cli, str(db), f"VACUUM INTO '{tmp_path / f'v{i}.db'}'"],
                                                      capture_output=True, text=True, timeout=120),
                "league table": lambda: arena("league", "table", db),
            }
            for what, step in steps.items():
                done = step()
                assert done.returncode == 0, (what, done.stdout, done.stderr)
                # the server's log is still the file it writes into: never removed, never replaced
                assert wal.exists() and wal.stat().st_ino == wal_inode, f"{what} removed the write-ahead log"
                assert server.proc.poll() is None, server.output()[-3000:]
            src = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)  # Python's backup API
            dst = sqlite3.connect(tmp_path / f"p{i}.db")
            src.backup(dst)
            dst.close()
            src.close()
            assert wal.exists() and wal.stat().st_ino == wal_inode, "Python's backup removed the write-ahead log"
            # mid-run: every replay on disk belongs to a stored game (listed first, then the games)
            replays = replay_keys(db)
            assert replays <= stored_keys(db)
        before = len(stored_keys(db))
        wait_games(db, before + 10, server)  # play goes on, into the real file
    finally:
        stop.set()
        if visitor.is_alive():
            visitor.join(60)
        code = server.stop()
    assert code == 0, server.output()[-3000:]
    assert statuses and all(s < 500 for _, s in statuses), [x for x in statuses if x[1] >= 500][:5]
    assert all(s == 200 for _, s in statuses), [x for x in statuses if x[1] != 200][:5]
    games = stored_keys(db)
    assert replay_keys(db) == games  # every stored game has its replay, every replay its game
    assert len(games) >= 30
    with League.open(db, read_only=True) as league:
        names = {e.name for e in league.entries()}
        assert {"house0", "house1", "house2"} <= names
    for i in range(3):  # each copy is a whole league
        for copy in (tmp_path / f"b{i}.db", tmp_path / f"v{i}.db", tmp_path / f"p{i}.db"):
            with League.open(copy, read_only=True) as league:
                assert 10 <= len(league.games()) <= len(games)
    out = arena("league", "token", "list", db)
    assert out.stdout.split() == ["carol0", "carol1", "carol2"]
