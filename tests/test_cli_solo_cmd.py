"""``arena solo --cmd``: a bot author tries their own bot against the automaton (R12)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from arena.cli import app

MISBEHAVE = str(Path(__file__).resolve().parent / "bots" / "misbehave.py")


def run(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def test_solo_plays_a_command_line_bot_against_the_automaton():
    r = run("solo", "--cmd", f"{sys.executable} {MISBEHAVE} good", "--games", 2, "--sandbox", "none", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["bot"] == "misbehave" and out["games"] == 2 and out["faults"] == 0
    assert out["rules"]["variants"] == ["solo"] and out["mean_margin"] < 0  # playing the first option loses


def test_a_solo_bot_that_faults_is_reported_and_one_that_cannot_start_stops_at_once(tmp_path):
    r = run("solo", "--cmd", f"{sys.executable} {MISBEHAVE} illegal", "--games", 1, "--sandbox", "none")
    assert r.exit_code == 0 and "illegal_action at move 0" in r.stderr, r.output
    r = run("solo", "--cmd", f"{sys.executable} {tmp_path / 'nope.py'}", "--games", 5)
    # refused before anything starts, in one sentence naming the script
    assert r.exit_code == 2 and "the bot's script" in r.stderr and "does not exist" in r.stderr
    r = run("solo", "greedy", "--cmd", "python3 x.py")
    assert r.exit_code == 2 and "one of the two" in r.stderr
