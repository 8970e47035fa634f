"""The environments (arena/rl/aec.py, gym.py) and the observation arrays (observe.py):
the libraries' own API checkers, reproducible seeds, illegal indices, and arrays that show
exactly what the seat's JSON observation shows."""

from __future__ import annotations

import os
import random
import warnings

import numpy as np
import pytest

if os.environ.get("CI") != "true":  # in CI a missing extra is a failure, not a skip
    pytest.importorskip("gymnasium", reason="the rl extra is not installed (pip install '.[rl]')")
    pytest.importorskip("pettingzoo", reason="the rl extra is not installed (pip install '.[rl]')")

from engine import OVER, observation  # noqa: E402
from engine.observation import game_from_observation  # noqa: E402

from arena.rl.aec import ProjectLEnv  # noqa: E402
from arena.rl.gym import ProjectLGym  # noqa: E402
from arena.rl.observe import observer  # noqa: E402
from arena.rl.spaces import Chooser  # noqa: E402
from rl_helpers import CONFIGS, sample_states  # noqa: E402

AEC_CASES = [
    {"rules": "", "players": 2},
    {"rules": "revised,ghost", "players": 3},
    {"rules": "solo", "players": 1, "params": {"difficulty": "challenging"}},
    {"rules": "revised,open-scores", "players": 4, "params": {"actions_per_turn": 2, "max_unfinished": 3}},
]


@pytest.mark.parametrize("kwargs", AEC_CASES, ids=lambda k: f"{k['rules'] or 'base'}-{k['players']}p")
def test_pettingzoo_api_test_passes(kwargs):
    from pettingzoo.test import api_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice that a Dict observation is unusual
        api_test(ProjectLEnv(**kwargs), num_cycles=150)


@pytest.mark.parametrize("opponents,rules,players", [
    ("random", "", 2), ("greedy", "revised,ghost", 3), ("planner", "revised", 2), ([], "solo", 1),
])
def test_gymnasium_check_env_passes(opponents, rules, players):
    from gymnasium.utils.env_checker import check_env
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no spec": the env is used without gymnasium.make
        check_env(ProjectLGym(opponents, rules=rules, players=players), skip_render_check=True)


def _aec_episode(seed, rules="revised", players=3, limit=400):
    env = ProjectLEnv(rules=rules, players=players, json_obs=False)
    env.reset(seed=seed)
    rng = np.random.default_rng(0)
    trace = []
    for agent in env.agent_iter(limit):
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(rng.choice(legal))
        trace.append((agent, obs["observation"].copy(), reward, action))
        env.step(action)
    return trace


def test_aec_seeds_make_episodes_reproducible():
    a, b, c = _aec_episode(11), _aec_episode(11), _aec_episode(12)
    assert len(a) == len(b)
    for (ag1, o1, r1, x1), (ag2, o2, r2, x2) in zip(a, b):
        assert ag1 == ag2 and x1 == x2 and r1 == r2 and np.array_equal(o1, o2)
    assert not all(np.array_equal(x[1], y[1]) for x, y in zip(a, c))


def test_gym_seeds_make_episodes_reproducible_against_greedy():
    def episode(seed):
        env = ProjectLGym("greedy", rules="revised", json_obs=False)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(1)
        out = [obs["observation"]]
        for _ in range(300):
            obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            out.append(obs["observation"])
            if term:
                out.append(np.array([reward]))
                break
        return out

    a, b = episode(3), episode(3)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_gym_plays_whole_games_and_rewards_the_outcome():
    env = ProjectLGym("random", rules="", players=2, seat="rotate", json_obs=False)
    seats = set()
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        seats.add(env.seat)
        rng = np.random.default_rng(seed)
        while True:
            obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            if term:
                break
            assert reward == 0.0
        res = info["result"]
        others = [r for s, r in enumerate(res["ranking"]) if s != env.seat]
        mine = res["ranking"][env.seat]
        assert reward == sum(r > mine for r in others) - sum(r < mine for r in others)
    assert seats == {0, 1}


def test_an_unmasked_index_ends_the_episode_with_the_illegal_reward():
    env = ProjectLGym("random", json_obs=False)
    obs, _ = env.reset(seed=0)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, term, trunc, info = env.step(bad)
    assert (reward, term, trunc) == (-1.0, True, False) and "not legal now" in info["illegal"]
    aec = ProjectLEnv(players=2)
    aec.reset(seed=0)
    agent = aec.agent_selection
    aec.step(bad)
    assert aec.terminations[agent] and aec._cumulative_rewards[agent] == -1.0 and "illegal" in aec.infos[agent]


