"""An experiment of bot processes reuses them as a tournament does: each bot starts once
per worker, not once per game."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

PIDBOT = '''\
import json, os, random, sys
sys.stderr.write(f"started {os.getpid()}\\n")
sys.stderr.flush()
rng = random.Random(3)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    if msg.get("type") == "hello":
        print(json.dumps({"type": "ready", "id": msg["id"], "name": "pidbot", "version": "1",
                          "legal_actions": True}), flush=True)
    elif "legal" in msg:
        print(json.dumps({"id": msg["id"], "action": rng.choice(msg["legal"])}), flush=True)
'''


def test_an_experiment_of_bot_processes_starts_each_bot_once_per_worker(tmp_path):
    tmp_path.chmod(0o755)
    (tmp_path / "pidbot.py").write_text(PIDBOT)
    (tmp_path / "e.yaml").write_text(textwrap.dedent(f"""\
        name: reuse
        seats: 2
        bots:
          - random
          - {{name: pidbot, cmd: {sys.executable} pidbot.py}}
        games: 12
        seed: 2
        concurrency: 2
        sandbox: none
        executor: {{type: local, play: bots}}
        output: {tmp_path / 'out'}
        rule_sets:
          - {{name: base}}
          - {{name: short, params: {{max_rounds: 6}}}}
    """))
    done = subprocess.run([sys.executable, "-m", "arena.cli", "experiment", str(tmp_path / "e.yaml")],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    # a bot's log is made at its first byte on stderr: pidbot writes one line when it
    # starts, into the log of the first game it plays, and nothing after, so the logs are
    # its starts
    logs = [p for p in (tmp_path / "out").rglob("*pidbot*.log")]
    pids = [m for p in logs for m in re.findall(r"started (\d+)", p.read_text())]
    assert len(pids) == len(set(pids)) == len(logs), sorted(p.name for p in logs)
    assert 1 <= len(pids) <= 4, pids  # once per worker (2), and per rule set's log folder at most
