"""``arena check-bot`` as a library: conforming bots pass every check, faulty ones fail with the message."""

from __future__ import annotations

import sys

from arena.process.check_bot import check_bot
from proc_check import misbehaving

NAMES = ["handshake", "first action request", "action request with events", "reward decision", "level_up decision",
         "finish decision", "game_over, then a new hello", "quit", "full game against itself"]


def test_the_greedy_bot_conforms():
    report = check_bot([sys.executable, "-m", "bots.run", "greedy"])
    assert [c.name for c in report.checks] == NAMES
    assert report.ok, [c.line() for c in report.checks if not c.ok]


def test_an_illegal_action_fails_with_the_engine_reason_and_the_offending_message():
    report = check_bot(misbehaving("illegal"), move_ms=500)
    assert not report.ok
    first = next(c for c in report.checks if c.name == "first action request")
    assert not first.ok and "R3.1" in first.detail and '"slot": 9' in first.offending
    assert "FAIL first action request" in first.line()


def test_a_crash_stops_the_requests_and_fails_the_full_game():
    report = check_bot(misbehaving("crash"), move_ms=500)
    names = {c.name: c for c in report.checks}
    assert names["handshake"].ok and not names["first action request"].ok
    assert "exit code 3" in names["first action request"].detail
    assert not names["full game against itself"].ok


def test_a_silent_start_fails_the_handshake_only():
    report = check_bot(misbehaving("slow_start", "30"), startup_ms=300)
    assert [(c.name, c.ok) for c in report.checks] == [("handshake", False)]
    assert "start-up limit" in report.checks[0].detail
    assert report.to_json()["ok"] is False
