"""``arena bench env``: environment steps per second, against the engine's decisions per
second on the same games, with actions sampled from the mask as a user's loop samples them.

The games are random: every index is drawn uniformly from the legal-action mask with the
action space's own ``sample(mask)``, the loop of ``docs/learning.md``::

    env.reset(seed=s); env.action_space(agent).seed(s)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        env.step(None if terminated or truncated else env.action_space(agent).sample(obs["action_mask"]))

What is timed is that whole loop (reset, ``last``, the sample, ``step``) on the PettingZoo
``raw_env`` with ``json_obs=False``: what a user measures. The engine's rate is timed as
``arena bench engine`` times it (:mod:`arena.bench.engine`: list the legal actions, apply
the move) on the very games the environment played (their engine moves recorded).

Beside it, on the same deals, each timed as its own loop: the wrapped ``env()``, the
JSON observation in ``infos`` (``json_obs=True``), and the Gymnasium environment against
``random`` with the native and with the universal observation (its steps are the
learner's; the opponent's moves are inside them, so its rate is per learner step).
Every cache is warmed on other games first, as in a long training run. All are timed
game by game, interleaved (each goes first in turn), so that all meet the same machine
speed; of ``passes`` passes the one with the median ratio of ``raw_env`` to the engine
is reported, every figure from that pass, with the range of that ratio.
:func:`bench_vector` (``python -m arena.rl.bench vector``) compares vector environments.
"""

from __future__ import annotations

import time

from engine import RuleSpec


def _pz_loop(env, seed: int) -> int:
    """One game of the documented PettingZoo loop; the steps that took an action."""
    env.reset(seed=seed)
    steps = 0
    seeded = set()
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        space = env.action_space(agent)
        if id(space) not in seeded:
            space.seed(seed)
            seeded.add(id(space))
        env.step(space.sample(obs["action_mask"]))
        steps += 1
    return steps


def _gym_loop(env, seed: int) -> int:
    """One episode of the documented Gymnasium loop; the learner's steps."""
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    steps = 0
    while True:
        obs, _, term, trunc, _ = env.step(env.action_space.sample(obs["action_mask"]))
        steps += 1
        if term or trunc:
            return steps


def _timed(fn, env, seeds) -> tuple[int, float]:
    perf = time.perf_counter
    steps = 0
    t0 = perf()
    for s in seeds:
        steps += fn(env, s)
    return steps, perf() - t0


