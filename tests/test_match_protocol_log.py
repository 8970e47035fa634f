"""``--log-protocol FILE`` as complete as cutechess-cli's ``-debug``: besides every line both
ways, each bot's stderr (``2``), the start check and the faults as the arena's notes
(``!``), and a log that tells the story of a bot that cannot start."""

from __future__ import annotations

import re
import sys

from cli_helpers import run

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z (\S+) seat(\d) (\S+) ([<>2!]) (.*)$")

SLOW_BOT = """
import sys, time
from arena.sdk import Bot

class Slow(Bot):
    name = "slow"
    def act(self, observation):
        print("thinking hard", file=sys.stderr, flush=True)
        time.sleep(1.5)
        return {"type": "pass"}

Slow().run()
"""


def _parsed(log):
    lines = log.read_text().splitlines()
    parsed = [LINE.match(x) for x in lines]
    assert all(parsed), [x for x, m in zip(lines, parsed) if not m][:3]
    return [m.groups() for m in parsed]


def test_a_bot_that_cannot_start_leaves_its_story_in_the_log(tmp_path):
    log = tmp_path / "proto.log"
    (tmp_path / "broken.py").write_text("import sys\nprint('cannot load weights.npz', file=sys.stderr)\nsys.exit(3)\n")
    r = run("match", "greedy", "--cmd", f"{sys.executable} {tmp_path / 'broken.py'}", "--sandbox", "none",
            "--output", tmp_path / "m", "--log-protocol", log, ok=False, one_line=True)
    assert "cannot start" in r.stderr
    lines = _parsed(log)
    assert lines, "the log is empty"
    assert all(game == "start-check" and name == "broken" for game, _, name, _, _ in lines)
    assert ("!", ) == (lines[0][3],) and lines[0][4].startswith("starting ")
    assert ("2", "cannot load weights.npz") in [(d, t) for *_, d, t in lines]
    assert lines[-1][3] == "!" and "cannot start" in lines[-1][4]


def test_the_log_has_the_bots_stderr_and_its_faults(tmp_path):
    log = tmp_path / "proto.log"
    (tmp_path / "slow.py").write_text(SLOW_BOT)
    run("match", "--cmd", f"{sys.executable} {tmp_path / 'slow.py'}", "random", "--games", 2, "-j", 1,
        "--move-ms", 300, "--sandbox", "none", "--output", tmp_path / "m", "--quiet", "--no-replays",
        "--log-protocol", log)
    lines = _parsed(log)
    check = [x for x in lines if x[0] == "start-check"]
    assert check[0][3] == "!" and check[-1][3:] == ("!", "ready")
    games = [x for x in lines if x[0] != "start-check"]
    assert ("slow", "2", "thinking hard") in [(n, d, t) for _, _, n, d, t in games]
    faults = [t for _, _, n, d, t in games if d == "!"]
    assert faults and all(t.startswith("fault: timeout at move ") for t in faults)
