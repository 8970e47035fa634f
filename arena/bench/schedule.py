"""``arena bench schedule``: validation time and memory of big fields, and time to the first game.

Tournament files of generated fields are written to a temporary folder -- a round robin of
1,000 bots, a gauntlet of 10,000 and a Swiss of 10,000 (two seats; every bot is a copy of
the built-in ``random`` bot under its own name) -- and ``arena validate`` is run on each in
a fresh process, timed from start to exit, its peak resident memory read from the kernel
(``wait4``). Then ``arena run`` is started on the gauntlet (in-process play) and timed until
its first game is stored in the results database, and stopped. Targets: under 5 s and
1 GB for each validation, under 5 s to the first game.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIELDS = (("round-robin", 1000, ""), ("gauntlet", 10000, ""), ("swiss", 10000, "rounds: 14\n"))


def write_field(path: Path, fmt: str, bots: int, extra: str = "", inprocess: bool = False) -> Path:
    """A tournament file of ``bots`` copies of ``random`` (named b00000, b00001, ...)."""
    lines = [f"name: big-{fmt}", "seats: 2", f"format: {fmt}", f"output: {path.parent / ('out-' + fmt)}",
             "replays: false"]
    if inprocess:
        lines.append("executor: inprocess")
    lines.append("bots:")
    lines += [f"  - {{name: b{i:05d}, bot: random}}" for i in range(bots)]
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


def _arena() -> list[str]:
    return [sys.executable, "-m", "arena.cli"]


def _timed(argv: list[str]) -> dict:
    """Run ``argv``; wall and CPU seconds (CPU time is what other load on the machine does not
    inflate), peak RSS in MB, exit code and the last line printed."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = out.decode("utf-8", "replace").strip().splitlines()
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
            "exit": proc.returncode,
            "said": text[-1] if text else ""}


def first_game(file: Path, output: Path, timeout: float = 60.0) -> float | None:
    """Seconds from starting ``arena run FILE`` to its first stored game (None: not within
    ``timeout``); the run is stopped then."""
    db = output / "results.sqlite"
    t0 = time.perf_counter()
    proc = subprocess.Popen(_arena() + ["run", str(file), "--no-progress", "-j", "1"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    found = None
    try:
        while time.perf_counter() - t0 < timeout and proc.poll() is None:
            if db.exists():
                try:
                    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)
                    try:
                        n = con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
                    finally:
                        con.close()
                except sqlite3.Error:
                    n = 0
                if n:
                    found = time.perf_counter() - t0
                    break
            time.sleep(0.02)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return found


def bench_schedule(fields=FIELDS, run_bots: int = 10000) -> dict:
    """Validate each generated field, then time ``arena run`` to its first game on a
    gauntlet of ``run_bots`` bots."""
    out: dict = {"validate": []}
    with tempfile.TemporaryDirectory(prefix="arena-bench-schedule-") as tmp:
        for fmt, bots, extra in fields:
            path = write_field(Path(tmp) / f"{fmt}.yaml", fmt, bots, extra)
            row = _timed(_arena() + ["validate", str(path)])
            out["validate"].append({"format": fmt, "bots": bots, **row})
        gauntlet = write_field(Path(tmp) / "run.yaml", "gauntlet", run_bots, inprocess=True)
        out["first_game_s"] = first_game(gauntlet, Path(tmp) / "out-gauntlet")
    return out
