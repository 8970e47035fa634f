"""The referee: one game between bot processes, plain data in and out.

:func:`play_game` is the contract with the tournament runner (it runs in worker processes
and on Dask workers). The request, with its defaults::

    {"seats": [{"name": str, "bot": registered name or None, "cmd": [argv...] or None,
                "options": {}}, ...],          # required; one per seat, in seat order
     "rules": RuleSpec JSON,                   # None: the base game
     "players": int,                           # None: len(seats)
     "seed": int,                              # 0
     "deal": dict or None,                     # None: shuffled from the seed (R1.5)
     "time_control": {"move_ms": 1000, "game_ms": None, "increment_ms": 0,
                      "startup_ms": 10000, "grace_ms": 50, "mode": "clock"},
     "fault_policy": "forfeit" | "random",     # "forfeit"
     "sandbox": "none" | "basic" | "strict",   # "basic"
     "pause_idle": bool,                       # False: SIGSTOP bots not on move when True
     "replay_path": str or None,               # None: no replay file
     "log_dir": str or None,                   # None: bots' stderr is not kept
     "sandbox_options": {"memory_mb": 1024, "pids": 128, "cpu_s": 900, "nofile": 256,
                         "fsize_mb": 64, "rss_poll_ms": 100, "cgroups": True}}

A seat's ``options`` are passed to its bot in ``hello``. A relative path on a ``cmd``
that names an existing file is made absolute (bots run in a temporary directory).

The answer: ``{"result": game.result(), "seats": [{"name", "faults": [{"verdict",
"detail", "move"}], "moves", "wall_ms", "cpu_ms", "max_move_ms", ...}], "sandbox":
{"tier", "protections", "unavailable"}, "replay_path", "replay_error", "duration_s", "rules",
"seed"}`` (``replay_error`` is a sentence if the replay could not be written, else None).
Bot misbehaviour never raises: it is a fault in the answer. A bad request raises an
:class:`~arena.errors.ArenaError` subclass naming what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import shlex
import shutil
import time
from pathlib import Path

from engine import Game, IllegalAction, RuleSpec, action_from_json, action_to_json, make_replay, observation
from engine.codec import describe_error
from engine.errors import EngineError
from engine.events import events_since

from .process.botproc import BotProcess
from .errors import UsageError
from .process.protocol import hello_message, request_message
from .process.sandbox import Limits, Sandbox
from .process.timecontrol import Clock, TimeControl
from .process.transport import BotFault

log = logging.getLogger(__name__)

FAULT_POLICIES = ("forfeit", "random")
#: verdicts after which a bot process is not asked again
FATAL = {"crash", "memory_limit", "output_limit"}


class BadRequest(UsageError):
    """A referee request that cannot be played (unknown bot, missing program, bad field)."""


class _Seat:
    __slots__ = ("name", "bot", "clock", "faults", "moves", "wall", "cpu", "max_move", "events_from", "ready", "log",
                 "discarded", "pid")

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


def resolve_command(seat: dict) -> list[str]:
    """The argv of a seat: its registered bot's command or its ``cmd``, checked."""
    from .plugins import bot_command
    bot, cmd = seat.get("bot"), seat.get("cmd")
    if bot and cmd:
        raise BadRequest(f"seat {seat.get('name')!r} gives both a bot name and a command; give one")
    if bot:
        return bot_command(bot)
    if not cmd:
        raise BadRequest(f"seat {seat.get('name')!r} needs a registered bot name or a command")
    argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    if not argv or not all(isinstance(a, str) for a in argv):
        raise BadRequest(f"seat {seat.get('name')!r}: the command must be a list of strings")
    if "/" in argv[0]:
        if not (os.path.isfile(argv[0]) and os.access(argv[0], os.X_OK)):
            raise BadRequest(f"seat {seat.get('name')!r}: {argv[0]} is not an executable file")
        argv[0] = os.path.abspath(argv[0])
    elif shutil.which(argv[0]) is None:
        raise BadRequest(f"seat {seat.get('name')!r}: the program {argv[0]!r} is not on the PATH")
    return [argv[0]] + [os.path.abspath(a) if not a.startswith("-") and os.path.isfile(a) else a for a in argv[1:]]


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
                   "options": dict(s.get("options") or {})} for i, s in enumerate(seats)],
        "rules": request.get("rules") or {"variants": [], "params": {}},
        "players": players,
        "seed": int(request.get("seed") or 0),
        "deal": request.get("deal"),
        "time_control": TimeControl.from_json(request.get("time_control")),
        "fault_policy": request.get("fault_policy") or "forfeit",
        "sandbox": request.get("sandbox") or "basic",
        "pause_idle": bool(request.get("pause_idle", False)),
        "replay_path": request.get("replay_path"),
        "log_dir": request.get("log_dir"),
        "sandbox_options": dict(request.get("sandbox_options") or {}),
    }
    if out["replay_path"] and not Path(out["replay_path"]).resolve().parent.is_dir():
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


def bot_seed(seed: int, seat: int) -> int:
    """A seat's random seed, derived from the game's seed without revealing it."""
    return int.from_bytes(hashlib.sha256(f"bot:{seed}:{seat}".encode()).digest()[:4], "big") >> 1


