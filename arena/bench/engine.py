"""Benchmarks: measured figures, printed (never asserted by the test suite).

``engine``: the engine alone on one core, on realistic states. A fixed set of seeded
greedy-vs-greedy games is recorded first (untimed); then each is replayed from its seed and
at every decision the engine lists the legal actions and applies the recorded one — that
pair is timed. The bots' own thinking is not counted. Random-vs-random complete games per
second (bot included, it is trivial) are reported beside. Before each of three timed
passes the engine's caches are cleared and warmed on a different set of games, as they are
in any long tournament or experiment; the fastest pass is reported.
``cold_decisions_per_s`` is one pass with empty caches, for comparison.

With ``base_deals`` a variant's games are dealt the base game's cards in the base game's
order for each seed (an explicit deal), so a rule set that leaves those games unchanged
plays the very same states as the base rules: the difference in decisions per second is
then the cost of the variant's machinery alone, not of the different games its cards and
pieces make.
"""

from __future__ import annotations

import random
import statistics
import time

from engine import Game, RuleSpec, compile_rules
from engine.errors import ParameterError


def base_deal(seed: int, players: int = 2) -> dict:
    """The base game's deck orders for ``seed``, as an explicit deal."""
    game = Game.new(RuleSpec(), players, seed)
    ids = [p.id for p in game.rules.puzzles]
    return {color: [ids[c] for c in game.rows[i] + game.decks[i] if c >= 0]
            for i, color in enumerate(("white", "black"))}


def _record_games(spec: RuleSpec, games: int, players: int = 2, first_seed: int = 0,
                  base_deals: bool = False) -> list[tuple[int, dict | None, list]]:
    from arena.plugins import policy
    recorded = []
    for seed in range(first_seed, first_seed + games):
        deal = base_deal(seed, players) if base_deals else None
        game = Game.new(spec, players, seed, deal)
        bots = [policy("greedy") for _ in range(players)]
        rng = random.Random(seed)
        while not game.is_over:
            game.apply(bots[game.to_move()].choose(game, rng))
        recorded.append((seed, deal, [a for _, a in game.history]))
    return recorded


def bench_seats(spec: RuleSpec) -> int:
    """The seats the benchmarks play: two where the rules allow them, else the fewest they
    take (solo: one)."""
    try:
        compile_rules(spec, 2)
        return 2
    except ParameterError as first:
        for players in (1, 3, 4):
            try:
                compile_rules(spec, players)
                return players
            except ParameterError:
                continue
        raise first


def bench_engine(games: int = 40, spec: RuleSpec | None = None, random_games: int = 200,
                 base_deals: bool = False) -> dict:
    """Decisions per second and median enumeration time on recorded greedy games."""
    spec = spec or RuleSpec()
    players = bench_seats(spec)
    recorded = _record_games(spec, games, players, base_deals=base_deals)
    warmup = _record_games(spec, games, players, first_seed=10_000, base_deals=base_deals)
    rules = compile_rules(spec, players)
    cold = _time_replays(rules, recorded, clear=True)
    # Steady state, as in any long tournament or experiment: the caches are cleared and
    # warmed on *other* games (seeds 10000+) before each timed pass, so the timed games
    # still meet states the caches have not seen. Best of three passes.
    passes = []
    for _ in range(3):
        _time_replays(rules, warmup, clear=True)
        passes.append(_time_replays(rules, recorded))
    decisions, total, enum_times = min(passes, key=lambda r: r[1])
    perf = time.perf_counter
    rng = random.Random(12345)
    t0 = perf()
    for seed in range(random_games):
        game = Game.new(rules, players, seed)
        choice = rng.choice
        while game.phase != 4:
            game.apply(choice(game.legal_actions()))
    rtime = perf() - t0
    return {
        "rules": spec.label(),
        "players": players,
        "base_deals": base_deals,
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
        rules.clear_caches()
    enum_times = []
    decisions = 0
    total = 0.0
    perf = time.perf_counter
    for seed, deal, actions in recorded:
        game = Game.new(rules, rules.players, seed, deal)
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
