"""The league table: ratings refitted on all games, intervals, games, points and recent form."""

from __future__ import annotations

from ..tournament.ratings import fit_ratings
from ..tournament.standings import game_points
from .store import League

FORM_LENGTH = 5


def ratings(league: League, games: list[dict] | None = None, bootstrap: int | None = None):
    """The tournament fit (Bradley-Terry at 2 seats, Plackett-Luce at 3-4) on every game of the league."""
    games = league.games() if games is None else games
    entries = league.entries()
    anchor = entries[0].name if entries else None
    return fit_ratings(games, anchor=anchor, bootstrap=bootstrap)


def form_letter(ranks: list[int], seat: int) -> str:
    """``W``/``D``/``L`` at two seats, else the place (``1``-``4``); ``=`` marks a shared place."""
    mine = ranks[seat]
    shared = ranks.count(mine) > 1
    if len(ranks) == 2:
        return "D" if shared else "W" if mine == 1 else "L"
    return f"{mine}{'=' if shared else ''}"


def league_table(league: League, bootstrap: int | None = None, games: list[dict] | None = None) -> dict:
    """Every entry's row, best rating first, and how the ratings were fitted (on ``games``:
    every game of the league, read from the file unless given)."""
    games = league.games() if games is None else games
    fit = ratings(league, games, bootstrap)
    rows = {}
    for e in league.entries():
        rows[e.name] = {"name": e.name, "status": "active" if e.active else "retired",
                        "bot": e.bot or " ".join(e.cmd or ()), "games": 0, "points": 0.0, "score_sum": 0,
                        "faults": 0, "form": []}
    for g in games:
        ranks = [x["rank"] for x in g["seats"]]
        for s, x in enumerate(g["seats"]):
            r = rows.get(x["bot"])
            if r is None:
                continue
            r["games"] += 1
            r["points"] += game_points(ranks, s)
            r["score_sum"] += x["score"]
            r["faults"] += x["faults"]
            r["form"].append(form_letter(ranks, s))
    out = []
    for r in rows.values():
        n = r["games"]
        row = {"name": r["name"], "status": r["status"], "bot": r["bot"], "games": n,
               "points_per_game": r["points"] / n if n else None, "mean_score": r["score_sum"] / n if n else None,
               "faults": r["faults"], "form": "".join(r["form"][-FORM_LENGTH:]), "elo": None, "elo_ci": None}
        if fit is not None and r["name"] in fit.elo:
            row["elo"] = fit.elo[r["name"]]
            row["elo_ci"] = list(fit.ci[r["name"]])
        out.append(row)
    out.sort(key=lambda r: (r["elo"] is None, -(r["elo"] or 0.0), r["name"]))
    return {"league": str(league.path), "rules": league.spec.to_json(), "seats": league.seats, "games": len(games),
            "ratings": {"method": fit.method, "anchor": fit.anchor} if fit else None, "table": out}


def render_table(tab: dict) -> str:
    """The table as text."""
    rules = tab["rules"]
    label = "+".join(rules.get("variants") or []) or "base"
    if rules.get("params"):
        label += " " + ", ".join(f"{k}={v}" for k, v in rules["params"].items())
    lines = [f"{tab['league']}: {tab['seats']} seats, rules {label}, {tab['games']} games"]
    lines.append(f"{'#':>2} {'entry':20} {'elo':>7} {'95% interval':>17} {'games':>5} {'pts/g':>6} {'score':>6} "
                 f"{'faults':>6}  form")
    for i, r in enumerate(tab["table"], 1):
        elo = f"{r['elo']:>+7.1f}" if r["elo"] is not None else f"{'-':>7}"
        ci = f"[{r['elo_ci'][0]:>+7.1f}, {r['elo_ci'][1]:>+7.1f}]" if r["elo_ci"] else f"{'-':>17}"
        ppg = f"{r['points_per_game']:>6.3f}" if r["points_per_game"] is not None else f"{'-':>6}"
        score = f"{r['mean_score']:>6.2f}" if r["mean_score"] is not None else f"{'-':>6}"
        name = r["name"][:20] + (" (retired)" if r["status"] == "retired" else "")
        lines.append(f"{i:>2} {name:20} {elo} {ci} {r['games']:>5} {ppg} {score} {r['faults']:>6}  {r['form'] or '-'}")
    if tab["ratings"]:
        lines.append(f"ratings: {tab['ratings']['method']} on all {tab['games']} games, "
                     f"anchor {tab['ratings']['anchor']} = 0; form: last {FORM_LENGTH} games, newest last")
    else:
        lines.append("no ratings yet: play some games with `arena league play`")
    return "\n".join(lines)


def render_csv(tab: dict) -> str:
    """The table as CSV, one row per entry (best rating first)."""
    import csv
    import io

    buf = io.StringIO()
    fields = ["name", "status", "bot", "games", "points_per_game", "mean_score", "faults", "form", "elo",
              "elo_low", "elo_high"]
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in tab["table"]:
        row = dict(r)
        if r.get("elo_ci"):
            row["elo_low"], row["elo_high"] = r["elo_ci"]
        w.writerow(row)
    return buf.getvalue()
