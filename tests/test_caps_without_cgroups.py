"""The strict tier's caps where no cgroup holds the bot, as an ordinary user gets them.

Without a cgroup the caps come from walking the bot's PID namespace in ``/proc``
(``arena/process/proctree.py``, ``Launch._poll``). Two ways around such a walk are played
here by an arena of an ordinary user (``tests/as_user.py``), each against a well-behaved
opponent: memory kept in ``memfd_create`` files that are never mapped (no resident-memory
poll sees it), and CPU burnt in children the kernel reaps at once because the bot ignores
SIGCHLD (their time reaches no parent's). The first must end in the ``memory_limit``
verdict, the second's CPU must be charged to the bot.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import textwrap
import time

import pytest

from arena.process.proctree import TreeAccount
from arena.referee import play_game
from as_user import User

USER_ARENA = textwrap.dedent('''
    import json, os, sys
    from pathlib import Path
    from arena.referee import play_game

    BOTS = os.path.join(os.environ["PROJECT"], "tests", "bots")
    out = Path.cwd() / "out"
    (out / "logs").mkdir(parents=True)
    answer = {"games": {}}

    def play(name, cmd, marker, **kw):
        request = {"seats": [{"name": "attacker", "cmd": [sys.executable] + cmd},
                             {"name": "victim", "cmd": [sys.executable, os.path.join(BOTS, "misbehave.py"), "good"]}],
                   "seed": 5, "rules": {"variants": [], "params": {"max_rounds": 2}}, "sandbox": "strict",
                   "time_control": {"move_ms": 30000, "startup_ms": 30000}, "log_dir": str(out / "logs")}
        request.update(kw)
        res = play_game(request)
        log = Path(res["seats"][0]["stderr_log"]).read_text()
        lines = [ln for ln in log.splitlines() if ln.startswith(marker + " ")]
        answer["games"][name] = {
            "reports": [json.loads(ln[len(marker) + 1:]) for ln in lines], "log": log[-800:],
            "faults": [s["faults"] for s in res["seats"]], "forfeited": res["result"]["forfeited"],
            "rounds": res["result"]["rounds"], "sandbox": res["sandbox"], "cpu_ms": [s["cpu_ms"] for s in res["seats"]]}

    play("memfd", [os.path.join(BOTS, "memfd_hog.py"), "memfd", "600"], "HOG",
         sandbox_options={"memory_mb": 256, "cgroups": False})
    play("tmpfs", [os.path.join(BOTS, "memfd_hog.py"), "tmpfs", "600"], "HOG",
         sandbox_options={"memory_mb": 256, "tmp_mb": 384, "cgroups": False})
    play("reaped", [os.path.join(BOTS, "reaped_children.py"), "10", "150"], "REAPED",
         sandbox_options={"cgroups": False, "cpus": 0})
    print(json.dumps(answer))
''')


@pytest.fixture(scope="module")
def games():
    """The attacks, each played once under strict by an arena of an ordinary user."""
    from strict_check import require_strict

    require_strict()
    user = User()
    try:
        answer = user.run(USER_ARENA, timeout=600, env={"PROJECT": os.path.dirname(os.path.dirname(__file__))})
        assert user.wait_gone(10) == [], "no process of the bots outlives the games"
        yield answer["games"]
    finally:
        user.close()


def opponent_kept(g: dict) -> None:
    assert g["rounds"] >= 1, g
    assert g["faults"][1] == [] and not g["forfeited"][1], f"the opponent's result is kept: {g}"


@pytest.mark.slow
def test_memory_hidden_in_memfds_is_counted(games):
    g = games["memfd"]
    opponent_kept(g)
    assert "cgroup_memory" not in g["sandbox"]["protections"], "the poll is what is tested here"
    assert "memory_polled_with_memfds" in g["sandbox"]["protections"], g["sandbox"]
    assert [f["verdict"] for f in g["faults"][0]] == ["memory_limit"], g
    written = g["reports"][-1]["written_mb"] if g["reports"] else 0
    assert written < 600, f"stopped before it wrote everything: {g}"


@pytest.mark.slow
def test_memory_kept_in_tmp_files_is_counted_or_bounded(games):
    g = games["tmpfs"]
    opponent_kept(g)
    verdicts = [f["verdict"] for f in g["faults"][0]]
    last = g["reports"][-1] if g["reports"] else {"written_mb": 0, "error": None}
    # the folder's own size stops it at 384 MB at the latest; the memory cap, counting it, earlier
    assert verdicts == ["memory_limit"] or (last["error"] and last["written_mb"] <= 384), g


@pytest.mark.slow
def test_cpu_of_children_reaped_by_the_kernel_is_charged(games):
    g = games["reaped"]
    opponent_kept(g)
    assert g["faults"][0] == [], g
    assert "cpu_of_reaped_children" in g["sandbox"]["protections"], g["sandbox"]
    burnt = g["reports"][-1]["child_cpu_ms"]
    assert burnt >= 10 * 150 * 0.99, g
    assert g["cpu_ms"][0] >= 0.8 * burnt, g


def play_here(cmd: list[str], tier: str, tmp_path, **options) -> dict:
    """One game of the attacker against a well-behaved opponent, by this test's own arena."""
    bots = os.path.join(os.path.dirname(__file__), "bots")
    return play_game({"seats": [{"name": "attacker", "cmd": [sys.executable, *cmd]},
                                {"name": "victim", "cmd": [sys.executable, os.path.join(bots, "misbehave.py"), "good"]}],
                      "seed": 5, "rules": {"variants": [], "params": {"max_rounds": 2}}, "sandbox": tier,
                      "time_control": {"move_ms": 30000, "startup_ms": 30000}, "log_dir": str(tmp_path),
                      "sandbox_options": options})


