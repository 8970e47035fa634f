"""``arena match`` / ``arena run`` as a cutechess-cli or fastchess user expects them: the
typed order decides the SPRT's candidate, command-line bots are handshaken before the
first game, a folder of another match is refused before anything is printed, a resume
keeps its play settings (or records the change), a finished match grows, and each
finished game's line says how it ended."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import yaml

from cli_helpers import run as cli_run  # noqa: E402
from arena.cli.match import typed_order
from arena.tournament.config import load_config
from arena.tournament.store import Store

MISBEHAVE = str(Path(__file__).resolve().parent / "bots" / "misbehave.py")
PY = sys.executable


def run(*args, ok=True):
    return cli_run(*args, ok=ok, one_line=True)


# ---------------------------------------------------------------- 1. the SPRT's side
def test_the_typed_order_decides_the_candidate_names_and_cmd_bots_alike(tmp_path):
    path = tmp_path / "m.yaml"
    run("match", "--cmd", f"{PY} {MISBEHAVE} good", "greedy", "--sprt", "elo0=0", "elo1=10",
        "--output", tmp_path / "o", "--write-yaml", path)
    doc = yaml.safe_load(path.read_text())
    assert doc["bots"] == [{"cmd": f"{PY} {MISBEHAVE} good"}, "greedy"]
    cfg = load_config(path)
    # a command bot is named after its script (its mode argument tells two of them apart)
    assert cfg.format_options["candidate"] == "misbehave" and cfg.format_options["baseline"] == "greedy"


def test_typed_order_reads_the_raw_line_back():
    values = {"--cmd", "-o", "--output", "--sprt", "-n", "--games"}
    args = ["-n", "4", "--cmd", "python a.py", "greedy", "--sprt", "elo0=0", "elo1=5", "-o", "x", "--cmd=b"]
    assert typed_order(args, ["greedy"], ["python a.py", "b"], values) == [{"cmd": "python a.py"}, "greedy",
                                                                             {"cmd": "b"}]
    # what cannot be read back keeps the parsed order
    assert typed_order([], ["greedy"], ["b"], values) == ["greedy", {"cmd": "b"}]


def test_a_match_says_which_bot_is_the_candidate_at_start(tmp_path):
    r = run("match", "random", "greedy", "--sprt", "elo0=0", "elo1=200", "--games", 4, "--inprocess", "-j", 1,
            "--output", tmp_path / "s", "--no-replays")
    first = r.stdout.splitlines()[0]
    assert first.startswith("SPRT: candidate random vs baseline greedy"), first
    rep = json.loads(run("standings", tmp_path / "s", "--json").stdout)
    assert rep["sprt"]["candidate"] == "random"


# ---------------------------------------------------------------- 2. a bot that cannot start
def test_a_bot_that_cannot_start_stops_the_match_before_the_first_game(tmp_path):
    out = tmp_path / "c"
    r = run("match", "greedy", "--cmd", f"{PY} -c 'import sys; sys.exit(3)'", "--games", 2, "--sandbox", "none",
            "--output", out, ok=False)
    assert "cannot start, so nothing was played: handshake" in r.stderr and "--no-check" in r.stderr
    assert not (out / "results.sqlite").exists()
    # --no-check plays it anyway: every game forfeited, as before
    r = run("match", "greedy", "--cmd", f"{PY} -c 'import sys; sys.exit(3)'", "--games", 2, "--sandbox", "none",
            "--output", out, "--no-check", "--no-replays", "-j", 1)
    assert "2 games played" in r.stdout


def test_arena_run_handshakes_its_command_bots_too(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: t
        bots:
          - greedy
          - {{name: slow, cmd: [{PY!r}, {MISBEHAVE!r}, slow_start, "30"]}}
        rounds: 1
        sandbox: none
        time_control: {{startup_ms: 300}}
        output: {tmp_path / 'out'}
        """).replace("'", '"'))
    r = run("run", path, "--no-progress", ok=False)
    assert "bot slow" in r.stderr and "handshake: timeout" in r.stderr, r.stderr
    assert not (tmp_path / "out" / "results.sqlite").exists()


