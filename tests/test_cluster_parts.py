"""The parts of the cluster executor: bundles, landing, tiers, the worker pool, `arena match --dask`."""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
from pathlib import Path

import pytest

from arena.packages.bundle import Bundler, pack, program_folder, rewrite, unpack
from arena.cluster.landing import Landing
from arena.cluster.worker import TierRefused, check_tier

distributed = pytest.importorskip("distributed")


def make_bot(folder: Path, stride: int = 7) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "data.json").write_text(json.dumps({"stride": stride}))
    (folder / "sub").mkdir(exist_ok=True)
    (folder / "sub" / "more.txt").write_text("x")
    return folder


def test_a_folder_packs_to_the_same_bytes_whatever_its_times_and_order(tmp_path):
    a = make_bot(tmp_path / "a")
    b = make_bot(tmp_path / "b")
    os.utime(b / "data.json", (1, 1))
    first, second = pack(str(a)), pack(str(b))
    assert first.digest == second.digest and first.data == second.data
    (b / "data.json").write_text(json.dumps({"stride": 8}))
    assert pack(str(b)).digest != first.digest


def test_a_script_bundles_its_folder_and_the_command_moves_with_it(tmp_path):
    import sys

    bot = make_bot(tmp_path / "mine")
    argv = [sys.executable, str(bot / "bot.py"), "--data", str(bot / "data.json")]
    assert program_folder(argv) == (str(bot.resolve()), None)
    assert program_folder([sys.executable, "-m", "bots.run"]) is None  # installed code: nothing to ship
    assert program_folder(["python3", "-c", "pass"]) is None
    bundler = Bundler()
    bundle = bundler.for_argv(argv)
    assert bundler.for_argv(argv) is bundle  # packed once
    dest = tmp_path / "unpacked"
    unpack(bundle.data, dest)
    assert json.loads((dest / "data.json").read_text()) == {"stride": 7} and (dest / "sub" / "more.txt").exists()
    moved = rewrite(argv, bundle.folder, str(dest))
    assert moved == [sys.executable, str(dest / "bot.py"), "--data", str(dest / "data.json")]


def _tar(*members) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for info in members:
            tf.addfile(info, io.BytesIO(b"x" * info.size) if info.isfile() else None)
    return buf.getvalue()


