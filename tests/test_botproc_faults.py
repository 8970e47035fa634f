"""Every fault verdict with real misbehaving bot processes (``tests/bots/misbehave.py``).

Each game must finish, record the verdict, rank the faulty seat last (R7.3) under the
``forfeit`` policy, and leave no process of either bot behind.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.referee import play_game
from arena.process.sandbox import cgroup_layout
from engine.replay import load_replay, resimulate
from proc_check import assert_gone, misbehaving

SHORT = {"variants": [], "params": {"max_rounds": 3}}


def game(cmd, other=None, **kw):
    request = {"seats": [{"name": "bad", "cmd": cmd}, other or {"name": "pass", "bot": "pass"}], "seed": 5, "rules": SHORT,
               "time_control": {"move_ms": 1000, "startup_ms": 10000}, "sandbox": "basic"}
    request.update(kw)
    out = play_game(request)
    for seat in out["seats"]:
        assert_gone(seat["pid"])
    assert out["result"]["ranking"] and out["result"]["rounds"] >= 1
    return out


@pytest.mark.parametrize("mode, verdict, words", [
    ("hang", "timeout", "no reply before the deadline"),
    ("crash", "crash", "exit code 3"),
    ("segv", "crash", "SIGSEGV"),
    ("garbage", "non_json", "this is not JSON"),
    ("wrong_id", "protocol_error", "does not match the request id"),
    ("wrong_type", "protocol_error", "needs an object field 'action'"),
    ("illegal", "illegal_action", "R3.1: slot 9 is not in the row"),
    ("flood_stdout", "output_limit", "bytes without a newline"),
])
def test_each_fault_has_its_verdict_and_forfeits_the_seat(mode, verdict, words):
    out = game(misbehaving(mode))
    faults = out["seats"][0]["faults"]
    assert [f["verdict"] for f in faults] == [verdict]
    assert words in faults[0]["detail"] and faults[0]["move"] == 0
    assert out["result"]["forfeited"] == [True, False]
    assert out["result"]["ranking"] == [2, 1], "R7.3: a forfeited seat ranks last"
    assert out["seats"][1]["faults"] == []


def test_a_bot_that_sleeps_at_start_up_times_out_in_the_handshake():
    # The other seat is the misbehaving script's well-behaved mode: it starts faster than
    # any bot importing the project, so a loaded machine cannot make it miss the limit.
    out = game(misbehaving("slow_start", "30"), other={"name": "good", "cmd": misbehaving("good")},
               time_control={"move_ms": 1000, "startup_ms": 4000})
    [fault] = out["seats"][0]["faults"]
    assert fault["verdict"] == "timeout" and fault["move"] is None and "start-up limit of 4050 ms" in fault["detail"], out
    assert out["result"]["forfeited"] == [True, False], [s["faults"] for s in out["seats"]]


@pytest.mark.parametrize("cgroups", [True, False])
def test_allocating_without_bound_is_a_memory_limit_under_strict(cgroups):
    if cgroups and not cgroup_layout()[0]:
        pytest.skip("no writable cgroup hierarchy on this machine")
    out = game(misbehaving("alloc"), sandbox="strict", sandbox_options={"memory_mb": 200, "cgroups": cgroups},
               time_control={"move_ms": 5000})
    [fault] = out["seats"][0]["faults"]
    assert fault["verdict"] == "memory_limit", fault
    assert ("cgroup_memory" if cgroups else "rss_polling") in out["sandbox"]["protections"]


@pytest.mark.parametrize("time_control, fewest, most", [
    ({"move_ms": 1000, "game_ms": 500, "mode": "clock"}, 2, 4),
    ({"move_ms": 1000, "game_ms": 500, "increment_ms": 100, "mode": "clock"}, 3, 11),
    ({"move_ms": 100, "game_ms": 160, "mode": "bank"}, 2, 5),
])
def test_a_game_budget_runs_out_into_a_timeout(time_control, fewest, most):
    out = game(misbehaving("slow", "0.15"), time_control=dict(time_control, grace_ms=20),
               rules={"variants": [], "params": {"max_rounds": 6}})
    seat = out["seats"][0]
    assert [f["verdict"] for f in seat["faults"]] == ["timeout"]
    assert fewest <= seat["moves"] <= most, seat["moves"]
    assert seat["max_move_ms"] >= 150


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


@pytest.mark.parametrize("pause", [True, False])
def test_pause_idle_stops_every_bot_not_on_move(monkeypatch, pause):
    import time

    from arena.process import botproc
    bots, seen = [], []
    original_spawn, original_ask = botproc.BotProcess.spawn, botproc.BotProcess.ask

    def spawn(self):
        bots.append(self)
        return original_spawn(self)

    def paused(bot) -> str:
        """``T`` for a stopped bot, also for one whose whole cgroup the kernel reports frozen."""
        state = _state(bot.pid)
        cg = bot.launch.cgroup
        if state == "D" and cg is not None and cg._freeze is not None and \
                cg._freeze.read_text().strip() in ("FROZEN", "1"):
            return "T"
        return state

    def ask(self, message, limit_s):
        for other in bots:
            if other is not self and not other.dead:
                deadline = time.monotonic() + 0.5
                while paused(other) != "T" and pause and time.monotonic() < deadline:
                    time.sleep(0.005)
                seen.append(paused(other))
        return original_ask(self, message, limit_s)

    monkeypatch.setattr(botproc.BotProcess, "spawn", spawn)
    monkeypatch.setattr(botproc.BotProcess, "ask", ask)
    out = game(misbehaving("ponder"), pause_idle=pause, sandbox="none")
    assert out["seats"][0]["faults"] == [] and len(seen) > 10
    if pause:
        assert set(seen) == {"T"}, "a bot not on move is stopped"
    else:
        assert "T" not in seen
        assert out["seats"][0]["cpu_ms"] >= 20, "the busy thread's CPU time is counted, up to the end of the game"


def test_flooding_stderr_is_no_fault_and_the_log_is_capped(tmp_path):
    out = game(misbehaving("flood_stderr"), log_dir=str(tmp_path))
    assert out["seats"][0]["faults"] == []
    log = out["seats"][0]["stderr_log"]
    assert log and 1 << 20 <= (tmp_path / log.split("/")[-1]).stat().st_size < (1 << 20) + 200


def test_a_log_file_is_made_only_for_a_bot_that_writes_on_stderr(tmp_path):
    """The record names every seat's log; the file exists where its bot wrote something (a
    silent bot leaves none, in a new process or a pooled one), and a game played again
    under its replay's name removes what an earlier attempt left under that name."""
    from arena.process.pool import ProcessPool

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "g1-seat1-pass.stderr.log").write_text("an earlier attempt of g1\n")
    pool = ProcessPool()
    try:
        for n in (1, 2):
            out = play_game({"seats": [{"name": "bad", "cmd": misbehaving("flood_stderr")}, {"name": "pass", "bot": "pass"}],
                             "seed": 5, "rules": SHORT, "sandbox": "none", "log_dir": str(logs),
                             "replay_path": str(tmp_path / f"g{n}.json"), "sandbox_options": {"log_kb": 8}}, pool)
            flooded, quiet = (Path(s["stderr_log"]) for s in out["seats"])
            assert flooded == logs / f"g{n}-seat0-bad.stderr.log" and quiet == logs / f"g{n}-seat1-pass.stderr.log"
            if n == 1:  # a new process floods at its start
                assert 8 << 10 <= flooded.stat().st_size < (8 << 10) + 200
            assert not quiet.exists()
        assert pool.stats["reused"] == 2
    finally:
        pool.close()
    assert sorted(p.name for p in logs.iterdir()) == ["g1-seat0-bad.stderr.log"]


