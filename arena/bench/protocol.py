"""``arena bench protocol``: decisions per second through the pipe, against the physical floor.

Every figure uses the same request: a real ``action`` request of a base game
(observation, events, clock, legal options), about 1.4 KB on one line.

- ``echo_per_s`` (the floor): the arena encodes the request as a JSON line, a process
  echoes the line back unchanged, the arena reads it. ``pipe_per_s`` is the same with the
  line encoded once in advance (the bare pipe, no JSON at all).
- ``protocol_per_s``: the referee's whole protocol path — the request given its id and
  encoded, sent, the reply read, parsed, its id checked, its R14 action decoded by the
  engine, wall and CPU time recorded — against a trivial bot that finds the request id
  without parsing the message and answers ``pass``; so it measures the arena's protocol
  overhead on top of the pipe.
- ``sdk_per_s``: the same path against the Python SDK's ``pass`` bot (``python -m
  bots.run pass``), which parses every request with ``json``: what a Python bot costs.

The arena and its bots are pinned to one CPU for the measurement (``pinned_cpu``): when
the scheduler puts a bot on the other core, every round trip pays a cross-core wake-up
whose cost varies from run to run by a factor of two on small virtual machines, and the
figures would measure the scheduler rather than the protocol.
"""

from __future__ import annotations

import os
import sys
import time

from engine import Game, RuleSpec, action_from_json, action_to_json, observation

from ..process.botproc import BotProcess
from ..process.protocol import encode, request_message
from ..process.sandbox import Sandbox

TRIVIAL = ("import sys\nr=sys.stdin.buffer.readline\nw=sys.stdout.buffer.write\nf=sys.stdout.buffer.flush\n"
           "while True:\n    l=r()\n    if not l: break\n    i=l.rfind(b'\"id\":')+5\n    j=i\n"
           "    while l[j:j+1].isdigit(): j+=1\n    rid=l[i:j]\n"
           "    if b'\"type\":\"hello\"' in l[:20]: w(b'{\"type\":\"ready\",\"name\":\"trivial\",\"id\":'+rid+b'}\\n')\n"
           "    else: w(b'{\"id\":'+rid+b',\"action\":{\"type\":\"pass\"}}\\n')\n    f()\n")
ECHO = ("import sys\nr=sys.stdin.buffer.readline\nw=sys.stdout.buffer.write\nf=sys.stdout.buffer.flush\n"
        "while True:\n    l=r()\n    if not l: break\n    w(l); f()\n")


def _request() -> tuple[dict, Game]:
    game = Game.new(RuleSpec(), 2, 1)
    obs = observation(game, 0)
    legal = [action_to_json(game.rules, a) for a in game.legal_actions()]
    return request_message("action", obs, [], {"move_ms": 1000, "game_left_ms": None, "increment_ms": 0, "mode": "clock"}, legal), game


def _echo_block(tr, template: dict, n: int, with_json: bool) -> float:
    """Seconds for ``n`` round trips with the echo process; ``with_json``: encode each request."""
    perf = time.perf_counter
    line = encode(dict(template, id=1))
    t0 = perf()
    for i in range(n):
        if with_json:
            line = encode(dict(template, id=i + 1))
        tr.send(line, perf() + 5)
        got, _ = tr.read_line(perf() + 5)
        tr.done()
    return perf() - t0


def _protocol_block(proc: BotProcess, rules, template: dict, n: int) -> float:
    """Seconds for ``n`` full protocol requests to the trivial bot."""
    perf = time.perf_counter
    t0 = perf()
    for _ in range(n):
        action_from_json(rules, proc.ask(dict(template), 5.0)[0])
    return perf() - t0


def bench_protocol(decisions: int = 5000, rounds: int = 20, bot: list[str] | None = None) -> dict:
    """Measure the rates; returns ``{"protocol_per_s", "echo_per_s", "pipe_per_s", "sdk_per_s", "ratio", ...}``.

    The measurements are interleaved in ``rounds`` blocks of ``decisions / rounds`` round
    trips each, and the best block of each counts, so that load from other processes on
    the machine biases none of them. ``bot`` replaces the trivial bot.
    """
    template, game = _request()
    rules = game.rules
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    pinned = min(affinity) if affinity else None
    if pinned is not None:
        os.sched_setaffinity(0, {pinned})  # the bots started below inherit it
    argv = bot or [sys.executable, "-c", TRIVIAL]
    procs = {"echo": [sys.executable, "-c", ECHO], "protocol": argv, "sdk": [sys.executable, "-m", "bots.run", "pass"]}
    running = {k: BotProcess(Sandbox("none").prepare(v), label=k) for k, v in procs.items()}
    block = max(1, decisions // rounds)
    best = {"pipe": float("inf"), "echo": float("inf"), "protocol": float("inf"), "sdk": float("inf")}
    hello = {"type": "hello", "protocol": 1, "seat": 0, "players": 2, "rules": rules.spec.to_json(),
             "params": rules.params, "cards": {}, "time_control": {}, "seed": 1}
    try:
        running["echo"].spawn()
        echo = running["echo"].transport
        for k in ("protocol", "sdk"):
            running[k].start(dict(hello), 10.0)
        _echo_block(echo, template, 200, True)
        for k in ("protocol", "sdk"):
            _protocol_block(running[k], rules, template, 200)
        for _ in range(rounds):
            best["pipe"] = min(best["pipe"], _echo_block(echo, template, block, False))
            best["echo"] = min(best["echo"], _echo_block(echo, template, block, True))
            for k in ("protocol", "sdk"):
                best[k] = min(best[k], _protocol_block(running[k], rules, template, block))
    finally:
        for proc in running.values():
            proc.close(quit_first=False)
        if affinity:
            os.sched_setaffinity(0, affinity)
    rate = {k: block / v for k, v in best.items()}
    return {"protocol_per_s": round(rate["protocol"], 1), "echo_per_s": round(rate["echo"], 1),
            "ratio": round(rate["protocol"] / rate["echo"], 3), "pipe_per_s": round(rate["pipe"], 1),
            "sdk_per_s": round(rate["sdk"], 1), "decisions": block * rounds,
            "bytes": len(encode(dict(template, id=1))), "pinned_cpu": pinned}
