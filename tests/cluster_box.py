"""A real Dask cluster on 127.0.0.1 whose workers share nothing with the test but the network.

:class:`BoxedCluster` starts ``dask scheduler`` and ``dask worker`` processes (one worker
process and one thread each, no dashboard, random free ports). Each worker runs inside its
own mount namespace made by bubblewrap: the whole machine bound as it is, but a private
``/tmp`` and an empty folder over each path of ``hide`` (the coordinator's output folder,
the bots' source folders), so it can read nothing the coordinator writes. The network is
shared: the workers reach the scheduler. Needs root (bubblewrap's mounts without a user
namespace) and bubblewrap: elsewhere the tests skip with the reason, or fail under CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from proc_check import die_with_parent


def require_box() -> None:
    """Skip (or, with ``CI=true``, fail) unless bubblewrapped workers can run here."""
    why = ""
    if shutil.which("bwrap") is None:
        why = "bubblewrap is not installed (apt-get install bubblewrap)"
    elif os.geteuid() != 0:
        why = "the boxed workers need root (bubblewrap mounts without a user namespace)"
    elif shutil.which("dask") is None:
        why = "the dask command is not installed (pip install 'project-l-arena[cluster]')"
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must test the cluster in boxes, but {why}")
        pytest.skip(why)


class BoxedCluster:
    """A scheduler and ``workers`` bubblewrapped worker processes (see the module docstring)."""

    def __init__(self, folder: Path, hide: list[Path], workers: int = 2):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.hide = [Path(h).resolve() for h in hide]
        self.count = workers
        self.procs: list[subprocess.Popen] = []
        self.address = ""

    def _spawn(self, argv: list[str], name: str) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "wb")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=die_with_parent)
        log.close()
        self.procs.append(proc)
        return proc

    def start(self) -> "BoxedCluster":
        info = self.folder / "scheduler.json"
        self._spawn(["dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(info)], "scheduler")
        deadline = time.monotonic() + 60
        while not info.exists() or not info.read_text().strip():
            if time.monotonic() > deadline:
                raise RuntimeError("the dask scheduler did not start: " + (self.folder / "scheduler.log").read_text())
            time.sleep(0.1)
        time.sleep(0.2)
        self.address = json.loads(info.read_text())["address"]
        for i in range(self.count):
            self.add_worker(f"box{i}")
        from distributed import Client

        if self.count:
            with Client(self.address, timeout="30s") as client:
                client.wait_for_workers(self.count, timeout=120)
        return self

    def add_worker(self, name: str) -> None:
        box = ["bwrap", "--bind", "/", "/", "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc", "--die-with-parent"]
        for path in installed_paths():
            box += ["--ro-bind", str(path), str(path)]
        for path in self.hide:
            box += ["--tmpfs", str(path)]
        self._spawn(box + ["dask", "worker", self.address, "--host", "127.0.0.1", "--nworkers", "1",
                           "--nthreads", "1", "--no-dashboard", "--name", name, "--death-timeout", "60"], name)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in reversed(self.procs):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        self.procs = []


class PlainCluster(BoxedCluster):
    """The same scheduler and worker processes, without boxes (no bubblewrap, no root):
    for what concerns the scheduler and its workers, not what a worker can see."""

    def add_worker(self, name: str) -> None:
        self._spawn(["dask", "worker", self.address, "--host", "127.0.0.1", "--nworkers", "1", "--nthreads", "1",
                     "--no-dashboard", "--name", name, "--death-timeout", "60"], name)


def require_dask_command() -> None:
    """Skip (or, with ``CI=true``, fail) unless the ``dask`` command is installed."""
    if shutil.which("dask") is None:
        why = "the dask command is not installed (pip install 'project-l-arena[cluster]')"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must test the cluster, but {why}")
        pytest.skip(why)


def installed_paths() -> list[Path]:
    """The installed project a worker needs that the private ``/tmp`` would hide: the
    virtual environment and the project's source folder when they lie under ``/tmp`` (a
    checkout cloned there, as CI may do). A worker machine has the project installed; it
    has none of the coordinator's files."""
    import arena

    tmp = Path("/tmp").resolve()
    found = []
    for path in (Path(sys.prefix).resolve(), Path(arena.__file__).resolve().parents[1]):
        if path.is_relative_to(tmp) and path != tmp and not any(path.is_relative_to(f) for f in found):
            found.append(path)
    return found


def worker_leftovers() -> dict:
    """Run on a worker: what is left in its private ``/tmp`` of the arena's games, and its
    child processes (bots)."""
    import tempfile

    import psutil

    tmp = tempfile.gettempdir()
    installed = {str(p) for p in installed_paths()}
    arena, sandbox = [], []
    for root, dirs, files in os.walk(tmp):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in installed]
        for name in dirs + files:
            if name.startswith("arena-sandbox-"):
                sandbox += [os.path.join(root, name, n) for n in os.listdir(os.path.join(root, name))]
            elif name.startswith("arena-"):
                arena.append(os.path.join(root, name))
    arena.sort()
    sandbox.sort()
    kids = [p.pid for p in psutil.Process().children(recursive=True)]
    return {"arena": arena, "sandbox": sandbox, "children": kids, "pid": os.getpid(),
            "python": sys.executable}


def _by_value() -> None:
    """The workers cannot import this test module: its functions travel by value."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


_by_value()


def wait_nothing_left(address: str, timeout: float = 30) -> None:
    """Wait until no worker of the scheduler at ``address`` holds anything of the arena's
    games (folders, bot working folders, bot processes); fail with what is left."""
    from distributed import Client

    with Client(address, timeout="30s") as client:
        deadline = time.monotonic() + timeout
        while True:
            left = client.run(worker_leftovers)
            if all(not v["arena"] and not v["sandbox"] and not v["children"] for v in left.values()):
                return
            assert time.monotonic() < deadline, left
            time.sleep(0.5)
