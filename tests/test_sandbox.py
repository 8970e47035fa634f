"""Sandbox tiers against real processes: what each tier puts in force, and the record."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from arena.process.sandbox import (UID_BASE, UID_SLOTS, Limits, Sandbox, SandboxError, bridge_plan, cgroup_layout,
                                   mountns_available, netns_available, state_root, strict_missing, world_accessible)
from arena.process.transport import BotCrashed, LineTransport
from proc_check import assert_gone
from strict_check import require_strict

PROBE = r"""
import json, os, resource, socket, sys
sys.stdin.readline()
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
    net = "connected"
except OSError as exc:
    net = type(exc).__name__
print(json.dumps({"cwd": os.getcwd(), "env": dict(os.environ), "uid": os.getuid(), "net": net,
                  "limits": {k: resource.getrlimit(getattr(resource, k))[0]
                             for k in ("RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE")}}), flush=True)
sys.stdin.read()
"""


@pytest.fixture
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    yield srv.getsockname()[1]
    srv.close()


def run_probe(sandbox: Sandbox, argv: list[str]) -> tuple[dict, object]:
    launch = sandbox.prepare(argv)
    t = LineTransport(launch.argv, cwd=launch.cwd, env=launch.env, preexec_fn=launch.preexec_fn, on_kill=launch.kill_extra)
    t.start()
    launch.started(t.pid)
    try:
        t.send(b"go\n", time.perf_counter() + 10)
        line, _ = t.read_line(time.perf_counter() + 10)
    finally:
        t.close()
        launch.cleanup()
    assert_gone(t.pid)
    return json.loads(line), launch


def test_an_unknown_tier_is_a_sentence():
    with pytest.raises(SandboxError, match="unknown sandbox tier 'iron'"):
        Sandbox("iron")


ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="the arena does not run as root here")


def test_none_is_a_plain_subprocess_but_never_root(listener):
    info, launch = run_probe(Sandbox("none"), [sys.executable, "-c", PROBE, str(listener)])
    assert info["cwd"] == os.getcwd() and info["net"] == "connected"
    assert launch.protections[0] == "process_group" and "temp_dir" not in launch.protections
    if ROOT:
        assert UID_BASE <= info["uid"] < UID_BASE + UID_SLOTS and "unprivileged_user" in launch.protections
        assert "tree_kill" in launch.protections


def test_basic_scrubs_the_environment_and_sets_rlimits(listener, monkeypatch):
    monkeypatch.setenv("ARENA_TEST_SECRET", "hunter2")
    limits = Limits(cpu_s=77, nofile=64, fsize_mb=3)
    info, launch = run_probe(Sandbox("basic", limits), [sys.executable, "-c", PROBE, str(listener)])
    assert "ARENA_TEST_SECRET" not in info["env"]
    assert set(info["env"]) <= {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "HOME", "TMPDIR"} | \
        {k for k in info["env"] if k.startswith("LC_")}
    assert info["cwd"].startswith("/") and "arena-" in info["cwd"] and info["env"]["HOME"] == info["cwd"]
    assert not Path(info["cwd"]).exists(), "the working directory is removed after the game"
    assert info["limits"] == {"RLIMIT_CPU": 77, "RLIMIT_NOFILE": 64, "RLIMIT_FSIZE": 3 << 20, "RLIMIT_CORE": 0}
    for p in ("session", "temp_dir", "scrubbed_env", "rlimit_cpu", "rlimit_nofile", "rlimit_fsize", "no_core"):
        assert p in launch.protections


def test_strict_has_no_network(listener):
    require_strict()
    info, launch = run_probe(Sandbox("strict"), [sys.executable, "-c", PROBE, str(listener)])
    assert info["net"] != "connected" and "no_network" in launch.protections


@needs_root
@pytest.mark.parametrize("tier", ["basic", "strict"])
def test_each_bot_runs_as_an_unprivileged_uid_of_its_own(tier):
    if tier == "strict":
        require_strict()
    sh = "/bin/sh"
    sb = Sandbox(tier)
    launches = [sb.prepare([sh, "-c", "read x; id -u; pwd; touch ok && echo wrote"]) for _ in range(2)]
    uids = []
    for launch in launches:
        workdir = launch.cwd
        uid, cwd, wrote = read_lines(launch, 3, b"go\n")
        uids.append(int(uid))
        assert cwd.decode() == workdir
        assert wrote == b"wrote", "the working directory is writable by the bot"
        assert "unprivileged_user" in launch.protections
    assert all(UID_BASE <= u < UID_BASE + UID_SLOTS for u in uids) and uids[0] != uids[1]


@needs_root
def test_a_program_no_unprivileged_user_can_read_is_refused_with_a_sentence(tmp_path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    prog = private / "bot.sh"
    prog.write_text("#!/bin/sh\nid -u\n")
    prog.chmod(0o700)
    for tier in ("none", "basic") + (("strict",) if not strict_missing() else ()):
        with pytest.raises(SandboxError, match="not readable by an unprivileged user"):
            Sandbox(tier).prepare([str(prog)])
    assert not list(state_root().glob(f"{os.getpid()}-*-bot")), "no working directory is left"


def read_lines(launch, n: int, send: bytes = b"") -> list[bytes]:
    t = LineTransport(launch.argv, cwd=launch.cwd, env=launch.env, preexec_fn=launch.preexec_fn, on_kill=launch.kill_extra)
    t.start()
    try:
        if send:
            t.send(send, time.perf_counter() + 10)
        return [t.read_line(time.perf_counter() + 10)[0] for _ in range(n)]
    finally:
        t.close()
        launch.cleanup()


@pytest.mark.skipif(not ROOT or not mountns_available()[0], reason="needs root and mount namespaces")
def test_basic_bridges_a_closed_directory_and_shows_the_bot_only_its_own_path():
    import shutil
    import tempfile

    closed = Path(tempfile.mkdtemp(prefix="arena-test-closed-"))  # mode 0700, like /root
    try:
        (closed / "secret.txt").write_text("root only")
        (closed / "bot").mkdir(mode=0o755)
        prog = closed / "bot" / "bot.sh"
        prog.write_text(f"#!/bin/sh\nid -u\nls -a {closed} | tr '\\n' ' '; echo\n")
        prog.chmod(0o755)
        assert not world_accessible(str(prog)) and bridge_plan([str(prog)]) == {str(closed): ["bot"]}
        launch = Sandbox("basic").prepare([str(prog)])
        bridge = launch.bridge
        uid, listing = read_lines(launch, 2)
        assert int(uid) == launch.uid
        assert {"path_bridge", "unprivileged_user"} <= set(launch.protections)
        assert listing.split() == [b".", b"..", b"bot"]  # secret.txt is not in the bot's view
        assert sorted(p.name for p in closed.iterdir()) == ["bot", "secret.txt"]  # the host's view is unchanged
        assert bridge and not os.path.exists(bridge)  # the stand-in folder went with the bot
    finally:
        shutil.rmtree(closed)


@pytest.mark.skipif(not ROOT or not mountns_available()[0], reason="needs root and mount namespaces")
@pytest.mark.parametrize("tier", ["none", "basic"])
def test_a_python_bot_runs_unprivileged_when_its_interpreter_can_be_bridged(tier):
    launch = Sandbox(tier).prepare([sys.executable, "-c", "import os; print(os.getuid(), flush=True)"])
    uid = launch.uid
    assert int(read_lines(launch, 1)[0]) == uid
    assert "unprivileged_user" in launch.protections


def test_a_bridge_covers_every_closed_directory_but_not_a_file_others_cannot_read():
    import shutil
    import tempfile

    private = Path(tempfile.mkdtemp(prefix="arena-test-closed-"))  # closed, in the open /tmp
    try:
        inner = private / "b"
        inner.mkdir(mode=0o755)
        prog = inner / "bot.sh"
        prog.write_text("#!/bin/sh\n")
        prog.chmod(0o755)
        assert bridge_plan([str(prog)]) == {str(private): ["b"]}
        inner.chmod(0o700)
        assert bridge_plan([str(prog)]) == {str(private): ["b"], str(inner): ["bot.sh"]}  # both closed ones
        inner.chmod(0o755)
        prog.chmod(0o700)
        assert bridge_plan([str(prog)]) is None  # the file itself is closed to others
    finally:
        shutil.rmtree(private)


@pytest.mark.skipif(not cgroup_layout()[0], reason="no writable cgroup hierarchy on this machine")
def test_strict_puts_the_bot_in_its_own_cgroup_and_removes_it():
    launch = Sandbox("strict", Limits(memory_mb=300, pids=40)).prepare([sys.executable, "-c", "pass"])
    dirs = list(launch.cgroup.dirs)
    assert dirs and all(d.is_dir() for d in dirs)
    assert {"cgroup_memory", "cgroup_pids", "cgroup_cpu", "cpu_accounting_tree", "freezer"} <= set(launch.protections)
    launch.cleanup()
    assert not any(d.exists() for d in dirs)


def test_without_cgroups_memory_is_polled_and_the_record_says_why():
    sb = Sandbox("strict", use_cgroups=False)
    sb.prepare([sys.executable, "-c", "pass"]).cleanup()
    rec = sb.record()
    assert rec["tier"] == "strict" and "rss_polling" in rec["protections"]
    assert any(u["protection"] == "cgroup_memory" and "polled instead" in u["reason"] for u in rec["unavailable"])


def test_the_record_lists_what_was_in_force_for_every_bot():
    sb = Sandbox("basic", use_cgroups=False)
    for _ in range(2):
        sb.prepare([sys.executable, "-c", "pass"]).cleanup()
    rec = sb.record()
    assert rec["tier"] == "basic"
    assert rec["protections"][:8] == ["process_group", "session", "temp_dir", "scrubbed_env", "rlimit_cpu",
                                      "rlimit_nofile", "rlimit_fsize", "no_core"]
    assert any(u["protection"] == "cpu_accounting_tree" and "cgroups were turned off" in u["reason"]
               for u in rec["unavailable"])
    if ROOT:
        assert {"unprivileged_user", "rlimit_nproc", "tree_kill"} <= set(rec["protections"])


READER = """
import os, sys
try:
    open(sys.argv[-1]).read()
    print("read")
