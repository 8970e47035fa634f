"""What a run on a cluster leaves is what a local run leaves.

- A bot's lines after ``game_over`` reach the coordinator's logs for every game of a match
  and of an experiment, as the log files of a local run keep them (in the game's own log,
  or in the next game's of the same process when it began first).
- A scheduler with no workers (a run resumed right after the scheduler restarted) is
  waited for, said in one line, and the games are played when a worker joins.
- A run's worker plugin leaves the scheduler when the run ends, when its lease lapses
  (its coordinator was killed) and when ``arena cluster clean`` removes it: a worker that
  joins afterwards does not install it.

Real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1 (``cluster_box.py``).
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cluster_box import PlainCluster, require_dask_command

distributed = pytest.importorskip("distributed")

#: a bot of the standard library that names each game it plays on stderr (its process id
#: and the game's number in that process) at hello, and names it again 50 ms after
#: game_over -- longer than a worker waited for a quiet log before it sent the records
TALKER = '''\
import json, os, random, sys, time
rng = random.Random(1)
games = 0
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "quit":
        break
    if kind == "hello":
        games += 1
        sys.stderr.write(f"hello {os.getpid()}:{games}\\n")
        sys.stderr.flush()
        print(json.dumps({"type": "ready", "id": msg["id"], "name": "talker", "version": "1",
                          "legal_actions": True}), flush=True)
    elif kind == "game_over":
        time.sleep(0.05)
        sys.stderr.write(f"after game_over {os.getpid()}:{games}\\n")
        sys.stderr.flush()
    elif "legal" in msg:
        time.sleep(DELAY)
        print(json.dumps({"id": msg["id"], "action": rng.choice(msg["legal"])}), flush=True)
'''


def write_talker(folder: Path, delay: float = 0.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    bot = folder / "talker.py"
    bot.write_text(f"DELAY = {delay}\n" + TALKER)
    return bot


def arena(*args, cwd: Path, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def games_named(logs: list[Path]) -> tuple[list[str], list[str]]:
    """The games the talker's logs name at hello, and those they name after game_over."""
    hellos, afters = [], []
    for path in logs:
        text = path.read_text()
        hellos += re.findall(r"^hello (\S+)$", text, re.M)
        afters += re.findall(r"^after game_over (\S+)$", text, re.M)
    return sorted(hellos), sorted(afters)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_dask_command()
    box = PlainCluster(tmp_path_factory.mktemp("cluster"), hide=[], workers=2).start()
    try:
        yield box
    finally:
        box.stop()


def registered(address: str) -> list[str]:
    """The arena runs whose worker plugins the scheduler holds."""
    from distributed import Client

    with Client(address, timeout="30s") as client:
        return client.run_on_scheduler(
            lambda dask_scheduler: sorted(n for n in dask_scheduler.worker_plugins if n.startswith("arena-run-")))


def installed(address: str) -> dict:
    """Each worker's arena plugins and whether each was set up (has its folder)."""
    from distributed import Client

    def mine(dask_worker):
        return {n: getattr(p, "root", None) is not None for n, p in dask_worker.plugins.items()
                if n.startswith("arena-run-")}

    with Client(address, timeout="30s") as client:
        return client.run(mine)


def wait_until(what, timeout: float, say: str):
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if got:
            return got
        assert time.monotonic() < deadline, say
        time.sleep(0.3)


