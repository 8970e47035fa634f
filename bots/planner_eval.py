"""Measure the ``planner`` in-process: paired, seat-rotated games against ``greedy``.

Every deal (seed) is played once per seat rotation, so each bot meets the same puzzles
from every seat; results carry 95% Wilson intervals. Games run in worker processes.

    python -m bots.planner_eval --games 100 --move-ms 100                 # 2 seats, base
    python -m bots.planner_eval --games 100 --seats 4 --variants revised  # mean rank
    python -m bots.planner_eval --solo --games 60 --move-ms 100           # vs the automaton
    python -m bots.planner_eval --fast --games 200 --variants revised     # planner-fast
    python -m bots.planner_eval --nodes 100 --max-width 3 --games 200     # any node budget
    python -m bots.planner_eval --solo --move-ms 1000 --safety 0.8        # search 80% of the clock

``--nodes`` (or ``--fast``, the ``planner-fast`` setting) budgets the planner in positions
searched per decision instead of time, so its moves do not depend on the machine's load;
the thinking time printed is then a measurement, both wall time and CPU time of the
planner's process (the load average is printed with it).

A game counts as a win when the planner ranks first alone or shared (R7.2); in solo a
win is a strictly higher score than the automaton's (R12.5).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import sys
import time

from engine import Game, RuleSpec

from engine import stats

from .planner import SAFETY, PlannerPolicy, Weights
from arena.plugins import policy


def wilson(wins: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval of a proportion, as ``(low, high)``."""
    if n == 0:
        return (0.0, 1.0)
    rate = stats.wilson(wins, n)
    return (rate["low"], rate["high"])


def play_one(job) -> dict:
    """Play one game; ``job`` = (seed, seats, planner seat, variants, params, move_ms,
    opponent, weight overrides[, budget]) where ``budget`` is ``(nodes, max_width, max_depth,
    lookahead[, safety])`` (``nodes`` None: the clock; ``lookahead``, ``safety``: see
    ``PlannerPolicy``)."""
    seed, seats, me, variants, params, move_ms, opponent, weights, *rest = job
    nodes, max_width, max_depth, lookahead, *safety = rest[0] if rest else (None, 48, 12, 12)
    game = Game.new(RuleSpec.make(variants, params), seats, seed)
    planner = PlannerPolicy(move_ms=move_ms, weights=Weights(**weights), nodes=nodes, max_width=max_width,
                            max_depth=max_depth, lookahead=lookahead, safety=safety[0] if safety else SAFETY)
    bots = [planner if s == me else policy(opponent) for s in range(seats)]
    rng = random.Random(seed * 7919 + me)
    decisions, think, cpu, slowest = 0, 0.0, 0.0, 0.0
    while not game.is_over:
        s = game.to_move()
        t0, c0 = time.perf_counter(), time.process_time()
        action = bots[s].choose(game, rng)
        dt = time.perf_counter() - t0
        if s == me:
            decisions += 1
            think += dt
            cpu += time.process_time() - c0
            slowest = max(slowest, dt)
        game.apply(action)
    result = game.result()
    out = {"seed": seed, "seat": me, "score": result["scores"][me], "rank": result["ranking"][me],
           "best_other": max((x for i, x in enumerate(result["scores"]) if i != me), default=None),
           "decisions": decisions, "think": think, "cpu": cpu, "slowest": slowest,
           "actions": [type(a).__name__ for seat, a in game.history if seat == me]}
    if seats == 1:
        out.update(_solo_outcome(game, result))
    return out


def _solo_outcome(game, result) -> dict:
    auto = None
    for key in ("automaton_score", "automaton"):
        if key in result:
            auto = result[key]
            break
    if isinstance(auto, dict):
        auto = auto.get("score")
    won = result.get("won")
    if won is None and auto is not None:
        won = result["scores"][0] > auto
    return {"automaton": auto, "won": bool(won)}


