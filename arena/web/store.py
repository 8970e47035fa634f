"""The website's own tables in the league file: authors' tokens and submissions.

They live in the same SQLite file as the league (``web_authors``, ``web_submissions``),
created on first use, so one file (and one backup) holds everything. A token is shown
once when made; only its SHA-256 is stored (a token is 32 random bytes, so a plain hash is
enough: there is nothing to guess), and tokens are compared in constant time.

Here too: the ratings of each background fit, a bounded history (``web_ratings``,
:func:`add_rating_point`); who owns a bot name (:func:`owner_of`, :func:`name_refusal`), withdrawing a
version (:func:`withdraw`), and what the sandbox really gave games, builds and checks,
read from their records (:func:`sandbox_in_force`). :func:`open_league` checks the file
whole once per process and then only connects, so a page costs no integrity check.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from pathlib import Path

from ..league import League, LeagueError
from ..packages.package import NAME_RE
from .cache import changed

SCHEMA = """
CREATE TABLE IF NOT EXISTS web_authors (
    author TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS web_submissions (
    id INTEGER PRIMARY KEY, author TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL,
    entry TEXT NOT NULL, manifest TEXT NOT NULL, folder TEXT NOT NULL, keep_previous INTEGER NOT NULL,
    status TEXT NOT NULL, verdict TEXT, build_log TEXT, check_report TEXT, sandbox TEXT, argv TEXT,
    submitted REAL NOT NULL, finished REAL, withdrawn REAL);
CREATE INDEX IF NOT EXISTS web_submissions_name ON web_submissions (name);
CREATE INDEX IF NOT EXISTS web_submissions_author ON web_submissions (author, submitted);
CREATE TABLE IF NOT EXISTS web_ratings (
    id INTEGER PRIMARY KEY, fitted REAL NOT NULL, games INTEGER NOT NULL, ratings TEXT NOT NULL);
"""
#: A failed submission reserves nothing: only a submission in progress or accepted holds its entry.
LIVE_INDEX = ("CREATE UNIQUE INDEX IF NOT EXISTS web_submissions_live ON web_submissions (entry) "
              "WHERE status IN ('queued', 'building', 'checking', 'accepted')")
#: The submissions public pages list: finished ones (the name of a submission in progress is not
#: published, so no one can take it from its author by seeing it queued).
PUBLIC = "status NOT IN ('queued', 'building', 'checking')"
#: Statuses of a submission; the first three are in progress and are resumed after a restart.
PENDING = ("queued", "building", "checking")
DONE = ("accepted", "build failed", "check failed", "rejected")
_COLUMNS = ("id", "author", "name", "version", "entry", "manifest", "folder", "keep_previous", "status", "verdict",
            "build_log", "check_report", "sandbox", "argv", "submitted", "finished", "withdrawn")

_ready: set = set()  # (device, inode) of league files whose tables this process has made sure of
_ready_lock = threading.Lock()


def open_league(path) -> League:
    """Open the league file with the website's tables in place.

    The first opening in a process checks the file whole and brings the tables up to date;
    later ones (the website opens the file once per request) only connect."""
    path = Path(path)
    try:
        st = os.stat(path)
        key = (st.st_dev, st.st_ino)
    except OSError:
        key = None
    with _ready_lock:
        if key is not None and key in _ready:
            league = League.open(path, verify=False)
            try:
                if "withdrawn" in {r[1] for r in league.conn.execute("PRAGMA table_info(web_submissions)")}:
                    return league
            except BaseException:
                league.close()
                raise
            league.close()  # another file now has that inode number: check it whole
            _ready.discard(key)
        league = League.open(path)
        try:
            _upgrade(league)
        except BaseException:
            league.close()
            raise
        if key is not None:
            _ready.add(key)
        return league


def _upgrade(league: League) -> None:
    """Create the website's tables, or bring those of an earlier version up to date, in one transaction."""
    conn = league.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'web_submissions'").fetchone()
        if row and "entry TEXT NOT NULL UNIQUE" in row[0]:
            # an entry's name was held for good even by a failed submission: rebuild without that
            old = [r[1] for r in conn.execute("PRAGMA table_info(web_submissions)")]
            conn.execute("ALTER TABLE web_submissions RENAME TO web_submissions_old")
            conn.execute("DROP INDEX IF EXISTS web_submissions_name")
            for stmt in SCHEMA.strip().split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            cols = ", ".join(c for c in old if c in _COLUMNS)
            conn.execute(f"INSERT INTO web_submissions ({cols}) SELECT {cols} FROM web_submissions_old")
            conn.execute("DROP TABLE web_submissions_old")
        else:
            for stmt in SCHEMA.strip().split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            have = {r[1] for r in conn.execute("PRAGMA table_info(web_submissions)")}
            if "withdrawn" not in have:
                conn.execute("ALTER TABLE web_submissions ADD COLUMN withdrawn REAL")
        conn.execute(LIVE_INDEX)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


#: Rating points kept (:func:`add_rating_point`): beyond, every other one of the older half goes.
RATING_POINTS = 120


def add_rating_point(league: League, fitted: float, games: int, ratings: dict[str, float],
                     limit: int = RATING_POINTS) -> None:
    """Keep the ratings of one fit (``{entry: elo}`` after ``games`` games). The points stay
    at most ``limit``: past it, every other point of the older half is dropped, so the
    history spans the league's whole life, finer where it is recent."""
    conn = league.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT INTO web_ratings (fitted, games, ratings) VALUES (?,?,?)",
                     (fitted, games, json.dumps({k: round(v, 2) for k, v in ratings.items()})))
        ids = [r[0] for r in conn.execute("SELECT id FROM web_ratings ORDER BY id")]
        if len(ids) > limit:
            older = ids[:len(ids) // 2]
            conn.executemany("DELETE FROM web_ratings WHERE id = ?", [(i,) for i in older[1::2]])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def rating_points(league: League) -> list[tuple[float, int, dict[str, float]]]:
    """The kept fits, oldest first: ``(fitted, games, {entry: elo})``."""
    return [(f, g, json.loads(r)) for f, g, r in
            league.conn.execute("SELECT fitted, games, ratings FROM web_ratings ORDER BY id")]


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token(league: League, author: str) -> str:
    """A new token for ``author`` (replacing any old one); only its hash is stored."""
    if not NAME_RE.fullmatch(author or ""):
        raise LeagueError(f"{author!r} is not a valid author name: use letters, digits, '.', '_', '+', '-'")
    token = secrets.token_urlsafe(32)
    changed()
    league.conn.execute("INSERT OR REPLACE INTO web_authors (author, token_sha256, created) VALUES (?,?,?)",
                        (author, _digest(token), time.time()))
    return token


def author_of(league: League, token: str | None) -> str | None:
    """The author holding ``token``, or None (every stored hash is compared, in constant time)."""
    if not token:
        return None
    digest = _digest(token)
    found = None
    for author, stored in league.conn.execute("SELECT author, token_sha256 FROM web_authors"):
        if hmac.compare_digest(digest, stored):
            found = author
    return found


def authors(league: League) -> list[str]:
    """Every author with a token."""
    return [r[0] for r in league.conn.execute("SELECT author FROM web_authors ORDER BY author")]


def add_submission(league: League, author: str, manifest, folder: Path, keep_previous: bool) -> int:
    """Record a new submission as queued; its id."""
    cur = league.conn.execute(
        "INSERT INTO web_submissions (author, name, version, entry, manifest, folder, keep_previous, status, "
        "submitted) VALUES (?,?,?,?,?,?,?,?,?)",
        (author, manifest.name, manifest.version, manifest.entry, json.dumps(manifest.to_json()), str(folder),
         int(keep_previous), "queued", time.time()))
    changed()
    return cur.lastrowid


def update_submission(league: League, sid: int, **fields) -> None:
    """Set some columns of a submission (dicts and lists are stored as JSON)."""
    cols = ", ".join(f"{k} = ?" for k in fields)
    values = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in fields.values()]
    league.conn.execute(f"UPDATE web_submissions SET {cols} WHERE id = ?", (*values, sid))
    changed()


