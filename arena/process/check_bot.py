"""``arena check-bot``: the conformance checker for bot authors.

It runs the bot through the handshake, ordinary requests, every decision kind, the end
of a game and a second game in the same process, ``quit``, and finally a full game of
the bot against itself through the referee. Each check gives a pass/fail line and, on
failure, the offending message. Messages are validated against the protocol's JSON
Schema (``arena/schema/protocol.json``) when ``jsonschema`` is installed, and every
action against the engine.

The ``reward`` and ``level_up`` checks set up a position of the variant that has the
decision (``revised``'s reward fallback, R9.3; ``ghost``'s level-up, R11.3); the reply
must be a decision of that kind that the engine accepts.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from engine import Game, IllegalAction, RuleSpec, action_from_json, action_to_json, observation
from engine.events import events_since

from .botproc import BotProcess
from .protocol import hello_message, request_message
from .sandbox import Sandbox
from .timecontrol import Clock, TimeControl
from ..errors import UsageError
from .transport import BotFault


@dataclass
class Check:
    """One check's outcome: its name, pass or fail, and what was seen."""

    name: str
    ok: bool
    detail: str = ""
    offending: str = ""

    def line(self) -> str:
        """``PASS name: detail`` or ``FAIL name: detail; offending message: ...``."""
        text = f"{'PASS' if self.ok else 'FAIL'} {self.name}: {self.detail}"
        if self.offending:
            text += f"\n     offending message: {self.offending}"
        return text


@dataclass
class Report:
    """Every check in order; ``ok`` only if all passed."""

    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True if every check passed."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def to_json(self) -> dict:
        """Plain data for ``--json``."""
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks]}


def _schema_errors(message: dict, kind: str) -> list[str]:
    try:
        from .schema import validate
        return validate(message, kind)
    except ImportError:
        return []


