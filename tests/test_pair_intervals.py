"""The 95% intervals of two bots' Elo cover the truth 95% of the time at every match size
from 30 pairs up, with correlated pairs (one deal favours one bot from both seats), and
the closed-form two-bot fit is the Bradley-Terry maximum likelihood."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from arena.tournament.ratings import ELO, _fit, _Model, _stages, fit_ratings, pair_interval


def simulated_match(n_pairs: int, rng, delta=0.15, spread=1.2, tie=0.04):
    """Per pair: the points of bot A over its two seat-swapped games on one deal, whose
    quality ``u`` (shared by both games) makes the two games' results correlated."""
    u = rng.normal(0.0, spread, n_pairs)
    win = 1.0 / (1.0 + np.exp(-(delta + u)))
    points = np.zeros(n_pairs)
    for _ in range(2):
        tied = rng.random(n_pairs) < tie
        points += np.where(tied, 0.5, (rng.random(n_pairs) < win).astype(float))
    return points


def true_elo(rng, delta=0.15, spread=1.2, tie=0.04) -> float:
    """The Elo of A's expected score, the value the fit estimates."""
    win = 1.0 / (1.0 + np.exp(-(delta + rng.normal(0.0, spread, 2_000_000))))
    score = float((win * (1 - tie) + 0.5 * tie).mean())
    return math.log(score / (1 - score)) * ELO


@pytest.mark.parametrize("pairs", [30, 100, 300])
def test_the_pair_intervals_cover_95_percent_with_correlated_pairs(pairs):
    rng = np.random.default_rng(28 + pairs)
    truth = true_elo(rng)
    sims = 1200
    hits = 0
    for i in range(sims):
        points = simulated_match(pairs, rng)
        _, lo, hi = pair_interval(points, np.full(pairs, 2.0), seed=i)
        hits += lo <= truth <= hi
    coverage = hits / sims
    # 1,200 simulated matches measure coverage to about +/- 0.6% (one standard error)
    print(f"{pairs} pairs: coverage {coverage:.3f}")
    assert 0.94 <= coverage <= 0.962, f"{pairs} pairs: the intervals covered the truth {coverage:.1%} of the time"


def test_two_bots_are_fitted_in_closed_form_as_the_likelihood_says():
    rng = random.Random(3)
    games = []
    for group in range(40):
        for rotation in range(2):
            a, b = rng.choice([(1, 2), (2, 1), (1, 2), (1, 1)])
            seats = [{"bot": "x", "rank": a}, {"bot": "y", "rank": b}]
            games.append({"group": group, "seats": seats if rotation == 0 else seats[::-1]})
    ratings = fit_ratings(games, anchor="y")
    index = {"x": 0, "y": 1}
    stages = _stages(games, index)
    model = _Model(stages + [([0, 1], [0.5, 0.5])], [1.0] * len(stages) + [1.0], 2)
    numeric = _fit(model, 1) * ELO
    assert ratings.elo["x"] == pytest.approx(numeric[0], abs=1e-4) and ratings.elo["y"] == 0.0
    lo, hi = ratings.ci["x"]
    assert lo < ratings.elo["x"] < hi and "x2000" in ratings.method and "1.96 sd" in ratings.method
    assert ratings.los["x"]["y"] > 0.5


def test_the_docs_normal_approximation_example_is_what_its_formula_gives():
    import re
    from pathlib import Path

    from arena.tournament.sprt import SPRT, mu

    text = (Path(__file__).resolve().parent.parent / "docs" / "tournaments.md").read_text(encoding="utf-8")
    said = re.search(r"give ([+-]\d+\.\d+) with it \(accept H1\) and ([+-]\d+\.\d+) exactly", text)
    counts = [2, 8, 30, 60, 40]
    scores = np.repeat([0.0, 0.25, 0.5, 0.75, 1.0], counts)
    n, mean, var = len(scores), scores.mean(), scores.var()  # the variance over the n pairs
    normal = n * (mu(5) - mu(0)) * (2 * mean - mu(0) - mu(5)) / (2 * var)
    assert float(said.group(1)) == pytest.approx(normal, abs=0.005)
    assert float(said.group(2)) == pytest.approx(SPRT(0, 5, 0.05, 0.05).status(scores)["llr"], abs=0.005)
