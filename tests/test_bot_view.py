"""What a bot sees, and the commands it can be started with, as an author types them.

A bot saved in a checkout and run from there is shown its folder, but never an arena output
folder in it (a tournament's, match's, experiment's or league's files, of any run: marked by
the arena, or known by their files) nor version-control metadata; a file its command names
is shown only where it really lies in the bot's folder. Commands that go through a shell's
``cd``, a symbolic link, ``env PYTHONPATH=...``, or start in the bot's own folder
(``dir=``, ``workdir:``) start. Each runs in the default tier (strict where bubblewrap
works), as the suite's user and, where it differs, as an ordinary user.
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

from arena.process.sandbox import best_tier
from strict_check import require_strict

PROJECT = Path(__file__).resolve().parent.parent

#: a bot that says on stderr, as one JSON line, which of the paths it was given it can read
PROBE = textwrap.dedent('''\
    import json, os, random, sys
    from arena.sdk import Bot

    class Lucky(Bot):
        name, version, want_legal = "lucky", "1.0", True

        def act(self, observation):
            return random.choice(self.legal)

    if __name__ == "__main__":
        seen = {}
        for p in sys.argv[1:]:
            try:
                seen[p] = sorted(os.listdir(p)) if os.path.isdir(p) else open(p).read().strip()
            except OSError as exc:
                seen[p] = type(exc).__name__
        print("VIEW " + json.dumps(seen), file=sys.stderr, flush=True)
        Lucky().run()
''')

#: the paths the probe is asked about, relative to the checkout it lies in, and whether the
#: bot may read each
ASKED = {"book.txt": True, "data/moves.txt": True, ".git/config": False, ".git": False,
         "results/demo/games.jsonl": False, "results/demo": False, "results.sqlite": False,
         "results/marked/notes.txt": False, "ladder.db": False, "ladder.db.replays/g1.html": False,
         "experiments/x/experiment.sqlite": False, "otherlink/secret.txt": False}

#: a checkout holding a bot beside earlier runs' outputs, a league and VCS metadata, and a
#: link into another bot's folder; the marked folder is made by a real ``arena match``
CHECKOUT = textwrap.dedent('''\
    import os, subprocess, sys
    from pathlib import Path

    def checkout(root, probe):
        root = Path(root)
        for folder in ("data", ".git", "results/demo", "experiments/x", "ladder.db.replays"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        files = {"probe.py": probe, "book.txt": "opening", "data/moves.txt": "e4", ".git/config": "[core]",
                 "results/demo/games.jsonl": "{}", "results.sqlite": "old results", "ladder.db": "league",
                 "ladder.db.lock": "", "ladder.db.replays/g1.html": "<html>", "experiments/x/experiment.sqlite": "x"}
        for name, text in files.items():
            (root / name).write_text(text)
        other = root.parent / "otherbot"
        other.mkdir(exist_ok=True)
        (other / "secret.txt").write_text("the other bot's")
        if not (root / "otherlink").is_symlink():
            (root / "otherlink").symlink_to(other)
        done = subprocess.run([sys.executable, "-m", "arena.cli", "match", "random", "greedy", "--games", "2",
                               "-j", "1", "--output", "results/marked", "--json"], cwd=root, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        (root / "results" / "marked" / "notes.txt").write_text("a run's folder")
        for p in [root.parent, *root.parent.rglob("*")]:
            if not p.is_symlink():
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
''')

#: run the probe in the checkout with ``arena play`` and answer what it saw
VIEW_RUN = textwrap.dedent('''\
    def view(root, asked, extra=()):
        logs = Path(root).parent / "logs"
        done = subprocess.run([sys.executable, "-m", "arena.cli", "play", "random", "--cmd",
                               " ".join(["python3", "probe.py", *asked]), "--json", "--move-ms", "5000",
                               "--log-dir", str(logs), *extra], cwd=root, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        result = json.loads(done.stdout)
        text = "".join(p.read_text() for p in logs.glob("*probe*"))
        shutil.rmtree(logs)
        line = [ln for ln in text.splitlines() if ln.startswith("VIEW ")]
        return {"faults": result["faults"], "tier": result["sandbox"]["tier"],
                "seen": json.loads(line[0][5:]) if line else text[-2000:]}
''')


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}


def _check_view(answer: dict) -> None:
    assert answer["faults"] == [[], []], answer["faults"]
    assert answer["tier"] == "strict"
    seen = answer["seen"]
    assert isinstance(seen, dict), seen
    seen = {p.split("/checkout/", 1)[-1]: v for p, v in seen.items()}  # the command's paths, anchored
    # an empty folder or file is what covers a hidden one
    readable = {p: not (isinstance(v, str) and v.endswith("Error")) and v not in ([], "") for p, v in seen.items()}
    wrong = {p: seen[p] for p, ok in ASKED.items() if readable[p] != ok}
    assert not wrong, wrong


def test_a_bot_in_a_checkout_sees_its_files_but_no_run_league_or_vcs_metadata(tmp_path):
    require_strict()
    tmp_path.chmod(0o755)
    scope: dict = {}
    exec("import json, shutil\n" + CHECKOUT + VIEW_RUN, scope)
    root = tmp_path / "checkout"
    root.mkdir()
    scope["checkout"](root, PROBE)
    _check_view(scope["view"](root, list(ASKED)))
    assert (root / "results" / "marked" / ".arena-output").is_file()  # the run marked its folder


def test_an_ordinary_user_s_bot_sees_no_more(tmp_path):
    from as_user import User

    require_strict()
    user = User()
    code = f"import json, shutil\n{CHECKOUT}\n{VIEW_RUN}\nPROBE = {PROBE!r}\nASKED = {list(ASKED)!r}\n" + \
        textwrap.dedent('''\
            home = Path.cwd()
            os.chmod(home, 0o755)
            (home / "checkout").mkdir()
            checkout(home / "checkout", PROBE)
            print(json.dumps(view(home / "checkout", ASKED)))
        ''')
    try:
        answer = user.run(code, timeout=600, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    finally:
        user.close()
    _check_view(answer)


def test_a_named_file_is_shown_only_where_it_really_lies(tmp_path):
    from arena.botspec import BotSpec

    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "weights.npz").write_text("mine")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "secret.txt").write_text("theirs")
    (tmp_path / "bot" / "otherlink").symlink_to(tmp_path / "other")
    (tmp_path / "bot" / "bot.py").write_text(PROBE)
    spec = BotSpec.command("python3 bot.py weights.npz otherlink/secret.txt", tmp_path / "bot")
    assert spec.read_only == (str(tmp_path / "bot" / "weights.npz"),)


# ---------------------------------------------------------------- commands that start
#: an author's folder: the forms of commands, each with what it needs
FORMS = textwrap.dedent('''\
    import os, subprocess, sys
    from pathlib import Path

    def author(root, probe):
        root = Path(root)
        for folder in ("mybot", "v2", "shared", "lib", "data", "broken"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        (root / "mybot" / "bot.py").write_text(probe)
        (root / "v2" / "bot.py").write_text(probe)
        (root / "shared" / "bot.py").write_text(probe)
        for link, target in (("current", "v2"), ("linked.py", "shared/bot.py")):
            if not (root / link).is_symlink():
                (root / link).symlink_to(target)
        (root / "lib" / "helper_of_mine.py").write_text("X = 1\\n")
        (root / "needs_lib.py").write_text("import helper_of_mine\\n" + probe)
        (root / "data" / "book.txt").write_text("opening")
        (root / "data" / "bot.py").write_text("open('book.txt').read()  # beside it, in its working folder\\n" + probe)
        (root / "data" / "Makefile").write_text("run:\\n\\tpython3 bot.py\\n")
        (root / "broken" / "bot.py").write_text("raise SystemExit(3)\\n")  # not the bot a dir= names
        (root / "workdir.yaml").write_text("name: wd\\nseats: 2\\nbots:\\n  - random\\n"
                                           "  - {name: reader, cmd: python3 bot.py, workdir: data}\\n"
                                           "games: 2\\nconcurrency: 1\\noutput: results/wd\\n")
        for p in [root, *root.rglob("*")]:
            if not p.is_symlink():
                os.chmod(p, 0o755 if p.is_dir() else 0o644)

    def play(root, args):
        where, *args = args
        done = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=Path(root) / where, capture_output=True,
                              text=True, timeout=300)
        return [done.returncode, done.stdout, done.stderr[-1500:]]
''')

#: each command: the folder it is typed in, then the arena's arguments
COMMANDS = {
    "shell cd": [".", "play", "random", "--cmd", "bash -c 'cd mybot && exec python3 bot.py'", "--json",
                 "--move-ms", "5000"],
    "linked folder": [".", "play", "random", "--cmd", "python3 current/bot.py", "--json", "--move-ms", "5000"],
    "linked script": [".", "play", "random", "--cmd", "python3 linked.py", "--json", "--move-ms", "5000"],
    "env PYTHONPATH": [".", "play", "random", "--cmd", "env PYTHONPATH=lib python3 needs_lib.py", "--json",
                       "--move-ms", "5000"],
    "dir=": [".", "play", "random", "--engine", "name=reader dir=data cmd='python3 bot.py'", "--json",
             "--move-ms", "5000"],
    "make run": [".", "play", "random", "--engine", "name=maker dir=data cmd='make -s run'", "--json",
                 "--move-ms", "5000"],
    "workdir:": [".", "run", "workdir.yaml", "--json"],
    "match dir=": ["broken", "match", "random", "--engine", "name=reader dir=../data cmd='python3 bot.py'",
                   "--games", "2", "-j", "1", "--output", "../results/match-dir", "--json"],
}


def _check_started(name: str, answer) -> None:
    code, stdout, stderr = answer
    assert code == 0, f"{name}: {stderr}"
    out = json.loads(stdout)
    if "faults" in out:
        assert out["faults"] == [[], []], f"{name}: {out['faults']}"
    else:
        assert all(row["faults"] == 0 for row in out["standings"]), f"{name}: {out['standings']}"


@pytest.fixture(scope="module")
def forms(tmp_path_factory):
    if best_tier()[0] is None:
        pytest.skip("no default tier here for command-line bots (an ordinary user without bubblewrap)")
    root = tmp_path_factory.mktemp("forms")
    root.chmod(0o755)
    scope: dict = {}
    exec(FORMS, scope)
    scope["author"](root, PROBE)
    return root, scope["play"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_command_starts_its_bot(forms, name):
    if name == "make run" and shutil.which("make") is None:
        pytest.skip("make is not installed")
    root, play = forms
    _check_started(name, play(root, COMMANDS[name]))


@pytest.mark.slow  # every command of COMMANDS again, each a real game as an ordinary user in strict (~40 s)
def test_an_ordinary_user_s_commands_start_too():
    from as_user import User

    require_strict()
    user = User()
    names = [n for n in sorted(COMMANDS) if n != "make run" or shutil.which("make")]
    code = f"import json\n{FORMS}\nPROBE = {PROBE!r}\nCOMMANDS = {COMMANDS!r}\nNAMES = {names!r}\n" + \
        textwrap.dedent('''\
            home = Path.cwd()
            os.chmod(home, 0o755)
            author(home / "author", PROBE)
            print(json.dumps({name: play(home / "author", COMMANDS[name]) for name in NAMES}))
        ''')
    try:
        answer = user.run(code, timeout=900, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    finally:
        user.close()
    for name in names:
        _check_started(name, answer[name])


def test_a_folder_the_user_cannot_read_is_refused_in_one_sentence():
    """``ro=/root`` as an ordinary user: no bot of theirs could read it, so it is refused
    with a sentence saying why, not dropped in silence. (As root the test user's folder is
    one root closed, 0700; the suite's user's own closed folder is ``/root``.)"""
    import tempfile

    from as_user import User

    if os.geteuid() == 0:
        closed = tempfile.mkdtemp(prefix="arena-closed-", dir="/var/tmp")
        os.chmod(closed, 0o700)
    elif not os.access("/root", os.R_OK | os.X_OK):
        closed = "/root"
    else:
        pytest.skip("/root is readable by this user")
    user = User()
    code = textwrap.dedent(f'''\
        import json, subprocess, sys
        from pathlib import Path
        Path("bot.py").write_text("print()")
        done = subprocess.run([sys.executable, "-m", "arena.cli", "play", "random", "--engine",
                               "name=b cmd='python3 bot.py' ro={closed}", "--json"], capture_output=True, text=True)
        print(json.dumps({{"code": done.returncode, "stderr": done.stderr}}))
    ''')
    try:
        answer = user.run(code, timeout=300, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    finally:
        user.close()
        if closed != "/root":
            os.rmdir(closed)
    stderr = answer["stderr"]
    assert answer["code"] != 0 and "Traceback" not in stderr, stderr
    assert f"read_only={closed}: you cannot read the folder {closed}" in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1, stderr


# ---------------------------------------------------------------- environments
def _venv(where: Path) -> Path:
    """A virtual environment of the base interpreter's (its site-packages too) that imports
    what the suite's does (:mod:`venv_paths`)."""
    from venv_paths import import_what_the_suite_imports

    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", "--system-site-packages", str(where)], check=True,
                   timeout=120)
    import_what_the_suite_imports(where)
    return where