class _Checker:
    def __init__(self, argv: list[str], tc: TimeControl, seed: int, sandbox="auto", base: str | None = None,
                 program_dir: str | None = None, read_only=()):
        from ..botspec import CommandError, locate

        self.missing = ""
        try:
            self.argv = locate(argv, base)  # as typed in ``base``: relative paths, wrappers, shims
        except CommandError as exc:
            self.argv, self.missing = list(argv), str(exc)
        self.program_dir = program_dir
        self.read_only = list(read_only or ())
        self.sandbox = sandbox
        self.tc = tc
        self.seed = seed
        self.report = Report()
        self.bot: BotProcess | None = None
        self.legal_wanted = False
        self.echo = None

    def add(self, name: str, ok: bool, detail: str = "", offending: str = "") -> bool:
        self.report.checks.append(Check(name, ok, detail, offending[:500]))
        return ok

    def start(self, rules) -> bool:
        if self.missing:
            return self.add("handshake", False, self.missing)
        spec = self.sandbox if isinstance(self.sandbox, dict) else {"tier": self.sandbox}
        launch = Sandbox(spec["tier"], fallback=spec.get("fallback")).prepare(
            self.argv, program_dir=self.program_dir, read_only=self.read_only)
        self.bot = BotProcess(launch, label="check-bot")
        hello = hello_message(0, rules, self.tc.to_json(), 12345)
        hello["options"] = {}
        try:
            ready = self.bot.start(hello, (self.tc.startup_ms + self.tc.grace_ms) / 1000)
        except BotFault as fault:
            return self.add("handshake", False, f"{fault.verdict}: {fault.detail}", self._stderr())
        self.legal_wanted = ready.legal_actions
        errors = _schema_errors({"type": "ready", "id": 1, **ready.to_json()}, "ready")
        if errors:
            return self.add("handshake", False, "; ".join(errors))
        return self.add("handshake", True, f"ready from {ready.name} {ready.version} "
                        f"({'asks for' if ready.legal_actions else 'does not ask for'} legal options)")

    def _stderr(self) -> str:
        tail = self.bot.transport.stderr_tail() if self.bot else ""
        return f"(stderr) {tail}" if tail else ""

    def ask(self, name: str, game: Game, seat: int, since: int) -> dict | None:
        """Send one request; check the reply's form and legality; return the R14 object."""
        rules = game.rules
        obs = observation(game, seat)
        events, _ = events_since(game, seat, since)
        kind = game.phase_name
        legal = [action_to_json(rules, a) for a in game.legal_actions()] if self.legal_wanted else None
        msg = request_message(kind, obs, events, Clock(self.tc).view(), legal)
        try:
            reply, wall, _ = self.bot.ask(msg, (self.tc.move_ms + self.tc.grace_ms) / 1000)
        except BotFault as fault:
            self.add(name, False, f"{fault.verdict}: {fault.detail}", self._stderr())
            return None
        errors = _schema_errors({"id": msg["id"], "action": reply}, "reply")
        text = json.dumps(reply)
        if errors:
            self.add(name, False, "; ".join(errors), text)
            return None
        t = reply.get("type")
        if (t in ("reward", "level_up", "finish")) if kind == "action" else (t != kind):
            self.add(name, False, f"a '{kind}' request was answered with a {reply.get('type')!r}", text)
            return None
        try:
            action = action_from_json(rules, reply)
        except IllegalAction as exc:
            self.add(name, False, f"not valid R14 JSON: {exc}", text)
            return None
        try:
            game.clone().apply(action)
        except IllegalAction as exc:
            self.add(name, False, f"illegal: {exc}", text)
            return None
        self.add(name, True, f"{text[:80]} in {wall * 1000:.1f} ms")
        return reply

    def run(self) -> Report:
        spec = RuleSpec()
        game = Game.new(spec, 2, self.seed)
        if not self.start(game.rules):
            self.close()
            return self.report
        try:
            self.requests(game)
            self.reuse(game)
        finally:
            self.close()
        self.full_game()
        return self.report

    def requests(self, game: Game) -> None:
        reply = self.ask("first action request", game, 0, 0)
        if reply is not None:
            game.apply(action_from_json(game.rules, reply))
            rng = random.Random(self.seed)
            while game.to_move() != 0:  # the other seat plays, so the next request has its events
                game.apply(rng.choice(game.legal_actions()))
            self.ask("action request with events", game, 0, 0)
        for kind, variant in (("reward", "revised"), ("level_up", "ghost")):
            if self.bot.dead:
                return
            position = _decision_position(kind, variant, self.seed)
            if position is None:
                self.add(f"{kind} decision", True, f"skipped: the {variant!r} variant is not installed")
                continue
            self.ask(f"{kind} decision", position, 0, len(position.history))
        if self.bot.dead:
            return
        end = _finish_position(self.seed)
        self.ask("finish decision", end, end.to_move(), len(end.history))

    def reuse(self, game: Game) -> None:
        bot = self.bot
        if bot is None or bot.dead:
            return
        bot.notify({"type": "game_over", "result": game.result(), "events": []})
        hello = hello_message(1, game.rules, self.tc.to_json(), 54321)
        hello["options"] = {}
        try:
            ready = bot.new_game(hello, (self.tc.startup_ms + self.tc.grace_ms) / 1000)
        except BotFault as fault:
            self.add("game_over, then a new hello", False, f"{fault.verdict}: {fault.detail}", self._stderr())
            return
        self.add("game_over, then a new hello", True, f"ready again from {ready.name}")
        bot.notify({"type": "quit"})
        code = bot.transport.wait(2.0)
        if code is None:
            self.add("quit", False, "the process was still running 2 s after 'quit'")
        else:
            self.add("quit", True, f"exited with code {code}")

    def close(self) -> None:
        if self.bot is not None:
            self.bot.close(quit_first=False)

    def full_game(self) -> None:
        import threading
        import time

        from ..referee import play_game

        echo = self.echo
        done = threading.Event()
        t0 = time.monotonic()

        def tick() -> None:  # a slow bot's game can take half a minute: say it is still going
            while not done.wait(5.0):
                echo(f"check-bot: full game against itself: still playing after {time.monotonic() - t0:.0f} s")

        ticker = None
        if echo is not None:
            echo("check-bot: playing a full game of the bot against itself")
            ticker = threading.Thread(target=tick, daemon=True)
            ticker.start()
        try:
            seat = {"cmd": self.argv, "program_dir": self.program_dir, "read_only": self.read_only}
            out = play_game({"seats": [{"name": "a", **seat}, {"name": "b", **seat}],
                             "seed": self.seed, "sandbox": "none", "time_control": self.tc.to_json()})
        finally:
            done.set()
            if ticker is not None:
                ticker.join()
        faults = [dict(f, seat=i) for i, s in enumerate(out["seats"]) for f in s["faults"]]
        res = out["result"]
        if faults:
            f = faults[0]
            self.add("full game against itself", False, f"seat {f['seat']}: {f['verdict']} at move {f['move']}", f["detail"])
        else:
            self.add("full game against itself", True, f"{res['rounds']} rounds, scores {res['scores']}, "
                     f"{sum(s['moves'] for s in out['seats'])} moves, slowest {max(s['max_move_ms'] for s in out['seats']):.1f} ms")


