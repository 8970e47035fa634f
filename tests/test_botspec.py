"""arena.botspec: a command's words resolved once -- anchoring, wrappers, shims, names, specs."""

from __future__ import annotations

import os
import sys

import pytest

from arena.botspec import (CommandError, NameError_, anchor, check_name, distinct_names, locate, needed_paths,
                           parse_spec, script_of)
from arena.botspec.view import editable_paths
from arena.botspec.wrappers import _walk
from arena.errors import UsageError


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "bot.py").write_text("print()\n")
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "bot.py").write_text("print()\n")
    exe = tmp_path / "run"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return tmp_path


@pytest.mark.parametrize("typed, program", [
    ("python3 bot.py", 0),
    ("env python3 bot.py", 1),
    ("env -i -u X A=1 B=2 python3 bot.py", 6),
    ("nice -n 5 python3 bot.py", 3),
    ("nice -5 python3 bot.py", 2),
    ("nice --adjustment=5 python3 bot.py", 2),
    ("stdbuf -oL -e0 python3 bot.py", 3),
    ("stdbuf -o L python3 bot.py", 3),
    ("timeout 300 python3 bot.py", 2),
    ("timeout -s KILL -k 5 300 python3 bot.py", 6),
    ("timeout --signal=KILL 10s python3 bot.py", 3),
    ("taskset 0x3 python3 bot.py", 2),
    ("taskset -c 0,1 python3 bot.py", 3),
    ("ionice -c 3 python3 bot.py", 3),
    ("chrt -b 0 python3 bot.py", 3),
    ("nohup python3 bot.py", 1),
    ("setsid -w python3 bot.py", 2),
    ("prlimit --as=100 -- python3 bot.py", 3),
    ("env nice -n 2 stdbuf -oL timeout 9 python3 bot.py", 8),
])
def test_wrappers_are_seen_through_to_the_program(typed, program):
    words = typed.split()
    assert _walk(words).program == program
    assert script_of(words) == "bot.py"


def test_relative_paths_are_anchored_where_typed_and_bare_programs_stay(folder):
    assert anchor("python3 bot.py --depth 3", folder) == ["python3", str(folder / "bot.py"), "--depth", "3"]
    assert anchor("./run --x", folder) == [str(folder / "run"), "--x"]
    assert anchor("nice -n 5 ./run", folder) == ["nice", "-n", "5", str(folder / "run")]
    assert anchor("python3 v1/bot.py", folder)[1] == str(folder / "v1" / "bot.py")
    assert anchor("python3 ../x/bot.py", folder / "v1")[1] == "../x/bot.py"  # not there: left as typed
    assert anchor("python3 -c 'import bot.py'", folder) == ["python3", "-c", "import bot.py"]
    assert anchor(["sh", "-c", "python3 bot.py && echo v1/bot.py"], folder)[2] == \
        f"python3 {folder / 'bot.py'} && echo {folder / 'v1' / 'bot.py'}"
    assert anchor(["sh", "-c", "python3 $HOME/bot.py"], folder)[2] == "python3 $HOME/bot.py"  # the shell's own


def test_locate_finds_programs_on_the_path_and_says_what_cannot_run(folder):
    argv = locate("nice -n 5 python3 bot.py", folder)
    assert os.path.isabs(argv[0]) and os.path.isabs(argv[3]) and argv[4] == str(folder / "bot.py")
    with pytest.raises(CommandError, match="'nope.py' does not exist"):
        locate("python3 nope.py", folder)
    with pytest.raises(CommandError, match="'no-such-program' was not found on the PATH"):
        locate("no-such-program --x", folder)
    with pytest.raises(CommandError, match=r"'\./missing' was not found in"):
        locate("./missing", folder)
    with pytest.raises(CommandError, match="not an executable file"):
        locate("./bot.py", folder)
    with pytest.raises(CommandError, match="empty"):
        locate("", folder)
    assert isinstance(CommandError("x"), UsageError)


def test_a_shim_is_replaced_by_the_interpreter_it_runs(folder, tmp_path):
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (shims / "python3").chmod(0o755)
    argv = locate("python3 bot.py", folder, env={"PATH": f"{shims}:/usr/bin:/bin"})
    assert argv[0] == sys.executable  # what the shim really runs (the shim is not shown to the bot)


def test_needed_paths_show_a_venv_its_base_and_its_editable_packages(folder):
    paths = needed_paths([sys.executable, str(folder / "bot.py")])
    assert str(folder.resolve()) in paths
    assert os.path.realpath(sys.prefix) in paths or any(sys.prefix.startswith(p) for p in paths) \
        or sys.prefix.startswith(("/usr", "/opt"))
    editable = editable_paths(sys.prefix)
    if editable:  # an editable install (pip install -e): its packages are shown, not the project
        assert all(p in paths for p in editable)
        assert not any(os.path.isdir(os.path.join(p, "tests")) for p in paths if p in editable)


def test_editable_finders_and_path_files_are_read(tmp_path):
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    pkg = tmp_path / "proj" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (tmp_path / "proj" / "results").mkdir()
    (site / "__editable___x_finder.py").write_text(f"MAPPING: dict[str, str] = {{'mypkg': {str(pkg)!r}}}\n")
    (site / "x.pth").write_text(f"{tmp_path / 'proj'}\nimport something\n")
    found = editable_paths(str(tmp_path))
    assert str(pkg) in found and str(tmp_path / "proj" / "results") not in found


