"""Cgroups for bot processes: where they can be made, memory and process caps, OOM, kill-all.

Both layouts are handled: cgroup v2 (a delegated subtree with the ``memory`` and ``pids``
controllers) and the v1 ``memory`` and ``pids`` hierarchies. :func:`cgroup_layout`
probes, once, where a bot's cgroup can be created (under the arena's own cgroup if
possible); :class:`Cgroup` is one bot's cgroup(s).
"""

from __future__ import annotations

import os
import signal
import threading
from functools import lru_cache
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


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
        return {}, "the cgroup v2 hierarchy has no delegated memory and pids controllers here"
    found = {}
    for ctrl in ("memory", "pids"):
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
    """A bot's cgroup(s): memory and process-count caps, OOM detection, kill-all."""

    def __init__(self, layout: dict, limits, name: str):
        self.dirs: list[Path] = []
        self.memory = False
        self.pids = False
        self.v2 = "v2" in layout
        mem = limits.memory_mb << 20
        if self.v2:
            d = layout["v2"] / name
            d.mkdir()
            self.dirs.append(d)
            (d / "memory.max").write_text(str(mem))
            self._try(d / "memory.swap.max", "0")
            (d / "pids.max").write_text(str(limits.pids))
            self.memory = self.pids = True
        else:
            if "memory" in layout:
                d = layout["memory"] / name
                d.mkdir()
                self.dirs.append(d)
                (d / "memory.limit_in_bytes").write_text(str(mem))
                self._try(d / "memory.memsw.limit_in_bytes", str(mem))
                self.memory = True
            if "pids" in layout:
                d = layout["pids"] / name
                d.mkdir()
                self.dirs.append(d)
                (d / "pids.max").write_text(str(limits.pids))
                self.pids = True
        self.procs_paths = [str(d / "cgroup.procs").encode() for d in self.dirs]

    @staticmethod
    def _try(path: Path, value: str) -> None:
        try:
            path.write_text(value)
        except OSError:
            pass

    def oom_killed(self) -> bool:
        """True if the kernel killed a process of this cgroup for memory."""
        for d in self.dirs:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    text = (d / name).read_text()
                except OSError:
                    continue
                for line in text.splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and value.strip() not in ("", "0"):
                        return True
        return False

    def hit_limit(self) -> bool:
        """True if the memory usage ever reached the cap (the kernel had to reclaim or refuse)."""
        for d in self.dirs:
            try:
                if (d / "memory.failcnt").exists():
                    if int((d / "memory.failcnt").read_text()) > 0:
                        return True
                elif (d / "memory.events").exists():
                    for line in (d / "memory.events").read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key in ("max", "oom") and value.strip() not in ("", "0"):
                            return True
            except (OSError, ValueError):
                continue
        return False

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup, then remove it."""
        for d in self.dirs:
            for _ in range(20):
                try:
                    pids = [int(x) for x in (d / "cgroup.procs").read_text().split()]
                except OSError:
                    pids = []
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                try:
                    d.rmdir()
                    break
                except OSError:
                    threading.Event().wait(0.02)
