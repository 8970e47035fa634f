"""The referee: one game between bot processes, plain data in and out.

:func:`play_game` is the contract with the tournament runner (it runs in worker processes
and on Dask workers). The request, with its defaults::

    {"seats": [{"name": str, "bot": registered name or None, "cmd": [argv...] or None,
                "options": {}, "program_dir": str or None, "read_only": [str, ...],
                "base": str or None, "time_control": {...} or None}, ...],
                                               # required; one per seat, in seat order; cmd: the
                                               # words as typed, paths anchored (arena.botspec), each
                                               # program found on this machine's PATH; program_dir,
                                               # read_only: folders shown to the bot read-only;
                                               # base: the folder the command was typed in;
                                               # time_control: this seat's keys over the game's
     "rules": RuleSpec JSON,                   # None: the base game
     "players": int,                           # None: len(seats)
     "seed": int,                              # 0
     "deal": dict or None,                     # None: shuffled from the seed (R1.5)
     "time_control": {"move_ms": 1000, "game_ms": None, "increment_ms": 0,
                      "startup_ms": 10000, "grace_ms": 50, "mode": "clock"},
     "fault_policy": "forfeit" | "random",     # "forfeit"
     "sandbox": "auto" | "none" | "basic" | "strict"  # "auto": the strongest tier here (strict where
                                               # bubblewrap works); or {"tier": "strict", "fallback": "basic"}:
                                               # where strict cannot run, play basic (the record says why)
     "private_paths": [str, ...],              # []: paths no bot may see (the run's output folder...);
                                               # the log folder, its parent and the replay's folder always
     "pause_idle": bool,                       # False: SIGSTOP bots not on move when True
     "replay_path": str or None,               # None: no replay file
     "log_dir": str or None,                   # None: bots' stderr is not kept
     "files_in_record": bool,                  # False: True keeps the replay and the logs out of the
                                               # disk: the answer carries them (see below)
     "defer_logs": bool,                       # False: with files_in_record, True leaves each seat's
                                               # log open in the answer (its caller takes the text)
     "fresh_process": bool,                    # False: with a pool, reuse live bot processes
     "max_games_per_process": int,             # 100: games a pooled process plays at most
     "protocol_log": {"path": str, "game": str} or None,  # None: every line to and from the bots,
                                               # timed, appended to path under the name game
     "sandbox_options": {"memory_mb": 1024, "pids": 128, "cpu_s": 900, "nofile": 256,
                         "fsize_mb": 64, "rss_poll_ms": 100, "cpus": 1.0, "log_kb": 1024,
                         "log_total_mb": 256, "cgroups": True}}

Each bot's stderr goes to a log of its own per game (``<game>-seat<i>-<name>.stderr.log``,
``<game>`` the replay's name or a unique stamp), mode 0600, made at the bot's first byte on
stderr (a bot silent in a game leaves no file; the answer names it all the same), kept up
to ``log_kb`` per bot and game and ``log_total_mb`` across the folder (a tournament's
logs); past either cap the log ends with a marker line (past the folder's cap every seat's
log is made with it at the start). With ``files_in_record`` (a Dask worker's games) nothing is
written: each seat's log is kept in memory (``log_kb`` per bot and game; the folder's cap
is the coordinator's, who writes the files) and comes back as the seat's ``stderr_text``
beside its file name in ``stderr_log``, and the replay as ``replay_text``, with
``replay_path`` None; ``log_dir`` and ``replay_path`` then only name the files.

With a :class:`~arena.process.pool.ProcessPool` (``play_game(request, pool)``, as the
tournament workers do), each seat takes a live process of its bot from the pool, if one is
idle, and starts the game with a new ``hello``; after the game a process whose seat had no
fault goes back to the pool (see :mod:`arena.process.pool` for when it is closed instead).
A pooled process that turns out dead at the ``hello`` is replaced by a fresh one without
any fault: a crash between games is charged to nobody. A pooled process's stderr goes to
the log of each game it plays, like a new process's.

A seat's ``options`` are passed to its bot in ``hello``. A relative path on a ``cmd``
that names an existing file is made absolute (bots run in a temporary directory).

The answer: ``{"result": game.result(), "seats": [{"name", "faults": [{"verdict",
"detail", "move"}], "moves", "wall_ms", "cpu_ms", "max_move_ms", ...}], "sandbox":
{"tier", "protections", "unavailable"}, "replay_path", "replay_error", "duration_s", "rules",
"seed"}`` (``sandbox`` also has ``requested`` and ``fallback_reason`` when strict fell back;
``replay_error`` is a sentence if the replay could not be written, else None).
Bot misbehaviour never raises: it is a fault in the answer. A bad request raises an
:class:`~arena.errors.ArenaError` subclass naming what is wrong.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import random
import re
import time
from pathlib import Path

from engine import Game, IllegalAction, RuleSpec, action_from_json, action_to_json, make_replay, observation
from engine.codec import describe_error
from engine.errors import EngineError
from engine.events import events_since

from .process.botproc import BotProcess
from .process.pool import DEFAULT_MAX_GAMES, PooledBot, ProcessPool, pool_key
from .errors import UsageError
from .process.protocol import EncodedJSON, hello_message, request_message
from .process.sandbox import Limits, Sandbox
from .process.timecontrol import Clock, TimeControl
from .process.transport import BotFault, MemoryLog, ProtocolLog

log = logging.getLogger(__name__)

FAULT_POLICIES = ("forfeit", "random")
#: verdicts after which a bot process is not asked again
FATAL = {"crash", "memory_limit", "output_limit"}


class BadRequest(UsageError):
    """A referee request that cannot be played (unknown bot, missing program, bad field)."""


_HELLOS: dict[int, tuple] = {}


def _hello(seat: int, rules, time_control: dict, seed: int) -> dict:
    """``hello_message``, its card data built once per compiled ruleset (not per game)."""
    cached = _HELLOS.get(id(rules))
    if cached is None or cached[0] is not rules:
        if len(_HELLOS) > 64:
            _HELLOS.clear()
        base = hello_message(0, rules, {}, 0)
        base["cards"] = EncodedJSON.of(base["cards"])  # encoded once, spliced into each hello
        cached = _HELLOS[id(rules)] = (rules, base)
    hello = dict(cached[1])
    hello.update(seat=seat, time_control=time_control, seed=seed)
    return hello


class _Seat:
    __slots__ = ("name", "bot", "clock", "faults", "moves", "wall", "cpu", "max_move", "events_from", "ready", "log",
                 "discarded", "pid", "entry", "reused")

    def __init__(self, name: str, clock: Clock):
        self.name = name
        self.bot: BotProcess | None = None
        self.clock = clock
        self.faults: list[dict] = []
        self.moves = 0
        self.wall = 0.0
        self.cpu = 0.0
        self.max_move = 0.0
        self.events_from = 0
        self.ready = None
        self.log = None
        self.discarded: list[dict] = []
        self.pid = -1
        self.entry = None  # its PooledBot, when the game has a pool
        self.reused = False


def resolve_command(seat: dict) -> list[str]:
    """The argv of a seat on this machine: its registered bot's command, or its ``cmd``
    (anchored words, see :mod:`arena.botspec`) with each program found on this machine's
    ``PATH`` and an interpreter's shim resolved, asked in the seat's ``base`` folder."""
    from .botspec import CommandError, locate
    from .plugins import bot_command
    bot, cmd = seat.get("bot"), seat.get("cmd")
    if bot and cmd:
        raise BadRequest(f"seat {seat.get('name')!r} gives both a bot name and a command; give one")
    if bot:
        return bot_command(bot)
    if not cmd:
        raise BadRequest(f"seat {seat.get('name')!r} needs a registered bot name or a command")
    if not isinstance(cmd, str) and not (isinstance(cmd, (list, tuple)) and all(isinstance(a, str) for a in cmd)):
        raise BadRequest(f"seat {seat.get('name')!r}: the command must be a list of strings")
    base = seat.get("base")
    try:
        return locate(cmd, base if base and os.path.isdir(base) else None)
    except CommandError as exc:
        raise BadRequest(f"seat {seat.get('name')!r}: {exc}") from None


def _seat_time_control(tc: TimeControl, seat: dict) -> TimeControl:
    """The game's time control with the seat's own keys (a bot's ``time_control``) in place."""
    own = seat.get("time_control")
    if not own:
        return tc
    return TimeControl.from_json({**tc.to_json(), **own})


def normalize(request: dict) -> dict:
    """The request with every default filled in and every field checked."""
    if not isinstance(request, dict):
        raise BadRequest("a game request must be a mapping with at least 'seats'")
    seats = request.get("seats")
    if not isinstance(seats, list) or not seats or not all(isinstance(s, dict) for s in seats):
        raise BadRequest("a game request needs 'seats': a list of {name, bot or cmd, options}")
    players = request.get("players") or len(seats)
    for key, value in (("players", players), ("seed", request.get("seed") or 0)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadRequest(f"{key} must be a whole number, got {value!r}")
    if len(seats) != players:
        raise BadRequest(f"{len(seats)} seats for {players} players; give one seat per player")
    out = {
        "seats": [{"name": str(s.get("name") or s.get("bot") or f"seat{i}"), "bot": s.get("bot"), "cmd": s.get("cmd"),
                   "options": dict(s.get("options") or {}), "program_dir": s.get("program_dir"),
                   "read_only": [str(p) for p in s.get("read_only") or []], "base": s.get("base"),
                   "time_control": s.get("time_control") or None}
                  for i, s in enumerate(seats)],
        "rules": request.get("rules") or {"variants": [], "params": {}},
        "players": players,
        "seed": int(request.get("seed") or 0),
        "deal": request.get("deal"),
        "time_control": TimeControl.from_json(request.get("time_control")),
        "fault_policy": request.get("fault_policy") or "forfeit",
        "sandbox": _sandbox_field(request.get("sandbox")),
        "pause_idle": bool(request.get("pause_idle", False)),
        "replay_path": request.get("replay_path"),
        "log_dir": request.get("log_dir"),
        "sandbox_options": dict(request.get("sandbox_options") or {}),
        "private_paths": [str(p) for p in request.get("private_paths") or []],
        "fresh_process": bool(request.get("fresh_process", False)),
        "max_games_per_process": request.get("max_games_per_process") or DEFAULT_MAX_GAMES,
        "files_in_record": bool(request.get("files_in_record", False)),
        "defer_logs": bool(request.get("defer_logs", False)),
        "protocol_log": request.get("protocol_log") or None,
    }
    if out["replay_path"] and not out["files_in_record"] and not Path(out["replay_path"]).resolve().parent.is_dir():
        raise BadRequest(f"cannot write the replay to {out['replay_path']}: its directory does not exist")
    if out["fault_policy"] not in FAULT_POLICIES:
        raise BadRequest(f"fault_policy must be one of {', '.join(FAULT_POLICIES)}, got {out['fault_policy']!r}")
    return out


def decode_action(rules, reply: dict):
    """The engine action of a reply's R14 object; any failure to decode it, whatever the
    value, is an :class:`IllegalAction` (the seat's fault, never the game's end)."""
    try:
        return action_from_json(rules, reply)
    except IllegalAction:
        raise
    except Exception as exc:  # the codec promises IllegalAction; a safety net if it breaks that
        log.error("decoding an action failed unexpectedly", exc_info=exc)
        raise IllegalAction("R14", f"the action could not be decoded ({describe_error(exc)})") from None


def _sandbox_field(value) -> dict:
    """``{"tier", "fallback"}`` from the request's ``sandbox`` (a tier's name or that mapping)."""
    if value is None or isinstance(value, str):
        return {"tier": value or "auto", "fallback": None}
    if isinstance(value, dict) and set(value) <= {"tier", "fallback"} and isinstance(value.get("tier"), str) \
            and isinstance(value.get("fallback"), (str, type(None))):
        return {"tier": value["tier"], "fallback": value.get("fallback")}
    raise BadRequest(f"sandbox must be a tier's name or {{tier, fallback}}, got {value!r}")


_log_counter = itertools.count()
#: per log folder: [bytes used, when they were counted, how long until the next count, how
#: long the count took]
_LOG_USAGE: dict[str, list] = {}
#: a log folder is counted again after this many seconds at the least ...
LOG_RESCAN_S = 5.0
#: ... or, when its count is slow (a long run's folder of many logs), after this many times
#: the count's own duration, so that counting takes at most 1% of the time whatever the size
LOG_RESCAN_FACTOR = 100


def _log_usage(log_dir: Path, need: int = 0, total: int | None = None) -> int:
    """Bytes of logs in ``log_dir``: counted now and then, estimated (upwards) between counts.

    Between counts each game's logs are counted as full (their cap), which overstates fast
    games by far (a game of a few milliseconds writes nothing, and 2 MB a game reached a
    256 MB cap in seconds at 60 games/s, cutting every log after it): when the estimate and
    ``need`` more would pass ``total``, the folder is counted again first, unless the last
    count is more recent than twenty times what it took (so that counting takes at most 5%
    of the time even when the logs do fill the folder)."""
    key = str(log_dir)
    known = _LOG_USAGE.get(key)
    now = time.monotonic()
    if known is None or now - known[1] > known[2] or (
            total is not None and known[0] + need > total and now - known[1] > 20 * known[3]):
        t0 = time.perf_counter()
        used = log_bytes(log_dir)
        spent = time.perf_counter() - t0
        known = _LOG_USAGE[key] = [used, now, max(LOG_RESCAN_S, LOG_RESCAN_FACTOR * spent), spent]
    return known[0]


def log_bytes(log_dir: Path) -> int:
    """Bytes of the bots' ``.log`` files in ``log_dir`` now (0 where there is no such folder)."""
    used = 0
    try:
        entries = list(os.scandir(log_dir))
    except FileNotFoundError:
        return 0
    for entry in entries:
        if entry.name.endswith(".log"):
            try:
                used += entry.stat().st_size
            except OSError:
                pass
    return used


def _log_names(seats: list, replay_path: str | None) -> list[str]:
    """The file name of each seat's stderr log of this game."""
    stem = Path(replay_path).stem if replay_path else \
        f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_log_counter)}"
    return [f"{stem}-seat{i}-{re.sub(r'[^A-Za-z0-9_.-]', '_', seat.name)}.stderr.log" for i, seat in enumerate(seats)]


