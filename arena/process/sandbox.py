"""Sandbox tiers for bot processes, and what the machine actually allows.

- ``none``: a plain subprocess in its own session and process group (for development).
- ``basic``: also a fresh temporary working directory, a scrubbed environment (only
  ``PATH``, locale, ``TZ``, ``PYTHONPATH``; ``HOME`` and ``TMPDIR`` point to the working
  directory) and rlimits on CPU time, open files, file size, and no core dumps.
- ``strict``: basic, plus an unprivileged user (``nobody``) when the arena runs as root
  (a program below a directory ``nobody`` cannot enter, such as an interpreter under
  ``/root``, is reached through a *path bridge*: in a private mount namespace the closed
  directory is replaced by a stand-in exposing only the program's path),
  no network (a fresh network namespace), and memory and process-count limits through
  cgroups (v2, or v1 ``memory`` and ``pids`` hierarchies) where they are writable; without
  a memory cgroup, the bot's resident memory is polled instead and the bot killed above
  the cap. ``RLIMIT_AS`` is never used as the memory cap: it breaks Go, JVM and Node.

Every protection is detected at run time. One that is not available is reported with a
one-line reason (``Sandbox.record()``), so the game record says what was in force.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
import pwd
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .cgroups import Cgroup, cgroup_layout
from ..errors import ArenaError
from .transport import session_members

TIERS = ("none", "basic", "strict")
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH")
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


def bridge_plan(files: list[str]) -> dict[str, list[str]] | None:
    """How user ``nobody`` can reach ``files`` that sit below a directory it cannot search
    (an interpreter under ``/root``): ``{blocking directory: [child names to expose]}``.

    None when a file cannot be bridged: it is not readable by others itself, or more than
    one directory on its path is closed to them."""
    plan: dict[str, list[str]] = {}
    for name in files:
        path = Path(name).resolve()
        try:
            if not path.stat().st_mode & 0o004:
                return None
            closed = [d for d in path.parents if not d.stat().st_mode & 0o001]
        except OSError:
            return None
        if len(closed) != 1 or closed[0] == Path("/"):
            return None
        child = path.relative_to(closed[0]).parts[0]
        children = plan.setdefault(str(closed[0]), [])
        if child not in children:
            children.append(child)
    return plan


def _make_bridges(plan: dict[str, list[str]]) -> tuple[str, list[tuple[bytes, bytes]]]:
    """A root-owned folder standing in for each closed directory (mode 0755, holding only the
    children to expose), and the bind mounts that put it in place, in order."""
    top = tempfile.mkdtemp(prefix="arena-bridge-")
    os.chmod(top, 0o755)
    mounts: list[tuple[bytes, bytes]] = []
    for i, (closed, children) in enumerate(sorted(plan.items())):
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
    _exceeded: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)

    def started(self, pid: int) -> None:
        """Called once the process runs: start RSS polling if it is the memory cap."""
        if self.rss_limit:
            threading.Thread(target=self._poll_rss, args=(pid,), daemon=True, name=f"rss-{pid}").start()

    def _poll_rss(self, pid: int) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.wait(self.rss_poll_s):
            total = 0
            for member in session_members(pid):
                try:
                    with open(f"/proc/{member}/statm", "rb") as f:
                        total += int(f.read().split()[1]) * page
                except (OSError, IndexError, ValueError):
                    pass
            if total > self.rss_limit:
                self._exceeded = True
                for member in session_members(pid):
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

    def kill_extra(self) -> None:
        """Kill what the process group kill cannot reach (the cgroup's processes)."""
        self._stop.set()
        if self.cgroup is not None:
            for path in self.cgroup.procs_paths:
                try:
                    pids = [int(x) for x in Path(path.decode()).read_text().split()]
                except OSError:
                    continue
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass

    def cleanup(self) -> None:
        """Remove the cgroup and the working directory (after the process is gone)."""
        self._stop.set()
        if self.cgroup is not None:
            self.cgroup.kill_all()
            self.cgroup = None
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
        if self.bridge:
            shutil.rmtree(self.bridge, ignore_errors=True)
            self.bridge = None


class Sandbox:
    """A sandbox tier for the bots of one game; :meth:`prepare` one :class:`Launch` per bot."""

    def __init__(self, tier: str = "basic", limits: Limits | None = None, use_cgroups: bool = True):
        if tier not in TIERS:
            raise SandboxError(f"unknown sandbox tier {tier!r} (tiers: {', '.join(TIERS)})")
        self.tier = tier
        self.limits = limits or Limits()
        self.use_cgroups = use_cgroups
        self.launches: list[Launch] = []

    def prepare(self, argv: list[str], label: str = "bot") -> Launch:
        """Working dir, environment and pre-exec function of one bot under this tier."""
        launch = Launch(list(argv), protections=["process_group"])
        self.launches.append(launch)
        if self.tier == "none":
            return launch
        lim = self.limits
        launch.tmpdir = tempfile.mkdtemp(prefix=f"arena-{label}-")
        launch.cwd = launch.tmpdir
        env = {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith("LC_")}
        env.update(HOME=launch.tmpdir, TMPDIR=launch.tmpdir)
        launch.env = env
        launch.protections += ["session", "temp_dir", "scrubbed_env", "rlimit_cpu", "rlimit_nofile",
                               "rlimit_fsize", "no_core"]
        rlimits = [(which, _capped(which, value)) for which, value in
                   ((resource.RLIMIT_CPU, lim.cpu_s), (resource.RLIMIT_NOFILE, lim.nofile),
                    (resource.RLIMIT_FSIZE, lim.fsize_mb << 20), (resource.RLIMIT_CORE, 0))]
        unshare, setuid = 0, None
        mounts: list[tuple[bytes, bytes]] = []
        procs: list[bytes] = []
        if self.tier == "strict":
            user = unprivileged_user()
            if user is None:
                reason = ("the arena does not run as root, so the bot already runs unprivileged"
                          if os.geteuid() != 0 else "there is no user 'nobody'")
                launch.unavailable.append({"protection": "unprivileged_user", "reason": reason})
            else:
                blocked = [a for a in _program_files(argv, env) if not world_accessible(a)]
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
                    launch.unavailable.append({"protection": "unprivileged_user", "reason":
                                               f"{blocked[0]} is not readable by user nobody{why}, so the bot "
                                               "runs as root"})
                else:
                    setuid = user
                    os.chown(launch.tmpdir, *user)
                    launch.protections.append("unprivileged_user")
            ok, reason = netns_available()
            if ok:
                unshare |= CLONE_NEWNET
                launch.protections.append("no_network")
            else:
                launch.unavailable.append({"protection": "no_network", "reason": reason})
            layout, reason = cgroup_layout() if self.use_cgroups else ({}, "cgroups were turned off")
            if layout:
                try:
                    launch.cgroup = Cgroup(layout, lim, f"arena-{os.getpid()}-{next(_counter)}")
                except OSError as exc:
                    layout, reason = {}, f"cannot set up a cgroup ({exc.strerror})"
            cg = launch.cgroup
            if cg is not None:
                procs = cg.procs_paths
            if cg is not None and cg.memory:
                launch.protections.append("cgroup_memory")
            else:
                launch.rss_limit = lim.memory_mb << 20
                launch.rss_poll_s = lim.rss_poll_ms / 1000
                launch.protections.append("rss_polling")
                launch.unavailable.append({"protection": "cgroup_memory",
                                           "reason": f"{reason}; resident memory is polled instead"})
            if cg is not None and cg.pids:
                launch.protections.append("cgroup_pids")
            else:
                launch.unavailable.append({"protection": "cgroup_pids", "reason": reason or "no pids controller"})
        launch.preexec_fn = _make_preexec(rlimits, procs, unshare, mounts, setuid)
        return launch

    def cleanup(self) -> None:
        """Clean up every launch (idempotent; bots' own close does it too)."""
        for launch in self.launches:
            launch.cleanup()

    def record(self) -> dict:
        """``{"tier", "protections", "unavailable"}``: what was in force for every bot of the game."""
        if not self.launches:
            return {"tier": self.tier, "protections": [], "unavailable": []}
        common = [p for p in self.launches[0].protections if all(p in ln.protections for ln in self.launches)]
        missing, seen = [], set()
        for ln in self.launches:
            for item in ln.unavailable:
                key = (item["protection"], item["reason"])
                if key not in seen:
                    seen.add(key)
                    missing.append(dict(item))
        return {"tier": self.tier, "protections": common, "unavailable": missing}


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

    In order: join the cgroup, enter new namespaces (network; mounts, made private before
    the bridges' bind mounts so nothing leaks to the host), set the rlimits, drop to the
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
