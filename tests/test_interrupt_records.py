"""Stopping ``arena match`` as a person does, in a pipeline, keeps every record in agreement.

``arena match ... | tee log`` runs in a session of its own, and SIGINT goes to its whole
process group, as a terminal's Ctrl-C does: ``tee`` dies with the arena. The arena exits
130 with its results block on stderr (stdout is gone), and ``games.jsonl`` and
``--games-out`` hold exactly the games of ``results.sqlite``; so they do after a resume,
even when a file had fallen behind (rebuilt from the database). ``| head -3`` stops the
match quietly: exit 141, nothing on stderr, the files agreeing again.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

MATCH = [sys.executable, "-m", "arena.cli", "match", "random", "greedy", "-n", "400", "--inprocess", "-j", "1",
         "-o", "m", "--games-out", "out.jsonl"]


def pipeline(folder: Path, tail: str) -> subprocess.Popen:
    """``MATCH 2>err | TAIL`` by bash in a new session; each one's status in ``status``."""
    for name in ("log", "err", "status"):
        (folder / name).unlink(missing_ok=True)
    line = f"{shlex.join(MATCH)} 2>err | {tail}; echo ${{PIPESTATUS[*]}} > status"
    return subprocess.Popen(["bash", "-c", line], cwd=folder, start_new_session=True, stdout=subprocess.DEVNULL)


def ctrl_c_after(folder: Path, proc: subprocess.Popen, lines: int) -> None:
    """SIGINT to the pipeline's process group once ``log`` has ``lines`` lines (tee wrote them)."""
    deadline = time.monotonic() + 120
    log = folder / "log"
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and len(log.read_text().splitlines()) >= lines:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the match ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=120)


def statuses(folder: Path) -> list[int]:
    return [int(x) for x in (folder / "status").read_text().split()]


def keys(folder: Path) -> dict[str, list[str]]:
    """The game keys of the database and of each file, in file order."""
    conn = sqlite3.connect(folder / "m" / "results.sqlite")
    try:
        stored = [k for (k,) in conn.execute("SELECT key FROM games ORDER BY id")]
    finally:
        conn.close()
    jsonl = [json.loads(x)["key"] for x in (folder / "m" / "games.jsonl").read_text().splitlines()]
    out = [json.loads(x)["game"]["key"] for x in (folder / "out.jsonl").read_text().splitlines()]
    return {"db": stored, "games.jsonl": jsonl, "--games-out": out}


def assert_agree(folder: Path) -> int:
    k = keys(folder)
    assert sorted(k["games.jsonl"]) == sorted(k["db"]), "games.jsonl and results.sqlite differ"
    assert sorted(k["--games-out"]) == sorted(k["db"]), "--games-out and results.sqlite differ"
    return len(k["db"])


def drop_last_line(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # and half of it left


def test_ctrl_c_on_a_match_piped_to_tee_keeps_the_results_and_the_files(tmp_path):
    proc = pipeline(tmp_path, "tee log")
    ctrl_c_after(tmp_path, proc, 15)
    assert statuses(tmp_path) == [130, 130]  # the arena, then tee: both stopped by the Ctrl-C
    err = (tmp_path / "err").read_text()
    assert "Traceback" not in err
    assert "head to head" in err and "ratings:" in err, err  # the results block, on stderr
    assert err.rstrip().splitlines()[-1].startswith("arena: interrupted: ")
    first = assert_agree(tmp_path)
    assert 0 < first < 400

    # a run stopped between storing a game and writing its lines (kill -9) left them behind
    drop_last_line(tmp_path / "m" / "games.jsonl")
    drop_last_line(tmp_path / "out.jsonl")
    proc = pipeline(tmp_path, "tee log")
    ctrl_c_after(tmp_path, proc, 15)
    assert statuses(tmp_path) == [130, 130]
    assert "head to head" in (tmp_path / "err").read_text()
    second = assert_agree(tmp_path)
    assert second > first
    k = keys(tmp_path)
    assert len(set(k["games.jsonl"])) == len(k["games.jsonl"]) and len(set(k["--games-out"])) == len(k["--games-out"])


def test_head_stops_a_match_quietly_and_the_files_agree(tmp_path):
    proc = pipeline(tmp_path, "head -3 > shown")
    proc.wait(timeout=120)
    assert statuses(tmp_path) == [141, 0]  # as a program stopped by SIGPIPE
    assert (tmp_path / "err").read_text() == ""
    assert len((tmp_path / "shown").read_text().splitlines()) == 3
    first = assert_agree(tmp_path)
    proc = pipeline(tmp_path, "head -3 > shown")  # a resume, stopped the same way
    proc.wait(timeout=120)
    assert statuses(tmp_path) == [141, 0]
    assert (tmp_path / "shown").read_text().startswith("continuing match-random-vs-greedy: ")
    assert assert_agree(tmp_path) >= first
