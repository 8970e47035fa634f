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
environment are timed game by game, interleaved, so that both meet the same machine
speed; the pass with the median ratio is reported, with the range.
"""

from __future__ import annotations

import time

from engine import RuleSpec


def _index_sequences(spec: RuleSpec, recorded, players: int = 2) -> list[tuple[int, list[int]]]:
    from .core import Table

    table = Table(spec, players, json_obs=False)
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


def _time_env(spec: RuleSpec, sequences, json_obs: bool, players: int = 2) -> tuple[int, float]:
    """The environment's steps, each timed as the engine's decisions are: ``env.step(index)``
    and then the observation (array and mask) of the agent to move."""
    from .aec import ProjectLEnv

    env = ProjectLEnv(rules=spec, players=players, json_obs=json_obs)
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

    A shared machine's speed drifts over seconds, so the two are timed game by game,
    interleaved (engine first on even games, environment first on odd ones): the engine
    on a ruleset of its own, the environment on the shared one, each with its caches
    emptied and warmed on other games at the start of a pass. Each pass gives a ratio of
    the environment's rate to the engine's; the pass with the median ratio is reported,
    with the lowest and highest ratio beside it."""
    from arena.bench.engine import _record_games, _time_replays, bench_seats

    from engine import compile_rules

    from .observe import observer
    from .spaces import action_index

    spec = spec or RuleSpec()
    players = bench_seats(spec)  # two, or one for solo
    env_rules = compile_rules(spec, players)  # the ruleset every environment of these rules shares
    engine_rules = compile_rules.__wrapped__(spec, players)  # a second one, with caches of its own
    recorded = _record_games(spec, games, players)
    warmup = _record_games(spec, games, players, first_seed=10_000)
    sequences = _index_sequences(spec, recorded, players)
    warm_sequences = _index_sequences(spec, warmup, players)

    def fresh():
        # as in `arena bench engine`: every cache emptied, then warmed on other games, so
        # the timed games meet states the caches have not seen
        for rules in (engine_rules, env_rules):
            rules.clear_caches()
        observer(env_rules).clear_caches()
        action_index(env_rules).clear_caches()
        _time_replays(engine_rules, warmup)
        _time_env(spec, warm_sequences, False, players)

    runs = []
    for _ in range(passes):
        fresh()
        decisions = steps = 0
        t_engine = t_env = 0.0
        for k, (game, seq) in enumerate(zip(recorded, sequences)):
            for part in ((0, 1) if k % 2 == 0 else (1, 0)):
                if part == 0:
                    d, t, _ = _time_replays(engine_rules, [game])
                    decisions += d
                    t_engine += t
                else:
                    n, t = _time_env(spec, [seq], False, players)
                    steps += n
                    t_env += t
        json_steps, t_json = _time_env(spec, sequences, True, players)
        ratio = (steps / t_env) / (decisions / t_engine)
        runs.append((ratio, decisions, t_engine, steps, t_env, json_steps, t_json))
    runs.sort()
    ratio, decisions, t_engine, steps, t_env, json_steps, t_json = runs[len(runs) // 2]
    return {
        "rules": spec.label(),
        "players": players,
        "games": games,
        "passes": passes,
        "engine_decisions": decisions,
        "engine_decisions_per_s": round(decisions / t_engine, 1),
        "env_steps": steps,
        "env_steps_per_s": round(steps / t_env, 1),
        "env_decisions_per_s": round(decisions / t_env, 1),
        "ratio": round(ratio, 4),
        "ratio_min": round(runs[0][0], 4),
        "ratio_max": round(runs[-1][0], 4),
        "env_steps_per_s_json": round(json_steps / t_json, 1),
    }
