"""Every workload on a real Dask cluster whose workers see nothing of the coordinator.

A ``dask scheduler`` and two ``dask worker`` processes run on 127.0.0.1, each worker in its
own mount namespace (bubblewrap) with a private ``/tmp`` and no view of the coordinator's
output folder or of the bots' source folder (see ``cluster_box.py``). A tournament of bot
processes -- one of them a command-line bot that reads a data file from its own folder --
and an experiment of two rule sets give the same games (seeds, moves, results) as on
local workers; the replays and logs land in the coordinator's folder; nothing is left on
the workers. A worker killed mid-run and a coordinator killed mid-run lose and duplicate
nothing.
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

from cluster_box import BoxedCluster, require_box, wait_nothing_left

distributed = pytest.importorskip("distributed")

DATABOT = '''\
"""Plays a seeded random legal action; its stride comes from data.json beside it."""
import json, os, random, sys

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "data.json")) as f:
    stride = json.load(f)["stride"]
rng = random.Random(0)
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "quit":
        break
    if kind == "hello":
        rng = random.Random(msg["seed"] * stride)
        print(json.dumps({"type": "ready", "id": msg["id"], "name": "databot", "version": str(stride),
                          "legal_actions": True}), flush=True)
    elif kind == "game_over":
        continue
    elif "legal" in msg:
        sys.stderr.write("move\\n")
        print(json.dumps({"id": msg["id"], "action": rng.choice(msg["legal"])}), flush=True)
'''


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    require_box()
    src = tmp_path_factory.mktemp("bot-src")
    out = tmp_path_factory.mktemp("coordinator-out")
    bot = src / "databot"
    bot.mkdir()
    (bot / "bot.py").write_text(DATABOT)
    (bot / "data.json").write_text(json.dumps({"stride": 7}))
    (out / "sentinel").write_text("the coordinator's")
    cluster = BoxedCluster(tmp_path_factory.mktemp("cluster"), hide=[src, out]).start()
    try:
        yield {"cluster": cluster, "src": src, "out": out, "bot": bot}
    finally:
        cluster.stop()


def tournament_yaml(folder: Path, bot: Path, output: Path, executor: str, rounds: int = 2) -> Path:
    path = folder / f"t-{output.name}.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: boxed
        seats: 2
        bots:
          - greedy
          - random
          - name: databot
            cmd: [{sys.executable!r}, {str(bot / 'bot.py')!r}]
        format: round-robin
        rounds: {rounds}
        seed: 5
        time_control: {{move_ms: 5000, startup_ms: 20000}}
        concurrency: 2
        executor: {executor}
        output: {str(output)!r}
        replays: true
        """))
    return path


def games(output: Path) -> dict:
    """Each stored game: its seed, seats (bot, score, rank, moves), and the replay's actions."""
    conn = sqlite3.connect(output / "results.sqlite")
    try:
        rows = conn.execute("SELECT g.key, g.seed, g.replay_path, s.seat, s.bot, s.score, s.rank, s.moves "
                            "FROM games g JOIN seats s ON s.game_id = g.id ORDER BY g.key, s.seat").fetchall()
        keys = [k for (k,) in conn.execute("SELECT key FROM games")]
    finally:
        conn.close()
    assert len(keys) == len(set(keys))
    out: dict = {}
    for key, seed, replay, seat, bot, score, rank, moves in rows:
        g = out.setdefault(key, {"seed": seed, "seats": [], "actions": None})
        g["seats"].append((bot, score, rank, moves))
        if replay and g["actions"] is None:
            doc = json.loads(Path(replay).read_text())
            g["actions"] = doc.get("actions") or doc.get("history")
    return out


def client_of(box):
    from distributed import Client

    return Client(box["cluster"].address, timeout="30s")


def assert_nothing_left(box) -> None:
    wait_nothing_left(box["cluster"].address)


def test_the_workers_cannot_see_the_coordinator(box):
    with client_of(box) as client:
        seen = client.run(lambda paths: [os.path.exists(p) for p in paths], [str(box["bot"] / "data.json"),
                                                                             str(box["out"] / "sentinel")])
    assert len(seen) == 2 and all(v == [False, False] for v in seen.values()), seen


