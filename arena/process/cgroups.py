"""Cgroups for bot processes: where they can be made, caps, CPU accounting, freezing, kill-all.

Both layouts are handled: cgroup v2 (a delegated subtree with the ``memory`` and ``pids``
controllers, ``cpu`` if delegated; freezing through ``cgroup.freeze``) and the v1
``memory``, ``pids``, ``cpu``, ``cpuacct`` and ``freezer`` hierarchies. :func:`cgroup_layout`
probes, once, where a bot's cgroup can be created (under the arena's own cgroup if
possible); :class:`Cgroup` is one bot's cgroup(s), holding its whole process tree: a
process a bot starts stays in its cgroup whatever session or group it moves to, so
:meth:`Cgroup.kill_all` reaches double-forked daemons too. Bot cgroups are named
``arena-<arena pid>-<n>``; :func:`sweep_cgroups` removes those of arenas that died.
"""

from __future__ import annotations

import errno
import itertools
import os
import signal
import threading
from functools import lru_cache
from pathlib import Path

from .transport import read_file, stat_fields
from .uids import cgroup_records

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
PREFIX = "arena-"
_records = itertools.count()


def _own_cgroup(controller: str) -> str:
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return "/"
    for line in text.splitlines():
        _, ctrls, path = line.split(":", 2)
        if (controller == "" and ctrls == "") or controller in ctrls.split(","):
            return path
    return "/"


def _probe(parent: Path) -> bool:
    probe = parent / f"arena-probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
        return True
    except OSError:
        return False


