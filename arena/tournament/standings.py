"""Standings from the results database: the table, the ratings and the sprt, as text, JSON or CSV.

Points: in a game of N seats a bot scores one point for every other seat it ranks above
and a half for every shared place, divided by N-1 (so 1 for a win and 0.5 for a draw at
two seats); alone against the automaton (solo) a win is 1. Standings read only the
database, so ``arena standings`` works at any time, also while a tournament runs.
"""

from __future__ import annotations

import csv
import io
import json

from ..replay.render import bot_label
from .ratings import fit_ratings
from .sprt import SPRT, describe, group_scores, nelo, pentanomial
from .store import Store


def game_points(ranks: list[int], seat: int) -> float:
    """The points of ``seat`` in a game with these ranks."""
    n = len(ranks)
    if n == 1:
        return 1.0 if ranks[0] == 1 else 0.0
    mine = ranks[seat]
    won = sum(1.0 if mine < r else 0.5 if mine == r else 0.0 for i, r in enumerate(ranks) if i != seat)
    return won / (n - 1)


def table(games: list[dict], faults: dict[str, dict[str, int]] | None = None) -> list[dict]:
    """One row per bot: games, points per game, mean score, mean rank, wins, forfeits, faults."""
    rows: dict[str, dict] = {}
    for g in games:
        ranks = [x["rank"] for x in g["seats"]]
        for s, x in enumerate(g["seats"]):
            r = rows.setdefault(x["bot"], {"bot": x["bot"], "games": 0, "points": 0.0, "score_sum": 0,
                                           "rank_sum": 0, "wins": 0, "forfeits": 0})
            r["games"] += 1
            r["points"] += game_points(ranks, s)
            r["score_sum"] += x["score"]
            r["rank_sum"] += x["rank"]
            r["wins"] += int(x["rank"] == 1 and ranks.count(1) == 1)
            r["forfeits"] += int(x["forfeited"])
    out = []
    for r in rows.values():
        n = r["games"]
        f = (faults or {}).get(r["bot"], {})
        out.append({"bot": r["bot"], "games": n, "points": r["points"], "points_per_game": r["points"] / n,
                    "mean_score": r["score_sum"] / n, "mean_rank": r["rank_sum"] / n, "wins": r["wins"],
                    "forfeits": r["forfeits"], "faults": sum(f.values()), "faults_by_verdict": dict(sorted(f.items()))})
    out.sort(key=lambda r: (-r["points_per_game"], r["mean_rank"], r["bot"]))
    return out


#: the most bots whose likelihood-of-superiority table the text standings print
LOS_TABLE_MAX = 30


def head_to_head(games: list[dict]) -> list[dict]:
    """One entry per ordered pair of bots that met: how often the first placed above the
    second, level with it, below it, and its points against it (1, 1/2, 0 per meeting).
    At two seats an entry also has the normalized Elo of the pair's seat-swapped games
    (``nelo``, ``nelo_error``: :func:`~arena.tournament.sprt.nelo`) when it can be told.

    At two seats these are the wins, draws and losses of the pair; at three and four every
    two seats of a game are a meeting (pairwise wins), and ``mean_rank`` is the first bot's
    mean place in the games where the two met.
    """
    cells: dict[tuple[str, str], dict] = {}
    pairs: dict[tuple[str, str], dict] = {}  # two seats: the pair scores per group, for nElo
    for g in games:
        seats = g["seats"]
        if len(seats) == 2 and seats[0]["bot"] != seats[1]["bot"]:
            for x, y in (seats, seats[::-1]):
                s = 1.0 if x["rank"] < y["rank"] else 0.5 if x["rank"] == y["rank"] else 0.0
                pairs.setdefault((x["bot"], y["bot"]), {}).setdefault(g.get("group", id(g)), []).append(s)
        for x in seats:
            for y in seats:
                if x is y or x["bot"] == y["bot"]:
                    continue
                c = cells.setdefault((x["bot"], y["bot"]), {"bot": x["bot"], "opponent": y["bot"], "meetings": 0,
                                                            "wins": 0, "draws": 0, "losses": 0, "rank_sum": 0})
                c["meetings"] += 1
                c["wins" if x["rank"] < y["rank"] else "losses" if x["rank"] > y["rank"] else "draws"] += 1
                c["rank_sum"] += x["rank"]
    out = []
    for c in cells.values():
        n = c.pop("rank_sum")
        c["points"] = c["wins"] + 0.5 * c["draws"]
        c["score"] = c["points"] / c["meetings"]
        c["mean_rank"] = n / c["meetings"]
        by_group = pairs.get((c["bot"], c["opponent"]))
        if by_group:
            normalized = nelo([sum(v) / 2 for v in by_group.values() if len(v) == 2])
            if normalized is not None:
                c["nelo"], c["nelo_error"] = normalized["nelo"], normalized["nelo_error"]
        out.append(c)
    out.sort(key=lambda c: (c["bot"], c["opponent"]))
    return out


