"""The deployment files in deploy/ work as shipped: the compose file's commands run with a
local scheduler, its coordinator's tournament exists and validates, and the Kubernetes
manifests name what the docs promise (resource limits, the worker's sandbox needs)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_the_compose_file_names_files_that_exist_and_a_tournament_that_validates():
    doc = compose()
    services = doc["services"]
    assert {"scheduler", "worker", "coordinator", "web"} <= set(services)
    build = services["scheduler"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    for name, svc in services.items():
        for volume in svc.get("volumes") or []:
            host = volume.split(":")[0]
            if name != "web" and "results" not in host:  # made by the run (the league: `arena league new`)
                assert (DEPLOY / host).resolve().exists(), (name, volume)
    coordinator = shlex.split(services["coordinator"]["command"])
    assert coordinator[:2] == ["arena", "run"]
    tournament = ROOT / coordinator[2]
    done = subprocess.run([sys.executable, "-m", "arena.cli", "validate", str(tournament)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    worker = services["worker"]
    assert "SYS_ADMIN" in worker["cap_add"] and any("seccomp=unconfined" in o for o in worker["security_opt"])


def test_the_kubernetes_manifests_give_every_container_limits_and_the_workers_their_sandbox():
    docs = [d for p in sorted((DEPLOY / "kubernetes").glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("Deployment", "arena-scheduler"), ("Service", "arena-scheduler"), ("Deployment", "arena-worker"),
            ("Job", "arena-demo"), ("NetworkPolicy", "arena-scheduler-clients")} <= kinds
    for d in docs:
        if d["kind"] in ("Deployment", "Job"):
            for c in d["spec"]["template"]["spec"]["containers"]:
                assert c["resources"]["limits"]["cpu"] and c["resources"]["limits"]["memory"], d["metadata"]
                if d["metadata"]["name"] != "arena-scheduler":
                    assert any("tcp://arena-scheduler:8786" in str(a) for a in c["command"]), c["command"]
    worker = next(d for d in docs if d["metadata"]["name"] == "arena-worker")
    security = worker["spec"]["template"]["spec"]["containers"][0]["securityContext"]
    assert "SYS_ADMIN" in security["capabilities"]["add"]
    job = next(d for d in docs if d["kind"] == "Job")
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert (ROOT / command[2]).is_file()


def _local(command: str, address: str) -> list[str]:
    """A compose command with the scheduler's service name replaced by a local address."""
    return shlex.split(command.replace("tcp://scheduler:8786", address))


@pytest.mark.slow
def test_the_compose_commands_run_with_a_local_scheduler(tmp_path):
    if shutil.which("dask") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the compose commands, but the dask command is not installed")
        pytest.skip("the dask command is not installed (pip install 'project-l-arena[cluster]')")
    services = compose()["services"]
    info = tmp_path / "scheduler.json"
    scheduler = _local(services["scheduler"]["command"], "")
    scheduler = [w for w in scheduler]
    scheduler[scheduler.index("--port") + 1] = "0"
    procs = []

    def start(argv, name):
        log = open(tmp_path / f"{name}.log", "wb")
        env = {**os.environ, **{k: str(v) for k, v in (services.get(name, {}).get("environment") or {}).items()}}
        procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True, env=env))

    try:
        # as shipped, but on 127.0.0.1 with free ports (the dashboard needs bokeh: the extra has it)
        start(scheduler + ["--host", "127.0.0.1", "--scheduler-file", str(info)], "scheduler")
        deadline = time.monotonic() + 60
        while not (info.exists() and info.read_text().strip()):
            assert time.monotonic() < deadline, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        worker = _local(services["worker"]["command"], address)
        worker[worker.index("--memory-limit") + 1] = "2GiB"
        start(worker + ["--host", "127.0.0.1", "--no-dashboard"], "worker")
        work = tmp_path / "work"  # the coordinator's folder, with the volumes compose mounts
        work.mkdir()
        for volume in services["coordinator"]["volumes"]:
            host, inside = volume.split(":")[:2]
            target = work / Path(inside).relative_to("/work")
            if "results" not in inside:
                shutil.copytree((DEPLOY / host).resolve(), target)
        argv = _local(services["coordinator"]["command"], address)
        done = subprocess.run([sys.executable, "-m", "arena.cli", *argv[1:]], cwd=work, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        assert (work / "results" / "demo" / "results.sqlite").is_file()
        # the dashboard the docs describe: the cluster extra brings bokeh, which it needs
        assert "needs bokeh" not in (tmp_path / "scheduler.log").read_text(), "install the cluster extra"
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