def _enable_delegated(base: Path) -> bool:
    """Turn a delegated v2 cgroup that holds the arena (``systemd-run --user --scope -p
    Delegate=yes arena …``) into a parent of bot cgroups: cgroup v2 lets a cgroup hand
    controllers to children only while it holds no process itself, so the arena's processes
    move into a leaf of their own, ``arena-<pid>-main``, and ``memory``, ``pids`` (and
    ``cpu`` where offered) are enabled below. False, changing nothing that matters, where
    the cgroup is not the arena's to change (not writable, controllers missing, other
    processes in it)."""
    try:
        offered = (base / "cgroup.controllers").read_text().split()
        procs = [int(p) for p in (base / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return False
    if "memory" not in offered or "pids" not in offered or not os.access(base / "cgroup.subtree_control", os.W_OK):
        return False
    mine = {os.getpid()} | _descendants_of(os.getpid())
    if any(p not in mine for p in procs):
        return False  # a shell or another program shares it: not ours to rearrange
    leaf = base / f"{PREFIX}{os.getpid()}-main"
    try:
        leaf.mkdir(exist_ok=True)
        for pid in procs:
            (leaf / "cgroup.procs").write_text(str(pid))
        wanted = " ".join(f"+{c}" for c in ("memory", "pids", "cpu") if c in offered)
        (base / "cgroup.subtree_control").write_text(wanted)
    except OSError:
        return False
    return _probe(base)


def _descendants_of(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return set()
    for name in names:
        if name.isdigit():
            try:
                children.setdefault(int(stat_fields(read_file(f"/proc/{name}/stat", 512))[1]), []).append(int(name))
            except (OSError, IndexError, ValueError):
                continue
    out, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            out.add(child)
            todo.append(child)
    return out


@lru_cache(maxsize=1)
def cgroup_layout() -> tuple[dict, str]:
    """Parents where bot cgroups can be made: ``{"v2": dir}`` or ``{"memory": dir, "pids": dir}``."""
    v2 = CGROUP_ROOT / "cgroup.controllers"
    if v2.exists():
        base = CGROUP_ROOT / _own_cgroup("").lstrip("/")
        try:
            controllers = (base / "cgroup.subtree_control").read_text().split()
        except OSError:
            controllers = []
        if "memory" in controllers and "pids" in controllers and _probe(base):
            return {"v2": base}, ""
        if _enable_delegated(base):
            return {"v2": base}, ""
        return {}, "the cgroup v2 hierarchy has no delegated memory and pids controllers here"
    found = {}
    for ctrl in V1_CONTROLLERS:
        root = CGROUP_ROOT / ctrl
        if root.is_dir():
            base = root / _own_cgroup(ctrl).lstrip("/")
            if _probe(base):
                found[ctrl] = base
            elif _probe(root):
                found[ctrl] = root
    if found:
        return found, ""
    return {}, "no writable cgroup hierarchy under /sys/fs/cgroup"


class Cgroup:
    """A bot's cgroup(s): caps, OOM detection, CPU accounting, freezing, kill-all.

    With ``caps`` (basic and strict) memory and process count are capped, and with
    ``cpu_cap`` (strict) CPU bandwidth too
    (``limits.memory_mb``, ``limits.pids``, ``limits.cpus`` cores); without, the cgroup only
    holds, accounts and freezes the tree."""

    def __init__(self, layout: dict, limits, name: str, caps: bool = True, cpu_cap: bool = True):
        self.dirs: list[Path] = []
        self.memory = False
        self.pids = False
        self.cpu = False
        self.cpuacct = False
        self.freezer = False
        self.v2 = "v2" in layout
        self._usage: Path | None = None
        self._freeze: Path | None = None
        self._memdir: Path | None = None  # the folder of the memory controller: its events
        mem = limits.memory_mb << 20
        cpus = (getattr(limits, "cpus", 0) or 0) if cpu_cap else 0
        if self.v2:
            d = layout["v2"] / name
            d.mkdir()
            self.dirs.append(d)
            if caps:
                (d / "memory.max").write_text(str(mem))
                self._try(d / "memory.swap.max", "0")
                self._memdir = d
                (d / "pids.max").write_text(str(limits.pids))
                self.memory = self.pids = True
                if cpus > 0 and (d / "cpu.max").exists():  # only with the cpu controller delegated
                    self.cpu = self._try(d / "cpu.max", f"{int(cpus * 100000)} 100000")
            if (d / "cpu.stat").exists():
                self._usage = d / "cpu.stat"
                self.cpuacct = True
            if (d / "cgroup.freeze").exists():
                self._freeze = d / "cgroup.freeze"
                self.freezer = True
        else:
            made: dict[str, Path] = {}
            for ctrl in V1_CONTROLLERS:
                if ctrl not in layout:
                    continue
                real = os.path.realpath(layout[ctrl])
                d = made.get(real)
                if d is None:  # cpu and cpuacct are often one hierarchy
                    d = Path(real) / name
                    d.mkdir()
                    self.dirs.append(d)
                    made[real] = d
                if ctrl == "memory" and caps:
                    (d / "memory.limit_in_bytes").write_text(str(mem))
                    self._try(d / "memory.memsw.limit_in_bytes", str(mem))
                    self.memory = True
                    self._memdir = d
                elif ctrl == "pids" and caps:
                    (d / "pids.max").write_text(str(limits.pids))
                    self.pids = True
                elif ctrl == "cpu" and caps and cpus > 0:
                    self._try(d / "cpu.cfs_period_us", "100000")
                    self.cpu = self._try(d / "cpu.cfs_quota_us", str(int(cpus * 100000)))
                elif ctrl == "cpuacct":
                    self._usage = d / "cpuacct.usage"
                    self.cpuacct = True
                elif ctrl == "freezer":
                    self._freeze = d / "freezer.state"
                    self.freezer = True
        self.procs_paths = [str(d / "cgroup.procs").encode() for d in self.dirs]
        self.record = None
        try:
            self.record = cgroup_records() / f"{os.getpid()}-{next(_records)}"
            self.record.write_text("".join(f"{d}\n" for d in self.dirs))
        except (OSError, Exception):  # noqa: BLE001 - a record is a help for later sweeps, never a need
            self.record = None

    def cpu_seconds(self) -> float:
        """CPU time of every process that ever ran in the cgroup (the whole tree); 0.0 if unknown."""
        if self._usage is None:
            return 0.0
        try:
            text = read_file(self._usage, 4096).decode()  # after every move of some length
        except OSError:
            return 0.0
        try:
            if self.v2:
                for line in text.splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) / 1e6
                return 0.0
            return int(text) / 1e9
        except ValueError:
            return 0.0

    def freeze(self, frozen: bool = True) -> bool:
        """Freeze (or thaw) every process of the cgroup; False if that is not possible."""
        if self._freeze is None:
            return False
        value = ("1" if frozen else "0") if self.v2 else ("FROZEN" if frozen else "THAWED")
        return self._try(self._freeze, value)

    def pids_in(self) -> list[int]:
        """The processes in the cgroup now."""
        found: set[int] = set()
        for d in self.dirs:
            try:
                found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(found)

    @staticmethod
    def _try(path: Path, value: str) -> bool:
        try:
            path.write_text(value)
        except OSError:
            return False
        return True

    def _events(self, *names: str) -> str | None:
        """The first of the memory controller's files ``names`` that can be read (asked after
        every game of a pooled process: only the memory folder is read, without pathlib)."""
        if self._memdir is None:
            return None
        for name in names:
            try:
                return read_file(os.path.join(self._memdir, name), 4096).decode()
            except OSError:
                continue
        return None

    def oom_killed(self) -> bool:
        """True if the kernel killed a process of this cgroup for memory."""
        for line in (self._events("memory.events", "memory.oom_control") or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip() not in ("", "0"):
                return True
        return False

    def hit_limit(self) -> bool:
        """True if the memory usage ever reached the cap (the kernel had to reclaim or refuse)."""
        if not self.v2:
            try:
                return int(self._events("memory.failcnt") or 0) > 0
            except ValueError:
                return False
        for line in (self._events("memory.events") or "").splitlines():
            key, _, value = line.partition(" ")
            if key in ("max", "oom") and value.strip() not in ("", "0"):
                return True
        return False

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup (frozen first, so none can fork meanwhile), then
        remove it; one that the kernel does not let go yet (processes still exiting on a busy
        machine) is retried in the background for half a minute, and its record stays for the
        next start's sweep until it is gone."""
        left = kill_dirs(self.dirs, self._freeze, self.v2)
        if not left:
            self._forget()
            return

        def retry() -> None:
            if not kill_dirs(left, None, self.v2, rounds=1500):
                self._forget()

        threading.Thread(target=retry, daemon=True, name="cgroup-removal").start()

    def _forget(self) -> None:
        if self.record is not None:
            try:
                self.record.unlink()
            except OSError:
                pass


def kill_dirs(dirs: list[Path], freeze: Path | None = None, v2: bool = False, rounds: int = 100) -> list[Path]:
    """Kill every process of the cgroup directories ``dirs`` and remove them; the ones left."""
    if freeze is not None and freeze.exists():
        try:
            freeze.write_text("1" if v2 else "FROZEN")
        except OSError:
            freeze = None
    else:
        freeze = None
    for _ in range(rounds):
        pids: set[int] = set()
        for d in dirs:
            try:
                pids.update(int(x) for x in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if freeze is not None and pids:
            try:  # a frozen process dies only once thawed
                freeze.write_text("0" if v2 else "THAWED")
                freeze.write_text("1" if v2 else "FROZEN")
            except OSError:
                pass
        left = []
        for d in dirs:
            try:
                d.rmdir()
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    left.append(d)
        if not left:
            return []
        dirs = left
        threading.Event().wait(0.02)
    if freeze is not None:
        try:
            freeze.write_text("0" if v2 else "THAWED")
        except OSError:
            pass
    return dirs


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a process of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a killed process its parent has
    not reaped yet is gone)."""
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def sweep_cgroups() -> int:
    """Kill and remove the bot cgroups of arenas that are no longer running; how many. Those
    recorded (:func:`~arena.process.uids.cgroup_records`) are found wherever they were made;
    the ones named after a dead arena below this arena's own cgroup parents too."""
    layout, _ = cgroup_layout()
    removed = 0
    try:
        records = cgroup_records(create=False)
        names = os.listdir(records) if records is not None else []
    except Exception:  # noqa: BLE001 - without records, the name-based sweep below still runs
        names = []
    for name in names:
        owner = name.split("-", 1)[0]
        if not owner.isdigit() or int(owner) == os.getpid() or pid_alive(int(owner)):
            continue
        try:
            dirs = [Path(line) for line in (records / name).read_text().splitlines() if line.startswith("/sys/fs/cgroup/")]
        except OSError:
            continue
        present = [d for d in dirs if d.is_dir()]
        left = []
        for d in present:
            freezer = d / "freezer.state" if (d / "freezer.state").exists() else d / "cgroup.freeze"
            left += kill_dirs([d], freezer if freezer.exists() else None, freezer.name == "cgroup.freeze")
        removed += len(present) - len(left)
        if not left:
            try:
                (records / name).unlink()
            except OSError:
                pass
    bases = {os.path.realpath(p) for p in layout.values()}
    for base in bases:
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if not name.startswith(PREFIX) or len(parts) < 3 or not parts[1].isdigit():
                continue
            if int(parts[1]) == os.getpid() or pid_alive(int(parts[1])):
                continue
            d = Path(base) / name
            freezer = d / "freezer.state"
            kill_dirs([d], freezer if freezer.exists() else (d / "cgroup.freeze" if "v2" in layout else None),
                      "v2" in layout)
            removed += 1
    return removed
