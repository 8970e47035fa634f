"""Hostile bots against an arena run by an ordinary user, as most bot authors run it.

When the suite runs as root (CI does), the arena of these tests runs as a test user of its
own (``tests/as_user.py``): no uid of its own for each bot, no cgroup it may write. Each
test plays one game per attack (``tests/bots/hostile.py``) against a well-behaved
opponent, under the default tier and under strict, and asserts that every attempt failed,
that the opponent's result was kept, and that nothing of the bots is left: no process of
the user but its arena's, no file in the shared temporary folders, no System V IPC object.
The column "ordinary user" of the tier table in ``docs/protocol.md`` names these tests.
"""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from as_user import User
from proc_check import ipc_keys

USER_ARENA = textwrap.dedent('''
    import json, os, socket, sys, time
    from pathlib import Path
    from arena.referee import play_game
    from arena.process.sandbox import Sandbox

    TIER = os.environ.get("TEST_TIER") or None
    HOSTILE = os.path.join(os.environ["PROJECT"], "tests", "bots", "hostile.py")
    MISBEHAVE = os.path.join(os.environ["PROJECT"], "tests", "bots", "misbehave.py")
    TOKEN = os.environ["TOKEN"]
    out = Path.cwd() / "out"
    (out / "logs").mkdir(parents=True)
    db = out / "results.sqlite"
    db.write_bytes(b"SQLite format 3\\x00" + b"\\x00" * 84)
    os.environ["ARENA_HOSTILE_SECRET"] = "hunter2"
    answer = {"uid": os.getuid(), "games": {}}

    def play(name, attacker, other=None, program=HOSTILE, **kw):
        request = {"seats": [{"name": "hostile", "cmd": [sys.executable, program] + attacker},
                             other or {"name": "victim", "cmd": [sys.executable, MISBEHAVE, "good"]}],
                   "seed": 5, "rules": {"variants": [], "params": {"max_rounds": 2}},
                   "time_control": {"move_ms": 3000, "startup_ms": 20000}, "log_dir": str(out / "logs")}
        if TIER:
            request["sandbox"] = TIER
        request.update(kw)
        t0 = time.monotonic()
        res = play_game(request)
        log_path = Path(res["seats"][0]["stderr_log"])
        log = log_path.read_text() if log_path.exists() else ""  # silent on stderr: no file
        lines = [ln for ln in log.splitlines() if ln.startswith("HOSTILE ")]
        answer["games"][name] = {
            "report": json.loads(lines[-1][8:]) if lines else {}, "log": log[-800:],
            "faults": [s["faults"] for s in res["seats"]], "forfeited": res["result"]["forfeited"],
            "rounds": res["result"]["rounds"], "sandbox": res["sandbox"], "wall_s": time.monotonic() - t0,
            "cpu_ms": [s["cpu_ms"] for s in res["seats"]], "duration_s": res["duration_s"],
            "wall_ms": [s["wall_ms"] for s in res["seats"]],
            "moves": [s["moves"] for s in res["seats"]]}

    before = db.read_bytes()
    play("stop_arena", ["stop_arena", str(os.getpid())])
    play("signal_opponent", ["signal_opponent", "misbehave.py"])
    play("spy_opponent", ["spy_opponent", "misbehave.py"])
    play("results", ["results", str(db), os.environ["PROJECT"]])
    answer["db_unchanged"] = db.read_bytes() == before
    answer["project_untouched"] = not os.path.exists(os.path.join(os.environ["PROJECT"], "hostile-was-here"))
    play("flood", ["logs", str(out / "logs")])
    play("env", ["env", str(os.getpid()), "ARENA_HOSTILE_SECRET"])
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    play("network", ["network", str(srv.getsockname()[1])])
    srv.close()
    play("daemon", ["daemon"])
    play("fork_bomb", ["fork_bomb"], sandbox_options={"pids": 64})
    play("ipc", ["ipc", os.environ["IPC_KEY"]])
    play("litter", ["litter", TOKEN])
    play("spin", ["spin", "120"], other={"name": "victim", "cmd": [sys.executable, MISBEHAVE, "slow", "0.05"]},
         sandbox_options={"cpus": 1.0}, rules={"variants": [], "params": {"max_rounds": 3}})
    play("alloc", ["alloc"], program=MISBEHAVE, sandbox_options={"memory_mb": 200})
    play("burn", ["burn", "400"])
    play("pause", ["spin_escaped"], pause_idle=True,
         other={"name": "victim", "cmd": [sys.executable, MISBEHAVE, "slow", "0.1"]})
    time.sleep(0.2)
    me = os.getpid()
    # a uid of its own (the suite ran as root): every other process of it is a leftover; the
    # suite's own user: only what this arena started (after it, from the misbehaving bot)
    shared = os.environ.get("ARENA_TEST_SHARED_UID") == "1"
    since = int(open(f"/proc/{me}/stat").read().rsplit(")", 1)[1].split()[19])
    left = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                st = os.stat(f"/proc/{name}")
                fields = open(f"/proc/{name}/stat").read().rsplit(")", 1)[1].split()
                cmdline = open(f"/proc/{name}/cmdline").read().replace("\\0", " ")
            except OSError:
                continue
            if st.st_uid != os.getuid() or fields[0] == "Z":
                continue
            if shared and (int(fields[19]) < since or "misbehave" not in cmdline):
                continue
            left.append(cmdline[:100])
    answer["left_processes_seen_by_arena"] = left
    state = Path(os.environ["TMPDIR"]) / f"arena-sandbox-{os.getuid()}"
    # (an empty folder of cgroup records stays where this user's bots had cgroups)
    answer["state_root_left"] = sorted(n for n in os.listdir(state)
                                       if not (n == ".cgroups" and not os.listdir(state / n)))
    print(json.dumps(answer))
''')


