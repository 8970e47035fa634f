"""Games of trusted built-in bots played inside the worker, without bot processes.

:func:`play_inprocess` takes the same request as :func:`arena.referee.play_game` and returns
the same shape: the built-in policies choose their moves directly on the engine's game
(``policy(name).choose(game, rng)``), so there are no faults, no time control and no
sandbox; each seat's ``wall_ms``/``cpu_ms`` is the policy's own thinking time. It is the
fast path for experiments with house rules at scale.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

from engine import Game, RuleSpec, make_replay

from ..errors import ArenaError
from ..referee import bot_seed


def warm_inprocess(request: dict) -> None:
    """Import the seats' policies and compile the rules in this process (see
    :func:`arena.execution.work.warm`); a request that cannot be played is left for the game."""
    from arena.plugins import policy, policy_names

    try:
        known = policy_names()
        for s in request["seats"]:
            if s.get("bot") in known:
                policy(s["bot"])
        Game.new(RuleSpec.from_json(request["rules"]), int(request["players"]), int(request["seed"]),
                 request.get("deal"))
    except Exception:  # noqa: BLE001 -- the game itself says what is wrong with its request
        pass


def play_inprocess(request: dict) -> dict:
    """Play one game of built-in policies; the request and result are those of ``play_game``."""
    from arena.plugins import policy, policy_names

    t0 = time.perf_counter()
    seats = request["seats"]
    known = policy_names()
    for s in seats:
        if s.get("bot") not in known:
            raise ArenaError(f"the inprocess executor plays built-in bots only; seat {s.get('name')!r} is not one "
                             f"(built-in bots: {', '.join(known)})")
    spec = RuleSpec.from_json(request["rules"])
    seed = int(request["seed"])
    n = int(request["players"])
    game = Game.new(spec, n, seed, request.get("deal"))
    policies = [policy(s["bot"]) for s in seats]
    rngs = [random.Random(bot_seed(seed, i)) for i in range(len(seats))]
    wall = [0.0] * n
    cpu = [0.0] * n
    longest = [0.0] * n
    moves = [0] * n
    perf, proc = time.perf_counter, time.process_time
    while not game.is_over:
        s = game.to_move()
        w0, c0 = perf(), proc()
        action = policies[s].choose(game, rngs[s])
        dw = perf() - w0
        cpu[s] += proc() - c0
        wall[s] += dw
        longest[s] = max(longest[s], dw)
        moves[s] += 1
        game.apply(action)
    replay_path = request.get("replay_path")
    if replay_path:
        record = make_replay(game, request.get("deal"), {"bots": [s["name"] for s in seats]})
        path = Path(replay_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return {
        "result": game.result(),
        "seats": [{"name": s["name"], "faults": [], "moves": moves[i], "wall_ms": wall[i] * 1000,
                   "cpu_ms": cpu[i] * 1000, "max_move_ms": longest[i] * 1000} for i, s in enumerate(seats)],
        "sandbox": {"tier": "none", "protections": []},
        "replay_path": replay_path,
        "duration_s": time.perf_counter() - t0,
        "rules": spec.to_json(),
        "seed": seed,
    }