@pytest.mark.parametrize("commands, names", [
    (["python v2/bot.py", "python v1/bot.py"], ["v2/bot", "v1/bot"]),
    (["python a/x/bot.py", "python b/x/bot.py", "python c.py"], ["a/x/bot", "b/x/bot", "c"]),
    (["python bot.py", "python bot.py --fast"], ["bot", "bot-fast"]),
    (["python m.py good", "python m.py illegal"], ["m-good", "m-illegal"]),
    (["python bot.py", "python bot.py"], ["bot", "bot-2"]),
    (["node greedy.js"], ["js/greedy"]),
])
def test_distinct_names_are_the_shortest_paths_that_tell_bots_apart(commands, names):
    words = [c.split() for c in commands]
    if names == ["js/greedy"]:
        words = [["node", "/bots/js/greedy.js"]]
        assert distinct_names(words, taken={"greedy"}) == names
        return
    assert distinct_names(words) == names


def test_a_cutechess_style_spec_reads_like_a_yaml_entry():
    spec = parse_spec("name=v2 cmd='python v2/bot.py' tc=60+0.5 move-ms=200 option.depth=3 option.fast=true ro=data")
    assert spec == {"name": "v2", "cmd": "python v2/bot.py", "read_only": ["data"],
                    "time_control": {"game_ms": 60000, "increment_ms": 500, "mode": "clock", "move_ms": 200},
                    "options": {"depth": 3, "fast": True}}
    assert parse_spec("bot=greedy name=g st=500ms") == {"bot": "greedy", "name": "g", "time_control": {"move_ms": 500}}
    for bad, why in [("name=x", "exactly one of"), ("cmd=a bot=b", "exactly one of"), ("cmd=x colour=red", "unknown key"),
                     ("cmd=x tc=fast", "tc=fast"), ("cmd=x oops", "KEY=VALUE"), ("cmd='x", "cannot split")]:
        with pytest.raises(UsageError, match=why):
            parse_spec(bad)


def test_names_that_cannot_name_a_bot_are_refused_with_a_sentence():
    assert check_name("v2/bot") == "v2/bot"
    for bad in ["", " x", "x" * 101, "a\nb", "é" * 60]:
        with pytest.raises(NameError_):
            check_name(bad)


def test_a_bots_path_has_the_interpreters_its_shims_run(tmp_path):
    from arena.botspec.view import sandbox_path

    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (shims / "python3").chmod(0o755)
    path, shown = sandbox_path(f"{shims}:/usr/bin:/bin", str(tmp_path))
    # the interpreter's folder in front of the shims' (which stays behind it, for a name
    # the interpreter's folder lacks: see arena.botspec.bot_path)
    assert path.split(":") == [os.path.dirname(sys.executable), str(shims), "/usr/bin", "/bin"]
    assert shown  # the interpreter's installation, to be shown to the bot


# ---------------------------------------------------------------- what a bot is shown
def test_a_shells_cd_anchors_its_folder_and_the_words_after_it(folder):
    words = locate(["bash", "-c", "cd v1 && exec python3 bot.py"], str(folder))
    inner = words[-1]
    assert inner.startswith(f"cd {folder / 'v1'} && exec ") and inner.endswith(f" {folder / 'v1' / 'bot.py'}")
    assert str(folder / "v1") in needed_paths(words)
    with pytest.raises(CommandError, match="'cd nowhere' was not found"):
        locate(["bash", "-c", "cd nowhere && exec python3 bot.py"], str(folder))


def test_the_folders_env_sets_in_pythonpath_are_anchored_and_shown(folder):
    (folder / "lib").mkdir()
    words = anchor("env PYTHONPATH=lib:/nowhere python3 bot.py", str(folder))
    assert words[1] == f"PYTHONPATH={folder / 'lib'}:/nowhere"
    assert str(folder / "lib") in needed_paths(words)


def test_the_links_on_the_way_to_a_path_are_listed(folder):
    from arena.botspec.view import path_links

    (folder / "current").symlink_to("v1")
    (folder / "linked.py").symlink_to(folder / "v1" / "bot.py")
    assert path_links(str(folder / "current" / "bot.py")) == [(str(folder / "current"), "v1")]
    assert path_links(str(folder / "linked.py")) == [(str(folder / "linked.py"), str(folder / "v1" / "bot.py"))]


def test_an_output_folder_is_known_by_its_marker_or_its_files(tmp_path):
    from arena.botspec.outputs import _search, mark_output

    for folder in ("bot", "bot/.git", "bot/runs/new", "bot/runs/old", "bot/leagues", "bot/data"):
        (tmp_path / folder).mkdir(parents=True)
    mark_output(tmp_path / "bot" / "runs" / "new")
    (tmp_path / "bot" / "runs" / "old" / "games.jsonl").write_text("{}")
    (tmp_path / "bot" / "leagues" / "ladder.db").write_text("")
    mark_output(tmp_path / "bot" / "leagues", "ladder.db")
    (tmp_path / "bot" / "leagues" / "ladder.db.bots").mkdir()
    (tmp_path / "bot" / "leagues" / "notes.txt").write_text("the operator's")
    (tmp_path / "bot" / "data" / "book.txt").write_text("the bot's own")
    found = {os.path.relpath(p, tmp_path / "bot") for p in _search(str(tmp_path / "bot"))}
    assert {".git", "runs/new", "runs/old", "leagues/ladder.db", "leagues/ladder.db.bots",
            "leagues/.arena-output"} <= found
    assert not {"data", "data/book.txt", "leagues", "leagues/notes.txt", "."} & found


def test_a_namespace_package_of_an_editable_path_entry_is_shown(tmp_path):
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    package = tmp_path / "my-variant" / "src" / "my_variant"
    package.mkdir(parents=True)
    (package / "rules.py").write_text("")
    (site / "__editable__.my_variant-0.1.pth").write_text(f"{package.parent}\n")
    assert str(package) in editable_paths(str(tmp_path / "venv"))