def _log_paths(log_dir: Path, seats: list, replay_path: str | None, limits: Limits) -> list[tuple[str, int]]:
    """Each seat's stderr log of this game and the bytes it may keep (per-game and folder caps).

    A log is made at its bot's first byte on stderr (see ``transport._LogFile``), except
    past the folder's cap, where it is made now with the marker line that says so. A log
    named after the replay (the game's own name, the same when a run plays a game again
    after an interruption) left by an earlier attempt is removed first: what the folder
    holds under that name is this game's."""
    total = limits.log_total_mb << 20
    used = _log_usage(log_dir, (limits.log_kb << 10) * len(seats), total)
    cap = max(0, min(limits.log_kb << 10, (total - used) // max(1, len(seats))))
    _LOG_USAGE[str(log_dir)][0] += cap * len(seats)  # counted as full until the next scan
    out = []
    for name in _log_names(seats, replay_path):
        path = str(log_dir / name)
        if cap < limits.log_kb << 10:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, b"[arena: the logs in this folder reached their cap of %d MB: %s]\n" % (
                    limits.log_total_mb, b"stderr is not kept" if cap <= 0 else b"%d bytes are kept" % cap))
            finally:
                os.close(fd)
        elif replay_path:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        out.append((path, cap))
    return out


def bot_seed(seed: int, seat: int) -> int:
    """A seat's random seed, derived from the game's seed without revealing it."""
    return int.from_bytes(hashlib.sha256(f"bot:{seed}:{seat}".encode()).digest()[:4], "big") >> 1


def _new_game(req: dict):
    """The rules and the fresh game of a normalized request, or :class:`BadRequest`."""
    try:
        spec = RuleSpec.from_json(req["rules"])
        return spec, Game.new(spec, req["players"], req["seed"], req["deal"])
    except EngineError as exc:
        raise BadRequest(f"cannot start the game: {exc}") from None


def _sandbox(req: dict) -> tuple[Sandbox, Limits]:
    """The game's sandbox and its limits: the tier asked for, and the paths no bot may see
    (the run's private paths, and the folders of the logs and the replay unless they are
    kept in the record)."""
    opts = dict(req["sandbox_options"])
    use_cgroups = bool(opts.pop("cgroups", True))
    try:
        limits = Limits(**opts)
    except TypeError:
        raise BadRequest(f"sandbox_options has an unknown field (fields: cgroups, {', '.join(Limits.__dataclass_fields__)})") from None
    hide = list(req["private_paths"])
    in_record = req["files_in_record"]
    if req["log_dir"] and not in_record:
        hide += [req["log_dir"], str(Path(req["log_dir"]).resolve().parent)]
    if req["replay_path"] and not in_record:
        hide.append(str(Path(req["replay_path"]).resolve().parent))
    sandbox = Sandbox(req["sandbox"]["tier"], limits, use_cgroups=use_cgroups, fallback=req["sandbox"]["fallback"],
                      hide=hide, installed_only=all(s["bot"] and not s["cmd"] for s in req["seats"]))
    return sandbox, limits


def _seat_logs(req: dict, seats: list, limits: Limits) -> list:
    """Where each seat's stderr goes, with its cap: nowhere, a file of ``log_dir``, or memory
    (``files_in_record``)."""
    log_dir = Path(req["log_dir"]) if req["log_dir"] else None
    if log_dir is not None and req["files_in_record"]:
        return [(MemoryLog(name), limits.log_kb << 10) for name in _log_names(seats, req["replay_path"])]
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        return _log_paths(log_dir, seats, req["replay_path"], limits)
    return [(None, None)] * len(seats)


def warm(request: dict) -> None:
    """Do in this process, once, what the first game of ``request``'s kind does in every
    process that plays it: import the referee's modules, compile the rules (the card data),
    resolve the seats' commands, run the sandbox's probes of this machine (namespaces,
    bubblewrap, cgroups, the files each command needs shown) and count the log folder. A
    process that forks its workers after this (the local executor) hands them all of it:
    each worker's first game then costs what its others do. Nothing is started and nothing
    is kept; a request that cannot be played is left for the game to refuse."""
    try:
        req = normalize(request)
        argvs = [resolve_command(s) for s in req["seats"]]
        _new_game(req)
        sandbox, limits = _sandbox(req)
        try:
            for argv, seat in zip(argvs, req["seats"]):
                sandbox.prepare(argv, label="warm", program_dir=seat["program_dir"], read_only=seat["read_only"])
        finally:
            sandbox.cleanup()
        if req["log_dir"] and not req["files_in_record"] and os.path.isdir(req["log_dir"]):
            _log_usage(Path(req["log_dir"]))
    except Exception as exc:  # noqa: BLE001 -- the game itself says what is wrong with its request
        log.debug("warming up for a request failed: %s", exc)


class _Launcher:
    """Gives each seat its bot process: a new one in the sandbox, or a live one of the pool;
    with ``protocol_log``, every line of each is logged."""

    def __init__(self, req: dict, argvs: list, seats: list, sandbox: Sandbox, logs: list,
                 pool: ProcessPool | None):
        self.req, self.argvs, self.seats, self.sandbox, self.logs = req, argvs, seats, sandbox, logs
        self.pool = None if req["fresh_process"] else pool
        if self.pool is not None:
            self.pool.max_games = max(1, int(req["max_games_per_process"]))
        self.keys = [pool_key(s["name"], [*argvs[i], {"program_dir": s["program_dir"], "read_only": s["read_only"]}],
                              req["sandbox"]["tier"], req["sandbox_options"], req["log_dir"])
                     for i, s in enumerate(req["seats"])] if self.pool is not None else []
        self.plog, self.traced = None, []
        if req["protocol_log"]:
            self.plog = ProtocolLog(req["protocol_log"]["path"], req["protocol_log"]["game"])

    def trace(self, i: int) -> None:
        """Log every line of seat ``i``'s process (``protocol_log``); nothing is set without one."""
        if self.plog is not None:
            transport = self.seats[i].bot.transport
            transport.trace = self.plog.tracer(i, self.seats[i].name)
            self.traced.append(transport)

    def fresh(self, i: int) -> None:
        """Start a new process for seat ``i`` (pooled, when there is a pool)."""
        seat, asked = self.seats[i], self.req["seats"][i]
        launch = self.sandbox.prepare(self.argvs[i], label=f"seat{i}", program_dir=asked["program_dir"],
                                      read_only=asked["read_only"])
        seat.log, cap = self.logs[i]
        seat.bot = BotProcess(launch, label=f"seat{i}:{seat.name}", stderr_path=seat.log, stderr_cap=cap)
        seat.discarded = seat.bot.protocol.discarded
        seat.reused = False
        self.trace(i)
        if self.pool is not None:
            self.pool.started()
            seat.entry = PooledBot(self.keys[i], seat.bot, launch, seat.log)

    def reuse(self, i: int, entry: PooledBot) -> None:
        """Give seat ``i`` the pool's live process ``entry``, with this game's own log."""
        seat = self.seats[i]
        seat.log, cap = self.logs[i]
        entry.bot.transport.set_log(seat.log, cap)  # this game's own log, as for a new process
        entry.log = seat.log
        seat.entry, seat.bot, seat.reused = entry, entry.bot, True
        self.sandbox.launches.append(entry.launch)  # for the game's sandbox record
        entry.bot.label = f"seat{i}:{seat.name}"
        entry.bot.protocol.label = entry.bot.label
        entry.bot.protocol.discarded = seat.discarded = []
        self.trace(i)

    def start_all(self) -> None:
        """Every seat's process, taken from the pool when it holds one."""
        for i in range(len(self.seats)):
            entry = self.pool.take(self.keys[i]) if self.pool is not None else None
            if entry is not None:
                self.reuse(i, entry)
            else:
                self.fresh(i)

    def close_log(self) -> None:
        """Stop logging: a pooled process plays its next game unlogged unless asked."""
        if self.plog is not None:
            for transport in self.traced:
                transport.trace = None
            self.plog.close()


def _write_replay(game, req: dict, seats: list, match, tc: TimeControl,
                  sandbox_record: dict) -> tuple[str | None, str | None, str | None]:
    """``(replay_path, replay_error, replay_text)``: the replay written to its file, or kept
    as text in the record (``files_in_record``); a failure to write is said, not raised."""
    replay_path = req["replay_path"]
    if not replay_path:
        return replay_path, None, None
    meta = {"seats": [s.name for s in seats], "bots": [s.name for s in seats], "ready": [s.ready for s in seats],
            "move_times": match.times(),
            "faults": [s.faults for s in seats], "sandbox": sandbox_record, "time_control": tc.to_json(),
            "fault_policy": req["fault_policy"]}
    text = json.dumps(make_replay(game, req["deal"], meta), indent=1) + "\n"
    try:
        if req["files_in_record"]:
            return None, None, text
        Path(replay_path).write_text(text, encoding="utf-8")
    except OSError as exc:
        # The game is played: report the failure beside the result rather than lose it.
        return None, f"cannot write the replay to {replay_path}: {exc.strerror}", None
    return replay_path, None, None


def _seat_answers(seats: list) -> list[dict]:
    """Each seat's part of the answer: faults, moves, times, its bot's hello, its log."""
    return [{"name": s.name, "faults": s.faults, "moves": s.moves, "wall_ms": round(s.wall * 1000, 3),
             "cpu_ms": round(s.cpu * 1000, 3), "max_move_ms": round(s.max_move * 1000, 3),
             "bot": s.ready, "discarded": s.discarded,
             "stderr_log": s.log.name if isinstance(s.log, MemoryLog) else s.log, "pid": s.pid}
            for s in seats]


def _keep_in_record(answer: dict, seats: list, req: dict, replay_text: str | None) -> None:
    """``files_in_record``: the replay's text and each seat's log go into the answer."""
    if replay_text is not None:
        answer["replay_text"] = replay_text
    for seat, out in zip(seats, answer["seats"]):
        if isinstance(seat.log, MemoryLog):
            # with defer_logs, the log itself: what a bot writes after game_over still lands
            # in it (until the process's next game), and the caller takes its text later
            # (a Dask worker, when it sends the records: arena.cluster.worker)
            out["stderr_text"] = seat.log if req["defer_logs"] else seat.log.text()


def play_game(request: dict, pool: ProcessPool | None = None) -> dict:
    """Play one game between bot processes; see the module docstring for the data.

    With ``pool``, seats reuse live processes of their bots and clean ones go back to it."""
    t_start = time.perf_counter()
    req = normalize(request)
    argvs = [resolve_command(s) for s in req["seats"]]
    spec, game = _new_game(req)
    tc: TimeControl = req["time_control"]
    sandbox, limits = _sandbox(req)
    seats = [_Seat(s["name"], Clock(_seat_time_control(tc, s))) for s in req["seats"]]
    launcher = _Launcher(req, argvs, seats, sandbox, _seat_logs(req, seats, limits), pool)
    match = _Match(game, seats, req, tc)
    match.fresh = launcher.fresh
    match.pool = launcher.pool
    finished = False
    try:
        launcher.start_all()
        match.handshake()
        match.play()
        finished = True
    finally:
        kept = match.close_all(launcher.pool if finished else None,
                               limits.cpu_s if req["sandbox"]["tier"] != "none" else None)
        launcher.close_log()
        for launch in sandbox.launches:
            if not any(launch is k for k in kept):
                launch.cleanup()
    sandbox_record = sandbox.record()
    replay_path, replay_error, replay_text = _write_replay(game, req, seats, match, tc, sandbox_record)
    answer = {
        "result": game.result(),
        "seats": _seat_answers(seats),
        "sandbox": sandbox_record,
        "replay_path": replay_path,
        "replay_error": replay_error,
        "duration_s": round(time.perf_counter() - t_start, 3),
        "rules": spec.to_json(),
        "seed": req["seed"],
    }
    if req["files_in_record"]:
        _keep_in_record(answer, seats, req, replay_text)
    return answer


class _Match:
    """The game loop: requests, timing, faults and their policy."""

    def __init__(self, game: Game, seats: list[_Seat], req: dict, tc: TimeControl):
        self.game = game
        self.rules = game.rules
        self.seats = seats
        self.req = req
        self.tc = tc
        self.policy = req["fault_policy"]
        self.pause_idle = req["pause_idle"]
        self.fallback = random.Random(f"fallback:{req['seed']}")
        self.move_times: list = []
        self.encoded: list = []  # each action's JSON, made once for every seat's events
        self.fresh = None  # starts a fresh process for a seat (set by play_game)
        self.pool: ProcessPool | None = None

    def handshake(self) -> None:
        """Start every bot (they boot at once), then read each ``ready``.

        A reused process that fails its ``hello`` died between games: it is replaced by a
        fresh process, once, and nobody is charged."""
        sent = []
        for i, seat in enumerate(self.seats):
            tc = seat.clock.tc
            limit = (tc.startup_ms + tc.grace_ms) / 1000
            if self._send_hello(i, limit):
                sent.append(i)
        for i in sent:
            seat = self.seats[i]
            try:
                seat.pid = seat.bot.pid
                seat.ready = seat.bot.await_ready().to_json()
            except BotFault as fault:
                if not seat.reused:
                    self.fault(i, fault.verdict, fault.detail, start=True)
                    continue
                self._replace(i)
                if not self._send_hello(i, (seat.clock.tc.startup_ms + seat.clock.tc.grace_ms) / 1000):
                    continue
                try:
                    seat.ready = seat.bot.await_ready().to_json()
                except BotFault as fault:
                    self.fault(i, fault.verdict, fault.detail, start=True)
                    continue
                except Exception as exc:  # see unreadable()
                    self.fault(i, "protocol_error", self.unreadable(i, exc), start=True)
                    continue
            except Exception as exc:  # see unreadable()
                self.fault(i, "protocol_error", self.unreadable(i, exc), start=True)
                continue
            if self.pause_idle:
                seat.bot.pause()

    def _send_hello(self, i: int, limit: float) -> bool:
        seat = self.seats[i]
        hello = _hello(i, self.rules, seat.clock.tc.to_json(), bot_seed(self.req["seed"], i))
        hello["options"] = self.req["seats"][i]["options"]
        try:
            seat.bot.send_hello(hello, limit)
            seat.pid = seat.bot.pid
            return True
        except BotFault as fault:
            if seat.reused:
                self._replace(i)
                return self._send_hello(i, limit)
            self.fault(i, fault.verdict, fault.detail, start=True)
            return False

    def _replace(self, i: int) -> None:
        """Close seat ``i``'s reused process (it died between games) and start a fresh one."""
        seat = self.seats[i]
        if self.pool is not None:
            self.pool.stats["died_idle"] += 1
        seat.entry.close()
        seat.entry = None
        self.fresh(i)

    def play(self) -> None:
        """Ask the seat to move until the game is over."""
        game = self.game
        rules = self.rules
        while not game.is_over:
            s = game.to_move()
            seat = self.seats[s]
            bot = seat.bot
            if bot is None:
                self.play_random(s)
                continue
            obs = observation(game, s)
            events, seat.events_from = events_since(game, s, seat.events_from, self.encoded)
            legal = [action_to_json(rules, a) for a in game.legal_actions()] if seat.ready["legal_actions"] else None
            msg = request_message(game.phase_name, obs, events, seat.clock.view(), legal)
            limit = (seat.clock.allowance_ms() + seat.clock.tc.grace_ms) / 1000
            if self.pause_idle:
                bot.resume()
            try:
                reply, wall, cpu = bot.ask(msg, limit)
            except BotFault as fault:
                seat.clock.charge(limit * 1000)
                self.fault(s, fault.verdict, fault.detail)
                continue
            except Exception as exc:  # see unreadable()
                seat.clock.charge(limit * 1000)
                self.fault(s, "protocol_error", self.unreadable(s, exc))
                continue
            finally:
                if self.pause_idle and seat.bot is not None:
                    seat.bot.pause()
            seat.clock.charge(wall * 1000)
            seat.moves += 1
            seat.wall += wall
            seat.cpu += cpu
            seat.max_move = max(seat.max_move, wall)
            try:
                game.apply(decode_action(rules, reply))
            except IllegalAction as exc:
                self.fault(s, "illegal_action", f"{exc} (reply: {json.dumps(reply)[:300]})")
                continue
            self.move_times.append((wall, cpu))  # made the replay's entries only if a replay is written

    def times(self) -> list:
        """The replay's ``move_times``: one entry per entry of the game's history."""
        return [{"wall_ms": round(t[0] * 1000, 3), "cpu_ms": round(t[1] * 1000, 3)} if type(t) is tuple else t
                for t in self.move_times]

    def unreadable(self, s: int, exc: Exception) -> str:
        """The safety net of reading a reply: an error the transport and the protocol did not
        turn into a verdict (an arena bug a bot's bytes found) is that seat's fault, logged
        with its traceback, and the game goes on; the detail names the error."""
        log.error("seat %d (%s): reading its reply failed unexpectedly", s, self.seats[s].name, exc_info=exc)
        return f"the reply could not be read ({describe_error(exc)})"

    def play_random(self, s: int) -> None:
        """The ``random`` fault policy: a random legal action for seat ``s``."""
        self.game.apply(self.fallback.choice(self.game.legal_actions()))
        self.move_times.append({"fallback": True})

    def fault(self, s: int, verdict: str, detail: str, start: bool = False) -> None:
        """Record a fault of seat ``s`` and apply the fault policy."""
        seat = self.seats[s]
        seat.faults.append({"verdict": verdict, "detail": detail, "move": None if start else len(self.game.history)})
        if verdict in FATAL or self.policy == "forfeit" or start and seat.ready is None:
            if seat.bot is not None:
                seat.bot.close(quit_first=False)
                seat.bot = None
        if self.policy == "forfeit":
            if not self.game.players[s].forfeited:
                self.game.forfeit(s)
                self.move_times.append(None)
        elif not start:
            self.play_random(s)

    def close_all(self, pool: ProcessPool | None = None, cpu_limit_s: float | None = None) -> list:
        """Tell every live bot the result; give clean processes back to ``pool`` (the
        launches kept are returned) and close the others: quit, then kill the group."""
        game = self.game
        for s, seat in enumerate(self.seats):
            bot = seat.bot
            if bot is None:
                continue
            if seat.ready is not None:
                seat.cpu += bot.cpu_since_last_read()
            if game.is_over:
                bot.resume()
                events, seat.events_from = events_since(game, s, seat.events_from, self.encoded)
                bot.notify({"type": "game_over", "result": game.result(), "events": events})
        kept = []
        for seat in self.seats:
            entry, bot = seat.entry, seat.bot
            seat.bot = seat.entry = None
            if entry is not None and (bot is None or bot is not entry.bot):
                if pool is not None:
                    pool.stats["faulted"] += 1
                entry.close()  # its seat's process was closed or replaced in the game
                continue
            if entry is not None and pool is not None:
                clean = game.is_over and not seat.faults and seat.ready is not None
                if pool.give(entry, clean, cpu_limit_s):
                    kept.append(entry.launch)
            elif entry is not None:
                entry.close()
            elif bot is not None:
                bot.close()
        return kept
