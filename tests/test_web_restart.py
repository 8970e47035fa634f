"""``arena serve`` killed in the middle of a game and started again: nothing stored is lost,
nothing is played twice, every stored game keeps the replay of that very game."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from engine import RuleSpec  # noqa: E402

from arena.league import League  # noqa: E402

from test_web_site import Server  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / "bots" / "examples" / "packages" / "python" / "bot.py"
JS = ROOT / "bots" / "examples" / "js" / "bot.js"


def stored(path: Path) -> list[tuple]:
    """Every stored game with its seats, oldest first."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        games = conn.execute("SELECT id, grp, rotation, seed FROM games ORDER BY id").fetchall()
        seats = conn.execute("SELECT game_id, seat, entry, score, rank FROM seats ORDER BY game_id, seat").fetchall()
    finally:
        conn.close()
    return [g + (tuple(s[2:] for s in seats if s[0] == g[0]),) for g in games]


def wait_for_games(path: Path, n: int, server: Server, timeout: float = 120) -> list[tuple]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.proc.poll() is None, server.log.read_text()[-3000:]
        games = stored(path)
        if len(games) >= n:
            return games
        time.sleep(0.1)
    raise AssertionError(f"fewer than {n} games after {timeout} s: {server.log.read_text()[-3000:]}")


def test_killing_the_server_mid_game_loses_nothing_and_plays_nothing_twice(tmp_path):
    server = Server(tmp_path)
    with League.create(server.league, RuleSpec(), 2, 0, {"move_ms": 500}, "basic") as league:
        league.add("py", cmd=[sys.executable, str(PY)])
        league.add("js", cmd=["node", str(JS)] if shutil.which("node") else [sys.executable, str(PY)])
    server.start()
    first = wait_for_games(server.league, 3, server)
    # a game is in flight at almost any moment (the player plays on at once): kill right
    # after one is stored, server, workers and bots together, with no chance to clean up
    wait_for_games(server.league, len(first) + 1, server)
    os.killpg(server.proc.pid, signal.SIGKILL)
    server.proc.wait()
    before = stored(server.league)
    assert len(before) >= 4

    server.start()
    wait_for_games(server.league, len(before) + 4, server)
    assert server.stop() == 0, server.log.read_text()[-3000:]
    after = stored(server.league)

    assert after[:len(before)] == before  # nothing stored was lost or changed
    keys = [(g[1], g[2]) for g in after]
    assert len(keys) == len(set(keys))  # no (group, rotation) twice
    # the restart completed the groups the kill left half played (their missing rotations,
    # as league.play promises), and otherwise played new groups
    rotations: dict = {}
    for g in before:
        rotations.setdefault(g[1], set()).add(g[2])
    half = {grp for grp, rots in rotations.items() if len(rots) < 2}
    for g in after[len(before):]:
        assert g[1] > max(rotations) or g[1] in half, (g[1], g[2], sorted(rotations))
    done = {(g[1], g[2]) for g in after}
    assert all((grp, rot) in done for grp in half for rot in (0, 1))
    assert [g[0] for g in after] == list(range(1, len(after) + 1))
    for gid, grp, rot, seed, seats in after:
        record = json.loads((Path(f"{server.league}.replays") / f"{grp}-{rot}.json").read_text())
        assert record["seed"] == seed
        assert record["bots"] == [s[0] for s in seats]
        assert record["result"]["scores"] == [s[1] for s in seats]