def bench_env(games: int = 40, spec: RuleSpec | None = None, passes: int = 5) -> dict:
    """Engine decisions/s and environment steps/s on the same random games (see the
    module docstring)."""
    from arena.bench.engine import _time_replays, bench_seats

    from engine import compile_rules

    from .aec import env as wrapped_env
    from .aec import raw_env
    from .gym import ProjectLGym

    spec = spec or RuleSpec()
    players = bench_seats(spec)
    engine_rules = compile_rules.__wrapped__(spec, players)  # a ruleset with caches of its own
    seeds = list(range(games))
    warm = list(range(10_000, 10_000 + games))
    raw = raw_env(rules=spec, players=players, json_obs=False)

    def record(seed_list):
        out = []
        for s in seed_list:
            _pz_loop(raw, s)
            out.append((s, None, [a for _, a in raw.table.game.history]))
        return out

    recorded = record(seeds)
    warmup = record(warm)

    variants = [("engine", None, None), ("raw", _pz_loop, raw),
                ("wrapped", _pz_loop, wrapped_env(rules=spec, players=players, json_obs=False)),
                ("json", _pz_loop, raw_env(rules=spec, players=players, json_obs=True))]
    opponents = "random" if players > 1 else []
    variants += [("gym", _gym_loop, ProjectLGym(opponents, rules=spec, players=players, json_obs=False)),
                 ("universal", _gym_loop, ProjectLGym(opponents, rules=spec, players=players, json_obs=False,
                                                      obs="universal"))]
    # warm every cache on other games first, as a long training run has them
    _time_replays(engine_rules, warmup)
    for _, fn, env in variants[1:]:
        _timed(fn, env, warm)
    runs = []
    for _ in range(passes):
        count = dict.fromkeys([v[0] for v in variants], 0)
        spent = dict.fromkeys(count, 0.0)
        for k, (game, seed) in enumerate(zip(recorded, seeds)):
            order = variants[k % len(variants):] + variants[:k % len(variants)]  # each goes first in turn
            for name, fn, env in order:
                if fn is None:
                    n, t, _ = _time_replays(engine_rules, [game])
                else:
                    n, t = _timed(fn, env, [seed])
                count[name] += n
                spent[name] += t
        rates = {name: count[name] / spent[name] for name in count}
        runs.append((rates["raw"] / rates["engine"], rates, count))
    runs.sort(key=lambda r: r[0])
    ratio, rates, count = runs[len(runs) // 2]
    engine_rate = rates["engine"]
    others = {"env_steps_per_s_wrapped": rates["wrapped"], "env_steps_per_s_json": rates["json"],
              "gym_steps_per_s": rates["gym"], "gym_steps_per_s_universal": rates["universal"]}
    return {
        "rules": spec.label(),
        "players": players,
        "games": games,
        "passes": passes,
        "actions": "sampled from the mask (action_space.sample(mask))",
        "engine_decisions": count["engine"],
        "engine_decisions_per_s": round(engine_rate, 1),
        "env_steps": count["raw"],
        "env_steps_per_s": round(rates["raw"], 1),
        "env_decisions_per_s": round(count["engine"] / count["raw"] * rates["raw"], 1),
        "ratio": round(ratio, 4),
        "ratio_min": round(runs[0][0], 4),
        "ratio_max": round(runs[-1][0], 4),
        **{k: round(v, 1) for k, v in others.items()},
        **{k.replace("steps_per_s", "ratio"): round(v / engine_rate, 4) for k, v in others.items()},
    }


def _cpu(pids) -> float:
    """CPU seconds used so far by this process and the processes ``pids`` (Linux /proc)."""
    import os
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        except OSError:
            pass
    return total


def bench_vector(num_envs: int = 8, steps: int = 2000, rules: str = "revised", opponents: str = "random",
                 kinds=("arena", "gymnasium-sync", "gymnasium-async", "sb3-subproc")) -> dict:
    """Steps per second (all environments' steps) of vector environments of ``num_envs``
    :class:`~arena.rl.gym.ProjectLGym` against ``opponents``, ``steps`` vector steps each,
    actions drawn uniformly from each mask: :class:`arena.rl.vector.ProjectLVectorEnv`,
    Gymnasium's ``SyncVectorEnv`` and ``AsyncVectorEnv``, and Stable-Baselines3's
    ``SubprocVecEnv`` when it can be imported (the ``learn`` extra). Each is warmed up
    for a tenth of ``steps`` first, untimed. Two figures each: steps per second of wall
    time, and steps per CPU second of all its processes (workers included) — on a
    machine shared with other jobs, processes of their own win wall time from the
    others, so the second is the cost."""
    import numpy as np

    from .gym import ProjectLGym
    from .vector import ProjectLVectorEnv

    def make(i):
        return lambda: ProjectLGym(opponents, rules=rules, json_obs=False)

    def sample(masks, rng):
        return np.array([rng.choice(m.view(np.bool_).nonzero()[0]) for m in masks])

    out = {"num_envs": num_envs, "steps": steps, "rules": rules, "opponents": opponents}
    for kind in kinds:
        rng = np.random.default_rng(0)
        if kind == "sb3-subproc":
            try:
                from stable_baselines3.common.vec_env import SubprocVecEnv
            except ImportError:
                out[kind] = None
                continue
            venv = SubprocVecEnv([make(i) for i in range(num_envs)])
            venv.seed(0)
            obs = venv.reset()

            def step(actions, venv=venv):
                return venv.step(actions)[0]
        else:
            import gymnasium as gym
            if kind == "arena":
                venv = ProjectLVectorEnv(num_envs, opponents=opponents, rules=rules)
            elif kind == "gymnasium-sync":
                venv = gym.vector.SyncVectorEnv([make(i) for i in range(num_envs)],
                                                autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
            else:
                venv = gym.vector.AsyncVectorEnv([make(i) for i in range(num_envs)],
                                                 autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
            obs, _ = venv.reset(seed=0)

            def step(actions, venv=venv):
                return venv.step(actions)[0]
        pids = [p.pid for p in getattr(venv, "processes", [])]
        for _ in range(steps // 10):  # warm-up, untimed
            obs = step(sample(obs["action_mask"], rng))
        c0, t0 = _cpu(pids), time.perf_counter()
        for _ in range(steps):  # the masks from the observations: no extra round trip
            obs = step(sample(obs["action_mask"], rng))
        wall, cpu = time.perf_counter() - t0, _cpu(pids) - c0
        out[kind] = round(steps * num_envs / wall, 1)
        out[kind + " per CPU s"] = round(steps * num_envs / cpu, 1)
        venv.close()
    return out


if __name__ == "__main__":  # python -m arena.rl.bench vector [num_envs] [steps]
    import json
    import sys

    args = sys.argv[1:]
    if not args or args[0] != "vector":
        print("usage: python -m arena.rl.bench vector [num_envs] [steps]", file=sys.stderr)
        raise SystemExit(2)
    print(json.dumps(bench_vector(*(int(a) for a in args[1:3]))))