def test_json_observation_rides_in_info():
    env = ProjectLEnv(rules="revised", players=2)
    env.reset(seed=4)
    info = env.infos["seat_1"]["observation"]
    assert info["seat"] == 1 and info["rules"]["variants"] == ["revised"]


@pytest.mark.parametrize("label,variants,players", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_array_shows_what_the_json_observation_shows(label, variants, players):
    """The fast array from the state equals the array rebuilt from the seat's JSON
    observation (what a protocol bot gets), so it leaks nothing the JSON hides."""
    rng = random.Random(2)
    hidden = 0
    for game in sample_states(variants, players)[::2]:
        ob = observer(game.rules)
        for seat in range(players):
            view = observation(game, seat)
            fast = ob.encode(game, seat)
            slow = ob.encode(game_from_observation(view), seat, view=view)
            assert np.array_equal(fast, slow), (label, seat)
            assert np.all(fast >= ob.low) and np.all(fast <= ob.high)
            if not game.rules.scores_visible and game.phase != OVER and players > 1:
                tail = ob.off["seats"] + 2 * ob.seat_size - 3  # the next seat's score_visible flag
                assert fast[tail] == 0 and fast[tail - 1] == 0
                hidden += 1
        # in the middle of a sequence too: the same indices on the rebuilt game
        seat = game.to_move()
        if seat < 0:
            continue
        view = observation(game, seat)
        rebuilt = game_from_observation(view)
        c1, c2 = Chooser(game), Chooser(rebuilt)
        for _ in range(2):
            legal = c1.legal_indices()
            assert np.array_equal(legal, c2.legal_indices())
            i = rng.choice(list(legal))
            if c1.play(i) is not None:
                c2.play(i)
                break
            c2.play(i)
            assert np.array_equal(ob.encode(game, seat, c1), ob.encode(rebuilt, seat, c2, view=view))
    if "revised" in variants and "open-scores" not in variants:
        assert hidden > 0


@pytest.mark.parametrize("label,variants,players", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_memo_arrays_equal_fresh_arrays_at_every_step(label, variants, players):
    """The environments build arrays from each seat's last one (``memo``): at every index
    step of whole random games, inside sequences too, every seat's array equals the one
    built from scratch, and the caller may scribble on what it got."""
    env = ProjectLEnv(rules=",".join(variants), players=players, json_obs=False)
    rng = np.random.default_rng(5)
    for seed in (1, 2):
        env.reset(seed=seed)
        table = env.table
        ob = table.observer
        steps = 0
        while env.agents:
            agent = env.agent_selection
            obs = env.observe(agent)
            for seat in range(players):
                chooser = table.chooser if seat == table.game.seat else None
                got = ob.encode(table.game, seat, chooser, memo=table.memo)
                assert np.array_equal(got, ob.encode(table.game, seat, chooser)), (label, seed, steps, seat)
                got[:] = -7.0  # the result is the caller's own
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
        assert steps > 20


def test_layout_blocks_tile_the_array():
    ob = observer(ProjectLEnv(rules="solo", players=1).table.rules)
    at = 0
    for block in ob.layout():
        assert block["offset"] == at
        at += block["size"]
    assert at == ob.size
    assert "solo" in [b["name"] for b in ob.layout()]


def test_bench_env_reports_both_rates_from_the_same_games():
    """``arena bench env`` runs and reports consistent figures (their values are a
    benchmark's business, not a test's)."""
    import json

    from typer.testing import CliRunner

    from arena.cli import app

    result = CliRunner().invoke(app, ["bench", "env", "--games", "2", "--rules", "revised", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.stdout)
    assert r["rules"] == "revised" and r["games"] == 2 and r["engine_decisions"] > 20
    assert r["actions"].startswith("sampled from the mask")
    assert abs(r["env_steps"] - r["engine_decisions"]) < 0.2 * r["engine_decisions"]  # the same games
    assert r["gym_steps_per_s"] > 0 and r["gym_steps_per_s_universal"] > 0 and r["env_steps_per_s_wrapped"] > 0
    assert r["ratio_min"] <= r["ratio"] <= r["ratio_max"]
    assert abs(r["ratio"] - r["env_steps_per_s"] / r["engine_decisions_per_s"]) < 0.01
    solo = CliRunner().invoke(app, ["bench", "env", "--games", "1", "--rules", "solo", "--json"])
    assert solo.exit_code == 0, solo.output
    assert json.loads(solo.output)["players"] == 1  # solo rules take one seat

