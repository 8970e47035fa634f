"""The sandbox tier of a cluster's games is decided where the bots run, and the shipped
deployments give strict.

Workers run as the compose file and the Kubernetes manifests run them, as far as this
machine allows (``contained.py``: root of a user and mount namespace of their own, Docker's
capabilities plus what the file adds, a private ``/tmp``, cgroups read-only); the
coordinator runs as their coordinator does, with Docker's defaults, where bubblewrap cannot
run. ``sandbox: auto`` then gives each game its worker's strongest tier -- strict on the
shipped workers -- and every record says so; ``sandbox: strict`` runs from that coordinator;
``arena serve --dask`` starts there; a worker with the capabilities the files used to add
(``SYS_ADMIN`` alone) gives basic, and its games say so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from cluster_box import installed_paths
from proc_check import die_with_parent

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parent.parent
CONTAINED = [sys.executable, str(Path(__file__).resolve().parent / "contained.py")]

BOT = '''\
import json, random, sys
rng = random.Random(0)
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "quit":
        break
    if kind == "hello":
        rng = random.Random(msg["seed"])
        print(json.dumps({"type": "ready", "id": msg["id"], "name": "rb", "version": "1",
                          "legal_actions": True}), flush=True)
    elif kind == "game_over":
        continue
    elif "legal" in msg:
        print(json.dumps({"id": msg["id"], "action": rng.choice(msg["legal"])}), flush=True)
'''


def compose_worker_caps() -> list[str]:
    doc = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    return list(doc["services"]["worker"].get("cap_add") or [])


def kubernetes_worker_caps() -> list[str]:
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "kubernetes" / "workers.yaml").read_text()))
    worker = next(d for d in docs if d and d["metadata"]["name"] == "arena-worker")
    security = worker["spec"]["template"]["spec"]["containers"][0].get("securityContext") or {}
    return list((security.get("capabilities") or {}).get("add") or [])


def require_containers() -> None:
    """Skip (or, with ``CI=true``, fail) unless contained workers can run here."""
    why = ""
    if shutil.which("bwrap") is None:
        why = "bubblewrap is not installed (apt-get install bubblewrap)"
    elif os.geteuid() != 0:
        why = "the contained workers need root (a user namespace mapping uids 0-65535)"
    elif shutil.which("dask") is None:
        why = "the dask command is not installed (pip install 'project-l-arena[cluster]')"
    else:
        done = subprocess.run([*CONTAINED, "--", "true"], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            why = f"this machine cannot make a user and mount namespace ({done.stderr.strip()[-300:]})"
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the deployments' workers contained, but {why}")
        pytest.skip(why)


def contained(caps: list[str], argv: list[str], keep: list[Path] = ()) -> list[str]:
    out = list(CONTAINED)
    if caps:
        out += ["--cap-add", ",".join(caps)]
    for path in [*installed_paths(), *keep]:
        out += ["--keep", str(path)]
    return out + ["--", *argv]


def best_tier_in(caps: list[str], keep=()) -> tuple:
    done = subprocess.run(contained(caps, [sys.executable, "-c", "import json; from arena.process.sandbox import "
                                           "best_tier; print(json.dumps(best_tier()))"], keep),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return tuple(json.loads(done.stdout.strip().splitlines()[-1]))


class ContainedCluster:
    """A scheduler on 127.0.0.1 and one contained worker per ``(name, capabilities)``."""

    def __init__(self, folder: Path, workers: list[tuple[str, list[str]]]):
        self.folder = folder
        self.workers = workers
        self.procs: list[subprocess.Popen] = []
        self.address = ""

    def _spawn(self, argv, name):
        log = open(self.folder / f"{name}.log", "wb")
        self.procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True, preexec_fn=die_with_parent))
        log.close()

    def start(self) -> "ContainedCluster":
        info = self.folder / "scheduler.json"
        self._spawn(["dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(info)], "scheduler")
        deadline = time.monotonic() + 60
        while not info.exists() or not info.read_text().strip():
            assert time.monotonic() < deadline, (self.folder / "scheduler.log").read_text()
            time.sleep(0.1)
        time.sleep(0.2)
        self.address = json.loads(info.read_text())["address"]
        env = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
        for name, caps in self.workers:
            self._spawn(["env", *[f"{k}={v}" for k, v in env.items()],
                         *contained(caps, ["dask", "worker", self.address, "--host", "127.0.0.1", "--nworkers", "1",
                                           "--nthreads", "1", "--no-dashboard", "--name", name,
                                           "--death-timeout", "60"])], name)
        from distributed import Client

        with Client(self.address, timeout="30s") as client:
            try:
                client.wait_for_workers(len(self.workers), timeout=120)
            except TimeoutError:
                raise AssertionError({n: (self.folder / f"{n}.log").read_text()[-2000:] for n, _ in self.workers})
        return self

    def stop(self) -> None:
        for proc in reversed(self.procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in reversed(self.procs):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_containers()
    # the shipped files' workers, and one with what they added before (SYS_ADMIN alone)
    box = ContainedCluster(tmp_path_factory.mktemp("cluster"), [
        ("compose", compose_worker_caps()), ("kubernetes", kubernetes_worker_caps()), ("sysadmin-only", ["SYS_ADMIN"]),
    ]).start()
    try:
        yield box
    finally:
        box.stop()


def tournament(folder: Path, address: str, sandbox: str, name: str, rounds: int = 3) -> Path:
    (folder / "bot").mkdir(exist_ok=True)
    (folder / "bot" / "rb.py").write_text(BOT)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: {name}
        seats: 2
        bots:
          - greedy
          - {{name: rb, cmd: python3 bot/rb.py}}
        format: round-robin
        rounds: {rounds}
        seed: 11
        time_control: {{move_ms: 5000, startup_ms: 30000}}
        sandbox: {sandbox}
        executor: {{type: dask, address: {address}}}
        output: {str(folder / name)!r}
        """))
    return path


