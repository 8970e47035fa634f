"""Options read from the command line: rules (``--rules revised,ghost --param
actions_per_turn=4``), what every bot gets (``--each``), the bot name that is a program, and
the options several commands share, declared once (``Annotated`` aliases: ``MoveMs``,
``Sandbox``, ``Wait`` ...)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, List, Optional

import typer
import yaml

from engine import RuleSpec

from ..botspec.spec import MAX_MS
from ..errors import UsageError


def parse_param(text: str) -> tuple[str, object]:
    """``NAME=VALUE``; the value is read as YAML (``4``, ``true``, ``[O1, I2]``)."""
    if "=" not in text:
        raise UsageError(f"--param {text!r}: expected NAME=VALUE, e.g. actions_per_turn=4")
    name, _, raw = text.partition("=")
    name = name.strip()
    if not name:
        raise UsageError(f"--param {text!r}: the parameter name is empty")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        raise UsageError(f"--param {text!r}: cannot read the value {raw!r}") from None
    return name, value


def parse_rules(rules: str, params: list[str]) -> RuleSpec:
    """A :class:`RuleSpec` from ``--rules`` and ``--param`` options."""
    variants = [v.strip() for v in rules.split(",") if v.strip()]
    return RuleSpec.make(variants, dict(parse_param(p) for p in params))


EACH_KEYS = ("tc", "st", "move-ms", "game-ms", "increment-ms", "startup-ms", "dir", "option.NAME")


def parse_each(texts: list[str]) -> dict:
    """``--each KEY=VALUE`` (cutechess-cli's ``-each``): what every bot gets -- its time
    control (``tc=``, ``move-ms=`` ...), options (``option.NAME=``) and, for command-line
    bots, the folder its command is read from (``dir=``) -- in the words of ``--engine``."""
    from ..botspec import parse_spec

    out: dict = {}
    for text in texts:
        for word in shlex.split(text):
            key = word.partition("=")[0]
            if key in ("name", "cmd", "bot") or key.startswith(("ro", "read", "program")):
                raise UsageError(f"--each {word!r}: {key} belongs to one bot (give it in its --engine); "
                                 f"--each takes {', '.join(EACH_KEYS)}")
            if not (key.replace("_", "-") in EACH_KEYS or key in ("workdir", "grace-ms", "grace_ms")
                    or key.startswith("option.")):
                raise UsageError(f"--each {word!r}: unknown key {key!r} (keys: {', '.join(EACH_KEYS)})")
            spec = f"{shlex.quote(word)} bot=each"
            try:
                item = parse_spec(spec)
            except UsageError as exc:
                raise UsageError(str(exc).replace(f"--engine {spec!r}", f"--each {word!r}")) from None
            item.pop("bot")
            for k, v in item.items():
                out[k] = {**out[k], **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def with_each(item: dict, each: dict) -> dict:
    """A bot's entry with ``--each`` under it: its own options and time control win, key
    by key; ``dir`` is for command-line bots (a registered bot is run the same everywhere)."""
    out = dict(item)
    for key, value in each.items():
        if key == "workdir" and "cmd" not in out:
            continue
        if isinstance(value, dict):
            out[key] = {**value, **(out.get(key) or {})}
        else:
            out.setdefault(key, value)
    return out


#: how a program of each kind is run, for the sentence that suggests --cmd
_RUNNERS = {".py": "python3 ", ".js": "node ", ".mjs": "node ", ".rb": "ruby ", ".jar": "java -jar ", ".lua": "lua "}


def suggest_cmd(word: str) -> None:
    """A bot name that is not registered but looks like a program (a path, or a file's
    name) is refused with the ``--cmd`` to give instead."""
    from ..plugins import bots

    if word in bots():
        return
    path = Path(word).expanduser()
    if "/" not in word and path.suffix.lower() not in _RUNNERS and not path.is_file():
        return
    runner = _RUNNERS.get(path.suffix.lower(), "" if "/" in word else "./")
    raise UsageError(f"{word!r} is not a registered bot (see `arena bots`) but a program: give it as "
                     f"--cmd \"{runner}{word}\" (each --cmd bot is named after its file: {path.stem}, or v2/bot "
                     f"when two files share a name)")


# ------------------------------------------------------------ options shared by commands
# One alias per option that means the same in several commands (``arena play``, ``match``,
# ``run``): a command declares ``move_ms: MoveMs = 1000`` and the option reads and is
# described alike everywhere.

#: ``--rules``: the variants of ``play`` and ``match``
Rules = Annotated[str, typer.Option("--rules", metavar="VARIANTS",
                                    help="Variants, comma-separated, e.g. revised,ghost.")]
#: ``--param``: a rule parameter of ``play`` and ``match``
Params = Annotated[List[str], typer.Option("--param", metavar="NAME=VALUE",
                                           help="A rule parameter (repeatable), e.g. actions_per_turn=4.")]
MoveMs = Annotated[int, typer.Option("--move-ms", metavar="MS", min=1, max=MAX_MS,
                                     help="Time limit of one move, in milliseconds.")]
IncrementMs = Annotated[int, typer.Option("--increment-ms", metavar="MS", min=0, max=MAX_MS,
                                          help="Added to the game budget after each move.")]
StartupMs = Annotated[int, typer.Option("--startup-ms", metavar="MS", min=1, max=MAX_MS, help="Time limit of the handshake.")]
FaultPolicy = Annotated[str, typer.Option("--fault-policy", metavar="POLICY",
                                          help="forfeit (the seat passes for the rest of the game, R7.3) or random.")]
Sandbox = Annotated[str, typer.Option("--sandbox", metavar="TIER",
                                      help="auto (the strongest tier here: strict where bubblewrap works), none, "
                                           "basic or strict (see docs/protocol.md).")]
#: ``--check/--no-check`` of ``run`` and ``match``
Check = Annotated[Optional[bool], typer.Option("--check/--no-check",
                                               help="Before the first game every command-line bot is started and "
                                                    "must say ready (the games stop if one cannot); --check runs "
                                                    "the whole conformance check (`arena check-bot`) instead, "
                                                    "--no-check neither.")]
AllowChanges = Annotated[bool, typer.Option("--allow-changes",
                                            help="Continue a stored run although the time control, sandbox, fault "
                                                 "policy or bot options changed (the change is recorded).")]
GamesOut = Annotated[Optional[Path], typer.Option("--games-out", metavar="FILE",
                                                  help="Append every game played to FILE, one JSON line each: its "
                                                       "replay (moves included; `arena replay FILE` shows the "
                                                       "first) with its result under \"game\" (cutechess-cli's "
                                                       "-pgnout).")]
LogProtocol = Annotated[Optional[Path], typer.Option("--log-protocol", metavar="FILE",
                                                     help="Append every line sent to and read from the bot "
                                                          "processes to FILE, with its time, game and seat (not "
                                                          "with --inprocess).")]
OutputFormat = Annotated[str, typer.Option("--output-format", metavar="FORMAT",
                                           help="What is printed while games are played: arena (ours), "
                                                "fastchess or cutechess (theirs, line for line, for scripts that "
                                                "parse those programs' output; -o stays the output folder).")]
Wait = Annotated[int, typer.Option("--wait", min=0, metavar="MS",
                                   help="Each worker waits MS milliseconds between its games (cutechess-cli's "
                                        "-wait).")]
