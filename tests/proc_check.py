"""Helpers of the real-process tests: the misbehaving bot's command, and leftover checks."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from arena.process.transport import session_members
from arena.process.uids import SHARED_TEMP, UID_BASE, UID_SLOTS, instance_label, leases_of_instance, proc_uids

MISBEHAVE = str(Path(__file__).parent / "bots" / "misbehave.py")


def misbehaving(mode: str, *args: str) -> list[str]:
    """The command of ``tests/bots/misbehave.py MODE ARGS``."""
    return [sys.executable, MISBEHAVE, mode, *args]


def assert_gone(pid: int, timeout: float = 3.0) -> None:
    """Every process of the bot's group and session is gone (zombies awaiting reaping aside)."""
    assert pid > 0
    deadline = time.monotonic() + timeout
    while session_members(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session_members(pid) == [], f"processes of bot {pid} survived: {session_members(pid)}"
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return
    # Only zombies (already dead, not yet reaped by init) may remain in the group.
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            assert int(fields[2]) != pid or fields[0] == b"Z", f"process {name} of group {pid} is alive"


def our_bot_uids() -> set[int]:
    """The bot uids that arenas of this test run leased (see ``tests/conftest.py``)."""
    return set(leases_of_instance(instance_label()))


def leftover_bot_processes() -> list[str]:
    """Live processes of this test run's bot uids (other arenas' bots are not ours to judge)."""
    ours = our_bot_uids()
    return [f"process {pid} of bot uid {uid}" for uid, pids in proc_uids().items() if uid in ours for pid in pids]


def leftover_bot_files() -> list[str]:
    """Entries of the shared temporary folders owned by this test run's bot uids."""
    ours = our_bot_uids()
    found = []
    for folder in SHARED_TEMP:
        for entry in os.scandir(folder):
            try:
                uid = entry.stat(follow_symlinks=False).st_uid
            except OSError:
                continue
            if UID_BASE <= uid < UID_BASE + UID_SLOTS and uid in ours:
                found.append(f"file {entry.path} of bot uid {uid}")
    return found


def ipc_keys() -> set[int]:
    """The keys of every System V IPC object (shared memory, semaphores, message queues) of this IPC namespace."""
    keys = set()
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        keys.update(int(line.split()[0]) for line in lines if line.split())
    return keys


def die_with_parent() -> None:
    """A ``preexec_fn`` for servers and helpers a test starts: the child gets SIGKILL when the
    test's process dies, so a test run killed midway (a time-out, Ctrl-C) leaves no server
    playing on in the background."""
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
