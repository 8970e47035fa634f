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

import re
import shlex
import sys
from pathlib import Path
from typing import List, Optional

import typer
from typer.core import TyperCommand

from .app import command, emit_json
from .game import ENGINE_HELP
from ..errors import UsageError
from ..tournament.tally import Tally
from .options import parse_each, parse_param, suggest_cmd, with_each

SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model")

# which option a field of the tournament document came from, for error messages
_OPTION_OF = {"name": "--name", "rules": "--rules/--param", "seats": "--seats", "bots": "the bots",
              "format": "--sprt", "games": "--games", "seed": "--seed", "time_control": "the time control",
              "fault_policy": "--fault-policy", "sandbox": "--sandbox", "concurrency": "--concurrency",
              "executor": "--inprocess", "output": "--output", "replays": "--replays", "deals": "--deals",
              "deals_policy": "--deals-policy",
              "anchor": "--anchor", "swap": "--noswap", "deals_order": "--deals-order",
              "deals_start": "--deals-start"}


def _source(doc: dict):
    """A :class:`~arena.tournament.yamlsource.Source` whose errors name the option, not a line."""
    from ..tournament.yamlsource import ConfigError, Source

    class CommandLine(Source):
        def error(self, path: tuple, message: str) -> ConfigError:
            where = _OPTION_OF.get(path[0] if path else "", "the options")
            if path and path[0] == "bots" and len(path) > 1 and isinstance(path[1], int):
                where = f"bot {path[1] + 1}"
            elif path and path[0] in ("time_control", "format") and len(path) > 1:
                where = f"--{str(path[-1]).replace('_', '-')}" if path[0] == "time_control" else f"--sprt {path[-1]}"
            return ConfigError(f"arena match, {where}: {message}")

    return CommandLine(Path("arena-match"), doc, {})


def parse_sprt(texts: list[str]) -> dict:
    """``elo0=0 elo1=10 alpha=0.05 beta=0.05 model=normalized`` (any order, any subset; commas or spaces)."""
    out: dict = {}
    for text in texts:
        for item in re.split(r"[\s,]+", text.strip()):
            if not item:
                continue
            name, value = parse_param(item)
            if name not in SPRT_KEYS:
                raise UsageError(f"--sprt {item!r}: the settings are {', '.join(SPRT_KEYS)}")
            if name == "model":
                from ..tournament.sprt import MODELS

                if value not in MODELS:
                    raise UsageError(f"--sprt {item!r}: the model is {' or '.join(MODELS)}")
                if value != "logistic":  # the default is not written: a stored match stays the same
                    out[name] = value
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UsageError(f"--sprt {item!r}: {name} must be a number")
            out[name] = value
    return out


class _KeepsTypedOrder(TyperCommand):
    """The match command, keeping its raw arguments: bot names and ``--cmd`` bots are played
    in the order they were typed (the first is the SPRT's candidate), which the parsed
    options alone do not tell."""

    def parse_args(self, ctx, args):
        ctx.meta["arena.match.args"] = list(args)
        return super().parse_args(ctx, args)


def typed_order(args: list[str], names: list[str], cmds: list[str], value_options: set[str],
                engines: list[str] = ()) -> list:
    """The bots as typed: registered names (str), ``{"cmd": ...}`` and ``{"engine": ...}``
    entries, in the order of ``args`` (the raw command line); ``names``, ``cmds`` and
    ``engines`` in their parsed order if the raw line cannot be read back."""
    seq: list = []
    i, only_positional = 0, False
    while i < len(args):
        word = args[i]
        if not only_positional and word == "--":
            only_positional = True
        elif not only_positional and word.startswith("-") and len(word) > 1:
            option, eq, value = word.partition("=")
            if option in ("--cmd", "--engine"):
                if not eq:
                    i += 1
                    value = args[i] if i < len(args) else ""
                seq.append({option[2:]: value})
            elif option in value_options and not eq:
                i += 1
        elif not re.match(r"^(elo0|elo1|alpha|beta|model)=", word):
            seq.append(word)
        i += 1
    if [x for x in seq if isinstance(x, str)] != list(names) or \
            [x["cmd"] for x in seq if isinstance(x, dict) and "cmd" in x] != list(cmds) or \
            [x["engine"] for x in seq if isinstance(x, dict) and "engine" in x] != list(engines):
        return list(names) + [{"cmd": c} for c in cmds] + [{"engine": e} for e in engines]
    return seq


