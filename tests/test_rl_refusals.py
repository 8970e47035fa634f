"""The environments keep the word of docs/learning.md: the wrapped PettingZoo env refuses as
the bare one does, the Gymnasium env takes ``illegal=`` and a step limit, a truncated
episode never reads as a tie, a policy that fails on its first call fails at start (a
crash, not a timeout), and action descriptions name their fields."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import gymnasium as gym  # noqa: E402

from arena.rl import aec  # noqa: E402
from arena.rl.core import EpisodeOver, NotAnIndex  # noqa: E402
from arena.rl.gym import IDS, MAX_EPISODE_STEPS, ProjectLGym  # noqa: E402
from arena.rl.spaces import IllegalIndex, action_index  # noqa: E402


def _forbidden(mask) -> int:
    return int(np.flatnonzero(np.asarray(mask) == 0)[0])


def _play_out(e, rng):
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# 1. env(illegal="raise") raises
def test_wrapped_env_raises_on_an_illegal_index_when_asked():
    e = aec.env(json_obs=False, illegal="raise")
    e.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "illegal move made" warning either
        with pytest.raises(IllegalIndex, match="not legal now"):
            e.step(_forbidden(e.observe(e.agent_selection)["action_mask"]))


# 2. the wrapped env refuses as documented
def test_wrapped_env_refuses_as_documented():
    e = aec.env(json_obs=False)
    with pytest.raises(EpisodeOver, match="reset"):
        e.step(0)
    e.reset(seed=1)
    for bad in (2.0, "2", True):
        with pytest.raises(NotAnIndex, match="integer index"):
            e.step(bad)
    agent = e.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e.step(_forbidden(e.observe(agent)["action_mask"]))
    assert all(e.terminations.values()) and not any(e.truncations.values())
    assert "not legal now" in e.infos[agent]["illegal"] and e.rewards[agent] == -1.0
    e.reset(seed=2)
    _play_out(e, np.random.default_rng(0))
    with pytest.raises(EpisodeOver, match="reset"):
        e.step(0)


# 3. the Gymnasium env takes illegal=
def test_gym_env_takes_illegal():
    env = ProjectLGym("random", json_obs=False, illegal="raise")
    obs, _ = env.reset(seed=0)
    with pytest.raises(IllegalIndex):
        env.step(_forbidden(obs["action_mask"]))
    env = gym.make("arena.rl.gym:ProjectL-v0", json_obs=False, illegal="terminate")
    obs, _ = env.reset(seed=0)
    _, reward, term, trunc, info = env.step(_forbidden(obs["action_mask"]))
    assert (reward, term, trunc) == (-1.0, True, False) and "illegal" in info
    with pytest.raises(ValueError, match="terminate or raise"):
        ProjectLGym("random", illegal="warn")


# 4. step limits, truncation and info["result"]
def test_registered_ids_have_a_step_limit_and_a_cut_is_not_a_tie():
    for env_id in IDS:
        assert gym.spec(env_id).max_episode_steps == MAX_EPISODE_STEPS
    env = gym.make("arena.rl.gym:ProjectL-v0", json_obs=False, max_episode_steps=5)
    obs, _ = env.reset(seed=3)
    for step in range(5):
        obs, reward, term, trunc, info = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert (reward, term, trunc) == (0.0, False, True) and "result" not in info
    env = ProjectLGym("random", json_obs=False, max_steps=3)
    obs, _ = env.reset(seed=3)
    trunc = False
    while not trunc:
        obs, reward, term, trunc, info = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert env.steps == 3 and (reward, term) == (0.0, False) and "result" not in info
    assert "no outcome" in info["truncated"] and info["scores"] == [0, 0]
    with pytest.raises(EpisodeOver):
        env.step(0)
    env = ProjectLGym("random", json_obs=False)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(1)
    term = False
    while not term:
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert set(info["result"]) >= {"scores", "ranking", "completed", "rounds"} and "truncated" not in info


def test_aec_truncation_says_so():
    raw = aec.raw_env(json_obs=False, max_steps=6)
    raw.reset(seed=3)
    rng = np.random.default_rng(0)
    seen = []
    for agent in raw.agent_iter():
        obs, reward, term, trunc, info = raw.last()
        if trunc:
            seen.append((reward, info))
        raw.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert seen and all(r == 0.0 and "no outcome" in i["truncated"] and "scores" in i for r, i in seen)


# 5. a policy that fails on its first call fails within the handshake
def test_policy_bot_calls_the_policy_during_the_handshake():
    from engine import RuleSpec

    from arena.rl.policy_bot import PolicyBot

    calls = []

    def broken(obs, mask):
        calls.append(obs.shape)
        raise ValueError("a model made for another observation")

    bot = PolicyBot(broken)
    with pytest.raises(ValueError, match="another observation"):
        bot.handle({"type": "hello", "id": 1, "seat": 1, "seed": 4, "rules": RuleSpec.make([]).to_json(),
                    "players": 2})
    assert calls

    def fine(obs, mask):
        calls.append(1)
        return int(np.flatnonzero(mask)[0])

    bot = PolicyBot(fine)
    calls.clear()
    hello = {"type": "hello", "id": 1, "seat": 0, "seed": 4, "rules": RuleSpec.make(["revised"]).to_json(), "players": 2}
    assert bot.handle(hello)["type"] == "ready" and calls == [1]
    bot.handle({**hello, "id": 2})
    assert calls == [1]  # once per rule set in a process


# 6. descriptions name their fields
def test_action_descriptions_keep_their_labels():
    from engine import RuleSpec, compile_rules

    space = action_index(compile_rules(RuleSpec.make(["revised", "ghost"]), 2))
    texts = {space.describe(i) for i in range(space.size)}
    assert {"take_puzzle color=white slot=0", "take_puzzle color=black blind", "take_puzzle grid slot=0",
            "recycle color=white", "upgrade give=O1 take=I2", "reward take=O1"} <= texts
    assert not any(" True" in t or " False" in t for t in texts)
    assert len(texts) == space.size  # every index its own text
