"""Sandbox tiers for bot processes, and what the machine actually allows.

Every tier: a bot never runs as root. When the arena is root, each bot runs as a uid of
its own (``UID_BASE + slot``, leased with a lock file so no two running bots share one),
reaching a program below a closed directory through a *path bridge* (``none``,
``basic``) or bubblewrap's bind mounts (``strict``); every process of that uid, and of the
bot's cgroup, is killed when the game ends, and what it left in the shared temporary
folders is removed. :func:`sweep_stale` removes what killed arenas left.

- ``none``: a plain subprocess in its own session and process group (for development).
- ``basic``: also a fresh working directory under :func:`state_root`, a scrubbed
  environment (only ``PATH``, locale, ``TZ``, ``PYTHONPATH``; ``HOME`` and ``TMPDIR`` point
  to the working directory) and rlimits on CPU time, open files, file size, processes of
  its uid, and no core dumps.
- ``strict``: basic, inside bubblewrap (``bwrap``): its own PID, IPC, UTS, network and
  mount namespaces, a read-only view of the system, its interpreter and its program
  folder, a private ``/tmp`` and ``/dev/shm``, its working directory the only writable
  place; cgroups (v2, or v1 ``memory``, ``pids``, ``cpu``, ``cpuacct``, ``freezer``) cap
  memory, processes and CPU bandwidth, count the CPU of the whole tree and freeze it.
  ``RLIMIT_AS`` is never the memory cap: it breaks Go, JVM and Node. Where bubblewrap or
  a controller is missing, strict refuses with a sentence, or falls back to a named tier.

Every protection is detected at run time. One that is not available is reported with a
one-line reason (``Sandbox.record()``), so the game record says what was in force.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import itertools
import os
import pwd
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .cgroups import Cgroup, cgroup_layout, pid_alive, sweep_cgroups
from ..errors import ArenaError
from .transport import proc_files, session_members

TIERS = ("none", "basic", "strict")
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH")
UID_BASE = 60000            # bot user ids: UID_BASE + slot, one per running bot
UID_SLOTS = 2000
_counter = itertools.count()


class SandboxError(ArenaError):
    """An unknown sandbox tier or impossible limits."""

    exit_code = 2


@dataclass(frozen=True)
class Limits:
    """Resource limits of the ``basic`` and ``strict`` tiers (one bot process tree)."""

    cpu_s: int = 900
    nofile: int = 256
    fsize_mb: int = 64
    memory_mb: int = 1024
    pids: int = 128
    rss_poll_ms: int = 100
    cpus: float = 1.0           # strict: cores a bot's whole tree may use (CFS quota); 0: no cap
    log_kb: int = 1024          # stderr kept per bot per game
    log_total_mb: int = 256     # stderr kept across a log folder (a tournament's logs)


# ---------------------------------------------------------------- capability detection
@lru_cache(maxsize=1)
def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _unshare_net() -> None:
    if _libc().unshare(CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def _child_survives(preexec) -> str:
    """Run ``true`` with ``preexec`` between fork and exec: "" if it worked, else why not."""
    true = shutil.which("true") or "/bin/true"
    try:
        subprocess.run([true], preexec_fn=preexec, check=True, timeout=10,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return ""


@lru_cache(maxsize=1)
def netns_available() -> tuple[bool, str]:
    """Whether a child may enter a fresh network namespace, and why not."""
    why = _child_survives(_unshare_net)
    return (False, f"cannot create a network namespace ({why}); the bot has the host's network") if why else (True, "")


def _unshare_mounts() -> None:
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0 or libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


@lru_cache(maxsize=1)
def mountns_available() -> tuple[bool, str]:
    """Whether a child may enter a private mount namespace (for path bridges), and why not."""
    why = _child_survives(_unshare_mounts)
    return (False, f"cannot create a mount namespace ({why})") if why else (True, "")


@lru_cache(maxsize=1)
def unprivileged_user() -> tuple[int, int] | None:
    """``(uid, gid)`` of ``nobody`` when the arena runs as root, else None."""
    if os.geteuid() != 0:
        return None
    try:
        pw = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return pw.pw_uid, pw.pw_gid


def world_accessible(path: str) -> bool:
    """Whether every directory above ``path`` is searchable by others and the file readable."""
    p = Path(path).resolve()
    try:
        if not p.stat().st_mode & 0o004:
            return False
        for parent in p.parents:
            if not parent.stat().st_mode & 0o001:
                return False
    except OSError:
        return False
    return True


def _enterable(folder: str) -> bool:
    """Whether others may enter ``folder`` and every directory above it."""
    p = Path(folder).resolve()
    try:
        return all(d.stat().st_mode & 0o001 for d in (p, *p.parents))
    except OSError:
        return False


def bridge_plan(files: list[str]) -> dict[str, list[str]] | None:
    """How an unprivileged user can reach ``files`` that sit below directories it cannot
    search (an interpreter under ``/root``, a script in pytest's ``/tmp/pytest-of-root/...``):
    ``{blocking directory: [child names to expose]}``, every closed directory on the way.

    None when a file cannot be bridged: it is not readable by others itself, or ``/`` is closed."""
    plan: dict[str, list[str]] = {}
    for name in files:
        path = Path(name).resolve()
        try:
            if not path.stat().st_mode & 0o004:
                return None
            closed = [d for d in path.parents if not d.stat().st_mode & 0o001]
        except OSError:
            return None
        if Path("/") in closed:
            return None
        for d in closed:
            child = path.relative_to(d).parts[0]
            children = plan.setdefault(str(d), [])
            if child not in children:
                children.append(child)
    return plan


def _make_bridges(plan: dict[str, list[str]]) -> tuple[str, list[tuple[bytes, bytes]]]:
    """A root-owned folder standing in for each closed directory (mode 0755, holding only the
    children to expose), and the bind mounts that put it in place, in order (outer
    directories first: a deeper stand-in is mounted through the outer one)."""
    top = _new_dir("bridge")
    os.chmod(top, 0o755)
    mounts: list[tuple[bytes, bytes]] = []
    for i, (closed, children) in enumerate(sorted(plan.items(), key=lambda kv: kv[0].count("/"))):
        stand_in = os.path.join(top, str(i))
        os.mkdir(stand_in, 0o755)
        for child in children:
            source = os.path.join(closed, child)
            target = os.path.join(stand_in, child)
            if os.path.isdir(source):
                os.mkdir(target, 0o755)
            else:
                open(target, "wb").close()
            mounts.append((os.fsencode(source), os.fsencode(target)))
        mounts.append((os.fsencode(stand_in), os.fsencode(closed)))
    return top, mounts




# ---------------------------------------------------------------- the arena's own root
def state_root() -> Path:
    """The one folder holding every bot's working directory, path bridge and uid lease
    (``$TMPDIR/arena-sandbox``, mode 0711: a bot can enter its own folder, list none)."""
    root = Path(os.environ.get("ARENA_SANDBOX_ROOT") or tempfile.gettempdir()) / "arena-sandbox"
    if not root.is_dir():
        root.mkdir(mode=0o711, parents=True, exist_ok=True)
        try:
            os.chmod(root, 0o711)
        except OSError:
            pass
    return root


def _new_dir(label: str) -> str:
    """A fresh folder ``<root>/<arena pid>-<n>-<label>``: a sweep knows whose it is."""
    name = f"{os.getpid()}-{next(_counter)}-{re.sub(r'[^A-Za-z0-9_.]', '_', label)[:40]}"
    path = state_root() / name
    path.mkdir(mode=0o700)
    return str(path)


def _proc_uids() -> dict[int, list[int]]:
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
        if not _proc_uids().get(uid):
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
    return not _proc_uids().get(uid)


class UidLease:
    """One bot user id, ``UID_BASE + slot``, held (``flock``) while the bot runs; no two running
    bots, in this arena or another on the machine, share one. No passwd entry is needed."""

    def __init__(self):
        folder = state_root() / "uids"
        folder.mkdir(mode=0o700, exist_ok=True)
        # rotate through the range: a uid just freed may still count dying processes
        # against its RLIMIT_NPROC
        start = (os.getpid() * 7 + next(_counter) * 13) % UID_SLOTS
        for k in range(UID_SLOTS):
            slot = (start + k) % UID_SLOTS
            fd = os.open(folder / str(slot), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.fd, self.uid = fd, UID_BASE + slot
            kill_uid(self.uid)  # leftovers of a run that was killed
            return
        raise SandboxError(f"all {UID_SLOTS} bot user ids are in use")

    def release(self) -> None:
        """Kill whatever still runs as this uid, then free it."""
        if self.fd >= 0:
            kill_uid(self.uid)
            os.close(self.fd)
            self.fd = -1


SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")


def remove_owned(uid: int) -> int:
    """Remove what the bot user ``uid`` left at the top of the shared temporary folders
    (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``$TMPDIR``); how many entries. Only a bot can own
    files under its uid, so nothing else is touched."""
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
    return removed


def sweep_stale() -> dict:
    """Remove what killed arenas left: bot processes, working folders, bridges, cgroups and
    mounts. Run at the start of every run; returns counts of what was removed."""
    removed = {"processes": 0, "folders": 0, "cgroups": 0, "mounts": 0}
    root = state_root()
    if os.geteuid() == 0:
        folder = root / "uids"
        folder.mkdir(mode=0o700, exist_ok=True)
        owners = _proc_uids()
        for temp in dict.fromkeys(SHARED_TEMP + (tempfile.gettempdir(),)):
            try:
                for entry in os.scandir(temp):
                    uid = entry.stat(follow_symlinks=False).st_uid
                    if UID_BASE <= uid < UID_BASE + UID_SLOTS:
                        owners.setdefault(uid, [])
            except OSError:
                continue
        for uid, pids in owners.items():
            try:
                fd = os.open(folder / str(uid - UID_BASE), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
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
                removed["processes"] += len(pids)
            finally:
                os.close(fd)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            points = [line.split()[4] for line in f]
    except OSError:
        points = []
    for point in sorted(points, key=len, reverse=True):
        if point.startswith(str(root) + "/"):
            owner = point[len(str(root)) + 1:].split("-", 1)[0]
            if owner.isdigit() and not pid_alive(int(owner)):
                if _libc().umount2(os.fsencode(point), 2) == 0:  # MNT_DETACH
                    removed["mounts"] += 1
    try:
        names = os.listdir(root)
    except OSError:
        names = []
    for name in names:
        owner = name.split("-", 1)[0]
        if owner.isdigit() and int(owner) != os.getpid() and not pid_alive(int(owner)):
            shutil.rmtree(root / name, ignore_errors=True)
            removed["folders"] += 1
    removed["cgroups"] = sweep_cgroups()
    return removed


# ---------------------------------------------------------------- strict: bubblewrap
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
STRICT_CGROUPS = ("memory", "pids", "cpu", "cpuacct", "freezer")


@lru_cache(maxsize=1)
def bwrap_status() -> tuple[str | None, str]:
    """``(path of bwrap, "")`` if bubblewrap can build a sandbox here, else ``(None, why)``."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None, ("bubblewrap is not installed (the strict tier needs it: apt-get install bubblewrap)")
    argv = [exe, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--die-with-parent",
            "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"bubblewrap cannot run here ({exc})"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, (f"bubblewrap cannot create namespaces here ({why[-1] if why else done.returncode}); "
                      "run the arena as root or allow unprivileged user namespaces")
    return exe, ""


def strict_missing(use_cgroups: bool = True) -> str:
    """Why the strict tier cannot run on this machine, in one sentence; "" if it can."""
    exe, why = bwrap_status()
    if exe is None:
        return why
    if not use_cgroups:
        return ""
    layout, why = cgroup_layout()
    if "v2" in layout:
        return ""
    missing = [c for c in STRICT_CGROUPS if c not in layout]
    if missing:
        return (f"the cgroup controller{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                f"{'are' if len(missing) > 1 else 'is'} not writable here ({why or 'not mounted or not delegated'}); "
                "run the arena as root on a machine with cgroups mounted under /sys/fs/cgroup")
    return ""


def _under(path: str, dirs) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _read_only_paths(argv: list[str], env: dict) -> list[str]:
    """What a bot needs to see, read-only: its program's folder (an interpreter's whole
    installation), the packages of a ``python -m`` module, and ``PYTHONPATH``."""
    paths: list[str] = []

    def add(p: str) -> None:
        p = os.path.realpath(p) if os.path.exists(p) else ""
        if p and p != "/" and not _under(p, SYSTEM_DIRS) and p not in paths:
            paths.append(p)

    def add_prefix(exe: str) -> None:
        folder = os.path.dirname(exe)
        add(os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder)

    exe = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
    if exe:
        add_prefix(os.path.abspath(exe))  # a venv's folder (its pyvenv.cfg, site-packages)
        add_prefix(os.path.realpath(exe))  # the real installation
        for seen in (os.path.abspath(exe), os.path.realpath(exe)):
            if os.path.samefile(seen, sys.executable) if os.path.exists(seen) else False:
                add(sys.prefix)
                add(sys.base_prefix)
    script = False
    for i, arg in enumerate(argv[1:], 1):
        if os.path.isfile(arg) and not script:  # the program's own folder only, not its arguments'
            add(os.path.dirname(os.path.abspath(arg)))
            script = True
        elif argv[i - 1] == "-m" and exe and os.path.realpath(exe) == os.path.realpath(sys.executable):
            paths.extend(p for p in _package_dirs(arg) if p not in paths)
    for entry in (env.get("PYTHONPATH") or "").split(os.pathsep):
        if entry and os.path.isdir(entry):
            add(entry)
    return paths


def _package_dirs(module: str) -> list[str]:
    """The folders of the top-level packages beside ``module``'s (a project's code, not its data)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    top = os.path.realpath(list(spec.submodule_search_locations)[0])
    parent = os.path.dirname(top)
    out = []
    for name in sorted(os.listdir(parent)):
        d = os.path.join(parent, name)
        if os.path.isfile(os.path.join(d, "__init__.py")) and not _under(d, SYSTEM_DIRS):
            out.append(d)
    return out


def bwrap_argv(bwrap: str, argv: list[str], workdir: str, read_only: list[str], uid: int | None) -> list[str]:
    """The bubblewrap command that runs ``argv`` in fresh PID, IPC, UTS, network and mount
    namespaces: the system folders and ``read_only`` read-only, a private ``/tmp`` and
    ``/dev/shm``, ``workdir`` its only writable folder, as ``uid`` without capabilities."""
    out = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session"]
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            out += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            out += ["--ro-bind", d, d]
    out += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp",
            "--perms", "1777", "--tmpfs", "/dev/shm"]
    made = {"/", "/tmp", "/dev", "/proc"}
    for path, flag in sorted([(p, "--ro-bind") for p in read_only] + [(workdir, "--bind")]):
        parents = list(reversed(Path(path).parents))
        for parent in map(str, parents):
            if parent not in made and not _under(parent, SYSTEM_DIRS):
                out += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        out += [flag, path, path]
        made.add(path)
    out += ["--chdir", workdir]
    if uid is not None:
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        out += ["--", setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs", "--"]
    else:
        out += ["--"]
    return out + list(argv)


# ---------------------------------------------------------------- one bot's launch
@dataclass
class Launch:
    """How to start one bot: argv, working dir, environment, pre-exec setup, and clean-up."""

    argv: list[str]
    cwd: str | None = None
    env: dict | None = None
    preexec_fn: object = None
    protections: list[str] = field(default_factory=list)
    unavailable: list[dict] = field(default_factory=list)
    cgroup: Cgroup | None = None
    rss_limit: int = 0
    rss_poll_s: float = 0.1
    tmpdir: str | None = None
    bridge: str | None = None
    uid: int | None = None
    lease: UidLease | None = None
    _exceeded: bool = False
    _frozen: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)

    def started(self, pid: int) -> None:
        """Called once the process runs: start RSS polling if it is the memory cap."""
        if self.rss_limit:
            threading.Thread(target=self._poll_rss, args=(pid,), daemon=True, name=f"rss-{pid}").start()

    def _members(self, pid: int) -> list[int]:
        members = set(session_members(pid))
        if self.cgroup is not None:
            members.update(self.cgroup.pids_in())
        if self.uid is not None:
            members.update(_proc_uids().get(self.uid, []))
        return sorted(members)

    def _poll_rss(self, pid: int) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.wait(self.rss_poll_s):
            total = 0
            members = self._members(pid)
            for member in members:
                try:
                    with open(f"/proc/{member}/statm", "rb") as f:
                        total += int(f.read().split()[1]) * page
                except (OSError, IndexError, ValueError):
                    pass
            if total > self.rss_limit:
                self._exceeded = True
                for member in members:
                    try:
                        os.kill(member, signal.SIGKILL)
                    except OSError:
                        pass
                return

    def memory_exceeded(self) -> bool:
        """True if the bot was killed for going over its memory cap."""
        return self._exceeded or (self.cgroup is not None and self.cgroup.memory and self.cgroup.oom_killed())

    def memory_pressed(self) -> bool:
        """True if the bot ever reached its memory cap (a timeout then is the cap's doing)."""
        return self.memory_exceeded() or (self.cgroup is not None and self.cgroup.memory and self.cgroup.hit_limit())

    @property
    def accounts_tree(self) -> bool:
        """True if :meth:`cpu_seconds` counts every process of the bot (a cpuacct cgroup)."""
        return self.cgroup is not None and self.cgroup.cpuacct

    def cpu_seconds(self) -> float:
        """CPU time of the bot's whole tree, children in other sessions included."""
        return self.cgroup.cpu_seconds() if self.cgroup is not None else 0.0

    @property
    def can_freeze(self) -> bool:
        """True if :meth:`freeze` stops the whole tree (a freezer cgroup)."""
        return self.cgroup is not None and self.cgroup.freezer

    def freeze(self) -> bool:
        """Freeze every process of the bot (``pause_idle``)."""
        if self.can_freeze and self.cgroup.freeze(True):
            self._frozen = True
        return self._frozen

    def thaw(self) -> None:
        """Undo :meth:`freeze`."""
        if self._frozen and self.cgroup is not None:
            self.cgroup.freeze(False)
        self._frozen = False

    def kill_extra(self) -> None:
        """Kill what the process group kill cannot reach: every process of the bot's cgroup
        and of its user id, whatever session it moved to."""
        self._stop.set()
        self.thaw()
        if self.cgroup is not None:
            for pid in self.cgroup.pids_in():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        if self.uid is not None:
            kill_uid(self.uid)

    def cleanup(self) -> None:
        """Kill what is left, remove the cgroup and the working directory, free the uid."""
        self._stop.set()
        self.thaw()
        if self.cgroup is not None:
            self.cgroup.kill_all()
            self.cgroup = None
        if self.lease is not None:
            self.lease.release()
            remove_owned(self.lease.uid)
            self.lease = None
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
        if self.bridge:
            shutil.rmtree(self.bridge, ignore_errors=True)
            self.bridge = None


class Sandbox:
    """A sandbox tier for the bots of one game; :meth:`prepare` one :class:`Launch` per bot.

    ``tier`` may fall back: ``Sandbox("strict", fallback="basic")`` runs ``basic`` (and
    says why in :meth:`record`) where strict cannot run; without a fallback that is a
    :class:`SandboxError` naming what is missing and how to install it."""

    def __init__(self, tier: str = "basic", limits: Limits | None = None, use_cgroups: bool = True,
                 fallback: str | None = None):
        for name in (tier, fallback):
            if name is not None and name not in TIERS:
                raise SandboxError(f"unknown sandbox tier {name!r} (tiers: {', '.join(TIERS)})")
        self.requested = tier
        self.fallback_reason = ""
        if tier == "strict":
            why = strict_missing(use_cgroups)
            if why:
                if fallback is None or fallback == "strict":
                    raise SandboxError(f"the strict sandbox cannot run: {why}")
                tier, self.fallback_reason = fallback, why
        self.tier = tier
        self.limits = limits or Limits()
        self.use_cgroups = use_cgroups
        self.launches: list[Launch] = []

    def prepare(self, argv: list[str], label: str = "bot") -> Launch:
        """Working dir, environment, user, cgroup and pre-exec function of one bot."""
        launch = Launch(list(argv), protections=["process_group"])
        self.launches.append(launch)
        try:
            self._prepare(launch, label)
        except BaseException:
            launch.cleanup()
            raise
        return launch

    def _prepare(self, launch: Launch, label: str) -> None:
        lim = self.limits
        argv = launch.argv
        env = {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith("LC_")}
        rlimits: list[tuple[int, int]] = []
        if self.tier != "none":
            launch.tmpdir = _new_dir(label)
            launch.cwd = launch.tmpdir
            env.update(HOME=launch.tmpdir, TMPDIR=launch.tmpdir)
            launch.env = env
            launch.protections += ["session", "temp_dir", "scrubbed_env", "rlimit_cpu", "rlimit_nofile",
                                   "rlimit_fsize", "no_core"]
            rlimits = [(which, _capped(which, value)) for which, value in
                       ((resource.RLIMIT_CPU, lim.cpu_s), (resource.RLIMIT_NOFILE, lim.nofile),
                        (resource.RLIMIT_FSIZE, lim.fsize_mb << 20), (resource.RLIMIT_CORE, 0))]
        # every tier: an unprivileged user id of the bot's own when the arena is root
        if os.geteuid() == 0:
            launch.lease = UidLease()
            launch.uid = launch.lease.uid
            if launch.tmpdir:
                os.chown(launch.tmpdir, launch.uid, launch.uid)
            if self.tier != "none":
                rlimits.append((resource.RLIMIT_NPROC, _capped(resource.RLIMIT_NPROC, lim.pids)))
                launch.protections.append("rlimit_nproc")
        else:
            launch.unavailable.append({"protection": "unprivileged_user", "reason":
                                       "the arena does not run as root, so the bot runs as the arena's user"})
        self._cgroup(launch, caps=self.tier == "strict")
        if launch.uid is not None or launch.cgroup is not None:
            launch.protections.append("tree_kill")
        else:
            launch.unavailable.append({"protection": "tree_kill", "reason": "no bot user id and no cgroup: a "
                                       "process that leaves the bot's session may outlive the game"})
        if self.tier == "strict":
            self._strict(launch, env, rlimits)
            return
        unshare, mounts, setuid = 0, [], None
        if launch.uid is not None:
            blocked = [a for a in _program_files(argv, env) if not world_accessible(a)]
            if launch.cwd is None and not _enterable(os.getcwd()):
                # none: the arena's folder is closed to the bot's user, so it gets a folder of its own
                launch.tmpdir = launch.cwd = _new_dir(label)
                os.chown(launch.tmpdir, launch.uid, launch.uid)
                launch.protections.append("temp_dir")
            plan = bridge_plan(blocked) if blocked else {}
            if blocked and plan and mountns_available()[0]:
                # the bot sees each closed directory as a stand-in holding only the
                # paths it needs, in a mount namespace of its own
                launch.bridge, mounts = _make_bridges(plan)
                unshare |= CLONE_NEWNS
                launch.protections.append("path_bridge")
                blocked = []
            if blocked:
                why = "" if plan is None else f" and {mountns_available()[1]}"
                launch.cleanup()
                raise SandboxError(f"{blocked[0]} is not readable by an unprivileged user{why}; make it "
                                   "readable by others (bots never run as root)")
            setuid = (launch.uid, launch.uid)
            launch.protections.append("unprivileged_user")
        procs = launch.cgroup.procs_paths if launch.cgroup is not None else []
        launch.preexec_fn = _make_preexec(rlimits, procs, unshare, mounts, setuid)

    def _cgroup(self, launch: Launch, caps: bool) -> None:
        lim = self.limits
        layout, reason = cgroup_layout() if self.use_cgroups else ({}, "cgroups were turned off")
        if layout:
            try:
                launch.cgroup = Cgroup(layout, lim, f"arena-{os.getpid()}-{next(_counter)}", caps=caps)
            except OSError as exc:
                reason = f"cannot set up a cgroup ({exc.strerror})"
        cg = launch.cgroup
        if cg is not None and cg.cpuacct:
            launch.protections.append("cpu_accounting_tree")
        else:
            launch.unavailable.append({"protection": "cpu_accounting_tree", "reason":
                                       f"{reason or 'no cpuacct controller'}; CPU of children is counted once reaped"})
        if cg is not None and cg.freezer:
            launch.protections.append("freezer")
        if not caps:
            return
        if cg is not None and cg.memory:
            launch.protections.append("cgroup_memory")
        else:
            launch.rss_limit = lim.memory_mb << 20
            launch.rss_poll_s = lim.rss_poll_ms / 1000
            launch.protections.append("rss_polling")
            launch.unavailable.append({"protection": "cgroup_memory",
                                       "reason": f"{reason or 'no memory controller'}; resident memory is polled instead"})
        if cg is not None and cg.pids:
            launch.protections.append("cgroup_pids")
        else:
            launch.unavailable.append({"protection": "cgroup_pids", "reason": reason or "no pids controller"})
        if cg is not None and cg.cpu:
            launch.protections.append("cgroup_cpu")
        elif lim.cpus:
            launch.unavailable.append({"protection": "cgroup_cpu", "reason": reason or "no cpu controller"})

    def _strict(self, launch: Launch, env: dict, rlimits) -> None:
        """The bot inside bubblewrap: its own namespaces, a read-only view, its own uid."""
        exe, _ = bwrap_status()
        if launch.uid is not None:
            closed = [f for f in _program_files(launch.argv, env) if not os.stat(f).st_mode & 0o004]
            if closed:
                raise SandboxError(f"{closed[0]} is not readable by an unprivileged user; make it readable by "
                                   "others (bots never run as root)")
        launch.argv = bwrap_argv(exe, launch.argv, launch.tmpdir, _read_only_paths(launch.argv, env), launch.uid)
        launch.protections += ["bubblewrap", "pid_namespace", "ipc_namespace", "uts_namespace", "mount_namespace",
                               "no_network", "private_tmp", "read_only_view"]
        if launch.uid is not None:
            launch.protections.append("unprivileged_user")
        procs = launch.cgroup.procs_paths if launch.cgroup is not None else []
        launch.preexec_fn = _make_preexec(rlimits, procs, 0, [], None)

    def cleanup(self) -> None:
        """Clean up every launch (idempotent; bots' own close does it too)."""
        for launch in self.launches:
            launch.cleanup()

    def record(self) -> dict:
        """``{"tier", "protections", "unavailable"}`` (and ``"requested"``, ``"fallback_reason"``
        when strict fell back): what was in force for every bot of the game."""
        out = {"tier": self.tier, "protections": [], "unavailable": []}
        if self.fallback_reason:
            out.update(requested=self.requested, fallback_reason=self.fallback_reason)
        if not self.launches:
            return out
        common = [p for p in self.launches[0].protections if all(p in ln.protections for ln in self.launches)]
        missing, seen = [], set()
        for ln in self.launches:
            for item in ln.unavailable:
                key = (item["protection"], item["reason"])
                if key not in seen:
                    seen.add(key)
                    missing.append(dict(item))
        out.update(protections=common, unavailable=missing)
        return out


def _capped(which: int, value: int) -> int:
    """``value``, or the current hard limit if that is lower (an unprivileged arena cannot raise it)."""
    hard = resource.getrlimit(which)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def _program_files(argv: list[str], env: dict) -> list[str]:
    """The executable and any script files named on the command line."""
    out = []
    exe = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
    if exe:
        out.append(os.path.realpath(exe))
    out += [a for a in argv[1:] if os.path.isfile(a)]
    return out


def _make_preexec(rlimits, procs, unshare: int, mounts: list[tuple[bytes, bytes]], setuid):
    """The function the child runs between fork and exec (no allocation-heavy work).

    In order: join the cgroup, enter new namespaces (mounts, made private before the
    bridges' bind mounts so nothing leaks to the host), set the rlimits, drop to the
    unprivileged user."""
    libc = _libc() if unshare else None

    def preexec() -> None:
        pid = str(os.getpid()).encode()
        for path in procs:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)
        if unshare:
            if libc.unshare(unshare) != 0:
                raise OSError(ctypes.get_errno(), "unshare() failed")
            if unshare & CLONE_NEWNS:
                if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                    raise OSError(ctypes.get_errno(), "making the mounts private failed")
                for source, target in mounts:
                    if libc.mount(source, target, None, MS_BIND | MS_REC, None) != 0:
                        raise OSError(ctypes.get_errno(), "a path bridge's bind mount failed")
        for which, value in rlimits:
            resource.setrlimit(which, (value, value))
        if setuid is not None:
            os.setgroups([])
            os.setgid(setuid[1])
            os.setuid(setuid[0])

    return preexec
