"""The cluster a user who outgrows one machine expects: workers that join mid-run play,
a coordinator killed and never resumed leaves nothing on the workers once its lease
lapses, a lost scheduler is one sentence (and the run resumes), and a bot's last words
after ``game_over`` reach the coordinator's log files.

Real ``dask scheduler`` and ``dask worker`` processes, each worker in a box that sees
nothing of the coordinator (``cluster_box.py``).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cluster_box import BoxedCluster, require_box, wait_nothing_left, worker_leftovers

distributed = pytest.importorskip("distributed")

#: a bot of the standard library: random legal moves, a little slowly (so a run lasts a few
#: seconds), and a line on stderr after every game_over
SLOWBOT = '''\
import json, random, sys, time
rng = random.Random(1)
games = 0
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "quit":
        break
    if kind == "hello":
        print(json.dumps({"type": "ready", "id": msg["id"], "name": "slowbot", "version": "1",
                          "legal_actions": True}), flush=True)
    elif kind == "game_over":
        games += 1
        time.sleep(0.01)
        sys.stderr.write(f"after game_over {games}\\n")
        sys.stderr.flush()
    elif "legal" in msg:
        time.sleep(DELAY)
        print(json.dumps({"id": msg["id"], "action": rng.choice(msg["legal"])}), flush=True)
'''


def write_bot(folder: Path, delay: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    bot = folder / "slowbot.py"
    bot.write_text(f"DELAY = {delay}\n" + SLOWBOT)
    return bot


def tournament(folder: Path, bot: Path, output: Path, address: str, rounds: int) -> Path:
    path = folder / f"{output.name}.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: elastic
        seats: 2
        bots:
          - random
          - {{name: slowbot, cmd: python3 {bot}}}
          - greedy
        rounds: {rounds}
        seed: 9
        time_control: {{move_ms: 5000, startup_ms: 30000}}
        executor: {{type: dask, address: {address}}}
        output: {str(output)!r}
    """))
    return path


def stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def wait_stored(db: Path, n: int, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while stored(db) < n:
        assert proc.poll() is None, f"the run ended early ({proc.returncode})"
        assert time.monotonic() < deadline, f"fewer than {n} games after {timeout} s"
        time.sleep(0.2)


def coordinator(path: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    require_box()
    src = tmp_path_factory.mktemp("bots")
    out = tmp_path_factory.mktemp("out")
    cluster = BoxedCluster(tmp_path_factory.mktemp("cluster"), hide=[src, out], workers=1).start()
    try:
        yield {"cluster": cluster, "src": src, "out": out}
    finally:
        cluster.stop()


def client_of(box):
    from distributed import Client

    return Client(box["cluster"].address, timeout="30s")


@pytest.mark.slow
def test_a_worker_that_joins_mid_run_plays_games_and_the_run_says_so(box):
    bot = write_bot(box["src"] / "slow", 0.002)
    # more games than one worker's tasks in flight hold (3 tasks of up to 16 games)
    path = tournament(box["src"], bot, box["out"] / "join", box["cluster"].address, rounds=20)
    db = box["out"] / "join" / "results.sqlite"
    proc = coordinator(path)
    wait_stored(db, 3, proc)
    box["cluster"].add_worker("late")
    with client_of(box) as client:
        client.wait_for_workers(2, timeout=120)
        late = next(a for a, w in client.scheduler_info()["workers"].items() if w.get("name") == "late")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    with sqlite3.connect(db) as conn:
        workers = [w for (w,) in conn.execute("SELECT worker FROM games")]
    assert len(workers) == 120
    assert sum(late in w for w in workers) >= 20, workers  # the late worker played its share
    assert "the cluster has 1 worker (1 thread)" in err and "the cluster has 2 workers (2 threads)" in err, err


@pytest.mark.slow
def test_a_bots_lines_after_game_over_reach_the_coordinators_logs(box):
    bot = write_bot(box["src"] / "talker", 0.0)
    path = tournament(box["src"], bot, box["out"] / "talk", box["cluster"].address, rounds=4)
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    logs = sorted((box["out"] / "talk" / "logs").glob("*slowbot*.stderr.log"))
    # slowbot's games: 2 pairs of rotations x 4 rounds; a log is made at its bot's first
    # byte, so a game whose line went to the next game's log (below) has no file
    assert 1 <= len(logs) <= 16, [p.name for p in logs]
    # every game's line is in a log: its own game's, or (a pooled process that began its
    # next game first) the next game's, as in the log files of a local run
    lines = sorted(ln for p in logs for ln in p.read_text().splitlines() if ln.startswith("after game_over"))
    assert len(lines) == 16, lines


@pytest.mark.slow
def test_a_coordinator_killed_and_never_resumed_leaves_nothing_after_its_lease(box):
    bot = write_bot(box["src"] / "lease", 0.004)
    path = tournament(box["src"], bot, box["out"] / "lease", box["cluster"].address, rounds=20)
    proc = coordinator(path, {"ARENA_CLUSTER_LEASE_S": "3"})
    wait_stored(box["out"] / "lease" / "results.sqlite", 4, proc)
    with client_of(box) as client:
        before = client.run(worker_leftovers)
        assert any(v["children"] for v in before.values()), before  # bots live on the workers
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    wait_nothing_left(box["cluster"].address, timeout=60)  # the lease lapses after 3 s

    def runs_left() -> list:
        status = subprocess.run([sys.executable, "-m", "arena.cli", "cluster", "status", box["cluster"].address,
                                 "--json"], capture_output=True, text=True, timeout=120)
        assert status.returncode == 0, status.stderr
        return [r for w in json.loads(status.stdout).values() for r in w["runs"]]

    # the scheduler forgets the lapsed run too: no worker keeps its plugin, none that joins gets it
    deadline = time.monotonic() + 60
    while runs_left():
        assert time.monotonic() < deadline, runs_left()
        time.sleep(0.5)
    cleaned = subprocess.run([sys.executable, "-m", "arena.cli", "cluster", "clean", box["cluster"].address],
                             capture_output=True, text=True, timeout=120)
    assert cleaned.returncode == 0 and "removed 0 run(s)" in cleaned.stdout, cleaned.stdout + cleaned.stderr


@pytest.mark.slow
def test_a_lost_scheduler_is_one_sentence_and_the_run_resumes(tmp_path_factory):
    require_box()
    src = tmp_path_factory.mktemp("bots")
    out = tmp_path_factory.mktemp("out")
    bot = write_bot(src / "slow", 0.004)
    cluster = BoxedCluster(tmp_path_factory.mktemp("cluster"), hide=[src, out], workers=1).start()
    try:
        path = tournament(src, bot, out / "lost", cluster.address, rounds=4)
        db = out / "lost" / "results.sqlite"
        proc = coordinator(path)
        wait_stored(db, 3, proc)
        scheduler = cluster.procs[0]
        os.killpg(scheduler.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=180)
    finally:
        cluster.stop()
    assert proc.returncode not in (0, None), err[-3000:]
    assert "lost the dask scheduler" in err and "Traceback" not in err, err[-3000:]
    assert len(err.strip().splitlines()) < 30, err
    with sqlite3.connect(db) as conn:
        events = [k for (k,) in conn.execute("SELECT kind FROM events")]
    assert "scheduler-lost" in events and "worker-died" not in events, events
    # a new scheduler: the same command continues, nothing played twice
    again = BoxedCluster(tmp_path_factory.mktemp("cluster2"), hide=[src, out], workers=1).start()
    try:
        path.write_text(path.read_text().replace(cluster.address, again.address))
        done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(path), "--no-progress"],
                              capture_output=True, text=True, timeout=600)
    finally:
        again.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(db) as conn:
        keys = [k for (k,) in conn.execute("SELECT key FROM games")]
    assert len(keys) == len(set(keys)) == 24


@pytest.mark.slow
def test_an_experiment_of_bot_processes_starts_each_bot_once_per_worker(box):
    import re

    from test_experiment_processes import PIDBOT

    folder = box["src"] / "pids"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "pidbot.py").write_text(PIDBOT)
    path = box["src"] / "exp.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: reuse
        seats: 2
        bots:
          - random
          - {{name: pidbot, cmd: python3 {folder / 'pidbot.py'}}}
        games: 12
        seed: 2
        time_control: {{move_ms: 5000, startup_ms: 30000}}
        executor: {{type: dask, address: {box['cluster'].address}, play: bots}}
        output: {str(box['out'] / 'exp')!r}
        rule_sets:
          - {{name: base}}
          - {{name: short, params: {{max_rounds: 6}}}}
    """))
    done = subprocess.run([sys.executable, "-m", "arena.cli", "experiment", str(path), "--no-progress"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # pidbot writes one line when it starts and nothing after: a log is made at its bot's
    # first byte, so the logs are its starts (as in a local run)
    logs = list((box["out"] / "exp").rglob("*pidbot*.log"))
    found = [m for p in logs for m in re.findall(r"started (\d+)", p.read_text())]
    assert len(found) == len(logs) >= 1, sorted(p.name for p in logs)
    pids = set(found)
    with client_of(box) as client:
        workers = len(client.scheduler_info()["workers"])
    # once per worker (and per rule set's log folder), never once per game
    assert 1 <= len(pids) <= 2 * workers, pids