def _row(row) -> dict:
    out = dict(zip(_COLUMNS, row))
    for key in ("manifest", "check_report", "sandbox", "argv"):
        if out[key]:
            out[key] = json.loads(out[key])
    out["keep_previous"] = bool(out["keep_previous"])
    return out


def submissions(league: League, where: str = "", args: tuple = ()) -> list[dict]:
    """Submissions, newest first, optionally filtered by an SQL condition."""
    sql = f"SELECT {', '.join(_COLUMNS)} FROM web_submissions {('WHERE ' + where) if where else ''} ORDER BY id DESC"
    return [_row(r) for r in league.conn.execute(sql, args)]


def submission(league: League, sid: int) -> dict | None:
    """One submission by id."""
    found = submissions(league, "id = ?", (sid,))
    return found[0] if found else None


def by_entry(league: League, entry: str) -> dict | None:
    """The submission that made the league entry ``entry`` (None for entries added by hand)."""
    found = submissions(league, "entry = ? AND status = 'accepted'", (entry,)) or submissions(league, "entry = ?", (entry,))
    return found[0] if found else None


#: Characters that pass for others in a bot's name (after NFKC and case folding).
_LOOKALIKES = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "3": "e", "4": "a", "5": "s", "7": "t",
                             "8": "b", "6": "b", "9": "g", "2": "z", "-": None, "_": None, ".": None, "+": None})


