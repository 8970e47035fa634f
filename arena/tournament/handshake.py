"""Before the first game: every bot given as a command line must start and say ``ready``.

``arena run`` and ``arena match`` handshake each command-line bot (each distinct command
once) under the tournament's rules and start-up limit, the way cutechess-cli and
fastchess start every engine before a match. A bot that cannot start -- a missing script,
a crash, no ``ready`` in time, a malformed ``ready`` -- stops the run before anything is
played, with the first failing check of :mod:`arena.process.check_bot` as one sentence.
``--no-check`` skips it; ``--check`` runs the whole conformance check instead.
"""

from __future__ import annotations

import shlex

from ..errors import UsageError


class BotCannotStart(UsageError):
    """A command-line bot failed its handshake: the run stops before its first game."""


def handshake_commands(cfg, echo=None, skip_hint: str = "--no-check skips this one") -> int:
    """Handshake every command-line bot of ``cfg``; raise :class:`BotCannotStart` on the first
    that fails. Returns how many distinct commands were started."""
    from engine import Game

    from ..process.check_bot import _Checker
    from ..process.timecontrol import TimeControl

    tc = TimeControl.from_json({"move_ms": max(int(cfg.time_control.get("move_ms", 1000)), 2000),
                                "startup_ms": int(cfg.time_control.get("startup_ms", 10000))})
    seen: set[tuple] = set()
    for entry in cfg.bots:
        if not entry.cmd or entry.cmd in seen:
            continue
        seen.add(entry.cmd)
        rules = Game.new(cfg.rules, cfg.seats, 1).rules
        checker = _Checker(list(entry.cmd), tc, 1, sandbox=getattr(cfg, "sandbox", "auto"),  # as in its games
                           base=getattr(entry, "base", None), program_dir=getattr(entry, "program_dir", None),
                           read_only=getattr(entry, "read_only", ()))
        try:
            ok = checker.start(rules)
        finally:
            checker.close()
        if not ok:
            bad = checker.report.checks[-1]
            command = shlex.join(entry.cmd)
            why = f"{bad.name}: {bad.detail}"
            if bad.offending:
                why += f" ({bad.offending[:200]})"
            raise BotCannotStart(f"bot {entry.name} ({command}) cannot start, so nothing was played: {why}; "
                                 f"`arena check-bot -- {command}` shows every check"
                                 + (f" ({skip_hint})" if skip_hint else ""))
        if echo is not None:
            echo(f"handshake: {entry.name} is ready")
    return len(seen)
