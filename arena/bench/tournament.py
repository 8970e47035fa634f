"""``arena bench tournament``: games per second of the runner at each concurrency, and where
a bot-process game's CPU goes.

A fixed round robin of built-in bots (three copies of ``greedy``; two seats, base rules,
seed 1, no replays) is played in-process in the workers (``--play inprocess``) or through
the referee with bot processes (``--play bots``), at each concurrency of the list (1 and 2
by default; ``--concurrency 1,2,4,8,16``: more workers than cores too, to see that nothing
serializes), each run into a fresh results database. The runner's *overhead* is everything
that is not the engine and the bots -- starting the pool, shipping requests and results
between processes, storing every game in its own SQLite transaction, the progress
bookkeeping -- measured two ways:

- ``overhead_N`` (wall): ``1 - sum(game function wall times) / (wall time x workers)``,
  each game timed in its worker around the whole game function call. It misses the time
  the coordinator takes a core from a worker in the middle of a game (that lands in the
  game's wall time), and anything else competing for the cores inflates it;
- ``cpu_overhead_N``: the CPU time of the coordinator and of the workers outside the game
  function, as a share of all CPU time used by the run; less sensitive to other load.

A second view needs no timing inside the run: the same games played by *bare* processes
(no runner at all: forked processes take the next game from a shared counter) give the
machine's ceiling at that concurrency, and the runner's games/s are set against it.

With bot processes the bare processes also give the CPU split of a game, which does not
depend on the core count: the *referee* (everything the worker process does in a game whose
seats all had a live process: observations, their JSON, the engine's checks, the pipes, the
sandbox's polling threads), of it the *transport* (the CPU spent writing requests and
reading replies: the pipe's system calls and the line buffering), the *bots* (their CPU
during the games, as the referee charges it), the *start-up* (per game of the run: starting
and closing the pooled processes, the referee's part -- the sandbox, the fork, the kill --
and the bots' own -- the interpreter, the imports), and the runner's *store* (the
coordinator's CPU per game: results into SQLite, the schedule, the bookkeeping). The
referee's share is ``referee / (referee + bots)``: of what one game costs once its
processes run. The CPU per game of the whole run (coordinator,
workers, bots) is given at each concurrency too: flat as workers grow beyond the cores
means nothing serializes (the coordinator's one thread, the one SQLite writer).

With ``dask``, the same games are also played on a Dask cluster of N worker processes on
this machine (``LocalCluster``, one thread each), run for run beside the local executor at
each concurrency N, and ``dask_vs_local_N`` is the share of the local executor's games/s
the cluster keeps (fastest against fastest), ``dask_vs_local_N_paired`` the median, over
the runs, of each Dask run's games/s against the local run played just before it, and
``dask_cpu_ms_per_game_N`` what a game costs in CPU on the cluster (the coordinator with
the scheduler in it, the workers and their bot processes).
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from engine import RuleSpec

from ..tournament.config import BotEntry, TournamentConfig
from ..tournament.runner import run_tournament
from ..tournament.store import Store

SANDBOX_TIERS = ("none", "basic", "strict", "auto")


def bench_config(output: Path, concurrency: int, rounds: int, play: str = "inprocess",
                 sandbox: str = "none") -> TournamentConfig:
    """The benchmark's fixed round robin."""
    bots = (BotEntry("greedy", "greedy"), BotEntry("greedy-b", "greedy"), BotEntry("greedy-c", "greedy"))
    return TournamentConfig(
        name="bench", path="<bench>", rules=RuleSpec.make(), seats=2, bots=bots, format="round-robin",
        format_options={}, rounds=rounds, games=None, seed=1, time_control={}, fault_policy="forfeit",
        sandbox=sandbox, concurrency=concurrency, executor="local", address=None, play=play,
        output=output, anchor="greedy", replays=False, pause_idle=False)


def _own_cpu() -> float:
    """CPU seconds of this process so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _kids_cpu() -> float:
    """CPU seconds of the children this process has waited for (and of theirs)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


#: Linux's ``prctl`` option that makes a process the reaper of its orphaned descendants
PR_SET_CHILD_SUBREAPER = 36


