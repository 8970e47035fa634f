"""kill -9 in the middle of a run: the helper of the resume tests."""

from __future__ import annotations

from pathlib import Path


def kill_when_stored(argv: list[str], db: Path, table: str, at_least: int, timeout: float = 120.0) -> None:
    """Run ``arena ARGV`` in its own process group; kill -9 the group once ``table`` of ``db`` holds ``at_least`` rows."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", *map(str, argv)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"finished before it could be killed: {proc.stderr.read().decode()}")
            if db.exists():
                try:
                    with sqlite3.connect(db, timeout=1) as conn:
                        n = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                except sqlite3.Error:
                    n = 0
                if n >= at_least:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(10)
                    return
            time.sleep(0.02)
        raise AssertionError("the run stored too few games in time")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
