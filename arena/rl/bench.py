"""``arena bench env``: environment steps per second against the engine's decisions per second.

Both figures come from one run on the same states. The engine's is timed as
``arena bench engine`` times it (:mod:`arena.bench.engine`: recorded greedy games
replayed, listing the legal actions and applying the recorded one, caches warmed on
other games first). The environment replays the very same games through
the PettingZoo AEC environment (:mod:`arena.rl.aec`): each recorded move becomes its
index sequence (untimed), then every ``env.step(index)`` and the next
``env.observe(agent)`` — the observation array and the legal-action mask — are timed.
Each engine decision and each environment step is timed on its own, with the engine
benchmark's own function. A master action or finishing touches take several steps, so the environment also makes
more steps than the engine makes decisions; both counts are printed. The figure with the
JSON observation in ``infos`` (``json_obs=True``) is printed beside. Engine and
environment passes alternate; the fastest of each counts.
"""

from __future__ import annotations

import time

from engine import RuleSpec


def _index_sequences(spec: RuleSpec, recorded) -> list[tuple[int, list[int]]]:
    from .core import Table

    table = Table(spec, 2, json_obs=False)
    out = []
    for seed, deal, actions in recorded:
        table.deal(seed)
        game = table.game
        seq: list[int] = []
        for pos, action in enumerate(actions):
            if len(game.history) > pos:
                continue  # applied without asking (a move with no choice)
            for i in table.chooser.indices_of(action):
                seq.append(i)
                table.play(i)
        assert game.is_over
        out.append((seed, seq))
    return out


def _time_env(spec: RuleSpec, sequences, json_obs: bool) -> tuple[int, float]:
    """The environment's steps, each timed as the engine's decisions are: ``env.step(index)``
    and then the observation (array and mask) of the agent to move."""
    from .aec import ProjectLEnv

    env = ProjectLEnv(rules=spec, players=2, json_obs=json_obs)
    perf = time.perf_counter
    steps = 0
    total = 0.0
    for seed, seq in sequences:
        env.reset(seed=seed)
        step, observe = env.step, env.observe
        for i in seq:
            t0 = perf()
            step(i)
            observe(env.agent_selection)
            total += perf() - t0
        steps += len(seq)
    return steps, total


def bench_env(games: int = 40, spec: RuleSpec | None = None, passes: int = 5) -> dict:
    """Engine decisions/s and environment steps/s on the same recorded greedy games.

    The engine's passes and the environment's alternate (``passes`` of each, the fastest
    of each counts), so a machine whose load changes during the run slows both alike."""
    from arena.bench.engine import _record_games, _time_replays

    from engine import compile_rules

    from .observe import observer
    from .spaces import action_index

    spec = spec or RuleSpec()
    rules = compile_rules(spec, 2)
    recorded = _record_games(spec, games)
    warmup = _record_games(spec, games, first_seed=10_000)
    sequences = _index_sequences(spec, recorded)
    warm_sequences = _index_sequences(spec, warmup)
    def fresh():
        # as in `arena bench engine`: every cache emptied, then warmed on other games, so
        # the timed games meet states the caches have not seen
        rules.clear_caches()
        observer(rules).clear_caches()
        action_index(rules).clear_caches()
        _time_replays(rules, warmup)
        _time_env(spec, warm_sequences, False)

    engine = env = json_env = (0, float("inf"))
    for _ in range(passes):
        fresh()
        decisions, t, _ = _time_replays(rules, recorded)
        engine = min(engine, (decisions, t), key=lambda r: r[1])
        fresh()
        env = min(env, _time_env(spec, sequences, False), key=lambda r: r[1])
        fresh()
        json_env = min(json_env, _time_env(spec, sequences, True), key=lambda r: r[1])
    engine_rate = engine[0] / engine[1]
    steps_per_s = env[0] / env[1]
    return {
        "rules": spec.label(),
        "games": games,
        "engine_decisions": engine[0],
        "engine_decisions_per_s": round(engine_rate, 1),
        "env_steps": env[0],
        "env_steps_per_s": round(steps_per_s, 1),
        "env_decisions_per_s": round(engine[0] / env[1], 1),
        "ratio": round(steps_per_s / engine_rate, 4),
        "env_steps_per_s_json": round(json_env[0] / json_env[1], 1),
    }
