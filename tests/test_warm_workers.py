"""The local executor warms its own process for the first game before it forks any worker:
the imports, the compiled rules and the sandbox's probes of the machine are inherited, so a
worker's first game does not run them again (at 16 workers they were 16 times the work)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import json, os, sys, tempfile
    from pathlib import Path
    from arena.bench.tournament import bench_config
    from arena.execution import local
    from arena.tournament.requests import build_request
    from arena.tournament.schedule import schedule

    if os.environ.get("WARM") != "1":
        local.warm = lambda payload: None
    with tempfile.TemporaryDirectory() as tmp:
        cfg = bench_config(Path(tmp), 1, 2, "bots", "basic")
        tasks = list(schedule(cfg))
        requests = {t.key: build_request(cfg, t, Path(tmp)) for t in tasks}
        for r in requests.values():  # one bot on every seat: the first game starts both processes
            for s in r["seats"]:
                s["name"] = "greedy"
        replies = [reply for _, reply in local.LocalExecutor(1).run(
            iter(tasks), lambda t: {"request": requests[t.key], "play": "bots"}, lambda: False,
            lambda lost, why: None)]
    print(json.dumps([r["cpu_s"] for r in replies]))
''')


def first_and_later(warm: bool) -> tuple[float, float]:
    """A fresh coordinator's one worker: the CPU of its first game and the median of its others."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "WARM": "1" if warm else "0"})
    assert out.returncode == 0, out.stderr
    cpu = json.loads(out.stdout.splitlines()[-1])
    later = sorted(cpu[1:])
    return cpu[0], later[len(later) // 2]


def test_a_warmed_workers_first_game_costs_about_what_its_others_do():
    cold_first, _ = first_and_later(False)
    first, later = first_and_later(True)
    # the first game still starts its two bot processes; the imports and the machine's probes
    # (tens of milliseconds of CPU) were the coordinator's, once, before the fork
    assert first < later + 0.03, (first, later)
    assert first + 0.015 < cold_first, (first, cold_first)
