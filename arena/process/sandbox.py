"""Sandbox tiers for bot processes, and what the machine actually allows.

Every tier: a bot never runs as root. When the arena is root, each bot runs as a uid of
its own (``UID_BASE + slot``, leased in one machine-wide registry, :mod:`.uids`, so no two
running bots of any arena share one), reaching a program below a closed directory through
a *path bridge* (``none``, ``basic``) or bubblewrap's bind mounts (``strict``); every
process of that uid, and of the bot's cgroup, is killed when the game ends, and what it
left in the shared temporary folders and System V IPC is removed. :func:`sweep_stale`
removes what killed arenas left, and nothing of a running arena's.

- ``none``: a plain subprocess in its own session and process group (for development), in
  an IPC namespace of its own where the machine allows one.
- ``basic``: also a fresh working directory under :func:`state_root`, a scrubbed
  environment (only ``PATH``, locale, ``TZ``, ``PYTHONPATH``; ``HOME`` and ``TMPDIR`` point
  to the working directory) and rlimits on CPU time, open files, file size, processes of
  its uid, and no core dumps.
- ``strict``: basic, inside bubblewrap (``bwrap``): its own PID, IPC, UTS, network and
  mount namespaces, a read-only view of the system, its interpreter and its program
  folder, a private ``/tmp`` and ``/dev/shm``, its working directory the only writable
  place. As root bubblewrap drops to the bot's uid; as an ordinary user it runs in an
  unprivileged user namespace. Caps come from a cgroup where one can be made (v2, or v1
  ``memory``, ``pids``, ``cpu``, ``cpuacct``, ``freezer``: memory, processes, CPU
  bandwidth, CPU of the whole tree, freezing), else from what the PID namespace allows:
  ``RLIMIT_NPROC`` counted inside the bot's own user namespace, resident memory polled over
  the tree, CPU time summed over the tree, freezing by SIGSTOP to the tree.
  ``RLIMIT_AS`` is never the memory cap: it breaks Go, JVM and Node.
- ``auto`` (the default): the strongest tier this machine offers this user: strict
  wherever bubblewrap works; as root, basic where it does not (bots still get uids of their
  own); for an ordinary user without bubblewrap, a sentence instead of a game, since under
  basic a bot running as that user could stop the arena or write its results.

Every protection is detected at run time. One that is not available is reported with a
one-line reason (``Sandbox.record()``), so the game record says what was in force.
"""

from __future__ import annotations

import ctypes
import ctypes.util
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

from ..botspec.outputs import hidden_within
from ..botspec.view import SYSTEM_DIRS, loose_folders, needed_links, needed_paths, program_files, sandbox_path
from .cgroups import Cgroup, cgroup_layout, pid_alive, sweep_cgroups
from .proctree import TreeAccount, continue_tree, descendants, start_time, stop_tree, tree_stats
from .treememory import HiddenMemory
from .transport import in_session, proc_files, read_file, stat_fields
from .uids import (SHARED_TEMP, UID_BASE, UID_SLOTS, SandboxError, UidLease, _own_folder, kill_uid,  # noqa: F401
                   proc_uids, remove_owned, state_root, sweep_uids)

TIERS = ("none", "basic", "strict")
REQUESTABLE = TIERS + ("auto",)
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH")
_counter = itertools.count()
_proc_uids = proc_uids  # the name the tests knew


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
    tmp_mb: int = 256           # strict: size of the private /tmp, /dev/shm and working folder, each (memory-backed)


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


def _unshare_ipc(uid: int, gid: int):
    """A pre-exec step: a System V IPC namespace of the child's own. Root makes one directly;
    an ordinary user first enters a user namespace mapping only its own uid and gid (so
    nothing else changes for the child), which unprivileged users may do where the kernel
    allows user namespaces."""
    if uid == 0:
        flags, maps = CLONE_NEWIPC, None
    else:
        flags = CLONE_NEWUSER | CLONE_NEWIPC
        maps = ((b"/proc/self/setgroups", b"deny"), (b"/proc/self/uid_map", b"%d %d 1" % (uid, uid)),
                (b"/proc/self/gid_map", b"%d %d 1" % (gid, gid)))

    def step() -> None:
        if _libc().unshare(flags) != 0:
            raise OSError(ctypes.get_errno(), "unshare() of an IPC namespace failed")
        for path, text in maps or ():
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, text)
            finally:
                os.close(fd)

    return step


@lru_cache(maxsize=1)
def ipcns_available() -> tuple[bool, str]:
    """Whether a child may get an IPC namespace of its own (see :func:`_unshare_ipc`), and why not."""
    why = _child_survives(_unshare_ipc(os.geteuid(), os.getegid()))
    return (False, f"cannot create an IPC namespace ({why}); System V IPC objects of the bot are removed "
            "by owner" if os.geteuid() == 0 else f"cannot create an IPC namespace ({why}); System V IPC "
            "objects a bot creates may outlive it") if why else (True, "")


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


