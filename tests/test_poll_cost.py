"""The polled stand-ins for cgroup caps cost what the bot's own processes cost, not what the
machine's do: the memory poll reads every process of the machine once per ``FULL_SCAN_S``
and walks down from the bot's known processes in between; the CPU account polls fast only
while processes come and go in the tree."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from arena.process import sandbox as sb
from arena.process.proctree import TreeAccount

FORKER = """
import os, sys, time
sys.stdin.readline()            # wait for the word to fork
pid = os.fork()
if pid == 0:
    sys.stdin.readline()        # the child: block until the test ends
    os._exit(0)
print(pid, flush=True)
sys.stdin.readline()
"""


def _machine(monkeypatch) -> sb.MachineScan:
    """A fresh shared read of the machine for this test, whose ``reads`` count the scans."""
    machine = sb.MachineScan(sb.Launch.FULL_SCAN_S)
    monkeypatch.setattr(sb, "MACHINE", machine)
    return machine


def _far_from_the_next_slot(monkeypatch, launch) -> None:
    """Pin the clock inside one slot of the machine's reads: the next one is far away."""
    now = time.monotonic()
    monkeypatch.setattr(sb.time, "monotonic", lambda: now)
    launch._scan_slot = int(now // sb.Launch.FULL_SCAN_S)


def test_between_full_scans_the_poll_walks_down_from_the_known_members(monkeypatch):
    machine = _machine(monkeypatch)
    proc = subprocess.Popen([sys.executable, "-c", FORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            start_new_session=True, text=True)
    try:
        launch = sb.Launch([sys.executable])
        assert launch._members(proc.pid) == [proc.pid] and machine.reads == 1  # the first poll: a full scan
        _far_from_the_next_slot(monkeypatch, launch)
        proc.stdin.write("fork\n")
        proc.stdin.flush()
        child = int(proc.stdout.readline())
        assert launch._members(proc.pid) == sorted([proc.pid, child])  # found below a known member
        assert machine.reads == 1  # without reading the machine's processes
        later = time.monotonic() + sb.Launch.FULL_SCAN_S  # the next slot
        monkeypatch.setattr(sb.time, "monotonic", lambda: later)
        assert launch._members(proc.pid) == sorted([proc.pid, child]) and machine.reads == 2
    finally:
        proc.kill()
        proc.wait()
        subprocess.run(["pkill", "-KILL", "-s", str(proc.pid)], check=False)


def test_the_bots_of_one_process_share_a_slots_read_of_the_machine(monkeypatch):
    """Several bots polled by one referee (a worker's pool) read the machine once a slot
    between them; a bot started after that read has it read again (it is not in it yet)."""
    machine = _machine(monkeypatch)
    procs = [subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE,
                              start_new_session=True) for _ in range(3)]
    try:
        now = time.monotonic()
        monkeypatch.setattr(sb.time, "monotonic", lambda: now)
        launches = [sb.Launch([sys.executable]) for _ in procs]
        for launch, proc in zip(launches, procs):
            assert launch._members(proc.pid) == [proc.pid]
        assert machine.reads == 1
        late = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE,
                                start_new_session=True)
        procs.append(late)
        assert sb.Launch([sys.executable])._members(late.pid) == [late.pid] and machine.reads == 2
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_a_known_pid_that_another_process_took_is_not_a_member(monkeypatch):
    """A member's pid is known with its start time: a later process with the same pid (a
    reused pid) is never counted, nor killed for the bot's memory."""
    _machine(monkeypatch)
    launch = sb.Launch([sys.executable])
    launch._known = {os.getpid(): b"1"}  # this process, but started at another time
    _far_from_the_next_slot(monkeypatch, launch)
    # the walk does not take this process (not the same start time), nor does the machine's
    # read (this process is in no session of the pid asked about, which is no process)
    assert launch._members(2 ** 22 + 7) == []


def test_the_account_changes_when_processes_come_and_go_not_when_they_work():
    proc = subprocess.Popen([sys.executable, "-c", "import sys\nwhile True: pass"])
    try:
        account = TreeAccount(proc.pid)
        account.sample()
        time.sleep(0.05)
        first = account.sample()
        time.sleep(0.1)
        assert account.sample() > first  # it works: its time grows ...
        assert not account.changed       # ... but nothing was born or gone: poll slowly
    finally:
        proc.kill()
        proc.wait()


def test_a_member_that_ended_brings_the_full_scan_forward(monkeypatch):
    """What an ended member forked may have left the tree with it (a daemon): the machine is
    read at once, not at the next slot, even when this slot's read is there already."""
    machine = _machine(monkeypatch)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    launch = sb.Launch([sys.executable])
    _far_from_the_next_slot(monkeypatch, launch)
    machine.read(os.getpid(), False)
    assert machine.reads == 1
    launch._known = {os.getpid(): sb.start_time(os.getpid()), gone.pid: b"1"}
    launch._members(os.getpid())
    assert machine.reads == 2


def test_proc_files_are_read_whole_or_to_their_size(tmp_path):
    """The polls read /proc without Python file objects: a file longer than one read (a
    children file of a fork bomb's parent) comes whole, and a sized read stops at its size."""
    from arena.process.transport import read_file as _read
    from arena.process.transport import proc_files

    big = tmp_path / "children"
    big.write_bytes(b" ".join(str(n).encode() for n in range(100000)))
    assert _read(str(big)) == big.read_bytes() and len(big.read_bytes()) > 3 * 65536
    assert _read(str(big), 10) == big.read_bytes()[:10]
    mine = dict(proc_files("stat", 512))[os.getpid()]
    assert mine.startswith(f"{os.getpid()} (".encode()) and len(mine) <= 512
    whole = dict(proc_files("status"))[os.getpid()]
    assert whole.startswith(b"Name:") and b"\nUid:" in whole and whole.endswith(b"\n")
