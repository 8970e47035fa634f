"""Matchmaking: who plays next, preferring entries with few games and close ratings.

Each group is built around the active entry with the fewest games (ties broken by the
group's seeded random draw), so no entry falls behind: a newcomer plays until it has
caught up. Every possible set of opponents gets a cost

    cost = sum over opponents of  (games(o) - fewest) / seats      # one unit per group ahead
                                + |elo(o) - elo(anchor)| / 200     # one unit per 200 Elo apart

and one set is drawn with probability proportional to ``exp(-cost)``: an opponent 200 Elo
away is chosen about a third as often as an equal one, one 600 Elo away about one time in
twenty. Pairings stay mostly within a rating band, yet every pair keeps meeting now and
then, which is what ties the ratings of different bands together. An entry without a
rating yet counts as rated at the mean. The draw uses the group's seeded generator, so a
league's schedule is reproducible. The group is then played seat-rotated, as in tournaments.
"""

from __future__ import annotations

import itertools
import math
import random

ELO_SCALE = 200.0


def pick_table(active: list[str], games: dict[str, int], elo: dict[str, float], meetings: dict[frozenset, int],
               seats: int, rng: random.Random, uncertainty: dict[str, float] | None = None) -> tuple[str, ...]:
    """The entries of the next group, the least-played first (or, given ``uncertainty``,
    the one whose rating is least certain first, among those with at most twice the fewest
    games plus two groups: see :func:`uncertainty`).

    ``meetings`` (games each pair played together) is accepted for callers that track it;
    the draw itself spreads pairings, so it is not needed to choose.
    """
    if len(active) < seats:
        raise ValueError(f"{seats} seats need {seats} active entries, got {len(active)}")
    count = {e: games.get(e, 0) for e in active}
    fewest = min(count.values())
    jitter = {e: rng.random() for e in active}
    if uncertainty is None:
        anchor = min(active, key=lambda e: (count[e], jitter[e]))
    else:
        # the least certain rating first, among entries not far ahead in games: one whose games
        # tell little (a bot that loses to everyone) must not take every group
        eligible = [e for e in active if count[e] <= 2 * fewest + 2 * seats]
        anchor = max(eligible, key=lambda e: (uncertainty.get(e, math.inf), -count[e], jitter[e]))
    rated = [elo[e] for e in active if e in elo]
    mean = sum(rated) / len(rated) if rated else 0.0
    rating = {e: elo.get(e, mean) for e in active}

    def cost(o: str) -> float:
        return (count[o] - fewest) / seats + abs(rating[o] - rating[anchor]) / ELO_SCALE

    others = sorted(o for o in active if o != anchor)
    combos = list(itertools.combinations(others, seats - 1))
    costs = [sum(cost(o) for o in combo) for combo in combos]
    low = min(costs)
    weights = [math.exp(low - c) for c in costs]
    pick = rng.choices(range(len(combos)), weights=weights)[0]
    return (anchor, *combos[pick])


def meetings_of(games: list[dict]) -> dict[frozenset, int]:
    """How many games every pair of entries played together."""
    met: dict[frozenset, int] = {}
    for g in games:
        names = [x["bot"] for x in g["seats"]]
        for a, b in itertools.combinations(names, 2):
            if a != b:
                key = frozenset((a, b))
                met[key] = met.get(key, 0) + 1
    return met


def game_counts(games: list[dict]) -> dict[str, int]:
    """Games per entry."""
    out: dict[str, int] = {}
    for g in games:
        for x in g["seats"]:
            out[x["bot"]] = out.get(x["bot"], 0) + 1
    return out


def uncertainty(games: list[dict], elo: dict[str, float], active: list[str]) -> dict[str, float]:
    """How uncertain each active entry's rating is: the standard error (in Elo) the
    Bradley-Terry fit's information gives it, ``1 / sqrt(sum p(1-p))`` over every pair of
    seats it shared a game with (``p`` its predicted chance to place above that opponent).

    An entry without games is infinitely uncertain; one with few games, or whose games were
    all foregone conclusions (``p`` near 0 or 1), has a wide interval and is played first."""
    info = {e: 0.0 for e in active}
    k = math.log(10) / 400
    for g in games:
        names = [x["bot"] for x in g["seats"]]
        for a, b in itertools.combinations(names, 2):
            if a == b:
                continue
            p = 1 / (1 + math.exp(-k * (elo.get(a, 0.0) - elo.get(b, 0.0))))
            for e in (a, b):
                if e in info:
                    info[e] += p * (1 - p)
    return {e: (1 / (k * math.sqrt(v)) if v > 0 else math.inf) for e, v in info.items()}
