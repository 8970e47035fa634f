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


# ------------------------------------------------------------------ the image's build context
def dockerignore_rules(path: Path) -> list[tuple[bool, "re.Pattern"]]:
    """``.dockerignore`` as Docker reads it (moby/patternmatcher): one pattern a line, ``#``
    comments, ``!`` for an exception, paths from the context's root, ``**`` any number of
    folders, ``*`` and ``?`` within one name; the last pattern that matches a path or one of
    its parents decides."""
    import re

    rules = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = os.path.normpath(line[1:].strip() if keep else line).lstrip("/")
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        rules.append((keep, re.compile(out + r"\Z")))
    return rules


def sent(rules, path: str) -> bool:
    """Whether ``path`` (relative to the context's root) goes into the build context."""
    parts = path.split("/")
    excluded = False
    for keep, rx in rules:
        if any(rx.match("/".join(parts[:n])) for n in range(1, len(parts) + 1)):
            excluded = not keep
    return not excluded


def test_the_image_is_built_without_history_results_or_environments():
    services = compose()["services"]
    build = services["scheduler"]["build"]
    context = (DEPLOY / build["context"]).resolve()
    assert context == ROOT
    ignore = context / ".dockerignore"  # Docker reads it at the context's root
    assert ignore.is_file(), "COPY . /src would take .git, results and virtual environments"
    rules = dockerignore_rules(ignore)
    for junk in [".git/HEAD", ".git/objects/ab/cdef", "results/demo/results.sqlite", "league/ladder.db",
                 "league/ladder.db.replays/1-0.json", ".venv/bin/python", "venv/lib/python3.11/site.py",
                 "tests/.venv/bin/python", "arena/__pycache__/cli.cpython-311.pyc", "engine/rules.pyc",
                 "project_l_arena.egg-info/PKG-INFO", ".pytest_cache/v/cache", ".hypothesis/examples/x",
                 "bots/examples/js/node_modules/x/index.js", "out/t.sqlite", "build/lib/arena/__init__.py"]:
        assert not sent(rules, junk), junk
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout: the project's files cannot be listed")
    needed = [f for f in tracked.stdout.splitlines()
              if f.split("/")[0] in ("arena", "engine", "plugins", "bots", "tournaments", "docs")
              or f in ("pyproject.toml", "README.md", "deploy/Dockerfile")]
    assert len(needed) > 100
    left_out = [f for f in needed if not sent(rules, f)]
    assert not left_out, f"the image needs these: {left_out[:10]}"


# ------------------------------------------------------------------ the website's service
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_the_web_profile_creates_its_league_and_serves_it_again(tmp_path):
    from arena.process.sandbox import strict_missing

    why = strict_missing()
    if why:  # the service builds submissions in the strict tier, as it does in its container
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the web service's command, but {why}")
        pytest.skip(why)
    web = compose()["services"]["web"]
    work = tmp_path / "work"
    for volume in web["volumes"]:  # compose makes a missing bind-mounted folder, empty
        (work / Path(volume.split(":")[1]).relative_to("/work")).mkdir(parents=True)
    port = _free_port()
    command = (web["command"].replace("tcp://scheduler:8786", "tcp://127.0.0.1:9")
               .replace("--host 0.0.0.0", "--host 127.0.0.1").replace("--port 8000", f"--port {port}"))
    argv = shlex.split(command) if isinstance(command, str) else list(command)

    def start_and_stop() -> str:
        proc = subprocess.Popen(argv, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        said = []
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                line = proc.stderr.readline()
                if not line:
                    break
                said.append(line)
                if line.startswith("serving "):
                    break
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        return "".join(said)

    said = start_and_stop()
    assert f"serving league/ladder.db on http://127.0.0.1:{port}/" in said, said
    assert (work / "league" / "ladder.db").is_file()
    said = start_and_stop()  # the next `up`: the league is there, and served as it is
    assert f"serving league/ladder.db on http://127.0.0.1:{port}/" in said, said


# ------------------------------------------------------------------ Kubernetes' current fields
def test_the_workers_ask_for_the_strict_tier_with_current_kubernetes_fields():
    docs = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes" / "workers.yaml").read_text()) if d]
    worker = next(d for d in docs if d["metadata"]["name"] == "arena-worker")
    template = worker["spec"]["template"]
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    assert not [k for k in annotations if "apparmor.security.beta.kubernetes.io" in k], annotations
    security = template["spec"]["containers"][0]["securityContext"]
    assert security["appArmorProfile"] == {"type": "Unconfined"}
    assert security["seccompProfile"] == {"type": "Unconfined"}
    # bubblewrap's namespaces, and the loopback of the bots' network (tests/test_cluster_tier.py
    # runs workers with exactly these and finds them strict)
    assert {"SYS_ADMIN", "NET_ADMIN"} <= set(security["capabilities"]["add"])
    assert {"SYS_ADMIN", "NET_ADMIN"} <= set(compose()["services"]["worker"]["cap_add"])


# ------------------------------------------------------------------ the docs' scheduler lines
def doc_scheduler_lines() -> list[tuple[str, str]]:
    """Every ``dask scheduler`` line of the docs' code blocks (continuation lines joined)."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        block, pending = False, ""
        for line in page.read_text().splitlines():
            if line.strip().startswith("```"):
                block, pending = not block, ""
                continue
            if not block:
                continue
            text = pending + line.strip()
            if text.endswith("\\"):
                pending = text[:-1] + " "
                continue
            pending = ""
            if text.startswith("dask scheduler"):
                found.append((page.name, text.split("#")[0].strip().rstrip("&").strip()))
    return found


def test_the_docs_scheduler_lines_keep_the_dashboard_on_this_machine():
    lines = doc_scheduler_lines()
    assert len(lines) >= 3, lines
    for page, text in lines:
        argv = shlex.split(text)
        if "--no-dashboard" in argv:
            continue
        assert "--dashboard-address" in argv, f"{page}: {text} serves the dashboard on every interface"
        host = argv[argv.index("--dashboard-address") + 1].rsplit(":", 1)[0]
        assert host in ("127.0.0.1", "localhost", "[::1]"), f"{page}: {text}"


@pytest.mark.slow
def test_the_docs_scheduler_on_one_machine_listens_on_loopback_only(tmp_path):
    if shutil.which("dask") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the docs' scheduler line, but the dask command is not installed")
        pytest.skip("the dask command is not installed (pip install 'project-l-arena[cluster]')")
    import psutil

    text = next(t for page, t in doc_scheduler_lines() if page == "cluster.md" and "--host 127.0.0.1" in t)
    argv = shlex.split(text)
    argv[argv.index("--port") + 1] = "0"  # free ports: the test may share the machine
    if "--dashboard-address" in argv:
        dashboard = argv.index("--dashboard-address") + 1
        argv[dashboard] = argv[dashboard].rsplit(":", 1)[0] + ":0"
    info = tmp_path / "scheduler.json"
    log = open(tmp_path / "scheduler.log", "wb")
    proc = subprocess.Popen(argv + ["--scheduler-file", str(info)], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        listening: set = set()
        while time.monotonic() < deadline:
            listening = {(c.laddr.ip, c.laddr.port) for c in psutil.Process(proc.pid).net_connections("inet")
                         if c.status == psutil.CONN_LISTEN}
            if info.exists() and info.read_text().strip() and len(listening) >= 2:
                break
            time.sleep(0.2)
        text = (tmp_path / "scheduler.log").read_text()
        assert len(listening) >= 2, text  # the scheduler's port and the dashboard's
        assert {ip for ip, _ in listening} == {"127.0.0.1"}, (listening, text)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
