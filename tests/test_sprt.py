"""SPRT: bounds, the pentanomial at two seats, and decisions on simulated results at 2-4 seats."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.tournament.ratings import ELO
from arena.tournament.sprt import (NELO_SCALE, SPRT, game_score, group_scores, mle_with_mean, mle_with_t, mu,
                                  pentanomial, score_counts)


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


def test_the_exact_llr_matches_fishtest_on_a_small_sample():
    # fishtest's LLR_logistic(0, 5, [2, 8, 30, 60, 40]) is +1.878; the normal approximation
    # gave +4.13 and would have accepted H1 after 140 pairs
    scores = [i / 4 for i, k in enumerate([2, 8, 30, 60, 40]) for _ in range(k)]
    assert SPRT(0, 5).llr(scores) == pytest.approx(1.878, abs=0.002)
    assert SPRT(0, 5).status(scores)["decision"] is None


def test_the_constrained_optimum_has_the_asked_mean_and_sums_to_one():
    values = np.arange(5) / 4
    p = np.array([2, 8, 30, 60, 40]) / 140
    for target in (0.3, 0.5, 0.7, 0.9):
        q = mle_with_mean(values, p, target)
        assert q.sum() == pytest.approx(1.0) and (q * values).sum() == pytest.approx(target)
        assert (q > 0).all()


def test_group_scores_at_three_and_four_seats_use_their_grid():
    values, counts = score_counts([1 / 12, 11 / 12, 11 / 12])
    assert len(values) == 13 and counts[1] == 1 and counts[11] == 2 and counts[0] == pytest.approx(1e-3)
    values, counts = score_counts([1 / 24, 0.5])
    assert len(values) == 25


def pair_distribution(elo: float, draws: float = 0.2, shared: float = 0.3) -> np.ndarray:
    """A pentanomial with mean ``mu(elo)`` and correlated games: a share of pairs are split by the
    deal (each bot wins with the favoured seat), the rest are two independent games with draws."""
    s = mu(elo)
    p = (s - shared / 2) / (1 - shared)
    win, loss = p - draws / 2, 1 - p - draws / 2
    game = np.array([loss, draws, win])
    pair = np.convolve(game, game) * (1 - shared)
    pair[2] += shared
    assert pair.min() > 0 and (pair * np.arange(5) / 4).sum() == pytest.approx(s)
    return pair


def decide(test: SPRT, pair: np.ndarray, rng, step: int = 4, cap: int = 5000) -> str | None:
    """Play pairs in batches of ``step`` until the test decides."""
    counts = np.zeros(5, dtype=np.int64)
    values = np.arange(5) / 4
    while counts.sum() < cap:
        counts += rng.multinomial(step, pair)
        decision = test.status(np.repeat(values, counts))["decision"]
        if decision:
            return decision
    return None


def test_error_rates_stay_at_the_nominal_ones():
    # 300 runs at each hypothesis: at the nominal 5% about 15 wrong decisions are expected
    # (fewer, since Wald's bounds are conservative); a test twice as wrong (10%, about 30)
    # would exceed the bound of 24 with probability 0.95.
    test = SPRT(elo0=0, elo1=40, alpha=0.05, beta=0.05)
    rng = np.random.default_rng(2024)
    runs = 300
    false_h1 = sum(decide(test, pair_distribution(0), rng) != "H0" for _ in range(runs))
    false_h0 = sum(decide(test, pair_distribution(40), rng) != "H1" for _ in range(runs))
    assert false_h1 <= 24 and false_h0 <= 24, (false_h1, false_h0)


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


@pytest.mark.parametrize("seats", [3, 4])
def test_accepts_h1_for_a_stronger_and_h0_for_an_equal_candidate(seats):
    rng = np.random.default_rng(100 + seats)
    test = SPRT(elo0=0, elo1=60, alpha=0.05, beta=0.05)
    runs = 40
    h1 = sum(simulate_run(test, 60, seats, rng)[0] == "H1" for _ in range(runs))
    h0 = sum(simulate_run(test, 0, seats, rng)[0] == "H0" for _ in range(runs))
    # a smoke test of the 3-4 seat grids; the error rates themselves are checked above
    assert h1 >= runs * 0.85 and h0 >= runs * 0.85, (h1, h0)


def test_a_much_weaker_candidate_is_rejected_quickly():
    rng = np.random.default_rng(7)
    decision, groups = simulate_run(SPRT(0, 30), -200, 2, rng)
    assert decision == "H0" and groups < 200


def nelo_of(pair: np.ndarray) -> float:
    """The normalized Elo of a pentanomial distribution (pair scores 0, 1/4, ..., 1)."""
    values = np.arange(5) / 4
    m = float((pair * values).sum())
    sd = math.sqrt(float((pair * (values - m) ** 2).sum()))
    return (m - 0.5) / (math.sqrt(2) * sd) * NELO_SCALE


def test_the_normalized_model_fits_the_asked_t_and_keeps_its_error_rates():
    values, counts = score_counts([0, 0.25, 0.5, 0.5, 0.75, 1, 1])
    q = mle_with_t(values, counts / counts.sum(), 0.3)
    m = float((q * values).sum())
    assert q.sum() == pytest.approx(1) and (m - 0.5) / math.sqrt(float((q * (values - m) ** 2).sum())) == \
        pytest.approx(0.3, abs=1e-6)
    # fastchess's model=normalized: elo0 and elo1 are nElo; 150 runs at each hypothesis, a
    # test twice as wrong as the nominal 5% would exceed 15 wrong decisions
    n1 = nelo_of(pair_distribution(40))
    assert nelo_of(pair_distribution(0)) == pytest.approx(0, abs=1e-9)
    test = SPRT(elo0=0, elo1=n1, alpha=0.05, beta=0.05, model="normalized")
    rng = np.random.default_rng(2025)
    runs = 150
    false_h1 = sum(decide(test, pair_distribution(0), rng, step=8) != "H0" for _ in range(runs))
    false_h0 = sum(decide(test, pair_distribution(40), rng, step=8) != "H1" for _ in range(runs))
    assert false_h1 <= 15 and false_h0 <= 15, (false_h1, false_h0)


def test_a_near_clean_sweep_decides_sooner_in_the_normalized_model():
    # 2 wins in 202 games: the logistic test moves -0.029 a pair whatever the margin (its
    # nearest fits put the pairs at 0 and 1) and needs 101 pairs; normalized needs 72
    pairs = [0.0] * 101
    pairs[30] = pairs[70] = 0.25
    pairs += [0.0] * 100

    def needed(test):
        return next(n for n in range(1, len(pairs) + 1) if test.status(pairs[:n])["decision"] == "H0")

    assert needed(SPRT(0, 10)) == 101
    assert needed(SPRT(0, 10, model="normalized")) == 72
    assert SPRT.of({"elo0": 0, "elo1": 10, "alpha": 0.05, "beta": 0.05}).model == "logistic"
