"""Research tools of arena.rl: clone/restore of both environments, afterstates, expert
labels, the evaluation helper and the vector environment."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from arena.rl import aec  # noqa: E402
from arena.rl.gym import ProjectLGym  # noqa: E402
from arena.rl.research import afterstates, evaluate, expert_index, expert_indices  # noqa: E402


def _walk(env, obs, rng, n):
    for _ in range(n):
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if term or trunc:
            break
    return obs


def test_gym_clone_and_restore_replay_the_same_future():
    env = ProjectLGym("greedy", rules="revised", json_obs=False)
    obs, _ = env.reset(seed=4)
    obs = _walk(env, obs, np.random.default_rng(0), 9)
    state = env.clone()
    futures = []
    for _ in range(2):
        env.restore(state)
        assert np.array_equal(env.observe()["observation"], obs["observation"])
        rng = np.random.default_rng(1)
        o = obs
        trace = []
        for _ in range(25):
            o, r, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
            trace.append((o["observation"].tobytes(), r, term))
            if term:
                break
        futures.append(trace)
    assert futures[0] == futures[1]


def test_aec_clone_and_restore_keep_a_sequence_under_way():
    e = aec.raw_env(rules="revised", json_obs=False)
    e.reset(seed=2)
    rng = np.random.default_rng(3)
    for _ in range(15):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    state = e.clone()
    agent, before = e.agent_selection, e.observe(e.agent_selection)
    for _ in range(30):
        if not e.agents or e.terminations[e.agent_selection]:
            break
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    e.restore(state)
    after = e.observe(agent)
    assert e.agent_selection == agent
    assert np.array_equal(after["observation"], before["observation"])
    assert np.array_equal(after["action_mask"], before["action_mask"])


def test_afterstates_cover_the_legal_indices_and_leave_the_env_alone():
    env = ProjectLGym("random", json_obs=False)
    obs, _ = env.reset(seed=6)
    obs = _walk(env, obs, np.random.default_rng(2), 4)
    table = env.table
    history = len(table.game.history)
    after = afterstates(env)
    assert sorted(after) == [int(i) for i in np.flatnonzero(obs["action_mask"])]
    assert len(table.game.history) == history and np.array_equal(env.observe()["observation"], obs["observation"])
    distinct = {a["observation"].tobytes() for a in after.values()}
    assert len(distinct) > 1


def test_expert_labels_play_the_bots_moves():
    env = ProjectLGym("greedy", rules="revised", json_obs=False, obs="universal")
    obs, _ = env.reset(seed=8)
    steps = 0
    while True:
        i = expert_index(env, "greedy", random.Random(0))
        assert obs["action_mask"][i]
        obs, reward, term, trunc, info = env.step(i)
        steps += 1
        if term:
            break
    # greedy against greedy through the index space: a whole game, its moves all legal
    assert steps > 10 and "result" in info
    from engine import Game, RuleSpec
    game = Game.new(RuleSpec.make(["revised"]), 2, 1)
    assert len(expert_indices(game, "greedy", random.Random(0))) >= 1


def test_evaluate_reports_a_share_with_its_interval():
    r = evaluate("greedy", "random", games=4, rules="")
    assert r["games"] == 4 and r["won"] + r["tied"] + r["lost"] == 4
    assert 0 <= r["low"] <= r["share"] <= r["high"] <= 1 and r["win_low"] <= r["win_rate"] <= r["win_high"]
    assert r["won"] >= 3  # greedy beats random
    import arena.rl
    assert arena.rl.evaluate is evaluate


def test_vector_env_steps_and_resets_in_the_same_step():
    from arena.rl.vector import ProjectLVectorEnv

    v = ProjectLVectorEnv(3, opponents="random", rules="revised")
    obs, _ = v.reset(seed=0)
    assert obs["observation"].shape[0] == 3 and v.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        actions = [int(rng.choice(np.flatnonzero(m))) for m in v.action_masks()]
        obs, rewards, term, trunc, infos = v.step(actions)
        if term.any():
            i = int(np.flatnonzero(term)[0])
            assert infos["_final_obs"][i] and len(infos["final_info"]["result"]["scores"][i]) == 2
            assert obs["action_mask"][i].any()  # already the next episode
            ended += 1
    assert ended >= 1
    v.close()


def test_masked_sampling_draws_what_discrete_draws():
    """The environments' action space samples a mask faster, and draws the same index as
    Gymnasium's ``Discrete`` from the same seed; anything but a 0/1 int8 mask goes to it."""
    from gymnasium.spaces import Discrete

    from arena.rl.aec import MaskedDiscrete

    ours, theirs = MaskedDiscrete(60), Discrete(60)
    ours.seed(5)
    theirs.seed(5)
    rng = np.random.default_rng(0)
    for _ in range(3000):
        mask = (rng.random(60) < 0.15).astype(np.int8)
        a, b = ours.sample(mask), theirs.sample(mask)
        assert a == b and type(a) is type(b)
    assert ours.sample(np.zeros(60, np.int8)) == 0 and ours == theirs
    with pytest.raises(AssertionError):
        ours.sample(np.full(60, 2, np.int8))
    env = ProjectLGym("random", json_obs=False)
    assert isinstance(env.action_space, MaskedDiscrete)
    assert isinstance(aec.raw_env().action_space("seat_0"), MaskedDiscrete)
