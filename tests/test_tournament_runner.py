"""The runner: schedule minus stored games, worker deaths, failures, the sprt stop, resume after kill -9."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import RuleSpec
from engine.replay import load_replay, resimulate
from arena.cli import app
from arena.errors import ArenaError
from arena.tournament.config import BotEntry, TournamentConfig, load_config
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import schedule, total_games
from arena.tournament.store import Store, StoreError
from dying import die_the_first_time

STRENGTH = {"strong": 2.0, "mid": 1.0, "weak": 0.0}


def fake_game(request: dict) -> dict:
    """A deterministic stand-in for play_game: stronger names usually rank higher."""
    names = [s["name"].split("#")[0] for s in request["seats"]]
    noise = [int(hashlib.sha256(f"{request['seed']}:{i}:{n}".encode()).hexdigest(), 16) % 1000 / 400
             for i, n in enumerate(names)]
    value = [STRENGTH.get(n, 1.0) + x for n, x in zip(names, noise)]
    order = sorted(range(len(names)), key=lambda i: -value[i])
    ranks = [0] * len(names)
    for place, i in enumerate(order):
        ranks[i] = place + 1
    return {"result": {"scores": [int(10 * v) for v in value], "ranking": ranks, "completed": [1] * len(names),
                       "rounds": 10, "adjudicated": False, "forfeited": [False] * len(names)},
            "seats": [{"name": s["name"], "faults": [], "moves": 10, "wall_ms": 1.0, "cpu_ms": 1.0, "max_move_ms": 0.2}
                      for s in request["seats"]],
            "sandbox": {"tier": "none", "protections": []}, "replay_path": None, "duration_s": 0.001,
            "rules": request["rules"], "seed": request["seed"]}


def dying_game(request: dict) -> dict:
    """Kills its worker process the first time it plays the chosen deal."""
    die_the_first_time(request)
    return fake_game(request)


def failing_game(request: dict) -> dict:
    """Raises a bug-like error for one seed."""
    if request["seed"] == int(os.environ["ARENA_TEST_SEED"]):
        raise ValueError("bug in the game function")
    return fake_game(request)


def bad_request_game(request: dict) -> dict:
    raise ArenaError("seat 'x': the program 'nope' is not on the PATH")


def config(tmp_path, bots=("strong", "mid", "weak"), seats=2, fmt="round-robin", rounds=2, games=None,
           concurrency=2, **opts) -> TournamentConfig:
    return TournamentConfig(
        name="t", path="t.yaml", rules=RuleSpec.make(), seats=seats, bots=tuple(BotEntry(b, "greedy") for b in bots),
        format=fmt, format_options=opts, rounds=rounds, games=games, seed=4, time_control={}, fault_policy="forfeit",
        sandbox="none", concurrency=concurrency, executor="local", address=None, play="bots", output=tmp_path / "out",
        anchor="weak", replays=False, pause_idle=False)


def stored_keys(cfg) -> list[str]:
    con = sqlite3.connect(Path(cfg.output) / "results.sqlite")
    return [k for (k,) in con.execute("SELECT key FROM games")]


def test_every_scheduled_game_is_stored_once(tmp_path, monkeypatch):
    import logging
    monkeypatch.setattr(logging.getLogger("arena"), "level", logging.DEBUG)
    cfg = config(tmp_path, rounds=3)
    summary = run_tournament(cfg, game_fn=fake_game, progress=False)
    assert summary["played"] == summary["stored"] == total_games(cfg) == 18
    keys = stored_keys(cfg)
    assert sorted(keys) == sorted(t.key for t in schedule(cfg))
    log = (Path(cfg.output) / "tournament.log").read_text()
    workers = {line.split()[2] for line in log.splitlines() if "arena.worker" in line}
    assert workers and all(w.startswith("ForkProcess") for w in workers)  # the workers log into one file
    again = run_tournament(cfg, game_fn=fake_game, progress=False)  # resume of a finished run
    assert again["played"] == 0 and again["stored"] == 18
    assert len(stored_keys(cfg)) == 18


def test_a_run_leaves_no_thread_or_worker_behind(tmp_path):
    import multiprocessing
    import threading
    before = set(threading.enumerate())
    cfg = config(tmp_path, rounds=1)
    t0 = time.perf_counter()
    run_tournament(cfg, game_fn=fake_game, progress=False)
    assert set(threading.enumerate()) <= before  # the log's receiving thread ended with the run
    assert multiprocessing.active_children() == []
    assert time.perf_counter() - t0 < 5


def test_a_run_stopped_half_way_continues_with_the_rest(tmp_path):
    small = config(tmp_path, games=8, rounds=None)
    run_tournament(small, game_fn=fake_game, progress=False)
    assert len(stored_keys(small)) == 8
    grown = run_tournament(replace(small, games=20), game_fn=fake_game, progress=False)  # a schedule may grow
    assert grown["played"] == 12 and len(stored_keys(small)) == 20
    with pytest.raises(StoreError, match="different tournament"):
        run_tournament(replace(small, games=20, seed=small.seed + 1), game_fn=fake_game, progress=False)


def test_a_dead_worker_gets_its_game_rescheduled_and_reported(tmp_path, monkeypatch):
    cfg = config(tmp_path, rounds=2)
    victim = next(t for t in schedule(cfg) if t.group == 1)
    monkeypatch.setenv("ARENA_TEST_MARKER", str(tmp_path / "marker"))
    monkeypatch.setenv("ARENA_TEST_SEED", str(victim.seed))
    seen = []
    summary = run_tournament(cfg, game_fn=dying_game, progress=False, echo=seen.append)
    assert (tmp_path / "marker").exists()
    assert summary["worker_deaths"] == 1 and summary["stored"] == total_games(cfg)
    assert sorted(stored_keys(cfg)) == sorted(t.key for t in schedule(cfg))
    assert any("worker process" in line and "died (exit code 9)" in line for line in seen)
    store = Store.open(cfg.output, create=False)
    assert victim.key in store.events("worker-died")[0]["detail"]


def test_a_failing_game_is_reported_and_retried_next_run(tmp_path, monkeypatch):
    cfg = config(tmp_path, rounds=1)
    victim = next(iter(schedule(cfg)))
    monkeypatch.setenv("ARENA_TEST_SEED", str(victim.seed))
    summary = run_tournament(cfg, game_fn=failing_game, progress=False, echo=lambda _t: None)
    assert summary["failed"] == 2 and summary["stored"] == 4  # both rotations of that deal
    store = Store.open(cfg.output, create=False)
    assert "bug in the game function" in store.events("game-failed")[0]["detail"]
    store.close()
    summary = run_tournament(cfg, game_fn=fake_game, progress=False)
    assert summary["played"] == 2 and summary["stored"] == 6


def test_a_bad_request_stops_the_tournament_with_a_sentence(tmp_path):
    with pytest.raises(ArenaError, match="cannot be played: seat 'x'.*the tournament stops"):
        run_tournament(config(tmp_path), game_fn=bad_request_game, progress=False)


def test_sprt_stops_when_it_decides(tmp_path):
    cfg = config(tmp_path, bots=("strong", "weak"), fmt="sprt", rounds=None, games=2000, candidate="strong",
                 baseline="weak", elo0=0.0, elo1=20.0, alpha=0.05, beta=0.05)
    summary = run_tournament(cfg, game_fn=fake_game, progress=False, echo=lambda _t: None)
    assert summary["sprt"]["decision"] == "H1"
    assert summary["stored"] < 400
    store = Store.open(cfg.output, create=False)
    assert json.loads(store.meta("sprt_decision"))["decision"] == "H1"
    store.close()
    again = run_tournament(cfg, game_fn=fake_game, progress=False)
    assert again["played"] == 0  # already decided: nothing more to play


@pytest.mark.parametrize("seats", [3, 4])
def test_sprt_at_more_seats_plays_the_candidate_against_baseline_copies(tmp_path, seats):
    cfg = config(tmp_path, bots=("strong", "weak"), seats=seats, fmt="sprt", rounds=None, games=4000,
                 candidate="strong", baseline="weak", elo0=0.0, elo1=20.0, alpha=0.05, beta=0.05)
    summary = run_tournament(cfg, game_fn=fake_game, progress=False, echo=lambda _t: None)
    assert summary["sprt"]["decision"] == "H1"


def test_inprocess_games_write_replays_that_resimulate(tmp_path):
    cfg = replace(config(tmp_path, bots=("greedy", "random"), rounds=1), play="inprocess", replays=True,
                  bots=(BotEntry("greedy", "greedy"), BotEntry("random", "random")))
    run_tournament(cfg, progress=False)
    store = Store.open(cfg.output, create=False)
    paths = [p for (p,) in store.conn.execute("SELECT replay_path FROM games")]
    assert len(paths) == 2
    for p in paths:
        record = load_replay(p)
        resimulate(record)
        assert record["bots"] in (["greedy", "random"], ["random", "greedy"])


ARENA = shutil.which("arena")


@pytest.mark.slow
@pytest.mark.skipif(ARENA is None, reason="the arena command is not installed")
def test_resume_after_kill_9_stores_exactly_the_schedule(tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: k
        bots: [greedy, random, {{name: greedy-b, bot: greedy}}]
        rounds: 60
        seed: 2
        concurrency: 2
        replays: false
        executor: inprocess
        output: {tmp_path / 'out'}
        """))
    db = tmp_path / "out" / "results.sqlite"
    proc = subprocess.Popen([ARENA, "run", str(path), "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 180
    count = 0
    while time.time() < deadline and proc.poll() is None:
        try:
            # read-only: a plain connect would create an empty results.sqlite, which the run refuses
            count = sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("SELECT COUNT(*) FROM games").fetchone()[0]
        except sqlite3.Error:
            count = 0
        if count >= 20:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed; make it longer"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = sqlite3.connect(db).execute("SELECT COUNT(*) FROM games").fetchone()[0]
    assert 20 <= killed_at < 360
    done = subprocess.run([ARENA, "run", str(path), "--no-progress", "--json"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["played"] == 360 - killed_at and summary["stored"] == 360
    con = sqlite3.connect(db)
    keys = [k for (k,) in con.execute("SELECT key FROM games")]
    expected = {t.key for t in schedule(load_config(path))}
    assert len(keys) == len(set(keys)) == 360 and set(keys) == expected
    assert con.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 720
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_cli_run_and_standings_json_and_csv(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("name: c\nbots: [greedy, random]\nrounds: 2\nexecutor: inprocess\nreplays: false\n"
                    "output: elsewhere\n")
    out = tmp_path / "o"
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(path), "--output", str(out), "--no-progress", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "4 games played" in result.output and "bradley-terry" in result.output
    result = runner.invoke(app, ["standings", str(out), "--json"])
    data = json.loads(result.stdout)
    rows = {r["bot"]: r for r in data["standings"]}
    assert rows["greedy"]["games"] == rows["random"]["games"] == 4
    assert data["ratings"]["anchor"] == "random" and rows["random"]["elo"] == 0.0
    result = runner.invoke(app, ["standings", str(out), "--csv"])
    assert result.output.splitlines()[0].startswith("bot,games,points,points_per_game")
    assert len(result.output.splitlines()) == 3
    result = runner.invoke(app, ["standings", str(tmp_path / "none")])
    assert result.exit_code == 2 and "no tournament results here" in result.output


@pytest.mark.slow
def test_games_through_the_referee_store_faults_and_timings(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: r
        bots:
          - random
          - {{name: crasher, cmd: ["{sys.executable}", "-c", "import sys; sys.exit(3)"]}}
        rounds: 1
        time_control: {{move_ms: 3000}}
        output: {tmp_path / 'out'}
        """))
    cfg = load_config(path)
    summary = run_tournament(cfg, progress=False)
    assert summary["stored"] == 2
    store = Store.open(cfg.output, create=False)
    assert store.fault_counts()["crasher"] == {"crash": 2}
    rows = store.conn.execute("SELECT bot, rank, moves, wall_ms FROM seats ORDER BY bot").fetchall()
    assert [(b, r) for b, r, _, _ in rows] == [("crasher", 2), ("crasher", 2), ("random", 1), ("random", 1)]
    assert all(w is not None for _, _, _, w in rows)
    replays = [p for (p,) in store.conn.execute("SELECT replay_path FROM games")]
    assert all(Path(p).exists() for p in replays)