def test_validate_reports_a_missing_script(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nbots: [greedy, {{cmd: {PY} nope/raw.py}}]\n")
    r = run("validate", path, ok=False)
    assert "the bot's script 'nope/raw.py' does not exist" in r.stderr, r.stderr
    r = run("match", "greedy", "--cmd", "python3 -u missing_bot.py", "--output", tmp_path / "m", ok=False)
    assert "'missing_bot.py' does not exist" in r.stderr


# ---------------------------------------------------------------- 3. check-bot on a missing file
def test_check_bot_says_a_missing_file_does_not_exist(tmp_path):
    r = run("check-bot", "--", "./nope.sh", ok=False)
    assert "the program './nope.sh' was not found in" in r.stderr and "unprivileged" not in r.stderr


# ---------------------------------------------------------------- 4.-6. resuming
def _match(out, *extra, ok=True):
    return run("match", "greedy", "random", "--games", 4, "--inprocess", "-j", 1, "--output", out, "--no-replays",
               *extra, ok=ok)


def test_another_matchs_folder_is_refused_before_anything_is_printed(tmp_path):
    out = tmp_path / "m"
    _match(out)
    r = run("match", "greedy", "random", "--name", "other", "--games", 4, "--inprocess", "--output", out, ok=False)
    assert "holds results of a different tournament (differs in: name)" in r.stderr
    assert "continuing" not in r.stdout and r.stdout == ""


def test_a_resume_that_changes_the_time_control_is_refused_or_recorded(tmp_path):
    out = tmp_path / "m"
    _match(out, "--move-ms", 500)
    r = _match(out, "--move-ms", 5, "--game-ms", 100, ok=False)
    assert "time_control.game_ms none -> 100" in r.stderr and "time_control.move_ms 500 -> 5" in r.stderr
    assert "--allow-changes" in r.stderr and r.stdout == ""
    r = run("match", "greedy", "random", "--games", 6, "--inprocess", "-j", 1, "--output", out, "--no-replays",
            "--move-ms", 5, "--game-ms", 100, "--allow-changes")
    assert "2 games played" in r.stdout and "continuing with changed settings (recorded)" in r.stderr
    store = Store.open(out, create=False)
    try:
        [event] = store.events("settings-changed")
        assert "time_control.move_ms 500 -> 5" in event["detail"]
        assert [e["detail"] for e in store.events("extended")] == ["scheduled games 4 -> 6"]
    finally:
        store.close()
    _match(out, "--games", 6, "--move-ms", 5, "--game-ms", 100)  # the new settings are now the folder's


def test_a_finished_match_grows_when_asked_for_more_games(tmp_path):
    out = tmp_path / "m"
    _match(out)
    r = _match(out, "-n", 8)
    assert "continuing match-greedy-vs-random: 4 games already stored" in r.stdout
    assert "4 games played" in r.stdout and "8 of 8 stored" in r.stdout
    keys = [json.loads(x)["key"] for x in (out / "games.jsonl").read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 8


# ---------------------------------------------------------------- 7. how each game ended
def test_each_game_line_says_how_it_ended_and_games_jsonl_keeps_faults(tmp_path):
    out = tmp_path / "f"
    r = run("match", "greedy", "--cmd", f"{PY} {MISBEHAVE} illegal", "--games", 2, "-j", 1, "--sandbox", "none",
            "--output", out, "--no-replays")
    lines = [x for x in r.stdout.splitlines() if x.startswith("Finished game")]
    assert len(lines) == 2
    for line in lines:
        assert "{misbehave: illegal_action at move " in line, line
        assert " : " in line.split("scores ")[1], line
    rows = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    for row in rows:
        assert row["end"] == "fault" and row["faults"][0]["verdict"] == "illegal_action"
        assert row["faults"][0]["bot"] == "misbehave" and isinstance(row["faults"][0]["move"], int)
        assert row["forfeited"][row["bots"].index("misbehave")] is True
    clean = run("match", "greedy", "random", "--games", 2, "--inprocess", "-j", 1, "--output", tmp_path / "c",
                "--no-replays")
    line = next(x for x in clean.stdout.splitlines() if x.startswith("Finished game"))
    assert "{game over after " in line and "rounds}, scores " in line, line
    row = json.loads((tmp_path / "c" / "games.jsonl").read_text().splitlines()[0])
    assert row["end"] == "normal" and row["faults"] == [] and row["reason"].startswith("game over after")
