"""A bot is what its author typed: the commands bot authors type, run as typed.

Each test runs the ``arena`` command line from a folder of the test's own, under the
default sandbox tier (strict where bubblewrap works) unless it names one: relative
scripts, wrappers in front of the bot, the interpreter of a virtual environment with an
editable install, an interpreter behind a shim whose folder the bot cannot see, a closed
(0700) home, two versions of one bot on one line, names given on the command line, and
relative paths in a tournament file. The ordinary user's variants drop to a test user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from arena.process.sandbox import best_tier

PROJECT = Path(__file__).resolve().parent.parent
VENV_BIN = str(Path(sys.executable).parent)

#: the SDK bot of docs/writing-a-bot.md, word for word
LUCKY = textwrap.dedent('''\
    import random
    from arena.sdk import Bot

    class Lucky(Bot):
        name, version, want_legal = "lucky", "1.0", True

        def act(self, observation):
            return random.choice(self.legal)        # an R14 action, e.g. {"type": "pass"}

    if __name__ == "__main__":
        Lucky().run()
''')

#: a bot that says on stderr what its hello gave it (time control and options)
TELLER = textwrap.dedent('''\
    import random, sys
    from arena.sdk import Bot

    class Teller(Bot):
        name, version, want_legal = "teller", "1.0", True

        def act(self, observation):
            if not getattr(self, "told", False):
                self.told = True
                print("HELLO", self.hello["time_control"]["move_ms"], sorted(self.hello["options"].items()),
                      file=sys.stderr, flush=True)
            return random.choice(self.legal)

    if __name__ == "__main__":
        Teller().run()
''')


def _env(path_first: list[str] = ()) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([*path_first, VENV_BIN, os.environ.get("PATH", "/usr/bin:/bin")])
    return env


def arena(args: list[str], cwd, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``arena ARGS...`` typed in ``cwd``, with the project's environment first on the PATH."""
    exe = shutil.which("arena", path=VENV_BIN) or shutil.which("arena")
    argv = [exe] if exe else [sys.executable, "-m", "arena.cli"]
    return subprocess.run(argv + list(args), cwd=cwd, env=env or _env(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def play_json(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout)


def no_faults(result: dict) -> None:
    assert result["faults"] == [[] for _ in result["faults"]], result["faults"]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """An author's folder: lucky.py, two versions of one bot, the teller, a tournament file
    in a subfolder naming a bot beside it with ``..``."""
    root = tmp_path_factory.mktemp("author")
    root.chmod(0o755)  # an author's folder others may read; the folders above it stay closed
    (root / "lucky.py").write_text(LUCKY)
    (root / "teller.py").write_text(TELLER)
    for version in ("v1", "v2"):
        (root / version).mkdir()
        (root / version / "bot.py").write_text(LUCKY)
    (root / "tournaments").mkdir()
    (root / "tournaments" / "mine.yaml").write_text(textwrap.dedent("""\
        name: mine
        seats: 2
        bots:
          - random
          - {cmd: python ../v1/bot.py}
        games: 2
        concurrency: 1
        output: ../results/mine
    """))
    js = root / "bots" / "examples" / "js"
    js.mkdir(parents=True)
    shutil.copy(PROJECT / "bots" / "examples" / "js" / "bot.js", js / "bot.js")
    return root


def test_check_bot_finds_a_relative_script_where_it_was_typed(work):
    done = arena(["check-bot", "--move-ms", "5000", "--", "python", "lucky.py"], work)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "the bot conforms" in done.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_check_bot_of_the_javascript_example_from_the_projects_folder(work):
    done = arena(["check-bot", "--", "node", "bots/examples/js/bot.js"], work)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


WRAPPED = ["env python3 lucky.py", "env -u NOTHING PYTHONUNBUFFERED=1 python3 lucky.py", "nice -n 5 python3 lucky.py",
           "nice -5 python3 -u lucky.py", "stdbuf -oL python3 lucky.py", "timeout 300 python3 lucky.py",
           "timeout -k 5 300 python3 lucky.py", "taskset -c 0 python3 lucky.py", "sh -c 'python3 lucky.py'",
           "bash -c 'exec python3 lucky.py'", "env nice -n 2 stdbuf -oL python3 lucky.py"]


@pytest.mark.parametrize("cmd", WRAPPED)
def test_a_wrapper_in_front_of_the_bot_starts_it(work, cmd):
    result = play_json(arena(["play", "random", "--cmd", cmd, "--json", "--move-ms", "5000"], work))
    no_faults(result)


def test_play_names_a_bot_and_gives_it_options_and_its_own_time_control(work, tmp_path):
    result = play_json(arena(["play", "random", "--engine", "name=mine cmd='python3 teller.py' st=700ms option.depth=3",
                              "--json", "--move-ms", "5000", "--log-dir", str(tmp_path)], work))
    no_faults(result)
    assert result["bots"] == ["random", "mine"]
    logs = "".join(p.read_text() for p in tmp_path.glob("*mine*"))
    assert "HELLO 700 [('depth', 3)]" in logs


def test_two_versions_of_one_bot_meet_on_a_match_line(work):
    done = arena(["match", "--cmd", "python v2/bot.py", "--cmd", "python v1/bot.py", "--games", "2", "-j", "1",
                  "--json", "--output", "results/versions"], work)
    out = play_json(done)
    assert sorted(row["bot"] for row in out["standings"]) == ["v1/bot", "v2/bot"]
    assert all(row["faults"] == 0 for row in out["standings"])


def test_a_match_names_its_bots_cutechess_style(work):
    done = arena(["match", "--engine", "name=new cmd='python v2/bot.py' move-ms=800",
                  "--engine", "name=old cmd='python v1/bot.py'", "--games", "2", "-j", "1", "--json",
                  "--output", "results/named"], work)
    out = play_json(done)
    assert sorted(row["bot"] for row in out["standings"]) == ["new", "old"]
    assert all(row["faults"] == 0 for row in out["standings"])


def test_a_tournament_files_command_is_found_beside_the_file(work):
    elsewhere = work / "v2"  # typed from another folder than the file's
    done = arena(["run", str(work / "tournaments" / "mine.yaml"), "--json"], elsewhere)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert {row["bot"]: row["faults"] for row in out["standings"]} == {"random": 0, "bot": 0}
    assert (work / "results" / "mine").is_dir()


def test_a_name_too_long_for_a_file_name_is_refused_by_validate(work):
    (work / "long.yaml").write_text(f"name: long\nseats: 2\nbots:\n  - random\n  - {{name: {'x' * 240}, "
                                    "cmd: python lucky.py}\ngames: 2\n")
    done = arena(["validate", "long.yaml"], work)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "line 5" in done.stderr and "at most 100" in done.stderr


def test_a_missing_script_is_one_sentence_naming_the_folder(work):
    done = arena(["play", "random", "--cmd", "python nope.py"], work)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "'nope.py' does not exist" in done.stderr and str(work) in done.stderr


# ---------------------------------------------------------------- interpreters
def _closed_folder(tmp_path: Path) -> Path:
    """A 0700 folder (a home) that a bot's user cannot enter and strict does not show."""
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o700)
    tmp_path.chmod(0o755)
    return home


def test_an_interpreter_behind_a_shim_outside_the_bots_view(work, tmp_path):
    """pyenv's way: ``python3`` on the PATH is a script in a closed home that runs the real one."""
    shims = _closed_folder(tmp_path) / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    shim = shims / "python3"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    shim.chmod(0o755)
    result = play_json(arena(["play", "random", "--cmd", "python3 lucky.py", "--json", "--move-ms", "5000"], work,
                             env=_env([str(shims)])))
    no_faults(result)


def _editable_venv(where: Path) -> Path:
    """A virtual environment with the project installed editable, as setuptools installs it
    (its own finder module, mapping the packages to the project's folders), and the SDK's
    one dependency, and nothing else of the test's environment."""
    from setuptools.command.editable_wheel import _finder_template

    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)}))
    deps = where / "deps"
    deps.mkdir()
    for name in ("orjson", "yaml", "_yaml"):
        found = Path(sysconfig.get_paths()["purelib"]) / name
        if found.exists():
            (deps / name).symlink_to(found)
    (site / "deps.pth").write_text(f"{deps}\n")
    mapping = {name: str(PROJECT / name) for name in ("arena", "engine", "bots", "plugins")}
    finder = "__editable___project_l_arena_0_1_0_finder"
    (site / f"{finder}.py").write_text(_finder_template("project-l-arena", mapping, {}))
    (site / "__editable__.project_l_arena-0.1.0.pth").write_text(f"import {finder}; {finder}.install()\n")
    probe = subprocess.run([str(where / "bin" / "python"), "-c", "import arena.sdk, sys; print(arena.sdk.__file__)"],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.startswith(str(PROJECT)), probe.stderr
    return where


@pytest.mark.parametrize("tier", ["default", "basic", "none"])
def test_a_venvs_python_with_an_editable_install_in_a_closed_home(work, tmp_path, tier):
    if tier == "default" and best_tier()[0] is None:
        pytest.skip("no default tier here for command-line bots (an ordinary user without bubblewrap)")
    venv = _editable_venv(_closed_folder(tmp_path) / "venv")
    extra = [] if tier == "default" else ["--sandbox", tier]
    result = play_json(arena(["play", "random", "--cmd", "python lucky.py", "--json", "--move-ms", "5000", *extra],
                             work, env=_env([str(venv / "bin")])))
    no_faults(result)


# ---------------------------------------------------------------- as an ordinary user
USER_SESSION = textwrap.dedent('''\
    import json, os, subprocess, sys
    from pathlib import Path
    home = Path.cwd()
    (home / "lucky.py").write_text(LUCKY)
    (home / "v1").mkdir()
    (home / "v1" / "bot.py").write_text(LUCKY)
    os.chmod(home, 0o700)
    arena = [sys.executable, "-m", "arena.cli"]
    out = {}
    def run(key, *args):
        done = subprocess.run(arena + list(args), capture_output=True, text=True, timeout=300)
        out[key] = [done.returncode, done.stdout[-1500:], done.stderr[-1500:]]
    run("check", "check-bot", "--move-ms", "5000", "--", "python3", "lucky.py")
    run("nice", "play", "random", "--cmd", "nice -n 5 python3 lucky.py", "--json", "--move-ms", "5000")
    run("shell", "play", "random", "--cmd", "sh -c 'python3 v1/bot.py'", "--json", "--move-ms", "5000")
    run("env", "play", "random", "--cmd", "env python3 v1/bot.py", "--json", "--move-ms", "5000")
    print(json.dumps(out))
''')


def test_an_ordinary_user_types_the_same_commands(tmp_path):
    from as_user import User

    if shutil.which("bwrap") is None and os.environ.get("CI") != "true":
        pytest.skip("bubblewrap is not installed: an ordinary user's command-line bots have no default tier")
    user = User()
    try:
        answer = user.run(f"LUCKY = {LUCKY!r}\n" + USER_SESSION, timeout=600, env={"PATH": _env()["PATH"]})
    finally:
        user.close()
    code, stdout, stderr = answer["check"]
    assert code == 0 and "the bot conforms" in stdout, stdout + stderr
    for key in ("nice", "shell", "env"):
        code, stdout, stderr = answer[key]
        assert code == 0, f"{key}: {stderr}"
        no_faults(json.loads(stdout))


READER = textwrap.dedent('''\
    import random, sys
    from arena.sdk import Bot

    class Reader(Bot):
        name, version, want_legal = "reader", "1.0", True

        def act(self, observation):
            return random.choice(self.legal)

    if __name__ == "__main__":
        with open(sys.argv[1] + "/book.txt") as f:   # its opening book, in a folder it declared
            f.read()
        Reader().run()
''')


def test_a_tournament_file_declares_the_folders_its_bot_may_read(work):
    (work / "data").mkdir(exist_ok=True)
    (work / "data").chmod(0o755)
    (work / "data" / "book.txt").write_text("opening\n")
    (work / "reader").mkdir(exist_ok=True)  # its program's folder: data/ lies outside it
    (work / "reader").chmod(0o755)
    (work / "reader" / "reader.py").write_text(READER)
    for name, extra in (("declared", "read_only: [data]"), ("undeclared", "")):
        (work / f"{name}.yaml").write_text(textwrap.dedent(f"""\
            name: {name}
            seats: 2
            bots:
              - random
              - {{name: reader, cmd: python reader/reader.py ./data, {extra or 'options: {}'}}}
            games: 2
            concurrency: 1
            output: results/{name}
        """))
    ok = arena(["run", "declared.yaml", "--json"], work)
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert {r["bot"]: r["faults"] for r in json.loads(ok.stdout)["standings"]}["reader"] == 0
    # without read_only the strict sandbox shows it nothing of data/: it cannot start
    if best_tier()[0] == "strict":
        hidden = arena(["run", "undeclared.yaml", "--json", "--no-check"], work)
        rows = {r["bot"]: r for r in json.loads(hidden.stdout)["standings"]}
        assert rows["reader"]["faults"] >= 1, rows
