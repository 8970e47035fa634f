"""Run an arena as an ordinary user, for the tests of what such a user gets.

Most people run the arena as themselves, not as root. When the test suite runs as root
(as CI does) :func:`run_as_user` drops to a test user of its own: a uid below the bot uid
range that no process uses now, with no passwd entry needed, in a mount namespace where the
closed folders on the way to the interpreter and the project (``/root``, mode 0700) are
replaced by stand-ins that show only those paths (the sandbox's path bridges). As an
ordinary user already, it runs the code as that user. The code runs in a fresh Python
process, its working folder its own; it prints one JSON line, which is the answer.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.process.sandbox import CLONE_NEWNS, _make_bridges, _make_preexec, bridge_plan
from arena.process.uids import UID_BASE, proc_uids
from arena.process.transport import proc_files

PROJECT = Path(__file__).resolve().parent.parent


def uid_processes(uid: int) -> list[int]:
    """Live processes whose real uid is ``uid``."""
    found = []
    for pid, text in proc_files("status", 2048):
        for line in text.split(b"\n"):
            if line.startswith(b"Uid:"):
                if int(line.split()[1]) == uid:
                    state = [ln for ln in text.split(b"\n") if ln.startswith(b"State:")]
                    if not state or b"Z" not in state[0].split()[1:2]:
                        found.append(pid)
                break
    return found


def pick_uid() -> int:
    """A test user id below the bot uids that no process has now (so what it leaves is ours)."""
    busy = set(proc_uids())
    for _ in range(200):
        uid = UID_BASE - 2000 + random.randrange(1900)
        if uid not in busy and not uid_processes(uid):
            return uid
    raise RuntimeError("no free test uid")


class User:
    """An ordinary user for a test: ``uid`` (the suite's own when it is not root), a home
    folder of its own, and :meth:`run`."""

    def __init__(self):
        self.root = os.geteuid() == 0
        self.uid = pick_uid() if self.root else os.geteuid()
        self.gid = self.uid if self.root else os.getegid()
        self.home = Path(tempfile.mkdtemp(prefix="arena-user-"))
        os.chmod(self.home, 0o700)
        if self.root:
            os.chown(self.home, self.uid, self.gid)
        self.bridge = None

    def _preexec(self):
        if not self.root:
            return None
        needed = {os.path.realpath(sys.executable), os.path.abspath(sys.executable), str(PROJECT)}
        needed |= {p for p in sys.path if p and os.path.exists(p)}
        plan = bridge_plan(sorted(needed))
        if plan is None:
            raise RuntimeError(f"cannot bridge {sorted(needed)} for an ordinary user")
        mounts = []
        if plan:
            self.bridge, mounts = _make_bridges(plan)
        return _make_preexec([], [], CLONE_NEWNS if mounts else 0, mounts, (self.uid, self.gid))

    def popen(self, code: str, env: dict | None = None, **kwargs) -> subprocess.Popen:
        """Start ``code`` (Python) as the user in its home folder."""
        script = self.home / "run.py"
        script.write_text(code)
        if self.root:
            os.chown(script, self.uid, self.gid)
        full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "TMPDIR": str(self.home),
                "PYTHONPATH": f"{PROJECT}{os.pathsep}{PROJECT / 'tests'}",
                "ARENA_INSTANCE": os.environ.get("ARENA_INSTANCE", ""),
                "ARENA_TEST_SHARED_UID": "0" if self.root else "1", **(env or {})}
        return subprocess.Popen([sys.executable, str(script)], cwd=self.home, env=full, preexec_fn=self._preexec(),
                                text=True, **kwargs)

    def run(self, code: str, timeout: float = 300, env: dict | None = None) -> dict:
        """Run ``code`` (Python) as the user in its home folder; the JSON it printed last."""
        proc = self.popen(code, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        if done.returncode != 0:
            raise AssertionError(f"the user's arena failed ({done.returncode}):\n{done.stderr[-3000:]}")
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
        if not lines:
            raise AssertionError(f"the user's arena printed no answer:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return json.loads(lines[-1])

    def processes(self) -> list[int]:
        """Live processes of the test user (none may outlive its arena)."""
        return uid_processes(self.uid) if self.root else []

    def wait_gone(self, timeout: float = 5.0) -> list[int]:
        """Wait up to ``timeout`` for the user's processes to end; those still alive."""
        deadline = time.monotonic() + timeout
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.processes()

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
        if self.bridge:
            shutil.rmtree(self.bridge, ignore_errors=True)