except OSError as exc:
    print(type(exc).__name__)
print(len(os.listdir(os.path.dirname(os.path.abspath(sys.argv[0])))))
"""


def test_strict_shows_the_programs_folder_never_an_arguments(tmp_path):
    """``./probe --db OUT/results.sqlite``: the executable's folder (and the interpreter its
    ``#!`` line names) is visible, the folder of a mere argument is not."""
    require_strict()
    os.chmod(tmp_path, 0o755)
    (tmp_path / "bot").mkdir(mode=0o755)
    (tmp_path / "out").mkdir(mode=0o755)
    db = tmp_path / "out" / "results.sqlite"
    db.write_text("the results")
    db.chmod(0o644)
    probe = tmp_path / "bot" / "probe"
    probe.write_text(f"#!{sys.executable}\n{READER}")
    probe.chmod(0o755)
    launch = Sandbox("strict").prepare([str(probe), "--db", str(db)])
    try:
        assert str(tmp_path / "bot") in launch.argv and str(tmp_path / "out") not in launch.argv
        read, listed = read_lines(launch, 2)
        assert read == b"FileNotFoundError" and int(listed) == 1
    finally:
        launch.cleanup()


def test_strict_covers_hidden_paths_inside_the_programs_folder(tmp_path):
    require_strict()
    os.chmod(tmp_path, 0o755)
    (tmp_path / "data").mkdir(mode=0o755)
    db = tmp_path / "data" / "book.txt"  # a file of the author's own: hidden only when named
    db.write_text("the book")
    db.chmod(0o644)
    bot = tmp_path / "bot.py"
    bot.write_text(READER)
    bot.chmod(0o644)
    for hide, expected in (([], b"read"), ([str(tmp_path / "data")], b"FileNotFoundError")):
        launch = Sandbox("strict", hide=hide).prepare([sys.executable, str(bot), str(db)])
        try:
            assert read_lines(launch, 2)[0] == expected
        finally:
            launch.cleanup()


