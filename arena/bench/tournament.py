"""``arena bench tournament``: games per second of the runner at concurrency 1 and 2.

A fixed round robin of built-in bots (three copies of ``greedy``; two seats, base rules,
seed 1, no replays) is played in-process in the workers (``--play bots``: through the
referee, with bot processes), with one worker and with two, each run into a fresh results
database. The runner's *overhead* is everything that
is not the engine and the bots -- starting the pool, shipping requests and results between
processes, storing every game in its own SQLite transaction, the progress bookkeeping --
measured two ways:

- ``overhead_N`` (wall): ``1 - sum(game function wall times) / (wall time x workers)``,
  each game timed in its worker around the whole game function call. It misses the time
  the coordinator takes a core from a worker in the middle of a game (that lands in the
  game's wall time), and anything else competing for the cores inflates it;
- ``cpu_overhead_N``: the CPU time of the coordinator and of the workers outside the game
  function, as a share of all CPU time used by the run; less sensitive to other load.

With ``dask``, the same games are also played on a Dask cluster of two worker processes on
this machine (``LocalCluster``, one thread each: the same two cores), run for run beside
the local executor at concurrency 2, and ``dask_vs_local_2`` is the share of the local
executor's games/s the cluster keeps (fastest against fastest), and
``dask_vs_local_2_paired`` the median, over the runs, of each Dask run's games/s against the
local run played just before it: the cost of the scheduler, of shipping each game and its
record (replay and logs included) and of the worker plugin. The machine's speed drifts
from run to run; CPU time drifts less, so ``cpu_ms_per_game_2`` and ``dask_cpu_ms_per_game_2``
give what a game costs in CPU on either path (the median over the runs), counted over every
process of the run: the coordinator (with a LocalCluster, the scheduler in it), the workers
and their bot processes.

A third view needs no timing inside the run: the same games played by bare processes
(no runner at all) give the machine's ceiling, and the runner's games/s are set against it.
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from engine import RuleSpec

from ..tournament.config import BotEntry, TournamentConfig
from ..tournament.runner import run_tournament
from ..tournament.store import Store


def bench_config(output: Path, concurrency: int, rounds: int, play: str = "inprocess") -> TournamentConfig:
    """The benchmark's fixed round robin."""
    bots = (BotEntry("greedy", "greedy"), BotEntry("greedy-b", "greedy"), BotEntry("greedy-c", "greedy"))
    return TournamentConfig(
        name="bench", path="<bench>", rules=RuleSpec.make(), seats=2, bots=bots, format="round-robin",
        format_options={}, rounds=rounds, games=None, seed=1, time_control={}, fault_policy="forfeit",
        sandbox="none", concurrency=concurrency, executor="local", address=None, play=play,
        output=output, anchor="greedy", replays=False, pause_idle=False)


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _tree_cpu(pids: list[int]) -> float:
    """CPU seconds of the processes ``pids`` and of their children they have waited for."""
    if not pids:
        return 0.0
    import psutil  # with distributed, which needs it

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _one(concurrency: int, rounds: int, play: str, address: str | None = None,
         workers: list[int] | None = None) -> dict:
    """One run of the benchmark into a fresh folder: on local workers, or on the Dask
    cluster at ``address`` whose worker processes are ``workers`` (pids on this machine)."""
    from dataclasses import replace

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        cfg = bench_config(Path(tmp) / "out", concurrency, rounds, play)
        if address is not None:
            cfg = replace(cfg, executor="dask", address=address)
        cpu0, far0 = _cpu(), _tree_cpu(workers or [])
        summary = run_tournament(cfg, progress=False, echo=lambda _t: None)
        # the workers were waited for (local ones ended, a Dask worker closed its bots):
        # everything the run used is counted
        cpu = _cpu() - cpu0
        total_cpu = cpu + _tree_cpu(workers or []) - far0
        store = Store.open(cfg.output, create=False)
        stored = store.count()
        store.close()
    if stored != summary["played"]:
        raise RuntimeError(f"the benchmark stored {stored} games of the {summary['played']} it played")
    wall = summary["elapsed_s"]
    busy = summary["game_wall_s"]
    return {"games": summary["played"], "wall_s": wall, "games_per_s": summary["played"] / wall,
            "cpu_ms_per_game": 1000 * total_cpu / max(1, summary["played"]),
            "overhead": max(0.0, 1.0 - busy / (wall * concurrency)),
            # with bot processes the bots' CPU time is not the game function's: no CPU figure
            "cpu_overhead": max(0.0, 1.0 - summary["game_cpu_s"] / cpu)
            if cpu > 0 and play == "inprocess" and address is None else None}