def main(argv=None) -> int:
    """Run the measurement and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100, help="games in all (a multiple of the seats)")
    ap.add_argument("--seats", type=int, default=2)
    ap.add_argument("--variants", default="", help="comma-separated variants, e.g. revised")
    ap.add_argument("--solo", action="store_true", help="solo against the automaton (all difficulties)")
    ap.add_argument("--difficulty", default="", help="solo: one difficulty only")
    ap.add_argument("--move-ms", type=float, default=100)
    ap.add_argument("--nodes", type=int, default=None,
                    help="deterministic budget: positions searched per decision (instead of --move-ms)")
    ap.add_argument("--max-width", type=int, default=None, help="widest beam of the turn search (default 48)")
    ap.add_argument("--max-depth", type=int, default=None, help="actions of the turn searched ahead (default 12)")
    ap.add_argument("--lookahead", type=int, default=12,
                    help="solo: ends of the turn searched one turn further (default 12; 0: one turn only)")
    ap.add_argument("--safety", type=float, default=SAFETY,
                    help=f"share of --move-ms the planner searches for (default {SAFETY}; the rest is margin)")
    ap.add_argument("--fast", action="store_true",
                    help="the planner-fast setting (budget and evaluation constants of bots.planner.fast)")
    ap.add_argument("--opponent", default="greedy")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--weights", default="", help="evaluation overrides, e.g. action=0.6,cell=0.4")
    args = ap.parse_args(argv)
    fast_weights = {}
    if args.fast:
        from .planner.fast import FAST_DEPTH, FAST_NODES, FAST_WEIGHTS, FAST_WIDTH
        args.nodes = args.nodes or FAST_NODES
        args.max_width = args.max_width or FAST_WIDTH
        args.max_depth = args.max_depth or FAST_DEPTH
        fast_weights = dict(FAST_WEIGHTS)
    if args.nodes is not None and args.nodes < 1:
        ap.error("--nodes must be a positive number of positions")
    if not 0 < args.safety <= 1:
        ap.error("--safety must be a share of the move time, more than 0 and at most 1")
    budget = (args.nodes, args.max_width or 48, args.max_depth or 12, args.lookahead, args.safety)
    clock = (f"{'planner-fast: ' if args.fast else ''}{args.nodes} nodes/move, width {budget[1]}, depth {budget[2]}"
             if args.nodes else f"{args.move_ms:g} ms/move" + (f" (searching {args.safety:.0%} of it)" if args.safety != SAFETY else ""))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    weights = {**fast_weights, **{k: float(v) for k, v in (kv.split("=") for kv in args.weights.split(",") if kv)}}
    variants = [v for v in args.variants.split(",") if v]
    if args.solo:
        if "solo" not in variants:
            variants.append("solo")
        levels = [args.difficulty] if args.difficulty else ["standard", "challenging", "unbeatable"]
        for level in levels:
            jobs = [(args.seed + i, 1, 0, variants, {"difficulty": level}, args.move_ms, args.opponent, weights, budget)
                    for i in range(args.games)]
            look = "" if args.lookahead == 12 else f", lookahead {args.lookahead}"
            report(f"solo {level}, {clock}{look}, seeds {args.seed}-{args.seed + args.games - 1}", run(jobs, args.workers), solo=True)
        return 0
    deals = max(1, args.games // args.seats)
    jobs = [(args.seed + d, args.seats, (d + r) % args.seats, variants, {}, args.move_ms, args.opponent, weights, budget)
            for d in range(deals) for r in range(args.seats)]
    label = (f"{'+'.join(variants) or 'base'}{' ' + args.weights if args.weights else ''}, {args.seats} seats vs "
             f"{args.seats - 1} {args.opponent}, {clock}, seeds {args.seed}-{args.seed + deals - 1}")
    report(label, run(jobs, args.workers))
    return 0


def run(jobs, workers) -> list[dict]:
    """Play ``jobs`` over ``workers`` processes."""
    if workers <= 1:
        return [play_one(j) for j in jobs]
    with multiprocessing.Pool(workers) as pool:
        return pool.map(play_one, jobs, chunksize=1)


def report(label: str, results: list[dict], solo: bool = False) -> None:
    """Print win rate (95% interval), mean rank or score margin, and decisions per second."""
    n = len(results)
    if solo:
        wins = sum(r["won"] for r in results)
        margins = [r["score"] - r["automaton"] for r in results if r["automaton"] is not None]
    else:
        wins = sum(r["rank"] == 1 for r in results)
        margins = [r["score"] - r["best_other"] for r in results]
    lo, hi = wilson(wins, n)
    ranks = [r["rank"] for r in results]
    dec = sum(r["decisions"] for r in results)
    think = sum(r["think"] for r in results)
    cpu = sum(r.get("cpu", 0.0) for r in results)
    mean_margin = sum(margins) / len(margins) if margins else float("nan")
    sd = (sum((m - mean_margin) ** 2 for m in margins) / max(1, len(margins) - 1)) ** 0.5 if margins else 0.0
    half = 1.96 * sd / math.sqrt(len(margins)) if margins else 0.0
    print(f"{label}: {n} games")
    print(f"  win rate {wins / n:.1%}  (95% CI {lo:.1%}-{hi:.1%})")
    if not solo:
        mr = sum(ranks) / n
        rsd = (sum((x - mr) ** 2 for x in ranks) / max(1, n - 1)) ** 0.5
        print(f"  mean rank {mr:.2f} ± {1.96 * rsd / math.sqrt(n):.2f}")
    print(f"  mean score {sum(r['score'] for r in results) / n:.1f}, margin {mean_margin:+.1f} ± {half:.1f}")
    print(f"  decisions/s {dec / think:.1f}  (slowest decision {max(r['slowest'] for r in results) * 1000:.0f} ms)")
    print(f"  per decision: {think / dec * 1000:.2f} ms wall, {cpu / dec * 1000:.2f} ms CPU ({dec} decisions)")
    used: dict = {}
    for r in results:
        for name in r.get("actions", ()):
            used[name] = used.get(name, 0) + 1
    print("  planner's actions: " + ", ".join(f"{k} {v}" for k, v in sorted(used.items(), key=lambda kv: -kv[1])))
    print(f"  load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
