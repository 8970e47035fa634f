"""Bot processes reused across games: nothing leaks from one game into the next."""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from arena.process.pool import ProcessPool
from arena.referee import play_game

PROBE = str(Path(__file__).parent / "bots" / "reuse_probe.py")


def probe_seat(log: Path, name: str = "probe", **options) -> dict:
    return {"name": name, "cmd": [sys.executable, PROBE, str(log)], "options": options}


def pass_seat() -> dict:
    return {"name": "pass", "bot": "pass"}


def request(seats: list, seed: int = 1, **extra) -> dict:
    return {"seats": seats, "seed": seed, "sandbox": "none", "time_control": {"move_ms": 5000}, **extra}


def hellos(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture
def probe_log():
    """A file the probe may write: run as root, the arena starts every bot as an unprivileged
    user of its own, which cannot enter pytest's private temporary folders."""
    folder = Path(tempfile.mkdtemp(prefix="arena-probe-"))
    folder.chmod(0o777)
    yield folder / "probe.log"
    shutil.rmtree(folder, ignore_errors=True)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_reused_bot_gets_a_fresh_hello_with_its_new_seat(probe_log):
    log = probe_log
    pool = ProcessPool()
    try:
        first = play_game(request([probe_seat(log), pass_seat()], seed=1), pool)
        second = play_game(request([pass_seat(), probe_seat(log)], seed=2), pool)
    finally:
        pool.close()
    seen = hellos(log)
    assert [h["seat"] for h in seen] == [0, 1]
    assert [h["game"] for h in seen] == [1, 2]
    assert seen[0]["pid"] == seen[1]["pid"]  # the same process
    assert seen[1]["id"] > seen[0]["id"]  # ids keep increasing on a process (docs/protocol.md)
    assert first["seats"][0]["faults"] == [] and second["seats"][1]["faults"] == []
    assert second["seats"][1]["moves"] > 0  # it played the second game for real
    assert pool.stats["reused"] == 2 and pool.stats["started"] == 2  # the probe and the pass bot
    assert gone(seen[0]["pid"])  # closing the pool kills it


def test_a_bot_that_misbehaves_in_game_k_is_restarted_and_game_k_plus_1_is_clean(probe_log):
    log = probe_log
    pool = ProcessPool()
    try:
        results = [play_game(request([probe_seat(log, illegal_in_game=2), pass_seat()], seed=s), pool)
                   for s in (1, 2, 3)]
    finally:
        pool.close()
    verdicts = [[f["verdict"] for f in r["seats"][0]["faults"]] for r in results]
    assert verdicts == [[], ["illegal_action"], []]
    seen = hellos(log)
    assert [h["game"] for h in seen] == [1, 2, 1]  # game 3 is the first game of a new process
    assert seen[0]["pid"] == seen[1]["pid"] != seen[2]["pid"]
    assert pool.stats["faulted"] == 1
    assert results[2]["seats"][0]["moves"] > 0


def test_a_crash_between_games_is_charged_to_nobody(probe_log):
    log = probe_log
    pool = ProcessPool()
    try:
        results = [play_game(request([probe_seat(log, exit_after_game=1), pass_seat()], seed=s), pool)
                   for s in (1, 2)]
    finally:
        pool.close()
    assert all(r["seats"][0]["faults"] == [] for r in results)
    seen = hellos(log)
    assert seen[0]["pid"] != seen[1]["pid"] and seen[1]["game"] == 1
    assert pool.stats["died_idle"] == 1


def test_a_reused_process_that_dies_at_hello_is_replaced_without_a_fault(probe_log):
    log = probe_log
    pool = ProcessPool()
    try:
        results = [play_game(request([probe_seat(log, die_at_hello=2), pass_seat()], seed=s), pool)
                   for s in (1, 2)]
    finally:
        pool.close()
    assert results[1]["seats"][0]["faults"] == [] and results[1]["seats"][0]["moves"] > 0
    seen = hellos(log)
    assert [h["game"] for h in seen] == [1, 2, 1]  # the second hello killed it, a fresh one played
    assert pool.stats["died_idle"] == 1


def test_a_process_is_replaced_after_max_games_and_fresh_process_turns_reuse_off(probe_log):
    log = probe_log
    pool = ProcessPool()
    try:
        for s in range(5):
            play_game(request([probe_seat(log, tag="a"), probe_seat(log, "other", tag="b")], seed=s,
                              max_games_per_process=2), pool)
        for tag in "ab":  # games 1-2, 3-4 and 5 of each bot
            assert len({h["pid"] for h in hellos(log) if h["options"]["tag"] == tag}) == 3
        log.unlink()
        idle = len(pool)
        for s in range(3):
            play_game(request([probe_seat(log), probe_seat(log, "other")], seed=s, fresh_process=True), pool)
        assert len({h["pid"] for h in hellos(log)}) == 6 and len(pool) == idle
    finally:
        pool.close()


@pytest.mark.slow
def test_a_tournament_starts_each_bot_once_per_worker_and_leaves_none_behind(tmp_path, probe_log):
    from arena.tournament.config import BotEntry, TournamentConfig
    from arena.tournament.runner import run_tournament
    from engine import RuleSpec

    log = probe_log
    bots = tuple(BotEntry(n, None, (sys.executable, PROBE, str(log))) for n in ("a", "b", "c"))
    cfg = TournamentConfig(
        name="reuse", path="<test>", rules=RuleSpec.make(), seats=2, bots=bots, format="round-robin",
        format_options={}, rounds=1, games=None, seed=3, time_control={"move_ms": 5000}, fault_policy="forfeit",
        sandbox="none", concurrency=1, executor="local", address=None, play="bots", output=tmp_path / "out",
        anchor=None, replays=False, pause_idle=False)
    summary = run_tournament(cfg, progress=False, echo=lambda _t: None)
    assert summary["played"] == 6
    seen = hellos(log)
    assert len(seen) == 12 and len({h["pid"] for h in seen}) == 3  # one process per bot
    assert all(gone(pid) for pid in {h["pid"] for h in seen})
    log.unlink()
    fresh = replace(cfg, output=tmp_path / "out2", max_games_per_process=3)
    run_tournament(fresh, progress=False, echo=lambda _t: None)
    assert len({h["pid"] for h in hellos(log)}) == 3 * 2  # each bot plays 4 games: 3 + 1


def test_greedy_keeps_its_memo_across_games_and_plays_the_same_moves():
    from arena.plugins import policy
    from engine import Game, RuleSpec

    def moves(new_policy_each_game: bool) -> list:
        kept = [policy("greedy"), policy("greedy")]
        out = []
        for seed in range(6):
            pols = [policy("greedy"), policy("greedy")] if new_policy_each_game else kept
            game = Game.new(RuleSpec.make(), 2, seed, None)
            rng = random.Random(seed)
            while not game.is_over:
                action = pols[game.to_move()].choose(game, rng)
                out.append(repr(action))
                game.apply(action)
        return out, kept

    fresh, _ = moves(True)
    reused, kept = moves(False)
    assert fresh == reused
    assert kept[0].memo  # the memo was filled and carried over


def test_the_bot_process_keeps_a_reusable_policy_between_hellos():
    from bots.run import PolicyBot

    bot = PolicyBot("greedy")
    hello = {"type": "hello", "id": 1, "seat": 0, "players": 2, "seed": 1,
             "rules": {"variants": [], "params": {}}}
    bot.handle(hello)
    first = bot.policy
    bot.handle({**hello, "id": 9, "seat": 1})
    assert bot.policy is first and bot.seat == 1
