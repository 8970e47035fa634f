"""A bot's whole match history (paged, filtered), its head-to-head records, and an author's bots.

Plain data read from the league file, for :mod:`.pages` and the JSON API alike. A game's
*result* for a bot is ``win`` (first place alone), ``draw`` (first place shared) or
``loss``; head-to-head counts, for every opponent met, the games in which the bot
finished ahead of it, level with it, or behind it (at any number of seats).
"""

from __future__ import annotations

from . import store
from .games import all_games
from .views import base_name, leaderboard

RESULTS = ("win", "draw", "loss")
PER_PAGE = 50
MAX_PER_PAGE = 200
MAX_PAGE = 10 ** 6


class BadQuery(ValueError):
    """A query parameter that cannot be used (its message is one sentence)."""


def parse_query(params) -> dict:
    """The history's filters from query parameters (any mapping of strings): ``opponent``,
    ``result``, ``page``, ``per_page``; :class:`BadQuery` for a page that is not a whole number."""
    try:
        page = int(params.get("page") or 1)
        per_page = int(params.get("per_page") or PER_PAGE)
    except ValueError:
        raise BadQuery("page and per_page must be whole numbers") from None
    if abs(page) > MAX_PAGE:
        raise BadQuery(f"page must be at most {MAX_PAGE}")
    return {"opponent": params.get("opponent") or None, "result": params.get("result") or None, "page": page,
            "per_page": per_page}


def _result(ranks: list[int], rank: int) -> str:
    if rank != 1:
        return "loss"
    return "draw" if ranks.count(1) > 1 else "win"


def _mine(game: dict, base: str) -> dict | None:
    return next((x for x in game["seats"] if base_name(x["bot"]) == base), None)


def games_of(league, base: str) -> list[dict]:
    """Every game of bot ``base`` (any version), oldest first, each with ``me``, ``result`` and
    ``opponents`` (their entry names)."""
    out = []
    for g in all_games(league):
        me = _mine(g, base)
        if me is None:
            continue
        ranks = [x["rank"] for x in g["seats"]]
        out.append(dict(g, me=me, result=_result(ranks, me["rank"]),
                        opponents=[x["bot"] for x in g["seats"] if x is not me]))
    return out


def match_history(league, base: str, opponent: str | None = None, result: str | None = None, page: int = 1,
                  per_page: int = PER_PAGE) -> dict:
    """One page of the games of ``base``, newest first, filtered by an opponent (a bot or one
    version of it) and a result; :class:`BadQuery` for a result or page that is not one."""
    if result is not None and result not in RESULTS:
        raise BadQuery(f"result must be one of {', '.join(RESULTS)}")
    if page < 1 or not 1 <= per_page <= MAX_PER_PAGE:
        raise BadQuery(f"page must be 1 or more and per_page 1 to {MAX_PER_PAGE}")
    games = games_of(league, base)
    opponents = sorted({base_name(o) for g in games for o in g["opponents"]})
    if opponent:
        games = [g for g in games if any(o == opponent or base_name(o) == opponent for o in g["opponents"])]
    if result:
        games = [g for g in games if g["result"] == result]
    games.reverse()
    pages = max(1, -(-len(games) // per_page))
    chosen = games[(page - 1) * per_page: page * per_page]
    return {"name": base, "opponent": opponent or None, "result": result, "page": page, "per_page": per_page,
            "pages": pages, "total": len(games), "opponents": opponents, "games": chosen}


def head_to_head(league, base: str) -> list[dict]:
    """For every opponent of ``base``: games met, and how often ``base`` finished ahead, level or behind
    (with the mean score of each side); most-met opponent first."""
    rows: dict[str, dict] = {}
    for g in games_of(league, base):
        me = g["me"]
        for x in g["seats"]:
            if x is me:
                continue
            name = base_name(x["bot"])
            if name == base:
                continue  # two versions of the same bot in one game
            r = rows.setdefault(name, {"opponent": name, "games": 0, "ahead": 0, "level": 0, "behind": 0,
                                       "score_for": 0, "score_against": 0})
            r["games"] += 1
            r["ahead" if me["rank"] < x["rank"] else "level" if me["rank"] == x["rank"] else "behind"] += 1
            r["score_for"] += me["score"]
            r["score_against"] += x["score"]
    out = []
    for r in rows.values():
        n = r["games"]
        out.append(dict(r, score_for=round(r["score_for"] / n, 2), score_against=round(r["score_against"] / n, 2),
                        share=round((r["ahead"] + r["level"] / 2) / n, 3)))
    return sorted(out, key=lambda r: (-r["games"], r["opponent"]))


def author(league, name: str) -> dict | None:
    """An author's bots (with each version's row in the table) and submissions; None if unknown."""
    subs = store.submissions(league, f"author = ? AND {store.PUBLIC}", (name,))
    known = name in store.authors(league)
    if not subs and not known:
        return None
    table = {r["name"]: r for r in leaderboard(league)["table"]}
    bots: dict[str, list] = {}
    for s in reversed(subs):  # oldest first
        if s["status"] == "accepted" and s["entry"] in table:
            bots.setdefault(s["name"], []).append(table[s["entry"]])
    return {"author": name, "bots": [{"name": b, "versions": list(reversed(v))} for b, v in bots.items()],
            "submissions": subs}