@pytest.fixture(scope="module", params=["default", "strict"])
def attacks(request):
    """Every attack played once by an arena of an ordinary user, under the tier of the param."""
    from strict_check import require_strict

    require_strict()
    user = User()
    token = f"arena-user-litter-{os.getpid()}-{request.param}"
    key = 0x4A000000 + os.getpid() % 0xFFFF * 4 + (request.param == "strict")
    try:
        answer = user.run(USER_ARENA, env={"TEST_TIER": "" if request.param == "default" else "strict",
                                           "PROJECT": str(os.path.dirname(os.path.dirname(__file__))),
                                           "TOKEN": token, "IPC_KEY": str(key)})
        answer["left_processes"] = user.wait_gone(3)
        answer["ipc_left"] = key in ipc_keys()
        answer["litter_left"] = [p for p in (f"/tmp/{token}", f"/dev/shm/{token}") if os.path.exists(p)]
        answer["tier_param"] = request.param
        yield answer
    finally:
        user.close()


def game(attacks, name):
    g = attacks["games"][name]
    assert g["rounds"] >= 1, g
    assert g["faults"][1] == [] and not g["forfeited"][1], f"the opponent's result is kept: {g}"
    return g


def failed(report: dict, prefix: str) -> None:
    tried = {k: v for k, v in report.items() if k.startswith(prefix)}
    assert tried and all(v != "ok" for v in tried.values()), report


def test_the_arena_runs_as_an_ordinary_user_in_strict(attacks):
    if os.geteuid() == 0:
        assert attacks["uid"] != 0
    for g in attacks["games"].values():
        record = g["sandbox"]
        assert record["tier"] == "strict", record
        assert record.get("requested") == ("auto" if attacks["tier_param"] == "default" else None) or \
            attacks["tier_param"] == "strict" and "requested" not in record
        assert {"bubblewrap", "pid_namespace", "ipc_namespace", "mount_namespace", "no_network", "private_tmp",
                "read_only_view", "tree_kill", "cpu_accounting_tree", "freezer"} <= set(record["protections"])
        assert {"cgroup_memory", "rss_polling"} & set(record["protections"]), "memory is capped one way or the other"
        assert {"cgroup_cpu", "cpu_throttle"} & set(record["protections"]), "CPU is capped one way or the other"


