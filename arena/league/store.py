"""The league file: one SQLite database with the rules, the entries and every game.

Each finished game is stored in one transaction (the game and its seats), so stopping
``arena league play`` at any moment loses at most the games in flight.

The file guards itself as a tournament's results do (:mod:`arena.tournament.store`): a new
league is built under a temporary name and linked into place whole; an existing file that
is empty, not SQLite, truncated, damaged or not a league is refused with a sentence and
left untouched; ``league play`` holds an exclusive lock (``FILE.lock``) so two of them never
play the same league at once; and ``league table`` opens the file read-only, so it works on
a read-only copy.

A process holding a connection never opens and closes the file by other means (that would
drop its SQLite locks, see :mod:`arena.league.filehold`): its header is read, and a
read-only copy made, through one descriptor held while any League of the file is open.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from engine import RuleSpec

from ..botspec.outputs import mark_output
from ..errors import UsageError
from ..tournament.store import (FolderLock, StoreError, check_database_header, check_integrity, close_connection,
                                insert_once)
from .filehold import FileHold

FORMAT = "arena-league"
VERSION = 1
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*(@[A-Za-z0-9][A-Za-z0-9_.+-]*)?")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, bot TEXT, cmd TEXT, added REAL NOT NULL, retired REAL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY, grp INTEGER NOT NULL, rotation INTEGER NOT NULL, seed INTEGER NOT NULL,
    played REAL NOT NULL, rounds INTEGER, adjudicated INTEGER NOT NULL, duration_s REAL, play TEXT,
    sandbox TEXT, UNIQUE (grp, rotation));
CREATE TABLE IF NOT EXISTS seats (
    game_id INTEGER NOT NULL REFERENCES games(id), seat INTEGER NOT NULL, entry TEXT NOT NULL,
    score INTEGER NOT NULL, rank INTEGER NOT NULL, faults INTEGER NOT NULL, fault_detail TEXT,
    forfeited INTEGER NOT NULL, PRIMARY KEY (game_id, seat));
CREATE INDEX IF NOT EXISTS seats_entry ON seats (entry);
"""


def _read_only_connection(path: Path, hold: FileHold) -> tuple[sqlite3.Connection, str | None]:
    """:func:`arena.tournament.store.read_only_connection`, copying the file (when its folder
    is not writable and a log is left) through the held descriptor, never by opening it."""
    uri = path.resolve().as_uri()
    if os.access(path.parent, os.W_OK):
        return sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False), None
    wal = path.with_name(path.name + "-wal")
    if not (wal.exists() and wal.stat().st_size > 0):
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None), None
    tmp = tempfile.mkdtemp(prefix="arena-league-")
    try:
        hold.copy_to(Path(tmp) / path.name)
        shutil.copyfile(wal, Path(tmp) / wal.name)  # SQLite never locks the log file itself
        return sqlite3.connect(Path(tmp) / path.name, isolation_level=None), tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class LeagueError(UsageError):
    """A league file that cannot be used as asked (missing, not a league, unknown entry...)."""


@dataclass(frozen=True)
class Entry:
    """A bot in the league: a registered bot name or a command line."""

    name: str
    bot: str | None
    cmd: tuple[str, ...] | None
    added: float
    retired: float | None

    @property
    def active(self) -> bool:
        """Still matched by ``league play``."""
        return self.retired is None

    def seat_request(self) -> dict:
        """The ``seats`` entry of a game request."""
        return {"name": self.name, "bot": self.bot, "cmd": list(self.cmd) if self.cmd else None, "options": {}}


