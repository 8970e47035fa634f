"""``tc=`` in cutechess-cli's grammar (a chess clock, ``time+increment`` in seconds,
``minutes:seconds``, ``ms`` only as a suffix) and ``st=`` (the time a move); a form the
arena cannot honour, or one that reads two ways, gets a sentence."""

from __future__ import annotations

import pytest

from arena.botspec import parse_spec
from arena.errors import UsageError
from cli_helpers import run


def tc(text: str) -> dict:
    return parse_spec(f"bot=greedy {text}")["time_control"]


@pytest.mark.parametrize("text, want", [
    ("tc=10", {"game_ms": 10000, "increment_ms": 0, "mode": "clock"}),   # as tc=10+0: one grammar
    ("tc=10+0", {"game_ms": 10000, "increment_ms": 0, "mode": "clock"}),
    ("tc=60+0.5", {"game_ms": 60000, "increment_ms": 500, "mode": "clock"}),
    ("tc=1:30+1", {"game_ms": 90000, "increment_ms": 1000, "mode": "clock"}),
    ("tc=500ms+10ms", {"game_ms": 500, "increment_ms": 10, "mode": "clock"}),
    ("tc=300s", {"game_ms": 300000, "increment_ms": 0, "mode": "clock"}),
    ("st=0.5", {"move_ms": 500}),
    ("st=200ms", {"move_ms": 200}),
    ("tc=2+0.05 st=1", {"game_ms": 2000, "increment_ms": 50, "mode": "clock", "move_ms": 1000}),
])
def test_tc_reads_as_cutechess_writes_it(text, want):
    assert tc(text) == want


@pytest.mark.parametrize("text, words", [
    ("tc=500", "500 seconds a game, or 500 ms a move as tc= once meant? Write tc=500s for the clock or st=500ms"),
    ("tc=40/60+0.6", "a clock refilled every N moves (moves/time) is not a time control of the arena"),
    ("tc=inf", "a game here always has a time limit"),
    ("tc=hg60", "the hourglass is not a time control"),
    ("tc=10m", "tc=10m: not a time control; tc= is a chess clock as cutechess-cli writes it, in seconds"),
    ("tc=10+", "tc=10+: not a time control"),
    ("tc=0", "the game's time must be more than 0"),
    ("st=fast", "st=fast: give the time a move in seconds (st=0.5) or milliseconds (st=500ms)"),
])
def test_a_form_that_cannot_be_honoured_or_reads_two_ways_is_a_sentence(text, words):
    with pytest.raises(UsageError, match=None) as err:
        tc(text)
    assert words in str(err.value)


def test_the_command_line_says_it_in_one_line(tmp_path):
    r = run("match", "--engine", "bot=greedy tc=500", "random", "--inprocess", "-o", tmp_path / "m",
            ok=False, one_line=True)
    assert "tc=500: 500 seconds a game, or 500 ms a move" in r.stderr
    r = run("match", "greedy", "random", "--each", "st=250ms", "--write-yaml", tmp_path / "m.yaml")
    assert "move_ms: 250" in (tmp_path / "m.yaml").read_text()
