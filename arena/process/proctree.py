"""A bot's process tree read from ``/proc``, for the strict tier where no cgroup holds it.

Under strict every process of a bot lives in the PID namespace that bubblewrap made, below
the process the arena started: an orphan is reaped by the namespace's first process, never
by the host's init, so walking the descendants of the started process finds the whole tree,
daemons in new sessions included. From that walk come what cgroups give elsewhere: the
tree's resident memory (for the memory cap), its CPU time (:class:`TreeAccount`) and
freezing (SIGSTOP to every process until none is left running, so a fork cannot slip
through).

CPU time: a process's ``cutime``/``cstime`` hold only the children it *waited for*; a child
the kernel reaps itself (its parent ignores SIGCHLD, or set ``SA_NOCLDWAIT``) leaves its
time nowhere, so a sum over the live tree misses it. :class:`TreeAccount` keeps the last
reading of every process it ever saw, keyed by pid and start time, and charges a process
that is gone to the parent it had. The kernel could say it exactly (taskstats), but that
needs ``CAP_NET_ADMIN``, which an ordinary user does not have; BSD process accounting
needs ``CAP_SYS_PACCT``. What a poll can still miss: a child born and reaped by the kernel
between two polls, and of one it saw, what it used after the last one (see ``Launch._poll``
for how often that is).
"""

from __future__ import annotations

import os
import signal
import threading
import time

from .transport import CLK_TCK, proc_files, read_file, stat_fields


def start_time(pid: int) -> bytes | None:
    """When ``pid`` started (``/proc/PID/stat``'s field, in clock ticks since boot), which
    tells a process from a later one with the same pid; None where it is gone."""
    try:
        fields = stat_fields(read_file(f"/proc/{pid}/stat", 512))
    except OSError:
        return None
    return fields[19] if len(fields) > 19 else None


def descendants(root: int, zombies: bool = False) -> list[int]:
    """``root`` and every live process below it (zombies left out unless ``zombies``)."""
    return [pid for pid, fields in tree_stats(root).items() if zombies or fields[0] != b"Z"]


def _scan(root: int) -> dict[int, list[bytes]]:
    """:func:`tree_stats` from every process of the machine (a kernel without children files)."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[bytes]] = {}
    for pid, data in proc_files("stat", 512):
        fields = stat_fields(data)
        if len(fields) < 20:
            continue
        stats[pid] = fields
        children.setdefault(int(fields[1]), []).append(pid)
    if root not in stats:
        return {}
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        out[pid] = stats[pid]
        todo.extend(children.get(pid, ()))
    return out


def _children(pid: int) -> list[int] | None:
    """The children of every thread of ``pid`` (``/proc/PID/task/TID/children``); None where
    this kernel has no such file (``CONFIG_PROC_CHILDREN``)."""
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            out.extend(map(int, read_file(f"/proc/{pid}/task/{tid}/children").split()))
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue
            return None
        except OSError:
            continue
    return out


def tree_stats(root: int) -> dict[int, list[bytes]]:
    """``{pid: fields of /proc/PID/stat from the state on}`` for ``root`` and every process
    below it, zombies included. Walks down from ``root`` through the children files (a few
    reads per process of the tree), else reads every process of the machine."""
    out: dict[int, list[bytes]] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            fields = stat_fields(read_file(f"/proc/{pid}/stat", 512))
        except OSError:
            continue
        if len(fields) < 20 or pid in out:
            continue
        out[pid] = fields
        kids = _children(pid)
        if kids is None:
            return _scan(root)
        todo.extend(kids)
    return out


class TreeAccount:
    """CPU time of every process that ever ran below ``root``, those reaped by the kernel
    included, as far as :meth:`sample` was called while they lived.

    Each sample reads every process of the tree: its own time (``utime + stime``, all its
    threads), the time of the children it waited for (``cutime + cstime``) and its parent.
    A process gone since the previous sample is charged to the parent it had then: its last
    own time plus what its children account for, the larger of what its ``cutime`` says and
    what the account saw of them. A parent that waited for the child finds it in its
    ``cutime`` too, so the larger of the two counts it once; one that let the kernel reap it
    has it only in the account. The total never goes down."""

    def __init__(self, root: int):
        self.root = root
        self._live: dict[tuple[int, int], tuple[int, int, tuple[int, int] | None]] = {}
        self._absorbed: dict[tuple[int, int], int] = {}
        self._dead = 0
        self._ticks = 0
        self._root_start: bytes | None = None
        self._lock = threading.Lock()
        #: whether the last sample found processes born or gone since the one before
        self.changed = False

    def sample(self) -> float:
        """Read the tree now; the CPU seconds of the whole tree so far."""
        with self._lock:
            stats = tree_stats(self.root) if self.root > 0 else {}
            start = stats[self.root][19] if self.root in stats else None
            if self._root_start is None:
                self._root_start = start
            if start is None or start != self._root_start:
                stats, self.root = {}, 0  # gone for good (its pid may be another's now)
            keys = {pid: (pid, int(f[19])) for pid, f in stats.items()}
            now = {}
            for pid, f in stats.items():
                now[keys[pid]] = (int(f[11]) + int(f[12]), int(f[13]) + int(f[14]), keys.get(int(f[1])))
            # the set of processes: a process gone since the last sample took what it used
            # after that sample with it, so the poll reads often while the set changes
            self.changed = now.keys() != self._live.keys()
            # children before their parents (a child starts after its parent), so that a
            # parent gone in the same interval takes its children's time with it
            for key in sorted((k for k in self._live if k not in now), key=lambda k: k[1], reverse=True):
                own, kids, parent = self._live.pop(key)
                credit = own + max(kids, self._absorbed.pop(key, 0))
                if parent is not None and (parent in now or parent in self._live):
                    self._absorbed[parent] = self._absorbed.get(parent, 0) + credit
                else:
                    self._dead += credit
            self._live = now
            total = self._dead + sum(own + max(kids, self._absorbed.get(key, 0))
                                     for key, (own, kids, _) in self._live.items())
            self._ticks = max(self._ticks, total)
            return self._ticks / CLK_TCK


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
            if stat_fields(read_file(f"/proc/{pid}/stat", 512))[0] not in (b"T", b"t", b"Z", b"X"):
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
