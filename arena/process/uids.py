"""Bot user ids of root arenas: one machine-wide registry, leases, and killing by uid.

When the arena runs as root, each running bot gets a user id of its own, ``UID_BASE +
slot``. Which slots are taken is kept in **one registry for the whole machine**, whatever
``TMPDIR`` each arena has: a root-owned folder (``/run/arena/uids``, or
``/var/lib/arena/uids`` where ``/run`` is missing), one lock file per slot that an arena has
ever leased, held with ``flock`` while the bot runs. So two, three arenas on one machine
never share a uid, and one never kills the bots of another:

- a slot whose lock is held belongs to a running arena and is never touched;
- a slot with a lock file that nobody holds was leased by an arena that is gone (killed,
  or one whose clean-up could not kill everything): its processes and files are leftovers,
  and :func:`sweep_uids` removes them;
- a uid without a lock file was never leased here (or it is a real account, which is
  never leased): nothing of it is touched.

Each lock file holds the last holder's pid and *instance label* (``ARENA_INSTANCE``, or
``pid-<pid>``), so a test suite can tell its own bots from those of other arenas
(:func:`leases_of_instance`).
"""

from __future__ import annotations

import fcntl
import itertools
import os
import pwd
import shutil
import signal
import stat
import tempfile
import time
from functools import lru_cache
from pathlib import Path

from ..errors import ArenaError
from .transport import proc_files

UID_BASE = 60000            # bot user ids: UID_BASE + slot, one per running bot
UID_SLOTS = 2000
REGISTRY_PLACES = ("/run/arena", "/var/lib/arena")
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")
_counter = itertools.count()


class SandboxError(ArenaError):
    """An unknown sandbox tier, impossible limits, or a sandbox that cannot be prepared."""

    exit_code = 2


def instance_label() -> str:
    """This arena's label in the uid registry: ``ARENA_INSTANCE``, else ``pid-<pid>``."""
    label = os.environ.get("ARENA_INSTANCE", "").strip()
    return "".join(c if c.isalnum() or c in "-_.:" else "_" for c in label)[:64] or f"pid-{os.getpid()}"


def _own_folder(path: Path, mode: int, what: str) -> Path:
    """Make ``path`` (a folder of this user's, ``mode``) or check the one that is there: it
    must be a real folder owned by this user and writable by nobody else, or an attacker who
    made it first could read or swap what the arena puts in it."""
    try:
        path.mkdir(mode=mode, parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        raise SandboxError(f"cannot create {what} {path} ({exc.strerror}); set TMPDIR to a folder of your own") \
            from None
    if not stat.S_ISDIR(st.st_mode):
        raise SandboxError(f"{what} {path} is not a folder (a link or a file is in its place); remove it")
    if st.st_uid != os.geteuid():
        raise SandboxError(f"{what} {path} belongs to another user (uid {st.st_uid}); remove it, or set TMPDIR "
                           "to a folder of your own")
    if stat.S_IMODE(st.st_mode) != mode:
        try:
            os.chmod(path, mode)
        except OSError as exc:
            raise SandboxError(f"cannot set the mode of {what} {path} ({exc.strerror})") from None
    return path


def state_root() -> Path:
    """The one folder holding this user's bots' working directories and path bridges:
    ``$TMPDIR/arena-sandbox-<uid>`` (mode 0711: a bot can enter its own folder, list none).
    One per user, so arenas of different users never meet in it; one that another user
    made first is refused with a sentence."""
    return _own_folder(_state_path(), 0o711, "the sandbox folder")


def _state_path() -> Path:
    base = Path(os.environ.get("ARENA_SANDBOX_ROOT") or tempfile.gettempdir())
    return base / f"arena-sandbox-{os.geteuid()}"


def cgroup_records(create: bool = True) -> Path | None:
    """Where each bot cgroup is recorded while it exists (``<arena pid>-<n>``, its folders
    one a line), so that a later start removes those of a dead arena wherever they were
    made: machine-wide for root arenas (beside the uid registry), else the user's own.
    Without ``create``, an ordinary user's folder that does not exist yet is None: a user
    whose bots never had cgroups gets no folder for their records."""
    if os.geteuid() == 0:
        return _own_folder(registry().parent / "cgroups", 0o700, "the bot cgroup records")
    if not create and not (_state_path() / ".cgroups").is_dir():
        return None
    return _own_folder(state_root() / ".cgroups", 0o700, "the bot cgroup records")


@lru_cache(maxsize=1)
def registry() -> Path:
    """The machine-wide folder of uid locks (root only): root-owned, mode 0700."""
    if os.geteuid() != 0:
        raise SandboxError("only an arena that runs as root leases bot user ids")
    last = None
    for place in REGISTRY_PLACES:
        if not os.path.isdir(os.path.dirname(place)):
            continue
        try:
            return _own_folder(Path(place) / "uids", 0o700, "the bot uid registry")
        except SandboxError as exc:
            last = exc
    raise last or SandboxError("no place for the bot uid registry: neither /run nor /var/lib exists")


@lru_cache(maxsize=4096)
def is_account(uid: int) -> bool:
    """Whether ``uid`` is a real account of this machine (never leased to a bot)."""
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def proc_uids() -> dict[int, list[int]]:
    """``{real uid: [pids]}`` of every live (non-zombie) process in the range of bot uids."""
    found: dict[int, list[int]] = {}
    for pid, text in proc_files("status", 2048):
        state = uid = None
        for line in text.split(b"\n"):
            if line.startswith(b"State:"):
                state = line.split()[1:2]
            elif line.startswith(b"Uid:"):
                uid = int(line.split()[1])
                break
        if uid is None or state == [b"Z"] or not UID_BASE <= uid < UID_BASE + UID_SLOTS:
            continue
        found.setdefault(uid, []).append(pid)
    return found


def kill_uid(uid: int, rounds: int = 50) -> bool:
    """Kill every process of the bot user ``uid`` (wherever it moved: other sessions, groups,
    namespaces); True once none is left. A child that becomes ``uid`` sends ``kill(-1)``,
    which reaches all of them at once, so a fork loop cannot outrun it."""
    if not UID_BASE <= uid < UID_BASE + UID_SLOTS or os.geteuid() != 0:
        return False
    for _ in range(rounds):
        if not proc_uids().get(uid):
            return True
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child only makes system calls
            try:
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.005)
    return not proc_uids().get(uid)


