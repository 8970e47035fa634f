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


def test_between_full_scans_the_poll_walks_down_from_the_known_members(monkeypatch):
    scans = []
    real = sb.session_members
    monkeypatch.setattr(sb, "session_members", lambda sid: scans.append(sid) or real(sid))
    proc = subprocess.Popen([sys.executable, "-c", FORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            start_new_session=True, text=True)
    try:
        launch = sb.Launch([sys.executable])
        assert launch._members(proc.pid) == [proc.pid] and len(scans) == 1  # the first poll: a full scan
        launch._next_scan = time.monotonic() + 60  # the next full scan is far away
        proc.stdin.write("fork\n")
        proc.stdin.flush()
        child = int(proc.stdout.readline())
        assert launch._members(proc.pid) == sorted([proc.pid, child])  # found below a known member
        assert len(scans) == 1  # without reading the machine's processes
        launch._next_scan = 0.0
        assert launch._members(proc.pid) == sorted([proc.pid, child]) and len(scans) == 2
    finally:
        proc.kill()
        proc.wait()
        subprocess.run(["pkill", "-KILL", "-s", str(proc.pid)], check=False)


def test_a_known_pid_that_another_process_took_is_not_a_member(monkeypatch):
    """A member's pid is known with its start time: a later process with the same pid (a
    reused pid) is never counted, nor killed for the bot's memory."""
    monkeypatch.setattr(sb, "session_members", lambda sid: [])
    launch = sb.Launch([sys.executable])
    launch._known = {os.getpid(): b"1"}  # this process, but started at another time
    launch._next_scan = time.monotonic() + 60
    assert launch._members(os.getpid()) == []


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
    read at once, not at the next full scan."""
    scans = []
    monkeypatch.setattr(sb, "session_members", lambda sid: scans.append(sid) or [])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    launch = sb.Launch([sys.executable])
    launch._known = {os.getpid(): sb.start_time(os.getpid()), gone.pid: b"1"}
    launch._next_scan = time.monotonic() + 60
    launch._members(os.getpid())
    assert scans == [os.getpid()]
