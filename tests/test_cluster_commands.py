"""A command travels to a cluster as its author typed it: each worker finds the program in
its own environment.

The coordinator runs from the test's virtual environment; the worker from another one (a
virtual environment of its own, importing the project through a path file), in a box
where the coordinator's ``bin`` folder does not exist and the bot's folder is hidden (it
comes as a bundle). ``python3 lucky.py`` must play there: the worker's ``python3``, not
the coordinator's path to its own.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cluster_box import BoxedCluster, installed_paths, require_box

from test_bot_commands import LUCKY

PROJECT = Path(__file__).resolve().parent.parent
#: a bot of the standard library only (any Python runs it)
RAW = """import json, random, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    if msg.get("type") == "hello":
        print(json.dumps({"type": "ready", "id": msg["id"], "name": "raw", "version": "1", "legal_actions": True}),
              flush=True)
    elif "legal" in msg:
        print(json.dumps({"id": msg["id"], "action": random.choice(msg["legal"])}), flush=True)
"""
VENV_BIN = Path(sys.executable).parent


def other_venv(where: Path) -> Path:
    """A virtual environment of the worker's own that imports what the test's does (its
    site-packages and, for an editable install, the project's folder, as path lines)."""
    from venv_paths import import_what_the_suite_imports

    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    import_what_the_suite_imports(where, "coordinator-packages.pth")
    return where


class OtherVenvCluster(BoxedCluster):
    """Workers that run from ``venv``, with the coordinator's ``bin`` folder hidden."""

    def __init__(self, folder: Path, hide: list[Path], venv: Path):
        super().__init__(folder, hide + [VENV_BIN], workers=1)
        self.venv = venv

    def add_worker(self, name: str) -> None:
        box = ["bwrap", "--bind", "/", "/", "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc", "--die-with-parent"]
        for path in installed_paths():  # under /tmp (a CI checkout): what the worker imports, not the bin folder
            if path == Path(sys.prefix).resolve():
                box += ["--ro-bind", str(path / "lib"), str(path / "lib")]
            else:
                box += ["--ro-bind", str(path), str(path)]
        box += ["--ro-bind", str(self.venv), str(self.venv)]
        for path in self.hide:
            box += ["--tmpfs", str(path)]
        path = f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"
        self._spawn(box + ["env", f"PATH={path}", str(self.venv / "bin" / "python"), "-m", "distributed.cli.dask_worker",
                           self.address, "--host", "127.0.0.1", "--nworkers", "1", "--nthreads", "1",
                           "--no-dashboard", "--name", name, "--death-timeout", "60"], name)


@pytest.mark.slow
def test_a_cluster_worker_in_another_venv_runs_the_command_as_typed(tmp_path_factory):
    require_box()
    if sys.prefix == sys.base_prefix:
        pytest.skip("the test's Python is not a virtual environment: there is no coordinator's venv to hide")
    src = tmp_path_factory.mktemp("author")
    src.chmod(0o755)
    (src / "lucky.py").write_text(LUCKY)
    out = tmp_path_factory.mktemp("out")
    venv = other_venv(tmp_path_factory.mktemp("worker-env") / "venv")
    cluster = OtherVenvCluster(tmp_path_factory.mktemp("cluster"), [out, src], venv).start()
    try:
        from distributed import Client

        with Client(cluster.address, timeout="30s") as client:
            seen = client.run(lambda p: __import__("os").path.exists(p), str(VENV_BIN / "python3"))
        assert list(seen.values()) == [False], seen  # the coordinator's interpreter is not there
        (src / "t.yaml").write_text(textwrap.dedent(f"""\
            name: venvs
            seats: 2
            bots:
              - random
              - {{name: lucky, cmd: python3 lucky.py}}
            games: 2
            seed: 3
            time_control: {{move_ms: 5000, startup_ms: 30000}}
            executor: {{type: dask, address: {cluster.address}}}
            output: {str(out / 'run')!r}
        """))
        done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(src / "t.yaml")], cwd=src,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        conn = sqlite3.connect(out / "run" / "results.sqlite")
        try:
            stored = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            faults = conn.execute("SELECT verdict, detail FROM faults").fetchall()
            tiers = {json.loads(s)["tier"] for (s,) in conn.execute("SELECT sandbox FROM games")}
        finally:
            conn.close()
        assert stored == 2 and faults == [], faults
        assert tiers == {"strict"}

        # a program the coordinator has and the worker does not: one sentence naming both
        mine = src / "mybin"
        mine.mkdir()
        (mine / "xpython").symlink_to(os.path.realpath(sys.executable))
        (src / "raw.py").write_text(RAW)
        (src / "t2.yaml").write_text((src / "t.yaml").read_text().replace("python3 lucky.py", "xpython raw.py")
                                     .replace(str(out / "run"), str(out / "run2")))
        env = dict(os.environ, PATH=f"{mine}:{os.environ.get('PATH', '')}")
        done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(src / "t2.yaml")], cwd=src, env=env,
                              capture_output=True, text=True, timeout=600)
        said = done.stdout + done.stderr
        assert "cannot start bot 'lucky': the program 'xpython' was not found on the PATH" in said, said[-3000:]
        assert "Traceback" not in said
    finally:
        cluster.stop()
