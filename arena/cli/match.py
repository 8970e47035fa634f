"""``arena match``: a tournament on one command line, with live results as games finish.

What cutechess-cli and fastchess users type::

    arena match greedy random --games 200 -j 2 --sprt elo0=0 elo1=10 alpha=0.05 beta=0.05

The options are turned into the same document a tournament file holds and validated by the
same code (:func:`arena.tournament.config.validate`), so a match is a tournament like any
other: the same schedule of seat-rotated groups, the same store in ``--output`` (run the
command again to continue; ``arena standings DIR`` works on it), and ``--write-yaml FILE``
writes the equivalent tournament file instead of playing. Bots play in the order typed,
names and ``--cmd`` alike (the first is an sprt's candidate, said at start); every ``--cmd``
bot is handshaken before the first game (:mod:`arena.tournament.handshake`); a folder that
holds another match, or this one under other play settings, is refused before anything is
printed (:func:`arena.tournament.runner.check_resume`). While games finish it prints one
line per game with how it ended (``{greedy: timeout at move 12}``) and, every
``--report-every`` games, each pair's W/D/L with Elo, nElo and their 95% intervals (and the
LLR of an sprt) at two seats, or each bot's mean rank and pairwise wins at more. Lines are
flushed as printed (a pipe sees them live); Ctrl-C and SIGTERM print the results so far, on
stderr when standard output is gone (``arena match ... | tee log``: the terminal's Ctrl-C
stops ``tee`` too), and ``games.jsonl`` and ``--games-out`` hold every stored game however
the run stops. A reader that leaves (``| head -3``) stops the match quietly (exit 141, as a
program stopped by SIGPIPE); run the same command again to continue.

The formats of cutechess-cli and fastchess: ``--sprt`` (``model=normalized`` for nElo
bounds), ``--gauntlet`` (``--seeds N`` heroes), ``--knockout``; the rating ``--anchor`` (the
baseline by default); ``--each`` (what every bot gets), ``--wait``; ``--noswap``,
``--deals-order``, ``--deals-start``, ``--deals-policy``; ``--games-out`` (a replay per line)
and ``--log-protocol`` (every line to and from the bots, their stderr, the start check and
the faults); and their output, line for line, with ``--output-format fastchess|cutechess``
(:mod:`arena.tournament.output_formats`) for the scripts that read it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, List, Optional

import typer
from typer.core import TyperCommand

from ..errors import UsageError
from ..tournament.tally import Tally  # noqa: F401  (the live figures of a match, read here by their tests)
from .app import command
from .game import ENGINE_HELP
from .live import run_match
from .match_document import SPRT_WORD, build_document, command_line_source, parse_sprt, typed_order
from .options import (AllowChanges, Check, FaultPolicy, GamesOut, IncrementMs, LogProtocol, MoveMs, OutputFormat,
                      Params, Rules, Sandbox, StartupMs, Wait, parse_each, suggest_cmd)
from .prechecks import check_bots, check_output_format, output_files, precheck
from ..botspec.spec import MAX_MS

__all__ = ["build_document", "match_cmd", "parse_sprt", "typed_order"]


class _KeepsTypedOrder(TyperCommand):
    """The match command, keeping its raw arguments: bot names and ``--cmd`` bots are played
    in the order they were typed (the first is the SPRT's candidate), which the parsed
    options alone do not tell."""

    def parse_args(self, ctx, args):
        ctx.meta["arena.match.args"] = list(args)
        return super().parse_args(ctx, args)


# ------------------------------------------------------------ the options of match alone
Bots = Annotated[Optional[List[str]], typer.Argument(metavar="[BOT]...",
                                                     help="Registered bot names (see `arena bots`); after --sprt "
                                                          "also its settings elo1=10 alpha=0.05 ...")]
Cmds = Annotated[List[str], typer.Option("--cmd", metavar="COMMAND",
                                         help="A bot given as a command line, e.g. \"python3 my_bot.py\" "
                                              "(repeatable; named after its file, or the shortest path that tells "
                                              "two apart: v2/bot).")]
Engines = Annotated[List[str], typer.Option("--engine", metavar="SPEC", help=ENGINE_HELP)]
Each = Annotated[List[str], typer.Option("--each", metavar="KEY=VALUE",
                                         help="Given to every bot, as cutechess-cli's -each: tc=, move-ms= ..., "
                                              "option.NAME=VALUE, dir= (command-line bots); a bot's own value wins "
                                              "(repeatable).")]
Seeds = Annotated[Optional[int], typer.Option("--seeds", min=1, metavar="N",
                                              help="With --gauntlet: the first N bots typed are its heroes, each "
                                                   "playing every other bot (not each other), as cutechess-cli's "
                                                   "-seeds.")]
Games = Annotated[Optional[int], typer.Option("--games", "-n", min=1, metavar="N",
                                              help="Games in all, rounded up to whole seat-rotated groups "
                                                   "(default 100; with --sprt the most games, default 20000).")]
Concurrency = Annotated[Optional[int], typer.Option("--concurrency", "-j", min=1, metavar="N",
                                                    help="Games at once (default: the core count).")]
Seats = Annotated[int, typer.Option("--seats", "--players", min=1, max=4, metavar="N", help="Seats per game.")]
Sprt = Annotated[List[str], typer.Option("--sprt", metavar="SETTING",
                                         help="Run an SPRT of the first bot typed (the candidate) against the "
                                              "second (the baseline), names and --cmd bots alike: "
                                              "--sprt elo0=0 elo1=10 alpha=0.05 beta=0.05 (defaults 0, 10, 0.05, "
                                              "0.05); model=normalized reads elo0 and elo1 as nElo, as fastchess "
                                              "does (default logistic); the match stops when it decides.")]
Deals = Annotated[Optional[Path], typer.Option("--deals", metavar="BOOK",
                                               help="A deal book (JSON lines, see `arena deals make`) played in "
                                                    "order.")]
DealsOrder = Annotated[str, typer.Option("--deals-order", metavar="ORDER",
                                         help="sequential (the book's order) or random (shuffled by --seed), as "
                                              "cutechess-cli's -openings order=.")]
DealsStart = Annotated[int, typer.Option("--deals-start", min=1, metavar="N",
                                         help="The deal of the book the first pair plays (1: the first), as "
                                              "cutechess-cli's -openings start=.")]
DealsPolicy = Annotated[str, typer.Option("--deals-policy", metavar="POLICY",
                                          help="default (a new deal for each pair), or round (alias encounter: "
                                               "every pair of round k plays deal k), as cutechess-cli's -openings "
                                               "policy=.")]
NoSwap = Annotated[bool, typer.Option("--noswap",
                                      help="Play each deal once, without the seat-swapped repeat (cutechess-cli's "
                                           "-noswap); the SPRT and Elo then count games, not pairs.")]
Seed = Annotated[int, typer.Option("--seed", min=0, metavar="N", help="The match's seed (decides the deals).")]
GameMs = Annotated[Optional[int], typer.Option("--game-ms", metavar="MS", min=1, max=MAX_MS,
                                               help="Time budget of a whole game (chess clock), in milliseconds.")]
InProcess = Annotated[bool, typer.Option("--inprocess",
                                         help="Play built-in bots inside the workers (no bot processes; fastest).")]
Dask = Annotated[Optional[str], typer.Option("--dask", metavar="ADDRESS",
                                             help="Play on the Dask cluster of this scheduler (tcp://host:8786) "
                                                  "instead of local worker processes (see docs/cluster.md).")]
OutputDir = Annotated[Optional[Path], typer.Option("--output", "-o", metavar="DIR",
                                                help="Output folder (default results/NAME); run again to "
                                                     "continue.")]
Name = Annotated[Optional[str], typer.Option("--name", metavar="NAME",
                                             help="The match's name (default match-A-vs-B).")]
Replays = Annotated[bool, typer.Option("--replays/--no-replays", help="Write a replay file per game.")]
WriteYaml = Annotated[Optional[Path], typer.Option("--write-yaml", metavar="FILE",
                                                   help="Write the equivalent tournament file and stop (play it "
                                                        "with `arena run FILE`).")]
Gauntlet = Annotated[bool, typer.Option("--gauntlet",
                                        help="The first bot typed plays each of the others (a gauntlet); --games "
                                             "is the games in all.")]
Knockout = Annotated[bool, typer.Option("--knockout",
                                        help="A knockout cup: the bots seeded in the order typed into a bracket, "
                                             "each tie --tie-pairs seat-swapped pairs (up to 2 more while level, "
                                             "then the better seed), the winner through.")]
TiePairs = Annotated[int, typer.Option("--tie-pairs", min=1, metavar="N",
                                       help="With --knockout: the seat-swapped pairs of games of a tie.")]
Anchor = Annotated[Optional[str], typer.Option("--anchor", metavar="BOT",
                                               help="The bot rated 0 (default: the second bot typed, the "
                                                    "baseline).")]
ReportEvery = Annotated[int, typer.Option("--report-every", min=1, metavar="N",
                                          help="Print the results block every N games (with --output-format "
                                               "fastchess: every N pairs, as its -ratinginterval).")]
Live = Annotated[bool, typer.Option("--live/--quiet", help="Print a line per finished game and the results block.")]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar as well.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print only the final summary and standings, as JSON.")]


def _bots_and_sprt_words(bots: Optional[List[str]], sprt: List[str]) -> tuple[list[str], list[str]]:
    """The bot names typed, and the sprt settings typed among them (``--sprt elo0=0 elo1=10``:
    the option takes one value, the rest land among the bots)."""
    names, sprt_texts = [], list(sprt)
    for b in bots or []:
        (sprt_texts if SPRT_WORD.match(b) else names).append(b)
    if sprt_texts and not sprt:
        raise UsageError(f"{sprt_texts[0]!r} is an sprt setting: give it after --sprt")
    for b in names:
        suggest_cmd(b)
    return names, sprt_texts


def _value_options(ctx: typer.Context) -> set[str]:
    """The options of the command that take a value (the word after them is not a bot)."""
    return {o for p in ctx.command.params
            if getattr(p, "param_type_name", "") == "option" and not getattr(p, "is_flag", False)
            for o in p.opts}


def _write_yaml(doc: dict, path: Path) -> None:
    """``--write-yaml FILE``: the tournament file of the match, to play with ``arena run``."""
    import yaml

    text = ("# written by `arena match`; play it with `arena run " + str(path) + "`\n"
            + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
    path.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {path}")


@command("match", cls=_KeepsTypedOrder)
def match_cmd(
    ctx: typer.Context,
    bots: Bots = None,
    cmd: Cmds = [],
    engine: Engines = [],
    each: Each = [],
    seeds: Seeds = None,
    games: Games = None,
    concurrency: Concurrency = None,
    seats: Seats = 2,
    rules: Rules = "",
    param: Params = [],
    sprt: Sprt = [],
    deals: Deals = None,
    deals_order: DealsOrder = "sequential",
    deals_start: DealsStart = 1,
    deals_policy: DealsPolicy = "default",
    noswap: NoSwap = False,
    seed: Seed = 0,
    move_ms: MoveMs = 1000,
    game_ms: GameMs = None,
    increment_ms: IncrementMs = 0,
    startup_ms: StartupMs = 10000,
    fault_policy: FaultPolicy = "forfeit",
    sandbox: Sandbox = "auto",
    inprocess: InProcess = False,
    dask: Dask = None,
    output: OutputDir = None,
    name: Name = None,
    replays: Replays = True,
    write_yaml: WriteYaml = None,
    check: Check = None,
    allow_changes: AllowChanges = False,
    gauntlet: Gauntlet = False,
    knockout: Knockout = False,
    tie_pairs: TiePairs = 1,
    anchor: Anchor = None,
    games_out: GamesOut = None,
    log_protocol: LogProtocol = None,
    report_every: ReportEvery = 10,
    output_format: OutputFormat = "arena",
    wait: Wait = 0,
    live: Live = True,
    progress: Progress = False,
    as_json: AsJson = False,
) -> None:
    """Play a match on one command line, like cutechess-cli or fastchess, with live results.

    A match is a tournament underneath: its folder holds the same store, running the same
    command again continues it, and `arena standings DIR` shows it. Two bots play seat-swapped
    pairs of games on one deal each; with --seats 3 or 4 every set of bots plays seat-rotated
    groups (with --sprt, the first bot against copies of the second).

    Lines reach a pipe as they are printed (`arena match ... | tee log`). Ctrl-C or SIGTERM
    stops the match, prints the results so far (on stderr if stdout is gone) and exits 130
    (Ctrl-C) or 143 (SIGTERM); a closed stdout (`| head -3`) stops it quietly with 141. Run
    the same command again to continue.
    """
    from ..tournament.config import validate

    names, sprt_texts = _bots_and_sprt_words(bots, sprt)
    tc = {"move_ms": move_ms, "game_ms": game_ms, "increment_ms": increment_ms, "startup_ms": startup_ms}
    ordered = typed_order(ctx.meta.get("arena.match.args") or [], names, cmd, _value_options(ctx), engine)
    doc = build_document(ordered, [], seats=seats, games=games, sprt=parse_sprt(sprt_texts) if sprt else None,
                         rules=rules, params=param, seed=seed, time_control=tc, fault_policy=fault_policy,
                         sandbox=sandbox, concurrency=concurrency, inprocess=inprocess, output=output, name=name,
                         replays=replays, deals=deals, anchor=anchor, gauntlet=gauntlet,
                         knockout=tie_pairs if knockout else None, swap=not noswap, deals_order=deals_order,
                         deals_start=deals_start, each=parse_each(each), seeds=seeds, deals_policy=deals_policy)
    if dask:
        doc["executor"] = {"type": "dask", "address": dask, **({"play": "inprocess"} if inprocess else {})}
    cfg = validate(command_line_source(doc))
    if write_yaml is not None:
        return _write_yaml(doc, write_yaml)
    fmt = check_output_format(output_format)
    if fmt != "arena" and as_json:
        raise UsageError("give --json or --output-format, not both")
    files = output_files(cfg, games_out, log_protocol)
    precheck(cfg, allow_changes)
    check_bots(cfg, check, files.get("protocol_log"))
    run_match(cfg, live=live and not as_json, report_every=report_every, progress=progress, as_json=as_json,
              allow_changes=allow_changes, output_format=fmt, wait_ms=wait, **files)
