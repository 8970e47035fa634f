"""Every game of a league, read from its file once per process: what the pages and the
ratings keeper count and fit (:func:`all_games`)."""

from __future__ import annotations

import threading

_games: dict = {}  # league file -> (games so far, oldest first; the highest id read)
_games_lock = threading.Lock()
_SEATS_SQL = ("SELECT game_id, seat, entry, score, rank, faults, forfeited FROM seats WHERE game_id > ? "
              "ORDER BY game_id, seat")


def all_games(league) -> list[dict]:
    """Every game of the league, oldest first, as :meth:`League.games` gives them; read from
    the file once per process, then only the games stored since (games are never changed
    or removed). The list is shared: do not change it or its games."""
    key = str(league.path)
    with _games_lock:
        known, last = _games.get(key, ([], 0))
        new: dict[int, dict] = {}
        for gid, grp, rot, seed, rounds, adj, played in league.conn.execute(
                "SELECT id, grp, rotation, seed, rounds, adjudicated, played FROM games WHERE id > ? ORDER BY id",
                (last,)):
            new[gid] = {"id": gid, "group": grp, "rotation": rot, "seed": seed, "rounds": rounds,
                        "adjudicated": bool(adj), "played": played, "seats": []}
        if not new:
            return known
        for gid, seat, entry, score, rank, faults, forf in league.conn.execute(_SEATS_SQL, (last,)):
            if gid in new:
                new[gid]["seats"].append({"seat": seat, "bot": entry, "score": score, "rank": rank,
                                          "faults": faults, "forfeited": bool(forf)})
        games = known + list(new.values())  # a new list: callers holding the old one keep it whole
        _games[key] = (games, max(new))
        return games