def test_a_game_whose_files_travel_in_its_record_writes_nothing_and_keeps_the_caps(tmp_path):
    """A Dask worker's games: the logs stay in memory (capped per bot and game) and the
    replay comes back as text; the log folder and the replay's folder are never made."""
    from arena.process.pool import ProcessPool

    logs, replays = tmp_path / "logs", tmp_path / "replays"
    pool = ProcessPool()
    try:
        for n in (1, 2):  # a new process (it floods its stderr once), then the same process reused
            out = play_game({"seats": [{"name": "bad", "cmd": misbehaving("flood_stderr")}, {"name": "pass", "bot": "pass"}],
                             "seed": 5, "rules": SHORT, "sandbox": "none", "log_dir": str(logs),
                             "replay_path": str(replays / f"g{n}.json"), "files_in_record": True,
                             "sandbox_options": {"log_kb": 64}}, pool)
            flooded, quiet = out["seats"]
            assert flooded["faults"] == [] and flooded["stderr_log"] == f"g{n}-seat0-bad.stderr.log"
            if n == 1:
                assert 64 << 10 <= len(flooded["stderr_text"].encode()) < (64 << 10) + 200
                assert "stderr log cut at 65536 bytes" in flooded["stderr_text"]
            else:  # this game's own log, not the last one's
                assert flooded["stderr_text"] == ""
            assert quiet["stderr_log"] == f"g{n}-seat1-pass.stderr.log" and quiet["stderr_text"] == ""
            assert out["replay_path"] is None and json.loads(out["replay_text"])["seats"] == ["bad", "pass"]
            assert not logs.exists() and not replays.exists()
        assert pool.stats["reused"] == 2
    finally:
        pool.close()
    # without it, the same game writes its files
    out = game(misbehaving("flood_stderr"), log_dir=str(logs), sandbox="none")
    assert "stderr_text" not in out["seats"][0] and "replay_text" not in out
    assert Path(out["seats"][0]["stderr_log"]).is_file()


@pytest.mark.parametrize("escape", ["", "escape"])
def test_children_a_bot_forks_do_not_survive_the_game(escape):
    out = game(misbehaving("fork", escape))
    assert out["seats"][0]["faults"] == []
    assert out["result"]["forfeited"] == [False, False]