def _bare_worker(play: str, requests: list, counter, start, out) -> None:
    """A bare process: wait for the start, then play the next unplayed game until none is left
    (with bot processes: from its own pool of live processes, as a runner's worker does)."""
    from ..process.pool import ProcessPool
    from ..execution.work import execute

    pool = ProcessPool() if play == "bots" else None
    start.wait()
    t0 = time.perf_counter()
    played = 0
    try:
        while True:
            with counter.get_lock():
                i = counter.value
                counter.value += 1
            if i >= len(requests):
                break
            execute({"request": requests[i], "play": play}, pool)
            played += 1
    finally:
        if pool is not None:
            pool.close()
    out.send((time.perf_counter() - t0, played))
    out.close()


def _bare(concurrency: int, rounds: int, play: str) -> dict:
    """The same games without the runner: ``concurrency`` forked processes, already started,
    take the next game from a shared counter and play it, nothing else (no pipes per game,
    no store, no bookkeeping). The time from the start signal to the last one done is the
    machine's own figure for this concurrency, the ceiling the runner is compared with."""
    from ..tournament.runner import build_request
    from ..tournament.schedule import schedule

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:  # bot logs, with bot processes
        cfg = bench_config(Path(tmp), concurrency, rounds, play)
        return _bare_run(concurrency, [build_request(cfg, task, Path(tmp)) for task in schedule(cfg)], play)


def _bare_run(concurrency: int, requests: list, play: str) -> dict:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    counter, start = ctx.Value("i", 0), ctx.Event()
    pipes, procs = [], []
    for _ in range(concurrency):
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_bare_worker, args=(play, requests, counter, start, send), daemon=True)
        proc.start()
        send.close()
        pipes.append(recv)
        procs.append(proc)
    start.set()
    done = [pipe.recv() for pipe in pipes]
    for proc in procs:
        proc.join()
    wall = max(t for t, _ in done)
    return {"games": len(requests), "played": [n for _, n in done], "wall_s": wall,
            "games_per_s": len(requests) / wall}


def _warm() -> None:
    """Play a few games in this process first: forked workers inherit warm engine caches."""
    from ..execution.inprocess import play_inprocess
    from ..tournament.runner import build_request
    from ..tournament.schedule import schedule

    cfg = bench_config(Path("."), 1, 1)
    for task in list(schedule(cfg))[:6]:
        play_inprocess(build_request(cfg, task, Path(".")))


def _local_cluster(workers: int = 2):
    """A Dask cluster on this machine: ``workers`` worker processes of one thread each."""
    try:
        from distributed import LocalCluster
    except ImportError:
        from ..errors import UsageError

        raise UsageError("--dask needs dask[distributed]: pip install 'project-l-arena[cluster]'") from None
    import logging

    import dask

    logging.getLogger("distributed").setLevel(logging.ERROR)
    with dask.config.set(QUIET_WORKERS):  # the nannies hand the settings to their workers
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                            dashboard_address="127.0.0.1:0")


def _worker_pids(cluster) -> list[int]:
    """The pids of a LocalCluster's worker processes."""
    from distributed import Client

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        return sorted(set(client.run(os.getpid).values()))


#: The worker settings docs/cluster.md recommends for games: Dask's statistical profiler
#: samples every thread's stack 100 times a second and the event-loop watchdog ticks 50
#: times a second; idle, they cost a worker about 3.5% of a core (measured here: two
#: workers 6.9% of a core with Dask's defaults, 1.8% with these), and more beside a game's
#: deep stack. Neither is needed to run games.
QUIET_WORKERS = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "200ms",
                 "distributed.admin.system-monitor.interval": "2s"}


