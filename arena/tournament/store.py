"""Results of a tournament in an embedded SQLite database (``results.sqlite`` in the output folder).

One writer -- the coordinator -- stores each finished game in one transaction (the game,
its seats, its faults) under a UNIQUE game key, so a crash at any moment leaves every
finished game stored whole or not at all, and a game is never counted twice. WAL mode lets
``arena standings`` read while a tournament runs; ``synchronous=FULL`` makes a committed
game survive a machine crash, not only a killed process.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from ..errors import ArenaError, UsageError

DB_NAME = "results.sqlite"
STANDARD_RESULT = {"scores", "ranking", "completed", "rounds", "adjudicated", "forfeited"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, grp INTEGER NOT NULL, rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL, players INTEGER NOT NULL, rounds INTEGER, adjudicated INTEGER NOT NULL,
    duration_s REAL, stored REAL NOT NULL, worker TEXT, replay_path TEXT, sandbox TEXT, rules TEXT, extra TEXT);
CREATE TABLE IF NOT EXISTS seats (
    game_id INTEGER NOT NULL REFERENCES games(id), seat INTEGER NOT NULL, bot TEXT NOT NULL,
    score INTEGER NOT NULL, rank INTEGER NOT NULL, completed INTEGER, forfeited INTEGER NOT NULL,
    faults INTEGER NOT NULL, moves INTEGER, wall_ms REAL, cpu_ms REAL, max_move_ms REAL,
    PRIMARY KEY (game_id, seat)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS faults (
    game_id INTEGER NOT NULL REFERENCES games(id), seat INTEGER NOT NULL, bot TEXT NOT NULL,
    verdict TEXT NOT NULL, detail TEXT, move INTEGER);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, time REAL NOT NULL, kind TEXT NOT NULL, detail TEXT);
"""