def _member(name: str, kind=tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    info.size = 1 if kind == tarfile.REGTYPE else 0
    return info


@pytest.mark.parametrize("filters", [True, False], ids=["tarfile-filters", "older-python"])
def test_a_bundle_cannot_write_outside_its_folder(tmp_path, monkeypatch, filters):
    if not filters:  # Python before 3.10.12 / 3.11.4 has no extraction filters: our own checks
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no tarfile extraction filters")
    for i, bad in enumerate([_member("../escape.txt"), _member("link", tarfile.SYMTYPE, "../../escape"),
                             _member("dev", tarfile.CHRTYPE)]):
        with pytest.raises(tarfile.TarError):
            unpack(_tar(_member("fine.txt"), bad), tmp_path / f"in{i}")
    assert not (tmp_path / "escape.txt").exists()
    try:  # an absolute name lands inside (the data filter strips its slash) or is refused
        unpack(_tar(_member(str(tmp_path / "abs.txt"))), tmp_path / "in9")
    except tarfile.TarError:
        pass
    assert not (tmp_path / "abs.txt").exists()
    unpack(_tar(_member("sub", tarfile.DIRTYPE, mode=0o777), _member("sub/run.sh", mode=0o4777),
                _member("sub/here", tarfile.SYMTYPE, "run.sh")), tmp_path / "ok")
    run = tmp_path / "ok" / "sub" / "run.sh"
    assert run.read_bytes() == b"x" and (tmp_path / "ok" / "sub" / "here").resolve() == run.resolve()
    assert run.stat().st_mode & 0o7022 == 0  # no set-id bit, no group or other write


def test_the_record_lands_its_replay_and_logs_in_the_coordinators_folder(tmp_path):
    request = {"replay_path": str(tmp_path / "out" / "replays" / "000001-0.json"), "log_dir": str(tmp_path / "out" / "logs"),
               "sandbox_options": {"log_total_mb": 1}}
    outcome = {"replay_text": '{"format": 1}\n', "replay_path": None,
               "seats": [{"name": "a", "stderr_log": "000001-0-seat0-a.stderr.log", "stderr_text": "hello\n"},
                         {"name": "b", "stderr_log": "000001-0-seat1-b.stderr.log", "stderr_text": "z" * (2 << 20)}]}
    landed = Landing().land(request, outcome)
    assert "replay_text" not in landed and Path(landed["replay_path"]).read_text() == '{"format": 1}\n'
    first, second = (Path(s["stderr_log"]) for s in landed["seats"])
    assert first.read_text() == "hello\n" and oct(first.stat().st_mode & 0o777) == "0o600"
    assert second.stat().st_size < (1 << 20) + 200 and second.read_text().endswith("cap of 1 MB]\n")
    assert all("stderr_text" not in s for s in landed["seats"])


def test_a_silent_bots_log_lands_as_no_file_until_a_late_line_comes(tmp_path):
    """As a local game: a bot that wrote nothing on stderr leaves no file (the record still
    names where it would be; an earlier attempt's file of the same game goes), and what it
    writes after the record came makes the file."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "000002-0-seat0-a.stderr.log").write_text("an earlier attempt\n")
    request = {"log_dir": str(logs)}
    outcome = {"seats": [{"name": "a", "stderr_log": "000002-0-seat0-a.stderr.log", "stderr_text": ""},
                         {"name": "b", "stderr_log": "000002-0-seat1-b.stderr.log", "stderr_text": ""}]}
    landing = Landing()
    landed = landing.land(request, outcome)
    assert [s["stderr_log"] for s in landed["seats"]] == [str(logs / "000002-0-seat0-a.stderr.log"),
                                                        str(logs / "000002-0-seat1-b.stderr.log")]
    assert not list(logs.iterdir())
    landing.append([(str(logs), "000002-0-seat1-b.stderr.log", b"last words\n")])
    made = logs / "000002-0-seat1-b.stderr.log"
    assert made.read_bytes() == b"last words\n" and oct(made.stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in logs.iterdir()] == [made.name]


def test_a_worker_refuses_a_tier_it_cannot_give_and_never_plays_weaker(monkeypatch):
    import arena.process.sandbox as sandbox

    monkeypatch.setattr(sandbox, "strict_missing", lambda use_cgroups=True: "bubblewrap is not installed")
    with pytest.raises(TierRefused, match="cannot give the strict sandbox tier: bubblewrap is not installed"):
        check_tier("strict", "tcp://w:1")
    check_tier({"tier": "strict", "fallback": "basic"}, "tcp://w:1")  # the file allows basic by name
    check_tier("basic", "tcp://w:1")
    # auto is this worker's strongest tier: basic as root; none for command-line bots where
    # no tier keeps them away from the arena (an ordinary user without bubblewrap)
    monkeypatch.setattr(sandbox, "best_tier", lambda: ("basic", "bubblewrap is not installed"))
    check_tier({"tier": "auto", "fallback": None}, "tcp://w:1")
    monkeypatch.setattr(sandbox, "best_tier", lambda: (None, "bubblewrap is not installed"))
    with pytest.raises(TierRefused, match="cannot give the strict or basic sandbox tier: bubblewrap"):
        check_tier("auto", "tcp://w:1")
    check_tier("auto", "tcp://w:1", installed_only=True)  # registered bots: basic holds them


def test_auto_travels_to_the_workers_whatever_the_coordinator_can_run(monkeypatch):
    import arena.process.sandbox as sandbox
    from arena.cluster.shipping import Shipper

    class NoClient:  # built-in bots need no bundle: nothing is scattered
        def scatter(self, *a, **k):
            raise AssertionError("nothing to scatter")

    seats = [{"name": "greedy", "bot": "greedy", "cmd": None}, {"name": "random", "bot": "random", "cmd": None}]
    for coordinator in [("basic", "no bubblewrap here"), (None, "no bubblewrap here"), ("strict", "")]:
        monkeypatch.setattr(sandbox, "best_tier", lambda c=coordinator: c)
        shipper = Shipper(NoClient())
        for asked in ["auto", {"tier": "auto", "fallback": None}, "strict", {"tier": "strict", "fallback": "basic"}]:
            sent, bundles = shipper.prepare({"request": {"seats": seats, "sandbox": asked}, "play": "bots"}, "p")
            assert sent["request"]["sandbox"] == asked and not bundles, (coordinator, asked)


@pytest.fixture(scope="module")
def threads_cluster():
    """Two workers as threads of this process (so a test may patch what they call)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as cluster:
        yield cluster


@pytest.mark.slow
def test_a_worker_that_cannot_give_the_tier_passes_its_games_to_one_that_can(threads_cluster, tmp_path, monkeypatch,
                                                                             capsys):
    from dataclasses import replace

    from distributed import get_worker

    import arena.process.sandbox as sandbox
    from arena.tournament.runner import run_tournament
    from test_tournament_dask import config, results

    real = sandbox.strict_missing
    names = sorted(w.name for w in threads_cluster.workers.values())

    refusing = {names[0]}

    def missing_on_first(use_cgroups=True):
        try:
            if get_worker().name in refusing:
                return "bubblewrap is not installed on this worker"
        except ValueError:  # not on a worker: the coordinator can run strict
            pass
        return real(use_cgroups)

    if real():
        pytest.skip(real())
    monkeypatch.setattr(sandbox, "strict_missing", missing_on_first)
    cfg = replace(config(tmp_path / "t"), executor="dask", address=threads_cluster.scheduler_address,
                  play="bots", sandbox="strict", rounds=1, replays=True)
    seen = []
    summary = run_tournament(cfg, progress=False, echo=lambda _t: None, on_game=lambda t, o: seen.append(o))
    assert summary["stored"] == 6 and summary["failed"] == 0
    assert {o["sandbox"]["tier"] for o in seen} == {"strict"}
    said = capsys.readouterr().err
    # the run says how many workers it has, and which refuses its tier (once)
    assert "the cluster has 2 workers" in said, said
    assert said.count("cannot give the strict sandbox tier") == 1, said
    # with a fallback the refusing worker plays basic: the run says what its games really had
    fallback = replace(cfg, output=tmp_path / "fb", sandbox={"tier": "strict", "fallback": "basic"}, rounds=4)
    had = []
    run_tournament(fallback, progress=False, echo=lambda _t: None, on_game=lambda t, o: had.append(o["sandbox"]["tier"]))
    said = capsys.readouterr().err
    if "basic" in had:
        assert f"basic instead of strict ({had.count('basic')} game" in said, said
    else:
        assert "the workers' games ran in" not in said, said
    # the pool of the worker that played: its bot processes served several games
    pids = [s["pid"] for o in seen for s in o["seats"]]
    assert len(set(pids)) < len(pids)
    refusing.update(names)
    from arena.errors import ArenaError

    with pytest.raises(ArenaError, match="no worker of the cluster can give the sandbox tier"):
        run_tournament(replace(cfg, output=tmp_path / "none"), progress=False, echo=lambda _t: None)
    assert results(tmp_path / "t")


@pytest.mark.slow
def test_short_games_play_in_batches_and_a_failing_game_spares_its_neighbours(threads_cluster, tmp_path, monkeypatch):
    from dataclasses import replace

    import arena.cluster.worker as worker
    from arena.cluster.executor import DaskExecutor
    from arena.tournament.runner import run_tournament
    from test_tournament_dask import config, results

    monkeypatch.setattr(DaskExecutor, "batch_s", 60.0)  # every game is short: max_batch games a task
    monkeypatch.setattr(DaskExecutor, "max_batch", 4)
    monkeypatch.setattr(DaskExecutor, "least_s_per_thread", 0.0)  # the last batches as small as an even share
    real = worker.play_remote
    batches: list[int] = []  # the size of the batch each game was played in

    def flaky(payload, bundles=None):
        batches.append(len(sys._getframe(1).f_locals["payloads"]))  # play_batch's argument
        if len(batches) == 9:
            raise RuntimeError("the worker's disk is full")
        return real(payload, bundles)

    monkeypatch.setattr(worker, "play_remote", flaky)
    import arena.cluster.executor as dask_executor

    take = dask_executor.take_batch
    submitted: list[int] = []  # the size of each batch, in the order they were submitted

    def counted(*args, **kwargs):
        group = take(*args, **kwargs)
        submitted.append(len(group))
        return group

    monkeypatch.setattr(dask_executor, "take_batch", counted)
    cfg = replace(config(tmp_path / "t"), executor="dask", address=threads_cluster.scheduler_address,
                  play="bots", sandbox="none", rounds=8)
    said: list[str] = []
    summary = run_tournament(cfg, progress=False, echo=said.append)
    assert summary["failed"] == 1 and summary["stored"] == 47, said  # 48 games, one lost, its batch's others kept
    assert len(batches) == 48 and len(results(tmp_path / "t")) == 47
    # one game per worker thread until a game has been timed, then max_batch games a task
    assert submitted[:3] == [1, 1, 4] and batches[:2] == [1, 1] and max(batches) == 4, submitted
    # the last games, all in sight (the look-ahead holds 2 x threads x max_batch = 16), are
    # spread in smaller batches over both workers: at most half an even share per thread of
    # what is left (4 games left or fewer: one each)
    assert sum(submitted) == 48 and max(submitted) == 4, submitted
    left = [48 - sum(submitted[:i]) for i in range(len(submitted))]
    assert all(n <= -(-rest // 4) for n, rest in zip(submitted, left) if rest <= 16), submitted
    assert submitted[-3:] == [1, 1, 1], submitted
    # the run resumed plays the failed game alone, and nothing twice
    again = run_tournament(cfg, progress=False, echo=lambda _t: None)
    assert again["played"] == 1 and again["failed"] == 0 and len(results(tmp_path / "t")) == 48


def test_a_batch_adds_up_the_expected_times_of_its_games_and_shrinks_at_the_end():
    from collections import deque

    from arena.cluster.batching import Timing, take_batch
    from arena.tournament.schedule import GameTask

    def task(i, bots):
        return GameTask(f"g{i}", i, 0, i, bots)

    fast, slow = ("random", "random-b"), ("planner", "planner-b")
    timing = Timing()
    assert timing.guess(task(0, fast)) is None  # nothing timed yet
    ahead = deque(task(i, fast) for i in range(40))
    assert len(take_batch(deque(), ahead, timing, 0.5, 16)) == 1  # a game nothing is known of plays alone
    for i in range(4):
        timing.add(task(i, fast), 0.05)
    # the run's mean stands in for bots not timed yet; then their own median
    assert timing.guess(task(0, slow)) == pytest.approx(0.05)
    assert len(take_batch(deque(), ahead, timing, 0.5, 16)) == 10  # 10 x 50 ms
    assert len(take_batch(deque(), ahead, timing, 0.5, 6)) == 6  # never more than asked
    for i in range(3):
        timing.add(task(i, slow), 2.0)
    assert timing.guess(task(0, slow)) == 2.0 and timing.guess(task(0, fast)) == pytest.approx(0.05)
    mixed = deque([task(0, fast), task(1, fast), task(2, slow), task(3, fast)])
    assert [t.key for t in take_batch(deque(), mixed, timing, 0.5, 16)] == ["g0", "g1"]  # the slow game waits
    assert [t.key for t in take_batch(deque(), mixed, timing, 0.5, 16)] == ["g2"]  # and goes alone
    # games to play again come first
    retry = deque([task(9, fast)])
    assert [t.key for t in take_batch(retry, mixed, timing, 0.5, 16)] == ["g9", "g3"]
    # every game left is in sight: at most half an even share per thread
    left = deque(task(i, fast) for i in range(12))
    assert len(take_batch(deque(), left, timing, 0.5, 16, threads=2)) == 3
    left = deque(task(i, fast) for i in range(3))
    assert len(take_batch(deque(), left, timing, 0.5, 16, threads=2)) == 1
    # ... but never shorter than least_s (a task costs the coordinator the same however short)
    left = deque(task(i, fast) for i in range(12))
    assert len(take_batch(deque(), left, timing, 0.5, 16, threads=16, least_s=0.16)) == 4  # 4 x 50 ms
    assert len(take_batch(deque(), left, timing, 0.1, 16, threads=16, least_s=0.16)) == 2  # batch_s first
    left = deque(task(i, fast) for i in range(12))
    assert len(take_batch(deque(), left, timing, 0.5, 2, least_s=0.16)) == 4  # max_batch too
    # a schedule whose tasks do not name their bots: timed by the run's games
    from types import SimpleNamespace

    plain = deque(SimpleNamespace(key=f"p{i}") for i in range(8))
    first = plain[0]
    assert len(take_batch(deque(), plain, timing, 0.5, 16)) >= 1
    timing.add(first, 0.05)


def test_games_that_start_their_bots_processes_are_timed_apart():
    from arena.cluster.batching import Timing
    from arena.tournament.schedule import GameTask

    def reply(wall, *pids, worker="box:1 (tcp://a)"):
        return {"wall_s": wall, "worker": worker, "outcome": {"seats": [{"pid": p} for p in pids]}}

    bots = ("greedy", "greedy-b")
    task = GameTask("g", 0, 0, 0, bots)
    timing = Timing()
    assert not timing.known() and timing.guess(task) is None
    timing.add_result(task, reply(0.6, 10, 11))  # both processes started: a slow game
    assert timing.known() and timing.guess(task) == pytest.approx(0.6)  # all there is: it errs long
    timing.add_result(task, reply(0.04, 10, 11))  # the same processes again
    assert timing.guess(task) == pytest.approx(0.04)
    timing.add_result(task, reply(0.5, 10, 12))  # one process replaced (or a new bot): slow again
    timing.add_result(task, reply(0.5, 10, 11, worker="box:2 (tcp://b)"))  # another worker's first
    assert timing.guess(task) == pytest.approx(0.04)
    for wall in (0.03, 0.05, 0.9):  # a game that met a busy moment does not hold the guess up
        timing.add_result(task, reply(wall, 10, 11))
    assert timing.guess(task) == pytest.approx(0.045)
    # games without processes (in-process play) are all timed alike
    plain = Timing()
    plain.add_result(task, {"wall_s": 0.01, "worker": "w", "outcome": {"seats": [{"name": "a"}]}})
    assert plain.guess(task) == pytest.approx(0.01)


@pytest.mark.slow
def test_arena_match_plays_on_a_dask_cluster(threads_cluster, tmp_path):
    from typer.testing import CliRunner

    from arena.cli.app import app

    out = tmp_path / "m"
    res = CliRunner().invoke(app, ["match", "greedy", "random", "--games", "4", "--sandbox", "none", "--quiet",
                                   "--dask", threads_cluster.scheduler_address, "-o", str(out)])
    assert res.exit_code == 0, res.output
    from arena.tournament.store import Store

    store = Store.open(out, create=False)
    try:
        games = store.games()
        workers = {w for (w,) in store.conn.execute("SELECT worker FROM games")}
    finally:
        store.close()
    assert len(games) == 4 and all("://" in w for w in workers), workers
    # the built-in bots write nothing on stderr: no log file, as a local game leaves none
    assert len(list((out / "replays").glob("*.json"))) == 4 and not list((out / "logs").glob("*.log"))
    res = CliRunner().invoke(app, ["match", "greedy", "random", "--games", "4", "--dask", "tcp://127.0.0.1:1",
                                   "-o", str(tmp_path / "x"), "--sandbox", "none"])
    assert res.exit_code != 0 and "cannot reach the dask scheduler" in res.output and "Traceback" not in res.output


@pytest.mark.slow
def test_bench_tournament_prints_the_dask_clusters_games_per_second_beside_the_local_executors():
    from typer.testing import CliRunner

    from arena.cli.app import app

    res = CliRunner().invoke(app, ["bench", "tournament", "--play", "bots", "--dask", "--repeat", "1", "--groups", "2"])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.strip().startswith("dask, 2 workers"))
    assert "games/s beside the local executor's" in line and "run for run: median" in line
    res = CliRunner().invoke(app, ["bench", "tournament", "--play", "bots", "--dask", "--repeat", "1", "--groups", "2",
                                   "--json"])
    figures = json.loads(res.stdout)
    assert figures["dask_games_per_s_2"] > 0 and 0 < figures["dask_vs_local_2"]
    low, high = figures["dask_vs_local_2_range"]
    assert 0 < low <= figures["dask_vs_local_2_paired"] <= high  # one run: the one pair's ratio


@pytest.mark.slow
def test_the_bench_cluster_starts_its_workers_without_the_profiler_and_fast_tick():
    import dask
    from distributed import Client

    from arena.bench.tournament import QUIET_WORKERS, _local_cluster

    cluster = _local_cluster(2)
    try:
        with Client(cluster, set_as_default=False) as client:
            seen = client.run(lambda: {k: dask.config.get(k) for k in QUIET_WORKERS})
    finally:
        cluster.close()
    assert len(seen) == 2 and all(got == QUIET_WORKERS for got in seen.values())


def test_a_bot_package_is_unpacked_and_built_once_per_worker(tmp_path):
    from arena.cluster.worker import ArenaWorker

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "bot.toml").write_text('name = "built"\nversion = "1"\nauthor = "a"\nrun = "sh bot.sh"\n'
                                  'build = "echo made > made.txt; echo x >> count.txt"\n')
    (pkg / "bot.sh").write_text("cat made.txt\n")
    bundle = pack(str(pkg))
    plugin = ArenaWorker("arena-run-test")
    plugin.setup(None)
    try:
        first = plugin.bundle_dir(bundle.digest, bundle.data)
        again = plugin.bundle_dir(bundle.digest, bundle.data)
        assert first == again and (first / "made.txt").read_text() == "made\n"
        assert (first / "count.txt").read_text() == "x\n"  # built once
        assert not (pkg / "made.txt").exists()  # the source folder is untouched
        root = plugin.root
    finally:
        plugin.teardown(None)
    assert not root.exists()


@pytest.mark.slow
def test_arena_experiment_plays_on_a_dask_cluster(threads_cluster, tmp_path):
    from typer.testing import CliRunner

    from arena.cli.app import app

    path = tmp_path / "e.yaml"
    path.write_text("name: e\nseats: 2\nbots: [greedy, random]\ngames: 4\nseed: 2\nexecutor: inprocess\n"
                    f"output: {tmp_path / 'out'}\nreplays: false\nrule_sets:\n"
                    "  - {name: revised, variants: [revised]}\n  - {name: base}\n")
    res = CliRunner().invoke(app, ["experiment", str(path), "--dask", threads_cluster.scheduler_address,
                                   "--no-charts", "--no-progress", "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output[res.output.index("{"):])
    assert summary["games"] == 8 and summary["played"] == 8 and not summary["failed"]


def test_finished_tasks_are_read_and_landed_off_the_main_thread_before_they_are_handed_over(tmp_path):
    import pickle
    import queue
    import threading
    from concurrent.futures import CancelledError

    from arena.cluster.arrivals import Arrivals

    class Future:
        def __init__(self, key, status="finished"):
            self.key, self.status = key, status

    class Pending:  # as_completed with results: (future, value) as each finishes
        def __init__(self):
            self.finished: queue.Queue = queue.Queue()

        def add(self, fut):
            pass

        def __next__(self):
            return self.finished.get()

    class Watched(Landing):
        def land(self, request, outcome):
            landed.append(threading.current_thread().name)
            if request.get("replay_path") == "/proc/nowhere/replay.json":
                raise OSError("read-only")
            return super().land(request, outcome)

    def reply(name):
        return ("ok", {"outcome": {"seats": [{"stderr_log": name, "stderr_text": "thinking\n"}], "replay_path": None},
                       "worker": "w", "wall_s": 0.01})

    landed: list[str] = []
    logs = tmp_path / "logs"
    requests = {"t1": [{"log_dir": str(logs)}, {"log_dir": str(logs)}],
                "t2": [{"log_dir": str(logs), "replay_path": "/proc/nowhere/replay.json"}]}
    pending = Pending()
    arrivals = Arrivals(pending, Watched(), lambda key: requests.get(key, []), lambda _r: 256)
    try:
        for key in ("t1", "t2", "t3"):
            arrivals.add(Future(key))
        pending.finished.put((Future("t1"), pickle.dumps(([reply("a.log"), reply("b.log")], []))))
        fut, results, failure = arrivals.next()
        assert fut.key == "t1" and failure is None and [kind for kind, _ in results] == ["ok", "ok"]
        # written before the main thread sees them, and by the arrivals' own thread
        assert (logs / "a.log").read_text() == "thinking\n" and results[0][1]["outcome"]["seats"][0]["stderr_log"] == str(logs / "a.log")
        assert landed == ["arena-arrivals", "arena-arrivals"]
        pending.finished.put((Future("t2"), pickle.dumps(([reply("c.log")], []))))
        fut, results, failure = arrivals.next()  # a game whose files cannot be written fails alone
        assert results[0][0] == "failed" and "read-only" in results[0][1]
        pending.finished.put((Future("t3", "cancelled"), CancelledError()))
        fut, results, failure = arrivals.next()
        assert results is None and isinstance(failure, CancelledError)
    finally:
        arrivals.close()
    assert not arrivals.thread.is_alive()
