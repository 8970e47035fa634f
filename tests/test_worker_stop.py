"""A worker stopped with SIGTERM in the middle of a game unwinds it, wherever the signal
lands: also inside an at-fork callback (the referee forks a bot while ``logging`` releases
its lock there), where an exception cannot propagate and was printed as a traceback on the
user's terminal, then lost."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import os, signal, sys, time
import arena.execution.local as local

sys.unraisablehook = local._unraisable
signal.signal(signal.SIGTERM, local._on_term)
local._IN_GAME = True
# a callback that runs in the parent after every fork, as logging's lock release does: the
# SIGTERM lands while it runs
os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGTERM))
unwound_at = None
try:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        time.sleep(0.001)  # ordinary code: the game goes on here until the stop unwinds it
    print("not stopped")
except local._Stopped:
    unwound_at = "unwound"
signal.alarm(0)
print(unwound_at)
"""


def test_a_stop_that_lands_in_an_at_fork_callback_unwinds_the_game_without_a_traceback():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["unwound"], done.stdout
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
