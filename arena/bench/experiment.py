"""Benchmark of experiments: games per second per core on the in-process path, and where the time goes.

1. **One core, no runner**: the experiment's own worker function
   (:func:`arena.experiment.play.experiment_game`: an in-process game, its replay written
   and re-simulated to count puzzles by colour) is called ``games`` times in this process.
   Games per second per core are games over the CPU time. A game's time is split into the
   **bots** (each seat's thinking, as the game loop times it), the **engine** (the rest of
   the game loop: listing and applying actions, scoring) and the **replay check** (writing
   the replay, re-simulating it, counting actions), all in wall time; the machine's load
   average is printed beside, since other work stretches wall time.
2. **Through the runner**: the same games as a real experiment (the executor's forked
   workers, every row stored in SQLite) at one and two workers; and bot processes played as
   an experiment and as a tournament, each a fresh ``arena`` command (what a worker does
   before its first game counts): greedy against a copy, and greedy against a command-line
   bot that takes 0.5 s to start, under the default sandbox tier
   (:func:`processes_vs_tournament`).
3. **Scale of the file**: time to validate a sweep of 432 rule sets, and to compute one
   anytime-valid interval over 1,000 groups (what a sequential rule does after each round).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from engine import RuleSpec


def _requests(spec: RuleSpec, bots: tuple[str, str], games: int) -> list[dict]:
    from ..tournament.schedule import group_seed

    out = []
    for g in range((games + 1) // 2):
        seed = group_seed(1, g)
        for rot in range(2):
            names = bots if rot == 0 else bots[::-1]
            seats = [{"name": f"{b}-{i}" if bots[0] == bots[1] else b, "bot": b} for i, b in enumerate(names)]
            out.append({"seats": seats, "rules": spec.to_json(), "seed": seed, "players": 2, "log_dir": None})
    return out[:games]


def one_core(spec: RuleSpec, bots=("greedy", "greedy"), games: int = 60) -> dict:
    """Figures of the experiment's worker function called in this process."""
    from ..experiment.play import experiment_game

    requests = _requests(spec, bots, games)
    experiment_game(dict(requests[0]))  # warm the caches, as a long run has them
    bots_s = loop_s = 0.0
    c0, w0 = time.process_time(), time.perf_counter()
    for req in requests:
        outcome = experiment_game(dict(req))
        loop_s += outcome["duration_s"]
        bots_s += sum(s["wall_ms"] for s in outcome["seats"]) / 1000
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    engine_s = max(0.0, loop_s - bots_s)
    check_s = max(0.0, wall - loop_s)
    total = bots_s + engine_s + check_s
    import os

    return {"games": len(requests), "cpu_s": cpu, "wall_s": wall, "load": os.getloadavg()[0], "games_per_cpu_s": len(requests) / cpu,
            "ms_per_game": 1000 * wall / len(requests), "bots_share": bots_s / total, "engine_share": engine_s / total,
            "check_share": check_s / total}


def through_runner(spec: RuleSpec, bots=("greedy", "greedy"), games: int = 60, workers: int = 1) -> dict:
    """A real experiment of one rule set at ``workers`` workers: games per second."""
    from ..experiment import load_experiment, run_experiment

    with tempfile.TemporaryDirectory(prefix="arena-bench-exp-") as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text("\n".join([
            "name: bench", "seats: 2", f"bots: [{bots[0]}, {{name: {bots[1]}-b, bot: {bots[1]}}}]",
            f"games: {games}", "seed: 1", f"concurrency: {workers}", f"output: {Path(tmp) / 'out'}",
            "rule_sets:", "  - name: r", f"    variants: [{', '.join(spec.variants)}]", ""]), encoding="utf-8")
        run = run_experiment(load_experiment(path), progress=False, echo=lambda t: None)
    return {"workers": workers, "games": run["played"], "games_per_s": run["games_per_s"]}


#: a command-line bot that takes the seconds its argument says to start (a model loading,
#: say), then plays a random legal option
STARTUP_BOT = """\
import json, random, sys, time
time.sleep(float(sys.argv[1]))
rng = random.Random(3)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    if msg.get("type") == "hello":
        print(json.dumps({"type": "ready", "id": msg["id"], "name": "slow-start", "version": "1",
                          "legal_actions": True}), flush=True)
    elif "legal" in msg:
        print(json.dumps({"id": msg["id"], "action": rng.choice(msg["legal"])}), flush=True)
"""


def _first_games(output: Path, kind: str, workers: int) -> list[float]:
    """The ``workers`` longest games of a run, in seconds: each worker's first game, which
    starts its bots' processes (they are reused after it)."""
    import csv
    import json

    if kind == "tournament":
        durations = [json.loads(line)["duration_s"] for line in (output / "games.jsonl").read_text().splitlines()]
    else:
        with open(output / "games.csv", newline="", encoding="utf-8") as f:
            durations = [float(row["duration_s"]) for row in csv.DictReader(f)]
    return sorted(durations, reverse=True)[:workers]


