"""Sequential stopping (``until:``): stop when the answer is known, with error rates that hold.

The simulations are pure numpy on the functions the experiments use (:mod:`engine.stats`);
the games are in-process greedy mirror matches, and the ``tilt`` variant of
``test_experiment_search`` (seat 0's odds a known function of its parameter).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from arena.experiment import load_experiment, run_experiment
from arena.experiment.config import ConfigError
from arena.experiment.report import write_report
from engine.stats import betting_interval, betting_log_capital, wilson
from test_experiment_search import register_tilt

RUNS = 2000
ALPHA = 0.05


def test_the_betting_sequence_misses_a_win_rate_at_most_alpha_under_optional_stopping():
    """Win shares of seat-rotated groups (0, 1/2 or 1) looked at after every group: the
    chance that the truth is *ever* excluded -- what any stopping rule can exploit -- stays
    below 5%, while a fixed-n 95% interval recomputed at every look of 8 groups misses
    far more often."""
    rng = np.random.default_rng(7)
    p = 0.3
    groups = (rng.random((RUNS, 300, 2)) < p).mean(axis=2)
    wealth = betting_log_capital(groups, np.array([p]), ALPHA)[:, 0, :]
    ever = (wealth.max(axis=1) >= math.log(1 / ALPHA)).mean()
    assert ever <= ALPHA
    naive = np.zeros(RUNS, dtype=bool)
    for n in range(8, 301, 8):
        wins = groups[:, :n].sum(axis=1) * 2
        w = [wilson(k, 2 * n) for k in wins]
        naive |= np.array([not (x["low"] <= p <= x["high"]) for x in w])
    assert naive.mean() > 2 * ALPHA            # why peeking needs a confidence sequence


def test_the_paired_sequential_test_rejects_a_true_null_at_most_alpha():
    """Paired differences of seat 0's win share (in [-1, 1]) with no effect: the rule
    "stop and call a difference once the interval excludes 0" fires in at most 5% of runs,
    looked at after every group up to a cap of 400 groups."""
    rng = np.random.default_rng(11)
    diffs = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(RUNS, 400), p=[0.15, 0.2, 0.3, 0.2, 0.15])
    scaled = (diffs + 1) / 2                    # the betting sequence works on [0, 1]
    wealth = betting_log_capital(scaled, np.array([0.5]), ALPHA)[:, 0, :]
    false_alarms = (wealth.max(axis=1) >= math.log(1 / ALPHA)).mean()
    assert false_alarms <= ALPHA
    # and it has power: a true difference of +0.2 is called in most runs
    shifted = np.clip(scaled + 0.1, 0, 1)
    power = (betting_log_capital(shifted, np.array([0.5]), ALPHA)[:, 0, :].max(axis=1) >= math.log(1 / ALPHA)).mean()
    assert power > 0.8


def test_the_interval_is_the_set_the_wealth_keeps():
    rng = np.random.default_rng(3)
    x = list(rng.random(200) < 0.4)
    ci = betting_interval(x, 0.0, 1.0, ALPHA)
    assert ci["low"] < 0.4 < ci["high"] and ci["high"] - ci["low"] < 0.3
    for m, inside in ((ci["low"] + 0.01, True), (ci["high"] - 0.01, True), (ci["low"] - 0.02, False)):
        w = betting_log_capital(np.array(x, dtype=float), np.array([m]), ALPHA).max()
        assert (w < math.log(1 / ALPHA)) == inside


# ---------------------------------------------------------------- real games
def until_file(tmp_path: Path, until: str, rule_sets: str, out: str = "out") -> Path:
    path = tmp_path / "until.yaml"
    path.write_text("\n".join([
        "name: until", "seats: 2", "bots: [greedy, {name: greedy-b, bot: greedy}]", "seed: 2", "concurrency: 2",
        f"output: {tmp_path / out}", "rule_sets:", *["  " + line for line in rule_sets.strip().splitlines()],
        f"until: {until}", ""]), encoding="utf-8")
    return path


# max_rounds 20 (greedy's games last 9 to 14 rounds, none is adjudicated): rounds lie in [1, 21]
REVISED_4_AND_NO_MASTER = """
- name: revised
  variants: [revised]
  params: {max_rounds: 20}
- name: 4-actions
  variants: [revised]
  params: {actions_per_turn: 4, max_rounds: 20}
- name: no-master
  variants: [revised, no-master]
  params: {max_rounds: 20}