def test_a_bot_cannot_stop_the_arena(attacks):
    g = game(attacks, "stop_arena")
    failed(g["report"], "stop_")
    assert g["faults"][0] == []


def test_a_bot_cannot_stop_or_read_its_opponent(attacks):
    assert game(attacks, "signal_opponent")["report"]["seen"] == 0
    assert game(attacks, "spy_opponent")["report"]["seen"] == 0


def test_a_bot_cannot_read_or_write_the_results_or_the_project(attacks):
    report = game(attacks, "results")["report"]
    assert report["read_results"] != "ok" and report["write_results"] != "ok" and report["write_project"] != "ok"
    assert attacks["db_unchanged"] and attacks["project_untouched"]
    assert game(attacks, "flood")["report"]["list_logs"] != "ok", "the logs folder is out of sight"


def test_a_bot_cannot_read_the_arenas_environment(attacks):
    report = game(attacks, "env")["report"]
    assert report["arena_env"] != "ok" and report["own_env"] == "absent", report


def test_a_bot_cannot_reach_the_network(attacks):
    assert game(attacks, "network")["report"]["connect"] != "ok"


def test_daemons_forks_ipc_and_litter_do_not_outlive_the_game(attacks):
    assert game(attacks, "daemon")["report"]["daemon_pid"] > 0
    g = game(attacks, "fork_bomb")
    assert g["report"] == {"fork_bomb": "started"} and g["faults"][0] == []
    report = game(attacks, "ipc")["report"]
    assert report["shm"] == report["sem"] == report["msg"] == "ok", "the bot made its objects (in its namespace)"
    assert not attacks["ipc_left"], "no System V IPC object of the bot is left on the host"
    assert game(attacks, "litter")["report"]["litter_/tmp"] == "ok"
    assert attacks["litter_left"] == []
    assert attacks["left_processes_seen_by_arena"] == [] and attacks["left_processes"] == []
    assert attacks["state_root_left"] == [], "no working folder is left"


def test_120_spinners_are_held_to_their_cpu_share_and_the_opponent_keeps_its_time(attacks):
    g = game(attacks, "spin")
    assert g["report"].get("spinners") == 120 and g["faults"][0] == [], g
    assert g["moves"][1] > 0
    # held to one core (on an idle machine 120 spinners would take both)
    assert g["cpu_ms"][0] <= g["duration_s"] * 1000 * 1.25 + 300, g


def test_the_cpu_time_of_the_whole_tree_is_counted(attacks):
    """400 ms of CPU used by an orphaned grandchild in a new session is charged to the bot."""
    g = game(attacks, "burn")
    assert g["report"]["burn"] == "done"
    assert g["cpu_ms"][0] >= 0.8 * 400, g


def test_a_memory_hog_is_stopped_at_its_cap(attacks):
    g = game(attacks, "alloc")
    assert [f["verdict"] for f in g["faults"][0]] == ["memory_limit"], g


def test_after_a_root_arena_an_ordinary_user_prepares_bots_in_the_same_tmp():
    """Root's sandbox folder in /tmp does not stand in an ordinary user's way: each user has
    a folder of their own there."""
    from arena.process.sandbox import Sandbox

    Sandbox("basic").prepare(["true"]).cleanup()  # this run's own user makes its folder in /tmp
    user = User()
    try:
        answer = user.run(textwrap.dedent("""
            import json
            from arena.process.sandbox import Sandbox, state_root
            launch = Sandbox("basic").prepare(["true"])
            launch.cleanup()
            print(json.dumps({"root": str(state_root())}))
            """), env={"TMPDIR": "/tmp"})
        assert answer["root"] == f"/tmp/arena-sandbox-{user.uid}"
    finally:
        user.close()