def remove_ipc(uid: int) -> int:
    """Remove the System V IPC objects (shared memory, semaphores, message queues) that the
    bot user ``uid`` owns or created; how many."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    removed = 0
    # /proc/sysvipc/<kind>: key id perms ... uid gid cuid cgid ...; the owner's columns differ
    for kind, ctl in (("shm", libc.shmctl), ("sem", libc.semctl), ("msg", libc.msgctl)):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        header = lines[0].split() if lines else []
        for line in lines[1:]:
            row = dict(zip(header, line.split()))
            try:
                owners = {int(row["uid"]), int(row["cuid"])}
                ident = int(row.get("shmid") or row.get("semid") or row.get("msqid"))
            except (KeyError, TypeError, ValueError):
                continue
            if uid in owners:
                args = (ident, 0, 0, None) if kind == "sem" else (ident, 0, None)  # IPC_RMID = 0
                if ctl(*args) == 0:
                    removed += 1
    return removed


def remove_owned(uid: int) -> int:
    """Remove what the bot user ``uid`` left at the top of the shared temporary folders
    (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``$TMPDIR``) and its System V IPC objects; how
    many. Only a bot can own things under its uid, so nothing else is touched."""
    removed = 0
    for folder in dict.fromkeys(SHARED_TEMP + (tempfile.gettempdir(),)):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed + remove_ipc(uid)


def _write_holder(fd: int) -> None:
    data = f"pid={os.getpid()} instance={instance_label()}\n".encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


class UidLease:
    """One bot user id, ``UID_BASE + slot``, held (``flock`` in the machine-wide
    :func:`registry`) while the bot runs; no two running bots, of this arena or another on
    the machine, share one. No passwd entry is needed; uids of real accounts are skipped."""

    def __init__(self):
        folder = registry()
        # rotate through the range: a uid just freed may still count dying processes
        # against its RLIMIT_NPROC
        start = (os.getpid() * 7 + next(_counter) * 13) % UID_SLOTS
        for k in range(UID_SLOTS):
            slot = (start + k) % UID_SLOTS
            if is_account(UID_BASE + slot):
                continue
            fd = os.open(folder / str(slot), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.fd, self.uid = fd, UID_BASE + slot
            _write_holder(fd)
            kill_uid(self.uid)  # leftovers of an arena that was killed
            remove_owned(self.uid)
            return
        raise SandboxError(f"all {UID_SLOTS} bot user ids are in use")

    def release(self) -> None:
        """Kill whatever still runs as this uid, remove what it left, then free it (in that
        order: once freed, the uid may belong to another arena's bot)."""
        if self.fd >= 0:
            kill_uid(self.uid)
            remove_owned(self.uid)
            os.close(self.fd)
            self.fd = -1


def _holder(path: Path) -> dict:
    try:
        text = path.read_text()
    except OSError:
        return {}
    return dict(part.split("=", 1) for part in text.split() if "=" in part)


def leases_of_instance(label: str) -> list[int]:
    """Bot uids whose last lease was taken by an arena labelled ``label`` (held or not)."""
    if os.geteuid() != 0:
        return []
    folder = registry()
    out = []
    for name in os.listdir(folder):
        if name.isdigit() and _holder(folder / name).get("instance") == label:
            out.append(UID_BASE + int(name))
    return sorted(out)


def sweep_uids() -> int:
    """Kill the processes and remove the files and IPC objects of bot uids that an arena
    leased and no running arena holds (root only); how many processes were killed."""
    if os.geteuid() != 0:
        return 0
    folder = registry()
    owners = proc_uids()
    for temp in dict.fromkeys(SHARED_TEMP + (tempfile.gettempdir(),)):
        try:
            for entry in os.scandir(temp):
                uid = entry.stat(follow_symlinks=False).st_uid
                if UID_BASE <= uid < UID_BASE + UID_SLOTS:
                    owners.setdefault(uid, [])
        except OSError:
            continue
    killed = 0
    for uid, pids in owners.items():
        path = folder / str(uid - UID_BASE)
        if is_account(uid) or not path.exists():
            continue  # never leased by an arena here: not ours to touch
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a running arena holds it
        try:
            kill_uid(uid)
            remove_owned(uid)
            killed += len(pids)
        finally:
            os.close(fd)
    return killed
