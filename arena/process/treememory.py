"""Memory a bot holds where no resident-memory count sees it, for the polled memory cap.

Where no cgroup caps a bot's memory, ``Launch._poll`` adds up what its processes have
resident. Pages of a file in memory that no process maps are in no process's resident set:
a bot could keep gigabytes in ``memfd_create`` files it only writes to, or in files of a
memory-backed folder. :meth:`HiddenMemory.hidden_bytes` counts them:

- each ``memfd`` a process of the bot holds open (``/proc/PID/fd``), once however many
  descriptors name it, by the blocks it has (``st_blocks``, so a sparse file counts what it
  holds, not its length);
- each memory-backed folder (tmpfs) mounted in a mount namespace of the bot's that the
  arena's own namespace does not have (strict's ``/tmp``, ``/dev/shm``, working folder),
  by what it holds (``statvfs``); these are sized as well, so they could not take more
  than their size anyway.

:meth:`HiddenMemory.mapped_bytes` is what of those is also mapped, so counted in a process's
proportional set size too: the cap's exact count subtracts it.

What this does not see: a memfd held only by a message in flight on a Unix socket (a
descriptor sent and closed) or by an io_uring table, System V shared memory segments
left detached (the bot's own IPC namespace holds them, and as an ordinary user the arena
may not enter it to read ``/proc/sysvipc/shm``: ``setns`` needs ``CAP_SYS_ADMIN`` in the
arena's own user namespace), and a memory-backed folder the bot mounts in a user namespace
of its own (``ramfs`` reports no usage). A cgroup counts all of them.
"""

from __future__ import annotations

import os

_MEMORY_FS = (b"tmpfs", b"ramfs", b"hugetlbfs")


def _own_mount_ns() -> str:
    try:
        return os.readlink("/proc/self/ns/mnt")
    except OSError:
        return ""


def _memory_mounts(pid: int) -> dict[int, bytes]:
    """``{device: mount point}`` of the memory-backed folders ``pid`` sees."""
    out: dict[int, bytes] = {}
    try:
        with open(f"/proc/{pid}/mountinfo", "rb") as f:
            lines = f.read().split(b"\n")
    except OSError:
        return out
    for line in lines:
        head, sep, tail = line.partition(b" - ")
        if not sep or tail.split(b" ", 1)[0] not in _MEMORY_FS:
            continue
        fields = head.split(b" ")
        major, minor = fields[2].split(b":")
        out.setdefault(os.makedev(int(major), int(minor)), fields[4])
    return out


class HiddenMemory:
    """What one bot holds in memory-backed files (see the module docstring); the arena's
    own mounts are read once."""

    def __init__(self):
        self._host_ns = _own_mount_ns()
        self._host_devices = set(_memory_mounts(os.getpid()))
        self.memfds: dict[tuple[int, int], int] = {}
        self.folders: dict[int, int] = {}

    def hidden_bytes(self, pids: list[int]) -> int:
        """Bytes in memfds held open by ``pids`` and in the memory-backed folders of their
        own mount namespaces, each object counted once."""
        memfds: dict[tuple[int, int], int] = {}
        folders: dict[int, int] = {}
        namespaces: set[str] = {self._host_ns}
        for pid in pids:
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                path = f"/proc/{pid}/fd/{fd}"
                try:
                    if not os.readlink(path).startswith("/memfd:"):
                        continue
                    st = os.stat(path)
                except OSError:
                    continue
                memfds[(st.st_dev, st.st_ino)] = st.st_blocks * 512
            try:
                ns = os.readlink(f"/proc/{pid}/ns/mnt")
            except OSError:
                continue
            if ns in namespaces:
                continue
            namespaces.add(ns)
            for dev, point in _memory_mounts(pid).items():
                if dev in self._host_devices or dev in folders:
                    continue
                try:
                    st = os.statvfs(f"/proc/{pid}/root".encode() + point)
                except OSError:
                    continue
                folders[dev] = (st.f_blocks - st.f_bfree) * st.f_frsize
        self.memfds, self.folders = memfds, folders
        return sum(memfds.values()) + sum(folders.values())

    def mapped_bytes(self, pids: list[int]) -> int:
        """Of what the last :meth:`hidden_bytes` counted, the proportional set size that
        ``pids`` have mapped (it is in their ``Pss`` too). Reads the full ``smaps`` of the
        processes that map shared memory at all, so it is for the exact count past the cap."""
        if not self.memfds and not any(self.folders.values()):
            return 0
        total = 0
        for pid in pids:
            if not _maps_shmem(pid):
                continue
            try:
                with open(f"/proc/{pid}/smaps", "rb") as f:
                    counted = False
                    for line in f:
                        if line[:1] in b"0123456789abcdef" and b"-" in line.split(b" ", 1)[0]:
                            fields = line.split()
                            major, minor = fields[3].split(b":")
                            dev, ino = os.makedev(int(major, 16), int(minor, 16)), int(fields[4])
                            counted = (dev, ino) in self.memfds or dev in self.folders
                        elif counted and line.startswith(b"Pss:"):
                            total += int(line.split()[1]) << 10
            except (OSError, IndexError, ValueError):
                continue
        return total


def _maps_shmem(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss_Shmem:"):
                    return int(line.split()[1]) > 0
    except (OSError, IndexError, ValueError):
        return False
    return True  # an older kernel without Pss_Shmem: read smaps