def _adopt_orphans(on: bool = True) -> bool:
    """Make this process (not its children) the reaper of its orphaned descendants.

    Under strict, bubblewrap leaves the first process of the bot's PID namespace behind when
    it exits, unwaited: the bot's whole CPU time, which that process waited for, would reach
    the machine's init and no ``RUSAGE_CHILDREN`` of ours (a strict run counted 5 ms a game
    where its bots alone used 8). Adopted, it is reaped by :func:`_reap_adopted` and counted.
    False where the kernel has no such option."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap_adopted(timeout: float = 2.0) -> int:
    """Wait for the bubblewrap processes this process adopted (:func:`_adopt_orphans`) to end
    (at most ``timeout`` seconds) and reap them, so that their CPU time is in
    :func:`_kids_cpu`; how many were reaped. Only ``bwrap`` children are touched: the
    process's own children (workers, a Dask cluster) are left to whoever started them."""
    from ..process.transport import proc_files, stat_fields

    me, reaped = os.getpid(), 0
    deadline = time.monotonic() + timeout
    while True:
        adopted = []
        for pid, data in proc_files("stat", 512):
            fields = stat_fields(data)
            if len(fields) > 1 and int(fields[1]) == me and data[data.find(b"(") + 1:data.rfind(b")")] == b"bwrap":
                adopted.append((pid, fields[0]))
        for pid, state in adopted:
            if state == b"Z":
                try:
                    if os.waitpid(pid, os.WNOHANG)[0] == pid:
                        reaped += 1
                except ChildProcessError:
                    pass
        if all(state == b"Z" for _, state in adopted) or time.monotonic() > deadline:
            return reaped
        time.sleep(0.01)


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


@contextmanager
def without_cgroups(off: bool):
    """With ``off``, the games of this process and of the workers it forks make no cgroup, as
    on a machine without a writable cgroup hierarchy: the polled stand-ins take the caps'
    place (resident memory, the CPU account, the process count)."""
    if not off:
        yield
        return
    from ..process import sandbox

    saved = sandbox.cgroup_layout
    sandbox.cgroup_layout = lambda: ({}, "cgroups were turned off for the benchmark")
    try:
        yield
    finally:
        sandbox.cgroup_layout = saved


