"""The website's own tables in the league file: authors' tokens and submissions.

They live in the same SQLite file as the league (``web_authors``, ``web_submissions``),
created on first use, so one file (and one backup) holds everything. A token is shown
once when made; only its SHA-256 is stored (a token is 32 random bytes, so a plain hash is
enough: there is nothing to guess), and tokens are compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from pathlib import Path

from ..league import League, LeagueError
from .package import NAME_RE

SCHEMA = """
CREATE TABLE IF NOT EXISTS web_authors (
    author TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS web_submissions (
    id INTEGER PRIMARY KEY, author TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL,
    entry TEXT NOT NULL UNIQUE, manifest TEXT NOT NULL, folder TEXT NOT NULL, keep_previous INTEGER NOT NULL,
    status TEXT NOT NULL, verdict TEXT, build_log TEXT, check_report TEXT, sandbox TEXT, argv TEXT,
    submitted REAL NOT NULL, finished REAL);
CREATE INDEX IF NOT EXISTS web_submissions_name ON web_submissions (name);
"""
#: Statuses of a submission; the first three are in progress and are resumed after a restart.
PENDING = ("queued", "building", "checking")
DONE = ("accepted", "build failed", "check failed", "rejected")


def open_league(path) -> League:
    """Open the league file with the website's tables in place."""
    league = League.open(path)
    league.conn.executescript(SCHEMA)
    return league


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token(league: League, author: str) -> str:
    """A new token for ``author`` (replacing any old one); only its hash is stored."""
    if not NAME_RE.fullmatch(author or ""):
        raise LeagueError(f"{author!r} is not a valid author name: use letters, digits, '.', '_', '+', '-'")
    token = secrets.token_urlsafe(32)
    league.conn.executescript(SCHEMA)
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
    return cur.lastrowid


def update_submission(league: League, sid: int, **fields) -> None:
    """Set some columns of a submission (dicts and lists are stored as JSON)."""
    cols = ", ".join(f"{k} = ?" for k in fields)
    values = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in fields.values()]
    league.conn.execute(f"UPDATE web_submissions SET {cols} WHERE id = ?", (*values, sid))


_COLUMNS = ("id", "author", "name", "version", "entry", "manifest", "folder", "keep_previous", "status", "verdict",
            "build_log", "check_report", "sandbox", "argv", "submitted", "finished")


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
    found = submissions(league, "entry = ?", (entry,))
    return found[0] if found else None


def owner_of(league: League, name: str) -> str | None:
    """The author who first submitted a bot called ``name``."""
    row = league.conn.execute("SELECT author FROM web_submissions WHERE name = ? ORDER BY id LIMIT 1",
                              (name,)).fetchone()
    return row[0] if row else None


