"""From a policy to a bot (arena/rl/policy_bot.py) and the REINFORCE example: policies play
whole games in-process and as protocol bot processes under `arena play`."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import Game, RuleSpec

from arena.rl.policy_bot import InProcessPolicy, load
from rl_helpers import CONFIGS
import rl_policies

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("label,variants,players", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_in_process_policies_play_whole_games(label, variants, players):
    """Every move the policies choose through the mask is accepted by the engine."""
    from arena.plugins import policy as builtin
    for k, fn in enumerate((rl_policies.last_legal, rl_policies.seeded(7))):
        game = Game.new(RuleSpec.make(variants), players, seed=k)
        seats = [InProcessPolicy(fn) if s % 2 == 0 else builtin("greedy") for s in range(players)]
        rng = random.Random(0)
        while not game.is_over:
            game.apply(seats[game.to_move()].choose(game, rng))  # raises IllegalAction on a bad move
        assert game.result()["rounds"] >= 1


def test_load_reports_bad_targets_in_a_sentence():
    with pytest.raises(ValueError, match="module:function"):
        load("rl_policies")
    with pytest.raises(ValueError, match="no function 'nope'"):
        load("rl_policies:nope")
    with pytest.raises(ValueError, match="cannot import"):
        load("no_such_module_here:fn")
    fn = load(f"{HERE / 'rl_policies.py'}:seeded", ["3"])
    assert fn(np.zeros(3), np.array([0, 1, 0], np.int8)) == 1


def _play(cmd: str, *extra: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "arena.cli", "play", "random", "--cmd", cmd, "--json", "--sandbox",
                          "none", *extra], capture_output=True, text=True, cwd=HERE.parent, timeout=300,
                         env={"PYTHONPATH": str(HERE), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.slow
def test_a_policy_enters_arena_play_as_a_protocol_bot():
    res = _play(f"{sys.executable} -m arena.rl.policy_bot rl_policies:last_legal", "--seed", "3")
    assert res["faults"] == [[], []] and res["times"][1]["moves"] > 10
    res = _play(f"{sys.executable} -m arena.rl.policy_bot rl_policies:illegal", "--seed", "4", "--rules", "revised,ghost",
                "--players", "3")
    assert res["faults"] == [[], [], []]  # the bot fell back to legal indices


def test_policy_bot_without_a_policy_says_how_to_call_it():
    out = subprocess.run([sys.executable, "-m", "arena.rl.policy_bot"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "module:function" in out.stderr
    out = subprocess.run([sys.executable, "-m", "arena.rl.policy_bot", "nothing_here:fn"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "cannot import" in out.stderr and "Traceback" not in out.stderr


def test_reinforce_example_trains_saves_and_plays(tmp_path):
    from arena.rl.examples.reinforce import LinearPolicy, evaluate, load_policy, train

    policy = train(episodes=6, report=0, reward_kind="outcome")
    assert np.any(policy.b != 0)  # the updates touched the weights
    path = tmp_path / "policy.npz"
    policy.save(str(path))
    again = load_policy(str(path))
    assert isinstance(again, LinearPolicy) and np.array_equal(again.W, policy.W)
    res = evaluate(again, games=2)
    assert res["won"] + res["tied"] + res["lost"] == 2