def render_head_to_head(cells: list[dict], order: list[str], seats: int) -> list[str]:
    """The matrix as text: row bot against column bot, ``W-D-L`` and its score."""
    if not cells:
        return []
    by = {(c["bot"], c["opponent"]): c for c in cells}
    bots = [b for b in order if any(c["bot"] == b for c in cells)]
    what = "wins-draws-losses" if seats == 2 else "placed above-level-below (pairwise)"
    lines = [f"head to head (row against column: {what}, score):",
             " " * 16 + "".join(f"{b[:15]:>16}" for b in bots)]
    for a in bots:
        row = f"{a[:16]:16}"
        for b in bots:
            c = by.get((a, b))
            row += f"{'':>16}" if c is None else f"{c['wins']}-{c['draws']}-{c['losses']} {c['score']:.2f}".rjust(16)
        lines.append(row)
    shown = [(a, b) for i, a in enumerate(bots) for b in bots[i + 1:] if "nelo" in by.get((a, b), {})]
    if shown and len(bots) <= LOS_TABLE_MAX:
        lines.append("normalized Elo of the seat-swapped pairs (nElo, as fastchess):")
        for a, b in shown:
            c = by[(a, b)]
            lines.append(f"  {a} vs {b}: nElo {c['nelo']:+.1f} +/- {c['nelo_error']:.1f}")
    return lines