"""


def test_a_large_effect_stops_early_and_a_null_one_plays_to_its_cap(tmp_path):
    """A fourth action shortens greedy games by about 2.6 rounds: decided well before the cap
    (the interval is on the rounds' bounds, [-20, 20] for a difference: about 64 groups).
    Greedy never plays the master action, so no-master changes nothing: it plays to the cap."""
    cfg = load_experiment(until_file(tmp_path, "{figure: rounds, against: reference, max_games: 200, round: 8}",
                                     REVISED_4_AND_NO_MASTER))
    run = run_experiment(cfg, progress=False, echo=lambda t: None)
    seq = run["sequential"]["rule_sets"]
    assert seq["4-actions"]["state"] == "differs" and seq["4-actions"]["games"] < 160
    assert seq["4-actions"]["interval"]["high"] < 0 and seq["4-actions"]["interval"]["low"] > -6
    assert seq["no-master"]["state"] == "cap" and seq["no-master"]["games"] == 200
    assert seq["revised"]["games"] == 200      # the reference plays while a rule set compares with it
    write_report(cfg, run, charts=False)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Sequential stopping" in report and "| `4-actions` |" in report
    assert "games were played of the 600 a fixed design would have played" in report and "fixed-sample" in report


@pytest.fixture
def tilt():
    undo = register_tilt()
    yield
    undo()


def test_seat_advantage_decided_either_way_with_a_margin(tilt, tmp_path):
    """The tilt variant at level 6 gives seat 0 90% of the wins instead of 50%: a difference.
    Another draw of the same odds (tilt.salt) is no difference: with a margin of 0.25 the
    sequence settles it as the same before the cap."""
    rule_sets = """
- name: even
  variants: [tilt]
- name: tilted
  variants: [tilt]
  params: {tilt.level: 6}
- name: redrawn
  variants: [tilt]
  params: {tilt.salt: 1}
"""
    cfg = load_experiment(until_file(tmp_path, "{figure: seat_wins, against: reference, margin: 0.25, "
                                               "max_games: 800, round: 8}", rule_sets))
    run = run_experiment(cfg, progress=False, echo=lambda t: None)
    seq = run["sequential"]["rule_sets"]
    assert seq["tilted"]["state"] == "differs" and seq["tilted"]["interval"]["low"] > 0
    assert seq["redrawn"]["state"] == "same" and seq["redrawn"]["games"] < 800
    assert seq["tilted"]["games"] < seq["redrawn"]["games"]


def test_width_stops_each_rule_set_once_its_interval_is_narrow(tmp_path):
    cfg = load_experiment(until_file(tmp_path, "{figure: rounds, width: 3, max_games: 200, round: 8}",
                                     REVISED_4_AND_NO_MASTER))
    run = run_experiment(cfg, progress=False, echo=lambda t: None)
    for name, s in run["sequential"]["rule_sets"].items():
        ci = s["interval"]
        assert s["state"] == "narrow" and ci["high"] - ci["low"] <= 3 and s["games"] < 200, name


@pytest.mark.parametrize("until, field", [
    ("{figure: rounds, max_games: 10}", "until"),
    ("{figure: rounds, width: 1}", "until"),
    ("{figure: length, width: 1, max_games: 10}", "until.figure"),
    ("{figure: rounds, width: -1, max_games: 10}", "until.width"),
    ("{figure: seat_wins, seat: 2, width: 0.1, max_games: 10}", "until.seat"),
    ("{figure: rounds, against: first, max_games: 10}", "until.against"),
    ("{figure: rounds, width: 1, max_games: 10, rounds: 4}", "until.rounds"),
])
def test_a_bad_until_names_the_file_line_and_field(tmp_path, until, field):
    with pytest.raises(ConfigError, match=rf"until\.yaml, line \d+, field '{field}'"):
        load_experiment(until_file(tmp_path, until, REVISED_4_AND_NO_MASTER))


@pytest.mark.slow
def test_on_a_dask_cluster_a_sequential_run_takes_the_same_decisions(tmp_path):
    """The rounds wait on the cluster as on local workers: the same games, verdicts and counts."""
    from distributed import LocalCluster

    until = "{figure: rounds, against: reference, max_games: 48, round: 4}"
    local = run_experiment(load_experiment(until_file(tmp_path, until, REVISED_4_AND_NO_MASTER)), progress=False,
                           echo=lambda t: None)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        cfg = load_experiment(until_file(tmp_path, until, REVISED_4_AND_NO_MASTER, out="dask")).with_overrides(
            dask=cluster.scheduler_address)
        on_dask = run_experiment(cfg, progress=False, echo=lambda t: None)
    assert on_dask["sequential"]["rule_sets"] == local["sequential"]["rule_sets"]
    strip = lambda rows: [(r["rule_set"], r["group"], r["rotation"], r["rounds"]) for r in rows]  # noqa: E731
    assert strip(on_dask["rows"]) == strip(local["rows"])


def test_a_higher_cap_continues_a_sequential_run_on_its_stored_games(tmp_path):
    path = until_file(tmp_path, "{figure: rounds, against: reference, max_games: 16, round: 4}", """
- name: revised
  variants: [revised]
- name: no-master
  variants: [revised, no-master]
""")
    first = run_experiment(load_experiment(path), progress=False, echo=lambda t: None)
    assert first["sequential"]["rule_sets"]["no-master"] == {**first["sequential"]["rule_sets"]["no-master"],
                                                             "state": "cap", "games": 16}
    lines = []
    more = run_experiment(load_experiment(path).with_overrides(games=32), progress=False, echo=lines.append)
    assert lines[0].startswith("arena: continuing until: 32 of at most 64 games already stored")
    assert more["played"] == 32 and more["sequential"]["rule_sets"]["no-master"]["games"] == 32
