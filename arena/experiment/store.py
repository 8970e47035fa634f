"""The experiment's results file: every game's row stored as it finishes, crash-safe.

``OUTPUT/experiment.sqlite`` holds one row per finished game (its key, rule set and the
flat row of :func:`arena.experiment.play.game_row` as JSON), each written in its own
transaction (WAL, synchronous=FULL) as the game comes back, so Ctrl-C or kill -9 loses at
most the games in flight. A run skips the keys stored already, so running the same
command again continues where it stopped and no game is played or counted twice. The
file remembers what decides the games (the fingerprint); a folder holding another
experiment is refused instead of mixed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ..botspec.outputs import mark_output
from ..errors import UsageError

DB_NAME = "experiment.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows (key TEXT PRIMARY KEY, rule_set TEXT NOT NULL, row TEXT NOT NULL);
"""


class ExperimentStore:
    """The rows of one experiment's output folder."""

    def __init__(self, path: Path, conn: sqlite3.Connection):
        self.path = path
        self.conn = conn

    @classmethod
    def open(cls, folder, fingerprint: dict) -> "ExperimentStore":
        """Open (or create) the file in ``folder``; refuse one written by another experiment."""
        folder = Path(folder)
        path = folder / DB_NAME
        try:
            folder.mkdir(parents=True, exist_ok=True)
            mark_output(folder)  # no bot is ever shown an experiment's folder
            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"{path}: cannot open the experiment's results ({exc})") from None
        store = cls(path, conn)
        text = json.dumps(fingerprint, sort_keys=True)
        row = conn.execute("SELECT v FROM meta WHERE k = 'fingerprint'").fetchone()
        if row is None:
            conn.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (text,))
        elif row[0] != text:
            old = json.loads(row[0])
            diff = sorted(k for k in set(old) | set(fingerprint) if old.get(k) != fingerprint.get(k))
            conn.close()
            raise UsageError(f"{folder} holds the results of a different experiment (it differs in "
                             f"{', '.join(diff)}); give another --output or remove the folder")
        return store

    def rows(self) -> dict[str, dict]:
        """Every stored row by game key."""
        return {k: json.loads(r) for k, r in self.conn.execute("SELECT key, row FROM rows")}

    def add(self, key: str, rule_set: str, row: dict) -> bool:
        """Store one game's row in its own transaction; False if the key was stored already."""
        cur = self.conn.execute("INSERT OR IGNORE INTO rows VALUES (?, ?, ?)",
                                (key, rule_set, json.dumps(row, sort_keys=True)))
        return cur.rowcount == 1

    def get_meta(self, key: str):
        """A value kept beside the rows (JSON), or None."""
        row = self.conn.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def set_meta(self, key: str, value) -> None:
        """Keep ``value`` (JSON-able) beside the rows, in its own transaction."""
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))

    def count(self) -> int:
        """How many rows are stored."""
        return self.conn.execute("SELECT COUNT(*) FROM rows").fetchone()[0]

    def close(self) -> None:
        """Close the file."""
        self.conn.close()
