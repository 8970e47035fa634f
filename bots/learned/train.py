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
   plus ``--l2`` times the squared weights, by Newton's method from zero, on features
   divided by their spread.
3. **DAgger.** ``--dagger`` rounds of ``--games`` games in which the bot with the current
   weights plays ``greedy``; ``planner-fast`` labels the decisions the bot meets, and the
   weights are refitted on everything recorded so far.
4. **Evaluate.** After each fit, ``--eval-games`` games against ``greedy`` on deals from
   900,000 (never dealt in training), seats alternating: the share of points (a win 1, a
   tie 1/2) with its 95% Wilson interval, printed as one row of the learning curve.

Everything is seeded and the fit's arithmetic runs in a fixed order (no BLAS, whose sums
depend on the CPU and its threads): the same arguments make the same bytes, on any
machine with the same Python and numpy. The file holds what made the weights (command,
seed, learning curve), never how long it took: the CPU seconds go to a separate report,
``--report`` (default ``weights.report.json`` beside ``weights.npz``).
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

from .policy import LearnedPolicy, candidate_features
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


def _exp(x: np.ndarray) -> np.ndarray:
    """``exp`` element by element through the C library's ``exp``: numpy's own is a
    different routine on CPUs with AVX-512, which rounds some results otherwise."""
    return np.fromiter(map(math.exp, x.tolist()), dtype=np.float64, count=len(x))


def _matvec(X: np.ndarray, w) -> np.ndarray:
    """``X @ w`` as one column at a time, in feature order: the same sums in the same order
    on every machine (a BLAS splits them by CPU and thread count)."""
    out = np.zeros(X.shape[0])
    for j, wj in enumerate(w):
        if wj:
            out += X[:, j] * wj
    return out


def _solve(A: list, b: list) -> list:
    """``A x = b`` by Gaussian elimination with partial pivoting, in Python floats."""
    n = len(b)
    M = [list(row) + [b[i]] for i, row in enumerate(A)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(M[r][c]))
        M[c], M[p] = M[p], M[c]
        for r in range(c + 1, n):
            f = M[r][c] / M[c][c]
            if f:
                M[r] = [a - f * b for a, b in zip(M[r], M[c])]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (M[r][n] - sum(M[r][k] * x[k] for k in range(r + 1, n))) / M[r][r]
    return x


def fit(data: list, l2: float, max_steps: int = 100):
    """Weights (and feature scales) minimising the ranking loss over ``data``.

    Newton's method from zero with a backtracking line search (the loss is convex; the
    weight decay makes it strictly so). Every number is a pure function of ``data``: sums
    run in a fixed order (numpy's element-wise operations and its summation of one array,
    never a BLAS, whose order depends on the CPU and its thread count), ``exp`` and
    ``log`` are the C library's, and the Newton system is solved in Python floats."""
    allf = np.concatenate([f for f, _ in data])
    rows, m = allf.shape
    mean = np.array([np.sum(allf[:, j]) / rows for j in range(m)])
    scale = np.array([math.sqrt(np.sum((allf[:, j] - mean[j]) ** 2) / rows) for j in range(m)])
    scale[scale < 1e-9] = 1.0
    sizes = np.array([len(f) for f, _ in data])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    X = allf / scale
    cols = [np.ascontiguousarray(X[:, j]) for j in range(m)]
    chosen = starts + np.array([i for _, i in data])
    seg = np.repeat(np.arange(len(data)), sizes)
    n = len(data)
    chosen_sum = [float(np.sum(c[chosen])) for c in cols]

    def loss(w: list):
        s = _matvec(X, w)
        mx = np.maximum.reduceat(s, starts)
        e = _exp(s - mx[seg])
        z = np.add.reduceat(e, starts)
        logz = np.fromiter(map(math.log, z.tolist()), dtype=np.float64, count=len(z))
        nll = float(np.sum(logz + mx - s[chosen])) / n
        return nll + l2 * math.fsum(x * x for x in w), e / z[seg]

    def gradient_and_hessian(w: list, p: np.ndarray):
        grad = [(float(np.sum(cols[j] * p)) - chosen_sum[j]) / n + 2 * l2 * w[j] for j in range(m)]
        # the Hessian of a softmax: E[x x^T] - E[x] E[x]^T within each decision
        weighted = [np.add.reduceat(cols[j] * p, starts) for j in range(m)]
        hess = [[0.0] * m for _ in range(m)]
        for j in range(m):
            pj = cols[j] * p
            for k in range(j, m):
                h = (float(np.sum(pj * cols[k])) - float(np.sum(weighted[j] * weighted[k]))) / n
                hess[j][k] = hess[k][j] = h + (2 * l2 if j == k else 0.0)
        return grad, hess

    w = [0.0] * m
    value, p = loss(w)
    for _ in range(max_steps):
        grad, hess = gradient_and_hessian(w, p)
        step = _solve(hess, [-g for g in grad])
        slope = math.fsum(g * d for g, d in zip(grad, step))
        if -slope < 1e-12:  # the decrease a full step promises: nothing left to gain
            break
        t = 1.0
        while True:
            trial = [a + t * d for a, d in zip(w, step)]
            tv, tp = loss(trial)
            if tv <= value + 1e-4 * t * slope or t < 1e-10:
                break
            t /= 2
        w, value, p = trial, tv, tp
    s = _matvec(X, w)
    top = np.maximum.reduceat(s, starts)
    agree = float(np.mean(s[chosen] >= top - 1e-12))
    return np.array(w), scale, value, agree


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