#: Pairs of letters that pass for one letter (the ASCII skeletons of Unicode's confusables, UTS #39).
_PAIRS = (("rn", "m"), ("cl", "d"), ("vv", "w"))


def fold(name: str) -> str:
    """The form two names share when a reader could take one for the other: Unicode NFKC,
    case folded, ``-``, ``_``, ``.`` and ``+`` dropped, digits and letters that look alike
    made one, and pairs of letters that look like one letter made that letter (``PY-EXAMPLE``,
    ``py_example`` and ``pyexample`` fold alike, as do ``gr33dy``, ``greecly`` and ``greedy``,
    ``py-exarnple`` and ``py-example``)."""
    import unicodedata

    out = unicodedata.normalize("NFKC", name).casefold().translate(_LOOKALIKES)
    for pair, letter in _PAIRS:
        out = out.replace(pair, letter)
    return out


def owner_of(league: League, name: str) -> str | None:
    """The author holding the bot name ``name`` or one that looks like it (:func:`fold`):
    the author of the first submission of it, in order of arrival, that is still in progress
    or was accepted (a failed submission reserves nothing)."""
    key = fold(name)
    for author, other in league.conn.execute(
            "SELECT author, name FROM web_submissions WHERE status IN ('queued', 'building', 'checking', "
            "'accepted') ORDER BY id"):
        if fold(other) == key:
            return author
    return None


def house_names(league: League) -> set[str]:
    """Names no author may take: the registered bots and every entry the operator added by hand."""
    from arena.plugins import policy_names

    submitted = {r[0] for r in league.conn.execute("SELECT entry FROM web_submissions")}
    return {e.name.split("@")[0] for e in league.entries() if e.name not in submitted} | set(policy_names())


def name_refusal(league: League, name: str, author: str) -> str | None:
    """Why ``author`` may not submit a bot called ``name``, or None if they may: a house
    bot's name, or another author's, or one a reader could take for either (:func:`fold`)."""
    key = fold(name)
    house = next((n for n in sorted(house_names(league)) if fold(n) == key), None)
    if house is not None:
        same = house.lower() == name.lower()
        return (f"the bot name {name!r} is " + ("" if same else f"too like {house!r}, ") +
                "a house bot of this league; choose another name")
    owner = owner_of(league, name)
    if owner is not None and owner != author:
        return f"the bot name {name!r} belongs to {owner}; choose another name"
    return None


def live_submission(league: League, entry: str) -> dict | None:
    """The submission in progress or accepted that holds ``entry``, if any."""
    found = submissions(league, "entry = ? AND status IN ('queued', 'building', 'checking', 'accepted')", (entry,))
    return found[0] if found else None