def build_document(bots: list, cmds: list[str], *, seats: int, games: Optional[int], sprt: Optional[dict],
                   rules: str, params: list[str], seed: int, time_control: dict, fault_policy: str, sandbox: str,
                   concurrency: Optional[int], inprocess: bool, output: Optional[Path], name: Optional[str],
                   replays: bool, deals: Optional[Path], anchor: Optional[str] = None, gauntlet: bool = False,
                   knockout: Optional[int] = None, swap: bool = True, deals_order: str = "sequential",
                   deals_start: int = 1, each: Optional[dict] = None, seeds: Optional[int] = None,
                   deals_policy: str = "default") -> dict:
    """The tournament document (what a YAML file would hold) of a match's options.

    ``bots`` may mix registered names, ``{"cmd": ...}`` and ``{"engine": SPEC}`` entries in
    the order typed (:func:`typed_order`); ``cmds`` are appended after them. Commands are
    anchored to the current folder (:func:`arena.botspec.anchor`), so the document means the
    same from any folder (``--write-yaml``). ``each`` (:func:`parse_each`) is given to every
    bot, under what the bot says itself; ``seeds``: the gauntlet's heroes are the first N."""
    from ..botspec import CommandError, distinct_names, parse_spec
    from ..botspec import anchor as anchored

    base = str(Path.cwd())
    entries: list = []
    for e in list(bots) + [{"cmd": c} for c in cmds]:
        if isinstance(e, str) and not each:
            entries.append(e)
            continue
        item = {"bot": e} if isinstance(e, str) else parse_spec(e["engine"]) if "engine" in e else {"cmd": e["cmd"]}
        item = with_each(item, each or {})
        if "cmd" in item:
            if not str(item["cmd"]).strip():
                raise UsageError("--cmd needs a command line, e.g. --cmd \"node bots/examples/js/bot.js\"")
            try:
                here = str(Path(base) / item["workdir"]) if item.get("workdir") else base  # dir=: read from there
                item["cmd"] = shlex.join(anchored(item["cmd"], here))
            except CommandError as exc:
                raise UsageError(f"--cmd {item['cmd']!r}: {exc}") from None
        for key in ("program_dir", "workdir"):
            if item.get(key):
                item[key] = str((Path(base) / Path(item[key]).expanduser()).resolve())
        if item.get("read_only"):
            item["read_only"] = [str((Path(base) / Path(p).expanduser()).resolve()) for p in item["read_only"]]
        entries.append(item)
    if len(entries) < 2 and seats > 1:
        raise UsageError("a match needs two bots or more: name them (see `arena bots`) or give them with --cmd")
    unnamed = [i for i, e in enumerate(entries) if isinstance(e, dict) and "cmd" in e and "name" not in e]
    named = {e if isinstance(e, str) else e.get("name") or e.get("bot") for e in entries} - {None}
    found = dict(zip(unnamed, distinct_names([shlex.split(entries[i]["cmd"]) for i in unnamed], taken=named)))
    labels = [e if isinstance(e, str) else e.get("name") or e.get("bot") or found[i] for i, e in enumerate(entries)]
    if name is None:
        name = "match-" + "-vs-".join(re.sub(r"[^A-Za-z0-9_.+-]", "_", x) for x in labels)
    doc: dict = {"name": name, "seats": seats}
    variants = [v.strip() for v in rules.split(",") if v.strip()]
    if variants or params:
        doc["rules"] = {"variants": variants, "params": dict(parse_param(p) for p in params)}
    doc["bots"] = entries
    if sum([sprt is not None, gauntlet, knockout is not None]) > 1:
        raise UsageError("give one of --sprt, --gauntlet and --knockout")
    if seeds is not None and not gauntlet:
        raise UsageError("--seeds N makes the first N bots a gauntlet's heroes: give --gauntlet too")
    if seeds is not None and seeds >= len(labels):
        raise UsageError(f"--seeds {seeds}: a gauntlet needs a field besides its heroes, and there are "
                         f"{len(labels)} bots")
    if sprt is not None:
        doc["format"] = {"type": "sprt", **sprt}
    elif gauntlet and seeds:
        doc["format"] = {"type": "gauntlet", "seeds": seeds}  # the first N bots typed, each against the rest
    elif gauntlet:
        doc["format"] = {"type": "gauntlet", "hero": labels[0]}  # the first bot typed against each other
    elif knockout is not None:
        if games is not None:
            raise UsageError("a knockout plays its bracket to the final: give the pairs of a tie with "
                             "--tie-pairs, not --games")
        doc["format"] = {"type": "knockout", "pairs": knockout}
    if games is not None:
        doc["games"] = games
    elif sprt is None and knockout is None:
        doc["games"] = 100
    if seed:
        doc["seed"] = seed
    doc["time_control"] = {k: v for k, v in time_control.items() if v is not None}
    if fault_policy != "forfeit":
        doc["fault_policy"] = fault_policy
    doc["sandbox"] = sandbox
    if concurrency is not None:
        doc["concurrency"] = concurrency
    if inprocess:
        doc["executor"] = "inprocess"
    if deals is not None:
        doc["deals"] = str(deals)
        if deals_order != "sequential":
            doc["deals_order"] = deals_order
        if deals_start != 1:
            doc["deals_start"] = deals_start
        if deals_policy != "default":
            doc["deals_policy"] = deals_policy
    elif deals_order != "sequential" or deals_start != 1 or deals_policy != "default":
        raise UsageError("--deals-order, --deals-start and --deals-policy choose deals of a book: give it with "
                         "--deals BOOK")
    if not swap:
        doc["swap"] = False
    doc["output"] = str(output) if output is not None else f"results/{name}"
    if anchor is not None or len(labels) >= 2:
        doc["anchor"] = anchor if anchor is not None else labels[1]  # default: the baseline, rated 0
    if not replays:
        doc["replays"] = False
    return doc


