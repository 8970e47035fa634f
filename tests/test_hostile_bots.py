"""Hostile bots (``tests/bots/hostile.py``) against every tier they apply to.

Each test plays a real game: a bot makes an attack on its first move, against a
well-behaved opponent. It asserts the attacker's own verdict, that the game finished with
the other seat's result kept (no fault, not forfeited), what each attempt gave (under a
tier that guarantees it, the attempt failed), and, after every test, that nothing of the
bots is left: no process of a bot uid, no working folder, cgroup or mount, no file in a
shared temporary folder. The table in ``docs/protocol.md`` (sandbox tiers) names these
tests. Strict needs bubblewrap: without it these tests skip, or fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.process.cgroups import cgroup_layout
from arena.process.sandbox import _proc_uids, state_root, sweep_stale
from arena.referee import play_game
from proc_check import assert_gone, ipc_keys, leftover_bot_files, leftover_bot_processes, misbehaving
from strict_check import require_strict

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bots get uids of their own only when the arena is root")

HOSTILE = str(Path(__file__).parent / "bots" / "hostile.py")
SHORT = {"variants": [], "params": {"max_rounds": 2}}
TIERS = ["none", "basic", "strict"]
VICTIM = "misbehave.py"


def tier_param(tiers=TIERS):
    return pytest.mark.parametrize("tier", tiers)


def leftovers() -> list[str]:
    """What this run's bots left on the machine (empty when nothing)."""
    found = leftover_bot_processes()
    me = f"{os.getpid()}-"
    found += [f"folder {n}" for n in os.listdir(state_root()) if n.startswith(me)]
    for base in {os.path.realpath(p) for p in cgroup_layout()[0].values()}:
        found += [f"cgroup {base}/{n}" for n in os.listdir(base) if n.startswith(f"arena-{me}")]
    with open("/proc/self/mountinfo") as f:
        found += [f"mount {line.split()[4]}" for line in f if str(state_root()) in line.split()[4]]
    return found + leftover_bot_files()


@pytest.fixture(autouse=True)
def nothing_left():
    yield
    deadline = time.monotonic() + 3
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers() == []


