"""How often a stopped sequential run's interval misses the truth: figures for docs/experiments.md.

``python -m arena.bench.stopping_coverage [--runs N] [--seed S]`` simulates figures of
seat-rotated groups -- rare differences, skewed and degenerate figures, and ordinary ones --
and plays the stopping rules of ``until:`` on them, looking after every round of 8 groups up
to a cap of 1,000 groups:

- ``width``: stop once the interval is at most W wide; a **miss** is an interval, at the
  moment the run stopped (narrow or at the cap), that does not hold the true mean;
- ``against``: on figures whose true mean is 0, stop once the interval excludes 0; every
  such stop is a wrong "differs".

Two intervals are compared: the betting confidence sequence on the figure's bounds that
``until:`` and ``target:`` use (:func:`engine.stats.betting_interval`), and the asymptotic
normal-mixture sequence (Waudby-Smith et al. 2021) from 16 groups on, which is zero wide
while every group so far gave the same value. It also prints how often the betting
sequence *ever* excluded the truth over all looks, the bound on every stopping rule's misses.
The betting side is the product's own function, called at the looks a run needs (the
interval only shrinks, so the first narrow look is found by bisection).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from engine.stats import betting_interval, betting_log_capital

ALPHA = 0.05
ROUND, CAP, MIN_CLT = 8, 1000, 16
ROUNDS, DIFF = (1.0, 101.0), (-100.0, 100.0)


def _rare(p):
    return lambda rng, n: (rng.random(n) < p).astype(float)


def _both(rng, n):
    u = rng.random(n)
    return np.where(u < 0.05, 1.0, np.where(u < 0.10, -1.0, 0.0))


#: name -> (draw(rng, n), true mean, bounds, width W, what it stands for)
KINDS = {
    "rare 2%": (_rare(0.02), 0.02, DIFF, 2.0, "rounds difference: +1 in 2% of groups"),
    "rare 5%": (_rare(0.05), 0.05, DIFF, 2.0, "rounds difference: +1 in 5% of groups"),
    "rare 10%": (_rare(0.10), 0.10, DIFF, 2.0, "rounds difference: +1 in 10% of groups"),
    "rare +-1": (_both, 0.0, DIFF, 2.0, "rounds difference: +1 or -1, 5% each"),
    "skewed rounds": (lambda rng, n: np.where(rng.random(n) < 0.03, 101.0, 12.0), 12 + 0.03 * 89, ROUNDS, 4.0,
                      "rounds: 12, or 101 (adjudicated) in 3% of groups"),
    "skewed score": (lambda rng, n: np.clip(rng.lognormal(3.0, 0.6, n), 0, 120), None, (-20.0, 120.0), 6.0,
                     "score: lognormal, long right tail, on [-20, 120]"),
    "degenerate": (lambda rng, n: np.zeros(n), 0.0, DIFF, 2.0, "difference: always 0"),
    "at a bound": (lambda rng, n: np.full(n, 101.0), 101.0, ROUNDS, 4.0, "rounds: always 101"),
    "win rate": (lambda rng, n: (rng.random((n, 2)) < 0.3).mean(axis=1), 0.3, (0.0, 1.0), 0.1,
                 "seat 0's wins: 30%, groups of 2 games"),
    "paired null": (lambda rng, n: rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], n, p=[0.15, 0.2, 0.3, 0.2, 0.15]), 0.0,
                    (-1.0, 1.0), 0.2, "wins difference: symmetric, no effect"),
    "normal rounds": (lambda rng, n: np.clip(rng.normal(12, 2, n), 1, 101), 12.0, ROUNDS, 2.0,
                      "rounds: normal(12, 2)"),
}


def mixture_radius(sd, n, alpha=ALPHA, n_opt=CAP // 2):
    """The asymptotic normal-mixture boundary (Waudby-Smith et al. 2021), for comparison."""
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / n_opt
    return sd * np.sqrt(2 * (n * rho2 + 1) / (n * n * rho2) * np.log(np.sqrt(n * rho2 + 1) / alpha))


def _mixture(x, truth, width):
    """(missed at the stop of the width rule, called a difference from 0) of the mixture sequence."""
    looks = np.arange(ROUND, CAP + 1, ROUND)
    looks = looks[looks >= MIN_CLT]
    cs, cs2 = np.cumsum(x), np.cumsum(x * x)
    n = looks.astype(float)
    mean = cs[looks - 1] / n
    sd = np.sqrt(np.maximum(cs2[looks - 1] - n * mean ** 2, 0) / (n - 1))
    r = mixture_radius(sd, n)
    narrow = np.flatnonzero(2 * r <= width)
    k = narrow[0] if narrow.size else len(looks) - 1
    missed = abs(mean[k] - truth) > r[k]
    differs = bool(np.any(np.abs(mean) > r)) if truth == 0 else None
    return missed, differs


def _betting(x, truth, bound, width):
    """(missed at the stop, groups at the stop, called a difference from 0, ever excluded the truth)."""
    looks = list(range(ROUND, CAP + 1, ROUND))
    ci_at = {}

    def ci(k):
        if k not in ci_at:
            ci_at[k] = betting_interval(list(x[:looks[k]]), bound[0], bound[1], ALPHA)
        return ci_at[k]

    lo, hi = 0, len(looks) - 1                     # first look at most `width` wide (the interval only shrinks)
    if ci(hi)["high"] - ci(hi)["low"] <= width:
        while lo < hi:
            mid = (lo + hi) // 2
            if ci(mid)["high"] - ci(mid)["low"] <= width:
                hi = mid
            else:
                lo = mid + 1
    stop = ci(hi)
    missed = not stop["low"] <= truth <= stop["high"]
    span = bound[1] - bound[0]
    wealth = betting_log_capital((x - bound[0]) / span, np.array([(truth - bound[0]) / span]), ALPHA)[0]
    ever = bool(wealth.max() >= math.log(1 / ALPHA))
    differs = None
    if truth == 0:                                  # a wrong "differs": 0 left the interval at some look
        last = ci(len(looks) - 1)
        differs = not last["low"] <= 0 <= last["high"] or ever
    return missed, looks[hi], differs, ever


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"{args.runs} runs a figure, looks every {ROUND} groups up to {CAP}; nominal miss rate {ALPHA:.0%}")
    print("| figure | stands for | W | asymptotic: missed at stop | betting: missed at stop | betting: ever "
          "excluded | betting: median groups at stop | wrong 'differs' (asymptotic / betting) |")
    print("|---|---|---|---|---|---|---|---|")
    start = time.perf_counter()
    for name, (draw, truth, bound, width, what) in KINDS.items():
        if truth is None:
            truth = float(draw(np.random.default_rng(0), 4_000_000).mean())
        old, new, ever, groups, d_old, d_new = [], [], [], [], [], []
        for _ in range(args.runs):
            x = draw(rng, CAP)
            m_old, diff_old = _mixture(x, truth, width)
            m_new, at, diff_new, e = _betting(x, truth, bound, width)
            old.append(m_old)
            new.append(m_new)
            ever.append(e)
            groups.append(at)
            if truth == 0:
                d_old.append(diff_old)
                d_new.append(diff_new)
        differs = f"{np.mean(d_old):.1%} / {np.mean(d_new):.1%}" if d_old else "-"
        print(f"| {name} | {what} | {width:g} | {np.mean(old):.1%} | {np.mean(new):.1%} | {np.mean(ever):.1%} | "
              f"{int(np.median(groups))} | {differs} |", flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