@command("match", cls=_KeepsTypedOrder)
def match_cmd(
    ctx: typer.Context,
    bots: Optional[List[str]] = typer.Argument(None, metavar="[BOT]...",
                                               help="Registered bot names (see `arena bots`); after --sprt also "
                                                    "its settings elo1=10 alpha=0.05 ..."),
    cmd: List[str] = typer.Option([], "--cmd", metavar="COMMAND",
                                  help="A bot given as a command line, e.g. \"python3 my_bot.py\" (repeatable; "
                                       "named after its file, or the shortest path that tells two apart: v2/bot)."),
    engine: List[str] = typer.Option([], "--engine", metavar="SPEC", help=ENGINE_HELP),
    each: List[str] = typer.Option([], "--each", metavar="KEY=VALUE",
                                   help="Given to every bot, as cutechess-cli's -each: tc=, move-ms= ..., "
                                        "option.NAME=VALUE, dir= (command-line bots); a bot's own value wins "
                                        "(repeatable)."),
    seeds: Optional[int] = typer.Option(None, "--seeds", min=1, metavar="N",
                                        help="With --gauntlet: the first N bots typed are its heroes, each "
                                             "playing every other bot (not each other), as cutechess-cli's -seeds."),
    games: Optional[int] = typer.Option(None, "--games", "-n", min=1, metavar="N",
                                        help="Games in all, rounded up to whole seat-rotated groups "
                                             "(default 100; with --sprt the most games, default 20000)."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j", min=1,
                                              metavar="N", help="Games at once (default: the core count)."),
    seats: int = typer.Option(2, "--seats", "--players", min=1, max=4, metavar="N", help="Seats per game."),
    rules: str = typer.Option("", "--rules", metavar="VARIANTS", help="Variants, comma-separated, e.g. revised,ghost."),
    param: List[str] = typer.Option([], "--param", metavar="NAME=VALUE",
                                    help="A rule parameter (repeatable), e.g. actions_per_turn=4."),
    sprt: List[str] = typer.Option([], "--sprt", metavar="SETTING",
                                   help="Run an SPRT of the first bot typed (the candidate) against the second "
                                        "(the baseline), names and --cmd bots alike: "
                                        "--sprt elo0=0 elo1=10 alpha=0.05 beta=0.05 (defaults 0, 10, 0.05, 0.05); "
                                        "model=normalized reads elo0 and elo1 as nElo, as fastchess does "
                                        "(default logistic); the match stops when it decides."),
    deals: Optional[Path] = typer.Option(None, "--deals", metavar="BOOK",
                                         help="A deal book (JSON lines, see `arena deals make`) played in order."),
    deals_order: str = typer.Option("sequential", "--deals-order", metavar="ORDER",
                                    help="sequential (the book's order) or random (shuffled by --seed), as "
                                         "cutechess-cli's -openings order=."),
    deals_start: int = typer.Option(1, "--deals-start", min=1, metavar="N",
                                    help="The deal of the book the first pair plays (1: the first), as "
                                         "cutechess-cli's -openings start=."),
    deals_policy: str = typer.Option("default", "--deals-policy", metavar="POLICY",
                                     help="default (a new deal for each pair), or round (alias encounter: every "
                                          "pair of round k plays deal k), as cutechess-cli's -openings policy=."),
    noswap: bool = typer.Option(False, "--noswap",
                                help="Play each deal once, without the seat-swapped repeat (cutechess-cli's "
                                     "-noswap); the SPRT and Elo then count games, not pairs."),
    seed: int = typer.Option(0, "--seed", min=0, metavar="N", help="The match's seed (decides the deals)."),
    move_ms: int = typer.Option(1000, "--move-ms", metavar="MS", min=1, help="Time limit of one move, in milliseconds."),
    game_ms: Optional[int] = typer.Option(None, "--game-ms", metavar="MS", min=1,
                                          help="Time budget of a whole game (chess clock), in milliseconds."),
    increment_ms: int = typer.Option(0, "--increment-ms", metavar="MS", min=0, help="Added to the game budget after each move."),
    startup_ms: int = typer.Option(10000, "--startup-ms", metavar="MS", min=1, help="Time limit of the handshake."),
    fault_policy: str = typer.Option("forfeit", "--fault-policy", metavar="POLICY",
                                     help="forfeit (the seat passes for the rest of the game, R7.3) or random."),
    sandbox: str = typer.Option("auto", "--sandbox", metavar="TIER", help="auto (the strongest tier here: strict where bubblewrap works), none, basic or strict (see docs/protocol.md)."),
    inprocess: bool = typer.Option(False, "--inprocess",
                                   help="Play built-in bots inside the workers (no bot processes; fastest)."),
    dask: Optional[str] = typer.Option(None, "--dask", metavar="ADDRESS",
                                       help="Play on the Dask cluster of this scheduler (tcp://host:8786) instead "
                                            "of local worker processes (see docs/cluster.md)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="DIR",
                                          help="Output folder (default results/NAME); run again to continue."),
    name: Optional[str] = typer.Option(None, "--name", metavar="NAME", help="The match's name (default match-A-vs-B)."),
    replays: bool = typer.Option(True, "--replays/--no-replays", help="Write a replay file per game."),
    write_yaml: Optional[Path] = typer.Option(None, "--write-yaml", metavar="FILE",
                                              help="Write the equivalent tournament file and stop (play it with "
                                                   "`arena run FILE`)."),
    check: Optional[bool] = typer.Option(None, "--check/--no-check",
                                         help="Before the first game every --cmd bot is started and must say "
                                              "ready (stops the match if one cannot); --check runs the whole "
                                              "conformance check (`arena check-bot`) instead, --no-check neither."),
    allow_changes: bool = typer.Option(False, "--allow-changes",
                                       help="Continue a stored match although the time control, sandbox, fault "
                                            "policy or bot options changed (the change is recorded)."),
    gauntlet: bool = typer.Option(False, "--gauntlet",
                                  help="The first bot typed plays each of the others (a gauntlet); --games is "
                                       "the games in all."),
    knockout: bool = typer.Option(False, "--knockout",
                                  help="A knockout cup: the bots seeded in the order typed into a bracket, each "
                                       "tie --tie-pairs seat-swapped pairs (up to 2 more while level, then the "
                                       "better seed), the winner through."),
    tie_pairs: int = typer.Option(1, "--tie-pairs", min=1, metavar="N",
                                  help="With --knockout: the seat-swapped pairs of games of a tie."),
    anchor: Optional[str] = typer.Option(None, "--anchor", metavar="BOT",
                                         help="The bot rated 0 (default: the second bot typed, the baseline)."),
    games_out: Optional[Path] = typer.Option(None, "--games-out", metavar="FILE",
                                             help="Append every game played to FILE, one JSON line each: its "
                                                  "replay (moves included; `arena replay FILE` shows the first) "
                                                  "with its result under \"game\" (cutechess-cli's -pgnout)."),
    log_protocol: Optional[Path] = typer.Option(None, "--log-protocol", metavar="FILE",
                                                help="Append every line sent to and read from the bot processes "
                                                     "to FILE, with its time, game and seat (not with --inprocess)."),
    report_every: int = typer.Option(10, "--report-every", min=1, metavar="N",
                                     help="Print the results block every N games (with --output-format "
                                          "fastchess: every N pairs, as its -ratinginterval)."),
    output_format: str = typer.Option("arena", "--output-format", metavar="FORMAT",
                                      help="The live lines: arena (ours), fastchess or cutechess (theirs, line "
                                           "for line, for scripts that parse those programs' output; -o stays "
                                           "the output folder)."),
    wait: int = typer.Option(0, "--wait", min=0, metavar="MS",
                             help="Each worker waits MS milliseconds between its games (cutechess-cli's -wait)."),
    live: bool = typer.Option(True, "--live/--quiet", help="Print a line per finished game and the results block."),
    progress: bool = typer.Option(False, "--progress/--no-progress", help="Show a progress bar as well."),
    as_json: bool = typer.Option(False, "--json", help="Print only the final summary and standings, as JSON."),
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
    import yaml

    from ..tournament.config import validate

    names, sprt_texts = [], list(sprt)
    for b in bots or []:
        (sprt_texts if re.match(r"^(elo0|elo1|alpha|beta|model)=", b) else names).append(b)
    if sprt_texts and not sprt:
        raise UsageError(f"{sprt_texts[0]!r} is an sprt setting: give it after --sprt")
    for b in names:
        suggest_cmd(b)
    tc = {"move_ms": move_ms, "game_ms": game_ms, "increment_ms": increment_ms, "startup_ms": startup_ms}
    value_options = {o for p in ctx.command.params
                     if getattr(p, "param_type_name", "") == "option" and not getattr(p, "is_flag", False)
                     for o in p.opts}
    ordered = typed_order(ctx.meta.get("arena.match.args") or [], names, cmd, value_options, engine)
    doc = build_document(ordered, [], seats=seats, games=games, sprt=parse_sprt(sprt_texts) if sprt else None,
                         rules=rules, params=param, seed=seed, time_control=tc, fault_policy=fault_policy,
                         sandbox=sandbox, concurrency=concurrency, inprocess=inprocess, output=output, name=name,
                         replays=replays, deals=deals, anchor=anchor, gauntlet=gauntlet,
                         knockout=tie_pairs if knockout else None, swap=not noswap, deals_order=deals_order,
                         deals_start=deals_start, each=parse_each(each), seeds=seeds, deals_policy=deals_policy)
    if dask:
        doc["executor"] = {"type": "dask", "address": dask, **({"play": "inprocess"} if inprocess else {})}
    cfg = validate(_source(doc))
    if write_yaml is not None:
        text = ("# written by `arena match`; play it with `arena run " + str(write_yaml) + "`\n"
                + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
        write_yaml.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {write_yaml}")
        return
    fmt = check_output_format(output_format)
    if fmt != "arena" and as_json:
        raise UsageError("give --json or --output-format, not both")
    files = output_files(cfg, games_out, log_protocol)
    precheck(cfg, allow_changes)
    check_bots(cfg, check, files.get("protocol_log"))
    run_match(cfg, live=live and not as_json, report_every=report_every, progress=progress, as_json=as_json,
              allow_changes=allow_changes, output_format=fmt, wait_ms=wait, **files)


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


def line_buffered() -> None:
    """Live lines reach a pipe (``arena match ... | tee log``) as they are printed: stdout is
    made line-buffered, as a terminal is, instead of block-buffered."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(line_buffering=True)
        except (ValueError, OSError):
            pass


class Output:
    """Standard output while a match runs, and where its results go once it is gone.

    :meth:`say` raises :class:`~arena.tournament.runner.OutputClosed` (through ``signals``)
    when the reader has left, and from then on standard output is ``/dev/null`` (so nothing
    complains at exit). After an interruption :meth:`results` writes to stderr when stdout
    is gone: closed, or a pipe whose reader the same Ctrl-C stopped (``| tee log``)."""

    def __init__(self, signals):
        self.signals = signals
        self.gone = False

    def close(self) -> None:
        """Standard output is gone: point it at ``/dev/null``."""
        from .app import stdout_gone

        self.gone = True
        stdout_gone()

    def say(self, text: str) -> None:
        """One live line on stdout."""
        from tqdm import tqdm

        if self.gone:
            return
        try:
            tqdm.write(text, file=sys.stdout)
        except BrokenPipeError:
            self.close()
            raise self.signals.closed_output() from None

    def reader_left(self, wait_s: float = 1.0) -> bool:
        """Whether stdout is a pipe nobody reads any more, waiting up to ``wait_s`` for its
        reader to go (a terminal's Ctrl-C reaches ``tee`` as it reaches us)."""
        from .app import stdout_closed

        return stdout_closed(wait_s)

    def results(self, lines: list[str]) -> None:
        """The results block after an interruption: stdout if someone reads it, else stderr."""
        if not self.gone and self.signals.received and self.reader_left():
            self.close()
        if not self.gone:
            try:
                for line in lines:
                    sys.stdout.write(line + "\n")
                sys.stdout.flush()
                return
            except BrokenPipeError:
                self.close()
        for line in lines:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def run_match(cfg, live: bool = True, report_every: int = 10, progress: bool = False, as_json: bool = False,
              allow_changes: bool = False, games_out: Optional[Path] = None,
              protocol_log: Optional[Path] = None, output_format: str = "arena", wait_ms: int = 0) -> dict:
    """Run the match ``cfg`` through the tournament runner, printing live results in
    ``output_format`` (``arena``, ``fastchess``, ``cutechess``); returns the summary."""
    from ..tournament.runner import StopSignals

    signals = StopSignals().install()
    try:
        if output_format != "arena" and not as_json:
            return _run_foreign(cfg, signals, output_format, live, report_every, progress, allow_changes,
                                games_out, protocol_log, wait_ms)
        return _run_match(cfg, signals, live, report_every, progress, as_json, allow_changes, games_out,
                          protocol_log, wait_ms)
    finally:
        signals.restore()


def _run_foreign(cfg, signals, fmt: str, live: bool, report_every: int, progress: bool, allow_changes: bool,
                 games_out: Optional[Path], protocol_log: Optional[Path], wait_ms: int) -> dict:
    """A match whose standard output is fastchess's or cutechess-cli's lines, and nothing
    else (ours -- the summary, the standings, the sprt's start -- go to stderr)."""
    from ..tournament.gamelines import game_faults
    from ..tournament.output_formats import EngineOutput
    from ..tournament.runner import Interrupted, run_tournament
    from ..tournament.standings import render_text
    from .tournament import finish_run, stored_report

    stored = precheck(cfg, allow_changes)
    tally = Tally(cfg, stored)
    lines = EngineOutput(cfg, fmt, stored)
    line_buffered()
    out = Output(signals)
    state = {"printed": False}

    def say(texts: list[str]) -> None:
        if live:
            for text in texts:
                out.say(text)

    if stored:
        typer.echo(f"continuing {cfg.name}: {len(stored)} games already stored in {cfg.output}", err=True)

    def on_game(task, outcome) -> None:
        game = tally.add(task, outcome)
        say(lines.finished(task, {**game, "faults": game_faults(task.bots, outcome)}))
        state["printed"] = lines.due(report_every)
        if state["printed"]:
            say(lines.interval())

    try:
        summary = run_tournament(cfg, progress=progress, on_game=on_game, allow_changes=allow_changes,
                                 games_out=games_out, protocol_log=protocol_log, signals=signals,
                                 on_start=lambda task: say(lines.started(task)), wait_ms=wait_ms)
    except Interrupted as exc:
        if signals.output_closed and not signals.received:
            raise typer.Exit(exc.exit_code) from None
        out.results((lines.interval() if live else []) + render_text(stored_report(cfg)).rstrip("\n").split("\n"))
        raise
    rep = finish_run(cfg, summary)
    decision = (summary.get("sprt") or {}).get("decision")
    if not state["printed"] or decision:
        say(lines.interval())
    say(lines.final(decision))
    typer.echo(f"{summary['played']} games played in {summary['elapsed_s']:.1f} s "
               f"({summary['stored']} of {summary['scheduled']} stored in {summary['output']})"
               + (f"; {summary['failed']} games not played, run again to retry" if summary["failed"] else ""),
               err=True)
    typer.echo(render_text(rep), err=True)
    return summary


def _run_match(cfg, signals, live: bool, report_every: int, progress: bool, as_json: bool, allow_changes: bool,
               games_out: Optional[Path], protocol_log: Optional[Path], wait_ms: int = 0) -> dict:
    import json

    from ..tournament.runner import Interrupted, run_tournament
    from ..tournament.standings import render_text
    from .tournament import finish_run, stored_report

    stored = precheck(cfg, allow_changes)
    tally = Tally(cfg, stored)
    line_buffered()
    out = Output(signals)

    def live_figures() -> dict:
        return {"pairs": tally.pairs()} if cfg.seats == 2 else tally.ranks()

    say = out.say

    if live and cfg.format == "sprt":
        o = cfg.format_options
        say(f"SPRT: candidate {o['candidate']} vs baseline {o['baseline']} "
            f"(elo0 {o['elo0']:g}, elo1 {o['elo1']:g}, alpha {o['alpha']:g}, beta {o['beta']:g}"
            + (", model normalized: elo0 and elo1 in nElo)" if o.get("model") == "normalized" else ")"))
    if live and stored:
        say(f"continuing {cfg.name}: {len(stored)} games already stored in {cfg.output}")

    def on_game(task, outcome) -> None:
        game = tally.add(task, outcome)
        if live:
            say(tally.game_line(game))
            if len(tally.games) % report_every == 0:
                for line in tally.report_lines():
                    say(line)

    try:
        summary = run_tournament(cfg, progress=progress, on_game=on_game, allow_changes=allow_changes,
                                 games_out=games_out, protocol_log=protocol_log, signals=signals, wait_ms=wait_ms)
    except Interrupted as exc:
        if signals.output_closed and not signals.received:
            raise typer.Exit(exc.exit_code) from None  # the reader left (| head): nothing to say
        # as cutechess-cli and fastchess do: the results so far, then the exit code (130, 143)
        if as_json:
            lines = [json.dumps({"interrupted": True, "summary": exc.summary, "live": live_figures(),
                                 **stored_report(cfg)}, sort_keys=True)]
        else:
            lines = (tally.report_lines() if live else []) + render_text(stored_report(cfg)).rstrip("\n").split("\n")
        out.results(lines)
        raise
    rep = finish_run(cfg, summary)
    if as_json:
        emit_json({"summary": summary, "live": live_figures(), **rep})
        return summary
    if live and len(tally.games) % report_every != 0:
        for line in tally.report_lines():
            say(line)
    typer.echo(f"{summary['played']} games played in {summary['elapsed_s']:.1f} s "
               f"({summary['stored']} of {summary['scheduled']} stored in {summary['output']})"
               + (f"; {summary['failed']} games not played, run again to retry" if summary["failed"] else ""))
    typer.echo(render_text(rep))
    return summary
