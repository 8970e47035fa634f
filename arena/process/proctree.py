"""A bot's process tree read from ``/proc``, for the strict tier where no cgroup holds it.

Under strict every process of a bot lives in the PID namespace that bubblewrap made, below
the process the arena started: an orphan is reaped by the namespace's first process, never
by the host's init, so walking the descendants of the started process finds the whole tree,
daemons in new sessions included. From that walk come what cgroups give elsewhere: the
tree's resident memory (for the memory cap), its CPU time (every live process's own and
reaped children's time: each process that ever ran is counted once, in itself while it
lives and in the parent that reaped it afterwards) and freezing (SIGSTOP to every process
until none is left running, so a fork cannot slip through).
"""

from __future__ import annotations

import os
import signal
import time

from .transport import CLK_TCK, proc_files


def _stat_fields(data: bytes) -> list[bytes]:
    return data[data.rfind(b")") + 2:].split()


def descendants(root: int, zombies: bool = False) -> list[int]:
    """``root`` and every live process below it (zombies left out unless ``zombies``)."""
    children: dict[int, list[int]] = {}
    state: dict[int, bytes] = {}
    for pid, data in proc_files("stat", 512):
        fields = _stat_fields(data)
        if len(fields) < 2:
            continue
        state[pid] = fields[0]
        children.setdefault(int(fields[1]), []).append(pid)
    if root not in state:
        return []
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if zombies or state.get(pid) != b"Z":
            out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of every process that ever ran below ``root`` (see the module docstring)."""
    total = 0
    for pid in descendants(root, zombies=True):  # an exited child not yet reaped still holds its time
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = _stat_fields(f.read(512))
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        except (OSError, IndexError, ValueError):
            continue
    return total / CLK_TCK


def signal_tree(root: int, sig: int) -> int:
    """Send ``sig`` to every process of the tree; how many got it."""
    sent = 0
    for pid in descendants(root):
        try:
            os.kill(pid, sig)
            sent += 1
        except OSError:
            pass
    return sent


def _running(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if _stat_fields(f.read(512))[0] not in (b"T", b"t", b"Z", b"X"):
                    out.append(pid)
        except (OSError, IndexError):
            continue
    return out


def stop_tree(root: int, timeout: float = 1.0) -> bool:
    """SIGSTOP the whole tree, again until no process of it runs (a child forked meanwhile
    is stopped too); True once every process is stopped."""
    deadline = time.monotonic() + timeout
    while True:
        pids = descendants(root)
        if not pids:
            return False
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        if not _running(descendants(root)):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)


def continue_tree(root: int) -> None:
    """SIGCONT every process of the tree."""
    signal_tree(root, signal.SIGCONT)
