"""Statistics shared by the host and the bots: summaries with 95% intervals, paired differences.

Experiment reports (:mod:`arena.experiment`), ``arena solo`` and the planner's own
evaluation (:mod:`bots.planner_eval`) use it. It lives in ``engine``, which every layer
may import, and knows nothing of bots or the host.

Rates (a seat's wins, adjudicated games, games with faults) get Wilson score intervals;
a shared first place counts as half a win. Means (scores, rounds, puzzles completed) get
normal intervals computed over seat-rotated *groups* -- the games of one group share a
deal, so they are not independent, and the group is the unit that is. Differences against
the first rule set are paired by game (same deal, same seats), with a normal interval over
the groups' mean differences. Experiments that stop when their answer is known get
anytime-valid intervals instead (:func:`betting_interval`).
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
# Every figure gets the betting sequence on its bounds: its guarantee holds for every
# distribution on those bounds -- rare values, skewed ones, a constant -- where an
# asymptotic (normal) sequence is a zero-width interval as long as every value seen is the
# same, however rare a different one is.

#: grid of candidate means (on [0, 1]) of :func:`betting_interval`; each edge is then refined
BETTING_GRID = 200
#: points of the finer grid laid over the grid step at each edge of the interval
BETTING_REFINE = 100


def betting_log_capital(x, m, alpha: float, c: float = 0.5):
    """Log wealth of the hedged betting process of Waudby-Smith & Ramdas (2023) against
    "the mean is ``m``", after each observation.

    ``x``: observations in [0, 1], shape ``(..., T)``; ``m``: candidate means in [0, 1],
    shape ``(G,)``. Returns shape ``(..., G, T)``. Under the true mean the wealth is a
    nonnegative supermartingale starting at 1, so by Ville's inequality it ever reaches
    ``1/alpha`` with probability at most ``alpha``: every ``m`` whose wealth did is excluded,
    at any moment, with error rate ``alpha`` whatever the stopping rule and whatever the
    distribution on [0, 1]. The bets are the predictable plug-in ones (a running variance
    estimate), truncated at ``c/m`` and ``c/(1-m)``, hedged half on each side.
    """
    import numpy as np

    x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    m = np.clip(np.asarray(m, dtype=float), 1e-12, 1 - 1e-12)
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


def _kept(x, ms, alpha: float):
    """Which candidate means ``ms`` the wealth never rejected, and their largest log wealth."""
    wealth = betting_log_capital(x, ms, alpha).max(axis=-1)
    return wealth < math.log(1 / alpha), wealth


def betting_interval(values, lo: float, hi: float, alpha: float = 0.05, grid: int = BETTING_GRID) -> dict:
    """Anytime-valid interval of the mean of ``values`` known to lie in ``[lo, hi]``.

    ``{"mean", "low", "high", "n", "method"}``: the candidate means whose betting wealth
    (:func:`betting_log_capital`) never reached ``1/alpha`` over the observations so far.
    The set is an interval; it is found on a grid of ``grid + 1`` points of ``[lo, hi]``,
    each edge refined on a finer grid across its step, and reported out to the last
    rejected point, so the interval holds every mean not rejected. Exact for bounded
    values (no normal approximation), it is never a point before the values have shown
    that every other mean is impossible: the same value seen again and again still leaves
    room for rare other ones.
    """
    import numpy as np

    n = len(values)
    if n == 0:
        return {"mean": None, "low": lo, "high": hi, "n": 0, "method": "betting"}
    span = hi - lo
    x = (np.asarray(values, dtype=float) - lo) / span
    ms = np.linspace(0.0, 1.0, grid + 1)
    kept, wealth = _kept(x, ms, alpha)
    idx = np.flatnonzero(kept)
    if idx.size == 0:  # the interval lies inside one step: look closer around the least rejected
        k = int(np.argmin(wealth))
        a, b = ms[max(k - 1, 0)], ms[min(k + 1, grid)]
        fine = np.linspace(a, b, 2 * BETTING_REFINE + 1)
        inside = np.flatnonzero(_kept(x, fine, alpha)[0])
        low_s, high_s = (a, b) if inside.size == 0 else (fine[max(inside[0] - 1, 0)],
                                                        fine[min(inside[-1] + 1, fine.size - 1)])
    else:
        low_s, high_s = 0.0, 1.0
        if idx[0] > 0:
            fine = np.linspace(ms[idx[0] - 1], ms[idx[0]], BETTING_REFINE + 1)
            low_s = fine[np.flatnonzero(_kept(x, fine, alpha)[0])[0] - 1]
        if idx[-1] < grid:
            fine = np.linspace(ms[idx[-1]], ms[idx[-1] + 1], BETTING_REFINE + 1)
            high_s = fine[np.flatnonzero(_kept(x, fine, alpha)[0])[-1] + 1]
    mean = float(np.mean(values))
    low, high = lo + span * float(low_s), lo + span * float(high_s)
    return {"mean": mean, "low": min(low, mean), "high": max(high, mean), "n": n, "method": "betting"}