def insert_once(conn: sqlite3.Connection, write) -> bool:
    """Run ``write(conn)`` in one immediate transaction: True once committed, False (and
    nothing written) if it broke a UNIQUE key — the game was stored already. Any other
    failure rolls back and propagates, so a half-written game never stays."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        write(conn)
        conn.execute("COMMIT")
        return True
    except sqlite3.IntegrityError:
        conn.execute("ROLLBACK")
        return False
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class StoreError(ArenaError):
    """The results database cannot be opened or does not belong to this tournament."""

    exit_code = 2


class Store:
    """The results database of one tournament output folder."""

    def __init__(self, path: Path, conn: sqlite3.Connection):
        self.path = path
        self.conn = conn

    @classmethod
    def open(cls, folder, fingerprint: dict | None = None, create: bool = True) -> "Store":
        """Open (or create) the database in ``folder``; a stored run must match ``fingerprint``."""
        folder = Path(folder)
        path = folder / DB_NAME
        if not create and not path.exists():
            raise UsageError(f"{folder}: no tournament results here (no {DB_NAME})")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            if create:
                conn.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{path}: cannot open the results database ({exc})") from None
        store = cls(path, conn)
        if fingerprint is not None:
            store._claim(fingerprint)
        return store

    def _claim(self, fingerprint: dict) -> None:
        stored = self.meta("fingerprint")
        text = json.dumps(fingerprint, sort_keys=True)
        if stored is None:
            self.set_meta("fingerprint", text)
        elif stored != text:
            old = json.loads(stored)
            diff = sorted(k for k in set(old) | set(fingerprint) if old.get(k) != fingerprint.get(k))
            raise StoreError(f"{self.path.parent} holds results of a different tournament (differs in: "
                             f"{', '.join(diff)}); give another --output folder or remove this one")

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def meta(self, key: str) -> str | None:
        """A stored metadata value."""
        row = self.conn.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Store a metadata value."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", (key, value))

    def keys(self) -> set[str]:
        """The keys of every stored game."""
        return {row[0] for row in self.conn.execute("SELECT key FROM games")}

    def count(self) -> int:
        """How many games are stored."""
        return self.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def record_game(self, task, outcome: dict, worker: str = "") -> bool:
        """Store one finished game in one transaction; False if its key is already stored."""
        result = outcome["result"]
        seats = outcome["seats"]
        ranking = list(result["ranking"])
        if len(task.bots) == 1 and "won" in result:
            ranking = [1 if result["won"] else 2]  # solo: rank 1 beat the automaton, 2 lost (R12.5)
        extra = {k: v for k, v in result.items() if k not in STANDARD_RESULT}

        def write(c):
            cur = c.execute(
                "INSERT INTO games (key, grp, rotation, seed, players, rounds, adjudicated, duration_s, stored,"
                " worker, replay_path, sandbox, rules, extra) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (task.key, task.group, task.rotation, task.seed, len(task.bots), result.get("rounds"),
                 int(bool(result.get("adjudicated"))), outcome.get("duration_s"), time.time(), worker,
                 outcome.get("replay_path"), json.dumps(outcome.get("sandbox")), json.dumps(outcome.get("rules")),
                 json.dumps(extra) if extra else None))
            gid = cur.lastrowid
            forfeited = result.get("forfeited") or [False] * len(task.bots)
            completed = result.get("completed") or [None] * len(task.bots)
            rows, fault_rows = [], []
            for s, bot in enumerate(task.bots):
                info = seats[s] if s < len(seats) else {}
                faults = info.get("faults") or []
                rows.append((gid, s, bot, result["scores"][s], ranking[s], completed[s], int(bool(forfeited[s])),
                             len(faults), info.get("moves"), info.get("wall_ms"), info.get("cpu_ms"),
                             info.get("max_move_ms")))
                fault_rows += [(gid, s, bot, str(f.get("verdict")), f.get("detail"), f.get("move")) for f in faults]
            c.executemany("INSERT INTO seats VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            if fault_rows:
                c.executemany("INSERT INTO faults VALUES (?,?,?,?,?,?)", fault_rows)

        return insert_once(self.conn, write)

    def add_event(self, kind: str, detail: str) -> None:
        """Record something that happened to the run (a worker died, a game failed)."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("INSERT INTO events (time, kind, detail) VALUES (?,?,?)", (time.time(), kind, detail))

    def events(self, kind: str | None = None) -> list[dict]:
        """Recorded events, oldest first."""
        sql = "SELECT time, kind, detail FROM events" + (" WHERE kind = ?" if kind else "") + " ORDER BY id"
        return [{"time": t, "kind": k, "detail": d} for t, k, d in self.conn.execute(sql, (kind,) if kind else ())]

    def games(self) -> list[dict]:
        """Every stored game with its seats: ``{key, group, rotation, seed, adjudicated, duration_s, seats}``."""
        games: dict[int, dict] = {}
        for gid, key, grp, rot, seed, adj, dur in self.conn.execute(
                "SELECT id, key, grp, rotation, seed, adjudicated, duration_s FROM games ORDER BY id"):
            games[gid] = {"key": key, "group": grp, "rotation": rot, "seed": seed, "adjudicated": bool(adj),
                          "duration_s": dur, "seats": []}
        for gid, seat, bot, score, rank, forf, nf in self.conn.execute(
                "SELECT game_id, seat, bot, score, rank, forfeited, faults FROM seats ORDER BY game_id, seat"):
            if gid in games:
                games[gid]["seats"].append({"seat": seat, "bot": bot, "score": score, "rank": rank,
                                            "forfeited": bool(forf), "faults": nf})
        return list(games.values())

    def fault_counts(self) -> dict[str, dict[str, int]]:
        """Per bot, the number of faults of each verdict."""
        out: dict[str, dict[str, int]] = {}
        for bot, verdict, n in self.conn.execute("SELECT bot, verdict, COUNT(*) FROM faults GROUP BY bot, verdict"):
            out.setdefault(bot, {})[verdict] = n
        return out