class League:
    """An open league file."""

    def __init__(self, path: Path, conn: sqlite3.Connection, lock: FolderLock | None = None,
                 scratch: str | None = None, hold: FileHold | None = None):
        self.path = path
        self.conn = conn
        self.lock = lock
        self.scratch = scratch
        self.hold = hold

    # ------------------------------------------------------------ opening
    @classmethod
    def create(cls, path, spec: RuleSpec, seats: int, seed: int = 0, time_control: dict | None = None,
               sandbox: str = "auto") -> "League":
        """Create a new league file; refuses to overwrite an existing file."""
        path = Path(path)
        if path.exists():
            raise LeagueError(f"{path} already exists; give another file name or remove it")
        tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        try:
            conn = cls._connect(tmp)
            try:
                conn.executescript(SCHEMA)
                league = cls(tmp, conn)
                for k, v in {"format": FORMAT, "version": VERSION, "rules": spec.to_json(), "seats": seats,
                             "seed": seed, "time_control": time_control or {}, "sandbox": sandbox,
                             "created": time.time()}.items():
                    league._set_meta(k, v)
            finally:
                conn.close()  # the last connection checkpoints: the whole league is in tmp
            try:
                os.link(tmp, path)  # whole or not at all, and never over a file made meanwhile
            except FileExistsError:
                raise LeagueError(f"{path} already exists; give another file name or remove it") from None
            except OSError as exc:
                raise LeagueError(f"{path}: cannot create the league file ({exc.strerror})") from None
        finally:
            tmp.unlink(missing_ok=True)
        mark_output(path.resolve().parent, path.name)  # no bot is ever shown a league's files
        return cls.open(path)

    @classmethod
    def open(cls, path, read_only: bool = False, exclusive: bool = False, verify: bool = True) -> "League":
        """Open an existing league file: read-only, for writing, or ``exclusive`` for
        writing under the league's lock (``league play``: one at a time).

        ``verify=False`` skips the header and integrity checks, for a process that opens a
        file it has already verified again and again (the website, once per request)."""
        path = Path(path)
        if not path.is_file():
            raise LeagueError(f"{path}: no such league (create one with `arena league new {path} --rules ...`)")
        try:
            hold = FileHold(path)
        except OSError as exc:
            raise LeagueError(f"{path}: cannot read the league file ({exc.strerror})") from None
        lock = scratch = None
        try:
            if verify:
                try:
                    check_database_header(path, *hold.header(), "league file")
                except StoreError as exc:
                    raise LeagueError(str(exc)) from None
            lock = FolderLock.acquire(path.with_name(path.name + ".lock"), "a league play") if exclusive else None
            try:
                if read_only:
                    conn, scratch = _read_only_connection(path, hold)
                else:
                    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            except (OSError, sqlite3.Error) as exc:
                raise LeagueError(f"{path}: cannot open the league file ({exc})") from None
        except BaseException:
            if lock is not None:
                lock.release()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            hold.release()
            raise
        league = cls(path, conn, lock, scratch, hold)
        try:
            if verify:
                try:
                    check_integrity(conn, path, "league file")
                except StoreError as exc:
                    raise LeagueError(str(exc)) from None
                try:
                    row = conn.execute("SELECT v FROM meta WHERE k = 'format'").fetchone()
                    fmt = json.loads(row[0]) if row else None
                except (sqlite3.Error, ValueError):
                    fmt = None
                if fmt != FORMAT:
                    raise LeagueError(f"{path} is not a league file (create one with `arena league new`)")
            if not read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                if verify:
                    league._upgrade()
        except BaseException:
            league.close()
            raise
        return league

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            return conn
        except (OSError, sqlite3.Error) as exc:
            raise LeagueError(f"{path}: cannot open the league file ({exc})") from None

    def close(self) -> None:
        """Close the file (and release the lock of ``exclusive``); the held descriptor goes last."""
        try:
            close_connection(self.conn, self.lock, self.scratch)
        finally:
            if self.hold is not None:
                self.hold.release()

    def __enter__(self) -> "League":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _upgrade(self) -> None:
        """Bring a file made by an earlier version up to date (columns added since)."""
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(games)")}
        if "sandbox" not in cols:
            self.conn.execute("ALTER TABLE games ADD COLUMN sandbox TEXT")

    # ------------------------------------------------------------ settings
    def _set_meta(self, key: str, value) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", (key, json.dumps(value)))

    def meta(self, key: str, default=None):
        """A stored setting."""
        row = self.conn.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    @property
    def spec(self) -> RuleSpec:
        """The league's rules."""
        return RuleSpec.from_json(self.meta("rules"))

    @property
    def seats(self) -> int:
        """Seats per game."""
        return int(self.meta("seats"))

    # ------------------------------------------------------------ entries
    def entries(self, active_only: bool = False) -> list[Entry]:
        """Every entry in the order added."""
        rows = self.conn.execute("SELECT name, bot, cmd, added, retired FROM entries ORDER BY id").fetchall()
        out = [Entry(n, b, tuple(json.loads(c)) if c else None, a, r) for n, b, c, a, r in rows]
        return [e for e in out if e.active] if active_only else out

    def entry(self, name: str) -> Entry:
        """The entry ``name``; :class:`LeagueError` names the known ones."""
        for e in self.entries():
            if e.name == name:
                return e
        known = ", ".join(e.name for e in self.entries()) or "none yet"
        raise LeagueError(f"no entry {name!r} in {self.path} (entries: {known})")

    def add(self, name: str, bot: str | None = None, cmd: list[str] | None = None) -> Entry:
        """Add an entry; a name is never reused, so a new version is a new ``name@version``."""
        if not NAME_RE.fullmatch(name or ""):
            raise LeagueError(f"{name!r} is not a valid entry name: use letters, digits, '.', '_', '+', '-', "
                              f"and optionally @version (e.g. greedy@2)")
        if (bot is None) == (cmd is None):
            raise LeagueError("give exactly one of --bot (a registered bot) or --cmd (a command line)")
        if any(e.name == name for e in self.entries()):
            base = name.split("@")[0]
            raise LeagueError(f"{name!r} is already in the league; a new version is a new entry, e.g. "
                              f"`arena league add {self.path} {base}@2 ...`")
        now = time.time()
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("INSERT INTO entries (name, bot, cmd, added) VALUES (?,?,?,?)",
                              (name, bot, json.dumps(list(cmd)) if cmd else None, now))
        return self.entry(name)

    def retire(self, name: str) -> Entry:
        """Stop matching ``name``; its games and rating stay."""
        e = self.entry(name)
        if not e.active:
            raise LeagueError(f"{name!r} is already retired")
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("UPDATE entries SET retired = ? WHERE name = ?", (time.time(), name))
        return self.entry(name)

    # ------------------------------------------------------------ games
    def next_group(self) -> int:
        """The index of the next seat-rotated group."""
        row = self.conn.execute("SELECT MAX(grp) FROM games").fetchone()
        return 0 if row[0] is None else row[0] + 1

    def record_game(self, task, outcome: dict, play: str) -> bool:
        """Store one finished game in one transaction; False if that (group, rotation) is stored."""
        result = outcome["result"]
        seats = outcome.get("seats") or []

        def write(c):
            sandbox = outcome.get("sandbox")
            cur = c.execute("INSERT INTO games (grp, rotation, seed, played, rounds, adjudicated, duration_s, play,"
                            " sandbox) VALUES (?,?,?,?,?,?,?,?,?)",
                            (task.group, task.rotation, task.seed, time.time(), result.get("rounds"),
                             int(bool(result.get("adjudicated"))), outcome.get("duration_s"), play,
                             json.dumps(sandbox) if sandbox and play != "inprocess" else None))
            gid = cur.lastrowid
            forfeited = result.get("forfeited") or [False] * len(task.bots)
            for s, name in enumerate(task.bots):
                faults = (seats[s] if s < len(seats) else {}).get("faults") or []
                c.execute("INSERT INTO seats VALUES (?,?,?,?,?,?,?,?)",
                          (gid, s, name, result["scores"][s], result["ranking"][s], len(faults),
                           json.dumps([f.get("verdict") for f in faults]) if faults else None, int(bool(forfeited[s]))))

        return insert_once(self.conn, write)

    def sandbox_records(self, limit: int = 200) -> list[dict]:
        """What the sandbox gave the newest games played with bot processes (``Sandbox.record()``
        each, newest first); games of built-in bots played in-process have none."""
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(games)")}
        if "sandbox" not in cols:
            return []
        rows = self.conn.execute("SELECT sandbox FROM games WHERE sandbox IS NOT NULL ORDER BY id DESC LIMIT ?",
                                 (limit,)).fetchall()
        out = []
        for (text,) in rows:
            try:
                record = json.loads(text)
            except ValueError:
                continue
            if isinstance(record, dict):
                out.append(record)
        return out

    def games(self) -> list[dict]:
        """Every game, oldest first: ``{id, group, rotation, seed, rounds, adjudicated, seats: [{bot, rank, ...}]}``."""
        games: dict[int, dict] = {}
        for gid, grp, rot, seed, rounds, adj, played in self.conn.execute(
                "SELECT id, grp, rotation, seed, rounds, adjudicated, played FROM games ORDER BY id"):
            games[gid] = {"id": gid, "group": grp, "rotation": rot, "seed": seed, "rounds": rounds,
                          "adjudicated": bool(adj), "played": played, "seats": []}
        for gid, seat, entry, score, rank, faults, forf in self.conn.execute(
                "SELECT game_id, seat, entry, score, rank, faults, forfeited FROM seats ORDER BY game_id, seat"):
            if gid in games:
                games[gid]["seats"].append({"seat": seat, "bot": entry, "score": score, "rank": rank,
                                            "faults": faults, "forfeited": bool(forf)})
        return list(games.values())