# -- a bot's lines after game_over ---------------------------------------------------------
@pytest.mark.slow
def test_every_match_games_line_after_game_over_reaches_the_coordinators_logs(cluster, tmp_path):
    bot = write_talker(tmp_path / "bot")
    done = arena("match", "random", "--cmd", f"python3 {bot}", "--games", 16, "--sandbox", "none", "--dask",
                 cluster.address, "-o", tmp_path / "m", "--quiet", "--no-replays", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    logs = sorted((tmp_path / "m" / "logs").glob("*talker*.stderr.log"))
    hellos, afters = games_named(logs)
    assert len(logs) == len(hellos) == 16, [p.name for p in logs]
    assert afters == hellos, f"{len(afters)} of {len(hellos)} games' lines after game_over reached the logs"


@pytest.mark.slow
def test_every_experiment_games_line_after_game_over_reaches_the_coordinators_logs(cluster, tmp_path):
    bot = write_talker(tmp_path / "bot")
    (tmp_path / "e.yaml").write_text(textwrap.dedent(f"""\
        name: talk
        seats: 2
        bots:
          - random
          - {{name: talker, cmd: python3 {bot}}}
        games: 8
        seed: 4
        sandbox: none
        replays: false
        executor: {{type: dask, address: {cluster.address}}}
        output: {str(tmp_path / 'e')!r}
        rule_sets:
          - {{name: base}}
          - {{name: revised, variants: [revised]}}
    """))
    done = arena("experiment", tmp_path / "e.yaml", "--no-progress", "--no-charts", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    logs = sorted((tmp_path / "e").rglob("*talker*.stderr.log"))
    hellos, afters = games_named(logs)
    assert len(logs) == len(hellos) == 16, [p.name for p in logs]
    assert afters == hellos, f"{len(afters)} of {len(hellos)} games' lines after game_over reached the logs"


# -- a scheduler with no workers -----------------------------------------------------------
@pytest.mark.slow
def test_a_scheduler_without_workers_is_waited_for_in_one_line_and_the_games_play_when_one_joins(tmp_path):
    require_dask_command()
    bot = write_talker(tmp_path / "bot")
    box = PlainCluster(tmp_path / "cluster", hide=[], workers=0).start()
    try:
        err_path = tmp_path / "err.txt"
        with open(err_path, "w") as err:
            proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "match", "random", "--cmd", f"python3 {bot}",
                                     "--games", "4", "--sandbox", "none", "--dask", box.address, "-o", str(tmp_path / "m"),
                                     "--quiet"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True)
        try:
            wait_until(lambda: "waiting for workers" in err_path.read_text() or proc.poll() is not None, 60,
                       "the match said nothing about the missing workers")
            time.sleep(12)  # longer than Dask takes to give up a bundle sent to no worker
            assert proc.poll() is None, err_path.read_text()[-3000:]  # still waiting
            box.add_worker("late")
            proc.wait(600)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
    finally:
        box.stop()
    said = err_path.read_text()
    assert proc.returncode == 0, said[-3000:]
    assert "Traceback" not in said, said[-3000:]
    waiting = [ln for ln in said.splitlines() if "waiting for workers" in ln]
    assert len(waiting) == 1 and "has no workers" in waiting[0], said
    assert "the cluster has 1 worker (1 thread)" in said, said
    with sqlite3.connect(tmp_path / "m" / "results.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 4


# -- the run's worker plugin on the scheduler ------------------------------------------------
def killed_coordinator(tmp_path: Path, address: str, lease_s: float | None) -> None:
    """A match whose coordinator is killed (SIGKILL) once it stored a game."""
    bot = write_talker(tmp_path / "bot", delay=0.01)
    env = {**os.environ, **({"ARENA_CLUSTER_LEASE_S": str(lease_s)} if lease_s else {})}
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "match", "random", "--cmd", f"python3 {bot}",
                             "--games", "400", "--sandbox", "none", "--dask", address, "-o", str(tmp_path / "m"), "--quiet"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            env=env)
    db = tmp_path / "m" / "results.sqlite"

    def stored() -> bool:
        assert proc.poll() is None, proc.stderr.read()[-3000:]
        if not db.exists():  # (connecting would create it under the coordinator's feet)
            return False
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
                return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] > 0
        except sqlite3.OperationalError:
            return False

    try:
        wait_until(stored, 180, "the match stored no game")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


@pytest.mark.slow
def test_a_run_that_ends_leaves_no_plugin_on_the_scheduler(cluster, tmp_path):
    bot = write_talker(tmp_path / "bot")
    done = arena("match", "random", "--cmd", f"python3 {bot}", "--games", 2, "--sandbox", "none", "--dask",
                 cluster.address, "-o", tmp_path / "m", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert registered(cluster.address) == []
    assert all(not v for v in installed(cluster.address).values())


@pytest.mark.slow
def test_a_lapsed_runs_plugin_leaves_the_scheduler_and_a_worker_that_joins_does_not_install_it(tmp_path):
    require_dask_command()
    box = PlainCluster(tmp_path / "cluster", hide=[], workers=1).start()
    try:
        killed_coordinator(tmp_path, box.address, lease_s=2)
        wait_until(lambda: registered(box.address) == [], 60,
                   f"the scheduler still holds the lapsed run: {registered(box.address)}")
        box.add_worker("after")
        from distributed import Client

        with Client(box.address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=120)
        time.sleep(2)
        assert all(not v for v in installed(box.address).values()), installed(box.address)
    finally:
        box.stop()


@pytest.mark.slow
def test_a_cleaned_runs_plugin_leaves_the_scheduler_and_a_worker_that_joins_does_not_install_it(tmp_path):
    require_dask_command()
    box = PlainCluster(tmp_path / "cluster", hide=[], workers=1).start()
    try:
        killed_coordinator(tmp_path, box.address, lease_s=None)  # the lease holds for 120 s
        assert len(registered(box.address)) == 1
        cleaned = arena("cluster", "clean", box.address, "--all", cwd=tmp_path, timeout=120)
        assert cleaned.returncode == 0, cleaned.stderr[-3000:]
        assert "scheduler: forgot arena-run-" in cleaned.stdout, cleaned.stdout
        assert registered(box.address) == []
        box.add_worker("after")
        from distributed import Client

        with Client(box.address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=120)
        assert all(not v for v in installed(box.address).values()), installed(box.address)
    finally:
        box.stop()


@pytest.mark.slow
def test_a_worker_that_joins_after_a_run_lapsed_with_no_worker_does_not_set_it_up(tmp_path):
    require_dask_command()
    from distributed import Client

    from arena.cluster.worker import ArenaWorker, stamp_lease

    box = PlainCluster(tmp_path / "cluster", hide=[], workers=0).start()
    try:
        name = "arena-run-0123456789abcdef"
        with Client(box.address, timeout="30s") as client:
            stamp_lease(client, name, 1.0)  # the run's coordinator stamped its lease, then died
            client.register_plugin(ArenaWorker(name, 1.0), name=name)
        time.sleep(2)  # no worker saw it lapse
        assert registered(box.address) == [name]
        box.add_worker("after")
        with Client(box.address, timeout="30s") as client:
            client.wait_for_workers(1, timeout=120)
        wait_until(lambda: registered(box.address) == [], 60, "the scheduler still holds the lapsed run")
        assert all(not v for v in installed(box.address).values()), installed(box.address)
    finally:
        box.stop()