def processes_vs_tournament(games: int = 40, workers: int = 2, startup_s: float = 0.0, sandbox: str = "none") -> dict:
    """The same games of bot processes played as a tournament and as an experiment of one
    rule set, each a fresh ``arena`` command: games per second of each and their ratio (an
    experiment reuses its bots' processes as a tournament does).

    Without ``startup_s``: greedy against a copy. With it: greedy against a command-line bot
    (``python3 bot.py``, found on the ``PATH`` as a user types it) that takes ``startup_s``
    seconds to start, under the ``sandbox`` tier, so that what a worker does before its
    first game counts. Figures: ``tournament``, ``experiment`` and ``ratio`` by each
    command's wall time (its start, the tournament's handshake, the experiment's report
    included); ``reported``: the games per second each run says it played (its games over
    its own elapsed time, the workers' start included) and their ratio; ``first_games_s``:
    each run's ``workers`` longest games (each worker's first, which starts its bots)."""
    import json
    import subprocess
    import sys

    out: dict = {"reported": {}, "first_games_s": {}}
    with tempfile.TemporaryDirectory(prefix="arena-bench-exp-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # a bot of its own user (as root) reads its script here
        if startup_s:
            (folder / "bot.py").write_text(STARTUP_BOT, encoding="utf-8")
            field = f"bots: [greedy, {{name: slow-start, cmd: python3 bot.py {startup_s}}}]"
        else:
            field = "bots: [greedy, {name: greedy-b, bot: greedy}]"
        common = ["name: bench", "seats: 2", field, f"games: {games}", "seed: 1", f"concurrency: {workers}",
                  f"sandbox: {sandbox}", "executor: {type: local, play: bots}", "replays: false"]
        for kind, extra in (("tournament", []), ("experiment", ["rule_sets:", "  - name: base"])):
            path = folder / f"{kind}.yaml"
            path.write_text("\n".join(common + [f"output: {folder / kind}"] + extra + [""]), encoding="utf-8")
            argv = [sys.executable, "-m", "arena.cli", "experiment" if kind == "experiment" else "run", str(path),
                    "--json", "--no-progress"]
            if kind == "experiment":
                argv += ["--strength-games", "0", "--no-charts"]  # the games only, as the tournament
            t0 = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, cwd=folder)
            wall = time.perf_counter() - t0
            if done.returncode != 0:
                raise RuntimeError(f"the {kind} of the benchmark failed: {done.stderr[-500:]}")
            summary = json.loads(done.stdout)
            summary = summary["summary"] if kind == "tournament" else summary
            out[kind] = games / wall
            out["reported"][kind] = summary["played"] / summary["elapsed_s"]
            out["first_games_s"][kind] = _first_games(folder / kind, kind, workers)
    out["ratio"] = out["experiment"] / out["tournament"]
    out["reported"]["ratio"] = out["reported"]["experiment"] / out["reported"]["tournament"]
    out.update(games=games, workers=workers, startup_s=startup_s, sandbox=sandbox)
    return out


def startup_tier() -> str:
    """The tier a command-line bot gets here by default (``auto``), or ``none`` where there
    is none (an ordinary user without bubblewrap)."""
    from ..process.sandbox import best_tier

    return "auto" if best_tier()[0] else "none"


def file_scale() -> dict:
    """Seconds to validate a 432-cell sweep; milliseconds for one interval over 1,000 groups."""
    import random

    from engine.stats import betting_interval

    from ..experiment import load_experiment

    with tempfile.TemporaryDirectory(prefix="arena-bench-exp-") as tmp:
        path = Path(tmp) / "sweep.yaml"
        path.write_text("\n".join([
            "name: sweep", "seats: 2", "bots: [greedy, random]", "seed: 1",
            "rule_sets:", "  - name: revised", "    variants: [revised]",
            "sweep:", "  reserve_per_shape: {from: 5, to: 40}", "  max_unfinished: {from: 1, to: 12}",
            "until: {figure: seat_wins, width: 0.05, max_games: 4000}", ""]), encoding="utf-8")
        t0 = time.perf_counter()
        cfg = load_experiment(path)
        validate_s = time.perf_counter() - t0
    rng = random.Random(1)
    values = [rng.choice((0.0, 0.5, 1.0)) for _ in range(1000)]
    t0 = time.perf_counter()
    betting_interval(values, 0.0, 1.0, 0.05)
    return {"cells": len(cfg.rule_sets), "validate_s": validate_s, "interval_ms": 1000 * (time.perf_counter() - t0)}


def bench_experiment(games: int = 60, variants: tuple[str, ...] = ("revised",), bots=("greedy", "greedy"),
                     runner: bool = True) -> dict:
    """Every figure of this benchmark as one dict."""
    spec = RuleSpec.make(list(variants))
    out = {"rules": spec.label(), "bots": list(bots), "one_core": one_core(spec, bots, games)}
    if runner:
        out["runner"] = [through_runner(spec, bots, games, w) for w in (1, 2)]
        out["processes"] = processes_vs_tournament()
        out["processes_startup"] = processes_vs_tournament(startup_s=0.5, sandbox=startup_tier())
    out["scale"] = file_scale()
    return out