def _open_to_others(path: str) -> bool:
    """Whether others may read ``path`` (and enter it, for a folder), whatever is above it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return bool(mode & 0o004) and (not os.path.isdir(path) or bool(mode & 0o001))


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
def _new_dir(label: str) -> str:
    """A fresh folder ``<root>/<arena pid>-<n>-<label>``: a sweep knows whose it is."""
    name = f"{os.getpid()}-{next(_counter)}-{re.sub(r'[^A-Za-z0-9_.]', '_', label)[:40]}"
    path = state_root() / name
    try:
        path.mkdir(mode=0o700)
    except OSError as exc:
        raise SandboxError(f"cannot create the bot's working folder {path} ({exc.strerror})") from None
    return str(path)


def sweep_stale() -> dict:
    """Remove what killed arenas left, and only that: processes, files and IPC objects of
    bot uids that no running arena holds (root), this user's working folders, bridges and
    mounts of arenas whose pid is gone, and bot cgroups of such arenas. Run at the start of
    every run; returns counts of what was removed."""
    removed = {"processes": 0, "folders": 0, "cgroups": 0, "mounts": 0}
    root = state_root()
    removed["processes"] = sweep_uids()
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
STRICT_CGROUPS = ("memory", "pids", "cpu", "cpuacct", "freezer")


@lru_cache(maxsize=1)
def bwrap_status() -> tuple[str | None, str]:
    """``(path of bwrap, "")`` if bubblewrap can build a sandbox here, else ``(None, why)``."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None, ("bubblewrap is not installed (the strict tier needs it: apt-get install bubblewrap)")
    argv = [exe, *(["--unshare-user"] if os.geteuid() != 0 else []), "--unshare-ipc", "--unshare-pid",
            "--unshare-net", "--unshare-uts", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc",
            "--dev", "/dev", "true"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"bubblewrap cannot run here ({exc})"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, (f"bubblewrap cannot create namespaces here ({why[-1] if why else done.returncode}); "
                      "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on "
                      "Ubuntu an AppArmor profile for bwrap) or run the arena as root")
    return exe, ""


def strict_missing(use_cgroups: bool = True) -> str:
    """Why the strict tier cannot run on this machine for this user, in one sentence; "" if
    it can. Strict needs bubblewrap only: without cgroups its caps come from the PID and user
    namespaces (see the module docstring) and the record names each one that is missing.
    ``use_cgroups`` is kept for callers; it no longer decides whether strict can run."""
    exe, why = bwrap_status()
    return "" if exe is not None else why


def best_tier() -> tuple[str | None, str]:
    """The strongest tier this machine offers this user and why it is not strict (``""`` if
    it is); ``(None, why)`` for an ordinary user without bubblewrap, who has no tier in which
    a bot cannot stop the arena or write its results."""
    why = strict_missing()
    if not why:
        return "strict", ""
    if os.geteuid() == 0:
        return "basic", why
    return None, why


def _under(path: str, dirs) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


#: how long what a command needs shown is reused before it is found again (a package
#: installed meanwhile is seen by the processes started after that)
VIEW_TTL_S = 30.0
_VIEWS: dict[tuple, tuple[float, list[str]]] = {}


def _read_only_paths(argv: list[str], env: dict, program_dir: str | None = None, read_only=()) -> list[str]:
    """What a bot needs to see, read-only (:func:`arena.botspec.needed_paths`): its
    interpreter's installation, its program's folder, what it declared, ``PYTHONPATH``.

    Finding it reads the interpreter's site-packages (every path file and editable finder):
    20 ms of CPU, the dearest part of starting a strict process, so the answer is reused
    for the same command for :data:`VIEW_TTL_S` (forked workers inherit the warm-up's)."""
    key = (tuple(argv), env.get("PATH"), env.get("PYTHONPATH"), program_dir, tuple(read_only))
    now = time.monotonic()
    hit = _VIEWS.get(key)
    if hit is not None and now - hit[0] < VIEW_TTL_S:
        return list(hit[1])
    paths = needed_paths(argv, env, program_dir, read_only)
    if len(_VIEWS) > 256:
        _VIEWS.clear()
    _VIEWS[key] = (now, paths)
    return list(paths)


#: the bot's stdout reaches it as descriptor 3 (where the caller passes one: the transport
#: does) and becomes its fd 1 only inside, so that bubblewrap's own processes do not hold the
#: pipe open: a bot that closes its stdout is seen to have closed it (a crash), as in the
#: other tiers
STDOUT_SHIM = ["/bin/sh", "-c", 'if [ -e /dev/fd/3 ]; then exec 1>&3 3>&-; fi; exec "$0" "$@"']


@lru_cache(maxsize=1)
def _bwrap_sizes(bwrap: str) -> bool:
    """Whether this bubblewrap can size a tmpfs (``--size``, bubblewrap 0.6 on)."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in done.stdout + done.stderr


def bwrap_argv(bwrap: str, argv: list[str], workdir: str, read_only: list[str], uid: int | None,
               hide: list[str] = (), nproc: int | None = None, tmp_mb: int | None = None,
               memory_workdir: bool = False, links=()) -> list[str]:
    """The bubblewrap command that runs ``argv`` in fresh PID, IPC, UTS, network and mount
    namespaces (and a user namespace when the arena is not root): the system folders and
    ``read_only`` read-only, a private ``/tmp`` and ``/dev/shm``, ``workdir`` its only
    writable folder (with ``memory_workdir``, a memory-backed folder of ``tmp_mb`` at that
    path, which nothing outside sees: else the host folder itself),
    as ``uid`` without capabilities. Paths of ``hide`` that fall inside a
    visible folder (the results, the logs) are covered by an empty one. ``links``: the
    ``(link, target)`` pairs of the paths a command names through symbolic links, made
    anew where nothing shown holds them. ``nproc`` caps the
    processes and threads of the bot's user namespace (``prlimit`` inside the sandbox, where
    the count is the bot's own); the bot's stdout is expected on descriptor 3."""
    out = [bwrap, *(["--unshare-user"] if os.geteuid() != 0 else []), "--unshare-ipc", "--unshare-pid",
           "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            out += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            out += ["--ro-bind", d, d]
    # /tmp and /dev/shm live in memory: sized, or a bot could fill the machine's memory
    # through files, which no resident-memory poll sees
    size = ["--size", str(tmp_mb << 20)] if tmp_mb and _bwrap_sizes(bwrap) else []

    def tmpfs(path: str) -> list[str]:
        return ["--perms", "1777", *size, "--tmpfs", path]

    out += ["--proc", "/proc", "--dev", "/dev", *tmpfs("/tmp"), *tmpfs("/dev/shm")]
    made = {"/", "/tmp", "/dev", "/proc"}
    # the working folder too: a bound host folder would let a bot fill the machine's disk,
    # file by file under its size cap
    sized = memory_workdir and bool(size)
    # what is hidden: paths of ``hide`` strictly inside a shown folder, never one that holds a
    # shown folder or the working folder; a file shown by name inside a hidden path goes too
    # (nothing hidden is shown, even named)
    shown_dirs = [p for p in read_only if os.path.isdir(p)]
    hidden: list[str] = []
    for path in sorted({os.path.realpath(h) for h in hide if h}):
        if _under(path, read_only) and path not in shown_dirs and not _under(workdir, [path]) \
                and not any(_under(p, [path]) for p in shown_dirs) and not _under(path, hidden) \
                and os.path.lexists(path):
            hidden.append(path)
    read_only = [p for p in read_only if not _under(p, hidden)]
    for path, flag in sorted([(p, "--ro-bind") for p in read_only] + [(workdir, "--tmpfs" if sized else "--bind")]):
        parents = list(reversed(Path(path).parents))
        for parent in map(str, parents):
            if parent not in made and not _under(parent, SYSTEM_DIRS):
                out += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        out += tmpfs(path) if flag == "--tmpfs" else [flag, path, path]
        made.add(path)
    for path in hidden:
        out += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    # a path the command names through a symbolic link (``current -> v2``, a script that is
    # a link into another folder) reaches what it points at, which is shown, the same way
    for link, target in links:
        if link in made or _under(link, SYSTEM_DIRS) or _under(link, read_only) or _under(link, [workdir]):
            continue
        for parent in map(str, reversed(Path(link).parents)):
            if parent not in made and not _under(parent, SYSTEM_DIRS) and not _under(parent, read_only):
                out += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        out += ["--symlink", target, link]
        made.add(link)
    out += ["--chdir", workdir, "--"]
    if uid is not None:
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        out += [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs", "--"]
    out += STDOUT_SHIM
    if nproc:
        out += [shutil.which("prlimit") or "/usr/bin/prlimit", f"--nproc={nproc}:{nproc}", "--"]
    return out + list(argv)


# ---------------------------------------------------------------- one bot's launch
class MachineScan:
    """Every process of the machine, for the memory polls of bots that no PID namespace or
    cgroup holds (:meth:`Launch._members`): read once per ``period`` slot by whichever poll
    needs it first and shared by every bot this process referees (a worker keeps several
    bots alive in its pool, and each read the whole machine once a second before: two
    thousand-odd reads of ``/proc`` a second per worker on a busy machine)."""

    def __init__(self, period: float):
        self.period = period
        self.reads = 0  # how many times the machine was read (for tests)
        self._lock = threading.Lock()
        self._slot = -1
        self._stats: dict[int, list[bytes]] = {}
        self._uids: dict[int, list[int]] | None = None

    def forget(self) -> None:
        """Start afresh (a forked child: the parent's lock may have been held at the fork)."""
        self._lock = threading.Lock()
        self._slot, self._stats, self._uids = -1, {}, None

    def read(self, pid: int, uids: bool, fresh: bool = False) -> tuple[dict, dict | None]:
        """``({pid: /proc/PID/stat fields from the state on}, {uid: [pids]} or None)``: this
        slot's read of the machine, made now when there is none, when ``fresh`` is asked, or
        when it is older than ``pid`` (a bot started after it); the uids (every process's
        ``status``, as root) only when asked."""
        slot = int(time.monotonic() // self.period)
        with self._lock:
            if fresh or slot != self._slot or pid not in self._stats:
                self._stats = {p: stat_fields(data) for p, data in proc_files("stat", 512)}
                self._uids = None
                self._slot = slot
                self.reads += 1
            if uids and self._uids is None:
                self._uids = _proc_uids()
            return self._stats, self._uids


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
    stdout_fd3: bool = False    # strict: the transport passes the bot's stdout as descriptor 3
    tree: bool = False          # strict: every process of the bot is below the started one (PID namespace)
    root_pid: int = -1
    cpu_cap: float = 0.0        # strict without a cpu cgroup: cores the arena lets the tree use
    _exceeded: bool = False
    _throttled: bool = False
    _account: TreeAccount | None = None
    _hidden: HiddenMemory | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _frozen: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    _known: dict = field(default_factory=dict)  # {pid: start time} of the members last found
    _scan_slot: int = -1  # the FULL_SCAN_S slot of the last read of the machine

    #: how often the memory poll of a tree that no PID namespace holds (basic without a
    #: cgroup) reads every process of the machine to find the bot's: between two such scans
    #: it walks down from the members it knows (a few reads per member), so the poll's cost
    #: follows the bot's processes, not the machine's (reading every process ten times a
    #: second, per bot, grew with the number of workers: quadratic in all); the read is
    #: shared by every bot this process referees (:data:`MACHINE`)
    FULL_SCAN_S = 1.0

    def started(self, pid: int) -> None:
        """Called once the process runs: start polling the tree where that is the memory cap,
        the CPU cap or the CPU account."""
        self.root_pid = pid
        if self.tree and not self._cgroup_cpu:
            self._account = TreeAccount(pid)
        if self.rss_limit:
            self._hidden = HiddenMemory()
        if self.rss_limit or self._account is not None or (self.cpu_cap and self.tree):
            threading.Thread(target=self._poll, args=(pid,), daemon=True, name=f"poll-{pid}").start()

    def _members(self, pid: int) -> list[int]:
        """The bot's processes: strict's PID namespace walked down from the started one;
        else every process below the started one and below the members found last (the same
        process: pid and start time), and its session, cgroup and user id read from every
        process of the machine once per ``FULL_SCAN_S`` slot (:data:`MACHINE`, one read for
        all the bots of this process); a member that ended brings a fresh read of the
        machine forward (what it forked may have left the tree). What that misses until
        the next slot: a process that left the tree and a tree whose parent no poll saw
        (forked off and orphaned within one poll), under a cap that a cgroup or RLIMIT_NPROC
        still holds."""
        if self.tree:
            return descendants(pid)
        found: dict[int, bytes] = {}
        walk = dict(self._known)
        walk.setdefault(pid, None)  # the started process: ours whatever its start time, at first
        for member, start in walk.items():
            if member in found:  # below a member walked already
                continue
            stats = tree_stats(member)
            if member in stats and (start is None or stats[member][19] == start):
                found.update((p, f[19]) for p, f in stats.items() if f[0] != b"Z")
        # a member ended: its children (a daemon it forked off) left the tree with it, so
        # the machine is read now rather than at the next slot
        ended = not self._known.keys() <= found.keys()
        slot = int(time.monotonic() // self.FULL_SCAN_S)
        if slot != self._scan_slot or ended:
            self._scan_slot = slot
            stats, uids = MACHINE.read(pid, self.uid is not None, ended)
            for p, f in stats.items():
                if p not in found and len(f) > 19 and in_session(f, pid):
                    found[p] = f[19]
            for member in (uids or {}).get(self.uid, ()):
                if member not in found:
                    f = stats.get(member)
                    found[member] = f[19] if f is not None and len(f) > 19 else start_time(member)
        if self.cgroup is not None:
            found.update((p, start_time(p)) for p in self.cgroup.pids_in() if p not in found)
        self._known = {p: s for p, s in found.items() if s is not None}
        return sorted(found)

    def _over_memory(self, pid: int) -> bool:
        """Resident memory of the tree plus what it keeps in memfds and memory-backed folders
        (:mod:`.treememory`) over the cap: kill the tree."""
        page = os.sysconf("SC_PAGE_SIZE")
        members = self._members(pid)
        hidden = self._hidden.hidden_bytes(members) if self._hidden is not None else 0
        total = hidden
        for member in members:
            try:
                total += int(read_file(f"/proc/{member}/statm", 512).split()[1]) * page
            except (OSError, IndexError, ValueError):
                pass
        if total <= self.rss_limit:
            return False
        # resident sizes count pages that forked children share (copy-on-write) once in
        # each, and a memfd's or a folder's pages that a process maps are counted in it too:
        # past the cap, the proportional set size decides, which counts them once
        total = hidden - (self._hidden.mapped_bytes(members) if hidden else 0)
        for member in members:
            try:
                with open(f"/proc/{member}/smaps_rollup", "rb") as f:
                    for line in f:
                        if line.startswith(b"Pss:"):
                            total += int(line.split()[1]) << 10
                            break
            except (OSError, IndexError, ValueError):
                pass
        if total <= self.rss_limit:
            return False
        self._exceeded = True
        for member in members:
            try:
                os.kill(member, signal.SIGKILL)
            except OSError:
                pass
        return True

    #: the CPU account's interval while the tree works (see :meth:`_poll`)
    BUSY_POLL_S = 0.02
    #: how long after its last sign of work the tree counts as working
    BUSY_HOLD_S = 1.0

    def _poll(self, pid: int) -> None:
        """Every ``rss_poll_s``: the memory cap (resident memory of the tree and what it keeps
        in memfds and memory-backed folders). The CPU account (strict without a cpuacct
        cgroup, :class:`~.proctree.TreeAccount`): every ``BUSY_POLL_S`` while processes come
        and go in the tree (born or gone within ``BUSY_HOLD_S``), else every ``rss_poll_s``:
        the CPU of a process that lives on is read whenever it is asked for (after a move,
        at the end), so only a process that ends can take uncounted time with it, and a bot
        that thinks in one process costs the referee ten walks of its tree a second, not
        fifty (a walk of a small tree takes about 0.1 ms of CPU). What escapes: a child
        reaped by the kernel that is born and gone between two polls, and what one that was
        seen used after the last (``/proc`` counts in clock ticks, too). Measured: children
        of 150 ms each, reaped by the kernel, were charged about 90 % of the CPU they used,
        children of 30 ms about half (``docs/protocol.md``). The CPU cap (a budget of ``cpu_cap``
        CPU-seconds a second, with half a second of burst): a tree over budget is stopped
        until it is back within it."""
        throttle = bool(self.cpu_cap and self.tree)
        burst = 0.5 * self.cpu_cap
        allowance, last_cpu, last = burst, 0.0, time.monotonic()
        next_memory, busy_until, wait = last + self.rss_poll_s, 0.0, self.rss_poll_s
        while not self._stop.wait(wait):
            now = time.monotonic()
            if self.rss_limit and now >= next_memory - 0.001:
                next_memory = now + self.rss_poll_s
                if self._over_memory(pid):
                    return
            wait = self.rss_poll_s
            if self._account is None and not throttle:
                continue
            cpu = self.cpu_seconds()
            if self._account is not None:
                if self._account.changed:
                    busy_until = now + self.BUSY_HOLD_S
                if now < busy_until:
                    wait = self.BUSY_POLL_S
            if self.rss_limit:
                wait = max(0.0, min(wait, next_memory - time.monotonic()))
            if not throttle:
                continue
            allowance = min(burst, allowance + self.cpu_cap * (now - last)) - max(0.0, cpu - last_cpu)
            last, last_cpu = now, max(cpu, last_cpu)
            if allowance >= 0:
                continue
            with self._lock:
                if self._frozen or not stop_tree(pid, 0.2):
                    continue
                self._throttled = True
            self._stop.wait(-allowance / self.cpu_cap)
            with self._lock:
                if not self._frozen:
                    continue_tree(pid)
                self._throttled = False
            allowance, last = 0.0, time.monotonic()

    def memory_exceeded(self) -> bool:
        """True if the bot was killed for going over its memory cap."""
        return self._exceeded or (self.cgroup is not None and self.cgroup.memory and self.cgroup.oom_killed())

    def memory_pressed(self) -> bool:
        """True if the bot ever reached its memory cap (a timeout then is the cap's doing)."""
        return self.memory_exceeded() or (self.cgroup is not None and self.cgroup.memory and self.cgroup.hit_limit())

    @property
    def _cgroup_cpu(self) -> bool:
        return self.cgroup is not None and self.cgroup.cpuacct

    @property
    def accounts_tree(self) -> bool:
        """True if :meth:`cpu_seconds` counts every process of the bot (a cpuacct cgroup, or
        strict's PID namespace walked in ``/proc``)."""
        return self._cgroup_cpu or (self.tree and self.root_pid > 0)

    def cpu_seconds(self) -> float:
        """CPU time of the bot's whole tree, children in other sessions included."""
        if self._cgroup_cpu:
            return self.cgroup.cpu_seconds()
        return self._account.sample() if self._account is not None else 0.0

    @property
    def can_freeze(self) -> bool:
        """True if :meth:`freeze` stops the whole tree (a freezer cgroup, or SIGSTOP to every
        process of strict's PID namespace)."""
        return (self.cgroup is not None and self.cgroup.freezer) or (self.tree and self.root_pid > 0)

    def freeze(self) -> bool:
        """Freeze every process of the bot (``pause_idle``)."""
        with self._lock:
            if self._frozen:
                return True
            if self.cgroup is not None and self.cgroup.freezer:
                self._frozen = self.cgroup.freeze(True)
            if not self._frozen and self.tree and self.root_pid > 0:
                self._frozen = stop_tree(self.root_pid, 3.0)  # a loaded machine schedules the stop late
                if not self._frozen:
                    continue_tree(self.root_pid)
            return self._frozen

    def thaw(self) -> None:
        """Undo :meth:`freeze`."""
        with self._lock:
            if self._frozen:
                if self.cgroup is not None and self.cgroup.freezer:
                    self.cgroup.freeze(False)
                if self.tree and self.root_pid > 0 and not self._throttled:
                    continue_tree(self.root_pid)
            self._frozen = False

    def kill_extra(self) -> None:
        """Kill what the process group kill cannot reach: every process of the bot's cgroup,
        of its user id and of its PID namespace, whatever session it moved to."""
        self._stop.set()
        self.thaw()
        pids = set(self.cgroup.pids_in()) if self.cgroup is not None else set()
        if self.tree and self.root_pid > 0:
            pids.update(descendants(self.root_pid))
        for pid in pids:
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
            self.lease = None
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
        if self.bridge:
            shutil.rmtree(self.bridge, ignore_errors=True)
            self.bridge = None


#: the read of the machine the memory polls of this process share
MACHINE = MachineScan(Launch.FULL_SCAN_S)
os.register_at_fork(after_in_child=MACHINE.forget)


class Sandbox:
    """A sandbox tier for the bots of one game; :meth:`prepare` one :class:`Launch` per bot.

    ``tier`` is ``"auto"`` (the strongest this machine offers this user, see
    :func:`best_tier`) or a tier's name. Strict may fall back: ``Sandbox("strict",
    fallback="basic")`` runs ``basic`` (and says why in :meth:`record`) where strict cannot
    run; without a fallback that is a :class:`SandboxError` naming what is missing and how
    to install it. ``installed_only``: every bot is a registered one (installed code), so
    ``auto`` may give an ordinary user without bubblewrap basic. ``hide`` names paths no bot may see even where they lie inside a folder
    it sees (the results, the logs, a league's file)."""

    def __init__(self, tier: str = "auto", limits: Limits | None = None, use_cgroups: bool = True,
                 fallback: str | None = None, hide=(), installed_only: bool = False, host_workdir: bool = False):
        if tier not in REQUESTABLE:
            raise SandboxError(f"unknown sandbox tier {tier!r} (tiers: {', '.join(REQUESTABLE)})")
        if fallback is not None and fallback not in TIERS:
            raise SandboxError(f"unknown sandbox tier {fallback!r} (tiers: {', '.join(TIERS)})")
        self.requested = tier
        self.fallback_reason = ""
        if tier == "auto":
            tier, self.fallback_reason = best_tier()
            if tier is None and installed_only:
                # registered bots are installed code, as trusted as the arena itself (they may
                # even play in-process): only command-line bots need a tier to hold them
                tier = "basic"
                self.fallback_reason += "; every bot is a registered (installed) bot, so they run as your user"
            if tier is None:
                raise SandboxError(
                    f"no sandbox tier that keeps bots away from the arena can run here: {self.fallback_reason}. "
                    "Install bubblewrap (apt-get install bubblewrap), or name a weaker tier to run bots as your "
                    "own user anyway (--sandbox basic, or sandbox: basic in a tournament file)")
        elif tier == "strict":
            why = strict_missing(use_cgroups)
            if why:
                if fallback is None or fallback == "strict":
                    raise SandboxError(f"the strict sandbox cannot run: {why}")
                tier, self.fallback_reason = fallback, why
        self.tier = tier
        self.limits = limits or Limits()
        self.use_cgroups = use_cgroups
        self.hide = [str(h) for h in hide if h]
        # strict keeps the working folder in memory, sized, unless the caller reads what the
        # program leaves there (a build step's output)
        self.host_workdir = host_workdir
        self.launches: list[Launch] = []

    def prepare(self, argv: list[str], label: str = "bot", program_dir: str | None = None,
                read_only=()) -> Launch:
        """Working dir, environment, user, cgroup and pre-exec function of one bot.
        ``program_dir``: the bot's own folder (a bot package's), and ``read_only``: folders it
        declared, shown read-only (under strict; reachable by the bot's user in every tier)."""
        # a path with ".." in it (``/home/me/proj/../venv/bin/python``, an interpreter started
        # as ../venv/bin/python) passes through the folder before the "..", which the strict
        # tier does not show: the folder the kernel reaches instead, the words after the
        # last ".." kept as they are (a venv's python stays the link it is)
        argv = [os.path.join(os.path.realpath(w[:w.rindex("/../") + 3]), w[w.rindex("/../") + 4:])
                if w.startswith("/") and "/../" in w and os.path.exists(w) else w for w in argv]
        launch = Launch(list(argv), protections=["process_group"])
        self.launches.append(launch)
        try:
            self._prepare(launch, label, program_dir, tuple(read_only or ()))
        except BaseException:
            launch.cleanup()
            raise
        return launch

    def _prepare(self, launch: Launch, label: str, program_dir: str | None, read_only: tuple = ()) -> None:
        lim = self.limits
        argv = launch.argv
        root = os.geteuid() == 0
        strict = self.tier == "strict"
        env = {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith("LC_")}
        rlimits: list[tuple[int, int]] = []
        if self.tier != "none":
            launch.tmpdir = _new_dir(label)
            launch.cwd = launch.tmpdir
            env.update(HOME=launch.tmpdir, TMPDIR=launch.tmpdir)
            # interpreters' shims on the PATH give way to what they run, which the bot is shown
            env["PATH"], shown = sandbox_path(env.get("PATH"), argv=argv)
            read_only = tuple(read_only) + tuple(p for p in shown if p not in read_only)
            launch.env = env
            launch.protections += ["session", "temp_dir", "scrubbed_env", "rlimit_cpu", "rlimit_nofile",
                                   "rlimit_fsize", "no_core"]
            rlimits = [(which, _capped(which, value)) for which, value in
                       ((resource.RLIMIT_CPU, lim.cpu_s), (resource.RLIMIT_NOFILE, lim.nofile),
                        (resource.RLIMIT_FSIZE, lim.fsize_mb << 20), (resource.RLIMIT_CORE, 0))]
        # every tier: an unprivileged user id of the bot's own when the arena is root
        if root:
            launch.lease = UidLease()
            launch.uid = launch.lease.uid
            if launch.tmpdir:
                os.chown(launch.tmpdir, launch.uid, launch.uid)
            if self.tier != "none":
                rlimits.append((resource.RLIMIT_NPROC, _capped(resource.RLIMIT_NPROC, lim.pids)))
                launch.protections.append("rlimit_nproc")
        elif strict:
            launch.unavailable.append({"protection": "unprivileged_user", "reason":
                                       "the arena does not run as root, so the bot runs as the arena's user, in a "
                                       "user namespace of its own"})
            if shutil.which("prlimit"):
                launch.protections.append("rlimit_nproc")  # set inside, counted in the bot's user namespace
            else:
                launch.unavailable.append({"protection": "rlimit_nproc", "reason": "prlimit (util-linux) is not "
                                           "installed"})
        else:
            launch.unavailable.append({"protection": "unprivileged_user", "reason":
                                       "the arena does not run as root, so the bot runs as the arena's user"})
        launch.tree = strict
        self._cgroup(launch, caps=self.tier != "none", cpu_cap=strict)
        if launch.uid is not None or launch.cgroup is not None or strict:
            launch.protections.append("tree_kill")
        else:
            launch.unavailable.append({"protection": "tree_kill", "reason": "no bot user id and no cgroup: a "
                                       "process that leaves the bot's session may outlive the game"})
        if strict:
            self._strict(launch, env, rlimits, program_dir, read_only)
            return
        unshare, mounts, setuid, steps = 0, [], None, []
        ipc, why = ipcns_available()
        if ipc:
            if root:
                unshare |= CLONE_NEWIPC
            else:
                steps.append(_unshare_ipc(os.geteuid(), os.getegid()))
            launch.protections.append("ipc_namespace")
        else:
            launch.unavailable.append({"protection": "ipc_namespace", "reason": why})
        if launch.uid is not None:
            # every path the program needs (its venv and the installation it links to, its
            # folder, what it declared), as the strict tier would show them
            exe, script = program_files(argv, env)
            needed = [a for a in (exe, script) if a]
            # a folder closed itself (mode 0700) cannot be bridged: the files above stand for it
            needed += [p for p in _read_only_paths(argv, env, program_dir, read_only) if _open_to_others(p)]
            blocked = [a for a in dict.fromkeys(needed) if not world_accessible(a)]
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
        launch.preexec_fn = _make_preexec(rlimits, procs, unshare, mounts, setuid, steps)

    def _cgroup(self, launch: Launch, caps: bool, cpu_cap: bool) -> None:
        """The bot's cgroup where one can be made: holding, accounting and freezing its tree in
        every tier; with ``caps`` (basic, strict) its memory and processes capped, with
        ``cpu_cap`` (strict) its CPU bandwidth; the stand-ins where a cap has no cgroup."""
        lim = self.limits
        layout, reason = cgroup_layout() if self.use_cgroups else ({}, "cgroups were turned off")
        if layout:
            try:
                launch.cgroup = Cgroup(layout, lim, f"arena-{os.getpid()}-{next(_counter)}", caps=caps,
                                       cpu_cap=cpu_cap)
            except OSError as exc:
                reason = f"cannot set up a cgroup ({exc.strerror})"
        cg = launch.cgroup
        tree = launch.tree  # strict: the PID namespace holds the tree, /proc gives what a cgroup would
        if (cg is not None and cg.cpuacct) or tree:
            launch.protections.append("cpu_accounting_tree")
            if not (cg is not None and cg.cpuacct):
                launch.protections.append("cpu_of_reaped_children")  # the last reading of each process seen
        else:
            launch.unavailable.append({"protection": "cpu_accounting_tree", "reason":
                                       f"{reason or 'no cpuacct controller'}; CPU of children is counted once reaped"})
        if (cg is not None and cg.freezer) or tree:
            launch.protections.append("freezer")
        if not caps:
            return
        if cg is not None and cg.memory:
            launch.protections.append("cgroup_memory")
        else:
            launch.rss_limit = lim.memory_mb << 20
            launch.rss_poll_s = lim.rss_poll_ms / 1000
            launch.protections += ["rss_polling", "memory_polled_with_memfds"]  # memfds and tmpfs folders counted
            launch.unavailable.append({"protection": "cgroup_memory",
                                       "reason": f"{reason or 'no memory controller'}; resident memory is polled instead"})
        if cg is not None and cg.pids:
            launch.protections.append("cgroup_pids")
        else:
            launch.unavailable.append({"protection": "cgroup_pids", "reason": f"{reason or 'no pids controller'}"
                                       + ("; RLIMIT_NPROC caps the bot's processes" if "rlimit_nproc" in
                                          launch.protections else "")})
        if not cpu_cap:
            return
        if cg is not None and cg.cpu:
            launch.protections.append("cgroup_cpu")
        elif lim.cpus:
            # the arena throttles the tree itself: SIGSTOP while it is over its share of CPU
            launch.cpu_cap = lim.cpus
            launch.rss_poll_s = lim.rss_poll_ms / 1000
            launch.protections.append("cpu_throttle")
            launch.unavailable.append({"protection": "cgroup_cpu", "reason": f"{reason or 'no cpu controller'}; "
                                       "the arena throttles the bot's tree to its CPU share instead"})

    def _strict(self, launch: Launch, env: dict, rlimits, program_dir: str | None, read_only: tuple = ()) -> None:
        """The bot inside bubblewrap: its own namespaces, a read-only view, its own uid."""
        exe, _ = bwrap_status()
        if launch.uid is not None:
            # bubblewrap makes the folders above each shown path anew (open), but a shown
            # folder or file keeps its own mode: a closed one stops the bot's user
            shown = [f for f in program_files(launch.argv, env) if f]
            shown += _read_only_paths(launch.argv, env, program_dir, read_only)
            closed = [f for f in dict.fromkeys(shown) if not _open_to_others(f)]
            if closed:
                what = "folder" if os.path.isdir(closed[0]) else "file"
                raise SandboxError(f"the {what} {closed[0]} is not readable by an unprivileged user; make it "
                                   f"readable by others (chmod o+r{'x' if what == 'folder' else ''} {closed[0]}): "
                                   "bots never run as root")
        nproc = None
        if launch.uid is None and "rlimit_nproc" in launch.protections:
            nproc = self.limits.pids + 1  # the namespace's first process is bubblewrap's
        memory_workdir = not self.host_workdir and bool(self.limits.tmp_mb) and _bwrap_sizes(exe)
        shown = _read_only_paths(launch.argv, env, program_dir, read_only)
        # every arena output folder and VCS metadata below what the bot is shown, of any run
        hide = self.hide + hidden_within([p for p in shown if os.path.isdir(p) and not _under(p, SYSTEM_DIRS)])
        launch.argv = bwrap_argv(exe, launch.argv, launch.tmpdir, shown,
                                 launch.uid, hide=hide, nproc=nproc, tmp_mb=self.limits.tmp_mb,
                                 memory_workdir=memory_workdir,
                                 links=needed_links(launch.argv, env, program_dir, read_only))
        launch.stdout_fd3 = True
        launch.protections += ["bubblewrap", "pid_namespace", "ipc_namespace", "uts_namespace", "mount_namespace",
                               "no_network", "private_tmp", "read_only_view"]
        if memory_workdir:
            launch.protections.append("sized_workdir")
        if launch.uid is None:
            launch.protections.append("user_namespace")
        else:
            launch.protections.append("unprivileged_user")
        procs = launch.cgroup.procs_paths if launch.cgroup is not None else []
        launch.preexec_fn = _make_preexec(rlimits, procs, 0, [], None)

    def cleanup(self) -> None:
        """Clean up every launch (idempotent; bots' own close does it too)."""
        for launch in self.launches:
            launch.cleanup()

    def record(self) -> dict:
        """``{"tier", "protections", "unavailable"}`` (and ``"requested"``, plus
        ``"fallback_reason"`` when the tier is weaker than strict): what was in force for
        every bot of the game."""
        out = {"tier": self.tier, "protections": [], "unavailable": []}
        if self.requested != self.tier:
            out["requested"] = self.requested
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


def announce(spec="auto", limits: Limits | None = None, installed_only: bool = False) -> str:
    """The one line a run prints before its first game: the tier its games get (``spec``: a
    tier's name or ``{"tier", "fallback"}``) and what will not be in force, read off a trial
    launch that starts nothing. Raises :class:`SandboxError` (a sentence) where no game could
    start."""
    tier, fallback = (spec.get("tier", "auto"), spec.get("fallback")) if isinstance(spec, dict) else (spec, None)
    sandbox = Sandbox(tier or "auto", limits, fallback=fallback, installed_only=installed_only)
    try:
        sandbox.prepare(["true"], label="announce")
    finally:
        sandbox.cleanup()
    return "arena: " + describe(sandbox.record())


def describe(record: dict) -> str:
    """One line on the tier a game ran in: which, why (for ``auto``) and what was missing."""
    tier = record.get("tier", "?")
    line = f"sandbox: {tier}"
    if record.get("requested") == "auto":
        line += " (the strongest tier here" + (f"; not strict: {record['fallback_reason']}"
                                                if record.get("fallback_reason") else "") + ")"
    elif record.get("fallback_reason"):
        line += f" (instead of {record.get('requested')}: {record['fallback_reason']})"
    missing = [u["protection"] for u in record.get("unavailable", [])]
    if missing:
        line += "; not in force: " + ", ".join(missing)
        instead = [p for p in ("user_namespace", "rss_polling", "rlimit_nproc", "cpu_throttle")
                   if p in record.get("protections", [])]
        if instead:
            line += f" (in their place: {', '.join(instead)})"
    return line


def _capped(which: int, value: int) -> int:
    """``value``, or the current hard limit if that is lower (an unprivileged arena cannot raise it)."""
    hard = resource.getrlimit(which)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def _make_preexec(rlimits, procs, unshare: int, mounts: list[tuple[bytes, bytes]], setuid, steps=()):
    """The function the child runs between fork and exec (no allocation-heavy work).

    In order: join the cgroup, run ``steps`` (an ordinary user's IPC namespace), enter new
    namespaces (mounts, made private before the bridges' bind mounts so nothing leaks to the
    host), set the rlimits, drop to the unprivileged user."""
    libc = _libc() if unshare else None

    def preexec() -> None:
        pid = str(os.getpid()).encode()
        for path in procs:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)
        for step in steps:
            step()
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