def stored(output: Path) -> list[tuple[str, dict]]:
    conn = sqlite3.connect(output / "results.sqlite")
    try:
        return [(w, json.loads(s)) for w, s in conn.execute("SELECT worker, sandbox FROM games")]
    finally:
        conn.close()


def coordinator(argv: list[str], folder: Path) -> subprocess.CompletedProcess:
    """``argv`` run as the compose coordinator and the Kubernetes Job run: Docker's defaults."""
    return subprocess.run(contained([], argv, keep=[folder]), cwd=folder, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_shipped_workers_give_strict_to_a_coordinator_that_cannot(cluster, tmp_path):
    assert best_tier_in([])[0] == "basic"  # the coordinator's container: bubblewrap cannot run there
    assert best_tier_in(compose_worker_caps()) == ("strict", "")
    assert best_tier_in(kubernetes_worker_caps()) == ("strict", "")

    # each worker's tier, as docs/cluster.md tells the operator to see it
    status = subprocess.run(["arena", "cluster", "status", cluster.address, "--json"], capture_output=True, text=True,
                            timeout=120)
    assert status.returncode == 0, status.stderr
    tiers = {st["name"]: st["tier"] for st in json.loads(status.stdout).values()}
    assert tiers == {"compose": "strict", "kubernetes": "strict", "sysadmin-only": "basic"}, status.stdout
    by_address = {a: st["tier"] for a, st in json.loads(status.stdout).items()}
    text = subprocess.run(["arena", "cluster", "status", cluster.address], capture_output=True, text=True,
                          timeout=120).stdout
    lines = {name: next(line for line in text.splitlines() if f" ({name}): " in line) for name in tiers}
    assert ": sandbox strict; " in lines["compose"] and ": sandbox strict; " in lines["kubernetes"], text
    assert ": sandbox basic (not strict: bubblewrap cannot create namespaces here" in lines["sysadmin-only"], text

    done = coordinator(["arena", "run", str(tournament(tmp_path, cluster.address, "auto", "auto")), "--no-progress"],
                       tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    games = stored(tmp_path / "auto")
    assert len(games) == 6
    for worker, record in games:  # each game had the strongest tier of the worker that played it
        address = worker.split("(")[-1].rstrip(")")
        assert record["tier"] == by_address[address] and record["requested"] == "auto", (worker, record)
        if record["tier"] == "basic":
            assert "bubblewrap" in record["fallback_reason"], record
    said = done.stderr
    assert "sandbox on the workers: strict on compose, kubernetes; basic on sysadmin-only (not strict: " \
           "bubblewrap" in said, said
    assert "Traceback" not in said

    # strict by name: the coordinator no longer asks it of itself; the worker that cannot
    # give it refuses, the others play every game strict
    done = coordinator(["arena", "run", str(tournament(tmp_path, cluster.address, "strict", "strict", 2)),
                        "--no-progress"], tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    games = stored(tmp_path / "strict")
    assert len(games) == 4 and all(r["tier"] == "strict" and r["requested"] == "strict" for _, r in games), games
    assert not any("sysadmin-only" in w or by_address.get(w.split("(")[-1].rstrip(")")) == "basic" for w, _ in games)


@pytest.mark.slow
def test_a_public_league_served_with_workers_elsewhere_starts_where_bubblewrap_cannot_run(tmp_path):
    """``arena serve --dask`` checks strict on its own machine only for what it runs there."""
    require_containers()
    league = tmp_path / "ladder.db"
    done = subprocess.run(["arena", "league", "new", str(league)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    argv = contained([], ["arena", "serve", str(league), "--host", "127.0.0.1", "--port", "0",
                          "--dask", "tcp://127.0.0.1:9", "--unsafe-build-sandbox", "basic"], keep=[tmp_path])
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=die_with_parent)
    lines = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
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
    said = "".join(lines)
    assert any(line.startswith("serving ") for line in lines), said
    assert "the strict sandbox cannot run on this machine" not in said
    # the build tier is the operator's weaker choice, and said; the games' is not weakened
    assert "--unsafe-build-sandbox basic" in said and "--unsafe-sandbox" not in said.replace(
        "--unsafe-build-sandbox", ""), said


def test_a_public_league_refuses_games_on_a_worker_without_strict_unless_a_fallback_is_named(monkeypatch):
    from arena.cluster.worker import TierRefused, check_tier
    from arena.cluster.executor import tier_line
    import arena.process.sandbox as sandbox

    monkeypatch.setattr(sandbox, "strict_missing", lambda use_cgroups=True: "bubblewrap is not installed")
    with pytest.raises(TierRefused, match="cannot give the strict sandbox tier"):
        check_tier("strict", "tcp://w:1")  # serve's games, without --unsafe-sandbox
    check_tier({"tier": "strict", "fallback": "basic"}, "tcp://w:1")  # --unsafe-sandbox basic with --dask
    found = {"tcp://a:1": {"tier": "strict", "not_strict": "", "name": "a"},
             "tcp://b:1": {"tier": "basic", "not_strict": "bubblewrap is not installed", "name": "b"}}
    assert tier_line(found, "strict") == ("sandbox on the workers: strict on a; refused on b "
                                          "(not strict: bubblewrap is not installed)")
    assert tier_line(found, {"tier": "strict", "fallback": "basic"}) == (
        "sandbox on the workers: strict on a; basic on b (not strict: bubblewrap is not installed)")


def test_a_public_league_on_workers_elsewhere_names_the_fallback_and_keeps_strict_where_it_can(monkeypatch, tmp_path):
    """``arena serve --dask ... --unsafe-sandbox basic``: strict on the workers that can give
    it, basic on the others; without --dask the games play here, in basic as asked."""
    pytest.importorskip("uvicorn")
    from typer.testing import CliRunner

    import arena.web.app as web_app
    from arena.cli.app import app

    class Built(Exception):
        pass

    seen = []

    def create_app(file, settings, **kw):
        seen.append(settings.game_tier)
        raise Built

    monkeypatch.setattr(web_app, "create_app", create_app)
    league = tmp_path / "ladder.db"
    runner = CliRunner()
    assert runner.invoke(app, ["league", "new", str(league)]).exit_code == 0
    common = ["serve", str(league), "--host", "127.0.0.1", "--port", "0", "--unsafe-build-sandbox", "basic"]
    for extra in (["--dask", "tcp://127.0.0.1:9", "--unsafe-sandbox", "basic"], ["--dask", "tcp://127.0.0.1:9"],
                  ["--unsafe-sandbox", "basic"]):
        result = runner.invoke(app, common + extra)
        assert isinstance(result.exception, Built), result.output
    assert seen == [{"tier": "strict", "fallback": "basic"}, "strict", "basic"]