def _decision_position(kind: str, variant: str, seed: int) -> Game | None:
    """A game of ``variant`` where seat 0 must take a ``kind`` decision (None without the variant).

    The position is set up directly: the decision is the one the variant opens after a
    completion (R9.3 reward fallback, R11.3 level-up), on a fresh deal.
    """
    from engine import LEVEL_UP, REWARD
    from engine.errors import ParameterError
    try:
        game = Game.new(RuleSpec.make([variant]), 2, seed)
    except ParameterError:
        return None
    puzzle = game.rules.puzzles[0].id
    if kind == "reward":
        game.phase = REWARD
        game.decision = {"type": "reward", "puzzle": puzzle, "options": ["I3", "L3"]}
    else:
        game.phase = LEVEL_UP
        game.decision = {"type": "level_up", "puzzle": puzzle, "steps": 1}
    return game


def _finish_position(seed: int) -> Game:
    """A base game played at random (in-process) up to seat 0's finishing touches."""
    rng = random.Random(seed)
    game = Game.new(RuleSpec.make(params={"max_rounds": 8}), 2, seed)
    while not (game.phase_name == "finish" and game.to_move() == 0):
        game.apply(rng.choice(game.legal_actions()))
    return game


def check_bot(argv: list[str], move_ms: int = 2000, startup_ms: int = 10000, seed: int = 1,
              echo=None, sandbox="auto", base: str | None = None, program_dir: str | None = None,
              read_only=()) -> Report:
    """Run every conformance check on the bot started by ``argv`` in the ``sandbox`` tier (the
    strongest here by default: the bot under check is a stranger too); ``echo`` gets
    progress lines."""
    tc = TimeControl.from_json({"move_ms": move_ms, "startup_ms": startup_ms})
    checker = _Checker(argv, tc, seed, sandbox=sandbox, base=base, program_dir=program_dir, read_only=read_only)
    checker.echo = echo
    return checker.run()


class BotRefused(UsageError):
    """A submitted bot failed the conformance check."""


def require_conforming(argv: list[str], name: str, move_ms: int = 2000, startup_ms: int = 10000,
                       echo=None, sandbox="auto", base: str | None = None, program_dir: str | None = None,
                       read_only=()) -> Report:
    """Run :func:`check_bot` on a submission; raise :class:`BotRefused` with the first failure."""
    report = check_bot(argv, move_ms=move_ms, startup_ms=startup_ms, echo=echo, sandbox=sandbox, base=base,
                       program_dir=program_dir, read_only=read_only)
    if not report.ok:
        bad = next((c for c in report.checks if not c.ok), None)
        why = f"{bad.name}: {bad.detail}" if bad else "no check could run"
        if bad and bad.offending:
            why += f" (offending message: {bad.offending[:200]})"
        raise BotRefused(f"{name} ({' '.join(argv)}) failed the conformance check, {why}; "
                         f"`arena check-bot -- {' '.join(argv)}` shows every check")
    return report


def check_commands(bots, move_ms: int = 2000, echo=None, sandbox="auto") -> None:
    """``--check`` of ``arena run`` and ``arena match``: every bot given as a command line
    (``BotEntry`` with ``cmd``) must pass :func:`check_bot`; the first that fails stops the run."""
    for entry in bots:
        if entry.cmd:
            if echo is not None:
                echo(f"check-bot: checking {entry.name}")
            require_conforming(list(entry.cmd), entry.name, move_ms=max(move_ms, 2000), echo=echo, sandbox=sandbox,
                               base=getattr(entry, "base", None), program_dir=getattr(entry, "program_dir", None),
                               read_only=getattr(entry, "read_only", ()))