#: A person's games against the league's bots (``arena serve``'s ``/play/BOT``), kept apart
#: from ``games`` and ``seats``: the ratings never read them, so they move no bot's rating.
PEOPLE_SCHEMA = """CREATE TABLE IF NOT EXISTS people_games (
    id INTEGER PRIMARY KEY, author TEXT NOT NULL, bot TEXT NOT NULL, seat INTEGER NOT NULL,
    started REAL NOT NULL, finished REAL, seed INTEGER NOT NULL, scores TEXT, ranking TEXT, replay TEXT)"""


def start_person_game(league: League, author: str, bot: str, seat: int, seed: int) -> int:
    """Note a person's game against ``bot`` as started; its id."""
    league.conn.execute(PEOPLE_SCHEMA)
    return league.conn.execute("INSERT INTO people_games (author, bot, seat, started, seed) VALUES (?,?,?,?,?)",
                               (author, bot, seat, time.time(), seed)).lastrowid


def finish_person_game(league: League, gid: int, result: dict, replay: str | None) -> None:
    """Store the result and the replay's file name of a person's game."""
    league.conn.execute("UPDATE people_games SET finished = ?, scores = ?, ranking = ?, replay = ? WHERE id = ?",
                        (time.time(), json.dumps(result.get("scores")), json.dumps(result.get("ranking")), replay, gid))


def person_games(league: League, author: str | None = None, since: float = 0.0) -> list[dict]:
    """People's games against the bots, newest first (``author``'s only, if given, started after ``since``)."""
    league.conn.execute(PEOPLE_SCHEMA)
    rows = league.conn.execute(
        "SELECT id, author, bot, seat, started, finished, scores, ranking, replay FROM people_games "
        "WHERE (? IS NULL OR author = ?) AND started >= ? ORDER BY id DESC", (author, author, since))
    return [{"id": i, "author": a, "bot": b, "seat": s, "started": st, "finished": f,
             "scores": json.loads(sc) if sc else None, "ranking": json.loads(rk) if rk else None, "replay": rp}
            for i, a, b, s, st, f, sc, rk, rp in rows]
