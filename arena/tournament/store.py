"""Results of a tournament in an embedded SQLite database (``results.sqlite`` in the output folder).

One writer -- the coordinator -- stores each finished game in one transaction (the game,
its seats, its faults) under a UNIQUE game key, so a crash at any moment leaves every
finished game stored whole or not at all, and a game is never counted twice. WAL mode lets
``arena standings`` read while a tournament runs; ``synchronous=FULL`` makes a committed
game survive a machine crash, not only a killed process.

The store guards itself:

- **One coordinator per folder.** The writer holds an exclusive ``flock`` on
  ``.arena.lock`` in the folder (which records its pid, host and start time) for as long
  as the store is open; a second writer is refused with a sentence naming the holder.
  The kernel drops the lock with the process, however it ends (kill -9 included), so a
  lock file left behind means nothing by itself.
- **Only our own database is used.** A new database is built under a temporary name and
  linked into place whole, so ``results.sqlite`` never exists half-made. An existing one
  is checked before use: an empty file, a file that is not SQLite, a file shorter than its
  header says (truncated), a damaged one (``PRAGMA quick_check``) or another program's
  SQLite database is refused with a sentence and left untouched. Only a missing database
  starts a new tournament.
- **Readers never write.** ``Store.open(folder, create=False)`` opens the database
  read-only; in a folder it cannot write (a read-only mount, a finished tournament's
  archive) it opens it as immutable, or reads a copy when a write-ahead log is left to
  replay.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import sqlite3
import tempfile
import time
from pathlib import Path

from ..botspec.outputs import mark_output
from ..errors import ArenaError, UsageError

DB_NAME = "results.sqlite"
LOCK_NAME = ".arena.lock"
FORMAT = "arena-results"
STANDARD_RESULT = {"scores", "ranking", "completed", "rounds", "adjudicated", "forfeited"}
TABLES = {"meta", "games", "seats", "faults"}
SQLITE_MAGIC = b"SQLite format 3\x00"

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


class StoreBusy(StoreError):
    """Another process holds the folder's lock (another coordinator is writing there)."""


class FolderLock:
    """An exclusive ``flock`` on a lock file, held until :meth:`release` or the process ends.

    The file records who holds it (``{"pid", "host", "since", "what"}``) so a refused
    process can say who. ``what`` names the holder's task in messages ("a tournament run").
    """

    def __init__(self, path: Path, fd: int):
        self.path = path
        self.fd = fd
        self._close = os.close  # kept for __del__ at interpreter exit

    @classmethod
    def acquire(cls, path, what: str) -> "FolderLock":
        """Take the lock at ``path`` or raise :class:`StoreBusy` naming its holder."""
        path = Path(path)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot create the lock file {path} ({exc.strerror}); the folder must be "
                             f"writable to {what}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = cls.holder(fd)
            os.close(fd)
            raise StoreBusy(f"{path.parent} is in use: {holder} holds its lock {path.name}; wait for it to "
                            f"finish or stop it (a folder has one writer at a time)") from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {path} ({exc.strerror})") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(), "what": what}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        return cls(path, fd)

    @staticmethod
    def holder(fd: int) -> str:
        """Who holds the lock, as the lock file says: ``a tournament run (pid 12, host h, since ...)``."""
        try:
            info = json.loads(os.pread(fd, 4096, 0) or b"{}")
            since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(info["since"])))
            return f"{info.get('what') or 'another process'} (pid {int(info['pid'])} on host {info['host']}, since {since})"
        except (ValueError, KeyError, TypeError, OSError, OverflowError):
            return "another process (it has not written its name yet)"

    def release(self) -> None:
        """Drop the lock (the file stays; an unlocked file means nothing)."""
        if self.fd >= 0:
            self._close(self.fd)
            self.fd = -1

    __del__ = release  # a store dropped without close() does not keep its folder locked


def check_database_file(path: Path, what: str = "results database") -> None:
    """Refuse a file that cannot be a whole SQLite database: empty, not SQLite, or shorter than its header says."""
    try:
        with open(path, "rb") as f:
            header = f.read(100)
            size = os.fstat(f.fileno()).st_size
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    check_database_header(path, header, size, what)


