"""The tournament document of ``arena match``: what a tournament file would hold, built from
the command line (bots in the order typed, the format, rules, deals, time control), so that
a match is validated, stored and continued as any tournament (:mod:`.match` is the command).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Optional

from ..errors import UsageError
from .options import parse_param, with_each

SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model")
#: a word typed among the bots that is an sprt setting, not a bot
SPRT_WORD = re.compile(r"^(elo0|elo1|alpha|beta|model)=")

# which option a field of the tournament document came from, for error messages
_OPTION_OF = {"name": "--name", "rules": "--rules/--param", "seats": "--seats", "bots": "the bots",
              "format": "--sprt", "games": "--games", "seed": "--seed", "time_control": "the time control",
              "fault_policy": "--fault-policy", "sandbox": "--sandbox", "concurrency": "--concurrency",
              "executor": "--inprocess", "output": "--output", "replays": "--replays", "deals": "--deals",
              "deals_policy": "--deals-policy",
              "anchor": "--anchor", "swap": "--noswap", "deals_order": "--deals-order",
              "deals_start": "--deals-start"}


def command_line_source(doc: dict):
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
        elif not SPRT_WORD.match(word):
            seq.append(word)
        i += 1
    if [x for x in seq if isinstance(x, str)] != list(names) or \
            [x["cmd"] for x in seq if isinstance(x, dict) and "cmd" in x] != list(cmds) or \
            [x["engine"] for x in seq if isinstance(x, dict) and "engine" in x] != list(engines):
        return list(names) + [{"cmd": c} for c in cmds] + [{"engine": e} for e in engines]
    return seq


def _anchored_entry(item: dict, base: str) -> dict:
    """A bot's entry with its command and folders made absolute from ``base`` (where the
    command was typed), so the document means the same from any folder."""
    from ..botspec import CommandError
    from ..botspec import anchor as anchored

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
    return item


def bot_entries(bots: list, cmds: list[str], each: Optional[dict]) -> list:
    """The document's ``bots``: a registered name as typed, or an entry (``--cmd``,
    ``--engine``, or any bot with ``--each``) anchored to the current folder."""
    from ..botspec import parse_spec

    base = str(Path.cwd())
    entries: list = []
    for e in list(bots) + [{"cmd": c} for c in cmds]:
        if isinstance(e, str) and not each:
            entries.append(e)
            continue
        item = {"bot": e} if isinstance(e, str) else parse_spec(e["engine"]) if "engine" in e else {"cmd": e["cmd"]}
        entries.append(_anchored_entry(with_each(item, each or {}), base))
    return entries


def bot_labels(entries: list) -> list[str]:
    """The bots' names: as given, else a command's file (the shortest path telling two apart)."""
    from ..botspec import distinct_names

    unnamed = [i for i, e in enumerate(entries) if isinstance(e, dict) and "cmd" in e and "name" not in e]
    named = {e if isinstance(e, str) else e.get("name") or e.get("bot") for e in entries} - {None}
    found = dict(zip(unnamed, distinct_names([shlex.split(entries[i]["cmd"]) for i in unnamed], taken=named)))
    return [e if isinstance(e, str) else e.get("name") or e.get("bot") or found[i] for i, e in enumerate(entries)]


def match_format(labels: list[str], games: Optional[int], sprt: Optional[dict], gauntlet: bool,
                 knockout: Optional[int], seeds: Optional[int]) -> Optional[dict]:
    """The document's ``format`` from ``--sprt``, ``--gauntlet`` (``--seeds``) or ``--knockout``
    (None: a round robin), refusing the options that do not go together."""
    if sum([sprt is not None, gauntlet, knockout is not None]) > 1:
        raise UsageError("give one of --sprt, --gauntlet and --knockout")
    if seeds is not None and not gauntlet:
        raise UsageError("--seeds N makes the first N bots a gauntlet's heroes: give --gauntlet too")
    if seeds is not None and seeds >= len(labels):
        raise UsageError(f"--seeds {seeds}: a gauntlet needs a field besides its heroes, and there are "
                         f"{len(labels)} bots")
    if sprt is not None:
        return {"type": "sprt", **sprt}
    if gauntlet and seeds:
        return {"type": "gauntlet", "seeds": seeds}  # the first N bots typed, each against the rest
    if gauntlet:
        return {"type": "gauntlet", "hero": labels[0]}  # the first bot typed against each other
    if knockout is not None:
        if games is not None:
            raise UsageError("a knockout plays its bracket to the final: give the pairs of a tie with "
                             "--tie-pairs, not --games")
        return {"type": "knockout", "pairs": knockout}
    return None


def deal_fields(deals: Optional[Path], deals_order: str, deals_start: int, deals_policy: str) -> dict:
    """The document's deal book fields: those that differ from the defaults, and only with a book."""
    if deals is None:
        if deals_order != "sequential" or deals_start != 1 or deals_policy != "default":
            raise UsageError("--deals-order, --deals-start and --deals-policy choose deals of a book: give it with "
                             "--deals BOOK")
        return {}
    out: dict = {"deals": str(deals)}
    if deals_order != "sequential":
        out["deals_order"] = deals_order
    if deals_start != 1:
        out["deals_start"] = deals_start
    if deals_policy != "default":
        out["deals_policy"] = deals_policy
    return out


def play_fields(seed: int, time_control: dict, fault_policy: str, sandbox: str, concurrency: Optional[int],
                inprocess: bool) -> dict:
    """The document's fields of how games are played: seed, time control, faults, sandbox, workers."""
    out: dict = {}
    if seed:
        out["seed"] = seed
    out["time_control"] = {k: v for k, v in time_control.items() if v is not None}
    if fault_policy != "forfeit":
        out["fault_policy"] = fault_policy
    out["sandbox"] = sandbox
    if concurrency is not None:
        out["concurrency"] = concurrency
    if inprocess:
        out["executor"] = "inprocess"
    return out


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
    entries = bot_entries(bots, cmds, each)
    if len(entries) < 2 and seats > 1:
        raise UsageError("a match needs two bots or more: name them (see `arena bots`) or give them with --cmd")
    labels = bot_labels(entries)
    if name is None:
        name = "match-" + "-vs-".join(re.sub(r"[^A-Za-z0-9_.+-]", "_", x) for x in labels)
    doc: dict = {"name": name, "seats": seats}
    variants = [v.strip() for v in rules.split(",") if v.strip()]
    if variants or params:
        doc["rules"] = {"variants": variants, "params": dict(parse_param(p) for p in params)}
    doc["bots"] = entries
    fmt = match_format(labels, games, sprt, gauntlet, knockout, seeds)
    if fmt is not None:
        doc["format"] = fmt
    if games is not None:
        doc["games"] = games
    elif sprt is None and knockout is None:
        doc["games"] = 100
    doc.update(play_fields(seed, time_control, fault_policy, sandbox, concurrency, inprocess))
    doc.update(deal_fields(deals, deals_order, deals_start, deals_policy))
    if not swap:
        doc["swap"] = False
    doc["output"] = str(output) if output is not None else f"results/{name}"
    if anchor is not None or len(labels) >= 2:
        doc["anchor"] = anchor if anchor is not None else labels[1]  # default: the baseline, rated 0
    if not replays:
        doc["replays"] = False
    return doc
