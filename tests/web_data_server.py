"""A real ``arena serve`` on 127.0.0.1 for the league-data tests, with any options."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from proc_check import die_with_parent


def require(program: str) -> str:
    """The path of ``program``; skip without it (fail under ``CI=true``)."""
    found = shutil.which(program)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have {program} installed")
        pytest.skip(f"{program} is not installed")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """``arena serve LEAGUE --port P *args`` in its own session, its output in ``serve.log``
    beside the league file; it dies with the test's process."""

    def __init__(self, league: Path, *args: str):
        self.league = Path(league)
        self.args = [str(a) for a in args]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self.league.parent / "serve.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 90) -> "Serve":
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "serve", str(self.league), "--port",
                                          str(self.port), *self.args],
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=die_with_parent,
                                         cwd=self.league.parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if self.request("GET", "/api/leaderboard")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"the server did not start: {self.log.read_text()}")

    def stop(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            return None

    def exchange(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None):
        """``(status, body, headers)`` of one HTTP request."""
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None):
        """``(status, body)`` of one HTTP request."""
        return self.exchange(method, path, data, headers)[:2]

    def api(self, method: str, path: str, data: bytes | None = None, token: str | None = None) -> tuple[int, dict]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        status, body = self.request(method, path, data, headers)
        return status, json.loads(body or b"{}")

    def wait_submission(self, sid: int, timeout: float = 240) -> dict:
        deadline = time.monotonic() + timeout
        sub = {}
        while time.monotonic() < deadline:
            status, sub = self.api("GET", f"/api/submissions/{sid}")
            assert status == 200, sub
            if sub["status"] not in ("queued", "building", "checking"):
                return sub
            time.sleep(0.5)
        raise AssertionError(f"submission {sid} did not finish: {sub}\n{self.log.read_text()[-3000:]}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")
