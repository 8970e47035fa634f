"""A bot that dies while a child of it holds its stdout open is a crash with its last
words, not a timeout; a bot that hangs is a timeout whose detail ends with its stderr."""

from __future__ import annotations

import sys
import textwrap

from arena.referee import play_game

DIES = textwrap.dedent('''\
    import subprocess, sys, time
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(20)"])  # holds stdout open
    time.sleep(0.1)
    raise ValueError("the weights file is broken")
''')

HANGS = textwrap.dedent('''\
    import sys, time
    sys.stderr.write("loading a large model\\n")
    sys.stderr.flush()
    time.sleep(20)
''')


def _faults(tmp_path, source: str) -> list[dict]:
    bot = tmp_path / "bot.py"
    bot.write_text(source)
    out = play_game({"seats": [{"bot": "pass"}, {"name": "b", "cmd": [sys.executable, str(bot)]}],
                     "sandbox": "none", "time_control": {"startup_ms": 1500}})
    return out["seats"][1]["faults"]


def test_a_bot_that_dies_at_start_while_its_child_holds_stdout_is_a_crash_with_its_traceback(tmp_path):
    faults = _faults(tmp_path, DIES)
    assert faults[0]["verdict"] == "crash", faults
    assert "ValueError: the weights file is broken" in faults[0]["detail"]


def test_a_bot_that_hangs_is_a_timeout_that_shows_its_last_words(tmp_path):
    faults = _faults(tmp_path, HANGS)
    assert faults[0]["verdict"] == "timeout", faults
    assert "loading a large model" in faults[0]["detail"]