def test_a_sandbox_folder_that_another_user_made_is_refused_with_a_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_SANDBOX_ROOT", str(tmp_path))
    theirs = tmp_path / f"arena-sandbox-{os.geteuid()}"
    theirs.symlink_to(tmp_path)
    with pytest.raises(SandboxError, match="is not a folder"):
        Sandbox("basic").prepare([sys.executable, "-c", "pass"])
    theirs.unlink()
    theirs.mkdir()
    if os.geteuid() == 0:
        os.chown(theirs, 4242, 4242)
        with pytest.raises(SandboxError, match="belongs to another user"):
            Sandbox("basic").prepare([sys.executable, "-c", "pass"])


def test_strict_sizes_the_private_tmp_dev_shm_and_working_folder():
    """They live in memory, which no resident-memory poll sees: a bot cannot fill it through
    files; nor the machine's disk through its working folder, file by file under its size cap."""
    require_strict()
    launch = Sandbox("strict", Limits(tmp_mb=8)).prepare(
        ["/bin/sh", "-c", "read x; for d in /tmp /dev/shm $PWD; do for i in 1 2 3; do "
                          "head -c 5000000 /dev/zero > $d/fill$i 2>/dev/null; done; "
                          "echo $(cat $d/fill* | wc -c); done; pwd; echo $HOME; read x"])
    assert "sized_workdir" in launch.protections
    t = LineTransport(launch.argv, cwd=launch.cwd, env=launch.env, preexec_fn=launch.preexec_fn, on_kill=launch.kill_extra)
    t.start()
    try:
        t.send(b"go\n", time.perf_counter() + 10)
        tmp, shm, work, pwd, home = (t.read_line(time.perf_counter() + 20)[0] for _ in range(5))
        assert 0 < int(tmp) <= 8 << 20 and 0 < int(shm) <= 8 << 20 and 0 < int(work) <= 8 << 20
        # at the same path as outside, where the host folder stays empty
        assert pwd.decode() == home.decode() == launch.tmpdir and os.listdir(launch.tmpdir) == []
    finally:
        t.close()
        launch.cleanup()