def report_path(out) -> str:
    """Where the timings of a run that writes ``out`` go: ``weights.npz`` -> ``weights.report.json``."""
    text = str(out)
    return (text[:-4] if text.endswith(".npz") else text) + ".report.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bots.learned.train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="revised", help="rule variants, comma-separated (default revised)")
    ap.add_argument("--games", type=int, default=100, help="games recorded per round (default 100)")
    ap.add_argument("--dagger", type=int, default=0, help="DAgger rounds after the first fit (default 0)")
    ap.add_argument("--seed", type=int, default=1, help="first deal of training (default 1)")
    ap.add_argument("--l2", type=float, default=1e-3, help="weight decay of the fit (default 0.001)")
    ap.add_argument("--eval-games", type=int, default=200, help="games against greedy per evaluation (default 200)")
    ap.add_argument("--out", default="weights.npz", help="weights file to write (default weights.npz)")
    ap.add_argument("--report", default=None,
                    help="where the run's timings go, as JSON (default: OUT with .report.json for .npz)")
    args = ap.parse_args(argv)
    from pathlib import Path

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # before the work, not after it

    from bots.greedy import GreedyPolicy
    from bots.planner.fast_policy import PlannerFastPolicy

    rules = compile_rules(RuleSpec.make([v for v in args.rules.split(",") if v], {}), 2)
    expert, greedy = PlannerFastPolicy(), GreedyPolicy()
    data: list = []
    curve = []
    timings = []
    cpu0 = time.process_time()
    train_cpu = 0.0

    def row(stage, model):
        t = time.process_time()
        ev = evaluate(rules, LearnedPolicy(model), greedy, args.eval_games) if args.eval_games else {}
        curve.append({"stage": stage, "decisions": len(data), **ev})
        timings.append({"stage": stage, "train_cpu_s": round(train_cpu, 1),
                        "eval_cpu_s": round(time.process_time() - t, 1)})
        print(json.dumps({**curve[-1], "train_cpu_s": timings[-1]["train_cpu_s"]}), flush=True)

    words = sys.argv[1:] if argv is None else argv
    row("zero weights", Model(np.zeros(len(NAMES))))
    model = None
    for r in range(args.dagger + 1):
        t = time.process_time()
        student = expert if r == 0 else LearnedPolicy(model)
        record(rules, args.games, args.seed + r * args.games, student, expert, greedy, data)
        w, scale, loss, agree = fit(data, args.l2)
        train_cpu += time.process_time() - t
        # what made the weights, and nothing else: the file is a function of the command
        meta = {"command": "python -m bots.learned.train " + " ".join(words),
                "rules": args.rules, "games_per_round": args.games, "dagger": r, "seed": args.seed,
                "decisions": len(data), "loss": round(loss, 4), "agreement": round(agree, 4)}
        model = Model(w, scale, meta)
        print(f"round {r}: {len(data)} decisions, loss {loss:.3f}, agrees with planner-fast on {agree:.1%}",
              flush=True)
        row("imitation" if r == 0 else f"dagger {r}", model)
    model.meta["curve"] = curve
    model.save(args.out)
    report = args.report or report_path(args.out)
    with open(report, "w", encoding="utf-8") as f:
        json.dump({"command": model.meta["command"], "weights": str(args.out), "curve": timings,
                   "train_cpu_s": round(train_cpu, 1), "total_cpu_s": round(time.process_time() - cpu0, 1)},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {args.out} and {report} ({round(train_cpu, 1)} CPU s training, "
          f"{round(time.process_time() - cpu0, 1)} with evaluations)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
