"""Benchmarks: measured figures, printed (never asserted by the test suite).

``engine``: the engine alone on one core, on realistic states. A fixed set of seeded
greedy-vs-greedy games is recorded first (untimed); then each is replayed from its seed and
at every decision the engine lists the legal actions and applies the recorded one — that
pair is timed. The bots' own thinking is not counted. Random-vs-random complete games per
second (bot included, it is trivial) are reported beside. The engine's caches are warmed
first on a different set of games, as they are in any long tournament or experiment;
``cold_decisions_per_s`` is the same replay with empty caches, for comparison.
"""

from __future__ import annotations

import random
import statistics
import time

from engine import Game, RuleSpec, compile_rules


def _record_games(spec: RuleSpec, games: int, players: int = 2, first_seed: int = 0) -> list[tuple[int, list]]:
    from bots.policy import policy
    recorded = []
    for seed in range(first_seed, first_seed + games):
        game = Game.new(spec, players, seed)
        bots = [policy("greedy") for _ in range(players)]
        rng = random.Random(seed)
        while not game.is_over:
            game.apply(bots[game.to_move()].choose(game, rng))
        recorded.append((seed, [a for _, a in game.history]))
    return recorded


def bench_engine(games: int = 40, spec: RuleSpec | None = None, random_games: int = 200) -> dict:
    """Decisions per second and median enumeration time on recorded greedy games."""
    spec = spec or RuleSpec()
    recorded = _record_games(spec, games)
    rules = compile_rules(spec, 2)
    cold = _time_replays(rules, recorded, clear=True)
    # Warm the caches the way a long-running experiment has them, on *other* games
    # (seeds 10000+), so the timed games still meet states the caches have not seen.
    for seed, actions in _record_games(spec, games, first_seed=10_000):
        game = Game.new(rules, 2, seed)
        for a in actions:
            game.legal_actions()
            game.apply(a)
    decisions, total, enum_times = _time_replays(rules, recorded)
    perf = time.perf_counter
    rng = random.Random(12345)
    t0 = perf()
    for seed in range(random_games):
        game = Game.new(rules, 2, seed)
        choice = rng.choice
        while game.phase != 4:
            game.apply(choice(game.legal_actions()))
    rtime = perf() - t0
    return {
        "rules": spec.label(),
        "games": games,
        "decisions": decisions,
        "decisions_per_s": round(decisions / total, 1),
        "enumerate_us_median": round(statistics.median(enum_times) * 1e6, 2),
        "random_games_per_s": round(random_games / rtime, 1),
        "cold_decisions_per_s": round(cold[0] / cold[1], 1),
    }


def _time_replays(rules, recorded, clear: bool = False):
    """Replay ``recorded`` games, timing legal-action listing plus apply per decision."""
    if clear:
        for cache in (rules.upgrade_cache, rules.place_cache, rules.shape_place_cache):
            cache.clear()
    enum_times = []
    decisions = 0
    total = 0.0
    perf = time.perf_counter
    for seed, actions in recorded:
        game = Game.new(rules, 2, seed)
        legal_actions = game.legal_actions
        apply = game.apply
        for a in actions:
            t0 = perf()
            legal_actions()
            t1 = perf()
            apply(a)
            t2 = perf()
            enum_times.append(t1 - t0)
            total += t2 - t0
            decisions += 1
    return decisions, total, enum_times
