"""Hostile replies from real bot processes, through the referee and through a tournament.

The bot (``tests/bots/hostile_reply.py``) answers the handshake, then writes the chosen
bytes as its reply. Each game must end with a result, the hostile seat's verdict, the
other seat's record clean, and no process left; in a tournament the game is stored (not
failed, not retried forever), and a game that truly cannot be played makes ``arena run``
exit non-zero with a sentence.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.referee import play_game
from arena.tournament.store import Store
from proc_check import assert_gone

HOSTILE = str(Path(__file__).parent / "bots" / "hostile_reply.py")
SHORT = {"variants": [], "params": {"max_rounds": 3}}
DEEP = b"[" * 1000


def hostile(line: bytes, when: int = 1) -> list[str]:
    """The command of a bot that answers request ``when`` (0: hello) with ``line``."""
    return [sys.executable, HOSTILE, line.hex(), str(when)]


GOOD = hostile(b"", -1)  # never misbehaves: the well-behaved opponent, quick to start


def game(cmd, **kw) -> dict:
    request = {"seats": [{"name": "bad", "cmd": cmd}, {"name": "good", "cmd": GOOD}], "seed": 5, "rules": SHORT,
               "time_control": {"move_ms": 2000, "startup_ms": 10000}, "sandbox": "none"}
    request.update(kw)
    out = play_game(request)
    for seat in out["seats"]:
        assert_gone(seat["pid"])
    assert out["result"]["ranking"] and out["result"]["rounds"] >= 1
    assert out["seats"][1]["faults"] == [], out["seats"][1]["faults"]
    return out


@pytest.mark.parametrize("line, when, verdict, words", [
    (DEEP, 1, "non_json", "nested deeper than 32 levels"),
    (DEEP, 0, "non_json", "nested deeper than 32 levels"),
    (b'{"id": {id}, "action": ' + DEEP + b"}", 1, "non_json", "nested deeper"),
    (b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": 1e999999}}', 1, "non_json", "too large"),
    (b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": ' + b"9" * 5000 + b"}}", 1, "non_json",
     "more than 4300 digits"),
    (b'{"id": {id}, "action": {"type": "\\ud800"}}', 1, "non_json", "surrogate"),
    (b'{"type": "ready", "id": {id}, "name": "\\udfff"}', 0, "non_json", "surrogate"),
    (b'{"id": {id}, "action": {"type": "\xff"}}', 1, "non_json", "not UTF-8"),
    (b'{"id": {id}, "id": {id}, "action": {"type": "pass"}}', 1, "protocol_error", "appears twice"),
    (b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": ' + b"[" * 30 + b"]" * 30 + b"}}", 1,
     "illegal_action", "needs an integer field 'slot'"),
])
def test_a_hostile_reply_is_a_verdict_and_the_game_goes_on(line, when, verdict, words):
    out = game(hostile(line, when))
    [fault] = out["seats"][0]["faults"]
    assert fault["verdict"] == verdict and words in fault["detail"], fault
    assert fault["move"] == (None if when == 0 else 0)
    assert out["result"]["forfeited"] == [True, False] and out["result"]["ranking"] == [2, 1]


def test_under_the_random_policy_the_hostile_seat_is_played_for_and_asked_again():
    out = game(hostile(DEEP, 2), fault_policy="random")
    [fault] = out["seats"][0]["faults"]
    assert fault["verdict"] == "non_json" and fault["move"] == 1
    assert out["result"]["forfeited"] == [False, False]
    assert out["seats"][0]["moves"] > 2, "the seat was asked again after its fault"


def _tournament(tmp_path: Path, bad_cmd: list[str]) -> Path:
    path = tmp_path / "h.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: h
        bots:
          - {{name: bad, cmd: {list(bad_cmd)!r}}}
          - {{name: good, cmd: {list(GOOD)!r}}}
        rules: {{params: {{max_rounds: 2}}}}
        rounds: 1
        concurrency: 1
        sandbox: none
        replays: false
        output: {tmp_path / 'out'}
        """).replace("'", '"'))
    return path


def test_a_tournament_stores_the_game_of_a_bot_that_replies_with_deep_nesting(tmp_path):
    runner = CliRunner()
    path = _tournament(tmp_path, hostile(DEEP))
    result = runner.invoke(app, ["run", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    store = Store.open(tmp_path / "out", create=False)
    try:
        assert store.count() == 2 and store.events("game-failed") == []
        assert store.fault_counts() == {"bad": {"non_json": 2}}
        ranks = store.conn.execute("SELECT bot, rank FROM seats ORDER BY bot").fetchall()
        assert ranks == [("bad", 2), ("bad", 2), ("good", 1), ("good", 1)], "the hostile bot keeps its losses"
    finally:
        store.close()
    again = runner.invoke(app, ["run", str(path), "--no-progress", "--json"])
    assert again.exit_code == 0 and '"played": 0' in again.output, again.output


def test_a_game_that_cannot_be_played_makes_arena_run_fail_with_a_sentence(tmp_path, monkeypatch):
    import arena.referee

    def broken(request):
        raise RuntimeError("the referee broke")

    # The local executor forks its workers, which see this replacement.
    monkeypatch.setattr(arena.referee, "play_game", broken)
    result = CliRunner().invoke(app, ["run", str(_tournament(tmp_path, GOOD)), "--no-progress"])
    assert result.exit_code == 1, result.output
    assert "2 of 2 games could not be played and are not stored" in result.output
    assert "run the same command again to retry them" in result.output
    assert "Traceback" not in result.output
