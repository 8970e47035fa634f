"""The planner's deterministic budget and ``planner-fast``: an experiment game played with
it replays move for move under CPU load from another process; the budget is what stops
the search; the fast bot is registered, legal, uses the master action, and measures the
per-action usage an experiment report shows."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine import Game, RuleSpec
from engine.actions import Master

from arena.experiment import load_experiment, run_experiment
from arena.experiment.actions import action_counts, report_lines
from arena.plugins import policy, policy_names
from arena.execution.inprocess import play_inprocess
from bots.planner import PlannerPolicy
from bots.planner.fast import FAST_NODES, PlannerFastPolicy
from bots.planner.search import TurnSearch

ROOT = Path(__file__).resolve().parents[1]

BUSY = "import time\nend = time.time() + 120\nwhile time.time() < end:\n    pass\n"


def _moves(game_or_record) -> list:
    if isinstance(game_or_record, dict):
        return [json.dumps(e, sort_keys=True) for e in game_or_record["actions"]]
    from engine.state_json import history_to_json
    return [json.dumps(e, sort_keys=True) for e in history_to_json(game_or_record.rules, game_or_record.history)]


def _play(spec, seats, seed, bots, rng_seed=0) -> Game:
    game = Game.new(spec, seats, seed)
    rngs = [random.Random(f"{rng_seed}:{s}") for s in range(seats)]
    while not game.is_over:
        s = game.to_move()
        game.apply(bots[s].choose(game, rngs[s]))
    return game


@pytest.mark.slow
def test_experiment_game_with_the_node_budget_replays_move_for_move_under_cpu_load(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(f"""
        name: replay-check
        seats: 2
        bots: [planner-fast, greedy]
        games: 4
        seed: 11
        concurrency: 2
        output: {tmp_path / 'out'}
        replays: true
        rule_sets:
          - name: revised
            variants: [revised]
          - name: ghost
            variants: [revised, ghost]
        """), encoding="utf-8")
    cfg = load_experiment(path)
    run = run_experiment(cfg, progress=False)
    assert len(run["rows"]) == 8 and not run["failed"]
    records = [json.loads(Path(r["replay"]).read_text()) for r in run["rows"]]
    # replay the games in another order, in this process (other games' memos already
    # warm) and while a busy loop competes for the CPU: the clock must not matter
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
    try:
        for row, record in reversed(list(zip(run["rows"], records))):
            tcfg = cfg.tournament([rs.name for rs in cfg.rule_sets].index(row["rule_set"]))
            request = {"seats": [{"name": b.name, "bot": b.bot} for b in
                                 (tcfg.bots if row["seat0_bot"] == "planner-fast" else tcfg.bots[::-1])],
                       "rules": record["rules"], "seed": record["seed"], "players": 2,
                       "replay_path": str(tmp_path / "again.json")}
            play_inprocess(request)
            again = json.loads((tmp_path / "again.json").read_text())
            assert _moves(again) == _moves(record), f"game {row['rule_set']}/{row['group']}/{row['rotation']} differs"
            assert again["final_digest"] == record["final_digest"]
    finally:
        for p in busy:
            p.kill()
            p.wait()


def test_same_seed_and_budget_give_the_same_moves_even_when_the_clock_is_tiny():
    spec = RuleSpec.make(["revised"])
    a = _play(spec, 2, 5, [PlannerPolicy(nodes=60, max_width=3, move_ms=0.001), policy("greedy")])
    b = _play(spec, 2, 5, [PlannerPolicy(nodes=60, max_width=3, move_ms=10_000), policy("greedy")])
    assert _moves(a) == _moves(b)
    # a different budget is a different player: the budget is what decides
    c = _play(spec, 2, 5, [PlannerPolicy(nodes=400, max_width=6), policy("greedy")])
    assert _moves(c) != _moves(a)


@pytest.mark.parametrize("variants,players,nodes", [(["revised"], 2, 25), (["solo"], 1, 1500)])
def test_the_node_budget_stops_the_search_without_reading_the_clock(monkeypatch, variants, players, nodes):
    game = Game.new(RuleSpec.make(variants), players, 8)
    seen = []
    real = TurnSearch.run

    def run(self, root, width, depth=12):
        try:
            real(self, root, width, depth)
        finally:
            seen.append(self)
    monkeypatch.setattr(TurnSearch, "run", run)
    import bots.planner.search as search_mod
    monkeypatch.setattr(search_mod.time, "perf_counter", lambda: pytest.fail("the clock was read"))
    PlannerPolicy(nodes=nodes, max_width=48).choose(game, random.Random(1))
    top = seen[0]  # the turn search; in solo the next-turn searches add their nodes to it
    assert top.nodes == nodes
    assert any(s is not top for s in seen) == (players == 1)


def test_planner_fast_is_registered_and_plays_legal_games_with_the_master_action():
    assert "planner-fast" in policy_names()
    bot = policy("planner-fast")
    assert isinstance(bot, PlannerFastPolicy) and bot.nodes == FAST_NODES
    masters = 0
    for seed in (21, 22):
        game = _play(RuleSpec.make(["revised"]), 2, seed, [bot, policy("greedy")])
        masters += sum(1 for s, a in game.history if s == 0 and isinstance(a, Master))
        assert game.is_over
    assert masters >= 1
    ghost = _play(RuleSpec.make(["revised", "ghost"]), 3, 4, [policy("planner-fast"), policy("planner-fast"), policy("greedy")])
    assert ghost.is_over


def test_a_bad_node_budget_is_refused_with_a_sentence():
    with pytest.raises(ValueError, match="nodes must be a positive"):
        PlannerPolicy(nodes=0)


def test_action_counts_agree_between_a_game_and_its_replay_record():
    from engine import make_replay
    game = _play(RuleSpec.make(["revised"]), 2, 3, [policy("greedy"), policy("random")])
    counts = action_counts(game)
    assert counts == action_counts(make_replay(game))
    assert sum(counts.values()) == len(game.history) and counts.get("finish") == 2


def test_report_lists_action_usage_and_flags_a_significant_difference():
    rows = []
    for name, master in (("revised", 3), ("no-master", 0)):
        for g in range(10):
            rows.append({"rule_set": name, "group": g, "rotation": 0, "actions_master": master,
                         "actions_place": 10 + g % 3})
    comp = {"rule_sets": ["revised", "no-master"], "paired": {"no-master": {}}}
    text = "\n".join(report_lines(rows, comp))
    assert "## Actions" in text and "`master` | 3.00 [3.00, 3.00] (100%) | 0.00 [0.00, 0.00] (0%)" in text
    assert "**-3.00 [-3.00, -3.00]**" in text
    assert "- `no-master`: `master` per game -3.00" in text and "Not shown: `place` per game" in text


def test_shipped_house_rules_experiment_plays_the_fast_planner():
    cfg = load_experiment(ROOT / "tournaments" / "house-rules.yaml")
    assert {b.bot for b in cfg.base.bots} == {"planner-fast"}
    names = [rs.name for rs in cfg.rule_sets]
    assert names[0] == "revised" and "no-master" in names and "ghost" in names


def test_two_rounds_of_waiting_make_ending_the_game_worth_it():
    from engine.actions import Pass
    from bots.planner import solver_for
    from bots.planner.evaluate import Context, Weights, _stalled
    game = Game.new(RuleSpec.make(["revised"]), 2, 1)
    k = 2 * game.n * game.rules.actions_per_turn
    w = Weights(tempo=2.5, stall_tempo=8.0)
    assert not _stalled(game) and Context(game, 0, solver_for(game.rules), w).tempo == 2.5
    game.history = [(i % 2, Pass()) for i in range(k)]
    assert _stalled(game) and Context(game, 0, solver_for(game.rules), w).tempo == 8.0
    assert Context(game, 0, solver_for(game.rules), Weights(tempo=2.5)).tempo == 2.5  # off by default


@pytest.mark.slow
def test_shipped_experiment_shows_the_master_action_under_revised_and_not_under_no_master(tmp_path):
    cfg = load_experiment(ROOT / "tournaments" / "house-rules.yaml")
    keep = [rs for rs in cfg.rule_sets if rs.name in ("revised", "no-master")]
    from dataclasses import replace
    cfg = replace(cfg, rule_sets=tuple(keep)).with_overrides(output=tmp_path / "out", games=6)
    run = run_experiment(cfg, progress=False)
    by = {n: [r for r in run["rows"] if r["rule_set"] == n] for n in ("revised", "no-master")}
    assert sum(r.get("actions_master", 0) for r in by["revised"]) > 0
    assert sum(r.get("actions_master", 0) for r in by["no-master"]) == 0
    from engine.stats import compare
    text = "\n".join(report_lines(run["rows"], compare(by)))
    assert "- `no-master`: " in text and "`master` per game -" in text


@pytest.mark.parametrize("variants,players", [(["solo"], 1), (["revised"], 2)])
def test_remembered_plans_change_no_move(monkeypatch, variants, players):
    """The evaluation remembers each decision's plans by their arguments: the same moves
    as planning every position afresh, with fewer plans made."""
    evaluate_mod = sys.modules["bots.planner.evaluate"]
    real = evaluate_mod._plan
    made = []

    def counted(*args):
        made.append(1)
        return real(*args)

    def bots():
        return [PlannerPolicy(nodes=400, max_width=6) for _ in range(players)]

    monkeypatch.setattr(evaluate_mod, "_plan", counted)
    remembered = _play(RuleSpec.make(variants), players, 6, bots())
    with_memo = len(made)
    made.clear()
    monkeypatch.setattr(evaluate_mod, "_planned", lambda puzzles, supply, actions, ef, ctx, cap: counted(puzzles, supply, actions, ef, ctx, cap))
    afresh = _play(RuleSpec.make(variants), players, 6, bots())
    assert _moves(remembered) == _moves(afresh)
    assert with_memo < 0.8 * len(made)