@pytest.mark.parametrize("how", ["script", "program"])
def test_a_program_loose_in_a_home_folder_brings_itself_not_the_home(how, tmp_path, monkeypatch):
    """``python ~/bot.py`` and ``~/probe``: the home's dotfiles and keys stay out of sight."""
    require_strict()
    os.chmod(tmp_path, 0o755)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("a key")
    program = tmp_path / ("bot.py" if how == "script" else "probe")
    program.write_text(READER if how == "script" else f"#!{sys.executable}\n{READER}")
    program.chmod(0o755)
    argv = ([sys.executable] if how == "script" else []) + [str(program), str(tmp_path / ".ssh" / "id_rsa")]
    launch = Sandbox("strict").prepare(argv)
    try:
        read, listed = read_lines(launch, 2)
        assert read == b"FileNotFoundError" and int(listed) == 1, "only the program is there"
    finally:
        launch.cleanup()


@pytest.mark.parametrize("tier", ["basic", "strict"])
def test_a_bot_packages_folder_is_shown_to_it_when_named(tier, tmp_path):
    """``java -jar pkg/bot.jar``-like commands name no script: the package's folder, given as
    ``program_dir``, is what the bot sees (below a closed folder too, as root)."""
    if tier == "strict":
        require_strict()
    os.chmod(tmp_path, 0o700)  # closed to others, as arena serve keeps its packages
    pkg = tmp_path / "pkg"
    pkg.mkdir(mode=0o755)
    (pkg / "data.txt").write_text("from the package")
    (pkg / "data.txt").chmod(0o644)
    argv = [sys.executable, "-c", f"print(open({str(pkg / 'data.txt')!r}).read())"]
    launch = Sandbox(tier).prepare(argv, program_dir=str(pkg))
    try:
        assert read_lines(launch, 1) == [b"from the package"]
    finally:
        launch.cleanup()
    if os.geteuid() == 0:
        launch = Sandbox(tier).prepare(argv)
        try:
            with pytest.raises(BotCrashed):
                read_lines(launch, 1)
        finally:
            launch.cleanup()


def test_what_a_command_needs_shown_is_found_once_per_while(monkeypatch):
    """Finding the folders a command needs (its interpreter's site-packages read whole) is
    the dearest part of starting a strict process: the same command, PATH and folders reuse
    the answer for VIEW_TTL_S; another command or PATH, or an answer past its time, is found
    anew; and a caller's changes to the list it got never reach the next one."""
    import arena.process.sandbox as sandbox

    calls = []

    def counted(argv, env, program_dir=None, read_only=()):
        calls.append(tuple(argv))
        return ["/opt/one", "/opt/two"]

    monkeypatch.setattr(sandbox, "needed_paths", counted)
    monkeypatch.setattr(sandbox, "_VIEWS", {})
    env = {"PATH": "/usr/bin"}
    first = sandbox._read_only_paths(["python3", "bot.py"], env, "/bots/a")
    first.append("/changed")
    assert sandbox._read_only_paths(["python3", "bot.py"], env, "/bots/a") == ["/opt/one", "/opt/two"]
    assert len(calls) == 1
    sandbox._read_only_paths(["python3", "other.py"], env, "/bots/a")
    sandbox._read_only_paths(["python3", "bot.py"], {"PATH": "/opt/bin:/usr/bin"}, "/bots/a")
    assert len(calls) == 3
    now = time.monotonic()
    monkeypatch.setattr(sandbox.time, "monotonic", lambda: now + sandbox.VIEW_TTL_S + 1)
    sandbox._read_only_paths(["python3", "bot.py"], env, "/bots/a")
    assert len(calls) == 4