def _one(cfg: TournamentConfig, address: str | None = None, workers: list[int] | None = None) -> dict:
    """One run of the benchmark's round robin ``cfg`` into a fresh folder: on local workers,
    or on the Dask cluster at ``address`` whose worker processes are ``workers`` (pids on
    this machine)."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        cfg = replace(cfg, output=Path(tmp) / "out")
        if address is not None:
            cfg = replace(cfg, executor="dask", address=address)
        own0, kids0, far0 = _own_cpu(), _kids_cpu(), _tree_cpu(workers or [])
        summary = run_tournament(cfg, progress=False, echo=lambda _t: None)
        # the workers were waited for (local ones ended, a Dask worker closed its bots) and
        # strict's namespace processes they left behind reaped: everything the run used is counted
        _reap_adopted()
        own, kids = _own_cpu() - own0, _kids_cpu() - kids0
        total_cpu = own + kids + _tree_cpu(workers or []) - far0
        store = Store.open(cfg.output, create=False)
        stored = store.count()
        store.close()
    if stored != summary["played"]:
        raise RuntimeError(f"the benchmark stored {stored} games of the {summary['played']} it played")
    games = max(1, summary["played"])
    wall = summary["elapsed_s"]
    busy = summary["game_wall_s"]
    n = cfg.concurrency
    return {"games": summary["played"], "wall_s": wall, "games_per_s": summary["played"] / wall,
            "cpu_ms_per_game": 1000 * total_cpu / games, "store_ms_per_game": 1000 * own / games,
            "overhead": max(0.0, 1.0 - busy / (wall * n)),
            # with bot processes the bots' CPU time is not the game function's: no CPU figure
            "cpu_overhead": max(0.0, 1.0 - summary["game_cpu_s"] / (own + kids))
            if own + kids > 0 and cfg.play == "inprocess" and address is None else None}


def _time_transport() -> list[float]:
    """In a bare worker only (a forked process that ends after its games): count the CPU
    time of this process's thread spent in the transport's ``send`` and ``read_line`` (the
    pipe's system calls and the line buffering); the product's own code is not timed."""
    from ..process.transport import LineTransport

    spent = [0.0]
    clock = time.thread_time
    send, read_line = LineTransport.send, LineTransport.read_line

    def timed_send(self, data, deadline):
        t = clock()
        try:
            return send(self, data, deadline)
        finally:
            spent[0] += clock() - t

    def timed_read_line(self, deadline):
        t = clock()
        try:
            return read_line(self, deadline)
        finally:
            spent[0] += clock() - t

    LineTransport.send, LineTransport.read_line = timed_send, timed_read_line
    return spent


def _bare_worker(play: str, requests: list, counter, start, out) -> None:
    """A bare process: wait for the start, then play the next unplayed game until none is left
    (with bot processes: from its own pool of live processes, as a runner's worker does).
    Sends back its wall time and games, and with bot processes its CPU split: its own CPU
    (the referee), of it the transport's, the bots' CPU in its games as the referee charged
    it, and all its bots' CPU (reaped once the pool is closed)."""
    from ..execution.work import execute
    from ..process.pool import ProcessPool

    pool = ProcessPool() if play == "bots" else None
    transport = _time_transport() if play == "bots" else [0.0]
    _adopt_orphans()  # (not inherited from the bench's process: a fork does not keep it)
    start.wait()
    t0 = time.perf_counter()
    own0, kids0 = _own_cpu(), _kids_cpu()
    played, bots_in_games, steady, steady_games = 0, 0.0, 0.0, 0
    try:
        while True:
            with counter.get_lock():
                i = counter.value
                counter.value += 1
            if i >= len(requests):
                break
            started = pool.stats["started"] if pool is not None else 0
            cpu = _own_cpu()
            reply = execute({"request": requests[i], "play": play}, pool)
            if play == "bots":
                bots_in_games += sum(s.get("cpu_ms") or 0.0 for s in reply["outcome"]["seats"]) / 1000
                if pool.stats["started"] == started:  # every seat played a live process: a steady game
                    steady += _own_cpu() - cpu
                    steady_games += 1
            played += 1
    finally:
        if pool is not None:
            pool.close()
    wall = time.perf_counter() - t0
    if pool is not None:
        _reap_adopted()
    out.send({"wall_s": wall, "played": played, "referee_s": _own_cpu() - own0, "transport_s": transport[0],
              "bots_s": bots_in_games, "bots_all_s": _kids_cpu() - kids0, "steady_s": steady,
              "steady_games": steady_games})
    out.close()


def _bare(concurrency: int, rounds: int, play: str, sandbox: str = "none") -> dict:
    """The same games without the runner: ``concurrency`` forked processes, already started,
    take the next game from a shared counter and play it, nothing else (no pipes per game,
    no store, no bookkeeping). The time from the start signal to the last one done is the
    machine's own figure for this concurrency, the ceiling the runner is compared with."""
    from ..tournament.runner import build_request
    from ..tournament.schedule import schedule

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:  # bot logs, with bot processes
        cfg = bench_config(Path(tmp), concurrency, rounds, play, sandbox)
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
    wall = max(d["wall_s"] for d in done)
    games = max(1, len(requests))
    out = {"games": len(requests), "played": [d["played"] for d in done], "wall_s": wall,
           "games_per_s": len(requests) / wall}
    if play == "bots":
        ms = {k: 1000 * sum(d[k] for d in done) / games for k in ("referee_s", "transport_s", "bots_s", "bots_all_s")}
        steady_games = sum(d["steady_games"] for d in done)
        # a game in which no process was started: what the referee costs once its bots run
        referee = 1000 * sum(d["steady_s"] for d in done) / steady_games if steady_games else ms["referee_s"]
        out.update(referee_ms=referee, transport_ms=ms["transport_s"], bots_ms=ms["bots_s"],
                   # starting and closing the pooled processes: the referee's part (the sandbox,
                   # the fork, the kill) and the bots' own (the interpreter, the imports)
                   startup_ms=max(0.0, ms["referee_s"] - referee) + max(0.0, ms["bots_all_s"] - ms["bots_s"]),
                   referee_share=referee / (referee + ms["bots_s"]) if referee else 0.0)
    return out


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


def _step(n: int, rounds: int, play: str, repeat: int, dask: bool, sandbox: str) -> dict:
    """Every run at concurrency ``n``: the bare processes, the runner (and in-process, with
    bot processes), the Dask cluster of ``n`` workers, ``repeat`` times in turn; the figures
    of the fastest runs and the medians of the CPU figures."""
    modes = ("bots", "inprocess") if play == "bots" else ("inprocess",)
    runs: dict = {m: [] for m in modes}
    bare: list[dict] = []
    on_dask: list[dict] = []
    cluster = _local_cluster(n) if dask else None
    try:
        pids = _worker_pids(cluster) if cluster is not None else []
        for _ in range(max(1, repeat)):
            bare.append(_bare(n, rounds, play, sandbox))
            for m in modes:
                runs[m].append(_one(bench_config(Path("."), n, rounds, m, sandbox if m == "bots" else "none")))
                if cluster is not None and m == play:  # the same games on the cluster, next
                    on_dask.append(_one(bench_config(Path("."), n, rounds, play, sandbox), cluster.scheduler_address,
                                        pids))
    finally:
        if cluster is not None:
            cluster.close()
    best = {m: max(v, key=lambda r: r["games_per_s"]) for m, v in runs.items()}
    top = best[play]
    fastest_bare = max(bare, key=lambda r: r["games_per_s"])
    step = {"workers": n, "games": top["games"], "games_per_s": top["games_per_s"], "wall_s": top["wall_s"],
            "overhead": top["overhead"], "cpu_overhead": top["cpu_overhead"],
            "cpu_ms_per_game": statistics.median(r["cpu_ms_per_game"] for r in runs[play]),
            "store_ms_per_game": statistics.median(r["store_ms_per_game"] for r in runs[play]),
            "bare_games_per_s": fastest_bare["games_per_s"], "kept_of_bare": top["games_per_s"] / fastest_bare["games_per_s"]}
    if play == "bots":
        for key in ("referee_ms", "transport_ms", "bots_ms", "startup_ms", "referee_share"):
            step[key] = statistics.median(b[key] for b in bare)
        step["inprocess_games_per_s"] = best["inprocess"]["games_per_s"]
        step["bots_vs_inprocess"] = top["games_per_s"] / best["inprocess"]["games_per_s"]
    if on_dask:
        fastest = max(on_dask, key=lambda r: r["games_per_s"])
        # each Dask run against the local run just before it: the machine's drift (other
        # load, a slow phase) touches both alike, where best against best may pair a lucky
        # quiet moment of one with an ordinary moment of the other
        pairs = sorted(d["games_per_s"] / r["games_per_s"] for d, r in zip(on_dask, runs[play]))
        step.update(dask_games_per_s=fastest["games_per_s"], dask_wall_s=fastest["wall_s"],
                    dask_vs_local=fastest["games_per_s"] / top["games_per_s"],
                    dask_vs_local_paired=statistics.median(pairs), dask_vs_local_range=[pairs[0], pairs[-1]],
                    dask_cpu_ms_per_game=statistics.median(d["cpu_ms_per_game"] for d in on_dask))
    return step


#: the step's figures also given at the top level as ``<name>_<workers>`` (``games_per_s_2``)
FLAT = ("games_per_s", "wall_s", "overhead", "cpu_overhead", "cpu_ms_per_game", "store_ms_per_game",
        "bare_games_per_s", "kept_of_bare", "referee_ms", "transport_ms", "bots_ms", "startup_ms",
        "referee_share", "inprocess_games_per_s", "bots_vs_inprocess", "dask_games_per_s", "dask_wall_s",
        "dask_vs_local", "dask_cpu_ms_per_game")


def bench_tournament(rounds: int = 48, play: str = "inprocess", repeat: int = 5, dask: bool = False,
                     concurrency: tuple[int, ...] = (1, 2), sandbox: str = "none", cgroups: bool = True) -> dict:
    """Play the fixed round robin at each ``concurrency``; games/s, speed-up, overhead and,
    with bot processes, the CPU split of a game.

    Each concurrency is run ``repeat`` times (the bare processes, then the runner, then the
    in-process runner with ``play="bots"``, then the Dask cluster), and the fastest run of
    each kind is kept (the usual best-of-N: other load on the machine only ever slows a run
    down); the CPU figures are the medians. ``sandbox`` is the bot processes' tier and
    ``cgroups=False`` plays them without cgroups, as on a machine where none can be made.
    Returns ``steps`` (one dict per concurrency) and each step's figures flat as
    ``<figure>_<workers>``; ``speedup`` is the last concurrency's games/s over the first's.
    """
    concurrency = tuple(dict.fromkeys(int(n) for n in concurrency))
    _warm()
    adopting = _adopt_orphans()
    try:
        with without_cgroups(not cgroups):
            steps = [_step(n, rounds, play, repeat, dask, sandbox) for n in concurrency]
    finally:
        if adopting:
            _reap_adopted()
            _adopt_orphans(False)
    first = steps[0]
    for step in steps:
        step["speedup"] = step["games_per_s"] / first["games_per_s"]
        step["bare_speedup"] = step["bare_games_per_s"] / first["bare_games_per_s"]
    out = {"bots": ["greedy", "greedy-b", "greedy-c"], "play": play, "games": first["games"], "repeat": repeat,
           "concurrency": list(concurrency), "sandbox": sandbox, "cgroups": cgroups, "steps": steps,
           "speedup": steps[-1]["speedup"], "bare_speedup": steps[-1]["bare_speedup"]}
    for step in steps:
        n = step["workers"]
        for key in FLAT:
            if key in step:
                out[f"{key}_{n}"] = step[key]
        if "dask_vs_local_paired" in step:
            out[f"dask_vs_local_{n}_paired"] = step["dask_vs_local_paired"]
            out[f"dask_vs_local_{n}_range"] = step["dask_vs_local_range"]
    return out