def bench_tournament(rounds: int = 48, play: str = "inprocess", repeat: int = 5, dask: bool = False) -> dict:
    """Play the fixed round robin at concurrency 1 and 2; games/s, speed-up and overhead.

    Each concurrency is run ``repeat`` times, alternating, and the fastest run of each is
    kept (the usual best-of-N: other load on the machine only ever slows a run down).
    Before each run the same games are played by bare processes (:func:`_bare`); the best
    of those is the machine's ceiling, and ``kept_of_bare_N`` the share of it the runner
    keeps. ``play="bots"`` plays the same games through the referee with bot processes
    (each worker keeps its bots' processes alive between games, as ``arena run`` does);
    the overhead then measures the runner against everything the referee does, and the
    same games are also run in-process, alternating with the bot-process runs, so that
    ``bots_vs_inprocess_N`` compares the two on the same games under the same load.
    """
    _warm()
    modes = ("bots", "inprocess") if play == "bots" else ("inprocess",)
    runs: dict = {(m, n): [] for m in modes for n in (1, 2)}
    bare: dict[int, list[dict]] = {1: [], 2: []}
    cluster = _local_cluster(2) if dask else None
    pids = _worker_pids(cluster) if cluster is not None else []
    on_dask: list[dict] = []
    try:
        for _ in range(max(1, repeat)):
            for n in (1, 2):
                bare[n].append(_bare(n, rounds, play))
                for m in modes:
                    runs[m, n].append(_one(n, rounds, m))
                    if cluster is not None and n == 2 and m == play:  # the same games on two Dask
                        on_dask.append(_one(2, rounds, play, cluster.scheduler_address, pids))  # workers, next
    finally:
        if cluster is not None:
            cluster.close()
    best = {k: max(v, key=lambda r: r["games_per_s"]) for k, v in runs.items()}
    one, two = best[play, 1], best[play, 2]
    bare1, bare2 = (max(bare[n], key=lambda r: r["games_per_s"]) for n in (1, 2))
    kept = {1: one["games_per_s"] / bare1["games_per_s"], 2: two["games_per_s"] / bare2["games_per_s"]}
    out = {"bots": ["greedy", "greedy-b", "greedy-c"], "play": play, "games": one["games"], "repeat": repeat,
           "games_per_s_1": one["games_per_s"], "games_per_s_2": two["games_per_s"],
           "speedup": two["games_per_s"] / one["games_per_s"], "overhead_1": one["overhead"],
           "overhead_2": two["overhead"], "cpu_overhead_1": one["cpu_overhead"],
           "cpu_overhead_2": two["cpu_overhead"], "wall_s_1": one["wall_s"], "wall_s_2": two["wall_s"],
           "bare_games_per_s_1": bare1["games_per_s"], "bare_games_per_s_2": bare2["games_per_s"],
           "bare_speedup": bare2["games_per_s"] / bare1["games_per_s"],
           "kept_of_bare_1": kept[1], "kept_of_bare_2": kept[2]}
    if on_dask:
        fastest = max(on_dask, key=lambda r: r["games_per_s"])
        out["dask_games_per_s_2"] = fastest["games_per_s"]
        out["dask_wall_s_2"] = fastest["wall_s"]
        out["dask_vs_local_2"] = fastest["games_per_s"] / two["games_per_s"]
        # each Dask run against the local run just before it: the machine's drift (other
        # load, a slow phase) touches both alike, where best against best may pair a lucky
        # quiet moment of one with an ordinary moment of the other
        pairs = sorted(d["games_per_s"] / r["games_per_s"] for d, r in zip(on_dask, runs[play, 2]))
        out["dask_vs_local_2_paired"] = statistics.median(pairs)
        out["dask_vs_local_2_range"] = [pairs[0], pairs[-1]]
        out["cpu_ms_per_game_2"] = statistics.median(r["cpu_ms_per_game"] for r in runs[play, 2])
        out["dask_cpu_ms_per_game_2"] = statistics.median(d["cpu_ms_per_game"] for d in on_dask)
    if play == "bots":
        for n in (1, 2):
            inproc = best["inprocess", n]["games_per_s"]
            out[f"inprocess_games_per_s_{n}"] = inproc
            out[f"bots_vs_inprocess_{n}"] = best["bots", n]["games_per_s"] / inproc
    return out
