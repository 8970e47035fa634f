"""``arena match`` as a chess-engine tester runs it: live lines through a pipe, and the
results so far on Ctrl-C and SIGTERM (real processes, stdout a pipe)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time

import pytest


def _start(tmp_path, *extra):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.Popen([sys.executable, "-m", "arena.cli", "match", "greedy", "random", "--games", "4000",
                             "-j", "1", "--inprocess", "--no-replays", "-o", str(tmp_path / "m"), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)


def _first_chunk(proc, timeout: float = 60.0) -> bytes:
    """What the child's stdout holds when it first becomes readable: one line or two when
    lines are flushed as printed, 4 KB at once when stdout is block-buffered."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        return os.read(proc.stdout.fileno(), 4096) if sel.select(timeout=timeout) else b""
    finally:
        sel.close()


def _stop(proc) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_live_lines_reach_a_pipe_and_a_stop_prints_the_results_so_far(tmp_path, sig, code, word):
    proc = _start(tmp_path)
    try:
        first = _first_chunk(proc)
        # the line of the first game, read as soon as it is printed, while the match still plays
        assert first.startswith(b"Finished game 1 of 4000 (greedy vs random)"), first
        assert first.count(b"\n") < 10, first
        assert proc.poll() is None
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        _stop(proc)
    assert proc.returncode == code, err
    text = out.decode()
    # the pair's block and the standings, as cutechess-cli and fastchess print them on Ctrl-C
    assert "Results of greedy vs random: games" in text
    assert "head to head" in text and "greedy" in text.split("games stored")[-1]
    assert err.decode().strip().splitlines()[-1].startswith(f"arena: {word}: ")


def test_arena_run_prints_the_standings_so_far_on_ctrl_c(tmp_path):
    (tmp_path / "t.yaml").write_text("name: t\nbots: [greedy, random]\ngames: 4000\nexecutor: inprocess\n"
                                     "replays: false\nconcurrency: 1\noutput: out\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", "t.yaml", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "out" / "games.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.1)  # the first game is stored
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        _stop(proc)
    assert proc.returncode == 130, err
    assert "head to head" in out.decode() and "greedy" in out.decode()
    assert b"arena: interrupted: " in err
