"""Ratings: hand-computed Bradley-Terry cases, Plackett-Luce on simulated bots of known strength."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.tournament.ratings import ELO, fit_ratings


def duel(a, b, ra, rb, group=0):
    return {"group": group, "seats": [{"bot": a, "rank": ra}, {"bot": b, "rank": rb}]}


def test_two_bots_three_wins_of_four_is_400_log10_3():
    games = [duel("A", "B", 1, 2, i) for i in range(3)] + [duel("A", "B", 2, 1, 3)]
    r = fit_ratings(games, anchor="B", prior=0, bootstrap=0)
    assert r.elo["B"] == 0.0
    assert r.elo["A"] == pytest.approx(400 * math.log10(3), abs=1e-4)
    # observed information of 4 games at p = 3/4: 4 * 3/4 * 1/4 = 3/4, so se = sqrt(4/3) strength units
    se = math.sqrt(4 / 3) * ELO
    lo, hi = r.ci["A"]
    assert lo == pytest.approx(r.elo["A"] - 1.96 * se, rel=1e-4) and hi == pytest.approx(r.elo["A"] + 1.96 * se, rel=1e-4)
    assert r.los["A"]["B"] == pytest.approx(0.5 * (1 + math.erf(r.elo["A"] / se / math.sqrt(2))), rel=1e-4)
    assert r.los["A"]["B"] + r.los["B"]["A"] == pytest.approx(1.0)


def test_a_draw_counts_half_a_win():
    games = [duel("A", "B", 1, 1, 0), duel("A", "B", 1, 2, 1)]  # 1.5 of 2 points = 3 to 1 odds
    r = fit_ratings(games, anchor="B", prior=0)
    assert r.elo["A"] == pytest.approx(400 * math.log10(3), abs=1e-4)


def test_even_results_give_equal_ratings_and_los_one_half():
    games = [duel("A", "B", 1, 2, 0), duel("A", "B", 2, 1, 1), duel("B", "C", 1, 2, 2), duel("B", "C", 2, 1, 3),
             duel("A", "C", 1, 2, 4), duel("A", "C", 2, 1, 5)]
    r = fit_ratings(games, anchor="A", prior=0, bootstrap=0)
    for b in "ABC":
        assert r.elo[b] == pytest.approx(0.0, abs=1e-6)
    assert r.los["B"]["C"] == pytest.approx(0.5, abs=1e-6)


def test_mle_matches_expected_wins_to_actual_wins():
    # A beats B 2:1, B beats C 2:1, C beats A 1:2 -- the BT likelihood equations: every bot's
    # expected number of wins under the fit equals its actual wins.
    games = []
    for a, b, wa, wb in [("A", "B", 2, 1), ("B", "C", 2, 1), ("A", "C", 2, 1)]:
        games += [duel(a, b, 1, 2, len(games) + i) for i in range(wa)]
        games += [duel(a, b, 2, 1, len(games) + i) for i in range(wb)]
    r = fit_ratings(games, anchor="C", prior=0)
    s = {b: r.elo[b] / ELO for b in r.elo}
    for bot in "ABC":
        expected = actual = 0.0
        for g in games:
            x, y = g["seats"]
            if bot in (x["bot"], y["bot"]):
                me, other = (x, y) if x["bot"] == bot else (y, x)
                expected += 1 / (1 + math.exp(s[other["bot"]] - s[bot]))
                actual += me["rank"] < other["rank"]
        assert expected == pytest.approx(actual, abs=1e-5)
    assert r.elo["A"] > r.elo["B"] > r.elo["C"] == 0.0


def test_a_clean_sweep_stays_finite_with_the_prior():
    games = [duel("A", "B", 1, 2, i) for i in range(10)]
    r = fit_ratings(games, anchor="B")
    assert 100 < r.elo["A"] < 1000 and r.ci["A"][1] > r.ci["A"][0]


def test_the_anchor_defaults_to_random():
    r = fit_ratings([duel("random", "greedy", 2, 1, 0), duel("random", "greedy", 1, 2, 1)])
    assert r.anchor == "random" and r.elo["random"] == 0.0


def pairs(won_by_a: int, won_by_b: int) -> list[dict]:
    """Two-seat pairs (one deal, both seatings) each won twice by the same bot."""
    out = []
    for g in range(won_by_a + won_by_b):
        w, l = ("A", "B") if g < won_by_a else ("B", "A")
        out += [{"group": g, "seats": [{"bot": w, "rank": 1}, {"bot": l, "rank": 2}]},
                {"group": g, "seats": [{"bot": l, "rank": 2}, {"bot": w, "rank": 1}]}]
    return out


def test_two_seat_intervals_take_the_pair_as_the_unit():
    # 50 pairs, A wins both games of 30 and B both of 20: 60 of 100 games, but only 50
    # independent pairs. Pairs as the unit: p = 0.6 +- 1.96 sqrt(0.24 / 50), about +-98 Elo;
    # games as the unit gave [+0.9, +139.9].
    r = fit_ratings(pairs(30, 20), anchor="B")
    assert "bootstrap" in r.method
    lo, hi = r.ci["A"]
    assert r.elo["A"] == pytest.approx(70.4, abs=1.5)
    assert lo < -5 and hi > 160 and 170 < hi - lo < 220, (lo, hi)
    narrow = fit_ratings(pairs(30, 20), anchor="B", bootstrap=0)
    assert narrow.ci["A"][1] - narrow.ci["A"][0] < 0.75 * (hi - lo)


def test_two_seat_interval_width_is_that_of_pairs_as_the_unit():
    # correlated pairs: with probability 0.6 one coin decides both games of a deal, else two
    # independent games. The delta method on the mean pair score gives the width the
    # interval must have; the games-as-unit (Hessian) interval is narrower by sqrt(1.6).
    rng = np.random.default_rng(11)
    p, n = 0.6, 400
    games, pair_scores = [], []
    for g in range(n):
        both, first = rng.random() < 0.6, rng.random() < p
        wins = [first, first if both else rng.random() < p]
        pair_scores.append(sum(wins) / 2)
        for k, a_wins in enumerate(wins):
            seats = [{"bot": "A", "rank": 1 if a_wins else 2}, {"bot": "B", "rank": 2 if a_wins else 1}]
            games.append({"group": g, "seats": seats if k == 0 else seats[::-1]})
    x = np.array(pair_scores)
    m = x.mean()
    se_elo = x.std(ddof=1) / math.sqrt(n) * ELO / (m * (1 - m))
    lo, hi = fit_ratings(games, anchor="B", prior=0.1, seed=1).ci["A"]
    assert hi - lo == pytest.approx(2 * 1.96 * se_elo, rel=0.15)
    lo0, hi0 = fit_ratings(games, anchor="B", prior=0.1, bootstrap=0).ci["A"]
    assert hi0 - lo0 < 0.9 * (hi - lo)


def simulate(true: dict[str, float], seats: int, groups: int, rng) -> list[dict]:
    """Plackett-Luce games: strength plus Gumbel noise, sorted (seat-rotated groups of one table)."""
    names = list(true)
    games = []
    for g in range(groups):
        table = rng.choice(len(names), seats, replace=False)
        for _ in range(seats):
            noisy = np.array([true[names[i]] / ELO for i in table]) + rng.gumbel(size=seats)
            ranks = np.empty(seats, dtype=int)
            ranks[np.argsort(-noisy)] = np.arange(1, seats + 1)
            games.append({"group": g, "seats": [{"bot": names[t], "rank": int(ranks[k])} for k, t in enumerate(table)]})
    return games


@pytest.mark.parametrize("seats,groups,bootstrap", [(2, 600, 0), (3, 250, 50), (4, 160, 50)])
def test_simulated_bots_fitted_order_and_interval_coverage(seats, groups, bootstrap):
    true = {"a": 0.0, "b": 150.0, "c": 300.0, "d": 450.0, "e": 600.0}
    rng = np.random.default_rng(seats)
    covered = total = 0
    for rep in range(5):
        r = fit_ratings(simulate(true, seats, groups, rng), anchor="a", prior=0.1, bootstrap=bootstrap, seed=rep)
        assert sorted(true, key=r.elo.get) == list(true)  # the fitted order is the true order
        for bot in "bcde":
            lo, hi = r.ci[bot]
            covered += lo <= true[bot] <= hi
            total += 1
        assert r.los["e"]["a"] > 0.99
    assert covered / total >= 0.8, f"95% intervals covered the truth {covered} of {total} times"