@pytest.fixture
def arena_dir():
    """An output folder anyone may enter (0755, like a project's results/): the database and logs."""
    d = Path(tempfile.mkdtemp(prefix="arena-hostile-"))
    d.chmod(0o755)
    (d / "logs").mkdir(mode=0o755)
    (d / "results.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    (d / "results.sqlite").chmod(0o644)
    yield d
    shutil.rmtree(d)


def play(tier, attacker, arena_dir, other=None, **kw):
    """A game of the hostile bot (seat 0) against a good bot (seat 1): the result and the attack's report."""
    if tier == "strict":
        require_strict()
    request = {"seats": [{"name": "hostile", "cmd": attacker},
                         other or {"name": "victim", "cmd": misbehaving("good")}],
               "seed": 5, "rules": SHORT, "time_control": {"move_ms": 2000, "startup_ms": 10000},
               "sandbox": tier, "log_dir": str(arena_dir / "logs")}
    request.update(kw)
    out = play_game(request)
    for seat in out["seats"]:
        assert_gone(seat["pid"])
    assert out["sandbox"]["tier"] == tier
    assert out["result"]["ranking"] and out["result"]["rounds"] >= 1, "the game finished"
    assert out["seats"][1]["faults"] == [] and not out["result"]["forfeited"][1], "the other seat's result is kept"
    path = Path(out["seats"][0]["stderr_log"])
    log = path.read_text() if path.exists() else ""  # a bot silent on stderr leaves no log
    line = [ln for ln in log.splitlines() if ln.startswith("HOSTILE ")]
    assert line or not attacker[1].endswith("hostile.py"), f"no report: {out['seats'][0]}, log: {log[-500:]}"
    return out, (json.loads(line[-1][8:]) if line else None)


def hostile(mode, *args):
    return [sys.executable, HOSTILE, mode, *map(str, args)]


def failed(report: dict, prefix: str) -> None:
    tried = {k: v for k, v in report.items() if k.startswith(prefix)}
    assert tried and all(v != "ok" for v in tried.values()), report


# ------------------------------------------------------------------ the classics
@tier_param()
@pytest.mark.parametrize("mode, verdict", [("hang", "timeout"), ("crash", "crash"), ("garbage", "non_json"),
                                           ("flood_stdout", "output_limit"), ("close_stdout", "crash")])
def test_a_classic_fault_gets_its_verdict_in_every_tier(tier, mode, verdict, arena_dir):
    out, _ = play(tier, misbehaving(mode), arena_dir, time_control={"move_ms": 400, "startup_ms": 10000})
    assert [f["verdict"] for f in out["seats"][0]["faults"]] == [verdict]


@tier_param()
def test_flooding_stderr_is_capped_per_game_and_per_folder(tier, arena_dir):
    opts = {"log_kb": 256, "log_total_mb": 1}
    sizes = []
    for _ in range(5):
        out, _ = play(tier, misbehaving("flood_stderr"), arena_dir, sandbox_options=opts)
        log = Path(out["seats"][0]["stderr_log"])
        sizes.append(log.stat().st_size)
        assert oct(log.stat().st_mode & 0o777) == "0o600"
    logs = list((arena_dir / "logs").iterdir())
    flooded = [p for p in logs if "hostile" in p.name]
    assert len(flooded) == 5, "one log per bot per game that wrote on stderr"
    # the victim writes nothing: no file, except past the folder's cap, where each log is
    # made with the line that says so
    assert all(p.read_text().startswith("[arena: the logs in this folder reached their cap")
               for p in logs if "victim" in p.name)
    assert all(s <= (256 << 10) + 100 for s in sizes)
    assert sum(p.stat().st_size for p in logs) <= (1 << 20) + 1000
    assert "logs in this folder reached their cap of 1 MB" in Path(out["seats"][0]["stderr_log"]).read_text()


@tier_param(["basic", "strict"])
def test_a_fork_bomb_is_contained(tier, arena_dir):
    out, report = play(tier, hostile("fork_bomb"), arena_dir, sandbox_options={"pids": 64})
    assert report == {"fork_bomb": "started"}
    assert out["seats"][0]["faults"] == []


@tier_param(["basic", "strict"])
def test_a_memory_hog_is_stopped_at_its_cap(tier, arena_dir):
    out, _ = play(tier, misbehaving("alloc"), arena_dir, sandbox_options={"memory_mb": 200})
    assert [f["verdict"] for f in out["seats"][0]["faults"]] == ["memory_limit"]


@tier_param()
def test_the_network_is_out_of_reach_under_strict_only(tier, arena_dir):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    try:
        out, report = play(tier, hostile("network", srv.getsockname()[1]), arena_dir)
    finally:
        srv.close()
    assert (report["connect"] != "ok") == (tier == "strict"), report


# ------------------------------------------------------------------ the arena
@tier_param()
def test_a_bot_cannot_stop_the_arena_or_its_parent(tier, arena_dir):
    out, report = play(tier, hostile("stop_arena", os.getpid()), arena_dir)
    failed(report, "stop_")
    assert out["seats"][0]["faults"] == []


@tier_param()
def test_a_bot_cannot_read_the_arenas_environment(tier, arena_dir, monkeypatch):
    monkeypatch.setenv("ARENA_HOSTILE_SECRET", "hunter2")
    out, report = play(tier, hostile("env", os.getpid(), "ARENA_HOSTILE_SECRET"), arena_dir)
    assert report["arena_env"] != "ok", report
    # the development tier passes the environment on; the others scrub it
    assert report["own_env"] == ("ok" if tier == "none" else "absent"), report


@tier_param()
def test_a_bot_cannot_write_the_results_or_the_project(tier, arena_dir):
    db = arena_dir / "results.sqlite"
    before = db.read_bytes()
    project = Path(__file__).resolve().parent.parent
    out, report = play(tier, hostile("results", db, project), arena_dir)
    assert report["write_results"] != "ok" and report["write_project"] != "ok", report
    assert db.read_bytes() == before and not (project / "hostile-was-here").exists()
    if tier == "strict":
        assert report["read_results"] != "ok", "strict hides the results altogether"


@tier_param()
def test_a_bot_cannot_read_other_bots_logs(tier, arena_dir):
    logs = arena_dir / "logs"
    play(tier, misbehaving("flood_stderr"), arena_dir)  # an earlier game's logs
    out, report = play(tier, hostile("logs", logs), arena_dir)
    # the flooding bot's log of the earlier game and the attacker's own (its report); the
    # victims wrote nothing on stderr, so they left no file
    assert len(list(logs.iterdir())) == 2
    if tier == "strict":
        assert report["list_logs"] != "ok", report
    else:
        failed(report, "read_")


# ------------------------------------------------------------------ the opponent
@tier_param()
def test_a_bot_cannot_stop_its_opponent(tier, arena_dir):
    out, report = play(tier, hostile("signal_opponent", VICTIM), arena_dir)
    if tier == "strict":
        assert report["seen"] == 0, "the opponent is not even visible in strict's PID namespace"
    else:
        assert report["seen"] >= 1
        failed(report, "stop_")
    assert out["seats"][1]["moves"] > 0


@tier_param()
def test_a_bot_cannot_trace_or_read_its_opponent(tier, arena_dir):
    out, report = play(tier, hostile("spy_opponent", VICTIM), arena_dir)
    if tier == "strict":
        assert report["seen"] == 0, report
    else:
        assert report["seen"] >= 1
        for what in ("ptrace_", "mem_", "environ_", "cwd_"):
            failed(report, what)


@pytest.mark.slow
def test_120_spinners_cannot_starve_the_opponent_under_strict(arena_dir):
    # the attacker forks its spinners in its first move, with the first ones spinning already:
    # on a loaded machine that takes longer than the usual 2 s, and its own time is not the point
    out, report = play("strict", hostile("spin", 120), arena_dir, sandbox_options={"cpus": 1.0},
                       rules={"variants": [], "params": {"max_rounds": 3}},
                       time_control={"move_ms": 15000, "startup_ms": 10000})
    assert report["spinners"] == 120
    assert out["seats"][0]["faults"] == []
    # capped at one core (on an idle machine 120 spinners would take both; on a busy one less)
    assert out["seats"][0]["cpu_ms"] <= out["duration_s"] * 1000 * 1.1 + 200, out["seats"][0]
    assert "cgroup_cpu" in out["sandbox"]["protections"]


@tier_param()
def test_the_cpu_time_of_the_whole_tree_is_counted(tier, arena_dir):
    """400 ms of CPU used by an orphaned grandchild in a new session is charged to the bot
    (a cpuacct cgroup, or under strict the PID namespace read from /proc)."""
    out, report = play(tier, hostile("burn", 400), arena_dir)
    assert report["burn"] == "done"
    if "cpu_accounting_tree" not in out["sandbox"]["protections"]:
        pytest.skip("no cgroup to count the tree's CPU in this tier here")
    assert out["seats"][0]["cpu_ms"] >= 0.8 * 400, out["seats"][0]


@tier_param()
def test_pause_idle_freezes_a_child_that_left_the_bots_session(tier, arena_dir):
    """The child spins from the bot's first move on; frozen with the bot while the opponent
    (100 ms a move) thinks, it gets CPU only during the bot's own short moves."""
    out, report = play(tier, hostile("spin_escaped"), arena_dir, pause_idle=True,
                       other={"name": "victim", "cmd": misbehaving("slow", "0.1")})
    assert "freezer" in out["sandbox"]["protections"] and "cpu_accounting_tree" in out["sandbox"]["protections"]
    victim_ms = out["seats"][1]["wall_ms"]
    assert victim_ms > 500
    # unfrozen, the child would be charged most of the opponent's time as well
    assert out["seats"][0]["cpu_ms"] < out["seats"][0]["wall_ms"] + 0.1 * victim_ms, out["seats"]


# ------------------------------------------------------------------ what is left behind
@tier_param()
def test_a_double_forked_daemon_in_a_new_session_dies_with_the_game(tier, arena_dir):
    out, report = play(tier, hostile("daemon"), arena_dir)
    assert report["daemon_pid"] > 0
    if tier != "strict":  # strict reports its PID namespace's number
        with pytest.raises(ProcessLookupError):
            for _ in range(60):
                os.kill(report["daemon_pid"], 0)
                with open(f"/proc/{report['daemon_pid']}/status") as f:
                    if "State:\tZ" in f.read():
                        raise ProcessLookupError
                time.sleep(0.05)


@tier_param()
def test_files_left_in_tmp_and_dev_shm_are_removed(tier, arena_dir):
    token = f"arena-hostile-litter-{os.getpid()}-{tier}"
    out, report = play(tier, hostile("litter", token), arena_dir)
    assert report[f"litter_/tmp"] == "ok", report
    assert not os.path.exists(f"/tmp/{token}") and not os.path.exists(f"/dev/shm/{token}")


@tier_param()
def test_system_v_ipc_objects_do_not_outlive_the_game(tier, arena_dir):
    key = 0x4B000000 + os.getpid() % 0xFFFF * 4 + TIERS.index(tier)
    out, report = play(tier, hostile("ipc", key), arena_dir)
    assert report["shm"] == report["sem"] == report["msg"] == "ok", report
    assert key not in ipc_keys()
    assert "ipc_namespace" in out["sandbox"]["protections"]


def test_the_sweep_removes_what_a_killed_arena_left(tmp_path):
    """A coordinator killed with SIGKILL mid-game: the next start removes its bots' processes,
    working folders and cgroups."""
    import subprocess
    script = tmp_path / "coordinator.py"
    script.write_text(
        "import sys, time\n"
        "from arena.process.sandbox import Sandbox\n"
        "from arena.process.transport import LineTransport\n"
        f"sb = Sandbox('basic')\n"
        f"ln = sb.prepare([sys.executable, {HOSTILE!r}, 'good'], label='victim')\n"
        "t = LineTransport(ln.argv, cwd=ln.cwd, env=ln.env, preexec_fn=ln.preexec_fn)\n"
        "t.start()\n"
        "print(ln.uid, ln.tmpdir, ln.cgroup.dirs[0] if ln.cgroup else '', flush=True)\n"
        "time.sleep(60)\n")
    for _ in range(3):
        coordinator = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
        uid, folder, cgroup = (coordinator.stdout.readline().split() + [""])[:3]
        coordinator.send_signal(signal.SIGKILL)
        coordinator.wait()
        outlived = _proc_uids().get(int(uid)) and os.path.isdir(folder)
        removed = sweep_stale()
        assert not _proc_uids().get(int(uid)) and not os.path.exists(folder)
        assert not cgroup or not os.path.exists(cgroup)
        if outlived and removed["processes"] >= 1 and removed["folders"] >= 1:
            return
        # any arena that starts on the machine meanwhile (another test worker's) sweeps too,
        # and may have taken some of it first: once more
    pytest.fail("three times running, the bot did not outlive its coordinator or another arena swept it first")


def test_the_sweep_removes_the_cgroups_of_a_killed_arena_that_lived_in_another_cgroup(tmp_path):
    """An arena started in another cgroup (another shell, a service) makes its bots' cgroups
    below that one; killed, it leaves them where no name-based search of the next start
    looks. The records of bot cgroups find them."""
    import subprocess
    layout = cgroup_layout()[0]
    if not layout:
        pytest.skip("no writable cgroup hierarchy on this machine")
    parents = []
    for base in {os.path.realpath(p) for p in layout.values()}:
        d = Path(base) / f"elsewhere-{os.getpid()}"
        d.mkdir()
        parents.append(d)
    script = tmp_path / "coordinator.py"
    script.write_text(
        "import sys, time\n"
        "from arena.process.sandbox import Sandbox\n"
        "from arena.process.transport import LineTransport\n"
        "sb = Sandbox('strict')\n"
        f"ln = sb.prepare([sys.executable, {HOSTILE!r}, 'good'], label='victim')\n"
        "t = LineTransport(ln.argv, cwd=ln.cwd, env=ln.env, preexec_fn=ln.preexec_fn, stdout_fd3=ln.stdout_fd3)\n"
        "t.start()\n"
        "print(' '.join(map(str, ln.cgroup.dirs)), flush=True)\n"
        "time.sleep(60)\n")

    def join_elsewhere():
        for d in parents:
            (d / "cgroup.procs").write_text(str(os.getpid()))

    require_strict()
    try:
        coordinator = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                                       preexec_fn=join_elsewhere)
        dirs = coordinator.stdout.readline().split()
        coordinator.send_signal(signal.SIGKILL)
        coordinator.wait()
        assert dirs and all(any(p in Path(d).parents for p in parents) for d in dirs), dirs
        assert all(os.path.isdir(d) for d in dirs), "the killed arena left its bot's cgroup"
        sweep_stale()
        assert not any(os.path.exists(d) for d in dirs)
    finally:
        for d in parents:
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
