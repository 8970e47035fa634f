"""Inputs that pass and then fail: each is refused at once, as typed, with one sentence
naming the field and its limit -- a time of 2**31 ms or more (which poll() cannot wait),
a NaN target, a cap too large for a whole count, a fractional sweep step, a folder that is
missing or a file, a game beyond a games file's end."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from arena.process.timecontrol import TimeControl, TimeControlError

MAX_MS = 86_400_000  # a day, the limit of every time
DAY = str(MAX_MS)


def arena(tmp_path: Path, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``arena ARGV`` from a fresh folder, as a user types it."""
    return subprocess.run(["arena", *argv], cwd=tmp_path, capture_output=True, text=True, timeout=timeout)


def refused(done: subprocess.CompletedProcess, *words: str) -> str:
    """The one line of error a refused command printed; it names every word given."""
    out = done.stdout + done.stderr
    assert done.returncode != 0, f"accepted (exit 0):\n{out[-2000:]}"
    assert "Traceback" not in out, out
    lines = [x for x in done.stderr.splitlines() if x.startswith(("arena:", "Error:"))]
    assert len(lines) == 1, out
    for word in words:
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"
    return lines[0]


# ---------------------------------------------------------------- times over a day

@pytest.mark.parametrize("option", ["--move-ms", "--startup-ms", "--increment-ms", "--game-ms"])
def test_a_time_option_of_2_31_ms_is_refused_naming_the_option_and_a_day(tmp_path, option):
    refused(arena(tmp_path, "play", "greedy", "random", option, "2147483648"), option, DAY)


@pytest.mark.parametrize("word, field", [
    ("tc=99999999999999999999999999", "game's time"),
    ("tc=" + "9" * 400 + "s", "game's time"),
    ("tc=60+99999999", "increment"),
    ("st=99999999", "time a move"),
    ("move-ms=2147483648", "move-ms"),
    ("startup-ms=2147483648", "startup-ms"),
])
def test_an_engine_time_over_a_day_is_refused_naming_the_word_and_a_day(tmp_path, word, field):
    line = refused(arena(tmp_path, "play", "greedy", "--engine", f"bot=random {word}"), field, DAY)
    assert word.partition("=")[0] in line


def test_a_tournament_file_time_over_a_day_names_its_line_and_field(tmp_path):
    (tmp_path / "t.yaml").write_text("name: t\nbots: [greedy, random]\ngames: 2\n"
                                     "time_control:\n  move_ms: 100\n  startup_ms: 2147483648\n")
    refused(arena(tmp_path, "validate", "t.yaml"), "line 6", "time_control.startup_ms", DAY)


@pytest.mark.parametrize("key", ["move_ms", "game_ms", "increment_ms", "startup_ms", "grace_ms"])
def test_a_time_control_in_a_request_is_checked_against_a_day(key):
    assert TimeControl.from_json({key: MAX_MS}).to_json()[key] == MAX_MS
    with pytest.raises(TimeControlError, match=f"{key} must be at most {MAX_MS}"):
        TimeControl.from_json({key: 2 ** 31})


# ---------------------------------------------------------------- experiments

def experiment(tmp_path: Path, text: str) -> Path:
    (tmp_path / "e.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path / "e.yaml"


def test_a_cap_too_large_for_a_whole_count_names_max_games_and_its_line(tmp_path):
    experiment(tmp_path, """\
        name: e
        seats: 2
        bots: [greedy, random]
        until: {figure: seat_wins, seat: 0, width: 0.04, max_games: 100000000000000000000000000000}
        rule_sets:
          - name: revised
            variants: [revised]
        """)
    refused(arena(tmp_path, "experiment", "e.yaml"), "line 4", "until.max_games", "at most")


@pytest.mark.parametrize("field, where", [("value: .nan", "target.value"), ("within: .inf", "target.within")])
def test_a_target_that_is_not_a_finite_number_is_refused(tmp_path, field, where):
    wanted = {"target.value": "value: .nan, within: 0.1", "target.within": "value: 0.5, within: .inf"}[where]
    experiment(tmp_path, f"""\
        name: e
        seats: 2
        bots: [greedy, random]
        games: 4
        rule_sets:
          - name: revised
            variants: [revised]
        sweep:
          black_deck_size: {{from: 8, to: 12, step: 2}}
        target: {{figure: seat_wins, seat: 0, {wanted}, max_games: 8}}
        """)
    refused(arena(tmp_path, "experiment", "e.yaml", timeout=120), "line 10", where, "finite")


def test_a_fractional_sweep_step_is_blamed_on_the_step(tmp_path):
    experiment(tmp_path, """\
        name: e
        seats: 2
        bots: [greedy, random]
        games: 4
        rule_sets:
          - name: revised
            variants: [revised]
        sweep:
          reserve_per_shape: {from: 6, to: 8, step: 0.5}
        """)
    refused(arena(tmp_path, "experiment", "e.yaml"), "line 9", "reserve_per_shape.step", "step 0.5", "whole number")


# ---------------------------------------------------------------- folders

def test_a_registered_bot_in_a_missing_folder_is_refused_as_a_command_is(tmp_path):
    refused(arena(tmp_path, "play", "greedy", "--engine", "bot=random dir=/nonexistent"),
            "dir=/nonexistent", "no such folder")
    refused(arena(tmp_path, "play", "greedy", "--engine", "cmd='python3 bot.py' dir=/nonexistent"),
            "dir=/nonexistent", "no such folder")


def test_a_registered_bot_in_a_folder_that_exists_still_plays(tmp_path):
    (tmp_path / "here").mkdir()
    done = arena(tmp_path, "play", "greedy", "--engine", "bot=random dir=here")
    assert done.returncode == 0, done.stderr


def test_a_read_only_file_is_said_to_be_no_folder(tmp_path):
    (tmp_path / "bot.py").write_text("print('hello')\n")
    (tmp_path / "secret").write_text("x\n")
    line = refused(arena(tmp_path, "play", "greedy", "--engine", "cmd='python3 bot.py' ro=secret"),
                   "ro", "secret", "is not a folder")
    assert "no such folder" not in line


# ---------------------------------------------------------------- replays

def test_replay_of_a_game_beyond_the_file_says_how_many_games_it_holds(tmp_path):
    done = arena(tmp_path, "play", "greedy", "random", "--replay", "r.json")
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    (tmp_path / "games.jsonl").write_text("".join(json.dumps(record) + "\n" for _ in range(6)))
    assert arena(tmp_path, "replay", "games.jsonl", "--game", "6", "-q").returncode == 0
    for extra in ([], ["--html", "v.html"]):
        line = refused(arena(tmp_path, "replay", "games.jsonl", "--game", "7", *extra),
                       "--game 7", "holds 6 games", "1 to 6")
        assert "reproduce" not in line