@pytest.mark.parametrize("tier", ["basic", "strict"])
def test_memory_hidden_in_memfds_is_stopped_by_whatever_caps_memory(tier, tmp_path):
    """The arena of the suite itself: as root a cgroup caps the bot (it counts memfds), as an
    ordinary user the poll does."""
    if tier == "strict":
        from strict_check import require_strict

        require_strict()
    bot = os.path.join(os.path.dirname(__file__), "bots", "memfd_hog.py")
    res = play_here([bot, "memfd", "600"], tier, tmp_path, memory_mb=256)
    assert [f["verdict"] for f in res["seats"][0]["faults"]] == ["memory_limit"], res["seats"][0]
    assert res["seats"][1]["faults"] == [] and not res["result"]["forfeited"][1]


def test_cpu_of_children_reaped_by_the_kernel_is_charged_whoever_counts_it(tmp_path):
    """The arena of the suite itself, under strict: a cgroup counts it as root, the poll as
    an ordinary user."""
    from strict_check import require_strict

    require_strict()
    bot = os.path.join(os.path.dirname(__file__), "bots", "reaped_children.py")
    res = play_here([bot, "6", "150"], "strict", tmp_path, cpus=0)
    log = open(res["seats"][0]["stderr_log"]).read()
    burnt = [json.loads(ln[7:]) for ln in log.splitlines() if ln.startswith("REAPED ")][-1]["child_cpu_ms"]
    assert res["seats"][0]["faults"] == [], res["seats"][0]
    assert res["seats"][0]["cpu_ms"] >= 0.8 * burnt, (res["seats"][0], burnt)


CHILDREN = textwrap.dedent('''
    import os, signal, sys, time
    if sys.argv[1] == "ignore":
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    sys.stdin.readline()
    for _ in range(int(sys.argv[2])):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            while time.process_time() < float(sys.argv[3]):
                pass
            os._exit(0)
        os.close(w)
        os.read(r, 1)
        os.close(r)
        if sys.argv[1] == "wait":
            os.waitpid(pid, 0)
    t = os.times()
    print(t.user + t.system + t.children_user + t.children_system, flush=True)
    sys.stdin.readline()
''')


@pytest.mark.parametrize("reaping", ["wait", "ignore"])
def test_the_account_counts_each_child_once_whoever_reaps_it(reaping):
    """A parent that waits for its children finds their time in its ``cutime`` as well as
    in the account's readings of them: it is counted once. One that lets the kernel reap them
    has it only in the account."""
    proc = subprocess.Popen([sys.executable, "-c", CHILDREN, reaping, "8", "0.1"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        account = TreeAccount(proc.pid)
        account.sample()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        while not select.select([proc.stdout], [], [], 0.01)[0] and time.monotonic() < deadline:
            account.sample()  # as often as the arena's poll does while a tree works, and more
        used = float(proc.stdout.readline())  # the parent's own and (if it waited) its children's
        counted = account.sample()
        if reaping == "ignore":
            used += 8 * 0.1  # the children's, by their own count, which no parent holds
        assert 0.8 * used <= counted <= used + 0.1, (counted, used)
    finally:
        proc.kill()
        proc.wait()
