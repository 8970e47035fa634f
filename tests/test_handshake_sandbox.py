"""The handshake before a run's first game holds each command-line bot in the run's own
sandbox tier, not in a weaker one: a hostile bot gets no moment outside it."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

from arena.tournament.config import load_config
from arena.tournament.handshake import BotCannotStart, handshake_commands
from proc_check import MISBEHAVE
from strict_check import require_strict

# says ready only where it sees no more than a handful of processes: inside a PID namespace
ISOLATED_ONLY = textwrap.dedent(f"""\
    import os, sys
    if sum(name.isdigit() for name in os.listdir("/proc")) > 20:
        sys.exit("I can see the whole machine")
    os.execv(sys.executable, [sys.executable, os.path.join(os.path.dirname(__file__), "misbehave.py"), "good"])
    """)


@pytest.mark.parametrize("tier", ["strict", "none"])
def test_the_handshake_runs_in_the_runs_sandbox_tier(tier, tmp_path):
    require_strict()
    os.chmod(tmp_path, 0o755)
    bot = tmp_path / "bot.py"
    bot.write_text(ISOLATED_ONLY)
    bot.chmod(0o644)
    (tmp_path / "misbehave.py").write_text(open(MISBEHAVE).read())  # beside it: strict shows its folder only
    (tmp_path / "misbehave.py").chmod(0o644)
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nbots:\n  - greedy\n  - {{name: isolated, cmd: \"{sys.executable} {bot}\"}}\n"
                    f"sandbox: {tier}\noutput: {tmp_path / 'out'}\n")
    cfg = load_config(path)
    if tier == "strict":
        assert handshake_commands(cfg) == 1
    else:
        with pytest.raises(BotCannotStart, match="I can see the whole machine"):
            handshake_commands(cfg)


def test_check_bot_holds_the_bot_under_check_in_the_strongest_tier_by_default(tmp_path):
    from arena.process.check_bot import check_bot

    require_strict()
    os.chmod(tmp_path, 0o755)
    bot = tmp_path / "bot.py"
    bot.write_text(ISOLATED_ONLY)
    bot.chmod(0o644)
    (tmp_path / "misbehave.py").write_text(open(MISBEHAVE).read())
    (tmp_path / "misbehave.py").chmod(0o644)
    argv = [sys.executable, str(bot)]
    assert check_bot(argv).checks[0].ok, "under auto (strict) the bot sees only its own namespace"
    handshake = check_bot(argv, sandbox="none").checks[0]
    assert not handshake.ok and "I can see the whole machine" in handshake.detail + handshake.offending
