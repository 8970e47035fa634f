"""What ``arena run`` and ``arena match`` check before the first game, read-only and before
anything is printed: the output format, the ``--games-out`` and ``--log-protocol`` files, that
the folder's stored games may be continued, and that every command-line bot starts."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Optional

import typer

from ..errors import UsageError


def check_output_format(text: str) -> str:
    """``--output-format``: ``arena``, ``fastchess`` or ``cutechess``, or a sentence."""
    from ..tournament.output_formats import FORMATS

    value = text.strip().lower()
    if value not in FORMATS:
        raise UsageError(f"--output-format {text!r}: the formats are {', '.join(FORMATS)}")
    return value


def output_files(cfg, games_out: Optional[Path], log_protocol: Optional[Path]) -> dict:
    """``--games-out`` and ``--log-protocol`` checked before anything is played: absolute
    paths (workers write the log), a replay per game for the first, bot processes for the
    second, and both files writable (created, appended to when they exist)."""
    out: dict = {}
    if games_out is not None:
        if not cfg.replays:
            raise UsageError("--games-out writes each game's replay: drop --no-replays (or replays: false)")
        out["games_out"] = games_out
    if log_protocol is not None:
        if cfg.play == "inprocess":
            raise UsageError("--log-protocol logs the lines of bot processes; in-process play has none")
        out["protocol_log"] = log_protocol
    for option, key in (("--games-out", "games_out"), ("--log-protocol", "protocol_log")):
        if key in out:
            path = out[key] = Path(out[key]).expanduser().resolve()
            try:
                with open(path, "a", encoding="utf-8"):
                    pass
            except OSError as exc:
                raise UsageError(f"{option} {path}: cannot write it ({exc.strerror})") from None
    return out


def check_bots(cfg, check: Optional[bool], protocol_log: Optional[Path] = None) -> None:
    """``arena run`` and ``arena match`` before the first game: by default every command-line
    bot is handshaken (:mod:`arena.tournament.handshake`); ``--check`` runs the whole
    conformance check, ``--no-check`` nothing. On a cluster the coordinator starts no bot by
    default: each worker checks the commands it is given, in the tier it gives them.
    ``protocol_log`` (``--log-protocol``) gets the handshake's lines, the bot's stderr and the
    verdict (``!``), so a bot that cannot start leaves its story there."""
    if check is False or cfg.play == "inprocess" or (check is None and cfg.executor == "dask"):
        return
    if check:
        from ..process.check_bot import check_commands

        check_commands(cfg.bots, cfg.time_control["move_ms"], echo=lambda t: typer.echo(t, err=True), sandbox=cfg.sandbox)
        return
    from ..tournament.handshake import handshake_commands

    if protocol_log is None:
        handshake_commands(cfg)
        return
    from dataclasses import replace

    from ..errors import ArenaError
    from ..process.transport import LineTransport, ProtocolLog

    plog = ProtocolLog(str(protocol_log), "start-check")
    seen: set = set()
    try:
        for entry in cfg.bots:
            if not entry.cmd or entry.cmd in seen:
                continue
            seen.add(entry.cmd)
            trace = plog.tracer(0, entry.name)
            trace("!", f"starting {shlex.join(entry.cmd)}".encode())
            LineTransport.trace = staticmethod(trace)  # every transport of the check, stderr too
            try:
                handshake_commands(replace(cfg, bots=(entry,)))
            except ArenaError as exc:
                trace("!", str(exc).encode())
                raise
            finally:
                LineTransport.trace = None
            trace("!", b"ready")
    finally:
        plog.close()


def precheck(cfg, allow_changes: bool = False) -> list[dict]:
    """The games already stored in the match's folder, after checking (read-only, before
    anything is printed or played) that this match may continue them; see
    :func:`arena.tournament.runner.check_resume`."""
    from ..errors import ArenaError
    from ..tournament.runner import check_resume
    from ..tournament.store import DB_NAME, Store

    if not (Path(cfg.output) / DB_NAME).exists():
        return []
    try:
        old = Store.open(cfg.output, create=False)
    except ArenaError:
        return []  # the runner opens it for writing and says what is wrong with it
    try:
        check_resume(old, cfg, allow_changes)
        return old.games()
    finally:
        old.close()