def render_head_to_head_csv(cells: list[dict]) -> str:
    """The matrix as CSV, one row per ordered pair."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["bot", "opponent", "meetings", "wins", "draws", "losses", "points", "score",
                                        "mean_rank", "nelo", "nelo_error"], lineterminator="\n")
    w.writeheader()
    for c in cells:
        w.writerow(c)
    return buf.getvalue()


def leader_line(rows: list[dict]) -> str:
    """``leader greedy 0.83 ppg``."""
    if not rows:
        return "no games yet"
    top = rows[0]
    return f"leader {top['bot']} {top['points_per_game']:.2f} ppg over {top['games']} games"


def report(store: Store, bootstrap: int | None = None, anchor: str | None = None) -> dict:
    """Everything ``arena standings`` prints, as plain data; ``anchor``: the bot rated 0
    instead of the tournament's (:class:`~arena.errors.UsageError` if no game has it)."""
    info = json.loads(store.meta("config") or "{}")
    games = store.games()
    rows = table(games, store.fault_counts())
    if anchor is not None:
        if anchor not in {r["bot"] for r in rows}:
            from ..errors import UsageError

            raise UsageError(f"--anchor {anchor!r}: no stored game has that bot (the bots: "
                             f"{', '.join(r['bot'] for r in rows) or 'none yet'})")
        info["anchor"] = anchor
    out = {"tournament": info.get("name"), "rules": info.get("rules"), "seats": info.get("seats"),
           "format": info.get("format"), "games_stored": len(games), "games_scheduled": info.get("scheduled"),
           "standings": rows, "head_to_head": head_to_head(games), "ratings": None, "sprt": None,
           "worker_deaths": len(store.events("worker-died")), "failed_games": len(store.events("game-failed"))}
    for r in rows:
        ready = store.meta(f"ready:{r['bot']}")
        r["ready"] = json.loads(ready) if ready else None
        r["label"] = bot_label(r["bot"], r["ready"])
    ratings = fit_ratings(games, anchor=info.get("anchor"), bootstrap=bootstrap)
    if ratings is not None:
        out["ratings"] = ratings.to_json()
        for r in rows:
            if r["bot"] in ratings.elo:
                r["elo"] = ratings.elo[r["bot"]]
                r["elo_ci"] = list(ratings.ci[r["bot"]])
    if ratings is not None and len(ratings.bots) == 2 and info.get("seats") == 2:
        # two bots: each row's nElo against the other, the anchor at 0 like its Elo
        for cell in out["head_to_head"]:
            if cell["opponent"] == ratings.anchor and "nelo" in cell:
                for r in rows:
                    if r["bot"] == cell["bot"]:
                        r["nelo"], r["nelo_error"] = cell["nelo"], cell["nelo_error"]
                    elif r["bot"] == ratings.anchor:
                        r["nelo"], r["nelo_error"] = 0.0, cell["nelo_error"]
    if info.get("format") == "knockout" and store.meta("knockout"):
        out["knockout"] = json.loads(store.meta("knockout"))  # every tie, how it was decided, the champion
    if info.get("format") == "swiss" and store.meta("swiss"):
        out["swiss"] = json.loads(store.meta("swiss"))  # pairings, byes and scores (byes included)
    if info.get("format") == "sprt":
        opts = info["format_options"]
        test = SPRT.of(opts, info.get("rotations"))
        scores = group_scores(games, opts["candidate"], info["seats"], info.get("rotations"))
        status = test.status(scores)
        status.update(candidate=opts["candidate"], baseline=opts["baseline"])
        if info["seats"] == 2:
            status["pentanomial"] = pentanomial(scores)
            normalized = nelo(scores, single=info.get("rotations") == 1)
            if normalized is not None:
                status.update(nelo=normalized["nelo"], nelo_error=normalized["nelo_error"])
        out["sprt"] = status
    return out


