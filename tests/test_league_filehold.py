"""Opening and closing more Leagues in a process that holds one never drops its SQLite locks:
another program's backup then leaves the write-ahead log in place and sees every commit."""

from __future__ import annotations

import sqlite3
import subprocess

from engine import RuleSpec

from arena.league import League
from arena.league.filehold import held_files
from arena.web import store

from web_data_server import require


def test_other_opens_in_the_same_process_keep_the_locks(tmp_path):
    sqlite_cli = require("sqlite3")
    path = tmp_path / "l.db"
    League.create(path, RuleSpec(), 2).close()
    before = held_files()
    writer = League.open(path)
    try:
        writer.add("a", bot="greedy")
        wal = path.with_name("l.db-wal")
        inode = wal.stat().st_ino
        for _ in range(3):  # what a website does on every request, and a table read
            with League.open(path):
                pass
            with League.open(path, read_only=True) as reader:
                assert [e.name for e in reader.entries()] == ["a"]
            with store.open_league(path):
                pass
        subprocess.run([sqlite_cli, str(path), f".backup {tmp_path / 'copy.db'}"], check=True, timeout=60)
        assert wal.exists() and wal.stat().st_ino == inode  # the other program knew it was not alone
        writer.add("b", bot="random")  # still written into the live log...
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:  # ...which every reader sees
            assert [r[0] for r in conn.execute("SELECT name FROM entries ORDER BY id")] == ["a", "b"]
        finally:
            conn.close()
        assert held_files() == before + 1
    finally:
        writer.close()
    assert held_files() == before  # the last League gave the descriptor back