def test_a_variant_installed_editable_from_outside_the_checkout(tmp_path):
    """``pip install -e ../my-variant`` of a src-layout project whose package has no
    ``__init__.py`` (setuptools writes the ``src`` folder into a ``.pth`` file): every bot
    of the environment loads it among the ``arena`` entry points, so the sandbox shows it."""
    if best_tier()[0] is None:
        pytest.skip("no default tier here for command-line bots (an ordinary user without bubblewrap)")
    tmp_path.chmod(0o755)
    venv = _venv(tmp_path / "venv")
    package = tmp_path / "my-variant" / "src" / "my_variant_ns"
    package.mkdir(parents=True)
    (package / "rules.py").write_text('"""A variant that changes nothing."""\n')
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "__editable__.my_variant_ns-0.1.pth").write_text(f"{package.parent}\n")
    info = site / "my_variant_ns-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-variant-ns\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[arena]\nmy_variant_ns = my_variant_ns.rules\n")
    for p in [tmp_path, *tmp_path.rglob("*")]:
        if not p.is_symlink():
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "arena.cli", "play", "random", "greedy", "--json",
                           "--move-ms", "5000"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=_env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["faults"] == [[], []]


def test_a_league_inside_a_venv_checks_its_submissions(tmp_path):
    """The site checks a submission in the sandbox from a copy of its package; the league's
    folder, hidden, lies inside the environment the checker's interpreter is shown."""
    require_strict()
    tmp_path.chmod(0o755)
    venv = _venv(tmp_path / "venv")
    league = venv / "league" / "ladder.db"
    package = Path(f"{league}.bots") / "lucky"
    package.mkdir(parents=True)
    league.write_text("")
    (package / "bot.py").write_text(PROBE)
    for p in [tmp_path, *tmp_path.rglob("*")]:
        if not p.is_symlink():
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
    code = textwrap.dedent(f'''\
        import json
        from pathlib import Path
        from arena.packages.build import check
        from arena.web.submissions import private_paths
        report, step = check(["python3", "bot.py"], 300, "strict", program_dir=Path({str(package)!r}),
                             hide=private_paths(Path({str(league)!r})))
        print(json.dumps(report))
    ''')
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=_env())
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ok"], report