@pytest.mark.slow
def test_a_tournament_of_bot_processes_gives_the_local_games(box):
    from arena.tournament.config import load_config
    from arena.tournament.runner import run_tournament

    root = box["out"]
    local = load_config(tournament_yaml(root, box["bot"], root / "local", "local"))
    run_tournament(local, progress=False, echo=lambda _t: None)
    remote = load_config(tournament_yaml(root, box["bot"], root / "dask",
                                         f"{{type: dask, address: {box['cluster'].address}}}"))
    summary = run_tournament(remote, progress=False, echo=lambda _t: None)
    assert summary["played"] == summary["stored"] == 12 and summary["failed"] == 0
    here, there = games(root / "local"), games(root / "dask")
    assert there == here
    assert all(g["actions"] for g in there.values())
    conn = sqlite3.connect(root / "dask" / "results.sqlite")
    workers = {w for (w,) in conn.execute("SELECT worker FROM games")}
    sandboxes = {json.loads(s)["tier"] for (s,) in conn.execute("SELECT sandbox FROM games")}
    ready = conn.execute("SELECT v FROM meta WHERE k = 'ready:databot'").fetchone()
    conn.close()
    assert any("box" in w or "tcp://127.0.0.1" in w for w in workers), workers
    assert sandboxes == {"strict"}
    assert json.loads(ready[0]) == {"name": "databot", "version": "7"}
    logs = sorted((root / "dask" / "logs").glob("*databot*.stderr.log"))
    assert len(logs) == 8 and all(p.read_text().startswith("move") for p in logs)
    assert sorted(p.name for p in logs) == sorted(p.name for p in (root / "local" / "logs").glob("*databot*"))
    assert_nothing_left(box)


@pytest.mark.slow
def test_an_experiment_of_two_rule_sets_gives_the_local_rows(box):
    from arena.experiment import load_experiment, run_experiment

    root = box["out"]

    def experiment(name: str, executor: str):
        path = root / f"{name}.yaml"
        path.write_text(textwrap.dedent(f"""\
            name: exp
            seats: 2
            bots: [greedy, random]
            games: 6
            seed: 3
            concurrency: 2
            executor: {executor}
            output: {str(root / name)!r}
            replays: true
            rule_sets:
              - {{name: revised, variants: [revised]}}
              - {{name: four, variants: [revised], params: {{actions_per_turn: 4}}}}
            """))
        return load_experiment(path)

    here = run_experiment(experiment("exp-local", "inprocess"), progress=False, echo=lambda _t: None)
    there = run_experiment(experiment("exp-dask", f"{{type: dask, address: {box['cluster'].address}, "
                                                  f"play: inprocess}}"), progress=False, echo=lambda _t: None)

    def same(rows):
        return [{k: v for k, v in r.items() if k not in ("duration_s", "replay")} for r in rows]

    assert len(there["rows"]) == 12 and not there["failed"]
    assert same(there["rows"]) == same(here["rows"])
    assert all(Path(r["replay"]).is_file() for r in there["rows"])
    assert_nothing_left(box)


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(box):
    from arena.tournament.config import load_config
    from arena.tournament.runner import run_tournament

    root = box["out"]
    local = load_config(tournament_yaml(root, box["bot"], root / "kw-local", "local"))
    run_tournament(local, progress=False, echo=lambda _t: None)
    with client_of(box) as client:
        pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    state = {"n": 0}

    def on_game(task, outcome):
        state["n"] += 1
        if state["n"] == 3:
            os.kill(victim, signal.SIGKILL)

    cfg = load_config(tournament_yaml(root, box["bot"], root / "kw-dask",
                                      f"{{type: dask, address: {box['cluster'].address}}}"))
    summary = run_tournament(cfg, progress=False, echo=lambda _t: None, on_game=on_game)
    assert summary["stored"] == 12 and summary["failed"] == 0
    assert games(root / "kw-dask") == games(root / "kw-local")
    with client_of(box) as client:
        client.wait_for_workers(2, timeout=120)  # the nanny started a new worker process
    assert_nothing_left(box)


