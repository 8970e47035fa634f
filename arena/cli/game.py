"""``arena play``, ``arena cards`` and ``arena replay``: one game, the cards it is played with, and its replay.

``arena play`` prints a result (or JSON) and writes a replay file. Seats are filled in order by the positional bot names (see ``arena bots``), then by the
``--cmd`` commands; with fewer bots than ``--players`` they repeat. Every bot runs as a
process through the referee (:mod:`arena.referee`), the sandbox and the time control.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .app import command, emit_json
from ..botspec.spec import MAX_MS
from ..errors import ArenaError, UsageError
from .options import FaultPolicy, IncrementMs, MoveMs, Params, Rules, Sandbox, StartupMs, parse_rules

_warned: set = set()


def warn_sandbox(record: dict) -> None:
    """Print the tier the game had and what was not in force, in one line, once per process:
    when the tier was chosen for the user (``auto``, a fallback) or something was missing."""
    from ..process.sandbox import describe

    if "requested" not in record and not record.get("unavailable"):
        return  # the tier named, all in force: nothing to say
    line = describe(record)
    if line not in _warned:  # the reasons are in the record (--json)
        _warned.add(line)
        typer.echo(f"arena: {line}", err=True)


#: the help of ``--engine``, shared by play and match
ENGINE_HELP = ("A bot as one spec, cutechess-style: \"name=v2 cmd='python v2/bot.py' st=500ms option.depth=3\" "
               "(keys: name, cmd or bot, dir, ro, tc (a clock in seconds, tc=60+0.5), st (a time a move), move-ms, game-ms, increment-ms, startup-ms, option.NAME; "
               "repeatable; see docs/tournaments.md).")


@command("play")
def play_cmd(
    bots: Optional[List[str]] = typer.Argument(None, help="Registered bot names, one per seat (see `arena bots`)."),
    cmd: List[str] = typer.Option([], "--cmd", help="A bot given as a command line, e.g. \"node bots/examples/js/bot.js\" (repeatable; fills the seats after the named bots)."),
    engine: List[str] = typer.Option([], "--engine", metavar="SPEC", help=ENGINE_HELP + " Fills the seats after --cmd bots."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the deal (R1.5); default 0, or a random one with --human."),
    players: Optional[int] = typer.Option(None, "--players", min=1, max=4, help="Seats; the bots fill them in order, repeating if fewer."),
    rules: Rules = "",
    param: Params = [],
    deal: Optional[Path] = typer.Option(None, "--deal", help="JSON file with both decks' orders: {\"white\": [...], \"black\": [...]}."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
    replay: Optional[Path] = typer.Option(None, "--replay", help="Write the replay (JSON, with per-move times and faults) to this file."),
    sandbox: Sandbox = "auto",
    sandbox_fallback: Optional[str] = typer.Option(None, "--sandbox-fallback", help="The tier to play where --sandbox strict cannot run (the result says which tier the game had)."),
    move_ms: MoveMs = 1000,
    game_ms: Optional[int] = typer.Option(None, "--game-ms", min=0, max=MAX_MS, help="Time budget of a whole game (chess clock), in milliseconds."),
    increment_ms: IncrementMs = 0,
    startup_ms: StartupMs = 10000,
    fault_policy: FaultPolicy = "forfeit",
    pause_idle: bool = typer.Option(False, "--pause-idle", help="Stop the bots that are not on move (their whole process tree is frozen where a freezer cgroup is available, else their process group gets SIGSTOP)."),
    log_dir: Optional[Path] = typer.Option(None, "--log-dir", help="Keep each bot's stderr in this directory."),
    human: bool = typer.Option(False, "--human", help="Take a seat yourself: the game is played in your browser against the bots (see docs/playing.md)."),
    no_browser: bool = typer.Option(False, "--no-browser", help="With --human: print the page's address instead of opening a browser."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="With --human: the port of the page on 127.0.0.1 (default: any free port)."),
    seat: Optional[int] = typer.Option(None, "--seat", min=0, help="With --human: your seat, counted from 0 (default: the last); the bots fill the others in order."),
) -> None:
    """Play one game between bot processes and print the result: scores, ranking, faults.

    With --human you take a seat and play in your browser (see docs/playing.md)."""
    from engine.deal import load_deal

    from ..process.sandbox import sweep_stale
    from ..referee import play_game

    sweep_stale()  # what bots of killed runs left: processes, working folders, cgroups, mounts
    from ..botspec import command_line

    spec = parse_rules(rules, param)
    for text in cmd:
        if not text.strip():
            raise UsageError("--cmd needs a command line, e.g. --cmd \"node bots/examples/js/bot.js\"")
    entries = [b.seat_request() for b in command_line(bots or (), cmd, engine)]
    if human:
        seed, n, seats, seat = _person_seats(entries, players, seat, seed)
    elif seat is not None or no_browser or port:
        raise UsageError("--seat, --port and --no-browser go with --human (a seat of your own)")
    if not human and not entries:
        raise UsageError("name at least one bot (see `arena bots`) or give one with --cmd")
    seed = 0 if seed is None else seed
    n = n if human else players or max(len(entries), 2)
    if len(entries) > n:
        raise UsageError(f"{len(entries)} bots for {n} seats; give --players {len(entries)} or fewer bots")
    seats = seats if human else [dict(entries[i % len(entries)]) for i in range(n)]
    request = {
        "seats": seats, "rules": spec.to_json(), "players": n, "seed": seed,
        "deal": load_deal(deal) if deal else None,
        "time_control": {"move_ms": move_ms, "game_ms": game_ms, "increment_ms": increment_ms, "startup_ms": startup_ms},
        "fault_policy": fault_policy, "pause_idle": pause_idle,
        "sandbox": {"tier": sandbox, "fallback": sandbox_fallback} if sandbox_fallback else sandbox,
        "replay_path": str(replay) if replay else None, "log_dir": str(log_dir) if log_dir else None,
    }
    if human:
        from ..tabletop.run import play_at_table

        out = play_at_table(request, seat, port=port, open_browser=not no_browser,
                            echo=lambda line: typer.echo(line, err=True))
    else:
        out = play_game(request)
    warn_sandbox(out["sandbox"])
    res = out["result"]
    names = [s["name"] for s in out["seats"]]
    result = {"seed": seed, "rules": spec.to_json(), "players": n, "bots": names, **res,
              "faults": [s["faults"] for s in out["seats"]], "sandbox": out["sandbox"],
              "times": [{k: s[k] for k in ("moves", "wall_ms", "cpu_ms", "max_move_ms")} for s in out["seats"]]}
    if as_json:
        emit_json(result)
        if out["replay_error"]:
            raise ArenaError(out["replay_error"])
        return
    typer.echo(f"rules {spec.label()}, seed {seed}, {n} players, {res['rounds']} rounds"
               f"{' (adjudicated: max_rounds reached)' if res['adjudicated'] else ''}, sandbox {out['sandbox']['tier']}")
    typer.echo(f"{'seat':>4}  {'bot':14} {'score':>5} {'rank':>4} {'completed':>9} {'moves':>5} {'avg ms':>7} {'max ms':>7}")
    for s, st in enumerate(out["seats"]):
        avg = st["wall_ms"] / st["moves"] if st["moves"] else 0.0
        typer.echo(f"{s:>4}  {names[s][:14]:14} {res['scores'][s]:>5} {res['ranking'][s]:>4} {res['completed'][s]:>9} "
                   f"{st['moves']:>5} {avg:>7.1f} {st['max_move_ms']:>7.1f}")
        for f in st["faults"]:
            where = "at start-up" if f["move"] is None else f"at move {f['move']}"
            typer.echo(f"      fault {f['verdict']} {where}: {f['detail']}")
    if replay and not out["replay_error"]:
        typer.echo(f"replay written to {replay}")
    if out["replay_error"]:
        raise ArenaError(out["replay_error"])


def _person_seats(entries: list, players: Optional[int], seat: Optional[int], seed: Optional[int]):
    """``arena play --human``: the seed (random unless given: a person must not know the
    deal), the number of seats (the bots and the person, or ``--players``), the seats (the
    person's a placeholder the table fills, the bots in order around it) and the person's."""
    import secrets

    n = players or len(entries) + 1
    if seat is None:
        seat = n - 1
    if seat >= n:
        raise UsageError(f"--seat {seat}: the game has seats 0 to {n - 1}; give --players {seat + 1} or a lower --seat")
    if n > 1 and not entries:
        raise UsageError("name at least one bot to play against (see `arena bots`), or give --players 1 for a solo game")
    others = [dict(entries[i % len(entries)]) for i in range(n - 1)] if entries else []
    seats = others[:seat] + [{"name": "person", "cmd": None}] + others[seat:]
    return (secrets.randbelow(2 ** 31) if seed is None else seed), n, seats, seat


def play_solo_games(argv, spec, games: int, seed: int, time_control: dict, sandbox: str,
                    echo=None) -> list[dict]:
    """``arena solo --cmd``: the bot started by ``argv`` (a command line as typed here, or a
    :class:`arena.botspec.BotSpec`) plays ``games`` solo games (seeds
    ``seed``, ``seed + 1`` ...) through the referee, its process reused from game to game;
    returns each game's result (with ``faults``). The bot is handshaken first: one that
    cannot start stops with a sentence before any game."""
    from types import SimpleNamespace

    from ..process.pool import ProcessPool
    from ..process.sandbox import sweep_stale
    from ..referee import play_game
    from ..botspec import BotSpec
    from ..tournament.handshake import handshake_commands

    sweep_stale()
    bot = argv if isinstance(argv, BotSpec) else BotSpec.command(argv)
    name = bot.name
    handshake_commands(SimpleNamespace(bots=[bot], rules=spec, seats=1, sandbox=sandbox,
                                       time_control=time_control), skip_hint="")
    pool = ProcessPool()
    out = []
    try:
        for i in range(games):
            played = play_game({"seats": [bot.seat_request()],
                                "rules": spec.to_json(), "players": 1, "seed": seed + i, "time_control": time_control,
                                "sandbox": sandbox}, pool)
            if i == 0:
                warn_sandbox(played["sandbox"])
            res = dict(played["result"], faults=played["seats"][0]["faults"])
            out.append(res)
            if echo is not None and res["faults"]:
                f = res["faults"][0]
                where = "at the start" if f["move"] is None else f"at move {f['move']}"
                echo(f"arena: game {i + 1} (seed {seed + i}): {name}: {f['verdict']} {where}: {f['detail']}")
    finally:
        pool.close()
    return out


@command("cards")
def cards_cmd(
    card_id: Optional[str] = typer.Argument(None, metavar="[ID]", help="A card id (W07, B12, GW03) to draw."),
    card_set_name: str = typer.Option("base", "--set", help="Card set to list: base or ghost."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """List the puzzle cards, or draw one card as a 5x5 grid."""
    from engine.cards import card_set


    if card_id is not None:
        for name in ("base", "ghost"):
            cs = card_set(name)
            for p in cs.puzzles:
                if p.id.upper() == card_id.upper():
                    if as_json:
                        emit_json({"id": p.id, "color": p.color, "points": p.points, "reward": p.reward,
                                   "shape": list(p.rows), "cells": p.size})
                        return
                    typer.echo(f"{p.id}  {p.color}, {p.points} points, reward {p.reward}, {p.size} cells")
                    for row in p.rows:
                        typer.echo("  " + " ".join(row))
                    return
        raise UsageError(f"no card {card_id!r} (ids look like W07, B12, GW03; see `arena cards`)")
    cs = card_set(card_set_name)
    if as_json:
        emit_json([{"id": p.id, "color": p.color, "points": p.points, "reward": p.reward, "cells": p.size}
                   for p in cs.puzzles])
        return
    typer.echo(f"{cs.name}: {len(cs.puzzles)} puzzles, shapes " + " ".join(s.name for s in cs.shapes))
    typer.echo(f"{'id':5} {'color':5} {'points':>6} {'reward':>6} {'cells':>5}")
    for p in cs.puzzles:
        typer.echo(f"{p.id:5} {p.color:5} {p.points:>6} {p.reward:>6} {p.size:>5}")


@command("replay")
def replay_cmd(
    path: Path = typer.Argument(..., help="A replay file written by `arena play --replay`."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only check that the replay reproduces."),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Colour the pieces (default: if a terminal)."),
    html_out: Optional[Path] = typer.Option(None, "--html", metavar="OUT.html",
                                            help="Write a self-contained HTML viewer of the game instead."),
    game: Optional[int] = typer.Option(None, "--game", "-g", min=1, metavar="N",
                                       help="Of a --games-out file (a replay per line): game N (default the first)."),
) -> None:
    """Re-simulate a saved game, print it turn by turn, and fail if it does not reproduce.

    PATH is a replay file (`arena play --replay`, a tournament's replays/) or a file of
    one replay per line (`arena match --games-out`), of which --game N picks one."""
    from ..replay.render import use_color
    from ..replay.view import show_replay

    if not path.exists():
        raise UsageError(f"{path}: the replay file does not exist")
    if not path.is_file():
        raise UsageError(f"{path}: not a replay file (it is a folder)")
    if html_out is not None:
        from ..replay.html import write_html

        out = write_html(path, html_out, game_number=game)
        typer.echo(f"{path}: reproduces; viewer written to {out}")
        return
    if color is None:
        color = use_color()
    if color:
        _keep_colour()
    show_replay(path, quiet=quiet, color=color, game_number=game)


def _keep_colour() -> None:
    """Ask click not to strip colour codes from ``echo`` (it does when stdout is not a
    terminal), for ``--color`` into a pipe and for ``FORCE_COLOR``."""
    import importlib

    for name in ("typer._click.globals", "click.globals"):
        try:
            ctx = importlib.import_module(name).get_current_context(silent=True)
        except (ImportError, AttributeError):
            continue
        if ctx is not None:
            ctx.color = True
