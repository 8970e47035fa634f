"""What the pages show, read from the league file: the leaderboard, a bot, a game, the rules.

Plain data only (the HTML is :mod:`.pages`; the JSON API returns these as they are).
Under ``arena serve`` the ratings are the last fit of the league's
:class:`~arena.web.ratings.RatingsKeeper` (refitted in the background, shown with the time
it was made): no request waits for a fit. Without a keeper (a script using these
functions) a fit is made on demand and cached until the next game is stored or an entry
is added or retired. Every game is read from the file once per process
(:func:`.games.all_games` reads only the games stored since its last call).
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path

from ..league.table import league_table
from . import store
from .games import all_games
from .player import replay_path
from .ratings import history_of, keeper_of

_cache: dict = {}
_lock = threading.Lock()


def _cached(league, key: str, make):
    # a new game, a new entry or a retirement changes what is shown
    state = league.conn.execute("SELECT (SELECT COUNT(*) FROM games), (SELECT COUNT(*) FROM entries), "
                                "(SELECT COUNT(retired) FROM entries)").fetchone()
    full = (str(league.path), key, *state)
    with _lock:
        if full in _cache:
            return _cache[full]
    value = make()
    with _lock:
        if len(_cache) > 256:
            _cache.clear()
        _cache[full] = value
    return value


@contextlib.contextmanager
def opened(path):
    """The league file ``path`` opened for one request (with the website's tables), closed after."""
    league = store.open_league(path)
    try:
        yield league
    finally:
        league.close()


def base_name(entry: str) -> str:
    """``bot`` of ``bot@1.2``."""
    return entry.split("@")[0]


def fitted_table(league) -> dict:
    """The league table of the last fit: the keeper's, or (without one) a fit made now and
    cached. ``fitted`` is when it was made, ``fitted_games`` how many games it saw."""
    keeper = keeper_of(league.path)
    snap = keeper.current() if keeper is not None else None
    if snap is not None:
        return dict(snap.table, table=_current_entries(league, snap.table["table"]), fitted=snap.fitted,
                    fitted_games=snap.games, intervals=snap.intervals)
    # no keeper (or before its first fit): a fit now, without intervals when a keeper will bring them
    import time

    quick = keeper is not None
    tab = _cached(league, "table-quick" if quick else "table",
                  lambda: dict(league_table(league, bootstrap=0 if quick else None, games=all_games(league)),
                               fitted=time.time()))
    return dict(tab, fitted_games=tab["games"], intervals=not quick)


def _current_entries(league, rows: list[dict]) -> list[dict]:
    """The fitted ``rows`` with each entry's status as it is now, and a row (no rating yet)
    for each entry added since the fit."""
    entries = league.entries()
    status = {e.name: "active" if e.active else "retired" for e in entries}
    out = [dict(r, status=status.get(r["name"], r["status"])) for r in rows]
    known = {r["name"] for r in rows}
    for e in entries:
        if e.name not in known:
            out.append({"name": e.name, "status": status[e.name], "bot": e.bot or " ".join(e.cmd or ()), "games": 0,
                        "points_per_game": None, "mean_score": None, "faults": 0, "form": "", "elo": None,
                        "elo_ci": None})
    return out


def rating_trend(league) -> dict[str, list[tuple[int, float]]]:
    """Each entry's rating at every kept fit, oldest first: ``{entry: [(games, elo), ...]}``
    (the keeper's history, or the league file's without one)."""
    keeper = keeper_of(league.path)
    points = keeper.trend() if keeper is not None else store.rating_points(league)
    out: dict[str, list] = {}
    for _, games, ratings in points:
        for name, elo in ratings.items():
            out.setdefault(name, []).append((games, elo))
    return out


def leaderboard(league) -> dict:
    """The league table with each row's bot, version, author and rating history (``trend``:
    ``[(games, elo), ...]`` at each kept fit; the last fit's ratings)."""
    tab = fitted_table(league)
    authors = {s["entry"]: s["author"] for s in store.submissions(league, "status = 'accepted'")}
    trend = rating_trend(league)
    rows = []
    for r in tab["table"]:
        name, _, version = r["name"].partition("@")
        rows.append(dict(r, base=name, version=version or "-", author=authors.get(r["name"], "-"),
                         bot=program(r["bot"]), trend=trend.get(r["name"], [])))
    return dict(tab, table=rows)


def program(command: str) -> str:
    """What an entry runs, without the server's folders: ``python3 bot.py`` for
    ``/usr/bin/python3 /srv/league.db.bots/x@1/bot.py``."""
    return " ".join(Path(part).name if part.startswith("/") else part for part in str(command).split(" "))


def rating_history(league, base: str) -> dict[str, list[tuple[float, float]]]:
    """Each version's rating after every ~1/12 of the league's games (refitted on the games so
    far): the keeper's, or fitted now without one."""
    keeper = keeper_of(league.path)
    snap = keeper.current() if keeper is not None else None
    if snap is not None:
        return {n: pts for n, pts in snap.history.items() if base_name(n) == base}
    if keeper is not None:
        return {}  # the keeper's first fit is on its way

    def make():
        entries = league.entries()
        hist = history_of(all_games(league), entries)
        return {n: pts for n, pts in hist.items() if base_name(n) == base}
    return _cached(league, f"history:{base}", make)


def recent_games(league, entry_names: set[str] | None = None, limit: int = 20) -> list[dict]:
    """The newest games (of some entries only, if given), newest first."""
    games = all_games(league)
    if entry_names is None:
        return list(reversed(games[-limit:]))
    out = []
    for g in reversed(games):
        if any(x["bot"] in entry_names for x in g["seats"]):
            out.append(g)
            if len(out) >= limit:
                break
    return out


def read_replay(league, game: dict) -> dict | None:
    """The stored replay record of a game, or None if there is none."""
    path = replay_path(league.path, game["group"], game["rotation"])
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def faults_of(league, names: set[str], limit: int = 20) -> list[dict]:
    """The faults of ``names`` (newest first), with their details from the replays."""
    out = []
    for g in reversed(all_games(league)):
        if len(out) >= limit:
            break
        mine = [x for x in g["seats"] if x["bot"] in names and x["faults"]]
        if not mine:
            continue
        record = read_replay(league, g) or {}
        details = record.get("faults") or []
        for x in mine:
            items = details[x["seat"]] if x["seat"] < len(details) else []
            for f in items or [{"verdict": "fault", "detail": "(no replay stored)"}]:
                out.append({"game": g["id"], "entry": x["bot"], "verdict": f.get("verdict"), "move": f.get("move"),
                            "detail": f.get("detail")})
    return out[:limit]


def bot_exists(league, base: str) -> bool:
    """Whether there is a bot ``base``: an entry of that name (any version) or a submission of it."""
    if any(base_name(e.name) == base for e in league.entries()):
        return True
    return league.conn.execute(f"SELECT 1 FROM web_submissions WHERE name = ? AND {store.PUBLIC} LIMIT 1",
                               (base,)).fetchone() is not None


def bot(league, base: str) -> dict | None:
    """Everything the page of bot ``base`` shows; None if there is no such bot."""
    entries = [e for e in league.entries() if base_name(e.name) == base]
    subs = store.submissions(league, f"name = ? AND {store.PUBLIC}", (base,))
    if not entries and not subs:
        return None
    tab = {r["name"]: r for r in leaderboard(league)["table"]}
    names = {e.name for e in entries}
    versions = []
    for e in reversed(entries):
        sub = next((s for s in subs if s["entry"] == e.name), None)
        withdrawn = bool(sub and sub.get("withdrawn"))
        versions.append({"entry": e.name, "status": "withdrawn" if withdrawn else "active" if e.active else "retired",
                         "row": tab.get(e.name), "submission": sub["id"] if sub else None})
    accepted = [s for s in subs if s["status"] == "accepted"]
    owner = accepted[-1]["author"] if accepted else None  # the author of its first accepted version
    if owner is not None:
        subs = [s for s in subs if s["author"] == owner]
    described = next((s["manifest"].get("description") for s in accepted
                      if isinstance(s.get("manifest"), dict) and s["manifest"].get("description")), None)
    return {"name": base, "author": owner, "description": described, "house": any(e.bot for e in entries),
            "versions": versions, "submissions": subs, "history": rating_history(league, base),
            "games": recent_games(league, names), "faults": faults_of(league, names)}


def game(league, gid: int) -> dict | None:
    """One game, with whether its replay is stored."""
    row = league.conn.execute("SELECT id, grp, rotation, seed, rounds, adjudicated, played FROM games WHERE id = ?",
                              (gid,)).fetchone()
    if row is None:
        return None
    g = {"id": row[0], "group": row[1], "rotation": row[2], "seed": row[3], "rounds": row[4],
         "adjudicated": bool(row[5]), "played": row[6], "seats": [
             {"seat": seat, "bot": entry, "score": score, "rank": rank, "faults": faults, "forfeited": bool(forf)}
             for seat, entry, score, rank, faults, forf in league.conn.execute(
                 "SELECT seat, entry, score, rank, faults, forfeited FROM seats WHERE game_id = ? ORDER BY seat",
                 (gid,))]}
    g["replay"] = replay_path(league.path, g["group"], g["rotation"]).is_file()
    return g


def rules(league, settings) -> dict:
    """The league's rules, what a submission must meet, and the sandbox really in force.

    ``in_force`` is read from the records (:func:`.store.sandbox_in_force`: the newest games,
    builds and checks), never from the settings; ``toolchains`` are those the build tier
    can really run."""
    from .submissions import offered_toolchains

    spec = league.spec
    return {"rules": spec.to_json(), "label": spec.label(), "seats": league.seats,
            "time_control": league.meta("time_control") or {}, "in_force": store.sandbox_in_force(league),
            "toolchains": offered_toolchains(settings), "pace": getattr(settings, "pace", None),
            "caps": {"archive_kib": settings.caps.archive_bytes >> 10, "files": settings.caps.files,
                     "file_mib": settings.caps.file_bytes >> 20, "total_mib": settings.caps.total_bytes >> 20},
            "build_timeout_s": settings.build_timeout_s, "check_timeout_s": settings.check_timeout_s,
            "quotas": {"submissions_per_hour": getattr(settings, "submissions_per_hour", None),
                       "pending_per_author": getattr(settings, "pending_per_author", None)}}