def test_the_process_count_cap_stops_a_fork_bomb_under_strict(tmp_path):
    if not cgroup_layout()[0]:
        pytest.skip("no writable cgroup hierarchy on this machine")
    out = game(misbehaving("forkmany"), sandbox="strict", sandbox_options={"pids": 20}, log_dir=str(tmp_path))
    assert "cgroup_pids" in out["sandbox"]["protections"]
    log = (tmp_path / out["seats"][0]["stderr_log"].split("/")[-1]).read_text()
    made = int(log.split("forked ")[1].split()[0])
    assert 0 < made < 20, log
    assert out["seats"][0]["faults"] == []


def test_a_socket_cannot_reach_the_host_under_strict_but_can_under_none():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.5)
    port = str(srv.getsockname()[1])
    try:
        out = game(misbehaving("socket", port), sandbox="strict")
        if "no_network" in out["sandbox"]["protections"]:
            with pytest.raises(socket.timeout):
                srv.accept()
        out = game(misbehaving("socket", port), sandbox="none")
        conn, _ = srv.accept()
        conn.close()
    finally:
        srv.close()
    assert out["seats"][0]["faults"] == []


def test_stale_duplicate_replies_are_discarded_and_logged_not_faults():
    out = game(misbehaving("stale"))
    seat = out["seats"][0]
    assert seat["faults"] == [] and len(seat["discarded"]) >= 2
    assert all(d["id"] < d["expected"] for d in seat["discarded"])


def test_random_policy_plays_a_random_legal_action_for_every_fault(tmp_path):
    path = tmp_path / "game.json"
    out = game(misbehaving("illegal"), fault_policy="random", replay_path=str(path))
    faults = out["seats"][0]["faults"]
    assert len(faults) >= 2 and {f["verdict"] for f in faults} == {"illegal_action"}
    assert out["result"]["forfeited"] == [False, False]
    record = load_replay(path)
    resimulate(record)
    assert any(m and m.get("fallback") for m in record["move_times"])
    assert record["faults"][0] == faults and record["sandbox"]["tier"] == "basic"


def test_random_policy_after_a_crash_plays_on_without_the_process():
    out = game(misbehaving("crash"), fault_policy="random")
    assert [f["verdict"] for f in out["seats"][0]["faults"]] == ["crash"]
    assert out["result"]["forfeited"] == [False, False]


def test_a_good_game_records_times_per_move_in_the_replay(tmp_path):
    path = tmp_path / "game.json"
    out = play_game({"seats": [{"name": "g", "bot": "greedy"}, {"name": "r", "bot": "random"}], "seed": 7,
                     "replay_path": str(path), "pause_idle": True, "sandbox": "none"})
    for seat in out["seats"]:
        assert seat["faults"] == [] and seat["moves"] > 0 and seat["max_move_ms"] <= seat["wall_ms"]
        assert seat["cpu_ms"] >= 0
        assert_gone(seat["pid"])
    record = json.loads(path.read_text())
    assert resimulate(record).result() == out["result"]
    assert len(record["move_times"]) == len(record["actions"])
    assert all("wall_ms" in m and "cpu_ms" in m for m in record["move_times"])
    assert record["seats"] == ["g", "r"] and out["sandbox"]["tier"] == "none"


@pytest.mark.parametrize("request_, words", [
    ({"seats": [{"bot": "nosuch"}, {"bot": "pass"}]}, "unknown bot 'nosuch'"),
    ({"seats": [{"cmd": ["/nonexistent/bot"]}, {"bot": "pass"}]}, "'/nonexistent/bot' was not found"),
    ({"seats": [{"cmd": ["no-such-program-x"]}, {"bot": "pass"}]}, "was not found on the PATH"),
    ({"seats": [{"bot": "pass"}], "players": 2}, "1 seats for 2 players"),
    ({"seats": [{"bot": "pass"}, {"bot": "pass"}], "fault_policy": "shrug"}, "fault_policy"),
    ({"seats": [{"bot": "pass"}, {"bot": "pass"}], "time_control": {"move_ms": 0}}, "move_ms"),
    ({"seats": [{"bot": "pass"}, {"bot": "pass"}], "sandbox": "iron"}, "unknown sandbox tier"),
    ({"seats": [{"bot": "pass"}, {"bot": "pass"}], "rules": {"variants": ["nosuch"]}}, "unknown variant"),
    ({"seats": []}, "needs 'seats'"),
    ({"seats": [{"bot": "pass"}, {"bot": "pass"}], "seed": "seven"}, "seed must be a whole number"),
    ({"seats": [{"bot": "pass"}, {"bot": "pass"}], "replay_path": "/nonexistent/dir/game.json"}, "directory does not exist"),
])
def test_a_bad_request_raises_an_arena_error_naming_the_problem(request_, words):
    with pytest.raises(ArenaError, match=words):
        play_game(request_)
