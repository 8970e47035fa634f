"""The ``PATH`` a sandboxed bot gets, and when an interpreter's shim is run for it
(:mod:`arena.botspec.bot_path`).

A fake shim -- a ``#!/bin/sh`` script named ``python3``, first on the ``PATH``, that counts
its runs in a file and runs the real interpreter -- stands for pyenv's: a run of it is what
costs 70 ms to seconds with a real one. Built-in bots run it never; a command-line bot
once per process, however many games and seats it plays, and works under the strict tier.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena.botspec.view import sandbox_path
from arena.process.sandbox import best_tier

VENV_BIN = str(Path(sys.executable).parent)

#: a bot that starts ``python3`` by name (as a bot's helper would) before it says ready:
#: inside the sandbox the name must reach a real interpreter, not the shim
CHILD_BOT = textwrap.dedent('''\
    import json, random, subprocess, sys
    rng = random.Random(1)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("type") == "quit":
            break
        if msg.get("type") == "hello":
            child = subprocess.run(["python3", "-c", "print(6 * 7)"], capture_output=True, text=True)
            assert child.stdout.strip() == "42", child.stderr
            print(json.dumps({"type": "ready", "id": msg["id"], "name": "child", "version": "1",
                              "legal_actions": True}), flush=True)
        elif "legal" in msg:
            print(json.dumps({"id": msg["id"], "action": rng.choice(msg["legal"])}), flush=True)
''')


def counting_shim(folder: Path, counter: Path) -> Path:
    """A folder holding a ``python3`` shim that appends a line to ``counter`` per run."""
    shims = folder / "shims"
    shims.mkdir()
    shim = shims / "python3"
    shim.write_text(f"#!/bin/sh\necho run >> {counter}\nexec {sys.executable} \"$@\"\n")
    shim.chmod(0o755)
    return shims


def runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


@pytest.fixture
def shimmed(tmp_path):
    """``(folder, env, counter)``: a bot author's folder, an environment whose ``PATH`` starts
    with the counting shim's folder, and the counter file."""
    tmp_path.chmod(0o755)  # the bot's own user (as root) reads its script here
    counter = tmp_path / "runs.txt"
    shims = counting_shim(tmp_path, counter)
    work = tmp_path / "bot"
    work.mkdir()
    work.chmod(0o755)
    (work / "bot.py").write_text(CHILD_BOT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(shims), VENV_BIN, os.environ.get("PATH", "/usr/bin:/bin")])
    return work, env, counter


def arena(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    exe = shutil.which("arena", path=VENV_BIN)
    argv = [exe] if exe else [sys.executable, "-m", "arena.cli"]
    done = subprocess.run(argv + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


# ---------------------------------------------------------------- the rules, in this process
def test_a_command_runs_only_the_shims_it_needs(tmp_path):
    counter = tmp_path / "runs.txt"
    shims = counting_shim(tmp_path, counter)
    path_var = f"{shims}:/usr/bin:/bin"
    here = os.path.dirname(sys.executable)

    # the arena's own interpreter (a built-in bot): its folder goes in front, no shim runs
    path, shown = sandbox_path(path_var, str(tmp_path), argv=[sys.executable, "-m", "bots.run", "greedy"])
    assert path.split(":")[:2] == [here, str(shims)] and runs(counter) == 0
    # an interpreter found as a file (a located ``python3 bot.py``): the same, no run
    sandbox_path(path_var, str(tmp_path), argv=[sys.executable, str(tmp_path / "bot.py")])
    assert runs(counter) == 0

    # ``#!/usr/bin/env python3``: the name is asked of its shim, once
    script = tmp_path / "bot"
    script.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    script.chmod(0o755)
    path, shown = sandbox_path(path_var, str(tmp_path), argv=[str(script)])
    assert path.split(":")[0] == here and runs(counter) == 1
    assert shown  # the interpreter's installation, to be shown to the bot

    # a program that is no interpreter (a shell script) may start any by name: the common
    # names are asked, of the same shim, so nothing runs again
    sandbox_path(path_var, str(tmp_path), argv=["/bin/sh", str(tmp_path / "run.sh")])
    sandbox_path(path_var, str(tmp_path))  # no command (the toolchains a server offers): the same
    assert runs(counter) == 1


def test_a_folder_of_shims_none_of_which_a_command_needs_stays_as_it_is(tmp_path):
    counter = tmp_path / "runs.txt"
    shims = counting_shim(tmp_path, counter)
    path, shown = sandbox_path(f"{shims}:/usr/bin:/bin", str(tmp_path), argv=["/usr/bin/env", "node", "bot.js"])
    assert path == f"{shims}:/usr/bin:/bin" and shown == [] and runs(counter) == 0


# ---------------------------------------------------------------- commands as users type them
def test_built_in_bots_run_no_shim(shimmed):
    work, env, counter = shimmed
    arena(["play", "greedy", "random"], work, env)
    # the sandbox asks for the PATH of each command it starts (sandbox_path(..., argv=...)):
    # without the command it has to assume one that may start any interpreter by name
    assert runs(counter) == 0


def test_a_command_line_bot_runs_its_shim_once_per_process_over_seats_and_games(shimmed):
    """Two seats of ``python3 bot.py`` in one game, then a tournament of six games on two
    forked workers: one run each (the workers inherit what their coordinator asked), under
    the default tier (strict where bubblewrap works), the bot starting ``python3`` by name."""
    work, env, counter = shimmed
    done = arena(["play", "--cmd", "python3 bot.py", "--cmd", "python3 bot.py", "--json", "--move-ms", "5000"],
                 work, env)
    result = json.loads(done.stdout)
    assert result["faults"] == [[], []], result["faults"]
    assert runs(counter) == 1

    (work / "t.yaml").write_text(textwrap.dedent(f"""\
        name: shimmed
        seats: 2
        bots: [greedy, {{name: child, cmd: python3 bot.py}}]
        games: 6
        concurrency: 2
        time_control: {{move_ms: 5000}}
        output: {work / 'out'}
    """))
    done = arena(["run", "t.yaml", "--no-progress", "--json"], work, env)
    summary = json.loads(done.stdout)["summary"]
    assert summary["played"] == 6 and summary["failed"] == 0
    standings = json.loads(done.stdout)["standings"]
    assert all(not row.get("faults") for row in standings), standings
    assert runs(counter) == 2  # one more process (the tournament's coordinator), one more run


@pytest.mark.skipif(best_tier()[0] != "strict", reason="bubblewrap does not work here")
def test_a_shell_script_bot_finds_python3_by_name_under_strict(shimmed):
    work, env, counter = shimmed
    (work / "run.sh").write_text('exec python3 "$(dirname "$0")/bot.py"\n')
    done = arena(["play", "greedy", "--cmd", "sh run.sh", "--sandbox", "strict", "--json", "--move-ms", "5000"],
                 work, env)
    result = json.loads(done.stdout)
    assert result["sandbox"]["tier"] == "strict" and result["faults"] == [[], []], result["faults"]
    assert runs(counter) == 1
