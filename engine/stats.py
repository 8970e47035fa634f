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


# ---------------------------------------------------------------- anytime-valid intervals
# Intervals for experiments that look at their figures after every round of games and stop
# when the answer is known. A fixed-n interval recomputed at every look would miss the
# truth far more often than 5% (optional stopping); a *confidence sequence* holds at every
# look at once, so the interval at whatever moment a run stops is still a 95% interval.

#: grid of candidate means (on [0, 1]) of :func:`betting_interval`
BETTING_GRID = 1000


def betting_log_capital(x, m, alpha: float, c: float = 0.5):
    """Log wealth of the hedged betting process of Waudby-Smith & Ramdas (2023) against
    "the mean is ``m``", after each observation.

    ``x``: observations in [0, 1], shape ``(..., T)``; ``m``: candidate means in (0, 1),
    shape ``(G,)``. Returns shape ``(..., G, T)``. Under the true mean the wealth is a
    nonnegative supermartingale starting at 1, so by Ville's inequality it ever reaches
    ``1/alpha`` with probability at most ``alpha``: every ``m`` whose wealth did is excluded,
    at any moment, with error rate ``alpha`` whatever the stopping rule. The bets are the
    predictable plug-in ones (a running variance estimate), truncated at ``c/m`` and
    ``c/(1-m)``, hedged half on each side.
    """
    import numpy as np

    x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    m = np.asarray(m, dtype=float)
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    var = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)
    prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), var[..., :-1]], axis=-1)
    lam = np.sqrt(2 * math.log(2 / alpha) / (prev * t * np.log1p(t)))[..., None, :]
    mm = m[:, None]
    dev = x[..., None, :] - mm
    up = np.cumsum(np.log1p(np.minimum(lam, c / mm) * dev), axis=-1)
    down = np.cumsum(np.log1p(-np.minimum(lam, c / (1 - mm)) * dev), axis=-1)
    return np.maximum(math.log(0.5) + up, math.log(0.5) + down)


def betting_interval(values, lo: float, hi: float, alpha: float = 0.05, grid: int = BETTING_GRID) -> dict:
    """Anytime-valid interval of the mean of ``values`` known to lie in ``[lo, hi]``.

    ``{"mean", "low", "high", "n", "method"}``: the candidate means whose betting wealth
    (:func:`betting_log_capital`) never reached ``1/alpha`` over the observations so far,
    widened by half a grid step. Exact for bounded values (no normal approximation), so it
    fits win shares and their paired differences.
    """
    import numpy as np

    n = len(values)
    if n == 0:
        return {"mean": None, "low": lo, "high": hi, "n": 0, "method": "betting"}
    span = hi - lo
    x = (np.asarray(values, dtype=float) - lo) / span
    ms = (np.arange(grid) + 0.5) / grid
    wealth = betting_log_capital(x, ms, alpha).max(axis=-1)
    kept = ms[wealth < math.log(1 / alpha)]
    mean = float(np.mean(values))
    if kept.size == 0:  # every candidate excluded (values pile up between two grid points)
        return {"mean": mean, "low": mean, "high": mean, "n": n, "method": "betting"}
    half = 0.5 / grid
    low = lo + span * max(0.0, float(kept.min()) - half)
    high = lo + span * min(1.0, float(kept.max()) + half)
    return {"mean": mean, "low": min(low, mean), "high": max(high, mean), "n": n, "method": "betting"}


def normal_mixture_radius(sd: float, n: int, alpha: float = 0.05, n_opt: int = 100) -> float:
    """Half-width of the asymptotic confidence sequence of Waudby-Smith et al. (2021,
    "time-uniform central limit theory") after ``n`` observations of standard deviation
    ``sd``: the normal-mixture boundary, tightest near ``n_opt`` observations.

    It is valid at every ``n`` at once as the observations grow (a time-uniform CLT), for
    figures with no useful bound (rounds, scores).
    """
    if n <= 0:
        return math.inf
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / n_opt
    return sd * math.sqrt(2 * (n * rho2 + 1) / (n * n * rho2) * math.log(math.sqrt(n * rho2 + 1) / alpha))


def mixture_interval(values, alpha: float = 0.05, n_opt: int = 100) -> dict:
    """Anytime-valid interval of the mean of ``values`` by :func:`normal_mixture_radius`."""
    n = len(values)
    if n == 0:
        return {"mean": None, "low": None, "high": None, "n": 0, "method": "normal mixture"}
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    r = normal_mixture_radius(sd, n, alpha, n_opt) if n > 1 else math.inf
    return {"mean": mean, "low": mean - r, "high": mean + r, "n": n, "method": "normal mixture"}