@pytest.mark.slow
def test_a_coordinator_killed_mid_run_loses_and_duplicates_nothing(box):
    from arena.tournament.config import load_config
    from arena.tournament.runner import run_tournament

    root = box["out"]
    # 60 games: enough that the kill, soon after the fourth is stored, lands mid-run
    local = load_config(tournament_yaml(root, box["bot"], root / "kc-local", "local", rounds=10))
    run_tournament(local, progress=False, echo=lambda _t: None)
    path = tournament_yaml(root, box["bot"], root / "kc-dask", f"{{type: dask, address: {box['cluster'].address}}}",
                           rounds=10)
    db = root / "kc-dask" / "results.sqlite"
    proc = subprocess.Popen(["arena", "run", str(path), "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    stored = 0
    while stored < 4:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=5) as conn:
                    stored = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            except sqlite3.OperationalError:
                pass
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] < 60
    done = subprocess.run(["arena", "run", str(path), "--no-progress"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert games(root / "kc-dask") == games(root / "kc-local")
    assert_nothing_left(box)


@pytest.mark.slow
def test_a_league_round_gives_the_local_games(box):
    from arena.league import League

    root = box["out"]
    cmd = f"{sys.executable} {box['bot'] / 'bot.py'}"

    def league(name: str, *extra: str) -> list[dict]:
        path = root / f"{name}.db"
        for argv in (["league", "new", str(path), "--seed", "4", "--move-ms", "5000"],
                     ["league", "add", str(path), "greedy", "--bot", "greedy"],
                     ["league", "add", str(path), "random", "--bot", "random"],
                     ["league", "add", str(path), "databot", "--cmd", cmd, "--no-check"],
                     ["league", "add", str(path), "greedy@2", "--bot", "greedy"],
                     ["league", "play", str(path), "--games", "200", "--no-progress", "-q", *extra]):
            done = subprocess.run(["arena", *argv], capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr
        with League.open(path) as lg:
            return [{k: g[k] for k in ("group", "rotation", "seed", "rounds", "adjudicated", "seats")}
                    for g in lg.games()]

    here = league("ladder-local")
    there = league("ladder-dask", "--dask", box["cluster"].address)
    # 200 games: far past the groups planned before any result (the tables then follow the
    # ratings of stored results, never the order in which games came back)
    assert len(there) == 200 and sorted(there, key=lambda g: (g["group"], g["rotation"])) == \
        sorted(here, key=lambda g: (g["group"], g["rotation"]))
    assert any(s["bot"] == "databot" for g in there for s in g["seats"])
    assert_nothing_left(box)


@pytest.mark.slow
def test_arena_serves_background_play_on_the_cluster(box):
    from engine import RuleSpec

    from arena.league import League
    from arena.web.player import Player, replays_dir
    from arena.web.submissions import Settings

    root = box["out"]
    path = root / "served.db"
    with League.create(path, RuleSpec(), 2) as league:
        league.add("greedy", bot="greedy")
        league.add("databot", cmd=[sys.executable, str(box["bot"] / "bot.py")])
    from distributed import Client

    from arena.cluster.executor import DaskExecutor

    plugin = DaskExecutor(None, run=str(path.resolve())).plugin

    def pools(dask_worker):
        """The run's folder on this worker and how many bot processes its pools started."""
        mine = dask_worker.plugins.get(plugin)
        if mine is None or mine.root is None:
            return None
        return str(mine.root), sum(pool.stats["started"] for pool in list(mine.pools.values()))

    player = Player(path, settings=Settings(pace=0), dask=box["cluster"].address)
    player.start()
    seen = []
    try:
        with Client(box["cluster"].address, set_as_default=False) as client:
            deadline = time.monotonic() + 180
            while True:
                with League.open(path) as league:
                    games = league.games()
                if len(games) >= 4 and not seen:  # the first round is stored
                    seen.append(client.run(pools))
                if len(games) >= 16:  # four rounds of two groups
                    seen.append(client.run(pools))
                    break
                assert time.monotonic() < deadline and player.thread.is_alive(), player.status
                time.sleep(0.2)
    finally:
        player.stop(60)
    with League.open(path) as league:
        games = league.games()
    assert all(not s["faults"] for g in games for s in g["seats"]), games
    replays = [p for p in replays_dir(path).glob("*.json")]
    assert len(replays) >= len(games) >= 16  # written by the coordinator from each record
    # the rounds shared one plugin per worker: the same folder (the databot unpacked once)
    # and the same bot processes (two per worker at most: greedy and databot)
    first, last = seen
    assert any(state is not None for state in first.values()), first
    for worker, state in last.items():
        assert state is not None, last
        if first.get(worker) is not None:
            assert first[worker][0] == state[0], (first, last)
        assert state[1] <= 2, last
    assert_nothing_left(box)


@pytest.mark.slow
def test_a_run_stopped_with_games_in_flight_leaves_nothing_on_the_workers(box):
    from arena.tournament.config import load_config
    from arena.tournament.runner import Interrupted, run_tournament

    root = box["out"]
    cfg = load_config(tournament_yaml(root, box["bot"], root / "stopped",
                                      f"{{type: dask, address: {box['cluster'].address}}}", rounds=4))

    def ctrl_c(task, outcome):
        raise KeyboardInterrupt  # after the first game is stored: the others are in flight

    with pytest.raises(Interrupted):
        run_tournament(cfg, progress=False, echo=lambda _t: None, on_game=ctrl_c)
    assert games(root / "stopped")  # what was stored stays stored
    assert_nothing_left(box)  # the games in flight end, their bots are closed, their folder goes
