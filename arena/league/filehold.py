"""Reading a league file without ever dropping this process's SQLite locks.

SQLite locks a database with POSIX record locks, which belong to the *process* and the
file, not to a descriptor: closing *any* descriptor of the file drops every lock the
process holds on it. A process that keeps an SQLite connection open and also opens and
closes the file by other means (to read its header, to copy it) silently loses the shared
lock its connection holds. Another program then believes it is alone with the file and,
when it closes, checkpoints and deletes the write-ahead log the first process still
writes into: every later commit goes to a deleted file and is lost.

So every League in a process reads the file through one descriptor per file, held by
:class:`FileHold` for as long as any League of that file is open, and closed only after
the last League's connection is closed (when this process holds no lock on it).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_held: dict[tuple[int, int], list] = {}  # (device, inode) -> [fd, number of holders]
_guard = threading.Lock()


class FileHold:
    """One holder of the process-wide descriptor of a database file."""

    def __init__(self, path: Path):
        self.path = Path(path)
        with _guard:
            st = os.stat(self.path)
            key = (st.st_dev, st.st_ino)
            if key not in _held:
                fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                st = os.fstat(fd)
                key = (st.st_dev, st.st_ino)
                if key in _held:  # the file was swapped between stat and open: keep fd till the end
                    _held[key][2].append(fd)
                else:
                    _held[key] = [fd, 0, []]
            _held[key][1] += 1
            self.key, self.fd = key, _held[key][0]

    def header(self) -> tuple[bytes, int]:
        """The first 100 bytes of the file and its size."""
        return os.pread(self.fd, 100, 0), os.fstat(self.fd).st_size

    def copy_to(self, dest: Path) -> None:
        """Copy the file's content to ``dest`` through the held descriptor."""
        with open(dest, "wb") as out:
            offset = 0
            while True:
                chunk = os.pread(self.fd, 1 << 20, offset)
                if not chunk:
                    break
                out.write(chunk)
                offset += len(chunk)

    def release(self) -> None:
        """Give up this hold; the descriptor is closed with the last one (call it only after
        this holder's connection is closed)."""
        with _guard:
            if self.fd < 0:
                return
            entry = _held.get(self.key)
            self.fd = -1
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] == 0:
                del _held[self.key]
                for fd in [entry[0], *entry[2]]:
                    os.close(fd)


def held_files() -> int:
    """How many database files this process holds a descriptor of (for tests)."""
    with _guard:
        return len(_held)

