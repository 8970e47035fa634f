"""The Dask executor on a LocalCluster of worker processes gives the local pool's results."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine import RuleSpec
from arena.tournament.config import BotEntry, TournamentConfig
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import total_games
from arena.tournament.store import Store
from dying import die_the_first_time

distributed = pytest.importorskip("distributed")


def config(output: Path) -> TournamentConfig:
    return TournamentConfig(
        name="d", path="d.yaml", rules=RuleSpec.make(), seats=2,
        bots=(BotEntry("greedy", "greedy"), BotEntry("random", "random"), BotEntry("greedy-b", "greedy")),
        format="round-robin", format_options={}, rounds=2, games=None, seed=8, time_control={},
        fault_policy="forfeit", sandbox="none", concurrency=2, executor="local", address=None, play="inprocess",
        output=output, anchor="random", replays=True, pause_idle=False)


def results(output: Path) -> dict:
    store = Store.open(output, create=False)
    try:
        return {g["key"]: [(s["bot"], s["score"], s["rank"]) for s in g["seats"]] for g in store.games()}
    finally:
        store.close()


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_results_as_the_local_pool(tmp_path):
    from distributed import Client, LocalCluster

    local = config(tmp_path / "local")
    run_tournament(local, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        cfg = replace(config(tmp_path / "dask"), executor="dask", address=cluster.scheduler_address)
        summary = run_tournament(cfg, progress=False)
        assert summary["played"] == total_games(cfg) == 12
        with Client(cluster) as client:
            workers = set(client.scheduler_info()["workers"])
    assert len(workers) == 2
    assert results(tmp_path / "dask") == results(tmp_path / "local")
    store = Store.open(tmp_path / "dask", create=False)
    hosts = {w for (w,) in store.conn.execute("SELECT worker FROM games")}
    assert len(hosts) >= 1 and all(":" in h for h in hosts)
    assert all(Path(p).exists() for (p,) in store.conn.execute("SELECT replay_path FROM games"))


def dying_game(request: dict) -> dict:
    """Kills its Dask worker process the first time it plays the chosen deal."""
    from arena.execution.inprocess import play_inprocess

    die_the_first_time(request)
    return play_inprocess(request)


def run_with_a_dying_worker(tmp_path, monkeypatch, victim: int, allowed_failures: int | None = None):
    """Play the tournament on a LocalCluster where the game of deal ``victim`` kills its worker once."""
    import contextlib

    import dask
    from distributed import LocalCluster

    from arena.tournament.schedule import schedule

    cfg = replace(config(tmp_path / "dask"), executor="dask", replays=False)
    deal = list(schedule(cfg))[victim].seed
    monkeypatch.setenv("ARENA_TEST_MARKER", str(tmp_path / "died"))
    monkeypatch.setenv("ARENA_TEST_SEED", str(deal))
    settings = ({"distributed.scheduler.allowed-failures": allowed_failures} if allowed_failures is not None else {})
    with dask.config.set(settings) if settings else contextlib.nullcontext():
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            cfg = replace(cfg, address=cluster.scheduler_address)
            summary = run_tournament(cfg, game_fn=dying_game, progress=False)
    assert (tmp_path / "died").exists()  # the worker did die
    assert sorted(results(tmp_path / "dask")) == sorted(t.key for t in schedule(cfg))  # every game once
    assert summary["played"] == summary["stored"] == total_games(cfg) and summary["failed"] == 0
    return summary, [t.key for t in schedule(cfg) if t.seed == deal]  # a group's games share the deal


@pytest.mark.slow
def test_a_dask_worker_death_is_reported_and_its_game_played_again(tmp_path, monkeypatch):
    summary, same_deal = run_with_a_dying_worker(tmp_path, monkeypatch, victim=3)
    assert summary["worker_deaths"] >= 1
    store = Store.open(tmp_path / "dask", create=False)
    try:
        events = store.events("worker-died")
    finally:
        store.close()
    assert any(k in e["detail"] and "dask worker" in e["detail"] for e in events for k in same_deal), events


@pytest.mark.slow
def test_a_game_that_kills_its_worker_past_allowed_failures_is_rescheduled_by_the_coordinator(tmp_path, monkeypatch):
    summary, _ = run_with_a_dying_worker(tmp_path, monkeypatch, victim=5, allowed_failures=0)  # death = KilledWorker
    assert summary["worker_deaths"] == 1  # one death, reported once (not again for the KilledWorker)