def check_database_header(path: Path, header: bytes, size: int, what: str = "results database") -> None:
    """:func:`check_database_file` on a header and size already read (by a process that must
    not open and close the file while it holds an SQLite connection to it)."""
    advice = "it is left as it is: restore it from a copy, or move it away to start over"
    if size == 0:
        raise StoreError(f"{path} is empty (0 bytes), not a {what} (a crash or a full disk may have cut it); {advice}")
    if not header.startswith(SQLITE_MAGIC):
        raise StoreError(f"{path} is not a {what}: it is not an SQLite file (it starts with {header[:16]!r}); {advice}")
    if len(header) < 100:
        raise StoreError(f"{path} is truncated: {size} bytes, shorter than an SQLite header; {advice}")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    counted = header[24:28] == header[92:96]  # the page count is valid only when these agree
    if page_size < 512 or page_size & (page_size - 1):
        raise StoreError(f"{path} is damaged: its header gives a page size of {page_size} bytes; {advice}")
    if size % page_size or (counted and size < pages * page_size):
        expected = f"{pages * page_size} bytes ({pages} pages)" if counted else f"whole pages of {page_size} bytes"
        raise StoreError(f"{path} is truncated: it has {size} bytes, its header says {expected}; {advice}")


def check_integrity(conn: sqlite3.Connection, path: Path, what: str = "results database") -> None:
    """``PRAGMA quick_check``: refuse a damaged database with SQLite's first complaint."""
    try:
        rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.DatabaseError as exc:
        rows = [(str(exc),)]
    if rows != [("ok",)]:
        raise StoreError(f"{path} is damaged ({rows[0][0] if rows else 'no answer'}); it is left as it is: "
                         f"restore it from a copy, or move it away to start over")


