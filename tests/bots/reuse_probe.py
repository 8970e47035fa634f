"""A protocol bot that records its games, for the process-reuse tests.

``python tests/bots/reuse_probe.py LOGFILE``: on every ``hello`` it appends one JSON line
``{"pid", "game", "seat", "id", "options"}`` to LOGFILE (``game`` counts the games of this
process), then passes and declines every decision (as the ``pass`` bot does). Its seat ``options`` make it misbehave:
``{"illegal_in_game": k}`` answers with an illegal action in its k-th game,
``{"exit_after_game": k}`` exits right after the ``game_over`` of its k-th game (a crash
between games), ``{"die_at_hello": k}`` exits without answering its k-th ``hello``.
It imports nothing from the project, so it starts fast.
"""

import json
import os
import sys

LOG = sys.argv[1]
games = 0
options = {}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "quit":
        break
    if kind == "hello":
        games += 1
        options = msg.get("options") or {}
        # world-writable: each new process of the probe may run as another unprivileged user
        os.umask(0)
        with open(os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666), "a") as f:
            f.write(json.dumps({"pid": os.getpid(), "game": games, "seat": msg["seat"], "id": msg["id"],
                                "options": options}) + "\n")
        if options.get("die_at_hello") == games:
            sys.exit(0)
        send({"type": "ready", "id": msg["id"], "name": "probe", "version": "1", "legal_actions": False})
    elif kind == "game_over":
        if options.get("exit_after_game") == games:
            sys.exit(0)
    else:
        if options.get("illegal_in_game") == games:
            send({"id": msg["id"], "action": {"type": "take_puzzle", "color": "white", "slot": 99}})
        elif kind == "action":
            send({"id": msg["id"], "action": {"type": "pass"}})
        elif kind == "reward":
            first = msg["observation"]["decision"]["options"][0]
            send({"id": msg["id"], "action": first if isinstance(first, dict) else {"type": "reward", "take": first}})
        elif kind == "level_up":
            send({"id": msg["id"], "action": {"type": "level_up", "steps": []}})
        else:
            send({"id": msg["id"], "action": {"type": "finish", "placements": []}})
