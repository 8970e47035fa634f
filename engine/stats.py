"""Statistics shared by the host and the bots: summaries with 95% intervals, paired differences.

Experiment reports (:mod:`arena.experiment`), ``arena solo`` and the planner's own
evaluation (:mod:`bots.planner_eval`) use it. It lives in ``engine``, which every layer
may import, and knows nothing of bots or the host.

Rates (a seat's wins, adjudicated games, games with faults) get Wilson score intervals;
a shared first place counts as half a win. Means (scores, rounds, puzzles completed) get
normal intervals computed over seat-rotated *groups* -- the games of one group share a
deal, so they are not independent, and the group is the unit that is. Differences against
the first rule set are paired by game (same deal, same seats), with a normal interval over
the groups' mean differences.
"""

from __future__ import annotations

import math
from collections import defaultdict

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> dict:
    """Wilson score interval of a rate: ``{"rate", "low", "high", "n"}`` (rate None when n is 0)."""
    if n <= 0:
        return {"rate": None, "low": None, "high": None, "n": 0}
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return {"rate": p, "low": max(0.0, centre - half), "high": min(1.0, centre + half), "n": n}


def mean_ci(values: list[float], clusters: list | None = None, z: float = Z95) -> dict:
    """Mean, 95% interval, standard deviation and count of ``values``.

    With ``clusters`` (one label per value), the interval is computed over the cluster
    means, which is right when values within a cluster are correlated.
    """
    n = len(values)
    if n == 0:
        return {"mean": None, "low": None, "high": None, "sd": None, "n": 0}
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    units = values
    if clusters is not None:
        groups: dict = defaultdict(list)
        for v, c in zip(values, clusters):
            groups[c].append(v)
        units = [sum(g) / len(g) for g in groups.values()]
    k = len(units)
    if k > 1:
        um = sum(units) / k
        se = math.sqrt(sum((u - um) ** 2 for u in units) / (k - 1) / k)
    else:
        se = 0.0
    return {"mean": mean, "low": mean - z * se, "high": mean + z * se, "sd": sd, "n": n}


def seats_of(row: dict) -> int:
    """How many seats a CSV row has."""
    n = 0
    while f"seat{n}_bot" in row:
        n += 1
    return n


def win_share(row: dict, seat: int) -> float:
    """1 for a sole first place, 1/k for a first place shared by k seats, else 0."""
    ranks = [row[f"seat{s}_rank"] for s in range(seats_of(row))]
    if ranks[seat] != 1:
        return 0.0
    return 1.0 / ranks.count(1)


def summarise(rows: list[dict]) -> dict:
    """The figures of one rule set's games."""
    n = len(rows)
    seats = seats_of(rows[0]) if rows else 0
    groups = [r["group"] for r in rows]
    out: dict = {"games": n, "seats": seats}
    out["seat_wins"] = [wilson(sum(win_share(r, s) for r in rows), n) for s in range(seats)]
    scores, score_groups, white, black = [], [], [], []
    for r in rows:
        for s in range(seats):
            scores.append(r[f"seat{s}_score"])
            white.append(r[f"seat{s}_white"])
            black.append(r[f"seat{s}_black"])
            score_groups.append(r["group"])
    out["score"] = mean_ci(scores, score_groups)
    if scores:
        ordered = sorted(scores)
        out["score"].update(min=ordered[0], median=ordered[len(ordered) // 2], max=ordered[-1])
    out["winning_score"] = mean_ci([max(r[f"seat{s}_score"] for s in range(seats)) for r in rows], groups)
    out["rounds"] = mean_ci([r["rounds"] for r in rows], groups)
    out["completed_white"] = mean_ci(white, score_groups)
    out["completed_black"] = mean_ci(black, score_groups)
    out["adjudicated"] = wilson(sum(1 for r in rows if r["adjudicated"]), n)
    faults = [sum(r[f"seat{s}_faults"] for s in range(seats)) for r in rows]
    out["faults"] = sum(faults)
    out["games_with_faults"] = wilson(sum(1 for f in faults if f), n)
    out["forfeits"] = sum(1 for r in rows for s in range(seats) if r[f"seat{s}_forfeited"])
    by_bot: dict = defaultdict(lambda: {"games": 0, "wins": 0.0, "score": 0})
    for r in rows:
        for s in range(seats):
            b = by_bot[r[f"seat{s}_bot"]]
            b["games"] += 1
            b["wins"] += win_share(r, s)
            b["score"] += r[f"seat{s}_score"]
    out["bots"] = {bot: {"games": b["games"], "win": wilson(b["wins"], b["games"]),
                         "mean_score": b["score"] / b["games"]} for bot, b in sorted(by_bot.items())}
    return out


def paired(base: list[dict], other: list[dict], metric) -> dict | None:
    """Mean of ``metric(other game) - metric(base game)`` over games of the same deal and seats.

    Games are matched by (group, rotation); the interval is over group means. None when
    no game matches.
    """
    keyed = {(r["group"], r["rotation"]): r for r in base}
    diffs, groups = [], []
    for r in other:
        b = keyed.get((r["group"], r["rotation"]))
        if b is not None:
            diffs.append(metric(r) - metric(b))
            groups.append(r["group"])
    if not diffs:
        return None
    return mean_ci(diffs, groups)


#: Per-game figures compared pairwise against the first rule set.
PAIRED_METRICS = {
    "rounds": lambda r: r["rounds"],
    "mean score": lambda r: sum(r[f"seat{s}_score"] for s in range(seats_of(r))) / seats_of(r),
    "seat 0 wins": lambda r: win_share(r, 0),
    "puzzles completed": lambda r: sum(r[f"seat{s}_white"] + r[f"seat{s}_black"] for s in range(seats_of(r))),
}


def compare(rows_by_rule_set: dict[str, list[dict]]) -> dict:
    """Summaries of every rule set, and paired differences of each against the first."""
    names = list(rows_by_rule_set)
    summaries = {name: summarise(rows) for name, rows in rows_by_rule_set.items()}
    diffs: dict = {}
    identical = []
    if names:
        base = rows_by_rule_set[names[0]]
        for name in names[1:]:
            diffs[name] = {m: paired(base, rows_by_rule_set[name], f) for m, f in PAIRED_METRICS.items()}
            if same_games(base, rows_by_rule_set[name]):
                identical.append(name)
    return {"rule_sets": names, "summaries": summaries, "paired": diffs, "identical": identical}


def same_games(a: list[dict], b: list[dict]) -> bool:
    """Whether two rule sets produced the same outcome in every game (same deal, same seats).

    It happens when the bots never use what a rule set changes -- a bot that never plays
    the master action cannot tell a game without it apart.
    """
    keep = lambda r: {k: v for k, v in r.items() if k.startswith("seat") or k in ("rounds", "adjudicated")}  # noqa: E731
    keyed = {(r["group"], r["rotation"]): keep(r) for r in a}
    return len(a) == len(b) > 0 and all(keyed.get((r["group"], r["rotation"])) == keep(r) for r in b)
