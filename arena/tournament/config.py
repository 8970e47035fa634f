"""The tournament file: its schema, validation with file/line/field errors, and the config.

A tournament file is YAML (see ``docs/tournaments.md`` for every field). :func:`load_config`
reads it, checks every field against the schema below before anything runs, and returns a
:class:`TournamentConfig` of plain data. Any mistake -- an unknown key, a wrong type, a
missing bot executable, an unknown variant or parameter, an impossible seat count -- raises
:class:`ConfigError` (exit code 2) whose message names the file, the line and the field.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine import EngineError, RuleSpec, compile_rules

from ..botspec import BotSpec, CommandError, NameError_, check_name, distinct_names, locate
from ..botspec.spec import MAX_MS
from .sizes import cycle_length, rounds_of
from .yamlsource import ConfigError, Source, load_with_lines

FORMATS = ("round-robin", "gauntlet", "sprt", "swiss", "knockout")
FAULT_POLICIES = ("forfeit", "random")
SANDBOX_TIERS = ("auto", "none", "basic", "strict")
FALLBACK_TIERS = ("none", "basic", "strict")
EXECUTORS = ("local", "dask")
PLAY_MODES = ("bots", "inprocess")

TOP_KEYS = {
    "name": "the tournament's name (used in every game key)",
    "rules": "variants and parameters",
    "seats": "seats per game, 1-4",
    "bots": "the bots",
    "format": "round-robin, gauntlet, sprt, swiss or knockout",
    "rounds": "how many times every table is played (each time as a seat-rotated group)",
    "games": "how many games in all (rounded up to whole groups); for sprt, the most games",
    "seed": "the tournament's seed",
    "time_control": "move_ms, game_ms, increment_ms, startup_ms, grace_ms",
    "fault_policy": "forfeit or random",
    "sandbox": "auto (the default: the strongest tier here), none, basic or strict, or {tier: strict, fallback: basic}",
    "concurrency": "games played at once",
    "executor": "local or dask, and how games are played",
    "output": "the output folder",
    "anchor": "the bot whose rating is 0 (default: an sprt's baseline, else random if present, else the first bot)",
    "replays": "write a replay file per game",
    "pause_idle": "pause bots while it is not their turn",
    "fresh_process": "start every bot process anew for each game (default: processes are reused)",
    "max_games_per_process": "games one bot process plays before it is replaced (default 100)",
    "deals": "a deal book (JSON lines, `arena deals make`): group i plays deal i",
    "deals_order": "sequential (the default) or random: the book's deals in a shuffled order (by the seed)",
    "deals_start": "the deal of the book the first group plays (1, the first)",
    "deals_policy": "default (a new deal for each group) or round (alias encounter): every table of round k plays deal k",
    "swap": "play every seat rotation of a deal (true, the default) or only the first (false)",
}
TIME_KEYS = {"move_ms": 1000, "game_ms": None, "increment_ms": 0, "startup_ms": 10000, "grace_ms": 50}
TIME_MODES = ("clock", "bank")
FORMAT_KEYS = {"round-robin": set(), "gauntlet": {"hero", "seeds"}, "swiss": set(),
               "sprt": {"candidate", "elo0", "elo1", "alpha", "beta", "model"}, "knockout": {"pairs", "extra_pairs"}}
KNOCKOUT_DEFAULTS = {"pairs": 1, "extra_pairs": 2}
SPRT_DEFAULTS = {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05}


#: one bot of a tournament: :class:`arena.botspec.BotSpec` (its name kept for callers)
BotEntry = BotSpec


@dataclass(frozen=True)
class TournamentConfig:
    """A validated tournament file, as plain data."""

    name: str
    path: str
    rules: RuleSpec
    seats: int
    bots: tuple[BotEntry, ...]
    format: str
    format_options: dict
    rounds: int | None
    games: int | None
    seed: int
    time_control: dict
    fault_policy: str
    sandbox: str | dict  # a tier, or {"tier": ..., "fallback": ...}
    concurrency: int
    executor: str
    address: str | None
    play: str
    output: Path
    anchor: str | None
    replays: bool
    pause_idle: bool
    fresh_process: bool = False
    max_games_per_process: int = 100
    deals: tuple = ()
    deals_path: str | None = None
    deals_order: str = "sequential"
    deals_start: int = 1
    swap: bool = True
    deals_policy: str = "default"

    @property
    def rotations(self) -> int:
        """Games of a group: every seat rotation of its deal, or one without ``swap``."""
        return self.seats if self.swap else 1

    def deal_for(self, group: int) -> dict | None:
        """The explicit deal of ``group`` from the deal book (cycled from ``deals_start``; in
        an order shuffled by the seed with ``deals_order: random``), or None (from the seed)."""
        if not self.deals:
            return None
        if self.deals_policy != "default":  # round/encounter: every table of round k plays deal k
            group //= cycle_length(self)
        i = (self.deals_start - 1 + group) % len(self.deals)
        if self.deals_order == "random":
            order = self.__dict__.get("_deal_order")
            if order is None:
                import random

                order = list(range(len(self.deals)))
                random.Random(f"deals:{self.seed}").shuffle(order)
                object.__setattr__(self, "_deal_order", order)
            i = order[i]
        return self.deals[i]

    def bot(self, name: str) -> BotEntry:
        """The bot with display name ``name`` (a dict look-up: fields of thousands of bots)."""
        index = self.__dict__.get("_by_name")
        if index is None:
            index = {b.name: b for b in self.bots}
            object.__setattr__(self, "_by_name", index)
        return index[name]

    def with_overrides(self, output=None, concurrency=None, dask=None, play=None, deals=None) -> "TournamentConfig":
        """The config with command-line overrides applied (``deals``: a deal book's path)."""
        cfg = self
        if deals is not None:
            cfg = replace(cfg, deals=read_book(deals, cfg.rules, cfg.seats), deals_path=str(Path(deals).resolve()))
        if output is not None:
            cfg = replace(cfg, output=Path(output))
        if concurrency is not None:
            cfg = replace(cfg, concurrency=int(concurrency))
        if dask is not None:
            cfg = replace(cfg, executor="dask", address=dask)
        if play is not None:
            cfg = replace(cfg, play=play)
        return cfg

    def fingerprint(self) -> dict:
        """What decides the schedule and the games: a stored run is resumed only if it matches."""
        return {"name": self.name, "rules": self.rules.to_json(), "seats": self.seats,
                "bots": [[b.name, b.bot, list(b.cmd) if b.cmd else None] for b in self.bots],
                "format": self.format, "format_options": self.format_options,
                "rounds": self.rounds, "games": self.games, "seed": self.seed,
                **({"deals": _digest(self.deals)} if self.deals else {}),
                **({"deals_order": self.deals_order} if self.deals and self.deals_order != "sequential" else {}),
                **({"deals_start": self.deals_start} if self.deals and self.deals_start != 1 else {}),
                **({"deals_policy": self.deals_policy} if self.deals and self.deals_policy != "default" else {}),
                **({"swap": False} if not self.swap else {})}


def load_config(path) -> TournamentConfig:
    """Read and validate a tournament file; raises :class:`ConfigError` naming file, line and field."""
    src = load_with_lines(Path(path))
    return validate(src)


def validate(src: Source) -> TournamentConfig:
    """Check ``src`` against the schema and build the config."""
    doc = src.value
    if not isinstance(doc, dict):
        raise src.error((), "a tournament file must be a mapping of fields (name, bots, format, ...)")
    for key in doc:
        if key == "rule_sets":
            raise src.error((key,), "rule_sets make this an experiment file: run it with `arena experiment FILE`")
        if key not in TOP_KEYS:
            raise src.error((key,), f"unknown key (known keys: {', '.join(TOP_KEYS)})")
    if "name" not in doc:
        raise src.error((), "the field 'name' is missing")
    name = _str(src, ("name",), doc["name"])
    if not name or any(c in name for c in "/\\\n"):
        raise src.error(("name",), "the name must be non-empty and contain no slash")
    seats = _int(src, ("seats",), doc.get("seats", 2), 1)
    if seats > 4:
        raise src.error(("seats",), f"R1: a game has 1 to 4 seats, not {seats}")
    rules = _rules(src, doc.get("rules"), seats)
    executor, address, play = _executor(src, doc.get("executor"))
    bots = _bots(src, doc.get("bots"), play)
    fmt, fopts = _format(src, doc.get("format", "round-robin"), bots, seats)
    rounds = _int(src, ("rounds",), doc["rounds"], 1) if doc.get("rounds") is not None else None
    games = _int(src, ("games",), doc["games"], 1) if doc.get("games") is not None else None
    if rounds is not None and games is not None:
        raise src.error(("games",), "give either 'rounds' or 'games', not both")
    if fmt == "sprt" and rounds is not None:
        raise src.error(("rounds",), "an sprt runs until the test decides: give 'games' as the most games, not 'rounds'")
    if fmt == "knockout":
        if rounds is not None or games is not None:
            raise src.error(("rounds",) if rounds is not None else ("games",),
                            "a knockout plays its bracket to the final: give the games of a tie as "
                            "format.pairs (and format.extra_pairs), not 'rounds' or 'games'")
        rounds = rounds_of(len(bots))
    if fmt == "swiss":
        if games is not None:
            raise src.error(("games",), "a swiss tournament is played in rounds: give 'rounds', not 'games'")
        most = len(bots) - 1 if len(bots) % 2 == 0 else len(bots)
        if rounds is None:
            rounds = min(most, max(1, math.ceil(math.log2(len(bots)))))
        elif rounds > most:
            raise src.error(("rounds",), f"{len(bots)} bots can play at most {most} swiss rounds without a repeat "
                            f"pairing, not {rounds}")
    if rounds is None and games is None:
        rounds, games = (None, 20000) if fmt == "sprt" else (1, None)
    _check_size(src, fmt, len(bots), seats, rounds, games)
    seed = _int(src, ("seed",), doc.get("seed", 0), 0)
    tc = _time_control(src, doc.get("time_control"))
    fault = _choice(src, ("fault_policy",), doc.get("fault_policy", "forfeit"), FAULT_POLICIES)
    sandbox = _sandbox(src, doc.get("sandbox", "auto"))
    conc = _int(src, ("concurrency",), doc.get("concurrency", os.cpu_count() or 1), 1)
    if play == "inprocess":
        for i, b in enumerate(bots):
            if b.bot is None:
                raise src.error(("bots", i), "the inprocess executor plays built-in bots only; "
                                "this bot is a command line")
    out = doc.get("output", f"results/{name}")
    output = Path(_str(src, ("output",), out))
    # a file a command names is shown to its bot (BotSpec.command), never one of the run's own
    where = output.resolve()
    bots = [replace(b, read_only=tuple(p for p in b.read_only if not Path(p).resolve().is_relative_to(where)))
            if b.read_only else b for b in bots]
    anchor = doc.get("anchor")
    if anchor is not None:
        anchor = _str(src, ("anchor",), anchor)
        if anchor not in {b.name for b in bots}:
            raise src.error(("anchor",), f"no bot named {anchor!r} (bots: {', '.join(b.name for b in bots)})")
    elif fmt == "sprt":
        anchor = fopts["baseline"]  # the candidate's rating reads as its difference from the baseline
    elif bots:
        anchor = "random" if any(b.name == "random" for b in bots) else bots[0].name
    replays = _bool(src, ("replays",), doc.get("replays", True))
    pause_idle = _bool(src, ("pause_idle",), doc.get("pause_idle", False))
    fresh = _bool(src, ("fresh_process",), doc.get("fresh_process", False))
    per_process = _int(src, ("max_games_per_process",), doc.get("max_games_per_process", 100), 1)
    deals_path, deals = deal_book(src, doc.get("deals"), rules, seats)
    order = _choice(src, ("deals_order",), doc.get("deals_order", "sequential"), ("sequential", "random"))
    start = _int(src, ("deals_start",), doc.get("deals_start", 1), 1)
    if deals and start > len(deals):
        raise src.error(("deals_start",), f"the deal book has {len(deals)} deals, so there is no deal {start}")
    swap = _bool(src, ("swap",), doc.get("swap", True))
    policy = _choice(src, ("deals_policy",), doc.get("deals_policy", "default"), ("default", "round", "encounter"))
    policy = "round" if policy == "encounter" else policy  # a pair's k-th encounter is in round k
    if policy != "default" and fmt in ("swiss", "knockout"):
        raise src.error(("deals_policy",), f"a {fmt} pairs each round from results: its groups take the book's "
                        f"deals in turn (deals_policy: default)")
    if not swap and fmt in ("swiss", "knockout"):
        raise src.error(("swap",), f"a {fmt} pairing plays both seats of its deal: swap must stay true")
    return TournamentConfig(name, str(src.path), rules, seats, tuple(bots), fmt, fopts, rounds, games, seed,
                            tc, fault, sandbox, conc, executor, address, play, output, anchor, replays,
                            pause_idle, fresh, per_process, deals, deals_path, order, start, swap, policy)


#: the most games a tournament file may schedule, per core of this machine: beyond, a run
#: would take months (games last tens of milliseconds in-process, seconds with real bots)
MAX_GAMES_PER_CORE = 1_000_000


def max_games() -> int:
    """The most games a tournament may schedule on this machine."""
    return MAX_GAMES_PER_CORE * (os.cpu_count() or 1)


def _check_size(src, fmt: str, bots: int, seats: int, rounds: int | None, games: int | None) -> None:
    """Refuse a schedule whose game count is absurd for this machine, with the count."""
    if fmt == "knockout":
        return  # at most (bots - 1) ties, each a few pairs
    if games is not None:
        count, how = -(-games // seats) * seats, "'games' asks for"
    else:
        tables = {"round-robin": math.comb(bots, seats), "gauntlet": math.comb(bots - 1, seats - 1),
                  "swiss": 0}.get(fmt, 1) if seats > 1 else bots
        if fmt == "swiss":
            tables = bots // seats
        count = rounds * tables * seats
        how = f"this {fmt} has {tables:,} table{'s' if tables != 1 else ''} x {seats} seats x {rounds} round{'s' if rounds != 1 else ''} ="
    limit = max_games()
    if count > limit:
        hint = {"round-robin": "use format gauntlet (one bot against the field) or swiss (a few rounds paired "
                               "by score), or a league (`arena league`)",
                "gauntlet": "give 'games' to play a sample of its tables, or use fewer seats"}.get(fmt, "lower it")
        raise src.error(("games",) if games is not None else ("rounds",) if fmt == "swiss" else ("format",),
                        f"{how} {count:,} games, more than this machine can play (at most {limit:,}: "
                        f"{MAX_GAMES_PER_CORE:,} per core); {hint}")


def _digest(deals) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps(list(deals), sort_keys=True).encode()).hexdigest()[:16]


def deal_book(src, value, rules: RuleSpec, seats: int, path: tuple = ("deals",)) -> tuple[str | None, tuple]:
    """The ``deals`` field: a deal book's path (beside the file, else from the working folder),
    read and checked against ``rules``; its errors name the book's line."""
    if value is None:
        return None, ()
    from engine.errors import DealError

    text = _str(src, path, value)
    book = Path(text)
    if not book.is_absolute():
        beside = src.path.parent / book
        book = beside if beside.exists() else Path.cwd() / book
    if not book.is_file():
        raise src.error(path, f"the deal book {text!r} was not found")
    try:
        deals = read_book(book, rules, seats)
    except DealError as exc:
        raise src.error(path, str(exc)) from None
    return str(book.resolve()), deals


def read_book(path, rules: RuleSpec, seats: int) -> tuple:
    """A deal book checked against ``rules`` at ``seats``; :class:`~engine.errors.DealError` names the line."""
    from engine.deal import load_book

    return tuple(load_book(Path(path), compile_rules(rules, seats)))


def _type_name(value) -> str:
    return {str: "text", int: "a whole number", float: "a number", bool: "true/false", list: "a list",
            dict: "a mapping", type(None): "empty"}.get(type(value), type(value).__name__)


def _str(src, path, value) -> str:
    if not isinstance(value, str):
        raise src.error(path, f"expected text, got {_type_name(value)} ({value!r})")
    return value


def _int(src, path, value, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise src.error(path, f"expected a whole number, got {_type_name(value)} ({value!r})")
    if value < lo:
        raise src.error(path, f"must be at least {lo}, got {value}")
    return value


def _num(src, path, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise src.error(path, f"expected a number, got {_type_name(value)} ({value!r})")
    return float(value)


def _bool(src, path, value) -> bool:
    if not isinstance(value, bool):
        raise src.error(path, f"expected true or false, got {_type_name(value)} ({value!r})")
    return value


def _choice(src, path, value, choices) -> str:
    value = _str(src, path, value)
    if value not in choices:
        raise src.error(path, f"{value!r} is not one of {', '.join(choices)}")
    return value


def _sandbox(src, value) -> str | dict:
    """``sandbox: strict`` or ``sandbox: {tier: strict, fallback: basic}`` (play basic where
    strict cannot run; each game's record says which tier it had)."""
    if not isinstance(value, dict):
        return _choice(src, ("sandbox",), value, SANDBOX_TIERS)
    obj = _mapping(src, ("sandbox",), value, {"tier", "fallback"})
    if "tier" not in obj:
        raise src.error(("sandbox",), "a sandbox mapping needs 'tier' (and may name a 'fallback' tier)")
    tier = _choice(src, ("sandbox", "tier"), obj["tier"], SANDBOX_TIERS)
    fallback = obj.get("fallback")
    if fallback is None:
        return tier
    return {"tier": tier, "fallback": _choice(src, ("sandbox", "fallback"), fallback, FALLBACK_TIERS)}


def _mapping(src, path, value, keys) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise src.error(path, f"expected a mapping, got {_type_name(value)} ({value!r})")
    for key in value:
        if key not in keys:
            raise src.error(path + (key,), f"unknown key (known keys: {', '.join(sorted(keys)) or 'none'})")
    return value


def _rules(src, value, seats) -> RuleSpec:
    obj = _mapping(src, ("rules",), value, {"variants", "params"})
    variants = obj.get("variants") or []
    if isinstance(variants, str):
        variants = [variants]
    if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
        raise src.error(("rules", "variants"), "expected a list of variant names")
    params = obj.get("params") or {}
    if not isinstance(params, dict):
        raise src.error(("rules", "params"), f"expected a mapping of parameter names to values, got {params!r}")
    spec = RuleSpec.make(variants, params)
    try:
        compile_rules(spec, seats)
    except EngineError as exc:
        text = str(exc)
        named = [p for p in params if f"'{p}'" in text]
        if named:
            where = ("rules", "params", named[0])
        elif "variant" in text:
            where = ("rules", "variants")
        elif "player" in text:
            where = ("seats",)
        else:
            where = ("rules",)
        raise src.error(where, f"{text} (with {seats} seat{'s' if seats != 1 else ''})") from None
    return spec


def registered_bots(play: str) -> list[str]:
    """The bot names a tournament may use: in-process policies, or bots registered as processes."""
    if play == "inprocess":
        from ..plugins import policy_names
        return policy_names()
    from ..plugins import bots
    return sorted(bots())


BOT_KEYS = {"name", "bot", "cmd", "options", "program_dir", "read_only", "time_control", "workdir"}


def _bots(src, value, play: str) -> list[BotEntry]:
    if not isinstance(value, list) or not value:
        raise src.error(("bots",), "expected a non-empty list of bots")
    known = set(registered_bots(play))
    base = str(src.path.parent.resolve())  # a command's relative paths are the file's folder's
    out: list[BotEntry | None] = []
    unnamed: list[int] = []
    for i, item in enumerate(value):
        path = ("bots", i)
        if isinstance(item, str):
            item = {"bot": item}
        item = _mapping(src, path, item, BOT_KEYS)
        if ("bot" in item) == ("cmd" in item):
            raise src.error(path, "give exactly one of 'bot' (a registered name) or 'cmd' (a command line)")
        options = _mapping(src, path + ("options",), item.get("options"), set(item.get("options") or {}))
        tc = None
        if item.get("time_control") is not None:
            tc = {k: v for k, v in _time_control(src, item["time_control"], path + ("time_control",)).items()
                  if k in item["time_control"]}
        if "bot" in item:
            bot = _str(src, path + ("bot",), item["bot"])
            if bot not in known:
                raise src.error(path + ("bot",), f"unknown bot {bot!r} (registered bots: {', '.join(sorted(known))})")
            for key in ("program_dir", "read_only", "workdir"):
                if key in item:
                    raise src.error(path + (key,), f"{key} goes with a command line ('cmd'); a registered bot "
                                    "runs installed code")
            entry = BotEntry(item.get("name", bot), bot, None, dict(options), time_control=tc)
        else:
            here = base
            try:
                entry = BotEntry.command(item["cmd"], here, item.get("name"), options=dict(options),
                                         program_dir=_opt_str(src, path + ("program_dir",), item.get("program_dir")),
                                         read_only=_str_list(src, path + ("read_only",), item.get("read_only")),
                                         time_control=tc,
                                         workdir=_opt_str(src, path + ("workdir",), item.get("workdir")))
                locate(item["cmd"], entry.base)  # the command is read where it starts: its workdir
            except CommandError as exc:
                key = "program_dir" if str(exc).startswith("dir=") else "read_only" \
                    if str(exc).startswith("read_only=") else "workdir" if str(exc).startswith("workdir=") else "cmd"
                raise src.error(path + (key,), str(exc)) from None
            if "name" not in item:
                unnamed.append(i)
        out.append(entry)
    if unnamed:
        # command-line bots typed with the same file name get the shortest path that tells them apart
        fixed = {out[i].name for i in range(len(out)) if i not in unnamed}
        for i, name in zip(unnamed, distinct_names([out[i].cmd for i in unnamed], taken=fixed)):
            out[i] = replace(out[i], name=name)
    taken: set[str] = set()
    for i, entry in enumerate(out):
        where = ("bots", i, "name") if isinstance(value[i], dict) and "name" in value[i] else ("bots", i)
        _str(src, where, entry.name)
        try:
            check_name(entry.name)
        except NameError_ as exc:
            raise src.error(where, str(exc)) from None
        if entry.name in taken:
            raise src.error(where, f"two bots are named {entry.name!r}; give each a distinct 'name'")
        taken.add(entry.name)
    return out


def _opt_str(src, path, value) -> str | None:
    return None if value is None else _str(src, path, value)


def _str_list(src, path, value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise src.error(path, f"expected a folder or a list of folders, got {value!r}")
    return value


def _format(src, value, bots, seats) -> tuple[str, dict]:
    if isinstance(value, str):
        value = {"type": value}
    if not isinstance(value, dict) or "type" not in value:
        raise src.error(("format",), f"expected one of {', '.join(FORMATS)} or a mapping with 'type'")
    fmt = _choice(src, ("format", "type"), value["type"], FORMATS)
    _mapping(src, ("format",), value, FORMAT_KEYS[fmt] | {"type"})
    names = [b.name for b in bots]
    opts: dict = {}
    if seats == 1:
        if fmt != "round-robin":
            raise src.error(("format", "type"), "a solo tournament (seats: 1) is a round-robin of bots against the automaton")
        return fmt, opts
    if fmt == "knockout":
        if seats != 2:
            raise src.error(("seats",), f"a knockout's ties are two bots: give seats: 2, not {seats}")
        if len(bots) < 2:
            raise src.error(("bots",), "a knockout needs at least 2 bots")
        for key, default in KNOCKOUT_DEFAULTS.items():
            opts[key] = _int(src, ("format", key), value.get(key, default), 1 if key == "pairs" else 0)
    elif fmt == "swiss":
        if seats != 2:
            raise src.error(("seats",), f"swiss pairs bots two by two: give seats: 2, not {seats}")
        if len(bots) < 2:
            raise src.error(("bots",), "a swiss tournament needs at least 2 bots")
    elif fmt == "round-robin":
        if len(bots) < seats:
            raise src.error(("seats",), f"{seats} seats need at least {seats} bots for a round robin, got {len(bots)}")
    elif fmt == "gauntlet":
        hero = _str(src, ("format", "hero"), value.get("hero", names[0]))
        if hero not in names:
            raise src.error(("format", "hero"), f"no bot named {hero!r} (bots: {', '.join(names)})")
        seeds = _int(src, ("format", "seeds"), value["seeds"], 1) if "seeds" in value else 1
        if "seeds" in value and "hero" in value:
            raise src.error(("format", "seeds"), "give hero (one bot) or seeds (the first N bots), not both")
        if len(bots) - seeds < seats - 1 or len(bots) - seeds < 1:
            raise src.error(("seats",), f"a gauntlet at {seats} seats needs a field of at least {max(1, seats - 1)} "
                            f"bots besides its {seeds} hero{'es' if seeds > 1 else ''}, got {len(bots) - seeds}")
        opts["hero"] = hero
        if "seeds" in value:  # the first N bots are heroes, each against the field (cutechess-cli's -seeds)
            opts["seeds"] = seeds
    else:
        if len(bots) != 2:
            raise src.error(("bots",), f"an sprt compares exactly two bots, got {len(bots)}")
        cand = _str(src, ("format", "candidate"), value.get("candidate", names[0]))
        if cand not in names:
            raise src.error(("format", "candidate"), f"no bot named {cand!r} (bots: {', '.join(names)})")
        opts["candidate"] = cand
        opts["baseline"] = next(n for n in names if n != cand)
        for key, default in SPRT_DEFAULTS.items():
            opts[key] = _num(src, ("format", key), value.get(key, default))
        for key in ("alpha", "beta"):
            if not 0 < opts[key] < 0.5:
                raise src.error(("format", key), f"must be between 0 and 0.5, got {opts[key]}")
        if opts["elo1"] <= opts["elo0"]:
            raise src.error(("format", "elo1"), f"elo1 ({opts['elo1']}) must be greater than elo0 ({opts['elo0']})")
        from .sprt import MODELS
        if _choice(src, ("format", "model"), value.get("model", "logistic"), MODELS) != "logistic":
            opts["model"] = value["model"]  # elo0 and elo1 in nElo; logistic is not written (same fingerprint)
    return fmt, opts


def _time_control(src, value, where: tuple = ("time_control",)) -> dict:
    obj = _mapping(src, where, value, set(TIME_KEYS) | {"mode"})
    tc = dict(TIME_KEYS)
    for key, v in obj.items():
        if key == "game_ms" and v is None:
            continue
        if key == "mode":
            tc[key] = _choice(src, where + (key,), v, TIME_MODES)
            continue
        tc[key] = _int(src, where + (key,), v, 0 if key in ("increment_ms", "grace_ms") else 1)
        if tc[key] > MAX_MS:
            raise src.error(where + (key,), f"must be at most {MAX_MS} ms (a day), got {tc[key]}")
    return tc


def _executor(src, value) -> tuple[str, str | None, str]:
    if value is None:
        return "local", None, "bots"
    if isinstance(value, str):
        if value == "inprocess":
            return "local", None, "inprocess"
        value = {"type": value}
    obj = _mapping(src, ("executor",), value, {"type", "address", "play"})
    kind = _choice(src, ("executor", "type"), obj.get("type", "local"), EXECUTORS)
    play = _choice(src, ("executor", "play"), obj.get("play", "bots"), PLAY_MODES)
    address = obj.get("address")
    if kind == "dask":
        if address is None:
            raise src.error(("executor",), "a dask executor needs 'address' (tcp://host:8786)")
        address = _str(src, ("executor", "address"), address)
    elif address is not None:
        raise src.error(("executor", "address"), "only a dask executor has an address")
    return kind, address, play