def submitted_since(league: League, author: str, since: float) -> list[float]:
    """When ``author`` submitted since ``since`` (oldest first)."""
    return [r[0] for r in league.conn.execute(
        "SELECT submitted FROM web_submissions WHERE author = ? AND submitted >= ? ORDER BY submitted",
        (author, since))]


def pending_of(league: League, author: str) -> int:
    """How many submissions of ``author`` are still queued, building or checking."""
    return league.conn.execute("SELECT COUNT(*) FROM web_submissions WHERE author = ? AND status IN "
                               "('queued', 'building', 'checking')", (author,)).fetchone()[0]


class WithdrawError(LeagueError):
    """A version that cannot be withdrawn; ``status`` is the HTTP answer (403, 404, 409)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def withdraw(league: League, author: str, entry: str) -> dict:
    """Withdraw the accepted version ``entry`` of ``author``: it is no longer matched, its
    games and rating stay (a retirement asked by its author); the updated submission."""
    subs = submissions(league, "entry = ? AND status = 'accepted'", (entry,))
    if not subs:
        raise WithdrawError(f"no accepted version {entry!r} in this league", 404)
    sub = subs[0]
    if sub["author"] != author:
        raise WithdrawError(f"{entry} belongs to {sub['author']}; only its author may withdraw it", 403)
    if sub["withdrawn"]:
        raise WithdrawError(f"{entry} was already withdrawn", 409)
    if any(e.name == entry and e.active for e in league.entries()):
        league.retire(entry)
    update_submission(league, sub["id"], withdrawn=time.time())
    changed()
    return submission(league, sub["id"])


def _weakest(records: list[dict]) -> dict | None:
    """What held for every one of ``records`` (``Sandbox.record()`` each): the weakest tier
    seen, the protections all of them had, every protection any of them lacked."""
    records = [r for r in records if isinstance(r, dict) and r.get("tier")]
    if not records:
        return None
    order = {"none": 0, "basic": 1, "strict": 2}
    tiers = sorted({r["tier"] for r in records}, key=lambda t: order.get(t, -1))
    common = [p for p in records[0].get("protections") or [] if all(p in (r.get("protections") or []) for r in records)]
    missing, seen = [], set()
    for r in records:
        for item in r.get("unavailable") or []:
            key = (item.get("protection"), item.get("reason"))
            if key not in seen:
                seen.add(key)
                missing.append({"protection": item.get("protection"), "reason": item.get("reason")})
    fallbacks = sorted({r["fallback_reason"] for r in records if r.get("fallback_reason")})
    return {"tier": tiers[0], "tiers": tiers, "protections": common, "unavailable": missing,
            "network": "no_network" not in common, "memory_capped": bool({"cgroup_memory", "rss_polling"} & set(common)),
            "fallback_reasons": fallbacks, "records": len(records)}


def sandbox_in_force(league: League, recent: int = 100) -> dict:
    """What the sandbox really gave, read from the records (never from the settings).

    ``{"games": ..., "builds": ..., "checks": ...}``, each over the newest ``recent``
    records of its kind: None when nothing was recorded yet, else ``{"tier"`` (the weakest
    seen), ``"tiers"``, ``"protections"`` (those every record had), ``"unavailable"``
    (``[{"protection", "reason"}]``, any record's), ``"network"`` (True if some record lacked
    ``no_network``), ``"memory_capped"``, ``"fallback_reasons"``, ``"records"}``. Games of
    built-in bots played in-process start no process and are not counted."""
    builds, checks = [], []
    for (text,) in league.conn.execute("SELECT sandbox FROM web_submissions WHERE sandbox IS NOT NULL "
                                       "ORDER BY id DESC LIMIT ?", (recent,)):
        try:
            record = json.loads(text)
        except ValueError:
            continue
        if isinstance(record, dict):
            if record.get("build"):
                builds.append(record["build"])
            if record.get("check"):
                checks.append(record["check"])
    return {"games": _weakest(league.sandbox_records(recent)), "builds": _weakest(builds),
            "checks": _weakest(checks)}
