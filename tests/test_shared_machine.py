"""Several arenas on one machine never touch each other's bots.

Three ``arena run`` processes, each with a ``TMPDIR``, an output folder and a sandbox tier
of its own, play at once: bots that start slowly, think slowly, and fork children that
sleep. The later ones start (and sweep) while the first one's bots are alive. Every game of
every arena must end without a fault (none of them earned one), and nothing of their bots
may be left: no process of a bot uid this test run leased, no working folder.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from proc_check import MISBEHAVE, leftover_bot_files, leftover_bot_processes
from strict_check import require_strict

pytestmark = pytest.mark.slow

YAML = textwrap.dedent("""\
    name: {name}
    rules: {{variants: [], params: {{max_rounds: 3}}}}
    seats: 2
    bots:
      - greedy
      - {{name: slow-starter, cmd: "{py} {bot} slow_start 2"}}
      - {{name: forker, cmd: "{py} {bot} fork"}}
      - {{name: slow, cmd: "{py} {bot} slow 0.05"}}
    format: round-robin
    rounds: 2
    seed: {seed}
    time_control: {{move_ms: 5000, startup_ms: 30000}}
    sandbox: {tier}
    concurrency: 2
    output: {out}
    """)


def start(tmp_path: Path, name: str, tier: str, seed: int) -> tuple[subprocess.Popen, Path, Path]:
    temp = tmp_path / f"tmp-{name}"
    temp.mkdir(mode=0o755)
    out = tmp_path / f"out-{name}"
    path = tmp_path / f"{name}.yaml"
    path.write_text(YAML.format(name=name, py=sys.executable, bot=MISBEHAVE, tier=tier, seed=seed, out=out))
    env = dict(os.environ, TMPDIR=str(temp))
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc, out, temp


def faults_and_games(out: Path) -> tuple[list, int]:
    conn = sqlite3.connect(out / "results.sqlite")
    try:
        faults = conn.execute("SELECT bot, verdict, detail FROM faults").fetchall()
        games = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    finally:
        conn.close()
    return faults, games


def test_three_arenas_with_their_own_tmpdirs_play_side_by_side_without_a_stray_fault(tmp_path):
    require_strict()
    os.chmod(tmp_path, 0o755)
    first = start(tmp_path, "a", "basic", 1)
    time.sleep(3)  # its slow starters and forkers are alive when the others start and sweep
    others = [start(tmp_path, "b", "strict", 2), start(tmp_path, "c", "none", 3)]
    for proc, out, temp in [first, *others]:
        output, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, output[-3000:]
        faults, games = faults_and_games(out)
        assert games == 24, output[-2000:]
        assert faults == [], f"{out.name}: faults no bot earned: {faults}"
        root = temp / f"arena-sandbox-{os.geteuid()}"
        # (an empty folder of cgroup records stays where this user's bots had cgroups)
        left = [n for n in os.listdir(root) if not (n == ".cgroups" and not os.listdir(root / n))] \
            if root.exists() else []
        assert left == [], "no working folder is left"
    deadline = time.monotonic() + 5
    while (leftover_bot_processes() or leftover_bot_files()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert leftover_bot_processes() == [] and leftover_bot_files() == []