def render_text(rep: dict) -> str:
    """The human table."""
    from engine import RuleSpec

    seats = rep["seats"]
    lines = [f"{rep['tournament']}: {rep['format']}, {seats} seat{'' if seats == 1 else 's'}, rules "
             f"{RuleSpec.from_json(rep.get('rules')).label()}; "
             f"{rep['games_stored']} of {rep['games_scheduled']} games stored"]
    ratings = rep.get("ratings")
    width = max([16] + [len(r.get("label", r["bot"])) for r in rep["standings"]])
    with_nelo = any("nelo" in r for r in rep["standings"])
    lines.append(f"{'bot':{width}} {'games':>5} {'pts/g':>6} {'score':>6} {'rank':>5} {'wins':>5} {'faults':>6}"
                 + (f" {'elo':>7} {'95% interval':>17}" if ratings else "")
                 + (f" {'nelo':>7} {'+/-':>6}" if with_nelo else ""))
    for r in rep["standings"]:
        line = (f"{r.get('label', r['bot']):{width}} {r['games']:>5} {r['points_per_game']:>6.3f} {r['mean_score']:>6.2f} "
                f"{r['mean_rank']:>5.2f} {r['wins']:>5} {r['faults']:>6}")
        if ratings and "elo" in r:
            lo, hi = r["elo_ci"]
            line += f" {r['elo']:>+7.1f} [{lo:>+7.1f}, {hi:>+7.1f}]"
        if with_nelo and "nelo" in r:
            line += f" {r['nelo']:>+7.1f} {r['nelo_error']:>6.1f}"
        lines.append(line)
    faulty = [r for r in rep["standings"] if r["faults_by_verdict"]]
    for r in faulty:
        lines.append(f"  faults of {r['bot']}: " + ", ".join(f"{k} {v}" for k, v in r["faults_by_verdict"].items()))
    if rep.get("head_to_head"):
        lines += render_head_to_head(rep.get("head_to_head") or [], [r["bot"] for r in rep["standings"]], seats)
    if ratings:
        lines.append(f"ratings: {ratings['method']}, anchor {ratings['anchor']} = 0")
        bots = [r["bot"] for r in rep["standings"] if r["bot"] in ratings["elo"]]
        if 1 < len(bots) <= LOS_TABLE_MAX:  # a square table: for fields that fit on a screen
            lines.append("likelihood of superiority (row stronger than column):")
            lines.append(" " * 16 + "".join(f"{b[:8]:>9}" for b in bots))
            for a in bots:
                lines.append(f"{a[:16]:16}" + "".join(f"{'':>9}" if a == b else f"{ratings['los'][a][b]:>9.3f}"
                                                      for b in bots))
    if rep.get("sprt"):
        s = rep["sprt"]
        model = ", model normalized (nElo)" if s.get("model") == "normalized" else ""
        lines.append(f"sprt {s['candidate']} vs {s['baseline']} (elo0 {s['elo0']:g}, elo1 {s['elo1']:g}, "
                     f"alpha {s['alpha']:g}, beta {s['beta']:g}{model}): {describe(s)}")
        if "pentanomial" in s:
            lines.append(f"  pentanomial (pair scores 0, 1/4, 1/2, 3/4, 1): {s['pentanomial']}")
        if "nelo" in s:
            lines.append(f"  nElo {s['nelo']:+.1f} +/- {s['nelo_error']:.1f} (normalized Elo of the pair scores)")
    if rep.get("swiss"):
        top = rep["swiss"]["standings"][:10]
        lines.append(f"swiss score after {len(rep['swiss']['pairings'])} rounds (byes count 2): "
                     + ", ".join(f"{r['bot']} {r['score']:g}" for r in top)
                     + (", ..." if len(rep["swiss"]["standings"]) > 10 else ""))
    if rep.get("knockout"):
        lines += render_bracket(rep["knockout"])
    if rep["worker_deaths"] or rep["failed_games"]:
        lines.append(f"worker deaths: {rep['worker_deaths']}, failed games: {rep['failed_games']}")
    return "\n".join(lines)


def render_csv(rep: dict) -> str:
    """One CSV row per bot."""
    buf = io.StringIO()
    fields = ["bot", "games", "points", "points_per_game", "mean_score", "mean_rank", "wins", "forfeits", "faults",
              "elo", "elo_low", "elo_high", "nelo", "nelo_error", "label"]
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rep["standings"]:
        row = dict(r)
        if "elo_ci" in r:
            row["elo_low"], row["elo_high"] = r["elo_ci"]
        w.writerow(row)
    return buf.getvalue()


def render_bracket(knockout: dict) -> list[str]:
    """The bracket as text lines for the standings."""
    lines = [f"knockout ({knockout['pairs']} pair{'s' if knockout['pairs'] != 1 else ''} a tie, up to "
             f"{knockout['extra_pairs']} more when level): champion {knockout['champion'] or 'not decided yet'}"]
    for ties in knockout["rounds"]:
        for t in ties:
            a, b = (x or "-" for x in t["bots"])
            if t["how"] == "bye":
                text = f"{t['winner']} (bye)"
            elif t["how"] == "waiting":
                text = f"{a} vs {b}: waiting"
            else:
                score = f"{t['points'][0]:g} : {t['points'][1]:g} in {t['games']} games"
                how = {"points": "", "extra pairs": ", after extra pairs", "seed": ", level: the better seed",
                       None: ""}[t["how"]]
                text = f"{a} vs {b}: {score}" + (f", {t['winner']} through{how}" if t["winner"] else ", playing")
            lines.append(f"  round {t['round']} tie {t['tie']}: {text}")
    return lines
