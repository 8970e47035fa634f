"""What a learner needs from arena/rl beyond the bare environments: opponents that are
policies, snapshots or a self-play pool (selfplay.py); registered Gymnasium ids and
PettingZoo's classic conventions, checked by the libraries' own checkers on every
documented configuration; refusals of non-integer actions and of steps after the end;
one observation shape and action index for every rule set and seat count
(universal.py); shaped rewards that sum as documented."""

from __future__ import annotations

import os
import random
import warnings

import numpy as np
import pytest

if os.environ.get("CI") != "true":  # in CI a missing extra is a failure, not a skip
    pytest.importorskip("gymnasium", reason="the rl extra is not installed (pip install '.[rl]')")
    pytest.importorskip("pettingzoo", reason="the rl extra is not installed (pip install '.[rl]')")

import gymnasium as gym  # noqa: E402

from engine import Game, RuleSpec  # noqa: E402
from engine.errors import ParameterError  # noqa: E402

from arena.rl import aec  # noqa: E402
from arena.rl.core import EpisodeOver, NotAnIndex  # noqa: E402
from arena.rl.gym import IDS, ProjectLGym  # noqa: E402
from arena.rl.policy_bot import InProcessPolicy  # noqa: E402
from arena.rl.selfplay import OpponentPool, as_opponent  # noqa: E402
from arena.rl.spaces import action_index  # noqa: E402
from arena.rl.universal import action_size, obs_size, universal  # noqa: E402


def _random_episode(env, seed, rng_seed=0, limit=2000, greedy=False):
    """Play a Gymnasium episode with uniform legal indices (``greedy``: the indices of
    the greedy bot's moves, so that the learner scores); (rewards, last info)."""
    from arena.plugins import policy
    bot = policy("greedy")
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    pyrng = random.Random(rng_seed)
    rewards = []
    queue: list[int] = []
    for _ in range(limit):
        if greedy:
            if not queue:
                queue = list(env.table.chooser.indices_of(bot.choose(env.table.game, pyrng)))
            index = queue.pop(0)
        else:
            index = rng.choice(np.flatnonzero(obs["action_mask"]))
        obs, reward, term, trunc, info = env.step(int(index))
        rewards.append(reward)
        if term or trunc:
            return rewards, info
    raise AssertionError("the episode did not end")


