"""Train the ``learned`` bot's weights: imitation of ``planner-fast`` with DAgger.

``python -m bots.learned.train --out bots/learned/weights.npz`` (the defaults made the
shipped file; ``docs/learning.md`` has the figures):

1. **Record.** ``--games`` games of ``planner-fast`` against ``greedy`` (seats
   alternating, deals ``--seed``, ``--seed + 1``, ...) under ``--rules``. At every decision
   of ``planner-fast``'s seat with two candidates or more, the candidates' afterstate
   features (:func:`bots.learned.candidate_features`) and the one ``planner-fast`` chose
   are kept.
2. **Fit.** The weights minimise the softmax cross-entropy of the chosen candidate among
   its decision's candidates (a ranking loss: features equal for every candidate cancel),
   plus ``--l2`` times the squared weights, by L-BFGS from zero, on features divided by
   their spread.
3. **DAgger.** ``--dagger`` rounds of ``--games`` games in which the bot with the current
   weights plays ``greedy``; ``planner-fast`` labels the decisions the bot meets, and the
   weights are refitted on everything recorded so far.
4. **Evaluate.** After each fit, ``--eval-games`` games against ``greedy`` on deals from
   900,000 (never dealt in training), seats alternating: the share of points (a win 1, a
   tie 1/2) with its 95% Wilson interval, printed as one row of the learning curve.

Everything is seeded: the same arguments make the same file. One process, one thread.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time

import numpy as np

from engine import Game, RuleSpec, compile_rules
from engine.actions import FINISH

from . import LearnedPolicy, candidate_features
from .features import NAMES
from .model import Model

EVAL_SEED = 900_000


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def record(rules, games: int, seed: int, student, expert, opponent, data: list) -> dict:
    """Play ``games`` games of ``student`` (the recorded seat) against ``opponent``;
    append ``(features, chosen index)`` for every decision ``expert`` labels."""
    missed = 0
    for g in range(games):
        game = Game.new(rules, 2, seed + g)
        me = g % 2
        rng = random.Random(seed + g)
        while not game.is_over:
            seat = game.to_move()
            if seat == me and game.phase != FINISH:
                label = expert.choose(game, random.Random(rng.random()))
                if len(game.legal_actions()) > 1:
                    actions, feats = candidate_features(game, random.Random(rng.random()))
                    hit = [i for i, a in enumerate(actions) if _same(a, label)]
                    if hit and len(actions) > 1:
                        data.append((feats, hit[0]))
                    elif not hit:
                        missed += 1
                move = label if student is expert else student.choose(game, random.Random(rng.random()))
            else:
                move = (student if seat == me else opponent).choose(game, rng)
            game.apply(move)
    return {"decisions": len(data), "missed": missed}


def fit(data: list, l2: float):
    """Weights (and feature scales) minimising the ranking loss over ``data``."""
    from scipy.optimize import minimize

    allf = np.concatenate([f for f, _ in data])
    scale = allf.std(axis=0)
    scale[scale < 1e-9] = 1.0
    sizes = np.array([len(f) for f, _ in data])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    X = allf / scale
    chosen = starts + np.array([i for _, i in data])
    seg = np.repeat(np.arange(len(data)), sizes)
    n = len(data)

    def loss(w):
        s = X @ w
        mx = np.maximum.reduceat(s, starts)
        e = np.exp(s - mx[seg])
        z = np.add.reduceat(e, starts)
        nll = np.sum(np.log(z) + mx - s[chosen]) / n
        p = e / z[seg]
        grad = (X.T @ p - X[chosen].sum(axis=0)) / n
        return nll + l2 * w @ w, grad + 2 * l2 * w

    res = minimize(loss, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    s = X @ res.x
    top = np.maximum.reduceat(s, starts)
    agree = float(np.mean(s[chosen] >= top - 1e-12))
    return res.x, scale, float(res.fun), agree


def wilson(points: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a share ``points / n``."""
    if n == 0:
        return 0.0, 1.0
    p = points / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def evaluate(rules, policy, opponent, games: int, seed: int = EVAL_SEED) -> dict:
    """``policy`` against ``opponent`` in ``games`` games, seats alternating."""
    won = tied = 0
    for g in range(games):
        game = Game.new(rules, 2, seed + g)
        me = g % 2
        rng = random.Random(seed + g)
        while not game.is_over:
            seat = game.to_move()
            game.apply((policy if seat == me else opponent).choose(game, rng))
        rank = game.result()["ranking"]
        won += rank[me] < rank[1 - me]
        tied += rank[me] == rank[1 - me]
    points = won + tied / 2
    lo, hi = wilson(points, games)
    return {"games": games, "won": won, "tied": tied, "lost": games - won - tied, "share": points / games,
            "low": lo, "high": hi}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bots.learned.train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="revised", help="rule variants, comma-separated (default revised)")
    ap.add_argument("--games", type=int, default=100, help="games recorded per round (default 100)")
    ap.add_argument("--dagger", type=int, default=0, help="DAgger rounds after the first fit (default 0)")
    ap.add_argument("--seed", type=int, default=1, help="first deal of training (default 1)")
    ap.add_argument("--l2", type=float, default=1e-3, help="weight decay of the fit (default 0.001)")
    ap.add_argument("--eval-games", type=int, default=200, help="games against greedy per evaluation (default 200)")
    ap.add_argument("--out", default="weights.npz", help="weights file to write (default weights.npz)")
    args = ap.parse_args(argv)

    from bots.greedy import GreedyPolicy
    from bots.planner.fast import PlannerFastPolicy

    rules = compile_rules(RuleSpec.make([v for v in args.rules.split(",") if v], {}), 2)
    expert, greedy = PlannerFastPolicy(), GreedyPolicy()
    data: list = []
    curve = []
    cpu0 = time.process_time()
    train_cpu = 0.0

    def row(stage, model):
        ev = evaluate(rules, LearnedPolicy(model), greedy, args.eval_games) if args.eval_games else {}
        curve.append({"stage": stage, "decisions": len(data), "train_cpu_s": round(train_cpu, 1), **ev})
        print(json.dumps(curve[-1]), flush=True)

    row("zero weights", Model(np.zeros(len(NAMES))))
    model = None
    for r in range(args.dagger + 1):
        t = time.process_time()
        student = expert if r == 0 else LearnedPolicy(model)
        record(rules, args.games, args.seed + r * args.games, student, expert, greedy, data)
        w, scale, loss, agree = fit(data, args.l2)
        train_cpu += time.process_time() - t
        meta = {"command": "python -m bots.learned.train " + " ".join(sys.argv[1:] if argv is None else argv),
                "rules": args.rules, "games_per_round": args.games, "dagger": r, "seed": args.seed,
                "decisions": len(data), "loss": round(loss, 4), "agreement": round(agree, 4)}
        model = Model(w, scale, meta)
        print(f"round {r}: {len(data)} decisions, loss {loss:.3f}, agrees with planner-fast on {agree:.1%}",
              flush=True)
        row("imitation" if r == 0 else f"dagger {r}", model)
    model.meta["curve"] = curve
    model.meta["train_cpu_s"] = round(train_cpu, 1)
    model.meta["total_cpu_s"] = round(time.process_time() - cpu0, 1)
    model.save(args.out)
    print(f"wrote {args.out} ({model.meta['train_cpu_s']} CPU s training, {model.meta['total_cpu_s']} with evaluations)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
