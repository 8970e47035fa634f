"""Stopping rules that cannot be falsely sure: every figure of ``until:`` and ``target:`` gets
the betting confidence sequence on bounds the rules give, and its misses stay at or under
the nominal rate over rare, skewed and degenerate figures as well as ordinary ones.

The simulations are pure numpy on the functions the experiments use; the large version,
with the figures quoted in ``docs/experiments.md``, is ``python -m arena.bench.stopping_coverage``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.experiment import load_experiment
from arena.experiment.config import ConfigError
from arena.experiment.sequential import FIGURES, StopRule, bounds, group_values, interval, verdict
from engine import Game, RuleSpec, compile_rules
from engine.stats import betting_interval, betting_log_capital
from test_experiment_search import register_tilt
from variant_helpers import playout

ALPHA = 0.05
ROUNDS = (1.0, 101.0)              # rounds per game under the default rules (max_rounds 100)
DIFF = (-100.0, 100.0)             # a paired difference of them


def until(figure: str, **kw) -> StopRule:
    return StopRule("until", figure, max_games=10_000, **kw)


# ---------------------------------------------------------------- the bounds come from the rules
def test_every_figure_has_finite_bounds_from_the_rules():
    spec = RuleSpec()
    for figure in FIGURES:
        lo, hi = bounds(until(figure, width=1.0), spec, 2)
        assert math.isfinite(lo) and math.isfinite(hi) and lo < hi, figure
    assert bounds(until("rounds", width=1.0), spec, 2) == ROUNDS
    assert bounds(until("rounds", width=1.0), RuleSpec.make([], {"max_rounds": 20}), 2) == (1.0, 21.0)
    assert bounds(until("seat_wins", width=0.1), spec, 3) == (0.0, 1.0)
    # a paired difference: this rule set's least minus the reference's most, and back
    short = RuleSpec.make([], {"max_rounds": 20})
    assert bounds(until("rounds", against=True), short, 2, spec) == (1.0 - 101.0, 21.0 - 1.0)
    assert bounds(until("rounds", against=True), spec, 2, spec) == DIFF
    # puzzles: none to the whole deal; score: the most a player loses to the deal's points shared out
    rules = compile_rules(spec, 2)
    assert bounds(until("puzzles", width=1.0), spec, 2) == (0.0, float(sum(rules.deck_sizes)))
    lo, hi = bounds(until("score", width=1.0), RuleSpec.make(["revised"]), 2)
    assert lo < -10 and 40 < hi < 200


@pytest.mark.parametrize("variants, players, params", [
    ((), 2, {}), (("revised",), 2, {}), (("revised",), 4, {"max_rounds": 4}), (("no-master",), 3, {}),
    ((), 2, {"finishing_touch_cost": 3, "max_unfinished": 2, "max_rounds": 6}), (("revised", "ghost"), 2, {}),
    (("solo",), 1, {}), (("solo", "no-master"), 1, {"max_rounds": 5}),
])
def test_played_games_stay_within_the_bounds(variants, players, params):
    """Random and greedy playouts under several rule sets: every figure of every game lies
    within its bounds (a bound the games could cross would make the interval wrong)."""
    spec = RuleSpec.make(list(variants), params)
    limits = {f: bounds(until(f, width=1.0), spec, players) for f in FIGURES}
    for seed in range(4):
        game = playout(Game.new(spec, players, seed), seed=seed, greedy_share=0.3 + 0.2 * seed)
        result = game.result()
        rules = game.rules
        figures = {"rounds": result["rounds"], "score": sum(result["scores"]) / players,
                   "puzzles": sum(len(p.completed) for p in game.players), "adjudicated": int(result["adjudicated"]),
                   "seat_wins": 1.0 if result["ranking"][0] == 1 else 0.0}
        for f, v in figures.items():
            lo, hi = limits[f]
            assert lo <= v <= hi, (f, v, limits[f], rules.spec.label(), seed)
        assert min(result["scores"]) >= limits["score"][0]


@pytest.fixture
def tilt():
    undo = register_tilt()
    yield
    undo()


def test_a_figure_the_rules_do_not_bound_is_refused_with_a_sentence(tilt, tmp_path):
    """The tilt variant ends the game itself and adds a score penalty of 1000 without saying
    so: its rounds and scores have no known bounds, and the file is refused where it is read."""
    path = tmp_path / "until.yaml"
    for figure, why in (("rounds", "ends the game itself"), ("score", "score penalty")):
        path.write_text(f"name: t\nseats: 2\nbots: [greedy, {{name: g2, bot: greedy}}]\noutput: {tmp_path / 'o'}\n"
                        f"rule_sets:\n  - name: even\n    variants: [tilt]\n"
                        f"until: {{figure: {figure}, width: 1, max_games: 10}}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=rf"until\.yaml, line \d+, field 'until.figure'.*no bounds under rule set "
                                              rf"'even'.*{why}"):
            load_experiment(path)
    path.write_text(f"name: t\nseats: 2\nbots: [greedy, {{name: g2, bot: greedy}}]\noutput: {tmp_path / 'o'}\n"
                    f"rule_sets:\n  - name: even\n    variants: [tilt]\n"
                    f"until: {{figure: seat_wins, width: 0.2, max_games: 10}}\n", encoding="utf-8")
    assert load_experiment(path).stop.figure == "seat_wins"        # a share is bounded whatever the rules


def test_the_command_line_says_it_in_one_sentence(tilt, tmp_path):
    from cli_helpers import run

    path = tmp_path / "until.yaml"
    path.write_text(f"name: t\nseats: 2\nbots: [greedy, {{name: g2, bot: greedy}}]\noutput: {tmp_path / 'o'}\n"
                    f"rule_sets:\n  - name: even\n    variants: [tilt]\n"
                    f"until: {{figure: rounds, width: 1, max_games: 10}}\n", encoding="utf-8")
    r = run("experiment", path, ok=False, one_line=True)
    assert "no bounds under rule set 'even'" in r.stderr


# ---------------------------------------------------------------- never falsely sure
def test_sixteen_identical_groups_do_not_make_a_narrow_interval():
    """Sixteen groups that all differ by 0 rounds: a rare difference is still possible, so
    the interval has width and ``width: 1`` does not stop; the same holds for a figure seen
    constant (every game 12 rounds)."""
    rule = until("rounds", against=True, width=1.0)
    ci = interval([0.0] * 16, bounds(rule, RuleSpec(), 2, RuleSpec()), ALPHA)
    assert ci["low"] < 0 < ci["high"] and ci["high"] - ci["low"] > 10
    assert verdict(rule, ci, at_cap=False) is None
    level = until("rounds", width=1.0)
    ci = interval([12.0] * 64, bounds(level, RuleSpec(), 2), ALPHA)
    assert ci["low"] < 12 < ci["high"] and verdict(level, ci, at_cap=False) is None
    # it narrows as the evidence grows, and stops once it is there
    ci = interval([12.0] * 4000, bounds(level, RuleSpec(), 2), ALPHA)
    assert 0 < ci["high"] - ci["low"] <= 1.0 and verdict(level, ci, at_cap=False)[0] == "narrow"


def ever_missed(x: np.ndarray, truth: float, lo: float, hi: float, alpha: float = ALPHA) -> float:
    """Share of runs (rows of ``x``) whose sequence excludes ``truth`` at some look: what any
    stopping rule can turn into a wrong answer."""
    scaled = (x - lo) / (hi - lo)
    m = (truth - lo) / (hi - lo)
    wealth = betting_log_capital(scaled, np.array([m]), alpha)[:, 0, :]
    return float((wealth.max(axis=1) >= math.log(1 / alpha)).mean())


RUNS, LOOKS = 2000, 400


def _draw(kind: str, rng):
    """(values of RUNS runs x LOOKS groups, true mean, bounds) of each kind of figure."""
    if kind == "rare-both":                     # +1 or -1 round, 5% each: mean 0
        u = rng.random((RUNS, LOOKS))
        return np.where(u < 0.05, 1.0, np.where(u < 0.10, -1.0, 0.0)), 0.0, DIFF
    if kind.startswith("rare"):                 # a group differs by one round with probability p
        p = float(kind[4:]) / 100
        return (rng.random((RUNS, LOOKS)) < p).astype(float), p, DIFF
    if kind == "skewed-rounds":                 # 12 rounds, 3% adjudicated at 101
        return np.where(rng.random((RUNS, LOOKS)) < 0.03, 101.0, 12.0), 12 + 0.03 * 89, ROUNDS
    if kind == "skewed-score":                  # a long right tail of scores in [-20, 120]
        x = np.clip(rng.lognormal(3.0, 0.6, (RUNS, LOOKS)), 0, 120)
        return x, float(np.clip(rng.lognormal(3.0, 0.6, 4_000_000), 0, 120).mean()), (-20.0, 120.0)
    if kind == "degenerate":                    # every group the same
        return np.zeros((RUNS, LOOKS)), 0.0, DIFF
    if kind == "at-a-bound":                    # every game at the largest value
        return np.full((RUNS, LOOKS), 101.0), 101.0, ROUNDS
    if kind == "win-rate":                      # the ones already checked: a seat's wins (0, 1/2, 1)
        return (rng.random((RUNS, LOOKS, 2)) < 0.3).mean(axis=2), 0.3, (0.0, 1.0)
    if kind == "paired-null":
        return rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(RUNS, LOOKS), p=[0.15, 0.2, 0.3, 0.2, 0.15]), 0.0, (-1, 1)
    if kind == "normal-rounds":
        return np.clip(rng.normal(12, 2, (RUNS, LOOKS)), 1, 101), 12.0, ROUNDS
    raise ValueError(kind)


KINDS = ["rare2", "rare5", "rare10", "rare-both", "skewed-rounds", "skewed-score", "degenerate", "at-a-bound",
         "win-rate", "paired-null", "normal-rounds"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_sequence_ever_misses_at_most_the_nominal_rate(kind):
    """2,000 runs of 400 groups each, looked at after every group: the share of runs in
    which the truth is ever excluded -- a bound on the misses of every stopping rule --
    stays at or under 5%, for rare, skewed and degenerate figures as for ordinary ones."""
    rng = np.random.default_rng(sum(map(ord, kind)))
    x, truth, (lo, hi) = _draw(kind, rng)
    assert ever_missed(x, truth, lo, hi) <= ALPHA


@pytest.mark.parametrize("p", [0.02, 0.05, 0.10])
def test_stopped_at_width_the_interval_holds_the_truth(p):
    """The stopping rule of the report: ``until: {figure: rounds, against: reference,
    width: 4}`` in rounds of 64 groups, each group differing by one round with probability
    ``p``. Runs stop when the interval is 4 rounds wide; the interval they stop with holds
    the true difference in at least 95% of runs, and a miss is always one the wealth made
    (the product's interval is never narrower than the sequence)."""
    rng = np.random.default_rng(int(p * 1000))
    rule = until("rounds", against=True, width=4.0)
    bound = bounds(rule, RuleSpec(), 2, RuleSpec())
    runs, cap, misses, stops = 100, 1600, 0, []
    for _ in range(runs):
        x = (rng.random(cap) < p).astype(float)
        for n in range(64, cap + 1, 64):
            ci = interval(list(x[:n]), bound, ALPHA)
            found = verdict(rule, ci, at_cap=n == cap)
            if found:
                break
        stops.append(n)
        assert found[0] == "narrow"
        inside = ci["low"] <= p <= ci["high"]
        misses += not inside
        if not inside:  # a miss must be the wealth's own: the truth was rejected
            assert ever_missed(x[None, :n], p, *bound) == 1.0
    assert misses / runs <= ALPHA
    assert 16 < np.median(stops) < cap                 # never before the evidence is there


def test_a_stopped_difference_is_right_as_often_as_it_says():
    """``against: reference`` stops once the interval excludes 0. With no difference at all,
    mostly equal groups and rare +-1 rounds either way, at most 5% of runs ever call one,
    and the product's verdict calls one only where the wealth against 0 did."""
    rng = np.random.default_rng(99)
    rule = until("rounds", against=True)
    bound = bounds(rule, RuleSpec(), 2, RuleSpec())
    u = rng.random((RUNS, LOOKS))
    diffs = np.where(u < 0.04, 1.0, np.where(u < 0.08, -1.0, 0.0))
    assert ever_missed(diffs, 0.0, *bound) <= ALPHA
    for x in diffs[:20]:
        for n in range(8, LOOKS + 1, 56):
            found = verdict(rule, interval(list(x[:n]), bound, ALPHA), at_cap=False)
            if found is not None:
                assert found[0] == "differs" and ever_missed(x[None, :n], 0.0, *bound) == 1.0


def test_group_values_and_the_interval_work_on_real_rows():
    rows = [{"group": g, "rotation": r, "rounds": 12 + (g == 3) * r} for g in range(6) for r in range(2)]
    ref = [{"group": g, "rotation": r, "rounds": 12} for g in range(6) for r in range(2)]
    rule = until("rounds", against=True, width=1.0)
    values = group_values(rule, rows, ref, 6)
    assert values == [0, 0, 0, 0.5, 0, 0]
    ci = interval(values, bounds(rule, RuleSpec(), 2, RuleSpec()), ALPHA)
    assert ci["low"] < 0.5 / 6 < ci["high"] and ci["method"] == "betting"


def test_the_interval_holds_every_mean_not_rejected():
    rng = np.random.default_rng(5)
    for lo, hi, x in ((0, 1, rng.random(50) < 0.4), (-100, 100, (rng.random(300) < 0.05).astype(float)),
                      (1, 101, np.full(200, 12.0))):
        ci = betting_interval(list(x), lo, hi, ALPHA)
        ms = np.linspace(lo, hi, 4001)
        keep = betting_log_capital((np.asarray(x, float) - lo) / (hi - lo), (ms - lo) / (hi - lo), ALPHA)
        kept = ms[keep.max(axis=-1) < math.log(1 / ALPHA)]
        assert ci["low"] <= kept.min() and kept.max() <= ci["high"]
        assert ci["high"] - ci["low"] <= kept.max() - kept.min() + 2 * (hi - lo) / 4000