# ---------------------------------------------------------------- 1. self-play
class Counting:
    """An obs, mask -> index policy that counts its calls (the last legal index)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, obs, mask):
        self.calls += 1
        return int(np.flatnonzero(mask)[-1])


def test_a_policy_function_plays_the_opponent_seats_in_process():
    snapshot = Counting()
    env = ProjectLGym(opponents=snapshot, json_obs=False)
    rewards, info = _random_episode(env, seed=3)
    assert snapshot.calls > 10 and "result" in info
    assert env.opponent_names == {1: "Counting"}


def test_a_saved_snapshot_named_module_factory_args_plays(tmp_path):
    from arena.rl.examples.reinforce import LinearPolicy

    path = tmp_path / "snap.npz"
    LinearPolicy(1744, 1001).save(str(path))
    opp = as_opponent(f"arena.rl.examples.reinforce:load_policy {path}")
    assert isinstance(opp, InProcessPolicy)
    env = ProjectLGym(opponents=[opp], json_obs=False)
    _, info = _random_episode(env, seed=4)
    assert info["result"]["rounds"] >= 1
    env.set_opponents(f"arena.rl.examples.reinforce:load_policy {path}")
    _, info = _random_episode(env, seed=5)
    assert info["result"]["rounds"] >= 1


def test_opponents_may_be_policy_objects_and_unknown_names_fail_at_once():
    from arena.plugins import policy
    env = ProjectLGym(opponents=[policy("greedy"), "random"], players=3, json_obs=False)
    _random_episode(env, seed=1)
    with pytest.raises(KeyError):
        ProjectLGym(opponents="no-such-bot")
    with pytest.raises(TypeError, match="an opponent is"):
        ProjectLGym(opponents=[3.5])


def test_the_pool_keeps_the_newest_snapshots_and_draws_reproducibly():
    pool = OpponentPool(builtins=("random",), size=2, builtin_share=0.0, latest_share=0.0)
    a, b, c = Counting(), Counting(), Counting()
    for k, p in enumerate((a, b, c)):
        pool.add(p, name=f"s{k}")
    assert pool.names() == ["random", "s1", "s2"]
    env = ProjectLGym(opponents=pool, seat="rotate", json_obs=False)
    drawn = []
    for seed in range(6):
        env.reset(seed=seed)
        drawn.append(env.opponent_names[1 - env.seat])
    assert set(drawn) <= {"s1", "s2"} and len(set(drawn)) == 2  # builtin_share 0: snapshots only
    again = []
    for seed in range(6):
        env.reset(seed=seed)
        again.append(env.opponent_names[1 - env.seat])
    assert again == drawn  # a seeded reset draws the same opponent
    _random_episode(env, seed=9)
    assert b.calls + c.calls > 0 and a.calls == 0
    assert sum(pool.draws.values()) == 13


def test_an_empty_pool_says_so():
    env_pool = OpponentPool(builtins=())
    with pytest.raises(ValueError, match="empty"):
        env_pool.sample(random.Random(0))


# ---------------------------------------------------------------- 2. conventions
#: every configuration docs/learning.md documents for Gymnasium
GYM_CONFIGS = [
    {"id": "ProjectL-v0"},
    {"id": "ProjectL-v0", "seat": "rotate"},
    {"id": "ProjectL-v0", "seat": "rotate", "opponents": "greedy", "shaping": "score"},
    {"id": "ProjectLRevised-v0", "seat": "rotate", "shaping": "margin", "reward": "margin"},
    {"id": "ProjectLGhost-v0", "players": 3, "opponents": "greedy", "seat": "rotate"},
    {"id": "ProjectLSolo-v0", "shaping": "margin"},
    {"id": "ProjectLUniversal-v0", "seat": "rotate", "shaping": "score", "json_obs": False},
    {"id": "ProjectLUniversal-v0", "rules": "revised,ghost", "players": 4, "seat": "rotate"},
    {"id": "ProjectLUniversal-v0", "rules": "solo", "players": 1, "opponents": []},
]


@pytest.mark.parametrize("config", GYM_CONFIGS, ids=lambda c: "-".join(f"{v}" for v in c.values()))
def test_gymnasium_check_env_passes_on_every_documented_configuration(config):
    from gymnasium.utils.env_checker import check_env
    kwargs = dict(config)
    env = gym.make("arena.rl.gym:" + kwargs.pop("id"), **kwargs)
    assert env.spec is not None and env.spec.entry_point == "arena.rl.gym:ProjectLGym"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice on Dict observations
        check_env(env.unwrapped, skip_render_check=True)


def test_check_env_passes_with_a_self_play_pool_as_documented():
    from gymnasium.utils.env_checker import check_env
    pool = OpponentPool(builtins=("greedy", "random"), size=5, builtin_share=0.5, latest_share=0.3)
    pool.add(Counting(), name="self@1")
    env = ProjectLGym(opponents=pool, seat="rotate", obs="universal", shaping="score", json_obs=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)
    assert sum(pool.draws.values()) > 0


def test_registered_ids_make_the_environment_they_name():
    for env_id, defaults in IDS.items():
        env = gym.make(env_id).unwrapped
        assert isinstance(env, ProjectLGym)
        assert env.table.players == defaults.get("players", 2)
        assert env.table.universal is not None if defaults.get("obs") == "universal" else env.table.universal is None
    assert gym.make("ProjectL-v0", opponents="greedy").unwrapped.opponent_names == {}  # drawn at reset


def test_rotate_gives_the_same_episode_for_the_same_seed_and_moves_on_unseeded_resets():
    env = ProjectLGym("greedy", seat="rotate", json_obs=False)
    first = env.reset(seed=123)[0]["observation"]
    seat = env.seat
    assert np.array_equal(env.reset(seed=123)[0]["observation"], first) and env.seat == seat == 123 % 2
    env.reset()
    assert env.seat == 1 - seat
    env.reset()
    assert env.seat == seat


AEC_CONFIGS = [
    {},
    {"rules": "revised,ghost", "players": 3, "params": {"actions_per_turn": 4}},
    {"rules": "revised,ghost", "players": 3, "shaping": "margin"},
    {"rules": "solo", "players": 1, "shaping": "score", "obs": "universal"},
    {"rules": "revised,open-scores", "players": 4, "obs": "universal", "json_obs": False},
]


@pytest.mark.parametrize("kwargs", AEC_CONFIGS, ids=lambda k: "-".join(f"{v}" for v in k.values()) or "base")
@pytest.mark.parametrize("factory", ["env", "raw_env"])
def test_pettingzoo_api_and_seed_tests_pass_wrapped_and_raw(kwargs, factory):
    from pettingzoo.test import api_test, seed_test
    make = getattr(aec, factory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice that a Dict observation is unusual
        api_test(make(**kwargs), num_cycles=120)
        seed_test(lambda: make(**kwargs), num_cycles=40)


def test_wrapped_env_has_the_classic_wrappers_and_terminates_illegal_moves():
    from pettingzoo.utils import wrappers
    e = aec.env()
    assert isinstance(e, wrappers.OrderEnforcingWrapper)
    with pytest.raises(Exception):
        e.step(0)  # before reset
    e.reset(seed=2)
    agent = e.agent_selection
    bad = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    e.step(bad)
    assert all(e.terminations.values()) and e.rewards[agent] == -1
    assert aec.ProjectLEnv.metadata["is_parallelizable"] is False


def test_state_is_every_seats_observation_and_legal_actions_match_the_mask():
    e = aec.raw_env(rules="revised", players=3)
    e.reset(seed=5)
    state = e.state()
    assert state.shape == e.state_space.shape and e.state_space.contains(state)
    size = e.observation_space("seat_0")["observation"].shape[0]
    for s in range(3):
        assert np.array_equal(state[s * size:(s + 1) * size], e.observe(f"seat_{s}")["observation"])
    assert e.legal_actions() == list(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))
    g = ProjectLGym("random", json_obs=False)
    obs, _ = g.reset(seed=1)
    assert g.legal_actions() == list(np.flatnonzero(obs["action_mask"])) and len(g.legal_actions()) > 5


@pytest.mark.parametrize("bad", [2.0, np.float64(2.0), "2", True, np.array([2]), None])
def test_non_integer_actions_are_refused(bad):
    env = ProjectLGym("random", json_obs=False)
    obs, _ = env.reset(seed=0)
    assert obs["action_mask"][2] == 1  # 2 is a legal index, so only its type is refused
    with pytest.raises(NotAnIndex, match="integer index"):
        env.step(bad)
    raw = aec.raw_env(json_obs=False)
    raw.reset(seed=0)
    if bad is not None:  # None is PettingZoo's "no action" for a finished agent
        with pytest.raises(NotAnIndex):
            raw.step(bad)


def test_integer_types_are_accepted():
    for good in (np.int64(2), np.int32(2), np.array(2), 2):
        env = ProjectLGym("random", json_obs=False)
        env.reset(seed=0)
        env.step(good)


def test_steps_after_the_end_are_refused():
    env = ProjectLGym("random", json_obs=False)
    with pytest.raises(EpisodeOver, match="reset"):
        env.step(0)
    _random_episode(env, seed=2)
    with pytest.raises(EpisodeOver, match="reset"):
        env.step(0)
    assert env.legal_actions() == []
    raw = aec.raw_env(json_obs=False)
    raw.reset(seed=2)
    rng = np.random.default_rng(0)
    for agent in raw.agent_iter():
        obs, _, term, trunc, _ = raw.last()
        raw.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    with pytest.raises(EpisodeOver):
        raw.step(0)


# ---------------------------------------------------------------- 3. universal observations
UNIVERSAL_TABLES = [((), 1 + k) for k in range(1, 4)] + [
    (("revised",), 2), (("revised", "open-scores"), 3), (("ghost",), 2), (("revised", "ghost"), 4),
    (("solo",), 1), (("no-master",), 2), ((), 1 + 1)]


@pytest.mark.parametrize("variants,players", UNIVERSAL_TABLES, ids=lambda v: str(v))
def test_one_observation_shape_and_action_index_for_every_table(variants, players):
    opponents = [] if players == 1 else "random"
    env = ProjectLGym(opponents, rules=",".join(variants), players=players, obs="universal", json_obs=False,
                      seat="rotate")
    assert env.observation_space["observation"].shape == (obs_size(),)
    assert env.action_space.n == action_size()
    u = env.table.universal
    native = env.table.space
    for seed in range(2):
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        seen_low = seen_high = 0.0
        while True:
            x, mask = obs["observation"], obs["action_mask"]
            assert x.shape == (obs_size(),) and x.dtype == np.float32 and mask.shape == (action_size(),)
            assert np.all(x >= -1) and np.all(x <= 1)
            seen_low, seen_high = min(seen_low, x.min()), max(seen_high, x.max())
            legal = np.flatnonzero(mask)
            # the same actions as the native mask, each under its universal index
            assert sorted(u.native[legal]) == sorted(np.flatnonzero(env.table.chooser.mask()))
            obs, r, term, trunc, info = env.step(int(rng.choice(legal)))
            if term:
                break
        assert seen_high == 1.0
    assert native.size <= action_size()


def test_a_universal_index_names_the_same_action_under_every_rule_set():
    base = universal(Game.new(RuleSpec(), 2, 0).rules)
    ghost = universal(Game.new(RuleSpec.make(["revised", "ghost"]), 4, 0).rules)
    solo = universal(Game.new(RuleSpec.make(["solo"]), 1, 0).rules)
    b_space, g_space = action_index(base.rules), action_index(ghost.rules)
    checked = 0
    for ui in range(action_size()):
        nb, ng = int(base.native[ui]), int(ghost.native[ui])
        if nb >= 0 and ng >= 0:
            assert b_space.describe(nb) == g_space.describe(ng), ui
            checked += 1
    assert checked == b_space.size  # every base action has its place, the same under ghost
    assert (solo.native >= 0).sum() == b_space.size
    with pytest.raises(ParameterError, match="at most 4"):
        ProjectLGym("random", params={"max_unfinished": 5}, obs="universal")


def test_universal_values_divide_native_ones_by_their_scale():
    env = ProjectLGym("greedy", obs="universal", json_obs=False)
    native = ProjectLGym("greedy", json_obs=False)
    obs_u, _ = env.reset(seed=8)
    obs_n, _ = native.reset(seed=8)
    u = env.table.universal
    rng = np.random.default_rng(3)
    for _ in range(40):
        expect = np.clip(obs_n["observation"] * u.obs_scale, -1, 1)
        assert np.allclose(obs_u["observation"][u.obs_pos], expect)
        rest = np.ones(obs_size(), bool)
        rest[u.obs_pos] = False
        assert not obs_u["observation"][rest].any()  # places these rules do not have stay 0
        i = int(rng.choice(np.flatnonzero(obs_n["action_mask"])))
        obs_n, _, over, *_ = native.step(i)
        obs_u, *_ = env.step(int(u.act_pos[i]))
        if over:
            break


def test_a_universal_policy_plays_every_table_through_the_policy_bot_path():
    def last_legal(obs, mask):
        assert obs.shape == (obs_size(),) and mask.shape == (action_size(),)
        return int(np.flatnonzero(mask)[-1])

    last_legal.observation = "universal"
    me = InProcessPolicy(last_legal)
    from arena.plugins import policy
    for variants, players in ((("ghost",), 2), (("solo",), 1), (("revised",), 3)):
        game = Game.new(RuleSpec.make(variants), players, 1)
        bots = [me] + [policy("greedy")] * (players - 1)
        rng = random.Random(0)
        while not game.is_over:
            game.apply(bots[game.to_move()].choose(game, rng))


# ---------------------------------------------------------------- 4. shaped rewards
@pytest.mark.parametrize("shaping,rules,players", [
    ("score", "", 2), ("margin", "revised", 2), ("margin", "solo", 1), ("score", "revised,ghost", 3),
    ("progress", "", 2), ("progress", "solo", 1)])
def test_gym_shaped_rewards_sum_to_the_end_reward_plus_scale_times_the_final_potential(shaping, rules, players):
    scale = 0.25
    env = ProjectLGym([] if players == 1 else "greedy", rules=rules, players=players, json_obs=False,
                      shaping=shaping, shaping_scale=scale, seat="rotate")
    plain = ProjectLGym([] if players == 1 else "greedy", rules=rules, players=players, json_obs=False,
                        seat="rotate")
    moved = 0
    for seed in range(3):
        rewards, info = _random_episode(env, seed, greedy=True)
        base, _ = _random_episode(plain, seed, greedy=True)
        game = env.table.game
        scores = game.scores()
        mine = scores[env.seat]
        if shaping in ("score", "progress"):
            final = mine
        elif players == 1:
            final = info["result"]["margin"]
        else:
            final = mine - max(s for k, s in enumerate(scores) if k != env.seat)
        assert sum(rewards) == pytest.approx(base[-1] + scale * final)
        assert all(r == 0 for r in base[:-1])  # off by default: nothing before the end
        moved += sum(1 for r in rewards[:-1] if r != 0)
    assert moved > 0  # the signal came during the games


def test_progress_shaping_rewards_each_placement_by_its_share_of_the_puzzle():
    env = ProjectLGym("greedy", json_obs=False, shaping="progress", shaping_scale=1.0)
    from arena.plugins import policy
    bot = policy("greedy")
    obs, _ = env.reset(seed=1)
    rng = random.Random(0)
    table = env.table
    placements = 0
    while not table.game.is_over:
        move = bot.choose(table.game, rng)
        for index in table.chooser.indices_of(move):
            seat = table.game.players[env.seat]
            if table.game.phase == 0 and index >= table.space.PLACE and table.chooser.mode == 0:
                pos, pid = divmod(index - table.space.PLACE, table.space.placements)
                pz = seat.unfinished[pos]
                recess = table.rules.recess[pz.card]
                cells = table.rules.geometry.placement_mask[pid].bit_count()
                completes = (pz.filled.bit_count() + cells) == recess.bit_count()
                obs, reward, *_ = env.step(index)
                if not completes and not table.game.is_over and table.game.to_move() == env.seat:
                    assert reward == pytest.approx(table.rules.points[pz.card] * cells / recess.bit_count())
                    placements += 1
            else:
                obs, reward, *_ = env.step(index)
            if table.game.is_over:
                break
    assert placements > 3


def test_aec_shaped_rewards_sum_per_agent_as_documented():
    scale = 0.1
    e = aec.raw_env(rules="revised", players=3, shaping="margin", shaping_scale=scale, json_obs=False)
    plain = aec.raw_env(rules="revised", players=3, json_obs=False)
    for env in (e, plain):
        env.reset(seed=4)
        rng = np.random.default_rng(0)
        env.totals = {a: 0.0 for a in env.possible_agents}
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            env.totals[agent] += reward
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    scores = e.table.game.scores()
    for s, a in enumerate(e.possible_agents):
        margin = scores[s] - max(x for k, x in enumerate(scores) if k != s)
        assert e.totals[a] == pytest.approx(plain.totals[a] + scale * margin)
    assert any(scores)


def test_unknown_shaping_and_observation_are_refused_in_a_sentence():
    with pytest.raises(ParameterError, match="shaping must be score, progress, margin"):
        ProjectLGym(shaping="points")
    with pytest.raises(ParameterError, match="obs must be"):
        ProjectLGym(obs="wide")