def close_connection(conn: sqlite3.Connection, lock: "FolderLock | None", scratch: str | None) -> None:
    """Close a results database: the connection, then its writer's lock and a reader's
    scratch copy (see :func:`read_only_connection`), whatever fails first."""
    try:
        conn.close()
    finally:
        if lock is not None:
            lock.release()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def read_only_connection(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """A read-only connection to the database at ``path`` and the temporary folder of a
    copy it reads, if any (to remove after closing).

    In a folder this process may write, ``mode=ro``: SQLite keeps its shared-memory file
    beside the database and sees a running writer's latest commits. In a folder it may
    not write, SQLite cannot make that file: with no write-ahead log left the database is
    opened ``immutable`` (nothing can change it); with one left (a run killed before its
    last checkpoint) the database and its log are copied to a temporary folder and the
    copy is read, so no stored game is missed.
    """
    folder = path.parent
    uri = path.resolve().as_uri()
    if os.access(folder, os.W_OK):
        return sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None), None
    wal = path.with_name(path.name + "-wal")
    if not (wal.exists() and wal.stat().st_size > 0):
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None), None
    tmp = tempfile.mkdtemp(prefix="arena-results-")
    try:
        shutil.copyfile(path, Path(tmp) / path.name)
        shutil.copyfile(wal, Path(tmp) / wal.name)
        return sqlite3.connect(Path(tmp) / path.name, isolation_level=None), tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class Store:
    """The results database of one tournament output folder."""

    def __init__(self, path: Path, conn: sqlite3.Connection, lock: FolderLock | None = None,
                 scratch: str | None = None):
        self.path = path
        self.conn = conn
        self.lock = lock
        self.scratch = scratch

    @classmethod
    def open(cls, folder, fingerprint: dict | None = None, create: bool = True) -> "Store":
        """Open the database in ``folder`` for writing (``create``: lock the folder, create the
        database if missing) or read-only; a stored run must match ``fingerprint``."""
        folder = Path(folder)
        path = folder / DB_NAME
        if not create:
            return cls._open_reader(folder, path)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the output folder {folder} ({exc.strerror})") from None
        mark_output(folder)  # no bot is ever shown a run's folder
        lock = FolderLock.acquire(folder / LOCK_NAME, "a tournament run")
        try:
            store = cls._open_writer(path, lock)
            if fingerprint is not None:
                store._claim(fingerprint)
        except BaseException:
            lock.release()
            raise
        return store

    @classmethod
    def _open_reader(cls, folder: Path, path: Path) -> "Store":
        if not path.exists():
            raise UsageError(f"{folder}: no tournament results here (no {DB_NAME})")
        check_database_file(path)
        try:
            conn, scratch = read_only_connection(path)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{path}: cannot open the results database ({exc})") from None
        store = cls(path, conn, scratch=scratch)
        try:
            store._check_ours()
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def _open_writer(cls, path: Path, lock: FolderLock) -> "Store":
        if not path.exists():
            cls._create(path)
        check_database_file(path)
        try:
            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{path}: cannot open the results database ({exc})") from None
        store = cls(path, conn, lock)
        try:
            store._check_ours()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.executescript(SCHEMA)  # tables added since the database was made
            conn.execute("INSERT OR IGNORE INTO meta (k, v) VALUES ('format', ?)", (FORMAT,))
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(f"{path}: cannot open the results database ({exc})") from None
        except BaseException:
            conn.close()
            raise
        return store

    @staticmethod
    def _create(path: Path) -> None:
        """Build a new database under a temporary name, then link it into place whole."""
        tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
        for leftover in path.parent.glob(f".{path.name}.new-*"):  # a creation cut short; we hold the lock
            leftover.unlink(missing_ok=True)
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(SCHEMA)
                conn.execute("INSERT INTO meta (k, v) VALUES ('format', ?)", (FORMAT,))
            finally:
                conn.close()  # the last connection checkpoints: the whole database is in tmp
            os.link(tmp, path)  # fails rather than replace a database made meanwhile
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{path}: cannot create the results database ({exc})") from None
        finally:
            tmp.unlink(missing_ok=True)

    def _check_ours(self) -> None:
        """Refuse a damaged database or another program's."""
        check_integrity(self.conn, self.path)
        try:
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            fmt = self.meta("format") if "meta" in tables else None
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot read the results database ({exc})") from None
        if not TABLES <= tables or fmt not in (None, FORMAT):
            listed = ", ".join(sorted(tables)) or "none"
            raise StoreError(f"{self.path} is an SQLite database but not tournament results (its tables: {listed}); "
                             f"give another --output folder")

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
        """Close the connection; a writer releases the folder's lock."""
        close_connection(self.conn, self.lock, self.scratch)

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

    def outcomes(self, keys=None) -> list[tuple[dict, dict]]:
        """Stored games as ``(task, outcome)`` in the order stored (only ``keys``, if given):
        ``task`` with ``key, group, rotation, seed, bots``, ``outcome`` with ``result``
        (scores, ranking, completed, rounds, adjudicated, forfeited and the rule set's own
        fields), ``seats`` (each seat's faults), ``duration_s`` and ``replay_path``: what
        the lines of ``games.jsonl`` and ``--games-out`` are written from."""
        wanted = None if keys is None else set(keys)
        games: dict[int, tuple[dict, dict]] = {}
        for gid, key, grp, rot, seed, rounds, adj, dur, replay, extra in self.conn.execute(
                "SELECT id, key, grp, rotation, seed, rounds, adjudicated, duration_s, replay_path, extra "
                "FROM games ORDER BY id"):
            if wanted is not None and key not in wanted:
                continue
            result = {"scores": [], "ranking": [], "completed": [], "rounds": rounds, "adjudicated": bool(adj),
                      "forfeited": [], **(json.loads(extra) if extra else {})}
            games[gid] = ({"key": key, "group": grp, "rotation": rot, "seed": seed, "bots": []},
                          {"result": result, "seats": [], "duration_s": dur, "replay_path": replay})
        for gid, bot, score, rank, completed, forf in self.conn.execute(
                "SELECT game_id, bot, score, rank, completed, forfeited FROM seats ORDER BY game_id, seat"):
            if gid in games:
                task, outcome = games[gid]
                task["bots"].append(bot)
                res = outcome["result"]
                res["scores"].append(score)
                res["ranking"].append(rank)
                res["completed"].append(completed)
                res["forfeited"].append(bool(forf))
                outcome["seats"].append({"faults": []})
        for gid, seat, verdict, detail, move in self.conn.execute(
                "SELECT game_id, seat, verdict, detail, move FROM faults ORDER BY rowid"):
            if gid in games and seat < len(games[gid][1]["seats"]):
                games[gid][1]["seats"][seat]["faults"].append({"verdict": verdict, "detail": detail, "move": move})
        for task, outcome in games.values():
            if None in outcome["result"]["completed"]:
                del outcome["result"]["completed"]
        return list(games.values())
