"""SPRT: bounds, the pentanomial at two seats, and decisions on simulated results at 2-4 seats."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.tournament.ratings import ELO
from arena.tournament.sprt import SPRT, game_score, group_scores, mu, pentanomial


def test_bounds_are_walds():
    lo, hi = SPRT(0, 10, 0.05, 0.05).bounds
    assert lo == pytest.approx(math.log(0.05 / 0.95)) and hi == pytest.approx(math.log(0.95 / 0.05))


def test_mu_is_the_logistic_expected_score():
    assert mu(0) == 0.5 and mu(400) == pytest.approx(10 / 11)


def test_game_score_counts_shared_places_as_halves():
    assert game_score([1, 2], ["C", "B"], "C") == 1.0
    assert game_score([1, 1, 3], ["C", "B", "B"], "C") == 0.75
    assert game_score([3, 1, 2], ["C", "B", "B"], "C") == 0.0


def test_group_scores_use_complete_groups_only():
    g = lambda grp, ranks: {"group": grp, "seats": [{"bot": b, "rank": r} for b, r in zip("CB", ranks)]}
    games = [g(0, [1, 2]), g(0, [2, 1]), g(1, [1, 2]), g(1, [1, 2]), g(2, [1, 2])]
    assert list(group_scores(games, "C", 2)) == [0.5, 1.0]
    assert pentanomial([0.5, 1.0, 0.25, 1.0]) == [0, 1, 1, 0, 2]


def test_llr_sign_follows_the_mean():
    t = SPRT(0, 20)
    assert t.llr([0.6] * 50 + [0.4] * 10) > 0 > t.llr([0.4] * 50 + [0.6] * 10)
    assert t.llr([]) == 0.0


def simulate_run(test: SPRT, elo: float, seats: int, rng, cap: int = 20000) -> tuple[str | None, int]:
    """Groups of a candidate ``elo`` stronger than N-1 baseline copies, under Plackett-Luce."""
    s = np.zeros(seats)
    s[0] = elo / ELO
    scores = []
    while len(scores) < cap:
        batch = []
        for _ in range(seats):
            noisy = s + rng.gumbel(size=seats)
            better = (noisy[1:] < noisy[0]).mean()
            batch.append(better)
        scores.append(float(np.mean(batch)))
        if len(scores) % 10 == 0:
            decision = test.status(scores)["decision"]
            if decision:
                return decision, len(scores)
    return None, len(scores)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_accepts_h1_for_a_stronger_and_h0_for_an_equal_candidate(seats):
    rng = np.random.default_rng(100 + seats)
    test = SPRT(elo0=0, elo1=60, alpha=0.05, beta=0.05)
    runs = 40
    h1 = sum(simulate_run(test, 60, seats, rng)[0] == "H1" for _ in range(runs))
    h0 = sum(simulate_run(test, 0, seats, rng)[0] == "H0" for _ in range(runs))
    # the error rates are 5% each; allow sampling noise over 40 runs
    assert h1 >= runs * 0.85 and h0 >= runs * 0.85, (h1, h0)


def test_a_much_weaker_candidate_is_rejected_quickly():
    rng = np.random.default_rng(7)
    decision, groups = simulate_run(SPRT(0, 30), -200, 2, rng)
    assert decision == "H0" and groups < 200