def play_game(request: dict) -> dict:
    """Play one game between bot processes; see the module docstring for the data."""
    t_start = time.perf_counter()
    req = normalize(request)
    argvs = [resolve_command(s) for s in req["seats"]]
    try:
        spec = RuleSpec.from_json(req["rules"])
        game = Game.new(spec, req["players"], req["seed"], req["deal"])
    except EngineError as exc:
        raise BadRequest(f"cannot start the game: {exc}") from None
    tc: TimeControl = req["time_control"]
    opts = dict(req["sandbox_options"])
    use_cgroups = bool(opts.pop("cgroups", True))
    try:
        limits = Limits(**opts)
    except TypeError:
        raise BadRequest(f"sandbox_options has an unknown field (fields: cgroups, {', '.join(Limits.__dataclass_fields__)})") from None
    sandbox = Sandbox(req["sandbox"], limits, use_cgroups=use_cgroups)
    seats = [_Seat(s["name"], Clock(tc)) for s in req["seats"]]
    log_dir = Path(req["log_dir"]) if req["log_dir"] else None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
    match = _Match(game, seats, req, tc)
    try:
        for i, seat in enumerate(seats):
            launch = sandbox.prepare(argvs[i], label=f"seat{i}")
            if log_dir is not None:
                seat.log = str(log_dir / f"seat{i}-{re.sub(r'[^A-Za-z0-9_.-]', '_', seat.name)}.stderr.log")
            seat.bot = BotProcess(launch, label=f"seat{i}:{seat.name}", stderr_path=seat.log)
            seat.discarded = seat.bot.protocol.discarded
        match.handshake()
        match.play()
    finally:
        match.close_all()
        sandbox.cleanup()
    sandbox_record = sandbox.record()
    replay_path = req["replay_path"]
    replay_error = None
    if replay_path:
        meta = {"seats": [s.name for s in seats], "bots": [s.name for s in seats], "move_times": match.move_times,
                "faults": [s.faults for s in seats], "sandbox": sandbox_record, "time_control": tc.to_json(),
                "fault_policy": req["fault_policy"]}
        try:
            Path(replay_path).write_text(json.dumps(make_replay(game, req["deal"], meta), indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            # The game is played: report the failure beside the result rather than lose it.
            replay_error = f"cannot write the replay to {replay_path}: {exc.strerror}"
            replay_path = None
    return {
        "result": game.result(),
        "seats": [{"name": s.name, "faults": s.faults, "moves": s.moves, "wall_ms": round(s.wall * 1000, 3),
                   "cpu_ms": round(s.cpu * 1000, 3), "max_move_ms": round(s.max_move * 1000, 3),
                   "bot": s.ready, "discarded": s.discarded, "stderr_log": s.log, "pid": s.pid} for s in seats],
        "sandbox": sandbox_record,
        "replay_path": replay_path,
        "replay_error": replay_error,
        "duration_s": round(time.perf_counter() - t_start, 3),
        "rules": spec.to_json(),
        "seed": req["seed"],
    }


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

    def handshake(self) -> None:
        """Start every bot (they boot at once), then read each ``ready``."""
        tc = self.tc
        limit = (tc.startup_ms + tc.grace_ms) / 1000
        sent = []
        for i, seat in enumerate(self.seats):
            hello = hello_message(i, self.rules, tc.to_json(), bot_seed(self.req["seed"], i))
            hello["options"] = self.req["seats"][i]["options"]
            try:
                seat.bot.send_hello(hello, limit)
                seat.pid = seat.bot.pid
                sent.append(i)
            except BotFault as fault:
                self.fault(i, fault.verdict, fault.detail, start=True)
        for i in sent:
            seat = self.seats[i]
            try:
                seat.pid = seat.bot.pid
                seat.ready = seat.bot.await_ready().to_json()
            except BotFault as fault:
                self.fault(i, fault.verdict, fault.detail, start=True)
                continue
            except Exception as exc:  # see unreadable()
                self.fault(i, "protocol_error", self.unreadable(i, exc), start=True)
                continue
            if self.pause_idle:
                seat.bot.pause()

    def play(self) -> None:
        """Ask the seat to move until the game is over."""
        game = self.game
        rules = self.rules
        grace = self.tc.grace_ms
        while not game.is_over:
            s = game.to_move()
            seat = self.seats[s]
            bot = seat.bot
            if bot is None:
                self.play_random(s)
                continue
            obs = observation(game, s)
            events, seat.events_from = events_since(game, s, seat.events_from)
            legal = [action_to_json(rules, a) for a in game.legal_actions()] if seat.ready["legal_actions"] else None
            msg = request_message(game.phase_name, obs, events, seat.clock.view(), legal)
            limit = (seat.clock.allowance_ms() + grace) / 1000
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
            self.move_times.append({"wall_ms": round(wall * 1000, 3), "cpu_ms": round(cpu * 1000, 3)})

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

    def close_all(self) -> None:
        """Tell every live bot the result, ask it to quit, and kill every process group."""
        game = self.game
        for s, seat in enumerate(self.seats):
            bot = seat.bot
            if bot is None:
                continue
            if seat.ready is not None:
                seat.cpu += bot.cpu_since_last_read()
            if game.is_over:
                bot.resume()
                events, seat.events_from = events_since(game, s, seat.events_from)
                bot.notify({"type": "game_over", "result": game.result(), "events": events})
        for seat in self.seats:
            if seat.bot is not None:
                seat.bot.close()
                seat.bot = None
