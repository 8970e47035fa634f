#!/usr/bin/env python3
"""A Project L protocol bot in plain Python (standard library only): one file.

Run it:    arena play greedy --cmd "python3 bots/examples/packages/python/bot.py"
Check it:  arena check-bot -- python3 bots/examples/packages/python/bot.py

It asks for the legal options in every request (``legal_actions: true`` in ``ready``)
and prefers, in order: a placement on the puzzle closest to completion, taking a puzzle
while it holds fewer than two, an upgrade, a level-1 piece; else it passes. Decisions
(reward, level-up, finishing touches): the first option offered. It reads only its own
file, so it runs from any working directory. The protocol is in docs/protocol.md.
"""

import json
import random
import sys

NAME, VERSION = "py-example", "1.0"


def choose_action(msg, rng):
    legal = msg.get("legal") or [{"type": "pass"}]
    obs = msg["observation"]
    me = obs["seats"][obs["seat"]]
    by_type = lambda t: [a for a in legal if a.get("type") == t]  # noqa: E731
    places = by_type("place")
    if places:
        filled = {u["puzzle"]: len(u["pieces"]) for u in me["unfinished"]}
        return max(places, key=lambda a: filled.get(a.get("puzzle"), 0))
    takes = by_type("take_puzzle")
    if takes and len(me["unfinished"]) < 2:
        return rng.choice(takes)
    upgrades = by_type("upgrade")
    if upgrades and rng.random() < 0.7:
        return rng.choice(upgrades)
    pieces = by_type("take_piece")
    return pieces[0] if pieces else {"type": "pass"}


def main():
    rng = random.Random(1)
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            rng.seed(msg.get("seed", 1))
            reply = {"type": "ready", "id": msg["id"], "name": NAME, "version": VERSION, "legal_actions": True}
        elif kind == "action":
            reply = {"id": msg["id"], "action": choose_action(msg, rng)}
        elif kind in ("reward", "level_up", "finish"):
            fallback = {"type": kind, **({"steps": []} if kind == "level_up" else {"placements": []})}
            reply = {"id": msg["id"], "action": (msg.get("legal") or [fallback])[0]}
        elif kind == "quit":
            return
        else:  # game_over and anything newer: nothing to answer
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
