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
    from arena.process import sandbox
    from arena.tournament.requests import build_request
    from arena.tournament.schedule import schedule

    coordinator = os.getpid()
    probes = sys.argv[1]
    real = sandbox._child_survives

    def counted(preexec):  # the machine's probes (namespaces, run once per process)
        with open(probes, "a") as f:
            f.write(f"{os.getpid()}\\n")
        return real(preexec)

    sandbox._child_survives = counted
    if os.environ.get("WARM") != "1":
        local.warm = lambda payload: None
    with tempfile.TemporaryDirectory() as tmp:
        cfg = bench_config(Path(tmp), 2, 1, "bots", "basic")
        tasks = list(schedule(cfg))
        requests = {t.key: build_request(cfg, t, Path(tmp)) for t in tasks}
        replies = [reply for _, reply in local.LocalExecutor(2).run(
            iter(tasks), lambda t: {"request": requests[t.key], "play": "bots"}, lambda: False,
            lambda lost, why: None)]
    pids = [int(x) for x in open(probes).read().split()] if os.path.exists(probes) else []
    print(json.dumps({"games": len(replies), "in_coordinator": pids.count(coordinator),
                      "in_workers": len(pids) - pids.count(coordinator),
                      "cpu": [r["cpu_s"] for r in replies]}))
''')


def run(warm: bool, tmp_path) -> dict:
    probes = tmp_path / f"probes-{warm}"
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(probes)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "WARM": "1" if warm else "0"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_the_workers_inherit_the_machines_probes_instead_of_running_them(tmp_path):
    cold = run(False, tmp_path)
    assert cold["games"] == 6 and cold["in_coordinator"] == 0 and cold["in_workers"] >= 2  # each worker probed
    warm = run(True, tmp_path)
    assert warm["games"] == 6 and warm["in_coordinator"] >= 1 and warm["in_workers"] == 0