def test_pause_idle_freezes_the_whole_tree_a_child_in_a_new_session_included(attacks):
    """The child spins from the bot's first move on; stopped with the bot while the opponent
    (100 ms a move) thinks, it gets CPU only during the bot's own short moves."""
    g = game(attacks, "pause")
    assert "freezer" in g["sandbox"]["protections"]
    assert g["wall_ms"][1] > 500
    # unfrozen, the child would be charged about all of the opponent's time; stopping the tree
    # by signals takes a walk of /proc after each move, so some milliseconds of each go by
    assert g["cpu_ms"][0] < g["wall_ms"][0] + 0.35 * g["wall_ms"][1], g


def test_a_killed_arena_leaves_no_bot_behind():
    """The arena is SIGKILLed mid-game: bubblewrap dies with it (--die-with-parent), and
    with it the bot's PID namespace, forked children and daemons included."""
    import signal
    import subprocess

    from strict_check import require_strict

    require_strict()
    if os.geteuid() != 0:
        pytest.skip("telling the user's processes apart needs a test user of its own (the suite runs as root in CI)")
    user = User()
    try:
        coordinator = user.popen(textwrap.dedent(f"""
            import sys, time
            from arena.process.sandbox import Sandbox
            from arena.process.transport import LineTransport
            bot = {os.path.join(os.path.dirname(__file__), "bots", "misbehave.py")!r}
            ln = Sandbox("strict").prepare([sys.executable, bot, "good"], label="victim")
            t = LineTransport(ln.argv, cwd=ln.cwd, env=ln.env, preexec_fn=ln.preexec_fn, stdout_fd3=ln.stdout_fd3)
            t.start()
            ln.started(t.pid)
            t.send(b'{{"type": "hello", "id": 1}}\\n', time.perf_counter() + 5)
            print("started", flush=True)
            time.sleep(60)
            """), stdout=subprocess.PIPE)
        assert coordinator.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 10
        while len(user.processes()) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(user.processes()) >= 4, "the arena, bubblewrap (two processes) and the bot run"
        coordinator.send_signal(signal.SIGKILL)
        coordinator.wait()
        assert user.wait_gone() == []
    finally:
        user.close()


def test_a_tournament_of_forking_bots_leaves_nothing_behind():
    """``arena run`` as an ordinary user, bots reused across games, each forking children and
    a hundred more: when the run ends, no process of the user is left."""
    from strict_check import require_strict

    require_strict()
    user = User()
    bot = os.path.join(os.path.dirname(__file__), "bots", "misbehave.py")
    try:
        answer = user.run(textwrap.dedent(f"""
            import json, subprocess, sys
            yaml = '''name: forks
            rules: {{variants: [], params: {{max_rounds: 2}}}}
            bots:
              - greedy
              - {{name: forker, cmd: "{{py}} {bot} fork escape"}}
              - {{name: many, cmd: "{{py}} {bot} forkmany"}}
            rounds: 2
            time_control: {{move_ms: 5000, startup_ms: 30000}}
            output: out
            '''.replace("{{py}}", sys.executable)
            open("forks.yaml", "w").write(yaml)
            r = subprocess.run([sys.executable, "-m", "arena.cli", "run", "forks.yaml"], capture_output=True, text=True)
            import sqlite3
            faults = sqlite3.connect("out/results.sqlite").execute("SELECT bot, verdict FROM faults").fetchall()
            print(json.dumps({{"rc": r.returncode, "err": r.stderr[-1500:], "faults": faults}}))
            """))
        assert answer["rc"] == 0, answer["err"]
        assert answer["faults"] == [] and "sandbox: strict" in answer["err"]
        assert user.wait_gone() == []
    finally:
        user.close()
